/* SPDX-License-Identifier: Apache-2.0 */
/* test_http_wsag4j.c - WS-Agreement interop over HTTP: a reservation
 * offer in WSAG4J's vocabulary (JSDL and wsag4j:TimeConstraint) is booked
 * as an agreement on one site, what does not map and foreign vocabularies
 * get precise faults and change nothing, and GET /templates lists both
 * templates.  accordd in-process on port 0 with the embedded testbed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

static struct fixture fx;
static char db_path[256];

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};

static char *url(const char *path)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

static long post(const char *body, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), body, strlen(body), XML_HDR, r), 0);
    return r->status;
}

static long get(const char *path, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url(path), NULL, 0, NULL, r), 0);
    return r->status;
}

/* An offer: a JSDL job (resources res) and a time constraint (time). */
static char *offer(const char *res, const char *time)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\""
             " xmlns:jsdl=\"http://schemas.ggf.org/jsdl/2005/11/jsdl\""
             " xmlns:wsag4j=\"http://schemas.wsag4j.org/2009/07/wsag4j-scheduling-extensions\">"
             "<wsag:Name>w</wsag:Name><wsag:Context>"
             "<wsag:AgreementInitiator>carol</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"job\" wsag:ServiceName=\"r\">"
             "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Resources>%s</jsdl:Resources>"
             "</jsdl:JobDescription></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"time\" wsag:ServiceName=\"r\">"
             "<wsag4j:TimeConstraint>%s</wsag4j:TimeConstraint></wsag:ServiceDescriptionTerm>"
             "</wsag:All></wsag:Terms></wsag:AgreementOffer>",
             res, time);
    return buf;
}

static int count_agreements(void)
{
    struct http_reply r;
    get("/agreements?limit=1000", &r);
    int n = xml_count(r.body, "/co:AgreementList/co:AgreementRef");
    http_reply_free(&r);
    return n;
}

static acc_time time_at(const char *doc, const char *xpath)
{
    char *s = xml_get(doc, xpath);
    acc_time t = 0;
    CU_ASSERT_PTR_NOT_NULL(s);
    if (s)
        CU_ASSERT_EQUAL(acc_time_parse(s, &t, NULL), ACC_OK);
    free(s);
    return t;
}

/* The reservation key of the agreement's one component is in the site's
 * calendar (the simulator's bookings). */
static bool booked(const char *doc, const char *site)
{
    char *key = xml_get(doc, "//co:ComponentAllocation/co:Reservation");
    char path[128];
    snprintf(path, sizeof path, "/adapters/%s/control/bookings", site);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", url(path), "", 0, NULL, &r), 0);
    bool ok = key && r.body && strstr(r.body, key);
    http_reply_free(&r);
    free(key);
    return ok;
}

static int setup(void)
{
    snprintf(db_path, sizeof db_path, "%s/wsag4j.db", acc_test_tmpdir());
    return fixture_start(&fx, NULL, db_path);
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_example_honoured(void)
{
    size_t len;
    char *doc = read_file(ACC_SOURCE_DIR "/docs/examples/offer-wsag4j.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), doc, len, XML_HDR, &r), 0);
    if (r.status != 201)
        fprintf(stderr, "\n%ld %s\n", r.status, r.body ? r.body : "");
    CU_ASSERT_EQUAL_FATAL(r.status, 201);
    char *state = xml_get(r.body, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(state ? state : "", "Observed");
    free(state);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:ComponentAllocation"), 1);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:LinkAllocation"), 0);
    char *name = xml_get(r.body, "//co:ComponentAllocation/@co:name");
    char *site = xml_get(r.body, "//co:ComponentAllocation/co:Site");
    char *nodes = xml_get(r.body, "//co:ComponentAllocation/co:Nodes");
    char *ppn = xml_get(r.body, "//co:ComponentAllocation/co:ProcessesPerNode");
    CU_ASSERT_STRING_EQUAL(name ? name : "", "RESOURCE_STD");
    CU_ASSERT_STRING_EQUAL(site ? site : "", "caesar");
    CU_ASSERT_STRING_EQUAL(nodes ? nodes : "", "4");
    CU_ASSERT_STRING_EQUAL(ppn ? ppn : "", "2");
    free(name);
    free(site);
    free(nodes);
    free(ppn);
    /* Within the window 08:00 to 18:00 on 2030-06-01, for 90 minutes. */
    acc_time start = time_at(r.body, "//co:Allocation/co:Start");
    acc_time end = time_at(r.body, "//co:Allocation/co:End");
    CU_ASSERT_TRUE(start >= 1906531200);
    CU_ASSERT_EQUAL(end - start, 90 * 60);
    CU_ASSERT_TRUE(end <= 1906531200 + 10 * 3600);
    CU_ASSERT_TRUE(booked(r.body, "caesar"));
    /* The agreement carries the offer's terms in their own vocabulary. */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "TotalResourceCount"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "TimeConstraint"));

    /* Read back, as XML and as JSON. */
    const char *path = strstr(r.location, "/agreements/");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    char where[256];
    snprintf(where, sizeof where, "%s", path);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get(where, &r), 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "<jsdl:HostName>caesar</jsdl:HostName>"));
    http_reply_free(&r);
    static const char *const json[] = {"Accept: application/json", NULL};
    CU_ASSERT_EQUAL(http_do("GET", url(where), NULL, 0, json, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, "\"RESOURCE_STD\"") : NULL);
    http_reply_free(&r);
    free(doc);
}

