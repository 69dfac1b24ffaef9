/* sim_open.c - a simulator's life: its settings, its calendar read back
 * from its file, the generated background load, and closing (the
 * operations are in sim_core.c, the controls in sim_control.c). */
#include "sim_core.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/hash.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"

#define DAY              86400
#define LOAD_AHEAD_LIMIT 366 /* days: previews further out get no generated load */

/* ---------------------------------------------------------- background load */

/* Generates (deterministically from seed, resource and day) and persists the
 * background bookings of one day; the caller holds the lock. */
static acc_err load_day_locked(struct sim *s, int64_t day, struct acc_error *err)
{
    bool marked = false;
    acc_err rc = sim_store_day_marked(s->store, day, &marked, err);
    if (rc || marked)
        return rc;

    struct sim_store_booking made[64];
    char keys[64][48];
    size_t n = 0;
    for (size_t r = 0; r < s->n_res; r++) {
        struct sim_resource *res = &s->res[r];
        uint64_t x = s->seed ^ acc_fnv1a64(res->name) ^ ((uint64_t)day * 0xD1B54A32D192ED03ULL);
        int jobs = 3 + (int)(acc_splitmix64(&x) % 4);
        for (int j = 0; j < jobs && n < 64; j++) {
            acc_time start = day * DAY + (acc_time)(acc_splitmix64(&x) % 96) * 900;
            acc_time dur = (acc_time)(2 + acc_splitmix64(&x) % 32) * 900; /* 30 min to 8 h */
            int pct = 10 + (int)(acc_splitmix64(&x) % (uint64_t)(2 * s->load_percent));
            int64_t amount = res->cal.capacity * pct / 100;
            if (amount < 1)
                amount = 1;
            snprintf(keys[n], sizeof keys[n], "load-%" PRId64 "-%zu-%d", day, r, j);
            if (sim_book_locked(s, keys[n], r, start, start + dur, amount, "background"))
                continue; /* does not fit beside earlier bookings: skip it */
            made[n] = (struct sim_store_booking){keys[n],     res->name, start,
                                                 start + dur, amount,    "background"};
            n++;
        }
    }
    /* Awaited under the lock: rare (a day at a time), and the day must not
     * be generated twice. */
    struct sim_store_write *w = NULL;
    rc = sim_store_put(s->store, made, n, day, &w, err);
    if (!rc)
        rc = sim_store_wait(s->store, w, err);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            sim_unbook_locked(s, keys[i]);
    }
    return rc;
}

acc_err sim_load_until_locked(struct sim *s, acc_time until, struct acc_error *err)
{
    if (!s->load)
        return ACC_OK;
    int64_t last = (until - 1) / DAY;
    int64_t limit = acc_now() / DAY + LOAD_AHEAD_LIMIT;
    if (last > limit)
        last = limit;
    while (s->loaded_until_day <= last) {
        acc_err rc = load_day_locked(s, s->loaded_until_day, err);
        if (rc)
            return rc;
        s->loaded_until_day++;
    }
    return ACC_OK;
}

/* ------------------------------------------------------------- open, close */

static const char *const common_keys[] = {"load",        "seed",      "load_days", "load_percent",
                                          "on_conflict", "max_later", "calendar",  NULL};

static bool key_known(const char *key, const char *const *a, const char *const *b)
{
    for (size_t i = 0; a && a[i]; i++) {
        if (strcmp(a[i], key) == 0)
            return true;
    }
    for (size_t i = 0; b && b[i]; i++) {
        if (strcmp(b[i], key) == 0)
            return true;
    }
    return false;
}

acc_err sim_open(struct sim *s, const char *kind, const struct acc_adapter_env *env,
                 const char *const *own_keys, struct acc_error *err)
{
    s->kind = kind;
    s->later = true;
    s->max_later = 30 * DAY;
    s->load = false;
    s->load_days = 14;
    s->load_percent = 30;
    s->seed = acc_fnv1a64(env->name);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    acc_map_init(&s->bookings);
    s->name = strdup(env->name);
    if (!s->name)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    const char *calendar = NULL;

    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        int64_t n;
        acc_err rc = ACC_OK;
        if (!key_known(k, common_keys, own_keys))
            return acc_error_set(err, ACC_ERR_CONFIG, "unknown setting '%s'", k);
        if (strcmp(k, "load") == 0) {
            rc = acc_parse_bool(v, &s->load, err);
        } else if (strcmp(k, "seed") == 0) {
            rc = acc_parse_i64(v, 0, INT64_MAX, &n, err);
            s->seed = (uint64_t)n;
        } else if (strcmp(k, "load_days") == 0) {
            rc = acc_parse_i64(v, 0, LOAD_AHEAD_LIMIT, &n, err);
            s->load_days = (int)n;
        } else if (strcmp(k, "load_percent") == 0) {
            rc = acc_parse_i64(v, 1, 60, &n, err);
            s->load_percent = (int)n;
        } else if (strcmp(k, "on_conflict") == 0) {
            if (strcmp(v, "later") == 0)
                s->later = true;
            else if (strcmp(v, "refuse") == 0)
                s->later = false;
            else
                rc = acc_error_set(err, ACC_ERR_CONFIG, "on_conflict is later or refuse");
        } else if (strcmp(k, "calendar") == 0) {
            calendar = v;
        } else if (strcmp(k, "max_later") == 0) {
            rc = acc_duration_parse(v, &s->max_later, err);
            if (!rc && s->max_later < 0)
                rc = acc_error_set(err, ACC_ERR_CONFIG, "max_later must not be negative");
        }
        if (rc) {
            acc_error_prefix(err, "setting '%s'", k);
            return ACC_ERR_CONFIG;
        }
    }
    char *path = NULL;
    acc_err rc = sim_store_path(env->db_path, env->name, calendar, &path, err);
    if (!rc)
        /* A simulated calendar commits without fsync (synchronous=NORMAL)
         * whatever [database] durable says: it survives a crash of accordd,
         * which is what its tests and demos need, and an fsync per booking
         * would double the cost of every negotiation against it. */
        rc = sim_store_open(path, false, &s->store, err);
    free(path);
    return rc;
}

