#include "plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "plan_internal.h"

void acc_plan_release(struct acc_plan *p)
{
    if (!p)
        return;
    acc_engine_items_release(p->items, p->n_items);
    for (size_t i = 0; i < p->n_items; i++)
        free(p->labels[i]);
    free(p->labels);
    free(p->items);
    free(p->site_of);
    free(p->item_of_comp);
    free(p->item_of_link);
    free(p->link_of);
    free(p->comps);
    free(p->links);
    for (size_t i = 0; i < p->n_gen_names; i++)
        free(p->gen_names[i]);
    free(p->gen_names);
    memset(p, 0, sizeof *p);
}

static void site_list(const struct acc_config *cfg, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < cfg->n_sites && used + 2 < size; i++)
        used +=
            (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", cfg->sites[i].name);
}

acc_err acc_plan_check(const struct acc_plan_env *env, const struct acc_offer *o,
                       struct acc_error *err)
{
    const struct acc_config *cfg = env->cfg;
    struct acc_policy_opts po;
    bool fell_back;
    acc_err rc = plan_policy(cfg, o, &po, &fell_back, err);
    if (rc)
        return rc;
    int64_t largest = 0, all = 0, fixed = 0;
    for (size_t i = 0; i < cfg->n_sites; i++) {
        largest = cfg->sites[i].nodes > largest ? cfg->sites[i].nodes : largest;
        all += cfg->sites[i].nodes;
    }
    for (size_t i = 0; i < o->n_components; i++)
        fixed += o->components[i].site ? o->components[i].nodes : 0;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if (c->kind == ACC_COMP_TOTAL && c->nodes > largest)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "the total request %s wants %" PRId64
                                 " nodes on one site; the largest site has %" PRId64,
                                 c->name, c->nodes, largest);
        if (c->kind == ACC_COMP_FLEXIBLE && c->nodes > all - fixed)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "the flexible request %s wants %" PRId64
                                 " nodes; the sites have %" PRId64 " in all (%" PRId64
                                 " besides the fixed components)",
                                 c->name, c->nodes, all, all - fixed);
        if (c->kind == ACC_COMP_FLEXIBLE && cfg->n_sites > ACC_POLICY_MAX_CLUSTERS)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "the flexible request %s is split over at most %d sites, and "
                                 "%zu are configured",
                                 c->name, ACC_POLICY_MAX_CLUSTERS, cfg->n_sites);
        if (c->kind != ACC_COMP_SIZED)
            continue; /* every other component names its site (the offer parser saw to it) */
        /* A meta-job that Accord starts needs a program in every component,
         * and mpiexec reads a lone ':' as the end of a component. */
        if (o->launch != ACC_LAUNCH_NONE && (!c->executable || !*c->executable))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "component %s has no co:Executable, but launch style %s "
                                 "starts every component",
                                 c->name, acc_launch_name(o->launch));
        for (size_t k = 0; o->launch != ACC_LAUNCH_NONE && k < c->n_args; k++) {
            if (strcmp(c->args[k], ":") == 0)
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "component %s: an argument ':' cannot be passed through "
                                     "mpiexec (it separates components)",
                                     c->name);
        }
        if (!c->site) {
            if (c->nodes > largest)
                return acc_error_set(err, ACC_ERR_CAPACITY,
                                     "component %s wants %" PRId64
                                     " nodes; the largest site has %" PRId64,
                                     c->name, c->nodes, largest);
            continue;
        }
        const struct acc_site_cfg *s = acc_config_site(cfg, c->site);
        if (!s) {
            char known[512];
            site_list(cfg, known, sizeof known);
            return acc_error_set(err, ACC_ERR_UNKNOWN_SITE,
                                 "component %s names site '%s', which is not configured "
                                 "(sites: %s)",
                                 c->name, c->site, known);
        }
        /* Components on one site share it: their nodes add up. */
        int64_t total = 0;
        for (size_t j = 0; j < o->n_components; j++) {
            if (o->components[j].site && strcmp(o->components[j].site, c->site) == 0)
                total += o->components[j].nodes;
        }
        if (total > s->nodes)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "site %s has %" PRId64 " nodes; the offer wants %" PRId64
                                 " there (component %s and any others on it)",
                                 s->name, s->nodes, total, c->name);
    }
    for (size_t i = 0; i < o->n_links; i++) {
        const struct acc_link_req *l = &o->links[i];
        const char *sa = o->components[l->a].site, *sb = o->components[l->b].site;
        int64_t capacity = 0;
        if (sa && sb && strcmp(sa, sb) != 0) {
            const struct acc_link_cfg *lc = acc_config_link_between(cfg, sa, sb);
            if (!lc)
                return acc_error_set(err, ACC_ERR_NO_LINK,
                                     "link %s joins %s on %s and %s on %s, but no network link "
                                     "joins those sites",
                                     l->name, o->components[l->a].name, sa,
                                     o->components[l->b].name, sb);
            capacity = lc->capacity;
        } else {
            for (size_t k = 0; k < cfg->n_links; k++)
                capacity = cfg->links[k].capacity > capacity ? cfg->links[k].capacity : capacity;
            if (cfg->n_links == 0 && !(sa && sb))
                return acc_error_set(err, ACC_ERR_NO_LINK,
                                     "link %s needs a network link, and none is configured",
                                     l->name);
            if (sa && sb)
                continue; /* both on one site: no network reservation */
        }
        if (l->bandwidth > capacity)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "link %s wants %" PRId64 " Mbit/s; the network link has %" PRId64,
                                 l->name, l->bandwidth, capacity);
    }
    return ACC_OK;
}

