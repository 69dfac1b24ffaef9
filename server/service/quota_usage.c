/* SPDX-License-Identifier: Apache-2.0 */
/* quota_usage.c - what a user holds of each site and link over time,
 * counted race-free against [quota] max_node_hours and max_mbit_hours
 * (part of the service; see internal.h).
 *
 * The quotas of one agreement and the count of open ones bound neither
 * how long a user may keep a site: 252 agreements of a week each, one
 * after the other, held one site for five years.  So each site's
 * node-hours and each link's Mbit-hours are summed over the owner's
 * reservations from now on: the store's (its open agreements' committed
 * ones and its held quotes', from the journal, which has each one's
 * amount and times) and, per owner, those admitted in this process but not
 * recorded yet (a negotiation books before its row shows the outcome).  An
 * id the process admitted is counted by its entry, not by the store's rows
 * (a change's entry stands for the agreement's new version; a new
 * agreement's rows appear with its commit, just before its entry goes).
 * Admission reads the store and adds the entry under the owner's lock, so
 * concurrent offers of one owner see each other.
 *
 * The owner is the user with [auth]; without, the client address (or,
 * unknown, everyone as one).
 *
 * Counting reads every open reservation of the owner: on every offer that
 * took a user with 3,000 open agreements from 900 agreements/s to 66.  So,
 * as the ledger admits below its limit without a read, each owner keeps an
 * upper bound of what it holds per site and link: exact when counted, then
 * raised by what each admission adds and never lowered (what ends or is
 * given back only makes it looser; time passing only makes the true use
 * smaller).  An admission that fits under the bound needs no read; one that
 * does not, or whose bound is older than RECOUNT_US, is counted exactly,
 * and the bound set anew.  The age bound is for several instances on one
 * database: what a user booked through another one is seen within it.
 *
 * Owners are kept for their bounds, at most OWNERS_MAX beyond those in use:
 * past it the idle ones go (their bounds are counted again when they come
 * back), so addresses seen once do not pile up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "internal.h"
#include "plan.h"

/* One admitted id's amounts, per site or link, in amount-seconds. */
struct held {
    enum acc_resource_kind kind;
    char name[128];
    int64_t amount;
};

struct entry {
    char id[ACC_ID_LEN + 1];
    struct held *v;
    size_t n;
    struct entry *next;
};

/* How long a counted bound is trusted. */
#define RECOUNT_US (10 * (int64_t)1000000)
/* Owners kept while idle (no caller, no admitted id). */
#define OWNERS_MAX 256

/* An upper bound of an owner's use of a site or link, in amount-seconds. */
struct bound {
    enum acc_resource_kind kind;
    char name[128];
    int64_t upper;
    int64_t counted; /* monotonic us of the exact count it started from */
};

struct usage_owner {
    char *key; /* "u:NAME", "a:ADDRESS" or "*" */
    pthread_mutex_t lock;
    struct entry *entries;
    struct bound *bounds; /* under lock */
    size_t n_bounds;
    unsigned refs; /* callers holding it (owner_of to owner_put), under svc_usage's lock */
    struct usage_owner *next;
};

void svc_usage_init(struct svc_usage *u)
{
    pthread_mutex_init(&u->lock, NULL);
    u->owners = NULL;
}

static void entry_free(struct entry *e)
{
    free(e->v);
    free(e);
}

static void owner_free(struct usage_owner *o)
{
    while (o->entries) {
        struct entry *e = o->entries;
        o->entries = e->next;
        entry_free(e);
    }
    pthread_mutex_destroy(&o->lock);
    free(o->bounds);
    free(o->key);
    free(o);
}

void svc_usage_release(struct svc_usage *u)
{
    while (u->owners) {
        struct usage_owner *o = u->owners;
        u->owners = o->next;
        owner_free(o);
    }
    pthread_mutex_destroy(&u->lock);
}

struct acc_store_owner svc_quota_owner(const struct svc_quota_who *w)
{
    return (struct acc_store_owner){w->user, w->user ? NULL : w->address};
}

