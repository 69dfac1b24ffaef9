/* SPDX-License-Identifier: Apache-2.0 */
/* tc.c - the `tc` network adapter: bandwidth booked on a ledger as
 * sim-network books it (lib/ledger serves preview, reserve, query and
 * cancel), and put on the wire with Linux traffic control once the
 * reservation's endpoints are handed over (provision).  See
 * docs/adapters/tc.md and tc_internal.h. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "tc_internal.h"

#define DAY 86400

/* ---------------------------------------------------------------- open */

static acc_err load_prov(void *ctx, struct tc_prov *p, const char *link_name, struct acc_error *err)
{
    struct tc *t = ctx;
    for (size_t i = 0; i < t->n_links; i++) {
        if (strcmp(t->links[i].name, link_name) == 0) {
            p->link = i;
            p->adopt = true;
            if (acc_map_put(&t->provs, p->key, p) == ACC_OK)
                return ACC_OK;
            tc_prov_free(p);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    acc_log_warn("%s: provision %s names link %s, no longer configured: dropped", t->name, p->key,
                 link_name);
    tc_prov_free(p);
    return ACC_OK;
}

/* The ledger's settings (calendar, on_conflict, max_later) into o.  *key:
 * the setting at fault. */
static acc_err ledger_settings(struct acc_ledger_options *o, const struct acc_adapter_env *env,
                               const char **key, struct acc_error *err)
{
    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key;
        *key = k;
        if (acc_ledger_takes(k) && acc_ledger_option(o, k, env->settings[i].value, err)) {
            acc_error_prefix(err, "setting '%s'", k);
            return ACC_ERR_CONFIG;
        }
    }
    *key = NULL;
    return ACC_OK;
}

/* tc's own settings into t, whose links are set; then every link has a
 * path both ways.  Nothing is run: open and check share it. */
static acc_err own_settings(struct tc *t, const struct acc_adapter_env *env,
                            const char **state_file, const char **key, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        *key = k;
        if (!acc_ledger_takes(k) && (rc = tc_setting(t, k, v, state_file, err)))
            acc_error_prefix(err, "setting '%s'", k);
    }
    if (rc)
        return rc;
    *key = NULL;
    for (size_t i = 0; !rc && i < t->n_links; i++) {
        for (int s = 0; !rc && s < 2; s++) {
            if (!t->links[i].n_devs[s])
                rc = acc_error_set(err, ACC_ERR_CONFIG,
                                   "link %s: no path.%s.%s (the devices that traffic leaving %s "
                                   "passes); both directions are needed",
                                   t->links[i].name, t->links[i].name, t->links[i].site[s],
                                   t->links[i].site[s]);
        }
    }
    return rc;
}

/* What own_settings and open_ read of the devices and links. */
static void free_topology(struct tc *t)
{
    for (size_t i = 0; i < t->n_devs; i++) {
        free(t->devs[i].netns);
        free(t->devs[i].dev);
    }
    for (size_t i = 0; i < t->n_links; i++) {
        free(t->links[i].site[0]);
        free(t->links[i].site[1]);
    }
    free(t->links);
}

/* The settings as open reads them, with no ledger, store, audit thread or
 * tc command: nothing outside is touched (and root is not needed). */
