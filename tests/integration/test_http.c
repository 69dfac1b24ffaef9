/* test_http.c - accordd in-process on port 0, driven over HTTP with libcurl. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

static struct fixture fx;
static char db_path[256];

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};
static const char *const JSON_ACCEPT[] = {"Accept: application/json", NULL};

static char *url(const char *path)
{
    static char buf[1024]; /* base (64) + the longest path a test builds (512) */
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

static long get(const char *path, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url(path), NULL, 0, NULL, r), 0);
    return r->status;
}

static long post(const char *path, const char *body, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url(path), body, body ? strlen(body) : 0, XML_HDR, r), 0);
    return r->status;
}

/* An offer with one component per site given ("site:nodes"), links between
 * consecutive components, and the schedule fragment given. */
static char *offer(const char *name, const char *schedule, const char *const *comps, size_t n,
                   int bandwidth)
{
    static char buf[16384];
    size_t used = (size_t)snprintf(
        buf, sizeof buf,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>%s</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
        "wsag:ServiceName=\"metajob\"><co:Schedule>%s</co:Schedule>"
        "</wsag:ServiceDescriptionTerm>",
        name, schedule);
    for (size_t i = 0; i < n; i++) {
        char site[64];
        int nodes;
        sscanf(comps[i], "%63[^:]:%d", site, &nodes);
        used += (size_t)snprintf(buf + used, sizeof buf - used,
                                 "<wsag:ServiceDescriptionTerm wsag:Name=\"c%zu\" "
                                 "wsag:ServiceName=\"metajob\"><co:Component><co:Site>%s</co:Site>"
                                 "<co:Nodes>%d</co:Nodes><co:Executable>/bin/true</co:Executable>"
                                 "</co:Component></wsag:ServiceDescriptionTerm>",
                                 i, site, nodes);
    }
    for (size_t i = 0; bandwidth && i + 1 < n; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used,
                                 "<wsag:ServiceDescriptionTerm wsag:Name=\"l%zu\" "
                                 "wsag:ServiceName=\"metajob\"><co:Link><co:Between>c%zu"
                                 "</co:Between><co:And>c%zu</co:And><co:Bandwidth>%d"
                                 "</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm>",
                                 i, i, i + 1, bandwidth);
    snprintf(buf + used, sizeof buf - used, "</wsag:All></wsag:Terms></wsag:AgreementOffer>");
    return buf;
}

static char *id_of(const struct http_reply *r)
{
    const char *slash = strrchr(r->location, '/');
    return slash ? strdup(slash + 1) : NULL;
}

static int count_agreements(void)
{
    struct http_reply r;
    get("/agreements?limit=1000", &r);
    int n = xml_count(r.body, "/co:AgreementList/co:AgreementRef");
    http_reply_free(&r);
    return n;
}

/* The simulator's bookings (one line each: key resource start end amount owner). */
static char *bookings(const char *adapter)
{
    char path[128];
    snprintf(path, sizeof path, "/adapters/%s/control/bookings", adapter);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", url(path), "", 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    char *b = r.body;
    r.body = NULL;
    http_reply_free(&r);
    return b;
}

static int64_t peak(const char *adapter, const char *resource, const char *from, const char *until,
                    int64_t *capacity)
{
    char path[512];
    snprintf(path, sizeof path, "/adapters/%s/control/peak?resource=%s&from=%s&until=%s", adapter,
             resource, from, until);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", url(path), "", 0, NULL, &r), 0);
    long long p = -1, c = -1;
    char name[64];
    if (r.body)
        sscanf(r.body, "%63s peak %lld capacity %lld", name, &p, &c);
    http_reply_free(&r);
    *capacity = c;
    return p;
}

