/* remote_more.c - the remote adapter's jobs (submit, status, cancel), flows
 * (provision and its status), health with the round trip, and the "stats"
 * control. */
#include "remote_internal.h"

#include <stdio.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/proto/proto.h"

acc_err remote_submit(void *state, const struct acc_job *job, char *job_id, size_t job_id_len,
                      struct acc_error *err)
{
    struct remote *r = state;
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    acc_proto_write_job(job, &body);
    acc_err rc = acc_buf_ok(&body) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    /* Never tried again: a job whose answer was lost may be running. */
    if (!rc)
        rc = remote_call(r, "POST", "/v1/jobs", body.data, body.len, false, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_job_ref(acc_buf_str(&rep.body), rep.body.len, job_id, job_id_len, &why))
            rc = remote_protocol_error(r, "submit", &why, err);
        else if (!acc_proto_key_ok(job_id))
            rc = acc_error_set(err, ACC_ERR_ADAPTER, "%s: protocol error: submit: bad job id",
                               r->what);
    }
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_job_status(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    acc_err rc = remote_key_path(r, "/v1/jobs/", job_id, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "GET", path, NULL, 0, true, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_job_status(acc_buf_str(&rep.body), rep.body.len, out, &why))
            rc = remote_protocol_error(r, "job status", &why, err);
    }
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_job_cancel(void *state, const char *job_id, struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    acc_err rc = remote_key_path(r, "/v1/jobs/", job_id, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "DELETE", path, NULL, 0, true, &rep, err);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_provision(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err)
{
    struct remote *r = state;
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    char path[192];
    (void)local_id;
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "/provision", path, sizeof path, err);
    if (!rc) {
        acc_proto_write_flow(flow, &body);
        if (!acc_buf_ok(&body))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!rc)
        rc = remote_call(r, "PUT", path, body.data, body.len, true, &rep, err);
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_provision_status(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[192];
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "/provision", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "GET", path, NULL, 0, true, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_provision_status(acc_buf_str(&rep.body), rep.body.len, out, &why))
            rc = remote_protocol_error(r, "provision status", &why, err);
    }
    remote_reply_release(&rep);
    return rc;
}

/* Up when the site daemon answers and says it is up; the round trip is the
 * exchange's (on a kept-alive connection: one request and its answer). */
acc_err remote_health(void *state, struct acc_health *out)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    struct acc_error err = {0};
    struct acc_proto_health h;
    memset(&h, 0, sizeof h);
    acc_strlcpy(out->endpoint, r->url, sizeof out->endpoint);
    acc_err rc = remote_call(r, "GET", "/v1/health", NULL, 0, true, &rep, &err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_health(acc_buf_str(&rep.body), rep.body.len, &h, &why))
            rc = remote_protocol_error(r, "health", &why, &err);
    }
    if (rc) {
        out->up = false;
        acc_strlcpy(out->detail, err.msg, sizeof out->detail);
    } else {
        out->up = h.up;
        out->rtt_us = rep.rtt_us > 0 ? rep.rtt_us : 1;
        if (h.version != ACC_PROTO_VERSION)
            snprintf(out->detail, sizeof out->detail, "site %s speaks protocol version %u, not %u",
                     h.site, h.version, (unsigned)ACC_PROTO_VERSION);
        else
            snprintf(out->detail, sizeof out->detail, "site %.63s: %.180s", h.site, h.detail);
    }
    remote_reply_release(&rep);
    return rc;
}

/* "stats": the counters since open, one "name value" a line (tests and
 * the benchmark read them). */
acc_err remote_control(void *state, const char *op, const struct acc_kv *args, size_t n_args,
                       struct acc_buf *reply, struct acc_error *err)
{
    struct remote *r = state;
    (void)args;
    if (strcmp(op, "stats") != 0 || n_args)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "%s: the remote adapter takes the control 'stats' (no arguments)",
                             r->what);
    acc_buf_printf(reply, "calls %llu\nattempts %llu\nretries %llu\nconnects %llu\n",
                   (unsigned long long)atomic_load(&r->calls),
                   (unsigned long long)atomic_load(&r->attempts),
                   (unsigned long long)atomic_load(&r->retries_done),
                   (unsigned long long)atomic_load(&r->connects));
    return acc_buf_ok(reply) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}
