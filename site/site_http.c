/* site_http.c - accord-site's listener: libmicrohttpd over TLS (lib/tls),
 * a pool of epoll threads, a client certificate required of every peer.
 *
 * The handshake itself refuses a certificate that does not verify against
 * client_ca or whose subject or fingerprint no [peer] names (the admission
 * callback below), so every request read here comes from an admitted peer.
 * Per peer, the open connections are counted (counted once per connection,
 * on its first request; over `connections` the request gets TooMany and the
 * connection is closed).  A body is at most ACC_PROTO_BODY_MAX bytes: a
 * Content-Length over SITE_DRAIN_MAX is refused before a byte is read (and
 * the connection closed); a smaller body over the limit, declared or grown,
 * is read, discarded and refused once it has all come, so that the client
 * reads the answer.  Requests are then handed whole to
 * site_route (site_routes.c), which never sees libmicrohttpd. */
#include "site_internal.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "../lib/common/log.h"
#include "../lib/common/strutil.h"
#include "../lib/proto/proto.h"
#include "../lib/tls/tls_server.h"

/* Bodies up to this size are read (and dropped) before a TooLarge answer. */
#define SITE_DRAIN_MAX (1024 * 1024)

struct site_http {
    struct acc_site *site;
    struct acc_tls_server *tls;
    struct MHD_Daemon *daemon;
    unsigned port;
};

/* Per connection (MHD's socket context).  The identity read from the
 * client's certificate is kept with that certificate's DER bytes: a later
 * request on the connection whose certificate is byte for byte the same
 * (always, unless a renegotiation changed it) skips parsing it again.
 * Which [peer] that identity is, is looked up on every request (SIGHUP may
 * have removed it). */
struct conn {
    char peer[64]; /* the peer counted against its connections; "" none yet */
    unsigned char *der;
    size_t der_len;
    struct acc_tls_peer id;
};

/* Per request, from its first callback to its completion. */
struct exchange {
    bool started;
    bool too_large;
    bool bad_type;
    struct acc_buf body;
    struct site_peer peer;
    bool have_peer;
    struct acc_error refused; /* set when the request is refused before routing */
    bool is_refused;
};

/* The admission callback of lib/tls: during the handshake, a certificate
 * that verified against client_ca is admitted when a [peer] names it. */
static bool admit(void *arg, const struct acc_tls_peer *peer)
{
    struct acc_site *s = arg;
    bool ok = site_peers_find(s->peers, peer->subject, peer->fingerprint, NULL);
    if (!ok)
        acc_log_warn("site %s: refused a client certificate no [peer] names: %s (%s)", s->cfg.name,
                     peer->subject, peer->fingerprint);
    return ok;
}

static void connection_event(void *cls, struct MHD_Connection *con, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
    (void)con;
    struct site_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = calloc(1, sizeof(struct conn)); /* NULL: counted as no peer */
        return;
    }
    struct conn *c = *socket_context;
    if (c && c->peer[0])
        site_peers_disconnect(h->site->peers, c->peer);
    if (c)
        free(c->der);
    free(c);
    *socket_context = NULL;
}

static void completed(void *cls, struct MHD_Connection *con, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con;
    (void)toe;
    struct exchange *x = *req_cls;
    if (x) {
        acc_buf_release(&x->body);
        free(x);
    }
    *req_cls = NULL;
}