static int setup(void)
{
    snprintf(db_path, sizeof db_path, "%s/http.db", acc_test_tmpdir());
    return fixture_start(&fx, NULL, db_path);
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

/* ------------------------------------------------------------------ tests */

static char *example_id;

static void test_example_offer_agreed(void)
{
    size_t len;
    char *doc = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), doc, len, XML_HDR, &r), 0);
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
        char *b = bookings(site);
        char *line = b ? strstr(b, key) : NULL;
        CU_ASSERT_PTR_NOT_NULL(line);
        if (line) /* booked exactly over the agreed interval */
            CU_ASSERT_EQUAL(strncmp(strchr(line, ' ') + 1 + strlen(site) + 1, start, strlen(start)),
                            0);
        int64_t cap;
        int64_t p = peak(site, site, start, end, &cap);
        CU_ASSERT_TRUE(p > 0);
        CU_ASSERT_TRUE(p <= cap);
        free(b);
        free(site);
        free(key);
    }
    char *link = xml_get(r.body, "(//co:LinkAllocation)[1]/co:Link");
    char *lkey = xml_get(r.body, "(//co:LinkAllocation)[1]/co:Reservation");
    CU_ASSERT_PTR_NOT_NULL_FATAL(link);
    char *wan = bookings("wan");
    CU_ASSERT_PTR_NOT_NULL(lkey && wan ? strstr(wan, lkey) : NULL);
    int64_t cap;
    int64_t p = peak("wan", link, start, end, &cap);
    CU_ASSERT_TRUE(p >= 5000 && p <= cap);
    free(wan);
    free(link);
    free(lkey);
    example_id = id_of(&r);
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
    CU_ASSERT_EQUAL(get(path, &r), 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/xml");
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s/state", example_id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    char *st = xml_get(r.body, "//wsag:AgreementState/wsag:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    CU_ASSERT_EQUAL(xml_count(r.body, "//wsag:ServiceTermState"), 5); /* 3 components, 2 links */
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s/negotiation", example_id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Event[@co:kind='preview']") >= 4);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Event[@co:kind='agree']"), 1);
    http_reply_free(&r);

    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(http_do("GET", url(path), NULL, 0, JSON_ACCEPT, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, example_id));
    http_reply_free(&r);

    CU_ASSERT_EQUAL(get("/agreements?state=Observed&initiator=alice", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:AgreementRef") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements?site=fh-brs", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:AgreementRef") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements?initiator=nobody-else", &r), 200);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:AgreementRef"), 0);
    http_reply_free(&r);

    CU_ASSERT_EQUAL(get("/sites", &r), 200);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Site"), 3);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Link"), 3);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/sites/caesar", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/sites/nowhere", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/sites/caesar/preview?nodes=16&duration=PT2H", &r), 200);
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Frame") >= 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/sites/caesar/preview?nodes=1000&duration=PT2H", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/templates", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/templates/meta-job", &r), 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caesar"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/healthz", &r), 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/metrics", &r), 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "accord_negotiations_total{outcome=\"agreed\"}"));
    http_reply_free(&r);
}

static void test_terminate_releases(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(example_id);
    char path[128];
    struct http_reply r;
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    char *key = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Reservation");
    char *site = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Site");
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(key);

    snprintf(path, sizeof path, "/agreements/%s/terminate", example_id);
    CU_ASSERT_EQUAL(post(path, NULL, &r), 200);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Terminated");
    free(st);
    http_reply_free(&r);
    char *b = bookings(site);
    CU_ASSERT_PTR_NULL(strstr(b, key));
    free(b);
    char *wan = bookings("wan");
    CU_ASSERT_PTR_NULL(strstr(wan, example_id)); /* keys carry the agreement id */
    free(wan);
    /* Terminating again is harmless; DELETE does the same. */
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(http_do("DELETE", url(path), NULL, 0, NULL, &r), 0);
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
    CU_ASSERT_EQUAL(post("/agreements",
                         offer("before-restart", "<co:Duration>PT1H</co:Duration>", sites, 2, 100),
                         &r),
                    201);
    char *id = id_of(&r);
    char *key = xml_get(r.body, "(//co:ComponentAllocation)[1]/co:Reservation");
    http_reply_free(&r);
    int before = count_agreements();

    fixture_stop(&fx);
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, NULL, db_path), 0);

    CU_ASSERT_EQUAL(count_agreements(), before);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", example_id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Terminated");
    free(st);
    http_reply_free(&r);
    /* The simulators' calendars came back from SQLite too. */
    char *b = bookings("caesar");
    CU_ASSERT_PTR_NOT_NULL(key ? strstr(b, key) : NULL);
    free(b);
    free(key);
    free(id);
}

