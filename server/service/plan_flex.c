/* SPDX-License-Identifier: Apache-2.0 */
/* plan_flex.c - a flexible or total request of an offer, split by the
 * placement policy into generated components and probed candidate by
 * candidate (part of the planner; plan_internal.h).
 *
 * The policy sees the sites' configured nodes less the offer's fixed
 * components (every other component of such an offer names its site); the
 * calendars' free counts at the slot are not known before the probe. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* The offer as booked under one candidate: part 0 takes the request's
 * place, the others follow the offer's components. */
struct view {
    struct acc_offer offer;
    const char **sites;
    char **names; /* the parts' and generated links' names, owned until
                   * handed to the plan */
    size_t n_names, n_parts;
};

#define MAX_LINK_MBIT 1000000 /* as for an offer's own links */

static void view_release(struct view *v)
{
    for (size_t i = 0; v->names && i < v->n_names; i++)
        free(v->names[i]);
    free(v->names);
    free(v->offer.components);
    free(v->offer.links);
    free(v->sites);
    memset(v, 0, sizeof *v);
}

/* Where part j of the request sits in the view's components. */
static size_t part_at(size_t j, size_t fi, size_t n_offer)
{
    return j == 0 ? fi : n_offer + j - 1;
}

/* The generated links: every two parts on different sites, n_j * n_k *
 * PPBW / (n_T - 1) (eq. 1 between two parts: summed over the others it is
 * eq. 1 of one part).  ACC_ERR_CAPACITY when one needs more than a link
 * may ask for. */
static acc_err view_links(const struct acc_offer *o, size_t fi, const struct acc_component *rq,
                          struct view *v, struct acc_error *err)
{
    size_t np = v->n_parts, n_offer = o->n_components, nl = o->n_links;
    size_t room = nl + np * (np - 1) / 2;
    v->offer.links = calloc(room ? room : 1, sizeof *v->offer.links);
    if (!v->offer.links)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (nl)
        memcpy(v->offer.links, o->links, nl * sizeof *v->offer.links);
    v->offer.n_links = nl;
    if (!(rq->ppbw > 0))
        return ACC_OK;
    for (size_t j = 0; j < np; j++) {
        for (size_t k = j + 1; k < np; k++) {
            size_t a = part_at(j, fi, n_offer), b = part_at(k, fi, n_offer);
            if (strcmp(v->sites[a], v->sites[b]) == 0)
                continue; /* within one site: nothing to reserve */
            struct acc_link_req *l = &v->offer.links[v->offer.n_links];
            l->a = a;
            l->b = b;
            l->sizing = ACC_LINK_PER_PROCESSOR;
            l->ppbw = rq->ppbw;
            l->computed = (double)v->offer.components[a].nodes *
                          (double)v->offer.components[b].nodes * rq->ppbw / (double)(rq->nodes - 1);
            struct acc_error e;
            if (acc_bw_mbit(l->computed, MAX_LINK_MBIT, &l->bandwidth, &e))
                return acc_error_set(err, ACC_ERR_CAPACITY, "the link between %s and %s: %s",
                                     v->offer.components[a].name, v->offer.components[b].name,
                                     e.msg);
            char name[160];
            snprintf(name, sizeof name, "%s-%s", v->offer.components[a].name,
                     v->offer.components[b].name);
            if (!(v->names[v->n_names] = strdup(name)))
                return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            l->name = v->names[v->n_names++];
            v->offer.n_links++;
        }
    }
    return ACC_OK;
}