acc_err plan_build(const struct acc_plan_env *env, const struct acc_offer *o,
                   const char *const *sites, struct acc_plan *p, struct acc_error *err)
{
    const struct acc_config *cfg = env->cfg;
    size_t nc = o->n_components, nl = o->n_links, max_items = nc + nl;
    memset(p, 0, sizeof *p);
    p->site_of = calloc(nc, sizeof *p->site_of);
    p->item_of_comp = calloc(nc, sizeof *p->item_of_comp);
    p->item_of_link = calloc(nl ? nl : 1, sizeof *p->item_of_link);
    p->link_of = calloc(nl ? nl : 1, sizeof *p->link_of);
    p->items = calloc(max_items, sizeof *p->items);
    p->labels = calloc(max_items, sizeof *p->labels);
    p->comps = calloc(nc, sizeof *p->comps);
    p->links = calloc(nl ? nl : 1, sizeof *p->links);
    acc_err rc = ACC_OK;
    if (!p->site_of || !p->item_of_comp || !p->item_of_link || !p->link_of || !p->items ||
        !p->labels || !p->comps || !p->links) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    memcpy(p->comps, o->components, nc * sizeof *p->comps);
    p->n_comps = nc;
    if (nl)
        memcpy(p->links, o->links, nl * sizeof *p->links);
    p->n_links = nl;
    for (size_t i = 0; i < nc; i++) {
        const struct acc_site_cfg *s = acc_config_site(cfg, sites[i]);
        p->site_of[i] = s->name;
        size_t k;
        for (k = 0; k < p->n_items; k++) {
            if (p->items[k].res.kind == ACC_RES_NODES && strcmp(p->items[k].res.name, s->name) == 0)
                break;
        }
        if (k == p->n_items) {
            struct acc_engine_item *it = &p->items[p->n_items];
            char label[128];
            snprintf(label, sizeof label, "site %s", s->name);
            p->labels[p->n_items] = strdup(label);
            it->adapter = env->site_adapter(env->ctx, s->name);
            it->res = (struct acc_resource){ACC_RES_NODES, s->name, 0};
            it->label = p->labels[p->n_items];
            p->n_items++;
            if (!it->label) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                goto out;
            }
        }
        p->items[k].res.amount += o->components[i].nodes;
        p->item_of_comp[i] = k;
        if (p->items[k].res.amount > s->nodes) {
            rc = acc_error_set(err, ACC_ERR_CAPACITY,
                               "site %s has %" PRId64 " nodes, fewer than its components need",
                               s->name, s->nodes);
            goto out;
        }
    }
    for (size_t i = 0; i < nl; i++) {
        const struct acc_link_req *l = &o->links[i];
        const char *sa = p->site_of[l->a], *sb = p->site_of[l->b];
        p->item_of_link[i] = ACC_PLAN_NO_ITEM;
        if (strcmp(sa, sb) == 0)
            continue; /* within one site: no network reservation */
        const struct acc_link_cfg *lc = acc_config_link_between(cfg, sa, sb);
        if (!lc) {
            rc = acc_error_set(err, ACC_ERR_NO_LINK, "no network link joins %s and %s (link %s)",
                               sa, sb, l->name);
            goto out;
        }
        p->link_of[i] = lc;
        size_t k;
        for (k = 0; k < p->n_items; k++) {
            if (p->items[k].res.kind == ACC_RES_BANDWIDTH &&
                strcmp(p->items[k].res.name, lc->name) == 0)
                break;
        }
        if (k == p->n_items) {
            struct acc_engine_item *it = &p->items[p->n_items];
            char label[128];
            snprintf(label, sizeof label, "link %s", lc->name);
            p->labels[p->n_items] = strdup(label);
            it->adapter = env->network_adapter(env->ctx, lc->network);
            it->res = (struct acc_resource){ACC_RES_BANDWIDTH, lc->name, 0};
            it->label = p->labels[p->n_items];
            p->n_items++;
            if (!it->label) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                goto out;
            }
        }
        p->items[k].res.amount += l->bandwidth;
        p->item_of_link[i] = k;
        if (p->items[k].res.amount > lc->capacity) {
            rc = acc_error_set(err, ACC_ERR_CAPACITY,
                               "network link %s has %" PRId64
                               " Mbit/s, less than the offer's links through it need",
                               lc->name, lc->capacity);
            goto out;
        }
    }
    for (size_t k = 0; k < p->n_items; k++) {
        if (!p->items[k].adapter) {
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "no adapter for %s", p->items[k].label);
            goto out;
        }
    }
