/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml_wsag4j.c - offers in WSAG4J's vocabulary (JSDL resources and the
 * wsag4j:TimeConstraint) mapped onto Accord's offer, the faults for what
 * does not map, the precise fault for any foreign vocabulary, and the
 * WSAG4J template.  Part of test_xml (its suite "xml_wsag4j"). */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "xml.h"
#include "xml_internal.h"

/* An offer with the given terms, the WSAG4J namespaces declared. */
static char *offer(const char *terms)
{
    static const char head[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<wsag:AgreementOffer xmlns:wsag=\"" ACC_NS_WSAG "\" xmlns:co=\"" ACC_NS_CO "\"\n"
        " xmlns:jsdl=\"" ACC_NS_JSDL "\" xmlns:jsdl-posix=\"" ACC_NS_JSDL_POSIX "\"\n"
        " xmlns:wsag4j=\"" ACC_NS_WSAG4J "\">\n"
        "<wsag:Name>w</wsag:Name>\n"
        "<wsag:Context><wsag:AgreementInitiator>carol</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>\n"
        "<wsag:Terms><wsag:All>\n";
    static const char tail[] = "</wsag:All></wsag:Terms>\n</wsag:AgreementOffer>\n";
    size_t n = sizeof head + strlen(terms) + sizeof tail;
    char *s = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(s, n, "%s%s%s", head, terms, tail);
    return s;
}

#define SDT(name, body)                                                                \
    "<wsag:ServiceDescriptionTerm wsag:Name=\"" name "\" wsag:ServiceName=\"r\">" body \
    "</wsag:ServiceDescriptionTerm>\n"

/* A JSDL job whose jsdl:Resources hold res. */
#define JOB(res)                                                               \
    SDT("job", "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Resources>" res \
               "</jsdl:Resources></jsdl:JobDescription></jsdl:JobDefinition>")
#define NODES(n)   "<jsdl:TotalResourceCount><jsdl:Exact>" n "</jsdl:Exact></jsdl:TotalResourceCount>"
#define HOST(h)    "<jsdl:CandidateHosts><jsdl:HostName>" h "</jsdl:HostName></jsdl:CandidateHosts>"
#define TIME(body) SDT("time", "<wsag4j:TimeConstraint>" body "</wsag4j:TimeConstraint>")
#define START(t)   "<wsag4j:StartTime>" t "</wsag4j:StartTime>"
#define END(t)     "<wsag4j:EndTime>" t "</wsag4j:EndTime>"
#define MINUTES(m) "<wsag4j:Duration>" m "</wsag4j:Duration>"
#define HOUR_TERM  TIME(MINUTES("60"))
#define T0         "2030-06-01T08:00:00Z"
#define T0_EPOCH   1906531200

static acc_err parse(const char *terms, struct acc_offer *o, struct acc_error *e)
{
    char *doc = offer(terms);
    memset(e, 0, sizeof *e);
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), NULL, o, e);
    free(doc);
    return rc;
}

static bool is_empty_offer(const struct acc_offer *o)
{
    static const struct acc_offer zero;
    return memcmp(o, &zero, sizeof zero) == 0;
}

/* ------------------------------------------------------------- accepted */

