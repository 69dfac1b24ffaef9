/* SPDX-License-Identifier: Apache-2.0 */
/* tc_audit.c - the reconciliation: what the kernel has against what the
 * provisions say must be active now, mended both ways, and the thread that
 * runs it at every start and end and every audit_interval. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "tc_internal.h"

/* A provision as one reconciliation sees it (copied under the lock). */
struct snap {
    char key[ACC_KEY_MAX];
    unsigned id;
    size_t link;
    int64_t amount;
    bool on;     /* should be in the kernel now */
    bool was_in; /* had been in place before (activated) */
    uint32_t *src[2], *dst[2];
    size_t n_pairs[2];
    bool failed;     /* a device of it could not be read or changed */
    enum tc_fix fix; /* the worst fix over its devices */
    char fix_where[TC_NETNS_MAX + TC_NAME_MAX + 2];
    uint64_t dev_c[TC_MAX_DEVS][3]; /* its class's counters per device read */
    bool dev_seen[TC_MAX_DEVS];     /* its class was on that device */
    bool dev_read[TC_MAX_DEVS];     /* that device was read */
};

struct collect {
    struct snap *v;
    size_t n;
    acc_time now;
    bool nomem;
};

static uint32_t ip_host(const char *s)
{
    struct in_addr a = {0};
    inet_pton(AF_INET, s, &a);
    return ntohl(a.s_addr);
}

static void take(const char *key, void *value, void *ctx)
{
    struct collect *c = ctx;
    const struct tc_prov *p = value;
    struct snap *s = &c->v[c->n];
    memset(s, 0, sizeof *s);
    acc_strlcpy(s->key, key, sizeof s->key);
    s->id = p->id;
    s->link = p->link;
    s->amount = p->amount;
    s->on = p->start <= c->now && c->now < p->end;
    s->was_in = p->activated != 0;
    for (int d = 0; d < 2 && s->on; d++) {
        size_t n = p->n_addrs[d] * p->n_addrs[1 - d];
        s->src[d] = calloc(n ? n : 1, sizeof *s->src[d]);
        s->dst[d] = calloc(n ? n : 1, sizeof *s->dst[d]);
        if (!s->src[d] || !s->dst[d]) {
            c->nomem = true;
            continue;
        }
        for (size_t i = 0; i < p->n_addrs[d]; i++) {
            for (size_t k = 0; k < p->n_addrs[1 - d]; k++) {
                s->src[d][s->n_pairs[d]] = ip_host(p->addrs[d][i]);
                s->dst[d][s->n_pairs[d]++] = ip_host(p->addrs[1 - d][k]);
            }
        }
    }
    c->n++;
}

static void snaps_free(struct snap *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int d = 0; d < 2; d++) {
            free(v[i].src[d]);
            free(v[i].dst[d]);
        }
    }
    free(v);
}

/* Plans device di into batch (its namespace's), noting fixes and counters. */
static acc_err plan_dev(struct tc *t, size_t di, struct snap *v, size_t n, struct acc_buf *batch,
                        struct acc_error *err)
{
    const struct tc_dev *dev = &t->devs[di];
    struct tc_want *want = calloc(2 * n + 1, sizeof *want);
    size_t *who = calloc(2 * n + 1, sizeof *who);
    enum tc_fix *fix = calloc(2 * n + 1, sizeof *fix);
    size_t n_want = 0, removed = 0;
    struct tc_dev_state have = {0};
    acc_err rc = ACC_OK;
    if (!want || !who || !fix) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct tc_link *l = &t->links[v[i].link];
        for (int d = 0; d < 2 && v[i].on; d++) {
            for (size_t k = 0; k < l->n_devs[d]; k++) {
                if (l->devs[d][k] != di)
                    continue;
                int64_t ceil = t->ceil == TC_CEIL_RATE ? v[i].amount : dev->capacity;
                want[n_want] = (struct tc_want){v[i].id,     v[i].amount, ceil,
                                                v[i].src[d], v[i].dst[d], v[i].n_pairs[d]};
                who[n_want++] = i;
            }
        }
    }
    rc = tc_kernel_read(dev->netns, dev->dev, t->timeout_ms, &have, err);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            v[i].dev_read[di] = true;
        for (size_t c = 0; c < have.n_classes; c++) {
            for (size_t i = 0; i < n; i++) {
                if (v[i].id == have.classes[c].id) {
                    v[i].dev_c[di][0] = have.classes[c].bytes;
                    v[i].dev_c[di][1] = have.classes[c].packets;
                    v[i].dev_c[di][2] = have.classes[c].drops;
                    v[i].dev_seen[di] = true;
                }
            }
        }
        tc_plan(dev->dev, dev->capacity, t->quantum, want, n_want, &have, batch, fix, &removed);
        if (!acc_buf_ok(batch))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t w = 0; w < n_want; w++) {
        struct snap *s = &v[who[w]];
        s->failed |= rc != ACC_OK;
        if (!rc && fix[w] != TC_FIX_NONE && (s->fix == TC_FIX_NONE || fix[w] == TC_FIX_ADDED)) {
            s->fix = fix[w];
            snprintf(s->fix_where, sizeof s->fix_where, "%s/%s", dev->netns, dev->dev);
        }
    }
    if (removed)
        acc_log_info("%s: %zu stale classes removed from %s/%s", t->name, removed, dev->netns,
                     dev->dev);
