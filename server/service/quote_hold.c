/* SPDX-License-Identifier: Apache-2.0 */
/* quote_hold.c - held quotes: booking the chosen option, giving a hold
 * back, expiry, and the recovery of holds a stop cut short (part of the
 * service; see service.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "internal.h"
#include "plan.h"

static acc_err hold_journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                            struct acc_error *err)
{
    struct acc_service *svc = ctx;
    return acc_store_journal_put(svc->store, b, n, durable ? 0 : ACC_STORE_NOWAIT, err);
}

static bool hold_stopped(void *ctx)
{
    struct acc_service *svc = ctx;
    return atomic_load(&svc->stopping);
}

static void set_reason(struct acc_quote *q, const char *r)
{
    free(q->reason);
    q->reason = acc_strdup(r);
}

static acc_err quote_hold(struct acc_service *svc, struct acc_quote *q, struct acc_plan *plan,
                          struct acc_engine_request *rq, int k, struct acc_error *err);

/* Books option k of an Advisory quote (stored) and holds it.  An engine
 * negotiation from the option's start: a slot another client took
 * meanwhile moves the hold to the next common one. */
acc_err svc_quote_hold(struct acc_service *svc, struct acc_quote *q, struct acc_plan *plan,
                       struct acc_engine_request *rq, int k, struct acc_error *err)
{
    struct svc_busy self;
    svc_busy_enter(svc, &self, q->id); /* its entries are no leftovers */
    acc_err rc = quote_hold(svc, q, plan, rq, k, err);
    svc_busy_leave(svc, &self);
    return rc;
}

static acc_err quote_hold(struct acc_service *svc, struct acc_quote *q, struct acc_plan *plan,
                          struct acc_engine_request *rq, int k, struct acc_error *err)
{
    rq->earliest = q->options[k].start;
    rq->hooks = (struct acc_engine_hooks){hold_journal, NULL, hold_stopped, svc};
    struct acc_engine_result res = {0};
    acc_err rc = acc_engine_negotiate(svc->engine, rq, &res);
    if (rc)
        return rc;
    struct acc_booking *b = NULL;
    q->updated = acc_now();
    if (res.outcome != ACC_ENGINE_AGREED) {
        q->state = ACC_QUOTE_REJECTED;
        q->hold_until = 0;
        set_reason(q, res.err.msg[0] ? res.err.msg : "the option could not be held");
        rc = acc_store_quote_put(svc->store, q, 1u << ACC_QUOTE_ADVISORY, NULL, 0, err);
        return rc ? rc : acc_error_copy(err, &res.err);
    }
    q->state = ACC_QUOTE_HELD;
    q->held_option = k;
    q->options[k].start = res.start;
    q->options[k].end = res.end;
    b = calloc(plan->n_items ? plan->n_items : 1, sizeof *b);
    for (size_t i = 0; b && i < plan->n_items; i++) {
        b[i] = plan->items[i].booking;
        b[i].state = ACC_BOOKING_HELD;
    }
    /* The allocation again, now with its reservations. */
    struct acc_quote tmp = *q;
    q->comps = NULL;
    q->links = NULL;
    q->n_comps = q->n_links = 0;
    struct acc_agreement a = {0};
    acc_err frc = svc_fill_allocation(&a, plan, true);
    q->comps = a.comps;
    q->n_comps = a.n_comps;
    q->links = a.links;
    q->n_links = a.n_links;
    tmp.options = NULL;
    tmp.n_options = 0;
    tmp.initiator = tmp.reason = tmp.offer_xml = tmp.client = NULL;
    acc_quote_release(&tmp); /* the old allocation */
    rc = !b || frc
             ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory")
             : acc_store_quote_put(svc->store, q, 1u << ACC_QUOTE_ADVISORY, b, plan->n_items, err);
    if (rc) {
        /* Not recorded as held: give everything back. */
        for (size_t i = 0; i < plan->n_items; i++) {
            struct acc_booking x = plan->items[i].booking;
            x.state = ACC_BOOKING_RESERVED;
            svc_cancel_bookings(svc, &x, 1);
        }
    } else {
        acc_log_info("quote %s: option %d held until %" PRId64, q->id, k, q->hold_until);
    }
    free(b);
    return rc;
}

/* Closes an open quote as `to` and releases what it holds: its journal
 * entries become open again in the same write (so recovery finishes the job
 * after a crash), then each is cancelled at its adapter. */
