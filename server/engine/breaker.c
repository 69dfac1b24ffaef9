/* SPDX-License-Identifier: Apache-2.0 */
/* breaker.c - what one adapter may hold of the engine: a bulkhead (at most
 * max_calls of its calls in flight on the engine's threads, counting calls
 * abandoned at their time limit until they return) and a circuit breaker
 * (after `failures` time-outs or unreachable answers in a row, calls fail at
 * once for `cooldown_us`; then one probe call is let through, and its answer
 * closes the breaker or opens it again).
 *
 * A refused call is not a failure of the adapter: it neither opens nor
 * closes anything.  The clock is the caller's (monotonic microseconds), so
 * that the state machine can be tested without waiting. */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "engine_int.h"

struct guard {
    char name[ACC_ENGINE_GUARD_NAME];
    enum acc_breaker_state state;
    unsigned in_flight; /* calls holding a slot (abandoned ones too) */
    unsigned fails;     /* time-outs or unreachable answers in a row */
    bool probing;       /* HALF_OPEN: the probe call is under way */
    int64_t open_until; /* OPEN: monotonic us when a probe may go */
    uint64_t refused[2], opened;
};

struct acc_breaker {
    pthread_mutex_t lock;
    struct acc_breaker_cfg cfg;
    struct guard *v;
    size_t n, cap;
};

acc_err acc_breaker_new(const struct acc_breaker_cfg *cfg, struct acc_breaker **out,
                        struct acc_error *err)
{
    struct acc_breaker *b = calloc(1, sizeof *b);
    if (!b)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&b->lock, NULL);
    b->cfg = *cfg;
    if (b->cfg.cooldown_us <= 0)
        b->cfg.cooldown_us = ACC_BREAKER_DEFAULT_COOLDOWN_US;
    *out = b;
    return ACC_OK;
}

void acc_breaker_free(struct acc_breaker *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b->v);
    free(b);
}

/* The guard of adapter `name`, made when first asked for; NULL without
 * memory.  The caller holds the lock. */
static struct guard *guard_locked(struct acc_breaker *b, const char *name, bool make)
{
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->v[i].name, name) == 0)
            return &b->v[i];
    }
    if (!make)
        return NULL;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        struct guard *v = realloc(b->v, cap * sizeof *v);
        if (!v)
            return NULL;
        b->v = v;
        b->cap = cap;
    }
    struct guard *g = &b->v[b->n++];
    memset(g, 0, sizeof *g);
    acc_strlcpy(g->name, name, sizeof g->name);
    return g;
}

static int64_t secs_up(int64_t us)
{
    return us <= 0 ? 1 : (us + 999999) / 1000000;
}

static acc_err refuse_open(struct guard *g, int64_t now_us, struct acc_error *err)
{
    g->refused[ACC_BREAKER_REFUSED_OPEN]++;
    if (g->state == ACC_BREAKER_HALF_OPEN) {
        acc_error_set(
            err, ACC_ERR_UNAVAILABLE,
            "adapter %s: not called: its circuit breaker is open after %u failed calls in "
            "a row (time-outs or unreachable), and a probe call is under way now; retry "
            "in a few seconds",
            g->name, g->fails);
        err->retry_after = 1;
        return ACC_ERR_UNAVAILABLE;
    }
    int64_t left = secs_up(g->open_until - now_us);
    char at[ACC_TIME_STRLEN];
    acc_time_format(acc_now() + left, at);
    acc_error_set(err, ACC_ERR_UNAVAILABLE,
                  "adapter %s: not called: its circuit breaker is open after %u failed calls in a "
                  "row (time-outs or unreachable); it is tried again at %s (in %" PRId64
                  " s); retry then",
                  g->name, g->fails, at, left);
    err->retry_after = left;
    return ACC_ERR_UNAVAILABLE;
}

