/* SPDX-License-Identifier: Apache-2.0 */
/* engine_call.c - adapter calls run concurrently under a time limit: one
 * round's calls, the cancels of a rollback, a single preview, and what
 * becomes of a call that answers after its negotiation stopped waiting. */
#include "engine.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/pool.h"
#include "../../lib/common/strutil.h"
#include "engine_int.h"

/* One call of the slot's is done with it; the last frees it. */
static void slot_put(struct acc_engine_slot *slot)
{
    if (slot && atomic_fetch_sub(&slot->refs, 1) == 1) {
        acc_breaker_release(slot->breaker, acc_adapter_name(slot->ad));
        free(slot);
    }
}

void acc_engine_call_free(struct acc_engine_call *c)
{
    if (!c)
        return;
    slot_put(c->slot); /* a call that never ran (abandoned before it started) */
    acc_frames_release(&c->frames);
    acc_reservation_release(&c->rsv);
    free(c);
}

static void call_run(void *arg)
{
    struct acc_engine_call *c = arg;
    int64_t t0 = acc_mono_us();
    acc_error_clear(&c->err);
    switch (c->op) {
    case ACC_ENGINE_OP_PREVIEW:
        c->rc = acc_adapter_preview_replacing(c->ad, c->replaces[0] ? c->replaces : NULL, &c->res,
                                              c->from, c->until, c->duration, &c->frames, &c->err);
        break;
    case ACC_ENGINE_OP_RESERVE:
        c->rc = acc_adapter_reserve_replacing(c->ad, c->booking.key,
                                              c->replaces[0] ? c->replaces : NULL, &c->res, c->from,
                                              c->duration, &c->rsv, &c->err);
        break;
    case ACC_ENGINE_OP_QUERY:
        c->rc = acc_adapter_query(c->ad, c->booking.key,
                                  c->booking.local_id[0] ? c->booking.local_id : NULL, &c->rsv,
                                  &c->err);
        break;
    case ACC_ENGINE_OP_CANCEL:
        c->rc = acc_adapter_cancel(c->ad, c->booking.key,
                                   c->booking.local_id[0] ? c->booking.local_id : NULL, &c->err);
        break;
    }
    c->elapsed_us = acc_mono_us() - t0;
    /* its adapter returned: done with the slot, abandoned or not (c is the
     * worker's alone once abandoned, and stays until call_abandoned) */
    slot_put(c->slot);
    c->slot = NULL;
}

/* A call finished after the negotiation stopped waiting.  A reservation that
 * went through must not stay behind: hand it over for cancelling. */
static void call_abandoned(void *arg, bool ran)
{
    struct acc_engine_call *c = arg;
    if (ran && c->op == ACC_ENGINE_OP_RESERVE && c->rc == ACC_OK && c->eng->orphan) {
        acc_strlcpy(c->booking.local_id, c->rsv.local_id, sizeof c->booking.local_id);
        c->booking.eff_start = c->rsv.start;
        c->booking.eff_end = c->rsv.end;
        c->booking.state = ACC_BOOKING_RESERVED;
        acc_log_warn("%s: reservation %s answered after its time limit; cancelling it",
                     acc_adapter_name(c->ad), c->booking.key);
        c->eng->orphan(c->eng->orphan_ctx, c->ad, &c->booking);
    }
    acc_engine_call_free(c);
}

/* A call abandoned at its time limit, for the breaker. */
struct late_call {
    struct acc_adapter *ad;
    bool probe;
};

/* Asks each call's breaker and bulkhead: a call refused gets its error and
 * is not run.  The calls of one adapter in the batch are admitted or refused
 * as one, sharing one slot (the first asks; it alone may be the probe).  The
 * calls of adapters that answer at once (acc_adapter_prompt) hold no slot:
 * they run on the caller's thread. */
