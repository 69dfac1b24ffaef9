/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the files of the service share; not for other modules.
 *
 *   service.c       open and close (in order), sites, previews, health
 *   metrics.c       the service's figures for /metrics
 *   registry.c      the adapters by name (opened by resources/); cancelling
 *                   bookings at them
 *   submit.c        offer -> stored Pending agreement -> job on the queue
 *   queue.c         the one bounded negotiation queue and its workers
 *   negotiate.c     one negotiation: plan, engine, the recorded outcome
 *   terminate.c     ending agreements on request
 *   modify.c        changing a committed agreement: a new version
 *   query.c         reading agreements, states, traces
 *   runs.c          the launcher's hooks into the service
 *   housekeeping.c  recovery at start-up and the periodic pass
 *   provision.c     handing link reservations' flows to network adapters
 *                   that install them on the wire; retries; guarantee states
 *   flows.c         the flows of an agreement's link reservations (flows.h)
 *   quote.c         quotes: counter-offers from previews, committing nothing
 *   quote_hold.c    held quotes: hold, release, expiry
 *   quote_commit.c  committing a held quote as an agreement
 *   quote_job.c     quotes as jobs on the negotiation queue
 *   quota.c         the limits of one agreement under a user's quota (quota.h)
 *   quota_ledger.c  a user's open agreements, counted race-free
 *   quota_usage.c   a user's node-hours per site and Mbit-hours per link,
 *                   counted race-free
 */
#ifndef ACC_SERVICE_INTERNAL_H
#define ACC_SERVICE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "../../adapters/adapter.h"
#include "../../db/store.h"
#include "../../resources/resources.h"
#include "../engine/engine.h"
#include "jobs.h"
#include "quota.h"
#include "service.h"

enum { OUT_AGREED, OUT_NO_SLOT, OUT_FAILED, OUT_STOPPED, OUT_INTERRUPTED, OUT__COUNT };

/* metrics.c: the latency histogram's upper bounds, 1 ms to 60 s. */
#define SVC_NEGOTIATION_BUCKETS 15
/* A negotiation that took us microseconds, into the histogram and the sum. */
void svc_observe_negotiation(struct acc_service *svc, int64_t us);

/* A negotiation job (queue.c): owns its offer and its Pending agreement. */
struct acc_nego {
    atomic_uint refs;
    struct acc_service *svc;
    char id[ACC_ID_LEN + 1];
    struct acc_offer offer;     /* taken from the request */
    struct acc_agreement a;     /* as stored when Pending */
    bool pending_mode;          /* ?mode=pending: counted against max_pending */
    char quote[ACC_ID_LEN + 1]; /* a commit of this held quote; "" otherwise */
    /* A job of another kind (a quote): run instead of a negotiation, with
     * its data (freed by free_data); no agreement row. */
    acc_err (*run)(struct acc_service *svc, struct acc_nego *job, struct acc_error *err);
    void *data;
    void (*free_data)(void *data);
    atomic_bool stop;        /* terminate asked for it */
    bool queued;             /* on the waiting list (under the queue's lock) */
    struct acc_nego *next;   /* waiting list */
    struct acc_nego *active; /* every job not done (the registry) */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;    /* the result is set; no more waiters are taken */
    bool settled; /* and every waiter was called (acc_nego_wait returns) */
    acc_err result;
    struct acc_error err;
    struct acc_nego_waiter *waiters;
    /* A change of a committed agreement (modify_job.c) rather than a
     * negotiation of a Pending one: the request, and the new version once
     * done.  Such a job is not registered (terminate never waits for it). */
    struct acc_modification *mod;
    struct acc_agreement changed;
};

struct svc_queue {
    pthread_mutex_t lock;
    pthread_cond_t work;          /* a job was queued, or stopping */
    pthread_cond_t idle;          /* length fell to 0 */
    struct acc_nego *head, *tail; /* waiting for a worker */
    struct acc_nego *active;      /* every job not done yet, queued or running */
    size_t length;                /* jobs taken and not done (queued or running) */
    size_t limit;                 /* most jobs at once */
    size_t pending, max_pending;  /* of those, ?mode=pending ones */
    pthread_t *workers;
    unsigned n_workers;
    bool stopping;
};

