/* SPDX-License-Identifier: Apache-2.0 */
/* test_http.c - accordd in-process on port 0, driven over HTTP with libcurl:
 * an agreement's life (offer, read, terminate, restart), negotiation's
 * outcomes (pending, idempotent, rejected, rolled back, retried, a site
 * chosen).  The other parts are programs of their own: test_http_errors
 * (bad requests), test_http_auth (tokens), test_http_concurrency (a hung
 * adapter, concurrent offers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_suite.h"
#include "testutil.h"
#include "timefmt.h"

/* ------------------------------------------------------------------ tests */

static char *example_id;

static void test_example_offer_agreed(void)
{
    size_t len;
    char *file = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    /* Not before a day from now: the example's job (its programs are not
     * on this machine) would start at once on a free testbed, fail and end
     * the agreement Complete while the next tests still use it. */
    const char *at = strstr(file, "<co:Schedule>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at += strlen("<co:Schedule>");
    char t[ACC_TIME_STRLEN];
    acc_time_format(acc_now() + 86400, t);
    char *doc = malloc(len + 128);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    len = (size_t)snprintf(doc, len + 128, "%.*s<co:EarliestStart>%s</co:EarliestStart>%s",
                           (int)(at - file), file, t, at);
    free(file);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", hs_url("/agreements"), doc, len, XML_HDR, &r), 0);
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.location, "/agreements/"));
    char *state = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(state ? state : "", "Observed");
    free(state);
    char *start = xml_get(r.body, "//co:Allocation/co:Start");
    char *end = xml_get(r.body, "//co:Allocation/co:End");
    CU_ASSERT_PTR_NOT_NULL_FATAL(start);
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:ComponentAllocation"), 3);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:LinkAllocation"), 2);
    /* The offer's own terms come back in the agreement. */
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Component") >= 3);

    /* Every reservation is really in its adapter's calendar, and no
     * calendar is over capacity during the agreement. */
    int comps = xml_count(r.body, "//co:ComponentAllocation");
    for (int i = 1; i <= comps; i++) {
        char xp[128];
        snprintf(xp, sizeof xp, "(//co:ComponentAllocation)[%d]/co:Site", i);
        char *site = xml_get(r.body, xp);
        snprintf(xp, sizeof xp, "(//co:ComponentAllocation)[%d]/co:Reservation", i);
        char *key = xml_get(r.body, xp);
        CU_ASSERT_PTR_NOT_NULL_FATAL(site);
        CU_ASSERT_PTR_NOT_NULL_FATAL(key);
        char *b = hs_bookings(site);
        char *line = b ? strstr(b, key) : NULL;
        CU_ASSERT_PTR_NOT_NULL(line);
        if (line) /* booked exactly over the agreed interval */
            CU_ASSERT_EQUAL(strncmp(strchr(line, ' ') + 1 + strlen(site) + 1, start, strlen(start)),
                            0);
        int64_t cap;
        int64_t p = hs_peak(site, site, start, end, &cap);
        CU_ASSERT_TRUE(p > 0);
        CU_ASSERT_TRUE(p <= cap);
        free(b);
        free(site);
        free(key);
    }
    char *link = xml_get(r.body, "(//co:LinkAllocation)[1]/co:Link");
    char *lkey = xml_get(r.body, "(//co:LinkAllocation)[1]/co:Reservation");
    CU_ASSERT_PTR_NOT_NULL_FATAL(link);
    char *wan = hs_bookings("wan");
    CU_ASSERT_PTR_NOT_NULL(lkey && wan ? strstr(wan, lkey) : NULL);
    int64_t cap;
    int64_t p = hs_peak("wan", link, start, end, &cap);
    CU_ASSERT_TRUE(p >= 5000 && p <= cap);
    free(wan);
    free(link);
    free(lkey);
    example_id = hs_id_of(&r);
    free(start);
    free(end);
    http_reply_free(&r);
    free(doc);
}

