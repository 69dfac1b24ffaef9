/* SPDX-License-Identifier: Apache-2.0 */
/* calendar.c - the capacity calendar (calendar.h). */
#include "calendar.h"

#include <stdlib.h>
#include <string.h>

#define TIME_MAX INT64_MAX

void acc_calendar_init(struct acc_calendar *c, int64_t capacity)
{
    memset(c, 0, sizeof *c);
    c->capacity = capacity;
}

void acc_calendar_release(struct acc_calendar *c)
{
    free(c->pts);
    c->pts = NULL;
    c->n = c->cap = 0;
}

int64_t acc_calendar_capacity(const struct acc_calendar *c)
{
    return c->capacity;
}

/* Index of the first point with t > when (upper bound). */
static size_t upper(const struct acc_calendar *c, acc_time when)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pts[mid].t <= when)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int64_t used_at_index(const struct acc_calendar *c, size_t up)
{
    return up ? c->pts[up - 1].used : 0;
}

static acc_err reserve_points(struct acc_calendar *c, size_t more)
{
    if (c->n + more <= c->cap)
        return ACC_OK;
    size_t cap = c->cap ? c->cap : 64;
    while (cap < c->n + more)
        cap *= 2;
    struct acc_cal_point *p = realloc(c->pts, cap * sizeof *p);
    if (!p)
        return ACC_ERR_NOMEM;
    c->pts = p;
    c->cap = cap;
    return ACC_OK;
}

/* Makes sure a point exists exactly at t; returns its index. */
static size_t split_at(struct acc_calendar *c, acc_time t)
{
    size_t up = upper(c, t);
    if (up && c->pts[up - 1].t == t)
        return up - 1;
    memmove(&c->pts[up + 1], &c->pts[up], (c->n - up) * sizeof *c->pts);
    c->pts[up].t = t;
    c->pts[up].used = used_at_index(c, up);
    c->n++;
    return up;
}

/* Removes points that repeat the level before them, within [lo, hi]. */
static void coalesce(struct acc_calendar *c, size_t lo, size_t hi)
{
    if (hi >= c->n)
        hi = c->n - 1;
    size_t w = lo;
    int64_t prev = used_at_index(c, lo);
    for (size_t r = lo; r <= hi && r < c->n; r++) {
        if (c->pts[r].used == prev)
            continue;
        prev = c->pts[r].used;
        c->pts[w++] = c->pts[r];
    }
    size_t removed = (hi + 1) - w;
    if (removed) {
        memmove(&c->pts[w], &c->pts[hi + 1], (c->n - hi - 1) * sizeof *c->pts);
        c->n -= removed;
    }
}

static acc_err change(struct acc_calendar *c, acc_time start, acc_time end, int64_t delta)
{
    if (end <= start)
        return ACC_ERR_INVALID;
    if (reserve_points(c, 2))
        return ACC_ERR_NOMEM;
    size_t i = split_at(c, start);
    size_t j = split_at(c, end);
    for (size_t k = i; k < j; k++)
        c->pts[k].used += delta;
    coalesce(c, i, j);
    return ACC_OK;
}

int64_t acc_calendar_peak(const struct acc_calendar *c, acc_time start, acc_time end)
{
    size_t up = upper(c, start);
    int64_t peak = used_at_index(c, up);
    for (size_t k = up; k < c->n && c->pts[k].t < end; k++) {
        if (c->pts[k].used > peak)
            peak = c->pts[k].used;
    }
    return peak;
}

bool acc_calendar_fits(const struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    if (amount > c->capacity)
        return false;
    return acc_calendar_peak(c, start, end) + amount <= c->capacity;
}

acc_err acc_calendar_lift(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    if (end <= start || amount <= 0)
        return ACC_ERR_INVALID;
    /* the lift's two points, the add's two, the unlift's two */
    if (reserve_points(c, 6))
        return ACC_ERR_NOMEM;
    return change(c, start, end, -amount);
}

void acc_calendar_unlift(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    (void)change(c, start, end, amount); /* room was made by the lift */
}

acc_err acc_calendar_add(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    if (end <= start || amount <= 0)
        return ACC_ERR_INVALID;
    if (!acc_calendar_fits(c, start, end, amount))
        return ACC_ERR_BUSY;
    return change(c, start, end, amount);
}

