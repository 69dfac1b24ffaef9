/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_net.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

#define MAX_RECORDS 8
#define MAX_HELD    32

struct held {
    char key[ACC_KEY_MAX];
    acc_time start, end;
    int64_t amount;
    unsigned provisions;
    char flow[512]; /* "" until provisioned */
};

struct fake_net {
    char name[64];
    unsigned fail_next;
    unsigned provisions;
    struct held held[MAX_HELD];
    size_t n_held;
    struct acc_provision_status status;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_net records[MAX_RECORDS];
static size_t n_records;

struct inst {
    struct fake_net *f;
};

static struct fake_net *get_locked(const char *name)
{
    for (size_t i = 0; i < n_records; i++) {
        if (strcmp(records[i].name, name) == 0)
            return &records[i];
    }
    if (n_records == MAX_RECORDS)
        return NULL;
    struct fake_net *f = &records[n_records++];
    memset(f, 0, sizeof *f);
    acc_strlcpy(f->name, name, sizeof f->name);
    return f;
}

struct fake_net *fake_net_get(const char *name)
{
    pthread_mutex_lock(&lock);
    struct fake_net *f = get_locked(name);
    pthread_mutex_unlock(&lock);
    return f;
}

void fake_net_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(records, 0, sizeof records);
    n_records = 0;
    pthread_mutex_unlock(&lock);
}

static struct held *find(struct fake_net *f, const char *key)
{
    for (size_t i = 0; i < f->n_held; i++) {
        if (strcmp(f->held[i].key, key) == 0)
            return &f->held[i];
    }
    return NULL;
}

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct inst *in = state;
    in->f = fake_net_get(env->name);
    return in->f ? ACC_OK : acc_error_set(err, ACC_ERR_ADAPTER, "fake-net: too many instances");
}

static void close_(void *state)
{
    (void)state;
}

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    (void)state;
    (void)res;
    (void)duration;
    (void)err;
    return acc_frames_push(out, from, until);
}

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct fake_net *f = ((struct inst *)state)->f;
    pthread_mutex_lock(&lock);
    struct held *h = find(f, key);
    if (!h && f->n_held < MAX_HELD)
        h = &f->held[f->n_held++];
    if (!h) {
        pthread_mutex_unlock(&lock);
        return acc_error_set(err, ACC_ERR_ADAPTER, "fake-net: full");
    }
    memset(h, 0, sizeof *h);
    acc_strlcpy(h->key, key, sizeof h->key);
    h->start = start;
    h->end = start + duration;
    h->amount = res->amount;
    snprintf(out->local_id, sizeof out->local_id, "net-%s", key);
    out->start = h->start;
    out->end = h->end;
    out->amount = h->amount;
    pthread_mutex_unlock(&lock);
    return ACC_OK;
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    (void)local_id;
    struct fake_net *f = ((struct inst *)state)->f;
    pthread_mutex_lock(&lock);
    struct held *h = find(f, key);
    if (h) {
        snprintf(out->local_id, sizeof out->local_id, "net-%s", key);
        out->start = h->start;
        out->end = h->end;
        out->amount = h->amount;
    }
    pthread_mutex_unlock(&lock);
    return h ? ACC_OK : acc_error_set(err, ACC_ERR_NOT_FOUND, "fake-net: no %s", key);
}

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    (void)local_id;
    (void)err;
    struct fake_net *f = ((struct inst *)state)->f;
    pthread_mutex_lock(&lock);
    struct held *h = find(f, key);
    if (h) {
        size_t i = (size_t)(h - f->held);
        memmove(h, h + 1, (f->n_held - i - 1) * sizeof *h);
        f->n_held--;
    }
    pthread_mutex_unlock(&lock);
    return ACC_OK;
}

static acc_err health(void *state, struct acc_health *out)
{
    (void)state;
    out->up = true;
    return ACC_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "SITE=a,b" with the addresses sorted, appended to buf. */
static void side(char *buf, size_t len, const char *site, const char *const *addrs, size_t n)
{
    const char **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return;
    memcpy(v, addrs, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_str);
    size_t at = strlen(buf);
    at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s=", at ? " " : "", site);
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "", v[i]);
    free(v);
}

static acc_err provision(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err)
{
    (void)local_id;
    struct fake_net *f = ((struct inst *)state)->f;
    pthread_mutex_lock(&lock);
    f->provisions++;
    struct held *h = find(f, key);
    if (h)
        h->provisions++;
    acc_err rc = ACC_OK;
    if (f->fail_next) {
        f->fail_next--;
        rc = acc_error_set(err, ACC_ERR_ADAPTER, "fake-net: provision failed (scripted)");
    } else if (!h) {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "fake-net: no reservation %s", key);
    } else {
        h->flow[0] = '\0';
        side(h->flow, sizeof h->flow, flow->site_a, flow->addrs_a, flow->n_a);
        side(h->flow, sizeof h->flow, flow->site_b, flow->addrs_b, flow->n_b);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static acc_err provision_status(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err)
{
    struct fake_net *f = ((struct inst *)state)->f;
    pthread_mutex_lock(&lock);
    struct held *h = find(f, key);
    if (h) {
        *out = f->status;
        out->provisioned = h->flow[0] != '\0';
        out->start = h->start;
        out->end = h->end;
    }
    pthread_mutex_unlock(&lock);
    return h ? ACC_OK : acc_error_set(err, ACC_ERR_NOT_FOUND, "fake-net: no reservation %s", key);
}

const struct acc_adapter_ops fake_net_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "fake-net",
    .caps = ACC_CAP_BANDWIDTH | ACC_CAP_PROVISION | ACC_CAP_THREADSAFE,
    .state_size = sizeof(struct inst),
    .open = open_,
    .close = close_,
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
    .provision = provision,
    .provision_status = provision_status,
};

void fake_net_fail_next(struct fake_net *f, unsigned n)
{
    pthread_mutex_lock(&lock);
    f->fail_next = n;
    pthread_mutex_unlock(&lock);
}

unsigned fake_net_provisions(struct fake_net *f, const char *key)
{
    pthread_mutex_lock(&lock);
    unsigned n = f->provisions;
    if (key) {
        struct held *h = find(f, key);
        n = h ? h->provisions : 0;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

size_t fake_net_held(struct fake_net *f)
{
    pthread_mutex_lock(&lock);
    size_t n = f->n_held;
    pthread_mutex_unlock(&lock);
    return n;
}

const char *fake_net_key(struct fake_net *f, size_t i, char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    const char *r = NULL;
    if (i < f->n_held) {
        acc_strlcpy(buf, f->held[i].key, len);
        r = buf;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

bool fake_net_flow(struct fake_net *f, const char *key, char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    struct held *h = find(f, key);
    bool ok = h && h->flow[0];
    if (ok)
        acc_strlcpy(buf, h->flow, len);
    pthread_mutex_unlock(&lock);
    return ok;
}

void fake_net_set_status(struct fake_net *f, const struct acc_provision_status *st)
{
    pthread_mutex_lock(&lock);
    f->status = *st;
    pthread_mutex_unlock(&lock);
}