out:
    tc_dev_state_release(&have);
    free(want);
    free(who);
    free(fix);
    return rc;
}

/* Adds what p's classes carried since the last reading; true when the
 * totals changed.  A class found at open was counted before (adopt); a
 * class whose counters went down was made anew and counts from zero. */
static bool count(struct tc *t, struct tc_prov *p, const struct snap *s)
{
    uint64_t *tot[3] = {&p->bytes, &p->packets, &p->drops};
    bool changed = false;
    for (size_t d = 0; d < t->n_devs; d++) {
        if (!s->dev_read[d])
            continue;
        if (!s->dev_seen[d]) {
            p->have_last[d] = false;
            continue;
        }
        for (int k = 0; k < 3; k++) {
            uint64_t cur = s->dev_c[d][k], add = 0;
            if (p->have_last[d])
                add = cur >= p->last[d][k] ? cur - p->last[d][k] : cur;
            else if (!p->adopt)
                add = cur;
            *tot[k] += add;
            changed |= add != 0;
            p->last[d][k] = cur;
        }
        p->have_last[d] = true;
    }
    p->adopt = false;
    return changed;
}

/* Records what this reconciliation found; the caller holds t->lock. */
static void record_locked(struct tc *t, struct snap *v, size_t n, acc_time now)
{
    char when[ACC_TIME_STRLEN];
    acc_time_format(now, when);
    for (size_t i = 0; i < n; i++) {
        struct tc_prov *p = acc_map_get(&t->provs, v[i].key);
        if (!p || p->id != v[i].id)
            continue; /* cancelled or replaced meanwhile */
        bool was_active = p->active;
        bool dirty = count(t, p, &v[i]);
        p->active = v[i].on && !v[i].failed;
        if (p->active && !p->activated) {
            p->activated = now;
            dirty = true;
        }
        if (v[i].on && v[i].was_in && v[i].fix != TC_FIX_NONE && !p->violated_at) {
            p->violated_at = now;
            snprintf(p->why, sizeof p->why, "class 1:%u %s on %s at %s; %s", p->id,
                     v[i].fix == TC_FIX_ADDED ? "missing" : "altered", v[i].fix_where, when,
                     v[i].failed ? "not mended" : "reinstalled");
            dirty = true;
        }
        /* the times alone may make it violated (late, never in place) */
        struct tc_term term = {true, p->start, p->end, p->activated, p->violated_at};
        acc_time at = 0;
        char why[sizeof p->why];
        tc_guarantee(&term, now, t->grace, &at, why, sizeof why);
        if (at) {
            p->violated_at = at;
            acc_strlcpy(p->why, why, sizeof p->why);
            dirty = true;
        }
        if (was_active != p->active)
            dirty = true;
        if (dirty && tc_store_put(t->store, p, t->links[p->link].name, NULL))
            acc_log_warn("%s: state of %s not written", t->name, p->key);
    }
}

