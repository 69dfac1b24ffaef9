/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_run.c - one run in virtual time: arrivals in order, departures and
 * scans from the event heap (a departure before an arrival at the same
 * instant), placement through lib/policy, the figures at the end. */
#include "wsim_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/hash.h"

bool wsim_fail(struct wsim_state *s, const char *fmt, ...)
{
    if (s->failed)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
    s->failed = true;
    return false;
}

bool wsim_errf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return false;
}

bool wsim_place(struct wsim_state *s, uint32_t job, enum acc_policy_id id,
                enum acc_request_type type, size_t fixed_cluster, bool *fits)
{
    const struct wsim_params *p = s->p;
    struct wsim_job *j = &s->w->v[job];
    int64_t sizes[WSIM_MAX_COMP];
    size_t clusters[WSIM_MAX_COMP];
    for (int i = 0; i < j->ncomp; i++) {
        sizes[i] = j->comp[i];
        clusters[i] = fixed_cluster;
    }
    struct acc_policy_system sys = {
        .n_clusters = (size_t)s->nc,
        .idle = s->idle,
        .size = s->size,
        .latency = s->latency,
        .link_max = s->link_max,
        .link_load = s->link_load,
    };
    /* bw_avail = measured: A1 sees what the links carry now, each running
     * job's allotment sd_j BW_i^j, instead of the requirements. */
    double used[WSIM_MAX_CLUSTERS];
    if (id == ACC_POLICY_A1 && p->bw_measured) {
        wsim_bw_used(s, used);
        sys.link_load = used;
    }
    struct acc_policy_request req = {
        .type = type,
        .n_components = (size_t)j->ncomp,
        .sizes = sizes,
        .clusters = clusters,
        .total = j->total,
        .home = (size_t)j->home,
    };
    if (p->disc == WSIM_D_JONES)
        req.ppbw =
            acc_bw_ppbw_from_bsbw(p->bsbw, j->total, p->bsbw_reading_b ? ACC_BSBW_B : ACC_BSBW_A);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, id);
    o.tiebreak = p->random_ties ? ACC_TIE_RANDOM : ACC_TIE_LOWEST;
    o.rng = &s->tie_state;
    o.max_clusters = (size_t)p->maxc;
    o.lslt = p->lslt;
    o.discount_ge = p->discount_ge;
    o.b3_fraction = p->b3_fraction;
    o.b3_chunk = p->b3_best_fit ? ACC_B3_BEST_FIT : ACC_B3_MOST_FREE;
    o.b3_round = p->b3_round == WSIM_ROUND_FLOOR     ? ACC_ROUND_FLOOR
                 : p->b3_round == WSIM_ROUND_NEAREST ? ACC_ROUND_NEAREST
                                                     : ACC_ROUND_CEIL;
    o.b4_start = (size_t)p->b4_start;
    o.a1_order = p->a1_index ? ACC_A1_INDEX : ACC_A1_FREE_DESC;
    o.a1_solution = p->a1_best ? ACC_A1_LEAST_LINK : ACC_A1_FIRST;
    o.ca_avg = p->ca_idle ? ACC_CA_AVG_IDLE : ACC_CA_AVG_ALL;
    struct acc_placement pl;
    struct acc_error e = {0};
    if (acc_policy_place(&sys, &req, &o, &pl, &e) != ACC_OK)
        return wsim_fail(s, "job %u: %s", job, e.msg);
    *fits = pl.fits;
    if (pl.fits) {
        int64_t per[WSIM_MAX_CLUSTERS];
        acc_placement_per_cluster(&pl, (size_t)s->nc, per);
        j->used = 0;
        for (int c = 0; c < s->nc; c++) {
            j->alloc[c] = (int)per[c];
            j->used += per[c] > 0;
        }
    }
    return true;
}

void wsim_start(struct wsim_state *s, uint32_t job, double exec_from)
{
    struct wsim_job *j = &s->w->v[job];
    j->placed = s->now;
    j->start = exec_from;
    for (int c = 0; c < s->nc; c++)
        s->idle[c] -= j->alloc[c];
    bool dynamic = s->p->comm == WSIM_C_BW && j->used > 1 &&
                   !(s->p->disc == WSIM_D_JONES && s->p->jones == WSIM_J_IDEAL);
    if (dynamic) {
        wsim_bw_start(s, job);
        return;
    }
    j->end = j->start + wsim_service_time(s->p, j);
    if (!wsim_heap_push(&s->heap, j->end, WSIM_EV_DEPART, job, s->ver[job]))
        wsim_fail(s, "out of memory for the event heap");
}