static bool unlimited(const struct svc_quota_who *w)
{
    return w->q.node_hours == ACC_QUOTA_UNLIMITED && w->q.mbit_hours == ACC_QUOTA_UNLIMITED;
}

size_t svc_usage_kept(struct svc_usage *u)
{
    size_t n = 0;
    pthread_mutex_lock(&u->lock);
    for (const struct usage_owner *o = u->owners; o; o = o->next)
        n++;
    pthread_mutex_unlock(&u->lock);
    return n;
}

/* The owner's entry, made when new, held until owner_put; NULL when out of
 * memory. */
static struct usage_owner *owner_of(struct svc_usage *u, const struct svc_quota_who *w)
{
    char key[256];
    if (w->user)
        snprintf(key, sizeof key, "u:%s", w->user);
    else if (w->address)
        snprintf(key, sizeof key, "a:%s", w->address);
    else
        snprintf(key, sizeof key, "*");
    pthread_mutex_lock(&u->lock);
    struct usage_owner *o = u->owners;
    size_t idle = 0;
    for (; o && strcmp(o->key, key) != 0; o = o->next)
        idle += !o->refs && !o->entries;
    if (!o && idle >= OWNERS_MAX) { /* the idle ones go; nobody changes them */
        for (struct usage_owner **p = &u->owners; *p;) {
            struct usage_owner *q = *p;
            if (!q->refs && !q->entries) {
                *p = q->next;
                owner_free(q);
            } else {
                p = &q->next;
            }
        }
    }
    if (!o && (o = calloc(1, sizeof *o))) {
        if ((o->key = strdup(key))) {
            pthread_mutex_init(&o->lock, NULL);
            o->next = u->owners;
            u->owners = o;
        } else {
            free(o);
            o = NULL;
        }
    }
    if (o)
        o->refs++;
    pthread_mutex_unlock(&u->lock);
    return o;
}

/* Gives back owner_of's entry. */
static void owner_put(struct svc_usage *u, struct usage_owner *o)
{
    pthread_mutex_lock(&u->lock);
    o->refs--;
    pthread_mutex_unlock(&u->lock);
}

static struct entry **find(struct usage_owner *o, const char *id)
{
    struct entry **p = &o->entries;
    while (*p && strcmp((*p)->id, id) != 0)
        p = &(*p)->next;
    return p;
}

/* The use of each site and link charged, as svc_quota_hours takes it. */
struct tally {
    struct svc_quota_use *v;
    size_t n;
};

static struct svc_quota_use *use_of(struct tally *t, enum acc_resource_kind kind, const char *name)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].kind == kind && strcmp(t->v[i].name, name) == 0)
            return &t->v[i];
    }
    return NULL; /* not charged: no need to count it */
}

static void add_to(int64_t *sum, int64_t v)
{
    *sum = *sum > INT64_MAX - v ? INT64_MAX : *sum + v;
}

static struct bound *bound_of(struct usage_owner *o, enum acc_resource_kind kind, const char *name)
{
    for (size_t i = 0; i < o->n_bounds; i++)
        if (o->bounds[i].kind == kind && strcmp(o->bounds[i].name, name) == 0)
            return &o->bounds[i];
    return NULL;
}

/* The lock held: whether what t asks fits under o's bounds, each fresh. */
static bool fits_bounds(const struct svc_quota_who *w, struct usage_owner *o, const struct tally *t)
{
    int64_t now = acc_mono_us();
    for (size_t i = 0; i < t->n; i++) {
        int64_t limit = t->v[i].kind == ACC_RES_NODES ? w->q.node_hours : w->q.mbit_hours;
        if (limit == ACC_QUOTA_UNLIMITED)
            continue;
        const struct bound *b = bound_of(o, t->v[i].kind, t->v[i].name);
        if (!b || now - b->counted > RECOUNT_US || b->upper > limit * 3600 - t->v[i].asked)
            return false;
    }
    return true;
}

/* The lock held: each bound of t's resources raised by what it asks. */
static void raise_bounds(struct usage_owner *o, const struct tally *t)
{
    for (size_t i = 0; i < t->n; i++) {
        struct bound *b = bound_of(o, t->v[i].kind, t->v[i].name);
        if (b)
            add_to(&b->upper, t->v[i].asked);
    }
}