static acc_err check(const struct acc_adapter_env *env, const char **key, struct acc_error *err)
{
    struct acc_ledger_options o;
    acc_ledger_options_init(&o);
    acc_err rc = ledger_settings(&o, env, key, err);
    if (rc)
        return rc;
    struct tc *t = calloc(1, sizeof *t);
    if (!t || !(t->links = calloc(env->n_links + 1, sizeof *t->links))) {
        free(t);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < env->n_links; i++) {
        const struct acc_link_def *d = &env->links[i];
        t->links[i] = (struct tc_link){.name = d->name,
                                       .site = {acc_strdup(d->site_a), acc_strdup(d->site_b)},
                                       .capacity = d->capacity};
        t->n_links = i + 1;
        if (!t->links[i].site[0] || !t->links[i].site[1])
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    const char *state_file = NULL;
    if (!rc)
        rc = own_settings(t, env, &state_file, key, err);
    if (!rc && (rc = tc_store_check(env->db_path, env->name, state_file, err)))
        *key = state_file ? "state" : NULL;
    free_topology(t);
    free(t);
    return rc;
}

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct tc *t = state;
    t->ceil = TC_CEIL_RATE;
    t->quantum = 15140;
    t->audit_ms = 5000;
    t->grace = 2;
    t->timeout_ms = 5000;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->audit_lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    acc_map_init(&t->provs);
    const char *state_file = NULL;
    struct acc_ledger_options o;
    acc_ledger_options_init(&o);
    t->links = calloc(env->n_links + 1, sizeof *t->links);
    if (!t->links)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    /* The ledger first: it owns the name and the links' resources.  It
     * commits without fsync, as sim-network's calendar (tc booked through
     * that code before the ledger was a module): whatever [database]
     * durable says, as before. */
    const char *key;
    acc_err rc = ledger_settings(&o, env, &key, err);
    if (!rc)
        rc = acc_ledger_open(env->name, env->db_path, &o, false, &t->ledger, err);
    if (!rc)
        t->name = acc_ledger_name(t->ledger);
    for (size_t i = 0; !rc && i < env->n_links; i++) {
        const struct acc_link_def *d = &env->links[i];
        rc = acc_ledger_add_resource(t->ledger, d->name, d->capacity, err);
        if (rc)
            break;
        t->links[i] = (struct tc_link){.name = acc_ledger_resource_name(t->ledger, i),
                                       .site = {acc_strdup(d->site_a), acc_strdup(d->site_b)},
                                       .capacity = d->capacity};
        t->n_links = i + 1;
        if (!t->links[i].site[0] || !t->links[i].site[1])
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!rc)
        rc = own_settings(t, env, &state_file, &key, err);
    if (!rc)
        rc = acc_ledger_load(t->ledger, err);
    if (!rc)
        rc = tc_store_open(env->db_path, env->name, state_file, env->durable, &t->store, err);
    if (!rc)
        rc = tc_store_purge(t->store, acc_now() - DAY, err);
    if (!rc)
        rc = tc_store_load(t->store, load_prov, t, err);
    if (!rc)
        rc = tc_audit_start(t, err);
    return rc;
}

static void free_prov(const char *key, void *value, void *ctx)
{
    (void)key;
    (void)ctx;
    tc_prov_free(value);
}

static void close_(void *state)
{
    struct tc *t = state;
    tc_audit_stop(t);
    tc_store_close(t->store);
    acc_map_each(&t->provs, free_prov, NULL);
    acc_map_release(&t->provs);
    free_topology(t);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->audit_lock);
    pthread_cond_destroy(&t->wake);
    acc_ledger_free(t->ledger);
}

/* ------------------------------------------------------------ the bookings */

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    struct tc *t = state;
    return acc_ledger_preview(t->ledger, NULL, res, from, until, duration, out, err);
}

static acc_err preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                                 acc_time from, acc_time until, int64_t duration,
                                 struct acc_frames *out, struct acc_error *err)
{
    struct tc *t = state;
    return acc_ledger_preview(t->ledger, old_key, res, from, until, duration, out, err);
}

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct tc *t = state;
    return acc_ledger_reserve(t->ledger, key, NULL, res, start, duration, out, err);
}

static acc_err reserve_replacing(void *state, const char *key, const char *old_key,
                                 const struct acc_resource *res, acc_time start, int64_t duration,
                                 struct acc_reservation *out, struct acc_error *err)
{
    struct tc *t = state;
    return acc_ledger_reserve(t->ledger, key, old_key, res, start, duration, out, err);
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    struct tc *t = state;
    (void)local_id; /* keys are unique in the ledger */
    return acc_ledger_query(t->ledger, key, out, err);
}

/* ---------------------------------------------------------------- provision */

static acc_err check_addrs(const char *const *v, size_t n, const char *site, struct acc_error *err)
{
    if (n > TC_MAX_ADDRS)
        return acc_error_set(err, ACC_ERR_INVALID, "more than %d addresses for site %s",
                             TC_MAX_ADDRS, site);
    for (size_t i = 0; i < n; i++) {
        struct in_addr a;
        if (inet_pton(AF_INET, v[i], &a) != 1)
            return acc_error_set(err, ACC_ERR_INVALID, "'%s' (site %s) is not an IPv4 address",
                                 v[i], site);
    }
    return ACC_OK;
}

static bool same_addrs(char *const *have, size_t n_have, const char *const *v, size_t n)
{
    if (n_have != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(have[i], v[i]) != 0)
            return false;
    }
    return true;
}

