/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_fcfs.c - Bucur & Epema's FCFS queues with enable/disable semantics
 * (docs/science.md 2.4-2.5): GS, LS and its variants, GP, LP and its variants,
 * SC.  Only a queue's head may start; at a departure the enabled queues are
 * visited in rounds, at most one start per queue per round. */
#include "wsim_internal.h"

#include <string.h>

static bool is_local(const struct wsim_state *s, int q)
{
    return q < s->nc;
}

static int route(const struct wsim_state *s, const struct wsim_job *j)
{
    switch (s->p->fcfs) {
    case WSIM_LS:
        return j->home;
    case WSIM_GP:
    case WSIM_LP:
        return j->ncomp == 1 ? j->home : s->nc;
    case WSIM_GS:
    case WSIM_SC:
        break;
    }
    return s->nc;
}

/* Whether the head of q fits now; places it (alloc) if so. */
static bool head_fits(struct wsim_state *s, int q)
{
    uint32_t job = wsim_queue_at(&s->q[q], 0);
    struct wsim_job *j = &s->w->v[job];
    bool fits = false;
    if (s->p->fcfs == WSIM_SC)
        wsim_place(s, job, ACC_POLICY_SINGLE, ACC_REQ_TOTAL, 0, &fits);
    else if (is_local(s, q) && j->ncomp == 1)
        wsim_place(s, job, ACC_POLICY_WF_NOREP, ACC_REQ_FIXED, (size_t)q, &fits);
    else
        wsim_place(s, job, ACC_POLICY_WF_NOREP, ACC_REQ_NONFIXED, 0, &fits);
    return fits && !s->failed;
}

static void start_head(struct wsim_state *s, int q)
{
    uint32_t job = wsim_queue_at(&s->q[q], 0);
    wsim_queue_pop(&s->q[q]);
    s->queued--;
    s->w->v[job].global = !is_local(s, q) && (s->p->fcfs == WSIM_GP || s->p->fcfs == WSIM_LP);
    wsim_start(s, job, s->now);
}

static bool some_local_empty(const struct wsim_state *s)
{
    for (int c = 0; c < s->nc; c++) {
        if (!s->q[c].n)
            return true;
    }
    return false;
}

void wsim_fcfs_arrival(struct wsim_state *s, uint32_t job)
{
    int q = route(s, &s->w->v[job]);
    bool was_empty = s->q[q].n == 0;
    if (!wsim_queue_push(&s->q[q], job)) {
        wsim_fail(s, "out of memory for a queue");
        return;
    }
    s->queued++;
    bool may = true;
    if (s->p->fcfs == WSIM_GP && is_local(s, q))
        may = s->q[s->nc].n == 0;
    if (s->p->fcfs == WSIM_LP && !is_local(s, q))
        may = some_local_empty(s);
    if (was_empty && may && head_fits(s, q))
        start_head(s, q);
}

/* The nonempty locals in the given order; the departing job's clusters
 * for RO. */
static int locals(struct wsim_state *s, enum wsim_order order, const struct wsim_job *gone,
                  int *out)
{
    int n = 0, nc = s->nc, seq[WSIM_MAX_CLUSTERS];
    switch (order) {
    case WSIM_ORD_OR:
        for (int c = 0; c < nc; c++)
            seq[c] = c;
        break;
    case WSIM_ORD_RD: {
        int r = (int)wsim_rng_int(&s->rng, 0, nc - 1);
        for (int c = 0; c < nc; c++)
            seq[c] = (r + c) % nc;
        break;
    }
    case WSIM_ORD_RO: {
        /* By decreasing component size on each cluster, then the rest in
         * index order (a stable insertion sort). */
        for (int c = 0; c < nc; c++) {
            int k = c;
            while (k > 0 && gone->alloc[seq[k - 1]] < gone->alloc[c]) {
                seq[k] = seq[k - 1];
                k--;
            }
            seq[k] = c;
        }
        break;
    }
    case WSIM_ORD_DO:
        memcpy(seq, s->do_list, (size_t)nc * sizeof *seq);
        break;
    }
    for (int i = 0; i < nc; i++) {
        if (s->q[seq[i]].n)
            out[n++] = seq[i];
    }
    return n;
}

