/* SPDX-License-Identifier: Apache-2.0 */
/* engine.c - the engine's life (threads for the adapter calls, the orphan
 * hook) and the frame arithmetic that finds a common start.  The calls are
 * in engine_call.c, the negotiation in engine_nego.c and engine_reserve.c. */
#include "engine.h"

#include <stdlib.h>

#include "../../lib/common/pool.h"
#include "../../lib/common/timefmt.h"
#include "engine_int.h"

#define DEFAULT_THREADS 256

acc_err acc_engine_new(const struct acc_engine_options *opt, struct acc_engine **out,
                       struct acc_error *err)
{
    struct acc_engine *e = calloc(1, sizeof *e);
    if (!e)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_breaker_cfg bc = {.max_calls = opt->max_calls_per_adapter,
                                 .failures = opt->breaker_failures,
                                 .cooldown_us = opt->breaker_cooldown_us};
    acc_err rc = acc_breaker_new(&bc, &e->breaker, err);
    if (!rc)
        rc = acc_pool_new(opt->max_threads ? opt->max_threads : DEFAULT_THREADS, &e->pool, err);
    if (rc) {
        acc_breaker_free(e->breaker);
        free(e);
        return rc;
    }
    e->orphan = opt->orphan;
    e->orphan_ctx = opt->orphan_ctx;
    *out = e;
    return ACC_OK;
}

bool acc_engine_free(struct acc_engine *e)
{
    if (!e)
        return true;
    if (!acc_pool_free(e->pool))
        return false; /* calls still run and may call the orphan hook: keep e */
    acc_breaker_free(e->breaker);
    free(e);
    return true;
}

acc_err acc_engine_check(struct acc_engine *e, struct acc_adapter *ad, struct acc_error *err)
{
    return acc_breaker_check(e->breaker, acc_adapter_name(ad), acc_mono_us(), err);
}

void acc_engine_guard(struct acc_engine *e, const char *adapter, struct acc_engine_guard_state *out)
{
    acc_breaker_get(e->breaker, adapter, acc_mono_us(), out);
}

void acc_engine_interrupt(struct acc_engine *e)
{
    acc_pool_interrupt(e->pool);
}

void acc_engine_items_release(struct acc_engine_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].nodes);
        items[i].nodes = NULL;
    }
}

/* ------------------------------------------------------ frame arithmetic */

acc_time acc_engine_common_start(const struct acc_frames *p, size_t n, acc_time from,
                                 int64_t duration)
{
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!idx)
        return -1;
    acc_time t = from;
    bool moved = true;
    while (moved) {
        moved = false;
        for (size_t i = 0; i < n; i++) {
            /* The first frame that can still hold [t, t + duration). */
            while (idx[i] < p[i].n && p[i].v[idx[i]].end < t + duration)
                idx[i]++;
            if (idx[i] == p[i].n) {
                free(idx);
                return -1;
            }
            if (p[i].v[idx[i]].start > t) {
                t = p[i].v[idx[i]].start;
                moved = true;
            }
        }
    }
    free(idx);
    return t;
}
