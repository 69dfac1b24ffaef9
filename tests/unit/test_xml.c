/* test_xml.c - offers in (good and hostile ones), documents out (each one
 * validated against the compiled schemas), and parsing from many threads. */
#include <fcntl.h>
#include <limits.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"
#include "testutil.h"
#include "xml.h"
#include "xml_internal.h"

#define OFFERS ACC_TEST_DATA "/offers/"

/* ---------------------------------------------------------------- helpers */

static char *slurp_case(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", OFFERS, name);
    char *s = acc_test_slurp(path, len);
    if (!s)
        fprintf(stderr, "cannot read %s\n", path);
    return s;
}

static acc_err parse_case(const char *name, struct acc_offer *o, struct acc_error *err)
{
    size_t len;
    char *data = slurp_case(name, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    acc_err rc = acc_xml_parse_offer(data, len, NULL, o, err);
    free(data);
    return rc;
}

static bool is_empty_offer(const struct acc_offer *o)
{
    static const struct acc_offer zero;
    return memcmp(o, &zero, sizeof zero) == 0;
}

/* Validates a rendered document against the schemas; prints why not. */
static bool valid(const struct acc_buf *b)
{
    struct acc_error e = {0};
    const char *s = acc_buf_str(b);
    if (!s)
        return false;
    if (strncmp(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 38) != 0) {
        fprintf(stderr, "no XML declaration:\n%s\n", s);
        return false;
    }
    if (getenv("ACC_TEST_DUMP")) /* to look at the documents */
        printf("\n%s", s);
    if (acc_xml_validate_mem(s, b->len, &e) != ACC_OK) {
        fprintf(stderr, "not valid: %s\n%s\n", e.msg, s);
        return false;
    }
    return true;
}

static xmlDocPtr read_doc(const struct acc_buf *b)
{
    return xmlReadMemory(b->data, (int)b->len, NULL, NULL, XML_PARSE_NONET);
}

/* The first element named name in ns, depth first from n. */
static xmlNode *find(xmlNode *n, const char *ns, const char *name)
{
    for (; n; n = n->next) {
        if (acc_xml_is(n, ns, name))
            return n;
        xmlNode *f = find(n->children, ns, name);
        if (f)
            return f;
    }
    return NULL;
}

static bool content_is(xmlNode *n, const char *want)
{
    if (!n)
        return false;
    xmlChar *c = xmlNodeGetContent(n);
    bool eq = c && strcmp((const char *)c, want) == 0;
    if (!eq)
        fprintf(stderr, "content '%s', expected '%s'\n", c ? (const char *)c : "(null)", want);
    xmlFree(c);
    return eq;
}

static bool prop_is(xmlNode *n, const char *ns, const char *name, const char *want)
{
    if (!n)
        return false;
    xmlChar *c = xmlGetNsProp(n, BAD_CAST name, BAD_CAST ns);
    bool eq = c && strcmp((const char *)c, want) == 0;
    if (!eq)
        fprintf(stderr, "%s='%s', expected '%s'\n", name, c ? (const char *)c : "(null)", want);
    xmlFree(c);
    return eq;
}

static int count_lines(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int setup(void)
{
    struct acc_error e;
    if (acc_xml_init(&e) != ACC_OK) {
        fprintf(stderr, "acc_xml_init: %s\n", e.msg);
        return 1;
    }
    return 0;
}

static int teardown(void)
{
    acc_xml_cleanup();
    return 0;
}

/* ------------------------------------------------------------ good offers */

static void test_example_offer(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    char *data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    acc_err rc = acc_xml_parse_offer(data, len, NULL, &o, &e);
    free(data);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    ACC_ASSERT_OK(rc);

    CU_ASSERT_STRING_EQUAL(o.name, "metatrace-run");
    CU_ASSERT_STRING_EQUAL(o.initiator, "alice");
    CU_ASSERT_STRING_EQUAL(o.template_name, "meta-job");
    CU_ASSERT_EQUAL(o.expiration, 0);
    CU_ASSERT_EQUAL(o.earliest, 0);
    CU_ASSERT_EQUAL(o.deadline, 0);
    CU_ASSERT_EQUAL(o.duration, 7200);
    CU_ASSERT_EQUAL(o.strategy, ACC_STRATEGY_DEFAULT);
    CU_ASSERT_EQUAL(o.launch, ACC_LAUNCH_METAMPICH);
    CU_ASSERT_EQUAL(o.n_guarantees, 0);

    CU_ASSERT_EQUAL_FATAL(o.n_components, 3);
    const struct acc_component *c = o.components;
    CU_ASSERT_STRING_EQUAL(c[0].name, "trace");
    CU_ASSERT_STRING_EQUAL(c[0].site, "caesar");
    CU_ASSERT_EQUAL(c[0].nodes, 16);
    CU_ASSERT_EQUAL(c[0].ppn, 2);
    CU_ASSERT_STRING_EQUAL(c[0].executable, "/opt/metatrace/trace");
    CU_ASSERT_EQUAL_FATAL(c[0].n_args, 1);
    CU_ASSERT_STRING_EQUAL(c[0].args[0], "--steps=500");
    CU_ASSERT_STRING_EQUAL(c[1].name, "partrace");
    CU_ASSERT_STRING_EQUAL(c[1].site, "fzj-xd1");
    CU_ASSERT_EQUAL(c[1].nodes, 8);
    CU_ASSERT_EQUAL(c[1].ppn, 1);
    CU_ASSERT_STRING_EQUAL(c[1].executable, "/opt/metatrace/partrace");
    CU_ASSERT_EQUAL(c[1].n_args, 0);
    CU_ASSERT_STRING_EQUAL(c[2].name, "viz");
    CU_ASSERT_STRING_EQUAL(c[2].site, "fh-brs");
    CU_ASSERT_EQUAL(c[2].nodes, 4);

    CU_ASSERT_EQUAL_FATAL(o.n_links, 2);
    CU_ASSERT_STRING_EQUAL(o.links[0].name, "trace-partrace");
    CU_ASSERT_EQUAL(o.links[0].a, 0);
    CU_ASSERT_EQUAL(o.links[0].b, 1);
    CU_ASSERT_EQUAL(o.links[0].bandwidth, 5000);
    CU_ASSERT_STRING_EQUAL(o.links[1].name, "trace-viz");
    CU_ASSERT_EQUAL(o.links[1].a, 0);
    CU_ASSERT_EQUAL(o.links[1].b, 2);
    CU_ASSERT_EQUAL(o.links[1].bandwidth, 1000);
    acc_offer_release(&o);
    CU_ASSERT(is_empty_offer(&o));
}

static void test_flexible_offer(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    char *data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer-flexible.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    acc_err rc = acc_xml_parse_offer(data, len, NULL, &o, &e);
    free(data);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_STRING_EQUAL(o.policy, "fcm");
    CU_ASSERT_EQUAL_FATAL(o.n_components, 2);
    const struct acc_component *c = o.components;
    CU_ASSERT_STRING_EQUAL(c[0].name, "solver");
    CU_ASSERT_EQUAL(c[0].kind, ACC_COMP_FLEXIBLE);
    CU_ASSERT_PTR_NULL(c[0].site);
    CU_ASSERT_EQUAL(c[0].nodes, 160);
    CU_ASSERT_EQUAL(c[0].min_nodes, 16);
    CU_ASSERT_EQUAL(c[0].max_nodes, 0);
    CU_ASSERT_EQUAL(c[0].max_parts, 2);
    CU_ASSERT_DOUBLE_EQUAL(c[0].ppbw, 100, 1e-9);
    CU_ASSERT_EQUAL(c[0].ppn, 2);
    CU_ASSERT_STRING_EQUAL(c[0].executable, "/opt/solver/solve");
    CU_ASSERT_EQUAL_FATAL(c[0].n_args, 1);
    CU_ASSERT_STRING_EQUAL(c[0].args[0], "--grid=4096");
    CU_ASSERT_EQUAL(c[1].kind, ACC_COMP_SIZED);
    CU_ASSERT_STRING_EQUAL(c[1].site, "fh-brs");
    acc_offer_release(&o);
    CU_ASSERT(is_empty_offer(&o));
}

static void test_window_offer(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    char *data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer-window.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    acc_err rc = acc_xml_parse_offer(data, len, NULL, &o, &e);
    free(data);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_EQUAL(o.earliest, 1898841600);   /* 2030-03-04T08:00:00Z */
    CU_ASSERT_EQUAL(o.deadline, 1899050400);   /* 2030-03-06T18:00:00Z */
    CU_ASSERT_EQUAL(o.expiration, 1898553600); /* 2030-03-01T00:00:00Z */
    CU_ASSERT_EQUAL(o.duration, 4 * 3600 + 30 * 60);
    CU_ASSERT_EQUAL(o.strategy, ACC_STRATEGY_ITERATIVE);
    CU_ASSERT_EQUAL(o.launch, ACC_LAUNCH_MPICH_G2);
    CU_ASSERT_EQUAL_FATAL(o.n_components, 2);
    CU_ASSERT_PTR_NULL(o.components[0].site);
    CU_ASSERT_EQUAL(o.components[0].ppn, 4);
    CU_ASSERT_EQUAL_FATAL(o.components[0].n_args, 2);
    CU_ASSERT_STRING_EQUAL(o.components[0].args[1], "--checkpoint=/scratch/alice/trace.ckpt");
    CU_ASSERT_EQUAL_FATAL(o.n_links, 1);
    CU_ASSERT_EQUAL(o.links[0].bandwidth, 2000); /* 2 Gbit/s */
    CU_ASSERT_EQUAL_FATAL(o.n_guarantees, 1);
    CU_ASSERT_STRING_EQUAL(o.guarantees[0], "wan-bandwidth");
    acc_offer_release(&o);
}

static void test_minimal_offer(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    acc_err rc = parse_case("good-minimal.xml", &o, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_EQUAL(o.n_components, 1);
    CU_ASSERT_EQUAL(o.n_links, 0);
    CU_ASSERT_PTR_NULL(o.components[0].site);
    CU_ASSERT_PTR_NULL(o.components[0].executable);
    CU_ASSERT_EQUAL(o.launch, ACC_LAUNCH_NONE);
    CU_ASSERT_EQUAL(o.strategy, ACC_STRATEGY_DEFAULT);
    CU_ASSERT_PTR_NULL(o.template_name);
    acc_offer_release(&o);
}

/* Other prefixes, a default namespace, CDATA, foreign content, comments. */
static void test_other_prefixes(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    acc_err rc = parse_case("good-other-prefixes.xml", &o, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_STRING_EQUAL(o.name, "other & prefixes");
    CU_ASSERT_STRING_EQUAL(o.initiator, "urn:user:carol");
    CU_ASSERT_EQUAL(o.expiration, 1893456000); /* 2030-01-01T00:00:00Z */
    CU_ASSERT_EQUAL(o.duration, 90 * 60);
    CU_ASSERT_EQUAL_FATAL(o.n_components, 2);
    CU_ASSERT_EQUAL_FATAL(o.components[0].n_args, 2);
    CU_ASSERT_STRING_EQUAL(o.components[0].args[0], "--label=<a&b>");
    CU_ASSERT_STRING_EQUAL(o.components[0].args[1], "  spaced  "); /* as written */
    CU_ASSERT_EQUAL_FATAL(o.n_links, 1);
    CU_ASSERT_EQUAL(o.links[0].a, 1); /* right */
    CU_ASSERT_EQUAL(o.links[0].b, 0); /* left */
    CU_ASSERT_EQUAL(o.links[0].bandwidth, 3000);
    CU_ASSERT_EQUAL_FATAL(o.n_guarantees, 1);
    CU_ASSERT_STRING_EQUAL(o.guarantees[0], "on-time");
    acc_offer_release(&o);
}

/* ------------------------------------------------------------- bad offers */

struct bad_case {
    const char *file;
    acc_err code;
    const char *want[3]; /* substrings of the message */
};

static const struct bad_case bad_cases[] = {
    /* not well-formed */
    {"malformed-tag-mismatch.xml", ACC_ERR_MALFORMED, {"line 7:", "mismatch", "Context"}},
    {"malformed-bad-utf8.xml", ACC_ERR_MALFORMED, {"line 4:", "UTF-8"}},
    {"malformed-undeclared-prefix.xml", ACC_ERR_MALFORMED, {"line 6:", "co"}},
    {"malformed-empty.xml", ACC_ERR_MALFORMED, {"line 1:", "empty"}},
    /* DTDs and entities */
    {"dtd-billion-laughs.xml", ACC_ERR_DTD, {"line 2:", "DOCTYPE"}},
    {"dtd-external-entity.xml", ACC_ERR_DTD, {"DOCTYPE"}},
    {"dtd-external-subset.xml", ACC_ERR_DTD, {"DOCTYPE"}},
    {"dtd-parameter-entity.xml", ACC_ERR_DTD, {"DOCTYPE"}},
    {"dtd-undeclared-entity.xml", ACC_ERR_DTD, {"&who;"}},
    /* limits */
    {"too-deep.xml", ACC_ERR_TOO_DEEP, {"deeper than 32"}},
    /* not an offer, or not valid */
    {"wrong-root.xml", ACC_ERR_SCHEMA, {"line 3:", "wsag:Agreement;", "wsag:AgreementOffer"}},
    {"wrong-namespace.xml", ACC_ERR_SCHEMA, {"2005/09", "wsag:AgreementOffer"}},
    {"schema-nodes-zero.xml", ACC_ERR_SCHEMA, {"line 15:", "co:Nodes", "'0'"}},
    {"schema-nodes-negative.xml", ACC_ERR_SCHEMA, {"co:Nodes", "'-1'", "positiveInteger"}},
    {"schema-bandwidth-zero.xml", ACC_ERR_SCHEMA, {"co:Bandwidth", "'0'"}},
    {"schema-missing-duration.xml", ACC_ERR_SCHEMA, {"co:Schedule", "co:Duration"}},
    {"schema-unknown-element.xml", ACC_ERR_SCHEMA, {"line 21:", "co:Frobnicate"}},
    {"schema-text-for-number.xml", ACC_ERR_SCHEMA, {"co:Nodes", "'many'"}},
    {"schema-bad-unit.xml", ACC_ERR_SCHEMA, {"unit", "kbit/s"}},
    {"schema-bad-time.xml", ACC_ERR_SCHEMA, {"co:EarliestStart", "tomorrow"}},
    {"schema-bad-launch.xml", ACC_ERR_SCHEMA, {"style", "mpirun"}},
    {"schema-foreign-term.xml", ACC_ERR_SCHEMA, {"urn:example:other", "Job"}},
    {"schema-sdt-without-name.xml", ACC_ERR_SCHEMA, {"wsag:ServiceDescriptionTerm", "wsag:Name"}},
    /* valid but meaningless */
    {"invalid-no-schedule.xml", ACC_ERR_INVALID, {"no co:Schedule"}},
    {"invalid-two-schedules.xml", ACC_ERR_INVALID, {"schedule2", "second co:Schedule"}},
    {"invalid-no-component.xml", ACC_ERR_INVALID, {"no co:Component"}},
    {"invalid-duplicate-component.xml", ACC_ERR_INVALID, {"duplicate component name 'a'"}},
    {"invalid-duplicate-term.xml", ACC_ERR_INVALID, {"two terms are named 'b'"}},
    {"invalid-link-unknown.xml", ACC_ERR_INVALID, {"link 'ab'", "no component named 'ghost'"}},
    {"invalid-link-self.xml", ACC_ERR_INVALID, {"link 'aa'", "itself"}},
    {"invalid-link-twice.xml", ACC_ERR_INVALID, {"'ab' and 'ba'", "both join"}},
    {"invalid-deadline-before-start.xml",
     ACC_ERR_INVALID,
     {"deadline 2030-05-01T10:00:00Z", "before the earliest start 2030-05-02T10:00:00Z"}},
    {"invalid-duration-longer-than-window.xml",
     ACC_ERR_INVALID,
     {"duration PT3H is longer than the window", "(PT2H)"}},
    {"invalid-duration-zero.xml", ACC_ERR_INVALID, {"duration must be positive", "PT0S"}},
    {"invalid-duration-negative.xml", ACC_ERR_INVALID, {"duration must be positive"}},
    {"invalid-duration-months.xml", ACC_ERR_INVALID, {"co:Duration", "months"}},
    {"invalid-exactly-one.xml", ACC_ERR_INVALID, {"wsag:ExactlyOne is not supported"}},
    {"invalid-nodes-beyond-int64.xml",
     ACC_ERR_INVALID,
     {"co:Nodes", "99999999999999999999", "out of range"}},
    {"invalid-nodes-too-many.xml", ACC_ERR_INVALID, {"co:Nodes", "1000001", "out of range"}},
    {"invalid-ppn-too-many.xml", ACC_ERR_INVALID, {"co:ProcessesPerNode", "5000"}},
    {"invalid-bandwidth-too-high.xml",
     ACC_ERR_INVALID,
     {"co:Bandwidth", "2000 Gbit/s is more than 1000000 Mbit/s"}},
    {"invalid-component-name.xml", ACC_ERR_INVALID, {"component name 'my component'"}},
    {"invalid-site-name.xml", ACC_ERR_INVALID, {"site name '../etc'"}},
    {"invalid-reserved-term-name.xml", ACC_ERR_INVALID, {"'allocation' is reserved"}},
    {"invalid-allocation-in-offer.xml", ACC_ERR_INVALID, {"co:Allocation does not belong"}},
    {"invalid-initiator-empty.xml", ACC_ERR_INVALID, {"wsag:AgreementInitiator", "printable"}},
    {"invalid-initiator-too-long.xml", ACC_ERR_INVALID, {"wsag:AgreementInitiator", "128"}},
    {"invalid-service-provider.xml", ACC_ERR_INVALID, {"wsag:ServiceProvider"}},
    {"invalid-two-launches.xml", ACC_ERR_INVALID, {"'l2'", "second co:Launch"}},
    {"invalid-earliest-before-1970.xml", ACC_ERR_INVALID, {"co:EarliestStart", "1960"}},
    {"invalid-time-past-9999.xml",
     ACC_ERR_INVALID,
     {"co:EarliestStart", "9999-12-31T23:00:00-05:00", "after 9999-12-31T23:59:59Z"}},
    {"invalid-deadline-year-10000.xml",
     ACC_ERR_INVALID,
     {"co:Deadline", "10000-01-01T02:00:00Z", "after 9999-12-31T23:59:59Z"}},
    {"invalid-end-past-9999.xml",
     ACC_ERR_INVALID,
     {"line 12:", "PT2H from 9999-12-31T23:00:00Z", "after 9999-12-31T23:59:59Z"}},
    /* an executable that mpiexec would read as one of its own words */
    {"invalid-executable-option.xml",
     ACC_ERR_INVALID,
     {"term 'solo'", "co:Executable '-genv'", "option"}},
    {"invalid-executable-colon.xml", ACC_ERR_INVALID, {"co:Executable ':'", "separator"}},
    {"invalid-executable-relative.xml",
     ACC_ERR_INVALID,
     {"co:Executable 'bin/solver'", "absolute path"}},
    {"invalid-executable-blank.xml", ACC_ERR_INVALID, {"co:Executable 'my solver'", "blank"}},
    {"invalid-executable-empty.xml", ACC_ERR_INVALID, {"co:Executable", "empty"}},
    {"invalid-executable-control.xml", ACC_ERR_INVALID, {"co:Executable", "control character"}},
};

static void test_bad_offers(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        struct acc_offer o;
        struct acc_error e = {0};
        acc_err rc = parse_case(c->file, &o, &e);
        bool ok = rc == c->code && e.code == c->code;
        for (int k = 0; k < 3 && c->want[k]; k++)
            ok = ok && strstr(e.msg, c->want[k]);
        if (!ok)
            fprintf(stderr, "\n%s: got %s \"%s\", expected %s with \"%s\" \"%s\" \"%s\"\n", c->file,
                    acc_err_symbol(rc), e.msg, acc_err_symbol(c->code), c->want[0],
                    c->want[1] ? c->want[1] : "", c->want[2] ? c->want[2] : "");
        CU_ASSERT(ok);
        CU_ASSERT(is_empty_offer(&o));
    }
}

/* The expansion would be 10^9 "lol"s: stopping at the DOCTYPE takes no time. */
static void test_billion_laughs_is_fast(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(parse_case("dtd-billion-laughs.xml", &o, &e), ACC_ERR_DTD);
    CU_ASSERT(acc_mono_us() - t0 < 500000);
    /* Stopped by us at the DOCTYPE, not by libxml2's amplification guard. */
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "DOCTYPE"));
    CU_ASSERT_PTR_NULL(strstr(e.msg, "mplification"));
}

/* An external entity naming a file: refused, and the file is never opened,
 * neither through acc_xml_parse_offer() nor through libxml2 itself with
 * entity loading switched on (the refusing loader is process-wide). */
static void test_external_entity_never_read(void)
{
    char path[256], doc[1024];
    snprintf(path, sizeof path, "%s/secret.txt", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("TOP-SECRET\n", f);
    fclose(f);

    int in = inotify_init1(IN_NONBLOCK);
    CU_ASSERT_FATAL(in >= 0);
    CU_ASSERT_FATAL(inotify_add_watch(in, path, IN_OPEN | IN_ACCESS) >= 0);

    snprintf(doc, sizeof doc,
             "<?xml version=\"1.0\"?>\n"
             "<!DOCTYPE r [<!ENTITY s SYSTEM \"file://%s\">]>\n"
             "<wsag:AgreementOffer xmlns:wsag=\"" ACC_NS_WSAG "\"><wsag:Name>&s;</wsag:Name>"
             "</wsag:AgreementOffer>\n",
             path);
    struct acc_offer o;
    struct acc_error e = {0};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(doc, strlen(doc), NULL, &o, &e), ACC_ERR_DTD);

    /* libxml2 directly, asked to load and substitute: the loader refuses. */
    xmlDocPtr d = xmlReadMemory(doc, (int)strlen(doc), NULL, NULL,
                                XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_NOERROR |
                                    XML_PARSE_NOWARNING);
    if (d) {
        xmlChar *text = xmlNodeGetContent(xmlDocGetRootElement(d));
        CU_ASSERT(!text || !strstr((const char *)text, "TOP-SECRET"));
        xmlFree(text);
        xmlFreeDoc(d);
    }
    snprintf(doc, sizeof doc, "<?xml version=\"1.0\"?>\n<!DOCTYPE r SYSTEM \"file://%s\">\n<r/>\n",
             path);
    d = xmlReadMemory(doc, (int)strlen(doc), NULL, NULL,
                      XML_PARSE_DTDLOAD | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlFreeDoc(d);

    char events[4096];
    ssize_t n = read(in, events, sizeof events);
    CU_ASSERT(n <= 0); /* no IN_OPEN, no IN_ACCESS */
    close(in);
    unlink(path);
}

static void test_size_limits(void)
{
    size_t len;
    char *data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    struct acc_offer o;
    struct acc_error e = {0};

    struct acc_xml_limits exact = {len, 32, 20000, 64, 20000};
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, &exact, &o, &e));
    acc_offer_release(&o);

    /* Zero takes the default. */
    struct acc_xml_limits zero = {0, 0, 0, 0, 0};
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, &zero, &o, &e));
    acc_offer_release(&o);

    struct acc_xml_limits small = {len - 1, 32, 20000, 64, 20000};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, &small, &o, &e), ACC_ERR_TOO_LARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "bytes"));
    CU_ASSERT(is_empty_offer(&o));

    struct acc_xml_limits few = {len, 32, 30, 64, 20000};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, &few, &o, &e), ACC_ERR_TOO_LARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 30 elements"));

    struct acc_xml_limits shallow = {len, 5, 20000, 64, 20000};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, &shallow, &o, &e), ACC_ERR_TOO_DEEP);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "deeper than 5"));
    free(data);

    /* Over the default 1 MiB, however harmless the content. */
    struct acc_buf big = ACC_BUF_INIT;
    acc_buf_puts(&big, "<?xml version=\"1.0\"?>\n<r><!--");
    for (int i = 0; i < 70000; i++)
        acc_buf_puts(&big, "padding padding ");
    acc_buf_puts(&big, "--></r>");
    CU_ASSERT_FATAL(acc_buf_ok(&big));
    CU_ASSERT_EQUAL(acc_xml_parse_offer(big.data, big.len, NULL, &o, &e), ACC_ERR_TOO_LARGE);
    acc_buf_release(&big);

    /* Under 1 MiB but more than 20000 elements. */
    acc_buf_puts(&big, "<?xml version=\"1.0\"?>\n<r>");
    for (int i = 0; i < 20001; i++)
        acc_buf_puts(&big, "<e/>");
    acc_buf_puts(&big, "</r>");
    CU_ASSERT_FATAL(acc_buf_ok(&big));
    CU_ASSERT_EQUAL(acc_xml_parse_offer(big.data, big.len, NULL, &o, &e), ACC_ERR_TOO_LARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "20000 elements"));
    acc_buf_release(&big);
}

