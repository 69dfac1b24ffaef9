/* SPDX-License-Identifier: Apache-2.0 */
/* plan.c - the planner's search (plan.h; the other parts are listed in
 * plan_internal.h): components without a site get one, either by probing
 * every assignment that fits (earliest: the earliest common start wins)
 * or by probing the candidates a placement policy orders (the first with
 * a slot wins); a flexible or total request goes to plan_flex.c. */
#include "plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* Steps through the assignments of the components without a site, like an
 * odometer over their candidate sites.  False after the last. */
static bool next_choice(const struct acc_config *cfg, const struct acc_offer *o, size_t *pick,
                        const char **sites)
{
    for (size_t i = o->n_components; i-- > 0;) {
        if (o->components[i].site)
            continue;
        while (++pick[i] < cfg->res.n_sites) {
            if (cfg->res.sites[pick[i]].nodes >= o->components[i].nodes) {
                sites[i] = cfg->res.sites[pick[i]].name;
                return true;
            }
        }
        /* Wrap this digit to its first candidate and carry. */
        for (pick[i] = 0; pick[i] < cfg->res.n_sites; pick[i]++) {
            if (cfg->res.sites[pick[i]].nodes >= o->components[i].nodes)
                break;
        }
        sites[i] = cfg->res.sites[pick[i]].name;
    }
    return false;
}

static void plan_trace(const struct acc_engine_request *probe, acc_time start,
                       const char *const *sites, const struct acc_offer *o, acc_err status,
                       const char *why)
{
    if (!probe->hooks.trace)
        return;
    char detail[768];
    size_t used = 0;
    detail[0] = '\0';
    for (size_t i = 0; i < o->n_components && used + 2 < sizeof detail; i++) {
        if (!o->components[i].site)
            used += (size_t)snprintf(detail + used, sizeof detail - used, "%s%s on %s",
                                     used ? ", " : "", o->components[i].name, sites[i]);
    }
    if (why && used + 2 < sizeof detail)
        snprintf(detail + used, sizeof detail - used, ": %s", why);
    plan_note(probe, start, status, detail);
}

void plan_note(const struct acc_engine_request *probe, acc_time start, acc_err status,
               const char *detail)
{
    if (!probe->hooks.trace)
        return;
    struct acc_trace_event ev = {
        .kind = ACC_TRACE_PLAN,
        .t_from = probe->earliest,
        .t_until = probe->deadline,
        .t_result = start > 0 ? start : 0,
        .status = status,
        .detail = (char *)detail, /* the hook copies it */
    };
    probe->hooks.trace(probe->hooks.ctx, &ev);
}

/* The trace says how each application-sized link got its bandwidth. */
static void trace_sized_links(const struct acc_offer *o, const struct acc_engine_request *probe)
{
    for (size_t i = 0; i < o->n_links; i++) {
        const struct acc_link_req *l = &o->links[i];
        char detail[512];
        if (l->sizing == ACC_LINK_PER_PROCESSOR)
            snprintf(
                detail, sizeof detail,
                "link %s: %" PRId64 " and %" PRId64
                " nodes at %g Mbit/s per processor: eq. (1) gives %.3f Mbit/s, booked %" PRId64,
                l->name, o->components[l->a].nodes, o->components[l->b].nodes, l->ppbw, l->computed,
                l->bandwidth);
        else if (l->sizing == ACC_LINK_PER_STEP)
            snprintf(detail, sizeof detail,
                     "link %s: %.0f bytes every %g s gives %.3f Mbit/s, booked %" PRId64, l->name,
                     l->step_bytes, l->step_seconds, l->computed, l->bandwidth);
        else
            continue;
        plan_note(probe, 0, ACC_OK, detail);
    }
}

acc_err plan_probe(struct acc_engine *eng, const struct acc_engine_request *probe,
                   const struct acc_plan *p, acc_time *start, struct acc_error *perr)
{
    struct acc_engine_request rq = *probe;
    rq.items = p->items;
    rq.n_items = p->n_items;
    *start = -1;
    acc_err rc = acc_engine_probe(eng, &rq, start, perr);
    if (rc)
        *start = -1;
    return rc;
}

void plan_idle(const struct acc_config *cfg, const struct acc_offer *o, int64_t *idle)
{
    for (size_t s = 0; s < cfg->res.n_sites; s++) {
        idle[s] = cfg->res.sites[s].nodes;
        for (size_t i = 0; i < o->n_components; i++) {
            const struct acc_component *c = &o->components[i];
            if (c->site && strcmp(c->site, cfg->res.sites[s].name) == 0)
                idle[s] = idle[s] > c->nodes ? idle[s] - c->nodes : 0;
        }
    }
}

