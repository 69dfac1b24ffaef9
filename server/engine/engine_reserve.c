/* SPDX-License-Identifier: Apache-2.0 */
/* engine_reserve.c - booking at a common start: the reserve round (journal
 * the intents, reserve every item, journal the outcomes), the verify round
 * (read each reservation back), and the rollback of everything when one is
 * not as asked. */
#include "engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "engine_int.h"

static acc_err journal(struct acc_engine_nego *g, bool durable, struct acc_error *err)
{
    struct acc_engine_request *r = g->req;
    struct acc_booking *b = malloc(r->n_items * sizeof *b);
    if (!b)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n_items; i++)
        b[i] = r->items[i].booking;
    acc_err rc =
        r->hooks.journal ? r->hooks.journal(r->hooks.ctx, b, r->n_items, durable, err) : ACC_OK;
    free(b);
    return rc;
}

/* Cancels every booking that may exist (reserved or unknown); returns false
 * if one could not be cancelled (it stays cancel-failed for housekeeping). */
static bool rollback(struct acc_engine_nego *g, const char *why)
{
    struct acc_engine_request *r = g->req;
    size_t n = r->n_items, k = 0;
    size_t *which = calloc(n, sizeof *which);
    struct acc_adapter **ads = calloc(n, sizeof *ads);
    struct acc_booking *b = calloc(n, sizeof *b);
    int64_t *elapsed = calloc(n, sizeof *elapsed);
    acc_engine_trace(g, ACC_TRACE_ROLLBACK, NULL, 0, 0, 0, ACC_OK, 0, "%s", why);
    if (!which || !ads || !b || !elapsed) {
        /* Without memory, leave the bookings open: recovery cancels them. */
        free(which);
        free(ads);
        free(b);
        free(elapsed);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        enum acc_booking_state st = r->items[i].booking.state;
        if (st != ACC_BOOKING_RESERVED && st != ACC_BOOKING_UNKNOWN)
            continue;
        which[k] = i;
        ads[k] = r->items[i].adapter;
        b[k++] = r->items[i].booking;
    }
    size_t failed = acc_engine_cancel_many(g->e, ads, b, k, r->call_timeout_us, elapsed);
    for (size_t j = 0; j < k; j++) {
        struct acc_engine_item *it = &r->items[which[j]];
        it->booking = b[j];
        bool ok = b[j].state == ACC_BOOKING_CANCELLED;
        acc_engine_trace(g, ACC_TRACE_CANCEL, it, b[j].start, b[j].end, 0,
                         ok ? ACC_OK : ACC_ERR_ADAPTER, elapsed[j], "%s %s", b[j].key,
                         ok ? "cancelled" : b[j].error);
    }
    struct acc_error jerr;
    if (k && journal(g, false, &jerr))
        acc_log_error("journal after rollback: %s", jerr.msg);
    free(which);
    free(ads);
    free(b);
    free(elapsed);
    return failed == 0;
}

/* A rollback before another round left a reservation held (its cancel failed
 * or there was no memory to ask): stop instead of booking beside it.  The
 * journal shows it open; housekeeping and recovery cancel it. */
static int undo_failed(struct acc_engine_nego *g)
{
    acc_engine_fail(g, ACC_ENGINE_FAILED, ACC_ERR_ADAPTER,
                    "a reservation of round %u could not be cancelled; the negotiation stops",
                    g->round);
    return -1;
}

/* Whether a reservation is what was asked: from t, for the amount, until
 * end or later (Slurm, for one, reserves whole minutes). */
static bool covers(const struct acc_reservation *r, acc_time t, acc_time end, int64_t amount)
{
    return r->start == t && r->end >= end && r->amount == amount;
}

/* What a reservation that covers() refused differs in, for the trace:
 * "site c: 3 nodes reserved, 4 asked". */
static void differs(const struct acc_engine_item *it, const struct acc_reservation *rsv, acc_time t,
                    acc_time end, char *out, size_t size)
{
    char got[ACC_TIME_STRLEN], want[ACC_TIME_STRLEN];
    if (rsv->start != t) {
        acc_time_format(rsv->start, got);
        acc_time_format(t, want);
        snprintf(out, size, "%s: starts %s, not at the common start %s", it->label, got, want);
    } else if (rsv->end < end) {
        acc_time_format(rsv->end, got);
        acc_time_format(end, want);
        snprintf(out, size, "%s: ends %s, before the end %s asked", it->label, got, want);
    } else {
        snprintf(out, size, "%s: %" PRId64 " %s reserved, %" PRId64 " asked", it->label,
                 rsv->amount, it->res.kind == ACC_RES_NODES ? "nodes" : "Mbit/s", it->res.amount);
    }
}

/* What a round found wrong: the first hard failure, a resource taken
 * meanwhile, reservations not as asked (the first says why; the latest
 * start seen is where the next round begins). */
struct findings {
    acc_err hard;
    const char *hard_label;
    char hard_msg[ACC_ERROR_MSG_MAX];
    bool busy, mismatch;
    char why[320];
    acc_time latest;
};

