/* SPDX-License-Identifier: Apache-2.0 */
/* service.h - what accordd does, independent of how it is asked.
 *
 * The service owns the store, the adapters (one per configured site and
 * network), and the engine.  It turns a parsed offer into engine items
 * (choosing sites for components that name none), records every step in the
 * store, answers the questions of the API, and keeps things tidy in the
 * background: agreements whose reservation ended become Complete, and
 * reservations that could not be cancelled are retried.  At start-up it
 * recovers from a crash: every reservation that a negotiation left open is
 * cancelled at its adapter, and interrupted negotiations end.
 *
 * The HTTP layer calls these functions with parsed input; nothing here knows
 * HTTP or XML.
 */
#ifndef ACC_SERVICE_H
#define ACC_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"
#include "../../lib/common/kv.h"
#include "../config/config.h"
#include "../../lib/model/model.h"
#include "../view/view.h"

struct acc_service;

/* Opens the store and the adapters, runs recovery and starts housekeeping.
 * The configuration must outlive the service. */
acc_err acc_service_open(const struct acc_config *cfg, struct acc_service **out,
                         struct acc_error *err);

struct acc_adapter_ops;

/* A check of an agreement about to be committed: the agreement as it would
 * be recorded (Observed, its allocation with the reservations, its offer
 * document).  An error keeps it from being committed.  It may set
 * a->signature (malloc'd), which is then stored with the commit. */
typedef acc_err (*acc_service_precommit_fn)(void *arg, struct acc_agreement *a,
                                            struct acc_error *err);

/* What acc_service_open_with may change; zeroed: as acc_service_open. */
struct acc_service_options {
    /* Adapter kinds looked up before the compiled-in ones, NULL-terminated
     * (tests bring scripted adapters this way); NULL: none. */
    const struct acc_adapter_ops *const *kinds;
    /* Asked before every commit: of a negotiation, of a held quote and of
     * a modification's new version.  When it fails nothing is committed:
     * a negotiation's reservations are released and the agreement is
     * Rejected with the check's error; the quote stays Held (the new
     * agreement is Rejected); a modification changes nothing.  accordd
     * checks that the agreement's document can be made and signed
     * (acc_http_agreement_check), so that no reply, GET or terminate can
     * fail on it once something is booked.  NULL: no check. */
    acc_service_precommit_fn precommit;
    void *precommit_arg;
};

acc_err acc_service_open_with(const struct acc_config *cfg, const struct acc_service_options *opt,
                              struct acc_service **out, struct acc_error *err);

/* Shutdown, first step: no new negotiations; adapter calls are
 * interrupted; every unfinished negotiation rolls back and its waiters hear
 * ACC_ERR_INTERRUPTED.  Returns when the negotiation workers have ended. */
void acc_service_shutdown(struct acc_service *svc);
/* Then the launcher, the adapters and the store (shuts down first if that
 * was not done).  Adapter calls deaf to the interruption are waited for
 * half a second; if some still run then, the adapters and the store are
 * left open for them until the process ends (the journal holds whatever
 * they book, cancelled at the next start). */
void acc_service_close(struct acc_service *svc);

const struct acc_config *acc_service_config(const struct acc_service *svc);

struct acc_submit {
    struct acc_offer *offer; /* parsed and schema-valid; taken (emptied) */
    const char *document;    /* the offer as received, kept with the agreement */
    size_t len;
    const char *idempotency_key; /* NULL: none */
    bool pending;                /* answer at once and negotiate in the background */
    const char *quote;           /* commit this Held quote (its offer is the offer):
                                  * no negotiation; NULL: none */
    const char *address;         /* the client's IP address, kept with the agreement:
                                  * without [auth] quotas count by it; NULL: unknown */
};

/* ---------------------------------------------------- negotiation jobs
 *
 * Every negotiation is a job on one bounded queue served by a fixed set of
 * negotiation workers.  A job has a completion: whoever waits for it
 * (a synchronous request, an idempotent replay, a terminate) registers a
 * waiter or blocks in acc_nego_wait; nothing polls. */
struct acc_nego;

struct acc_nego_waiter {
    void (*fn)(void *arg); /* called once, from the thread that ends the job */
    void *arg;
    struct acc_nego_waiter *next;
};

/* Calls w->fn when the job is done: false (and no call) when it already
 * is.  w must stay valid until then. */
bool acc_nego_when_done(struct acc_nego *job, struct acc_nego_waiter *w);
bool acc_nego_is_done(struct acc_nego *job);
/* Blocks until the job is done and every waiter registered on it ran. */
void acc_nego_wait(struct acc_nego *job);
/* The agreement's id, and once done its result code (see
 * acc_service_submit) with the reason. */
const char *acc_nego_id(const struct acc_nego *job);
acc_err acc_nego_result(struct acc_nego *job, struct acc_error *err);
void acc_nego_release(struct acc_nego *job);

struct acc_submission {
    char id[ACC_ID_LEN + 1]; /* the agreement */
    bool replayed;           /* an earlier request with the same key is answered */
    struct acc_nego *job;    /* its negotiation (release it); done for a replay of a
                              * finished one */
};