/* good-minimal.xml with `extra` inserted at the end of wsag:Context (from
 * line 8 on, where foreign elements may go) and `tail` appended after the
 * document. */
static char *minimal_with(const char *extra, const char *tail, size_t tail_len, size_t *len)
{
    size_t n;
    char *base = slurp_case("good-minimal.xml", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    const char *at = strstr(base, "  </wsag:Context>\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_append(&b, base, (size_t)(at - base));
    acc_buf_puts(&b, extra);
    acc_buf_puts(&b, at);
    acc_buf_append(&b, tail, tail_len);
    free(base);
    CU_ASSERT_FATAL(acc_buf_ok(&b));
    return acc_buf_detach(&b, len);
}

/* One foreign element with n attributes named a, b, ... Z9 (three characters
 * at most: a little over 7 bytes each). */
static char *many_attributes(unsigned n, size_t *len)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct acc_buf e = ACC_BUF_INIT;
    acc_buf_puts(&e, "    <x:e xmlns:x=\"urn:example:x\"");
    for (unsigned i = 0; i < n; i++) {
        char name[8];
        size_t k = i, j = 0;
        name[j++] = al[k % 52];
        for (k /= 52; k; k /= 62)
            name[j++] = al[k % 62];
        name[j] = '\0';
        acc_buf_printf(&e, " %s=\"\"", name);
    }
    acc_buf_puts(&e, "/>\n");
    CU_ASSERT_FATAL(acc_buf_ok(&e));
    char *doc = minimal_with(acc_buf_str(&e), "", 0, len);
    acc_buf_release(&e);
    return doc;
}

/* libxml2 compares every attribute of an element with every other: 149,000
 * of them (a valid offer under 1 MiB) took 70 s of CPU.  They are counted
 * before libxml2 sees them. */
static void test_attribute_bomb(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    char *data = many_attributes(149000, &len);
    CU_ASSERT_FATAL(len <= 1024 * 1024); /* under the size limit: only the count refuses it */
    int64_t t0 = acc_mono_us();
    acc_err rc = acc_xml_parse_offer(data, len, NULL, &o, &e);
    int64_t us = acc_mono_us() - t0;
    /* Refused at the 65th; a whole pass over the same bytes: */
    struct acc_xml_limits none = {0, 0, 0, UINT_MAX, UINT_MAX};
    int64_t t1 = acc_mono_us();
    ACC_ASSERT_OK(acc_xml_prescan(data, len, &none, &e));
    int64_t pass_us = acc_mono_us() - t1;
    printf("\n    149000 attributes, %zu bytes: refused in %.3f ms; a whole pass %.3f ms\n", len,
           us / 1000.0, pass_us / 1000.0);
    CU_ASSERT_EQUAL(rc, ACC_ERR_TOO_MANY_ATTRS);
    CU_ASSERT_EQUAL(acc_err_http_status(rc), 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 8:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "x:e"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 64 attributes"));
    CU_ASSERT(us < 1000000);
    CU_ASSERT(is_empty_offer(&o));
    free(data);

    /* 64 are fine (the namespace declaration counts as one), 65 are not. */
    data = many_attributes(63, &len);
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, NULL, &o, &e));
    acc_offer_release(&o);
    free(data);
    data = many_attributes(64, &len);
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, NULL, &o, &e), ACC_ERR_TOO_MANY_ATTRS);
    free(data);

    /* The limits are the caller's. */
    data = many_attributes(200, &len);
    struct acc_xml_limits roomy = {0, 0, 0, 201, 0};
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, &roomy, &o, &e));
    acc_offer_release(&o);
    struct acc_xml_limits few = {0, 0, 0, 201, 150};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, &few, &o, &e), ACC_ERR_TOO_MANY_ATTRS);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 150 attributes in all"));
    free(data);

    /* Per document: elements of 50 attributes each; with the root's two
     * namespace declarations the 400th (on line 407) goes over. */
    struct acc_buf b = ACC_BUF_INIT;
    for (int i = 0; i < 401; i++) {
        acc_buf_puts(&b, "    <x:e xmlns:x=\"urn:example:x\"");
        for (int k = 0; k < 49; k++)
            acc_buf_printf(&b, " a%d=\"\"", k);
        acc_buf_puts(&b, "/>\n");
    }
    CU_ASSERT_FATAL(acc_buf_ok(&b));
    data = minimal_with(acc_buf_str(&b), "", 0, &len);
    acc_buf_release(&b);
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, NULL, &o, &e), ACC_ERR_TOO_MANY_ATTRS);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 20000 attributes in all"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 407:"));
    free(data);
}

