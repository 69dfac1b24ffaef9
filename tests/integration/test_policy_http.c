/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy_http.c - placement policies and application-sized links
 * through accordd's real HTTP path (in-process, port 0, libcurl). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"

static struct fixture fx;

static const char ini[] = "[server]\n"
                          "allow_control = yes\n"
                          "[negotiation]\n"
                          "policy = worst-fit\n"
                          "[site a]\nadapter = sim-batch\nnodes = 16\n"
                          "[site b]\nadapter = sim-batch\nnodes = 32\n"
                          "[site c]\nadapter = sim-batch\nnodes = 8\n"
                          "[network wan]\nadapter = sim-network\n"
                          "[link a_b]\nsites = a b\ncapacity = 1000\nnetwork = wan\n"
                          "[link a_c]\nsites = a c\ncapacity = 1000\nnetwork = wan\n"
                          "[link b_c]\nsites = b c\ncapacity = 1000\nnetwork = wan\n"
                          /* b and c are close, a is far from both */
                          "[policy]\nlatency = a a 0.05\nlatency = b b 0.05\n"
                          "latency = c c 0.05\nlatency = a b 5\nlatency = a c 5\n"
                          "latency = b c 0.5\n";

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};

static long post(const char *body, struct http_reply *r)
{
    char url[256];
    snprintf(url, sizeof url, "%s/agreements", fx.base);
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url, body, strlen(body), XML_HDR, r), 0);
    return r->status;
}

static char *trace_of(const struct http_reply *r)
{
    const char *slash = strrchr(r->location, '/');
    char url[256];
    snprintf(url, sizeof url, "%s/agreements/%s/negotiation", fx.base, slash ? slash + 1 : "");
    struct http_reply t;
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url, NULL, 0, NULL, &t), 0);
    char *body = t.body;
    t.body = NULL;
    http_reply_free(&t);
    return body;
}

/* An offer: terms is the part after the schedule. */
static char *offer(const char *terms)
{
    static char buf[8192];
    snprintf(
        buf, sizeof buf,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
        "<co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>%s"
        "</wsag:All></wsag:Terms></wsag:AgreementOffer>",
        terms);
    return buf;
}

#define COMP(name, site, nodes)                                        \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"" name                   \
    "\" wsag:ServiceName=\"m\"><co:Component>" site "<co:Nodes>" nodes \
    "</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
#define POLICY(p)                                                                          \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"n\" wsag:ServiceName=\"m\"><co:Negotiation>" \
    "<co:Policy>" p "</co:Policy></co:Negotiation></wsag:ServiceDescriptionTerm>"
#define LINK(body)                                                                  \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"l\" wsag:ServiceName=\"m\"><co:Link>" \
    "<co:Between>x</co:Between><co:And>y</co:And>" body "</co:Link></wsag:ServiceDescriptionTerm>"

static char *site_of(const struct http_reply *r, const char *comp)
{
    char xp[128];
    snprintf(xp, sizeof xp, "//co:ComponentAllocation[@co:name='%s']/co:Site", comp);
    char *s = xml_get(r->body, xp);
    return s ? s : strdup("");
}

static int setup(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/policy.db", acc_test_tmpdir());
    return fixture_start(&fx, ini, db);
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

static void test_configured_worst_fit(void)
{
    /* WF with repeats on (16, 32, 8): 10 -> b (22 left), 10 -> b again. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(COMP("x", "", "10") COMP("y", "", "10")), &r), 201);
    char *x = site_of(&r, "x"), *y = site_of(&r, "y");
    CU_ASSERT_STRING_EQUAL(x, "b");
    CU_ASSERT_STRING_EQUAL(y, "b");
    char *trace = trace_of(&r);
    CU_ASSERT_PTR_NOT_NULL(strstr(trace ? trace : "", "policy worst-fit, candidate 1"));
    free(trace);
    free(x);
    free(y);
    http_reply_free(&r);
}

static void test_offer_chooses_distinct(void)
{
    /* WF without repetitions: 12 -> b, 10 -> a (the second most idle). */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        post(offer(COMP("x", "", "12") COMP("y", "", "10") POLICY("worst-fit-distinct")), &r), 201);
    char *x = site_of(&r, "x"), *y = site_of(&r, "y");
    CU_ASSERT_STRING_EQUAL(x, "b");
    CU_ASSERT_STRING_EQUAL(y, "a");
    free(x);
    free(y);
    http_reply_free(&r);
}

