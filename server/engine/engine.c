#include "engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "../../lib/common/pool.h"
#include "../../lib/common/strutil.h"

#define DEFAULT_THREADS 256

struct acc_engine {
    struct acc_pool *pool;
    void (*orphan)(void *ctx, struct acc_adapter *ad, const struct acc_booking *b);
    void *orphan_ctx;
};

acc_err acc_engine_new(const struct acc_engine_options *opt, struct acc_engine **out,
                       struct acc_error *err)
{
    struct acc_engine *e = calloc(1, sizeof *e);
    if (!e)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = acc_pool_new(opt->max_threads ? opt->max_threads : DEFAULT_THREADS, &e->pool, err);
    if (rc) {
        free(e);
        return rc;
    }
    e->orphan = opt->orphan;
    e->orphan_ctx = opt->orphan_ctx;
    *out = e;
    return ACC_OK;
}

bool acc_engine_free(struct acc_engine *e)
{
    if (!e)
        return true;
    if (!acc_pool_free(e->pool))
        return false; /* calls still run and may call the orphan hook: keep e */
    free(e);
    return true;
}

void acc_engine_interrupt(struct acc_engine *e)
{
    acc_pool_interrupt(e->pool);
}

void acc_engine_items_release(struct acc_engine_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].nodes);
        items[i].nodes = NULL;
    }
}

/* ------------------------------------------------------ frame arithmetic */

acc_time acc_engine_common_start(const struct acc_frames *p, size_t n, acc_time from,
                                 int64_t duration)
{
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!idx)
        return -1;
    acc_time t = from;
    bool moved = true;
    while (moved) {
        moved = false;
        for (size_t i = 0; i < n; i++) {
            /* The first frame that can still hold [t, t + duration). */
            while (idx[i] < p[i].n && p[i].v[idx[i]].end < t + duration)
                idx[i]++;
            if (idx[i] == p[i].n) {
                free(idx);
                return -1;
            }
            if (p[i].v[idx[i]].start > t) {
                t = p[i].v[idx[i]].start;
                moved = true;
            }
        }
    }
    free(idx);
    return t;
}

/* ------------------------------------------------------- concurrent calls */

enum call_op { OP_PREVIEW, OP_RESERVE, OP_QUERY, OP_CANCEL };

/* One adapter call.  Heap-allocated so that a call abandoned after its time
 * limit can finish on its own and clean up after itself. */
struct call {
    enum call_op op;
    struct acc_engine *eng;
    struct acc_adapter *ad;
    struct acc_resource res;
    char res_name[128];
    acc_time from, until;
    int64_t duration;
    struct acc_booking booking; /* key, local id; for an orphan */
    /* results */
    acc_err rc;
    struct acc_error err;
    struct acc_frames frames;
    struct acc_reservation rsv;
    int64_t elapsed_us;
};

static void call_free(struct call *c)
{
    if (!c)
        return;
    acc_frames_release(&c->frames);
    acc_reservation_release(&c->rsv);
    free(c);
}

static void call_run(void *arg)
{
    struct call *c = arg;
    int64_t t0 = acc_mono_us();
    acc_error_clear(&c->err);
    switch (c->op) {
    case OP_PREVIEW:
        c->rc = acc_adapter_preview(c->ad, &c->res, c->from, c->until, c->duration, &c->frames,
                                    &c->err);
        break;
    case OP_RESERVE:
        c->rc = acc_adapter_reserve(c->ad, c->booking.key, &c->res, c->from, c->duration, &c->rsv,
                                    &c->err);
        break;
    case OP_QUERY:
        c->rc = acc_adapter_query(c->ad, c->booking.key,
                                  c->booking.local_id[0] ? c->booking.local_id : NULL, &c->rsv,
                                  &c->err);
        break;
    case OP_CANCEL:
        c->rc = acc_adapter_cancel(c->ad, c->booking.key,
                                   c->booking.local_id[0] ? c->booking.local_id : NULL, &c->err);
        break;
    }
    c->elapsed_us = acc_mono_us() - t0;
}

