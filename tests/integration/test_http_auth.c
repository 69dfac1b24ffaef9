/* SPDX-License-Identifier: Apache-2.0 */
/* test_http_auth.c - accordd with bearer tokens: 401 without one, 403 for
 * what is someone else's or for administrators only, and another user's
 * agreement answering as an unknown one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/jwt/jwt.h"
#include "http_suite.h"
#include "testutil.h"

/* accordd with [auth] tokens, one test at a time. */
static struct fixture au;

/* One request to fixture f, checking its status; the reply stays in *r. */
static void call(struct fixture *f, const char *method, const char *path, const char *body,
                 const char *const *hdr, long want, struct http_reply *r)
{
    char u[512];
    snprintf(u, sizeof u, "%s%s", f->base, path);
    CU_ASSERT_EQUAL(http_do(method, u, body, body ? strlen(body) : 0, hdr, r), 0);
    if (r->status != want)
        fprintf(stderr, "\n  %s %s: %ld, want %ld: %.200s\n", method, path, r->status, want,
                r->body);
    CU_ASSERT_EQUAL(r->status, want);
}

/* The tokens file (alice, bob, root the administrator, prom of the metrics
 * role) and a configuration
 * naming it, in ini. */
static void write_tokens(char *ini, size_t len)
{
    char tokens[256];
    snprintf(tokens, sizeof tokens, "%s/tokens", acc_test_tmpdir());
    FILE *f = fopen(tokens, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# user token [admin|metrics]\nalice alice-token-0123456789\n"
          "bob bob-token-0123456789abc\nroot root-token-0123456789 admin\n"
          "prom prom-token-0123456789 metrics\n",
          f);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(ini, len,
             "[server]\nallow_control = yes\n[auth]\ntokens = %s\n"
             "[site a]\nadapter = sim-batch\nnodes = 8\n",
             tokens);
}

/* Another user's agreement answers as an unknown one: ids and owners
 * cannot be probed. */
static void check_not_probeable(const char *id, const char *const *bob)
{
    struct http_reply r;
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s", id);
    call(&au, "GET", path, NULL, bob, 404, &r);
    char *theirs = xml_get(r.body, "//co:Message");
    http_reply_free(&r);
    char unknown_path[128];
    snprintf(unknown_path, sizeof unknown_path, "/agreements/%.*sX", (int)strlen(id) - 1, id);
    call(&au, "GET", unknown_path, NULL, bob, 404, &r);
    char *unknown = xml_get(r.body, "//co:Message");
    CU_ASSERT_PTR_NOT_NULL(theirs);
    CU_ASSERT_PTR_NOT_NULL(unknown);
    if (theirs && unknown) /* the same words, but for the id itself */
        CU_ASSERT_EQUAL(strlen(theirs), strlen(unknown));
    CU_ASSERT_PTR_NULL(strstr(theirs ? theirs : "", "alice"));
    free(theirs);
    free(unknown);
    http_reply_free(&r);
}

/* What each role may do: routes hidden without credentials, metrics and
 * control for administrators, no one terminating another's agreement. */
