/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_reserve.c - Accord's advance-reservation mode: at its arrival each job
 * books the earliest common slot over per-cluster capacity calendars
 * (lib/calendar, as accordd's simulated sites keep them).  The
 * candidate placements come from lib/policy (ACC_POLICY_EARLIEST: every
 * candidate, the earliest common start wins, as accordd's planner does).
 * Calendars are rebuilt from the bookings still running whenever the past
 * outweighs them, so a long run costs no more per job than a short one. */
#include "wsim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TICKS 1e6 /* calendar ticks per simulated second */

bool wsim_reserve_init(struct wsim_state *s)
{
    for (int c = 0; c < s->nc; c++)
        acc_calendar_init(&s->cal[c], s->size[c]);
    return true;
}

void wsim_reserve_free(struct wsim_state *s)
{
    for (int c = 0; c < WSIM_MAX_CLUSTERS; c++)
        acc_calendar_release(&s->cal[c]);
    free(s->live);
    s->live = NULL;
}

static acc_time ticks(double t)
{
    return (acc_time)llround(t * TICKS);
}

/* The earliest common start >= from of a placement; each calendar's
 * earliest start is taken in turn until all agree (the engine's
 * "iterative" mode, which cannot miss a common slot). */
static acc_time common_start(const struct wsim_state *s, const int64_t *per, acc_time from,
                             acc_time dur)
{
    acc_time t = from;
    for (int again = 1; again;) {
        again = 0;
        for (int c = 0; c < s->nc; c++) {
            if (!per[c])
                continue;
            acc_time e = acc_calendar_earliest(&s->cal[c], t, INT64_MAX / 2, dur, per[c]);
            if (e < 0)
                return -1;
            if (e > t) {
                t = e;
                again = 1;
            }
        }
    }
    return t;
}

/* Drops the bookings that ended and reloads the calendars from the rest. */
static void compact(struct wsim_state *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->nlive; i++) {
        if (s->w->v[s->live[i]].end > s->now)
            s->live[w++] = s->live[i];
    }
    s->nlive = w;
    struct acc_cal_booking *b = malloc((w ? w : 1) * sizeof *b);
    if (!b) {
        wsim_fail(s, "out of memory for the calendars");
        return;
    }
    for (int c = 0; c < s->nc; c++) {
        size_t n = 0;
        for (size_t i = 0; i < w; i++) {
            const struct wsim_job *j = &s->w->v[s->live[i]];
            if (j->alloc[c] > 0)
                b[n++] = (struct acc_cal_booking){ticks(j->start), ticks(j->end), j->alloc[c]};
        }
        if (acc_calendar_load(&s->cal[c], b, n) != ACC_OK)
            wsim_fail(s, "out of memory for the calendars");
    }
    free(b);
}

/* The candidate placements of a job, from lib/policy; false: the run
 * failed. */
static bool candidates(struct wsim_state *s, uint32_t job, struct acc_placement *cand, size_t max,
                       size_t *n)
{
    struct wsim_job *j = &s->w->v[job];
    int64_t idle[WSIM_MAX_CLUSTERS], sizes[WSIM_MAX_COMP];
    memcpy(idle, s->size, sizeof idle);
    for (int i = 0; i < j->ncomp; i++)
        sizes[i] = j->comp[i];
    struct acc_policy_system sys = {
        .n_clusters = (size_t)s->nc, .idle = idle, .size = s->size, .latency = s->latency};
    struct acc_policy_request req = {.type = j->ncomp > 1 ? ACC_REQ_NONFIXED : ACC_REQ_FLEXIBLE,
                                     .n_components = (size_t)j->ncomp,
                                     .sizes = sizes,
                                     .total = j->total};
    if (s->p->split == WSIM_SPLIT_NONE && j->ncomp == 1)
        req.type = ACC_REQ_TOTAL;
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_EARLIEST);
    struct acc_error e = {0};
    if (acc_policy_candidates(&sys, &req, &o, cand, max, n, &e) != ACC_OK)
        return wsim_fail(s, "job %u: %s", job, e.msg);
    if (!*n)
        return wsim_fail(s, "job %u (%d units) fits no placement of these clusters", job, j->total);
    return true;
}

/* The job's units per cluster in placement per. */
static void set_alloc(struct wsim_job *j, int nc, const int64_t *per)
{
    j->used = 0;
    for (int c = 0; c < nc; c++) {
        j->alloc[c] = (int)per[c];
        j->used += per[c] > 0;
    }
}

/* The earliest common slot over the candidates (*best, -1 when none), its
 * duration and its units per cluster. */
static void best_slot(struct wsim_state *s, uint32_t job, const struct acc_placement *cand,
                      size_t n, acc_time *best, acc_time *best_dur, int64_t *best_per)
{
    struct wsim_job *j = &s->w->v[job];
    acc_time now = ticks(s->now);
    *best = -1;
    for (size_t k = 0; k < n; k++) {
        int64_t per[WSIM_MAX_CLUSTERS];
        acc_placement_per_cluster(&cand[k], (size_t)s->nc, per);
        set_alloc(j, s->nc, per); /* the service time depends on it */
        acc_time dur = ticks(wsim_service_time(s->p, j));
        if (dur < 1)
            dur = 1;
        acc_time t = common_start(s, per, now, dur);
        if (t >= 0 && (*best < 0 || t < *best)) {
            *best = t;
            *best_dur = dur;
            memcpy(best_per, per, sizeof per);
        }
    }
}

/* Books the job's slot on the calendars and keeps it among the live
 * bookings; a slot later than now starts with an event. */
static void book(struct wsim_state *s, uint32_t job, acc_time best, acc_time dur,
                 const int64_t *per)
{
    struct wsim_job *j = &s->w->v[job];
    set_alloc(j, s->nc, per);
    for (int c = 0; c < s->nc; c++) {
        if (per[c] && acc_calendar_add(&s->cal[c], best, best + dur, per[c]) != ACC_OK) {
            wsim_fail(s, "job %u: the calendar refused its own common slot", job);
            return;
        }
    }
    j->start = (double)best / TICKS;
    j->placed = j->start; /* the units are held from the booked start */
    j->end = (double)(best + dur) / TICKS;
    if (s->nlive == s->caplive) {
        size_t cap = s->caplive ? s->caplive * 2 : 256;
        uint32_t *v = realloc(s->live, cap * sizeof *v);
        if (!v) {
            wsim_fail(s, "out of memory for the bookings");
            return;
        }
        s->live = v;
        s->caplive = cap;
    }
    s->live[s->nlive++] = job;
    if (best > ticks(s->now)) {
        s->queued++;
        if (!wsim_heap_push(&s->heap, j->start, WSIM_EV_ARSTART, job, 0))
            wsim_fail(s, "out of memory for the event heap");
    }
    if (s->nlive > 2 * s->live_mark + 1024) {
        compact(s);
        s->live_mark = s->nlive;
    }
}

void wsim_reserve_arrival(struct wsim_state *s, uint32_t job)
{
    struct acc_placement cand[64];
    size_t n = 0, max = (size_t)s->p->reserve_candidates;
    if (!candidates(s, job, cand, max < 64 ? max : 64, &n))
        return;
    acc_time best, best_dur = 0;
    int64_t best_per[WSIM_MAX_CLUSTERS] = {0};
    best_slot(s, job, cand, n, &best, &best_dur, best_per);
    if (best < 0) {
        wsim_fail(s, "job %u: no common slot", job);
        return;
    }
    book(s, job, best, best_dur, best_per);
}
