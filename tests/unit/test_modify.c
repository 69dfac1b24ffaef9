/* SPDX-License-Identifier: Apache-2.0 */
/* test_modify.c - changing a committed agreement through the service: each
 * kind of change (end, start, bandwidth, nodes) makes a new version with new
 * reservations at the simulators and the old ones cancelled; a failing
 * change leaves the agreement exactly as it was; a change after a
 * terminate is refused; versions and their traces are kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"
#include "service.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

static const char ini[] = "[negotiation]\nadapter_timeout = PT30S\nworkers = 1\n"
                          "[launch]\nenabled = no\n"
                          "[site alpha]\nadapter = sim-batch\nnodes = 8\n"
                          "[site beta]\nadapter = sim-batch\nnodes = 8\n"
                          "[network sim]\nadapter = sim-network\n"
                          "[link alpha-beta]\nsites = alpha beta\ncapacity = 200\nnetwork = sim\n";

/* Components a (alpha, 2 nodes) and b (beta, 2 nodes), link ab of 100 Mbit/s
 * (shared with test_modify_http). */
static char *doc;

static struct acc_config cfg;
static struct acc_service *svc;

static int open_svc(const char *name)
{
    struct acc_error err;
    char db[512];
    if (!acc_test_db(name, db, sizeof db))
        return -1;
    if (acc_config_load_string(ini, name, &cfg, &err) || acc_config_set_db(&cfg, db, &err) ||
        acc_service_open(&cfg, &svc, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void close_svc(void)
{
    acc_service_close(svc);
    acc_config_release(&cfg);
}

static struct acc_modification parse(const char *body)
{
    struct acc_modification m;
    struct acc_error err;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    acc_err rc = acc_xml_parse_modification(body, strlen(body), &lim, &m, &err);
    if (rc)
        fprintf(stderr, "parse: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, ACC_OK);
    return m;
}

/* Journal states of an agreement's reservations: how many committed. */
static size_t committed(const char *id)
{
    struct acc_agreement a;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(acc_service_get(svc, id, false, &a, &err), ACC_OK);
    size_t n = 0;
    for (size_t i = 0; i < a.n_comps; i++)
        n += a.comps[i].reservation != NULL;
    acc_agreement_release(&a);
    return n;
}

/* At the simulators: the new reservations exist, the old are gone. */
static void check_simulators(const struct acc_agreement v2)
{
    struct acc_error err;
    struct acc_frames f;
    acc_frames_init(&f);
    acc_time from, until;
    /* alpha has 8 nodes; 3 are taken over the new hours, not 2+3 */
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 5, 7200, v2.start, v2.end, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start == v2.start);
    acc_frames_reset(&f);
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 6, 7200, v2.start, v2.end, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n == 0 || f.v[0].start >= v2.end);
    acc_frames_release(&f);
}

/* Version 1 is kept as it was, with its own trace. */
static void check_version1_kept(const char *id, const struct acc_agreement v1,
                                const struct acc_agreement v2)
{
    struct acc_error err;
    struct acc_agreement old;
    CU_ASSERT_EQUAL_FATAL(acc_service_get_version(svc, id, 1, false, &old, &err), ACC_OK);
    CU_ASSERT_EQUAL(old.version, 1);
    CU_ASSERT_EQUAL(old.versions, 2);
    CU_ASSERT_EQUAL(old.end, v1.end);
    CU_ASSERT_EQUAL(old.comps[0].nodes, 2);
    CU_ASSERT_STRING_EQUAL(old.comps[0].reservation, v1.comps[0].reservation);
    acc_agreement_release(&old);
    struct acc_trace tr1, tr2;
    CU_ASSERT_EQUAL(acc_service_trace_version(svc, id, 1, &old, &tr1, &err), ACC_OK);
    acc_agreement_release(&old);
    CU_ASSERT_EQUAL(acc_service_trace_version(svc, id, 0, &old, &tr2, &err), ACC_OK);
    acc_agreement_release(&old);
    CU_ASSERT_TRUE(tr1.n > 0 && tr2.n > 0);
    /* version 2's negotiation asked until its new end; version 1's never did */
    size_t in1 = 0, in2 = 0;
    for (size_t i = 0; i < tr1.n; i++)
        in1 += tr1.v[i].t_until == v2.end;
    for (size_t i = 0; i < tr2.n; i++)
        in2 += tr2.v[i].t_until == v2.end;
    CU_ASSERT_EQUAL(in1, 0);
    CU_ASSERT_TRUE(in2 > 0);
    acc_trace_release(&tr1);
    acc_trace_release(&tr2);
    CU_ASSERT_EQUAL(acc_service_get_version(svc, id, 3, false, &old, &err), ACC_ERR_NOT_FOUND);
}

static void test_each_change(void)
{
    CU_ASSERT_EQUAL_FATAL(open_svc("modify-each"), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(svc_negotiate_doc(svc, doc, id, NULL, &err), ACC_OK);
    struct acc_agreement v1, v2;
    CU_ASSERT_EQUAL_FATAL(acc_service_get(svc, id, false, &v1, &err), ACC_OK);
    CU_ASSERT_EQUAL(v1.version, 1);

    /* End: one hour more. */
    char body[512], t[40];
    acc_time_format(v1.end + 3600, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "<co:Bandwidth link=\"ab\">90</co:Bandwidth><co:Nodes component=\"a\">3</co:Nodes>"
             "</co:Modification>",
             t);
    struct acc_modification m = parse(body);
    acc_err rc = acc_service_modify(svc, id, &m, &v2, &err);
    if (rc)
        fprintf(stderr, "modify: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    CU_ASSERT_EQUAL(v2.version, 2);
    CU_ASSERT_EQUAL(v2.start, v1.start);
    CU_ASSERT_EQUAL(v2.end, v1.end + 3600);
    CU_ASSERT_EQUAL(v2.comps[0].nodes, 3);
    CU_ASSERT_EQUAL(v2.links[0].bandwidth, 90);
    CU_ASSERT_STRING_NOT_EQUAL(v2.comps[0].reservation, v1.comps[0].reservation);
    CU_ASSERT_PTR_NOT_NULL(v2.change);

    check_simulators(v2);

    check_version1_kept(id, v1, v2);

    /* Start moved (the whole reservation, its length kept). */
    acc_time_format(v2.start + 1800, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Start>%s</co:Start>"
             "</co:Modification>",
             t);
    m = parse(body);
    struct acc_agreement v3;
    CU_ASSERT_EQUAL_FATAL(acc_service_modify(svc, id, &m, &v3, &err), ACC_OK);
    CU_ASSERT_EQUAL(v3.version, 3);
    CU_ASSERT_EQUAL(v3.start, v2.start + 1800);
    CU_ASSERT_EQUAL(v3.end, v2.end + 1800);
    CU_ASSERT_EQUAL(committed(id), 2);
    acc_agreement_release(&v3);
    acc_agreement_release(&v2);
    acc_agreement_release(&v1);
    close_svc();
}

static void test_failing_change_leaves_it(void)
{
    CU_ASSERT_EQUAL_FATAL(open_svc("modify-fail"), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(svc_negotiate_doc(svc, doc, id, NULL, &err), ACC_OK);
    struct acc_agreement before, after, out;
    CU_ASSERT_EQUAL_FATAL(acc_service_get(svc, id, false, &before, &err), ACC_OK);
    /* Over capacity, unknown component, a link that does not exist. */
    const char *bad[] = {
        "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"a\">9"
        "</co:Nodes></co:Modification>",
        "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"zz\">1"
        "</co:Nodes></co:Modification>",
        "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Bandwidth link=\"ab\">500"
        "</co:Bandwidth></co:Modification>",
    };
    acc_err want[] = {ACC_ERR_CAPACITY, ACC_ERR_NOT_FOUND, ACC_ERR_CAPACITY};
    for (size_t i = 0; i < 3; i++) {
        struct acc_modification m = parse(bad[i]);
        CU_ASSERT_EQUAL(acc_service_modify(svc, id, &m, &out, &err), want[i]);
    }
    /* No slot: another agreement holds 2 of beta's 8 nodes, so 7 do not
     * fit even with this agreement's own 2 counted as free. */
    char other[ACC_ID_LEN + 1];
    CU_ASSERT_EQUAL_FATAL(svc_negotiate_doc(svc, doc, other, NULL, &err), ACC_OK);
    char t[40], body[512];
    acc_time_format(before.end + 7200, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "<co:Nodes component=\"b\">7</co:Nodes></co:Modification>",
             t);
    struct acc_modification m = parse(body);
    acc_err rc = acc_service_modify(svc, id, &m, &out, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_NO_SLOT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "as it was"));
    CU_ASSERT_EQUAL_FATAL(acc_service_get(svc, id, false, &after, &err), ACC_OK);
    CU_ASSERT_EQUAL(after.version, 1);
    CU_ASSERT_EQUAL(after.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL(after.end, before.end);
    CU_ASSERT_EQUAL(after.comps[1].nodes, before.comps[1].nodes);
    CU_ASSERT_STRING_EQUAL(after.comps[0].reservation, before.comps[0].reservation);
    CU_ASSERT_STRING_EQUAL(after.links[0].reservation, before.links[0].reservation);
    CU_ASSERT_EQUAL(svc_terminate_wait(svc, other, &err), ACC_OK);
    /* beta: still exactly 2 nodes taken (the refused change booked nothing) */
    struct acc_frames f;
    acc_frames_init(&f);
    acc_time from, until;
    CU_ASSERT_EQUAL(acc_service_preview(svc, "beta", 6, 3600, before.start, before.end, &f, &from,
                                        &until, &err),
                    ACC_OK);
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start == before.start);
    acc_frames_reset(&f);
    CU_ASSERT_EQUAL(acc_service_preview(svc, "beta", 7, 3600, before.start, before.end, &f, &from,
                                        &until, &err),
                    ACC_OK);
    CU_ASSERT_TRUE(f.n == 0);
    acc_frames_release(&f);

    /* Terminated: a change is refused with a clear reason. */
    CU_ASSERT_EQUAL(svc_terminate_wait(svc, id, &err), ACC_OK);
    acc_time_format(before.end + 60, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "</co:Modification>",
             t);
    m = parse(body);
    CU_ASSERT_EQUAL(acc_service_modify(svc, id, &m, &out, &err), ACC_ERR_STATE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Terminated"));
    acc_agreement_release(&before);
    acc_agreement_release(&after);
    close_svc();
}

/* Changes that overlap the old booking on the same resource count it as
 * free (ACC_CAP_REPLACE at the simulators): 2 nodes grow to 7 on an 8-node
 * site, then the end of those 7 moves (7 + 7 > 8 would be refused if the
 * old booking counted against the new one), and 100 Mbit/s of a 200 Mbit/s
 * link grow to 150. */
static void test_overlapping_change(void)
{
    CU_ASSERT_EQUAL_FATAL(open_svc("modify-overlap"), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(svc_negotiate_doc(svc, doc, id, NULL, &err), ACC_OK);
    struct acc_agreement v1, v2, v3;
    CU_ASSERT_EQUAL_FATAL(acc_service_get(svc, id, false, &v1, &err), ACC_OK);
    char t[40], body[512];
    acc_time_format(v1.end + 1800, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "<co:Nodes component=\"a\">7</co:Nodes>"
             "<co:Bandwidth link=\"ab\">150</co:Bandwidth></co:Modification>",
             t);
    struct acc_modification m = parse(body);
    acc_err rc = acc_service_modify(svc, id, &m, &v2, &err);
    if (rc)
        fprintf(stderr, "modify: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    CU_ASSERT_EQUAL(v2.start, v1.start); /* not pushed behind the old booking */
    CU_ASSERT_EQUAL(v2.comps[0].nodes, 7);
    CU_ASSERT_EQUAL(v2.links[0].bandwidth, 150);
    acc_time_format(v2.end + 3600, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "</co:Modification>",
             t);
    m = parse(body);
    rc = acc_service_modify(svc, id, &m, &v3, &err);
    if (rc)
        fprintf(stderr, "modify: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    CU_ASSERT_EQUAL(v3.version, 3);
    CU_ASSERT_EQUAL(v3.start, v1.start);
    CU_ASSERT_EQUAL(v3.end, v2.end + 3600);
    /* alpha: exactly 7 taken over the new window (the old 2 and 7 are
     * gone), nothing after it. */
    struct acc_frames f;
    acc_frames_init(&f);
    acc_time from, until;
    int64_t len = v3.end - v3.start;
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 1, len, v3.start, v3.end, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start == v3.start);
    acc_frames_reset(&f);
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 2, 60, v3.start, v3.end, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n == 0 || f.v[0].start >= v3.end);
    acc_frames_reset(&f);
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 8, 3600, v3.end, v3.end + 3600, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start == v3.end);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(svc_terminate_wait(svc, id, &err), ACC_OK);
    acc_frames_init(&f);
    CU_ASSERT_EQUAL(
        acc_service_preview(svc, "alpha", 8, len, v3.start, v3.end, &f, &from, &until, &err),
        ACC_OK);
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start == v3.start); /* nothing left behind */
    acc_frames_release(&f);
    acc_agreement_release(&v3);
    acc_agreement_release(&v2);
    acc_agreement_release(&v1);
    close_svc();
}

static int setup(void)
{
    struct acc_error err;
    doc = acc_test_slurp(ACC_SOURCE_DIR "/tests/data/modify/offer-ab.xml", NULL);
    return !doc || acc_xml_init(&err) ? 1 : 0;
}

static int teardown(void)
{
    acc_xml_cleanup();
    free(doc);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"each kind of change", test_each_change},
    {"a failing change leaves it as it was", test_failing_change_leaves_it},
    {"a change overlapping the old booking counts it as free", test_overlapping_change},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"modify", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
