/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_conn.c - connections from their accept to their close: counted per
 * client address, and held to a deadline while they wait for a request head.
 *
 * libmicrohttpd's own timeout is an idle one: a client that sends one byte
 * every few seconds, or a TLS handshake that stops after a partial
 * ClientHello, keeps a connection for ever, and enough of them fill every
 * slot.  So a new connection is counted against its address until its first
 * request head is whole (pending_connections: one beyond is refused by the
 * accept policy, before libmicrohttpd reads a byte or starts a handshake),
 * and a thread of ours shuts down the socket of any connection whose head
 * is not whole by its deadline, however active it is.  libmicrohttpd then
 * reads the end of the stream and closes the connection as it would any
 * other.  The socket is shut down under wait_lock, and a connection leaves
 * its list under the same lock before libmicrohttpd closes its socket (the
 * CLOSED notice comes first), so the reaper never touches a closed, perhaps
 * reused, descriptor.
 *
 * Two more deadlines and one more bound live here.  A connection whose
 * head is whole and whose body is still to come is held to
 * request_timeout the same way (a body sent a byte every few seconds is
 * never idle).  And at connection_limit the connection idle the longest
 * (kept alive after its answer, waiting for its next request: the head of
 * the kept list) is shut down to make room for the new one, as a web
 * server drops its idle kept-alive connections when it runs short, so that
 * clients that merely keep connections open cannot lock a new one out;
 * only when none is idle is the new one refused.  libmicrohttpd's own
 * limit is set above connection_limit (httpd_daemon.c) so that the
 * newcomer is accepted while the one shut down for it closes. */
#include "httpd_int.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../common/log.h"
#include "../common/sync.h"
#include "../common/timefmt.h"

/* How often the reaper says what the bounds did, when they did anything. */
#define SUMMARY_US (10 * 1000000LL)

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

/* ------------------------------------------------------------ wait lists */

static void wait_unlink(struct httpd_conn *c)
{
    struct httpd_wait *l = c->list;
    if (!l)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
    c->list = NULL;
    l->n--;
}

/* Under wait_lock.  A list of no delay (no deadline) takes nobody. */
static void wait_append(struct acc_httpd *d, struct httpd_wait *l, struct httpd_conn *c)
{
    if (l->delay <= 0 || c->fd < 0)
        return;
    bool first = !d->fresh.head && !d->kept.head && !d->body.head;
    c->deadline = acc_mono_us() + l->delay;
    c->prev = l->tail;
    c->next = NULL;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    c->list = l;
    l->n++;
    if (first) /* the reaper sleeps for a second at most otherwise: wake it */
        pthread_cond_signal(&d->wait_cond);
}

/* --------------------------------------------------- libmicrohttpd's calls */

/* At connection_limit: the connection idle the longest is shut down to
 * make room; false when none is idle. */
static bool make_room(struct acc_httpd *d)
{
    pthread_mutex_lock(&d->wait_lock);
    struct httpd_conn *c = d->kept.head;
    if (c) {
        wait_unlink(c);
        atomic_fetch_add(&d->evicted, 1);
        shutdown(c->fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&d->wait_lock);
    return c != NULL;
}

enum MHD_Result httpd_accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)len;
    struct acc_httpd *d = cls;
    if (atomic_load(&d->quiesced))
        return MHD_NO;
    unsigned char key[16];
    size_t n = address_key(addr, key);
    if (d->pending && n && httpd_tally_count(d->pending, key, n) >= d->opt.pending_connections) {
        atomic_fetch_add(&d->refused, 1);
        return MHD_NO;
    }
    if (d->opt.connection_limit && atomic_load(&d->open) >= d->opt.connection_limit &&
        !make_room(d)) {
        atomic_fetch_add(&d->full, 1);
        return MHD_NO;
    }
    return MHD_YES;
}

static struct httpd_conn *conn_open(struct acc_httpd *d, struct MHD_Connection *con)
{
    struct httpd_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL; /* each request is refused */
    atomic_fetch_add(&d->open, 1);
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
    c->fd = fi ? fi->connect_fd : -1;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    unsigned char key[16];
    size_t n = address_key(ci ? ci->client_addr : NULL, key);
    unsigned open = 0;
    /* Without memory a connection goes uncounted rather than refused. */
    if (n && d->addresses &&
        httpd_tally_open(d->addresses, key, n, d->opt.client_connections, &c->address, &open) ==
            ACC_ERR_TOO_MANY)
        c->over = true;
    /* The accept policy looked, but several threads accept at once. */
    if (n && d->pending &&
        httpd_tally_open(d->pending, key, n, d->opt.pending_connections, &c->pending, &open) ==
            ACC_ERR_TOO_MANY) {
        atomic_fetch_add(&d->refused, 1);
        if (c->fd >= 0)
            shutdown(c->fd, SHUT_RDWR);
        return c;
    }
    pthread_mutex_lock(&d->wait_lock);
    wait_append(d, &d->fresh, c);
    pthread_mutex_unlock(&d->wait_lock);
    return c;
}

static void conn_close(struct acc_httpd *d, struct httpd_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->wait_lock);
    wait_unlink(c);
    c->fd = -1;
    pthread_mutex_unlock(&d->wait_lock);
    httpd_tally_close(d->pending, c->pending);
    httpd_tally_close(d->addresses, c->address);
    httpd_tally_close(d->principals, c->principal);
    atomic_fetch_sub(&d->open, 1);
    free(c->der);
    free(c);
}

