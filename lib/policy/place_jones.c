/* SPDX-License-Identifier: Apache-2.0 */
/* place_jones.c - Jones et al.'s scheduling template and co-allocation
 * modules (docs/science.md §4.4-4.5): LA, MIG, Migration Only, the Initial
 * Strategy, A1 "Satisfy" and the class-B modules B1-B4. */
#include "policy.h"

#include <math.h>
#include <string.h>

#include "policy_int.h"

static int64_t job_total(const struct acc_pol_ctx *c)
{
    return c->req->total; /* FLEXIBLE and TOTAL only reach here */
}

static bool place_la(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    size_t h = c->req->home;
    if (c->idle[h] < n || !acc_pol_whole_ok(c, n))
        return false;
    acc_pol_add(p, h, n, 0);
    p->step = ACC_STEP_LA;
    return p->fits = true;
}

/* Best fit: the fewest free units that still take the whole job. */
static bool place_mig(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    double key[ACC_POLICY_MAX_CLUSTERS];
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], k;
    if (!acc_pol_whole_ok(c, n))
        return false;
    for (size_t i = 0; i < c->n; i++) {
        key[i] = (double)c->idle[i];
        skip[i] = c->idle[i] < n;
    }
    acc_pol_order(c, key, false, skip, order, &k);
    if (k == 0)
        return false;
    acc_pol_add(p, order[0], n, 0);
    p->step = order[0] == c->req->home ? ACC_STEP_LA : ACC_STEP_MIG;
    return p->fits = true;
}

static void link_levels(const struct acc_pol_ctx *c, double *u)
{
    for (size_t i = 0; i < c->n; i++)
        u[i] = c->sys->link_load ? c->sys->link_load[i] / c->sys->link_max[i] : 0;
}

/* Class B: clusters whose link level passes LSLT are left out. */
static void discounted(const struct acc_pol_ctx *c, const double *u, bool *skip)
{
    for (size_t i = 0; i < c->n; i++) {
        bool over = c->o->discount_ge ? u[i] >= c->o->lslt : u[i] > c->o->lslt;
        skip[i] = over || c->idle[i] == 0;
    }
}

/* Initial Strategy (no discounting), B1 (free descending) and B2 (link
 * level ascending): one greedy fill along an order. */
static void place_greedy(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    double key[ACC_POLICY_MAX_CLUSTERS], u[ACC_POLICY_MAX_CLUSTERS] = {0};
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], k;
    enum acc_policy_id id = c->o->id;
    if (id == ACC_POLICY_INITIAL) {
        for (size_t i = 0; i < c->n; i++)
            skip[i] = c->idle[i] == 0;
    } else {
        link_levels(c, u);
        discounted(c, u, skip);
    }
    for (size_t i = 0; i < c->n; i++)
        key[i] = id == ACC_POLICY_B2 ? u[i] : (double)c->idle[i];
    acc_pol_order(c, key, id != ACC_POLICY_B2, skip, order, &k);
    p->fits = acc_pol_fill(c, order, k, n, p);
}

static int64_t rounded(double x, enum acc_round r)
{
    switch (r) {
    case ACC_ROUND_FLOOR:
        return (int64_t)floor(x);
    case ACC_ROUND_NEAREST:
        return (int64_t)floor(x + 0.5);
    case ACC_ROUND_CEIL:
        break;
    }
    /* Guard against 0.7 * 30 = 21.000000000000004 rounding up to 22. */
    return (int64_t)ceil(x - 1e-9);
}

/* Whether a finished split keeps the request's bounds on part size. */
static bool parts_ok(const struct acc_pol_ctx *c, const struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    if (r->type != ACC_REQ_FLEXIBLE || p->n > c->max_parts)
        return p->n <= c->max_parts;
    for (size_t i = 0; i < p->n; i++) {
        if ((r->min_size > 1 && p->size[i] < r->min_size) ||
            (r->max_size > 0 && p->size[i] > r->max_size))
            return false;
    }
    return true;
}

/* B3: a chunk of f * n_T on one cluster, the rest on the others. */
static void place_b3(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    double key[ACC_POLICY_MAX_CLUSTERS], u[ACC_POLICY_MAX_CLUSTERS] = {0};
    bool skip[ACC_POLICY_MAX_CLUSTERS], cand[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], k;
    int64_t chunk = rounded(c->o->b3_fraction * (double)n, c->o->b3_round);
    chunk = chunk < 1 ? 1 : chunk > n ? n : chunk;
    link_levels(c, u);
    discounted(c, u, skip);
    bool best = c->o->b3_chunk == ACC_B3_BEST_FIT;
    for (size_t i = 0; i < c->n; i++) {
        key[i] = (double)c->idle[i];
        cand[i] = skip[i] || c->idle[i] < chunk;
    }
    acc_pol_order(c, key, !best, cand, order, &k);
    if (k == 0)
        return;
    size_t home = order[0];
    acc_pol_add(p, home, chunk, 0);
    skip[home] = true;
    acc_pol_order(c, key, true, skip, order, &k);
    struct acc_placement rest = {0};
    if (chunk < n) {
        struct acc_pol_ctx sub = *c;
        sub.max_parts = c->max_parts - 1;
        if (!acc_pol_fill(&sub, order, k, n - chunk, &rest))
            return;
    }
    for (size_t i = 0; i < rest.n; i++)
        acc_pol_add(p, rest.cluster[i], rest.size[i], p->n);
    p->fits = parts_ok(c, p);
}

