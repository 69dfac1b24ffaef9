/* SPDX-License-Identifier: Apache-2.0 */
/* engine.h - the common-timeslot negotiation (SPEC section 5).
 *
 * Given items (a resource at an adapter: N nodes of a site, M Mbit/s of a
 * link), a window and a duration, the engine finds the earliest start T at
 * which every item is free for the duration, books all of them at T, verifies
 * each booking, and rolls everything back and retries when one is not at T.
 *
 *   1. T := earliest.  Preview every item over [T, deadline), concurrently.
 *   2. intersect: intersect the frames of all items and jump to the earliest
 *      common start (usually one round).  iterative (VIOLA): each item gives
 *      only its earliest start; when they differ T := the latest and repeat.
 *   3. Journal the intents, reserve every item at T concurrently, journal the
 *      outcomes, then verify each reservation by reading it back.
 *   4. Any reservation not at T (another user was faster, the resource manager
 *      placed it later, it shrank): cancel all, T := the latest effective
 *      start, repeat.  A refusal or failure of an adapter: cancel all and stop.
 *
 * The engine knows nothing of HTTP, XML or SQL: durability and the trace are
 * hooks that the caller implements.  Rounds are bounded; every adapter call
 * has a time limit, and a reservation whose answer came too late is handed to
 * the orphan hook to be cancelled.
 */
#ifndef ACC_ENGINE_H
#define ACC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../adapters/adapter.h"
#include "../../lib/common/error.h"
#include "../../lib/model/model.h"

struct acc_engine;

struct acc_engine_options {
    unsigned max_threads; /* most concurrent adapter calls (0: a default) */
    /* The bulkhead: most calls of one adapter in flight on the engine's
     * threads, abandoned ones included (0: no bound); the calls of one
     * round (one acc_engine_run_calls) to one adapter count as one.  A call
     * over it fails at once (ACC_ERR_UNAVAILABLE, naming the adapter). */
    unsigned max_calls_per_adapter;
    /* The circuit breaker: after this many time-outs or unreachable answers
     * of an adapter in a row (0: never), its calls fail at once for
     * breaker_cooldown_us (0: 30 s); then one probe call goes through, and
     * its answer closes the breaker or opens it again. */
    unsigned breaker_failures;
    int64_t breaker_cooldown_us;
    /* A reservation that succeeded after its negotiation stopped waiting for
     * it: the callee cancels it (b carries its key and local id). */
    void (*orphan)(void *ctx, struct acc_adapter *ad, const struct acc_booking *b);
    void *orphan_ctx;
};

acc_err acc_engine_new(const struct acc_engine_options *opt, struct acc_engine **out,
                       struct acc_error *err);
/* Waits for every adapter call still running (abandoned ones included).
 * After acc_engine_interrupt it waits half a second at most: false when
 * calls still run then; the engine, and whatever the calls use (the
 * adapters, the orphan hook's context), must then stay until the process
 * ends. */
bool acc_engine_free(struct acc_engine *e);

/* An adapter's bulkhead and circuit breaker, for metrics and health. */
enum acc_breaker_state {
    ACC_BREAKER_CLOSED,    /* calls go through */
    ACC_BREAKER_OPEN,      /* calls fail at once until the cool-down ends */
    ACC_BREAKER_HALF_OPEN, /* one probe call is under way; others fail at once */
};

#define ACC_ENGINE_GUARD_NAME 64

struct acc_engine_guard_state {
    char name[ACC_ENGINE_GUARD_NAME];
    enum acc_breaker_state state;
    unsigned in_flight;                  /* calls holding a slot of the bulkhead */
    unsigned failures;                   /* time-outs or unreachable answers in a row */
    uint64_t refused_busy, refused_open; /* calls refused at once, by reason */
    uint64_t opened;                     /* times the breaker opened */
    int64_t retry_in_s;                  /* OPEN: seconds until a probe may go */
};