static void test_read_endpoints(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(example_id);
    char path[128];
    struct http_reply r;
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/xml");
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s/state", example_id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    char *st = xml_get(r.body, "//wsag:AgreementState/wsag:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    CU_ASSERT_EQUAL(xml_count(r.body, "//wsag:ServiceTermState"), 5); /* 3 components, 2 links */
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s/negotiation", example_id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Event[@co:kind='preview']") >= 4);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Event[@co:kind='agree']"), 1);
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(http_do("GET", hs_url(path), NULL, 0, JSON_ACCEPT, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, example_id));
    http_reply_free(&r);

    CU_ASSERT_EQUAL(hs_get("/agreements?state=Observed&initiator=alice", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:AgreementRef") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements?site=fh-brs", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:AgreementRef") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/agreements?initiator=nobody-else", &r), 200);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:AgreementRef"), 0);
    http_reply_free(&r);

    CU_ASSERT_EQUAL(hs_get("/sites", &r), 200);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Site"), 3);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Link"), 3);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/sites/caesar", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/sites/nowhere", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/sites/caesar/preview?nodes=16&duration=PT2H", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Frame") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/sites/caesar/preview?nodes=1000&duration=PT2H", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/templates", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/templates/meta-job", &r), 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caesar"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/healthz", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_get("/metrics", &r), 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "accord_negotiations_total{outcome=\"agreed\"}"));
    http_reply_free(&r);
}

static void test_terminate_releases(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(example_id);
    char path[128];
    struct http_reply r;
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    char *key = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Reservation");
    char *site = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Site");
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(key);

    snprintf(path, sizeof path, "/agreements/%s/terminate", example_id);
    CU_ASSERT_EQUAL(hs_post(path, NULL, &r), 200);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Terminated");
    free(st);
    http_reply_free(&r);
    char *b = hs_bookings(site);
    CU_ASSERT_PTR_NULL(strstr(b, key));
    free(b);
    char *wan = hs_bookings("wan");
    CU_ASSERT_PTR_NULL(strstr(wan, example_id)); /* keys carry the agreement id */
    free(wan);
    /* Terminating again is harmless; DELETE does the same. */
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(http_do("DELETE", hs_url(path), NULL, 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    http_reply_free(&r);
    free(key);
    free(site);
}

static void test_restart_keeps_agreements(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(example_id);
    const char *sites[] = {"caesar:8", "fzj-xd1:8"};
    struct http_reply r;
    CU_ASSERT_EQUAL(
        hs_post("/agreements",
                hs_offer("before-restart", "<co:Duration>PT1H</co:Duration>", sites, 2, 100), &r),
        201);
    char *id = hs_id_of(&r);
    char *key = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Reservation");
    http_reply_free(&r);
    int before = hs_count_agreements();

    fixture_stop(&fx);
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, NULL, db_path), 0);

    CU_ASSERT_EQUAL(hs_count_agreements(), before);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(hs_get(path, &r), 200);
    st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Terminated");
    free(st);
    http_reply_free(&r);
    /* The simulators' calendars came back from SQLite too. */
    char *b = hs_bookings("caesar");
    CU_ASSERT_PTR_NOT_NULL(key ? strstr(b, key) : NULL);
    free(b);
    free(key);
    free(id);
}

static void test_pending_mode(void)
{
    const char *sites[] = {"fh-brs:2"};
    struct http_reply r;
    CU_ASSERT_EQUAL(hs_post("/agreements?mode=pending",
                            hs_offer("pending", "<co:Duration>PT30M</co:Duration>", sites, 1, 0),
                            &r),
                    202);
    char *id = hs_id_of(&r);
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128], *st = NULL;
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    for (int i = 0; i < 500; i++) { /* 10 s at most */
        free(st);
        hs_get(path, &r);
        st = xml_get(r.body, "//wsag:AgreementState/wsag:State");
        http_reply_free(&r);
        if (st && strcmp(st, "Pending") != 0)
            break;
        usleep(20000);
    }
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    free(id);
}

