/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_adapter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strutil.h"

#define MAX_FRAMES 64
#define MAX_STEPS  32
#define MAX_HELD   64

struct held {
    char key[ACC_KEY_MAX];
    acc_time start, end;
    int64_t amount;
};

struct fake {
    pthread_mutex_t lock;
    enum acc_resource_kind kind;
    char name[64];
    acc_time frames[MAX_FRAMES][2];
    size_t n_frames;
    struct {
        enum fake_action a;
        int64_t delta;
    } steps[MAX_STEPS];
    size_t n_steps, next_step;
    acc_err preview_rc;
    unsigned calls[FAKE_OPS];
    struct held held[MAX_HELD];
    size_t n_held;
};

static struct fake *opening; /* hands the state from fake_open to open_ */

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    (void)err;
    struct fake *f = state;
    pthread_mutex_init(&f->lock, NULL);
    acc_strlcpy(f->name, env->name, sizeof f->name);
    opening = f;
    return ACC_OK;
}

static void close_(void *state)
{
    struct fake *f = state;
    pthread_mutex_destroy(&f->lock);
}

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    (void)res;
    (void)duration;
    struct fake *f = state;
    pthread_mutex_lock(&f->lock);
    f->calls[FAKE_PREVIEW]++;
    acc_err rc = f->preview_rc;
    for (size_t i = 0; !rc && i < f->n_frames; i++) {
        if (f->frames[i][1] > from && f->frames[i][0] < until)
            rc = acc_frames_push(out, f->frames[i][0], f->frames[i][1]);
    }
    pthread_mutex_unlock(&f->lock);
    if (rc)
        acc_error_set(err, rc, "%s: preview failed (scripted)", f->name);
    return rc;
}

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct fake *f = state;
    pthread_mutex_lock(&f->lock);
    f->calls[FAKE_RESERVE]++;
    enum fake_action a = FAKE_OK;
    int64_t delta = 0;
    if (f->next_step < f->n_steps) {
        a = f->steps[f->next_step].a;
        delta = f->steps[f->next_step].delta;
        f->next_step++;
    }
    pthread_mutex_unlock(&f->lock);

    switch (a) {
    case FAKE_BUSY:
        return acc_error_set(err, ACC_ERR_BUSY, "%s: busy (scripted)", f->name);
    case FAKE_FAIL:
        return acc_error_set(err, ACC_ERR_ADAPTER, "%s: failed (scripted)", f->name);
    case FAKE_UNAVAILABLE:
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: down (scripted)", f->name);
    case FAKE_HANG: {
        struct timespec ts = {delta / 1000, (delta % 1000) * 1000000};
        nanosleep(&ts, NULL);
        break;
    }
    default:
        break;
    }
    pthread_mutex_lock(&f->lock);
    if (f->n_held == MAX_HELD) {
        pthread_mutex_unlock(&f->lock);
        return acc_error_set(err, ACC_ERR_ADAPTER, "%s: full", f->name);
    }
    struct held *h = &f->held[f->n_held++];
    acc_strlcpy(h->key, key, sizeof h->key);
    h->start = start + (a == FAKE_LATER ? delta : 0);
    h->end = h->start + duration + (a == FAKE_LONGER ? delta : 0);
    h->amount = res->amount - (a == FAKE_SHRINK ? delta : 0);
    snprintf(out->local_id, sizeof out->local_id, "%s.%u", f->name, f->calls[FAKE_RESERVE]);
    out->start = h->start;
    out->end = h->end;
    /* A shrink is silent at reservation time: only verify shows it. */
    out->amount = res->amount;
    pthread_mutex_unlock(&f->lock);
    return ACC_OK;
}

static struct held *find(struct fake *f, const char *key)
{
    for (size_t i = 0; i < f->n_held; i++) {
        if (strcmp(f->held[i].key, key) == 0)
            return &f->held[i];
    }
    return NULL;
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    (void)local_id;
    struct fake *f = state;
    pthread_mutex_lock(&f->lock);
    f->calls[FAKE_QUERY]++;
    struct held *h = find(f, key);
    acc_err rc = ACC_OK;
    if (h) {
        snprintf(out->local_id, sizeof out->local_id, "%s", key);
        out->start = h->start;
        out->end = h->end;
        out->amount = h->amount;
    } else {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no %s", f->name, key);
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    (void)local_id;
    (void)err;
    struct fake *f = state;
    pthread_mutex_lock(&f->lock);
    f->calls[FAKE_CANCEL]++;
    struct held *h = find(f, key);
    if (h) {
        *h = f->held[f->n_held - 1];
        f->n_held--;
    }
    pthread_mutex_unlock(&f->lock);
    return ACC_OK;
}

static acc_err health(void *state, struct acc_health *out)
{
    (void)state;
    out->up = true;
    return ACC_OK;
}

static const struct acc_adapter_ops fake_nodes_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "fake",
    .caps = ACC_CAP_NODES | ACC_CAP_THREADSAFE,
    .state_size = sizeof(struct fake),
    .open = open_,
    .close = close_,
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
};

static const struct acc_adapter_ops fake_bw_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "fake",
    .caps = ACC_CAP_BANDWIDTH | ACC_CAP_THREADSAFE,
    .state_size = sizeof(struct fake),
    .open = open_,
    .close = close_,
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
};

struct acc_adapter *fake_open(const char *name, enum acc_resource_kind kind, struct fake **out)
{
    struct acc_adapter_env env = {.name = name, .section = name};
    struct acc_adapter *ad = NULL;
    if (acc_adapter_open(kind == ACC_RES_NODES ? &fake_nodes_ops : &fake_bw_ops, &env, &ad, NULL))
        return NULL;
    opening->kind = kind;
    *out = opening;
    return ad;
}

void fake_frames(struct fake *f, const acc_time *pairs, size_t n)
{
    pthread_mutex_lock(&f->lock);
    f->n_frames = n < MAX_FRAMES ? n : MAX_FRAMES;
    for (size_t i = 0; i < f->n_frames; i++) {
        f->frames[i][0] = pairs[2 * i];
        f->frames[i][1] = pairs[2 * i + 1];
    }
    pthread_mutex_unlock(&f->lock);
}

void fake_script(struct fake *f, enum fake_action a, int64_t delta)
{
    pthread_mutex_lock(&f->lock);
    if (f->n_steps < MAX_STEPS) {
        f->steps[f->n_steps].a = a;
        f->steps[f->n_steps].delta = delta;
        f->n_steps++;
    }
    pthread_mutex_unlock(&f->lock);
}

void fake_preview_error(struct fake *f, acc_err code)
{
    pthread_mutex_lock(&f->lock);
    f->preview_rc = code;
    pthread_mutex_unlock(&f->lock);
}

unsigned fake_calls(struct fake *f, enum fake_op op)
{
    pthread_mutex_lock(&f->lock);
    unsigned n = f->calls[op];
    pthread_mutex_unlock(&f->lock);
    return n;
}

size_t fake_live(struct fake *f)
{
    pthread_mutex_lock(&f->lock);
    size_t n = f->n_held;
    pthread_mutex_unlock(&f->lock);
    return n;
}

bool fake_has(struct fake *f, const char *key, acc_time *start)
{
    pthread_mutex_lock(&f->lock);
    struct held *h = find(f, key);
    if (h && start)
        *start = h->start;
    pthread_mutex_unlock(&f->lock);
    return h != NULL;
}
