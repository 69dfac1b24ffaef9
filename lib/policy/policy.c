/* SPDX-License-Identifier: Apache-2.0 */
#include "policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "policy_int.h"

static const char *const names[ACC_POLICY__COUNT] = {
    [ACC_POLICY_EARLIEST] = "earliest",
    [ACC_POLICY_WF] = "worst-fit",
    [ACC_POLICY_WF_NOREP] = "worst-fit-distinct",
    [ACC_POLICY_FCM] = "fcm",
    [ACC_POLICY_CA] = "ca",
    [ACC_POLICY_SINGLE] = "single",
    [ACC_POLICY_LA] = "la",
    [ACC_POLICY_MIG] = "mig",
    [ACC_POLICY_MIGRATION] = "migration",
    [ACC_POLICY_INITIAL] = "initial",
    [ACC_POLICY_A1] = "a1",
    [ACC_POLICY_B1] = "b1",
    [ACC_POLICY_B2] = "b2",
    [ACC_POLICY_B3] = "b3",
    [ACC_POLICY_B4] = "b4",
};

void acc_policy_opts_init(struct acc_policy_opts *o, enum acc_policy_id id)
{
    memset(o, 0, sizeof *o);
    o->id = id;
    o->tiebreak = ACC_TIE_LOWEST;
    o->ca_avg = ACC_CA_AVG_ALL;
    o->local_first = true;
    o->lslt = 1.0;
    o->b3_fraction = 0.7;
    o->b3_round = ACC_ROUND_CEIL;
    o->b3_chunk = ACC_B3_MOST_FREE;
    o->a1_order = ACC_A1_FREE_DESC;
    o->a1_solution = ACC_A1_FIRST;
    o->a1_max_steps = 1000000;
}

const char *acc_policy_name(enum acc_policy_id id)
{
    return (unsigned)id < ACC_POLICY__COUNT ? names[id] : "unknown";
}

bool acc_policy_parse(const char *name, struct acc_policy_opts *o)
{
    if (!name)
        return false;
    for (size_t i = 0; i < ACC_POLICY__COUNT; i++) {
        if (strcmp(name, names[i]) == 0) {
            o->id = (enum acc_policy_id)i;
            return true;
        }
    }
    /* "fcm-K": FCM limited to K clusters. */
    if (strncmp(name, "fcm-", 4) != 0 || name[4] < '1' || name[4] > '9')
        return false;
    char *end = NULL;
    unsigned long k = strtoul(name + 4, &end, 10);
    if (*end || k < 1 || k > ACC_POLICY_MAX_CLUSTERS)
        return false;
    o->id = ACC_POLICY_FCM;
    o->max_clusters = (size_t)k;
    return true;
}

bool acc_policy_accepts(enum acc_policy_id id, enum acc_request_type type)
{
    if ((unsigned)id >= ACC_POLICY__COUNT)
        return false;
    switch (type) {
    case ACC_REQ_FIXED:
    case ACC_REQ_TOTAL:
        return true;
    case ACC_REQ_NONFIXED:
        return id == ACC_POLICY_EARLIEST || id == ACC_POLICY_WF || id == ACC_POLICY_WF_NOREP ||
               id == ACC_POLICY_SINGLE;
    case ACC_REQ_FLEXIBLE:
        return id != ACC_POLICY_WF && id != ACC_POLICY_WF_NOREP;
    }
    return false;
}

uint64_t acc_policy_rand(uint64_t *state)
{
    return acc_splitmix64(state);
}

void acc_placement_per_cluster(const struct acc_placement *p, size_t n_clusters,
                               int64_t *per_cluster)
{
    for (size_t i = 0; i < n_clusters; i++)
        per_cluster[i] = 0;
    for (size_t i = 0; p->fits && i < p->n; i++) {
        if (p->cluster[i] < n_clusters)
            per_cluster[p->cluster[i]] += p->size[i];
    }
}

size_t acc_placement_n_clusters(const struct acc_placement *p)
{
    size_t n = 0;
    for (size_t i = 0; p->fits && i < p->n; i++) {
        size_t j = 0;
        while (j < i && p->cluster[j] != p->cluster[i])
            j++;
        n += j == i;
    }
    return n;
}

/* --------------------------------------------------------------- helpers */

void acc_pol_order(const struct acc_pol_ctx *c, const double *key, bool descending,
                   const bool *skip, size_t *order, size_t *n_order)
{
    uint64_t tie[ACC_POLICY_MAX_CLUSTERS];
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        tie[i] = c->o->tiebreak == ACC_TIE_RANDOM ? acc_policy_rand(c->o->rng) : i;
        if (skip && skip[i])
            continue;
        /* Insertion sort: at most 64 clusters, and it is stable. */
        size_t j = n++;
        while (j > 0) {
            size_t prev = order[j - 1];
            double a = key[i], b = key[prev];
            bool before = descending ? a > b : a < b;
            if (!before && a == b)
                before = tie[i] < tie[prev];
            if (!before)
                break;
            order[j] = prev;
            j--;
        }
        order[j] = i;
    }
    *n_order = n;
}