/* The lock held: the bounds of t's resources from an exact count (held
 * and was: everything the owner holds there), plus what is admitted. */
static void set_bounds(struct usage_owner *o, const struct tally *t, bool admitted)
{
    int64_t now = acc_mono_us();
    for (size_t i = 0; i < t->n; i++) {
        struct bound *b = bound_of(o, t->v[i].kind, t->v[i].name);
        if (!b) {
            void *p = realloc(o->bounds, (o->n_bounds + 1) * sizeof *o->bounds);
            if (!p)
                continue; /* without memory: counted exactly next time */
            o->bounds = p;
            b = &o->bounds[o->n_bounds++];
            b->kind = t->v[i].kind;
            acc_strlcpy(b->name, t->v[i].name, sizeof b->name);
        }
        b->upper = t->v[i].held;
        add_to(&b->upper, t->v[i].was);
        if (admitted)
            add_to(&b->upper, t->v[i].asked);
        b->counted = now;
    }
}

/* held and was from the store's rows and the other entries; the lock held. */
static acc_err count(struct acc_service *svc, const struct svc_quota_who *w, struct usage_owner *o,
                     const char *id, struct tally *t, struct acc_error *err)
{
    struct acc_store_owner so = svc_quota_owner(w);
    struct acc_usage_row *rows;
    size_t n;
    acc_time now = acc_now();
    acc_err rc = acc_store_usage(svc->store, &so, now, &rows, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct svc_quota_use *u = use_of(t, rows[i].kind, rows[i].resource);
        if (!u)
            continue;
        int64_t c = svc_quota_charge(w, rows[i].amount, rows[i].start, rows[i].end, now);
        if (strcmp(rows[i].id, id) == 0)
            add_to(&u->was, c);
        else if (!*find(o, rows[i].id))
            add_to(&u->held, c);
    }
    free(rows);
    for (struct entry *e = o->entries; e; e = e->next) {
        if (strcmp(e->id, id) == 0)
            continue;
        for (size_t k = 0; k < e->n; k++) {
            struct svc_quota_use *u = use_of(t, e->v[k].kind, e->v[k].name);
            if (u)
                add_to(&u->held, e->v[k].amount);
        }
    }
    return ACC_OK;
}

