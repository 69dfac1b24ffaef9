/* SPDX-License-Identifier: Apache-2.0 */
/* ledger.c - the booking ledger (ledger.h): its settings, its life, and
 * the bookings in memory and their writes (the operations are in
 * ledger_ops.c). */
#include "ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/log.h"
#include "../common/strutil.h"
#include "ledger_internal.h"

#define DAY          86400
#define STACK_WRITES 64 /* bookings of one write without a malloc (a day's background load) */

/* ---------------------------------------------------------------- settings */

static const char *const option_keys[] = {"calendar", "on_conflict", "max_later", NULL};

void acc_ledger_options_init(struct acc_ledger_options *o)
{
    *o = (struct acc_ledger_options){.calendar = NULL, .later = true, .max_later = 30 * DAY};
}

bool acc_ledger_takes(const char *key)
{
    for (size_t i = 0; option_keys[i]; i++) {
        if (strcmp(option_keys[i], key) == 0)
            return true;
    }
    return false;
}

acc_err acc_ledger_option(struct acc_ledger_options *o, const char *key, const char *value,
                          struct acc_error *err)
{
    if (strcmp(key, "calendar") == 0) {
        /* The file is made at open; its directory must be there (checked
         * here, so that --check-config finds what the open would). */
        if (!*value)
            return acc_error_set(err, ACC_ERR_CONFIG, "calendar is empty");
        const char *slash = strrchr(value, '/');
        char dir[4096];
        struct stat sb;
        if (slash && (size_t)(slash - value) < sizeof dir) {
            memcpy(dir, value, (size_t)(slash - value));
            dir[slash - value] = '\0';
            if (slash > value && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
                return acc_error_set(err, ACC_ERR_CONFIG,
                                     "calendar %s: its directory %s does not exist", value, dir);
        }
        o->calendar = value;
        return ACC_OK;
    }
    if (strcmp(key, "on_conflict") == 0) {
        if (strcmp(value, "later") == 0)
            o->later = true;
        else if (strcmp(value, "refuse") == 0)
            o->later = false;
        else
            return acc_error_set(err, ACC_ERR_CONFIG, "on_conflict is later or refuse");
        return ACC_OK;
    }
    if (strcmp(key, "max_later") == 0) {
        acc_err rc = acc_duration_parse(value, &o->max_later, err);
        if (!rc && o->max_later < 0)
            rc = acc_error_set(err, ACC_ERR_CONFIG, "max_later must not be negative");
        return rc;
    }
    return acc_error_set(err, ACC_ERR_CONFIG, "unknown setting '%s'", key);
}

acc_err acc_ledger_options_apply(struct acc_ledger_options *o, const struct acc_kv *kv, size_t n,
                                 struct acc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!acc_ledger_takes(kv[i].key))
            continue;
        if (acc_ledger_option(o, kv[i].key, kv[i].value, err)) {
            acc_error_prefix(err, "setting '%s'", kv[i].key);
            return ACC_ERR_CONFIG;
        }
    }
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

static void booking_free(struct ledger_entry *b)
{
    free(b); /* the owner's copy is in the same allocation */
}

/* One allocation per booking, its owner's name after the entry: a simulated
 * site holds every booking of the next days in memory. */
static struct ledger_entry *booking_new(size_t r, acc_time start, acc_time end, int64_t amount,
                                        const char *owner)
{
    size_t n = strlen(owner ? owner : "") + 1;
    struct ledger_entry *b = calloc(1, sizeof *b + n);
    if (!b)
        return NULL;
    char *copy = (char *)(b + 1);
    memcpy(copy, owner ? owner : "", n);
    b->b = (struct acc_ledger_booking){r, start, end, amount, copy};
    return b;
}

acc_err acc_ledger_open(const char *name, const char *db_path, const struct acc_ledger_options *o,
                        bool durable, struct acc_ledger **out, struct acc_error *err)
{
    struct acc_ledger *l = calloc(1, sizeof *l);
    if (!l)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&l->lock, NULL);
    acc_map_init(&l->bookings);
    l->later = o->later;
    l->max_later = o->max_later;
    char *path = NULL;
    acc_err rc =
        (l->name = strdup(name)) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = acc_ledger_store_path(db_path, name, o->calendar, &path, err);
    if (!rc)
        rc = acc_ledger_store_open(path, durable, o->snapshot, &l->store, err);
    free(path);
    if (rc) {
        acc_ledger_free(l);
        return rc;
    }
    *out = l;
    return ACC_OK;
}

static void free_entry(const char *key, void *value, void *ctx)
{
    (void)key;
    (void)ctx;
    booking_free(value);
}

