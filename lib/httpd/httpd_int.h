/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_int.h - what the files of lib/httpd share and nothing outside sees:
 *
 *   httpd_daemon.c   libmicrohttpd's daemon: start, TLS, stop
 *   httpd_conn.c     connections: counted per address, the request-head
 *                    deadlines and the thread that enforces them
 *   httpd_request.c  one exchange: the checks, the body, the hooks, parking
 *   httpd_tally.c    open connections counted by key
 *   httpd_access.c   the access log and the answers by status code
 *   httpd_route.c    route tables: acc_httpd_match
 */
#ifndef ACC_HTTPD_INT_H
#define ACC_HTTPD_INT_H

#include <microhttpd.h>
#include <pthread.h>

#include "../tls/tls_server.h"
#include "httpd.h"

/* ------------------------------------------------------------------- tally */

/* Open connections per key (a client's address, a principal's name): a
 * hash table of keys with a count each, under one lock (connections come
 * and go rarely compared with what a request costs). */
struct httpd_tally;
struct httpd_tally_entry;

#define HTTPD_TALLY_KEY_MAX 64

struct httpd_tally *httpd_tally_new(void);
void httpd_tally_free(struct httpd_tally *t);
/* One more connection of key (at most HTTPD_TALLY_KEY_MAX bytes) into *out,
 * unless it holds limit already: then ACC_ERR_TOO_MANY, nothing counted and
 * *open the count.  ACC_ERR_NOMEM without memory. */
acc_err httpd_tally_open(struct httpd_tally *t, const void *key, size_t len, unsigned limit,
                         struct httpd_tally_entry **out, unsigned *open);
/* answer bytes of key: n more held unsent, unless it holds some already
 * and n more would pass limit (0: none): then ACC_ERR_TOO_MANY, nothing
 * held, and *held what it holds.  An entry lives while it has connections
 * or bytes. */
acc_err httpd_tally_hold(struct httpd_tally *t, struct httpd_tally_entry *e, size_t n, size_t limit,
                         size_t *held);
/* The answer bytes e holds now. */
size_t httpd_tally_held(struct httpd_tally *t, struct httpd_tally_entry *e);
/* n bytes of e's sent or dropped; NULL does nothing. */
void httpd_tally_unhold(struct httpd_tally *t, struct httpd_tally_entry *e, size_t n);
/* The connections of key open now. */
unsigned httpd_tally_count(struct httpd_tally *t, const void *key, size_t len);
/* One connection fewer; NULL does nothing. */
void httpd_tally_close(struct httpd_tally *t, struct httpd_tally_entry *e);

/* ------------------------------------------------------------------ daemon */

/* Status codes counted: 100 to HTTPD_CODES - 1. */
#define HTTPD_CODES 600
/* The request-duration histogram's bounds (httpd_access.c), and its
 * classes: "other" (0), then the daemon's route_classes. */
#define HTTPD_DURATION_BOUNDS 14
#define HTTPD_CLASSES         (ACC_HTTPD_MAX_CLASSES + 1)

/* One class's histogram: answers by bucket (not cumulative; the last is
 * past every bound) and their durations' sum, each written with a relaxed
 * atomic add (no lock on a request's path). */
struct httpd_duration {
    atomic_uint_least64_t bucket[HTTPD_DURATION_BOUNDS + 1];
    atomic_uint_least64_t sum_us;
};

struct httpd_conn;

/* Connections waiting for a request head or the rest of a body, oldest
 * deadline first (every entry of one list waits the same time, so
 * appending keeps the order). */
struct httpd_wait {
    struct httpd_conn *head, *tail;
    int64_t delay; /* microseconds each entry is given */
    unsigned n;    /* entries */
};

