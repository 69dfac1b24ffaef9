/* engine_reserve.c - one reservation round: journal the intents, reserve
 * every item at the common start, journal the outcomes, verify each
 * reservation, and roll everything back when one is not as asked. */
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

/* Books every item at t and reads each booking back.  Returns 1 when all
 * are at t, 0 when the round must be repeated from *next, -1 when the
 * negotiation ends (result set). */
/* A reservation not as asked: the first says why; the latest start seen is
 * where the next round begins. */
static void not_as_asked(const struct acc_engine_item *it, const struct acc_reservation *rsv,
                         acc_time t, acc_time end, bool *mismatch, char *why, size_t size,
                         acc_time *latest)
{
    if (!*mismatch)
        differs(it, rsv, t, end, why, size);
    *mismatch = true;
    if (rsv->start > *latest)
        *latest = rsv->start;
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

int acc_engine_reserve_all(struct acc_engine_nego *g, acc_time t, acc_time *next)
{
    struct acc_engine_request *r = g->req;
    size_t n = r->n_items;
    acc_time end = t + r->duration;
    struct acc_error jerr;

    for (size_t i = 0; i < n; i++) {
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

    acc_err hard = ACC_OK;
    const char *hard_label = NULL;
    char hard_msg[ACC_ERROR_MSG_MAX] = "";
    bool busy = false, mismatch = false;
    char why[320] = "", msg[400];
    acc_time latest = t;
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct acc_booking *b = &it->booking;
        struct acc_engine_call *c = g->calls[i];
        if (!c) {
            b->state = ACC_BOOKING_UNKNOWN;
            acc_strlcpy(b->error, "no answer within the time limit", sizeof b->error);
            acc_engine_trace(g, ACC_TRACE_RESERVE, it, t, end, 0, ACC_ERR_TIMEOUT,
                             r->call_timeout_us, "%s: no answer within the time limit", b->key);
            if (!hard) {
                hard = ACC_ERR_TIMEOUT;
                hard_label = it->label;
                snprintf(hard_msg, sizeof hard_msg,
                         "adapter %s did not answer within %" PRId64 " ms",
                         acc_adapter_name(it->adapter), r->call_timeout_us / 1000);
            }
            continue;
        }
        if (c->rc) {
            b->state = ACC_BOOKING_FAILED;
            acc_strlcpy(b->error, c->err.msg, sizeof b->error);
            acc_engine_trace(g, ACC_TRACE_RESERVE, it, t, end, 0, c->rc, c->elapsed_us, "%s: %s",
                             b->key, c->err.msg);
            if (c->rc == ACC_ERR_BUSY) {
                busy = true;
            } else if (!hard) {
                hard = c->rc;
                hard_label = it->label;
                acc_strlcpy(hard_msg, c->err.msg, sizeof hard_msg);
            }
            continue;
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
            not_as_asked(it, &c->rsv, t, end, &mismatch, why, sizeof why, &latest);
    }
    acc_engine_calls_free(g);
    /* The outcomes are recorded before anything else happens. */
    if (journal(g, false, &jerr)) {
        rollback(g, "the journal could not be written");
        acc_engine_fail(g, ACC_ENGINE_FAILED, jerr.code, "cannot record the reservations: %s",
                        jerr.msg);
        return -1;
    }
    if (hard) {
        rollback(g, "an adapter failed to reserve");
        acc_engine_fail(g, ACC_ENGINE_FAILED,
                        hard == ACC_ERR_UNAVAILABLE || hard == ACC_ERR_TIMEOUT ? hard
                                                                               : ACC_ERR_ADAPTER,
                        "%s: reservation failed: %s", hard_label, hard_msg);
        return -1;
    }
    if (busy || mismatch) {
        snprintf(msg, sizeof msg, "a reservation is not as asked: %s", why);
        /* A round may only follow when this one is undone: otherwise the
         * next would book beside reservations still held. */
        if (!rollback(g, busy ? "a resource was taken meanwhile" : msg))
            return undo_failed(g);
        g->res->rollbacks++;
        *next = latest;
        return 0;
    }
    if (acc_engine_stopped(g)) {
        rollback(g, "stopped");
        acc_engine_fail(g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
        return -1;
    }

    /* Verify: read every reservation back. */
    if (!run_or_fail(g, ACC_ENGINE_OP_QUERY, t))
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct acc_engine_call *c = g->calls[i];
        acc_err rc = c ? c->rc : ACC_ERR_TIMEOUT;
        if (rc == ACC_ERR_NOT_FOUND) {
            mismatch = true;
            acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc, c->elapsed_us, "%s: %s",
                             it->booking.key, c->err.msg);
            continue;
        }
        if (rc) {
            acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc,
                             c ? c->elapsed_us : r->call_timeout_us, "%s: %s", it->booking.key,
                             c ? c->err.msg : "no answer within the time limit");
            if (!hard) {
                hard = rc;
                hard_label = it->label;
                acc_strlcpy(hard_msg, c ? c->err.msg : "no answer within the time limit",
                            sizeof hard_msg);
            }
            continue;
        }
        bool at = covers(&c->rsv, t, end, it->res.amount);
        char s[ACC_TIME_STRLEN], e[ACC_TIME_STRLEN];
        acc_time_format(c->rsv.start, s);
        acc_time_format(c->rsv.end, e);
        acc_engine_trace(g, ACC_TRACE_VERIFY, it, t, end, c->rsv.start, ACC_OK, c->elapsed_us,
                         "%s: %s to %s, %" PRId64 " %s%s", it->booking.key, s, e, c->rsv.amount,
                         it->res.kind == ACC_RES_NODES ? "nodes" : "Mbit/s",
                         at ? "" : " (mismatch)");
        it->booking.eff_start = c->rsv.start;
        it->booking.eff_end = c->rsv.end;
        if (c->rsv.nodes) {
            free(it->nodes);
            it->nodes = c->rsv.nodes;
            c->rsv.nodes = NULL;
        }
        if (!at)
            not_as_asked(it, &c->rsv, t, end, &mismatch, why, sizeof why, &latest);
    }
    acc_engine_calls_free(g);
    if (hard) {
        rollback(g, "an adapter failed to verify");
        acc_engine_fail(g, ACC_ENGINE_FAILED,
                        hard == ACC_ERR_UNAVAILABLE || hard == ACC_ERR_TIMEOUT ? hard
                                                                               : ACC_ERR_ADAPTER,
                        "%s: verification failed: %s", hard_label, hard_msg);
        return -1;
    }
    if (mismatch) {
        snprintf(msg, sizeof msg, "verification found a reservation not as asked: %s", why);
        if (!rollback(g, msg))
            return undo_failed(g);
        g->res->rollbacks++;
        *next = latest;
        return 0;
    }
    return 1;
}