static acc_err view_make(const struct acc_config *cfg, const struct acc_offer *o, size_t fi,
                         const struct acc_placement *pl, struct view *v, struct acc_error *err)
{
    const struct acc_component *rq = &o->components[fi];
    size_t n = o->n_components + pl->n - 1;
    memset(v, 0, sizeof *v);
    v->offer = *o;
    v->offer.links = NULL;
    v->offer.components = calloc(n, sizeof *v->offer.components);
    v->sites = calloc(n, sizeof *v->sites);
    /* the parts, and a link for every two of them */
    v->names = calloc(pl->n + pl->n * (pl->n - 1) / 2, sizeof *v->names);
    if (!v->offer.components || !v->sites || !v->names)
        goto nomem;
    v->offer.n_components = n;
    for (size_t i = 0; i < o->n_components; i++) {
        v->offer.components[i] = o->components[i];
        v->sites[i] = o->components[i].site;
    }
    for (size_t j = 0; j < pl->n; j++) {
        size_t at = part_at(j, fi, o->n_components);
        char name[96];
        if (rq->kind == ACC_COMP_TOTAL)
            snprintf(name, sizeof name, "%s", rq->name);
        else
            snprintf(name, sizeof name, "%s.%zu", rq->name, j + 1);
        if (!(v->names[j] = strdup(name)))
            goto nomem;
        v->n_names = v->n_parts = j + 1;
        struct acc_component *c = &v->offer.components[at];
        *c = *rq; /* ppn, executable and arguments are the request's */
        c->name = v->names[j];
        c->kind = ACC_COMP_SIZED;
        c->nodes = pl->size[j];
        c->min_nodes = c->max_nodes = 0;
        c->max_parts = 0;
        c->ppbw = 0;
        c->site = NULL;
        v->sites[at] = cfg->res.sites[pl->cluster[j]].name;
    }
    acc_err rc = view_links(o, fi, rq, v, err);
    if (rc)
        view_release(v);
    return rc;
nomem:
    view_release(v);
    return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

/* "policy fcm, candidate 1 of 2: job (24 nodes) as job.1 16 on b, job.2 8 on a" */
static void describe(char *out, size_t size, const char *policy, size_t k, size_t got,
                     const struct view *v, const struct acc_component *rq, size_t fi,
                     size_t n_offer, const char *why)
{
    size_t used =
        (size_t)snprintf(out, size, "policy %s, candidate %zu of %zu: %s (%" PRId64 " nodes) as",
                         policy, k + 1, got, rq->name, rq->nodes);
    for (size_t j = 0; j < v->n_parts && used + 2 < size; j++) {
        size_t at = part_at(j, fi, n_offer);
        used += (size_t)snprintf(out + used, size - used, "%s %s %" PRId64 " on %s", j ? "," : "",
                                 v->names[j], v->offer.components[at].nodes, v->sites[at]);
    }
    for (size_t i = v->offer.n_links - (v->n_names - v->n_parts);
         i < v->offer.n_links && used + 2 < size; i++) {
        const struct acc_link_req *l = &v->offer.links[i];
        used += (size_t)snprintf(out + used, size - used,
                                 "; link %s: eq. (1) gives %.3f Mbit/s, booked %" PRId64, l->name,
                                 l->computed, l->bandwidth);
    }
    if (why && used + 2 < size)
        snprintf(out + used, size - used, ": %s", why);
}

/* The policy's candidate splits of the request, on the sites' nodes less
 * the fixed components. */
static acc_err flex_candidates(const struct acc_config *cfg, const struct acc_offer *o, size_t fi,
                               const struct acc_policy_opts *po,
                               const struct acc_engine_request *probe, struct acc_placement **cand,
                               size_t *got, struct acc_error *err)
{
    const struct acc_component *rq = &o->components[fi];
    int64_t idle[ACC_POLICY_MAX_CLUSTERS];
    if (cfg->res.n_sites > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_CAPACITY, "policy %s places on at most %d sites",
                             acc_policy_name(po->id), ACC_POLICY_MAX_CLUSTERS);
    plan_idle(cfg, o, idle);
    struct acc_policy_system sys = {
        .n_clusters = cfg->res.n_sites, .idle = idle, .latency = cfg->latency};
    struct acc_policy_request req = {
        .type = rq->kind == ACC_COMP_TOTAL ? ACC_REQ_TOTAL : ACC_REQ_FLEXIBLE,
        .total = rq->nodes,
        .min_size = rq->min_nodes,
        .max_size = rq->max_nodes,
        .max_parts = rq->max_parts,
    };
    acc_err rc = plan_candidates(cfg, probe, po, &sys, &req, cand, got, err);
    if (!rc && *got == 0)
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "placement policy %s finds no way to place the %s request %s (%" PRId64
                           " nodes%s) on the sites' nodes less the fixed components",
                           acc_policy_name(po->id),
                           rq->kind == ACC_COMP_TOTAL ? "total" : "flexible", rq->name, rq->nodes,
                           rq->min_nodes || rq->max_nodes || rq->max_parts ? ", within its bounds"
                                                                           : "");
    return rc;
}

