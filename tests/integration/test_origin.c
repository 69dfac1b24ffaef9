/* SPDX-License-Identifier: Apache-2.0 */
/* test_origin.c - what a browser could send for another site, against a
 * loopback accordd without [auth] (the quick start's): a Host that is not
 * one of the server's names (DNS rebinding), a request that changes
 * something from a page of another origin, and a body that is not XML or
 * JSON (a form a page can post without asking) are refused, and change
 * nothing; the server's own origin, and clients that are not browsers,
 * are served as before.  [server] names sets the names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"

static struct fixture fx;
static char db[256];

static const char offer_doc[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>o</wsag:Name><wsag:Context>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"s\" "
    "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
    "</wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name=\"a\" "
    "wsag:ServiceName=\"metajob\"><co:Component><co:Site>caesar</co:Site><co:Nodes>2</co:Nodes>"
    "</co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
    "</wsag:AgreementOffer>";

static unsigned port_of(void)
{
    return (unsigned)strtoul(strrchr(fx.base, ':') + 1, NULL, 10);
}

/* method path with the given headers (up to 3) and body; the status, the
 * reply in *r (freed by the caller). */
static long ask(const char *method, const char *path, const char *h1, const char *h2,
                const char *body, struct http_reply *r)
{
    char url[sizeof fx.base + 128];
    snprintf(url, sizeof url, "%s%s", fx.base, path);
    const char *hdr[4] = {h1, h2, NULL, NULL};
    if (!h1)
        hdr[0] = h2, hdr[1] = NULL;
    CU_ASSERT_EQUAL_FATAL(
        http_do(method, url, body, body ? strlen(body) : 0, hdr[0] ? hdr : NULL, r), 0);
    return r->status;
}

static int count(void)
{
    struct http_reply r;
    ask("GET", "/agreements?limit=1000", NULL, NULL, NULL, &r);
    int n = xml_count(r.body, "/co:AgreementList/co:AgreementRef");
    http_reply_free(&r);
    return n;
}

static void expect(long status, long want, const struct http_reply *r, const char *says)
{
    CU_ASSERT_EQUAL(status, want);
    if (says)
        CU_ASSERT_PTR_NOT_NULL(r->body ? strstr(r->body, says) : NULL);
    if (status != want || (says && (!r->body || !strstr(r->body, says))))
        fprintf(stderr, "\n  got %ld, wanted %ld with '%s': %.300s\n", status, want,
                says ? says : "", r->body ? r->body : "");
}

/* The names of a loopback server: loopback and its listen address. */
static void test_host(void)
{
    char h[96];
    struct http_reply r;
    const char *ok[] = {"127.0.0.1", "localhost", "127.0.0.2", "[::1]", "LOCALHOST."};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(h, sizeof h, "Host: %s:%u", ok[i], port_of());
        expect(ask("GET", "/agreements", h, NULL, NULL, &r), 200, &r, NULL);
        http_reply_free(&r);
    }
    /* a name of another site that resolves here */
    snprintf(h, sizeof h, "Host: rebound.example.org:%u", port_of());
    expect(ask("GET", "/agreements", h, NULL, NULL, &r), 403, &r, "[server] names");
    http_reply_free(&r);
    expect(ask("POST", "/agreements", h, "Content-Type: application/xml", offer_doc, &r), 403, &r,
           "rebound.example.org");
    http_reply_free(&r);
    CU_ASSERT_EQUAL(count(), 0);
}

/* A page of another origin changes nothing; the server's own page and
 * clients without an Origin do. */
