/* SPDX-License-Identifier: Apache-2.0 */
/* test_http_errors.c - bad requests to accordd over HTTP: every mistake in
 * an offer a clear 4xx with nothing stored or booked, transport-level
 * mistakes, mistakes in a query, and times bounded by 9999-12-31T23:59:59Z. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_suite.h"
#include "testutil.h"

struct bad_case {
    const char *name;
    const char *body; /* NULL: built by the test */
    long status;
    const char *code;
    const char *says;
};

/* The bad offers built from hs_offer(): zero nodes, an unknown site, too many
 * nodes, a window backwards or too short, a negative bandwidth, an unknown
 * component, more bandwidth than the link. */
static void build_bad_offers(char tmp[][16384])
{
    const char *one[] = {"caesar:8"};
    char *p;
    snprintf(tmp[0], sizeof tmp[0], "%s",
             hs_offer("zero", "<co:Duration>PT1H</co:Duration>", one, 1, 0));
    p = strstr(tmp[0], "<co:Nodes>8");
    memcpy(p, "<co:Nodes>0", 11);
    const char *unknown[] = {"atlantis:4"};
    snprintf(tmp[1], sizeof tmp[1], "%s",
             hs_offer("unknown-site", "<co:Duration>PT1H</co:Duration>", unknown, 1, 0));
    const char *toomany[] = {"fh-brs:33"};
    snprintf(tmp[2], sizeof tmp[2], "%s",
             hs_offer("too-many", "<co:Duration>PT1H</co:Duration>", toomany, 1, 0));
    snprintf(tmp[3], sizeof tmp[3], "%s",
             hs_offer("window",
                      "<co:EarliestStart>2030-01-02T00:00:00Z</co:EarliestStart>"
                      "<co:Deadline>2030-01-01T00:00:00Z</co:Deadline>"
                      "<co:Duration>PT1H</co:Duration>",
                      one, 1, 0));
    snprintf(tmp[4], sizeof tmp[4], "%s",
             hs_offer("short",
                      "<co:EarliestStart>2030-01-01T00:00:00Z</co:EarliestStart>"
                      "<co:Deadline>2030-01-01T01:00:00Z</co:Deadline>"
                      "<co:Duration>PT2H</co:Duration>",
                      one, 1, 0));
    const char *two[] = {"caesar:8", "fh-brs:8"};
    snprintf(tmp[5], sizeof tmp[5], "%s",
             hs_offer("neg-bw", "<co:Duration>PT1H</co:Duration>", two, 2, 77));
    p = strstr(tmp[5], "<co:Bandwidth>77");
    memcpy(p, "<co:Bandwidth>-7", 16);
    snprintf(tmp[6], sizeof tmp[6], "%s",
             hs_offer("bad-link", "<co:Duration>PT1H</co:Duration>", two, 2, 77));
    p = strstr(tmp[6], "<co:And>c1");
    memcpy(p, "<co:And>c9", 10);
    snprintf(tmp[7], sizeof tmp[7], "%s",
             hs_offer("bw", "<co:Duration>PT1H</co:Duration>", two, 2, 99999));
}

/* One bad case posted: its status, its fault code and what it says. */
static void check_bad_case(const struct bad_case *c)
{
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(
        http_do("POST", hs_url("/agreements"), c->body, strlen(c->body), XML_HDR, &r), 0);
    if (r.status != c->status)
        fprintf(stderr, "\n  case '%s': status %ld, body %.300s\n", c->name, r.status, r.body);
    CU_ASSERT_EQUAL(r.status, c->status);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    if (c->code) {
        if (!code || strcmp(code, c->code) != 0)
            fprintf(stderr, "\n  case '%s': code %s\n", c->name, code ? code : "(none)");
        CU_ASSERT_STRING_EQUAL(code ? code : "", c->code);
    } else {
        CU_ASSERT_PTR_NOT_NULL(code);
    }
    if (c->says && !strstr(r.body, c->says))
        fprintf(stderr, "\n  case '%s' does not say '%s': %.300s\n", c->name, c->says, r.body);
    if (c->says)
        CU_ASSERT_PTR_NOT_NULL(strstr(r.body, c->says));
    free(code);
    http_reply_free(&r);
}

