/* SPDX-License-Identifier: Apache-2.0 */
/* config_issuer.c - [issuer NAME]: a trusted issuer of JWT access tokens
 * (lib/jwt verifies them), what its tokens' scopes are called, and its
 * map lines: which of its tokens are which Accord user, with the [quota]
 * section and the account that go with them.  docs/security.md,
 * "Tokens from an identity provider", explains them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/jwt/jwt.h"
#include "config_internal.h"

#define MAX_ISSUERS 16
#define MAX_MAPS    1000
#define MAX_FIELD   512

static const char *const default_scope[ACC_OP__COUNT] = {
    [ACC_OP_READ] = "compute.read",
    [ACC_OP_CREATE] = "compute.create",
    [ACC_OP_MODIFY] = "compute.modify",
    [ACC_OP_CANCEL] = "compute.cancel",
};
static const char *const scope_key[ACC_OP__COUNT] = {
    [ACC_OP_READ] = "scope_read",
    [ACC_OP_CREATE] = "scope_create",
    [ACC_OP_MODIFY] = "scope_modify",
    [ACC_OP_CANCEL] = "scope_cancel",
};

static const struct {
    const char *key, *bad;
} keys[] = {
    {"url", "http://idp.example.org"},
    {"audience", ""},
    {"ca_file", ""},
    {"algorithms", "HS256"},
    {"leeway", "PT1H"},
    {"jwks_refresh", "0"},
    {"jwks_max_age", "0"},
    {"timeout", "0"},
    {"user_claim", ""},
    {"groups_claim", ""},
    {"scope_read", "two words"},
    {"scope_create", ""},
    {"scope_modify", ""},
    {"scope_cancel", ""},
    {"map", "sub:x"},
};

void cfg_issuer_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                     void *ctx),
                          void *ctx)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        fn("issuer", keys[i].key, keys[i].bad, ctx);
}

bool acc_config_auth(const struct acc_config *c)
{
    return c->n_users > 0 || c->n_issuers > 0;
}

const struct acc_issuer_cfg *acc_config_issuer(const struct acc_config *c, const char *iss)
{
    for (size_t i = 0; iss && i < c->n_issuers; i++) {
        if (strcmp(c->issuers[i].url, iss) == 0)
            return &c->issuers[i];
    }
    return NULL;
}

const char *acc_issuer_scope(const struct acc_issuer_cfg *is, enum acc_token_op op)
{
    return is->scopes[op] ? is->scopes[op] : default_scope[op];
}

/* ------------------------------------------------------------- reading */

static struct acc_issuer_cfg *issuer_of(struct cfg_parse *p, const char *name)
{
    struct acc_config *c = p->c;
    for (size_t i = 0; i < c->n_issuers; i++) {
        if (strcmp(c->issuers[i].name, name) == 0)
            return &c->issuers[i];
    }
    if (c->n_issuers >= MAX_ISSUERS)
        return NULL;
    void *v = realloc(c->issuers, (c->n_issuers + 1) * sizeof *c->issuers);
    if (!v)
        return NULL;
    c->issuers = v;
    struct acc_issuer_cfg *is = &c->issuers[c->n_issuers];
    *is = (struct acc_issuer_cfg){
        .algs = ACC_JWT_RS256 | ACC_JWT_ES256,
        .leeway = 60,
        .jwks_refresh = 60,
        .jwks_max_age = 3600,
        .timeout = 5,
    };
    if (!(is->name = strdup(name)))
        return NULL;
    c->n_issuers++;
    return is;
}

/* One word without spaces, at most MAX_FIELD bytes. */
static bool word(const char *v)
{
    return *v && strlen(v) <= MAX_FIELD && !strpbrk(v, " \t");
}

static int set_word(struct cfg_parse *p, const char *section, char **field, const char *k,
                    const char *v)
{
    if (!word(v))
        return cfg_bad(p, section, "%s must be one word (no spaces, at most %d bytes)", k,
                       MAX_FIELD);
    if (*field)
        return cfg_bad(p, section, "%s is given twice", k);
    return acc_conf_set_str(field, v);
}

static int read_algorithms(struct cfg_parse *p, const char *section, struct acc_issuer_cfg *is,
                           const char *v)
{
    struct acc_error e;
    if (acc_jwt_algorithms_parse(v, &is->algs, &e))
        return cfg_bad(p, section, "%s", e.msg);
    return 1;
}

/* "MATCH USER [quota=NAME] [account=NAME]"; MATCH: *, sub:VALUE,
 * group:VALUE; USER: a name or %u (the user claim's value). */
