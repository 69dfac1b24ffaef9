/* SPDX-License-Identifier: Apache-2.0 */
#include "adapter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"

extern const struct acc_adapter_ops acc_sim_batch_ops;
extern const struct acc_adapter_ops acc_sim_network_ops;
extern const struct acc_adapter_ops acc_slurm_ops;
extern const struct acc_adapter_ops acc_sge_ops;
extern const struct acc_adapter_ops acc_tc_ops;
extern const struct acc_adapter_ops acc_remote_ops;

const struct acc_adapter_ops *const acc_adapter_kinds[] = {
    &acc_sim_batch_ops, &acc_sim_network_ops, &acc_slurm_ops, &acc_sge_ops,
    &acc_tc_ops,        &acc_remote_ops,      NULL,
};

const struct acc_adapter_ops *acc_adapter_kind_find(const char *kind)
{
    for (size_t i = 0; acc_adapter_kinds[i]; i++) {
        if (strcmp(acc_adapter_kinds[i]->kind, kind) == 0)
            return acc_adapter_kinds[i];
    }
    return NULL;
}

struct acc_adapter {
    const struct acc_adapter_ops *ops;
    char *name;
    unsigned caps;        /* ops->caps narrowed by instance_caps (version 4) */
    bool serial;          /* not thread-safe: one call at a time */
    pthread_mutex_t lock; /* held around calls when serial */
    atomic_uint_least64_t calls, failures;
    atomic_int_least64_t busy_us;
    atomic_bool down;                  /* its last counted call failed */
    atomic_int_least64_t last_failure; /* when (acc_now); 0: never */
    void *state;
};

/* ------------------------------------------------------------------ frames */

