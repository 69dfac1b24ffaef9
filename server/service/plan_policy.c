/* SPDX-License-Identifier: Apache-2.0 */
/* plan_policy.c - which placement policy places an offer's components
 * without a site (part of the planner; plan_internal.h): the offer's
 * co:Policy or the configured one, and whether it takes the offer's kind
 * of request; the seed of random ties. */
#include <stdio.h>

#include "../../lib/common/hash.h"
#include "plan_internal.h"

/* The request type of the offer's components without a site. */
static enum acc_request_type offer_type(const struct acc_offer *o, bool *any)
{
    *any = false;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if (c->kind == ACC_COMP_FLEXIBLE || c->kind == ACC_COMP_TOTAL) {
            *any = true;
            return c->kind == ACC_COMP_FLEXIBLE ? ACC_REQ_FLEXIBLE : ACC_REQ_TOTAL;
        }
        *any |= !c->site;
    }
    return ACC_REQ_NONFIXED;
}

acc_err plan_policy(const struct acc_config *cfg, const struct acc_offer *o,
                    struct acc_policy_opts *po, bool *fell_back, struct acc_error *err)
{
    bool any;
    enum acc_request_type type = offer_type(o, &any);
    *fell_back = false;
    acc_err rc = acc_config_policy(cfg, o->policy, po, err);
    if (rc || acc_policy_accepts(po->id, type))
        return rc;
    if (o->policy) {
        if (type == ACC_REQ_NONFIXED)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "placement policy %s splits a co:Flexible total; components of "
                                 "given sizes without a site take earliest, worst-fit, "
                                 "worst-fit-distinct or single",
                                 o->policy);
        return acc_error_set(err, ACC_ERR_INVALID,
                             "placement policy %s places components of given sizes; a "
                             "co:Flexible request takes earliest, single, fcm, fcm-K, ca, mig "
                             "or initial",
                             o->policy);
    }
    /* The configured policy does not take this kind of request: Accord's
     * own earliest-start placement does. */
    rc = acc_config_policy(cfg, "earliest", po, err);
    *fell_back = true;
    return rc;
}

uint64_t plan_seed(const struct acc_config *cfg, const char *agreement)
{
    return acc_fnv1a64(agreement ? agreement : "") ^ cfg->policy_seed;
}