out:
    if (rc)
        acc_plan_release(p);
    return rc;
}

/* Steps through the assignments of the components without a site, like an
 * odometer over their candidate sites.  False after the last. */
static bool next_choice(const struct acc_config *cfg, const struct acc_offer *o, size_t *pick,
                        const char **sites)
{
    for (size_t i = o->n_components; i-- > 0;) {
        if (o->components[i].site)
            continue;
        while (++pick[i] < cfg->n_sites) {
            if (cfg->sites[pick[i]].nodes >= o->components[i].nodes) {
                sites[i] = cfg->sites[pick[i]].name;
                return true;
            }
        }
        /* Wrap this digit to its first candidate and carry. */
        for (pick[i] = 0; pick[i] < cfg->n_sites; pick[i]++) {
            if (cfg->sites[pick[i]].nodes >= o->components[i].nodes)
                break;
        }
        sites[i] = cfg->sites[pick[i]].name;
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
    struct acc_trace_event ev = {
        .kind = ACC_TRACE_PLAN,
        .t_from = probe->earliest,
        .t_until = probe->deadline,
        .t_result = start > 0 ? start : 0,
        .status = status,
        .detail = detail,
    };
    probe->hooks.trace(probe->hooks.ctx, &ev);
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
    size_t comp_of[ACC_POLICY_MAX_PARTS], n = 0;
    struct acc_placement *cand = NULL;
    if (cfg->n_sites > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_CONFIG, "policy %s places on at most %d sites",
                             acc_policy_name(po->id), ACC_POLICY_MAX_CLUSTERS);
    for (size_t s = 0; s < cfg->n_sites; s++)
        idle[s] = cfg->sites[s].nodes;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if (c->site) {
            for (size_t s = 0; s < cfg->n_sites; s++)
                if (strcmp(cfg->sites[s].name, c->site) == 0)
                    idle[s] = idle[s] > c->nodes ? idle[s] - c->nodes : 0;
        } else if (n < ACC_POLICY_MAX_PARTS) {
            comp_of[n] = i;
            sizes[n++] = c->nodes;
        }
    }
    struct acc_policy_system sys = {.n_clusters = cfg->n_sites, .idle = idle};
    struct acc_policy_request req = {.type = ACC_REQ_NONFIXED, .n_components = n, .sizes = sizes};
    struct acc_policy_opts opts = *po;
    uint64_t rng = plan_seed(cfg, probe->agreement); /* random ties repeat per agreement */
    opts.rng = &rng;
    size_t max = cfg->policy_candidates, got = 0;
    acc_err rc = ACC_OK;
    if (!(cand = calloc(max, sizeof *cand))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = acc_policy_candidates(&sys, &req, &opts, cand, max, &got, err)))
        goto out;
    if (got == 0) {
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "placement policy %s finds no assignment of sites that fits",
                           acc_policy_name(po->id));
        goto out;
    }
    struct acc_plan best = {0};
    bool have = false;
    acc_time best_start = -1;
    size_t best_k = 0;
    if (alts) {
        alts->policy = acc_policy_name(po->id);
        alts->total = got;
    }
    for (size_t k = 0; k < got && rc == ACC_OK; k++) {
        for (size_t j = 0; j < cand[k].n; j++)
            sites[comp_of[cand[k].comp[j]]] = cfg->sites[cand[k].cluster[j]].name;
        struct acc_plan p;
        struct acc_error berr;
        if (plan_build(env, o, sites, &p, &berr)) {
            if (berr.code == ACC_ERR_NOMEM)
                rc = acc_error_copy(err, &berr);
            else
                plan_trace(probe, -1, sites, o, berr.code, berr.msg);
            continue;
        }
        struct acc_engine_request rq = *probe;
        rq.items = p.items;
        rq.n_items = p.n_items;
        acc_time start = -1;
        struct acc_error perr;
        char why[160];
        snprintf(why, sizeof why, "policy %s, candidate %zu of %zu", acc_policy_name(po->id), k + 1,
                 got);
        if (acc_engine_probe(eng, &rq, &start, &perr)) {
            start = -1;
            plan_trace(probe, -1, sites, o, perr.code, perr.msg);
        } else {
            if (start < 0)
                snprintf(why + strlen(why), sizeof why - strlen(why), ": no common slot");
            plan_trace(probe, start, sites, o, ACC_OK, why);
        }
        /* The first candidate with a slot wins; without any, the first
         * that was built (the negotiation then reports why).  A quote
         * (alts) probes them all and keeps the others with a slot. */
        if (!have || (start >= 0 && best_start < 0)) {
            plan_keep(alts, &best, best_k, best_start);
            best = p;
            best_start = start;
            best_k = k;
            have = true;
        } else {
            plan_keep(alts, &p, k, start);
        }
        if (start >= 0 && !alts)
            break;
    }
    if (alts)
        alts->best_rank = best_k;
    if (!rc && !have)
        rc = acc_error_set(err, ACC_ERR_CAPACITY,
                           "no candidate of policy %s fits the configured sites and links",
                           acc_policy_name(po->id));
    if (rc)
        acc_plan_release(&best);
    else
        *out = best;