void acc_pol_add(struct acc_placement *p, size_t cluster, int64_t size, size_t comp)
{
    p->cluster[p->n] = cluster;
    p->size[p->n] = size;
    p->comp[p->n] = comp;
    p->n++;
}

bool acc_pol_whole_ok(const struct acc_pol_ctx *c, int64_t total)
{
    const struct acc_policy_request *r = c->req;
    return r->type != ACC_REQ_FLEXIBLE || r->max_size <= 0 || total <= r->max_size;
}

bool acc_pol_fill(const struct acc_pol_ctx *c, const size_t *order, size_t n_order, int64_t total,
                  struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    int64_t min = r->type == ACC_REQ_FLEXIBLE && r->min_size > 1 ? r->min_size : 1;
    int64_t max = r->type == ACC_REQ_FLEXIBLE && r->max_size > 0 ? r->max_size : INT64_MAX;
    int64_t rem = total;
    p->n = 0;
    for (size_t k = 0; k < n_order && rem > 0 && p->n < c->max_parts; k++) {
        size_t cl = order[k];
        int64_t avail = c->idle[cl] < max ? c->idle[cl] : max;
        if (avail < min)
            continue;
        int64_t take = avail < rem ? avail : rem;
        /* Leave the rest big enough to be a part of its own. */
        if (rem - take > 0 && rem - take < min)
            take = rem - min;
        if (take < min)
            continue;
        acc_pol_add(p, cl, take, p->n);
        rem -= take;
    }
    if (rem > 0)
        p->n = 0;
    return rem == 0;
}

/* ------------------------------------------------------------ validation */

static acc_err check(const struct acc_policy_system *s, const struct acc_policy_request *r,
                     const struct acc_policy_opts *o, struct acc_error *err)
{
    if (!s || !r || !o)
        return acc_error_set(err, ACC_ERR_INVALID, "policy: no system, request or options");
    if ((unsigned)o->id >= ACC_POLICY__COUNT)
        return acc_error_set(err, ACC_ERR_INVALID, "policy: unknown policy %d", (int)o->id);
    const char *name = acc_policy_name(o->id);
    if (s->n_clusters < 1 || s->n_clusters > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s: %zu clusters (1 to %d allowed)",
                             name, s->n_clusters, ACC_POLICY_MAX_CLUSTERS);
    if (!s->idle)
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s: no idle counts", name);
    for (size_t i = 0; i < s->n_clusters; i++) {
        if (s->idle[i] < 0)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "policy %s: cluster %zu has a negative idle count", name, i);
    }
    if (o->tiebreak == ACC_TIE_RANDOM && !o->rng)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "policy %s: random tie-break without a generator state", name);
    if (o->id == ACC_POLICY_CA && !s->latency)
        return acc_error_set(err, ACC_ERR_INVALID, "policy ca needs a latency matrix");
    if (o->id >= ACC_POLICY_A1 && o->id <= ACC_POLICY_B4) {
        if (!s->link_max)
            return acc_error_set(err, ACC_ERR_INVALID, "policy %s needs the link capacities", name);
        for (size_t i = 0; i < s->n_clusters; i++) {
            if (!(s->link_max[i] > 0) || (s->link_load && !(s->link_load[i] >= 0)))
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "policy %s: link %zu needs a capacity > 0 and a load >= 0",
                                     name, i);
        }
        if (!(o->lslt >= 0) || !isfinite(o->lslt))
            return acc_error_set(err, ACC_ERR_INVALID, "policy %s: LSLT must be >= 0", name);
    }
    if (o->id == ACC_POLICY_B3 && !(o->b3_fraction > 0 && o->b3_fraction <= 1))
        return acc_error_set(err, ACC_ERR_INVALID, "policy b3: the fraction must be in (0, 1]");
    if (!acc_policy_accepts(o->id, r->type))
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s does not place a %s request", name,
                             r->type == ACC_REQ_NONFIXED   ? "non-fixed"
                             : r->type == ACC_REQ_FLEXIBLE ? "flexible"
                                                           : "malformed");
    if (!(r->ppbw >= 0) || !isfinite(r->ppbw))
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s: PPBW must be >= 0", name);
    if (r->home >= s->n_clusters)
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s: home cluster %zu out of range", name,
                             r->home);
    if (r->type == ACC_REQ_FIXED || r->type == ACC_REQ_NONFIXED) {
        if (r->n_components < 1 || r->n_components > ACC_POLICY_MAX_PARTS || !r->sizes)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "policy %s: %zu components (1 to %d allowed)", name,
                                 r->n_components, ACC_POLICY_MAX_PARTS);
        if (r->type == ACC_REQ_FIXED && !r->clusters)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "policy %s: a fixed request needs a cluster per component", name);
        for (size_t i = 0; i < r->n_components; i++) {
            if (r->sizes[i] < 1)
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "policy %s: component %zu has size %lld (>= 1 needed)", name,
                                     i, (long long)r->sizes[i]);
            if (r->type == ACC_REQ_FIXED && r->clusters[i] >= s->n_clusters)
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "policy %s: component %zu names cluster %zu of %zu", name, i,
                                     r->clusters[i], s->n_clusters);
        }
    } else if (r->type == ACC_REQ_FLEXIBLE || r->type == ACC_REQ_TOTAL) {
        if (r->total < 1)
            return acc_error_set(err, ACC_ERR_INVALID, "policy %s: total %lld (>= 1 needed)", name,
                                 (long long)r->total);
        if (r->min_size < 0 || r->max_size < 0 || (r->max_size > 0 && r->min_size > r->max_size))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "policy %s: component bounds min %lld, max %lld make no sense",
                                 name, (long long)r->min_size, (long long)r->max_size);
    } else {
        return acc_error_set(err, ACC_ERR_INVALID, "policy %s: unknown request type", name);
    }
    return ACC_OK;
}

