/* tc.c - the `tc` network adapter: bandwidth booked in a calendar like
 * sim-network's (the simulator's operations serve preview, reserve and
 * query), and put on the wire with Linux traffic control once the
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

/* ----------------------------------------------------------------- settings */

/* Settings handed on to the calendar (sim_core.h). */
static const char *const calendar_keys[] = {"calendar", "on_conflict", "max_later", NULL};

static bool in(const char *k, const char *const *v)
{
    for (size_t i = 0; v[i]; i++) {
        if (strcmp(v[i], k) == 0)
            return true;
    }
    return false;
}

/* "5s", "500ms", "2m", "1h", "5" (seconds) or an ISO duration ("PT5S"), in ms within
 * [min_ms, max_ms]. */
static acc_err parse_ms(const char *v, int64_t min_ms, int64_t max_ms, int64_t *out,
                        struct acc_error *err)
{
    int64_t n = -1;
    if (v[0] == 'P') {
        if (acc_duration_parse(v, &n, NULL) == ACC_OK && n >= 0 && n <= INT64_MAX / 1000)
            n *= 1000;
        else
            n = -1;
    } else {
        char *end = NULL;
        long long x = (v[0] >= '0' && v[0] <= '9') ? strtoll(v, &end, 10) : -1;
        if (x >= 0 && x < INT64_MAX / 1000 && end) {
            if (strcmp(end, "ms") == 0)
                n = x;
            else if (strcmp(end, "s") == 0 || *end == '\0')
                n = x * 1000;
            else if (strcmp(end, "m") == 0 && x < INT64_MAX / 60000)
                n = x * 60000;
            else if (strcmp(end, "h") == 0 && x < INT64_MAX / 3600000)
                n = x * 3600000;
        }
    }
    if (n < 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' is not a duration such as 5s or 500ms", v);
    if (n < min_ms || n > max_ms)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s is out of range (%" PRId64 " ms to %" PRId64 " ms)", v, min_ms,
                             max_ms);
    *out = n;
    return ACC_OK;
}

