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
                          "[link b_c]\nsites = b c\ncapacity = 1000\nnetwork = wan\n";

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

static const struct acc_test_case tests[] = {
    {"configured worst fit", test_configured_worst_fit},
    {"an offer chooses WF without repetitions", test_offer_chooses_distinct},
    {"a fixed component lowers a site's idle count", test_fixed_component_lowers_idle},
    {"unknown or unfit policies", test_bad_policies},
    {"per-processor bandwidth (eq. 1)", test_per_processor_bandwidth},
    {"bytes per step", test_bytes_per_step},
    {"bad link combinations", test_bad_link_combinations},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"policy over http", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