static void test_pending_mode(void)
{
    const char *sites[] = {"fh-brs:2"};
    struct http_reply r;
    CU_ASSERT_EQUAL(post("/agreements?mode=pending",
                         offer("pending", "<co:Duration>PT30M</co:Duration>", sites, 1, 0), &r),
                    202);
    char *id = id_of(&r);
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128], *st = NULL;
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    for (int i = 0; i < 100; i++) {
        free(st);
        get(path, &r);
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
    const char *doc = offer("idem", "<co:Duration>PT45M</co:Duration>", sites, 1, 0);
    struct http_reply a, b;
    CU_ASSERT_EQUAL(http_do("POST", url("/agreements"), doc, strlen(doc), hdr, &a), 0);
    CU_ASSERT_EQUAL(http_do("POST", url("/agreements"), doc, strlen(doc), hdr, &b), 0);
    CU_ASSERT_EQUAL(a.status, 201);
    CU_ASSERT_EQUAL(b.status, 201);
    CU_ASSERT_FALSE(a.replayed);
    CU_ASSERT_TRUE(b.replayed);
    CU_ASSERT_STRING_EQUAL(a.location, b.location);
    /* One booking, not two. */
    char *id = id_of(&a);
    char *bk = bookings("fh-brs");
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
        int64_t cap, used = peak("fh-brs", "fh-brs", s1, s2, &cap);
        if (used >= cap)
            continue;
        snprintf(path, sizeof path,
                 "/adapters/fh-brs/control/book?start=%s&end=%s&amount=%lld&key=block-%lld", s1, s2,
                 (long long)(cap - used), (long long)t);
        struct http_reply r;
        CU_ASSERT_EQUAL(http_do("POST", url(path), "", 0, NULL, &r), 0);
        CU_ASSERT_EQUAL(r.status, 200);
        http_reply_free(&r);
    }
    snprintf(sched, sizeof sched,
             "<co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>PT1H</co:Duration>",
             start, end);
    const char *sites[] = {"fh-brs:4", "caesar:4"};
    int before = count_agreements();
    struct http_reply r;
    CU_ASSERT_EQUAL(post("/agreements", offer("no-slot", sched, sites, 2, 10), &r), 409);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    CU_ASSERT_STRING_EQUAL(code ? code : "", "NoCommonSlot");
    free(code);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "site fh-brs"));
    char *id = xml_get(r.body, "/co:Fault/co:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(count_agreements(), before + 1); /* kept, as Rejected */
    snprintf(path, sizeof path, "/agreements/%s", id);
    get(path, &r);
    char *st = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Rejected");
    CU_ASSERT_TRUE(xml_count(r.body, "//co:Allocation/co:Reason") >= 2);
    free(st);
    http_reply_free(&r);
    /* Nothing of it was booked anywhere. */
    char *b = bookings("caesar");
    CU_ASSERT_PTR_NULL(strstr(b, id));
    free(b);
    free(id);
}

static void test_adapter_failure_rolls_back(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(post("/adapters/fzj-xd1/control/fault?call=reserve&action=unavailable", "", &r),
                    200);
    http_reply_free(&r);
    const char *sites[] = {"caesar:4", "fh-brs:4", "fzj-xd1:4"};
    CU_ASSERT_EQUAL(
        post("/agreements", offer("down", "<co:Duration>PT1H</co:Duration>", sites, 3, 10), &r),
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
        char *b = bookings(all[i]);
        CU_ASSERT_PTR_NULL(strstr(b, id));
        free(b);
    }
    free(id);
}

