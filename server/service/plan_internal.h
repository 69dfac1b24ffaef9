/* SPDX-License-Identifier: Apache-2.0 */
/* plan_internal.h - what the planner's files share; nothing else
 * includes it.
 *
 *   plan_check.c   an offer against the configuration (acc_plan_check)
 *   plan_build.c   the items of one assignment of sites (plan_build)
 *   plan.c         the search: components of given sizes placed by
 *                  probing every assignment or by a policy's candidates
 *   plan_flex.c    a flexible or total request split by the policy into
 *                  generated components (and links between them)
 *   plan_alts.c    the choice among probed candidates, and the others a
 *                  quote keeps
 *   plan_policy.c  the policy of an offer, the seed of random ties
 *
 * Internal names start with plan_. */
#ifndef ACC_PLAN_INTERNAL_H
#define ACC_PLAN_INTERNAL_H

#include "plan.h"

/* Builds the items for one assignment of sites (sites[i] for component i
 * of o, which must all be SIZED); ACC_ERR_CAPACITY (with a reason) when
 * the assignment does not fit.  p->comps becomes a shallow copy of o's. */
acc_err plan_build(const struct acc_plan_env *env, const struct acc_offer *o,
                   const char *const *sites, struct acc_plan *p, struct acc_error *err);

/* A PLAN event of the negotiation trace. */
void plan_note(const struct acc_engine_request *probe, acc_time start, acc_err status,
               const char *detail);

/* One preview round for p's items in the probe's window: *start is the
 * earliest common start, -1 without one or when an adapter failed (the
 * return value and *perr say why). */
acc_err plan_probe(struct acc_engine *eng, const struct acc_engine_request *probe,
                   const struct acc_plan *p, acc_time *start, struct acc_error *perr);

/* Per configured site: its nodes less those of o's components that name it
 * (what a placement policy may place on). */
void plan_idle(const struct acc_config *cfg, const struct acc_offer *o, int64_t *idle);

/* The candidates the policy po orders for req on sys (at most
 * cfg->policy_candidates, random ties seeded per agreement): *cand is
 * allocated (the caller frees it), *got of them filled. */
acc_err plan_candidates(const struct acc_config *cfg, const struct acc_engine_request *probe,
                        const struct acc_policy_opts *po, const struct acc_policy_system *sys,
                        const struct acc_policy_request *req, struct acc_placement **cand,
                        size_t *got, struct acc_error *err);

/* The policy that places the offer's components without a site: the
 * offer's co:Policy, else the configured one; *fell_back when the configured
 * one does not take the offer's kind of request and earliest does instead.
 * ACC_ERR_INVALID when the offer names one that accordd cannot run or that
 * does not take its request. */
acc_err plan_policy(const struct acc_config *cfg, const struct acc_offer *o,
                    struct acc_policy_opts *po, bool *fell_back, struct acc_error *err);

/* The generator state for random ties: [policy] seed mixed with the
 * agreement's id, so an agreement's placement repeats. */
uint64_t plan_seed(const struct acc_config *cfg, const char *agreement);

/* Places component fi of o, a flexible or total request, with policy po:
 * candidate splits on the sites' nodes less the fixed components, each
 * probed with one preview round; under earliest the earliest common start
 * wins, under any other policy the first candidate with one.  With alts
 * (a quote) every candidate is probed and the others with a slot kept. */
acc_err plan_requested(const struct acc_plan_env *env, struct acc_engine *eng,
                       const struct acc_offer *o, size_t fi, const struct acc_policy_opts *po,
                       const struct acc_engine_request *probe, struct acc_plan *out,
                       struct acc_plan_alts *alts, struct acc_error *err);

/* A candidate not chosen (rank k, probed start): kept among the
 * alternatives when it has a slot and there is room, else released. */
void plan_keep(struct acc_plan_alts *alts, struct acc_plan *p, size_t k, acc_time start);

/* The choice among probed candidates.  With `earliest` the earliest
 * common start wins, else the first candidate with one; without any, the
 * first built (the negotiation then says why).  Start with
 * {.start = -1, .earliest = ...}. */
struct plan_pick {
    struct acc_plan best;
    acc_time start; /* best's probed start, -1 without a slot */
    size_t rank;    /* best's place among the candidates */
    bool have;
    bool earliest;
};

/* Candidate p (rank k, probed start) becomes the best, or goes to
 * plan_keep; p is taken either way.  True when the search may stop: the
 * first with a slot wins and no quote wants the others. */
bool plan_pick_offer(struct plan_pick *pk, struct acc_plan_alts *alts, struct acc_plan *p, size_t k,
                     acc_time start);

/* Ends a search that built and probed `total` candidates under `policy`
 * (static): with rc ACC_OK the best goes to *out, else it is released.
 * Returns rc. */
acc_err plan_pick_done(struct plan_pick *pk, struct acc_plan_alts *alts, const char *policy,
                       size_t total, acc_err rc, struct acc_plan *out);

#endif
