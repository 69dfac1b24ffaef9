/* server.c - libmicrohttpd glue.
 *
 * A small pool of event threads ([server] threads) serves every connection
 * with epoll: an idle or slow connection costs a socket, never a thread.  A
 * request that must wait for a negotiation is suspended (libmicrohttpd's
 * suspend/resume, as GNU Taler's exchange does) and resumed by the job's
 * completion, so no thread waits either.  Every resource a client can take
 * is bounded: connections per client address, the time a whole request may
 * take to arrive, the body size, the number of query parameters; each bound
 * is answered with a co:Fault. */
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/common/sync.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/tls/tls_server.h"
#include "clients.h"
#include "http.h"

struct acc_http_server {
    struct MHD_Daemon *daemon;
    struct acc_http_ctx *ctx;
    struct acc_http_options opt;
    struct acc_clients *clients;
    unsigned port;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned parked;            /* requests suspended or resumed and not yet completed */
    atomic_bool quiesced;       /* acc_http_quiesce: every new connection is closed at once */
    struct acc_tls_server *tls; /* HTTPS; NULL: plain HTTP */
};

/* Per request, from its first callback (the URI log) to its completion. */
struct exchange {
    struct acc_http_server *srv;
    struct MHD_Connection *con;
    struct acc_buf body;
    int64_t t0;         /* first seen, for the request deadline */
    size_t n_query;     /* parameters in the raw query */
    bool nul_in_uri;    /* %00 somewhere in the raw target */
    bool started;       /* the first access callback has run */
    bool too_large;     /* the body went over max_body: discarded */
    long long declared; /* Content-Length, or -1 */
    size_t received;    /* body bytes so far */
    bool answered;
    /* A request waiting for a negotiation. */
    pthread_mutex_t lock;
    bool parked, suspended, ready;
    struct acc_nego_waiter waiter;
    struct acc_tls_peer peer; /* the client certificate, when there is one */
    struct acc_request rq;
    struct acc_response rs;
    struct query *q;
};

struct query {
    struct acc_kv kv[ACC_HTTP_MAX_QUERY];
    size_t n;
};

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    struct query *q = cls;
    if (q->n == ACC_HTTP_MAX_QUERY)
        return MHD_NO;
    q->kv[q->n].key = key;
    q->kv[q->n].value = value ? value : "";
    q->n++;
    return MHD_YES;
}

static bool wants_json(const char *accept)
{
    if (!accept)
        return false;
    const char *j = strstr(accept, "application/json");
    const char *x = strstr(accept, "xml");
    /* Whichever the client names first wins; JSON only when named. */
    return j && (!x || j < x);
}