acc_err tc_reconcile(struct tc *t, struct acc_error *err)
{
    pthread_mutex_lock(&t->audit_lock);
    acc_time now = acc_now();
    struct collect c = {.now = now};
    acc_err rc = ACC_OK, first = ACC_OK;
    struct acc_error e1 = {0};
    pthread_mutex_lock(&t->lock);
    c.v = calloc(t->provs.n + 1, sizeof *c.v);
    if (c.v)
        acc_map_each(&t->provs, take, &c);
    pthread_mutex_unlock(&t->lock);
    if (!c.v || c.nomem) {
        snaps_free(c.v, c.n);
        pthread_mutex_unlock(&t->audit_lock);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* One batch per namespace. */
    bool *done = calloc(t->n_devs + 1, sizeof *done);
    for (size_t i = 0; done && i < t->n_devs; i++) {
        if (done[i])
            continue;
        struct acc_buf batch;
        acc_buf_init(&batch);
        for (size_t j = i; j < t->n_devs; j++) {
            if (done[j] || strcmp(t->devs[j].netns, t->devs[i].netns) != 0)
                continue;
            done[j] = true;
            rc = plan_dev(t, j, c.v, c.n, &batch, &e1);
            if (rc) {
                if (!first) {
                    first = rc;
                    acc_error_set(err, rc, "%s", e1.msg);
                }
            }
        }
        if (batch.len &&
            (rc = tc_kernel_apply(t->devs[i].netns, acc_buf_str(&batch), t->timeout_ms, &e1))) {
            if (!first) {
                first = rc;
                acc_error_set(err, rc, "%s", e1.msg);
            }
            /* every provision with a device in this namespace failed */
            for (size_t k = 0; k < c.n; k++) {
                const struct tc_link *l = &t->links[c.v[k].link];
                for (int d = 0; d < 2; d++) {
                    for (size_t m = 0; m < l->n_devs[d]; m++)
                        c.v[k].failed |=
                            strcmp(t->devs[l->devs[d][m]].netns, t->devs[i].netns) == 0;
                }
            }
        }
        acc_buf_release(&batch);
    }
    if (!done && !first)
        first = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    free(done);
    pthread_mutex_lock(&t->lock);
    record_locked(t, c.v, c.n, now);
    t->last_audit = now;
    if (first)
        acc_strlcpy(t->last_error, err ? err->msg : acc_err_text(first), sizeof t->last_error);
    else
        t->last_error[0] = '\0';
    pthread_mutex_unlock(&t->lock);
    snaps_free(c.v, c.n);
    pthread_mutex_unlock(&t->audit_lock);
    return first;
}

/* ------------------------------------------------------------------ thread */

struct next_ctx {
    acc_time now, next;
};

static void next_change(const char *key, void *value, void *ctx)
{
    (void)key;
    const struct tc_prov *p = value;
    struct next_ctx *n = ctx;
    if (p->start > n->now && p->start < n->next)
        n->next = p->start;
    if (p->end > n->now && p->end < n->next)
        n->next = p->end;
}

static void *audit_main(void *arg)
{
    struct tc *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        struct timespec now_ts, ts;
        clock_gettime(CLOCK_REALTIME, &now_ts);
        int64_t now_ms = (int64_t)now_ts.tv_sec * 1000 + now_ts.tv_nsec / 1000000;
        int64_t wake_ms = now_ms + t->audit_ms;
        struct next_ctx n = {now_ts.tv_sec, ACC_TIME_MAX};
        acc_map_each(&t->provs, next_change, &n);
        if (n.next != ACC_TIME_MAX && n.next * 1000 < wake_ms)
            wake_ms = n.next * 1000;
        ts.tv_sec = wake_ms / 1000;
        ts.tv_nsec = (wake_ms % 1000) * 1000000;
        int w = 0;
        while (!t->stopping && !t->kick && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&t->wake, &t->lock, &ts);
        if (t->stopping)
            break;
        t->kick = false;
        pthread_mutex_unlock(&t->lock);
        struct acc_error e = {0};
        if (tc_reconcile(t, &e))
            acc_log_warn("%s: reconciliation: %s", t->name, e.msg);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

acc_err tc_audit_start(struct tc *t, struct acc_error *err)
{
    struct acc_error e = {0};
    /* At once: what ended while accordd was down goes, what started comes. */
    if (tc_reconcile(t, &e))
        acc_log_warn("%s: reconciliation at open: %s", t->name, e.msg);
    if (pthread_create(&t->thread, NULL, audit_main, t) != 0)
        return acc_error_set(err, ACC_ERR_INTERNAL, "%s: cannot start the audit thread", t->name);
    t->thread_started = true;
    return ACC_OK;
}

void tc_audit_kick(struct tc *t)
{
    pthread_mutex_lock(&t->lock);
    t->kick = true;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
}

void tc_audit_stop(struct tc *t)
{
    if (!t->thread_started)
        return;
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->thread_started = false;
}