static int read_map(struct cfg_parse *p, const char *section, struct acc_issuer_cfg *is,
                    const char *v)
{
    if (is->n_maps >= MAX_MAPS)
        return cfg_bad(p, section, "more than %d map lines", MAX_MAPS);
    char buf[4 * MAX_FIELD];
    if (strlen(v) >= sizeof buf)
        return cfg_bad(p, section, "map line longer than %zu bytes", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", v);
    char *words[5], *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == 4)
            return cfg_bad(p, section, "map: too many words in '%s'", v);
        words[n++] = t;
    }
    static const char usage[] =
        "map: expected 'MATCH USER [quota=NAME] [account=NAME]' (MATCH: *, sub:VALUE or "
        "group:VALUE; USER: a user name or %%u, the user claim's value)";
    if (n < 2)
        return cfg_bad(p, section, usage);
    struct acc_issuer_map m = {0};
    if (strcmp(words[0], "*") == 0)
        m.kind = ACC_MAP_ANY;
    else if (strncmp(words[0], "sub:", 4) == 0 && words[0][4])
        m.kind = ACC_MAP_SUB;
    else if (strncmp(words[0], "group:", 6) == 0 && words[0][6])
        m.kind = ACC_MAP_GROUP;
    else
        return cfg_bad(p, section, usage);
    const char *user = words[1];
    if (strcmp(user, "%u") != 0 && !acc_name_valid(user, 127))
        return cfg_bad(p, section, "map: '%s' is not a user name (nor %%u)", user);
    const char *quota = NULL, *account = NULL;
    for (size_t i = 2; i < n; i++) {
        if (strncmp(words[i], "quota=", 6) == 0 && acc_name_valid(words[i] + 6, 127) && !quota)
            quota = words[i] + 6;
        else if (strncmp(words[i], "account=", 8) == 0 && words[i][8] && !account)
            account = words[i] + 8;
        else
            return cfg_bad(p, section, usage);
    }
    if ((quota || account) && strcmp(user, "%u") == 0)
        return cfg_bad(p, section,
                       "map: quota= and account= need a user name, not %%u (a user named by "
                       "the claim has their own [quota NAME] and [accounts] entry, by name)");
    bool ok = true;
    if (m.kind != ACC_MAP_ANY)
        ok &= (m.match = strdup(strchr(words[0], ':') + 1)) != NULL;
    if (strcmp(user, "%u") != 0)
        ok &= (m.user = strdup(user)) != NULL;
    if (quota)
        ok &= (m.quota = strdup(quota)) != NULL;
    if (account)
        ok &= (m.account = strdup(account)) != NULL;
    void *nv = ok ? realloc(is->maps, (is->n_maps + 1) * sizeof *is->maps) : NULL;
    if (!nv) {
        free(m.match);
        free(m.user);
        free(m.quota);
        free(m.account);
        return 0;
    }
    is->maps = nv;
    is->maps[is->n_maps++] = m;
    return 1;
}

static int read_seconds(struct cfg_parse *p, const char *section, const char *k, const char *v,
                        int64_t min, int64_t max, int64_t *out)
{
    struct acc_error e;
    if (acc_conf_seconds(v, min, max, out, &e))
        return cfg_bad(p, section, "%s: %s", k, e.msg);
    return 1;
}

int cfg_issuer_key(struct cfg_parse *p, const char *name, const char *k, const char *v)
{
    char section[160];
    snprintf(section, sizeof section, "issuer %.140s", name);
    if (!acc_name_valid(name, 63))
        return cfg_bad(p, section, "'%s' is not an issuer name (letters, digits, . _ -)", name);
    struct acc_issuer_cfg *is = issuer_of(p, name);
    if (!is)
        return cfg_bad(p, section, "more than %d [issuer] sections, or out of memory", MAX_ISSUERS);
    if (strcmp(k, "url") == 0) {
        if (strncmp(v, "https://", 8) != 0 || !word(v) || strlen(v) < 9)
            return cfg_bad(p, section,
                           "url must be the issuer's https:// URL, as its tokens' \"iss\" "
                           "says it (its keys are fetched over HTTPS only)");
        return set_word(p, section, &is->url, k, v);
    }
    if (strcmp(k, "audience") == 0)
        return set_word(p, section, &is->audience, k, v);
    if (strcmp(k, "ca_file") == 0)
        return set_word(p, section, &is->ca_file, k, v);
    if (strcmp(k, "user_claim") == 0)
        return set_word(p, section, &is->user_claim, k, v);
    if (strcmp(k, "groups_claim") == 0)
        return set_word(p, section, &is->groups_claim, k, v);
    for (int op = 0; op < ACC_OP__COUNT; op++) {
        if (strcmp(k, scope_key[op]) == 0)
            return set_word(p, section, &is->scopes[op], k, v);
    }
    if (strcmp(k, "algorithms") == 0)
        return read_algorithms(p, section, is, v);
    if (strcmp(k, "leeway") == 0)
        return read_seconds(p, section, k, v, 0, 300, &is->leeway);
    if (strcmp(k, "jwks_refresh") == 0)
        return read_seconds(p, section, k, v, 1, 86400, &is->jwks_refresh);
    if (strcmp(k, "jwks_max_age") == 0)
        return read_seconds(p, section, k, v, 1, 7 * 86400, &is->jwks_max_age);
    if (strcmp(k, "timeout") == 0)
        return read_seconds(p, section, k, v, 1, 60, &is->timeout);
    if (strcmp(k, "map") == 0)
        return read_map(p, section, is, v);
    return cfg_bad(p, section,
                   "unknown key '%s' (url, audience, ca_file, algorithms, leeway, jwks_refresh, "
                   "jwks_max_age, timeout, user_claim, groups_claim, scope_read, scope_create, "
                   "scope_modify, scope_cancel, map)",
                   k);
}