void httpd_connection_event(void *cls, struct MHD_Connection *con, void **socket_context,
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

struct httpd_conn *httpd_conn_of(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void httpd_conn_headed(struct acc_httpd *d, struct httpd_conn *c, bool body)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->wait_lock);
    wait_unlink(c);
    if (body && c->fd >= 0)
        wait_append(d, &d->body, c);
    pthread_mutex_unlock(&d->wait_lock);
    httpd_tally_close(d->pending, c->pending);
    c->pending = NULL;
}

void httpd_conn_whole(struct acc_httpd *d, struct httpd_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->wait_lock);
    if (c->list == &d->body) /* not if its deadline has passed: then it is gone */
        wait_unlink(c);
    pthread_mutex_unlock(&d->wait_lock);
}

void httpd_conn_idle(struct acc_httpd *d, struct httpd_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->wait_lock);
    if (!c->list && c->fd >= 0)
        wait_append(d, &d->kept, c);
    pthread_mutex_unlock(&d->wait_lock);
}

/* ------------------------------------------------------------------ reaper */

/* Under wait_lock: shuts down every connection of l past its deadline,
 * each counted in *count. */
static void expire(struct httpd_wait *l, int64_t now, atomic_uint_least64_t *count)
{
    while (l->head && l->head->deadline <= now) {
        struct httpd_conn *c = l->head;
        wait_unlink(c);
        /* Counted first: whoever sees the connection end sees it counted. */
        atomic_fetch_add(count, 1);
        shutdown(c->fd, SHUT_RDWR);
    }
}

/* What the bounds did since the last summary, said at most every 10 s
 * (one line for thousands of hostile connections, not one each). */
static void summarize(struct acc_httpd *d, uint64_t seen[6])
{
    uint64_t now[6] = {atomic_load(&d->refused), atomic_load(&d->expired), atomic_load(&d->quieted),
                       atomic_load(&d->cut),     atomic_load(&d->evicted), atomic_load(&d->full)};
    if (memcmp(now, seen, sizeof now) == 0)
        return;
    unsigned long long n[6];
    for (int i = 0; i < 6; i++)
        n[i] = (unsigned long long)(now[i] - seen[i]);
    acc_log_info("http: %llu connection(s) refused at accept (over %u per address still in "
                 "their handshake or headers), %llu closed without a whole request head by "
                 "their deadline (%u s; kept alive: %u s), %llu closed with a body still "
                 "arriving (%u s), %llu idle one(s) closed to make room and %llu refused at "
                 "the connection limit (%u), %llu message(s) of libmicrohttpd logged at debug "
                 "level only, in the last %lld s",
                 n[0], d->opt.pending_connections, n[1], d->opt.header_timeout, d->opt.timeout,
                 n[3], d->opt.request_timeout, n[4], n[5], d->opt.connection_limit, n[2],
                 SUMMARY_US / 1000000);
    memcpy(seen, now, sizeof now);
}

static void *reaper_main(void *arg)
{
    struct acc_httpd *d = arg;
    uint64_t seen[6] = {0};
    int64_t next_summary = acc_mono_us() + SUMMARY_US;
    pthread_mutex_lock(&d->wait_lock);
    while (!d->stopping) {
        int64_t now = acc_mono_us();
        expire(&d->fresh, now, &d->expired);
        expire(&d->kept, now, &d->expired);
        expire(&d->body, now, &d->cut);
        if (now >= next_summary) {
            summarize(d, seen);
            next_summary = now + SUMMARY_US;
        }
        int64_t wake = now + 1000000;
        if (d->fresh.head && d->fresh.head->deadline < wake)
            wake = d->fresh.head->deadline;
        if (d->kept.head && d->kept.head->deadline < wake)
            wake = d->kept.head->deadline;
        if (d->body.head && d->body.head->deadline < wake)
            wake = d->body.head->deadline;
        struct timespec ts = acc_mono_deadline(wake > now ? wake - now : 0);
        pthread_cond_timedwait(&d->wait_cond, &d->wait_lock, &ts);
    }
    pthread_mutex_unlock(&d->wait_lock);
    return NULL;
}

acc_err httpd_conns_start(struct acc_httpd *d, struct acc_error *err)
{
    d->fresh.delay = (int64_t)d->opt.header_timeout * 1000000;
    d->kept.delay = (int64_t)d->opt.timeout * 1000000;
    d->body.delay = (int64_t)d->opt.request_timeout * 1000000;
    if (d->opt.pending_connections && !(d->pending = httpd_tally_new()))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (d->fresh.delay <= 0 && d->kept.delay <= 0 && d->body.delay <= 0)
        return ACC_OK;
    if (pthread_create(&d->reaper, NULL, reaper_main, d) != 0)
        return acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the connection reaper thread");
    d->reaper_started = true;
    return ACC_OK;
}

void httpd_conns_stop(struct acc_httpd *d)
{
    if (d->reaper_started) {
        pthread_mutex_lock(&d->wait_lock);
        d->stopping = true;
        pthread_cond_signal(&d->wait_cond);
        pthread_mutex_unlock(&d->wait_lock);
        pthread_join(d->reaper, NULL);
        d->reaper_started = false;
    }
}

void acc_httpd_stats(struct acc_httpd *d, struct acc_httpd_stats *out)
{
    out->refused = atomic_load(&d->refused);
    out->expired = atomic_load(&d->expired);
    out->evicted = atomic_load(&d->evicted);
    out->full = atomic_load(&d->full);
    out->cut = atomic_load(&d->cut);
    out->unsent_refused = atomic_load(&d->unsent_refused);
    out->open = atomic_load(&d->open);
    out->unsent = atomic_load(&d->unsent);
    pthread_mutex_lock(&d->wait_lock);
    out->waiting = d->fresh.n + d->kept.n;
    out->receiving = d->body.n;
    pthread_mutex_unlock(&d->wait_lock);
}