/* The charges summed per site and link (asked), in t (free t->v). */
static acc_err tally_of(const struct svc_quota_who *w, const struct svc_charge *c, size_t n,
                        struct tally *t, struct acc_error *err)
{
    t->n = 0;
    if (!(t->v = calloc(n ? n : 1, sizeof *t->v)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_time now = acc_now();
    for (size_t i = 0; i < n; i++) {
        struct svc_quota_use *u = use_of(t, c[i].kind, c[i].name);
        if (!u) {
            u = &t->v[t->n++];
            u->kind = c[i].kind;
            u->name = c[i].name;
        }
        add_to(&u->asked, svc_quota_charge(w, c[i].amount, c[i].start, c[i].end, now));
    }
    return ACC_OK;
}

static acc_err keep(struct usage_owner *o, const char *id, const struct tally *t,
                    struct acc_error *err)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e || !(e->v = calloc(t->n ? t->n : 1, sizeof *e->v))) {
        free(e);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    acc_strlcpy(e->id, id, sizeof e->id);
    for (size_t i = 0; i < t->n; i++) {
        e->v[i].kind = t->v[i].kind;
        acc_strlcpy(e->v[i].name, t->v[i].name, sizeof e->v[i].name);
        e->v[i].amount = t->v[i].asked;
    }
    e->n = t->n;
    struct entry **p = find(o, id);
    if (*p) { /* a change admitted again: the newer one stands */
        e->next = (*p)->next;
        entry_free(*p);
    }
    *p = e;
    return ACC_OK;
}

static acc_err admit(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                     const struct svc_charge *c, size_t n, bool kept, struct acc_error *err)
{
    if (unlimited(w) || n == 0)
        return ACC_OK;
    struct usage_owner *o = owner_of(&svc->usage, w);
    if (!o)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct tally t;
    acc_err rc = tally_of(w, c, n, &t, err);
    if (rc) {
        owner_put(&svc->usage, o);
        return rc;
    }
    pthread_mutex_lock(&o->lock);
    if (fits_bounds(w, o, &t)) {
        if (kept && !(rc = keep(o, id, &t, err)))
            raise_bounds(o, &t);
    } else {
        rc = count(svc, w, o, id, &t, err);
        if (!rc)
            rc = svc_quota_hours(w, t.v, t.n, err);
        if (!rc && kept)
            rc = keep(o, id, &t, err);
        if (!rc || rc == ACC_ERR_QUOTA)
            set_bounds(o, &t, !rc && kept);
    }
    pthread_mutex_unlock(&o->lock);
    owner_put(&svc->usage, o);
    free(t.v);
    if (rc == ACC_ERR_QUOTA)
        atomic_fetch_add(&svc->refused_quota, 1);
    return rc;
}

acc_err svc_usage_admit(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                        const struct svc_charge *c, size_t n, struct acc_error *err)
{
    return admit(svc, w, id, c, n, true, err);
}

acc_err svc_usage_check(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                        const struct svc_charge *c, size_t n, struct acc_error *err)
{
    return admit(svc, w, id, c, n, false, err);
}

void svc_usage_forget(struct acc_service *svc, const struct svc_quota_who *w, const char *id)
{
    /* Whatever the limits are now: they may have been reloaded (SIGHUP)
     * since the entry was made under others. */
    struct usage_owner *o = owner_of(&svc->usage, w);
    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    struct entry **p = find(o, id);
    if (*p) {
        struct entry *e = *p;
        *p = e->next;
        entry_free(e);
    }
    pthread_mutex_unlock(&o->lock);
    owner_put(&svc->usage, o);
}

struct svc_charge *svc_plan_charges(const struct acc_plan *p, int64_t duration, size_t *n)
{
    *n = 0;
    struct svc_charge *c = calloc(p->n_items ? p->n_items : 1, sizeof *c);
    if (!c)
        return NULL;
    acc_time now = acc_now();
    for (size_t i = 0; i < p->n_items; i++) {
        const struct acc_resource *r = &p->items[i].res;
        c[i] = (struct svc_charge){r->kind, r->name, r->amount, now,
                                   duration < ACC_TIME_MAX - now ? now + duration : ACC_TIME_MAX};
    }
    *n = p->n_items;
    return c;
}

acc_err svc_offer_usage(struct acc_service *svc, const struct svc_quota_who *w,
                        const struct acc_offer *o, acc_time earliest, struct acc_error *err)
{
    if (unlimited(w))
        return ACC_OK;
    struct svc_charge *c = calloc(o->n_components ? o->n_components : 1, sizeof *c);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_site_cfg *s =
            o->components[i].site ? acc_config_site(svc->cfg, o->components[i].site) : NULL;
        if (s)
            c[n++] = (struct svc_charge){
                ACC_RES_NODES, s->name, o->components[i].nodes, earliest,
                earliest < ACC_TIME_MAX - o->duration ? earliest + o->duration : ACC_TIME_MAX};
    }
    acc_err rc = svc_usage_check(svc, w, "", c, n, err);
    free(c);
    return rc;
}

void svc_prune_rejected(struct acc_service *svc, const struct acc_agreement *a)
{
    if (a->state != ACC_STATE_REJECTED)
        return;
    struct svc_quota_who w = svc_quota_who(svc->cfg, a->initiator, a->client);
    struct acc_store_owner o = svc_quota_owner(&w);
    unsigned gone = 0;
    struct acc_error err;
    if (acc_store_prune_rejected(svc->store, &o, svc->cfg->max_rejected, &gone, &err))
        acc_log_warn("agreement %s: older Rejected agreements not pruned: %s", a->id, err.msg);
    else if (gone)
        atomic_fetch_add(&svc->pruned_rejected, gone);
}
