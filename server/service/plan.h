/* SPDX-License-Identifier: Apache-2.0 */
/* plan.h - from an offer to engine items: which site runs each component,
 * which reservation serves each link.
 *
 * Components on the same site share one node reservation (their nodes add
 * up); links between the same two sites share one bandwidth reservation
 * (their bandwidths add up); a link whose components share a site needs no
 * network reservation.  Components that name no site get one chosen: every
 * assignment that fits (up to a bound) is probed with one preview round and
 * the one with the earliest common start wins, or a placement policy
 * (lib/policy) orders a few candidates and the first with a slot wins.  A
 * flexible or total request is split by the policy into generated
 * components (plan_flex.c).
 */
#ifndef ACC_PLAN_H
#define ACC_PLAN_H

#include <stddef.h>

#include "../config/config.h"
#include "../engine/engine.h"
#include "../../lib/model/model.h"

#define ACC_PLAN_NO_ITEM     ((size_t)-1)
#define ACC_PLAN_MAX_CHOICES 32

struct acc_plan_env {
    const struct acc_config *cfg;
    struct acc_adapter *(*site_adapter)(void *ctx, const char *site);
    struct acc_adapter *(*network_adapter)(void *ctx, const char *network);
    void *ctx;
};

struct acc_plan {
    /* The components as booked: the offer's, with a flexible or total
     * request replaced by its generated parts (part 1 in the request's
     * place, the others after the offer's components, so the links'
     * indices hold).  Shallow copies: the strings are the offer's, but for
     * the generated names, which the plan owns (gen_names). */
    struct acc_component *comps;
    size_t n_comps;
    struct acc_link_req *links; /* the offer's links, then a flexible request's
                                 * generated ones (shallow, like comps) */
    size_t n_links;
    char **gen_names; /* generated component and link names, owned */
    size_t n_gen_names;
    const char **site_of; /* per component: its site (borrowed from the config) */
    size_t *item_of_comp; /* per component: index of its node reservation */
    size_t *item_of_link; /* per link: index of its bandwidth reservation, or NO_ITEM */
    const struct acc_link_cfg **link_of; /* per link: the configured link, or NULL */
    struct acc_engine_item *items;
    size_t n_items;
    char **labels; /* the items' labels, owned */
    /* The local account [accounts] maps the offer's user to, owned: the
     * node reservations are booked for it (Slurm Users=, Grid Engine -u);
     * NULL: none (as before). */
    char *account;
};

void acc_plan_release(struct acc_plan *p);

/* Checks an offer against the configuration: unknown sites, more nodes or
 * bandwidth than exists, links between sites that no link joins.  Bad
 * input gets a 4xx code and a message naming the component or link. */
acc_err acc_plan_check(const struct acc_plan_env *env, const struct acc_offer *o,
                       struct acc_error *err);

/* Builds the items for the offer, choosing sites for components without one.
 * `probe` is the window to probe candidate assignments in (its items are
 * ignored); choices are reported through probe->hooks.trace as PLAN events. */
acc_err acc_plan_make(const struct acc_plan_env *env, struct acc_engine *eng,
                      const struct acc_offer *o, const struct acc_engine_request *probe,
                      struct acc_plan *out, struct acc_error *err);

/* The placements besides the chosen one that have a common slot in the
 * probe's window (a quote offers each): at most `max`, in the planner's
 * order, each with its rank among the candidates ("placement 2 of 3 by
 * worst-fit").  Filled only for offers with components without a site. */
struct acc_plan_alts {
    size_t max;             /* set by the caller; 0 keeps none */
    struct acc_plan *plans; /* n of them, owned */
    size_t *rank;           /* per plan: its place among the candidates, from 0 */
    size_t n;
    size_t total;       /* candidates built and probed */
    const char *policy; /* the placement policy's name (static) */
    size_t best_rank;   /* the chosen plan's place among the candidates */
};

void acc_plan_alts_release(struct acc_plan_alts *a);

/* acc_plan_make that also keeps the other placements with a slot in
 * *alts (alts->max set, the rest zero).  Under a policy other than
 * earliest every candidate is probed (not only up to the first with a
 * slot); the chosen plan is the same as acc_plan_make's. */
acc_err acc_plan_make_alts(const struct acc_plan_env *env, struct acc_engine *eng,
                           const struct acc_offer *o, const struct acc_engine_request *probe,
                           struct acc_plan *out, struct acc_plan_alts *alts, struct acc_error *err);

#endif