static void forget_pending(const char *key, void *value, void *ctx)
{
    (void)key;
    struct ledger_entry *b = value;
    acc_ledger_store_forget(ctx, b->pending);
    b->pending = NULL;
}

void acc_ledger_free(struct acc_ledger *l)
{
    if (!l)
        return;
    if (l->store)
        acc_map_each(&l->bookings, forget_pending, l->store);
    acc_ledger_store_close(l->store);
    acc_map_each(&l->bookings, free_entry, NULL);
    acc_map_release(&l->bookings);
    for (size_t i = 0; i < l->n_res; i++) {
        free(l->res[i].name);
        acc_calendar_release(&l->res[i].cal);
    }
    free(l->res);
    free(l->name);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

acc_err acc_ledger_add_resource(struct acc_ledger *l, const char *name, int64_t capacity,
                                struct acc_error *err)
{
    if (capacity <= 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: capacity of %s must be positive", l->name,
                             name);
    void *v = realloc(l->res, (l->n_res + 1) * sizeof *l->res);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    l->res = v;
    struct ledger_res *r = &l->res[l->n_res];
    *r = (struct ledger_res){.name = strdup(name)};
    if (!r->name)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_calendar_init(&r->cal, capacity);
    l->n_res++;
    return ACC_OK;
}

/* ------------------------------------------------------------------ load */

struct load_ctx {
    struct acc_ledger *l;
    acc_time horizon; /* bookings that ended before are not loaded */
    struct acc_cal_booking **per_res;
    size_t *n_per_res, *cap_per_res;
    size_t dropped;
};

static acc_err load_one(void *arg, const struct acc_ledger_store_booking *b)
{
    struct load_ctx *c = arg;
    size_t r = 0;
    if (!acc_ledger_find(c->l, b->resource, &r)) {
        c->dropped++; /* a resource no longer configured */
        return ACC_OK;
    }
    if (b->change > c->l->res[r].seen)
        c->l->res[r].seen = b->change; /* the load read every change up to it */
    if (b->end <= c->horizon) {
        c->dropped++; /* long past */
        return ACC_OK;
    }
    struct ledger_entry *lb = booking_new(r, b->start, b->end, b->amount, b->owner);
    if (!lb || acc_map_put(&c->l->bookings, b->key, lb)) {
        booking_free(lb);
        return ACC_ERR_NOMEM;
    }
    if (c->n_per_res[r] == c->cap_per_res[r]) {
        size_t cap = c->cap_per_res[r] ? c->cap_per_res[r] * 2 : 64;
        void *v = realloc(c->per_res[r], cap * sizeof *c->per_res[r]);
        if (!v)
            return ACC_ERR_NOMEM;
        c->per_res[r] = v;
        c->cap_per_res[r] = cap;
    }
    c->per_res[r][c->n_per_res[r]++] = (struct acc_cal_booking){b->start, b->end, b->amount};
    return ACC_OK;
}

acc_err acc_ledger_load(struct acc_ledger *l, struct acc_error *err)
{
    size_t n = l->n_res ? l->n_res : 1;
    struct load_ctx c = {.l = l, .horizon = acc_now() - DAY};
    c.per_res = calloc(n, sizeof *c.per_res);
    c.n_per_res = calloc(n, sizeof *c.n_per_res);
    c.cap_per_res = calloc(n, sizeof *c.cap_per_res);
    acc_err rc = ACC_OK;
    if (!c.per_res || !c.n_per_res || !c.cap_per_res)
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = acc_ledger_store_load(l->store, load_one, &c, err);
    for (size_t r = 0; !rc && r < l->n_res; r++) {
        if (acc_calendar_load(&l->res[r].cal, c.per_res[r], c.n_per_res[r]))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t r = 0; c.per_res && r < l->n_res; r++)
        free(c.per_res[r]);
    free(c.per_res);
    free(c.n_per_res);
    free(c.cap_per_res);
    if (!rc && c.dropped)
        acc_log_debug("%s: %zu stored bookings ended or belong to removed resources", l->name,
                      c.dropped);
    return rc;
}

/* ------------------------------------------------------------- questions */

const char *acc_ledger_name(const struct acc_ledger *l)
{
    return l->name;
}

size_t acc_ledger_n_resources(const struct acc_ledger *l)
{
    return l->n_res;
}

const char *acc_ledger_resource_name(const struct acc_ledger *l, size_t r)
{
    return l->res[r].name;
}

bool acc_ledger_find(const struct acc_ledger *l, const char *name, size_t *r)
{
    for (size_t i = 0; i < l->n_res; i++) {
        if (strcmp(l->res[i].name, name) == 0) {
            if (r)
                *r = i;
            return true;
        }
    }
    return false;
}

acc_err acc_ledger_resource(const struct acc_ledger *l, const char *name, size_t *r,
                            struct acc_error *err)
{
    if (!acc_ledger_find(l, name, r))
        return acc_error_set(err, ACC_ERR_INVALID, "%s has no resource '%s'", l->name, name);
    return ACC_OK;
}

acc_err acc_ledger_check_start(const struct acc_ledger *l, acc_time start, struct acc_error *err)
{
    if (start < acc_now() - 60)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: start time lies in the past", l->name);
    return ACC_OK;
}

/* ---------------------------------------------------------- the lock held */

void acc_ledger_lock(struct acc_ledger *l)
{
    pthread_mutex_lock(&l->lock);
}

void acc_ledger_unlock(struct acc_ledger *l)
{
    pthread_mutex_unlock(&l->lock);
}

bool acc_ledger_cond_wait(struct acc_ledger *l, pthread_cond_t *cond, const struct timespec *until)
{
    return pthread_cond_timedwait(cond, &l->lock, until) != ETIMEDOUT;
}

const struct acc_calendar *acc_ledger_calendar_locked(const struct acc_ledger *l, size_t r)
{
    return &l->res[r].cal;
}

size_t acc_ledger_count_locked(const struct acc_ledger *l)
{
    return l->bookings.n;
}

const struct acc_ledger_booking *acc_ledger_get_locked(const struct acc_ledger *l, const char *key)
{
    const struct ledger_entry *b = acc_map_get(&l->bookings, key);
    return b ? &b->b : NULL;
}

struct each_ctx {
    void (*fn)(const char *key, const struct acc_ledger_booking *b, void *ctx);
    void *ctx;
};

static void each_one(const char *key, void *value, void *arg)
{
    struct each_ctx *e = arg;
    e->fn(key, &((const struct ledger_entry *)value)->b, e->ctx);
}

void acc_ledger_each_locked(const struct acc_ledger *l,
                            void (*fn)(const char *key, const struct acc_ledger_booking *b,
                                       void *ctx),
                            void *ctx)
{
    struct each_ctx e = {fn, ctx};
    acc_map_each(&l->bookings, each_one, &e);
}

acc_err acc_ledger_book_locked(struct acc_ledger *l, const char *key, size_t r, acc_time start,
                               acc_time end, int64_t amount, const char *owner)
{
    struct ledger_entry *b = booking_new(r, start, end, amount, owner);
    if (!b)
        return ACC_ERR_NOMEM;
    struct acc_calendar *cal = &l->res[r].cal;
    acc_err rc = acc_calendar_add(cal, start, end, amount);
    if (!rc) {
        rc = acc_map_put(&l->bookings, key, b);
        if (rc)
            acc_calendar_remove(cal, start, end, amount);
    }
    if (rc)
        booking_free(b);
    return rc;
}

void acc_ledger_unbook_locked(struct acc_ledger *l, const char *key)
{
    struct ledger_entry *b = acc_map_take(&l->bookings, key);
    if (!b)
        return;
    acc_ledger_store_forget(l->store, b->pending);
    acc_calendar_remove(&l->res[b->b.res].cal, b->b.start, b->b.end, b->b.amount);
    booking_free(b);
}

acc_err acc_ledger_persist_locked(struct acc_ledger *l, const char *const *keys, size_t n,
                                  int64_t day, struct acc_sql_ticket **w, struct acc_error *err)
{
    struct acc_ledger_store_booking stack[STACK_WRITES], *sb = stack;
    if (n > STACK_WRITES && !(sb = calloc(n, sizeof *sb)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct acc_ledger_booking *b = acc_ledger_get_locked(l, keys[i]);
        sb[i] = (struct acc_ledger_store_booking){.key = keys[i],
                                                  .resource = l->res[b->res].name,
                                                  .start = b->start,
                                                  .end = b->end,
                                                  .amount = b->amount,
                                                  .owner = b->owner};
    }
    /* none for a day without background bookings: the day is still marked */
    acc_err rc = acc_ledger_store_put(l->store, n ? sb : NULL, n, day, w, err);
    if (sb != stack)
        free(sb);
    return rc;
}

/* ------------------------------------------------------ shared calendars */

#define PRUNE_AGE   (7 * DAY) /* stored rows that ended this long ago are removed */
#define PRUNE_EVERY 3600      /* seconds between one process's prunings of a resource */

/* A stored row made memory's: the booking as stored (counted whatever the
 * calendar holds: it is booked), or none for a cancel's tombstone. */
static acc_err apply_stored(struct acc_ledger *l, size_t r,
                            const struct acc_ledger_store_booking *b)
{
    struct ledger_entry *e = NULL;
    if (!b->cancelled && !(e = booking_new(r, b->start, b->end, b->amount, b->owner)))
        return ACC_ERR_NOMEM;
    acc_ledger_unbook_locked(l, b->key);
    if (b->cancelled)
        return ACC_OK;
    acc_err rc = acc_calendar_force(&l->res[r].cal, b->start, b->end, b->amount);
    if (rc == ACC_ERR_INVALID) {
        acc_log_warn("%s: stored booking %s is not a booking", l->name, b->key);
        booking_free(e);
        return ACC_OK;
    }
    if (!rc && (rc = acc_map_put(&l->bookings, b->key, e)))
        acc_calendar_remove(&l->res[r].cal, b->start, b->end, b->amount);
    if (rc)
        booking_free(e);
    return rc;
}

struct sync_ctx {
    struct acc_ledger *l;
    size_t r;
    int64_t seen;
};

static acc_err sync_row(void *arg, const struct acc_ledger_store_booking *b)
{
    struct sync_ctx *x = arg;
    x->l->rows_read++;
    acc_err rc = apply_stored(x->l, x->r, b);
    if (!rc && b->change > x->seen)
        x->seen = b->change; /* in order: every change up to it is applied */
    return rc;
}

acc_err ledger_sync_res_locked(struct acc_ledger *l, size_t r, struct acc_error *err)
{
    if (!acc_ledger_store_shared(l->store))
        return ACC_OK;
    struct sync_ctx x = {l, r, l->res[r].seen};
    acc_err rc = acc_ledger_store_changes(l->store, l->res[r].name, x.seen, sync_row, &x, err);
    l->res[r].seen = x.seen; /* also after a failure: what was applied stays */
    return rc;
}

struct key_ctx {
    struct acc_ledger *l;
    bool found;
};

static acc_err sync_key_row(void *arg, const struct acc_ledger_store_booking *b)
{
    struct key_ctx *x = arg;
    struct acc_ledger *l = x->l;
    size_t r;
    l->rows_read++;
    x->found = true;
    if (!acc_ledger_find(l, b->resource, &r)) {
        acc_ledger_unbook_locked(l, b->key);
        return ACC_OK; /* a resource this ledger no longer has */
    }
    /* seen stays (rows below it may be unread); a row not applied is read
     * again by the next sync of its resource */
    acc_err rc = apply_stored(l, r, b);
    if (rc && b->change <= l->res[r].seen)
        l->res[r].seen = b->change - 1;
    return rc;
}

acc_err ledger_sync_key_locked(struct acc_ledger *l, const char *key, struct acc_error *err)
{
    if (!acc_ledger_store_shared(l->store))
        return ACC_OK;
    struct key_ctx x = {l, false};
    acc_err rc = acc_ledger_store_key(l->store, key, sync_key_row, &x, err);
    if (!rc && !x.found)
        acc_ledger_unbook_locked(l, key); /* not stored (or pruned) */
    return rc;
}

acc_err ledger_prune_held_locked(struct acc_ledger *l, size_t r, struct acc_error *err)
{
    acc_time now = acc_now();
    if (now - l->res[r].pruned < PRUNE_EVERY)
        return ACC_OK;
    acc_err rc = acc_ledger_store_prune(l->store, l->res[r].name, now - PRUNE_AGE, err);
    if (!rc)
        l->res[r].pruned = now;
    return rc;
}

uint64_t acc_ledger_rows_read(struct acc_ledger *l)
{
    pthread_mutex_lock(&l->lock);
    uint64_t n = l->rows_read;
    pthread_mutex_unlock(&l->lock);
    return n;
}

bool acc_ledger_get(struct acc_ledger *l, const char *key, struct acc_ledger_booking *out)
{
    pthread_mutex_lock(&l->lock);
    const struct acc_ledger_booking *b = acc_ledger_get_locked(l, key);
    bool found = b != NULL;
    if (found) {
        *out = *b;
        out->owner = NULL;
    }
    pthread_mutex_unlock(&l->lock);
    return found;
}

acc_err acc_ledger_wait(struct acc_ledger *l, struct acc_sql_ticket *w, struct acc_error *err)
{
    return acc_ledger_store_wait(l->store, w, err);
}

acc_err acc_ledger_day_marked(struct acc_ledger *l, int64_t day, bool *marked,
                              struct acc_error *err)
{
    return acc_ledger_store_day_marked(l->store, day, marked, err);
}

acc_err acc_ledger_calendar_path(const char *db_path, const char *name, const char *calendar,
                                 char **out, struct acc_error *err)
{
    return acc_ledger_store_path(db_path, name, calendar, out, err);
}
