/* site_routes.c - the /v1 paths of the adapter protocol (docs/protocol.md):
 * a table of {method, path shape, handler}; the router answers 404 for an
 * unknown path and 405 for a known path with another method.  Handlers read
 * the request's document with lib/proto, call site_ops.c for the peer, and
 * write the answer or a <Fault>; they never see libmicrohttpd. */
#include "site_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "../lib/proto/proto.h"
#include "site_jobs.h"

/* The parts of a path: /v1/reservations/KEY/provision -> {"reservations",
 * KEY, "provision"}. */
struct path {
    char part[3][128];
    size_t n;
};

static bool split(const char *p, struct path *out)
{
    memset(out, 0, sizeof *out);
    if (strncmp(p, "/v1/", 4) != 0)
        return false;
    p += 4;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || len >= sizeof out->part[0] || out->n == 3)
            return false;
        memcpy(out->part[out->n], p, len);
        out->part[out->n++][len] = '\0';
        p += len;
        if (*p == '/')
            p++;
    }
    return out->n > 0;
}

void site_fault(struct acc_site *s, const struct acc_error *err, struct site_response *rs)
{
    rs->status = acc_err_http_status(err->code);
    acc_buf_reset(&rs->body);
    acc_proto_write_fault(err->code, s->cfg.name, err->msg, &rs->body);
}

static void answer(struct acc_site *s, acc_err rc, const struct acc_error *err, int ok_status,
                   struct site_response *rs)
{
    if (rc) {
        site_fault(s, err, rs);
        return;
    }
    if (!acc_buf_ok(&rs->body)) {
        struct acc_error e;
        acc_error_set(&e, ACC_ERR_NOMEM, "out of memory");
        site_fault(s, &e, rs);
        return;
    }
    rs->status = ok_status;
}

/* ---------------------------------------------------------------- handlers */

typedef void handler_fn(struct acc_site *s, const struct site_request *rq, const struct path *p,
                        struct site_response *rs);

static void h_health(struct acc_site *s, const struct site_request *rq, const struct path *p,
                     struct site_response *rs)
{
    (void)rq;
    (void)p;
    struct acc_proto_health h = {.version = ACC_PROTO_VERSION};
    acc_strlcpy(h.site, s->cfg.name, sizeof h.site);
    site_op_health(s, &h.up, h.detail, sizeof h.detail, &h.caps);
    for (size_t i = 0; i < s->n_res && h.n_resources < ACC_PROTO_MAX_RESOURCES; i++) {
        h.resources[h.n_resources].kind = s->res[i].kind;
        acc_strlcpy(h.resources[h.n_resources].name, s->res[i].name,
                    sizeof h.resources[h.n_resources].name);
        h.resources[h.n_resources++].capacity = s->res[i].capacity;
    }
    acc_proto_write_health(&h, &rs->body);
    answer(s, ACC_OK, NULL, 200, rs);
}

static void h_preview(struct acc_site *s, const struct site_request *rq, const struct path *p,
                      struct site_response *rs)
{
    (void)p;
    struct acc_error err;
    struct acc_proto_preview pv;
    struct acc_frames f;
    acc_frames_init(&f);
    acc_err rc = acc_proto_read_preview(rq->body, rq->body_len, &pv, &err);
    if (!rc) {
        struct site_ask a = {pv.kind,  pv.resource, pv.amount,   pv.from,
                             pv.until, 0,           pv.duration, pv.old_key};
        rc = site_op_preview(s, rq->peer, &a, &f, &err);
    }
    if (!rc)
        acc_proto_write_frames(&f, &rs->body);
    answer(s, rc, &err, 200, rs);
    acc_frames_release(&f);
}

static void write_booking(const struct site_booking *b, struct site_response *rs)
{
    acc_proto_write_reservation(b->key, b->kind, b->resource, &b->res, &rs->body);
}

static void h_reserve(struct acc_site *s, const struct site_request *rq, const struct path *p,
                      struct site_response *rs)
{
    struct acc_error err;
    struct acc_proto_reserve r;
    struct site_booking b = {0};
    acc_err rc = acc_proto_read_reserve(rq->body, rq->body_len, &r, &err);
    if (!rc) {
        struct site_ask a = {r.kind, r.resource, r.amount, 0, 0, r.start, r.duration, r.old_key};
        rc = site_op_reserve(s, rq->peer, p->part[1], &a, &b, &err);
    }
    if (!rc)
        write_booking(&b, rs);
    answer(s, rc, &err, 200, rs);
    site_booking_release(&b);
}

static void h_query(struct acc_site *s, const struct site_request *rq, const struct path *p,
                    struct site_response *rs)
{
    struct acc_error err;
    struct site_booking b = {0};
    acc_err rc = site_op_query(s, rq->peer, p->part[1], &b, &err);
    if (!rc)
        write_booking(&b, rs);
    answer(s, rc, &err, 200, rs);
    site_booking_release(&b);
}

static void h_cancel(struct acc_site *s, const struct site_request *rq, const struct path *p,
                     struct site_response *rs)
{
    struct acc_error err;
    acc_err rc = site_op_cancel(s, rq->peer, p->part[1], &err);
    answer(s, rc, &err, 204, rs);
}

