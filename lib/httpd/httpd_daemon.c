/* httpd_daemon.c - libmicrohttpd's daemon: a small pool of event threads
 * serves every connection with epoll, so an idle or slow connection costs a
 * socket, never a thread; HTTPS through lib/tls; the connections counted
 * per client address; a quiet shutdown. */
#include "httpd_int.h"

#include <gnutls/gnutls.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "../common/log.h"
#include "../common/sync.h"
#include "../common/timefmt.h"

/* The bytes that identify a client: its IPv4 or IPv6 address. */
static size_t address_key(const struct sockaddr *sa, unsigned char out[16])
{
    if (sa && sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

static struct httpd_conn *conn_open(struct acc_httpd *d, struct MHD_Connection *con)
{
    struct httpd_conn *c = calloc(1, sizeof *c);
    if (!c || !d->addresses)
        return c; /* NULL: each request is refused */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    unsigned char key[16];
    size_t n = address_key(ci ? ci->client_addr : NULL, key);
    unsigned open = 0;
    /* Without memory the connection goes uncounted rather than refused. */
    if (n && httpd_tally_open(d->addresses, key, n, d->opt.client_connections, &c->address,
                              &open) == ACC_ERR_TOO_MANY)
        c->over = true;
    return c;
}

static void conn_close(struct acc_httpd *d, struct httpd_conn *c)
{
    if (!c)
        return;
    httpd_tally_close(d->addresses, c->address);
    httpd_tally_close(d->principals, c->principal);
    free(c->der);
    free(c);
}

static void connection_event(void *cls, struct MHD_Connection *con, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
    struct acc_httpd *d = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = conn_open(d, con);
    } else {
        conn_close(d, *socket_context);
        *socket_context = NULL;
    }
}

acc_err httpd_peer_identity(struct MHD_Connection *con, struct httpd_conn *c,
                            struct acc_tls_peer *out, struct acc_error *err)
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

void httpd_park_count(struct acc_httpd *d, int delta)
{
    pthread_mutex_lock(&d->lock);
    d->parked = (unsigned)((int)d->parked + delta);
    if (d->parked == 0)
        pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

/* MHD's accept policy: after acc_httpd_quiesce no connection is taken (it
 * is closed at once, before a byte is read). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    const struct acc_httpd *d = cls;
    return atomic_load(&d->quiesced) ? MHD_NO : MHD_YES;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    const struct acc_httpd *d = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    acc_log(d->opt.quiet ? ACC_LOG_DEBUG : ACC_LOG_WARN, "http: %s", line);
}

/* The daemon on the resolved address ai, with d's options. */
static acc_err start_daemon(struct acc_httpd *d, const struct addrinfo *ai, struct acc_error *err)
{
    const struct acc_httpd_options *o = &d->opt;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (d->ops->finish)
        flags |= MHD_ALLOW_SUSPEND_RESUME;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* HTTPS: lib/tls serves the certificate (reloadable) and checks client
     * certificates in the handshake. */
    struct MHD_OptionItem tls_opts[8] = {{MHD_OPTION_END, 0, NULL}};
    if (d->tls) {
        size_t n = acc_tls_mhd_options(d->tls, tls_opts, 7);
        if (n == 0)
            return acc_error_set(err, ACC_ERR_INTERNAL, "TLS options do not fit");
        tls_opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        flags |= acc_tls_mhd_flags(d->tls);
    }
    /* The logger must be the first option, or MHD logs the others itself. */
    d->daemon = MHD_start_daemon(
        flags, (uint16_t)o->port, accept_policy, d, httpd_access, d, MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, d, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_URI_LOG_CALLBACK, httpd_uri_seen,
        d, MHD_OPTION_NOTIFY_COMPLETED, httpd_completed, d, MHD_OPTION_NOTIFY_CONNECTION,
        connection_event, d, MHD_OPTION_THREAD_POOL_SIZE, o->threads, MHD_OPTION_CONNECTION_LIMIT,
        o->connection_limit, MHD_OPTION_CONNECTION_TIMEOUT, o->timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)ACC_HTTPD_CONNECTION_MEMORY,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!d->daemon)
        return acc_error_set(err, ACC_ERR_IO,
                             "cannot listen on %s:%u (in use, or not an address of this host)",
                             o->host, o->port);
    if (d->tls) {
        acc_err rc = acc_tls_server_bind(d->tls, d->daemon, err);
        if (rc)
            return rc;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->daemon, MHD_DAEMON_INFO_BIND_PORT);
    d->port = info ? info->port : o->port;
    return ACC_OK;
}

acc_err acc_httpd_start(const struct acc_httpd_options *opt, const struct acc_httpd_ops *ops,
                        void *app, struct acc_httpd **out, struct acc_error *err)
{
    *out = NULL;
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
    acc_err rc = ACC_OK;
    struct acc_httpd *d = calloc(1, sizeof *d);
    if (!d) {
        freeaddrinfo(ai);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    d->opt = *opt;
    d->opt.tls = NULL; /* the caller's: not kept */
    d->ops = ops;
    d->app = app;
    pthread_mutex_init(&d->lock, NULL);
    acc_cond_init_monotonic(&d->cond);
    if ((opt->client_connections && !(d->addresses = httpd_tally_new())) ||
        (ops->auth && !(d->principals = httpd_tally_new()))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (opt->tls && (rc = acc_tls_server_new(opt->tls, &d->tls, err)) != ACC_OK)
        goto out;
    rc = start_daemon(d, ai, err);
out:
    freeaddrinfo(ai);
    if (rc) {
        acc_httpd_stop(d);
        return rc;
    }
    *out = d;
    return ACC_OK;
}

unsigned acc_httpd_port(const struct acc_httpd *d)
{
    return d->port;
}

acc_err acc_httpd_reload_tls(struct acc_httpd *d, const struct acc_tls_server_cfg *cfg,
                             struct acc_error *err)
{
    if (!d->tls)
        return acc_error_set(err, ACC_ERR_INVALID, "the server speaks plain HTTP");
    return acc_tls_server_reload(d->tls, cfg, err);
}

/* Not MHD_quiesce_daemon(): on an epoll daemon with a thread pool it races
 * the workers, which take the listen socket out of their epoll sets too, and
 * the loser's epoll_ctl() makes MHD abort the process ("Failed to remove
 * listen FD from epoll set"; it aborted a test once).  The accept policy
 * refuses every connection from now on instead; the listening socket itself
 * is closed by acc_httpd_stop. */
void acc_httpd_quiesce(struct acc_httpd *d)
{
    if (d)
        atomic_store(&d->quiesced, true);
}

void acc_httpd_stop(struct acc_httpd *d)
{
    if (!d)
        return;
    if (d->daemon) {
        /* Parked requests were resumed by their jobs' ends (the daemon ended
         * them first): give them a moment to be answered. */
        struct timespec ts = acc_mono_deadline(1000000);
        pthread_mutex_lock(&d->lock);
        while (d->parked > 0 && pthread_cond_timedwait(&d->cond, &d->lock, &ts) == 0)
            ;
        pthread_mutex_unlock(&d->lock);
        MHD_stop_daemon(d->daemon);
    }
    acc_tls_server_free(d->tls);
    httpd_tally_free(d->addresses);
    httpd_tally_free(d->principals);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    free(d);
}