static void test_idempotency_key(void)
{
    const char *sites[] = {"fh-brs:3"};
    const char *hdr[] = {"Content-Type: application/xml", "Idempotency-Key: run-42", NULL};
    const char *doc = hs_offer("idem", "<co:Duration>PT45M</co:Duration>", sites, 1, 0);
    struct http_reply a, b;
    CU_ASSERT_EQUAL(http_do("POST", hs_url("/agreements"), doc, strlen(doc), hdr, &a), 0);
    CU_ASSERT_EQUAL(http_do("POST", hs_url("/agreements"), doc, strlen(doc), hdr, &b), 0);
    CU_ASSERT_EQUAL(a.status, 201);
    CU_ASSERT_EQUAL(b.status, 201);
    CU_ASSERT_FALSE(a.replayed);
    CU_ASSERT_TRUE(b.replayed);
    CU_ASSERT_STRING_EQUAL(a.location, b.location);
    /* One booking, not two. */
    char *id = hs_id_of(&a);
    char *bk = hs_bookings("fh-brs");
    int n = 0;
    for (char *p = bk; (p = strstr(p, id)); p++)
        n++;
    CU_ASSERT_EQUAL(n, 1);
    free(bk);
    free(id);
    http_reply_free(&a);
    http_reply_free(&b);
}

static void test_no_slot_rejected_and_kept(void)
{
    /* Fill fh-brs for the whole window, then ask for it.  The background
     * load moves in steps of 15 minutes, so filling each aligned quarter
     * hour up to the capacity leaves nothing free. */
    char start[ACC_TIME_STRLEN], end[ACC_TIME_STRLEN], path[256], sched[256];
    acc_time t0 = (acc_now() / 900 + 3 * 96) * 900;
    acc_time_format(t0, start);
    acc_time_format(t0 + 4 * 3600, end);
    for (acc_time t = t0; t < t0 + 4 * 3600; t += 900) {
        char s1[ACC_TIME_STRLEN], s2[ACC_TIME_STRLEN];
        acc_time_format(t, s1);
        acc_time_format(t + 900, s2);
        int64_t cap, used = hs_peak("fh-brs", "fh-brs", s1, s2, &cap);
        if (used >= cap)
            continue;
        snprintf(path, sizeof path,
                 "/adapters/fh-brs/control/book?start=%s&end=%s&amount=%lld&key=block-%lld", s1, s2,
                 (long long)(cap - used), (long long)t);
        struct http_reply r;
        CU_ASSERT_EQUAL(http_do("POST", hs_url(path), "", 0, NULL, &r), 0);
        CU_ASSERT_EQUAL(r.status, 200);
        http_reply_free(&r);
    }
    snprintf(sched, sizeof sched,
             "<co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>PT1H</co:Duration>",
             start, end);
    const char *sites[] = {"fh-brs:4", "caesar:4"};
    int before = hs_count_agreements();
    struct http_reply r;
    CU_ASSERT_EQUAL(hs_post("/agreements", hs_offer("no-slot", sched, sites, 2, 10), &r), 409);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    CU_ASSERT_STRING_EQUAL(code ? code : "", "NoCommonSlot");
    free(code);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "site fh-brs"));
    char *id = xml_get(r.body, "/co:Fault/co:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(hs_count_agreements(), before + 1); /* kept, as Rejected */
    snprintf(path, sizeof path, "/agreements/%s", id);
    hs_get(path, &r);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Rejected");
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Allocation/co:Reason") >= 2);
    free(st);
    http_reply_free(&r);
    /* Nothing of it was booked anywhere. */
    char *b = hs_bookings("caesar");
    CU_ASSERT_PTR_NULL(strstr(b, id));
    free(b);
    free(id);
}