/* A call finished after the negotiation stopped waiting.  A reservation that
 * went through must not stay behind: hand it over for cancelling. */
static void call_abandoned(void *arg, bool ran)
{
    struct call *c = arg;
    if (ran && c->op == OP_RESERVE && c->rc == ACC_OK && c->eng->orphan) {
        acc_strlcpy(c->booking.local_id, c->rsv.local_id, sizeof c->booking.local_id);
        c->booking.eff_start = c->rsv.start;
        c->booking.eff_end = c->rsv.end;
        c->booking.state = ACC_BOOKING_RESERVED;
        acc_log_warn("%s: reservation %s answered after its time limit; cancelling it",
                     acc_adapter_name(c->ad), c->booking.key);
        c->eng->orphan(c->eng->orphan_ctx, c->ad, &c->booking);
    }
    call_free(c);
}

/* Runs the calls concurrently under one time limit.  Calls that did not
 * finish are set to NULL in calls[] (they now belong to their worker) and
 * reported in timed_out[]. */
static void run_calls(struct acc_engine *e, struct call **calls, size_t n, int64_t timeout_us,
                      bool *timed_out)
{
    memset(timed_out, 0, n * sizeof *timed_out);
    if (n == 1) {
        /* One call: spare the hand-over, unless it could hang us forever. */
        if (timeout_us <= 0) {
            call_run(calls[0]);
            return;
        }
    }
    struct acc_batch *b = acc_batch_new(e->pool, n);
    if (!b) {
        for (size_t i = 0; i < n; i++)
            call_run(calls[i]); /* no memory for a batch: do them one by one */
        return;
    }
    for (size_t i = 0; i < n; i++)
        acc_batch_submit(b, call_run, call_abandoned, calls[i]);
    acc_batch_wait(b, timeout_us > 0 ? timeout_us : -1);
    acc_batch_free(b, timed_out);
    for (size_t i = 0; i < n; i++) {
        if (timed_out[i])
            calls[i] = NULL;
    }
}

/* ------------------------------------------------------------ negotiation */

struct nego {
    struct acc_engine *e;
    struct acc_engine_request *req;
    struct acc_engine_result *res;
    char nonce[8];
    unsigned round;
    struct call **calls;
    bool *timed_out;
};