/* Wherever libxml2 would take up a start tag again, the count starts again:
 * here a '<' inside a quoted value, which libxml2 reports and then parses
 * as a new element. */
static void test_attribute_bomb_disguised(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    size_t len;
    acc_buf_puts(&b, "    <x:e xmlns:x=\"urn:example:x\" a='<x:f");
    for (int i = 0; i < 3000; i++)
        acc_buf_printf(&b, " b%d=\"\"", i);
    acc_buf_puts(&b, "/>'/>\n");
    CU_ASSERT_FATAL(acc_buf_ok(&b));
    char *data = minimal_with(acc_buf_str(&b), "", 0, &len);
    acc_buf_release(&b);
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, NULL, &o, &e), ACC_ERR_TOO_MANY_ATTRS);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "x:f"));
    free(data);

    /* Offers are UTF-8: a declared UTF-7 would hide the markup from the
     * count ("+ADw-" is '<'), so the declaration is not followed. */
    static const char utf7[] = "<?xml version=\"1.0\" encoding=\"UTF-7\"?>\n"
                               "+ADw-r a+AD0AIgAi- b+AD0AIgAi-/+AD4-\n";
    CU_ASSERT_EQUAL(acc_xml_parse_offer(utf7, sizeof utf7 - 1, NULL, &o, &e), ACC_ERR_MALFORMED);
}

