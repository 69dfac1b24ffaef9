/* SPDX-License-Identifier: Apache-2.0 */
/* site_routes.c - the /v1 paths of the adapter protocol (docs/protocol.md):
 * a table of {method, path pattern, handler} matched by lib/httpd, which
 * answers 404 for an unknown path and 405 (with Allow) for a known path with
 * another method.  Handlers read the request's document with lib/proto,
 * call site_ops.c for the peer, and write the answer or a <Fault>; they
 * never see libmicrohttpd. */
#include "site_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/procstat.h"
#include "../lib/common/strutil.h"
#include "../lib/proto/proto.h"
#include "site_jobs.h"

void site_fault(struct acc_site *s, const struct acc_error *err, struct acc_httpd_reply *rs)
{
    rs->status = acc_err_http_status(err->code);
    rs->content_type = "application/xml";
    acc_buf_reset(&rs->body);
    acc_proto_write_fault(err->code, s->cfg.name, err->msg, &rs->body);
    /* Retry-After on a 503 that knows when to ask again (a token's issuer
     * that could not be asked for its key): rounded up to a fixed step, as
     * the header's value must outlive this call. */
    static const struct {
        int64_t upto;
        const char *text;
    } steps[] = {{1, "1"}, {2, "2"}, {5, "5"}, {10, "10"}, {30, "30"}, {60, "60"}, {300, "300"}};
    if (rs->status == 503 && err->retry_after > 0) {
        size_t i = 0;
        while (i + 1 < sizeof steps / sizeof steps[0] && err->retry_after > steps[i].upto)
            i++;
        acc_httpd_reply_header(rs, "Retry-After", steps[i].text);
    }
}

static void answer(struct acc_site *s, acc_err rc, const struct acc_error *err, int ok_status,
                   struct acc_httpd_reply *rs)
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
    rs->content_type = rs->body.len ? "application/xml" : NULL;
}

/* ---------------------------------------------------------------- handlers */

typedef void handler_fn(struct acc_site *s, const struct site_request *rq,
                        struct acc_httpd_reply *rs);

