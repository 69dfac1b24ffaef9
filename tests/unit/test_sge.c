/* SPDX-License-Identifier: Apache-2.0 */
/* test_sge.c - the sge adapter's readers of Grid Engine's -xml outputs, on
 * outputs captured from the real testbed (tests/data/sge, tests/sge) and on
 * malformed ones, each failure's message checked; and its settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "sge_internal.h"
#include "testutil.h"

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sge/%s", ACC_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(SGE_XML_MAX + 1);
    size_t n = buf ? fread(buf, 1, SGE_XML_MAX, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static acc_time at(const char *s)
{
    acc_time t = 0;
    CU_ASSERT_TRUE(sge_parse_time(s, &t));
    return t;
}

static void test_times(void)
{
    CU_ASSERT_EQUAL(at("1970-01-01T00:01:00"), 60);
    CU_ASSERT_EQUAL(at("2026-11-27T16:02:00"), 1795795320);
    acc_time t;
    const char *bad[] = {"2026-11-27 16:02:00",
                         "2026-11-27T16:02",
                         "2026-13-01T00:00:00",
                         "2026-11-27T16:02:00Z",
                         "",
                         "1969-12-31T23:59:59",
                         "20x6-11-27T16:02:00"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CU_ASSERT_FALSE(sge_parse_time(bad[i], &t));
    CU_ASSERT_FALSE(sge_parse_time(NULL, &t));
}

static void test_qrstat_summary(void)
{
    size_t len = 0;
    char *xml = slurp("qrstat.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    struct sge_ars ars;
    struct acc_error err;
    ACC_ASSERT_OK(sge_read_ars(xml, len, &ars, &err));
    CU_ASSERT_EQUAL_FATAL(ars.n, 2);
    CU_ASSERT_EQUAL(ars.v[0].id, 1);
    CU_ASSERT_STRING_EQUAL(ars.v[0].name, "acc-test1");
    CU_ASSERT_STRING_EQUAL(ars.v[0].state, "w");
    CU_ASSERT_EQUAL(ars.v[0].start, at("2026-11-27T16:02:00"));
    CU_ASSERT_EQUAL(ars.v[0].end, at("2026-11-27T16:12:00"));
    CU_ASSERT_EQUAL(ars.v[0].n_grants, 0); /* the summary has none */
    CU_ASSERT_EQUAL(ars.v[1].id, 2);
    CU_ASSERT_STRING_EQUAL(ars.v[1].name, "acc-test2");
    sge_ars_release(&ars);
    free(xml);
}

