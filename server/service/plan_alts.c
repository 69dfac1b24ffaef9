/* SPDX-License-Identifier: Apache-2.0 */
/* plan_alts.c - the choice among probed candidates, and the placements a
 * quote offers besides it
 * (part of the planner; plan.h, plan_internal.h): the candidates
 * with a common slot, kept up to a bound in the candidates' order. */
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

void acc_plan_alts_release(struct acc_plan_alts *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        acc_plan_release(&a->plans[i]);
    free(a->plans);
    free(a->rank);
    size_t max = a->max;
    memset(a, 0, sizeof *a);
    a->max = max;
}

void plan_keep(struct acc_plan_alts *alts, struct acc_plan *p, size_t k, acc_time start)
{
    if (!alts || start < 0 || alts->max == 0) {
        acc_plan_release(p);
        return;
    }
    if (!alts->plans) {
        alts->plans = calloc(alts->max, sizeof *alts->plans);
        alts->rank = calloc(alts->max, sizeof *alts->rank);
        if (!alts->plans || !alts->rank) {
            free(alts->plans);
            free(alts->rank);
            alts->plans = NULL;
            alts->rank = NULL;
            acc_plan_release(p); /* out of memory: the quote offers fewer */
            return;
        }
    }
    /* In rank order; past the bound the highest rank goes. */
    size_t at = alts->n;
    while (at > 0 && alts->rank[at - 1] > k)
        at--;
    if (at == alts->max) {
        acc_plan_release(p);
        return;
    }
    if (alts->n == alts->max)
        acc_plan_release(&alts->plans[--alts->n]);
    memmove(&alts->plans[at + 1], &alts->plans[at], (alts->n - at) * sizeof *alts->plans);
    memmove(&alts->rank[at + 1], &alts->rank[at], (alts->n - at) * sizeof *alts->rank);
    alts->plans[at] = *p;
    alts->rank[at] = k;
    alts->n++;
    memset(p, 0, sizeof *p);
}

bool plan_pick_offer(struct plan_pick *pk, struct acc_plan_alts *alts, struct acc_plan *p, size_t k,
                     acc_time start)
{
    bool better =
        !pk->have || (start >= 0 && (pk->start < 0 || (pk->earliest && start < pk->start)));
    if (better) {
        plan_keep(alts, &pk->best, pk->rank, pk->start);
        pk->best = *p;
        pk->start = start;
        pk->rank = k;
        pk->have = true;
    } else {
        plan_keep(alts, p, k, start);
    }
    return start >= 0 && !pk->earliest && !alts;
}

acc_err plan_pick_done(struct plan_pick *pk, struct acc_plan_alts *alts, const char *policy,
                       size_t total, acc_err rc, struct acc_plan *out)
{
    if (alts) {
        alts->policy = policy;
        alts->total = total;
        alts->best_rank = pk->rank;
    }
    if (rc) {
        acc_plan_release(&pk->best);
        return rc;
    }
    *out = pk->best;
    return ACC_OK;
}