static acc_err close_quote(struct acc_service *svc, struct acc_quote *q, enum acc_quote_state to,
                           const char *reason, struct acc_error *err)
{
    struct acc_booking *b = NULL;
    size_t n = 0, held = 0;
    acc_err rc = acc_store_journal_get(svc->store, q->id, &b, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (b[i].state == ACC_BOOKING_HELD) {
            b[held] = b[i];
            b[held++].state = ACC_BOOKING_RESERVED;
        }
    }
    enum acc_quote_state was = q->state;
    q->state = to;
    q->updated = acc_now();
    set_reason(q, reason);
    rc = acc_store_quote_put(svc->store, q, (1u << ACC_QUOTE_ADVISORY) | (1u << ACC_QUOTE_HELD), b,
                             held, err);
    if (rc) {
        q->state = was;
    } else if (held) {
        size_t failed = svc_cancel_bookings(svc, b, held);
        if (failed)
            acc_log_warn("quote %s: %zu reservation(s) not released yet (retried)", q->id, failed);
    }
    free(b);
    return rc;
}

acc_err acc_service_quote_release(struct acc_service *svc, const char *id, struct acc_quote *out,
                                  struct acc_error *err)
{
    acc_err rc = acc_store_quote_get(svc->store, id, out, err);
    if (rc)
        return rc;
    if (out->state != ACC_QUOTE_ADVISORY && out->state != ACC_QUOTE_HELD) {
        rc = acc_error_set(err, ACC_ERR_STATE, "quote %s is %s: nothing to release", id,
                           acc_quote_state_name(out->state));
        acc_quote_release(out);
        return rc;
    }
    rc = close_quote(svc, out, ACC_QUOTE_RELEASED, "released by its initiator", err);
    if (rc)
        acc_quote_release(out);
    return rc;
}

void svc_quote_expire(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_quote_due(svc->store, acc_now(), &ids, &n, &err)) {
        acc_log_error("housekeeping: quotes: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct acc_quote q;
        if (acc_store_quote_get(svc->store, ids[i], &q, &err)) {
            acc_log_error("housekeeping: quote %s: %s", ids[i], err.msg);
            continue;
        }
        const char *why = q.state == ACC_QUOTE_HELD
                              ? "the hold expired; every held reservation is released"
                              : "the quote expired without a hold";
        if (close_quote(svc, &q, ACC_QUOTE_EXPIRED, why, &err) && err.code != ACC_ERR_STATE)
            acc_log_error("housekeeping: quote %s: %s", ids[i], err.msg);
        acc_quote_release(&q);
    }
    free(ids);
}

/* Quote id, whose hold was cut short, becomes Rejected (why: what cut it
 * short); with alive_since, only while its instance is still not seen
 * since then. */
acc_err svc_quote_reject_cut(struct acc_service *svc, const char *id, acc_time alive_since,
                             const char *why)
{
    struct acc_quote q;
    struct acc_error err;
    acc_err rc = acc_store_quote_get(svc->store, id, &q, &err);
    if (rc) {
        acc_log_error("recovery: quote %s: %s", id, err.msg);
        return rc;
    }
    q.state = ACC_QUOTE_REJECTED;
    q.hold_until = 0;
    q.updated = acc_now();
    char reason[256];
    snprintf(reason, sizeof reason,
             "%s; every reservation it had made is released; ask for a quote again", why);
    set_reason(&q, reason);
    /* on a shared database, judged again as it is written: an instance
     * that beat again since keeps its hold */
    rc = acc_store_quote_end_orphan(svc->store, &q, alive_since, &err);
    if (rc == ACC_ERR_STATE && alive_since)
        acc_log_info("recovery: %s; left to it", err.msg);
    else if (rc)
        acc_log_error("recovery: quote %s: %s", id, err.msg);
    else
        acc_log_warn("recovery: quote %s was being held; now Rejected", id);
    acc_quote_release(&q);
    return rc;
}

/* A quote is stored Advisory before its hold books anything, and the
 * journal's sweep leaves an Advisory quote's entries alone (its hold may be
 * booking them now).  At start-up nothing books: an Advisory quote with
 * entries had its hold cut short.  Rejected, its entries are the sweep's
 * like those of any negotiation that is over: svc_recover releases them
 * next, instead of expiry a whole open period (max_hold) later.  On a
 * shared database the same holds a dead instance's quotes: the leader's
 * housekeeping rejects them, and its sweep releases what they booked. */
void svc_quote_recover(struct acc_service *svc, acc_time alive_since)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0, done;
    struct acc_error err;
    do {
        done = 0;
        if (acc_store_quote_interrupted(svc->store, alive_since, &ids, &n, &err)) {
            acc_log_error("recovery: quotes: %s", err.msg);
            return;
        }
        for (size_t i = 0; i < n; i++)
            done +=
                svc_quote_reject_cut(svc, ids[i], svc->shared ? alive_since : 0,
                                     "accordd stopped while the hold was being booked") == ACC_OK;
        free(ids);
        ids = NULL;
    } while (n && done); /* the store answers 1000 at a time: again until none is left */
}
