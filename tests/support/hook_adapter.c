/* SPDX-License-Identifier: Apache-2.0 */
#include "hook_adapter.h"

#include <pthread.h>
#include <stdbool.h>

struct hook {
    struct acc_adapter *inner;
    hook_fn before;
    void *ctx;
    pthread_mutex_t lock;
    bool fired;
};

static struct hook *opening;

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    (void)env;
    (void)err;
    struct hook *h = state;
    *h = *opening;
    pthread_mutex_init(&h->lock, NULL);
    return ACC_OK;
}

static void close_(void *state)
{
    struct hook *h = state;
    pthread_mutex_destroy(&h->lock);
}

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    struct hook *h = state;
    return acc_adapter_preview(h->inner, res, from, until, duration, out, err);
}

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct hook *h = state;
    pthread_mutex_lock(&h->lock);
    bool fire = !h->fired;
    h->fired = true;
    pthread_mutex_unlock(&h->lock);
    if (fire && h->before)
        h->before(h->ctx, res, start, duration);
    return acc_adapter_reserve(h->inner, key, res, start, duration, out, err);
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    struct hook *h = state;
    return acc_adapter_query(h->inner, key, local_id, out, err);
}

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    struct hook *h = state;
    return acc_adapter_cancel(h->inner, key, local_id, err);
}

static acc_err health(void *state, struct acc_health *out)
{
    struct hook *h = state;
    return acc_adapter_health(h->inner, out);
}

static const struct acc_adapter_ops hook_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "hook",
    .caps = ACC_CAP_NODES | ACC_CAP_THREADSAFE,
    .state_size = sizeof(struct hook),
    .open = open_,
    .close = close_,
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
};

struct acc_adapter *hook_wrap(struct acc_adapter *inner, hook_fn before_reserve, void *ctx)
{
    struct hook proto = {.inner = inner, .before = before_reserve, .ctx = ctx};
    opening = &proto;
    struct acc_adapter_env env = {.name = acc_adapter_name(inner), .section = "hook"};
    struct acc_adapter *ad = NULL;
    if (acc_adapter_open(&hook_ops, &env, &ad, NULL))
        return NULL;
    return ad;
}
