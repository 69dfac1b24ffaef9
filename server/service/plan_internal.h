/* plan_internal.h - what plan.c and plan_flex.c share; nothing else
 * includes it.
 *
 *   plan.c       checks, items from an assignment of sites, components of
 *                given sizes placed by probing or by a policy
 *   plan_flex.c  a flexible or total request split by the policy into
 *                generated components (and links between them)
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

#endif