/* An agreement whose links still wait to be provisioned (provision.c). */
struct svc_provision_entry {
    char id[ACC_ID_LEN + 1];
    char last[256]; /* the last failure, logged once */
};

struct svc_provision_retry {
    pthread_mutex_t lock;
    struct svc_provision_entry *v; /* at most one per Observed agreement */
    size_t n, cap;
};

/* Open agreements per user (quota_ledger.c). */
struct ledger_user;
struct svc_ledger {
    pthread_mutex_t lock; /* the list; each user has a lock of their own */
    struct ledger_user *users;
};

/* Node-hours and Mbit-hours per owner (quota_usage.c). */
struct usage_owner;
struct svc_usage {
    pthread_mutex_t lock; /* the list; each owner has a lock of their own */
    struct usage_owner *owners;
};

struct acc_service {
    const struct acc_config *cfg;
    struct acc_store *store;
    struct acc_engine *engine;
    struct acc_resources *adapters; /* of the [site] and [network] sections */
    struct acc_launcher *launcher;
    const struct acc_adapter_ops *const *kinds; /* looked up first (tests); NULL */
    acc_service_precommit_fn precommit;         /* asked before a commit; NULL */
    void *precommit_arg;
    struct svc_provision_retry provision;
    struct acc_jobs jobs; /* the launcher's hooks (jobs.c) */
    struct svc_queue queue;
    struct svc_ledger ledger;
    struct svc_usage usage;
    /* Held while open quotes are counted and a new one is stored, so that
     * concurrent quotes cannot all pass the count (quote.c). */
    pthread_mutex_t quote_lock;
    /* What is being worked on here: holds booked, agreements modified
     * (leftovers.c). */
    pthread_mutex_t busy_lock;
    struct svc_busy *busy;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* housekeeping and close */
    atomic_bool stopping;
    pthread_t housekeeper;
    bool housekeeper_started;
    /* several instances on one database (instances.c) */
    bool shared;                   /* the database is PostgreSQL's */
    char instance[ACC_ID_LEN + 1]; /* this one's id there */
    acc_time started;
    atomic_bool leader;         /* holds the lease 'leader' (always, on a file) */
    atomic_bool new_leader;     /* became the leader: its first duties to do */
    atomic_llong reached_since; /* the database reached at every beat since (0: not now) */
    atomic_llong lease_until;   /* the lease held until then at most (acc_mono_us) */
    /* this clock against the database's, measured at each beat */
    atomic_llong clock_offset_us; /* the database's time minus this clock's */
    atomic_int clock_state;       /* SVC_CLOCK_OK, _WARN (over clock_warn), _REFUSE */
    int64_t clock_logged_us;      /* the beat's: when its state was last logged */
    pthread_t beater;             /* the beat, in a thread of its own */
    bool beater_started;

    /* metrics */
    atomic_uint_least64_t outcomes[OUT__COUNT];
    atomic_uint_least64_t rounds, rollbacks, negotiation_us;
    /* Negotiations by how long they took: svc_negotiation_bounds' buckets
     * (each counts those within it and above the one before), the last
     * for longer ones. */
    atomic_uint_least64_t negotiation_buckets[SVC_NEGOTIATION_BUCKETS + 1];
    atomic_uint_least64_t submitted, rejected_input, refused_busy, refused_quota;
    atomic_uint_least64_t refused_breaker; /* offers for a site whose breaker is open */
    atomic_uint_least64_t pruned_agreements, pruned_quotes; /* [database] retain */
    atomic_uint_least64_t pruned_rejected;                  /* max_rejected_per_user */
    atomic_bool backing_up;                                 /* a backup runs (one at a time) */
};

/* modify_plan.c: what a change books.  One engine item per reservation of
 * the current version with its new amount (the items named anew by the
 * engine; each replaces its old key). */