acc_err acc_calendar_force(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    if (end <= start || amount <= 0)
        return ACC_ERR_INVALID;
    return change(c, start, end, amount);
}

acc_err acc_calendar_remove(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount)
{
    if (end <= start || amount <= 0)
        return ACC_ERR_INVALID;
    return change(c, start, end, -amount);
}

struct event {
    acc_time t;
    int64_t delta;
};

static int event_cmp(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

acc_err acc_calendar_load(struct acc_calendar *c, const struct acc_cal_booking *b, size_t n)
{
    struct event *ev = malloc((n ? n : 1) * 2 * sizeof *ev);
    if (!ev)
        return ACC_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i].end <= b[i].start || b[i].amount <= 0)
            continue;
        ev[m++] = (struct event){b[i].start, b[i].amount};
        ev[m++] = (struct event){b[i].end, -b[i].amount};
    }
    qsort(ev, m, sizeof *ev, event_cmp);
    c->n = 0;
    if (reserve_points(c, m)) {
        free(ev);
        return ACC_ERR_NOMEM;
    }
    int64_t level = 0;
    for (size_t i = 0; i < m;) {
        acc_time t = ev[i].t;
        while (i < m && ev[i].t == t)
            level += ev[i++].delta;
        if (level != used_at_index(c, c->n))
            c->pts[c->n++] = (struct acc_cal_point){t, level};
    }
    free(ev);
    return ACC_OK;
}

/* Walks the segments of [from, until) and reports each maximal run where
 * `amount` is free; stop() returning true ends the walk. */
typedef bool (*run_fn)(acc_time start, acc_time end, void *ctx);

static void sweep(const struct acc_calendar *c, acc_time from, acc_time until, int64_t amount,
                  run_fn fn, void *ctx)
{
    if (amount > c->capacity || until <= from)
        return;
    int64_t limit = c->capacity - amount;
    size_t i = upper(c, from);
    acc_time t = from;
    int64_t used = used_at_index(c, i);
    acc_time run = -1;
    for (;;) {
        acc_time next = i < c->n ? c->pts[i].t : TIME_MAX;
        if (used <= limit) {
            if (run < 0)
                run = t;
        } else if (run >= 0) {
            if (fn(run, t, ctx))
                return;
            run = -1;
        }
        if (next >= until)
            break;
        t = next;
        used = c->pts[i].used;
        i++;
    }
    if (run >= 0)
        fn(run, until, ctx);
}

struct preview_ctx {
    int64_t duration;
    size_t max;
    struct acc_frames *out;
    acc_err rc;
};

static bool preview_run(acc_time start, acc_time end, void *arg)
{
    struct preview_ctx *p = arg;
    if (end - start < p->duration)
        return false;
    if (p->out->n >= p->max) {
        p->out->truncated = true;
        return true;
    }
    p->rc = acc_frames_push(p->out, start, end);
    return p->rc != ACC_OK;
}

acc_err acc_calendar_preview(const struct acc_calendar *c, acc_time from, acc_time until,
                             int64_t duration, int64_t amount, size_t max_frames,
                             struct acc_frames *out)
{
    struct preview_ctx p = {duration, out->n + max_frames, out, ACC_OK};
    sweep(c, from, until, amount, preview_run, &p);
    return p.rc;
}

struct earliest_ctx {
    int64_t duration;
    acc_time found;
};

static bool earliest_run(acc_time start, acc_time end, void *arg)
{
    struct earliest_ctx *e = arg;
    if (end - start < e->duration)
        return false;
    e->found = start;
    return true;
}

acc_time acc_calendar_earliest(const struct acc_calendar *c, acc_time from, acc_time until,
                               int64_t duration, int64_t amount)
{
    struct earliest_ctx e = {duration, -1};
    sweep(c, from, until, amount, earliest_run, &e);
    return e.found;
}

int64_t acc_calendar_walk_start(struct acc_cal_walk *w, const struct acc_calendar *c, acc_time t)
{
    w->c = c;
    w->next = upper(c, t);
    return used_at_index(c, w->next);
}

bool acc_calendar_walk_next(struct acc_cal_walk *w, acc_time *t, int64_t *used)
{
    if (w->next >= w->c->n)
        return false;
    *t = w->c->pts[w->next].t;
    *used = w->c->pts[w->next].used;
    w->next++;
    return true;
}
