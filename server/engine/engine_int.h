/* SPDX-License-Identifier: Apache-2.0 */
/* engine_int.h - shared by the engine's files; nothing outside
 * server/engine/ includes it.
 *
 *   engine.c          the engine's life; the common start of frames
 *   engine_call.c     adapter calls, concurrent under a time limit;
 *                     cancel_all, preview, calls abandoned at their limit
 *   engine_nego.c     the negotiation loop: preview rounds, the decision,
 *                     the probe
 *   engine_reserve.c  booking at a common start: the reserve round
 *                     (journal, reserve), the verify round, rollback
 *   breaker.c         each adapter's bulkhead and circuit breaker
 */
#ifndef ACC_ENGINE_INT_H
#define ACC_ENGINE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct acc_engine {
    struct acc_pool *pool;
    struct acc_breaker *breaker;
    void (*orphan)(void *ctx, struct acc_adapter *ad, const struct acc_booking *b);
    void *orphan_ctx;
};

enum acc_engine_op {
    ACC_ENGINE_OP_PREVIEW,
    ACC_ENGINE_OP_RESERVE,
    ACC_ENGINE_OP_QUERY,
    ACC_ENGINE_OP_CANCEL
};

/* A slot of an adapter's bulkhead (breaker.c), shared by the calls of one
 * batch to that adapter: a negotiation holds one slot per adapter however
 * many of its items the adapter has; the last of them to return frees it. */
struct acc_engine_slot {
    atomic_uint refs;
    struct acc_breaker *breaker;
    struct acc_adapter *ad;
};

/* One adapter call.  Heap-allocated so that a call abandoned after its time
 * limit can finish on its own and clean up after itself. */
struct acc_engine_call {
    enum acc_engine_op op;
    struct acc_engine *eng;
    struct acc_adapter *ad;
    struct acc_resource res;
    char res_name[128];
    acc_time from, until;
    int64_t duration;
    struct acc_booking booking;   /* key, local id; for an orphan */
    char replaces[ACC_KEY_MAX];   /* the item's replaces, or "" */
    bool here;                    /* run on the caller's thread (acc_adapter_prompt) */
    bool refused;                 /* not run: the breaker or the bulkhead said no (rc, err) */
    struct acc_engine_slot *slot; /* its adapter's bulkhead slot, held until it returns */
    bool probe;                   /* the probe of a half-open breaker */
    /* results */
    acc_err rc;
    struct acc_error err;
    struct acc_frames frames;
    struct acc_reservation rsv;
    int64_t elapsed_us;
};

void acc_engine_call_free(struct acc_engine_call *c);

/* Runs the calls concurrently under one time limit.  Calls that did not
 * finish are set to NULL in calls[] (they now belong to their worker) and
 * reported in timed_out[].  Calls of adapters that answer at once run on
 * the caller's thread. */
void acc_engine_run_calls(struct acc_engine *e, struct acc_engine_call **calls, size_t n,
                          int64_t timeout_us, bool *timed_out);

/* Cancels the bookings concurrently; elapsed[i] (may be NULL) gets each
 * call's time.  Returns how many could not be cancelled; without memory
 * that is all of them (housekeeping retries). */
size_t acc_engine_cancel_many(struct acc_engine *e, struct acc_adapter *const *ads,
                              struct acc_booking *b, size_t n, int64_t timeout_us,
                              int64_t *elapsed);

/* One negotiation (engine_nego.c runs it, engine_reserve.c books). */
struct acc_engine_nego {
    struct acc_engine *e;
    struct acc_engine_request *req;
    struct acc_engine_result *res;
    char nonce[8];
    unsigned round;
    struct acc_engine_call **calls;
    bool *timed_out;
};

/* One trace event through the hook, if there is one. */
void acc_engine_trace(struct acc_engine_nego *g, enum acc_trace_kind kind,
                      const struct acc_engine_item *it, acc_time from, acc_time until,
                      acc_time result, acc_err status, int64_t elapsed_us, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

bool acc_engine_stopped(struct acc_engine_nego *g);

/* The kind of error the caller sees for an adapter's failure rc: the kinds
 * it can act on keep theirs (unreachable or late: retry; the storage away; a
 * site's refusal of the user: ACC_ERR_FORBIDDEN, which names the site and is
 * no fault of the server); anything else is the adapter's (ACC_ERR_ADAPTER).
 * Kinds, not statuses: the HTTP layer picks those. */
acc_err acc_engine_failure_kind(acc_err rc);

/* Sets the result's outcome and error; returns ACC_OK. */
acc_err acc_engine_fail(struct acc_engine_nego *g, enum acc_engine_outcome outcome, acc_err code,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Makes one call of `op` per item over [from, until); false (nothing left
 * allocated) when out of memory. */
bool acc_engine_calls_new(struct acc_engine_nego *g, enum acc_engine_op op, acc_time from,
                          acc_time until);
void acc_engine_calls_free(struct acc_engine_nego *g);

/* Books every item at t and reads each booking back.  Returns 1 when all
 * are at t, 0 when the round must be repeated from *next, -1 when the
 * negotiation ends (result set). */
int acc_engine_reserve_all(struct acc_engine_nego *g, acc_time t, acc_time *next);

#endif