struct svc_mod_plan {
    struct acc_engine_item items[2 * ACC_MODIFY_MAX + 64];
    char labels[2 * ACC_MODIFY_MAX + 64][96];
    char old_keys[2 * ACC_MODIFY_MAX + 64][ACC_KEY_MAX]; /* what each item replaces */
    size_t n;
    size_t *item_of_comp, *item_of_link; /* SIZE_MAX: none */
    char account[ACC_ACCOUNT_NAME_MAX];  /* [accounts]' for the agreement's user; "": none */
};
/* A component's (a link's) amount after the change m. */
int64_t svc_mod_new_nodes(const struct acc_modification *m, const struct acc_alloc_component *c);
int64_t svc_mod_new_bandwidth(const struct acc_modification *m, const struct acc_alloc_link *l);
/* Checks the names and amounts of m against a and builds the items of p
 * (p->item_of_comp and item_of_link allocated: the caller frees them). */
acc_err svc_mod_make_plan(struct acc_service *svc, const struct acc_agreement *a,
                          const struct acc_modification *m, struct svc_mod_plan *p,
                          struct acc_error *err);
/* What m changes, in words (the version's `change`); NULL: nothing, or no
 * memory. */
char *svc_mod_describe(const struct acc_agreement *a, const struct acc_modification *m,
                       acc_time start, acc_time end);
/* Fills a (the current version) with the new one, booked as p says. */
acc_err svc_mod_apply(struct acc_agreement *a, const struct acc_modification *m,
                      const struct svc_mod_plan *p, acc_time start, acc_time end);

/* modify.c: the checks of a change that need no store (an id that can
 * exist, something to change), and the change itself, run by a
 * negotiation worker */
acc_err svc_modify_check(const char *id, const struct acc_modification *m, struct acc_error *err);
acc_err svc_modify_run(struct acc_service *svc, const char *id, const struct acc_modification *m,
                       struct acc_agreement *out, struct acc_error *err);

/* quota_ledger.c: [quota] max_agreements.  Admission takes a place for
 * agreement id among w's open agreements (its candidates and id itself not
 * counted); ACC_ERR_QUOTA when they are at the limit.  An unkeyed
 * submission is admitted before its row is written; a keyed one is stored
 * first as a candidate and admitted after.  Forget gives back the place
 * (or the candidacy) of an agreement never stored, or refused. */
void svc_ledger_init(struct svc_ledger *l);
void svc_ledger_release(struct svc_ledger *l);
acc_err svc_ledger_admit(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                         struct acc_error *err);
acc_err svc_ledger_candidate(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                             struct acc_error *err);
void svc_ledger_forget(struct acc_service *svc, const struct svc_quota_who *w, const char *id);

struct acc_plan;
/* quota_usage.c: [quota] max_node_hours and max_mbit_hours.  What an
 * agreement, a change or a hold would book: the items of its plan, each
 * from start to end (a negotiation's start is not known yet: from now,
 * for its duration). */
struct svc_charge {
    enum acc_resource_kind kind;
    const char *name; /* the site or link (borrowed) */
    int64_t amount;
    acc_time start, end;
};
/* Admission of id (an agreement, a change of one, a hold) with what it
 * would book: the owner's reservations in the store (its open agreements'
 * and held quotes') and those admitted in this process and not yet
 * recorded, under the owner's lock, so that concurrent admissions see each
 * other.  ACC_ERR_QUOTA (nothing kept) when a site or link would be over
 * its limit.  The store's reservations of id itself are what it held
 * before: a change counts instead of them, and may keep or shrink what
 * is over.  Forget once
 * the outcome is in the store (or nothing was booked).  Check is the same
 * without keeping a place (an Advisory quote, a first look at an offer). */
acc_err svc_usage_admit(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                        const struct svc_charge *c, size_t n, struct acc_error *err);
acc_err svc_usage_check(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                        const struct svc_charge *c, size_t n, struct acc_error *err);
void svc_usage_forget(struct acc_service *svc, const struct svc_quota_who *w, const char *id);
/* The first look at an offer, before anything is stored: the node-hours
 * of its components that name a site (from earliest, for its duration);
 * the plan's items are admitted once the planner has chosen every site. */