static void test_competing_booking_rollback(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(post("/adapters/caesar/control/fault?call=reserve&action=compete", "", &r),
                    200);
    http_reply_free(&r);
    const char *sites[] = {"caesar:16", "fzj-xd1:8"};
    CU_ASSERT_EQUAL(post("/agreements",
                         offer("compete", "<co:Duration>PT2H</co:Duration>", sites, 2, 1000), &r),
                    201);
    char *id = id_of(&r);
    char *start = xml_get(r.body, "//co:Allocation/co:Start");
    char *end = xml_get(r.body, "//co:Allocation/co:End");
    char *rollbacks = xml_get(r.body, "//co:Allocation/co:Rollbacks");
    CU_ASSERT_TRUE(rollbacks && strtol(rollbacks, NULL, 10) >= 1);
    http_reply_free(&r);
    /* It landed where caesar still has room beside the competitor. */
    int64_t cap;
    CU_ASSERT_TRUE(peak("caesar", "caesar", start, end, &cap) <= cap);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    get(path, &r);
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
        post("/adapters/fh-brs/control/fault?call=reserve&action=late&seconds=5400", "", &r), 200);
    http_reply_free(&r);
    const char *sites[] = {"fh-brs:2", "caesar:2"};
    CU_ASSERT_EQUAL(
        post("/agreements", offer("late", "<co:Duration>PT1H</co:Duration>", sites, 2, 10), &r),
        201);
    char *rollbacks = xml_get(r.body, "//co:Allocation/co:Rollbacks");
    CU_ASSERT_TRUE(rollbacks && strtol(rollbacks, NULL, 10) >= 1);
    free(rollbacks);
    http_reply_free(&r);
}

struct bad_case {
    const char *name;
    const char *body; /* NULL: built by the test */
    long status;
    const char *code;
    const char *says;
};

static void test_bad_input(void)
{
    char huge_path[256];
    snprintf(huge_path, sizeof huge_path, "%s/huge.xml", acc_test_tmpdir());
    size_t big = 2 * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    memcpy(huge, "<a>", 3);
    huge[big] = '\0';

    const char *one[] = {"caesar:8"};
    char deep[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(deep, "<a>");
    static char tmp[10][16384];
    snprintf(tmp[0], sizeof tmp[0], "%s",
             offer("zero", "<co:Duration>PT1H</co:Duration>", one, 1, 0));
    char *p = strstr(tmp[0], "<co:Nodes>8");
    memcpy(p, "<co:Nodes>0", 11);
    const char *unknown[] = {"atlantis:4"};
    snprintf(tmp[1], sizeof tmp[1], "%s",
             offer("unknown-site", "<co:Duration>PT1H</co:Duration>", unknown, 1, 0));
    const char *toomany[] = {"fh-brs:33"};
    snprintf(tmp[2], sizeof tmp[2], "%s",
             offer("too-many", "<co:Duration>PT1H</co:Duration>", toomany, 1, 0));
    snprintf(tmp[3], sizeof tmp[3], "%s",
             offer("window",
                   "<co:EarliestStart>2030-01-02T00:00:00Z</co:EarliestStart>"
                   "<co:Deadline>2030-01-01T00:00:00Z</co:Deadline>"
                   "<co:Duration>PT1H</co:Duration>",
                   one, 1, 0));
    snprintf(tmp[4], sizeof tmp[4], "%s",
             offer("short",
                   "<co:EarliestStart>2030-01-01T00:00:00Z</co:EarliestStart>"
                   "<co:Deadline>2030-01-01T01:00:00Z</co:Deadline>"
                   "<co:Duration>PT2H</co:Duration>",
                   one, 1, 0));
    const char *two[] = {"caesar:8", "fh-brs:8"};
    snprintf(tmp[5], sizeof tmp[5], "%s",
             offer("neg-bw", "<co:Duration>PT1H</co:Duration>", two, 2, 77));
    p = strstr(tmp[5], "<co:Bandwidth>77");
    memcpy(p, "<co:Bandwidth>-7", 16);
    snprintf(tmp[6], sizeof tmp[6], "%s",
             offer("bad-link", "<co:Duration>PT1H</co:Duration>", two, 2, 77));
    p = strstr(tmp[6], "<co:And>c1");
    memcpy(p, "<co:And>c9", 10);
    snprintf(tmp[7], sizeof tmp[7], "%s",
             offer("bw", "<co:Duration>PT1H</co:Duration>", two, 2, 99999));
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
    int before = count_agreements();
    char *bk_before = bookings("caesar");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct http_reply r;
        const struct bad_case *c = &cases[i];
        CU_ASSERT_EQUAL_FATAL(
            http_do("POST", url("/agreements"), c->body, strlen(c->body), XML_HDR, &r), 0);
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
    /* Nothing stored, nothing booked, and the server still serves. */
    CU_ASSERT_EQUAL(count_agreements(), before);
    char *bk_after = bookings("caesar");
    CU_ASSERT_STRING_EQUAL(bk_before, bk_after);
    free(bk_before);
    free(bk_after);
    struct http_reply r;
    CU_ASSERT_EQUAL(get("/healthz", &r), 200);
    http_reply_free(&r);

    /* Transport-level mistakes. */
    const char *json_hdr[] = {"Content-Type: application/json", NULL};
    CU_ASSERT_EQUAL(http_do("POST", url("/agreements"), "{}", 2, json_hdr, &r), 0);
    CU_ASSERT_EQUAL(r.status, 415);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(http_do("PUT", url("/agreements"), "x", 1, XML_HDR, &r), 0);
    CU_ASSERT_EQUAL(r.status, 405);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/nothing/here", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements/aaaaaaaaaaaaaaaa", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements/'%20or%201=1", &r), 404);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements?state=Sleeping", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/agreements?from=yesterday", &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(http_do("GET", url("/agreements/none"), NULL, 0, JSON_ACCEPT, &r), 0);
    CU_ASSERT_EQUAL(r.status, 404);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"code\""));
    http_reply_free(&r);
    free(huge);
}

