/* SPDX-License-Identifier: Apache-2.0 */
/* config_live.c - the generations of the configuration that SIGHUP makes
 * (config.h: acc_config_live).  The start's configuration c holds a lock
 * and the current generation; each generation counts its takers, and the
 * last one to give it back frees it.  The start's own configuration is
 * never counted: it lives as long as the daemon. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "config.h"
#include "config_internal.h"

struct generation {
    atomic_uint takers; /* the current one also counts itself */
    struct acc_config cfg;
};

struct acc_config_live {
    pthread_mutex_t lock;
    struct generation *current;
};

static struct generation *generation_of(const struct acc_config *cfg)
{
    return (struct generation *)((char *)cfg - offsetof(struct generation, cfg));
}

static void give_back(struct generation *g)
{
    if (atomic_fetch_sub_explicit(&g->takers, 1, memory_order_acq_rel) == 1) {
        acc_config_release(&g->cfg);
        free(g);
    }
}

/* c->live is set once, by the first reload, while request threads read it:
 * published whole (its lock made) with release, read with acquire. */
static struct acc_config_live *live_of(const struct acc_config *c)
{
    return __atomic_load_n(&c->live, __ATOMIC_ACQUIRE);
}

const struct acc_config *acc_config_live(const struct acc_config *c)
{
    struct acc_config_live *live = live_of(c);
    if (!live)
        return c;
    pthread_mutex_lock(&live->lock);
    struct generation *g = live->current;
    if (g)
        atomic_fetch_add_explicit(&g->takers, 1, memory_order_relaxed);
    pthread_mutex_unlock(&live->lock);
    return g ? &g->cfg : c;
}

void acc_config_unlive(const struct acc_config *c, const struct acc_config *gen)
{
    if (gen && gen != c)
        give_back(generation_of(gen));
}

acc_err acc_config_reload(struct acc_config *c, struct acc_config *fresh, struct acc_error *err)
{
    struct generation *g = calloc(1, sizeof *g);
    if (!g)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!live_of(c)) { /* reloads come from one thread: no other sets it */
        struct acc_config_live *live = calloc(1, sizeof *live);
        if (!live) {
            free(g);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        pthread_mutex_init(&live->lock, NULL);
        __atomic_store_n(&c->live, live, __ATOMIC_RELEASE);
    }
    g->cfg = *fresh;
    g->cfg.live = NULL; /* a generation is not reloaded itself */
    *fresh = (struct acc_config){0};
    atomic_init(&g->takers, 1);
    pthread_mutex_lock(&c->live->lock);
    struct generation *old = c->live->current;
    c->live->current = g;
    pthread_mutex_unlock(&c->live->lock);
    if (old)
        give_back(old);
    return ACC_OK;
}

/* For acc_config_release: the current generation goes with c (takers
 * still holding one free it when they give it back). */
void cfg_live_release(struct acc_config *c)
{
    if (!c->live)
        return;
    if (c->live->current)
        give_back(c->live->current);
    pthread_mutex_destroy(&c->live->lock);
    free(c->live);
    c->live = NULL;
}