static void test_example(void)
{
    size_t len;
    char *doc = acc_test_slurp(ACC_TEST_EXAMPLES "/offer-wsag4j.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    struct acc_offer o;
    struct acc_error e = {0};
    acc_err rc = acc_xml_parse_offer(doc, len, NULL, &o, &e);
    free(doc);
    if (rc)
        fprintf(stderr, "\n%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_STRING_EQUAL(o.initiator, "carol");
    CU_ASSERT_STRING_EQUAL(o.template_name, "wsag4j-reservation");
    CU_ASSERT_EQUAL_FATAL(o.n_components, 1);
    const struct acc_component *c = &o.components[0];
    CU_ASSERT_STRING_EQUAL(c->name, "RESOURCE_STD");
    CU_ASSERT_EQUAL(c->kind, ACC_COMP_SIZED);
    CU_ASSERT_STRING_EQUAL(c->site, "caesar");
    CU_ASSERT_EQUAL(c->nodes, 4); /* 4.0 */
    CU_ASSERT_EQUAL(c->ppn, 2);
    CU_ASSERT_STRING_EQUAL(c->executable, "/opt/app/bin/solver");
    CU_ASSERT_EQUAL_FATAL(c->n_args, 1);
    CU_ASSERT_STRING_EQUAL(c->args[0], "--steps=400");
    CU_ASSERT_EQUAL(o.earliest, T0_EPOCH);
    CU_ASSERT_EQUAL(o.deadline, T0_EPOCH + 10 * 3600);
    CU_ASSERT_EQUAL(o.duration, 90 * 60);
    CU_ASSERT_EQUAL(o.n_links, 0);
    acc_offer_release(&o);
}

static void test_variations(void)
{
    struct acc_offer o;
    struct acc_error e;

    /* EndTime without Duration: the reservation fills StartTime to EndTime. */
    ACC_ASSERT_OK(parse(
        JOB(HOST("fh-brs") NODES("3")) TIME(START(T0) END("2030-06-01T10:30:00+00:00")), &o, &e));
    CU_ASSERT_EQUAL(o.earliest, T0_EPOCH);
    CU_ASSERT_EQUAL(o.deadline, T0_EPOCH + 9000);
    CU_ASSERT_EQUAL(o.duration, 9000);
    CU_ASSERT_STRING_EQUAL(o.components[0].site, "fh-brs");
    CU_ASSERT_EQUAL(o.components[0].nodes, 3);
    CU_ASSERT_EQUAL(o.components[0].ppn, 1);
    CU_ASSERT_PTR_NULL(o.components[0].executable);
    acc_offer_release(&o);

    /* Duration only: as soon as possible; no host: Accord chooses the site;
     * TotalCPUCount over the nodes is the processes per node. */
    ACC_ASSERT_OK(
        parse(JOB("<jsdl:TotalCPUCount><jsdl:Exact>24</jsdl:Exact></jsdl:TotalCPUCount>" NODES("6"))
                  TIME(MINUTES("45")),
              &o, &e));
    CU_ASSERT_EQUAL(o.earliest, 0);
    CU_ASSERT_EQUAL(o.deadline, 0);
    CU_ASSERT_EQUAL(o.duration, 45 * 60);
    CU_ASSERT_PTR_NULL(o.components[0].site);
    CU_ASSERT_EQUAL(o.components[0].nodes, 6);
    CU_ASSERT_EQUAL(o.components[0].ppn, 4);
    acc_offer_release(&o);

    /* Both CPU counts, consistent; a deadline with a duration; the terms in
     * either order; mixed with a co: term. */
    ACC_ASSERT_OK(parse(
        TIME(END("2030-06-02T00:00:00Z") MINUTES("30"))
            JOB("<jsdl:IndividualCPUCount><jsdl:Exact>8</jsdl:Exact></jsdl:IndividualCPUCount>"
                "<jsdl:TotalCPUCount><jsdl:Exact>16</jsdl:Exact></jsdl:TotalCPUCount>" NODES("2"))
                SDT("nego", "<co:Negotiation><co:Strategy>iterative</co:Strategy>"
                            "</co:Negotiation>"),
        &o, &e));
    CU_ASSERT_EQUAL(o.deadline, T0_EPOCH + 16 * 3600);
    CU_ASSERT_EQUAL(o.duration, 1800);
    CU_ASSERT_EQUAL(o.components[0].ppn, 8);
    CU_ASSERT_EQUAL(o.strategy, ACC_STRATEGY_ITERATIVE);
    acc_offer_release(&o);

    /* A JSDL job beside Accord's own components and schedule. */
    ACC_ASSERT_OK(parse(SDT("s", "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>")
                            JOB(HOST("caesar") NODES("2"))
                                SDT("viz", "<co:Component><co:Site>fh-brs</co:Site><co:Nodes>1"
                                           "</co:Nodes></co:Component>"),
                        &o, &e));
    CU_ASSERT_EQUAL(o.n_components, 2);
    CU_ASSERT_EQUAL(o.duration, 3600);
    acc_offer_release(&o);
}

/* ------------------------------------------------- what does not map */

struct bad {
    const char *terms;
    acc_err code;
    const char *want[3];
};

static const struct bad bad[] = {
    /* missing or unmappable values */
    {JOB(HOST("caesar")) HOUR_TERM,
     ACC_ERR_INVALID,
     {"term 'job'", "no jsdl:Resources/jsdl:TotalResourceCount", "number of nodes"}},
    {SDT("job", "<jsdl:JobDefinition><jsdl:JobDescription/></jsdl:JobDefinition>") HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl:TotalResourceCount"}},
    {JOB("<jsdl:TotalResourceCount/>") HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl:TotalResourceCount gives no jsdl:Exact"}},
    {JOB("<jsdl:TotalResourceCount><jsdl:Exact>2</jsdl:Exact><jsdl:Exact>4</jsdl:Exact>"
         "</jsdl:TotalResourceCount>") HOUR_TERM,
     ACC_ERR_INVALID,
     {"more than one jsdl:Exact"}},
    {JOB(NODES("2.5")) HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl:TotalResourceCount", "'2.5' is not a whole number"}},
    {JOB(NODES("0")) HOUR_TERM, ACC_ERR_INVALID, {"'0' is not a whole number from 1"}},
    {JOB(NODES("2000000")) HOUR_TERM, ACC_ERR_INVALID, {"'2000000'", "1000000"}},
    {JOB("<jsdl:CandidateHosts><jsdl:HostName>caesar</jsdl:HostName><jsdl:HostName>fh-brs"
         "</jsdl:HostName></jsdl:CandidateHosts>" NODES("2")) HOUR_TERM,
     ACC_ERR_INVALID,
     {"more than one jsdl:HostName", "one site", "co:Component"}},
    {JOB(HOST("../etc") NODES("2")) HOUR_TERM, ACC_ERR_INVALID, {"jsdl:HostName '../etc'"}},
    {JOB("<jsdl:TotalCPUCount><jsdl:Exact>7</jsdl:Exact></jsdl:TotalCPUCount>" NODES("2"))
         HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl:TotalCPUCount 7", "does not divide evenly", "2 nodes"}},
    {JOB("<jsdl:IndividualCPUCount><jsdl:Exact>2</jsdl:Exact></jsdl:IndividualCPUCount>"
         "<jsdl:TotalCPUCount><jsdl:Exact>8</jsdl:Exact></jsdl:TotalCPUCount>" NODES("2"))
         HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl:TotalCPUCount 8 is not jsdl:IndividualCPUCount 2 times"}},
    {SDT("job", "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Application>"
                "<jsdl-posix:POSIXApplication><jsdl-posix:Executable>bin/x</jsdl-posix:Executable>"
                "</jsdl-posix:POSIXApplication></jsdl:Application><jsdl:Resources>" NODES(
                    "1") "</jsdl:Resources></jsdl:JobDescription></jsdl:JobDefinition>") HOUR_TERM,
     ACC_ERR_INVALID,
     {"jsdl-posix:Executable 'bin/x'", "absolute path"}},
    {JOB(NODES("1")) SDT("job2", "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Resources>" NODES(
                                     "1") "</jsdl:Resources></jsdl:JobDescription>"
                                          "</jsdl:JobDefinition>") HOUR_TERM,
     ACC_ERR_INVALID,
     {"term 'job2'", "a second jsdl:JobDefinition", "co:Component"}},
    {JOB(NODES("1")), ACC_ERR_INVALID, {"no co:Schedule", "wsag4j:TimeConstraint"}},
    {HOUR_TERM, ACC_ERR_INVALID, {"no co:Component", "jsdl:JobDefinition"}},
    /* the time */
    {JOB(NODES("1")) TIME(START(T0)),
     ACC_ERR_INVALID,
     {"term 'time'", "no wsag4j:Duration, nor both wsag4j:StartTime and wsag4j:EndTime"}},
    {JOB(NODES("1")) TIME(END(T0)), ACC_ERR_INVALID, {"no wsag4j:Duration"}},
    {JOB(NODES("1")) TIME(""), ACC_ERR_INVALID, {"no wsag4j:Duration"}},
    {JOB(NODES("1")) TIME(START(T0) END("2030-06-01T07:00:00Z")),
     ACC_ERR_INVALID,
     {"deadline 2030-06-01T07:00:00Z is before the earliest start 2030-06-01T08:00:00Z"}},
    {JOB(NODES("1")) TIME(START(T0) END(T0)), ACC_ERR_INVALID, {"window is empty"}},
    {JOB(NODES("1")) TIME(START(T0) END("2030-06-01T09:00:00Z") MINUTES("90")),
     ACC_ERR_INVALID,
     {"duration PT1H30M is longer than the window"}},
    {JOB(NODES("1")) TIME(MINUTES("0")),
     ACC_ERR_INVALID,
     {"wsag4j:Duration (whole minutes)", "out of range"}},
    {JOB(NODES("1")) TIME(MINUTES("-5")), ACC_ERR_INVALID, {"wsag4j:Duration"}},
    {JOB(NODES("1")) TIME(START("1960-01-01T00:00:00Z") MINUTES("5")),
     ACC_ERR_INVALID,
     {"wsag4j:StartTime", "1960"}},
    {JOB(NODES("1")) HOUR_TERM SDT("s", "<co:Schedule><co:Duration>PT1H</co:Duration>"
                                        "</co:Schedule>"),
     ACC_ERR_INVALID,
     {"term 's'", "second co:Schedule", "'time'"}},
    {JOB(NODES("1")) SDT("s", "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>")
         HOUR_TERM,
     ACC_ERR_INVALID,
     {"term 'time'", "a second schedule (wsag4j:TimeConstraint)", "'s'"}},
    /* the schemas still apply to what is accepted: order and types */
    {JOB(NODES("2") HOST("caesar")) HOUR_TERM, ACC_ERR_SCHEMA, {"jsdl:CandidateHosts"}},
    {JOB(NODES("many")) HOUR_TERM, ACC_ERR_SCHEMA, {"jsdl:Exact", "'many'"}},
    {JOB(NODES("1")) TIME(MINUTES("60") START(T0)), ACC_ERR_SCHEMA, {"wsag4j:StartTime"}},
    {JOB(NODES("1")) TIME(START("tomorrow") MINUTES("60")),
     ACC_ERR_SCHEMA,
     {"wsag4j:StartTime", "'tomorrow'"}},
    {JOB(NODES("1")) TIME(MINUTES("1.5")), ACC_ERR_SCHEMA, {"wsag4j:Duration", "'1.5'"}},
};

/* --------------------------------------------- foreign vocabulary */

static const struct bad foreign[] = {
    /* another namespace as a term */
    {SDT("x", "<x:Job xmlns:x=\"urn:example:other\">1</x:Job>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"term 'x': unsupported vocabulary: x:Job", "(namespace urn:example:other)",
      "jsdl:JobDefinition"}},
    {SDT("sla", "<sla:ServiceLevelObjective xmlns:sla=\"http://example.org/sla\"/>"),
     ACC_ERR_SCHEMA,
     {"sla:ServiceLevelObjective", "(namespace http://example.org/sla)", "co:Component"}},
    {SDT("bare", "<Job>1</Job>"), ACC_ERR_SCHEMA, {"term 'bare'", "Job (namespace none)"}},
    /* JSDL's own elements that do not map */
    {SDT("r", "<jsdl:Resources>" NODES("1") "</jsdl:Resources>"),
     ACC_ERR_SCHEMA,
     {"jsdl:Resources (namespace " ACC_NS_JSDL ") is not an offer term", "jsdl:JobDefinition"}},
    {JOB(NODES("1") "<jsdl:FileSystem name=\"scratch\"/>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"jsdl:FileSystem", "inside jsdl:Resources", "jsdl:TotalResourceCount"}},
    {JOB("<jsdl:OperatingSystem/>" NODES("1")) HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"unsupported vocabulary: jsdl:OperatingSystem (namespace " ACC_NS_JSDL ")",
      "jsdl:CandidateHosts"}},
    {JOB("<jsdl:TotalResourceCount><jsdl:LowerBoundedRange>2</jsdl:LowerBoundedRange>"
         "</jsdl:TotalResourceCount>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"jsdl:LowerBoundedRange", "inside jsdl:TotalResourceCount", "jsdl:Exact"}},
    {SDT("job", "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Resources>" NODES(
                    "1") "</jsdl:Resources><jsdl:DataStaging/></jsdl:JobDescription>"
                         "</jsdl:JobDefinition>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"jsdl:DataStaging", "inside jsdl:JobDescription", "data staging"}},
    {SDT("job", "<jsdl:JobDefinition><jsdl:JobDescription><jsdl:Application>"
                "<jsdl-posix:POSIXApplication><jsdl-posix:Environment name=\"A\">1"
                "</jsdl-posix:Environment></jsdl-posix:POSIXApplication></jsdl:Application>"
                "<jsdl:Resources>" NODES("1") "</jsdl:Resources></jsdl:JobDescription>"
                                              "</jsdl:JobDefinition>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"jsdl-posix:Environment", "inside jsdl-posix:POSIXApplication", "jsdl-posix:Executable"}},
    {JOB(NODES("1") "<ext:GPUs xmlns:ext=\"urn:example:ext\">2</ext:GPUs>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"ext:GPUs", "(namespace urn:example:ext)", "inside jsdl:Resources"}},
    {JOB("<jsdl:CandidateHosts><jsdl:HostName><b>caesar</b></jsdl:HostName>"
         "</jsdl:CandidateHosts>" NODES("1")) HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"b (namespace none)", "is not supported inside jsdl:HostName, which holds only a value"}},
    /* WSAG4J's scheduling extension beyond TimeConstraint */
    {JOB(NODES("1")) TIME(MINUTES("5") "<wsag4j:Deadline>" T0 "</wsag4j:Deadline>"),
     ACC_ERR_SCHEMA,
     {"wsag4j:Deadline", "inside wsag4j:TimeConstraint", "wsag4j:EndTime and wsag4j:Duration"}},
    {JOB(NODES("1")) SDT("t", "<wsag4j:Calendar/>"),
     ACC_ERR_SCHEMA,
     {"wsag4j:Calendar (namespace " ACC_NS_WSAG4J ") is not an offer term"}},
    /* WS-Agreement itself where a term belongs, and Accord's unknown terms */
    {SDT("w", "<wsag:Terms/>") HOUR_TERM,
     ACC_ERR_SCHEMA,
     {"wsag:Terms (namespace " ACC_NS_WSAG ") is not an offer term"}},
    {JOB(NODES("1")) HOUR_TERM SDT("c", "<co:Frobnicate/>"),
     ACC_ERR_SCHEMA,
     {"co:Frobnicate (namespace urn:accord:coalloc:1) is not an offer term", "co:Schedule"}},
    /* a term inside a wsag:ExactlyOne is checked as well */
    {"<wsag:ExactlyOne>" SDT("x", "<x:Job xmlns:x=\"urn:example:other\"/>") "</wsag:ExactlyOne>",
     ACC_ERR_SCHEMA,
     {"x:Job", "urn:example:other"}},
};

static void check(const struct bad *c, size_t i, const char *set)
{
    struct acc_offer o;
    struct acc_error e;
    acc_err rc = parse(c->terms, &o, &e);
    bool ok = rc == c->code && e.code == c->code;
    for (int k = 0; k < 3 && c->want[k]; k++)
        ok = ok && strstr(e.msg, c->want[k]);
    /* Never libxml2's message about the wildcard. */
    ok = ok && !strstr(e.msg, "wildcard");
    if (!ok)
        fprintf(stderr, "\n%s[%zu]: got %s \"%s\", expected %s with \"%s\" \"%s\" \"%s\"\n", set, i,
                acc_err_symbol(rc), e.msg, acc_err_symbol(c->code), c->want[0],
                c->want[1] ? c->want[1] : "", c->want[2] ? c->want[2] : "");
    CU_ASSERT(ok);
    CU_ASSERT(is_empty_offer(&o));
}

static void test_unmapped(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check(&bad[i], i, "bad");
}

static void test_foreign(void)
{
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        check(&foreign[i], i, "foreign");
}

/* The fault for a foreign term comes before anything the schemas would say
 * about other terms (the order of the checks), and names the line. */
static void test_foreign_first(void)
{
    struct acc_offer o;
    struct acc_error e;
    CU_ASSERT_EQUAL(parse(SDT("a", "<co:Component><co:Nodes>0</co:Nodes></co:Component>")
                              SDT("x", "<x:Job xmlns:x=\"urn:example:other\"/>"),
                          &o, &e),
                    ACC_ERR_SCHEMA);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 9: term 'x': unsupported vocabulary: x:Job"));
    CU_ASSERT_PTR_NULL(strstr(e.msg, "co:Nodes"));
}

/* The documents in tests/data/offers (also the offer fuzzer's seeds). */
static void test_files(void)
{
    static const struct {
        const char *file;
        acc_err code;
        const char *want;
    } files[] = {
        {"good-wsag4j-endtime.xml", ACC_OK, NULL},
        {"schema-wsag4j-range.xml", ACC_ERR_SCHEMA, "jsdl:UpperBoundedRange (namespace"},
        {"schema-wsag4j-foreign.xml", ACC_ERR_SCHEMA,
         "sched:Priority (namespace urn:example:scheduler) is not supported inside "
         "wsag4j:TimeConstraint"},
        {"invalid-wsag4j-no-count.xml", ACC_ERR_INVALID,
         "no jsdl:Resources/jsdl:TotalResourceCount"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        size_t len;
        snprintf(path, sizeof path, "%s/offers/%s", ACC_TEST_DATA, files[i].file);
        char *doc = acc_test_slurp(path, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
        struct acc_offer o;
        struct acc_error e = {0};
        acc_err rc = acc_xml_parse_offer(doc, len, NULL, &o, &e);
        free(doc);
        bool ok = rc == files[i].code && (!files[i].want || strstr(e.msg, files[i].want));
        if (!ok)
            fprintf(stderr, "\n%s: %s \"%s\"\n", files[i].file, acc_err_symbol(rc), e.msg);
        CU_ASSERT(ok);
        if (rc == ACC_OK) {
            /* 16 CPUs over 4 nodes; 08:00 to 18:00 without a Duration. */
            CU_ASSERT_EQUAL(o.components[0].ppn, 4);
            CU_ASSERT_PTR_NULL(o.components[0].site);
            CU_ASSERT_EQUAL(o.duration, 10 * 3600);
            acc_offer_release(&o);
        }
    }
}

/* ------------------------------------------------------------ template */

static const struct acc_site_info sites[] = {
    {"caesar", "sim-batch", 128, true, "ok", 12, 1, 0, NULL},
    {"fh-brs", "slurm", 32, true, "ok", 3, 0, 0, NULL},
};
static const struct acc_sites_view view = {sites, 2, NULL, 0, NULL, 0};

static bool valid(const struct acc_buf *b)
{
    struct acc_error e = {0};
    if (acc_xml_validate_mem(b->data, b->len, &e) == ACC_OK)
        return true;
    fprintf(stderr, "not valid: %s\n%s\n", e.msg, b->data);
    return false;
}

static void test_template(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_templates(&view, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:name=\"meta-job\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:name=\"wsag4j-reservation\""));
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_template("wsag4j-reservation", &view, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "wsag:TemplateId=\"wsag4j-reservation\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<jsdl:HostName>caesar</jsdl:HostName>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<xs:enumeration value=\"fh-brs\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<xs:maxInclusive value=\"128\"/>"));

    /* Its terms, put into an offer as they stand, are an offer Accord takes. */
    const char *from = strstr(b.data, "<wsag:ServiceDescriptionTerm");
    const char *to = strstr(b.data, "</wsag:All>");
    CU_ASSERT_FATAL(from && to && from < to);
    char terms[4096];
    CU_ASSERT_FATAL((size_t)(to - from) < sizeof terms);
    memcpy(terms, from, (size_t)(to - from));
    terms[to - from] = '\0';
    struct acc_offer o;
    struct acc_error e;
    acc_err rc = parse(terms, &o, &e);
    if (rc)
        fprintf(stderr, "\n%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_EQUAL(o.n_components, 1);
    CU_ASSERT_STRING_EQUAL(o.components[0].site, "caesar");
    CU_ASSERT_EQUAL(o.components[0].nodes, 4);
    CU_ASSERT_EQUAL(o.duration, 3600);
    acc_offer_release(&o);
    acc_buf_release(&b);
}

const struct acc_test_case acc_xml_wsag4j_tests[] = {
    {"wsag4j_example", test_example},
    {"wsag4j_variations", test_variations},
    {"wsag4j_unmapped", test_unmapped},
    {"foreign_vocabulary", test_foreign},
    {"foreign_vocabulary_first", test_foreign_first},
    {"wsag4j_files", test_files},
    {"wsag4j_template", test_template},
    {NULL, NULL},
};