acc_err svc_offer_usage(struct acc_service *svc, const struct svc_quota_who *w,
                        const struct acc_offer *o, acc_time earliest, struct acc_error *err);
/* The charges of a plan's items for duration from now (free() them; NULL
 * when the plan has no item or memory ran out: *n says which). */
struct svc_charge *svc_plan_charges(const struct acc_plan *p, int64_t duration, size_t *n);
void svc_usage_init(struct svc_usage *u);
void svc_usage_release(struct svc_usage *u);
/* The owners kept now (those with a negotiation under way), for tests. */
size_t svc_usage_kept(struct svc_usage *u);
/* The store's owner of w's agreements and quotes. */
struct acc_store_owner svc_quota_owner(const struct svc_quota_who *w);
/* [database] max_rejected_per_user: after a of w was recorded Rejected,
 * the owner's oldest Rejected agreements beyond the bound go (logged on
 * failure). */
void svc_prune_rejected(struct acc_service *svc, const struct acc_agreement *a);

/* registry.c */
struct acc_adapter *svc_site_adapter(void *ctx, const char *site);
struct acc_adapter *svc_network_adapter(void *ctx, const char *network);
struct acc_adapter *svc_adapter_named(struct acc_service *svc, const char *name);
/* Cancels bookings at their adapters concurrently and journals each
 * outcome; returns how many were not cancelled. */
size_t svc_cancel_bookings(struct acc_service *svc, struct acc_booking *b, size_t n);

/* queue.c */
acc_err svc_queue_start(struct acc_service *svc, struct acc_error *err);
/* Reserves a place for a job; ACC_ERR_OVERLOADED when the queue (or the
 * pending-mode share) is full.  Undo with svc_queue_unreserve. */
acc_err svc_queue_reserve(struct acc_service *svc, bool pending_mode, struct acc_error *err);
void svc_queue_unreserve(struct acc_service *svc, bool pending_mode);
/* A job for a stored Pending agreement; it takes the offer.  Registered at
 * once (terminate and idempotent replays find it by id). */
struct acc_nego *svc_nego_new(struct acc_service *svc, const struct acc_agreement *a,
                              struct acc_offer *offer, bool pending_mode);
/* A job of another kind (see acc_nego.run), not registered (no agreement);
 * it takes data (freed with the job, or by free_data at once on failure). */
struct acc_nego *svc_nego_new_run(struct acc_service *svc, const char *id,
                                  acc_err (*run)(struct acc_service *, struct acc_nego *,
                                                 struct acc_error *),
                                  void *data, void (*free_data)(void *));
/* A job that is already done, for an idempotent replay of a finished one. */
struct acc_nego *svc_nego_done(struct acc_service *svc, const char *id, acc_err result,
                               const struct acc_error *err);
/* Puts a reserved, registered job on the queue (the queue holds a reference). */
void svc_queue_push(struct acc_service *svc, struct acc_nego *job);
/* A job for a change of the committed agreement id (not registered); it
 * copies m. */
struct acc_nego *svc_nego_modify_new(struct acc_service *svc, const char *id,
                                     const struct acc_modification *m);
/* Ends a registered job that never ran (its row could not be written). */
void svc_nego_abort(struct acc_nego *job, acc_err rc, const struct acc_error *err);
/* The job of a Pending agreement in this process, with a reference; NULL. */
struct acc_nego *svc_queue_find(struct acc_service *svc, const char *id);
/* Asks a job to stop; one still waiting ends at once (Terminated). */
void svc_queue_stop_job(struct acc_service *svc, struct acc_nego *job);
void svc_queue_init(struct svc_queue *q);
void svc_queue_release(struct svc_queue *q);
/* Shutdown: no more jobs; waiting ones end Interrupted at once; running
 * ones see `stopping` and roll back. */
void svc_queue_stop(struct acc_service *svc);
/* Whether every job ended within the time. */
bool svc_queue_wait_idle(struct acc_service *svc, int64_t timeout_us);
void svc_queue_join(struct acc_service *svc);