/* Stores the offer as a Pending agreement and queues its negotiation.  When
 * the job is done its result is:
 *   ACC_OK        Observed
 *   ACC_ERR_NO_SLOT, ACC_ERR_ADAPTER, ACC_ERR_UNAVAILABLE, ACC_ERR_TIMEOUT
 *                 Rejected and kept, with the reasons
 *   ACC_ERR_INTERRUPTED  accordd was stopped: Rejected, everything released
 *   ACC_ERR_CANCELLED    terminated during the negotiation
 * Returns an error when nothing was stored: bad input (unknown site, over
 * capacity, window...), ACC_ERR_OVERLOADED (the queue is full: retry later),
 * ACC_ERR_KEY_REUSED (the idempotency key was used with another offer). */
acc_err acc_service_submit(struct acc_service *svc, const struct acc_submit *rq,
                           struct acc_submission *out, struct acc_error *err);

/* The agreement with its allocation; with its offer document if asked. */
acc_err acc_service_get(struct acc_service *svc, const char *id, bool with_offer,
                        struct acc_agreement *out, struct acc_error *err);

/* Keeps sig (lib/dsig's bytes) as the signature of agreement id's document
 * as of its updated time `updated`, for later GETs (unawaited; a newer
 * document's signature is never replaced by an older one's). */
acc_err acc_service_keep_signature(struct acc_service *svc, const char *id, acc_time updated,
                                   const void *sig, size_t len, struct acc_error *err);

acc_err acc_service_list(struct acc_service *svc, const struct acc_list_filter *f,
                         struct acc_agreement_list *out, struct acc_error *err);

/* The agreement's state with its service and guarantee term states.
 * Release with acc_service_state_release. */
struct acc_service_state {
    struct acc_agreement agreement;
    struct acc_term_view *terms;
    size_t n_terms;
    struct acc_guarantee_view *guarantees; /* the offer's, then one per reserved link */
    size_t n_guarantees;
    char (*reasons)[256]; /* storage for the link guarantees' reasons */
    struct acc_run run;   /* the launch, when has_run */
    bool has_run;
    struct acc_state_view view;
};

acc_err acc_service_state(struct acc_service *svc, const char *id, struct acc_service_state *out,
                          struct acc_error *err);
void acc_service_state_release(struct acc_service_state *s);

acc_err acc_service_trace(struct acc_service *svc, const char *id, struct acc_agreement *a,
                          struct acc_trace *out, struct acc_error *err);

/* The launch of a committed agreement: its MetaMPICH and MPICH-G2
 * descriptions and its job (the output only when with_output); *a receives
 * the agreement (for ownership checks).  ACC_ERR_NOT_FOUND for an unknown
 * id or an agreement that was never committed. */
acc_err acc_service_run(struct acc_service *svc, const char *id, bool with_output,
                        struct acc_agreement *a, struct acc_run *out, struct acc_error *err);

/* Cancels every reservation of the agreement; *out is its state afterwards
 * (Terminated, or ...AndTerminating while cancellations are retried).  A
 * negotiation still running is asked to stop: then *wait receives its job
 * (release it) and *out is read again once it is done. */
acc_err acc_service_terminate(struct acc_service *svc, const char *id, struct acc_agreement *out,
                              struct acc_nego **wait, struct acc_error *err);

/* ------------------------------------------------------- modification
 * (modify.c; docs/api.md "Changing an agreement").  What changes; zero and
 * empty: unchanged.  Names are components and links of the agreement. */
/* struct acc_modification: lib/model/model.h. */
/* Negotiates a new version of an Observed agreement while the current one
 * stays booked; on success the new reservations replace the old ones (which
 * are cancelled), the old version is kept, a waiting job's start and a
 * running job's stop move with it, and *out is the new version.  On failure
 * nothing changes, and the error says why: ACC_ERR_INVALID, ACC_ERR_CAPACITY,
 * ACC_ERR_NOT_FOUND (unknown id, component or link), ACC_ERR_STATE (not
 * Observed, another modification under way, a running job's nodes or start,
 * terminated meanwhile), ACC_ERR_NO_SLOT and adapter errors. */
acc_err acc_service_modify(struct acc_service *svc, const char *id,
                           const struct acc_modification *m, struct acc_agreement *out,
                           struct acc_error *err);
/* The same as a job on the negotiation queue (bounded by queue_length like
 * a negotiation; ACC_ERR_OVERLOADED when full), so that no HTTP thread
 * waits: *job receives it (release it); once it is done acc_nego_result
 * says how it went and acc_nego_modified hands over the new version.
 * acc_service_modify is this and a wait. */
acc_err acc_service_modify_submit(struct acc_service *svc, const char *id,
                                  const struct acc_modification *m, struct acc_nego **job,
                                  struct acc_error *err);
/* After a successful modify job: the new version (once; then
 * ACC_ERR_STATE). */
acc_err acc_nego_modified(struct acc_nego *job, struct acc_agreement *out, struct acc_error *err);

/* Version `version` of an agreement (0: the current one). */
acc_err acc_service_get_version(struct acc_service *svc, const char *id, unsigned version,
                                bool with_offer, struct acc_agreement *out, struct acc_error *err);
