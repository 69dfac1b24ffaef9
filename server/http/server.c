/* SPDX-License-Identifier: Apache-2.0 */
/* server.c - accordd on lib/httpd: its [server] options, and the hooks that
 * turn the layer's requests into acc_request and acc_response (the types
 * the handlers and their tests know).
 *
 * lib/httpd bounds what a client can take (connections per client address,
 * the time a whole request may take to arrive, the body size, the number of
 * query parameters; each bound answered with a co:Fault made here).  A
 * request that must wait for a negotiation is parked and resumed by the
 * job's completion, so no thread waits. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../lib/tls/tls_server.h"
#include "http.h"

struct acc_http_server {
    struct acc_httpd *httpd;
    struct acc_http_ctx *ctx;
};

/* Per request (lib/httpd's state of it). */
struct exchange {
    struct acc_request rq;
    struct acc_response rs;
    struct acc_nego_waiter waiter;
};

/* ----------------------------------------------------------------- Accept */

enum { AS_XML, AS_JSON };

/* How specifically a media range covers a type of answer: 3 by name, 2 by
 * its top-level type (application/<*>), 1 by <*>/<*>, 0 not. */
static int covers(const char *range, size_t n, int as)
{
#define IS(lit) (n == sizeof lit - 1 && strncasecmp(range, lit, n) == 0)
    if (IS("*/*"))
        return 1;
    if (as == AS_JSON)
        return IS("application/json") ? 3 : IS("application/*") ? 2 : 0;
    if (IS("application/xml") || IS("text/xml") ||
        (n > 4 && !strncasecmp(range + n - 4, "+xml", 4)))
        return 3;
    return IS("application/*") || IS("text/*") ? 2 : 0;
#undef IS
}

/* The q of a range's parameters in thousandths (1000 without one); -1
 * when it does not parse (the range is then ignored). */