/* An absolute path or a plain program name (found on the PATH). */
static void test_executable_forms(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    char *data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer-launch.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, NULL, &o, &e));
    CU_ASSERT_STRING_EQUAL(o.components[0].executable, "accord-ring");
    acc_offer_release(&o);
    free(data);
    data = acc_test_slurp(ACC_TEST_EXAMPLES "/offer.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    ACC_ASSERT_OK(acc_xml_parse_offer(data, len, NULL, &o, &e));
    CU_ASSERT_STRING_EQUAL(o.components[0].executable, "/opt/metatrace/trace");
    acc_offer_release(&o);
    free(data);
}

/* libxml2 stops at a NUL byte as if the document ended there. */
static void test_nul_byte(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    size_t len;
    static const char garbage[] = "\0garbage";
    char *data = minimal_with("", garbage, sizeof garbage - 1, &len);
    size_t at = len - (sizeof garbage - 1);
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, len, NULL, &o, &e), ACC_ERR_MALFORMED);
    char want[64];
    snprintf(want, sizeof want, "byte %zu", at);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "NUL"));
    CU_ASSERT(is_empty_offer(&o));
    /* Without the tail the same offer is fine. */
    ACC_ASSERT_OK(acc_xml_parse_offer(data, at, NULL, &o, &e));
    acc_offer_release(&o);
    /* Inside the document too. */
    data[strstr(data, "bob") - data] = '\0';
    CU_ASSERT_EQUAL(acc_xml_parse_offer(data, at, NULL, &o, &e), ACC_ERR_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 6"));
    free(data);
}