static void test_fixed_component_lowers_idle(void)
{
    /* 30 fixed on b leaves it 2; worst fit then picks a (16) for 10. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(COMP("x", "<co:Site>b</co:Site>", "30") COMP("y", "", "10")), &r),
                    201);
    char *y = site_of(&r, "y");
    CU_ASSERT_STRING_EQUAL(y, "a");
    free(y);
    http_reply_free(&r);
}

static void test_bad_policies(void)
{
    static const char *const bad[] = {"fcm", "best-fit", "fcm-0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char terms[1024];
        snprintf(terms, sizeof terms,
                 COMP("x", "", "4") "<wsag:ServiceDescriptionTerm wsag:Name=\"n\" "
                                    "wsag:ServiceName=\"m\"><co:Negotiation><co:Policy>%s"
                                    "</co:Policy></co:Negotiation></wsag:ServiceDescriptionTerm>",
                 bad[i]);
        struct http_reply r;
        CU_ASSERT_EQUAL(post(offer(terms), &r), 400);
        char *code = xml_get(r.body, "/co:Fault/@co:code");
        CU_ASSERT_STRING_EQUAL(code ? code : "", "InvalidOffer");
        CU_ASSERT_PTR_NOT_NULL(strstr(r.body ? r.body : "", "policy"));
        free(code);
        http_reply_free(&r);
    }
}

static void test_per_processor_bandwidth(void)
{
    /* 4 + 4 nodes at 10 Mbit/s each: 4 * 4 * 10 / 7 = 22.857 -> 23. */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        post(offer(COMP("x", "<co:Site>a</co:Site>", "4") COMP("y", "<co:Site>b</co:Site>", "4")
                       LINK("<co:PerProcessorBandwidth>10</co:PerProcessorBandwidth>")),
             &r),
        201);
    char *bw = xml_get(r.body, "//co:LinkAllocation[@co:name='l']/co:Bandwidth");
    CU_ASSERT_STRING_EQUAL(bw ? bw : "", "23");
    char *trace = trace_of(&r);
    CU_ASSERT_PTR_NOT_NULL(strstr(trace ? trace : "", "eq. (1) gives 22.857 Mbit/s, booked 23"));
    free(trace);
    free(bw);
    http_reply_free(&r);
}

static void test_bytes_per_step(void)
{
    /* 1.25 MB every 0.1 s is 100 Mbit/s. */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        post(offer(COMP("x", "<co:Site>a</co:Site>", "2") COMP("y", "<co:Site>c</co:Site>", "2")
                       LINK("<co:BytesPerStep>1250000</co:BytesPerStep>"
                            "<co:StepSeconds>0.1</co:StepSeconds>")),
             &r),
        201);
    char *bw = xml_get(r.body, "//co:LinkAllocation[@co:name='l']/co:Bandwidth");
    CU_ASSERT_STRING_EQUAL(bw ? bw : "", "100");
    free(bw);
    http_reply_free(&r);
}