/* Mistakes in a request's query are InvalidRequest, not InvalidOffer; no
 * time beyond 9999-12-31T23:59:59Z is taken, and none is ever shown as year
 * 0000. */
static void test_query_errors_and_time_bounds(void)
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
        CU_ASSERT_EQUAL(get(cases[i].path, &r), 400);
        char *code = xml_get(r.body, "/co:Fault/@co:code");
        if (!code || strcmp(code, cases[i].code) != 0 || !strstr(r.body, cases[i].says))
            fprintf(stderr, "\n  %s: %ld %.300s\n", cases[i].path, r.status, r.body);
        CU_ASSERT_STRING_EQUAL(code ? code : "", cases[i].code);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.body, cases[i].says));
        free(code);
        http_reply_free(&r);
    }
    /* A preview from the last day: the horizon ends at the last second. */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        get("/sites/caesar/preview?nodes=1&duration=PT1H&from=9999-12-31T00:00:00Z", &r), 200);
    CU_ASSERT_PTR_NULL(strstr(r.body, "0000-"));
    char *until = xml_get(r.body, "/co:Preview/@co:until");
    CU_ASSERT_STRING_EQUAL(until ? until : "", "9999-12-31T23:59:59Z");
    if (!until || strcmp(until, "9999-12-31T23:59:59Z") != 0)
        fprintf(stderr, "\n  preview: %.600s\n", r.body);
    free(until);
    http_reply_free(&r);

    /* An offer in the last days without a deadline: its window ends at the
     * last second, and its negotiation trace never shows year 0000. */
    const char *one[] = {"caesar:2"};
    CU_ASSERT_EQUAL(post("/agreements",
                         offer("last-days",
                               "<co:EarliestStart>9999-12-28T00:00:00Z</co:EarliestStart>"
                               "<co:Duration>PT1H</co:Duration>",
                               one, 1, 0),
                         &r),
                    201);
    char *id = id_of(&r);
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    CU_ASSERT_EQUAL(get(path, &r), 200);
    CU_ASSERT_PTR_NULL(strstr(r.body, "0000-"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "9999-12-31T23:59:59Z"));
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(http_do("DELETE", url(path), NULL, 0, NULL, &r), 0);
    http_reply_free(&r);
    free(id);

    /* An offer that would end after the bound is refused, nothing stored. */
    int before = count_agreements();
    CU_ASSERT_EQUAL(post("/agreements",
                         offer("too-late",
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
                                offer("nul", "<co:Duration>PT1H</co:Duration>", one, 1, 0));
    memcpy(body + n, "\0garbage", 8);
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), body, n + 8, XML_HDR, &r), 0);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "MalformedDocument"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "NUL"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(count_agreements(), before);
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
    CU_ASSERT_EQUAL(post("/agreements", doc, &r), 201);
    char *site = xml_get(r.body, "//co:ComponentAllocation[@co:name='free']/co:Site");
    char *strategy = xml_get(r.body, "//co:Allocation/co:Strategy");
    /* 40 nodes fit on fzj-xd1 (64) or caesar (128), not on fh-brs (32). */
    CU_ASSERT_TRUE(site && (strcmp(site, "fzj-xd1") == 0 || strcmp(site, "caesar") == 0));
    CU_ASSERT_STRING_EQUAL(strategy ? strategy : "", "iterative");
    char *id = id_of(&r);
    http_reply_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/negotiation", id);
    get(path, &r);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Event[@co:kind='plan']"), 2); /* two candidates */
    http_reply_free(&r);
    free(site);
    free(strategy);
    free(id);
}

