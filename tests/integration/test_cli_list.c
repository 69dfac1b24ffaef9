/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_list.c - accordctl list over more agreements than one page of the
 * server (250, the page being 100): every one shown, a window with its
 * total, the year in times, --noheader and -o exact, and exit 75 (try again
 * later) for a 429 of a real accordd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_run.h"
#include "http_client.h"
#include "loopback.h"
#include "testutil.h"

enum { N = 250 };

/* One site and no bound on open agreements: 250 of one user fit. */
static const char ini[] = "[quota]\nmax_agreements = unlimited\n"
                          "[site a]\nadapter = sim-batch\nnodes = 64\n";

/* An offer of one node for a quarter of an hour, named name. */
static void offer(char *out, size_t size, const char *name)
{
    snprintf(out, size,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\">"
             "<wsag:Name>%s</wsag:Name><wsag:Context>"
             "<wsag:AgreementInitiator>alice</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
             "<co:Schedule><co:Duration>PT15M</co:Duration></co:Schedule>"
             "</wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"job\" wsag:ServiceName=\"metajob\">"
             "<co:Component><co:Site>a</co:Site><co:Nodes>1</co:Nodes>"
             "<co:Executable>/bin/true</co:Executable></co:Component>"
             "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>",
             name);
}

static int setup(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/cli-list.db", acc_test_tmpdir());
    if (fixture_start(&fx, ini, db))
        return 1;
    setenv("ACCORD_URL", fx.base, 1);
    unsetenv("ACCORD_TOKEN");
    unsetenv("COLUMNS");
    /* pg-000 first: the newest, listed first, is pg-249. */
    for (int i = 0; i < N; i++) {
        char name[32], doc[2048], id[ACC_ID_LEN + 1];
        struct acc_error err;
        snprintf(name, sizeof name, "pg-%03d", i);
        offer(doc, sizeof doc, name);
        if (svc_negotiate_doc(fx.svc, doc, id, NULL, &err) || !id[0]) {
            fprintf(stderr, "offer %d: %s\n", i, err.msg);
            return 1;
        }
    }
    return 0;
}

/* How many lines text has. */
static size_t lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

static void test_every_agreement(void)
{
    /* The server's page holds 100 of them, and says how many there are. */
    struct http_reply h;
    char u[256];
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    const char *accept[] = {"Accept: application/json", NULL};
    CU_ASSERT_EQUAL_FATAL(http_do("GET", u, NULL, 0, accept, &h), 0);
    json_t *page = json_loads(h.body, 0, NULL);
    CU_ASSERT_EQUAL(jint(page, "count", -1), 100);
    CU_ASSERT_EQUAL(jint(page, "total", -1), N);
    json_decref(page);
    http_reply_free(&h);

    /* The table: a header and all 250, each once. */
    struct run r = ctl(NULL, NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(lines(r.out), N + 1);
    CU_ASSERT_STRING_EQUAL(r.err, ""); /* no window asked: no footer */
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, " pg-%03d ", i);
        const char *at = strstr(r.out, name);
        CU_ASSERT_PTR_NOT_NULL(at);
        CU_ASSERT_PTR_NULL(at ? strstr(at + 1, name) : NULL);
    }
    run_free(&r);

    /* --json: one document, all 250, distinct ids. */
    r = ctl(NULL, NULL, "list", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *l = json_of(&r);
    const json_t *all = json_object_get(l, "agreements");
    CU_ASSERT_EQUAL(jint(l, "count", -1), N);
    CU_ASSERT_EQUAL(jint(l, "total", -1), N);
    CU_ASSERT_EQUAL(json_array_size(all), N);
    json_t *ids = json_object();
    for (size_t i = 0; i < json_array_size(all); i++)
        json_object_set_new(ids, jstr(json_array_get(all, i), "id", "?"), json_true());
    CU_ASSERT_EQUAL(json_object_size(ids), N);
    json_decref(ids);
    json_decref(l);
    run_free(&r);

    /* Filters hold over every page: none of another initiator. */
    r = ctl(NULL, NULL, "list", "--initiator", "bob", "--noheader", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    run_free(&r);
}

/* The names of a window, newest first: pg-(249-offset) down. */
static void expect_names(char *out, size_t size, int offset, int n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "pg-%03d\n", N - 1 - offset - i);
}