static void h_health(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    (void)rq;
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

static void h_preview(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_proto_preview pv;
    struct acc_frames f;
    acc_frames_init(&f);
    acc_err rc = acc_proto_read_preview(rq->body, rq->body_len, &pv, &err);
    if (!rc) {
        struct site_ask a = {pv.kind, pv.resource, pv.amount,  pv.from,     pv.until,
                             0,       pv.duration, pv.old_key, &pv.identity};
        rc = site_op_preview(s, rq->peer, &a, &f, &err);
        acc_proto_preview_release(&pv);
    }
    if (!rc)
        acc_proto_write_frames(&f, &rs->body);
    answer(s, rc, &err, 200, rs);
    acc_frames_release(&f);
}

static void write_booking(const struct site_booking *b, struct acc_httpd_reply *rs)
{
    acc_proto_write_reservation(b->key, b->kind, b->resource, &b->res, &rs->body);
}

static void h_reserve(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_proto_reserve r;
    struct site_booking b = {0};
    acc_err rc = acc_proto_read_reserve(rq->body, rq->body_len, &r, &err);
    if (!rc) {
        struct site_ask a = {r.kind,  r.resource, r.amount,  0,          0,
                             r.start, r.duration, r.old_key, &r.identity};
        rc = site_op_reserve(s, rq->peer, rq->key, &a, &b, &err);
        acc_proto_reserve_release(&r);
    }
    if (!rc)
        write_booking(&b, rs);
    answer(s, rc, &err, 200, rs);
    site_booking_release(&b);
}

static void h_query(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct site_booking b = {0};
    acc_err rc = site_op_query(s, rq->peer, rq->key, &b, &err);
    if (!rc)
        write_booking(&b, rs);
    answer(s, rc, &err, 200, rs);
    site_booking_release(&b);
}

static void h_cancel(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    struct acc_error err;
    acc_err rc = site_op_cancel(s, rq->peer, rq->key, &err);
    answer(s, rc, &err, 204, rs);
}

static void h_provision(struct acc_site *s, const struct site_request *rq,
                        struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_proto_flow f = {0};
    acc_err rc = acc_proto_read_flow(rq->body, rq->body_len, &f, &err);
    if (!rc) {
        rc = site_op_provision(s, rq->peer, rq->key, &f.flow, &err);
        acc_proto_flow_release(&f);
    }
    answer(s, rc, &err, 204, rs);
}

static void h_provision_status(struct acc_site *s, const struct site_request *rq,
                               struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_provision_status st = {0};
    acc_err rc = site_op_provision_status(s, rq->peer, rq->key, &st, &err);
    if (!rc)
        acc_proto_write_provision_status(&st, &rs->body);
    answer(s, rc, &err, 200, rs);
}

/* ------------------------------------------------------------------- jobs */

static acc_err no_jobs(struct acc_site *s, struct acc_error *err)
{
    return acc_error_set(err, ACC_ERR_UNSUPPORTED, "site %s starts no jobs", s->cfg.name);
}

static void h_submit(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_proto_job j = {0};
    struct site_booking b = {0};
    char id[ACC_SITE_JOB_ID_MAX + 16] = "";
    acc_err rc = s->jobs ? acc_proto_read_job(rq->body, rq->body_len, &j, &err) : no_jobs(s, &err);
    if (!rc && (rc = site_op_booking(s, rq->peer, j.job.key, &b, &err)) == ACC_OK) {
        struct acc_site_job_booking jb = {b.key, b.res.local_id, b.res.nodes, b.res.start,
                                          b.res.end};
        /* The job runs as the account its reservation was booked for (the
         * peer's user, mapped); without one, as job_user. */
        if (b.account[0])
            j.job.user = b.account;
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

static void h_job_status(struct acc_site *s, const struct site_request *rq,
                         struct acc_httpd_reply *rs)
{
    struct acc_error err;
    struct acc_job_status st = {0};
    acc_err rc = s->jobs ? acc_site_jobs_status(s->jobs, rq->peer->name, rq->key, &st, &err)
                         : no_jobs(s, &err);
    if (!rc)
        acc_proto_write_job_status(&st, &rs->body);
    answer(s, rc, &err, 200, rs);
}

static void h_job_cancel(struct acc_site *s, const struct site_request *rq,
                         struct acc_httpd_reply *rs)
{
    struct acc_error err;
    acc_err rc =
        s->jobs ? acc_site_jobs_cancel(s->jobs, rq->peer->name, rq->key, &err) : no_jobs(s, &err);
    answer(s, rc, &err, 204, rs);
}

/* ---------------------------------------------------------------- metrics */

/* Prometheus' text format, for a peer with admin = yes or metrics_only =
 * yes: the front end's
 * figures (answers by status code, request durations by route class,
 * connections), each adapter's, the jobs running, the build, the
 * process's (lib/common/procstat.h). */
static void h_metrics(struct acc_site *s, const struct site_request *rq, struct acc_httpd_reply *rs)
{
    if (!rq->peer->admin && !rq->peer->metrics_only) {
        struct acc_error err;
        acc_error_set(&err, ACC_ERR_FORBIDDEN,
                      "peer %s may not read the metrics of site %s (admin = yes or "
                      "metrics_only = yes in its [peer] section)",
                      rq->peer->name, s->cfg.name);
        site_fault(s, &err, rs);
        return;
    }
    struct acc_buf *out = &rs->body;
    acc_httpd_metrics(rq->httpd, out);
    acc_buf_puts(out, "# HELP accord_adapter_calls_total Calls into each adapter.\n"
                      "# TYPE accord_adapter_calls_total counter\n"
                      "# HELP accord_adapter_failures_total Failed calls into each adapter.\n"
                      "# TYPE accord_adapter_failures_total counter\n"
                      "# HELP accord_adapter_up 1 unless the adapter's last call failed (1 "
                      "before any call).\n# TYPE accord_adapter_up gauge\n"
                      "# HELP accord_adapter_last_error_timestamp_seconds When the adapter's "
                      "last failed call ended (Unix time; 0: none yet).\n"
                      "# TYPE accord_adapter_last_error_timestamp_seconds gauge\n");
    for (size_t i = 0; i < s->n_res; i++) {
        struct acc_adapter_stats st;
        acc_adapter_stats(s->res[i].ad, &st);
        const char *n = s->res[i].name, *k = acc_adapter_kind(s->res[i].ad);
        acc_buf_printf(out,
                       "accord_adapter_calls_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_failures_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_up{adapter=\"%s\",kind=\"%s\"} %d\n"
                       "accord_adapter_last_error_timestamp_seconds{adapter=\"%s\",kind=\"%s\"} "
                       "%" PRId64 "\n",
                       n, k, st.calls, n, k, st.failures, n, k, st.up ? 1 : 0, n, k,
                       (int64_t)st.last_failure);
    }
    acc_buf_printf(out,
                   "# HELP accord_site_jobs_running Jobs started for peers and still running.\n"
                   "# TYPE accord_site_jobs_running gauge\naccord_site_jobs_running %zu\n"
                   "# HELP accord_build_info The running build: its version.\n"
                   "# TYPE accord_build_info gauge\naccord_build_info{version=\"%s\"} 1\n",
                   s->jobs ? acc_site_jobs_running(s->jobs) : 0, ACCORD_VERSION);
    acc_procstat_metrics(out);
    answer(s, ACC_OK, NULL, 200, rs);
    rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* ------------------------------------------------------------------ table */

/* The route classes of lib/httpd's request-duration histogram, in the
 * order of site_route_classes. */
enum route_class { C_HEALTH, C_PREVIEW, C_RESERVATIONS, C_PROVISION, C_JOBS, C_METRICS, C__COUNT };

const char *const site_route_classes[C__COUNT + 1] = {
    [C_HEALTH] = "health",       [C_PREVIEW] = "preview", [C_RESERVATIONS] = "reservations",
    [C_PROVISION] = "provision", [C_JOBS] = "jobs",       [C_METRICS] = "metrics", /* then NULL */
};
_Static_assert(C__COUNT <= ACC_HTTPD_MAX_CLASSES, "more route classes than lib/httpd counts");

struct route {
    struct acc_httpd_route r; /* method, path pattern ("{}": a key or id) */
    handler_fn *fn;
    const char *param; /* what "{}" is, for a refusal ("key", "job id") */
    enum route_class cls;
};

static const struct route routes[] = {
    {{"GET", "/v1/health"}, h_health, NULL, C_HEALTH},
    {{"POST", "/v1/preview"}, h_preview, NULL, C_PREVIEW},
    {{"PUT", "/v1/reservations/{}"}, h_reserve, "key", C_RESERVATIONS},
    {{"GET", "/v1/reservations/{}"}, h_query, "key", C_RESERVATIONS},
    {{"DELETE", "/v1/reservations/{}"}, h_cancel, "key", C_RESERVATIONS},
    {{"PUT", "/v1/reservations/{}/provision"}, h_provision, "key", C_PROVISION},
    {{"GET", "/v1/reservations/{}/provision"}, h_provision_status, "key", C_PROVISION},
    {{"POST", "/v1/jobs"}, h_submit, NULL, C_JOBS},
    {{"GET", "/v1/jobs/{}"}, h_job_status, "job id", C_JOBS},
    {{"DELETE", "/v1/jobs/{}"}, h_job_cancel, "job id", C_JOBS},
    {{"GET", "/metrics"}, h_metrics, NULL, C_METRICS},
};

/* Every segment matches "{}": a bad key is then refused with 400 saying what
 * is wrong with it (key_check), not a 404 for a path that seems unknown. */
static const struct acc_httpd_table table = ACC_HTTPD_TABLE(routes, NULL);

/* ACC_ERR_BAD_REQUEST naming what makes key no key of the protocol
 * (acc_proto_key_ok: [A-Za-z0-9._:-]{1,95}, never "." or ".."), before
 * anything is looked up or booked.  A NUL (%00) never gets this far:
 * lib/httpd refuses it in the raw target, before it is decoded. */
static acc_err key_check(const char *key, const char *what, struct acc_error *err)
{
    if (acc_proto_key_ok(key))
        return ACC_OK;
    size_t n = strlen(key);
    if (n >= ACC_KEY_MAX)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "the %s is %zu bytes; at most %d", what, n,
                             ACC_KEY_MAX - 1);
    if (strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST,
                             "'%s' is no %s: . and .. are segments of a path", key, what);
    size_t at = strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-");
    unsigned char c = (unsigned char)key[at];
    char shown[16];
    if (c >= 0x20 && c < 0x7f)
        snprintf(shown, sizeof shown, "'%c' (0x%02x)", c, c);
    else
        snprintf(shown, sizeof shown, "the byte 0x%02x", c);
    return acc_error_set(err, ACC_ERR_BAD_REQUEST,
                         "the %s has %s at position %zu; a %s is 1 to %d of A-Z a-z 0-9 . _ : -",
                         what, shown, at + 1, what, ACC_KEY_MAX - 1);
}

void site_route(struct acc_site *s, struct site_request *rq, struct acc_httpd_reply *rs)
{
    /* The captures are no longer than the path. */
    size_t size = strlen(rq->path) + 1;
    char *buf = malloc(size);
    struct acc_httpd_match m;
    struct acc_error err;
    if (!buf) {
        acc_error_set(&err, ACC_ERR_NOMEM, "out of memory");
        site_fault(s, &err, rs);
        return;
    }
    const struct route *r = acc_httpd_match(&table, rq->method, rq->path, buf, size, &m, &err);
    if (r)
        rq->route_class = (int)r->cls + 1;
    if (!r) {
        site_fault(s, &err, rs);
        memcpy(rs->allow, m.allow, sizeof rs->allow);
    } else if (rq->peer->metrics_only && r->fn != h_metrics) {
        acc_error_set(&err, ACC_ERR_FORBIDDEN,
                      "peer %s may read the metrics of site %s and nothing else (metrics_only = "
                      "yes in its [peer] section)",
                      rq->peer->name, s->cfg.name);
        site_fault(s, &err, rs);
    } else if (r->param && key_check(m.params[0], r->param, &err)) {
        site_fault(s, &err, rs);
    } else {
        rq->key = m.params[0];
        r->fn(s, rq, rs);
    }
    free(buf);
}