acc_err plan_candidates(const struct acc_config *cfg, const struct acc_engine_request *probe,
                        const struct acc_policy_opts *po, const struct acc_policy_system *sys,
                        const struct acc_policy_request *req, struct acc_placement **cand,
                        size_t *got, struct acc_error *err)
{
    struct acc_policy_opts opts = *po;
    uint64_t rng = plan_seed(cfg, probe->agreement); /* random ties repeat per agreement */
    opts.rng = &rng;
    size_t max = cfg->policy_candidates;
    *got = 0;
    if (!(*cand = calloc(max, sizeof **cand)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return acc_policy_candidates(sys, req, &opts, *cand, max, got, err);
}

/* Probes the policy's candidates in their order (sites[] filled for each
 * from comp_of, the components without a site). */
static acc_err probe_policy(const struct acc_plan_env *env, struct acc_engine *eng,
                            const struct acc_offer *o, const struct acc_policy_opts *po,
                            const struct acc_engine_request *probe, const char **sites,
                            const size_t *comp_of, const struct acc_placement *cand, size_t got,
                            struct acc_plan *out, struct acc_plan_alts *alts, struct acc_error *err)
{
    const struct acc_config *cfg = env->cfg;
    struct plan_pick pk = {.start = -1, .earliest = false};
    acc_err rc = ACC_OK;
    for (size_t k = 0; k < got && rc == ACC_OK; k++) {
        for (size_t j = 0; j < cand[k].n; j++)
            sites[comp_of[cand[k].comp[j]]] = cfg->res.sites[cand[k].cluster[j]].name;
        struct acc_plan p;
        struct acc_error berr;
        if (plan_build(env, o, sites, &p, &berr)) {
            if (berr.code == ACC_ERR_NOMEM)
                rc = acc_error_copy(err, &berr);
            else
                plan_trace(probe, -1, sites, o, berr.code, berr.msg);
            continue;
        }
        acc_time start;
        struct acc_error perr;
        char why[160];
        snprintf(why, sizeof why, "policy %s, candidate %zu of %zu", acc_policy_name(po->id), k + 1,
                 got);
        if (plan_probe(eng, probe, &p, &start, &perr)) {
            plan_trace(probe, -1, sites, o, perr.code, perr.msg);
        } else {
            if (start < 0)
                snprintf(why + strlen(why), sizeof why - strlen(why), ": no common slot");
            plan_trace(probe, start, sites, o, ACC_OK, why);
        }
        if (plan_pick_offer(&pk, alts, &p, k, start))
            break;
    }
    if (!rc && !pk.have)
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "no candidate of policy %s fits the configured sites and links",
                           acc_policy_name(po->id));
    return plan_pick_done(&pk, alts, acc_policy_name(po->id), got, rc, out);
}

/* A policy other than earliest: it orders candidate assignments (on the
 * sites' capacities less the fixed components), and the first with a
 * common slot in the window wins; at most cfg->policy_candidates are
 * probed.  ACC_ERR_CAPACITY when the policy finds none that fits. */
static acc_err by_policy(const struct acc_plan_env *env, struct acc_engine *eng,
                         const struct acc_offer *o, const struct acc_policy_opts *po,
                         const struct acc_engine_request *probe, const char **sites,
                         struct acc_plan *out, struct acc_plan_alts *alts, struct acc_error *err)
{
    const struct acc_config *cfg = env->cfg;
    int64_t idle[ACC_POLICY_MAX_CLUSTERS], sizes[ACC_POLICY_MAX_PARTS];
    size_t comp_of[ACC_POLICY_MAX_PARTS], n = 0, got = 0;
    struct acc_placement *cand = NULL;
    if (cfg->res.n_sites > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_CONFIG, "policy %s places on at most %d sites",
                             acc_policy_name(po->id), ACC_POLICY_MAX_CLUSTERS);
    plan_idle(cfg, o, idle);
    for (size_t i = 0; i < o->n_components; i++) {
        if (!o->components[i].site && n < ACC_POLICY_MAX_PARTS) {
            comp_of[n] = i;
            sizes[n++] = o->components[i].nodes;
        }
    }
    struct acc_policy_system sys = {.n_clusters = cfg->res.n_sites, .idle = idle};
    struct acc_policy_request req = {.type = ACC_REQ_NONFIXED, .n_components = n, .sizes = sizes};
    acc_err rc = plan_candidates(cfg, probe, po, &sys, &req, &cand, &got, err);
    if (!rc && got == 0)
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "placement policy %s finds no assignment of sites that fits",
                           acc_policy_name(po->id));
    if (!rc)
        rc = probe_policy(env, eng, o, po, probe, sites, comp_of, cand, got, out, alts, err);
    free(cand);
    return rc;
}

/* earliest: probe each assignment that fits (at most ACC_PLAN_MAX_CHOICES,
 * starting from sites[] and stepping pick[]) and keep the earliest. */
