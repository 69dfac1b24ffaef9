/* SPDX-License-Identifier: Apache-2.0 */
/* site_internal.h - what the files of site/ share and nothing outside sees:
 *
 *   site.c        the daemon's life: start (store, adapters, recovery,
 *                 listener), reload, stop
 *   site_config.c the configuration file ([daemon], [peer NAME] and the
 *                 resource sections read by resources/)
 *   site_store.c  SQLite: the journal of bookings and the jobs table
 *   site_peers.c  the admitted peers and their limits
 *   site_ops.c    the adapter operations on behalf of a peer: limits,
 *                 idempotency by key, ownership, recovery of intent rows
 *   site_http.c   the front end on lib/httpd with TLS (lib/tls): admission
 *   site_routes.c the /v1 paths: protocol documents in and out (lib/proto)
 *
 * Nothing here but site_http.c and site_routes.c knows HTTP or XML; only
 * site_store.c knows SQL. */
#ifndef ACC_SITE_INTERNAL_H
#define ACC_SITE_INTERNAL_H

#include "../lib/common/conf_report.h"
#include "../lib/identity/mapfile.h"
#include <pthread.h>
#include <stdatomic.h>

#include "../adapters/adapter.h"
#include "../lib/httpd/httpd.h"
#include "site.h"

/* ------------------------------------------------------------------ store */

enum site_state { SITE_INTENT, SITE_RESERVED, SITE_CANCELLED };

/* One row of site_bookings. */
struct site_booking {
    char key[ACC_KEY_MAX];
    char peer[64];
    enum acc_resource_kind kind;
    char resource[128];
    int64_t amount;
    acc_time start, end; /* as asked */
    char old_key[ACC_KEY_MAX];
    char account[64];           /* the local account it is for ("": none, no mapfile) */
    struct acc_reservation res; /* as booked (state reserved); res.nodes malloc'd */
    enum site_state state;
    acc_time created, updated;
};

void site_booking_release(struct site_booking *b);

struct site_store;

/* Whether path can be the daemon's database: a file (only SQLite serves
 * it), never a server's URL.  Run by the configuration's check (so
 * --check-config says it) and at open. */
acc_err site_store_check(const char *path, struct acc_error *err);
acc_err site_store_open(const char *path, bool durable, struct site_store **out,
                        struct acc_error *err);
void site_store_close(struct site_store *st);
/* ACC_ERR_NOT_FOUND when there is no row of that key. */
acc_err site_store_get(struct site_store *st, const char *key, struct site_booking *out,
                       struct acc_error *err);
/* Writes are durable (they reach the disk before they return, when the
 * journal is durable) but for the lazy ones: an intent, and a delete asked
 * for as lazy.  A lazy write reaches the disk with the next durable one;
 * a power loss before that may lose it (a crash of the daemon alone does
 * not).  site_ops.c says why that is safe where they are used. */
/* A new intent row (ACC_ERR_KEY_REUSED when the key has a row); lazy. */
acc_err site_store_intent(struct site_store *st, const struct site_booking *b, acc_time now,
                          struct acc_error *err);
acc_err site_store_reserved(struct site_store *st, const char *key, const struct acc_reservation *r,
                            acc_time now, struct acc_error *err);
acc_err site_store_set_state(struct site_store *st, const char *key, enum site_state state,
                             acc_time now, struct acc_error *err);
acc_err site_store_delete(struct site_store *st, const char *key, bool lazy, struct acc_error *err);
/* A cancelled row for a key that had none, so that a reserve arriving after
 * its cancel books nothing; a peer's oldest tombstones beyond a bound go. */
acc_err site_store_tombstone(struct site_store *st, const char *peer, const char *key, acc_time now,
                             struct acc_error *err);
/* Forgets cancelled rows and ended reservations older than a day. */
acc_err site_store_prune(struct site_store *st, acc_time now, struct acc_error *err);
/* Whether the peer holds fewer than max open reservations (intent, or
 * reserved and not ended); when it does, one more is counted for the
 * reserve that asked.  Answered from an upper bound kept in memory (the
 * last count plus every reserve admitted since: ends, cancels and refusals
 * only lower the true number), and counted in the journal again only when
 * the bound reaches max.  *n: the bound, or the count when counted (the
 * figure a refusal names).  As before, reserves of one peer in flight at
 * the same moment may each see room for one. */