static int frame_cmp(const void *a, const void *b)
{
    const struct acc_frame *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Sorts, clips to [from, until), merges overlapping or touching frames and
 * drops those shorter than duration, so the engine can trust any adapter. */
static void frames_normalise(struct acc_frames *f, acc_time from, acc_time until, int64_t duration)
{
    bool sorted = true;
    for (size_t i = 1; i < f->n && sorted; i++)
        sorted = f->v[i - 1].start <= f->v[i].start;
    if (!sorted)
        qsort(f->v, f->n, sizeof *f->v, frame_cmp);
    size_t out = 0;
    for (size_t i = 0; i < f->n; i++) {
        acc_time s = f->v[i].start < from ? from : f->v[i].start;
        acc_time e = f->v[i].end > until ? until : f->v[i].end;
        if (e <= s)
            continue;
        if (out > 0 && s <= f->v[out - 1].end) {
            if (e > f->v[out - 1].end)
                f->v[out - 1].end = e;
            continue;
        }
        f->v[out].start = s;
        f->v[out].end = e;
        out++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < out; i++) {
        if (f->v[i].end - f->v[i].start >= duration)
            f->v[kept++] = f->v[i];
    }
    f->n = kept;
}

/* --------------------------------------------------------------- instances */

acc_err acc_adapter_check(const struct acc_adapter_ops *ops, const struct acc_adapter_env *env,
                          const char **key, struct acc_error *err)
{
    *key = NULL;
    if (!ops || ops->version < 6 || !ops->check)
        return ACC_OK;
    acc_err rc = ops->check(env, key, err);
    /* A setting the kind took but does not list: refused, so that the
     * list (and the test walking it) stays whole. */
    for (size_t i = 0; !rc && ops->settings && i < env->n_settings; i++) {
        const char *k = env->settings[i].key;
        bool listed = false;
        for (const struct acc_adapter_setting *s = ops->settings; s->name && !listed; s++) {
            size_t n = strlen(s->name);
            listed =
                n && s->name[n - 1] == '.' ? strncmp(k, s->name, n) == 0 : strcmp(k, s->name) == 0;
        }
        if (!listed) {
            *key = k;
            rc = acc_error_set(err, ACC_ERR_CONFIG, "unknown setting '%s'", k);
        }
    }
    if (rc)
        acc_error_prefix(err, "%s adapter %s", env->section, ops->kind);
    return rc;
}

acc_err acc_adapter_open(const struct acc_adapter_ops *ops, const struct acc_adapter_env *env,
                         struct acc_adapter **out, struct acc_error *err)
{
    if (!ops || ops->version < 1 || !ops->open || !ops->preview || !ops->reserve || !ops->query ||
        !ops->cancel || !ops->health)
        return acc_error_set(err, ACC_ERR_INTERNAL, "%s: adapter kind is incomplete", env->section);
    if (ops->version > ACC_ADAPTER_OPS_VERSION)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: adapter '%s' needs interface version %u",
                             env->section, ops->kind, ops->version);
    struct acc_adapter *ad = calloc(1, sizeof *ad);
    if (!ad)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    ad->ops = ops;
    ad->name = acc_strdup(env->name);
    ad->state = calloc(1, ops->state_size ? ops->state_size : 1);
    if (!ad->name || !ad->state) {
        free(ad->name);
        free(ad->state);
        free(ad);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    ad->caps = ops->caps;
    ad->serial = !(ops->caps & ACC_CAP_THREADSAFE);
    pthread_mutex_init(&ad->lock, NULL);
    acc_err rc = ops->open(ad->state, env, err);
    if (!rc && ops->version >= 4 && ops->instance_caps) {
        ad->caps &= ops->instance_caps(ad->state);
        ad->serial = !(ad->caps & ACC_CAP_THREADSAFE);
    }
    if (rc) {
        acc_error_prefix(err, "%s (adapter %s)", env->section, ops->kind);
        if (ops->close)
            ops->close(ad->state);
        pthread_mutex_destroy(&ad->lock);
        free(ad->state);
        free(ad->name);
        free(ad);
        return rc;
    }
    *out = ad;
    return ACC_OK;
}

void acc_adapter_close(struct acc_adapter *ad)
{
    if (!ad)
        return;
    if (ad->ops->close)
        ad->ops->close(ad->state);
    pthread_mutex_destroy(&ad->lock);
    free(ad->state);
    free(ad->name);
    free(ad);
}

const char *acc_adapter_name(const struct acc_adapter *ad)
{
    return ad->name;
}

const char *acc_adapter_kind(const struct acc_adapter *ad)
{
    return ad->ops->kind;
}

bool acc_adapter_has(const struct acc_adapter *ad, unsigned cap)
{
    if (cap == ACC_CAP_SUBMIT && (!ad->ops->submit || !ad->ops->job_status || !ad->ops->job_cancel))
        return false;
    if ((cap & ACC_CAP_PROVISION) &&
        (ad->ops->version < 2 || !ad->ops->provision || !ad->ops->provision_status))
        return false;
    if ((cap & ACC_CAP_REPLACE) &&
        (ad->ops->version < 3 || !ad->ops->preview_replacing || !ad->ops->reserve_replacing))
        return false;
    if ((cap & ACC_CAP_PROCESS) && (ad->ops->version < 7 || !ad->ops->process_command))
        return false;
    return (ad->caps & cap) == cap;
}

bool acc_adapter_prompt(struct acc_adapter *ad)
{
    return ad->ops->version >= 5 && ad->ops->may_block && !ad->ops->may_block(ad->state);
}

static int64_t call_begin(struct acc_adapter *ad)
{
    if (ad->serial)
        pthread_mutex_lock(&ad->lock);
    return acc_mono_us();
}

static acc_err call_end(struct acc_adapter *ad, int64_t t0, acc_err rc, struct acc_error *err)
{
    int64_t us = acc_mono_us() - t0;
    if (ad->serial)
        pthread_mutex_unlock(&ad->lock);
    atomic_fetch_add(&ad->calls, 1);
    atomic_fetch_add(&ad->busy_us, us);
    /* Busy and NotFound are answers of a working resource manager, and so
     * is a site's refusal of one user (Forbidden: no account for them). */
    bool failed = rc && rc != ACC_ERR_BUSY && rc != ACC_ERR_NOT_FOUND && rc != ACC_ERR_FORBIDDEN;
    if (failed) {
        atomic_fetch_add(&ad->failures, 1);
        atomic_store(&ad->last_failure, acc_now());
    }
    atomic_store(&ad->down, failed);
    if (rc && err && err->code != rc)
        acc_error_set(err, rc, "%s", acc_err_text(rc));
    return rc;
}

static bool resource_ok(const struct acc_adapter *ad, const struct acc_resource *res)
{
    unsigned need = res->kind == ACC_RES_NODES ? ACC_CAP_NODES : ACC_CAP_BANDWIDTH;
    return (ad->caps & need) && res->amount > 0;
}

acc_err acc_adapter_preview(struct acc_adapter *ad, const struct acc_resource *res, acc_time from,
                            acc_time until, int64_t duration, struct acc_frames *out,
                            struct acc_error *err)
{
    return acc_adapter_preview_replacing(ad, NULL, res, from, until, duration, out, err);
}

/* Whether old_key can be counted as free at ad. */
static bool replacing(const struct acc_adapter *ad, const char *old_key)
{
    return old_key && old_key[0] && strlen(old_key) < ACC_KEY_MAX &&
           acc_adapter_has(ad, ACC_CAP_REPLACE);
}

acc_err acc_adapter_preview_replacing(struct acc_adapter *ad, const char *old_key,
                                      const struct acc_resource *res, acc_time from, acc_time until,
                                      int64_t duration, struct acc_frames *out,
                                      struct acc_error *err)
{
    if (!resource_ok(ad, res))
        return acc_error_set(err, ACC_ERR_INVALID, "adapter %s cannot provide %s", ad->name,
                             res->kind == ACC_RES_NODES ? "nodes" : "bandwidth");
    acc_frames_reset(out);
    if (until <= from || duration <= 0 || until - from < duration)
        return ACC_OK; /* nothing can fit: an empty preview, not an error */
    int64_t t0 = call_begin(ad);
    acc_err rc =
        replacing(ad, old_key)
            ? ad->ops->preview_replacing(ad->state, old_key, res, from, until, duration, out, err)
            : ad->ops->preview(ad->state, res, from, until, duration, out, err);
    rc = call_end(ad, t0, rc, err);
    if (rc == ACC_OK)
        frames_normalise(out, from, until, duration);
    return rc;
}

acc_err acc_adapter_reserve(struct acc_adapter *ad, const char *key, const struct acc_resource *res,
                            acc_time start, int64_t duration, struct acc_reservation *out,
                            struct acc_error *err)
{
    return acc_adapter_reserve_replacing(ad, key, NULL, res, start, duration, out, err);
}

acc_err acc_adapter_reserve_replacing(struct acc_adapter *ad, const char *key, const char *old_key,
                                      const struct acc_resource *res, acc_time start,
                                      int64_t duration, struct acc_reservation *out,
                                      struct acc_error *err)
{
    if (!resource_ok(ad, res) || duration <= 0 || !key || strlen(key) >= ACC_KEY_MAX ||
        (old_key && strcmp(old_key, key) == 0))
        return acc_error_set(err, ACC_ERR_INVALID, "bad reservation request for adapter %s",
                             ad->name);
    memset(out, 0, sizeof *out);
    int64_t t0 = call_begin(ad);
    acc_err rc =
        replacing(ad, old_key)
            ? ad->ops->reserve_replacing(ad->state, key, old_key, res, start, duration, out, err)
            : ad->ops->reserve(ad->state, key, res, start, duration, out, err);
    rc = call_end(ad, t0, rc, err);
    if (rc)
        acc_reservation_release(out);
    return rc;
}

acc_err acc_adapter_query(struct acc_adapter *ad, const char *key, const char *local_id,
                          struct acc_reservation *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->query(ad->state, key, local_id, out, err);
    rc = call_end(ad, t0, rc, err);
    if (rc)
        acc_reservation_release(out);
    return rc;
}

acc_err acc_adapter_cancel(struct acc_adapter *ad, const char *key, const char *local_id,
                           struct acc_error *err)
{
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->cancel(ad->state, key, local_id, err);
    return call_end(ad, t0, rc, err);
}

static acc_err cannot_submit(const struct acc_adapter *ad, struct acc_error *err)
{
    return acc_error_set(err, ACC_ERR_UNSUPPORTED, "adapter %s (%s) cannot submit jobs", ad->name,
                         ad->ops->kind);
}

acc_err acc_adapter_submit(struct acc_adapter *ad, const struct acc_job *job, char *job_id,
                           size_t job_id_len, struct acc_error *err)
{
    if (!acc_adapter_has(ad, ACC_CAP_SUBMIT))
        return cannot_submit(ad, err);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->submit(ad->state, job, job_id, job_id_len, err);
    return call_end(ad, t0, rc, err);
}

void acc_command_release(struct acc_command *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->argc; i++)
        free(c->argv[i]);
    for (size_t i = 0; i < c->n_env; i++)
        free(c->env[i]);
    free(c->argv);
    free(c->env);
    memset(c, 0, sizeof *c);
}