static void admit(struct acc_engine *e, struct acc_engine_call **calls, size_t n)
{
    int64_t now = acc_mono_us();
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_call *c = calls[i], *first = NULL;
        c->here = acc_adapter_prompt(c->ad);
        c->slot = NULL;
        c->probe = c->refused = false;
        for (size_t j = 0; j < i && !first; j++) {
            if (calls[j]->ad == c->ad)
                first = calls[j];
        }
        if (first && first->refused) {
            c->refused = true;
            c->rc = acc_error_copy(&c->err, &first->err);
            c->elapsed_us = 0;
            continue;
        }
        if (first) {
            if ((c->slot = first->slot))
                atomic_fetch_add(&c->slot->refs, 1);
            continue;
        }
        const char *name = acc_adapter_name(c->ad);
        c->refused =
            acc_breaker_admit(e->breaker, name, !c->here, now, &c->probe, &c->err) != ACC_OK;
        if (!c->refused && !c->here && !(c->slot = malloc(sizeof *c->slot))) {
            acc_breaker_release(e->breaker, name);
            if (c->probe) /* not called: half-open no longer, open again */
                acc_breaker_outcome(e->breaker, name, ACC_ERR_UNAVAILABLE, true, now);
            acc_error_set(&c->err, ACC_ERR_NOMEM, "out of memory");
            c->refused = true;
        }
        if (c->refused) {
            c->rc = c->err.code;
            c->elapsed_us = 0;
        } else if (c->slot) {
            atomic_init(&c->slot->refs, 1);
            c->slot->breaker = e->breaker;
            c->slot->ad = c->ad;
        }
    }
}

/* Runs the calls concurrently under one time limit.  Calls that did not
 * finish are set to NULL in calls[] (they now belong to their worker) and
 * reported in timed_out[].  The calls of adapters that answer at once
 * (acc_adapter_prompt: the simulators) run on this thread, while the pool
 * runs the others: no hand-over, and nothing they could hang on. */