static void test_qrstat_ar(void)
{
    size_t len = 0;
    char *xml = slurp("qrstat-ar.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    struct sge_ars ars;
    struct acc_error err;
    ACC_ASSERT_OK(sge_read_ars(xml, len, &ars, &err));
    CU_ASSERT_EQUAL_FATAL(ars.n, 2);
    CU_ASSERT_EQUAL_FATAL(ars.v[0].n_grants, 3);
    CU_ASSERT_STRING_EQUAL(ars.v[0].grants[0].host, "sgea-n1");
    CU_ASSERT_EQUAL(ars.v[0].grants[0].slots, 2);
    CU_ASSERT_STRING_EQUAL(ars.v[0].grants[2].host, "sgea-n3");
    CU_ASSERT_EQUAL(ars.v[0].grants[2].slots, 1);
    CU_ASSERT_EQUAL_FATAL(ars.v[1].n_grants, 1);
    CU_ASSERT_EQUAL(ars.v[1].end - ars.v[1].start, 3600);
    sge_ars_release(&ars);
    free(xml);
    /* An unknown id is left out, not an error. */
    const char *unknown = "<?xml version='1.0'?><qrstat><ar_unknown><id>99</id></ar_unknown>"
                          "</qrstat>";
    ACC_ASSERT_OK(sge_read_ars(unknown, strlen(unknown), &ars, &err));
    CU_ASSERT_EQUAL(ars.n, 0);
    sge_ars_release(&ars);
}

/* Each malformed output fails with its code and a message naming why. */
static void expect_ars(const char *xml, acc_err code, const char *words)
{
    struct sge_ars ars = {(void *)1, 7};
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(sge_read_ars(xml, strlen(xml), &ars, &err), code);
    CU_ASSERT_PTR_NULL(ars.v);
    CU_ASSERT_EQUAL(ars.n, 0);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\n  '%s' lacks '%s'\n", err.msg, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
}

#define AR(body) "<qrstat><ar_summary>" body "</ar_summary></qrstat>"
#define TIMES    "<start_time>2026-11-27T16:02:00</start_time><end_time>2026-11-27T17:02:00</end_time>"

static void test_qrstat_malformed(void)
{
    expect_ars("", ACC_ERR_MALFORMED, "");
    expect_ars("Following advance reservations do not exist", ACC_ERR_MALFORMED, "not XML: line 1");
    expect_ars("<qrstat><ar_summary>", ACC_ERR_MALFORMED, "not XML");
    expect_ars("<job_info/>", ACC_ERR_MALFORMED,
               "the document element is <job_info>, not <qrstat>");
    expect_ars("<!DOCTYPE qrstat [<!ENTITY x 'y'>]><qrstat/>", ACC_ERR_DTD, "");
    expect_ars(AR("<name>a</name>" TIMES), ACC_ERR_MALFORMED, "ar_summary with a bad id '(none)'");
    expect_ars(AR("<id>-3</id>" TIMES), ACC_ERR_MALFORMED, "ar_summary with a bad id '-3'");
    expect_ars(AR("<id>4</id><end_time>2026-11-27T17:02:00</end_time>"), ACC_ERR_MALFORMED,
               "advance reservation 4: bad start_time '(none)'");
    expect_ars(AR("<id>4</id><start_time>11/27/2026 16:02:00</start_time>"), ACC_ERR_MALFORMED,
               "advance reservation 4: bad start_time '11/27/2026 16:02:00'");
    expect_ars(AR("<id>4</id><start_time>2026-11-27T16:02:00</start_time>"
                  "<end_time>2026-11-27T15:02:00</end_time>"),
               ACC_ERR_MALFORMED, "advance reservation 4: bad end_time '2026-11-27T15:02:00'");
    expect_ars(AR("<id>4</id>" TIMES "<granted_slots_list><granted_slots queue_instance='all.q' "
                  "slots='2'/></granted_slots_list>"),
               ACC_ERR_MALFORMED,
               "advance reservation 4: granted_slots queue_instance 'all.q' names no host");
    expect_ars(AR("<id>4</id>" TIMES "<granted_slots_list><granted_slots "
                  "queue_instance='all.q@h1' slots='two'/></granted_slots_list>"),
               ACC_ERR_MALFORMED, "advance reservation 4: bad slots 'two' on all.q@h1");
    /* bounded: a larger output is refused before libxml2 sees it */
    size_t big = SGE_XML_MAX + 16;
    char *huge = malloc(big + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    memset(huge, ' ', big);
    memcpy(huge, "<qrstat>", 8);
    huge[big] = '\0';
    struct sge_ars ars;
    struct acc_error err;
    CU_ASSERT_EQUAL(sge_read_ars(huge, big, &ars, &err), ACC_ERR_TOO_LARGE);
    free(huge);
}

static void test_qstat_queues(void)
{
    size_t len = 0;
    char *xml = slurp("qstat-f-r.xml", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    struct avail a;
    avail_init(&a);
    struct acc_error err;
    acc_time now = at("2026-11-27T15:03:00"), t0 = at("2026-11-27T15:00:00");
    ACC_ASSERT_OK(sge_read_queues(xml, len, 2, now, &a, &err));
    CU_ASSERT_EQUAL(avail_usable(&a), 3);
    /* n2's job ends at 15:02:15 + 600 s (+1 s); n3's has no h_rt: busy for good. */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(avail_frames(&a, 2, t0, t0 + 7200, 600, &f));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, at("2026-11-27T15:12:16"));
    acc_frames_release(&f);
    acc_frames_init(&f);
    ACC_ASSERT_OK(avail_frames(&a, 3, t0, t0 + 7200, 600, &f));
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    avail_release(&a);
    /* Hosts with fewer slots than a node has are not planned with. */
    avail_init(&a);
    ACC_ASSERT_OK(sge_read_queues(xml, len, 4, now, &a, &err));
    CU_ASSERT_EQUAL(avail_usable(&a), 0);
    avail_release(&a);
    free(xml);
}

static void expect_queues(const char *xml, acc_err code, const char *words)
{
    struct avail a;
    avail_init(&a);
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(sge_read_queues(xml, strlen(xml), 1, 1000, &a, &err), code);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\n  '%s' lacks '%s'\n", err.msg, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
    avail_release(&a);
}

#define Q(body) "<job_info><queue_info><Queue-List>" body "</Queue-List></queue_info></job_info>"

static void test_qstat_malformed(void)
{
    expect_queues("error: commlib error", ACC_ERR_MALFORMED, "not XML: line 1");
    expect_queues("<qrstat/>", ACC_ERR_MALFORMED,
                  "the document element is <qrstat>, not <job_info>");
    expect_queues(Q("<slots_total>2</slots_total>"), ACC_ERR_MALFORMED,
                  "Queue-List with a bad name '(none)'");
    expect_queues(Q("<name>all.q@</name><slots_total>2</slots_total>"), ACC_ERR_MALFORMED,
                  "Queue-List with a bad name 'all.q@'");
    expect_queues(Q("<name>all.q@h</name><slots_total>-1</slots_total>"), ACC_ERR_MALFORMED,
                  "queue instance all.q@h: bad slots_total '-1'");
    expect_queues(Q("<name>all.q@h</name><slots_total>2</slots_total><job_list>"
                    "<JB_job_number>7</JB_job_number><JAT_start_time>soon</JAT_start_time>"
                    "</job_list>"),
                  ACC_ERR_MALFORMED, "job 7 on all.q@h: bad JAT_start_time 'soon'");
    expect_queues(Q("<name>all.q@h</name><slots_total>2</slots_total><job_list>"
                    "<JB_job_number>7</JB_job_number><hard_request name='h_rt'>1:x</hard_request>"
                    "</job_list>"),
                  ACC_ERR_MALFORMED, "job 7 on all.q@h: bad h_rt '1:x'");
    /* Deeper than any qstat output: refused. */
    struct acc_buf deep = ACC_BUF_INIT;
    acc_buf_puts(&deep, "<job_info>");
    for (int i = 0; i < 40; i++)
        acc_buf_puts(&deep, "<a>");
    for (int i = 0; i < 40; i++)
        acc_buf_puts(&deep, "</a>");
    acc_buf_puts(&deep, "</job_info>");
    expect_queues(acc_buf_str(&deep), ACC_ERR_TOO_DEEP, "");
    acc_buf_release(&deep);
}

/* h_rt as h:m:s, a stopped queue instance, a job past its limit. */
static void test_qstat_details(void)
{
    const char *xml = Q("<name>q@h1</name><slots_total>2</slots_total><job_list>"
                        "<JB_job_number>1</JB_job_number>"
                        "<JAT_start_time>1970-01-01T00:10:00</JAT_start_time>"
                        "<hard_request name='h_rt'>0:20:00</hard_request></job_list>"
                        "</Queue-List><Queue-List><name>q@h2</name><slots_total>2</slots_total>"
                        "<state>d</state>");
    struct avail a;
    avail_init(&a);
    struct acc_error err;
    ACC_ASSERT_OK(sge_read_queues(xml, strlen(xml), 1, 100, &a, &err));
    CU_ASSERT_EQUAL(avail_usable(&a), 1); /* h2 is disabled */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(avail_frames(&a, 1, 0, 7200, 60, &f));
    CU_ASSERT_EQUAL_FATAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].end, 600);
    CU_ASSERT_EQUAL(f.v[1].start, 1801); /* 600 + 20 min + 1 s */
    acc_frames_release(&f);
    avail_release(&a);
}