acc_err acc_adapter_process_command(struct acc_adapter *ad, const struct acc_job *job,
                                    struct acc_command *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!acc_adapter_has(ad, ACC_CAP_PROCESS))
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "adapter %s (%s) cannot start processes through a batch system",
                             ad->name, ad->ops->kind);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->process_command(ad->state, job, out, err);
    if (rc)
        acc_command_release(out);
    else if (!out->argv || !out->argc || !out->env) {
        acc_command_release(out);
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "adapter %s gave no command", ad->name);
    }
    return call_end(ad, t0, rc, err);
}

acc_err acc_adapter_job_status(struct acc_adapter *ad, const char *job_id,
                               struct acc_job_status *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    out->exit_status = -1;
    if (!acc_adapter_has(ad, ACC_CAP_SUBMIT))
        return cannot_submit(ad, err);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->job_status(ad->state, job_id, out, err);
    return call_end(ad, t0, rc, err);
}

acc_err acc_adapter_job_cancel(struct acc_adapter *ad, const char *job_id, struct acc_error *err)
{
    if (!acc_adapter_has(ad, ACC_CAP_SUBMIT))
        return cannot_submit(ad, err);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->job_cancel(ad->state, job_id, err);
    return call_end(ad, t0, rc, err);
}

acc_err acc_adapter_health(struct acc_adapter *ad, struct acc_health *out)
{
    memset(out, 0, sizeof *out);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->health(ad->state, out);
    if (rc)
        out->up = false;
    return call_end(ad, t0, rc, NULL);
}

