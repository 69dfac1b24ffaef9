/* server.c - libmicrohttpd glue: a thread per connection (negotiations block
 * on adapters), bodies collected under a size cap, then one dispatch. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "../common/log.h"
#include "http.h"

struct acc_http_server {
    struct MHD_Daemon *daemon;
    struct acc_http_ctx *ctx;
    size_t max_body;
    unsigned port;
};

/* Per request, from its first callback to its completion. */
struct exchange {
    struct acc_buf body;
    bool too_large;
    bool answered;
};

#define MAX_QUERY 32

struct query {
    struct acc_kv kv[MAX_QUERY];
    size_t n;
    bool overflow;
};

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    struct query *q = cls;
    if (q->n == MAX_QUERY) {
        q->overflow = true;
        return MHD_NO;
    }
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
    MHD_add_response_header(r, "Cache-Control", "no-store");
    unsigned cls = (unsigned)rs->status / 100;
    if (cls < 6)
        atomic_fetch_add(&srv->ctx->status_class[cls], 1);
    enum MHD_Result ok = MHD_queue_response(con, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_error(struct MHD_Connection *con, struct acc_http_server *srv,
                                   acc_err code, const char *msg)
{
    struct acc_request rq = {0};
    rq.json = wants_json(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept"));
    struct acc_response rs;
    acc_response_init(&rs);
    acc_reply_error(&rq, &rs, code, msg, NULL);
    enum MHD_Result ok = send_response(con, srv, &rs);
    acc_response_release(&rs);
    return ok;
}

static enum MHD_Result too_large(struct MHD_Connection *con, struct acc_http_server *srv)
{
    char msg[128];
    snprintf(msg, sizeof msg, "the request body is larger than %zu bytes", srv->max_body);
    return reply_error(con, srv, ACC_ERR_TOO_LARGE, msg);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *con, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    (void)version;
    struct acc_http_server *srv = cls;
    struct exchange *ex = *con_cls;

    if (!ex) {
        ex = calloc(1, sizeof *ex);
        if (!ex)
            return MHD_NO;
        acc_buf_init(&ex->body);
        *con_cls = ex;
        /* Refuse a declared oversized body before reading any of it. */
        const char *cl =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > srv->max_body) {
            ex->answered = true;
            return too_large(con, srv);
        }
        return MHD_YES;
    }
    if (ex->answered) {
        *upload_data_size = 0; /* drain whatever still comes */
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (ex->body.len + *upload_data_size > srv->max_body) {
            ex->too_large = true;
            ex->answered = true;
            *upload_data_size = 0;
            return too_large(con, srv);
        }
        acc_buf_append(&ex->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!acc_buf_ok(&ex->body)) {
        ex->answered = true;
        return reply_error(con, srv, ACC_ERR_NOMEM, "out of memory reading the request");
    }

    struct query q = {0};
    MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, collect_query, &q);
    if (q.overflow) {
        ex->answered = true;
        return reply_error(con, srv, ACC_ERR_INVALID, "too many query parameters");
    }
    struct acc_request rq = {
        .method = method,
        .path = url,
        .body = ex->body.data ? ex->body.data : "",
        .body_len = ex->body.len,
        .query = q.kv,
        .n_query = q.n,
        .content_type =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        .idempotency_key = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Idempotency-Key"),
        .authorization =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .json = wants_json(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept")),
    };
    struct acc_response rs;
    acc_response_init(&rs);
    acc_http_dispatch(srv->ctx, &rq, &rs);
    ex->answered = true;
    enum MHD_Result ok = send_response(con, srv, &rs);
    acc_response_release(&rs);
    if (acc_log_enabled(ACC_LOG_DEBUG))
        acc_log_debug("%s %s -> %d", method, url, rs.status);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con;
    (void)toe;
    struct exchange *ex = *con_cls;
    if (ex) {
        acc_buf_release(&ex->body);
        free(ex);
        *con_cls = NULL;
    }
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
    srv->max_body = opt->max_body;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* The logger must be the first option, or MHD logs the others itself. */
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)opt->port, NULL, NULL, access_handler, srv, MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, completed,
        srv, MHD_OPTION_CONNECTION_LIMIT, opt->connection_limit ? opt->connection_limit : 512,
        MHD_OPTION_CONNECTION_TIMEOUT, opt->timeout ? opt->timeout : 60,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!srv->daemon) {
        free(srv);
        return acc_error_set(err, ACC_ERR_IO,
                             "cannot listen on %s:%u (in use, or not an address of this host)",
                             opt->host, opt->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opt->port;
    *out = srv;
    return ACC_OK;
}

unsigned acc_http_port(const struct acc_http_server *srv)
{
    return srv->port;
}

void acc_http_stop(struct acc_http_server *srv)
{
    if (!srv)
        return;
    MHD_stop_daemon(srv->daemon);
    free(srv);
}