static acc_err open_with(const struct acc_kv *kv, size_t n, struct acc_error *err)
{
    struct acc_adapter_env env = {
        .name = "g", .section = "[site g]", .settings = kv, .n_settings = n, .nodes = 3};
    struct acc_adapter *ad = NULL;
    acc_err rc = acc_adapter_open(acc_adapter_kind_find("sge"), &env, &ad, err);
    acc_adapter_close(ad);
    return rc;
}

static void test_settings(void)
{
    struct acc_error err;
    char root[600];
    snprintf(root, sizeof root, "%s/sgeroot", acc_test_tmpdir());
    char common[700];
    snprintf(common, sizeof common, "mkdir -p %s/c1/common", root);
    CU_ASSERT_EQUAL_FATAL(system(common), 0);
    struct acc_kv ok[] = {
        {"sge_root", root}, {"cell", "c1"}, {"pe", "mpi"}, {"slots", "2"}, {"timeout", "PT5S"}};
    ACC_ASSERT_OK(open_with(ok, 5, &err));
    struct acc_kv unknown[] = {{"sge_root", root}, {"pe", "mpi"}, {"colour", "blue"}};
    CU_ASSERT_EQUAL(open_with(unknown, 3, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown setting 'colour'"));
    struct acc_kv no_pe[] = {{"sge_root", root}, {"cell", "c1"}};
    CU_ASSERT_EQUAL(open_with(no_pe, 2, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sge needs pe = (the parallel environment"));
    struct acc_kv no_cell[] = {{"sge_root", root}, {"pe", "mpi"}}; /* cell "default" */
    CU_ASSERT_EQUAL(open_with(no_cell, 2, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/default/common is not a directory"));
    struct acc_kv slots[] = {{"sge_root", root}, {"cell", "c1"}, {"pe", "mpi"}, {"slots", "0"}};
    CU_ASSERT_EQUAL(open_with(slots, 4, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "slots: '0' is not a number of slots per host"));
    struct acc_kv tmo[] = {{"sge_root", root}, {"cell", "c1"}, {"pe", "mpi"}, {"timeout", "soon"}};
    CU_ASSERT_EQUAL(open_with(tmo, 4, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "timeout: 'soon' is not a duration"));
    struct acc_kv bin[] = {{"sge_root", root}, {"cell", "c1"}, {"pe", "mpi"}, {"bin_dir", "/nope"}};
    CU_ASSERT_EQUAL(open_with(bin, 4, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bin_dir /nope is not a directory"));
}

/* A qmaster that cannot be reached: the command's own words, classified. */
static void test_unreachable(void)
{
    char dir[600], script[3000];
    snprintf(dir, sizeof dir, "%s/sgebin", acc_test_tmpdir());
    snprintf(script, sizeof script,
             "mkdir -p %s/c/common && for c in qrstat qstat qrsub qrdel qconf; do "
             "printf '#!/bin/sh\\necho \"error: commlib error: got select error (Connection "
             "refused)\" >&2\\necho \"unable to contact qmaster using port 6444 on host "
             "\\\\\"gone\\\\\"\" >&2\\nexit 1\\n' > %s/$c; chmod 755 %s/$c; done",
             dir, dir, dir);
    CU_ASSERT_EQUAL_FATAL(system(script), 0);
    struct acc_kv kv[] = {{"sge_root", dir}, {"cell", "c"}, {"pe", "mpi"}, {"bin_dir", dir}};
    struct acc_adapter_env env = {
        .name = "g", .section = "[site g]", .settings = kv, .n_settings = 4, .nodes = 3};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_open(acc_adapter_kind_find("sge"), &env, &ad, &err));
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "g", .amount = 1};
    CU_ASSERT_EQUAL(acc_adapter_preview(ad, &res, acc_now(), acc_now() + 3600, 60, &f, &err),
                    ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "qstat: error: commlib error"));
    acc_frames_release(&f);
    struct acc_reservation r;
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-x", "5", &r, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "acc-x", NULL, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "qrdel"));
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_FALSE(h.up);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"Grid Engine's -xml times", test_times},
    {"qrstat -xml (captured)", test_qrstat_summary},
    {"qrstat -ar IDS -xml (captured)", test_qrstat_ar},
    {"malformed qrstat outputs are named", test_qrstat_malformed},
    {"qstat -f -r -xml (captured)", test_qstat_queues},
    {"malformed qstat outputs are named", test_qstat_malformed},
    {"h_rt as h:m:s, stopped queue instances", test_qstat_details},
    {"settings", test_settings},
    {"an unreachable qmaster", test_unreachable},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sge", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