/* --------------------------------------------------------- after reading */

static bool has_quota_section(const struct acc_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_user_quotas; i++) {
        if (strcmp(c->user_quotas[i].user, name) == 0)
            return true;
    }
    return false;
}

/* A map line's quota= or account= for user into kv: the same user twice
 * must say the same. */
static void bind_user(struct acc_config *c, struct acc_conf_report *r, const char *section,
                      struct acc_kv **kv, size_t *n, const char *user, const char *value,
                      const char *what)
{
    const char *had = acc_kv_get(*kv, *n, user);
    if (had && strcmp(had, value) != 0)
        acc_conf_report_after(r, section, "map",
                              "map: %s of %s is %s here but %s elsewhere (an [accounts] entry "
                              "or another map line)",
                              what, user, value, had);
    else if (!had && acc_kv_add(kv, n, user, value) != ACC_OK)
        acc_conf_report_after(r, section, "map", "out of memory");
    (void)c;
}

void cfg_issuer_finish(struct acc_config *c, struct acc_conf_report *r)
{
    for (size_t i = 0; i < c->n_issuers; i++) {
        struct acc_issuer_cfg *is = &c->issuers[i];
        char section[160];
        snprintf(section, sizeof section, "issuer %.140s", is->name);
        if (!is->url)
            acc_conf_report_after(r, section, NULL,
                                  "needs url (the issuer's https:// URL, its tokens' \"iss\")");
        if (!is->audience)
            acc_conf_report_after(r, section, NULL,
                                  "needs audience (what its tokens' \"aud\" must name for "
                                  "this server; a token for another service is refused)");
        for (size_t j = 0; j < i; j++) {
            if (is->url && c->issuers[j].url && strcmp(is->url, c->issuers[j].url) == 0)
                acc_conf_report_after(r, section, "url", "the url of [issuer %s] too",
                                      c->issuers[j].name);
        }
        bool by_claim = is->n_maps == 0;
        for (size_t m = 0; m < is->n_maps; m++)
            by_claim = by_claim || !is->maps[m].user;
        if (by_claim && (c->n_users || c->n_issuers > 1))
            acc_conf_report_warn(r, section, is->n_maps ? "map" : NULL,
                                 "names its users by the token's %s claim: a subject named as a "
                                 "user of %s is that user, agreements and account alike; map "
                                 "lines that name the users keep them apart",
                                 is->user_claim ? is->user_claim : "sub",
                                 c->n_users ? "[auth]" : "another [issuer]");
        for (size_t m = 0; m < is->n_maps; m++) {
            const struct acc_issuer_map *map = &is->maps[m];
            if (map->quota && !has_quota_section(c, map->quota))
                acc_conf_report_after(r, section, "map",
                                      "map: quota=%s names no [quota %s] section", map->quota,
                                      map->quota);
            if (map->quota && map->user)
                bind_user(c, r, section, &c->quota_of, &c->n_quota_of, map->user, map->quota,
                          "the quota");
            if (map->account && map->user)
                bind_user(c, r, section, &c->accounts, &c->n_accounts, map->user, map->account,
                          "the account");
        }
    }
}

/* -------------------------------------------------------------- mapping */

static bool takes(const struct acc_issuer_map *m, const char *sub, char *const *groups,
                  size_t n_groups)
{
    if (m->kind == ACC_MAP_ANY)
        return true;
    if (m->kind == ACC_MAP_SUB)
        return sub && strcmp(sub, m->match) == 0;
    for (size_t i = 0; i < n_groups; i++) {
        if (strcmp(groups[i], m->match) == 0)
            return true;
    }
    return false;
}

