/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_daemon.c - libmicrohttpd's daemon: a small pool of event threads
 * serves every connection with epoll, so an idle or slow connection costs a
 * socket, never a thread; HTTPS through lib/tls; one daemon per address
 * (a second one on it fails to start); a quiet shutdown. */
#include "httpd_int.h"

#include <gnutls/gnutls.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/sync.h"
#include "../common/timefmt.h"

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

/* Once serving, most of what libmicrohttpd says is about one connection
 * (closed by its client, a handshake cut short): hostile clients would
 * write the log for us, a warn line each.  So at most MHD_WARNS_PER_WINDOW
 * lines per 10 s are warnings (what matters, such as accept failing for
 * want of file descriptors, repeats and gets through), the rest debug,
 * counted in the bounds' summary line (httpd_conn.c). */
#define MHD_WARNS_PER_WINDOW 5

static bool warn_allowed(struct acc_httpd *d)
{
    if (!atomic_load(&d->serving))
        return true;
    uint64_t window = (uint64_t)(acc_mono_us() / 10000000);
    if (atomic_exchange(&d->warn_window, window) != window)
        atomic_store(&d->warns, 0);
    if (atomic_fetch_add(&d->warns, 1) < MHD_WARNS_PER_WINDOW)
        return true;
    atomic_fetch_add(&d->quieted, 1);
    return false;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct acc_httpd *d = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    acc_log(d->opt.quiet || !warn_allowed(d) ? ACC_LOG_DEBUG : ACC_LOG_WARN, "http: %s", line);
}

/* Room for connection_limit sockets and the daemon's own files: the soft
 * limit on open files is raised towards the hard one (systemd starts
 * services with a soft limit of 1024, below accordd's default of 4096
 * connections); short of it, accept() fails with EMFILE before the limit
 * is reached, and the operator is told. */
static void open_files_for(unsigned connections)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)connections + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rlim_t before = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        rl.rlim_cur = before;
    if (rl.rlim_cur < want)
        acc_log_warn("http: at most %llu open files (hard limit %llu): fewer than the %u "
                     "connections allowed; raise LimitNOFILE or lower the connection limit",
                     (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, connections);
    else
        acc_log_debug("http: the limit on open files raised from %llu to %llu",
                      (unsigned long long)before, (unsigned long long)rl.rlim_cur);
}

/* Why the daemon could not listen on ai: libmicrohttpd does not say, so
 * the bind is tried again here.  Without SO_REUSEPORT (which would let a
 * second daemon share the port, the kernel splitting the clients between
 * the two) an address in use is refused, and the operator reads why. */
static const char *listen_problem(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return strerror(errno);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    int rc = bind(fd, ai->ai_addr, ai->ai_addrlen);
    int e = errno;
    close(fd);
    if (rc == 0)
        return "libmicrohttpd refused it (see the warnings above)";
    if (e == EADDRINUSE)
        return "the address is in use (another daemon listens there)";
    return strerror(e);
}

/* libmicrohttpd's own limit: connection_limit is ours (the accept policy,
 * httpd_conn.c), which closes an idle connection to let a new one in; the
 * room above it holds the newcomers while those closes complete. */
static unsigned mhd_limit(unsigned limit)
{
    return limit ? limit + limit / 16 + 16 : 0;
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
        flags, (uint16_t)o->port, httpd_accept_policy, d, httpd_access, d,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, d, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_URI_LOG_CALLBACK, httpd_uri_seen, d, MHD_OPTION_NOTIFY_COMPLETED,
        httpd_completed, d, MHD_OPTION_NOTIFY_CONNECTION, httpd_connection_event, d,
        MHD_OPTION_THREAD_POOL_SIZE, o->threads, MHD_OPTION_CONNECTION_LIMIT,
        mhd_limit(o->connection_limit), MHD_OPTION_CONNECTION_TIMEOUT, o->timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)ACC_HTTPD_CONNECTION_MEMORY, MHD_OPTION_ARRAY,
        tls_opts, MHD_OPTION_END);
    if (!d->daemon)
        return acc_error_set(err, ACC_ERR_IO, "cannot listen on %s:%u: %s", o->host, o->port,
                             listen_problem(ai));
    if (d->tls) {
        acc_err rc = acc_tls_server_bind(d->tls, d->daemon, err);
        if (rc)
            return rc;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->daemon, MHD_DAEMON_INFO_BIND_PORT);
    d->port = info ? info->port : o->port;
    atomic_store(&d->serving, true);
    return ACC_OK;
}

acc_err acc_httpd_start(const struct acc_httpd_options *opt, const struct acc_httpd_ops *ops,
                        void *app, struct acc_httpd **out, struct acc_error *err)
{
    *out = NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    unsigned classes = 1; /* "other" */
    while (opt->route_classes && opt->route_classes[classes - 1]) {
        if (classes++ == HTTPD_CLASSES)
            return acc_error_set(err, ACC_ERR_INVALID, "more than %d route classes",
                                 ACC_HTTPD_MAX_CLASSES);
    }
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
    d->n_classes = classes;
    d->ops = ops;
    d->app = app;
    pthread_mutex_init(&d->lock, NULL);
    acc_cond_init_monotonic(&d->cond);
    pthread_mutex_init(&d->wait_lock, NULL);
    acc_cond_init_monotonic(&d->wait_cond);
    if ((opt->client_connections && !(d->addresses = httpd_tally_new())) ||
        (ops->auth && !(d->principals = httpd_tally_new()))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (opt->tls && (rc = acc_tls_server_new(opt->tls, &d->tls, err)) != ACC_OK)
        goto out;
    if ((rc = httpd_conns_start(d, err)) != ACC_OK)
        goto out;
    open_files_for(mhd_limit(opt->connection_limit));
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
    httpd_conns_stop(d); /* after the connections are gone: they need its lock */
    acc_tls_server_free(d->tls);
    httpd_tally_free(d->addresses);
    httpd_tally_free(d->principals);
    httpd_tally_free(d->pending);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->wait_lock);
    pthread_cond_destroy(&d->wait_cond);
    free(d);
}