static void test_bad_link_combinations(void)
{
    static const char *const bad[] = {
        /* two ways at once */
        LINK(
            "<co:Bandwidth>5</co:Bandwidth><co:PerProcessorBandwidth>1</co:PerProcessorBandwidth>"),
        /* a step without its time, a time without its step */
        LINK("<co:BytesPerStep>1000</co:BytesPerStep>"),
        LINK("<co:StepSeconds>1</co:StepSeconds>"),
        /* not a positive number */
        LINK("<co:PerProcessorBandwidth>0</co:PerProcessorBandwidth>"),
        LINK("<co:PerProcessorBandwidth>-3</co:PerProcessorBandwidth>"),
        /* more than any link: 4 * 4 * 1e6 / 7 Mbit/s */
        LINK("<co:PerProcessorBandwidth>1000000</co:PerProcessorBandwidth>"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char terms[2048];
        snprintf(terms, sizeof terms, "%s%s%s", COMP("x", "<co:Site>a</co:Site>", "4"),
                 COMP("y", "<co:Site>b</co:Site>", "4"), bad[i]);
        struct http_reply r;
        CU_ASSERT_EQUAL(post(offer(terms), &r), 400);
        if (r.status != 400)
            fprintf(stderr, "case %zu: %ld %s\n", i, r.status, r.body ? r.body : "");
        http_reply_free(&r);
    }
}

#define FLEX(name, body)                                            \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"" name                \
    "\" wsag:ServiceName=\"m\"><co:Flexible>" body "</co:Flexible>" \
    "</wsag:ServiceDescriptionTerm>"
#define TOTAL(name, body)                                                                        \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"" name "\" wsag:ServiceName=\"m\"><co:Total>" body \
    "</co:Total>"                                                                                \
    "</wsag:ServiceDescriptionTerm>"

static int64_t nodes_of(const struct http_reply *r, const char *comp)
{
    char xp[128];
    snprintf(xp, sizeof xp, "//co:ComponentAllocation[@co:name='%s']/co:Nodes", comp);
    char *s = xml_get(r->body, xp);
    int64_t n = s ? strtoll(s, NULL, 10) : -1;
    free(s);
    return n;
}

static size_t n_components(const struct http_reply *r)
{
    size_t n = 0;
    for (const char *p = r->body; p && (p = strstr(p, "<co:ComponentAllocation ")); p++)
        n++;
    return n;
}

static char *get_text(const struct http_reply *r, const char *tail)
{
    const char *slash = strrchr(r->location, '/');
    char url[256];
    snprintf(url, sizeof url, "%s/agreements/%s%s", fx.base, slash ? slash + 1 : "", tail);
    struct http_reply t;
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url, NULL, 0, NULL, &t), 0);
    char *body = t.body;
    t.body = NULL;
    http_reply_free(&t);
    return body ? body : strdup("");
}

/* Asserts component comp of the agreement is on site with nodes. */
static void expect_part(const struct http_reply *r, const char *comp, const char *site,
                        int64_t nodes)
{
    char *s = site_of(r, comp);
    if (strcmp(s, site) != 0 || nodes_of(r, comp) != nodes)
        fprintf(stderr, "\n  %s: %s with %lld nodes, expected %s with %lld\n", comp, s,
                (long long)nodes_of(r, comp), site, (long long)nodes);
    CU_ASSERT_STRING_EQUAL(s, site);
    CU_ASSERT_EQUAL(nodes_of(r, comp), nodes);
    free(s);
}

static void test_flexible_fcm(void)
{
    /* FCM on (16, 32, 8): 40 nodes fill b (32), then a (8); the parts are
     * booked, shown in the allocation and in the launch descriptions. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(FLEX("job", "<co:TotalNodes>40</co:TotalNodes>"
                                           "<co:Executable>/bin/true</co:Executable>"
                                           "<co:Argument>-v</co:Argument>") POLICY("fcm")),
                         &r),
                    201);
    CU_ASSERT_EQUAL(n_components(&r), 2);
    expect_part(&r, "job.1", "b", 32);
    expect_part(&r, "job.2", "a", 8);
    char *res = xml_get(r.body, "//co:ComponentAllocation[@co:name='job.2']/co:Reservation");
    CU_ASSERT_PTR_NOT_NULL(res); /* booked */
    free(res);
    char *trace = trace_of(&r);
    CU_ASSERT_PTR_NOT_NULL(strstr(trace ? trace : "",
                                  "policy fcm, candidate 1 of 1: job (40 nodes) as job.1 32 on b, "
                                  "job.2 8 on a"));
    free(trace);
    char *meta = get_text(&r, "/launch/metampich");
    CU_ASSERT_PTR_NOT_NULL(strstr(meta, "job.1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(meta, "job.2"));
    free(meta);
    char *rsl = get_text(&r, "/launch/rsl");
    CU_ASSERT_PTR_NOT_NULL(strstr(rsl, "/bin/true"));
    free(rsl);
    http_reply_free(&r);
}

static void test_flexible_bandwidth(void)
{
    /* FCM puts 32 on b and 8 on a; at 10 Mbit/s per processor over all 40
     * nodes the two parts exchange 32 * 8 * 10 / 39 = 65.641 Mbit/s, booked
     * 66 on the link a_b. */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        post(offer(FLEX("job", "<co:TotalNodes>40</co:TotalNodes>"
                               "<co:PerProcessorBandwidth>10</co:PerProcessorBandwidth>")
                       POLICY("fcm")),
             &r),
        201);
    expect_part(&r, "job.1", "b", 32);
    expect_part(&r, "job.2", "a", 8);
    char *bw = xml_get(r.body, "//co:LinkAllocation[@co:name='job.1-job.2']/co:Bandwidth");
    char *link = xml_get(r.body, "//co:LinkAllocation[@co:name='job.1-job.2']/co:Link");
    char *res = xml_get(r.body, "//co:LinkAllocation[@co:name='job.1-job.2']/co:Reservation");
    CU_ASSERT_STRING_EQUAL(bw ? bw : "", "66");
    CU_ASSERT_STRING_EQUAL(link ? link : "", "a_b");
    CU_ASSERT_PTR_NOT_NULL(res);
    free(bw);
    free(link);
    free(res);
    char *trace = trace_of(&r);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(trace ? trace : "", "link job.1-job.2: eq. (1) gives 65.641 Mbit/s, booked 66"));
    free(trace);
    http_reply_free(&r);
    /* 200 Mbit/s per processor would need 1313 on a_b, which has 1000; the
     * only other candidate (without b) cannot hold 40 nodes. */
    CU_ASSERT_EQUAL(
        post(offer(FLEX("job", "<co:TotalNodes>40</co:TotalNodes>"
                               "<co:PerProcessorBandwidth>200</co:PerProcessorBandwidth>")
                       POLICY("fcm")),
             &r),
        400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body ? r.body : "", "no candidate of policy fcm"));
    http_reply_free(&r);
}

