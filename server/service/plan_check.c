/* SPDX-License-Identifier: Apache-2.0 */
/* plan_check.c - an offer against the configuration, before anything is
 * stored or probed (part of the planner; plan.h): unknown sites, more
 * nodes or bandwidth than exists, links between sites that no link joins,
 * a launch that mpiexec could not start or no account may run. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"

static void site_list(const struct acc_config *cfg, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < cfg->res.n_sites && used + 2 < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                                 cfg->res.sites[i].name);
}

/* A flexible or total request: what the sites have in all or at most. */
static acc_err check_request(const struct acc_config *cfg, const struct acc_component *c,
                             int64_t largest, int64_t all, int64_t fixed, struct acc_error *err)
{
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
    if (c->kind == ACC_COMP_FLEXIBLE && cfg->res.n_sites > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_CAPACITY,
                             "the flexible request %s is split over at most %d sites, and "
                             "%zu are configured",
                             c->name, ACC_POLICY_MAX_CLUSTERS, cfg->res.n_sites);
    return ACC_OK;
}

/* A meta-job that Accord starts needs a program in every component, and
 * mpiexec reads a lone ':' as the end of a component. */
static acc_err check_launch(const struct acc_offer *o, const struct acc_component *c,
                            struct acc_error *err)
{
    if (o->launch == ACC_LAUNCH_NONE)
        return ACC_OK;
    if (!c->executable || !*c->executable)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "component %s has no co:Executable, but launch style %s "
                             "starts every component",
                             c->name, acc_launch_name(o->launch));
    for (size_t k = 0; k < c->n_args; k++) {
        if (strcmp(c->args[k], ":") == 0)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "component %s: an argument ':' cannot be passed through "
                                 "mpiexec (it separates components)",
                                 c->name);
    }
    return ACC_OK;
}

/* A component of a given size on its named site, or on any that has
 * enough nodes. */
static acc_err check_sized(const struct acc_config *cfg, const struct acc_offer *o,
                           const struct acc_component *c, int64_t largest, struct acc_error *err)
{
    if (!c->site) {
        if (c->nodes > largest)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "component %s wants %" PRId64
                                 " nodes; the largest site has %" PRId64,
                                 c->name, c->nodes, largest);
        return ACC_OK;
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
    return ACC_OK;
}

static acc_err check_link(const struct acc_config *cfg, const struct acc_offer *o,
                          const struct acc_link_req *l, struct acc_error *err)
{
    const char *sa = o->components[l->a].site, *sb = o->components[l->b].site;
    int64_t capacity = 0;
    if (sa && sb && strcmp(sa, sb) != 0) {
        const struct acc_link_cfg *lc = acc_config_link_between(cfg, sa, sb);
        if (!lc)
            return acc_error_set(err, ACC_ERR_NO_LINK,
                                 "link %s joins %s on %s and %s on %s, but no network link "
                                 "joins those sites",
                                 l->name, o->components[l->a].name, sa, o->components[l->b].name,
                                 sb);
        capacity = lc->capacity;
    } else {
        for (size_t k = 0; k < cfg->res.n_links; k++)
            capacity =
                cfg->res.links[k].capacity > capacity ? cfg->res.links[k].capacity : capacity;
        if (cfg->res.n_links == 0 && !(sa && sb))
            return acc_error_set(err, ACC_ERR_NO_LINK,
                                 "link %s needs a network link, and none is configured", l->name);
        if (sa && sb)
            return ACC_OK; /* both on one site: no network reservation */
    }
    if (l->bandwidth > capacity)
        return acc_error_set(err, ACC_ERR_CAPACITY,
                             "link %s wants %" PRId64 " Mbit/s; the network link has %" PRId64,
                             l->name, l->bandwidth, capacity);
    return ACC_OK;
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
    for (size_t i = 0; i < cfg->res.n_sites; i++) {
        largest = cfg->res.sites[i].nodes > largest ? cfg->res.sites[i].nodes : largest;
        all += cfg->res.sites[i].nodes;
    }
    for (size_t i = 0; i < o->n_components; i++)
        fixed += o->components[i].site ? o->components[i].nodes : 0;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if ((rc = check_request(cfg, c, largest, all, fixed, err)))
            return rc;
        if (c->kind != ACC_COMP_SIZED)
            continue; /* every other component names its site (the offer parser saw to it) */
        if ((rc = check_launch(o, c, err)) || (rc = check_sized(cfg, o, c, largest, err)))
            return rc;
    }
    for (size_t i = 0; i < o->n_links; i++) {
        if ((rc = check_link(cfg, o, &o->links[i], err)))
            return rc;
    }
    /* A job this accordd would start needs an account to run as (never
     * root): refused now, before anything is booked, rather than at its
     * start. */
    if (o->launch != ACC_LAUNCH_NONE && cfg->launch.enabled) {
        struct acc_account as;
        bool other;
        if ((rc = acc_config_launch_account(cfg, o->initiator, &o->identity, &as, &other, err)))
            return rc;
    }
    return ACC_OK;
}
