/* SPDX-License-Identifier: Apache-2.0 */
/* test_observe.c - what an operator sees of a real accordd (in-process, with
 * [auth] tokens): the access log (a line per request with its user, status
 * and time, never a token; none with access_log = no) and /metrics after a
 * negotiation (the latency histogram counted it, its buckets cumulative;
 * answers by status code; an adapter down after its calls fail; the build). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_suite.h"
#include "log.h"
#include "testutil.h"
#include "timefmt.h"

#define TESTER_TOKEN "tester-secret-token-0123456789"
#define ROOT_TOKEN   "root-secret-token-0123456789"

static const char *const as_tester[] = {"Authorization: Bearer " TESTER_TOKEN,
                                        "Content-Type: application/xml", NULL};
static const char *const as_root[] = {"Authorization: Bearer " ROOT_TOKEN, NULL};
static const char *const wrong[] = {"Authorization: Bearer " TESTER_TOKEN "x", NULL};

/* Standard error goes to a file while a test runs; log_end gives it back
 * and returns what was written (free() it). */
static int saved_stderr = -1;
static char log_path[512];

static void log_begin(void)
{
    snprintf(log_path, sizeof log_path, "%s/stderr.log", acc_test_tmpdir());
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    acc_log_detect_journal(); /* a file now, whatever it was */
}

static char *log_end(void)
{
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
        acc_log_detect_journal();
    }
    char *text = read_file(log_path, NULL);
    return text ? text : strdup("");
}

static int start(struct fixture *f, const char *server_keys)
{
    char tokens[512], ini[1024];
    snprintf(tokens, sizeof tokens, "%s/tokens", acc_test_tmpdir());
    FILE *t = fopen(tokens, "w");
    if (!t)
        return -1;
    fputs("tester " TESTER_TOKEN "\nroot " ROOT_TOKEN " admin\n", t);
    fclose(t);
    chmod(tokens, 0600);
    snprintf(ini, sizeof ini,
             "[server]\nallow_control = yes\n%s[auth]\ntokens = %s\n"
             "[site a]\nadapter = sim-batch\nnodes = 8\n",
             server_keys, tokens);
    char db[512];
    snprintf(db, sizeof db, "%s/observe.db", acc_test_tmpdir());
    unlink(db);
    return fixture_start(f, ini, db);
}

static long call(struct fixture *f, const char *method, const char *path, const char *body,
                 const char *const *hdr, struct http_reply *r)
{
    char u[512];
    snprintf(u, sizeof u, "%s%s", f->base, path);
    if (http_do(method, u, body, body ? strlen(body) : 0, hdr, r) != 0)
        return -1;
    return r->status;
}

/* The value of a series ("name{labels}") in a scrape; -1 when absent. */
static double value_of(const char *scrape, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = scrape; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    }
    return -1;
}

static char *scrape(struct fixture *f)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(call(f, "GET", "/metrics", NULL, as_root, &r), 200);
    char *text = r.body ? strdup(r.body) : strdup("");
    http_reply_free(&r);
    return text;
}

/* The histogram's buckets never decrease, and +Inf is the count. */
static void check_histogram(const char *m, double count)
{
    static const char *const le[] = {"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
                                     "0.1",   "0.25",   "0.5",   "1",    "2.5",   "5",
                                     "10",    "30",     "60",    "+Inf"};
    double before = 0;
    for (size_t i = 0; i < sizeof le / sizeof le[0]; i++) {
        char series[96];
        snprintf(series, sizeof series, "accord_negotiation_seconds_bucket{le=\"%s\"}", le[i]);
        double v = value_of(m, series);
        CU_ASSERT(v >= before);
        before = v;
    }
    CU_ASSERT_EQUAL(before, count);
    CU_ASSERT(value_of(m, "accord_negotiation_seconds_sum") >= 0);
}

static void negotiate(struct fixture *f, long want)
{
    const char *sites[] = {"a:2"};
    struct http_reply r;
    CU_ASSERT_EQUAL(call(f, "POST", "/agreements",
                         hs_offer("observed", "<co:Duration>PT1H</co:Duration>", sites, 1, 0),
                         as_tester, &r),
                    want);
    http_reply_free(&r);
}