static void check_roles(const char *id, const char *const *alice, const char *const *bob,
                        const char *const *root)
{
    struct http_reply r;
    char path[128];
    /* Without credentials nothing about the routes shows: no 404 or 405. */
    call(&au, "GET", "/no/such/route", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "PUT", "/agreements", NULL, NULL, 401, &r);
    http_reply_free(&r);
    /* Metrics are for administrators. */
    call(&au, "GET", "/metrics", NULL, bob, 403, &r);
    http_reply_free(&r);
    call(&au, "GET", "/metrics", NULL, root, 200, &r);
    http_reply_free(&r);
    /* The metrics role reads /metrics and nothing else, not even its own
     * agreements' list, a site or the backup. */
    const char *prom[] = {"Authorization: Bearer prom-token-0123456789", NULL};
    call(&au, "GET", "/metrics", NULL, prom, 200, &r);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "# TYPE accord_http_request_duration_seconds histogram"));
    http_reply_free(&r);
    call(&au, "GET", "/agreements", NULL, prom, 403, &r);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "prom has the metrics role"));
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", id);
    call(&au, "GET", path, NULL, prom, 403, &r);
    http_reply_free(&r);
    call(&au, "GET", "/sites", NULL, prom, 403, &r);
    http_reply_free(&r);
    call(&au, "POST", "/admin/backup", NULL, prom, 403, &r);
    http_reply_free(&r);
    call(&au, "POST", "/adapters/a/control/clear", "", prom, 403, &r);
    http_reply_free(&r);
    call(&au, "GET", "/agreements", NULL, bob, 200, &r);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:AgreementRef"), 0);
    http_reply_free(&r);
    call(&au, "GET", "/agreements?initiator=alice", NULL, bob, 403, &r);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    call(&au, "POST", path, NULL, bob, 404, &r);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    call(&au, "GET", path, NULL, root, 200, &r);
    char *st = xml_get(r.body, "//wsag:AgreementState/wsag:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed"); /* bob could not terminate it */
    free(st);
    http_reply_free(&r);
    call(&au, "GET", "/agreements", NULL, root, 200, &r);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:AgreementRef"), 1);
    http_reply_free(&r);
    call(&au, "POST", "/adapters/a/control/clear", "", alice, 403, &r);
    http_reply_free(&r);
    call(&au, "POST", "/adapters/a/control/clear", "", root, 200, &r);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    call(&au, "POST", path, NULL, alice, 200, &r);
    http_reply_free(&r);
}

