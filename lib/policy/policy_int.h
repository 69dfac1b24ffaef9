/* SPDX-License-Identifier: Apache-2.0 */
/* policy_int.h - what the policy files share: the working copy of a
 * placement's inputs and the helpers that order and fill clusters. */
#ifndef ACC_POLICY_INT_H
#define ACC_POLICY_INT_H

#include "policy.h"

struct acc_pol_ctx {
    const struct acc_policy_system *sys;
    const struct acc_policy_request *req;
    const struct acc_policy_opts *o;
    size_t n;                              /* clusters */
    int64_t idle[ACC_POLICY_MAX_CLUSTERS]; /* working copy, lowered as parts are placed */
    size_t max_parts;                      /* the request's and the policy's limit */
};

/* Orders the clusters not skipped by key (descending or ascending); equal
 * keys by the tie-break rule.  Writes *n_order indices to order. */
void acc_pol_order(const struct acc_pol_ctx *c, const double *key, bool descending,
                   const bool *skip, size_t *order, size_t *n_order);

/* Appends one part to a placement. */
void acc_pol_add(struct acc_placement *p, size_t cluster, int64_t size, size_t comp);

/* Fills `total` along the order as FCM does: each cluster gives what it has
 * (bounded by max_size) until the rest fits, within min_size and
 * max_parts.  True when it all fits; p is then the split. */
bool acc_pol_fill(const struct acc_pol_ctx *c, const size_t *order, size_t n_order, int64_t total,
                  struct acc_placement *p);

/* Whether a whole job of `total` may go on one cluster under the
 * request's bounds. */
bool acc_pol_whole_ok(const struct acc_pol_ctx *c, int64_t total);

/* The families: each fills *p (fits or not) from a validated context. */
void acc_pol_koala(struct acc_pol_ctx *c, struct acc_placement *p);
void acc_pol_jones(struct acc_pol_ctx *c, struct acc_placement *p);

#endif