static void found_hard(struct findings *f, acc_err rc, const char *label, const char *msg)
{
    if (f->hard)
        return;
    f->hard = rc;
    f->hard_label = label;
    acc_strlcpy(f->hard_msg, msg, sizeof f->hard_msg);
}

static void not_as_asked(const struct acc_engine_item *it, const struct acc_reservation *rsv,
                         acc_time t, acc_time end, struct findings *f)
{
    if (!f->mismatch)
        differs(it, rsv, t, end, f->why, sizeof f->why);
    f->mismatch = true;
    if (rsv->start > f->latest)
        f->latest = rsv->start;
}

/* An adapter failed in the round (`what`: reservation, verification):
 * everything is rolled back and the negotiation ends.  Returns -1. */
static int fail_round(struct acc_engine_nego *g, const struct findings *f, const char *why,
                      const char *what)
{
    rollback(g, why);
    acc_engine_fail(g, ACC_ENGINE_FAILED, acc_engine_failure_kind(f->hard), "%s: %s failed: %s",
                    f->hard_label, what, f->hard_msg);
    return -1;
}

/* The round is repeated from the latest start seen, once it is undone: the
 * next would otherwise book beside reservations still held.  Returns 0, or
 * -1 when it could not be undone. */
static int retry_round(struct acc_engine_nego *g, const struct findings *f, const char *why,
                       acc_time *next)
{
    if (!rollback(g, why))
        return undo_failed(g);
    g->res->rollbacks++;
    *next = f->latest;
    return 0;
}

/* Makes one call of op per item at t and runs them concurrently; out of
 * memory, rolls back and fails the negotiation (false). */
static bool run_or_fail(struct acc_engine_nego *g, enum acc_engine_op op, acc_time t)
{
    if (!acc_engine_calls_new(g, op, t, 0)) {
        rollback(g, "out of memory");
        acc_engine_fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return false;
    }
    acc_engine_run_calls(g->e, g->calls, g->req->n_items, g->req->call_timeout_us, g->timed_out);
    return true;
}

/* The intent of each item at [t, end), under a key of its own. */
static void intents(struct acc_engine_nego *g, acc_time t, acc_time end)
{
    struct acc_engine_request *r = g->req;
    for (size_t i = 0; i < r->n_items; i++) {
        struct acc_booking *b = &r->items[i].booking;
        memset(b, 0, sizeof *b);
        snprintf(b->key, sizeof b->key, "acc-%s-%s-r%ui%zu", r->agreement, g->nonce, g->round, i);
        acc_strlcpy(b->agreement, r->agreement, sizeof b->agreement);
        b->round = g->round;
        acc_strlcpy(b->adapter, acc_adapter_name(r->items[i].adapter), sizeof b->adapter);
        b->kind = r->items[i].res.kind;
        acc_strlcpy(b->resource, r->items[i].res.name, sizeof b->resource);
        b->amount = r->items[i].res.amount;
        b->start = t;
        b->end = end;
        b->state = ACC_BOOKING_INTENT;
    }
}

/* Item i's answer to its reserve call: its booking's state, the trace. */
static void reserved(struct acc_engine_nego *g, size_t i, acc_time t, acc_time end,
                     struct findings *f)
{
    struct acc_engine_request *r = g->req;
    struct acc_engine_item *it = &r->items[i];
    struct acc_booking *b = &it->booking;
    struct acc_engine_call *c = g->calls[i];
    if (!c) {
        b->state = ACC_BOOKING_UNKNOWN;
        acc_strlcpy(b->error, "no answer within the time limit", sizeof b->error);
        acc_engine_trace(g, ACC_TRACE_RESERVE, it, t, end, 0, ACC_ERR_TIMEOUT, r->call_timeout_us,
                         "%s: no answer within the time limit", b->key);
        char msg[ACC_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "adapter %s did not answer within %" PRId64 " ms",
                 acc_adapter_name(it->adapter), r->call_timeout_us / 1000);
        found_hard(f, ACC_ERR_TIMEOUT, it->label, msg);
        return;
    }
    if (c->rc) {
        b->state = ACC_BOOKING_FAILED;
        acc_strlcpy(b->error, c->err.msg, sizeof b->error);
        acc_engine_trace(g, ACC_TRACE_RESERVE, it, t, end, 0, c->rc, c->elapsed_us, "%s: %s",
                         b->key, c->err.msg);
        if (c->rc == ACC_ERR_BUSY)
            f->busy = true;
        else
            found_hard(f, c->rc, it->label, c->err.msg);
        return;
    }
    b->state = ACC_BOOKING_RESERVED;
    acc_strlcpy(b->local_id, c->rsv.local_id, sizeof b->local_id);
    b->eff_start = c->rsv.start;
    b->eff_end = c->rsv.end;
    free(it->nodes);
    it->nodes = c->rsv.nodes;
    c->rsv.nodes = NULL;
    bool at = covers(&c->rsv, t, end, it->res.amount);
    char s[ACC_TIME_STRLEN];
    acc_time_format(c->rsv.start, s);
    acc_engine_trace(g, ACC_TRACE_RESERVE, it, t, end, c->rsv.start, ACC_OK, c->elapsed_us,
                     "%s: reserved as %s, starting %s%s", b->key, b->local_id, s,
                     at ? "" : " (not as asked)");
    if (!at)
        not_as_asked(it, &c->rsv, t, end, f);
}