void acc_engine_run_calls(struct acc_engine *e, struct acc_engine_call **calls, size_t n,
                          int64_t timeout_us, bool *timed_out)
{
    memset(timed_out, 0, n * sizeof *timed_out);
    int64_t deadline = timeout_us > 0 ? acc_mono_us() + timeout_us : 0;
    size_t slow = 0;
    admit(e, calls, n);
    for (size_t i = 0; i < n; i++)
        slow += !calls[i]->here && !calls[i]->refused;
    /* One slow call with no limit: spare the hand-over too.  Without memory
     * for a batch, every call runs here, one by one. */
    struct acc_batch *b = NULL;
    bool *late = NULL;
    size_t *at = NULL;          /* the index in calls[] of each task of the batch */
    struct late_call *w = NULL; /* what the breaker needs of each, once late */
    if (slow > 1 || (slow == 1 && timeout_us > 0)) {
        b = acc_batch_new(e->pool, slow);
        late = calloc(slow, sizeof *late);
        at = calloc(slow, sizeof *at);
        w = calloc(slow, sizeof *w);
        if (!b || !late || !at || !w) {
            acc_batch_free(b, NULL);
            free(late);
            free(at);
            free(w);
            b = NULL;
        }
    }
    for (size_t i = 0, k = 0; b && i < n; i++) {
        if (!calls[i]->here && !calls[i]->refused) {
            w[k] = (struct late_call){calls[i]->ad, calls[i]->probe};
            at[k++] = i;
            acc_batch_submit(b, call_run, call_abandoned, calls[i]);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((!b || calls[i]->here) && !calls[i]->refused)
            call_run(calls[i]);
    }
    if (b) {
        int64_t left = deadline ? deadline - acc_mono_us() : -1;
        acc_batch_wait(b, deadline ? (left > 0 ? left : 0) : -1);
        /* From here on a late call is its worker's: not even read. */
        acc_batch_free(b, late);
        int64_t now = acc_mono_us();
        for (size_t k = 0; k < slow; k++) {
            if (late[k]) {
                timed_out[at[k]] = true;
                calls[at[k]] = NULL;
                acc_breaker_outcome(e->breaker, acc_adapter_name(w[k].ad), ACC_ERR_TIMEOUT,
                                    w[k].probe, now);
            }
        }
        free(late);
        free(at);
        free(w);
    }
    int64_t now = acc_mono_us();
    for (size_t i = 0; i < n; i++) {
        if (calls[i] && !calls[i]->refused)
            acc_breaker_outcome(e->breaker, acc_adapter_name(calls[i]->ad), calls[i]->rc,
                                calls[i]->probe, now);
    }
}

/* Cancels the bookings concurrently; elapsed[i] (may be NULL) gets each
 * call's time.  Returns how many could not be cancelled; without memory
 * that is all of them (housekeeping retries). */
size_t acc_engine_cancel_many(struct acc_engine *e, struct acc_adapter *const *ads,
                              struct acc_booking *b, size_t n, int64_t timeout_us, int64_t *elapsed)
{
    struct acc_engine_call **calls = calloc(n ? n : 1, sizeof *calls);
    bool *late = calloc(n ? n : 1, sizeof *late);
    bool oom = !calls || !late;
    for (size_t i = 0; !oom && i < n; i++) {
        calls[i] = calloc(1, sizeof **calls);
        oom = !calls[i];
        if (!oom) {
            calls[i]->op = ACC_ENGINE_OP_CANCEL;
            calls[i]->eng = e;
            calls[i]->ad = ads[i];
            calls[i]->booking = b[i];
            acc_frames_init(&calls[i]->frames);
        }
    }
    if (!oom)
        acc_engine_run_calls(e, calls, n, timeout_us, late);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_call *c = oom ? NULL : calls[i];
        acc_err rc = c ? c->rc : ACC_ERR_TIMEOUT;
        b[i].state = rc ? ACC_BOOKING_CANCEL_FAILED : ACC_BOOKING_CANCELLED;
        b[i].error[0] = '\0';
        if (rc) {
            failed++;
            acc_strlcpy(b[i].error,
                        oom ? "out of memory"
                        : c ? c->err.msg
                            : "no answer within the time limit",
                        sizeof b[i].error);
        }
        if (elapsed)
            elapsed[i] = c ? c->elapsed_us : timeout_us;
    }
    for (size_t i = 0; calls && i < n; i++)
        acc_engine_call_free(calls[i]);
    free(calls);
    free(late);
    return failed;
}

size_t acc_engine_cancel_all(struct acc_engine *e, struct acc_adapter *const *ads,
                             struct acc_booking *b, size_t n, int64_t timeout_us)
{
    return acc_engine_cancel_many(e, ads, b, n, timeout_us, NULL);
}

acc_err acc_engine_preview(struct acc_engine *e, struct acc_adapter *ad,
                           const struct acc_resource *res, acc_time from, acc_time until,
                           int64_t duration, int64_t timeout_us, struct acc_frames *out,
                           struct acc_error *err)
{
    struct acc_engine_call *c = calloc(1, sizeof *c);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    c->op = ACC_ENGINE_OP_PREVIEW;
    c->eng = e;
    c->ad = ad;
    c->res = *res;
    acc_strlcpy(c->res_name, res->name, sizeof c->res_name);
    c->res.name = c->res_name;
    c->from = from;
    c->until = until;
    c->duration = duration;
    acc_frames_init(&c->frames);
    bool late;
    acc_engine_run_calls(e, &c, 1, timeout_us, &late);
    if (!c)
        return acc_error_set(err, ACC_ERR_TIMEOUT,
                             "adapter %s did not answer within %" PRId64 " ms",
                             acc_adapter_name(ad), timeout_us / 1000);
    acc_err rc = c->rc;
    if (rc) {
        acc_error_copy(err, &c->err);
    } else {
        acc_frames_release(out);
        *out = c->frames;
        acc_frames_init(&c->frames);
    }
    acc_engine_call_free(c);
    return rc;
}