static bool dev_name_ok(const char *s, size_t len)
{
    if (len == 0 || len >= TC_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

/* The index of device netns/dev, added when new. */
static acc_err add_dev(struct tc *t, const char *ns, size_t ns_len, const char *dev, size_t dev_len,
                       int64_t capacity, size_t *idx, struct acc_error *err)
{
    for (size_t i = 0; i < t->n_devs; i++) {
        struct tc_dev *d = &t->devs[i];
        if (strlen(d->netns) == ns_len && strncmp(d->netns, ns, ns_len) == 0 &&
            strlen(d->dev) == dev_len && strncmp(d->dev, dev, dev_len) == 0) {
            if (capacity > d->capacity)
                d->capacity = capacity;
            *idx = i;
            return ACC_OK;
        }
    }
    if (t->n_devs == TC_MAX_DEVS)
        return acc_error_set(err, ACC_ERR_CONFIG, "more than %d devices", TC_MAX_DEVS);
    struct tc_dev *d = &t->devs[t->n_devs];
    d->netns = acc_strndup(ns, ns_len);
    d->dev = acc_strndup(dev, dev_len);
    if (!d->netns || !d->dev) {
        free(d->netns);
        free(d->dev);
        d->netns = d->dev = NULL;
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    d->capacity = capacity;
    *idx = t->n_devs++;
    return ACC_OK;
}

/* path.LINK.SITE = NETNS/DEV ... */
static acc_err parse_path(struct tc *t, const char *key, const char *v, struct acc_error *err)
{
    const char *ls = key + 5, *dot = strrchr(ls, '.');
    struct tc_link *l = NULL;
    int side = -1;
    for (size_t i = 0; dot && i < t->n_links && !l; i++) {
        if (strlen(t->links[i].name) == (size_t)(dot - ls) &&
            strncmp(t->links[i].name, ls, (size_t)(dot - ls)) == 0)
            l = &t->links[i];
    }
    if (!l)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "'%s': no such link in this network (path.LINK.SITE)", key);
    for (int s = 0; s < 2; s++) {
        if (strcmp(dot + 1, l->site[s]) == 0)
            side = s;
    }
    if (side < 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s': %s is not a site of link %s (%s, %s)", key,
                             dot + 1, l->name, l->site[0], l->site[1]);
    if (l->n_devs[side])
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' is given twice", key);
    for (const char *p = v + strspn(v, " \t"); *p; p += strspn(p, " \t")) {
        size_t len = strcspn(p, " \t"), ns_len = strcspn(p, "/");
        const char *dev = p + ns_len + 1;
        size_t dev_len = ns_len < len ? len - ns_len - 1 : 0;
        bool ns_ok = ns_len == 1 ? p[0] == '-' : ns_len > 0 && ns_len < TC_NETNS_MAX;
        for (size_t i = 0; ns_ok && !(ns_len == 1 && p[0] == '-') && i < ns_len; i++) {
            char c = p[i];
            ns_ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
        }
        if (ns_len >= len || !ns_ok || !dev_name_ok(dev, dev_len))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "'%s': '%.*s' is not NETNS/DEV (a namespace name or '-', a "
                                 "device name of at most %d characters)",
                                 key, (int)len, p, TC_NAME_MAX - 1);
        if (l->n_devs[side] == TC_MAX_PATH)
            return acc_error_set(err, ACC_ERR_CONFIG, "'%s': more than %d devices", key,
                                 TC_MAX_PATH);
        size_t idx = 0;
        acc_err rc = add_dev(t, p, ns_len, dev, dev_len, l->capacity, &idx, err);
        if (rc)
            return rc;
        l->devs[side][l->n_devs[side]++] = idx;
        p += len;
    }
    if (!l->n_devs[side])
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' lists no device", key);
    return ACC_OK;
}

static acc_err parse_setting(struct tc *t, const char *k, const char *v, const char **state_file,
                             struct acc_error *err)
{
    int64_t n;
    if (strncmp(k, "path.", 5) == 0)
        return parse_path(t, k, v, err);
    if (strcmp(k, "ceil") == 0) {
        if (strcmp(v, "rate") == 0)
            t->ceil = TC_CEIL_RATE;
        else if (strcmp(v, "link") == 0)
            t->ceil = TC_CEIL_LINK;
        else
            return acc_error_set(err, ACC_ERR_CONFIG, "ceil: '%s' is neither rate nor link", v);
        return ACC_OK;
    }
    if (strcmp(k, "quantum") == 0) {
        if (acc_parse_i64(v, 1000, 200000, &n, err))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "quantum: '%s' is not a byte count from 1000 to 200000", v);
        t->quantum = n;
        return ACC_OK;
    }
    if (strcmp(k, "audit_interval") == 0)
        return parse_ms(v, 100, 3600000, &t->audit_ms, err);
    if (strcmp(k, "command_timeout") == 0)
        return parse_ms(v, 100, 120000, &t->timeout_ms, err);
    if (strcmp(k, "activation_grace") == 0) {
        if (parse_ms(v, 0, 3600000, &n, err))
            return ACC_ERR_CONFIG;
        t->grace = n / 1000;
        return ACC_OK;
    }
    if (strcmp(k, "state") == 0) {
        *state_file = v;
        return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_CONFIG,
                         "unknown setting '%s' (tc takes path.LINK.SITE, ceil, quantum, "
                         "audit_interval, activation_grace, command_timeout, state, calendar, "
                         "on_conflict, max_later)",
                         k);
}

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
    acc_log_warn("%s: provision %s names link %s, no longer configured: dropped", t->sim.name,
                 p->key, link_name);
    tc_prov_free(p);
    return ACC_OK;
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
    struct acc_kv *cal = calloc(env->n_settings + 1, sizeof *cal);
    size_t n_cal = 0;
    acc_err rc = ACC_OK;
    t->links = calloc(env->n_links + 1, sizeof *t->links);
    if (!cal || !t->links) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* The calendar first: it owns the name and the links' resources. */
    for (size_t i = 0; i < env->n_settings; i++) {
        if (in(env->settings[i].key, calendar_keys))
            cal[n_cal++] = env->settings[i];
    }
    struct acc_adapter_env cenv = *env;
    cenv.settings = cal;
    cenv.n_settings = n_cal;
    rc = sim_open(&t->sim, "tc", &cenv, NULL, err);
    for (size_t i = 0; !rc && i < env->n_links; i++) {
        const struct acc_link_def *d = &env->links[i];
        rc = sim_add_resource(&t->sim, d->name, d->capacity, err);
        if (rc)
            break;
        t->links[i] = (struct tc_link){.name = t->sim.res[i].name,
                                       .site = {acc_strdup(d->site_a), acc_strdup(d->site_b)},
                                       .capacity = d->capacity};
        t->n_links = i + 1;
        if (!t->links[i].site[0] || !t->links[i].site[1])
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        if (!in(k, calendar_keys) && (rc = parse_setting(t, k, v, &state_file, err)))
            acc_error_prefix(err, "setting '%s'", k);
    }
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
    if (!rc)
        rc = sim_start(&t->sim, err);
    if (!rc)
        rc = tc_store_open(env->db_path, env->name, state_file, env->durable, &t->store, err);
    if (!rc)
        rc = tc_store_purge(t->store, acc_now() - DAY, err);
    if (!rc)
        rc = tc_store_load(t->store, load_prov, t, err);
    if (!rc)
        rc = tc_audit_start(t, err);
