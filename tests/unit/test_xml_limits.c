/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml_limits.c - hostile offers and the parser's limits: bad offers with
 * the line and reason of each refusal, entity expansion, external entities,
 * sizes, attribute bombs, NUL bytes, and libxml2 kept off stderr.  Part of
 * test_xml (its suite "xml_limits"). */
#include <fcntl.h>
#include <limits.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "xml.h"
#include "xml_check.h"
#include "xml_internal.h"

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
    /* characters that are not printable though libxml2 takes them: a C1
     * control (NEL, CSI), a line separator, a bidirectional override */
    {"invalid-initiator-nel.xml",
     ACC_ERR_INVALID,
     {"wsag:AgreementInitiator", "U+0085", "control character"}},
    {"invalid-initiator-c1.xml", ACC_ERR_INVALID, {"wsag:AgreementInitiator", "U+009B"}},
    {"invalid-initiator-line-separator.xml",
     ACC_ERR_INVALID,
     {"wsag:AgreementInitiator", "U+2028", "separator"}},
    {"invalid-initiator-bidi.xml",
     ACC_ERR_INVALID,
     {"wsag:AgreementInitiator", "U+202E", "bidirectional"}},
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
    /* what a browser that opens the agreement would run, and a decoy signature */
    {"active-xhtml-script.xml", ACC_ERR_SCHEMA, {"line 8:", "h:script", "XHTML namespace"}},
    {"active-svg-script.xml", ACC_ERR_SCHEMA, {"line 8:", "element svg", "SVG namespace"}},
    {"active-img-onerror.xml", ACC_ERR_SCHEMA, {"line 8:", "element img", "XHTML namespace"}},
    {"active-event-attribute.xml", ACC_ERR_SCHEMA, {"line 8:", "onLoad", "event handler"}},
    {"active-xlink.xml", ACC_ERR_SCHEMA, {"xl:href", "XLink namespace"}},
    {"active-signature.xml", ACC_ERR_SCHEMA, {"ds:Signature", "no XML signature"}},
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

/* Foreign vocabulary that is not active content stays welcome: elements
 * and attributes of another namespace, and attributes in none. */
static void test_foreign_note(void)
{
    struct acc_offer o;
    struct acc_error e = {0};
    CU_ASSERT_EQUAL(parse_case("good-foreign-note.xml", &o, &e), ACC_OK);
    if (e.msg[0])
        fprintf(stderr, "\ngood-foreign-note.xml: %s\n", e.msg);
    acc_offer_release(&o);
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

/* Printable is not ASCII only: letters of any script, emoji with their
 * joiners; 128 characters, not bytes. */
static void test_initiator_printable(void)
{
    static const char *const names[] = {"J\xc3\xbcrgen M\xc3\xbcller",
                                        "\xe5\xb1\xb1\xe7\x94\xb0 \xe5\xa4\xaa\xe9\x83\x8e",
                                        "dev \xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb"};
    size_t len;
    char *tmpl = slurp_case("invalid-initiator-empty.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmpl);
    char *at = strstr(tmpl, "   </wsag:AgreementInitiator>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    for (size_t i = 0; i < sizeof names / sizeof names[0] + 1; i++) {
        /* the last: 128 two-byte characters */
        char name[300] = "";
        for (size_t k = 0; i == 3 && k < 128; k++)
            strcat(name, "\xc3\xa9");
        const char *want = i < 3 ? names[i] : name;
        struct acc_buf b = ACC_BUF_INIT;
        acc_buf_printf(&b, "%.*s%s%s", (int)(at - tmpl), tmpl, want, at + 3);
        struct acc_offer o;
        struct acc_error e = {0};
        CU_ASSERT_EQUAL(acc_xml_parse_offer(b.data, b.len, NULL, &o, &e), ACC_OK);
        CU_ASSERT_STRING_EQUAL(o.initiator ? o.initiator : "", want);
        acc_offer_release(&o);
        acc_buf_release(&b);
    }
    free(tmpl);
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

const struct acc_test_case acc_xml_limits_tests[] = {
    {"bad_offers", test_bad_offers},
    {"foreign_note", test_foreign_note},
    {"billion_laughs_is_fast", test_billion_laughs_is_fast},
    {"external_entity_never_read", test_external_entity_never_read},
    {"size_limits", test_size_limits},
    {"attribute_bomb", test_attribute_bomb},
    {"attribute_bomb_disguised", test_attribute_bomb_disguised},
    {"nul_byte", test_nul_byte},
    {"executable_forms", test_executable_forms},
    {"initiator_printable", test_initiator_printable},
    {"many_schema_errors", test_many_schema_errors},
    {"nothing_on_stderr", test_nothing_on_stderr},
    {NULL, NULL},
};