/* negotiate.c */
/* The engine's hooks of a negotiation or a modification: the store's
 * journal, the trace collected in trace, stopped by the job's stop (job
 * NULL: a modification, which has none) or a shutdown. */
struct svc_nego_ctx {
    struct acc_service *svc;
    struct acc_nego *job;
    struct acc_trace trace;
};
struct acc_engine_hooks svc_nego_hooks(struct svc_nego_ctx *ctx);
acc_err svc_negotiate(struct acc_service *svc, struct acc_nego *job, struct acc_error *err);

/* settle.c: recording how a negotiation ended. */
/* Sets a's end as Rejected with code's symbol as its fault code and reason. */
void svc_reject(struct acc_agreement *a, acc_err code, const char *reason);
/* Lets go of a's run (an agreement that will not start a job). */
void svc_drop_run(struct acc_agreement *a);
/* ACC_ERR_INTERRUPTED, with err saying so, when agreement id was ended by
 * recovery (another instance took this one for stopped while the database
 * was out of reach) rather than terminated by a client; else ACC_OK. */
acc_err svc_ended_by_recovery(struct acc_service *svc, const char *id, struct acc_error *err);
/* The answer to the write that commits agreement id was lost (the
 * connection went in its middle): it may have been made.  Asks the store
 * for the agreement until it answers (every 250 ms, 20 s at most): ACC_OK
 * with its state *st and *made (Observed, or already past it), or
 * ACC_ERR_STORAGE_AWAY when it never did. */
acc_err svc_made_after_lost(struct acc_service *svc, const char *id, bool *made,
                            enum acc_state *st);
/* One step of waiting for a lost answer: false when the wait is over (20
 * s in all, *waited_ms counting, or accordd stopping), else a pause of
 * 250 ms, added to *waited_ms. */
bool svc_lost_wait(struct acc_service *svc, int *waited_ms);
/* Records the end of a, which did not become Observed (Rejected, or
 * Terminated when stopped), from the states in `from`, with the trace if
 * not NULL.  When a terminate came first (the store answers ACC_ERR_STATE)
 * it is recorded as Terminated from PendingAndTerminating instead, with
 * terminated_reason (NULL keeps a's reason), and *terminated is set; if
 * recovery ended it instead, ACC_ERR_INTERRUPTED (svc_ended_by_recovery).
 * Returns the last write's code; err says why it failed. */
acc_err svc_settle_rejected(struct acc_service *svc, struct acc_agreement *a, unsigned from,
                            const struct acc_trace *trace, const char *terminated_reason,
                            bool *terminated, struct acc_error *err);
/* Cancels booked items whose run could not be recorded (journalled; the
 * items' bookings get the outcome). */
void svc_undo_items(struct acc_service *svc, struct acc_engine_item *items, size_t n);
/* Records the end of a Pending agreement that never negotiated (shutdown or
 * terminate while it waited). */
acc_err svc_settle_unstarted(struct acc_service *svc, struct acc_agreement *a, bool terminated,
                             struct acc_error *err);
/* The check before a commit (acc_service_options.precommit) of a, as it
 * would be recorded; ACC_OK when there is none.  The error says that
 * nothing was committed, and why. */
acc_err svc_precommit(struct acc_service *svc, struct acc_agreement *a, struct acc_error *err);
/* After a commit: provisioning of its links, and its launch scheduled. */
void svc_after_commit(struct acc_service *svc, const struct acc_agreement *a);

/* A reservation that answered after its time limit (the engine's orphan hook). */
void svc_hook_orphan(void *ctx, struct acc_adapter *ad, const struct acc_booking *b);

/* submit.c: the window an offer asks for, or a 4xx error. */
acc_err svc_window(const struct acc_service *svc, const struct acc_offer *o, acc_time now,
                   acc_time *earliest, acc_time *deadline, struct acc_error *err);
/* submit.c: *dst becomes a copy of src without its token, as an agreement
 * keeps it; -1 when memory ran out. */
int svc_identity_keep(struct acc_identity *dst, const struct acc_identity *src);
/* submit.c: the initiator's quota for one agreement: the offer's limits
 * (ACC_ERR_QUOTA), and the window's deadline cut at max_advance. */