out:
    free(cal);
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
    for (size_t i = 0; i < t->n_devs; i++) {
        free(t->devs[i].netns);
        free(t->devs[i].dev);
    }
    for (size_t i = 0; i < t->n_links; i++) {
        free(t->links[i].site[0]);
        free(t->links[i].site[1]);
    }
    free(t->links);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->audit_lock);
    pthread_cond_destroy(&t->wake);
    sim_close(&t->sim);
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
    pthread_mutex_lock(&t->sim.lock);
    const struct sim_booking *b = acc_map_get(&t->sim.bookings, key);
    struct sim_booking bk = b ? *b : (struct sim_booking){0};
    pthread_mutex_unlock(&t->sim.lock);
    if (!b)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", t->sim.name, key);
    const struct tc_link *l = &t->links[bk.res];
    const char *const *v[2] = {flow->addrs_a, flow->addrs_b};
    size_t n[2] = {flow->n_a, flow->n_b};
    if (strcmp(flow->site_a, l->site[1]) == 0 && strcmp(flow->site_b, l->site[0]) == 0) {
        v[0] = flow->addrs_b, v[1] = flow->addrs_a;
        n[0] = flow->n_b, n[1] = flow->n_a;
    } else if (strcmp(flow->site_a, l->site[0]) != 0 || strcmp(flow->site_b, l->site[1]) != 0) {
        return acc_error_set(err, ACC_ERR_INVALID,
                             "%s: reservation %s is on link %s (%s, %s), not between %s and %s",
                             t->sim.name, key, l->name, l->site[0], l->site[1], flow->site_a,
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
        rc = acc_error_set(err, ACC_ERR_BUSY, "%s: all %d class ids are in use", t->sim.name,
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
        pthread_mutex_lock(&t->sim.lock);
        const struct sim_booking *b = acc_map_get(&t->sim.bookings, key);
        if (b)
            term = (struct tc_term){false, b->start, b->end, 0, 0};
        pthread_mutex_unlock(&t->sim.lock);
        if (!b) {
            pthread_mutex_unlock(&t->lock);
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", t->sim.name, key);
        }
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
                acc_log_warn("%s: violation of %s not recorded", t->sim.name, key);
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
    acc_err rc = sim_cancel(&t->sim, key, local_id, err);
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
    .preview = sim_preview,
    .reserve = sim_reserve,
    .query = sim_query,
    .cancel = cancel,
    .health = health,
    .interrupt = sim_interrupt,
    .provision = provision,
    .provision_status = provision_status,
    .preview_replacing = sim_preview_replacing,
    .reserve_replacing = sim_reserve_replacing,
};
