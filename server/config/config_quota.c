/* SPDX-License-Identifier: Apache-2.0 */
/* config_quota.c - [quota] (every user's limits) and [quota USER] (one
 * user's, over [quota]): the keys, the users they name, and the look-up
 * the service makes for each request. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "config_internal.h"

/* The keys, in the order of struct acc_quota (bit k of `given` is key k). */
static const struct {
    const char *name;
    bool duration;
    size_t offset;
} keys[] = {
    {"max_nodes", false, offsetof(struct acc_quota, nodes)},
    {"max_bandwidth", false, offsetof(struct acc_quota, bandwidth)},
    {"max_duration", true, offsetof(struct acc_quota, duration)},
    {"max_advance", true, offsetof(struct acc_quota, advance)},
    {"max_agreements", false, offsetof(struct acc_quota, agreements)},
    {"max_quotes", false, offsetof(struct acc_quota, quotes)},
    {"max_node_hours", false, offsetof(struct acc_quota, node_hours)},
    {"max_mbit_hours", false, offsetof(struct acc_quota, mbit_hours)},
    {"max_agreements_per_address", false, offsetof(struct acc_quota, agreements_per_address)},
    {"max_quotes_per_address", false, offsetof(struct acc_quota, quotes_per_address)},
};
enum { N_KEYS = sizeof keys / sizeof keys[0] };

#define FIELD(q, k) ((int64_t *)((char *)(q) + keys[k].offset))

void cfg_quota_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                    void *ctx),
                         void *ctx)
{
    for (size_t k = 0; k < N_KEYS; k++)
        fn("quota", keys[k].name, keys[k].duration ? "PT0S" : "0", ctx);
}

void cfg_quota_defaults(struct acc_quota *q)
{
    /* Within them: every example of docs/examples and tests/data/offers
     * (offer-flexible.xml has 164 nodes, offer-window.xml starts in 2030);
     * beyond them: one user with every node of the embedded testbed (224)
     * or for longer than a week.  100000 node-hours on one site are its
     * 128 nodes for a month (four of the longest agreements on the whole
     * of it), where one user once held a site for five years with 252
     * agreements of a week; 10^7 Mbit-hours are a 10 Gbit/s link for six
     * weeks.  The shares per address are set by cfg_quota_finish. */
    *q = (struct acc_quota){
        .nodes = 192,
        .bandwidth = 20000,
        .duration = 7 * 86400,
        .advance = 1826 * 86400, /* about five years */
        .agreements = 256,
        .quotes = 20,
        .node_hours = 100000,
        .mbit_hours = 10000000,
    };
}

/* Keys of [quota] alone: the bounds per client address, which only hold
 * without [auth], where there is no [quota USER]. */
static bool address_key(size_t k)
{
    return keys[k].offset == offsetof(struct acc_quota, agreements_per_address) ||
           keys[k].offset == offsetof(struct acc_quota, quotes_per_address);
}

/* Unless given: a quarter of a shared limit, so that one address cannot
 * take the whole of it, but never less than a quarter of the shared
 * default (64 agreements, 5 quotes): a small limit set for a trial or a
 * test is then the address's too. */
static int64_t quarter(int64_t limit, int64_t least)
{
    if (limit == ACC_QUOTA_UNLIMITED)
        return ACC_QUOTA_UNLIMITED;
    return limit / 4 > least ? limit / 4 : least;
}

static struct acc_user_quota *user_entry(struct acc_config *c, const char *user)
{
    for (size_t i = 0; i < c->n_user_quotas; i++) {
        if (strcmp(c->user_quotas[i].user, user) == 0)
            return &c->user_quotas[i];
    }
    struct acc_user_quota *v = realloc(c->user_quotas, (c->n_user_quotas + 1) * sizeof *v);
    if (!v)
        return NULL;
    c->user_quotas = v;
    struct acc_user_quota *u = &v[c->n_user_quotas];
    memset(u, 0, sizeof *u);
    size_t n = strlen(user) + 7;
    u->user = strdup(user);
    u->section = malloc(n);
    if (!u->user || !u->section) {
        free(u->user);
        free(u->section);
        return NULL;
    }
    snprintf(u->section, n, "quota %s", user);
    c->n_user_quotas++;
    return u;
}

/* A value: a whole number or a duration (at least 1), or "unlimited". */
static int set_value(struct cfg_parse *p, const char *section, size_t k, const char *v,
                     int64_t *out)
{
    struct acc_error e;
    if (strcmp(v, "unlimited") == 0) {
        *out = ACC_QUOTA_UNLIMITED;
        return 1;
    }
    if (keys[k].duration) {
        if (acc_duration_parse(v, out, &e) || *out < 1)
            return cfg_bad(p, section, "%s: '%s' is not a duration such as P7D, or unlimited",
                           keys[k].name, v);
        return 1;
    }
    if (acc_parse_i64(v, 1, (int64_t)1 << 40, out, &e))
        return cfg_bad(p, section, "%s: %s (a number, or unlimited)", keys[k].name, e.msg);
    return 1;
}

