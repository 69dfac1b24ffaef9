/* SPDX-License-Identifier: Apache-2.0 */
/* simsite_open.c - a simulated site's life: its settings, its ledger
 * opened and loaded, the generated background load, and closing (the
 * operations are in simsite.c, the controls in simsite_control.c). */
#include "simsite.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/hash.h"
#include "../../lib/common/strutil.h"

#define DAY              86400
#define LOAD_AHEAD_LIMIT 366 /* days: previews further out get no generated load */
#define LOAD_MAX_DAY     64  /* background bookings of one day, at most */
#define LOAD_MAX_PERCENT 80  /* of a resource the background holds at once, at most */

/* ---------------------------------------------------------- background load */

/* Generates (deterministically from seed, resource and day) and persists the
 * background bookings of one day; the caller holds the ledger's lock. */
static acc_err load_day_locked(struct simsite *s, int64_t day, struct acc_error *err)
{
    bool marked = false;
    acc_err rc = acc_ledger_day_marked(s->ledger, day, &marked, err);
    if (rc || marked)
        return rc;

    char keys[LOAD_MAX_DAY][48];
    const char *made[LOAD_MAX_DAY];
    size_t n = 0;
    for (size_t r = 0; r < acc_ledger_n_resources(s->ledger); r++) {
        int64_t capacity = acc_calendar_capacity(acc_ledger_calendar_locked(s->ledger, r));
        uint64_t x = s->seed ^ acc_fnv1a64(acc_ledger_resource_name(s->ledger, r)) ^
                     ((uint64_t)day * 0xD1B54A32D192ED03ULL);
        int jobs = 3 + (int)(acc_splitmix64(&x) % 4);
        for (int j = 0; j < jobs && n < LOAD_MAX_DAY; j++) {
            acc_time start = day * DAY + (acc_time)(acc_splitmix64(&x) % 96) * 900;
            acc_time dur = (acc_time)(2 + acc_splitmix64(&x) % 32) * 900; /* 30 min to 8 h */
            int pct = 10 + (int)(acc_splitmix64(&x) % (uint64_t)(2 * s->load_percent));
            int64_t amount = capacity * pct / 100;
            if (amount < 1)
                amount = 1;
            snprintf(keys[n], sizeof keys[n], "load-%" PRId64 "-%zu-%d", day, r, j);
            /* The background never holds more than LOAD_MAX_PERCENT of a
             * resource at once: an offer of a fifth of it always finds
             * room now (the README's quick start relies on it). */
            const struct acc_calendar *cal = acc_ledger_calendar_locked(s->ledger, r);
            if (acc_calendar_peak(cal, start, start + dur) + amount >
                    capacity * LOAD_MAX_PERCENT / 100 ||
                acc_ledger_book_locked(s->ledger, keys[n], r, start, start + dur, amount,
                                       "background"))
                continue; /* does not fit beside earlier bookings: skip it */
            made[n] = keys[n];
            n++;
        }
    }
    /* Awaited under the lock: rare (a day at a time), and the day must not
     * be generated twice. */
    struct acc_sql_ticket *w = NULL;
    rc = acc_ledger_persist_locked(s->ledger, made, n, day, &w, err);
    if (!rc)
        rc = acc_ledger_wait(s->ledger, w, err);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            acc_ledger_unbook_locked(s->ledger, keys[i]);
    }
    return rc;
}

acc_err simsite_load_until_locked(struct simsite *s, acc_time until, struct acc_error *err)
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

static const char *const own_keys[] = {"load", "seed", "load_days", "load_percent", NULL};

static bool own_key(const char *key)
{
    for (size_t i = 0; own_keys[i]; i++) {
        if (strcmp(own_keys[i], key) == 0)
            return true;
    }
    return false;
}

static acc_err own_setting(struct simsite *s, const char *k, const char *v, struct acc_error *err)
{
    int64_t n;
    acc_err rc = ACC_OK;
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
    }
    return rc;
}

/* The settings into s and o, as open and check read them.  *key: the
 * setting at fault. */
static acc_err read_settings(struct simsite *s, const struct acc_adapter_env *env,
                             struct acc_ledger_options *o, const char **key, struct acc_error *err)
{
    s->load = false;
    s->load_days = 14;
    s->load_percent = 30;
    s->seed = acc_fnv1a64(env->name);
    acc_ledger_options_init(o);
    o->snapshot = env->snapshot;
    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        acc_err rc;
        *key = k;
        if (acc_ledger_takes(k))
            rc = acc_ledger_option(o, k, v, err);
        else if (own_key(k))
            rc = own_setting(s, k, v, err);
        else
            return acc_error_set(err, ACC_ERR_CONFIG, "unknown setting '%s'", k);
        if (rc) {
            acc_error_prefix(err, "setting '%s'", k);
            return ACC_ERR_CONFIG;
        }
    }
    *key = NULL;
    return ACC_OK;
}

const struct acc_adapter_setting simsite_settings[] = {
    {"load", "maybe"},
    {"seed", "-1"},
    {"load_days", "-1"},
    {"load_percent", "0"},
    {"calendar", "/nonexistent/calendar.db"},
    {"on_conflict", "panic"},
    {"max_later", "soon"},
    {NULL, NULL},
};

acc_err simsite_check(const struct acc_adapter_env *env, const char **key, struct acc_error *err)
{
    struct simsite s = {0};
    struct acc_ledger_options o;
    return read_settings(&s, env, &o, key, err);
}

acc_err simsite_open(struct simsite *s, const char *kind, const struct acc_adapter_env *env,
                     struct acc_error *err)
{
    s->kind = kind;
    pthread_cond_init(&s->wake, NULL);
    s->name = strdup(env->name);
    if (!s->name)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_ledger_options o;
    const char *key;
    acc_err rc = read_settings(s, env, &o, &key, err);
    if (rc)
        return rc;
    /* A simulated calendar commits without fsync (synchronous=NORMAL)
     * whatever [database] durable says: it survives a crash of accordd,
     * which is what its tests and demos need, and an fsync per booking
     * would double the cost of every negotiation against it. */
    return acc_ledger_open(env->name, env->db_path, &o, false, &s->ledger, err);
}

acc_err simsite_start(struct simsite *s, struct acc_error *err)
{
    acc_err rc = acc_ledger_load(s->ledger, err);
    if (rc)
        return rc;
    s->loaded_until_day = acc_now() / DAY - 1;
    acc_ledger_lock(s->ledger);
    rc = simsite_load_until_locked(s, (acc_now() / DAY + s->load_days + 1) * DAY, err);
    acc_ledger_unlock(s->ledger);
    return rc;
}

void simsite_close(void *state)
{
    struct simsite *s = state;
    acc_ledger_free(s->ledger);
    free(s->name);
    pthread_cond_destroy(&s->wake);
}