/* Candidate k of got (pl): the offer as booked under it, its items and one
 * preview round, each step in the trace.  *built when *p and *start are
 * set; fails only for lack of memory. */
static acc_err try_candidate(const struct acc_plan_env *env, struct acc_engine *eng,
                             const struct acc_offer *o, size_t fi,
                             const struct acc_engine_request *probe, const char *pn, size_t k,
                             size_t got, const struct acc_placement *pl, struct acc_plan *p,
                             acc_time *start, bool *built, struct acc_error *err)
{
    const struct acc_component *rq = &o->components[fi];
    struct view v;
    struct acc_error verr, berr, perr;
    char detail[768];
    *built = false;
    if (view_make(env->cfg, o, fi, pl, &v, &verr)) {
        if (verr.code == ACC_ERR_NOMEM)
            return acc_error_copy(err, &verr);
        snprintf(detail, sizeof detail, "policy %s, candidate %zu of %zu: %.600s", pn, k + 1, got,
                 verr.msg);
        plan_note(probe, -1, verr.code, detail);
        return ACC_OK;
    }
    if (plan_build(env, &v.offer, v.sites, p, &berr)) {
        acc_err rc = berr.code == ACC_ERR_NOMEM ? acc_error_copy(err, &berr) : ACC_OK;
        describe(detail, sizeof detail, pn, k, got, &v, rq, fi, o->n_components, berr.msg);
        plan_note(probe, -1, berr.code, detail);
        view_release(&v);
        return rc;
    }
    if (plan_probe(eng, probe, p, start, &perr)) {
        describe(detail, sizeof detail, pn, k, got, &v, rq, fi, o->n_components, perr.msg);
        plan_note(probe, -1, perr.code, detail);
    } else {
        describe(detail, sizeof detail, pn, k, got, &v, rq, fi, o->n_components,
                 *start < 0 ? "no common slot" : NULL);
        plan_note(probe, *start, ACC_OK, detail);
    }
    /* The plan keeps the parts' names. */
    p->gen_names = v.names;
    p->n_gen_names = v.n_names;
    v.names = NULL;
    view_release(&v);
    *built = true;
    return ACC_OK;
}

acc_err plan_requested(const struct acc_plan_env *env, struct acc_engine *eng,
                       const struct acc_offer *o, size_t fi, const struct acc_policy_opts *po,
                       const struct acc_engine_request *probe, struct acc_plan *out,
                       struct acc_plan_alts *alts, struct acc_error *err)
{
    const char *pn = acc_policy_name(po->id);
    struct acc_placement *cand = NULL;
    size_t got = 0;
    /* earliest: the earliest start of all; any other policy: the first
     * candidate with a slot. */
    struct plan_pick pk = {.start = -1, .earliest = po->id == ACC_POLICY_EARLIEST};
    acc_err rc = flex_candidates(env->cfg, o, fi, po, probe, &cand, &got, err);
    if (rc) {
        free(cand);
        return rc;
    }
    for (size_t k = 0; k < got && !rc; k++) {
        struct acc_plan p;
        acc_time start = -1;
        bool built;
        rc = try_candidate(env, eng, o, fi, probe, pn, k, got, &cand[k], &p, &start, &built, err);
        if (!rc && built && plan_pick_offer(&pk, alts, &p, k, start))
            break;
    }
    if (!rc && !pk.have)
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "no candidate of policy %s for %s fits the configured sites and links",
                           pn, o->components[fi].name);
    free(cand);
    return plan_pick_done(&pk, alts, pn, got, rc, out);
}