static void trace(struct nego *g, enum acc_trace_kind kind, const struct acc_engine_item *it,
                  acc_time from, acc_time until, acc_time result, acc_err status,
                  int64_t elapsed_us, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

static void trace(struct nego *g, enum acc_trace_kind kind, const struct acc_engine_item *it,
                  acc_time from, acc_time until, acc_time result, acc_err status,
                  int64_t elapsed_us, const char *fmt, ...)
{
    if (!g->req->hooks.trace)
        return;
    char detail[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    struct acc_trace_event ev = {
        .round = g->round,
        .kind = kind,
        .target = it ? (char *)it->label : NULL,
        .adapter = it ? (char *)acc_adapter_name(it->adapter) : NULL,
        .amount = it ? it->res.amount : 0,
        .t_from = from,
        .t_until = until,
        .t_result = result,
        .status = status,
        .elapsed_us = elapsed_us,
        .detail = detail[0] ? detail : NULL,
    };
    g->req->hooks.trace(g->req->hooks.ctx, &ev);
}

static bool stopped(struct nego *g)
{
    return g->req->hooks.stopped && g->req->hooks.stopped(g->req->hooks.ctx);
}

static struct call *call_new(struct nego *g, enum call_op op, struct acc_engine_item *it)
{
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->op = op;
    c->eng = g->e;
    c->ad = it->adapter;
    c->res = it->res;
    acc_strlcpy(c->res_name, it->res.name, sizeof c->res_name);
    c->res.name = c->res_name;
    c->duration = g->req->duration;
    c->booking = it->booking;
    acc_frames_init(&c->frames);
    return c;
}

/* Makes one call of `op` per item over [from, until); false (nothing left
 * allocated) when out of memory. */
static bool calls_new(struct nego *g, enum call_op op, acc_time from, acc_time until);

static void calls_free(struct nego *g)
{
    for (size_t i = 0; i < g->req->n_items; i++) {
        call_free(g->calls[i]);
        g->calls[i] = NULL;
    }
}

static bool calls_new(struct nego *g, enum call_op op, acc_time from, acc_time until)
{
    for (size_t i = 0; i < g->req->n_items; i++) {
        g->calls[i] = call_new(g, op, &g->req->items[i]);
        if (!g->calls[i]) {
            calls_free(g);
            return false;
        }
        g->calls[i]->from = from;
        g->calls[i]->until = until;
    }
    return true;
}

static void fmt_time(acc_time t, char *out)
{
    if (t > 0)
        acc_time_format(t, out);
    else
        acc_strlcpy(out, "-", ACC_TIME_STRLEN);
}

static acc_err fail(struct nego *g, enum acc_engine_outcome outcome, acc_err code, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

static acc_err fail(struct nego *g, enum acc_engine_outcome outcome, acc_err code, const char *fmt,
                    ...)
{
    g->res->outcome = outcome;
    va_list ap;
    va_start(ap, fmt);
    acc_error_vset(&g->res->err, code, fmt, ap);
    va_end(ap);
    return ACC_OK;
}

/* Previews every item over [t, deadline).  On failure the result is set
 * (FAILED) and false returned. */
static bool preview_all(struct nego *g, acc_time t)
{
    struct acc_engine_request *r = g->req;
    if (!calls_new(g, OP_PREVIEW, t, r->deadline)) {
        fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return false;
    }
    run_calls(g->e, g->calls, r->n_items, r->call_timeout_us, g->timed_out);
    bool ok = true;
    for (size_t i = 0; i < r->n_items; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct call *c = g->calls[i];
        char first[ACC_TIME_STRLEN];
        if (!c) {
            trace(g, ACC_TRACE_PREVIEW, it, t, r->deadline, 0, ACC_ERR_TIMEOUT, r->call_timeout_us,
                  "no answer within the time limit");
            if (ok)
                fail(g, ACC_ENGINE_FAILED, ACC_ERR_TIMEOUT,
                     "%s: adapter %s did not answer its preview within %" PRId64 " ms", it->label,
                     acc_adapter_name(it->adapter), r->call_timeout_us / 1000);
            ok = false;
            continue;
        }
        if (c->rc) {
            trace(g, ACC_TRACE_PREVIEW, it, t, r->deadline, 0, c->rc, c->elapsed_us, "%s",
                  c->err.msg);
            if (ok)
                fail(g, ACC_ENGINE_FAILED,
                     c->rc == ACC_ERR_UNAVAILABLE || c->rc == ACC_ERR_TIMEOUT ? c->rc
                                                                              : ACC_ERR_ADAPTER,
                     "%s: preview failed: %s", it->label, c->err.msg);
            ok = false;
            continue;
        }
        fmt_time(c->frames.n ? c->frames.v[0].start : 0, first);
        trace(g, ACC_TRACE_PREVIEW, it, t, r->deadline, c->frames.n ? c->frames.v[0].start : 0,
              ACC_OK, c->elapsed_us, "%zu free frame%s, earliest start %s%s", c->frames.n,
              c->frames.n == 1 ? "" : "s", first, c->frames.truncated ? " (truncated)" : "");
    }
    if (!ok)
        calls_free(g);
    return ok;
}

/* Explains, one line per item, why no common slot exists from t. */
static void no_slot(struct nego *g, acc_time t, const char *why)
{
    struct acc_engine_request *r = g->req;
    char dur[ACC_DURATION_STRLEN], until[ACC_TIME_STRLEN], from[ACC_TIME_STRLEN];
    acc_duration_format(r->duration, dur);
    acc_time_format(r->deadline, until);
    acc_time_format(t, from);
    fail(g, ACC_ENGINE_NO_SLOT, ACC_ERR_NO_SLOT, "no common slot of %s between %s and %s: %s", dur,
         from, until, why);
    for (size_t i = 0; i < r->n_items; i++) {
        struct call *c = g->calls[i];
        const struct acc_engine_item *it = &r->items[i];
        const char *unit = it->res.kind == ACC_RES_NODES ? "nodes" : "Mbit/s";
        if (!c)
            continue;
        if (c->frames.n == 0) {
            acc_error_append(&g->res->err, "%s (%s): %" PRId64 " %s are not free for %s before %s",
                             it->label, acc_adapter_name(it->adapter), it->res.amount, unit, dur,
                             until);
        } else {
            char s[ACC_TIME_STRLEN];
            acc_time_format(c->frames.v[0].start, s);
            acc_error_append(&g->res->err, "%s (%s): %zu frame%s for %" PRId64 " %s, earliest %s",
                             it->label, acc_adapter_name(it->adapter), c->frames.n,
                             c->frames.n == 1 ? "" : "s", it->res.amount, unit, s);
        }
    }
    trace(g, ACC_TRACE_REJECT, NULL, t, r->deadline, 0, ACC_ERR_NO_SLOT, 0, "%s", why);
}

/* Decides the round's candidate start from the previews: returns 1 with the
 * start in *at, 0 to run another preview round from *at, or -1 when there is
 * no slot (the result is set). */
static int decide(struct nego *g, acc_time t, acc_time *at)
{
    struct acc_engine_request *r = g->req;
    size_t n = r->n_items;

    if (r->strategy == ACC_STRATEGY_ITERATIVE) {
        acc_time latest = t;
        for (size_t i = 0; i < n; i++) {
            if (g->calls[i]->frames.n == 0) {
                no_slot(g, t, "an adapter has no free frame");
                return -1;
            }
            if (g->calls[i]->frames.v[0].start > latest)
                latest = g->calls[i]->frames.v[0].start;
        }
        for (size_t i = 0; i < n; i++) {
            if (g->calls[i]->frames.v[0].start != latest) {
                char s[ACC_TIME_STRLEN];
                acc_time_format(latest, s);
                trace(g, ACC_TRACE_PROPOSE, NULL, t, r->deadline, latest, ACC_OK, 0,
                      "earliest starts differ; next round from the latest, %s", s);
                *at = latest;
                return 0;
            }
        }
        *at = latest;
        return 1;
    }

    struct acc_frames *p = malloc(n * sizeof *p);
    if (!p) {
        fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = g->calls[i]->frames;
    acc_time c = acc_engine_common_start(p, n, t, r->duration);
    free(p);
    if (c >= 0) {
        *at = c;
        return 1;
    }
    /* A truncated preview says nothing after its last frame: look again
     * from there before concluding. */
    acc_time resume = -1;
    for (size_t i = 0; i < n; i++) {
        const struct acc_frames *f = &g->calls[i]->frames;
        if (f->truncated && f->n && f->v[f->n - 1].start > t &&
            (resume < 0 || f->v[f->n - 1].start < resume))
            resume = f->v[f->n - 1].start;
    }
    if (resume > t) {
        trace(g, ACC_TRACE_PROPOSE, NULL, t, r->deadline, resume, ACC_OK, 0,
              "previews truncated; looking again from their end");
        *at = resume;
        return 0;
    }
    no_slot(g, t, "the free frames of the adapters never overlap long enough");
    return -1;
}

static acc_err journal(struct nego *g, bool durable, struct acc_error *err)
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

/* Cancels the bookings concurrently; elapsed[i] (may be NULL) gets each
 * call's time.  Returns how many could not be cancelled; without memory
 * that is all of them (housekeeping retries). */
static size_t cancel_many(struct acc_engine *e, struct acc_adapter *const *ads,
                          struct acc_booking *b, size_t n, int64_t timeout_us, int64_t *elapsed)
{
    struct call **calls = calloc(n ? n : 1, sizeof *calls);
    bool *late = calloc(n ? n : 1, sizeof *late);
    bool oom = !calls || !late;
    for (size_t i = 0; !oom && i < n; i++) {
        calls[i] = calloc(1, sizeof **calls);
        oom = !calls[i];
        if (!oom) {
            calls[i]->op = OP_CANCEL;
            calls[i]->eng = e;
            calls[i]->ad = ads[i];
            calls[i]->booking = b[i];
            acc_frames_init(&calls[i]->frames);
        }
    }
    if (!oom)
        run_calls(e, calls, n, timeout_us, late);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct call *c = oom ? NULL : calls[i];
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
        call_free(calls[i]);
    free(calls);
    free(late);
    return failed;
}

size_t acc_engine_cancel_all(struct acc_engine *e, struct acc_adapter *const *ads,
                             struct acc_booking *b, size_t n, int64_t timeout_us)
{
    return cancel_many(e, ads, b, n, timeout_us, NULL);
}

/* Cancels every booking that may exist (reserved or unknown); returns false
 * if one could not be cancelled (it stays cancel-failed for housekeeping). */
static bool rollback(struct nego *g, const char *why)
{
    struct acc_engine_request *r = g->req;
    size_t n = r->n_items, k = 0;
    size_t *which = calloc(n, sizeof *which);
    struct acc_adapter **ads = calloc(n, sizeof *ads);
    struct acc_booking *b = calloc(n, sizeof *b);
    int64_t *elapsed = calloc(n, sizeof *elapsed);
    trace(g, ACC_TRACE_ROLLBACK, NULL, 0, 0, 0, ACC_OK, 0, "%s", why);
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
    size_t failed = cancel_many(g->e, ads, b, k, r->call_timeout_us, elapsed);
    for (size_t j = 0; j < k; j++) {
        struct acc_engine_item *it = &r->items[which[j]];
        it->booking = b[j];
        bool ok = b[j].state == ACC_BOOKING_CANCELLED;
        trace(g, ACC_TRACE_CANCEL, it, b[j].start, b[j].end, 0, ok ? ACC_OK : ACC_ERR_ADAPTER,
              elapsed[j], "%s %s", b[j].key, ok ? "cancelled" : b[j].error);
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
static int undo_failed(struct nego *g)
{
    fail(g, ACC_ENGINE_FAILED, ACC_ERR_ADAPTER,
         "a reservation of round %u could not be cancelled; the negotiation stops", g->round);
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
static int reserve_all(struct nego *g, acc_time t, acc_time *next)
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
        fail(g, ACC_ENGINE_FAILED, jerr.code, "cannot record the reservations: %s", jerr.msg);
        return -1;
    }

    if (!calls_new(g, OP_RESERVE, t, 0)) {
        /* Nothing was requested; housekeeping closes the journaled intents. */
        rollback(g, "out of memory");
        fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return -1;
    }
    run_calls(g->e, g->calls, n, r->call_timeout_us, g->timed_out);

    acc_err hard = ACC_OK;
    const char *hard_label = NULL;
    char hard_msg[ACC_ERROR_MSG_MAX] = "";
    bool busy = false, mismatch = false;
    char why[320] = "", msg[400];
    acc_time latest = t;
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct acc_booking *b = &it->booking;
        struct call *c = g->calls[i];
        if (!c) {
            b->state = ACC_BOOKING_UNKNOWN;
            acc_strlcpy(b->error, "no answer within the time limit", sizeof b->error);
            trace(g, ACC_TRACE_RESERVE, it, t, end, 0, ACC_ERR_TIMEOUT, r->call_timeout_us,
                  "%s: no answer within the time limit", b->key);
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
            trace(g, ACC_TRACE_RESERVE, it, t, end, 0, c->rc, c->elapsed_us, "%s: %s", b->key,
                  c->err.msg);
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
        trace(g, ACC_TRACE_RESERVE, it, t, end, c->rsv.start, ACC_OK, c->elapsed_us,
              "%s: reserved as %s, starting %s%s", b->key, b->local_id, s,
              at ? "" : " (not as asked)");
        if (!at) {
            if (!mismatch)
                differs(it, &c->rsv, t, end, why, sizeof why);
            mismatch = true;
            if (c->rsv.start > latest)
                latest = c->rsv.start;
        }
    }
    calls_free(g);
    /* The outcomes are recorded before anything else happens. */
    if (journal(g, false, &jerr)) {
        rollback(g, "the journal could not be written");
        fail(g, ACC_ENGINE_FAILED, jerr.code, "cannot record the reservations: %s", jerr.msg);
        return -1;
    }
    if (hard) {
        rollback(g, "an adapter failed to reserve");
        fail(g, ACC_ENGINE_FAILED,
             hard == ACC_ERR_UNAVAILABLE || hard == ACC_ERR_TIMEOUT ? hard : ACC_ERR_ADAPTER,
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
    if (stopped(g)) {
        rollback(g, "stopped");
        fail(g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
        return -1;
    }

    /* Verify: read every reservation back. */
    if (!calls_new(g, OP_QUERY, t, 0)) {
        rollback(g, "out of memory");
        fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return -1;
    }
    run_calls(g->e, g->calls, n, r->call_timeout_us, g->timed_out);
    for (size_t i = 0; i < n; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct call *c = g->calls[i];
        acc_err rc = c ? c->rc : ACC_ERR_TIMEOUT;
        if (rc == ACC_ERR_NOT_FOUND) {
            mismatch = true;
            trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc, c->elapsed_us, "%s: %s", it->booking.key,
                  c->err.msg);
            continue;
        }
        if (rc) {
            trace(g, ACC_TRACE_VERIFY, it, t, end, 0, rc, c ? c->elapsed_us : r->call_timeout_us,
                  "%s: %s", it->booking.key, c ? c->err.msg : "no answer within the time limit");
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
        trace(g, ACC_TRACE_VERIFY, it, t, end, c->rsv.start, ACC_OK, c->elapsed_us,
              "%s: %s to %s, %" PRId64 " %s%s", it->booking.key, s, e, c->rsv.amount,
              it->res.kind == ACC_RES_NODES ? "nodes" : "Mbit/s", at ? "" : " (mismatch)");
        it->booking.eff_start = c->rsv.start;
        it->booking.eff_end = c->rsv.end;
        if (c->rsv.nodes) {
            free(it->nodes);
            it->nodes = c->rsv.nodes;
            c->rsv.nodes = NULL;
        }
        if (!at) {
            if (!mismatch)
                differs(it, &c->rsv, t, end, why, sizeof why);
            mismatch = true;
            if (c->rsv.start > latest)
                latest = c->rsv.start;
        }
    }
    calls_free(g);
    if (hard) {
        rollback(g, "an adapter failed to verify");
        fail(g, ACC_ENGINE_FAILED,
             hard == ACC_ERR_UNAVAILABLE || hard == ACC_ERR_TIMEOUT ? hard : ACC_ERR_ADAPTER,
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

static acc_err check_request(const struct acc_engine_request *r, struct acc_error *err)
{
    if (!r->agreement || !r->items || r->n_items == 0)
        return acc_error_set(err, ACC_ERR_INVALID, "nothing to negotiate");
    if (r->duration <= 0)
        return acc_error_set(err, ACC_ERR_INVALID, "the duration must be positive");
    for (size_t i = 0; i < r->n_items; i++) {
        if (!r->items[i].adapter || !r->items[i].res.name || r->items[i].res.amount <= 0)
            return acc_error_set(err, ACC_ERR_INVALID, "item %zu is incomplete", i);
    }
    return ACC_OK;
}

acc_err acc_engine_negotiate(struct acc_engine *e, struct acc_engine_request *req,
                             struct acc_engine_result *res)
{
    memset(res, 0, sizeof *res);
    acc_err rc = check_request(req, &res->err);
    if (rc) {
        res->outcome = ACC_ENGINE_FAILED;
        return rc;
    }
    struct nego g = {.e = e, .req = req, .res = res};
    char nonce[ACC_ID_LEN + 1];
    if (acc_id_new(nonce, NULL))
        acc_strlcpy(nonce, "x", sizeof nonce);
    memcpy(g.nonce, nonce, 4);
    g.nonce[4] = '\0';
    g.calls = calloc(req->n_items, sizeof *g.calls);
    g.timed_out = calloc(req->n_items, sizeof *g.timed_out);
    if (!g.calls || !g.timed_out) {
        free(g.calls);
        free(g.timed_out);
        res->outcome = ACC_ENGINE_FAILED;
        return acc_error_set(&res->err, ACC_ERR_NOMEM, "out of memory");
    }
    unsigned max_rounds = req->max_rounds ? req->max_rounds : 32;
    acc_time t = req->earliest;

    for (;;) {
        if (stopped(&g)) {
            fail(&g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
            break;
        }
        if (g.round >= max_rounds) {
            fail(&g, ACC_ENGINE_NO_SLOT, ACC_ERR_NO_SLOT,
                 "no agreement after %u rounds (%u rollbacks); the resources keep changing",
                 g.round, res->rollbacks);
            trace(&g, ACC_TRACE_REJECT, NULL, t, req->deadline, 0, ACC_ERR_NO_SLOT, 0,
                  "round limit reached");
            break;
        }
        g.round++;
        res->rounds = g.round;
        if (t + req->duration > req->deadline) {
            no_slot(&g, t, "the window is over");
            break;
        }
        if (!preview_all(&g, t))
            break;
        acc_time c = t, next = t;
        int d = decide(&g, t, &c);
        calls_free(&g);
        if (d < 0)
            break;
        if (d == 0) {
            t = c > t ? c : t + 1;
            continue;
        }
        char s[ACC_TIME_STRLEN];
        acc_time_format(c, s);
        trace(&g, ACC_TRACE_PROPOSE, NULL, c, c + req->duration, c, ACC_OK, 0,
              "common start %s for every adapter", s);
        if (stopped(&g)) {
            fail(&g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
            break;
        }
        int ok = reserve_all(&g, c, &next);
        if (ok < 0)
            break;
        if (ok == 0) {
            /* Retry from the latest effective start; at least from c. */
            t = next > c ? next : c;
            continue;
        }
        res->outcome = ACC_ENGINE_AGREED;
        res->start = c;
        res->end = c + req->duration;
        acc_error_clear(&res->err);
        trace(&g, ACC_TRACE_AGREE, NULL, c, c + req->duration, c, ACC_OK, 0,
              "all %zu reservations verified at %s", req->n_items, s);
        break;
    }
    calls_free(&g);
    free(g.calls);
    free(g.timed_out);
    return ACC_OK;
}

acc_err acc_engine_preview(struct acc_engine *e, struct acc_adapter *ad,
                           const struct acc_resource *res, acc_time from, acc_time until,
                           int64_t duration, int64_t timeout_us, struct acc_frames *out,
                           struct acc_error *err)
{
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    c->op = OP_PREVIEW;
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
    run_calls(e, &c, 1, timeout_us, &late);
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
    call_free(c);
    return rc;
}

acc_err acc_engine_probe(struct acc_engine *e, const struct acc_engine_request *req,
                         acc_time *start, struct acc_error *err)
{
    struct acc_engine_result res;
    memset(&res, 0, sizeof res);
    acc_err rc = check_request(req, err);
    if (rc)
        return rc;
    struct acc_engine_request quiet = *req;
    quiet.hooks.trace = NULL;
    struct nego g = {.e = e, .req = &quiet, .res = &res};
    g.calls = calloc(req->n_items, sizeof *g.calls);
    g.timed_out = calloc(req->n_items, sizeof *g.timed_out);
    *start = -1;
    if (!g.calls || !g.timed_out) {
        free(g.calls);
        free(g.timed_out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (req->earliest + req->duration <= req->deadline) {
        if (preview_all(&g, req->earliest)) {
            struct acc_frames *p = malloc(req->n_items * sizeof *p);
            if (p) {
                for (size_t i = 0; i < req->n_items; i++)
                    p[i] = g.calls[i]->frames;
                *start = acc_engine_common_start(p, req->n_items, req->earliest, req->duration);
                free(p);
            }
        } else {
            rc = acc_error_copy(err, &res.err);
        }
    }
    calls_free(&g);
    free(g.calls);
    free(g.timed_out);
    return rc;
}