int cfg_quota_key(struct cfg_parse *p, const char *user, const char *k, const char *v)
{
    char section[160];
    snprintf(section, sizeof section, user ? "quota %.140s" : "quota", user);
    size_t i = 0;
    while (i < N_KEYS && strcmp(keys[i].name, k) != 0)
        i++;
    if (i == N_KEYS)
        return cfg_bad(p, section,
                       "unknown key '%s' (max_nodes, max_bandwidth, max_duration, max_advance, "
                       "max_agreements, max_quotes, max_node_hours, max_mbit_hours, "
                       "max_agreements_per_address, max_quotes_per_address)",
                       k);
    if (user && !*user)
        return cfg_bad(p, section, "names no user: [quota USER]");
    if (user && address_key(i))
        return cfg_bad(p, section,
                       "%s is a key of [quota]: it bounds a client address without [auth]", k);
    struct acc_user_quota *u = user ? user_entry(p->c, user) : NULL;
    if (user && !u)
        return 0; /* out of memory */
    struct acc_quota *q = u ? &u->q : &p->c->quota;
    if (!set_value(p, section, i, v, FIELD(q, i)))
        return 0;
    if (u)
        u->given |= 1u << i;
    return 1;
}

static bool is_user(const struct acc_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_users; i++) {
        if (strcmp(c->users[i].name, name) == 0)
            return true;
    }
    return false;
}

acc_err cfg_quota_finish(struct acc_config *c, struct acc_conf_report *r)
{
    acc_err rc = ACC_OK;
    if (!c->quota.agreements_per_address)
        c->quota.agreements_per_address = quarter(c->quota.agreements, 64);
    if (!c->quota.quotes_per_address)
        c->quota.quotes_per_address = quarter(c->quota.quotes, 5);
    for (size_t i = 0; i < c->n_user_quotas; i++) {
        struct acc_user_quota *u = &c->user_quotas[i];
        if (!acc_config_auth(c))
            rc = acc_conf_report_after(r, u->section, NULL,
                                       "names a user, but there is no [auth]: without users "
                                       "every request counts as one, held to [quota]");
        else if (!c->n_issuers && !is_user(c, u->user)) /* an issuer's users come with tokens */
            rc = acc_conf_report_after(r, u->section, NULL,
                                       "no user %s in [auth] (tokens or client_certificates)",
                                       u->user);
        for (size_t k = 0; k < N_KEYS; k++) {
            if (!(u->given & (1u << k)))
                *FIELD(&u->q, k) = *FIELD(&c->quota, k);
        }
    }
    return rc;
}

static void print_keys(const char *section, const struct acc_quota *q, unsigned given, FILE *out)
{
    fprintf(out, "\n[%s]\n", section);
    for (size_t k = 0; k < N_KEYS; k++) {
        int64_t v = *FIELD(q, k);
        char d[ACC_DURATION_STRLEN];
        if (!(given & (1u << k)))
            continue;
        if (v == ACC_QUOTA_UNLIMITED)
            snprintf(d, sizeof d, "unlimited");
        else if (keys[k].duration)
            acc_duration_format(v, d);
        else
            snprintf(d, sizeof d, "%lld", (long long)v);
        fprintf(out, "%s = %s\n", keys[k].name, d);
    }
}

void cfg_quota_print(const struct acc_config *c, FILE *out)
{
    print_keys("quota", &c->quota, ~0u, out);
    for (size_t i = 0; i < c->n_user_quotas; i++)
        print_keys(c->user_quotas[i].section, &c->user_quotas[i].q, c->user_quotas[i].given, out);
}

void cfg_quota_release(struct acc_config *c)
{
    for (size_t i = 0; i < c->n_user_quotas; i++) {
        free(c->user_quotas[i].user);
        free(c->user_quotas[i].section);
    }
    free(c->user_quotas);
    c->user_quotas = NULL;
    c->n_user_quotas = 0;
}

const struct acc_quota *acc_config_quota(const struct acc_config *c, const char *user,
                                         const char **section)
{
    for (size_t i = 0; user && i < c->n_user_quotas; i++) {
        if (strcmp(c->user_quotas[i].user, user) == 0) {
            if (section)
                *section = c->user_quotas[i].section;
            return &c->user_quotas[i].q;
        }
    }
    /* the quota= of an [issuer] map line: [quota NAME] for this user */
    const char *as = user ? acc_kv_get(c->quota_of, c->n_quota_of, user) : NULL;
    for (size_t i = 0; as && i < c->n_user_quotas; i++) {
        if (strcmp(c->user_quotas[i].user, as) == 0) {
            if (section)
                *section = c->user_quotas[i].section;
            return &c->user_quotas[i].q;
        }
    }
    if (section)
        *section = "quota";
    return &c->quota;
}