static void depart(struct wsim_state *s, uint32_t job)
{
    struct wsim_job *j = &s->w->v[job];
    j->end = s->now;
    for (int c = 0; c < s->nc; c++)
        s->idle[c] += j->alloc[c];
    if (s->p->comm == WSIM_C_BW && j->used > 1)
        wsim_bw_end(s, job);
    if (s->p->disc == WSIM_D_FCFS)
        wsim_fcfs_departure(s, job);
    else
        wsim_scan_departure(s, job);
}

static void arrive(struct wsim_state *s, uint32_t job)
{
    if (s->p->disc == WSIM_D_FCFS)
        wsim_fcfs_arrival(s, job);
    else if (s->p->disc == WSIM_D_RESERVE)
        wsim_reserve_arrival(s, job);
    else
        wsim_scan_arrival(s, job);
    s->qlen[s->nqlen++] = (double)s->queued;
}

/* A job that could not start on the empty system would wait for ever. */
static bool startable(struct wsim_state *s)
{
    for (size_t i = 0; i < s->w->n; i++) {
        const struct wsim_job *j = &s->w->v[i];
        bool ok = j->total <= wsim_total_units(s->p);
        if (s->p->disc == WSIM_D_FCFS) {
            bool single = j->ncomp == 1;
            bool local = s->p->fcfs == WSIM_LS ||
                         ((s->p->fcfs == WSIM_GP || s->p->fcfs == WSIM_LP) && single);
            if (s->p->fcfs == WSIM_SC)
                ok = j->total <= s->size[0];
            else if (single && local)
                ok = j->comp[0] <= s->size[j->home];
            else if (single)
                ok = ok && j->comp[0] <= s->size[0];
            else
                ok = j->ncomp <= s->nc;
            if (single && !local && s->p->fcfs != WSIM_SC) {
                ok = false;
                for (int c = 0; c < s->nc; c++)
                    ok = ok || j->comp[0] <= s->size[c];
            }
        }
        if (!ok)
            return wsim_fail(s,
                             "job %zu (%d units in %d components) can never start under %s on "
                             "these clusters",
                             i + 1, j->total, j->ncomp, s->p->policy_name);
    }
    return true;
}

static void state_free(struct wsim_state *s)
{
    wsim_heap_free(&s->heap);
    for (int i = 0; i <= WSIM_MAX_CLUSTERS; i++)
        wsim_queue_free(&s->q[i]);
    free(s->bw);
    free(s->ver);
    free(s->qlen);
    wsim_reserve_free(s);
}

bool wsim_run(const struct wsim_params *p, struct wsim_workload_set *w, int rep,
              struct wsim_result *r, char *err, size_t errlen)
{
    struct wsim_state s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.w = w;
    s.err = err;
    s.errlen = errlen;
    s.nc = p->nclusters;
    wsim_rng_seed(&s.rng, p->seed, 1000003ULL * (uint64_t)rep + 2);
    s.tie_state = p->seed * ACC_GOLDEN64 + (uint64_t)rep;
    for (int c = 0; c < s.nc; c++) {
        s.idle[c] = s.size[c] = p->size[c];
        s.link_max[c] = p->link_mbps[c];
        for (int d = 0; d < s.nc; d++)
            s.latency[c * s.nc + d] = p->latency[c][d];
        s.do_list[c] = c;
    }
    s.ver = calloc(w->n ? w->n : 1, sizeof *s.ver);
    s.qlen = calloc(w->n ? w->n : 1, sizeof *s.qlen);
    if (!s.ver || !s.qlen) {
        wsim_fail(&s, "out of memory for %zu jobs", w->n);
        goto out;
    }
    if (!startable(&s))
        goto out;
    s.min_total = INT64_MAX;
    for (size_t i = 0; i < w->n; i++)
        s.min_total = w->v[i].total < s.min_total ? w->v[i].total : s.min_total;
    if (p->disc == WSIM_D_RESERVE && !wsim_reserve_init(&s))
        goto out;
    size_t next = 0;
    while (!s.failed) {
        struct wsim_event ev;
        bool have = s.heap.n > 0;
        if (next < w->n && (!have || w->v[next].submit < s.heap.v[0].t)) {
            s.now = w->v[next].submit;
            arrive(&s, (uint32_t)next++);
            continue;
        }
        if (!wsim_heap_pop(&s.heap, &ev))
            break;
        s.now = ev.t;
        if (ev.type == WSIM_EV_DEPART) {
            if (ev.ver == s.ver[ev.job])
                depart(&s, ev.job);
        } else if (ev.type == WSIM_EV_SCAN) {
            wsim_scan_tick(&s);
        } else if (ev.type == WSIM_EV_ARSTART) {
            s.queued--;
        }
    }
    if (!s.failed && s.queued)
        wsim_fail(&s, "%zu jobs never started (a policy left them waiting on an idle system)",
                  s.queued);
    if (!s.failed)
        wsim_result_compute(p, w, s.qlen, r);
out:
    state_free(&s);
    return !s.failed;
}