static void test_metrics_after_negotiation(void)
{
    struct fixture f;
    CU_ASSERT_FATAL(start(&f, "") == 0);
    char *m0 = scrape(&f);
    double count0 = value_of(m0, "accord_negotiation_seconds_count");
    CU_ASSERT_EQUAL(count0, 0);
    check_histogram(m0, count0);
    CU_ASSERT_EQUAL(value_of(m0, "accord_adapter_up{adapter=\"a\",kind=\"sim-batch\"}"), 1);
    CU_ASSERT_EQUAL(
        value_of(m0,
                 "accord_adapter_last_error_timestamp_seconds{adapter=\"a\",kind=\"sim-batch\"}"),
        0);
    CU_ASSERT_PTR_NOT_NULL(strstr(m0, "# TYPE accord_negotiation_seconds histogram\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m0, "\naccord_build_info{version=\"" ACCORD_VERSION "\"} 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m0, "\naccord_leader 1\n")); /* one accordd on a file leads */

    negotiate(&f, 201);
    char *m1 = scrape(&f);
    double count1 = value_of(m1, "accord_negotiation_seconds_count");
    CU_ASSERT_EQUAL(count1, count0 + 1);
    check_histogram(m1, count1);
    CU_ASSERT(value_of(m1, "accord_negotiation_seconds_sum") > 0);
    CU_ASSERT_EQUAL(value_of(m1, "accord_http_requests_total{code=\"201\"}"), 1);
    CU_ASSERT_EQUAL(value_of(m1, "accord_http_requests_total{code=\"200\"}"), 1); /* m0 */
    CU_ASSERT_EQUAL(value_of(m1, "accord_adapter_up{adapter=\"a\",kind=\"sim-batch\"}"), 1);

    /* Every call of the adapter fails: it is down, since a moment ago. */
    struct http_reply r;
    CU_ASSERT_EQUAL(call(&f, "POST",
                         "/adapters/a/control/fault?call=any&action=unavailable&count=1000", "",
                         as_root, &r),
                    200);
    http_reply_free(&r);
    acc_time before = acc_now();
    negotiate(&f, 503);
    char *m2 = scrape(&f);
    CU_ASSERT_EQUAL(value_of(m2, "accord_adapter_up{adapter=\"a\",kind=\"sim-batch\"}"), 0);
    double at = value_of(
        m2, "accord_adapter_last_error_timestamp_seconds{adapter=\"a\",kind=\"sim-batch\"}");
    CU_ASSERT(at >= (double)before && at <= (double)acc_now());
    CU_ASSERT_EQUAL(value_of(m2, "accord_negotiation_seconds_count"), count1 + 1);
    check_histogram(m2, count1 + 1);
    CU_ASSERT_EQUAL(value_of(m2, "accord_http_requests_total{code=\"503\"}"), 1);
    free(m0);
    free(m1);
    free(m2);
    fixture_stop(&f);
}

static void test_access_log(void)
{
    struct fixture f;
    log_begin();
    int up = start(&f, "");
    struct http_reply r;
    if (up == 0) {
        negotiate(&f, 201);
        CU_ASSERT_EQUAL(call(&f, "GET", "/agreements?limit=5", NULL, wrong, &r), 401);
        http_reply_free(&r);
        CU_ASSERT_EQUAL(call(&f, "GET", "/metrics", NULL, as_tester, &r), 403);
        http_reply_free(&r);
        CU_ASSERT_EQUAL(call(&f, "GET", "/no%0Asuch", NULL, as_root, &r), 404);
        http_reply_free(&r);
        fixture_stop(&f);
    }
    char *log = log_end();
    CU_ASSERT_FATAL(up == 0);
    /* access: ADDRESS USER "METHOD PATH" STATUS MS ms */
    const char *line =
        strstr(log, " accordd info: access: 127.0.0.1 tester \"POST /agreements\" 201 ");
    CU_ASSERT_PTR_NOT_NULL(line);
    if (line) {
        const char *end = strchr(line, '\n');
        CU_ASSERT(end && end - line > 4 && strncmp(end - 3, " ms", 3) == 0);
    }
    /* A wrong token names nobody, and the query is not said. */
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "access: 127.0.0.1 - \"GET /agreements\" 401 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "access: 127.0.0.1 tester \"GET /metrics\" 403 "));
    /* A decoded newline cannot start a line of its own. */
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "access: 127.0.0.1 root \"GET /no%0Asuch\" 404 "));
    CU_ASSERT_PTR_NULL(strstr(log, "secret-token"));
    CU_ASSERT_PTR_NULL(strstr(log, "Bearer"));
    free(log);

    /* Turned off: not a line. */
    log_begin();
    up = start(&f, "access_log = no\n");
    if (up == 0) {
        negotiate(&f, 201);
        fixture_stop(&f);
    }
    log = log_end();
    CU_ASSERT_FATAL(up == 0);
    CU_ASSERT_PTR_NULL(strstr(log, "access:"));
    free(log);
}

static const struct acc_test_case tests[] = {
    {"metrics after a negotiation", test_metrics_after_negotiation},
    {"access log", test_access_log},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"observe", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