acc_err sim_add_resource(struct sim *s, const char *name, int64_t capacity, struct acc_error *err)
{
    if (capacity <= 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: capacity of %s must be positive", s->name,
                             name);
    void *v = realloc(s->res, (s->n_res + 1) * sizeof *s->res);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    s->res = v;
    struct sim_resource *r = &s->res[s->n_res];
    r->name = strdup(name);
    if (!r->name)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_calendar_init(&r->cal, capacity);
    s->n_res++;
    return ACC_OK;
}

struct load_ctx {
    struct sim *s;
    acc_time horizon; /* bookings that ended before are not loaded */
    struct acc_cal_booking **per_res;
    size_t *n_per_res, *cap_per_res;
    size_t dropped;
};

static acc_err load_one(void *arg, const struct sim_store_booking *b)
{
    struct load_ctx *l = arg;
    size_t r = 0;
    if (!sim_find_res(l->s, b->resource, &r) || b->end <= l->horizon) {
        l->dropped++; /* a resource no longer configured, or long past */
        return ACC_OK;
    }
    struct sim_booking *sb = calloc(1, sizeof *sb);
    if (!sb)
        return ACC_ERR_NOMEM;
    sb->res = r;
    sb->start = b->start;
    sb->end = b->end;
    sb->amount = b->amount;
    sb->owner = strdup(b->owner ? b->owner : "");
    if (!sb->owner || acc_map_put(&l->s->bookings, b->key, sb)) {
        sim_booking_free(sb);
        return ACC_ERR_NOMEM;
    }
    if (l->n_per_res[r] == l->cap_per_res[r]) {
        size_t cap = l->cap_per_res[r] ? l->cap_per_res[r] * 2 : 64;
        void *v = realloc(l->per_res[r], cap * sizeof *l->per_res[r]);
        if (!v)
            return ACC_ERR_NOMEM;
        l->per_res[r] = v;
        l->cap_per_res[r] = cap;
    }
    l->per_res[r][l->n_per_res[r]++] = (struct acc_cal_booking){b->start, b->end, b->amount};
    return ACC_OK;
}

acc_err sim_start(struct sim *s, struct acc_error *err)
{
    struct load_ctx l = {.s = s, .horizon = acc_now() - DAY};
    l.per_res = calloc(s->n_res ? s->n_res : 1, sizeof *l.per_res);
    l.n_per_res = calloc(s->n_res ? s->n_res : 1, sizeof *l.n_per_res);
    l.cap_per_res = calloc(s->n_res ? s->n_res : 1, sizeof *l.cap_per_res);
    acc_err rc = ACC_OK;
    if (!l.per_res || !l.n_per_res || !l.cap_per_res)
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = sim_store_load(s->store, load_one, &l, err);
    for (size_t r = 0; !rc && r < s->n_res; r++) {
        if (acc_calendar_load(&s->res[r].cal, l.per_res[r], l.n_per_res[r]))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t r = 0; l.per_res && r < s->n_res; r++)
        free(l.per_res[r]);
    free(l.per_res);
    free(l.n_per_res);
    free(l.cap_per_res);
    if (rc)
        return rc;
    if (l.dropped)
        acc_log_debug("%s: %zu stored bookings ended or belong to removed resources", s->name,
                      l.dropped);
    s->loaded_until_day = acc_now() / DAY - 1;
    pthread_mutex_lock(&s->lock);
    rc = sim_load_until_locked(s, (acc_now() / DAY + s->load_days + 1) * DAY, err);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static void free_booking_entry(const char *key, void *value, void *ctx)
{
    (void)key;
    (void)ctx;
    sim_booking_free(value);
}

static void forget_pending(const char *key, void *value, void *ctx)
{
    (void)key;
    struct sim_booking *b = value;
    sim_store_forget(ctx, b->pending);
    b->pending = NULL;
}

void sim_close(void *state)
{
    struct sim *s = state;
    if (s->store)
        acc_map_each(&s->bookings, forget_pending, s->store);
    sim_store_close(s->store);
    acc_map_each(&s->bookings, free_booking_entry, NULL);
    acc_map_release(&s->bookings);
    for (size_t i = 0; i < s->n_res; i++) {
        free(s->res[i].name);
        acc_calendar_release(&s->res[i].cal);
    }
    free(s->res);
    free(s->name);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
}