static void h_provision(struct acc_site *s, const struct site_request *rq, const struct path *p,
                        struct site_response *rs)
{
    struct acc_error err;
    struct acc_proto_flow f = {0};
    acc_err rc = acc_proto_read_flow(rq->body, rq->body_len, &f, &err);
    if (!rc) {
        rc = site_op_provision(s, rq->peer, p->part[1], &f.flow, &err);
        acc_proto_flow_release(&f);
    }
    answer(s, rc, &err, 204, rs);
}

static void h_provision_status(struct acc_site *s, const struct site_request *rq,
                               const struct path *p, struct site_response *rs)
{
    struct acc_error err;
    struct acc_provision_status st = {0};
    acc_err rc = site_op_provision_status(s, rq->peer, p->part[1], &st, &err);
    if (!rc)
        acc_proto_write_provision_status(&st, &rs->body);
    answer(s, rc, &err, 200, rs);
}

/* ------------------------------------------------------------------- jobs */

static acc_err no_jobs(struct acc_site *s, struct acc_error *err)
{
    return acc_error_set(err, ACC_ERR_UNSUPPORTED, "site %s starts no jobs", s->cfg.name);
}

static void h_submit(struct acc_site *s, const struct site_request *rq, const struct path *p,
                     struct site_response *rs)
{
    (void)p;
    struct acc_error err;
    struct acc_proto_job j = {0};
    struct site_booking b = {0};
    char id[ACC_SITE_JOB_ID_MAX + 16] = "";
    acc_err rc = s->jobs ? acc_proto_read_job(rq->body, rq->body_len, &j, &err) : no_jobs(s, &err);
    if (!rc && (rc = site_op_booking(s, rq->peer, j.job.key, &b, &err)) == ACC_OK) {
        struct acc_site_job_booking jb = {b.key, b.res.local_id, b.res.nodes, b.res.start,
                                          b.res.end};
        rc = acc_site_jobs_submit(s->jobs, rq->peer->name, &jb, &j.job, acc_now(), id, sizeof id,
                                  &err);
    }
    if (!rc)
        acc_proto_write_job_ref(id, &rs->body);
    answer(s, rc, &err, 201, rs);
    site_booking_release(&b);
    if (s->jobs)
        acc_proto_job_release(&j);
}

static void h_job_status(struct acc_site *s, const struct site_request *rq, const struct path *p,
                         struct site_response *rs)
{
    struct acc_error err;
    struct acc_job_status st = {0};
    acc_err rc = s->jobs ? acc_site_jobs_status(s->jobs, rq->peer->name, p->part[1], &st, &err)
                         : no_jobs(s, &err);
    if (!rc)
        acc_proto_write_job_status(&st, &rs->body);
    answer(s, rc, &err, 200, rs);
}

static void h_job_cancel(struct acc_site *s, const struct site_request *rq, const struct path *p,
                         struct site_response *rs)
{
    struct acc_error err;
    acc_err rc = s->jobs ? acc_site_jobs_cancel(s->jobs, rq->peer->name, p->part[1], &err)
                         : no_jobs(s, &err);
    answer(s, rc, &err, 204, rs);
}

/* ------------------------------------------------------------------ table */

/* A path shape: the parts, "*" for a key or id. */
struct route {
    const char *method;
    const char *shape[3];
    handler_fn *fn;
};

static const struct route routes[] = {
    {"GET", {"health", NULL, NULL}, h_health},
    {"POST", {"preview", NULL, NULL}, h_preview},
    {"PUT", {"reservations", "*", NULL}, h_reserve},
    {"GET", {"reservations", "*", NULL}, h_query},
    {"DELETE", {"reservations", "*", NULL}, h_cancel},
    {"PUT", {"reservations", "*", "provision"}, h_provision},
    {"GET", {"reservations", "*", "provision"}, h_provision_status},
    {"POST", {"jobs", NULL, NULL}, h_submit},
    {"GET", {"jobs", "*", NULL}, h_job_status},
    {"DELETE", {"jobs", "*", NULL}, h_job_cancel},
};

static bool shape_matches(const struct route *r, const struct path *p)
{
    size_t n = 0;
    while (n < 3 && r->shape[n])
        n++;
    if (n != p->n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r->shape[i], "*") == 0 ? !acc_proto_key_ok(p->part[i])
                                          : strcmp(r->shape[i], p->part[i]) != 0)
            return false;
    }
    return true;
}

void site_route(struct acc_site *s, const struct site_request *rq, struct site_response *rs)
{
    struct path p;
    struct acc_error err;
    bool known = false;
    if (split(rq->path, &p)) {
        for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
            if (!shape_matches(&routes[i], &p))
                continue;
            known = true;
            if (strcmp(routes[i].method, rq->method) == 0) {
                routes[i].fn(s, rq, &p, rs);
                return;
            }
        }
    }
    if (known)
        acc_error_set(&err, ACC_ERR_METHOD, "%.16s is not allowed on %.200s", rq->method, rq->path);
    else
        acc_error_set(&err, ACC_ERR_NOT_FOUND, "no such path: %.200s", rq->path);
    site_fault(s, &err, rs);
}