acc_err acc_issuer_user(const struct acc_issuer_cfg *is, const char *sub, const char *user_claim,
                        char *const *groups, size_t n_groups, char *name, size_t size,
                        const struct acc_issuer_map **map, struct acc_error *err)
{
    *map = NULL;
    const char *user = user_claim;
    char shown[100];
    if (is->n_maps) {
        size_t m = 0;
        while (m < is->n_maps && !takes(&is->maps[m], sub, groups, n_groups))
            m++;
        if (m == is->n_maps) {
            acc_jwt_printable(sub, shown, sizeof shown, 80);
            return acc_error_set(err, ACC_ERR_FORBIDDEN,
                                 "no map line of [issuer %s] takes subject %s or its %zu groups: "
                                 "this server has no user for it",
                                 is->name, sub ? shown : "(none)", n_groups);
        }
        *map = &is->maps[m];
        if (is->maps[m].user)
            user = is->maps[m].user;
    }
    const char *claim = is->user_claim ? is->user_claim : "sub";
    if (!user)
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "the token has no \"%s\" claim (user_claim of [issuer %s]) to name "
                             "its user",
                             claim, is->name);
    if (!acc_name_valid(user, 127) || strlen(user) >= size) {
        acc_jwt_printable(user, shown, sizeof shown, 80);
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "the token's \"%s\" (%s) is not a user name of this server "
                             "(letters, digits, . _ -); a map line of [issuer %s] can name one",
                             claim, shown, is->name);
    }
    memcpy(name, user, strlen(user) + 1);
    return ACC_OK;
}

/* -------------------------------------------------------------- printing */

void cfg_issuer_print(const struct acc_config *c, FILE *out)
{
    for (size_t i = 0; i < c->n_issuers; i++) {
        const struct acc_issuer_cfg *is = &c->issuers[i];
        fprintf(out, "\n[issuer %s]\n", is->name);
        acc_conf_print_str(out, "url", is->url);
        acc_conf_print_str(out, "audience", is->audience);
        acc_conf_print_str(out, "ca_file", is->ca_file);
        fprintf(out, "algorithms = %s%s%s\n", is->algs & ACC_JWT_RS256 ? "RS256" : "",
                is->algs == (ACC_JWT_RS256 | ACC_JWT_ES256) ? " " : "",
                is->algs & ACC_JWT_ES256 ? "ES256" : "");
        acc_conf_print_duration(out, "leeway", is->leeway);
        acc_conf_print_duration(out, "jwks_refresh", is->jwks_refresh);
        acc_conf_print_duration(out, "jwks_max_age", is->jwks_max_age);
        acc_conf_print_duration(out, "timeout", is->timeout);
        fprintf(out, "user_claim = %s\n", is->user_claim ? is->user_claim : "sub");
        acc_conf_print_str(out, "groups_claim", is->groups_claim);
        for (int op = 0; op < ACC_OP__COUNT; op++)
            fprintf(out, "%s = %s\n", scope_key[op], acc_issuer_scope(is, (enum acc_token_op)op));
        for (size_t m = 0; m < is->n_maps; m++) {
            const struct acc_issuer_map *map = &is->maps[m];
            fprintf(out, "map = %s%s%s %s",
                    map->kind == ACC_MAP_SUB     ? "sub:"
                    : map->kind == ACC_MAP_GROUP ? "group:"
                                                 : "*",
                    map->match ? map->match : "", "", map->user ? map->user : "%u");
            if (map->quota)
                fprintf(out, " quota=%s", map->quota);
            if (map->account)
                fprintf(out, " account=%s", map->account);
            fputc('\n', out);
        }
    }
}

void cfg_issuer_release(struct acc_config *c)
{
    for (size_t i = 0; i < c->n_issuers; i++) {
        struct acc_issuer_cfg *is = &c->issuers[i];
        free(is->name);
        free(is->url);
        free(is->audience);
        free(is->ca_file);
        free(is->user_claim);
        free(is->groups_claim);
        for (int op = 0; op < ACC_OP__COUNT; op++)
            free(is->scopes[op]);
        for (size_t m = 0; m < is->n_maps; m++) {
            free(is->maps[m].match);
            free(is->maps[m].user);
            free(is->maps[m].quota);
            free(is->maps[m].account);
        }
        free(is->maps);
    }
    free(c->issuers);
    c->issuers = NULL;
    c->n_issuers = 0;
    acc_kv_free(c->quota_of, c->n_quota_of);
    c->quota_of = NULL;
    c->n_quota_of = 0;
}