acc_err acc_adapter_control(struct acc_adapter *ad, const char *op, const struct acc_kv *args,
                            size_t n_args, struct acc_buf *reply, struct acc_error *err)
{
    if (!ad->ops->control)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED, "adapter %s (%s) takes no controls",
                             ad->name, ad->ops->kind);
    /* Controls are not counted as calls: they are not the resource manager's work. */
    if (ad->serial)
        pthread_mutex_lock(&ad->lock);
    acc_err rc = ad->ops->control(ad->state, op, args, n_args, reply, err);
    if (ad->serial)
        pthread_mutex_unlock(&ad->lock);
    return rc;
}

void acc_adapter_interrupt(struct acc_adapter *ad)
{
    /* Deliberately without the serialising lock: a hung call holds it. */
    if (ad->ops->interrupt)
        ad->ops->interrupt(ad->state);
}

static acc_err cannot_provision(const struct acc_adapter *ad, struct acc_error *err)
{
    return acc_error_set(err, ACC_ERR_UNSUPPORTED, "adapter %s (%s) does not provision", ad->name,
                         ad->ops->kind);
}

static bool addrs_ok(const char *const *v, size_t n)
{
    if (n == 0 || !v)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!v[i] || !v[i][0])
            return false;
    }
    return true;
}

acc_err acc_adapter_provision(struct acc_adapter *ad, const char *key, const char *local_id,
                              const struct acc_flow *flow, struct acc_error *err)
{
    if (!acc_adapter_has(ad, ACC_CAP_PROVISION))
        return cannot_provision(ad, err);
    if (!key || !key[0] || strlen(key) >= ACC_KEY_MAX || !flow || !flow->site_a || !flow->site_b ||
        !addrs_ok(flow->addrs_a, flow->n_a) || !addrs_ok(flow->addrs_b, flow->n_b))
        return acc_error_set(err, ACC_ERR_INVALID, "bad provision request for adapter %s",
                             ad->name);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->provision(ad->state, key, local_id, flow, err);
    return call_end(ad, t0, rc, err);
}

acc_err acc_adapter_provision_status(struct acc_adapter *ad, const char *key,
                                     struct acc_provision_status *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!acc_adapter_has(ad, ACC_CAP_PROVISION))
        return cannot_provision(ad, err);
    if (!key || !key[0] || strlen(key) >= ACC_KEY_MAX)
        return acc_error_set(err, ACC_ERR_INVALID, "bad provision status request for adapter %s",
                             ad->name);
    int64_t t0 = call_begin(ad);
    acc_err rc = ad->ops->provision_status(ad->state, key, out, err);
    return call_end(ad, t0, rc, err);
}

void acc_adapter_stats(const struct acc_adapter *ad, struct acc_adapter_stats *out)
{
    out->calls = atomic_load(&ad->calls);
    out->failures = atomic_load(&ad->failures);
    out->busy_us = atomic_load(&ad->busy_us);
    out->up = !atomic_load(&ad->down);
    out->last_failure = atomic_load(&ad->last_failure);
}