out:
    free(cand);
    return rc;
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
    for (size_t i = 0; i < nc; i++) {
        sites[i] = o->components[i].site;
        if (sites[i])
            continue;
        free_choice = true;
        for (pick[i] = 0; pick[i] < cfg->n_sites; pick[i]++) {
            if (cfg->sites[pick[i]].nodes >= o->components[i].nodes)
                break;
        }
        if (pick[i] == cfg->n_sites) {
            rc = acc_error_set(err, ACC_ERR_CAPACITY,
                               "no site has the %" PRId64 " nodes component %s wants",
                               o->components[i].nodes, o->components[i].name);
            goto out;
        }
        sites[i] = cfg->sites[pick[i]].name;
    }
    trace_sized_links(o, probe);
    if (!free_choice) {
        rc = plan_build(env, o, sites, out, err);
        goto out;
    }
    if (po.id != ACC_POLICY_EARLIEST) {
        rc = by_policy(env, eng, o, &po, probe, sites, out, alts, err);
        goto out;
    }

    /* Probe each assignment that fits and keep the earliest. */
    struct acc_plan best = {0}, cand;
    acc_time best_start = -1;
    size_t best_k = 0;
    bool have = false;
    struct acc_error last;
    acc_error_set(&last, ACC_ERR_CAPACITY, "no assignment of sites fits the offer");
    unsigned tried = 0;
    do {
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
        struct acc_engine_request rq = *probe;
        rq.items = cand.items;
        rq.n_items = cand.n_items;
        acc_time start = -1;
        struct acc_error perr;
        if (acc_engine_probe(eng, &rq, &start, &perr)) {
            /* An adapter failed: this assignment cannot be judged, but it may
             * still be the only one; the negotiation will report the failure. */
            start = -1;
            plan_trace(probe, -1, sites, o, perr.code, perr.msg);
        } else {
            plan_trace(probe, start, sites, o, ACC_OK, start < 0 ? "no common slot" : NULL);
        }
        if (!have || (start >= 0 && (best_start < 0 || start < best_start))) {
            plan_keep(alts, &best, best_k, best_start);
            best = cand;
            best_start = start;
            best_k = tried - 1;
            have = true;
        } else {
            plan_keep(alts, &cand, tried - 1, start);
        }
    } while (tried < ACC_PLAN_MAX_CHOICES && next_choice(cfg, o, pick, sites));
    if (alts) {
        alts->policy = "earliest";
        alts->total = tried;
        alts->best_rank = best_k;
    }
    if (!rc && !have)
        rc = acc_error_copy(err, &last);
    if (rc) {
        acc_plan_release(&best);
        goto out;
    }
    *out = best;
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