/* EndTime without Duration: exactly StartTime to EndTime; no host: Accord
 * chooses the site. */
static void test_end_time_window(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(post(offer("<jsdl:TotalResourceCount><jsdl:Exact>2</jsdl:Exact>"
                               "</jsdl:TotalResourceCount>",
                               "<wsag4j:StartTime>2030-07-01T10:00:00Z</wsag4j:StartTime>"
                               "<wsag4j:EndTime>2030-07-01T12:00:00Z</wsag4j:EndTime>"),
                         &r),
                    201);
    acc_time start = time_at(r.body, "//co:Allocation/co:Start");
    acc_time end = time_at(r.body, "//co:Allocation/co:End");
    CU_ASSERT_EQUAL(start, 1909130400);
    CU_ASSERT_EQUAL(end, 1909130400 + 7200);
    char *site = xml_get(r.body, "//co:ComponentAllocation/co:Site");
    CU_ASSERT_PTR_NOT_NULL(site);
    if (site)
        CU_ASSERT_TRUE(booked(r.body, site));
    free(site);
    http_reply_free(&r);

    /* Duration only, TotalCPUCount over the nodes: as soon as possible. */
    CU_ASSERT_EQUAL(post(offer("<jsdl:CandidateHosts><jsdl:HostName>fh-brs</jsdl:HostName>"
                               "</jsdl:CandidateHosts><jsdl:TotalCPUCount><jsdl:Exact>6"
                               "</jsdl:Exact></jsdl:TotalCPUCount><jsdl:TotalResourceCount>"
                               "<jsdl:Exact>3</jsdl:Exact></jsdl:TotalResourceCount>",
                               "<wsag4j:Duration>20</wsag4j:Duration>"),
                         &r),
                    201);
    char *ppn = xml_get(r.body, "//co:ComponentAllocation/co:ProcessesPerNode");
    CU_ASSERT_STRING_EQUAL(ppn ? ppn : "", "2");
    free(ppn);
    CU_ASSERT_EQUAL(time_at(r.body, "//co:Allocation/co:End") -
                        time_at(r.body, "//co:Allocation/co:Start"),
                    1200);
    CU_ASSERT_TRUE(booked(r.body, "fh-brs"));
    http_reply_free(&r);
}

struct refused {
    const char *res, *time;
    long status;
    const char *code;
    const char *want[2];
};