static void test_flexible_bounds_and_fixed(void)
{
    /* A fixed component of 10 on b leaves it 22; parts of at most 12 and at
     * least 3 nodes, at most 3 of them: FCM fills b (12), a (12), c (6). */
    struct http_reply r;
    CU_ASSERT_EQUAL(
        post(offer(COMP("fixed", "<co:Site>b</co:Site>", "10") FLEX(
                 "job", "<co:TotalNodes>30</co:TotalNodes><co:MinNodes>3</co:MinNodes>"
                        "<co:MaxNodes>12</co:MaxNodes><co:MaxComponents>3</co:MaxComponents>")
                       POLICY("fcm")),
             &r),
        201);
    CU_ASSERT_EQUAL(n_components(&r), 4);
    expect_part(&r, "fixed", "b", 10);
    expect_part(&r, "job.1", "b", 12);
    expect_part(&r, "job.2", "a", 12);
    expect_part(&r, "job.3", "c", 6);
    http_reply_free(&r);
    /* FCM-1 cannot hold 40 on one site (the largest has 32). */
    CU_ASSERT_EQUAL(
        post(offer(FLEX("job", "<co:TotalNodes>40</co:TotalNodes>") POLICY("fcm-1")), &r), 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body ? r.body : "", "finds no way to place"));
    http_reply_free(&r);
}

static void test_total_request(void)
{
    /* One site, the one with most idle nodes: b; under mig (best fit) the
     * fewest idle nodes that hold it: a (16) for 12. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(TOTAL("whole", "<co:TotalNodes>12</co:TotalNodes>")), &r), 201);
    CU_ASSERT_EQUAL(n_components(&r), 1);
    expect_part(&r, "whole", "b", 12);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(
        post(offer(TOTAL("whole", "<co:TotalNodes>12</co:TotalNodes>") POLICY("mig")), &r), 201);
    expect_part(&r, "whole", "a", 12);
    http_reply_free(&r);
    /* More than any one site has. */
    CU_ASSERT_EQUAL(post(offer(TOTAL("whole", "<co:TotalNodes>33</co:TotalNodes>")), &r), 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body ? r.body : "", "on one site"));
    http_reply_free(&r);
}

static void test_ca_low_latency_pair(void)
{
    /* 40 nodes fit no single site.  CA's averages: a 3.35, b 1.85, c 1.85,
     * so it fills b (32) then c (8): the close pair.  FCM on the same offer
     * takes a (16 idle) after b. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(FLEX("job", "<co:TotalNodes>40</co:TotalNodes>") POLICY("ca")), &r),
                    201);
    expect_part(&r, "job.1", "b", 32);
    expect_part(&r, "job.2", "c", 8);
    http_reply_free(&r);
    /* Step 1: a single site that holds the job, lowest intracluster
     * latency first (a tie on 0.05: a, the first configured). */
    CU_ASSERT_EQUAL(post(offer(FLEX("job", "<co:TotalNodes>10</co:TotalNodes>") POLICY("ca")), &r),
                    201);
    CU_ASSERT_EQUAL(n_components(&r), 1);
    expect_part(&r, "job.1", "a", 10);
    http_reply_free(&r);
}