static int q_of(const char *params, size_t n)
{
    for (const char *p = params, *end = params + n; p < end; p++) {
        if (*p != ';')
            continue;
        p += strspn(p + 1, " \t") + 1;
        if (end - p < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=')
            continue;
        p += 2;
        if (p >= end || (*p != '0' && *p != '1'))
            return -1;
        int q = (*p++ - '0') * 1000, scale = 100;
        if (p < end && *p == '.')
            for (p++; p < end && *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
                q += (*p - '0') * scale;
        return q > 1000 || (p < end && !strchr("; \t", *p)) ? -1 : q;
    }
    return 1000;
}

/* What the Accept header gives one type of answer: its q (0 when no range
 * covers it), how specific the range is and where it stands. */
struct pick {
    int q, spec, pos;
};

static struct pick pick_of(const char *accept, int as)
{
    struct pick best = {0, 0, 0};
    int pos = 0;
    for (const char *p = accept; *p; pos++) {
        size_t len = strcspn(p, ",");
        const char *r = p + strspn(p, " \t");
        size_t n = strcspn(r, ";, \t");
        int spec = r < p + len ? covers(r, n, as) : 0;
        int q = spec ? q_of(r + n, len - (size_t)(r + n - p)) : -1;
        if (q >= 0 && spec > best.spec)
            best = (struct pick){q, spec, pos};
        p += len + (p[len] == ',');
    }
    return best;
}

bool acc_http_wants_json(const char *accept)
{
    if (!accept)
        return false;
    struct pick j = pick_of(accept, AS_JSON), x = pick_of(accept, AS_XML);
    if (j.q != x.q)
        return j.q > x.q;
    return j.q > 0 && (j.spec != x.spec ? j.spec > x.spec : j.pos < x.pos);
}

/* The handlers' response as lib/httpd sends it (the body moves). */
static void to_reply(struct acc_response *rs, struct acc_httpd_reply *out)
{
    out->status = rs->status;
    out->content_type = rs->content_type;
    acc_buf_release(&out->body);
    out->body = rs->body;
    acc_buf_init(&rs->body);
    if (rs->location[0])
        acc_httpd_reply_header(out, "Location", rs->location);
    memcpy(out->allow, rs->allow, sizeof out->allow);
    if (rs->replayed)
        acc_httpd_reply_header(out, "Idempotent-Replayed", "true");
    if (rs->challenge)
        acc_httpd_reply_header(out, "WWW-Authenticate",
                               rs->www_authenticate[0] ? rs->www_authenticate
                                                       : "Bearer realm=\"accord\"");
    if (rs->retry_after[0]) /* else lib/httpd's default for a 503 or 429 */
        acc_httpd_reply_header(out, "Retry-After", rs->retry_after);
    for (size_t i = 0; i < rs->n_header; i++)
        acc_httpd_reply_header(out, rs->header[i].name, rs->header[i].value);
    out->close = rs->close;
}

static bool auth(void *app, const struct acc_httpd_request *hr, void *state,
                 struct acc_httpd_who *who, struct acc_httpd_reply *out)
{
    (void)who; /* users are not held to bounds of their own */
    struct exchange *ex = state;
    ex->rq = (struct acc_request){
        .method = hr->method,
        .path = hr->path,
        .body = hr->body,
        .body_len = hr->body_len,
        .query = hr->query,
        .n_query = hr->n_query,
        .content_type = acc_httpd_header(hr, "Content-Type"),
        .idempotency_key = acc_httpd_header(hr, "Idempotency-Key"),
        .authorization = acc_httpd_header(hr, "Authorization"),
        .if_none_match = acc_httpd_header(hr, "If-None-Match"),
        .host = acc_httpd_header(hr, "Host"),
        .origin = acc_httpd_header(hr, "Origin"),
        .peer_subject = hr->peer ? hr->peer->subject : NULL,
        .peer_fingerprint = hr->peer ? hr->peer->fingerprint : NULL,
        .address = hr->address,
        .json = acc_http_wants_json(acc_httpd_header(hr, "Accept")),
    };
    acc_response_init(&ex->rs);
    bool ok = acc_http_admit(app, &ex->rq, &ex->rs);
    if (ex->rq.user) /* also when refused: a user may be denied a route */
        acc_httpd_set_user(state, ex->rq.user->name);
    if (ok)
        return true;
    to_reply(&ex->rs, out);
    return false;
}

/* The job's completion (from the worker that ends it). */
static void job_done(void *arg)
{
    acc_httpd_resume(arg);
}

static void handle(void *app, const struct acc_httpd_request *hr, void *state,
                   struct acc_httpd_reply *out)
{
    struct exchange *ex = state;
    /* auth saw the head alone */
    ex->rq.body = hr->body;
    ex->rq.body_len = hr->body_len;
    acc_http_route(app, &ex->rq, &ex->rs);
    if (ex->rq.route_class)
        acc_httpd_set_route_class(state, (unsigned)ex->rq.route_class - 1);
    if (ex->rs.wait) {
        ex->waiter = (struct acc_nego_waiter){job_done, ex, NULL};
        if (acc_nego_when_done(ex->rs.wait, &ex->waiter)) {
            out->later = true;
            return;
        }
        acc_http_finish(app, &ex->rq, &ex->rs);
    }
    to_reply(&ex->rs, out);
}

static void finish(void *app, const struct acc_httpd_request *hr, void *state,
                   struct acc_httpd_reply *out)
{
    (void)hr;
    struct exchange *ex = state;
    acc_http_finish(app, &ex->rq, &ex->rs);
    to_reply(&ex->rs, out);
}

static void fault(void *app, const struct acc_httpd_request *hr, const struct acc_error *err,
                  struct acc_httpd_reply *out)
{
    (void)app;
    struct acc_request rq = {.json = acc_http_wants_json(acc_httpd_header(hr, "Accept"))};
    struct acc_response rs;
    acc_response_init(&rs);
    acc_reply_err(&rq, &rs, err, NULL);
    to_reply(&rs, out);
    acc_response_release(&rs);
}

static void release(void *app, void *state)
{
    struct exchange *ex = state;
    if (ex->rq.method) { /* the response was made */
        acc_http_request_done(app, &ex->rq);
        acc_response_release(&ex->rs);
    }
}

static const struct acc_httpd_ops ops = {
    .state_size = sizeof(struct exchange),
    .auth = auth,
    .handle = handle,
    .finish = finish,
    .fault = fault,
    .release = release,
};

acc_err acc_http_start(struct acc_http_ctx *ctx, const struct acc_http_options *opt,
                       struct acc_http_server **out, struct acc_error *err)
{
    struct acc_http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_tls_server_cfg tc = {.certificate = opt->certificate,
                                    .key = opt->key,
                                    .client_ca = opt->client_ca,
                                    .client_optional = true};
    struct acc_httpd_options ho = {
        .host = opt->host,
        .port = opt->port,
        .threads = opt->threads,
        .connection_limit = opt->connection_limit,
        .client_connections = opt->client_connections,
        .pending_connections = opt->pending_connections,
        .header_timeout = opt->header_timeout,
        .timeout = opt->timeout,
        .request_timeout = opt->request_timeout,
        .max_query = opt->max_query,
        .max_body = opt->max_body,
        .max_unsent = opt->max_unsent,
        .client_unsent = opt->client_unsent,
        .tls = opt->certificate ? &tc : NULL,
        .status_class = ctx->status_class,
        .access_log = opt->access_log,
        .route_classes = acc_http_route_classes,
    };
    acc_err rc = acc_hostnames_init(&ctx->names, opt->names, opt->host, err);
    if (rc) {
        free(srv);
        acc_error_prefix(err, "[server] names");
        return rc;
    }
    ctx->names_ready = true;
    rc = acc_httpd_start(&ho, &ops, ctx, &srv->httpd, err);
    if (rc) {
        ctx->names_ready = false;
        acc_hostnames_release(&ctx->names);
        free(srv);
        return rc;
    }
    srv->ctx = ctx;
    atomic_store(&ctx->httpd, srv->httpd);
    *out = srv;
    return ACC_OK;
}

acc_err acc_http_reload_tls(struct acc_http_server *srv, struct acc_error *err)
{
    return acc_httpd_reload_tls(srv->httpd, NULL, err);
}

unsigned acc_http_port(const struct acc_http_server *srv)
{
    return acc_httpd_port(srv->httpd);
}

void acc_http_quiesce(struct acc_http_server *srv)
{
    if (srv)
        acc_httpd_quiesce(srv->httpd);
}

void acc_http_stop(struct acc_http_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->ctx->httpd, NULL);
    acc_httpd_stop(srv->httpd);
    srv->ctx->names_ready = false;
    acc_hostnames_release(&srv->ctx->names);
    free(srv);
}