/* ACC_OK unless adapter ad's circuit breaker is open (or half-open, its
 * probe under way): then ACC_ERR_UNAVAILABLE in err, naming it and when it
 * is tried again (err->retry_after), counted as a call refused.  For a
 * caller that would rather not start work that needs the adapter. */
acc_err acc_engine_check(struct acc_engine *e, struct acc_adapter *ad, struct acc_error *err);

/* Adapter `adapter`'s state (all zero, CLOSED, before its first call). */
void acc_engine_guard(struct acc_engine *e, const char *adapter,
                      struct acc_engine_guard_state *out);

/* Each adapter's bulkhead and circuit breaker (breaker.c): the engine's
 * own, declared here for its tests.  The clock is the caller's. */

#define ACC_BREAKER_DEFAULT_COOLDOWN_US (30 * (int64_t)1000000)

struct acc_breaker_cfg {
    unsigned max_calls; /* slots per adapter; 0: no bound */
    unsigned failures;  /* failures in a row that open it; 0: never */
    int64_t cooldown_us;
};

enum { ACC_BREAKER_REFUSED_BUSY, ACC_BREAKER_REFUSED_OPEN };

/* The guards of all adapters, by name; thread-safe. */
struct acc_breaker;

acc_err acc_breaker_new(const struct acc_breaker_cfg *cfg, struct acc_breaker **out,
                        struct acc_error *err);
void acc_breaker_free(struct acc_breaker *b);

/* May a call of adapter `name` go now (now_us: monotonic)?  slot: it would
 * hold one of the bulkhead's slots (a call on the engine's threads) until
 * acc_breaker_release.  ACC_OK, with *probe set when it is the probe of a
 * half-open breaker; else ACC_ERR_UNAVAILABLE (or ACC_ERR_NOMEM) in err,
 * naming the adapter and when to retry (err->retry_after). */
acc_err acc_breaker_admit(struct acc_breaker *b, const char *name, bool slot, int64_t now_us,
                          bool *probe, struct acc_error *err);
/* Would a call of `name` be refused as open now?  Counted as a refusal
 * when so (the caller makes no call); the bulkhead is not asked. */
acc_err acc_breaker_check(struct acc_breaker *b, const char *name, int64_t now_us,
                          struct acc_error *err);
/* The slot of an admitted call is free again (its adapter returned). */
void acc_breaker_release(struct acc_breaker *b, const char *name);
/* The answer of an admitted call (ACC_ERR_TIMEOUT: abandoned at its time
 * limit), once per call. */
void acc_breaker_outcome(struct acc_breaker *b, const char *name, acc_err rc, bool probe,
                         int64_t now_us);
/* Whether an answer counts against the adapter: a time-out or unreachable. */
bool acc_breaker_failure(acc_err rc);
/* name's state; false (all zero) when it was never called. */
bool acc_breaker_get(struct acc_breaker *b, const char *name, int64_t now_us,
                     struct acc_engine_guard_state *out);

/* Shutdown: every wait for an adapter call, now and later, returns at once
 * (the calls count as timed out). */
void acc_engine_interrupt(struct acc_engine *e);

/* One thing to book. */
struct acc_engine_item {
    struct acc_adapter *adapter; /* borrowed */
    struct acc_resource res;     /* res.name is borrowed */
    const char *label;           /* "site caesar": for the trace and reasons */
    /* A change of a committed agreement: the key of the reservation this
     * item replaces (borrowed), or NULL.  Previews and reservations count
     * its amount as free where the adapter can (ACC_CAP_REPLACE); the
     * caller cancels it once the change is recorded. */
    const char *replaces;
    /* After AGREED: the booking (key, local id, times) and node names. */
    struct acc_booking booking;
    char *nodes; /* malloc'd or NULL; freed by acc_engine_items_release */
};

void acc_engine_items_release(struct acc_engine_item *items, size_t n);

