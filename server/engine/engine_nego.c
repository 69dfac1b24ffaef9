/* SPDX-License-Identifier: Apache-2.0 */
/* engine_nego.c - the negotiation loop: preview rounds, the choice of the
 * common start (intersect or iterative), and the probe the planner uses.
 * Booking at that start is in engine_reserve.c. */
#include "engine.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/id.h"
#include "../../lib/common/strutil.h"
#include "engine_int.h"

void acc_engine_trace(struct acc_engine_nego *g, enum acc_trace_kind kind,
                      const struct acc_engine_item *it, acc_time from, acc_time until,
                      acc_time result, acc_err status, int64_t elapsed_us, const char *fmt, ...)
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

bool acc_engine_stopped(struct acc_engine_nego *g)
{
    return g->req->hooks.stopped && g->req->hooks.stopped(g->req->hooks.ctx);
}

static struct acc_engine_call *call_new(struct acc_engine_nego *g, enum acc_engine_op op,
                                        struct acc_engine_item *it)
{
    struct acc_engine_call *c = calloc(1, sizeof *c);
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
    if (it->replaces)
        acc_strlcpy(c->replaces, it->replaces, sizeof c->replaces);
    acc_frames_init(&c->frames);
    return c;
}

void acc_engine_calls_free(struct acc_engine_nego *g)
{
    for (size_t i = 0; i < g->req->n_items; i++) {
        acc_engine_call_free(g->calls[i]);
        g->calls[i] = NULL;
    }
}