static acc_err copy_addrs(struct tc_prov *p, int side, const char *const *v, size_t n)
{
    p->addrs[side] = calloc(n ? n : 1, sizeof *p->addrs[side]);
    if (!p->addrs[side])
        return ACC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!(p->addrs[side][i] = acc_strdup(v[i])))
            return ACC_ERR_NOMEM;
        p->n_addrs[side] = i + 1;
    }
    return ACC_OK;
}

struct ids {
    bool used[TC_ID_MAX + 1];
};

static void mark_id(const char *key, void *value, void *ctx)
{
    (void)key;
    struct ids *ids = ctx;
    const struct tc_prov *p = value;
    if (p->id <= TC_ID_MAX)
        ids->used[p->id] = true;
}

/* The lowest free leaf class id, or 0; the caller holds the lock. */
static unsigned free_id(struct tc *t)
{
    struct ids *ids = calloc(1, sizeof *ids);
    unsigned id = 0;
    if (!ids)
        return 0;
    acc_map_each(&t->provs, mark_id, ids);
    for (unsigned i = TC_ID_MIN; i <= TC_ID_MAX && !id; i++) {
        if (!ids->used[i])
            id = i;
    }
    free(ids);
    return id;
}

static acc_err provision(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err)
{
    struct tc *t = state;
    acc_err rc = check_addrs(flow->addrs_a, flow->n_a, flow->site_a, err);
    if (!rc)
        rc = check_addrs(flow->addrs_b, flow->n_b, flow->site_b, err);
    if (rc)
        return rc;
    /* The booking decides the link and the times. */
    struct acc_ledger_booking bk;
    if (!acc_ledger_get(t->ledger, key, &bk))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", t->name, key);
    const struct tc_link *l = &t->links[bk.res];
    const char *const *v[2] = {flow->addrs_a, flow->addrs_b};
    size_t n[2] = {flow->n_a, flow->n_b};
    if (strcmp(flow->site_a, l->site[1]) == 0 && strcmp(flow->site_b, l->site[0]) == 0) {
        v[0] = flow->addrs_b, v[1] = flow->addrs_a;
        n[0] = flow->n_b, n[1] = flow->n_a;
    } else if (strcmp(flow->site_a, l->site[0]) != 0 || strcmp(flow->site_b, l->site[1]) != 0) {
        return acc_error_set(err, ACC_ERR_INVALID,
                             "%s: reservation %s is on link %s (%s, %s), not between %s and %s",
                             t->name, key, l->name, l->site[0], l->site[1], flow->site_a,
                             flow->site_b);
    }

    pthread_mutex_lock(&t->lock);
    struct tc_prov *old = acc_map_get(&t->provs, key);
    if (old && same_addrs(old->addrs[0], old->n_addrs[0], v[0], n[0]) &&
        same_addrs(old->addrs[1], old->n_addrs[1], v[1], n[1])) {
        pthread_mutex_unlock(&t->lock);
        return ACC_OK; /* handed over before: nothing changes */
    }
    struct tc_prov *p = calloc(1, sizeof *p);
    if (!p || !(p->key = acc_strdup(key)) ||
        !(p->local_id = acc_strdup(local_id ? local_id : "")) || copy_addrs(p, 0, v[0], n[0]) ||
        copy_addrs(p, 1, v[1], n[1])) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    p->link = bk.res;
    p->start = bk.start;
    p->end = bk.end;
    p->amount = bk.amount;
    if (old) {
        /* New endpoints for the same reservation: its record carries on. */
        p->id = old->id;
        p->activated = old->activated;
        p->violated_at = old->violated_at;
        memcpy(p->why, old->why, sizeof p->why);
        p->bytes = old->bytes, p->packets = old->packets, p->drops = old->drops;
        p->active = old->active;
        p->adopt = old->adopt;
        memcpy(p->last, old->last, sizeof p->last);
        memcpy(p->have_last, old->have_last, sizeof p->have_last);
    } else if (!(p->id = free_id(t))) {
        rc = acc_error_set(err, ACC_ERR_BUSY, "%s: all %d class ids are in use", t->name,
                           TC_ID_MAX - TC_ID_MIN + 1);
        goto out;
    }
    rc = tc_store_put(t->store, p, l->name, err);
    if (!rc)
        rc = acc_map_put(&t->provs, key, p) ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory")
                                            : ACC_OK;
    if (!rc) {
        tc_prov_free(old);
        p = NULL;
    } else if (!old) {
        /* the row went in, the map did not: take the row back */
        tc_store_delete(t->store, key, NULL);
    }
out:
    pthread_mutex_unlock(&t->lock);
    tc_prov_free(p);
    if (!rc)
        tc_audit_kick(t);
    return rc;
}