acc_err svc_offer_quota(struct acc_service *svc, const struct acc_offer *o, acc_time now,
                        acc_time *deadline, struct acc_error *err);

struct acc_plan;
/* negotiate.c: fills a's allocation from the plan (reservations when booked). */
acc_err svc_fill_allocation(struct acc_agreement *a, const struct acc_plan *p, bool booked);

/* quote.c, quote_hold.c: open quotes whose time is up become Expired, and a
 * held one's reservations are released (housekeeping, after a restart too). */
void svc_quote_expire(struct acc_service *svc);
/* quote_hold.c, at start-up (on a shared database by the leader, for the
 * instances not seen since alive_since): quotes whose hold a stop cut short
 * become Rejected, so that the sweep that follows releases what they
 * booked. */
void svc_quote_recover(struct acc_service *svc, acc_time alive_since);
/* The quote id, whose hold was cut short, Rejected (why: by what); with
 * alive_since (not 0) only while its instance is still not seen since. */
acc_err svc_quote_reject_cut(struct acc_service *svc, const char *id, acc_time alive_since,
                             const char *why);

/* quote.c: the checks of acc_service_quote before anything is stored. */
acc_err svc_quote_check(struct acc_service *svc, const struct acc_quote_request *rq, acc_time now,
                        acc_time *earliest, acc_time *deadline, struct acc_error *err);
struct acc_engine_request;
/* Books option k of a stored Advisory quote and records it Held (or
 * Rejected when no slot could be booked). */
acc_err svc_quote_hold(struct acc_service *svc, struct acc_quote *q, struct acc_plan *plan,
                       struct acc_engine_request *rq, int k, struct acc_error *err);

/* quote_commit.c: claims a Held quote of the initiator for the new
 * agreement (ACC_ERR_NOT_FOUND, ACC_ERR_STATE: not Held, or another request
 * commits it); unclaim undoes it.  svc_quote_commit is the job of such an
 * agreement (instead of svc_negotiate). */
acc_err svc_quote_claim(struct acc_service *svc, const char *quote, const char *initiator,
                        const char *agreement, struct acc_error *err);
void svc_quote_unclaim(struct acc_service *svc, const char *quote, const char *agreement);
acc_err svc_quote_commit(struct acc_service *svc, struct acc_nego *job, struct acc_error *err);

/* terminate.c */
acc_err svc_cancel_committed(struct acc_service *svc, const char *id, struct acc_error *err);
acc_err svc_release_reservations(struct acc_service *svc, const char *id, struct acc_error *err);

/* housekeeping.c */
acc_err svc_recover(struct acc_service *svc, struct acc_error *err);
void *svc_housekeeping_main(void *arg);
/* Ends negotiations nobody runs any more (Pending: Rejected, Interrupted;
 * PendingAndTerminating: Terminated); the sweep then releases their
 * reservations.  With alive_since (not 0) each is a dead instance's, and
 * is ended only if its instance is still not seen since then. */
void svc_end_interrupted(struct acc_service *svc, char (*ids)[ACC_ID_LEN + 1], size_t n,
                         acc_time alive_since);

/* leftovers.c: at every housekeeping pass, on either database, what this
 * process left unfinished when a write failed (the database away, a full
 * disk) and nothing works on any more: its negotiations ended as
 * interrupted, its modifications' marks cleared, its cut-short holds
 * Rejected; the sweep then releases what they booked. */
void svc_leftovers(struct acc_service *svc);
/* A hold being booked, an agreement being modified here: listed (on its
 * worker's stack) from before its first write to after its last, so that
 * svc_leftovers leaves it alone. */
struct svc_busy {
    struct svc_busy *next;
    const char *id; /* the quote's or the agreement's (borrowed) */
};
void svc_busy_enter(struct acc_service *svc, struct svc_busy *b, const char *id);
void svc_busy_leave(struct acc_service *svc, struct svc_busy *b);
bool svc_busy_has(struct acc_service *svc, const char *id);