struct acc_httpd {
    struct MHD_Daemon *daemon;
    struct acc_httpd_options opt;
    const struct acc_httpd_ops *ops;
    void *app;
    struct acc_tls_server *tls;     /* HTTPS; NULL: plain HTTP */
    struct httpd_tally *addresses;  /* client_connections; NULL: no bound */
    struct httpd_tally *principals; /* the auth hook's who */
    struct httpd_tally *pending;    /* pending_connections; NULL: no bound */
    /* The deadlines: wait_lock guards the lists and each connection's fd
     * against its close (a connection leaves its list before libmicrohttpd
     * closes its socket); the reaper thread shuts down the late ones. */
    pthread_mutex_t wait_lock;
    pthread_cond_t wait_cond;
    struct httpd_wait fresh; /* new connections: header_timeout */
    struct httpd_wait kept;  /* kept alive after an answer: timeout (the oldest idle
                              * first: the one closed to make room at the limit) */
    struct httpd_wait body;  /* a head is whole, its body not yet: request_timeout */
    pthread_t reaper;
    bool reaper_started, stopping;
    atomic_uint open; /* connections open (counted at their start, not at accept) */
    atomic_uint_least64_t refused, expired, evicted, cut, full;
    /* Answer bytes queued and not yet sent (max_unsent), and how many answers
     * were refused for want of room (max_unsent, client_unsent). */
    atomic_size_t unsent;
    atomic_uint_least64_t unsent_refused;
    unsigned port;
    atomic_bool quiesced; /* acc_httpd_quiesce: every new connection is closed at once */
    atomic_bool serving;  /* started: libmicrohttpd's warnings are rationed */
    atomic_uint_least64_t warn_window, warns, quieted; /* httpd_daemon.c's mhd_log */
    atomic_uint_least64_t answers[HTTPD_CODES];        /* by status code */
    struct httpd_duration duration[HTTPD_CLASSES];     /* by route class */
    unsigned n_classes;                                /* "other" and the daemon's */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned parked; /* requests suspended or resumed and not yet completed */
};

/* Per connection (MHD's socket context). */
struct httpd_conn {
    int fd;                              /* its socket, shut down at its deadline */
    struct httpd_tally_entry *pending;   /* counted until its first request head */
    struct httpd_wait *list;             /* the deadline list it is on; NULL: none */
    struct httpd_conn *prev, *next;      /* on that list */
    int64_t deadline;                    /* monotonic microseconds */
    struct httpd_tally_entry *address;   /* counted against its client address */
    bool over;                           /* beyond its address's bound: every request refused */
    struct httpd_tally_entry *principal; /* counted against the principal of its first request */
    /* The identity read from the client's certificate, kept with that
     * certificate's DER bytes: a later request on the connection whose
     * certificate is byte for byte the same (always, unless a renegotiation
     * changed it) skips parsing it again. */
    unsigned char *der;
    size_t der_len;
    struct acc_tls_peer id;
};

/* httpd_conn.c: libmicrohttpd's accept policy and connection notices
 * (cls: the struct acc_httpd), the request-head events of a connection, and
 * the reaper thread. */
enum MHD_Result httpd_accept_policy(void *cls, const struct sockaddr *addr, socklen_t len);
void httpd_connection_event(void *cls, struct MHD_Connection *con, void **socket_context,
                            enum MHD_ConnectionNotificationCode toe);
/* The connection of a request (its socket context), or NULL. */
struct httpd_conn *httpd_conn_of(struct MHD_Connection *con);
/* A request head is whole: c waits for it no more; with body, it waits
 * for the body, until request_timeout. */
void httpd_conn_headed(struct acc_httpd *d, struct httpd_conn *c, bool body);
/* The whole request is in (or answered): c waits no more. */
void httpd_conn_whole(struct acc_httpd *d, struct httpd_conn *c);
/* An answer is sent and c stays open: it waits for its next head. */
void httpd_conn_idle(struct acc_httpd *d, struct httpd_conn *c);
acc_err httpd_conns_start(struct acc_httpd *d, struct acc_error *err);
void httpd_conns_stop(struct acc_httpd *d);

/* httpd_daemon.c: the client certificate's identity of a request on c. */
acc_err httpd_peer_identity(struct MHD_Connection *con, struct httpd_conn *c,
                            struct acc_tls_peer *out, struct acc_error *err);
void httpd_park_count(struct acc_httpd *d, int delta);

/* httpd_request.c: libmicrohttpd's callbacks of one exchange (cls: the
 * struct acc_httpd). */
void *httpd_uri_seen(void *cls, const char *uri, struct MHD_Connection *con);
enum MHD_Result httpd_access(void *cls, struct MHD_Connection *con, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_data_size, void **con_cls);
void httpd_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                     enum MHD_RequestTerminationCode toe);

/* httpd_access.c: an answer of status sent (counted); a request of route
 * class cls answered in us microseconds (counted in its histogram); the
 * access log's line of a request that ends (method NULL: none, nothing is
 * said), status 0 when it was not answered, user "" or the auth hook's, us
 * its duration. */
void httpd_count_answer(struct acc_httpd *d, int status);
void httpd_count_duration(struct acc_httpd *d, unsigned cls, int64_t us);
/* The client's address as text (inet_ntop); "-" and false when unknown.
 * HTTPD_ADDRESS_LEN holds any. */
#define HTTPD_ADDRESS_LEN 48
bool httpd_client_address(struct MHD_Connection *con, char *out, size_t size);
void httpd_access_line(struct acc_httpd *d, const char *address, const char *method,
                       const char *path, int status, const char *user, int64_t us);

#endif