/* The trace of one version (0: the current one). */
acc_err acc_service_trace_version(struct acc_service *svc, const char *id, unsigned version,
                                  struct acc_agreement *a, struct acc_trace *out,
                                  struct acc_error *err);

/* ---------------------------------------------------------------- quotes
 *
 * POST /negotiations: counter-offers to an offer from one preview round of
 * every reservation it needs (the engine's preview-only mode), committing
 * nothing: the earliest common slot and up to [negotiation] quote_options
 * later ones, each with why it starts no earlier.  With a hold (at most
 * max_hold) the chosen option is booked at every adapter (an engine
 * negotiation from its start, so a slot taken meanwhile moves it later) and
 * held; the held reservations are journal entries, released when the hold
 * expires (housekeeping, after a restart too) or is given back. */
struct acc_quote_request {
    const struct acc_offer *offer; /* parsed and schema-valid; borrowed */
    const char *document;          /* the offer as received */
    size_t len;
    int64_t hold;        /* seconds; 0: no hold */
    int option;          /* the option to hold; -1: the first */
    const char *address; /* the client's IP address, as acc_submit's */
};

/* ACC_ERR_OVERLOADED when the initiator's or all open quotes are at their
 * bound (nothing stored); bad input as acc_service_submit.  A quote with no
 * option is stored Rejected (not an error). */
acc_err acc_service_quote(struct acc_service *svc, const struct acc_quote_request *rq,
                          struct acc_quote *out, struct acc_error *err);
acc_err acc_service_quote_get(struct acc_service *svc, const char *id, struct acc_quote *out,
                              struct acc_error *err);
/* Gives a hold back (or closes an Advisory quote): Released, everything
 * released.  ACC_ERR_STATE when it is no longer open. */
acc_err acc_service_quote_release(struct acc_service *svc, const char *id, struct acc_quote *out,
                                  struct acc_error *err);

/* The same as jobs on the negotiation queue, so that no request thread
 * previews, books or cancels: a place is reserved first (ACC_ERR_OVERLOADED
 * when the queue is full, as for acc_service_submit), and a quote's checks
 * are made at once (their errors as acc_service_quote, nothing queued).
 * The offer is taken (emptied), the document copied.  When the job is done
 * (acc_nego_when_done, acc_nego_wait) its result is acc_service_quote's or
 * acc_service_quote_release's, and acc_nego_quote the quote (borrowed from
 * the job; NULL when the result is an error). */
acc_err acc_service_quote_submit(struct acc_service *svc, struct acc_offer *offer,
                                 const char *document, size_t len, int64_t hold, int option,
                                 const char *address, struct acc_nego **job, struct acc_error *err);
acc_err acc_service_quote_release_submit(struct acc_service *svc, const char *id,
                                         struct acc_nego **job, struct acc_error *err);
const struct acc_quote *acc_nego_quote(const struct acc_nego *job);

/* Sites, networks and links with their adapters' health.  Release with
 * acc_service_sites_release. */
struct acc_service_sites {
    struct acc_site_info *sites;
    size_t n_sites;
    struct acc_site_info *networks;
    size_t n_networks;
    struct acc_link_info *links;
    size_t n_links;
    char (*health)[256];   /* storage for the health texts */
    char (*endpoint)[128]; /* and for the remote adapters' endpoints */
    struct acc_sites_view view;
};

acc_err acc_service_sites(struct acc_service *svc, struct acc_service_sites *out,
                          struct acc_error *err);
void acc_service_sites_release(struct acc_service_sites *s);

/* A site's free frames for `nodes` nodes of at least `duration`, within
 * [from, until); from 0 means now, until 0 means from + the horizon. */
acc_err acc_service_preview(struct acc_service *svc, const char *site, int64_t nodes,
                            int64_t duration, acc_time from, acc_time until, struct acc_frames *out,
                            acc_time *from_used, acc_time *until_used, struct acc_error *err);

/* An adapter-specific operation (the simulators' fault injection) on the
 * adapter of a site or network; only with [server] allow_control. */
acc_err acc_service_control(struct acc_service *svc, const char *adapter, const char *op,
                            const struct acc_kv *args, size_t n_args, struct acc_buf *reply,
                            struct acc_error *err);

/* Liveness: the store answers and how many adapters are up. */
acc_err acc_service_health(struct acc_service *svc, struct acc_buf *text, struct acc_error *err);

/* POST /admin/backup (backup.c): a consistent copy of the database (made
 * while it serves), the signing key and certificate, the [auth] files and
 * the adapters' calendar databases, as one tar archive appended to out,
 * with a MANIFEST first (where each file came from; the agreements in the
 * copy, also *agreements).  One at a time: ACC_ERR_STATE while another
 * runs.  ACC_ERR_TOO_LARGE past 1 GiB; nothing is left behind on failure. */
acc_err acc_service_backup(struct acc_service *svc, struct acc_buf *out, int64_t *agreements,
                           struct acc_error *err);

/* Prometheus text metrics of the service (the HTTP layer adds its own). */
void acc_service_metrics(struct acc_service *svc, struct acc_buf *out);

#endif