struct acc_engine_hooks {
    /* Records the bookings' current states.  The intents are recorded with
     * durable set, before any reservation of a round is requested: the call
     * must not return before they are on disk.  Outcomes and cancellations
     * follow without durable: they must be recorded in order, but need not
     * be waited for (a lost outcome still leaves the intent, and recovery
     * cancels by key).  A failure stops the negotiation (after rollback). */
    acc_err (*journal)(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                       struct acc_error *err);
    /* One trace event; the callee copies what it keeps.  May be NULL. */
    void (*trace)(void *ctx, const struct acc_trace_event *ev);
    /* True when the negotiation should stop (terminate, shutdown).  May be NULL. */
    bool (*stopped)(void *ctx);
    void *ctx;
};

struct acc_engine_request {
    const char *agreement;       /* its id: reservation keys derive from it */
    acc_time earliest, deadline; /* start >= earliest, start + duration <= deadline */
    int64_t duration;
    enum acc_strategy strategy; /* ACC_STRATEGY_INTERSECT or ACC_STRATEGY_ITERATIVE */
    unsigned max_rounds;
    int64_t call_timeout_us; /* per adapter call */
    struct acc_engine_item *items;
    size_t n_items;
    struct acc_engine_hooks hooks;
};

enum acc_engine_outcome {
    ACC_ENGINE_AGREED,  /* every item booked at the common start */
    ACC_ENGINE_NO_SLOT, /* no common slot in the window (or rounds exhausted) */
    ACC_ENGINE_FAILED,  /* an adapter or the journal failed; all rolled back */
    ACC_ENGINE_STOPPED, /* stopped by the hook; all rolled back */
};

struct acc_engine_result {
    enum acc_engine_outcome outcome;
    acc_time start, end;
    unsigned rounds;    /* preview rounds */
    unsigned rollbacks; /* reservation rounds undone */
    /* For NO_SLOT and FAILED: the code and one line per cause. */
    struct acc_error err;
};

/* Runs the negotiation.  Returns ACC_OK whatever the outcome (see res);
 * an error only for a bad request. */
acc_err acc_engine_negotiate(struct acc_engine *e, struct acc_engine_request *req,
                             struct acc_engine_result *res);

/* One preview round only: the earliest common start of the items from
 * req->earliest (-1 if none), booking nothing.  The planner uses it to choose
 * sites.  Fails when an adapter fails. */
acc_err acc_engine_probe(struct acc_engine *e, const struct acc_engine_request *req,
                         acc_time *start, struct acc_error *err);

/* Preview only (a quote): one preview round of every item from
 * req->earliest to req->deadline, concurrently, booking nothing; out[i]
 * receives item i's free frames (req->n_items of them; release each with
 * acc_frames_release).  Fails when an adapter fails. */
acc_err acc_engine_preview_items(struct acc_engine *e, const struct acc_engine_request *req,
                                 struct acc_frames *out, struct acc_error *err);

/* One adapter's preview under the time limit (for GET /sites/{site}/preview). */
acc_err acc_engine_preview(struct acc_engine *e, struct acc_adapter *ad,
                           const struct acc_resource *res, acc_time from, acc_time until,
                           int64_t duration, int64_t timeout_us, struct acc_frames *out,
                           struct acc_error *err);

/* Cancels bookings concurrently, each at its adapter (ads[i]) by key and local
 * id, under the time limit.  Each booking's state becomes CANCELLED or
 * CANCEL_FAILED (with the reason in its error).  Returns the number that
 * could not be cancelled. */
size_t acc_engine_cancel_all(struct acc_engine *e, struct acc_adapter *const *ads,
                             struct acc_booking *b, size_t n, int64_t timeout_us);

/* The earliest t >= from such that [t, t + duration) lies within a frame of
 * every one of the n previews (sorted, disjoint frames); -1 if none. */
acc_time acc_engine_common_start(const struct acc_frames *previews, size_t n, acc_time from,
                                 int64_t duration);

#endif
