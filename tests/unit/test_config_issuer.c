/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_issuer.c - [issuer NAME] (server/config/config_issuer.c):
 * its keys and defaults, what it refuses, its map lines, and which Accord
 * user, [quota] section and account a token's claims map to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/jwt/jwt.h"
#include "config.h"
#include "testutil.h"

#define SITE "[site a]\nadapter = sim-batch\nnodes = 4\n"

static const char base[] = "[issuer wlcg]\n"
                           "url = https://wlcg.example.org/\n"
                           "audience = https://accord.example.org\n"
                           "map = sub:0001-abcd alice quota=big account=nobody\n"
                           "map = group:/accord/admins ops quota=big\n"
                           "map = group:/accord %u\n"
                           "[issuer egi]\n"
                           "url = https://aai.egi.example/realms/egi\n"
                           "audience = accord\n"
                           "algorithms = ES256\n"
                           "leeway = PT10S\n"
                           "jwks_refresh = 5\n"
                           "user_claim = preferred_username\n"
                           "groups_claim = eduperson_entitlement\n"
                           "scope_create = accord:book\n"
                           "[quota big]\nmax_nodes = 4\n" SITE;

static void load(const char *text, struct acc_config *c)
{
    struct acc_error err;
    acc_err rc = acc_config_load_string(text, "t.ini", c, &err);
    if (rc)
        printf("\n  %s\n", err.msg);
    ACC_ASSERT_OK(rc);
}

static void test_keys_and_defaults(void)
{
    struct acc_config c;
    load(base, &c);
    CU_ASSERT_TRUE(acc_config_auth(&c)); /* an issuer alone asks for credentials */
    CU_ASSERT_EQUAL(c.n_users, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_issuers, 2);
    const struct acc_issuer_cfg *w = acc_config_issuer(&c, "https://wlcg.example.org/");
    const struct acc_issuer_cfg *e = acc_config_issuer(&c, "https://aai.egi.example/realms/egi");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_NULL(acc_config_issuer(&c, "https://wlcg.example.org")); /* exactly */
    CU_ASSERT_EQUAL(w->algs, ACC_JWT_RS256 | ACC_JWT_ES256);
    CU_ASSERT_EQUAL(w->leeway, 60);
    CU_ASSERT_EQUAL(w->jwks_refresh, 60);
    CU_ASSERT_EQUAL(w->jwks_max_age, 3600);
    CU_ASSERT_EQUAL(w->timeout, 5);
    CU_ASSERT_STRING_EQUAL(acc_issuer_scope(w, ACC_OP_READ), "compute.read");
    CU_ASSERT_STRING_EQUAL(acc_issuer_scope(w, ACC_OP_CREATE), "compute.create");
    CU_ASSERT_STRING_EQUAL(acc_issuer_scope(w, ACC_OP_MODIFY), "compute.modify");
    CU_ASSERT_STRING_EQUAL(acc_issuer_scope(w, ACC_OP_CANCEL), "compute.cancel");
    CU_ASSERT_EQUAL(w->n_maps, 3);
    CU_ASSERT_EQUAL(e->algs, ACC_JWT_ES256);
    CU_ASSERT_EQUAL(e->leeway, 10);
    CU_ASSERT_EQUAL(e->jwks_refresh, 5);
    CU_ASSERT_STRING_EQUAL(e->user_claim, "preferred_username");
    CU_ASSERT_STRING_EQUAL(e->groups_claim, "eduperson_entitlement");
    CU_ASSERT_STRING_EQUAL(acc_issuer_scope(e, ACC_OP_CREATE), "accord:book");
    /* the map lines' quota= and account= */
    const char *section = NULL;
    CU_ASSERT_EQUAL(acc_config_quota(&c, "alice", &section)->nodes, 4);
    CU_ASSERT_STRING_EQUAL(section, "quota big");
    CU_ASSERT_EQUAL(acc_config_quota(&c, "ops", &section)->nodes, 4);
    CU_ASSERT_STRING_EQUAL(acc_config_quota(&c, "bob", &section) == &c.quota ? section : "",
                           "quota");
    CU_ASSERT_STRING_EQUAL(acc_kv_get(c.accounts, c.n_accounts, "alice"), "nobody");
    acc_config_release(&c);
}

static void refused(const char *text, const char *why)
{
    struct acc_config c;
    struct acc_error err;
    acc_err rc = acc_config_load_string(text, "t.ini", &c, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
    if (rc == ACC_OK) {
        acc_config_release(&c);
        printf("\n  not refused: %s\n", text);
        return;
    }
    if (!strstr(err.msg, why))
        printf("\n  '%s' does not say '%s'\n", err.msg, why);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, why));
}

#define ISSUER "[issuer i]\nurl = https://idp.example.org\naudience = a\n"

