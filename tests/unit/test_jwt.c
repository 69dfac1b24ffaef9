/* SPDX-License-Identifier: Apache-2.0 */
/* test_jwt.c - lib/jwt without a provider: what passes for a JWT, the
 * unverified look at "iss" and its bounds, and the checks of the claims
 * once a signature holds (iss, aud, exp, nbf, iat with the leeway; the
 * user claim, groups and scopes taken, bounded).  The signatures and the
 * keys are checked against a real provider by test_oidc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/jwt/jwt_internal.h"
#include "testutil.h"

#define NOW 1800000000

static const struct acc_jwt_issuer issuer = {
    .url = "https://idp.example.org",
    .audience = "https://accord.example.org",
    .algs = ACC_JWT_RS256 | ACC_JWT_ES256,
    .leeway = 30,
};

/* base64url of s, without padding */
static void b64url(const char *s, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        out[o++] = a[(v >> 18) & 63];
        out[o++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = a[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = a[v & 63];
    }
    out[o] = '\0';
}

/* A token of header {"alg":"RS256"} and these claims, with a made-up
 * signature (never verified here). */
static char *token_of(const char *claims)
{
    char *t = malloc(strlen(claims) * 2 + 64);
    char h[64];
    b64url("{\"alg\":\"RS256\"}", h);
    strcpy(t, h);
    strcat(t, ".");
    b64url(claims, t + strlen(t));
    strcat(t, ".c2ln");
    return t;
}

/* jwt_claims_check on claims (JSON text): its code, *out filled. */
static acc_err check(const struct acc_jwt_issuer *is, const char *claims,
                     struct acc_jwt_claims *out, struct acc_error *err)
{
    json_error_t je;
    json_t *j = json_loads(claims, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    memset(out, 0, sizeof *out);
    acc_err rc = jwt_claims_check(is, j, NOW, out, err);
    json_decref(j);
    return rc;
}

static void test_looks_like(void)
{
    CU_ASSERT_TRUE(acc_jwt_looks_like("eyJh.eyJi.c2ln"));
    CU_ASSERT_TRUE(acc_jwt_looks_like("eyJh.eyJi.")); /* alg none: no signature */
    CU_ASSERT_FALSE(acc_jwt_looks_like("alice-token-0123456789abcdef"));
    CU_ASSERT_FALSE(acc_jwt_looks_like(".eyJi.c2ln"));
    CU_ASSERT_FALSE(acc_jwt_looks_like("eyJh..c2ln"));
    CU_ASSERT_FALSE(acc_jwt_looks_like("a.b.c.d"));
    CU_ASSERT_FALSE(acc_jwt_looks_like("a b.c.d"));
    CU_ASSERT_FALSE(acc_jwt_looks_like(NULL));
}

static void test_peek_issuer(void)
{
    char iss[128];
    struct acc_error err;
    char *t = token_of("{\"iss\":\"https://idp.example.org\",\"sub\":\"a\"}");
    ACC_ASSERT_OK(acc_jwt_peek_issuer(t, iss, sizeof iss, &err));
    CU_ASSERT_STRING_EQUAL(iss, "https://idp.example.org");
    free(t);
    t = token_of("{\"sub\":\"a\"}");
    CU_ASSERT_EQUAL(acc_jwt_peek_issuer(t, iss, sizeof iss, &err), ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "names no issuer"));
    free(t);
    t = token_of("[1,2]");
    CU_ASSERT_EQUAL(acc_jwt_peek_issuer(t, iss, sizeof iss, &err), ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a JSON object"));
    free(t);
    CU_ASSERT_EQUAL(acc_jwt_peek_issuer("eyJh.!!!.x", iss, sizeof iss, &err), ACC_ERR_UNAUTHORIZED);
    /* more claims than the bound */
    char claims[2048] = "{\"iss\":\"x\"";
    for (int i = 0; i < ACC_JWT_MAX_CLAIMS; i++)
        snprintf(claims + strlen(claims), sizeof claims - strlen(claims), ",\"c%d\":1", i);
    strcat(claims, "}");
    t = token_of(claims);
    CU_ASSERT_EQUAL(acc_jwt_peek_issuer(t, iss, sizeof iss, &err), ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than 64 members"));
    free(t);
    /* longer than the bound */
    char *big = malloc(ACC_JWT_MAX_TOKEN + 100);
    memset(big, 'a', ACC_JWT_MAX_TOKEN + 50);
    big[0] = 'e', big[10] = '.', big[20] = '.';
    big[ACC_JWT_MAX_TOKEN + 50] = '\0';
    CU_ASSERT_EQUAL(acc_jwt_peek_issuer(big, iss, sizeof iss, &err), ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer than 8192"));
    free(big);
}

static void test_audience_and_issuer(void)
{
    struct acc_jwt_claims c;
    struct acc_error err;
    ACC_ASSERT_OK(check(&issuer,
                        "{\"iss\":\"https://idp.example.org\",\"aud\":[\"x\","
                        "\"https://accord.example.org\"],\"exp\":1800000100,\"sub\":\"s1\"}",
                        &c, &err));
    CU_ASSERT_STRING_EQUAL(c.sub, "s1");
    CU_ASSERT_STRING_EQUAL(c.user, "s1"); /* user_claim: sub */
    CU_ASSERT_EQUAL(c.exp, 1800000100);
    acc_jwt_claims_release(&c);
    CU_ASSERT_EQUAL(check(&issuer,
                          "{\"iss\":\"https://idp.example.org\",\"aud\":\"https://other\","
                          "\"exp\":1800000100}",
                          &c, &err),
                    ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "wrong audience: the token is for https://other"));
    acc_jwt_claims_release(&c);
    CU_ASSERT_EQUAL(
        check(&issuer, "{\"iss\":\"https://idp.example.org\",\"exp\":1800000100}", &c, &err),
        ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no audience"));
    acc_jwt_claims_release(&c);
    CU_ASSERT_EQUAL(check(&issuer,
                          "{\"iss\":\"https://idp.example.org/\",\"aud\":\"https://"
                          "accord.example.org\",\"exp\":1800000100}",
                          &c, &err),
                    ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "issuer"));
    acc_jwt_claims_release(&c);
}

static void test_times(void)
{
    static const struct {
        const char *times;
        bool ok;
        const char *why;
    } cases[] = {
        {"\"exp\":1800000001", true, NULL},
        {"\"exp\":1799999975", true, NULL}, /* 25 s ago: within the leeway of 30 */
        {"\"exp\":1799999960", false, "expired (40 s ago"},
        {"\"exp\":1800000100.5", true, NULL},
        {"\"exp\":\"soon\"", false, "\"exp\" is not a number"},
        {"\"sub\":\"no exp\"", false, "no expiry"},
        {"\"exp\":1800000100,\"nbf\":1800000020", true, NULL},
        {"\"exp\":1800000100,\"nbf\":1800000040", false, "not valid yet"},
        {"\"exp\":1800000100,\"iat\":1800000060", false, "issued in the future"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char claims[512];
        snprintf(claims, sizeof claims,
                 "{\"iss\":\"https://idp.example.org\",\"aud\":\"https://accord.example.org\",%s}",
                 cases[i].times);
        struct acc_jwt_claims c;
        struct acc_error err = {0};
        acc_err rc = check(&issuer, claims, &c, &err);
        if ((rc == ACC_OK) != cases[i].ok || (cases[i].why && !strstr(err.msg, cases[i].why)))
            printf("\n  %s: %s\n", cases[i].times, rc ? err.msg : "passed");
        CU_ASSERT_EQUAL(rc == ACC_OK, cases[i].ok);
        if (cases[i].why)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].why));
        acc_jwt_claims_release(&c);
    }
}

static void test_groups_scopes_user(void)
{
    struct acc_jwt_claims c;
    struct acc_error err;
    const char *base = "\"iss\":\"https://idp.example.org\",\"aud\":\"https://accord.example.org\","
                       "\"exp\":1800000100,\"sub\":\"s1\"";
    char claims[1024];
    snprintf(claims, sizeof claims,
             "{%s,\"wlcg.groups\":[\"/cms\",\"/cms/prod\"],\"scope\":\"compute.read  "
             "compute.create\",\"eduperson_entitlement\":\"urn:x\"}",
             base);
    ACC_ASSERT_OK(check(&issuer, claims, &c, &err));
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 2);
    CU_ASSERT_STRING_EQUAL(c.groups[1], "/cms/prod");
    CU_ASSERT_EQUAL(c.n_scopes, 2);
    CU_ASSERT_TRUE(acc_jwt_has_scope(&c, "compute.create"));
    CU_ASSERT_FALSE(acc_jwt_has_scope(&c, "compute.cancel"));
    acc_jwt_claims_release(&c);
    /* eduperson_entitlement when wlcg.groups is absent; scp as an array */
    snprintf(claims, sizeof claims,
             "{%s,\"eduperson_entitlement\":\"urn:mace:egi.eu:group:x\",\"scp\":[\"compute."
             "cancel\"]}",
             base);
    ACC_ASSERT_OK(check(&issuer, claims, &c, &err));
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 1);
    CU_ASSERT_STRING_EQUAL(c.groups[0], "urn:mace:egi.eu:group:x");
    CU_ASSERT_TRUE(acc_jwt_has_scope(&c, "compute.cancel"));
    acc_jwt_claims_release(&c);
    /* a configured groups claim and user claim */
    struct acc_jwt_issuer is = issuer;
    is.groups_claim = "groups";
    is.user_claim = "preferred_username";
    snprintf(claims, sizeof claims,
             "{%s,\"groups\":\"/g\",\"wlcg.groups\":[\"/no\"],\"preferred_username\":\"ann\"}",
             base);
    ACC_ASSERT_OK(check(&is, claims, &c, &err));
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 1);
    CU_ASSERT_STRING_EQUAL(c.groups[0], "/g");
    CU_ASSERT_STRING_EQUAL(c.user, "ann");
    CU_ASSERT_STRING_EQUAL(c.sub, "s1");
    acc_jwt_claims_release(&c);
    /* groups that are not strings; too many groups */
    snprintf(claims, sizeof claims, "{%s,\"wlcg.groups\":[1]}", base);
    CU_ASSERT_EQUAL(check(&issuer, claims, &c, &err), ACC_ERR_UNAUTHORIZED);
    acc_jwt_claims_release(&c);
    char many[4096];
    int n = snprintf(many, sizeof many, "{%s,\"wlcg.groups\":[\"/g0\"", base);
    for (int i = 1; i <= ACC_JWT_MAX_GROUPS; i++)
        n += snprintf(many + n, sizeof many - (size_t)n, ",\"/g%d\"", i);
    snprintf(many + n, sizeof many - (size_t)n, "]}");
    CU_ASSERT_EQUAL(check(&issuer, many, &c, &err), ACC_ERR_UNAUTHORIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than 64 groups"));
    acc_jwt_claims_release(&c);
}

static void test_printable(void)
{
    char out[32];
    acc_jwt_printable("ab\"c\\d\n\xc3\xa9", out, sizeof out, 20);
    CU_ASSERT_STRING_EQUAL(out, "ab?c?d???");
    acc_jwt_printable("0123456789abcdef", out, sizeof out, 4);
    CU_ASSERT_STRING_EQUAL(out, "0123...");
}

static const struct acc_test_case tests[] = {
    {"what passes for a JWT", test_looks_like},
    {"the unverified issuer, bounded", test_peek_issuer},
    {"iss and aud", test_audience_and_issuer},
    {"exp, nbf, iat with the leeway", test_times},
    {"groups, scopes and the user claim", test_groups_scopes_user},
    {"what a message shows of a client's string", test_printable},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"jwt", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