static acc_err provision_status(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err)
{
    struct tc *t = state;
    acc_time now = acc_now(), new_at = 0;
    char why[sizeof out->why] = "";
    pthread_mutex_lock(&t->lock);
    struct tc_prov *p = acc_map_get(&t->provs, key);
    struct tc_term term = {0};
    if (p) {
        term = (struct tc_term){true, p->start, p->end, p->activated, p->violated_at};
    } else {
        struct acc_ledger_booking b;
        if (!acc_ledger_get(t->ledger, key, &b)) {
            pthread_mutex_unlock(&t->lock);
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", t->name, key);
        }
        term = (struct tc_term){false, b.start, b.end, 0, 0};
    }
    out->state = tc_guarantee(&term, now, t->grace, &new_at, why, sizeof why);
    out->provisioned = term.provisioned;
    out->start = term.start;
    out->end = term.end;
    out->violated_at = term.violated_at;
    if (new_at) {
        out->violated_at = new_at;
        acc_strlcpy(out->why, why, sizeof out->why);
    }
    if (p) {
        if (new_at) { /* Violated stays Violated: recorded */
            p->violated_at = new_at;
            acc_strlcpy(p->why, why, sizeof p->why);
            if (tc_store_put(t->store, p, t->links[p->link].name, NULL))
                acc_log_warn("%s: violation of %s not recorded", t->name, key);
        } else {
            acc_strlcpy(out->why, p->why, sizeof out->why);
        }
        out->active = p->active;
        out->activated = p->activated;
        out->bytes = p->bytes;
        out->packets = p->packets;
        out->drops = p->drops;
    }
    pthread_mutex_unlock(&t->lock);
    return ACC_OK;
}

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    struct tc *t = state;
    (void)local_id; /* keys are unique in the ledger */
    acc_err rc = acc_ledger_cancel(t->ledger, key, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&t->lock);
    struct tc_prov *p = acc_map_get(&t->provs, key);
    if (p && !(rc = tc_store_delete(t->store, key, err)))
        acc_map_take(&t->provs, key);
    pthread_mutex_unlock(&t->lock);
    if (!p || rc)
        return rc;
    bool was_on = p->active || (p->start <= acc_now() && acc_now() < p->end);
    tc_prov_free(p);
    /* Terminate: its classes go at once, not at the next audit. */
    return was_on ? tc_reconcile(t, err) : ACC_OK;
}

static acc_err health(void *state, struct acc_health *out)
{
    struct tc *t = state;
    pthread_mutex_lock(&t->lock);
    size_t n = t->provs.n;
    char last[ACC_TIME_STRLEN];
    acc_time_format(t->last_audit, last);
    out->up = t->last_error[0] == '\0';
    if (out->up)
        snprintf(out->detail, sizeof out->detail, "tc on %zu devices; %zu provisions; audited %s",
                 t->n_devs, n, t->last_audit ? last : "never");
    else
        snprintf(out->detail, sizeof out->detail, "%s", t->last_error);
    pthread_mutex_unlock(&t->lock);
    return ACC_OK;
}

const struct acc_adapter_ops acc_tc_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "tc",
    .caps = ACC_CAP_BANDWIDTH | ACC_CAP_PROVISION | ACC_CAP_THREADSAFE | ACC_CAP_REPLACE,
    .state_size = sizeof(struct tc),
    .open = open_,
    .close = close_,
    .check = check,
    .settings = (const struct acc_adapter_setting[]){{"path.", "-/not a device"},
                                                     {"ceil", "fast"},
                                                     {"quantum", "1"},
                                                     {"audit_interval", "1ms"},
                                                     {"command_timeout", "1ms"},
                                                     {"activation_grace", "forever"},
                                                     {"state", "/nonexistent/tc.db"},
                                                     {"calendar", "/nonexistent/calendar.db"},
                                                     {"on_conflict", "panic"},
                                                     {"max_later", "soon"},
                                                     {NULL, NULL}},
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
    .provision = provision,
    .provision_status = provision_status,
    .preview_replacing = preview_replacing,
    .reserve_replacing = reserve_replacing,
};