static void test_tokens_and_ownership(void)
{
    char ini[512], db[256];
    write_tokens(ini, sizeof ini);
    snprintf(db, sizeof db, "%s/auth.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start(&au, ini, db), 0);
    const char *alice[] = {"Authorization: Bearer alice-token-0123456789",
                           "Content-Type: application/xml", NULL};
    const char *bob[] = {"Authorization: Bearer bob-token-0123456789abc", NULL};
    const char *root[] = {"Authorization: Bearer root-token-0123456789", NULL};
    const char *wrong[] = {"Authorization: Bearer not-a-token-at-all", NULL};
    struct http_reply r;

    call(&au, "GET", "/healthz", NULL, NULL, 200, &r);
    http_reply_free(&r);
    /* The routes open to anyone (the table says so) pass without
     * credentials, and only with the methods they take. */
    call(&au, "GET", "/certificate", NULL, NULL, 404, &r); /* no signing key here */
    http_reply_free(&r);
    call(&au, "GET", "/ui/", NULL, NULL, 200, &r);
    http_reply_free(&r);
    call(&au, "HEAD", "/ui/app.js", NULL, NULL, 200, &r);
    http_reply_free(&r);
    call(&au, "POST", "/ui/", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "GET", "/ui/a/b", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "POST", "/healthz", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "GET", "/agreements", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "GET", "/sites", NULL, wrong, 401, &r);
    http_reply_free(&r);

    const char *sites[] = {"a:2"};
    char *doc = strdup(hs_offer("mine", "<co:Duration>PT1H</co:Duration>", sites, 1, 0));
    char *as_alice = malloc(strlen(doc) + 16), *p = strstr(doc, "tester");
    snprintf(as_alice, strlen(doc) + 16, "%.*salice%s", (int)(p - doc), doc, p + 6);
    call(&au, "POST", "/agreements", as_alice, alice, 201, &r);
    char *id = hs_id_of(&r);
    http_reply_free(&r);
    if (!id) {
        CU_FAIL("no agreement id");
        free(doc);
        free(as_alice);
        fixture_stop(&au);
        return;
    }
    call(&au, "POST", "/agreements", doc, alice, 403, &r); /* in someone else's name */
    http_reply_free(&r);

    check_not_probeable(id, bob);
    check_roles(id, alice, bob, root);
    free(id);
    free(doc);
    free(as_alice);
    fixture_stop(&au);
}

/* acc_http_authenticate on a request of ours: its status, the identity. */
static bool authenticate(struct fixture *f, const char *bearer, struct acc_request *rq,
                         struct acc_response *rs)
{
    static char header[1024];
    snprintf(header, sizeof header, "Bearer %s", bearer);
    *rq = (struct acc_request){.method = "GET", .path = "/agreements", .authorization = header};
    acc_response_init(rs);
    return acc_http_authenticate(&f->ctx, rq, rs);
}

/* JWTs with a made-up signature (kid k1): one of the [issuer] below (whose
 * provider, at port 9, never answers), one of an issuer not configured. */
#define JWT_OF_DOWN                                                                                \
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovLzEyNy4wLjAuMTo5LyIsImF1ZCI6ImEiLCJz" \
    "dWIiOiJzIiwiZXhwIjo5OTk5OTk5OTk5fQ.c2ln"
#define JWT_OF_EVIL                                                                                \
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovL2lkcC5ldmlsLmV4YW1wbGUiLCJhdWQiOiJh" \
    "IiwiZXhwIjo5OTk5OTk5OTk5fQ.c2ln"

/* The identity on the request (lib/model/identity.h) and the refusals of
 * tokens of issuers that need no provider (test_oidc has one). */
static void test_identity_and_issuers(void)
{
    char ini[1024], db[256];
    write_tokens(ini, sizeof ini);
    snprintf(ini + strlen(ini), sizeof ini - strlen(ini),
             "[issuer down]\nurl = https://127.0.0.1:9/\naudience = a\ntimeout = 1\n");
    snprintf(db, sizeof db, "%s/identity.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start(&au, ini, db), 0);
    au.ctx.jwt = acc_jwt_cache_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(au.ctx.jwt);
    struct acc_request rq;
    struct acc_response rs;

    /* a static token: the user alone */
    CU_ASSERT_TRUE(authenticate(&au, "alice-token-0123456789", &rq, &rs));
    CU_ASSERT_STRING_EQUAL(rq.identity.user ? rq.identity.user : "", "alice");
    CU_ASSERT_PTR_NULL(rq.identity.issuer);
    CU_ASSERT_PTR_NULL(rq.identity.subject);
    CU_ASSERT_PTR_NULL(rq.identity.token);
    CU_ASSERT_FALSE(rq.by_token);
    acc_http_request_done(&au.ctx, &rq);
    CU_ASSERT_PTR_NULL(rq.identity.user); /* released with the request */
    acc_response_release(&rs);

    /* an issuer no [issuer] names: 401 saying so, in WWW-Authenticate too */
    CU_ASSERT_FALSE(authenticate(&au, JWT_OF_EVIL, &rq, &rs));
    CU_ASSERT_EQUAL(rs.status, 401);
    CU_ASSERT_TRUE(rs.challenge);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs.www_authenticate, "error=\"invalid_token\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(rs.www_authenticate, "unknown issuer: tokens of "
                                                       "https://idp.evil.example"));
    CU_ASSERT_PTR_NULL(strstr(acc_buf_str(&rs.body), "c2ln")); /* never the token */
    CU_ASSERT_PTR_NULL(rq.identity.user);
    acc_http_request_done(&au.ctx, &rq);
    acc_response_release(&rs);

    /* the issuer's provider cannot be reached and no key is held: 503
     * with a Retry-After, not 401 */
    CU_ASSERT_FALSE(authenticate(&au, JWT_OF_DOWN, &rq, &rs));
    CU_ASSERT_EQUAL(rs.status, 503);
    CU_ASSERT_TRUE(atoi(rs.retry_after) >= 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(acc_buf_str(&rs.body), "cannot be asked for it now"));
    acc_http_request_done(&au.ctx, &rq);
    acc_response_release(&rs);

    /* a static token that is no one's, not a JWT */
    CU_ASSERT_FALSE(authenticate(&au, "not-a-token-at-all", &rq, &rs));
    CU_ASSERT_EQUAL(rs.status, 401);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs.www_authenticate, "neither a token of [auth] nor a JWT"));
    acc_http_request_done(&au.ctx, &rq);
    acc_response_release(&rs);

    acc_jwt_cache_free(au.ctx.jwt);
    au.ctx.jwt = NULL;
    fixture_stop(&au);
}

static const struct acc_test_case tests[] = {
    {"tokens: 401 without, 403 for what is someone else's", test_tokens_and_ownership},
    {"the identity on the request; tokens of issuers without a provider",
     test_identity_and_issuers},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"http_auth", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
