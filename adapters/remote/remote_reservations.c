/* SPDX-License-Identifier: Apache-2.0 */
/* remote_reservations.c - the remote adapter's reservations: preview, reserve (by
 * key, idempotent at the site), query and cancel by key. */
#include "remote_internal.h"

#include <stdio.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/jwt/jwt.h"
#include "../../lib/proto/proto.h"

/* The resource's name at the site: a site's nodes are remote_name there; a
 * link keeps its name (the site daemon's [link] sections name it alike). */
static const char *res_name(const struct remote *r, const struct acc_resource *res)
{
    return res->kind == ACC_RES_NODES ? r->remote_name : res->name;
}

acc_err remote_key_path(struct remote *r, const char *prefix, const char *key, const char *suffix,
                        char *path, size_t len, struct acc_error *err)
{
    if (!key || !acc_proto_key_ok(key))
        return acc_error_set(err, ACC_ERR_INVALID, "%s: '%.96s' cannot name it in the protocol",
                             r->what, key ? key : "(none)");
    snprintf(path, len, "%s%s%s", prefix, key, suffix);
    return ACC_OK;
}

struct acc_identity remote_identity(const struct remote *r, const struct acc_identity *id)
{
    struct acc_identity v = {.user = NULL};
    if (id) {
        v = *id;
        if (!r->forward_aud[0] || !acc_jwt_names_audience(v.token, r->forward_aud))
            v.token = NULL;
    }
    return v;
}

static acc_err do_preview(void *state, const char *old_key, const struct acc_resource *res,
                          acc_time from, acc_time until, int64_t duration, struct acc_frames *out,
                          struct acc_error *err)
{
    struct remote *r = state;
    struct acc_proto_preview p = {.kind = res->kind,
                                  .amount = res->amount,
                                  .from = from,
                                  .until = until,
                                  .duration = duration};
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    acc_strlcpy(p.resource, res_name(r, res), sizeof p.resource);
    p.identity = remote_identity(r, res->identity);
    if (old_key)
        acc_strlcpy(p.old_key, old_key, sizeof p.old_key);
    acc_proto_write_preview(&p, &body);
    acc_err rc = acc_buf_ok(&body) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = remote_call(r, "POST", "/v1/preview", body.data, body.len, true, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        struct acc_frames got;
        if (acc_proto_read_frames(acc_buf_str(&rep.body), rep.body.len, &got, &why)) {
            rc = remote_protocol_error(r, "preview", &why, err);
        } else {
            for (size_t i = 0; i < got.n && !rc; i++)
                rc = acc_frames_push(out, got.v[i].start, got.v[i].end);
            out->truncated = got.truncated;
            acc_frames_release(&got);
            if (rc)
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    return do_preview(state, NULL, res, from, until, duration, out, err);
}

acc_err remote_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                                 acc_time from, acc_time until, int64_t duration,
                                 struct acc_frames *out, struct acc_error *err)
{
    return do_preview(state, old_key, res, from, until, duration, out, err);
}

/* Reads a <Reservation> answer into out. */
static acc_err read_reservation(struct remote *r, const char *op, struct remote_reply *rep,
                                struct acc_reservation *out, struct acc_error *err)
{
    struct acc_error why = {0};
    if (acc_proto_read_reservation(acc_buf_str(&rep->body), rep->body.len, out, &why)) {
        acc_reservation_release(out);
        return remote_protocol_error(r, op, &why, err);
    }
    return ACC_OK;
}

static acc_err do_reserve(void *state, const char *key, const char *old_key,
                          const struct acc_resource *res, acc_time start, int64_t duration,
                          struct acc_reservation *out, struct acc_error *err)
{
    struct remote *r = state;
    struct acc_proto_reserve q = {
        .kind = res->kind, .amount = res->amount, .start = start, .duration = duration};
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    char path[160];
    acc_strlcpy(q.resource, res_name(r, res), sizeof q.resource);
    q.identity = remote_identity(r, res->identity);
    if (old_key)
        acc_strlcpy(q.old_key, old_key, sizeof q.old_key);
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "", path, sizeof path, err);
    if (!rc) {
        acc_proto_write_reserve(&q, &body);
        if (!acc_buf_ok(&body))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* A PUT by key: the site answers the same reservation for the same key,
     * so a reserve whose answer was lost is safe to send again. */
    if (!rc)
        rc = remote_call(r, "PUT", path, body.data, body.len, true, &rep, err);
    if (!rc)
        rc = read_reservation(r, "reserve", &rep, out, err);
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    return do_reserve(state, key, NULL, res, start, duration, out, err);
}

acc_err remote_reserve_replacing(void *state, const char *key, const char *old_key,
                                 const struct acc_resource *res, acc_time start, int64_t duration,
                                 struct acc_reservation *out, struct acc_error *err)
{
    return do_reserve(state, key, old_key, res, start, duration, out, err);
}

acc_err remote_query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    (void)local_id; /* the site finds it by key */
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "GET", path, NULL, 0, true, &rep, err);
    if (!rc)
        rc = read_reservation(r, "query", &rep, out, err);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    (void)local_id; /* by key, also when accordd never learnt the local id */
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "DELETE", path, NULL, 0, true, &rep, err);
    remote_reply_release(&rep);
    return rc;
}