static void test_configured_policy_falls_back(void)
{
    /* worst-fit (configured) places components of given sizes; a flexible
     * request under it goes to earliest, which splits as FCM does and
     * says so in the trace. */
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer(FLEX("job", "<co:TotalNodes>20</co:TotalNodes>")), &r), 201);
    CU_ASSERT_EQUAL(n_components(&r), 1);
    char *trace = trace_of(&r);
    CU_ASSERT_PTR_NOT_NULL(strstr(trace ? trace : "", "worst-fit does not take"));
    CU_ASSERT_PTR_NOT_NULL(strstr(trace ? trace : "", "policy earliest, candidate 1"));
    free(trace);
    http_reply_free(&r);
}

static void test_bad_flexible_offers(void)
{
    static const struct {
        const char *terms, *says;
    } bad[] = {
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes><co:MinNodes>5</co:MinNodes>"),
         "co:MinNodes 5 is more than co:TotalNodes 4"},
        {FLEX("job", "<co:TotalNodes>9</co:TotalNodes><co:MinNodes>5</co:MinNodes>"
                     "<co:MaxNodes>4</co:MaxNodes>"),
         "co:MinNodes 5 is more than co:MaxNodes 4"},
        {FLEX("job", "<co:TotalNodes>9</co:TotalNodes><co:MaxNodes>4</co:MaxNodes>"
                     "<co:MaxComponents>2</co:MaxComponents>"),
         "2 parts of at most 4 nodes cannot hold"},
        {FLEX("job", "<co:TotalNodes>9</co:TotalNodes><co:MaxComponents>65</co:MaxComponents>"),
         "MaxComponents"},
        {FLEX("job", "<co:TotalNodes>0</co:TotalNodes>"), "TotalNodes"},
        {FLEX("job", "<co:MinNodes>2</co:MinNodes>"), "Expected is ( co:TotalNodes )"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>")
             TOTAL("whole", "<co:TotalNodes>4</co:TotalNodes>"),
         "at most one"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>") COMP("x", "", "2"),
         "every co:Component names its site"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>") COMP("job.2", "<co:Site>a</co:Site>", "2"),
         "part of the flexible request"},
        {FLEX("x", "<co:TotalNodes>4</co:TotalNodes>") COMP("y", "<co:Site>a</co:Site>", "2")
             LINK("<co:Bandwidth>5</co:Bandwidth>"),
         "a link joins two co:Component terms"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>") POLICY("worst-fit"),
         "a co:Flexible request takes"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>") POLICY("b1"), "star network"},
        {FLEX("job", "<co:TotalNodes>4</co:TotalNodes>") POLICY("la"), "home site"},
        {FLEX("job", "<co:TotalNodes>57</co:TotalNodes>"), "56 in all"},
        {COMP("x", "", "2") POLICY("ca"), "components of given sizes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_reply r;
        CU_ASSERT_EQUAL(post(offer(bad[i].terms), &r), 400);
        const char *body = r.body ? r.body : "";
        if (r.status != 400 || !strstr(body, bad[i].says))
            fprintf(stderr, "\n  case %zu: %ld %s\n", i, r.status, body);
        CU_ASSERT_PTR_NOT_NULL(strstr(body, bad[i].says));
        http_reply_free(&r);
    }
}

static const struct acc_test_case tests[] = {
    {"configured worst fit", test_configured_worst_fit},
    {"an offer chooses WF without repetitions", test_offer_chooses_distinct},
    {"a fixed component lowers a site's idle count", test_fixed_component_lowers_idle},
    {"unknown or unfit policies", test_bad_policies},
    {"per-processor bandwidth (eq. 1)", test_per_processor_bandwidth},
    {"bytes per step", test_bytes_per_step},
    {"bad link combinations", test_bad_link_combinations},
    {"a flexible request split by FCM, booked, shown", test_flexible_fcm},
    {"a flexible request with bounds beside a fixed component", test_flexible_bounds_and_fixed},
    {"bandwidth between the parts of a flexible request", test_flexible_bandwidth},
    {"a total (single-site) request", test_total_request},
    {"CA with the configured latencies picks the close pair", test_ca_low_latency_pair},
    {"the configured policy falls back to earliest", test_configured_policy_falls_back},
    {"bad flexible and total offers", test_bad_flexible_offers},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"policy over http", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