/* ------------------------------------------- an adapter that hangs too long */

static const char hang_ini[] = "[server]\n"
                               "allow_control = yes\n"
                               "[negotiation]\n"
                               "adapter_timeout = PT1S\n"
                               "[site a]\nadapter = sim-batch\nnodes = 8\n"
                               "[site b]\nadapter = sim-batch\nnodes = 8\n";

static void test_hang_times_out_and_late_booking_released(void)
{
    struct fixture hang;
    char db[256], u[256];
    snprintf(db, sizeof db, "%s/hang.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start(&hang, hang_ini, db), 0);
    struct http_reply r;
    snprintf(u, sizeof u, "%s/adapters/b/control/fault?call=reserve&action=hang&seconds=2",
             hang.base);
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &r), 0);
    http_reply_free(&r);
    const char *sites[] = {"a:2", "b:2"};
    const char *doc = offer("hang", "<co:Duration>PT1H</co:Duration>", sites, 2, 0);
    snprintf(u, sizeof u, "%s/agreements", hang.base);
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(http_do("POST", u, doc, strlen(doc), XML_HDR, &r), 0);
    int64_t took = acc_mono_us() - t0;
    CU_ASSERT_EQUAL(r.status, 503);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    CU_ASSERT_STRING_EQUAL(code ? code : "", "AdapterTimeout");
    char *id = xml_get(r.body, "/co:Fault/co:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE(took < 1900000); /* it did not wait for the hang to end */
    free(code);
    http_reply_free(&r);
    /* b answers after 2 s and books: that late booking must be cancelled at
     * once (a's was rolled back at the time limit). */
    while (acc_mono_us() - t0 < 2500000)
        usleep(50000);
    bool clean = false;
    for (int i = 0; i < 100 && !clean; i++) {
        clean = true;
        static const char *const ads[] = {"a", "b"};
        for (int k = 0; k < 2; k++) {
            snprintf(u, sizeof u, "%s/adapters/%s/control/bookings", hang.base, ads[k]);
            CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &r), 0);
            clean &= r.body && !strstr(r.body, id);
            http_reply_free(&r);
        }
        if (!clean)
            usleep(50000);
    }
    CU_ASSERT_TRUE(clean);
    free(id);
    fixture_stop(&hang);
}

/* ------------------------------------------------------- authentication */

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