/* --------------------------------------------------------------- placing */

acc_err acc_policy_place(const struct acc_policy_system *sys, const struct acc_policy_request *req,
                         const struct acc_policy_opts *opts, struct acc_placement *out,
                         struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = check(sys, req, opts, err);
    if (rc)
        return rc;
    struct acc_pol_ctx c = {.sys = sys, .req = req, .o = opts, .n = sys->n_clusters};
    memcpy(c.idle, sys->idle, c.n * sizeof *c.idle);
    c.max_parts = c.n;
    if (req->type == ACC_REQ_FLEXIBLE && req->max_parts > 0 && req->max_parts < c.max_parts)
        c.max_parts = req->max_parts;
    if (opts->max_clusters > 0 && opts->max_clusters < c.max_parts)
        c.max_parts = opts->max_clusters;
    if (opts->id >= ACC_POLICY_LA)
        acc_pol_jones(&c, out);
    else
        acc_pol_koala(&c, out);
    if (!out->fits) {
        out->n = 0;
        out->step = ACC_STEP_NONE;
    }
    return ACC_OK;
}

static bool same(const struct acc_placement *a, const struct acc_placement *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->cluster[i] != b->cluster[i] || a->size[i] != b->size[i] || a->comp[i] != b->comp[i])
            return false;
    }
    return true;
}

acc_err acc_policy_candidates(const struct acc_policy_system *sys,
                              const struct acc_policy_request *req,
                              const struct acc_policy_opts *opts, struct acc_placement *out,
                              size_t max, size_t *n_out, struct acc_error *err)
{
    *n_out = 0;
    acc_err rc = check(sys, req, opts, err);
    if (rc)
        return rc;
    struct acc_policy_system s = *sys;
    int64_t idle[ACC_POLICY_MAX_CLUSTERS];
    memcpy(idle, sys->idle, sys->n_clusters * sizeof *idle);
    s.idle = idle;
    /* Each round takes one more cluster out, so there are at most n rounds. */
    for (size_t round = 0; round < sys->n_clusters && *n_out < max; round++) {
        struct acc_placement p;
        rc = acc_policy_place(&s, req, opts, &p, err);
        if (rc || !p.fits)
            break;
        bool dup = false;
        for (size_t k = 0; k < *n_out && !dup; k++)
            dup = same(&out[k], &p);
        if (!dup)
            out[(*n_out)++] = p;
        if (req->type == ACC_REQ_FIXED)
            break;
        int64_t per[ACC_POLICY_MAX_CLUSTERS];
        acc_placement_per_cluster(&p, sys->n_clusters, per);
        size_t most = 0;
        for (size_t i = 1; i < sys->n_clusters; i++)
            most = per[i] > per[most] ? i : most;
        idle[most] = 0;
    }
    return rc;
}

size_t acc_policy_split_even(int64_t s, size_t C, int64_t L, int64_t *parts)
{
    if (s < 1 || C < 1 || C > ACC_POLICY_MAX_PARTS || L < 1)
        return 0;
    size_t k = C;
    for (size_t i = 1; i <= C; i++) {
        if ((s + (int64_t)i - 1) / (int64_t)i <= L) {
            k = i;
            break;
        }
    }
    int64_t base = s / (int64_t)k, extra = s % (int64_t)k;
    for (size_t i = 0; i < k; i++)
        parts[i] = base + ((int64_t)i < extra ? 1 : 0);
    return k;
}