/* Many schema errors: at most ACC_XML_MAX_ERRORS lines plus a count. */
static void test_many_schema_errors(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "<?xml version=\"1.0\"?>\n<wsag:AgreementOffer xmlns:wsag=\"" ACC_NS_WSAG
                     "\" xmlns:co=\"" ACC_NS_CO "\">\n<wsag:Context><wsag:ServiceProvider>"
                     "AgreementResponder</wsag:ServiceProvider></wsag:Context>\n"
                     "<wsag:Terms><wsag:All>\n");
    for (int i = 0; i < 15; i++)
        acc_buf_printf(&b,
                       "<wsag:ServiceDescriptionTerm wsag:Name=\"c%d\" wsag:ServiceName=\"m\">"
                       "<co:Component><co:Nodes>zero</co:Nodes></co:Component>"
                       "</wsag:ServiceDescriptionTerm>\n",
                       i);
    acc_buf_puts(&b, "</wsag:All></wsag:Terms></wsag:AgreementOffer>\n");
    struct acc_offer o;
    struct acc_error e = {0};
    CU_ASSERT_EQUAL(acc_xml_parse_offer(b.data, b.len, NULL, &o, &e), ACC_ERR_SCHEMA);
    CU_ASSERT_EQUAL(count_lines(e.msg), ACC_XML_MAX_ERRORS + 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 5: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "(5 more errors)"));
    acc_buf_release(&b);
}

/* libxml2 must not print: its messages belong in the error. */
static void test_nothing_on_stderr(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stderr.txt", acc_test_tmpdir());
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);

    static const char *const files[] = {"malformed-tag-mismatch.xml", "schema-nodes-zero.xml",
                                        "dtd-external-entity.xml", "malformed-bad-utf8.xml"};
    for (size_t i = 0; i < 4; i++) {
        struct acc_offer o;
        struct acc_error e;
        CU_ASSERT_NOT_EQUAL(parse_case(files[i], &o, &e), ACC_OK);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 0);
    unlink(path);
}

/* ----------------------------------------------------------- the renderers */

#define SPECIAL "a&b <c> \"d\" 'e' J\xc3\xbcrgen \xe6\x9d\xb1\xe4\xba\xac"

/* An allocated agreement; strings are the caller's to free with
 * acc_agreement_release(). */
static void sample_agreement(struct acc_agreement *a, const char *offer_file)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, "abcdefghijklmnop", sizeof a->id);
    a->name = strdup("metatrace-run");
    a->initiator = strdup("alice");
    a->state = ACC_STATE_OBSERVED;
    a->created = 1898841000;
    a->start = 1898841600;
    a->end = a->start + 7200;
    a->duration = 7200;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->launch = ACC_LAUNCH_METAMPICH;
    a->rounds = 2;
    a->rollbacks = 1;
    if (offer_file) {
        a->offer_xml = acc_test_slurp(offer_file, &a->offer_len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->offer_xml);
    }
    a->n_comps = 2;
    a->comps = calloc(2, sizeof *a->comps);
    a->comps[0] =
        (struct acc_alloc_component){.name = strdup("trace"),
                                     .site = strdup("caesar"),
                                     .nodes = 16,
                                     .ppn = 2,
                                     .reservation = strdup("acc-abcdefghijklmnop-1-trace"),
                                     .local_id = strdup("resv.17"),
                                     .node_names = strdup("c001, c002,c003")};
    a->comps[1] =
        (struct acc_alloc_component){.name = strdup("partrace"),
                                     .site = strdup("fzj-xd1"),
                                     .nodes = 8,
                                     .ppn = 1,
                                     .reservation = strdup("acc-abcdefghijklmnop-1-partrace"),
                                     .local_id = strdup("4711")};
    a->n_links = 1;
    a->links = calloc(1, sizeof *a->links);
    a->links[0] = (struct acc_alloc_link){strdup("trace-partrace"),
                                          strdup("trace"),
                                          strdup("partrace"),
                                          strdup("caesar"),
                                          strdup("fzj-xd1"),
                                          strdup("caesar~fzj-xd1"),
                                          5000,
                                          strdup("acc-abcdefghijklmnop-1-wan"),
                                          strdup("argon-9")};
}