static enum MHD_Result send_response(struct MHD_Connection *con, struct acc_http_server *srv,
                                     struct acc_response *rs)
{
    size_t len = 0;
    char *data = acc_buf_detach(&rs->body, &len);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(data ? len : 0, data ? data : (void *)"",
                                        data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    if (rs->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type);
    if (rs->location[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, rs->location);
    if (rs->allow[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
    if (rs->replayed)
        MHD_add_response_header(r, "Idempotent-Replayed", "true");
    if (rs->challenge)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"accord\"");
    if (rs->status == 503 || rs->status == 429)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "2");
    if (rs->close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    unsigned cls = (unsigned)rs->status / 100;
    if (cls < 6)
        atomic_fetch_add(&srv->ctx->status_class[cls], 1);
    enum MHD_Result ok = MHD_queue_response(con, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ok;
}

/* A fault before any handler ran; close: end the connection after it. */
static enum MHD_Result refuse(struct MHD_Connection *con, struct exchange *ex, acc_err code,
                              bool close, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static enum MHD_Result refuse(struct MHD_Connection *con, struct exchange *ex, acc_err code,
                              bool close, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct acc_request rq = {0};
    rq.json = wants_json(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept"));
    struct acc_response rs;
    acc_response_init(&rs);
    acc_reply_error(&rq, &rs, code, msg, NULL);
    rs.close = close;
    ex->answered = true;
    enum MHD_Result ok = send_response(con, ex->srv, &rs);
    acc_response_release(&rs);
    return ok;
}

/* Before the query is parsed: count its parameters and look for %00, which
 * libmicrohttpd would decode into a NUL that cuts the path or a value. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *con)
{
    struct exchange *ex = calloc(1, sizeof *ex);
    if (!ex)
        return NULL;
    ex->srv = cls;
    ex->con = con;
    ex->t0 = acc_mono_us();
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

/* What every request is checked for once its headers are in. */
static enum MHD_Result first_look(struct MHD_Connection *con, struct exchange *ex)
{
    struct acc_http_server *srv = ex->srv;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci && acc_client_over_limit(ci->socket_context))
        return refuse(con, ex, ACC_ERR_TOO_MANY, true,
                      "this client already has %u connections open, the most allowed "
                      "([server] client_connections); reuse one or close some",
                      srv->opt.client_connections);
    if (ex->nul_in_uri)
        return refuse(con, ex, ACC_ERR_BAD_REQUEST, false,
                      "the request target contains %%00 (a NUL byte)");
    if (ex->n_query > srv->opt.max_query)
        return refuse(con, ex, ACC_ERR_HEADERS, false,
                      "the request has %zu query parameters; at most %u are allowed", ex->n_query,
                      srv->opt.max_query);
    struct length_check lc = {0};
    MHD_get_connection_values(con, MHD_HEADER_KIND, check_length, &lc);
    if (lc.conflict)
        return refuse(con, ex, ACC_ERR_BAD_REQUEST, true,
                      "the request has several Content-Length headers that disagree");
    const char *cl =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    ex->declared = cl ? (long long)strtoull(cl, NULL, 10) : -1;
    if (cl && strtoull(cl, NULL, 10) > srv->opt.max_body)
        return refuse(con, ex, ACC_ERR_TOO_LARGE, true, "the request body is larger than %zu bytes",
                      srv->opt.max_body);
    return MHD_YES;
}

/* The job's completion: wake the suspended request (from the worker). */
static void job_done(void *arg)
{
    struct exchange *ex = arg;
    pthread_mutex_lock(&ex->lock);
    ex->ready = true;
    if (ex->suspended) {
        ex->suspended = false;
        MHD_resume_connection(ex->con);
    }
    pthread_mutex_unlock(&ex->lock);
}

static void park_count(struct acc_http_server *srv, int delta)
{
    pthread_mutex_lock(&srv->lock);
    srv->parked = (unsigned)((int)srv->parked + delta);
    if (srv->parked == 0)
        pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->lock);
}

/* Sends the handler's answer, or parks the request until its job is done. */
static enum MHD_Result answer(struct MHD_Connection *con, struct exchange *ex)
{
    struct acc_response *rs = &ex->rs;
    if (rs->wait) {
        pthread_mutex_lock(&ex->lock);
        if (!ex->parked) {
            ex->parked = true;
            park_count(ex->srv, 1);
            ex->waiter = (struct acc_nego_waiter){job_done, ex, NULL};
            ex->ready = !acc_nego_when_done(rs->wait, &ex->waiter);
        }
        if (!ex->ready) {
            ex->suspended = true;
            MHD_suspend_connection(con);
            pthread_mutex_unlock(&ex->lock);
            return MHD_YES;
        }
        pthread_mutex_unlock(&ex->lock);
        acc_http_finish(ex->srv->ctx, &ex->rq, rs);
    }
    ex->answered = true;
    enum MHD_Result ok = send_response(con, ex->srv, rs);
    if (acc_log_enabled(ACC_LOG_DEBUG))
        acc_log_debug("%s %s -> %d", ex->rq.method, ex->rq.path, rs->status);
    return ok;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *con, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    (void)version;
    struct acc_http_server *srv = cls;
    struct exchange *ex = *con_cls;
    if (!ex)
        return MHD_NO; /* out of memory in uri_seen */

    if (!ex->started) {
        ex->started = true;
        return first_look(con, ex);
    }
    if (ex->parked) /* resumed: the job is done */
        return answer(con, ex);
    if (ex->answered) {
        *upload_data_size = 0; /* drain whatever still comes */
        return MHD_YES;
    }
    bool late = acc_mono_us() - ex->t0 > (int64_t)srv->opt.request_timeout * 1000000;
    if (*upload_data_size) {
        /* libmicrohttpd cannot answer in the middle of a body: one that is
         * too large is read to its end and thrown away, then answered; one
         * still arriving at the deadline is cut off. */
        ex->received += *upload_data_size;
        bool last = ex->declared >= 0 && ex->received >= (unsigned long long)ex->declared;
        if (late && !last) {
            acc_log_info("http: %s %s: the body was still arriving after %u s; closed", method, url,
                         srv->opt.request_timeout);
            return MHD_NO;
        }
        if (!ex->too_large && ex->body.len + *upload_data_size > srv->opt.max_body) {
            ex->too_large = true;
            acc_buf_release(&ex->body);
        }
        if (!ex->too_large)
            acc_buf_append(&ex->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (ex->too_large)
        return refuse(con, ex, ACC_ERR_TOO_LARGE, true, "the request body is larger than %zu bytes",
                      srv->opt.max_body);
    if (late)
        return refuse(con, ex, ACC_ERR_REQUEST_TIMEOUT, true,
                      "the request took more than %u s to arrive ([server] request_timeout)",
                      srv->opt.request_timeout);
    if (!acc_buf_ok(&ex->body))
        return refuse(con, ex, ACC_ERR_NOMEM, true, "out of memory reading the request");

    ex->q = calloc(1, sizeof *ex->q);
    if (!ex->q)
        return refuse(con, ex, ACC_ERR_NOMEM, true, "out of memory reading the request");
    MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, collect_query, ex->q);
    ex->rq = (struct acc_request){
        .method = method,
        .path = url,
        .body = ex->body.data ? ex->body.data : "",
        .body_len = ex->body.len,
        .query = ex->q->kv,
        .n_query = ex->q->n,
        .content_type =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        .idempotency_key = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Idempotency-Key"),
        .authorization =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .json = wants_json(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept")),
    };
    if (srv->tls && acc_tls_peer(con, &ex->peer, NULL) == ACC_OK) {
        ex->rq.peer_subject = ex->peer.subject;
        ex->rq.peer_fingerprint = ex->peer.fingerprint;
    }
    acc_response_init(&ex->rs);
    acc_http_route(srv->ctx, &ex->rq, &ex->rs);
    return answer(con, ex);
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)con;
    (void)toe;
    struct acc_http_server *srv = cls;
    struct exchange *ex = *con_cls;
    if (!ex)
        return;
    if (ex->parked)
        park_count(srv, -1);
    if (ex->rq.method) /* the response was made */
        acc_response_release(&ex->rs);
    acc_buf_release(&ex->body);
    pthread_mutex_destroy(&ex->lock);
    free(ex->q);
    free(ex);
    *con_cls = NULL;
}

static void connection_event(void *cls, struct MHD_Connection *con, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
    struct acc_http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        *socket_context = acc_clients_open(srv->clients, ci ? ci->client_addr : NULL);
    } else {
        acc_clients_close(srv->clients, *socket_context);
        *socket_context = NULL;
    }
}

/* MHD's accept policy: after acc_http_quiesce no connection is taken (it is
 * closed at once, before a byte is read). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    const struct acc_http_server *srv = cls;
    return atomic_load(&srv->quiesced) ? MHD_NO : MHD_YES;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    acc_log_warn("http: %s", line);
}

acc_err acc_http_start(struct acc_http_ctx *ctx, const struct acc_http_options *opt,
                       struct acc_http_server **out, struct acc_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%u", opt->port);
    int gai = getaddrinfo(opt->host, port, &hints, &ai);
    if (gai != 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "listen address %s: %s", opt->host,
                             gai_strerror(gai));

    struct acc_http_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        freeaddrinfo(ai);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    srv->ctx = ctx;
    srv->opt = *opt;
    pthread_mutex_init(&srv->lock, NULL);
    acc_cond_init_monotonic(&srv->cond);
    srv->clients = acc_clients_new(opt->client_connections);
    if (!srv->clients) {
        freeaddrinfo(ai);
        acc_http_stop(srv);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* HTTPS: lib/tls serves the certificate (reloadable) and checks client
     * certificates in the handshake. */
    struct MHD_OptionItem tls_opts[4] = {{MHD_OPTION_END, 0, NULL}};
    if (opt->certificate) {
        struct acc_tls_server_cfg tc = {.certificate = opt->certificate,
                                        .key = opt->key,
                                        .client_ca = opt->client_ca,
                                        .client_optional = true};
        acc_err rc = acc_tls_server_new(&tc, &srv->tls, err);
        if (rc) {
            freeaddrinfo(ai);
            acc_http_stop(srv);
            return rc;
        }
        size_t n = acc_tls_mhd_options(srv->tls, tls_opts, 3);
        tls_opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        flags |= acc_tls_mhd_flags(srv->tls);
    }
    /* The logger must be the first option, or MHD logs the others itself. */
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)opt->port, accept_policy, srv, access_handler, srv,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_URI_LOG_CALLBACK, uri_seen, srv, MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, connection_event, srv, MHD_OPTION_THREAD_POOL_SIZE,
        opt->threads, MHD_OPTION_CONNECTION_LIMIT, opt->connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, opt->timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)ACC_HTTP_CONNECTION_MEMORY, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_ARRAY,
        tls_opts, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (srv->daemon && srv->tls && acc_tls_server_bind(srv->tls, srv->daemon, err)) {
        acc_http_stop(srv);
        return err ? err->code : ACC_ERR_TOO_MANY;
    }
    if (!srv->daemon) {
        acc_http_stop(srv);
        return acc_error_set(err, ACC_ERR_IO,
                             "cannot listen on %s:%u (in use, or not an address of this host)",
                             opt->host, opt->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opt->port;
    *out = srv;
    return ACC_OK;
}

acc_err acc_http_reload_tls(struct acc_http_server *srv, struct acc_error *err)
{
    if (!srv->tls)
        return acc_error_set(err, ACC_ERR_INVALID, "the server speaks plain HTTP");
    return acc_tls_server_reload(srv->tls, NULL, err);
}

unsigned acc_http_port(const struct acc_http_server *srv)
{
    return srv->port;
}

/* Not MHD_quiesce_daemon(): on an epoll daemon with a thread pool it races
 * the workers, which take the listen socket out of their epoll sets too, and
 * the loser's epoll_ctl() makes MHD abort the process ("Failed to remove
 * listen FD from epoll set"; it aborted a test once).  The accept policy
 * refuses every connection from now on instead; the listening socket itself
 * is closed by acc_http_stop. */
void acc_http_quiesce(struct acc_http_server *srv)
{
    if (srv)
        atomic_store(&srv->quiesced, true);
}

void acc_http_stop(struct acc_http_server *srv)
{
    if (!srv)
        return;
    if (srv->daemon) {
        /* Parked requests were resumed by their jobs' ends (the service
         * shut down first): give them a moment to be answered. */
        struct timespec ts = acc_mono_deadline(1000000);
        pthread_mutex_lock(&srv->lock);
        while (srv->parked > 0 && pthread_cond_timedwait(&srv->cond, &srv->lock, &ts) == 0)
            ;
        pthread_mutex_unlock(&srv->lock);
        MHD_stop_daemon(srv->daemon);
    }
    acc_tls_server_free(srv->tls);
    acc_clients_free(srv->clients);
    pthread_mutex_destroy(&srv->lock);
    pthread_cond_destroy(&srv->cond);
    free(srv);
}