acc_err site_store_open_fewer(struct site_store *st, const char *peer, acc_time now, int64_t max,
                              bool *fewer, int64_t *n, struct acc_error *err);
/* Every intent row (recovery); *out malloc'd, each site_booking_release()d. */
acc_err site_store_intents(struct site_store *st, struct site_booking **out, size_t *n,
                           struct acc_error *err);

/* ------------------------------------------------------------------ peers */

/* An admitted peer as one request sees it (a copy: a reload may replace
 * the table meanwhile). */
struct site_peer {
    char name[64];
    int64_t max_nodes, max_bandwidth, max_duration, max_advance, max_reservations;
    unsigned connections;
    bool admin;        /* may read /metrics */
    bool metrics_only; /* may read /metrics and nothing else */
};

struct site_peers;

acc_err site_peers_new(const struct acc_site_peer_cfg *v, size_t n, struct site_peers **out,
                       struct acc_error *err);
void site_peers_free(struct site_peers *p);
/* Replaces the peers (SIGHUP); lib/httpd keeps their open connections
 * counted by name. */
acc_err site_peers_replace(struct site_peers *p, const struct acc_site_peer_cfg *v, size_t n,
                           struct acc_error *err);
/* The peer of this certificate (subject DN or SHA-256 fingerprint). */
bool site_peers_find(struct site_peers *p, const char *subject, const char *fingerprint,
                     struct site_peer *out);

/* ---------------------------------------------------------------- daemon */

struct acc_site_jobs;

/* One resource the daemon serves: a site's nodes or a link's bandwidth. */
struct site_resource {
    const char *name; /* the section's name (owned by the config) */
    enum acc_resource_kind kind;
    int64_t capacity;
    struct acc_adapter *ad;
};

#define SITE_KEY_LOCKS 64

struct acc_site {
    struct acc_site_config cfg;
    struct site_store *store;
    struct site_peers *peers;
    struct acc_resources *adapters; /* one per [site] and [network] section */
    struct site_resource *res;
    size_t n_res;
    /* Calls on one key are serialised (a retried reserve waits for the
     * first, a cancel for a reserve in flight): striped by the key's hash. */
    pthread_mutex_t key_locks[SITE_KEY_LOCKS];
    atomic_int_least64_t pruned; /* last prune of the journal */
    struct site_http *http;
    struct acc_site_jobs *jobs; /* site_jobs.h (helper LAUNCH); NULL: jobs unsupported */
    /* [daemon] mapfile and identity, read at the start and on SIGHUP
     * (swapped under map_lock; requests map under its read side) */
    pthread_rwlock_t map_lock;
    struct acc_mapfile *mapfile; /* NULL: none */
    bool identity_token;
    /* identity = token: the [issuer NAME] sections (taken from the
     * configuration at the start and on SIGHUP, under map_lock) and the
     * keys fetched from them (kept across reloads, by issuer URL) */
    struct acc_site_issuer_cfg *issuers;
    size_t n_issuers;
    struct acc_jwt_cache *jwt;
};

/* A request's parameters, for preview (from, until) and reserve (start). */
struct site_ask {
    enum acc_resource_kind kind;
    const char *resource;
    int64_t amount;
    acc_time from, until; /* preview */
    acc_time start;       /* reserve */
    int64_t duration;
    const char *old_key;                 /* "" or NULL: none */
    const struct acc_identity *identity; /* whom it is for, as the peer says; NULL: none */
};

/* site_identity.c: the local account id maps to (len bytes) with
 * [daemon] mapfile; "" without a mapfile.  ACC_ERR_FORBIDDEN naming the
 * site when the mapfile maps no account to it ("site beta: no account for
 * user bob"), or it names no one. */
acc_err site_map_identity(struct acc_site *s, const struct acc_identity *id, char *account,
                          size_t len, struct acc_error *err);
/* The mapfile c names, read now (NULL: none); err says why it cannot be. */
acc_err site_identity_read(const struct acc_site_config *c, struct acc_mapfile **out,
                           struct acc_error *err);
/* m (taken), identity = token or broker and c's issuers (taken from c)
 * replace the running ones (start, SIGHUP). */