/* B4: one unit at a time round robin over the clusters left, from
 * b4_start in index order; computed as a water level, not unit by unit. */
static void place_b4(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    double u[ACC_POLICY_MAX_CLUSTERS] = {0};
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    size_t ring[ACC_POLICY_MAX_CLUSTERS], k = 0;
    link_levels(c, u);
    discounted(c, u, skip);
    int64_t sum = 0, top = 0;
    for (size_t j = 0; j < c->n; j++) {
        size_t i = (c->o->b4_start + j) % c->n;
        if (skip[i])
            continue;
        ring[k++] = i;
        sum += c->idle[i];
        top = c->idle[i] > top ? c->idle[i] : top;
    }
    if (sum < n)
        return;
    /* The highest level L with sum of min(idle, L) <= n. */
    int64_t lo = 0, hi = top;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2, s = 0;
        for (size_t j = 0; j < k; j++)
            s += c->idle[ring[j]] < mid ? c->idle[ring[j]] : mid;
        if (s <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t give[ACC_POLICY_MAX_CLUSTERS], left = n;
    for (size_t j = 0; j < k; j++) {
        give[j] = c->idle[ring[j]] < lo ? c->idle[ring[j]] : lo;
        left -= give[j];
    }
    for (size_t j = 0; j < k && left > 0; j++) {
        if (c->idle[ring[j]] > lo) {
            give[j]++;
            left--;
        }
    }
    for (size_t j = 0; j < k; j++) {
        if (give[j] > 0)
            acc_pol_add(p, ring[j], give[j], p->n);
    }
    p->fits = left == 0 && parts_ok(c, p);
}

/* A1: integers X_i in the admissible sets of eq. (8) adding up to n_T
 * (eq. 9), depth-first, largest X_i first.  ACC_A1_FIRST takes the first
 * solution; ACC_A1_LEAST_LINK goes on, bounding each branch by the most its
 * remaining nodes could add to the sum of X_i^2, and keeps the best. */
struct a1 {
    const struct acc_pol_ctx *c;
    size_t order[ACC_POLICY_MAX_CLUSTERS], k;
    int64_t lo[ACC_POLICY_MAX_CLUSTERS], hi[ACC_POLICY_MAX_CLUSTERS];
    int64_t cap[ACC_POLICY_MAX_CLUSTERS];      /* largest admissible X per depth */
    int64_t tail[ACC_POLICY_MAX_CLUSTERS + 1]; /* sum of cap from a depth on */
    int64_t top[ACC_POLICY_MAX_CLUSTERS + 1];  /* largest cap from a depth on */
    int64_t x[ACC_POLICY_MAX_CLUSTERS];
    int64_t best_x[ACC_POLICY_MAX_CLUSTERS];
    int64_t sumsq, best_sumsq; /* the branch's and the best solution's sum of X^2 */
    bool found;
    uint64_t steps;
};

/* True to stop the search (the first solution, or out of steps). */
static bool a1_solution(struct a1 *s)
{
    if (s->c->o->a1_solution == ACC_A1_FIRST) {
        memcpy(s->best_x, s->x, sizeof s->x);
        s->found = true;
        return true;
    }
    if (!s->found || s->sumsq > s->best_sumsq) {
        memcpy(s->best_x, s->x, sizeof s->x);
        s->best_sumsq = s->sumsq;
        s->found = true;
    }
    return false;
}

static bool a1_search(struct a1 *s, size_t d, int64_t rem, size_t used)
{
    if (rem == 0) {
        for (size_t i = d; i < s->k; i++)
            s->x[i] = 0;
        return a1_solution(s);
    }
    if (d == s->k || s->tail[d] < rem || used >= s->c->max_parts)
        return false;
    /* No completion can beat the best: at most rem / top parts of top. */
    int64_t big = s->top[d] < rem ? s->top[d] : rem;
    if (s->found && s->sumsq + big * rem <= s->best_sumsq)
        return false;
    size_t cl = s->order[d];
    int64_t top = s->cap[d] < rem ? s->cap[d] : rem;
    for (int64_t x = top; x >= 1; x--) {
        if (++s->steps > s->c->o->a1_max_steps)
            return true;
        if (x > s->lo[cl] && x < s->hi[cl]) {
            x = s->lo[cl] + 1; /* skip the inadmissible gap at once */
            continue;
        }
        s->x[d] = x;
        s->sumsq += x * x;
        bool stop = a1_search(s, d + 1, rem - x, used + 1);
        s->sumsq -= x * x;
        if (stop)
            return true;
    }
    s->x[d] = 0;
    return a1_search(s, d + 1, rem, used);
}

static void place_a1(struct acc_pol_ctx *c, int64_t n, struct acc_placement *p)
{
    struct a1 s = {.c = c};
    double key[ACC_POLICY_MAX_CLUSTERS];
    for (size_t i = 0; i < c->n; i++) {
        double load = c->sys->link_load ? c->sys->link_load[i] : 0;
        double avail = c->o->lslt * c->sys->link_max[i] - load, n1, n2;
        int64_t idle = c->idle[i];
        if (acc_bw_limits(n, c->req->ppbw, avail, &n1, &n2)) {
            s.lo[i] = n1 < 0 ? 0 : (int64_t)floor(n1 + 1e-9);
            s.hi[i] = (int64_t)ceil(n2 - 1e-9);
        } else {
            s.lo[i] = n;
            s.hi[i] = n;
        }
        key[i] = c->o->a1_order == ACC_A1_INDEX ? 0 : (double)idle;
    }
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    for (size_t i = 0; i < c->n; i++)
        skip[i] = c->idle[i] == 0;
    struct acc_policy_opts o = *c->o;
    if (o.a1_order == ACC_A1_INDEX)
        o.tiebreak = ACC_TIE_LOWEST;
    struct acc_pol_ctx oc = *c;
    oc.o = &o;
    acc_pol_order(&oc, key, true, skip, s.order, &s.k);
    s.tail[s.k] = 0;
    s.top[s.k] = 0;
    for (size_t d = s.k; d-- > 0;) {
        size_t cl = s.order[d];
        int64_t m = c->idle[cl] < n ? c->idle[cl] : n;
        if (m > s.lo[cl] && m < s.hi[cl])
            m = s.lo[cl];
        s.cap[d] = m;
        s.tail[d] = s.tail[d + 1] + m;
        s.top[d] = s.top[d + 1] > m ? s.top[d + 1] : m;
    }
    /* Out of steps: FAIL without a solution; with ACC_A1_LEAST_LINK the
     * best found so far otherwise. */
    a1_search(&s, 0, n, 0);
    if (!s.found)
        return;
    for (size_t d = 0; d < s.k; d++) {
        if (s.best_x[d] > 0)
            acc_pol_add(p, s.order[d], s.best_x[d], p->n);
    }
    p->fits = parts_ok(c, p);
}

void acc_pol_jones(struct acc_pol_ctx *c, struct acc_placement *p)
{
    enum acc_policy_id id = c->o->id;
    const struct acc_policy_request *r = c->req;
    if (r->type == ACC_REQ_FIXED) {
        for (size_t i = 0; i < r->n_components; i++) {
            size_t cl = r->clusters[i];
            if (c->idle[cl] < r->sizes[i])
                return;
            c->idle[cl] -= r->sizes[i];
            acc_pol_add(p, cl, r->sizes[i], i);
        }
        p->fits = true;
        return;
    }
    int64_t n = job_total(c);
    if (id == ACC_POLICY_LA) {
        place_la(c, n, p);
        return;
    }
    if (id == ACC_POLICY_MIG) {
        place_mig(c, n, p);
        return;
    }
    if (id == ACC_POLICY_MIGRATION || c->o->local_first) {
        if (place_la(c, n, p) || place_mig(c, n, p) || id == ACC_POLICY_MIGRATION)
            return;
    }
    if (r->type == ACC_REQ_TOTAL) {
        /* One cluster only: the one with most free units. */
        double key[ACC_POLICY_MAX_CLUSTERS];
        size_t order[ACC_POLICY_MAX_CLUSTERS], k;
        for (size_t i = 0; i < c->n; i++)
            key[i] = (double)c->idle[i];
        acc_pol_order(c, key, true, NULL, order, &k);
        if (c->idle[order[0]] >= n) {
            acc_pol_add(p, order[0], n, 0);
            p->fits = true;
        }
        return;
    }
    memset(p, 0, sizeof *p);
    switch (id) {
    case ACC_POLICY_INITIAL:
    case ACC_POLICY_B1:
    case ACC_POLICY_B2:
        place_greedy(c, n, p);
        break;
    case ACC_POLICY_B3:
        place_b3(c, n, p);
        break;
    case ACC_POLICY_B4:
        place_b4(c, n, p);
        break;
    case ACC_POLICY_A1:
        place_a1(c, n, p);
        break;
    default:
        break;
    }
    if (p->fits)
        p->step = ACC_STEP_CO;
}
