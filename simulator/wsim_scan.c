/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_scan.c - the queues without head-of-line blocking: KOALA's placement
 * queue, scanned head to tail every scan_period (0: at every departure), and
 * Jones et al.'s full queue scan at every arrival and departure with the
 * LA -> MIG -> co-allocation template.  An arrival only tries the new job:
 * it frees nothing, so every job already queued still does not fit. */
#include "wsim_internal.h"

#include <math.h>
#include <stdlib.h>

static enum acc_policy_id koala_id(enum wsim_koala k)
{
    switch (k) {
    case WSIM_K_WF:
        return ACC_POLICY_WF;
    case WSIM_K_FCM:
        return ACC_POLICY_FCM;
    case WSIM_K_CA:
        return ACC_POLICY_CA;
    case WSIM_K_NONE:
        break;
    }
    return ACC_POLICY_SINGLE;
}

static enum acc_policy_id jones_id(const struct wsim_params *p)
{
    enum wsim_jones j = p->jones == WSIM_J_IDEAL ? p->ideal_placement : p->jones;
    switch (j) {
    case WSIM_J_MIG:
        return ACC_POLICY_MIGRATION;
    case WSIM_J_IDEAL: /* ideal_placement is a module, never IDEAL itself */
    case WSIM_J_INITIAL:
        return ACC_POLICY_INITIAL;
    case WSIM_J_A1:
        return ACC_POLICY_A1;
    case WSIM_J_B1:
        return ACC_POLICY_B1;
    case WSIM_J_B2:
        return ACC_POLICY_B2;
    case WSIM_J_B3:
        return ACC_POLICY_B3;
    case WSIM_J_B4:
        break;
    }
    return ACC_POLICY_B4;
}

/* Tries to place and start one job now. */
static bool try_start(struct wsim_state *s, uint32_t job)
{
    const struct wsim_params *p = s->p;
    bool fits = false;
    if (p->disc == WSIM_D_KOALA) {
        enum acc_request_type type = ACC_REQ_FLEXIBLE;
        if (p->koala == WSIM_K_WF)
            type = ACC_REQ_NONFIXED;
        else if (p->koala == WSIM_K_NONE)
            type = ACC_REQ_TOTAL;
        wsim_place(s, job, koala_id(p->koala), type, 0, &fits);
    } else {
        wsim_place(s, job, jones_id(p), ACC_REQ_FLEXIBLE, 0, &fits);
    }
    if (!fits || s->failed)
        return false;
    wsim_start(s, job, s->now + (p->disc == WSIM_D_KOALA ? p->startup : 0));
    return true;
}

static void pass(struct wsim_state *s)
{
    struct wsim_queue *q = &s->q[0];
    if (!q->n)
        return;
    bool *keep = malloc(q->n * sizeof *keep);
    if (!keep) {
        wsim_fail(s, "out of memory for a scan");
        return;
    }
    size_t n = q->n;
    /* No policy places a job on fewer idle units than it needs in total:
     * such jobs are passed over without asking the policy (the same
     * schedule, and a long queue costs a comparison per job). */
    int64_t idle = 0;
    for (int c = 0; c < s->nc; c++)
        idle += s->idle[c];
    for (size_t i = 0; i < n && !s->failed; i++) {
        uint32_t job = wsim_queue_at(q, i);
        if (idle < s->min_total) { /* nothing in the workload fits any more */
            for (; i < n; i++)
                keep[i] = true;
            break;
        }
        keep[i] = s->w->v[job].total > idle || !try_start(s, job);
        if (!keep[i]) {
            s->queued--;
            idle -= s->w->v[job].total;
        }
    }
    wsim_queue_filter(q, keep);
    free(keep);
}

static void schedule_scan(struct wsim_state *s)
{
    double per = s->p->scan_period;
    if (s->scan_pending || per <= 0 || !s->q[0].n)
        return;
    if (s->p->disc == WSIM_D_JONES && s->p->triggers != WSIM_TRIG_PERIODIC)
        return;
    double next = ceil(s->now / per) * per;
    if (next <= s->now)
        next += per;
    if (!wsim_heap_push(&s->heap, next, WSIM_EV_SCAN, 0, 0))
        wsim_fail(s, "out of memory for the event heap");
    s->scan_pending = true;
}

/* Jones et al.'s triggers (a GAP): `events` passes at every arrival and
 * departure; `departures` only at departures (an arrival waits for the
 * next one); `periodic` every scan_period, as KOALA's scan. */
static bool jones_queues_arrival(const struct wsim_state *s)
{
    const struct wsim_params *p = s->p;
    if (p->disc != WSIM_D_JONES || p->triggers == WSIM_TRIG_EVENTS)
        return false;
    if (p->triggers == WSIM_TRIG_PERIODIC)
        return true;
    /* departures: on an empty system no departure will come, so the
     * arrival is the trigger (else the job would wait for ever). */
    for (int c = 0; c < s->nc; c++) {
        if (s->idle[c] != s->size[c])
            return true;
    }
    return false;
}

void wsim_scan_arrival(struct wsim_state *s, uint32_t job)
{
    /* A queued job must wait for a trigger; otherwise it may start now. */
    if (!jones_queues_arrival(s) && try_start(s, job))
        return;
    if (!wsim_queue_push(&s->q[0], job)) {
        wsim_fail(s, "out of memory for the queue");
        return;
    }
    s->queued++;
    schedule_scan(s);
}

void wsim_scan_departure(struct wsim_state *s, uint32_t job)
{
    (void)job;
    if (s->p->disc == WSIM_D_JONES ? s->p->triggers != WSIM_TRIG_PERIODIC : s->p->scan_period <= 0)
        pass(s);
}

void wsim_scan_tick(struct wsim_state *s)
{
    s->scan_pending = false;
    pass(s);
    schedule_scan(s);
}