/* Transport-level mistakes: the media type, the method, unknown paths. */
static void check_transport_errors(void)
{
    struct http_reply r;
    const char *json_hdr[] = {"Content-Type: application/json", NULL};
    CU_ASSERT_EQUAL(http_do("POST", hs_url("/agreements"), "{}", 2, json_hdr, &r), 0);
    CU_ASSERT_EQUAL(r.status, 415);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(http_do("PUT", hs_url("/agreements"), "x", 1, XML_HDR, &r), 0);
    CU_ASSERT_EQUAL(r.status, 405);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/nothing/here", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements/aaaaaaaaaaaaaaaa", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements/'%20or%201=1", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements?state=Sleeping", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements?from=yesterday", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(http_do("GET", hs_url("/agreements/none"), NULL, 0, JSON_ACCEPT, &r), 0);
    CU_ASSERT_EQUAL(r.status, 404);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"code\""));
    http_reply_free(&r);
}

static void test_bad_input(void)
{
    char huge_path[256];
    snprintf(huge_path, sizeof huge_path, "%s/huge.xml", acc_test_tmpdir());
    size_t big = 2 * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    memcpy(huge, "<a>", 3);
    huge[big] = '\0';

    char deep[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(deep, "<a>");
    static char tmp[10][16384];
    build_bad_offers(tmp);
    const struct bad_case cases[] = {
        {"malformed", "<wsag:AgreementOffer", 400, "MalformedDocument", "line"},
        {"dtd", "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", 400,
         "DtdForbidden", "DTD"},
        {"external entity",
         "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
         "<a>&x;</a>",
         400, "DtdForbidden", NULL},
        {"huge", huge, 413, "BodyTooLarge", "larger"},
        {"deep", deep, 400, NULL, NULL},
        {"wrong root", "<a/>", 400, "SchemaViolation", NULL},
        {"zero nodes", tmp[0], 400, "SchemaViolation", "Nodes"},
        {"unknown site", tmp[1], 400, "UnknownSite", "atlantis"},
        {"more nodes than the site has", tmp[2], 400, "OverCapacity", "fh-brs"},
        {"deadline before earliest start", tmp[3], 400, "InvalidOffer", "deadline"},
        {"duration longer than window", tmp[4], 400, "InvalidOffer", "window"},
        {"negative bandwidth", tmp[5], 400, "SchemaViolation", "Bandwidth"},
        {"unknown component", tmp[6], 400, "InvalidOffer", "c9"},
        {"more bandwidth than the link", tmp[7], 400, "OverCapacity", "Mbit/s"},
        {"empty body", "", 400, "MalformedDocument", NULL},
    };
    int before = hs_count_agreements();
    char *bk_before = hs_bookings("caesar");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad_case(&cases[i]);
    /* Nothing stored, nothing booked, and the server still serves. */
    CU_ASSERT_EQUAL(hs_count_agreements(), before);
    char *bk_after = hs_bookings("caesar");
    CU_ASSERT_STRING_EQUAL(bk_before, bk_after);
    free(bk_before);
    free(bk_after);
    struct http_reply r;
    CU_ASSERT_EQUAL(hs_get("/healthz", &r), 200);
    http_reply_free(&r);

    check_transport_errors();
    free(huge);
}

/* Each mistake in a query: 400, its code, and what it says. */
static void check_query_cases(void)
{
    static const struct {
        const char *path, *code, *says;
    } cases[] = {
        {"/agreements?state=Sleeping", "InvalidRequest", "state must be"},
        {"/agreements?from=yesterday", "InvalidRequest", "from"},
        {"/agreements?until=10000-01-01T00:00:00Z", "InvalidRequest", "after 9999-12-31T23:59:59Z"},
        {"/agreements?limit=0", "InvalidRequest", "limit"},
        {"/agreements?offset=x", "InvalidRequest", "offset"},
        {"/sites/caesar/preview?nodes=x&duration=PT2H", "InvalidRequest", "nodes"},
        {"/sites/caesar/preview?nodes=1", "InvalidRequest", "duration"},
        {"/sites/caesar/preview?nodes=1&duration=PT1Y", "InvalidRequest", "duration"},
        {"/sites/caesar/preview?nodes=1&duration=PT1H&from=9999-12-31T23:00:00-05:00",
         "InvalidRequest", "after 9999-12-31T23:59:59Z"},
        {"/sites/caesar/preview?nodes=1&duration=PT1H&from=2030-01-02T00:00:00Z"
         "&until=2030-01-01T00:00:00Z",
         "InvalidRequest", "until must be later"},
        {"/sites/caesar/preview?nodes=1000&duration=PT2H", "OverCapacity", "caesar"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct http_reply r;
        CU_ASSERT_EQUAL(hs_get(cases[i].path, &r), 400);
        char *code = xml_get(r.body, "/co:Fault/@co:code");
        if (!code || strcmp(code, cases[i].code) != 0 || !strstr(r.body, cases[i].says))
            fprintf(stderr, "\n  %s: %ld %.300s\n", cases[i].path, r.status, r.body);
        CU_ASSERT_STRING_EQUAL(code ? code : "", cases[i].code);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.body, cases[i].says));
        free(code);
        http_reply_free(&r);
    }
}