static void test_tokens_and_ownership(void)
{
    char tokens[256], ini[512], db[256];
    snprintf(tokens, sizeof tokens, "%s/tokens", acc_test_tmpdir());
    FILE *f = fopen(tokens, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# user token [admin]\nalice alice-token-0123456789\nbob bob-token-0123456789abc\n"
          "root root-token-0123456789 admin\n",
          f);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(ini, sizeof ini,
             "[server]\nallow_control = yes\n[auth]\ntokens = %s\n"
             "[site a]\nadapter = sim-batch\nnodes = 8\n",
             tokens);
    snprintf(db, sizeof db, "%s/auth.db", acc_test_tmpdir());
    struct fixture au;
    CU_ASSERT_EQUAL_FATAL(fixture_start(&au, ini, db), 0);
    const char *alice[] = {"Authorization: Bearer alice-token-0123456789",
                           "Content-Type: application/xml", NULL};
    const char *bob[] = {"Authorization: Bearer bob-token-0123456789abc", NULL};
    const char *root[] = {"Authorization: Bearer root-token-0123456789", NULL};
    const char *wrong[] = {"Authorization: Bearer not-a-token-at-all", NULL};
    struct http_reply r;

    call(&au, "GET", "/healthz", NULL, NULL, 200, &r);
    http_reply_free(&r);
    call(&au, "GET", "/agreements", NULL, NULL, 401, &r);
    http_reply_free(&r);
    call(&au, "GET", "/sites", NULL, wrong, 401, &r);
    http_reply_free(&r);

    const char *sites[] = {"a:2"};
    char *doc = strdup(offer("mine", "<co:Duration>PT1H</co:Duration>", sites, 1, 0));
    char *as_alice = malloc(strlen(doc) + 16), *p = strstr(doc, "tester");
    snprintf(as_alice, strlen(doc) + 16, "%.*salice%s", (int)(p - doc), doc, p + 6);
    call(&au, "POST", "/agreements", as_alice, alice, 201, &r);
    char *id = id_of(&r);
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

    /* Another user's agreement answers as an unknown one: ids and owners
     * cannot be probed. */
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
    free(id);
    free(doc);
    free(as_alice);
    fixture_stop(&au);
}

/* ------------------------------------------------ concurrency: one site */

static struct fixture solo;

static const char solo_ini[] = "[server]\n"
                               "allow_control = yes\n"
                               "[database]\n"
                               "durable = no\n"
                               "[site solo]\n"
                               "adapter = sim-batch\n"
                               "nodes = 16\n";

struct poster {
    pthread_t tid;
    const char *doc;
    long status;
    acc_time start, end;
};

static void *post_one(void *arg)
{
    struct poster *p = arg;
    char u[128];
    snprintf(u, sizeof u, "%s/agreements", solo.base);
    struct http_reply r;
    if (http_do("POST", u, p->doc, strlen(p->doc), XML_HDR, &r) == 0) {
        p->status = r.status;
        char *s = xml_get(r.body, "//co:Allocation/co:Start");
        char *e = xml_get(r.body, "//co:Allocation/co:End");
        if (s && e) {
            acc_time_parse(s, &p->start, NULL);
            acc_time_parse(e, &p->end, NULL);
        }
        free(s);
        free(e);
    }
    http_reply_free(&r);
    return NULL;
}

static void test_concurrent_posts_never_overbook(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/solo.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start(&solo, solo_ini, db), 0);
    const char *one[] = {"solo:10"}; /* two never fit at once on 16 nodes */
    char *doc = strdup(offer("race", "<co:Duration>PT1H</co:Duration>", one, 1, 0));
    struct poster p[32];
    for (int i = 0; i < 32; i++) {
        p[i] = (struct poster){.doc = doc};
        pthread_create(&p[i].tid, NULL, post_one, &p[i]);
    }
    for (int i = 0; i < 32; i++)
        pthread_join(p[i].tid, NULL);
    int ok = 0;
    for (int i = 0; i < 32; i++) {
        ok += p[i].status == 201;
        for (int j = 0; j < i; j++) {
            bool overlap = p[i].start < p[j].end && p[j].start < p[i].end;
            CU_ASSERT_FALSE(p[i].status == 201 && p[j].status == 201 && overlap);
        }
    }
    CU_ASSERT_EQUAL(ok, 32);
    /* And the calendar agrees: never more than 16 nodes at any time. */
    char u[256];
    snprintf(u, sizeof u, "%s/adapters/solo/control/peak", solo.base);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &r), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "solo peak 10 capacity 16"));
    http_reply_free(&r);
    free(doc);
    fixture_stop(&solo);
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
    {"bad input: clear 4xx, nothing stored or booked", test_bad_input},
    {"query errors are InvalidRequest; no time after 9999", test_query_errors_and_time_bounds},
    {"a site chosen by Accord, iterative strategy", test_site_chosen_and_iterative},
    {"hung adapter -> 503 after its time limit, late booking released",
     test_hang_times_out_and_late_booking_released},
    {"32 concurrent POSTs for one site never overbook", test_concurrent_posts_never_overbook},
    {"tokens: 401 without, 403 for what is someone else's", test_tokens_and_ownership},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"http", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
