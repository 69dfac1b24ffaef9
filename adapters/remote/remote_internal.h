/* SPDX-License-Identifier: Apache-2.0 */
/* remote_internal.h - the remote adapter's state and its one exchange with a
 * site daemon (adapters/remote/: remote.c the settings, life, health and
 * table; remote_reservations.c, remote_jobs.c and remote_flows.c the
 * operations; remote_http.c the pool of connections, the retries and the
 * faults). */
#ifndef ACC_REMOTE_INTERNAL_H
#define ACC_REMOTE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../adapter.h"

#define REMOTE_MAX_CONNECTIONS 64
#define REMOTE_MAX_RETRIES     5

/* One pooled libcurl easy handle: it keeps its connection (and its TLS
 * session) alive between calls. */
struct remote_slot {
    void *curl; /* CURL *; libcurl's type stays in remote_http.c */
    bool busy;
};

struct remote {
    char name[64];  /* the instance: "alpha" */
    char what[352]; /* "site alpha (https://10.79.1.11:8443)", prefixes every fault */
    char url[256];  /* the base URL, without a trailing '/' */
    char remote_name[128];
    char *ca, *cert, *key; /* files (malloc'd; cert and key may be NULL) */
    bool network;          /* a [network] section: bandwidth, not nodes */
    bool insecure_http;
    /* forward_token = AUDIENCE: send the user's own token with the
     * identity (the site's identity = token) when the token's "aud" names
     * AUDIENCE, the site's name in tokens; only while the user's request
     * is being served (accordd keeps no token).  "": never. */
    char forward_aud[512];
    int64_t timeout_s, connect_timeout_s, retries;

    size_t n_slots;
    struct remote_slot *slots;
    void *headers; /* struct curl_slist *: the headers of every call */
    pthread_mutex_t lock;
    pthread_cond_t freed;
    bool lock_init;
    atomic_bool stop; /* interrupt: calls return, new ones fail at once */

    /* counters since open (control "stats") */
    atomic_uint_least64_t calls;    /* operations asked of the site */
    atomic_uint_least64_t attempts; /* HTTP exchanges tried */
    atomic_uint_least64_t retries_done;
    atomic_uint_least64_t connects; /* new connections (TCP + TLS handshakes) */
};

/* What the site answered: its 2xx status and body (NUL-terminated). */
struct remote_reply {
    long status;
    struct acc_buf body;
    int64_t rtt_us; /* the last attempt's exchange */
};

void remote_reply_release(struct remote_reply *r);

/* Creates the pool (the settings are read); remote_http_close frees it. */
acc_err remote_http_open(struct remote *r, struct acc_error *err);
void remote_http_close(struct remote *r);
void remote_http_interrupt(struct remote *r);

/* One operation: `method` on base URL + path with body (may be NULL), as
 * application/xml.  Within `timeout` for the whole call; idempotent calls
 * are tried again (at most `retries` times, short backoff) when the
 * exchange itself failed (unreachable, reset, timed out with time left).
 * ACC_OK with *out filled when the site answered 2xx; otherwise err says why
 * and names the site: unreachable (ACC_ERR_UNAVAILABLE), timed out
 * (ACC_ERR_TIMEOUT), refused with the site's fault (its code), protocol
 * error (ACC_ERR_ADAPTER), interrupted (ACC_ERR_CANCELLED). */
acc_err remote_call(struct remote *r, const char *method, const char *path, const char *body,
                    size_t len, bool idempotent, struct remote_reply *out, struct acc_error *err);

/* A protocol error of the site's answer, naming the site. */
acc_err remote_protocol_error(struct remote *r, const char *op, const struct acc_error *why,
                              struct acc_error *err);

/* The operations, in the table of remote.c: remote_reservations.c
 * (preview, reserve, query, cancel), remote_jobs.c (submit, job status, job
 * cancel), remote_flows.c (provision, provision status). */
acc_err remote_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err);
acc_err remote_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                                 acc_time from, acc_time until, int64_t duration,
                                 struct acc_frames *out, struct acc_error *err);
acc_err remote_reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err);
acc_err remote_reserve_replacing(void *state, const char *key, const char *old_key,
                                 const struct acc_resource *res, acc_time start, int64_t duration,
                                 struct acc_reservation *out, struct acc_error *err);
acc_err remote_query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err);
acc_err remote_cancel(void *state, const char *key, const char *local_id, struct acc_error *err);
acc_err remote_submit(void *state, const struct acc_job *job, char *job_id, size_t job_id_len,
                      struct acc_error *err);
acc_err remote_job_status(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err);
acc_err remote_job_cancel(void *state, const char *job_id, struct acc_error *err);
acc_err remote_provision(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err);
acc_err remote_provision_status(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err);
/* What the site is told of whom a call is for: id without its token
 * unless r forwards tokens (a view into id; NULL: no one). */
struct acc_identity remote_identity(const struct remote *r, const struct acc_identity *id);

/* "/v1/reservations/KEY" + suffix into path, when key may travel in a path. */
acc_err remote_key_path(struct remote *r, const char *prefix, const char *key, const char *suffix,
                        char *path, size_t len, struct acc_error *err);

#endif
