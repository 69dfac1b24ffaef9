/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_request.c - one exchange, from its request line to its answer: the
 * layer's checks in their order (httpd.h), the body, the daemon's hooks,
 * and parking a request whose answer comes later (libmicrohttpd's
 * suspend/resume, as GNU Taler's exchange does: no thread waits). */
#include "httpd_int.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/log.h"
#include "../common/timefmt.h"

/* Per request, from its request line (httpd_uri_seen) to its completion. */
struct exchange {
    struct acc_httpd_request rq; /* what the hooks see */
    struct acc_httpd *d;
    struct MHD_Connection *con;
    struct acc_buf body;
    int64_t t0;         /* first seen, for the request deadline */
    size_t n_query;     /* parameters in the raw query (room for the parsed ones) */
    bool nul_in_uri;    /* %00 somewhere in the raw target */
    bool started;       /* the first access callback has run */
    bool too_large;     /* the body is over max_body: discarded */
    bool refused;       /* the auth hook said no: the body is discarded, rs sent */
    bool waits_body;    /* its connection is held to the body's deadline */
    bool fault;         /* the answer is the layer's fault: small, never held */
    long long declared; /* Content-Length, or -1 */
    size_t received;    /* body bytes so far */
    bool answered;
    int status; /* the answer's, once sent */
    /* The answer's bytes counted as held until its client reads them
     * (max_unsent; client_unsent against held_by, its address). */
    size_t held;
    struct httpd_tally_entry *held_by;
    char user[64];        /* acc_httpd_set_user's, for the access log */
    unsigned route_class; /* for the duration histogram: 0 "other", else 1 + the daemon's */
    /* A request whose answer comes later. */
    pthread_mutex_t lock;
    bool parked, suspended, ready;
    struct acc_kv *query;
    struct acc_tls_peer peer;
    char address[HTTPD_ADDRESS_LEN];
    struct acc_httpd_reply rs;
    max_align_t state[]; /* the daemon's, ops->state_size bytes */
};

static struct exchange *of_state(void *state)
{
    return (struct exchange *)(void *)((char *)state - offsetof(struct exchange, state));
}

static struct exchange *of_request(const struct acc_httpd_request *rq)
{
    return (struct exchange *)(void *)((char *)rq - offsetof(struct exchange, rq));
}

const char *acc_httpd_header(const struct acc_httpd_request *rq, const char *name)
{
    return MHD_lookup_connection_value(of_request(rq)->con, MHD_HEADER_KIND, name);
}

struct acc_httpd *acc_httpd_of(const struct acc_httpd_request *rq)
{
    return of_request(rq)->d;
}

void acc_httpd_reply_header(struct acc_httpd_reply *rs, const char *name, const char *value)
{
    if (rs->n_header == ACC_HTTPD_MAX_HEADERS)
        return;
    rs->header[rs->n_header].name = name;
    rs->header[rs->n_header++].value = value;
}

static void reply_release(struct acc_httpd_reply *rs)
{
    acc_buf_release(&rs->body);
    memset(rs, 0, sizeof *rs);
}

/* n bytes of answer held for ex's client, within max_unsent and its
 * address's client_unsent unless nothing else is held there; false (nothing
 * counted, err says which bound) when they do not fit. */
static bool hold(struct exchange *ex, size_t n, struct acc_error *err)
{
    struct acc_httpd *d = ex->d;
    const struct acc_httpd_options *o = &d->opt;
    size_t now = atomic_load(&d->unsent);
    do {
        if (o->max_unsent && now &&
            n > o->max_unsent - (now < o->max_unsent ? now : o->max_unsent)) {
            acc_error_set(err, ACC_ERR_OVERLOADED,
                          "answers not yet read by their clients hold %zu KiB; this one (%zu "
                          "KiB) would pass the most allowed ([server] max_unsent = %zu KiB): "
                          "retry shortly",
                          now >> 10, n >> 10, o->max_unsent >> 10);
            return false;
        }
    } while (!atomic_compare_exchange_weak(&d->unsent, &now, now + n));
    struct httpd_conn *c = o->client_unsent && d->addresses ? httpd_conn_of(ex->con) : NULL;
    size_t held = 0;
    if (c && c->address &&
        httpd_tally_hold(d->addresses, c->address, n, o->client_unsent, &held) != ACC_OK) {
        atomic_fetch_sub(&d->unsent, n);
        acc_error_set(err, ACC_ERR_OVERLOADED,
                      "answers this client has not yet read hold %zu KiB; this one (%zu KiB) "
                      "would pass the most allowed per client address ([server] client_unsent "
                      "= %zu KiB): read them first",
                      held >> 10, n >> 10, o->client_unsent >> 10);
        return false;
    }
    ex->held = n;
    ex->held_by = c ? c->address : NULL;
    return true;
}

/* Before an answer is made: a client whose unread answers already fill its
 * share, or that holds some while all clients' fill max_unsent, is
 * answered 503 at once rather than after its answer was built (slow
 * readers of large lists kept the threads busy making answers that were
 * then refused); a client that holds nothing is always served. */
static bool holds_too_much(struct exchange *ex, struct acc_error *err)
{
    struct acc_httpd *d = ex->d;
    const struct acc_httpd_options *o = &d->opt;
    if (atomic_load(&d->unsent) == 0) /* nobody holds any: no lock taken */
        return false;
    struct httpd_conn *c = d->addresses ? httpd_conn_of(ex->con) : NULL;
    size_t held = c && c->address ? httpd_tally_held(d->addresses, c->address) : 0;
    if (!held)
        return false;
    if (o->client_unsent && held >= o->client_unsent) {
        acc_error_set(err, ACC_ERR_OVERLOADED,
                      "answers this client has not yet read hold %zu KiB, the most allowed per "
                      "client address ([server] client_unsent = %zu KiB): read them first",
                      held >> 10, o->client_unsent >> 10);
        return true;
    }
    size_t all = atomic_load(&d->unsent);
    if (o->max_unsent && all >= o->max_unsent) {
        acc_error_set(err, ACC_ERR_OVERLOADED,
                      "answers not yet read by their clients hold %zu KiB, the most allowed "
                      "([server] max_unsent = %zu KiB), %zu KiB of them this client's: read "
                      "them first",
                      all >> 10, o->max_unsent >> 10, held >> 10);
        return true;
    }
    return false;
}

static void unhold(struct exchange *ex)
{
    if (!ex->held)
        return;
    atomic_fetch_sub(&ex->d->unsent, ex->held);
    httpd_tally_unhold(ex->d->addresses, ex->held_by, ex->held);
    ex->held = 0;
    ex->held_by = NULL;
}

static enum MHD_Result send_reply(struct exchange *ex)
{
    struct acc_httpd *d = ex->d;
    struct acc_httpd_reply *rs = &ex->rs;
    struct acc_error err;
    if (rs->body.len && !ex->fault && !hold(ex, rs->body.len, &err)) {
        /* the fault is small and not held: one per connection at most */
        atomic_fetch_add(&d->unsent_refused, 1);
        bool close = rs->close;
        reply_release(rs);
        rs->status = acc_err_http_status(err.code);
        d->ops->fault(d->app, &ex->rq, &err, rs);
        rs->close = close;
    }
    size_t len = 0;
    char *data = acc_buf_detach(&rs->body, &len);
    ex->answered = true;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(data ? len : 0, data ? data : (void *)"",
                                        data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    if (rs->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type);
    if (rs->allow[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
    /* the daemon's own Retry-After, Cache-Control, Content-Security-Policy */
    bool retry = false, cache = false, csp = false;
    for (size_t i = 0; i < rs->n_header; i++) {
        MHD_add_response_header(r, rs->header[i].name, rs->header[i].value);
        retry |= strcasecmp(rs->header[i].name, MHD_HTTP_HEADER_RETRY_AFTER) == 0;
        cache |= strcasecmp(rs->header[i].name, MHD_HTTP_HEADER_CACHE_CONTROL) == 0;
        csp |= strcasecmp(rs->header[i].name, "Content-Security-Policy") == 0;
    }
    /* An answer is data, never a page: a document that holds what a client
     * wrote (an agreement copies its offer) runs nothing when a browser
     * opens it, nor is sniffed into HTML.  Only a daemon's own page (its
     * files, with a policy of their own) says otherwise. */
    if (!csp)
        MHD_add_response_header(r, "Content-Security-Policy", ACC_HTTPD_CSP_NONE);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (d->tls)
        MHD_add_response_header(r, "Strict-Transport-Security", ACC_HTTPD_HSTS);
    if ((rs->status == 503 || rs->status == 429) && !retry)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "2");
    if (rs->close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (!cache) /* answers are data of the moment; a static file may say otherwise */
        MHD_add_response_header(r, "Cache-Control", "no-store");
    unsigned cls = (unsigned)rs->status / 100;
    if (d->opt.status_class && cls < 6)
        atomic_fetch_add(&d->opt.status_class[cls], 1);
    httpd_count_answer(d, rs->status);
    ex->status = rs->status;
    enum MHD_Result ok = MHD_queue_response(ex->con, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    if (acc_log_enabled(ACC_LOG_DEBUG))
        acc_log_debug("%s %s -> %d", ex->rq.method, ex->rq.path, rs->status);
    reply_release(rs);
    return ok;
}

/* A fault of the layer's, rendered by the daemon; close: end the
 * connection after it. */
static enum MHD_Result refuse_err(struct exchange *ex, const struct acc_error *err, bool close)
{
    ex->fault = true;
    reply_release(&ex->rs);
    ex->rs.status = acc_err_http_status(err->code);
    ex->d->ops->fault(ex->d->app, &ex->rq, err, &ex->rs);
    ex->rs.close = close;
    return send_reply(ex);
}

static enum MHD_Result refuse(struct exchange *ex, acc_err code, bool close, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum MHD_Result refuse(struct exchange *ex, acc_err code, bool close, const char *fmt, ...)
{
    struct acc_error err = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof err.msg, fmt, ap);
    va_end(ap);
    return refuse_err(ex, &err, close);
}

/* Before the query is parsed: count its parameters and look for %00, which
 * libmicrohttpd would decode into a NUL that cuts the path or a value. */
void *httpd_uri_seen(void *cls, const char *uri, struct MHD_Connection *con)
{
    struct acc_httpd *d = cls;
    struct exchange *ex = calloc(1, sizeof *ex + d->ops->state_size);
    if (!ex)
        return NULL;
    ex->d = d;
    ex->con = con;
    ex->t0 = acc_mono_us();
    /* once: the auth hook's and the access log's */
    httpd_client_address(con, ex->address, sizeof ex->address);
    ex->rq.body = "";
    acc_buf_init(&ex->body);
    pthread_mutex_init(&ex->lock, NULL);
    const char *q = strchr(uri, '?');
    if (q && q[1]) {
        ex->n_query = 1;
        for (const char *p = q + 1; *p; p++)
            ex->n_query += *p == '&' || *p == ';';
    }
    for (const char *p = uri; (p = strchr(p, '%')) != NULL; p++) {
        if (p[1] == '0' && p[2] == '0')
            ex->nul_in_uri = true;
    }
    return ex;
}

/* Headers a request must not repeat with different values. */
struct length_check {
    const char *first;
    bool conflict;
};

static enum MHD_Result check_length(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    struct length_check *c = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
        return MHD_YES;
    if (!c->first)
        c->first = value ? value : "";
    else if (strcmp(c->first, value ? value : "") != 0)
        c->conflict = true;
    return MHD_YES;
}

static acc_err count_principal(struct exchange *ex, const struct acc_httpd_who *who,
                               struct acc_error *err);
static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value);

/* The head is in: the query, the client certificate, and the daemon's auth
 * hook.  A refusal is answered once the body is in (read and dropped: no
 * byte of it is kept for a client refused), so that a client still sending
 * reads it; a principal over its bound on connections is answered at once
 * and its connection closed, before a byte of its body is read. */
static enum MHD_Result who_asks(struct exchange *ex)
{
    struct acc_httpd *d = ex->d;
    if (ex->n_query) {
        if (!(ex->query = calloc(ex->n_query, sizeof *ex->query)))
            return refuse(ex, ACC_ERR_NOMEM, true, "out of memory reading the request");
        MHD_get_connection_values(ex->con, MHD_GET_ARGUMENT_KIND, collect_query, ex);
        ex->rq.query = ex->query;
    }
    if (d->tls && httpd_peer_identity(ex->con, httpd_conn_of(ex->con), &ex->peer, NULL) == ACC_OK)
        ex->rq.peer = &ex->peer;
    if (strcmp(ex->address, "-") != 0)
        ex->rq.address = ex->address;
    struct acc_httpd_who who = {.name = ""};
    if (d->ops->auth && !d->ops->auth(d->app, &ex->rq, ex->state, &who, &ex->rs)) {
        ex->refused = true;
        return MHD_YES;
    }
    struct acc_error err;
    if (who.name[0] && count_principal(ex, &who, &err))
        return refuse_err(ex, &err, true);
    return MHD_YES;
}

/* What every request is checked for once its headers are in. */
static enum MHD_Result first_look(struct exchange *ex)
{
    const struct acc_httpd_options *o = &ex->d->opt;
    struct httpd_conn *c = httpd_conn_of(ex->con);
    /* A body to come is held to request_timeout from here. */
    const char *length =
        MHD_lookup_connection_value(ex->con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    bool body =
        MHD_lookup_connection_value(ex->con, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
        (length && strspn(length, "0") != strlen(length));
    ex->waits_body = body && o->request_timeout && c;
    httpd_conn_headed(ex->d, c, ex->waits_body);
    if (!c)
        return refuse(ex, ACC_ERR_NOMEM, true, "out of memory");
    if (c->over)
        return refuse(ex, ACC_ERR_TOO_MANY, true,
                      "this client already has %u connections open, the most allowed "
                      "([server] client_connections); reuse one or close some",
                      o->client_connections);
    if (ex->nul_in_uri)
        return refuse(ex, ACC_ERR_BAD_REQUEST, false,
                      "the request target contains %%00 (a NUL byte)");
    unsigned max_query = o->max_query ? o->max_query : ACC_HTTPD_MAX_QUERY;
    if (ex->n_query > max_query)
        return refuse(ex, ACC_ERR_HEADERS, false,
                      "the request has %zu query parameters; at most %u are allowed", ex->n_query,
                      max_query);
    struct length_check lc = {0};
    MHD_get_connection_values(ex->con, MHD_HEADER_KIND, check_length, &lc);
    if (lc.conflict)
        return refuse(ex, ACC_ERR_BAD_REQUEST, true,
                      "the request has several Content-Length headers that disagree");
    unsigned long long declared = lc.first ? strtoull(lc.first, NULL, 10) : 0;
    size_t cap = o->drain_max > o->max_body ? o->drain_max : o->max_body;
    if (declared > cap)
        return refuse(ex, ACC_ERR_TOO_LARGE, true,
                      "the request body (%llu bytes) is larger than %zu bytes", declared,
                      o->max_body);
    ex->declared = lc.first ? (long long)declared : -1;
    /* A body a little over the limit is read and dropped before the
     * answer: answered early, a client still sending (TLS) may lose the
     * answer to the connection's reset. */
    ex->too_large = declared > o->max_body;
    return who_asks(ex);
}

static bool late(const struct exchange *ex)
{
    unsigned limit = ex->d->opt.request_timeout;
    return limit && acc_mono_us() - ex->t0 > (int64_t)limit * 1000000;
}

/* The most of a chunked body read before it is cut off: drain_max, or
 * without one a little over max_body (so that one a little too large is
 * still answered 413). */
static size_t chunked_cap(const struct acc_httpd_options *o)
{
    size_t slack = (size_t)1 << 20;
    if (o->drain_max > o->max_body)
        return o->drain_max;
    return o->max_body > SIZE_MAX - slack ? SIZE_MAX : o->max_body + slack;
}

/* A piece of the body: kept, or dropped once the body is over max_body. */
static enum MHD_Result take_body(struct exchange *ex, const char *data, size_t *size)
{
    const struct acc_httpd_options *o = &ex->d->opt;
    /* libmicrohttpd cannot answer in the middle of a body: one that is too
     * large is read to its end and thrown away, then answered; one still
     * arriving at the deadline is cut off. */
    ex->received += *size;
    /* Chunked: no length to refuse early, so one read past what may be
     * drained is cut off, not read to its end. */
    if (ex->declared < 0 && ex->received > chunked_cap(o)) {
        acc_log_info("http: %s %s: a chunked body of over %zu bytes; closed", ex->rq.method,
                     ex->rq.path, chunked_cap(o));
        return MHD_NO;
    }
    bool last = ex->declared >= 0 && ex->received >= (unsigned long long)ex->declared;
    if (late(ex) && !last) {
        acc_log_info("http: %s %s: the body was still arriving after %u s; closed", ex->rq.method,
                     ex->rq.path, o->request_timeout);
        return MHD_NO;
    }
    if (!ex->too_large && ex->body.len + *size > o->max_body) {
        ex->too_large = true;
        acc_buf_release(&ex->body);
    }
    if (!ex->too_large && !ex->refused)
        acc_buf_append(&ex->body, data, *size);
    *size = 0;
    return MHD_YES;
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    struct exchange *ex = cls;
    if (ex->rq.n_query == ex->n_query)
        return MHD_NO;
    ex->query[ex->rq.n_query].key = key;
    ex->query[ex->rq.n_query].value = value ? value : "";
    ex->rq.n_query++;
    return MHD_YES;
}

static bool type_ok(const char *const *types, const char *type)
{
    for (size_t i = 0; types[i]; i++) {
        if (strncasecmp(type, types[i], strlen(types[i])) == 0)
            return true;
    }
    return false;
}

/* The connection's principal, counted on its first request. */
static acc_err count_principal(struct exchange *ex, const struct acc_httpd_who *who,
                               struct acc_error *err)
{
    struct httpd_conn *c = httpd_conn_of(ex->con);
    if (!c || c->principal)
        return ACC_OK; /* counted already (no c was refused in first_look) */
    unsigned open = 0;
    acc_err rc = httpd_tally_open(ex->d->principals, who->name, strlen(who->name), who->connections,
                                  &c->principal, &open);
    if (rc == ACC_ERR_TOO_MANY)
        return acc_error_set(err, rc, "%s holds %u connections, its limit (connections = %u)",
                             who->name, open, who->connections);
    if (rc)
        return acc_error_set(err, rc, "out of memory");
    return ACC_OK;
}

static enum MHD_Result answer(struct exchange *ex);

/* The request is whole: the last checks, the daemon's auth and handle. */
static enum MHD_Result whole(struct exchange *ex)
{
    struct acc_httpd *d = ex->d;
    if (ex->waits_body) {
        ex->waits_body = false;
        httpd_conn_whole(d, httpd_conn_of(ex->con));
    }
    if (ex->too_large)
        return refuse(ex, ACC_ERR_TOO_LARGE, true, "the request body is larger than %zu bytes",
                      d->opt.max_body);
    if (late(ex))
        return refuse(ex, ACC_ERR_REQUEST_TIMEOUT, true,
                      "the request took more than %u s to arrive ([server] request_timeout)",
                      d->opt.request_timeout);
    if (ex->refused) /* the auth hook's answer */
        return send_reply(ex);
    if (!acc_buf_ok(&ex->body))
        return refuse(ex, ACC_ERR_NOMEM, true, "out of memory reading the request");
    ex->rq.body = ex->body.data ? ex->body.data : "";
    ex->rq.body_len = ex->body.len;
    struct acc_error held;
    if (holds_too_much(ex, &held)) {
        atomic_fetch_add(&d->unsent_refused, 1);
        return refuse_err(ex, &held, false);
    }
    const char *type = d->opt.body_types && ex->body.len
                           ? acc_httpd_header(&ex->rq, MHD_HTTP_HEADER_CONTENT_TYPE)
                           : NULL;
    if (type && !type_ok(d->opt.body_types, type))
        return refuse(ex, ACC_ERR_UNSUPPORTED_MEDIA, false, "a body is %s, not %.80s",
                      d->opt.body_types[0], type);
    d->ops->handle(d->app, &ex->rq, ex->state, &ex->rs);
    return answer(ex);
}

/* Sends the answer, or parks the request until acc_httpd_resume. */
static enum MHD_Result answer(struct exchange *ex)
{
    if (ex->rs.later) {
        pthread_mutex_lock(&ex->lock);
        if (!ex->parked) {
            ex->parked = true;
            httpd_park_count(ex->d, 1);
        }
        if (!ex->ready) {
            ex->suspended = true;
            MHD_suspend_connection(ex->con);
            pthread_mutex_unlock(&ex->lock);
            return MHD_YES;
        }
        pthread_mutex_unlock(&ex->lock);
        ex->rs.later = false;
        ex->d->ops->finish(ex->d->app, &ex->rq, ex->state, &ex->rs);
    }
    return send_reply(ex);
}

void acc_httpd_set_user(void *state, const char *name)
{
    struct exchange *ex = of_state(state);
    snprintf(ex->user, sizeof ex->user, "%s", name ? name : "");
}

void acc_httpd_set_route_class(void *state, unsigned index)
{
    struct exchange *ex = of_state(state);
    if (index + 1 < ex->d->n_classes)
        ex->route_class = index + 1;
}

void acc_httpd_resume(void *state)
{
    struct exchange *ex = of_state(state);
    pthread_mutex_lock(&ex->lock);
    ex->ready = true;
    if (ex->suspended) {
        ex->suspended = false;
        MHD_resume_connection(ex->con);
    }
    pthread_mutex_unlock(&ex->lock);
}

enum MHD_Result httpd_access(void *cls, struct MHD_Connection *con, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_data_size, void **con_cls)
{
    (void)cls;
    (void)con;
    (void)version;
    struct exchange *ex = *con_cls;
    if (!ex)
        return MHD_NO; /* out of memory in httpd_uri_seen */
    if (!ex->started) {
        ex->started = true;
        ex->rq.method = method;
        ex->rq.path = url;
        return first_look(ex);
    }
    if (ex->parked) /* resumed: the answer can be made */
        return answer(ex);
    if (ex->answered) {
        *upload_data_size = 0; /* drain whatever still comes, by its deadline */
        return MHD_YES;
    }
    if (*upload_data_size)
        return take_body(ex, upload_data, upload_data_size);
    return whole(ex);
}

void httpd_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                     enum MHD_RequestTerminationCode toe)
{
    struct acc_httpd *d = cls;
    struct exchange *ex = *con_cls;
    if (ex && ex->waits_body) /* answered before its body was in */
        httpd_conn_whole(d, httpd_conn_of(con));
    /* Answered and kept alive: the next head has its deadline. */
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        httpd_conn_idle(d, httpd_conn_of(con));
    if (!ex)
        return;
    unhold(ex);
    if (ex->parked)
        httpd_park_count(d, -1);
    /* An answer whose sending failed is said and counted with its status
     * all the same: the daemon did answer it. */
    int64_t us = acc_mono_us() - ex->t0;
    if (ex->status)
        httpd_count_duration(d, ex->route_class, us);
    httpd_access_line(d, ex->address, ex->rq.method, ex->rq.path, ex->status, ex->user, us);
    if (d->ops->release)
        d->ops->release(d->app, ex->state);
    reply_release(&ex->rs);
    acc_buf_release(&ex->body);
    pthread_mutex_destroy(&ex->lock);
    free(ex->query);
    free(ex);
    *con_cls = NULL;
}
