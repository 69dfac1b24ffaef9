/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml.c - offers in (the good ones), parsing from many threads, and
 * the suite table of the program: test_xml_limits.c (hostile offers and the
 * parser's limits), test_xml_agreement.c (an agreement and its documents),
 * test_xml_views.c (the service's other documents), test_xml_wsag4j.c
 * (WSAG4J's vocabulary); every document is validated against the compiled
 * schemas. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "xml.h"
#include "xml_check.h"

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
    {"threads", test_threads},
    {NULL, NULL},
};

/* The other parts of the program, each its own suite. */
extern const struct acc_test_case acc_xml_limits_tests[];
extern const struct acc_test_case acc_xml_agreement_tests[];
extern const struct acc_test_case acc_xml_views_tests[];
extern const struct acc_test_case acc_xml_wsag4j_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"xml", setup, teardown, tests},
    {"xml_limits", setup, teardown, acc_xml_limits_tests},
    {"xml_agreement", setup, teardown, acc_xml_agreement_tests},
    {"xml_views", setup, teardown, acc_xml_views_tests},
    {"xml_wsag4j", setup, teardown, acc_xml_wsag4j_tests},
    {NULL, NULL, NULL, NULL},
};