static void test_adapter_failure_rolls_back(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(
        hs_post("/adapters/fzj-xd1/control/fault?call=reserve&action=unavailable", "", &r), 200);
    http_reply_free(&r);
    const char *sites[] = {"caesar:4", "fh-brs:4", "fzj-xd1:4"};
    CU_ASSERT_EQUAL(hs_post("/agreements",
                            hs_offer("down", "<co:Duration>PT1H</co:Duration>", sites, 3, 10), &r),
                    503);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    CU_ASSERT_STRING_EQUAL(code ? code : "", "AdapterUnavailable");
    free(code);
    char *id = xml_get(r.body, "/co:Fault/co:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    http_reply_free(&r);
    /* The reservations made at the other sites were rolled back. */
    static const char *const all[] = {"caesar", "fh-brs", "fzj-xd1", "wan"};
    for (int i = 0; i < 4; i++) {
        char *b = hs_bookings(all[i]);
        CU_ASSERT_PTR_NULL(strstr(b, id));
        free(b);
    }
    free(id);
}

static void test_competing_booking_rollback(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(hs_post("/adapters/caesar/control/fault?call=reserve&action=compete", "", &r),
                    200);
    http_reply_free(&r);
    const char *sites[] = {"caesar:16", "fzj-xd1:8"};
    CU_ASSERT_EQUAL(hs_post("/agreements",
                            hs_offer("compete", "<co:Duration>PT2H</co:Duration>", sites, 2, 1000),
                            &r),
                    201);
    char *id = hs_id_of(&r);
    char *start = xml_get(r.body, "//co:Allocation/co:Start");
    char *end = xml_get(r.body, "//co:Allocation/co:End");
    char *rollbacks = xml_get(r.body, "//co:Allocation/co:Rollbacks");
    CU_ASSERT_TRUE(rollbacks && strtol(rollbacks, NULL, 10) >= 1);
    http_reply_free(&r);
    /* It landed where caesar still has room beside the competitor. */
    int64_t cap;
    CU_ASSERT_TRUE(hs_peak("caesar", "caesar", start, end, &cap) <= cap);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    hs_get(path, &r);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Event[@co:kind='rollback']") >= 1);
    http_reply_free(&r);
    free(rollbacks);
    free(start);
    free(end);
    free(id);
}

static void test_late_reservation_retried(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(
        hs_post("/adapters/fh-brs/control/fault?call=reserve&action=late&seconds=5400", "", &r),
        200);
    http_reply_free(&r);
    const char *sites[] = {"fh-brs:2", "caesar:2"};
    CU_ASSERT_EQUAL(hs_post("/agreements",
                            hs_offer("late", "<co:Duration>PT1H</co:Duration>", sites, 2, 10), &r),
                    201);
    char *rollbacks = xml_get(r.body, "//co:Allocation/co:Rollbacks");
    CU_ASSERT_TRUE(rollbacks && strtol(rollbacks, NULL, 10) >= 1);
    free(rollbacks);
    http_reply_free(&r);
}

static void test_site_chosen_and_iterative(void)
{
    /* A component without a site, negotiated the VIOLA way. */
    const char *doc =
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
        "<co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"fixed\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Site>caesar</co:Site><co:Nodes>4</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"free\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Nodes>40</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"n\" wsag:ServiceName=\"m\"><co:Negotiation>"
        "<co:Strategy>iterative</co:Strategy></co:Negotiation></wsag:ServiceDescriptionTerm>"
        "</wsag:All></wsag:Terms></wsag:AgreementOffer>";
    struct http_reply r;
    CU_ASSERT_EQUAL(hs_post("/agreements", doc, &r), 201);
    char *site = xml_get(r.body, "//co:ComponentAllocation[@co:name='free']/co:Site");
    char *strategy = xml_get(r.body, "//co:Allocation/co:Strategy");
    /* 40 nodes fit on fzj-xd1 (64) or caesar (128), not on fh-brs (32). */
    CU_ASSERT_TRUE(site && (strcmp(site, "fzj-xd1") == 0 || strcmp(site, "caesar") == 0));
    CU_ASSERT_STRING_EQUAL(strategy ? strategy : "", "iterative");
    char *id = hs_id_of(&r);
    http_reply_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    hs_get(path, &r);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Event[@co:kind='plan']"), 2); /* two candidates */
    http_reply_free(&r);
    free(site);
    free(strategy);
    free(id);
}

static const struct acc_test_case tests[] = {
    {"example offer from docs -> 201, booked in every calendar", test_example_offer_agreed},
    {"read endpoints", test_read_endpoints},
    {"terminate releases every reservation", test_terminate_releases},
    {"restart keeps agreements and calendars", test_restart_keeps_agreements},
    {"pending mode negotiates in the background", test_pending_mode},
    {"idempotency key: one booking", test_idempotency_key},
    {"no slot -> 409, Rejected and kept", test_no_slot_rejected_and_kept},
    {"adapter down -> 503, everything rolled back", test_adapter_failure_rolls_back},
    {"competing booking -> rollback, lands beside it", test_competing_booking_rollback},
    {"late reservation -> verify, retry", test_late_reservation_retried},
    {"a site chosen by Accord, iterative strategy", test_site_chosen_and_iterative},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"http", http_suite_setup, http_suite_teardown, tests},
    {NULL, NULL, NULL, NULL},
};