static void test_refused(void)
{
    refused("[issuer i]\naudience = a\n" SITE, "needs url");
    refused("[issuer i]\nurl = https://idp.example.org\n" SITE, "needs audience");
    refused("[issuer i]\nurl = http://idp.example.org\naudience = a\n" SITE, "https://");
    refused(ISSUER "algorithms = RS256 HS256\n" SITE, "'HS256' is not allowed");
    refused(ISSUER "algorithms = none\n" SITE, "'none' is not allowed");
    refused(ISSUER "leeway = PT1H\n" SITE, "leeway");
    refused(ISSUER "jwks_refresh = 0\n" SITE, "jwks_refresh");
    refused(ISSUER "scope_read = two words\n" SITE, "one word");
    refused(ISSUER "audience = b\n" SITE, "given twice");
    refused(ISSUER "colour = blue\n" SITE, "unknown key 'colour'");
    refused(ISSUER "map = sub:x\n" SITE, "expected 'MATCH USER");
    refused(ISSUER "map = subject:x alice\n" SITE, "expected 'MATCH USER");
    refused(ISSUER "map = * al/ice\n" SITE, "not a user name");
    refused(ISSUER "map = * %u quota=big\n[quota big]\nmax_nodes=1\n" SITE, "need a user name");
    refused(ISSUER "map = * alice quota=nosuch\n" SITE, "names no [quota nosuch]");
    refused(ISSUER "map = * alice account=nobody\n[accounts]\nalice = root\n" SITE,
            "the account of alice is nobody here but root elsewhere");
    refused(ISSUER "[issuer j]\nurl = https://idp.example.org\naudience = b\n" SITE,
            "the url of [issuer i] too");
    refused("[issuer bad/name]\nurl = https://idp.example.org\naudience = a\n" SITE,
            "not an issuer name");
}

/* The user of a token's claims, and the line that took it. */
static acc_err user_of(const struct acc_issuer_cfg *is, const char *sub, const char *claim,
                       const char *g1, char *name, const struct acc_issuer_map **map,
                       struct acc_error *err)
{
    char *groups[] = {(char *)"/other", (char *)g1};
    return acc_issuer_user(is, sub, claim, groups, g1 ? 2 : 1, name, 128, map, err);
}

static void test_mapping(void)
{
    struct acc_config c;
    load(base, &c);
    const struct acc_issuer_cfg *w = &c.issuers[0], *e = &c.issuers[1];
    char name[128];
    const struct acc_issuer_map *m;
    struct acc_error err;
    /* by subject, first line first (also when a group would match later) */
    ACC_ASSERT_OK(user_of(w, "0001-abcd", "0001-abcd", "/accord/admins", name, &m, &err));
    CU_ASSERT_STRING_EQUAL(name, "alice");
    CU_ASSERT_STRING_EQUAL(m->account, "nobody");
    /* by group */
    ACC_ASSERT_OK(user_of(w, "0002", "0002", "/accord/admins", name, &m, &err));
    CU_ASSERT_STRING_EQUAL(name, "ops");
    CU_ASSERT_STRING_EQUAL(m->quota, "big");
    /* %u: the user claim's value */
    ACC_ASSERT_OK(user_of(w, "carol", "carol", "/accord", name, &m, &err));
    CU_ASSERT_STRING_EQUAL(name, "carol");
    CU_ASSERT_PTR_NULL(m->user);
    /* %u with a value that is no user name */
    CU_ASSERT_EQUAL(user_of(w, "c@x", "c@x", "/accord", name, &m, &err), ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is not a user name"));
    /* no line takes it */
    CU_ASSERT_EQUAL(user_of(w, "0003", "0003", "/elsewhere", name, &m, &err), ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no map line of [issuer wlcg] takes subject 0003"));
    /* no map lines: the user claim names the user; none, no user */
    ACC_ASSERT_OK(user_of(e, "s-77", "dave", NULL, name, &m, &err));
    CU_ASSERT_STRING_EQUAL(name, "dave");
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(user_of(e, "s-77", NULL, NULL, name, &m, &err), ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no \"preferred_username\" claim"));
    acc_config_release(&c);
}

/* --print-config reads back to the same issuers. */
static void test_print_round_trip(void)
{
    struct acc_config c, again;
    load(base, &c);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    acc_config_print(&c, f);
    fclose(f);
    load(text, &again);
    CU_ASSERT_EQUAL_FATAL(again.n_issuers, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct acc_issuer_cfg *a = &c.issuers[i], *b = &again.issuers[i];
        CU_ASSERT_STRING_EQUAL(a->url, b->url);
        CU_ASSERT_STRING_EQUAL(a->audience, b->audience);
        CU_ASSERT_EQUAL(a->algs, b->algs);
        CU_ASSERT_EQUAL(a->leeway, b->leeway);
        CU_ASSERT_EQUAL(a->jwks_refresh, b->jwks_refresh);
        CU_ASSERT_EQUAL(a->n_maps, b->n_maps);
        for (int op = 0; op < ACC_OP__COUNT; op++)
            CU_ASSERT_STRING_EQUAL(acc_issuer_scope(a, (enum acc_token_op)op),
                                   acc_issuer_scope(b, (enum acc_token_op)op));
    }
    CU_ASSERT_STRING_EQUAL(again.issuers[0].maps[0].match, "0001-abcd");
    CU_ASSERT_STRING_EQUAL(again.issuers[0].maps[1].quota, "big");
    CU_ASSERT_PTR_NULL(again.issuers[0].maps[2].user);
    acc_config_release(&again);
    acc_config_release(&c);
    free(text);
}

static const struct acc_test_case tests[] = {
    {"keys and defaults; quota= and account=", test_keys_and_defaults},
    {"what it refuses", test_refused},
    {"a token's claims to a user", test_mapping},
    {"--print-config reads back", test_print_round_trip},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config_issuer", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