static acc_err by_earliest(const struct acc_plan_env *env, struct acc_engine *eng,
                           const struct acc_offer *o, const struct acc_engine_request *probe,
                           const char **sites, size_t *pick, struct acc_plan *out,
                           struct acc_plan_alts *alts, struct acc_error *err)
{
    struct plan_pick pk = {.start = -1, .earliest = true};
    struct acc_error last;
    acc_error_set(&last, ACC_ERR_CAPACITY, "no assignment of sites fits the offer");
    acc_err rc = ACC_OK;
    unsigned tried = 0;
    do {
        struct acc_plan cand;
        struct acc_error berr;
        if (plan_build(env, o, sites, &cand, &berr)) {
            if (berr.code == ACC_ERR_NOMEM) {
                rc = acc_error_copy(err, &berr);
                break;
            }
            last = berr;
            continue;
        }
        tried++;
        acc_time start;
        struct acc_error perr;
        if (plan_probe(eng, probe, &cand, &start, &perr))
            /* An adapter failed: this assignment cannot be judged, but it may
             * still be the only one; the negotiation will report the failure. */
            plan_trace(probe, -1, sites, o, perr.code, perr.msg);
        else
            plan_trace(probe, start, sites, o, ACC_OK, start < 0 ? "no common slot" : NULL);
        plan_pick_offer(&pk, alts, &cand, tried - 1, start);
    } while (tried < ACC_PLAN_MAX_CHOICES && next_choice(env->cfg, o, pick, sites));
    if (!rc && !pk.have)
        rc = acc_error_copy(err, &last);
    return plan_pick_done(&pk, alts, "earliest", tried, rc, out);
}

/* The first assignment: each component's own site, else the first site
 * with enough nodes (*free_choice when any had none). */
static acc_err first_sites(const struct acc_config *cfg, const struct acc_offer *o,
                           const char **sites, size_t *pick, bool *free_choice,
                           struct acc_error *err)
{
    *free_choice = false;
    for (size_t i = 0; i < o->n_components; i++) {
        sites[i] = o->components[i].site;
        if (sites[i])
            continue;
        *free_choice = true;
        for (pick[i] = 0; pick[i] < cfg->res.n_sites; pick[i]++) {
            if (cfg->res.sites[pick[i]].nodes >= o->components[i].nodes)
                break;
        }
        if (pick[i] == cfg->res.n_sites)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "no site has the %" PRId64 " nodes component %s wants",
                                 o->components[i].nodes, o->components[i].name);
        sites[i] = cfg->res.sites[pick[i]].name;
    }
    return ACC_OK;
}

static acc_err make(const struct acc_plan_env *env, struct acc_engine *eng,
                    const struct acc_offer *o, const struct acc_engine_request *probe,
                    struct acc_plan *out, struct acc_plan_alts *alts, struct acc_error *err)
{
    const struct acc_config *cfg = env->cfg;
    size_t nc = o->n_components;
    const char **sites = calloc(nc, sizeof *sites);
    size_t *pick = calloc(nc, sizeof *pick);
    acc_err rc = ACC_OK;
    bool free_choice = false;
    if (!sites || !pick) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    struct acc_policy_opts po;
    bool fell_back;
    if ((rc = plan_policy(cfg, o, &po, &fell_back, err)))
        goto out;
    if (fell_back) {
        char why[256];
        snprintf(why, sizeof why,
                 "the configured policy %s does not take this offer's request; earliest places "
                 "it",
                 acc_policy_name(cfg->policy.id));
        plan_note(probe, 0, ACC_OK, why);
    }
    for (size_t i = 0; i < nc; i++) {
        if (o->components[i].kind != ACC_COMP_SIZED) {
            rc = plan_requested(env, eng, o, i, &po, probe, out, alts, err);
            goto out;
        }
    }
    if ((rc = first_sites(cfg, o, sites, pick, &free_choice, err)))
        goto out;
    trace_sized_links(o, probe);
    if (!free_choice)
        rc = plan_build(env, o, sites, out, err);
    else if (po.id != ACC_POLICY_EARLIEST)
        rc = by_policy(env, eng, o, &po, probe, sites, out, alts, err);
    else
        rc = by_earliest(env, eng, o, probe, sites, pick, out, alts, err);
out:
    free(sites);
    free(pick);
    return rc;
}

acc_err acc_plan_make(const struct acc_plan_env *env, struct acc_engine *eng,
                      const struct acc_offer *o, const struct acc_engine_request *probe,
                      struct acc_plan *out, struct acc_error *err)
{
    return make(env, eng, o, probe, out, NULL, err);
}

acc_err acc_plan_make_alts(const struct acc_plan_env *env, struct acc_engine *eng,
                           const struct acc_offer *o, const struct acc_engine_request *probe,
                           struct acc_plan *out, struct acc_plan_alts *alts, struct acc_error *err)
{
    acc_err rc = make(env, eng, o, probe, out, alts, err);
    if (rc)
        acc_plan_alts_release(alts);
    return rc;
}