/* A preview from the last day: the horizon ends at the last second. */
static void check_last_day_preview(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(
        hs_get("/sites/caesar/preview?nodes=1&duration=PT1H&from=9999-12-31T00:00:00Z", &r), 200);
    CU_ASSERT_PTR_NULL(strstr(r.body, "0000-"));
    char *until = xml_get(r.body, "/co:Preview/@co:until");
    CU_ASSERT_STRING_EQUAL(until ? until : "", "9999-12-31T23:59:59Z");
    if (!until || strcmp(until, "9999-12-31T23:59:59Z") != 0)
        fprintf(stderr, "\n  preview: %.600s\n", r.body);
    free(until);
    http_reply_free(&r);
}

/* An offer in the last days without a deadline: its window ends at the
 * last second, and its negotiation trace never shows year 0000. */
static void check_last_days_offer(const char *const *one)
{
    struct http_reply r;
    const char *sched = "<co:EarliestStart>9999-12-28T00:00:00Z</co:EarliestStart>"
                        "<co:Duration>PT1H</co:Duration>";
    /* The default [quota] max_advance (about five years) refuses such a
     * start, naming the limit; an operator may lift it. */
    CU_ASSERT_EQUAL(hs_post("/agreements", hs_offer("last-days", sched, one, 1, 0), &r), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "max_advance"));
    CU_ASSERT_PTR_NULL(strstr(r.body, "0000-"));
    http_reply_free(&r);
    int64_t advance = fx.cfg.quota.advance;
    fx.cfg.quota.advance = ACC_QUOTA_UNLIMITED;
    CU_ASSERT_EQUAL(hs_post("/agreements", hs_offer("last-days", sched, one, 1, 0), &r), 201);
    fx.cfg.quota.advance = advance;
    char *id = hs_id_of(&r);
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    CU_ASSERT_PTR_NULL(strstr(r.body, "0000-"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "9999-12-31T23:59:59Z"));
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(http_do("DELETE", hs_url(path), NULL, 0, NULL, &r), 0);
    http_reply_free(&r);
    free(id);
}

/* Mistakes in a request's query are InvalidRequest, not InvalidOffer; no
 * time beyond 9999-12-31T23:59:59Z is taken, and none is ever shown as year
 * 0000. */
static void test_query_errors_and_time_bounds(void)
{
    check_query_cases();
    check_last_day_preview();

    const char *one[] = {"caesar:2"};
    check_last_days_offer(one);

    /* An offer that would end after the bound is refused, nothing stored. */
    struct http_reply r;
    int before = hs_count_agreements();
    CU_ASSERT_EQUAL(hs_post("/agreements",
                            hs_offer("too-late",
                                     "<co:EarliestStart>9999-12-31T23:30:00Z</co:EarliestStart>"
                                     "<co:Duration>PT1H</co:Duration>",
                                     one, 1, 0),
                            &r),
                    400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "after 9999-12-31T23:59:59Z"));
    http_reply_free(&r);

    /* A NUL byte after a valid offer. */
    char body[16384];
    size_t n = (size_t)snprintf(body, sizeof body, "%s",
                                hs_offer("nul", "<co:Duration>PT1H</co:Duration>", one, 1, 0));
    memcpy(body + n, "\0garbage", 8);
    CU_ASSERT_EQUAL_FATAL(http_do("POST", hs_url("/agreements"), body, n + 8, XML_HDR, &r), 0);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "MalformedDocument"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "NUL"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_count_agreements(), before);
}

static const struct acc_test_case tests[] = {
    {"bad input: clear 4xx, nothing stored or booked", test_bad_input},
    {"query errors are InvalidRequest; no time after 9999", test_query_errors_and_time_bounds},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"http_errors", http_suite_setup, http_suite_teardown, tests},
    {NULL, NULL, NULL, NULL},
};
