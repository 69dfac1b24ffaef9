/* SPDX-License-Identifier: Apache-2.0 */
/* place_koala.c - the KOALA policies (docs/science.md §1.4: WF with repeats,
 * FCM, FCM-k, CA, no co-allocation), Bucur & Epema's WF without
 * repetitions (§2.2), and what every policy does with fixed and total
 * requests. */
#include "policy.h"

#include <string.h>

#include "policy_int.h"

static void idle_keys(const struct acc_pol_ctx *c, double *key)
{
    for (size_t i = 0; i < c->n; i++)
        key[i] = (double)c->idle[i];
}

/* Component indices by size, descending; equal sizes keep request order. */
static void sort_components(const struct acc_policy_request *r, size_t *idx)
{
    for (size_t i = 0; i < r->n_components; i++) {
        size_t j = i;
        while (j > 0 && r->sizes[idx[j - 1]] < r->sizes[i]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
}

/* Parts were appended in placement order; the contract wants request order. */
static void by_component(struct acc_placement *p)
{
    struct acc_placement q = *p;
    for (size_t i = 0; i < q.n; i++) {
        size_t k = q.comp[i];
        p->cluster[k] = q.cluster[i];
        p->size[k] = q.size[i];
        p->comp[k] = k;
    }
}

static int64_t request_total(const struct acc_policy_request *r)
{
    if (r->type == ACC_REQ_FLEXIBLE || r->type == ACC_REQ_TOTAL)
        return r->total;
    int64_t t = 0;
    for (size_t i = 0; i < r->n_components; i++)
        t = t > INT64_MAX - r->sizes[i] ? INT64_MAX : t + r->sizes[i];
    return t;
}

static void place_fixed(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    for (size_t i = 0; i < r->n_components; i++) {
        size_t cl = r->clusters[i];
        if (c->idle[cl] < r->sizes[i])
            return;
        c->idle[cl] -= r->sizes[i];
        acc_pol_add(p, cl, r->sizes[i], i);
    }
    p->fits = true;
}

/* The whole job on the cluster with most idle units (§1.2 "no
 * co-allocation"); every component of a non-fixed request goes there. */
static void place_single(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    int64_t total = request_total(r);
    double key[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], n;
    idle_keys(c, key);
    acc_pol_order(c, key, true, NULL, order, &n);
    if (c->idle[order[0]] < total || !acc_pol_whole_ok(c, total))
        return;
    if (r->type == ACC_REQ_NONFIXED) {
        for (size_t i = 0; i < r->n_components; i++)
            acc_pol_add(p, order[0], r->sizes[i], i);
    } else {
        acc_pol_add(p, order[0], total, 0);
    }
    p->fits = true;
}

/* KOALA's WF: each component, largest first, to the cluster with most idle
 * units now, counting the job's own components already placed. */
static void place_wf(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    size_t idx[ACC_POLICY_MAX_PARTS];
    sort_components(r, idx);
    for (size_t k = 0; k < r->n_components; k++) {
        size_t i = idx[k], order[ACC_POLICY_MAX_CLUSTERS], n;
        double key[ACC_POLICY_MAX_CLUSTERS];
        idle_keys(c, key);
        acc_pol_order(c, key, true, NULL, order, &n);
        if (c->idle[order[0]] < r->sizes[i])
            return; /* no other cluster has more */
        c->idle[order[0]] -= r->sizes[i];
        acc_pol_add(p, order[0], r->sizes[i], i);
    }
    by_component(p);
    p->fits = true;
}

/* Bucur & Epema: the i-th largest component to the cluster with the i-th
 * most idle units; every component on a cluster of its own. */
static void place_wf_norep(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    size_t idx[ACC_POLICY_MAX_PARTS], order[ACC_POLICY_MAX_CLUSTERS], n;
    double key[ACC_POLICY_MAX_CLUSTERS];
    if (r->n_components > c->n)
        return;
    sort_components(r, idx);
    idle_keys(c, key);
    acc_pol_order(c, key, true, NULL, order, &n);
    for (size_t k = 0; k < r->n_components; k++) {
        if (c->idle[order[k]] < r->sizes[idx[k]])
            return;
    }
    for (size_t k = 0; k < r->n_components; k++) {
        c->idle[order[k]] -= r->sizes[idx[k]];
        acc_pol_add(p, order[k], r->sizes[idx[k]], idx[k]);
    }
    by_component(p);
    p->fits = true;
}

static void place_fcm(struct acc_pol_ctx *c, struct acc_placement *p)
{
    double key[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], n;
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    for (size_t i = 0; i < c->n; i++)
        skip[i] = c->idle[i] == 0;
    idle_keys(c, key);
    acc_pol_order(c, key, true, skip, order, &n);
    p->fits = acc_pol_fill(c, order, n, c->req->total, p);
}

/* CA, latency option: the cluster with the lowest intracluster latency that
 * takes the whole job; else fill along the mean latency, lowest first. */
static void place_ca(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const double *lat = c->sys->latency;
    int64_t total = c->req->total;
    double key[ACC_POLICY_MAX_CLUSTERS];
    size_t order[ACC_POLICY_MAX_CLUSTERS], n;
    bool skip[ACC_POLICY_MAX_CLUSTERS];
    for (size_t i = 0; i < c->n; i++)
        key[i] = lat[i * c->n + i];
    acc_pol_order(c, key, false, NULL, order, &n);
    for (size_t k = 0; k < n && acc_pol_whole_ok(c, total); k++) {
        if (c->idle[order[k]] >= total) {
            acc_pol_add(p, order[k], total, 0);
            p->fits = true;
            return;
        }
    }
    for (size_t i = 0; i < c->n; i++) {
        double sum = 0;
        size_t cnt = 0;
        for (size_t d = 0; d < c->n; d++) {
            if (c->o->ca_avg == ACC_CA_AVG_IDLE && c->idle[d] == 0)
                continue;
            sum += lat[i * c->n + d];
            cnt++;
        }
        key[i] = cnt ? sum / (double)cnt : 0;
        skip[i] = c->idle[i] == 0;
    }
    acc_pol_order(c, key, false, skip, order, &n);
    p->fits = acc_pol_fill(c, order, n, total, p);
}

void acc_pol_koala(struct acc_pol_ctx *c, struct acc_placement *p)
{
    const struct acc_policy_request *r = c->req;
    if (r->type == ACC_REQ_FIXED) {
        place_fixed(c, p);
        return;
    }
    if (r->type == ACC_REQ_TOTAL || c->o->id == ACC_POLICY_SINGLE) {
        place_single(c, p);
        return;
    }
    switch (c->o->id) {
    case ACC_POLICY_WF:
        place_wf(c, p);
        break;
    case ACC_POLICY_WF_NOREP:
        place_wf_norep(c, p);
        break;
    case ACC_POLICY_EARLIEST:
        if (r->type == ACC_REQ_NONFIXED)
            place_wf(c, p);
        else
            place_fcm(c, p);
        break;
    case ACC_POLICY_FCM:
        place_fcm(c, p);
        break;
    case ACC_POLICY_CA:
        place_ca(c, p);
        break;
    default:
        break;
    }
}
