/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_errors.c - accordctl's exit codes on the error paths (not found,
 * server down, usage, a bad offer, an adapter down, a rejected offer) and
 * its tokens (--token, ACCORD_TOKEN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_run.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

static void test_exit_codes(void)
{
    struct run r = ctl(NULL, NULL, "show", "aaaaaaaaaaaaaaaa", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl: NotFound:"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "HTTP/")); /* never a raw HTTP dump */
    run_free(&r);

    r = ctl("http://127.0.0.1:1", NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "127.0.0.1:1"));
    run_free(&r);

    static const char *const usage[][3] = {
        {NULL, NULL, NULL},        {"frobnicate", NULL, NULL},  {"show", NULL, NULL},
        {"list", "--bogus", NULL}, {"preview", "caesar", NULL}, {"submit", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        r = ctl(NULL, NULL, usage[i][0], usage[i][1], usage[i][2], NULL);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "usage") ? r.err : strstr(r.err, "give"));
        run_free(&r);
    }

    /* A document that is not an offer: refused, exit 1, the server's words. */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.xml", acc_test_tmpdir());
    FILE *f = fopen(bad, "w");
    fputs("<wsag:AgreementOffer", f);
    fclose(f);
    r = ctl(NULL, NULL, "submit", bad, NULL);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "MalformedDocument"));
    run_free(&r);

    /* An adapter down: 503, exit 75 (try again later), everything rolled
     * back. */
    struct http_reply h;
    char u[256];
    snprintf(u, sizeof u, "%s/adapters/caesar/control/fault?call=reserve&action=unavailable",
             fx.base);
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &h), 0);
    http_reply_free(&h);
    r = ctl(NULL, NULL, "submit", ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_EQUAL(r.status, 75);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "AdapterUnavailable"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl trace")); /* the kept agreement */
    run_free(&r);
}

static void test_rejected(void)
{
    /* fh-brs full for the whole window: no common slot. */
    acc_time t0 = (acc_now() / 900 + 4 * 96) * 900;
    char start[ACC_TIME_STRLEN], end[ACC_TIME_STRLEN], u[512];
    acc_time_format(t0, start);
    acc_time_format(t0 + 2 * 3600, end);
    for (acc_time t = t0; t < t0 + 2 * 3600; t += 900) {
        char s1[ACC_TIME_STRLEN], s2[ACC_TIME_STRLEN];
        acc_time_format(t, s1);
        acc_time_format(t + 900, s2);
        struct http_reply h;
        snprintf(u, sizeof u, "%s/adapters/fh-brs/control/peak?from=%s&until=%s", fx.base, s1, s2);
        http_do("POST", u, "", 0, NULL, &h);
        long long used = 0, cap = 0;
        char name[64];
        sscanf(h.body, "%63s peak %lld capacity %lld", name, &used, &cap);
        http_reply_free(&h);
        snprintf(u, sizeof u, "%s/adapters/fh-brs/control/book?start=%s&end=%s&amount=%lld",
                 fx.base, s1, s2, cap - used);
        if (cap > used) {
            http_do("POST", u, "", 0, NULL, &h);
            http_reply_free(&h);
        }
    }
    char *doc = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    char sched[256], *p = strstr(doc, "<co:Duration>PT2H</co:Duration>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    snprintf(sched, sizeof sched,
             "<co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>PT1H</co:Duration>",
             start, end);
    char path[256];
    snprintf(path, sizeof path, "%s/window.xml", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s%s%s", (int)(p - doc), doc, sched,
            p + strlen("<co:Duration>PT2H</co:Duration>"));
    fclose(f);
    free(doc);
    struct run r = ctl(NULL, NULL, "submit", path, NULL);
    CU_ASSERT_EQUAL(r.status, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl: NoCommonSlot:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "site fh-brs")); /* why, per adapter */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "site caesar"));
    run_free(&r);
    /* --json gives the fault document to scripts, with the same exit code. */
    r = ctl(NULL, NULL, "submit", path, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 4);
    json_t *fault = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jstr(fault, "code", ""), "NoCommonSlot");
    json_decref(fault);
    run_free(&r);
}

static void test_tokens(void)
{
    char tokens[256], ini[512], db[256];
    snprintf(tokens, sizeof tokens, "%s/cli-tokens", acc_test_tmpdir());
    FILE *f = fopen(tokens, "w");
    fputs("carol carol-token-0123456789\n", f);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(ini, sizeof ini, "[auth]\ntokens = %s\n[site a]\nadapter = sim-batch\nnodes = 4\n",
             tokens);
    snprintf(db, sizeof db, "%s/cli-auth.db", acc_test_tmpdir());
    struct fixture au;
    CU_ASSERT_EQUAL_FATAL(fixture_start(&au, ini, db), 0);
    struct run r = ctl(au.base, NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 7);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "Unauthorized"));
    run_free(&r);
    r = ctl(au.base, "carol-token-0123456789", "list", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
    setenv("ACCORD_TOKEN", "carol-token-0123456789", 1);
    r = ctl(au.base, NULL, "sites", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
    unsetenv("ACCORD_TOKEN");
    fixture_stop(&au);
}

static const struct acc_test_case tests[] = {
    {"exit codes: not found, server down, usage, bad offer, adapter down", test_exit_codes},
    {"a rejected offer says why and exits 4", test_rejected},
    {"tokens: --token and ACCORD_TOKEN", test_tokens},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"cli_errors", cli_setup, cli_teardown, tests},
    {NULL, NULL, NULL, NULL},
};