static void note_disabled(struct wsim_state *s, int q)
{
    if (!is_local(s, q))
        return;
    int i = 0;
    while (s->do_list[i] != q)
        i++;
    for (; i < s->nc - 1; i++)
        s->do_list[i] = s->do_list[i + 1];
    s->do_list[s->nc - 1] = q;
}

struct vlist {
    int v[WSIM_MAX_CLUSTERS + 2];
    int n;
};

static bool in_list(const struct vlist *l, int q)
{
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] == q)
            return true;
    }
    return false;
}

static void list_remove(struct vlist *l, int i)
{
    memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* A departure's rounds: the queues still to visit, and the state of the
 * hand-over rules (LP: the global queue at the front or at the end, and
 * whether it waits for a local queue to empty; GP: whether the locals
 * joined). */
struct rounds {
    struct vlist V;
    bool g_front, g_pending, gp_joined;
};

/* The queues the first round visits, by policy. */
static void first_round(struct wsim_state *s, const struct wsim_job *gone, struct rounds *r)
{
    const struct wsim_params *p = s->p;
    int g = s->nc, loc[WSIM_MAX_CLUSTERS];
    switch (p->fcfs) {
    case WSIM_GS:
    case WSIM_SC:
        if (s->q[g].n)
            r->V.v[r->V.n++] = g;
        break;
    case WSIM_LS:
        r->V.n = locals(s, p->order, gone, r->V.v);
        break;
    case WSIM_GP:
        if (s->q[g].n) {
            r->V.v[r->V.n++] = g;
        } else {
            r->V.n = locals(s, p->lorder, gone, r->V.v);
            r->gp_joined = true;
        }
        break;
    case WSIM_LP: {
        r->g_front =
            p->lpvar == WSIM_LP_GF || (p->lpvar == WSIM_LP_RD && wsim_rng_int(&s->rng, 0, 1) == 1);
        int n = locals(s, p->lorder, gone, loc);
        if (some_local_empty(s) && s->q[g].n) {
            if (r->g_front)
                r->V.v[r->V.n++] = g;
            memcpy(&r->V.v[r->V.n], loc, (size_t)n * sizeof *loc);
            r->V.n += n;
            if (!r->g_front)
                r->V.v[r->V.n++] = g;
        } else {
            memcpy(r->V.v, loc, (size_t)n * sizeof *loc);
            r->V.n = n;
            r->g_pending = s->q[g].n > 0;
        }
        break;
    }
    }
}

/* The hand-over rules once queue q emptied during a round (*i: the
 * round's position, moved on when a queue is put before it). */
static void hand_over(struct wsim_state *s, const struct wsim_job *gone, int q, struct rounds *r,
                      int *i)
{
    const struct wsim_params *p = s->p;
    int g = s->nc, loc[WSIM_MAX_CLUSTERS];
    if (p->fcfs == WSIM_LP && is_local(s, q) && r->g_pending && s->q[g].n && !in_list(&r->V, g)) {
        r->g_pending = false;
        if (r->g_front) {
            memmove(&r->V.v[1], &r->V.v[0], (size_t)r->V.n * sizeof *r->V.v);
            r->V.v[0] = g;
            r->V.n++;
            (*i)++;
        } else {
            r->V.v[r->V.n++] = g;
        }
    }
    if (p->fcfs == WSIM_GP && q == g && p->gp_locals_join && !r->gp_joined) {
        r->gp_joined = true;
        int n = locals(s, p->lorder, gone, loc);
        for (int k = 0; k < n; k++) {
            if (!in_list(&r->V, loc[k]))
                r->V.v[r->V.n++] = loc[k];
        }
    }
}

void wsim_fcfs_departure(struct wsim_state *s, uint32_t job)
{
    const struct wsim_job *gone = &s->w->v[job];
    struct rounds r = {.V.n = 0};
    first_round(s, gone, &r);
    while (r.V.n > 0 && !s->failed) {
        /* One round over the live list: queues added during the round at
         * its end are visited in it, those put at the front are not. */
        for (int i = 0; i < r.V.n && !s->failed;) {
            int q = r.V.v[i];
            if (!head_fits(s, q)) {
                list_remove(&r.V, i);
                note_disabled(s, q);
                continue;
            }
            start_head(s, q);
            if (s->q[q].n) {
                i++;
                continue;
            }
            list_remove(&r.V, i);
            note_disabled(s, q);
            hand_over(s, gone, q, &r, &i);
        }
    }
}