static void test_window(void)
{
    static char want[N * 8];
    struct run r = ctl(NULL, NULL, "list", "--limit", "100", "--offset", "100", "--noheader", "-o",
                       "%j", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    expect_names(want, sizeof want, 100, 100);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    CU_ASSERT_STRING_EQUAL(r.err, "showing 101-200 of 250\n");
    run_free(&r);

    /* From an offset to the end, and past it. */
    r = ctl(NULL, NULL, "list", "--offset", "240", "--noheader", "--format", "%j", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    expect_names(want, sizeof want, 240, 10);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    CU_ASSERT_STRING_EQUAL(r.err, "showing 241-250 of 250\n");
    run_free(&r);
    r = ctl(NULL, NULL, "list", "--offset", "300", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "(no agreements)"));
    CU_ASSERT_STRING_EQUAL(r.err, "showing none of 250 (offset 300)\n");
    run_free(&r);

    /* A window wider than the server's page of 100 still comes whole. */
    r = ctl(NULL, NULL, "list", "--limit", "180", "--offset", "20", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *l = json_of(&r);
    CU_ASSERT_EQUAL(jint(l, "count", -1), 180);
    CU_ASSERT_EQUAL(jint(l, "total", -1), N);
    CU_ASSERT_STRING_EQUAL(jstr(json_array_get(json_object_get(l, "agreements"), 0), "name", ""),
                           "pg-229");
    json_decref(l);
    CU_ASSERT_STRING_EQUAL(r.err, "showing 21-200 of 250\n");
    run_free(&r);

    /* Bad windows and formats: usage (2), nothing asked of the server. */
    static const char *const bad[][2] = {
        {"--limit", "0"}, {"--limit", "x"}, {"--offset", "-1"}, {"--offset", "1e3"},
        {"-o", "%q"},     {"-o", "%1000i"}, {"-o", "50%"},      {"--format", "%.x"},
        {"-o", "%n"},     {"-o", "%.8s"},   {"-o", "%c"},       {"-o", "%E"},
        {"-o", "%L"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = ctl(NULL, NULL, "list", bad[i][0], bad[i][1], NULL);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl list: "));
        CU_ASSERT_STRING_EQUAL(r.out, "");
        run_free(&r);
    }
}

/* The letters mean what they mean to squeue; accordctl's letters of before,
 * which squeue reads as other fields, are refused naming the one to use. */
static void test_format_squeue_letters(void)
{
    static const char *const was[][2] = {
        {"%n", "use %j"}, {"%s", "use %t"}, {"%c", "use %V"}, {"%E", "use %e"}, {"%L", "use %N"},
    };
    for (size_t i = 0; i < sizeof was / sizeof was[0]; i++) {
        struct run r = ctl(NULL, NULL, "list", "--limit", "1", "-o", was[i][0], NULL);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "squeue's"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, was[i][1]));
        run_free(&r);
    }
    struct run r = ctl(NULL, NULL, "list", "--limit", "1", "--noheader", "-o", "%j", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "pg-249\n");
    run_free(&r);
}

/* "2026-11-22T02:45:00Z" -> "2026-11-22 02:45". */
static void short_time(const char *t, char out[17])
{
    snprintf(out, 17, "%.10s %.5s", t, t + 11);
}

static void test_format_exact(void)
{
    struct run r = ctl(NULL, NULL, "list", "--limit", "1", "--json", NULL);
    json_t *l = json_of(&r);
    const json_t *a = json_array_get(json_object_get(l, "agreements"), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char id[32], start[17], end[17], created[17], want[512];
    snprintf(id, sizeof id, "%s", jstr(a, "id", ""));
    short_time(jstr(a, "created", ""), created);
    short_time(jstr(a, "start", ""), start);
    short_time(jstr(a, "end", ""), end);
    CU_ASSERT_EQUAL(strlen(jstr(a, "start", "")), 20);
    json_decref(l);
    run_free(&r);

    /* Every letter; widths cut (+) and pad, '.' on the left. */
    r = ctl(NULL, NULL, "list", "--limit", "1", "-o", "%i|%.8j|%4t|%-|%T|%u|%S|%e|%N|%%", NULL);
    CU_ASSERT_EQUAL(r.status, 2); /* '-' is not squeue's: refused */
    run_free(&r);
    r = ctl(NULL, NULL, "list", "--limit", "1", "-o", "%i|%.8j|%4t|%T|%3u|%S|%e|%N|%.6V|%%", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    snprintf(want, sizeof want,
             "ID|    NAME|STA+|STATE|IN+|START|END|SITES|CREAT+|%%\n"
             "%s|  pg-249|Obs+|Observed|al+|%s|%s|a|%.5s+|%%\n",
             id, start, end, created);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    run_free(&r);

    /* --noheader: the same line alone; the table's times have the year. */
    r = ctl(NULL, NULL, "list", "--limit", "1", "--noheader", "-o", "%i %t %S %e", NULL);
    snprintf(want, sizeof want, "%s Observed %s %s\n", id, start, end);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    run_free(&r);
    r = ctl(NULL, NULL, "list", "--limit", "1", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "START (UTC)"));
    snprintf(want, sizeof want, "%s pg-249 Observed %s %s a\n", id, start, end);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, want));
    run_free(&r);
    r = ctl(NULL, NULL, "list", "--limit", "1", "--noheader", NULL);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    run_free(&r);
}

/* A server that answers 429 (its bound of connections per client): exit
 * 75, the fault said; the client served again afterwards. */
static void test_retry_429(void)
{
    struct fixture one;
    char db[256];
    snprintf(db, sizeof db, "%s/cli-429.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(
        fixture_start(&one,
                      "[server]\nclient_connections = 1\n[site a]\nadapter = sim-batch\n"
                      "nodes = 4\n",
                      db),
        0);
    unsigned port = 0;
    sscanf(one.base, "http://127.0.0.1:%u", &port);
    int held = acc_test_connect_from("127.0.0.1", port);
    CU_ASSERT_TRUE(held >= 0);
    /* Once the server has accepted it, it is the client's one connection
     * (within 5 s): accordctl is refused. */
    struct run r = {0};
    for (int i = 0; i < 25; i++) {
        run_free(&r);
        r = ctl(one.base, NULL, "list", NULL);
        if (r.status != 0)
            break;
        usleep(200000);
    }
    CU_ASSERT_EQUAL(r.status, 75);
    CU_ASSERT_PTR_NOT_NULL(r.err ? strstr(r.err, "TooManyConnections") : NULL);
    run_free(&r);
    r = (struct run){0};
    if (held >= 0)
        close(held);
    /* Once the server has seen it closed, served again (within 5 s). */
    for (int i = 0; i < 25; i++) {
        run_free(&r);
        r = ctl(one.base, NULL, "list", NULL);
        if (r.status == 0)
            break;
        usleep(200000);
    }
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
    fixture_stop(&one);
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"list shows every agreement over several pages", test_every_agreement},
    {"--limit and --offset: one window and the total", test_window},
    {"-o and --noheader exact; times with the year", test_format_exact},
    {"-o's letters are squeue's; the old ones are refused naming the new",
     test_format_squeue_letters},
    {"a 429 exits 75", test_retry_429},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"cli_list", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
