/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_comm.c - the communication models: what a job runs as placed (the
 * extension factor, Banen et al.'s run-time tables, Sonmez et al.'s CCR
 * model) and Jones et al.'s dynamic bandwidth model, whose allotments are
 * recomputed at every start and end of a co-allocated job (eqs. 1, 3-6,
 * through lib/policy). */
#include "wsim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double wsim_service_time(const struct wsim_params *p, const struct wsim_job *j)
{
    switch (p->comm) {
    case WSIM_C_NONE:
    case WSIM_C_BW: /* a job on one cluster uses no link */
        return j->t1;
    case WSIM_C_EXT:
        return j->used > 1 ? j->t1 * p->ext : j->t1;
    case WSIM_C_TABLE: {
        double t = wsim_banen_time(j->app, j->total, j->used);
        if (t <= 0) /* a spread the table lacks: the requested one */
            t = wsim_banen_time(j->app, j->total, j->ncomp);
        return t > 0 ? t : j->t1;
    }
    case WSIM_C_CCR: {
        bool slow = false;
        for (int c = 0; c < p->nclusters; c++)
            slow = slow || (j->alloc[c] > 0 && p->slow_link[c]);
        int k = j->used < 1 ? 1 : j->used;
        double m = k == 1 ? 1.0 : slow ? p->ccr_m_slow[k] : p->ccr_m[k];
        return j->t1 / (1 + p->ccr) + m * j->t1 * p->ccr / (1 + p->ccr);
    }
    }
    return j->t1;
}

/* Recomputes every running co-allocated job's slowdown and moves its end:
 * eq. (6) then (5) for the jobs that ran since the last change. */
static void reallot(struct wsim_state *s, size_t fresh)
{
    size_t n = s->nbw, nl = (size_t)s->nc;
    double dt = s->now - s->last_change;
    s->last_change = s->now;
    if (!n)
        return;
    double *req = malloc(n * nl * sizeof *req), *sd = malloc(n * sizeof *sd);
    if (!req || !sd) {
        wsim_fail(s, "out of memory for the bandwidth model");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(&req[i * nl], s->bw[i].req, nl * sizeof *req);
    struct acc_error e = {0};
    if (acc_bw_allot(n, nl, req, s->link_max,
                     s->p->progressive_fill ? ACC_ALLOT_FILL : ACC_ALLOT_MIN_RULE, sd,
                     &e) != ACC_OK) {
        wsim_fail(s, "bandwidth allotment: %s", e.msg);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct wsim_bwjob *b = &s->bw[i];
        struct wsim_job *j = &s->w->v[b->job];
        acc_err rc;
        bool moved = true;
        if (i == fresh) {
            rc = acc_bw_residual_start(j->t1, s->p->kfrac, sd[i], &b->res, &e);
        } else {
            /* Every job's residuals advance to now; only a changed sd
             * moves the end (eq. 5 leaves it put otherwise). */
            moved = sd[i] != b->res.sd;
            rc = acc_bw_residual_update(&b->res, dt, sd[i], &e);
        }
        if (rc != ACC_OK) {
            wsim_fail(s, "job %u: residual time: %s", b->job, e.msg);
            goto out;
        }
        if (!moved)
            continue;
        j->end = s->now + acc_bw_residual_left(&b->res);
        s->ver[b->job]++;
        if (!wsim_heap_push(&s->heap, j->end, WSIM_EV_DEPART, b->job, s->ver[b->job])) {
            wsim_fail(s, "out of memory for the event heap");
            goto out;
        }
    }
out:
    free(req);
    free(sd);
}

void wsim_bw_start(struct wsim_state *s, uint32_t job)
{
    const struct wsim_job *j = &s->w->v[job];
    if (s->nbw == s->capbw) {
        size_t cap = s->capbw ? s->capbw * 2 : 64;
        struct wsim_bwjob *v = realloc(s->bw, cap * sizeof *v);
        if (!v) {
            wsim_fail(s, "out of memory for the bandwidth model");
            return;
        }
        s->bw = v;
        s->capbw = cap;
    }
    struct wsim_bwjob *b = &s->bw[s->nbw];
    memset(b, 0, sizeof *b);
    b->job = job;
    double ppbw =
        acc_bw_ppbw_from_bsbw(s->p->bsbw, j->total, s->p->bsbw_reading_b ? ACC_BSBW_B : ACC_BSBW_A);
    for (int c = 0; c < s->nc; c++) {
        b->req[c] = acc_bw_requirement(j->alloc[c], j->total, ppbw);
        s->link_load[c] += b->req[c];
    }
    s->nbw++;
    reallot(s, s->nbw - 1);
}

void wsim_bw_end(struct wsim_state *s, uint32_t job)
{
    for (size_t i = 0; i < s->nbw; i++) {
        if (s->bw[i].job != job)
            continue;
        for (int c = 0; c < s->nc; c++) {
            s->link_load[c] -= s->bw[i].req[c];
            if (s->link_load[c] < 1e-9)
                s->link_load[c] = 0; /* no drift below zero */
        }
        s->bw[i] = s->bw[--s->nbw];
        break;
    }
    reallot(s, (size_t)-1);
}

void wsim_bw_used(const struct wsim_state *s, double *used)
{
    for (int c = 0; c < s->nc; c++)
        used[c] = 0;
    for (size_t i = 0; i < s->nbw; i++) {
        for (int c = 0; c < s->nc; c++)
            used[c] += s->bw[i].res.sd * s->bw[i].req[c];
    }
}
