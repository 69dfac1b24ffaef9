/* SPDX-License-Identifier: Apache-2.0 */
/* site_issuer.c - accord-site's [issuer NAME] sections: the issuers whose
 * tokens a site with identity = token checks itself (lib/jwt), with the
 * keys, defaults and bounds of accordd's [issuer NAME] (the verifier's
 * settings; map lines and scopes are accordd's alone: the site maps with
 * its mapfile).  docs/site.md, "The user's own token". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/common/conf.h"
#include "../lib/common/strutil.h"
#include "../lib/jwt/jwt.h"
#include "site_internal.h"

#define MAX_ISSUERS 16
#define MAX_FIELD   512

static struct acc_site_issuer_cfg *issuer_of(struct acc_site_config *c, const char *name)
{
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
    struct acc_site_issuer_cfg *is = &c->issuers[c->n_issuers];
    /* accordd's defaults (server/config/config_issuer.c) */
    *is = (struct acc_site_issuer_cfg){
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

static int set_word(struct acc_conf_report *r, const char *section, char **field, const char *k,
                    const char *v)
{
    if (!*v || strlen(v) > MAX_FIELD || strpbrk(v, " \t"))
        return acc_conf_report_bad(r, section, "%s must be one word (no spaces, at most %d bytes)",
                                   k, MAX_FIELD);
    if (*field)
        return acc_conf_report_bad(r, section, "%s is given twice", k);
    return acc_conf_set_str(field, v);
}

static int read_algorithms(struct acc_conf_report *r, const char *section,
                           struct acc_site_issuer_cfg *is, const char *v)
{
    struct acc_error e;
    if (acc_jwt_algorithms_parse(v, &is->algs, &e))
        return acc_conf_report_bad(r, section, "%s", e.msg);
    return 1;
}

static int read_seconds(struct acc_conf_report *r, const char *section, const char *k,
                        const char *v, int64_t min, int64_t max, int64_t *out)
{
    struct acc_error e;
    if (acc_conf_seconds(v, min, max, out, &e))
        return acc_conf_report_bad(r, section, "%s: %s", k, e.msg);
    return 1;
}

int site_issuer_key(struct acc_conf_report *r, struct acc_site_config *c, const char *section,
                    const char *name, const char *k, const char *v)
{
    if (!acc_name_valid(name, 63))
        return acc_conf_report_bad(r, section,
                                   "'%s' is not an issuer name (letters, digits, . _ -)", name);
    struct acc_site_issuer_cfg *is = issuer_of(c, name);
    if (!is)
        return acc_conf_report_bad(r, section, "more than %d [issuer] sections, or out of memory",
                                   MAX_ISSUERS);
    if (strcmp(k, "url") == 0) {
        if (strncmp(v, "https://", 8) != 0 || strlen(v) < 9)
            return acc_conf_report_bad(r, section,
                                       "url must be the issuer's https:// URL, as its tokens' "
                                       "\"iss\" says it (its keys are fetched over HTTPS only)");
        return set_word(r, section, &is->url, k, v);
    }
    if (strcmp(k, "audience") == 0)
        return set_word(r, section, &is->audience, k, v);
    if (strcmp(k, "ca_file") == 0)
        return set_word(r, section, &is->ca_file, k, v);
    if (strcmp(k, "groups_claim") == 0)
        return set_word(r, section, &is->groups_claim, k, v);
    if (strcmp(k, "algorithms") == 0)
        return read_algorithms(r, section, is, v);
    if (strcmp(k, "leeway") == 0)
        return read_seconds(r, section, k, v, 0, 300, &is->leeway);
    if (strcmp(k, "jwks_refresh") == 0)
        return read_seconds(r, section, k, v, 1, 86400, &is->jwks_refresh);
    if (strcmp(k, "jwks_max_age") == 0)
        return read_seconds(r, section, k, v, 1, 7 * 86400, &is->jwks_max_age);
    if (strcmp(k, "timeout") == 0)
        return read_seconds(r, section, k, v, 1, 60, &is->timeout);
    return acc_conf_report_bad(r, section,
                               "unknown key '%s' (url, audience, ca_file, algorithms, leeway, "
                               "jwks_refresh, jwks_max_age, timeout, groups_claim)",
                               k);
}

void site_issuer_check(const struct acc_site_config *c, struct acc_conf_report *r)
{
    for (size_t i = 0; i < c->n_issuers; i++) {
        const struct acc_site_issuer_cfg *is = &c->issuers[i];
        char section[160];
        snprintf(section, sizeof section, "issuer %.140s", is->name);
        if (!is->url)
            acc_conf_report_after(r, section, NULL,
                                  "needs url (the issuer's https:// URL, its tokens' \"iss\")");
        if (!is->audience)
            acc_conf_report_after(r, section, NULL,
                                  "needs audience (this site's name in its tokens' \"aud\"; a "
                                  "token for another service is refused)");
        for (size_t j = 0; j < i; j++) {
            if (is->url && c->issuers[j].url && strcmp(is->url, c->issuers[j].url) == 0)
                acc_conf_report_after(r, section, "url", "the url of [issuer %s] too",
                                      c->issuers[j].name);
        }
        if (is->ca_file && access(is->ca_file, R_OK) != 0)
            acc_conf_report_after(r, section, "ca_file", "ca_file %s cannot be read", is->ca_file);
    }
    if (c->identity_token && c->n_issuers == 0)
        acc_conf_report_after(r, "daemon", "identity",
                              "token needs an [issuer NAME] section (whose tokens this site "
                              "checks: url, audience)");
}

const struct acc_site_issuer_cfg *site_issuer_find(const struct acc_site_issuer_cfg *v, size_t n,
                                                   const char *iss)
{
    for (size_t i = 0; iss && i < n; i++) {
        if (v[i].url && strcmp(v[i].url, iss) == 0)
            return &v[i];
    }
    return NULL;
}

void site_issuer_verifier(const struct acc_site_issuer_cfg *is, struct acc_jwt_issuer *out)
{
    *out = (struct acc_jwt_issuer){.url = is->url,
                                   .audience = is->audience,
                                   .ca_file = is->ca_file,
                                   .algs = is->algs,
                                   .leeway = is->leeway,
                                   .refresh_min = is->jwks_refresh,
                                   .max_age = is->jwks_max_age,
                                   .timeout = is->timeout,
                                   .groups_claim = is->groups_claim};
}

void site_issuer_print(const struct acc_site_config *c, FILE *out)
{
    for (size_t i = 0; i < c->n_issuers; i++) {
        const struct acc_site_issuer_cfg *is = &c->issuers[i];
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
        acc_conf_print_str(out, "groups_claim", is->groups_claim);
    }
}

void site_issuers_free(struct acc_site_issuer_cfg *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].url);
        free(v[i].audience);
        free(v[i].ca_file);
        free(v[i].groups_claim);
    }
    free(v);
}