static enum MHD_Result reply(struct MHD_Connection *con, const struct site_response *rs, bool close)
{
    size_t len = rs->body.len;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, len ? rs->body.data : (void *)"",
                                                             MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (len)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/xml");
    if (close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(con, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result refuse(struct site_http *h, struct MHD_Connection *con,
                              const struct acc_error *err, bool close)
{
    struct site_response rs = {.body = ACC_BUF_INIT};
    site_fault(h->site, err, &rs);
    enum MHD_Result ret = reply(con, &rs, close);
    acc_buf_release(&rs.body);
    return ret;
}

/* The identity of the connection's client certificate: the one read before
 * when the certificate is the same, else read now (and kept). */
static acc_err peer_identity(struct MHD_Connection *con, struct conn *c, struct acc_tls_peer *out,
                             struct acc_error *err)
{
    const union MHD_ConnectionInfo *ti =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned n = 0;
    const gnutls_datum_t *raw =
        ti && ti->tls_session ? gnutls_certificate_get_peers(ti->tls_session, &n) : NULL;
    if (c && raw && n > 0 && c->der && c->der_len == raw[0].size &&
        memcmp(c->der, raw[0].data, c->der_len) == 0) {
        *out = c->id;
        return ACC_OK;
    }
    acc_err rc = acc_tls_peer(con, out, err);
    if (rc || !c || !raw || n == 0)
        return rc;
    unsigned char *der = malloc(raw[0].size ? raw[0].size : 1);
    if (der) { /* without memory it is read again next time: no harm */
        memcpy(der, raw[0].data, raw[0].size);
        free(c->der);
        c->der = der;
        c->der_len = raw[0].size;
        c->id = *out;
    }
    return ACC_OK;
}

/* The peer of the connection, counted against its connections on the
 * connection's first request. */
static acc_err identify(struct site_http *h, struct MHD_Connection *con, struct exchange *x,
                        struct acc_error *err)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct conn *c = ci ? ci->socket_context : NULL;
    struct acc_tls_peer tp;
    acc_err rc = peer_identity(con, c, &tp, err);
    if (rc)
        return rc;
    if (!site_peers_find(h->site->peers, tp.subject, tp.fingerprint, &x->peer))
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "site %s does not admit %s", h->site->cfg.name,
                             tp.subject);
    x->have_peer = true;
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (c->peer[0])
        return ACC_OK; /* counted already */
    rc = site_peers_connect(h->site->peers, x->peer.name, err);
    if (!rc)
        acc_strlcpy(c->peer, x->peer.name, sizeof c->peer);
    return rc;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *con, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_size, void **req_cls)
{
    (void)version;
    struct site_http *h = cls;
    struct exchange *x = *req_cls;
    if (!x) {
        x = calloc(1, sizeof *x);
        if (!x)
            return MHD_NO;
        acc_buf_init(&x->body);
        *req_cls = x;
        acc_err rc = identify(h, con, x, &x->refused);
        if (rc) {
            x->is_refused = true;
            return refuse(h, con, &x->refused, true);
        }
        const char *cl =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        int64_t declared = 0;
        if (cl && acc_parse_i64(cl, 0, INT64_MAX, &declared, NULL) == ACC_OK &&
            declared > SITE_DRAIN_MAX) {
            acc_error_set(&x->refused, ACC_ERR_TOO_LARGE,
                          "a body of %lld bytes is over the protocol's limit of %d",
                          (long long)declared, ACC_PROTO_BODY_MAX);
            x->is_refused = true;
            return refuse(h, con, &x->refused, true);
        }
        /* A body a little over the limit is read and dropped before the
         * answer: answered early, a client still sending (TLS) may lose the
         * answer to the connection's reset. */
        x->too_large = declared > ACC_PROTO_BODY_MAX;
        const char *type =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        x->bad_type = type && strncasecmp(type, "application/xml", 15) != 0 &&
                      strncasecmp(type, "text/xml", 8) != 0;
        return MHD_YES;
    }
    if (x->is_refused) {
        *upload_size = 0; /* the answer is queued: the rest is dropped */
        return MHD_YES;
    }
    if (*upload_size) {
        if (!x->too_large && x->body.len + *upload_size > ACC_PROTO_BODY_MAX) {
            x->too_large = true;
            acc_buf_release(&x->body);
        }
        if (!x->too_large)
            acc_buf_append(&x->body, upload_data, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    struct acc_error err;
    if (x->too_large || !acc_buf_ok(&x->body)) {
        if (x->too_large)
            acc_error_set(&err, ACC_ERR_TOO_LARGE,
                          "the body is over the protocol's limit of %d "
                          "bytes",
                          ACC_PROTO_BODY_MAX);
        else
            acc_error_set(&err, ACC_ERR_NOMEM, "out of memory");
        return refuse(h, con, &err, true);
    }
    if (x->bad_type && x->body.len) {
        acc_error_set(&err, ACC_ERR_UNSUPPORTED_MEDIA, "bodies are application/xml");
        return refuse(h, con, &err, false);
    }
    struct site_request rq = {
        .method = method,
        .path = url,
        .body = x->body.len ? x->body.data : "",
        .body_len = x->body.len,
        .peer = &x->peer,
    };
    struct site_response rs = {.body = ACC_BUF_INIT};
    site_route(h->site, &rq, &rs);
    enum MHD_Result ret = reply(con, &rs, false);
    acc_buf_release(&rs.body);
    return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    acc_log_debug("libmicrohttpd: %s", msg);
}

acc_err site_http_start(struct acc_site *s, struct site_http **out, struct acc_error *err)
{
    *out = NULL;
    struct site_http *h = calloc(1, sizeof *h);
    struct addrinfo *ai = NULL;
    if (!h)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    h->site = s;
    acc_err rc = ACC_OK;
    struct acc_tls_server_cfg tc = {
        .certificate = s->cfg.certificate,
        .key = s->cfg.key,
        .client_ca = s->cfg.client_ca,
        .admit = admit,
        .admit_arg = s,
    };
    if ((rc = acc_tls_server_new(&tc, &h->tls, err)) != ACC_OK)
        goto fail;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%u", s->cfg.listen_port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    if (getaddrinfo(s->cfg.listen_host, portstr, &hints, &ai) != 0 || !ai) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "listen: cannot resolve '%s'", s->cfg.listen_host);
        goto fail;
    }
    struct MHD_OptionItem opts[24];
    size_t n = acc_tls_mhd_options(h->tls, opts, 24 - 10);
    if (n == 0) {
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "TLS options do not fit");
        goto fail;
    }
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, s->cfg.threads, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, s->cfg.max_connections, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.timeout, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, 128 * 1024, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, ai->ai_addr};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL};
    opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                     acc_tls_mhd_flags(h->tls);
    h->daemon = MHD_start_daemon(
        flags, (uint16_t)s->cfg.listen_port, NULL, NULL, access_handler, h,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, h,
        MHD_OPTION_NOTIFY_CONNECTION, connection_event, h, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!h->daemon) {
        rc = acc_error_set(err, ACC_ERR_IO,
                           "cannot listen on %s:%u (in use, or not an address of this host)",
                           s->cfg.listen_host, s->cfg.listen_port);
        goto fail;
    }
    if ((rc = acc_tls_server_bind(h->tls, h->daemon, err)) != ACC_OK)
        goto fail;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : s->cfg.listen_port;
    freeaddrinfo(ai);
    *out = h;
    return ACC_OK;
fail:
    if (ai)
        freeaddrinfo(ai);
    site_http_stop(h);
    return rc;
}

unsigned site_http_port(const struct site_http *h)
{
    return h->port;
}

acc_err site_http_reload(struct site_http *h, const char *certificate, const char *key,
                         const char *client_ca, struct acc_error *err)
{
    struct acc_tls_server_cfg tc = {
        .certificate = certificate,
        .key = key,
        .client_ca = client_ca,
        .admit = admit,
        .admit_arg = h->site,
    };
    return acc_tls_server_reload(h->tls, &tc, err);
}

void site_http_stop(struct site_http *h)
{
    if (!h)
        return;
    if (h->daemon)
        MHD_stop_daemon(h->daemon);
    acc_tls_server_free(h->tls);
    free(h);
}