bool acc_engine_calls_new(struct acc_engine_nego *g, enum acc_engine_op op, acc_time from,
                          acc_time until)
{
    for (size_t i = 0; i < g->req->n_items; i++) {
        g->calls[i] = call_new(g, op, &g->req->items[i]);
        if (!g->calls[i]) {
            acc_engine_calls_free(g);
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

acc_err acc_engine_failure_kind(acc_err rc)
{
    switch (rc) {
    case ACC_ERR_UNAVAILABLE:
    case ACC_ERR_TIMEOUT:
    case ACC_ERR_STORAGE_AWAY:
    case ACC_ERR_FORBIDDEN:
        return rc;
    default:
        return ACC_ERR_ADAPTER;
    }
}

acc_err acc_engine_fail(struct acc_engine_nego *g, enum acc_engine_outcome outcome, acc_err code,
                        const char *fmt, ...)
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
static bool preview_all(struct acc_engine_nego *g, acc_time t)
{
    struct acc_engine_request *r = g->req;
    if (!acc_engine_calls_new(g, ACC_ENGINE_OP_PREVIEW, t, r->deadline)) {
        acc_engine_fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
        return false;
    }
    acc_engine_run_calls(g->e, g->calls, r->n_items, r->call_timeout_us, g->timed_out);
    bool ok = true;
    for (size_t i = 0; i < r->n_items; i++) {
        struct acc_engine_item *it = &r->items[i];
        struct acc_engine_call *c = g->calls[i];
        char first[ACC_TIME_STRLEN];
        if (!c) {
            acc_engine_trace(g, ACC_TRACE_PREVIEW, it, t, r->deadline, 0, ACC_ERR_TIMEOUT,
                             r->call_timeout_us, "no answer within the time limit");
            if (ok)
                acc_engine_fail(g, ACC_ENGINE_FAILED, ACC_ERR_TIMEOUT,
                                "%s: adapter %s did not answer its preview within %" PRId64 " ms",
                                it->label, acc_adapter_name(it->adapter),
                                r->call_timeout_us / 1000);
            ok = false;
            continue;
        }
        if (c->rc) {
            acc_engine_trace(g, ACC_TRACE_PREVIEW, it, t, r->deadline, 0, c->rc, c->elapsed_us,
                             "%s", c->err.msg);
            if (ok)
                acc_engine_fail(g, ACC_ENGINE_FAILED, acc_engine_failure_kind(c->rc),
                                "%s: preview failed: %s", it->label, c->err.msg);
            if (ok && c->refused) /* the breaker knows when a retry may succeed */
                g->res->err.retry_after = c->err.retry_after;
            ok = false;
            continue;
        }
        fmt_time(c->frames.n ? c->frames.v[0].start : 0, first);
        acc_engine_trace(
            g, ACC_TRACE_PREVIEW, it, t, r->deadline, c->frames.n ? c->frames.v[0].start : 0,
            ACC_OK, c->elapsed_us, "%zu free frame%s, earliest start %s%s", c->frames.n,
            c->frames.n == 1 ? "" : "s", first, c->frames.truncated ? " (truncated)" : "");
    }
    if (!ok)
        acc_engine_calls_free(g);
    return ok;
}

/* Explains, one line per item, why no common slot exists from t. */
static void no_slot(struct acc_engine_nego *g, acc_time t, const char *why)
{
    struct acc_engine_request *r = g->req;
    char dur[ACC_DURATION_STRLEN], until[ACC_TIME_STRLEN], from[ACC_TIME_STRLEN];
    acc_duration_format(r->duration, dur);
    acc_time_format(r->deadline, until);
    acc_time_format(t, from);
    acc_engine_fail(g, ACC_ENGINE_NO_SLOT, ACC_ERR_NO_SLOT,
                    "no common slot of %s between %s and %s: %s", dur, from, until, why);
    for (size_t i = 0; i < r->n_items; i++) {
        struct acc_engine_call *c = g->calls[i];
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
    acc_engine_trace(g, ACC_TRACE_REJECT, NULL, t, r->deadline, 0, ACC_ERR_NO_SLOT, 0, "%s", why);
}

/* Decides the round's candidate start from the previews: returns 1 with the
 * start in *at, 0 to run another preview round from *at, or -1 when there is
 * no slot (the result is set). */
static int decide(struct acc_engine_nego *g, acc_time t, acc_time *at)
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
                acc_engine_trace(g, ACC_TRACE_PROPOSE, NULL, t, r->deadline, latest, ACC_OK, 0,
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
        acc_engine_fail(g, ACC_ENGINE_FAILED, ACC_ERR_NOMEM, "out of memory");
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
        acc_engine_trace(g, ACC_TRACE_PROPOSE, NULL, t, r->deadline, resume, ACC_OK, 0,
                         "previews truncated; looking again from their end");
        *at = resume;
        return 0;
    }
    no_slot(g, t, "the free frames of the adapters never overlap long enough");
    return -1;
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

/* At the common start c: reserve and verify.  True when another round
 * follows, from *t. */
static bool book_at(struct acc_engine_nego *g, acc_time c, acc_time *t)
{
    struct acc_engine_request *req = g->req;
    struct acc_engine_result *res = g->res;
    char s[ACC_TIME_STRLEN];
    acc_time_format(c, s);
    acc_engine_trace(g, ACC_TRACE_PROPOSE, NULL, c, c + req->duration, c, ACC_OK, 0,
                     "common start %s for every adapter", s);
    if (acc_engine_stopped(g)) {
        acc_engine_fail(g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
        return false;
    }
    acc_time next = *t;
    int ok = acc_engine_reserve_all(g, c, &next);
    if (ok < 0)
        return false;
    if (ok == 0) {
        /* Retry from the latest effective start; at least from c. */
        *t = next > c ? next : c;
        return true;
    }
    res->outcome = ACC_ENGINE_AGREED;
    res->start = c;
    res->end = c + req->duration;
    acc_error_clear(&res->err);
    acc_engine_trace(g, ACC_TRACE_AGREE, NULL, c, c + req->duration, c, ACC_OK, 0,
                     "all %zu reservations verified at %s", req->n_items, s);
    return false;
}

/* One round from *t: the previews, the decision, and at a common start
 * the booking.  True when another round follows, from *t. */
static bool round_from(struct acc_engine_nego *g, acc_time *t, unsigned max_rounds)
{
    struct acc_engine_request *req = g->req;
    if (acc_engine_stopped(g)) {
        acc_engine_fail(g, ACC_ENGINE_STOPPED, ACC_ERR_CANCELLED, "the negotiation was stopped");
        return false;
    }
    if (g->round >= max_rounds) {
        acc_engine_fail(g, ACC_ENGINE_NO_SLOT, ACC_ERR_NO_SLOT,
                        "no agreement after %u rounds (%u rollbacks); the resources keep changing",
                        g->round, g->res->rollbacks);
        acc_engine_trace(g, ACC_TRACE_REJECT, NULL, *t, req->deadline, 0, ACC_ERR_NO_SLOT, 0,
                         "round limit reached");
        return false;
    }
    g->round++;
    g->res->rounds = g->round;
    if (*t + req->duration > req->deadline) {
        no_slot(g, *t, "the window is over");
        return false;
    }
    if (!preview_all(g, *t))
        return false;
    acc_time c = *t;
    int d = decide(g, *t, &c);
    acc_engine_calls_free(g);
    if (d < 0)
        return false;
    if (d == 0) {
        *t = c > *t ? c : *t + 1;
        return true;
    }
    return book_at(g, c, t);
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
    struct acc_engine_nego g = {.e = e, .req = req, .res = res};
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
    while (round_from(&g, &t, max_rounds))
        ;
    acc_engine_calls_free(&g);
    free(g.calls);
    free(g.timed_out);
    return ACC_OK;
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
    struct acc_engine_nego g = {.e = e, .req = &quiet, .res = &res};
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
    acc_engine_calls_free(&g);
    free(g.calls);
    free(g.timed_out);
    return rc;
}

acc_err acc_engine_preview_items(struct acc_engine *e, const struct acc_engine_request *req,
                                 struct acc_frames *out, struct acc_error *err)
{
    struct acc_engine_result res;
    memset(&res, 0, sizeof res);
    acc_err rc = check_request(req, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < req->n_items; i++)
        acc_frames_init(&out[i]);
    if (req->earliest + req->duration > req->deadline)
        return ACC_OK;
    struct acc_engine_request quiet = *req;
    quiet.hooks.trace = NULL;
    struct acc_engine_nego g = {.e = e, .req = &quiet, .res = &res};
    g.calls = calloc(req->n_items, sizeof *g.calls);
    g.timed_out = calloc(req->n_items, sizeof *g.timed_out);
    if (!g.calls || !g.timed_out) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (!preview_all(&g, req->earliest)) {
        rc = acc_error_copy(err, &res.err);
        goto out;
    }
    for (size_t i = 0; i < req->n_items && !rc; i++) {
        const struct acc_frames *f = &g.calls[i]->frames;
        for (size_t k = 0; k < f->n && !rc; k++) {
            if (acc_frames_push(&out[i], f->v[k].start, f->v[k].end))
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        out[i].truncated = f->truncated;
    }
out:
    if (g.calls)
        acc_engine_calls_free(&g);
    free(g.calls);
    free(g.timed_out);
    if (rc) {
        for (size_t i = 0; i < req->n_items; i++)
            acc_frames_release(&out[i]);
    }
    return rc;
}