void site_identity_set(struct acc_site *s, struct acc_mapfile *m, struct acc_site_config *c);

/* site_issuer.c: [issuer NAME] (section is its name as the file says it),
 * into c, every problem into r (inih's handler result). */
int site_issuer_key(struct acc_conf_report *r, struct acc_site_config *c, const char *section,
                    const char *name, const char *k, const char *v);
/* The checks after reading: url and audience, identity = token's issuer. */
void site_issuer_check(const struct acc_site_config *c, struct acc_conf_report *r);
/* The issuer whose url is iss; NULL: none. */
const struct acc_site_issuer_cfg *site_issuer_find(const struct acc_site_issuer_cfg *v, size_t n,
                                                   const char *iss);
/* is as lib/jwt's verifier takes it (is's strings). */
struct acc_jwt_issuer;
void site_issuer_verifier(const struct acc_site_issuer_cfg *is, struct acc_jwt_issuer *out);
void site_issuer_print(const struct acc_site_config *c, FILE *out);
void site_issuers_free(struct acc_site_issuer_cfg *v, size_t n);

/* site_ops.c: each answers the protocol's fault code in err on failure. */
acc_err site_open_resources(struct acc_site *s, struct acc_error *err);
void site_close_resources(struct acc_site *s);
acc_err site_recover(struct acc_site *s, struct acc_error *err);
acc_err site_op_preview(struct acc_site *s, const struct site_peer *peer, const struct site_ask *a,
                        struct acc_frames *out, struct acc_error *err);
/* out gets the stored booking (the same key again: the first one). */
acc_err site_op_reserve(struct acc_site *s, const struct site_peer *peer, const char *key,
                        const struct site_ask *a, struct site_booking *out, struct acc_error *err);
/* out gets the booking with res read back from the adapter. */
acc_err site_op_query(struct acc_site *s, const struct site_peer *peer, const char *key,
                      struct site_booking *out, struct acc_error *err);
acc_err site_op_cancel(struct acc_site *s, const struct site_peer *peer, const char *key,
                       struct acc_error *err);
acc_err site_op_provision(struct acc_site *s, const struct site_peer *peer, const char *key,
                          const struct acc_flow *flow, struct acc_error *err);
acc_err site_op_provision_status(struct acc_site *s, const struct site_peer *peer, const char *key,
                                 struct acc_provision_status *out, struct acc_error *err);
/* The peer's reserved booking of key, for jobs (ACC_ERR_NOT_FOUND else). */
acc_err site_op_booking(struct acc_site *s, const struct site_peer *peer, const char *key,
                        struct site_booking *out, struct acc_error *err);
/* Health of every adapter: up when all are; detail names the first down;
 * caps the ACC_CAP_* the daemon serves. */
void site_op_health(struct acc_site *s, bool *up, char *detail, size_t detail_len, unsigned *caps);

/* site_http.c */
struct site_http;
acc_err site_http_start(struct acc_site *s, struct site_http **out, struct acc_error *err);
unsigned site_http_port(const struct site_http *h);
/* The certificate files again (SIGHUP; new paths may be given). */
acc_err site_http_reload(struct site_http *h, const char *certificate, const char *key,
                         const char *client_ca, struct acc_error *err);
void site_http_stop(struct site_http *h);

/* site_routes.c: one request, already admitted and read whole. */
struct site_request {
    const char *method;
    const char *path;
    const char *body;
    size_t body_len;
    const struct site_peer *peer;
    const char *key;         /* the path's key or id (set by site_route) */
    struct acc_httpd *httpd; /* serving it (its figures, for /metrics) */
    /* Set by site_route: 1 + the route's class, an index into
     * site_route_classes (lib/httpd's request-duration histogram); 0: no
     * route. */
    int route_class;
};

/* The route classes, NULL-terminated: health, preview, reservations,
 * provision, jobs, metrics. */
extern const char *const site_route_classes[];

/* Answers 200, 201, 204 or the fault's, with an application/xml body
 * (none for 204). */
void site_route(struct acc_site *s, struct site_request *rq, struct acc_httpd_reply *rs);
/* A <Fault> answer of err. */
void site_fault(struct acc_site *s, const struct acc_error *err, struct acc_httpd_reply *rs);

#endif