static void test_refused_change_nothing(void)
{
    static const struct refused cases[] = {
        {"<jsdl:CandidateHosts><jsdl:HostName>caesar</jsdl:HostName></jsdl:CandidateHosts>",
         "<wsag4j:Duration>60</wsag4j:Duration>",
         400,
         "InvalidOffer",
         {"jsdl:TotalResourceCount", "number of nodes"}},
        {"<jsdl:TotalResourceCount><jsdl:Exact>2</jsdl:Exact></jsdl:TotalResourceCount>",
         "<wsag4j:StartTime>2030-07-01T10:00:00Z</wsag4j:StartTime>",
         400,
         "InvalidOffer",
         {"no wsag4j:Duration", "wsag4j:EndTime"}},
        /* More nodes than the site has: the service's own check. */
        {"<jsdl:CandidateHosts><jsdl:HostName>fh-brs</jsdl:HostName></jsdl:CandidateHosts>"
         "<jsdl:TotalResourceCount><jsdl:Exact>5000</jsdl:Exact></jsdl:TotalResourceCount>",
         "<wsag4j:Duration>60</wsag4j:Duration>",
         400,
         "OverCapacity",
         {"fh-brs"}},
        {"<jsdl:CandidateHosts><jsdl:HostName>atlantis</jsdl:HostName></jsdl:CandidateHosts>"
         "<jsdl:TotalResourceCount><jsdl:Exact>1</jsdl:Exact></jsdl:TotalResourceCount>",
         "<wsag4j:Duration>60</wsag4j:Duration>",
         400,
         "UnknownSite",
         {"atlantis"}},
        /* foreign vocabulary */
        {"<jsdl:TotalResourceCount><jsdl:Exact>1</jsdl:Exact></jsdl:TotalResourceCount>"
         "<x:Accelerators xmlns:x=\"urn:example:gpu\">2</x:Accelerators>",
         "<wsag4j:Duration>60</wsag4j:Duration>",
         400,
         "SchemaViolation",
         {"x:Accelerators (namespace urn:example:gpu)", "inside jsdl:Resources"}},
        {"<jsdl:TotalResourceCount><jsdl:Range><jsdl:LowerBound>1</jsdl:LowerBound>"
         "</jsdl:Range></jsdl:TotalResourceCount>",
         "<wsag4j:Duration>60</wsag4j:Duration>",
         400,
         "SchemaViolation",
         {"jsdl:Range (namespace http://schemas.ggf.org/jsdl/2005/11/jsdl)", "jsdl:Exact"}},
        {"<jsdl:TotalResourceCount><jsdl:Exact>1</jsdl:Exact></jsdl:TotalResourceCount>",
         "<wsag4j:Duration>60</wsag4j:Duration><wsag4j:Recurrence>P1D</wsag4j:Recurrence>",
         400,
         "SchemaViolation",
         {"wsag4j:Recurrence", "inside wsag4j:TimeConstraint"}},
    };
    int before = count_agreements();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct refused *c = &cases[i];
        struct http_reply r;
        long status = post(offer(c->res, c->time), &r);
        char *code = xml_get(r.body, "/co:Fault/@co:code");
        char *msg = xml_get(r.body, "/co:Fault/co:Message");
        bool ok = status == c->status && code && strcmp(code, c->code) == 0 && msg &&
                  strstr(msg, c->want[0]) && (!c->want[1] || strstr(msg, c->want[1])) &&
                  !strstr(msg, "wildcard");
        if (!ok)
            fprintf(stderr, "\ncase %zu: %ld %s \"%s\"\n", i, status, code ? code : "-",
                    msg ? msg : "-");
        CU_ASSERT(ok);
        free(code);
        free(msg);
        http_reply_free(&r);
    }
    CU_ASSERT_EQUAL(count_agreements(), before);
}

/* Another WS-Agreement implementation's own term: the fault names it and
 * what Accord expects. */
static void test_foreign_term(void)
{
    static const char doc[] =
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\">"
        "<wsag:Name>f</wsag:Name><wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"vm\" wsag:ServiceName=\"cloud\">"
        "<occi:Compute xmlns:occi=\"http://schemas.ogf.org/occi/infrastructure#\">"
        "<occi:cores>4</occi:cores></occi:Compute>"
        "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>";
    int before = count_agreements();
    struct http_reply r;
    CU_ASSERT_EQUAL(post(doc, &r), 400);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    char *msg = xml_get(r.body, "/co:Fault/co:Message");
    CU_ASSERT_STRING_EQUAL(code ? code : "", "SchemaViolation");
    CU_ASSERT_PTR_NOT_NULL(msg);
    if (msg) {
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "term 'vm': unsupported vocabulary: occi:Compute "
                                           "(namespace http://schemas.ogf.org/occi/"
                                           "infrastructure#)"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "co:Component"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "jsdl:JobDefinition"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "wsag4j:TimeConstraint"));
        CU_ASSERT_PTR_NULL(strstr(msg, "wildcard"));
    }
    free(code);
    free(msg);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(count_agreements(), before);
}

static void test_templates(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(get("/templates", &r), 200);
    CU_ASSERT_EQUAL(xml_count(r.body, "/co:Templates/co:TemplateRef"), 2);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:TemplateRef[@co:name='meta-job']"), 1);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:TemplateRef[@co:name='wsag4j-reservation']"), 1);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/templates/wsag4j-reservation", &r), 200);
    char *id = xml_get(r.body, "/wsag:Template/@wsag:TemplateId");
    CU_ASSERT_STRING_EQUAL(id ? id : "", "wsag4j-reservation");
    free(id);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "jsdl:TotalResourceCount"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "wsag4j:TimeConstraint"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "<xs:enumeration value=\"caesar\"/>"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(get("/templates/meta-job", &r), 200);
    http_reply_free(&r);
}

static const struct acc_test_case tests[] = {
    {"WSAG4J example offer -> 201, one site, window and duration", test_example_honoured},
    {"EndTime instead of Duration; Duration alone", test_end_time_window},
    {"what does not map: precise 400s, nothing stored", test_refused_change_nothing},
    {"a foreign term: the fault names it", test_foreign_term},
    {"GET /templates lists both", test_templates},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"http_wsag4j", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