static void test_origin(void)
{
    char own[96], other_port[96];
    snprintf(own, sizeof own, "Origin: http://127.0.0.1:%u", port_of());
    snprintf(other_port, sizeof other_port, "Origin: http://127.0.0.1:%u", port_of() + 1);
    const char *foreign[] = {"Origin: http://evil.example.org", other_port, "Origin: null",
                             "Origin: https://127.0.0.1"};
    struct http_reply r;
    int before = count();
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        expect(
            ask("POST", "/agreements", foreign[i], "Content-Type: application/xml", offer_doc, &r),
            403, &r, "another site");
        http_reply_free(&r);
    }
    CU_ASSERT_EQUAL(count(), before);
    /* reading is not refused: the browser keeps the answer from the page */
    expect(ask("GET", "/agreements", foreign[0], NULL, NULL, &r), 200, &r, NULL);
    http_reply_free(&r);
    expect(ask("POST", "/agreements", own, "Content-Type: application/xml", offer_doc, &r), 201, &r,
           NULL);
    char *id = strdup(strrchr(r.location, '/') + 1);
    http_reply_free(&r);
    char path[96];
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    expect(ask("POST", path, foreign[0], NULL, NULL, &r), 403, &r, "another site");
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", id);
    expect(ask("DELETE", path, foreign[2], NULL, NULL, &r), 403, &r, NULL);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    expect(ask("GET", path, NULL, NULL, NULL, &r), 200, &r, "Observed");
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", id);
    expect(ask("DELETE", path, NULL, NULL, NULL, &r), 200, &r, NULL); /* curl: no Origin */
    http_reply_free(&r);
    free(id);
}

/* A body that changes something says it is XML (JSON where no body is
 * read): a form, text or an untyped body is 415 and books nothing. */
static void test_body_types(void)
{
    const char *refused[] = {"Content-Type: application/x-www-form-urlencoded",
                             "Content-Type: text/plain", "Content-Type: multipart/form-data", NULL};
    struct http_reply r;
    int before = count();
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        /* NULL: libcurl sends a body with no type at all */
        const char *h = refused[i] ? refused[i] : "Content-Type:";
        expect(ask("POST", "/agreements", h, NULL, offer_doc, &r), 415, &r, "XML");
        http_reply_free(&r);
        expect(ask("POST", "/negotiations", h, NULL, offer_doc, &r), 415, &r, NULL);
        http_reply_free(&r);
    }
    CU_ASSERT_EQUAL(count(), before);
    expect(ask("POST", "/agreements/aaaaaaaaaaaaaaaa/terminate", "Content-Type: text/plain", NULL,
               "x", &r),
           415, &r, "XML or JSON");
    http_reply_free(&r);
    expect(ask("POST", "/agreements", "Content-Type: application/wsag+xml; charset=utf-8", NULL,
               offer_doc, &r),
           201, &r, NULL);
    http_reply_free(&r);
}

/* [server] names replaces the default; "*" answers to any. */
static void test_configured_names(void)
{
    fixture_stop(&fx);
    remove(db);
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx,
                                        "[server]\nnames = accord.example.org, 10.1.2.3\n"
                                        "[site a]\nadapter = sim-batch\nnodes = 4\n",
                                        db),
                          0);
    char h[96];
    struct http_reply r;
    snprintf(h, sizeof h, "Host: accord.example.org:%u", port_of());
    expect(ask("GET", "/agreements", h, NULL, NULL, &r), 200, &r, NULL);
    http_reply_free(&r);
    expect(ask("GET", "/agreements", "Host: 10.1.2.3", NULL, NULL, &r), 200, &r, NULL);
    http_reply_free(&r);
    expect(ask("GET", "/agreements", NULL, NULL, NULL, &r), 403, &r, "accord.example.org");
    http_reply_free(&r);
    fixture_stop(&fx);
    remove(db);
    CU_ASSERT_EQUAL_FATAL(
        fixture_start(&fx, "[server]\nnames = *\n[site a]\nadapter = sim-batch\nnodes = 4\n", db),
        0);
    expect(ask("GET", "/agreements", "Host: anything.example", NULL, NULL, &r), 200, &r, NULL);
    http_reply_free(&r);
}

static int setup(void)
{
    snprintf(db, sizeof db, "%s/origin.db", acc_test_tmpdir());
    return fixture_start(&fx, NULL, db);
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"a Host that is not the server's is refused", test_host},
    {"a request that changes something from another origin is refused", test_origin},
    {"a body that changes something is XML or JSON", test_body_types},
    {"[server] names", test_configured_names},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"origin", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