/* The reserve round: the intents journalled durably, every item reserved
 * at t concurrently, the outcomes journalled.  Returns 1 when all are
 * reserved as asked, else as acc_engine_reserve_all. */
static int reserve_round(struct acc_engine_nego *g, acc_time t, acc_time *next)
{
    struct acc_engine_request *r = g->req;
    acc_time end = t + r->duration;
    struct acc_error jerr;
    intents(g, t, end);
    /* The intents are durable before any adapter hears of them. */
    if (journal(g, true, &jerr)) {
        acc_engine_fail(g, ACC_ENGINE_FAILED, jerr.code, "cannot record the reservations: %s",
                        jerr.msg);
        return -1;
    }
    /* Out of memory, nothing was requested; housekeeping closes the
     * journaled intents. */
    if (!run_or_fail(g, ACC_ENGINE_OP_RESERVE, t))
        return -1;
    struct findings f = {.latest = t};
    for (size_t i = 0; i < r->n_items; i++)
        reserved(g, i, t, end, &f);
    acc_engine_calls_free(g);
    /* The outcomes are recorded before anything else happens. */
    if (journal(g, false, &jerr)) {
        rollback(g, "the journal could not be written");
        acc_engine_fail(g, ACC_ENGINE_FAILED, jerr.code, "cannot record the reservations: %s",
                        jerr.msg);
        return -1;
    }
    if (f.hard)
        return fail_round(g, &f, "an adapter failed to reserve", "reservation");
    if (f.busy || f.mismatch) {
        char msg[400];
        snprintf(msg, sizeof msg, "a reservation is not as asked: %s", f.why);
        return retry_round(g, &f, f.busy ? "a resource was taken meanwhile" : msg, next);
    }
    return 1;
}

/* Item i's answer to its query: what the adapter holds for its booking. */
static void verified(struct acc_engine_nego *g, size_t i, acc_time t, acc_time end,
                     struct findings *f)
{
    struct acc_engine_request *r = g->req;
    struct acc_engine_item *it = &r->items[i];
    struct acc_engine_call *c = g->calls[i];
    acc_err rc = c ? c->rc : ACC_ERR_TIMEOUT;
    if (rc == ACC_ERR_NOT_FOUND) {
        f->mismatch = true;
        acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc, c->elapsed_us, "%s: %s",
                         it->booking.key, c->err.msg);
        return;
    }
    if (rc) {
        const char *msg = c ? c->err.msg : "no answer within the time limit";
        acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc,
                         c ? c->elapsed_us : r->call_timeout_us, "%s: %s", it->booking.key, msg);
        found_hard(f, rc, it->label, msg);
        return;
    }
    bool at = covers(&c->rsv, t, end, it->res.amount);
    char s[ACC_TIME_STRLEN], e[ACC_TIME_STRLEN];
    acc_time_format(c->rsv.start, s);
    acc_time_format(c->rsv.end, e);
    acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, c->rsv.start, ACC_OK, c->elapsed_us,
                     "%s: %s to %s, %" PRId64 " %s%s", it->booking.key, s, e, c->rsv.amount,
                     it->res.kind == ACC_RES_NODES ? "nodes" : "Mbit/s", at ? "" : " (mismatch)");
    it->booking.eff_start = c->rsv.start;
    it->booking.eff_end = c->rsv.end;
    if (c->rsv.nodes) {
        free(it->nodes);
        it->nodes = c->rsv.nodes;
        c->rsv.nodes = NULL;
    }
    if (!at)
        not_as_asked(it, &c->rsv, t, end, f);
}

/* The verify round: every reservation read back.  Returns as
 * acc_engine_reserve_all. */
static int verify_round(struct acc_engine_nego *g, acc_time t, acc_time *next)
{
    struct acc_engine_request *r = g->req;
    acc_time end = t + r->duration;
    if (!run_or_fail(g, ACC_ENGINE_OP_QUERY, t))
        return -1;
    struct findings f = {.latest = t};
    for (size_t i = 0; i < r->n_items; i++)
        verified(g, i, t, end, &f);
    acc_engine_calls_free(g);
    if (f.hard)
        return fail_round(g, &f, "an adapter failed to verify", "verification");
    if (f.mismatch) {
        char msg[400];
        snprintf(msg, sizeof msg, "verification found a reservation not as asked: %s", f.why);
        return retry_round(g, &f, msg, next);
    }
    return 1;
}

int acc_engine_reserve_all(struct acc_engine_nego *g, acc_time t, acc_time *next)
{
    int rc = reserve_round(g, t, next);
    if (rc <= 0)
        return rc;
    if (acc_engine_stopped(g)) {
        rollback(g, "stopped");
        acc_engine_fail(g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
        return -1;
    }
    return verify_round(g, t, next);
}