acc_err acc_breaker_admit(struct acc_breaker *b, const char *name, bool slot, int64_t now_us,
                          bool *probe, struct acc_error *err)
{
    *probe = false;
    pthread_mutex_lock(&b->lock);
    struct guard *g = guard_locked(b, name, true);
    if (!g) {
        pthread_mutex_unlock(&b->lock);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    acc_err rc = ACC_OK;
    if (g->state == ACC_BREAKER_HALF_OPEN ||
        (g->state == ACC_BREAKER_OPEN && now_us < g->open_until)) {
        rc = refuse_open(g, now_us, err);
    } else if (slot && b->cfg.max_calls && g->in_flight >= b->cfg.max_calls) {
        g->refused[ACC_BREAKER_REFUSED_BUSY]++;
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                           "adapter %s: not called: %u calls to it are in flight, the most one "
                           "adapter may hold (adapter_max_calls); retry in a few seconds",
                           g->name, g->in_flight);
        err->retry_after = 1;
    } else {
        if (g->state == ACC_BREAKER_OPEN) { /* its cool-down is over: this call probes */
            g->state = ACC_BREAKER_HALF_OPEN;
            g->probing = true;
            *probe = true;
        }
        g->in_flight += slot;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

acc_err acc_breaker_check(struct acc_breaker *b, const char *name, int64_t now_us,
                          struct acc_error *err)
{
    pthread_mutex_lock(&b->lock);
    struct guard *g = guard_locked(b, name, false);
    acc_err rc = ACC_OK;
    if (g && (g->state == ACC_BREAKER_HALF_OPEN ||
              (g->state == ACC_BREAKER_OPEN && now_us < g->open_until)))
        rc = refuse_open(g, now_us, err);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void acc_breaker_release(struct acc_breaker *b, const char *name)
{
    pthread_mutex_lock(&b->lock);
    struct guard *g = guard_locked(b, name, false);
    if (g && g->in_flight)
        g->in_flight--;
    pthread_mutex_unlock(&b->lock);
}

bool acc_breaker_failure(acc_err rc)
{
    return rc == ACC_ERR_TIMEOUT || rc == ACC_ERR_UNAVAILABLE;
}

void acc_breaker_outcome(struct acc_breaker *b, const char *name, acc_err rc, bool probe,
                         int64_t now_us)
{
    pthread_mutex_lock(&b->lock);
    struct guard *g = guard_locked(b, name, false);
    bool failed = acc_breaker_failure(rc);
    if (!g || b->cfg.failures == 0) {
        /* no breaker: nothing to count */
    } else if (g->state == ACC_BREAKER_CLOSED) {
        g->fails = failed ? g->fails + 1 : 0;
        if (g->fails >= b->cfg.failures) {
            g->state = ACC_BREAKER_OPEN;
            g->open_until = now_us + b->cfg.cooldown_us;
            g->opened++;
        }
    } else if (probe && g->state == ACC_BREAKER_HALF_OPEN) {
        g->probing = false;
        if (failed) {
            g->fails++;
            g->state = ACC_BREAKER_OPEN;
            g->open_until = now_us + b->cfg.cooldown_us;
            g->opened++;
        } else {
            g->fails = 0;
            g->state = ACC_BREAKER_CLOSED;
        }
    }
    /* OPEN, or a call other than the probe: the probe decides */
    pthread_mutex_unlock(&b->lock);
}

bool acc_breaker_get(struct acc_breaker *b, const char *name, int64_t now_us,
                     struct acc_engine_guard_state *out)
{
    memset(out, 0, sizeof *out);
    acc_strlcpy(out->name, name, sizeof out->name);
    pthread_mutex_lock(&b->lock);
    struct guard *g = guard_locked(b, name, false);
    if (g) {
        out->state = g->state;
        out->in_flight = g->in_flight;
        out->failures = g->fails;
        out->refused_busy = g->refused[ACC_BREAKER_REFUSED_BUSY];
        out->refused_open = g->refused[ACC_BREAKER_REFUSED_OPEN];
        out->opened = g->opened;
        if (g->state == ACC_BREAKER_OPEN)
            out->retry_in_s = g->open_until > now_us ? secs_up(g->open_until - now_us) : 0;
    }
    pthread_mutex_unlock(&b->lock);
    return g != NULL;
}