static void test_agreement_from_offer(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, ACC_TEST_EXAMPLES "/offer.xml");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));

    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_WSAG, "Agreement"));
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "AgreementId", "abcdefghijklmnop"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), "metatrace-run"));
    /* Accord became the responder, right after the initiator. */
    xmlNode *init = find(root, ACC_NS_WSAG, "AgreementInitiator");
    CU_ASSERT(content_is(init, "alice"));
    xmlNode *next = init ? xmlNextElementSibling(init) : NULL;
    CU_ASSERT(acc_xml_is(next, ACC_NS_WSAG, "AgreementResponder"));
    CU_ASSERT(content_is(next, "accord"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "TemplateName"), "meta-job"));

    /* Every term of the offer, in order, then the allocation. */
    static const char *const names[] = {"schedule",       "trace",     "partrace", "viz",
                                        "trace-partrace", "trace-viz", "launch",   "allocation"};
    xmlNode *all = find(root, ACC_NS_WSAG, "All");
    size_t i = 0;
    for (xmlNode *t = all ? xmlFirstElementChild(all) : NULL; t; t = xmlNextElementSibling(t)) {
        CU_ASSERT_FATAL(i < 8);
        CU_ASSERT(prop_is(t, ACC_NS_WSAG, "Name", names[i]));
        i++;
    }
    CU_ASSERT_EQUAL(i, 8);
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "Argument"), "--steps=500"));
    xmlNode *launch = find(root, ACC_NS_CO, "Launch");
    CU_ASSERT_PTR_NOT_NULL(launch);
    if (launch) {
        xmlChar *style = xmlGetNoNsProp(launch, BAD_CAST "style");
        CU_ASSERT(style && strcmp((const char *)style, "metampich") == 0);
        xmlFree(style);
    }

    xmlNode *alloc = find(root, ACC_NS_CO, "Allocation");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alloc);
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "State"), "Observed"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Start"), "2030-03-04T08:00:00Z"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "End"), "2030-03-04T10:00:00Z"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Strategy"), "intersect"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Rollbacks"), "1"));
    xmlNode *ca = find(alloc->children, ACC_NS_CO, "ComponentAllocation");
    CU_ASSERT(prop_is(ca, ACC_NS_CO, "name", "trace"));
    CU_ASSERT(content_is(find(ca ? ca->children : NULL, ACC_NS_CO, "LocalId"), "resv.17"));
    int node_names = 0;
    for (xmlNode *k = ca ? xmlFirstElementChild(ca) : NULL; k; k = xmlNextElementSibling(k))
        node_names += acc_xml_is(k, ACC_NS_CO, "NodeName");
    CU_ASSERT_EQUAL(node_names, 3);
    xmlNode *la = find(alloc->children, ACC_NS_CO, "LinkAllocation");
    CU_ASSERT(content_is(find(la ? la->children : NULL, ACC_NS_CO, "Link"), "caesar~fzj-xd1"));
    CU_ASSERT(content_is(find(la ? la->children : NULL, ACC_NS_CO, "Bandwidth"), "5000"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

/* Foreign namespaces, other prefixes and a default namespace in the stored
 * offer come out declared and valid, with their content intact. */
static void test_agreement_keeps_foreign_content(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, OFFERS "good-other-prefixes.xml");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), "  other & prefixes  "));
    xmlNode *addr = find(root, "http://www.w3.org/2005/08/addressing", "Address");
    CU_ASSERT(content_is(addr, "urn:user:carol"));
    xmlNode *rp = find(root, "http://www.w3.org/2005/08/addressing", "ReferenceParameters");
    CU_ASSERT(prop_is(rp, "http://www.w3.org/2005/08/addressing", "IsReferenceParameter", "true"));
    CU_ASSERT(content_is(find(root, "urn:example:co", "co"), "not ours"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "Argument"), "--label=<a&b>"));
    CU_ASSERT(
        content_is(find(root, ACC_NS_WSAG, "ServiceLevelObjective"), "starts within the window"));
    /* The offer's own AgreementId does not survive; ours does. */
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "AgreementId", "abcdefghijklmnop"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

/* Without a stored offer; special characters survive in names and reasons,
 * and characters XML cannot carry are replaced rather than breaking it. */