/* instances.c: several instances on one database */
acc_err svc_instance_open(struct acc_service *svc, struct acc_error *err);
/* This instance's row and the leader lease renewed (nothing else: in a
 * thread of its own, svc_instance_main, so that nothing slow delays it). */
void svc_instance_beat(struct acc_service *svc);
void *svc_instance_main(void *arg);
/* At a clean stop, once nothing of this instance negotiates, launches or
 * watches a job: the leases let go and the row marked as a dead
 * instance's, so that the others take over at their next beat. */
void svc_instance_leave(struct acc_service *svc);
/* At every housekeeping pass: negotiations another instance was asked to
 * terminate stopped, runs followed (runs.c), and a new leader's links
 * provisioned again (those whose end was lost: svc_leftovers). */
void svc_instance_duties(struct acc_service *svc);
/* Whether this instance may judge others dead: it leads, and it has
 * reached the database for longer than an instance may go unseen (after
 * an outage every instance needs that long to renew its row). */
bool svc_instance_may_judge(struct acc_service *svc);
/* Whether this instance leads now: it holds the lease and its last renewal
 * has not run out (always on a file). */
bool svc_instance_leads(struct acc_service *svc);
/* The leader ends the negotiations of dead instances. */
void svc_instance_recover(struct acc_service *svc);
/* Seconds between two beats (and housekeeping passes). */
int64_t svc_instance_period(const struct acc_service *svc);
enum { SVC_CLOCK_OK, SVC_CLOCK_WARN, SVC_CLOCK_REFUSE };
/* ACC_ERR_STORAGE_AWAY (a 503 with Retry-After, its message naming the
 * skew) while this instance's clock is further from the database's than
 * [database] clock_refuse: it negotiates nothing then (a new offer, a
 * modification, a quote); ACC_OK otherwise. */
acc_err svc_instance_clock_refuse(struct acc_service *svc, struct acc_error *err);
/* Seconds after which an instance that did not renew its row is dead (and
 * for which a lease is taken). */
int64_t svc_instance_dead_after(const struct acc_service *svc);

/* provision.c */
/* Hands the flow of each of a's link reservations whose network adapter
 * provisions (ACC_CAP_PROVISION) to that adapter; every one is tried and
 * the first failure is returned.  Nothing to do is success. */
acc_err svc_provision(struct acc_service *svc, const struct acc_agreement *a,
                      struct acc_error *err);
/* After a commit: svc_provision, and on failure a log line and a place on
 * the retry list. */
void svc_provision_committed(struct acc_service *svc, const struct acc_agreement *a);
/* At start-up: every Observed agreement whose end is ahead and that has a
 * link to provision goes on the retry list (housekeeping provisions it). */
acc_err svc_provision_recover(struct acc_service *svc, struct acc_error *err);
/* Housekeeping: one attempt for each agreement on the list; it leaves the
 * list once provisioned, no longer Observed, or past its end. */
void svc_provision_retry(struct acc_service *svc);
size_t svc_provision_waiting(struct acc_service *svc);
void svc_provision_init(struct svc_provision_retry *r);
void svc_provision_release(struct svc_provision_retry *r);
/* The guarantee state of a reserved link l (from its network adapter's
 * provision_status; NotDetermined without counters when the adapter does
 * not provision).  reason is storage for out->reason. */
void svc_link_guarantee(struct acc_service *svc, const struct acc_alloc_link *l,
                        struct acc_guarantee_view *out, char *reason, size_t reason_len);

/* runs.c */
/* The launcher with its hooks; on a file it takes every open run at once,
 * on a shared database the beat hands it its runs (svc_runs_beat). */
acc_err svc_launcher_open(struct acc_service *svc, struct acc_error *err);
/* What holds the job of id: this instance's launcher, or (several
 * instances) the run as stored, whichever instance holds it. */
enum acc_launcher_held svc_run_held(struct acc_service *svc, const char *id);
/* Several instances, at every beat: the runs this instance holds follow
 * their agreements as stored (terminated, modified through another
 * instance); the leader takes the runs of dead instances. */
void svc_runs_beat(struct acc_service *svc);

#endif