static void test_agreement_special_characters(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, NULL);
    free(a.name);
    a.name = strdup(SPECIAL);
    free(a.comps[0].name);
    a.comps[0].name = strdup(SPECIAL);
    a.state = ACC_STATE_REJECTED;
    a.start = a.end = 0;
    a.fault_code = strdup("NoCommonSlot");
    a.reason = strdup(SPECIAL "\n\nsite caesar: bad\x01"
                              "byte\xff here\n");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), SPECIAL));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "AgreementInitiator"), "alice"));
    CU_ASSERT(prop_is(find(root, ACC_NS_CO, "ComponentAllocation"), ACC_NS_CO, "name", SPECIAL));
    xmlNode *r1 = find(root, ACC_NS_CO, "Reason");
    CU_ASSERT(content_is(r1, SPECIAL));
    xmlNode *r2 = r1 ? xmlNextElementSibling(r1) : NULL;
    CU_ASSERT(content_is(r2, "site caesar: bad\xef\xbf\xbd"
                             "byte\xef\xbf\xbd here"));
    CU_ASSERT_PTR_NULL(find(root, ACC_NS_CO, "Start"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "FaultCode"), "NoCommonSlot"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_agreement_bad_stored_offer(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    sample_agreement(&a, NULL);
    a.offer_xml = strdup("<not-closed>");
    a.offer_len = strlen(a.offer_xml);
    CU_ASSERT_EQUAL(acc_xml_agreement(&a, &b, &e), ACC_ERR_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "abcdefghijklmnop"));
    CU_ASSERT_EQUAL(b.len, 0);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_state(void)
{
    struct acc_agreement a;
    sample_agreement(&a, NULL);
    struct acc_term_view terms[] = {{"trace", ACC_TERM_READY}, {SPECIAL, ACC_TERM_PROCESSING}};
    struct acc_guarantee_view g[] = {{.name = "on-time", .state = "Fulfilled"},
                                     {.name = "wan", .state = "bogus"}};
    struct acc_state_view v = {&a, terms, 2, g, 2, NULL};
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_state(&v, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "AgreementStatus"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "agreementId", "abcdefghijklmnop"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "State"), "Observed"));
    xmlNode *st = find(root, ACC_NS_WSAG, "ServiceTermState");
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT(prop_is(st, ACC_NS_WSAG, "termName", "trace"));
    CU_ASSERT(content_is(find(st->children, ACC_NS_WSAG, "State"), "Ready"));
    xmlNode *st2 = xmlNextElementSibling(st);
    CU_ASSERT(prop_is(st2, ACC_NS_WSAG, "termName", SPECIAL));
    xmlNode *gt = find(root, ACC_NS_WSAG, "GuaranteeTermState");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gt);
    CU_ASSERT(content_is(find(gt->children, ACC_NS_WSAG, "State"), "Fulfilled"));
    gt = xmlNextElementSibling(gt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gt);
    CU_ASSERT(content_is(find(gt->children, ACC_NS_WSAG, "State"), "NotDetermined"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_state_view none = {&a, NULL, 0, NULL, 0, NULL};
    ACC_ASSERT_OK(acc_xml_state(&none, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);

    /* With a job that ended: co:Job closes the status, and stands alone. */
    struct acc_run r = {.style = ACC_LAUNCH_MPICH_G2,
                        .state = ACC_RUN_EXITED,
                        .started = 1900000000,
                        .ended = 1900000060,
                        .exit_status = 3,
                        .reason = "the job exited with status 3",
                        .command = "mpiexec.hydra -n 2 'a <b>'",
                        .output_total = 120};
    strcpy(r.agreement, "abcdefghijklmnop");
    struct acc_state_view with_job = {&a, terms, 2, NULL, 0, &r};
    ACC_ASSERT_OK(acc_xml_state(&with_job, &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *job = find(xmlDocGetRootElement(d), ACC_NS_CO, "Job");
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "State"), "exited"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "ExitStatus"), "3"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "Style"), "mpich-g2"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "Command"), "mpiexec.hydra -n 2 'a <b>'"));
    CU_ASSERT_PTR_NULL(find(job->children, ACC_NS_CO, "Signal"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    ACC_ASSERT_OK(acc_xml_run(&r, &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT(acc_xml_is(xmlDocGetRootElement(d), ACC_NS_CO, "Job"));
    CU_ASSERT(content_is(find(xmlDocGetRootElement(d)->children, ACC_NS_CO, "OutputBytes"), "120"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_list(void)
{
    struct acc_agreement v[2];
    sample_agreement(&v[0], NULL);
    sample_agreement(&v[1], NULL);
    free(v[1].name);
    v[1].name = NULL;
    v[1].start = v[1].end = 0;
    v[1].state = ACC_STATE_PENDING;
    free(v[1].comps[1].site);
    v[1].comps[1].site = strdup("caesar"); /* the same site twice: listed once */
    struct acc_agreement_list l = {v, 2};
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_list(&l, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "count", "2"));
    xmlNode *r1 = find(root, ACC_NS_CO, "AgreementRef");
    xmlNode *r2 = r1 ? xmlNextElementSibling(r1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
    CU_ASSERT(content_is(find(r1->children, ACC_NS_CO, "Start"), "2030-03-04T08:00:00Z"));
    CU_ASSERT_PTR_NULL(find(r2->children, ACC_NS_CO, "Start"));
    CU_ASSERT_PTR_NULL(find(r2->children, ACC_NS_CO, "Name"));
    int sites = 0;
    for (xmlNode *k = xmlFirstElementChild(r2); k; k = xmlNextElementSibling(k))
        sites += acc_xml_is(k, ACC_NS_CO, "Site");
    CU_ASSERT_EQUAL(sites, 1);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_agreement_list empty = {NULL, 0};
    ACC_ASSERT_OK(acc_xml_list(&empty, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
    acc_agreement_release(&v[0]);
    acc_agreement_release(&v[1]);
}

static void test_trace(void)
{
    struct acc_agreement a;
    sample_agreement(&a, NULL);
    struct acc_trace t;
    acc_trace_init(&t);
    struct acc_trace_event ev = {.round = 1,
                                 .kind = ACC_TRACE_PREVIEW,
                                 .target = "site caesar",
                                 .adapter = "caesar",
                                 .amount = 16,
                                 .t_from = 1898841000,
                                 .t_until = 1898841000 + 86400,
                                 .t_result = 1898841600,
                                 .status = ACC_OK,
                                 .elapsed_us = 1234,
                                 .detail = "3 frames <ok> & \"fine\""};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev));
    struct acc_trace_event ev2 = {.round = 1, .kind = ACC_TRACE_ROLLBACK, .status = ACC_ERR_BUSY};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev2));
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_trace(&a, &t, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "rounds", "2"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "strategy", "intersect"));
    xmlNode *e1 = find(root, ACC_NS_CO, "Event");
    xmlNode *e2 = e1 ? xmlNextElementSibling(e1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
    CU_ASSERT(prop_is(e1, ACC_NS_CO, "kind", acc_trace_kind_name(ACC_TRACE_PREVIEW)));
    CU_ASSERT(prop_is(e1, ACC_NS_CO, "status", "Ok"));
    CU_ASSERT(content_is(find(e1->children, ACC_NS_CO, "Result"), "2030-03-04T08:00:00Z"));
    CU_ASSERT(content_is(find(e1->children, ACC_NS_CO, "Detail"), "3 frames <ok> & \"fine\""));
    CU_ASSERT(prop_is(e2, ACC_NS_CO, "status", "ResourceBusy"));
    CU_ASSERT_PTR_NULL(find(e2->children, ACC_NS_CO, "Amount"));
    CU_ASSERT_PTR_NULL(find(e2->children, ACC_NS_CO, "From"));
    CU_ASSERT_PTR_NOT_NULL(find(e2->children, ACC_NS_CO, "ElapsedMicros"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_trace(&a, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
    acc_trace_release(&t);
    acc_agreement_release(&a);
}

static const struct acc_site_info sites[] = {
    {"fzj-xd1", "sim-batch", 64, true, "ok", 10, 0, 0, NULL},
    {"caesar", "sim-batch", 128, true, "ok", 12, 1, 0, NULL},
    {"fh-brs", "slurm", 32, false, "scontrol: <timeout> & retry", 3, 3, 1500,
     "https://10.79.3.11:8443"},
};
static const struct acc_site_info networks[] = {
    {"viola", "sim-network", 0, true, NULL, 5, 0, 0, NULL}};
static const struct acc_link_info links[] = {
    {"caesar~fzj-xd1", "caesar", "fzj-xd1", "viola", "sim-network", 10000, true},
    {"caesar~fh-brs", "caesar", "fh-brs", "viola", "sim-network", 10000, true},
    {"fh-brs~fzj-xd1", "fh-brs", "fzj-xd1", "viola", "sim-network", 8000, false},
};
static const struct acc_sites_view testbed = {sites, 3, networks, 1, links, 3};

static void test_sites(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    ACC_ASSERT_OK(acc_xml_sites(&testbed, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Sites"));
    int n_sites = 0, n_links = 0, n_networks = 0;
    for (xmlNode *k = xmlFirstElementChild(root); k; k = xmlNextElementSibling(k)) {
        n_sites += acc_xml_is(k, ACC_NS_CO, "Site");
        n_links += acc_xml_is(k, ACC_NS_CO, "Link");
        n_networks += acc_xml_is(k, ACC_NS_CO, "Network");
    }
    CU_ASSERT_EQUAL(n_sites, 3);
    CU_ASSERT_EQUAL(n_networks, 1);
    CU_ASSERT_EQUAL(n_links, 3);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_sites(&testbed, "fh-brs", &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Site"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "up", "false"));
    CU_ASSERT(content_is(find(root->children, ACC_NS_CO, "Health"), "scontrol: <timeout> & retry"));
    /* a remote site: its health call's round trip and its daemon's URL */
    CU_ASSERT(prop_is(root, ACC_NS_CO, "rttUs", "1500"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "endpoint", "https://10.79.3.11:8443"));
    n_links = 0;
    for (xmlNode *k = xmlFirstElementChild(root); k; k = xmlNextElementSibling(k))
        n_links += acc_xml_is(k, ACC_NS_CO, "Link");
    CU_ASSERT_EQUAL(n_links, 2);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    CU_ASSERT_EQUAL(acc_xml_sites(&testbed, "nowhere", &b, &e), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "nowhere"));
    CU_ASSERT_EQUAL(b.len, 0);

    struct acc_sites_view empty = {0};
    ACC_ASSERT_OK(acc_xml_sites(&empty, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
}

static void test_preview(void)
{
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_frames_push(&f, 1898841600, 1898841600 + 3600));
    ACC_ASSERT_OK(acc_frames_push(&f, 1898841600 + 7200, 1898841600 + 86400));
    f.truncated = true;
    struct acc_preview_view v = {"caesar", 16, 5400, 1898841600, 1898841600 + 86400, &f};
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_preview(&v, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "duration", "PT1H30M"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "truncated", "true"));
    xmlNode *fr = find(root, ACC_NS_CO, "Frame");
    CU_ASSERT(prop_is(fr, ACC_NS_CO, "end", "2030-03-04T09:00:00Z"));
    CU_ASSERT(fr && xmlNextElementSibling(fr) && !xmlNextElementSibling(xmlNextElementSibling(fr)));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_preview_view none = {"caesar", 16, 5400, 1898841600, 1898841600 + 86400, NULL};
    ACC_ASSERT_OK(acc_xml_preview(&none, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:truncated=\"false\""));
    acc_buf_release(&b);
    acc_frames_release(&f);
}

static void test_templates(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    ACC_ASSERT_OK(acc_xml_templates(&testbed, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:name=\"meta-job\""));
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_template("meta-job", &testbed, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_WSAG, "Template"));
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "TemplateId", "meta-job"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "TemplateName"), "meta-job"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Schedule"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Component"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Link"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Launch"));
    /* The site item lists the configured sites; the nodes item the largest. */
    int enums = 0;
    bool max128 = false;
    for (xmlNode *it = find(root, ACC_NS_WSAG, "Item"); it; it = xmlNextElementSibling(it)) {
        if (!acc_xml_is(it, ACC_NS_WSAG, "Item"))
            continue;
        xmlChar *name = xmlGetNsProp(it, BAD_CAST "Name", BAD_CAST ACC_NS_WSAG);
        xmlNode *facet = find(it->children, "http://www.w3.org/2001/XMLSchema", "restriction");
        for (xmlNode *f = facet ? xmlFirstElementChild(facet) : NULL; f;
             f = xmlNextElementSibling(f)) {
            xmlChar *value = xmlGetNoNsProp(f, BAD_CAST "value");
            if (name && strcmp((const char *)name, "Site") == 0)
                enums++;
            if (name && strcmp((const char *)name, "Nodes") == 0 && value)
                max128 = strcmp((const char *)value, "128") == 0;
            xmlFree(value);
        }
        xmlFree(name);
    }
    CU_ASSERT_EQUAL(enums, 3);
    CU_ASSERT(max128);
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_WSAG, "Constraint"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_sites_view empty = {0};
    ACC_ASSERT_OK(acc_xml_template("meta-job", &empty, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);

    CU_ASSERT_EQUAL(acc_xml_template("other", &testbed, &b, &e), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "other"));
    CU_ASSERT_EQUAL(b.len, 0);
}

static void test_fault(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_xml_fault(ACC_ERR_NO_SLOT,
                  "no common slot before 2030-03-06T18:00:00Z\nsite caesar: "
                  "busy <all week> & more\n\nlink caesar~fzj-xd1: full",
                  "abcdefghijklmnop", &b);
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Fault"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "code", "NoCommonSlot"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "status", "409"));
    CU_ASSERT(
        content_is(find(root, ACC_NS_CO, "Message"), "no common slot before 2030-03-06T18:00:00Z"));
    xmlNode *d1 = find(root, ACC_NS_CO, "Detail");
    CU_ASSERT(content_is(d1, "site caesar: busy <all week> & more"));
    CU_ASSERT(content_is(d1 ? xmlNextElementSibling(d1) : NULL, "link caesar~fzj-xd1: full"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "AgreementId"), "abcdefghijklmnop"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    /* A schema error message, as the service passes it on. */
    struct acc_offer o;
    struct acc_error e = {0};
    CU_ASSERT_EQUAL(parse_case("schema-nodes-zero.xml", &o, &e), ACC_ERR_SCHEMA);
    acc_xml_fault(e.code, e.msg, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NULL(strstr(b.data, "AgreementId"));
    acc_buf_release(&b);

    /* An empty first line: the code's text is the message. */
    acc_xml_fault(ACC_ERR_ADAPTER, "\nsite caesar: refused", NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<co:Detail>site caesar: refused</co:Detail>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<co:Message>an adapter failed</co:Message>"));
    acc_buf_release(&b);

    acc_xml_fault(ACC_ERR_INTERNAL, NULL, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, acc_err_text(ACC_ERR_INTERNAL)));
    acc_buf_release(&b);
}

/* A renderer appends: two documents in one buffer stay separate. */
static void test_renderers_append(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "prefix|");
    ACC_ASSERT_OK(acc_xml_templates(&testbed, &b, NULL));
    CU_ASSERT_EQUAL(strncmp(b.data, "prefix|<?xml", 12), 0);
    acc_buf_release(&b);
}

/* ---------------------------------------------------------------- threads */

#define THREADS 8

struct worker {
    char *good, *bad, *invalid;
    size_t good_len, bad_len, invalid_len;
    unsigned runs, failures;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    int64_t until = acc_mono_us() + 1500000;
    while (w->runs < 5 || acc_mono_us() < until) {
        struct acc_offer o;
        struct acc_error e = {0};
        switch (w->runs % 3) {
        case 0:
            if (acc_xml_parse_offer(w->good, w->good_len, NULL, &o, &e) != ACC_OK ||
                o.n_components != 3 || o.n_links != 2)
                w->failures++;
            acc_offer_release(&o);
            break;
        case 1:
            /* Only its own message: never another thread's. */
            if (acc_xml_parse_offer(w->bad, w->bad_len, NULL, &o, &e) != ACC_ERR_SCHEMA ||
                strcmp(e.msg, "line 15: Element 'co:Nodes': '0' is not a valid value of the "
                              "atomic type 'xs:positiveInteger'.") != 0)
                w->failures++;
            break;
        default:
            if (acc_xml_parse_offer(w->invalid, w->invalid_len, NULL, &o, &e) != ACC_ERR_INVALID ||
                !strstr(e.msg, "no component named 'ghost'") || count_lines(e.msg) != 1)
                w->failures++;
            break;
        }
        w->runs++;
    }
    return NULL;
}

static void test_threads(void)
{
    struct worker w[THREADS];
    pthread_t th[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) {
        w[i].good = acc_test_slurp(ACC_TEST_EXAMPLES "/offer.xml", &w[i].good_len);
        w[i].bad = slurp_case("schema-nodes-zero.xml", &w[i].bad_len);
        w[i].invalid = slurp_case("invalid-link-unknown.xml", &w[i].invalid_len);
        CU_ASSERT_FATAL(w[i].good && w[i].bad && w[i].invalid);
    }
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    unsigned runs = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(w[i].failures, 0);
        runs += w[i].runs;
        free(w[i].good);
        free(w[i].bad);
        free(w[i].invalid);
    }
    CU_ASSERT(runs >= 5 * THREADS);
}

static const struct acc_test_case tests[] = {
    {"example_offer", test_example_offer},
    {"flexible_offer", test_flexible_offer},
    {"window_offer", test_window_offer},
    {"minimal_offer", test_minimal_offer},
    {"other_prefixes", test_other_prefixes},
    {"bad_offers", test_bad_offers},
    {"billion_laughs_is_fast", test_billion_laughs_is_fast},
    {"external_entity_never_read", test_external_entity_never_read},
    {"size_limits", test_size_limits},
    {"attribute_bomb", test_attribute_bomb},
    {"attribute_bomb_disguised", test_attribute_bomb_disguised},
    {"nul_byte", test_nul_byte},
    {"executable_forms", test_executable_forms},
    {"many_schema_errors", test_many_schema_errors},
    {"nothing_on_stderr", test_nothing_on_stderr},
    {"agreement_from_offer", test_agreement_from_offer},
    {"agreement_keeps_foreign_content", test_agreement_keeps_foreign_content},
    {"agreement_special_characters", test_agreement_special_characters},
    {"agreement_bad_stored_offer", test_agreement_bad_stored_offer},
    {"state", test_state},
    {"list", test_list},
    {"trace", test_trace},
    {"sites", test_sites},
    {"preview", test_preview},
    {"templates", test_templates},
    {"fault", test_fault},
    {"renderers_append", test_renderers_append},
    {"threads", test_threads},
    {NULL, NULL},
};

/* test_xml_wsag4j.c: WSAG4J's vocabulary and foreign terms. */
extern const struct acc_test_case acc_xml_wsag4j_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"xml", setup, teardown, tests},
    {"xml_wsag4j", setup, teardown, acc_xml_wsag4j_tests},
    {NULL, NULL, NULL, NULL},
};
