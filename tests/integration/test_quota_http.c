/* SPDX-License-Identifier: Apache-2.0 */
/* test_quota_http.c - quotas and what a client is told, over real sockets
 * (accordd in-process on port 0): the open-quote bounds per user (403
 * QuotaExceeded) and in all (503 with a Retry-After until the earliest
 * quote closes), one user's concurrent offers against max_agreements, a
 * user's node-hours on a site, two client addresses without [auth] (the
 * share of each), a burst of Rejected agreements bounded per user, the
 * embedded testbed's defaults against an offer for every node for 100
 * years, the media type of each POST route, and Accept with q values. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

static struct fixture fx;

/* alice, bob and carol are users of [auth]; each one's token is
 * "NAME-token-0123456789". */
static const char ini_fmt[] = "[auth]\ntokens = %s\n"
                              "[negotiation]\n"
                              "lead_time = PT0S\n"
                              "max_hold = PT10M\n"
                              "max_quotes = 6\n"
                              "max_quotes_per_user = 4\n"
                              "%s"
                              "[site a]\nadapter = sim-batch\nnodes = 64\n"
                              "[site b]\nadapter = sim-batch\nnodes = 64\n";

static char *offer(const char *who, int nodes, const char *duration)
{
    static _Thread_local char buf[4096];
    snprintf(buf, sizeof buf,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>q</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>%s</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
             "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>%s</co:Duration>"
             "</co:Schedule></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\">"
             "<co:Component><co:Site>a</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
             "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>",
             who, duration, nodes);
    return buf;
}

static char *url(const char *path)
{
    static _Thread_local char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

/* A POST of who's offer with who's token. */
static long post_as(const char *who, const char *path, const char *body, struct http_reply *r)
{
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s-token-0123456789", who);
    const char *const hdr[] = {"Content-Type: application/xml", auth, NULL};
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url(path), body, strlen(body), hdr, r), 0);
    return r->status;
}

static void expect_fault(const struct http_reply *r, long status, const char *code,
                         const char *words)
{
    char *c = xml_get(r->body, "/co:Fault/@co:code");
    char *m = xml_get(r->body, "/co:Fault/co:Message");
    if (r->status != status || !c || strcmp(c, code) != 0 || !m || !strstr(m, words))
        fprintf(stderr, "\n  got %ld %s, want %ld %s naming %s: %.300s\n", r->status, c ? c : "-",
                status, code, words, r->body ? r->body : "");
    CU_ASSERT_EQUAL(r->status, status);
    CU_ASSERT_STRING_EQUAL(c ? c : "", code);
    CU_ASSERT_TRUE(m && strstr(m, words));
    free(c);
    free(m);
}

/* The raw answer to a request (the headers too), read until the server
 * closes or the fault ends. */
static char *raw(const char *req)
{
    static char buf[16384];
    buf[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)acc_http_port(fx.srv))};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to)) {
        if (fd >= 0)
            close(fd);
        return buf;
    }
    send(fd, req, strlen(req), MSG_NOSIGNAL);
    size_t n = 0;
    int64_t end = acc_mono_us() + 10000000;
    while (n + 1 < sizeof buf && acc_mono_us() < end && !strstr(buf, "</co:Fault>")) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t got = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (got <= 0)
            break;
        n += (size_t)got;
        buf[n] = '\0';
    }
    close(fd);
    return buf;
}

/* A new database: a file, or on PostgreSQL (ACCORD_TEST_DB_URL) one that
 * acc_test_db makes afresh. */
static bool fresh_db(const char *name, char *db, size_t size)
{
    if (!acc_test_db(name, db, size))
        return false;
    if (!acc_test_db_is_pg()) {
        char p[600];
        unlink(db);
        snprintf(p, sizeof p, "%s-wal", db);
        unlink(p);
    }
    return true;
}

static int start_users(const char *name, const char *extra)
{
    char tokens[256], ini[2048], db[512];
    snprintf(tokens, sizeof tokens, "%s/tokens", acc_test_tmpdir());
    FILE *f = fopen(tokens, "w");
    if (!f)
        return -1;
    fputs("alice alice-token-0123456789\nbob bob-token-0123456789\n"
          "carol carol-token-0123456789\n",
          f);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(ini, sizeof ini, ini_fmt, tokens, extra);
    if (!fresh_db(name, db, sizeof db))
        return -1;
    return fixture_start(&fx, ini, db);
}

/* ------------------------------------------------------------- quotes */

/* A user's open quotes: the fifth is 403 naming the quota; all open quotes
 * in all: 503 with Retry-After until the earliest one closes (these are
 * open for max_hold, ten minutes), not the layer's 2 s. */
static void test_quote_bounds(void)
{
    CU_ASSERT_EQUAL_FATAL(start_users("qq-bounds", ""), 0);
    struct http_reply r;
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(post_as("alice", "/negotiations", offer("alice", 4, "PT1H"), &r), 201);
        http_reply_free(&r);
    }
    post_as("alice", "/negotiations", offer("alice", 4, "PT1H"), &r);
    expect_fault(&r, 403, "QuotaExceeded", "[quota] max_quotes");
    http_reply_free(&r);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(post_as("bob", "/negotiations", offer("bob", 4, "PT1H"), &r), 201);
        http_reply_free(&r);
    }
    post_as("carol", "/negotiations", offer("carol", 4, "PT1H"), &r);
    expect_fault(&r, 503, "Overloaded", "[negotiation] max_quotes");
    http_reply_free(&r);

    const char *body = offer("carol", 4, "PT1H");
    char req[8192];
    snprintf(req, sizeof req,
             "POST /negotiations HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "Authorization: Bearer carol-token-0123456789\r\n"
             "Content-Type: application/xml\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    const char *ans = raw(req);
    const char *ra = strstr(ans, "Retry-After: ");
    long secs = ra ? strtol(ra + 13, NULL, 10) : -1;
    if (secs < 590 || secs > 600)
        fprintf(stderr, "\n  Retry-After %ld: %.400s\n", secs, ans);
    CU_ASSERT_TRUE(strstr(ans, " 503 ") != NULL);
    CU_ASSERT_TRUE(secs >= 590 && secs <= 600);
    CU_ASSERT_PTR_NULL(strstr(ra ? ra + 1 : ans, "Retry-After")); /* only one */
    fixture_stop(&fx);
}

/* --------------------------------------------------------- agreements */

struct racer {
    atomic_int *created, *refused;
};

static void *race(void *arg)
{
    struct racer *x = arg;
    struct http_reply r;
    long st = post_as("alice", "/agreements", offer("alice", 1, "PT1H"), &r);
    char *c = xml_get(r.body, "/co:Fault/@co:code");
    if (st == 201)
        atomic_fetch_add(x->created, 1);
    else if (st == 403 && c && strcmp(c, "QuotaExceeded") == 0)
        atomic_fetch_add(x->refused, 1);
    free(c);
    http_reply_free(&r);
    return NULL;
}

/* Concurrent POSTs of one user never get past max_agreements. */
static void test_agreements_race(void)
{
    CU_ASSERT_EQUAL_FATAL(start_users("qq-race", "[quota alice]\nmax_agreements = 4\n"), 0);
    atomic_int created = 0, refused = 0;
    struct racer x = {&created, &refused};
    pthread_t t[16];
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, race, &x);
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&created), 4);
    CU_ASSERT_EQUAL(atomic_load(&refused), 12);
    struct http_reply r;
    post_as("alice", "/agreements", offer("alice", 1, "PT1H"), &r);
    expect_fault(&r, 403, "QuotaExceeded", "[quota alice] max_agreements");
    http_reply_free(&r);
    CU_ASSERT_EQUAL(post_as("bob", "/agreements", offer("bob", 1, "PT1H"), &r), 201);
    http_reply_free(&r);
    fixture_stop(&fx);
}

/* ---------------------------------------------- hours, addresses, Rejected */

/* One user over max_node_hours on a site: 403 naming the key and the site,
 * nothing stored; another user still gets 201. */
static void test_node_hours(void)
{
    CU_ASSERT_EQUAL_FATAL(start_users("qq-hours", "[quota alice]\nmax_node_hours = 100\n"), 0);
    struct http_reply r;
    CU_ASSERT_EQUAL(post_as("alice", "/agreements", offer("alice", 40, "PT2H"), &r), 201);
    http_reply_free(&r);
    post_as("alice", "/agreements", offer("alice", 40, "PT1H"), &r);
    expect_fault(&r, 403, "QuotaExceeded", "[quota alice] max_node_hours = 100");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body ? r.body : "", "site a"));
    http_reply_free(&r);
    CU_ASSERT_EQUAL(post_as("bob", "/agreements", offer("bob", 40, "PT2H"), &r), 201);
    http_reply_free(&r);
    fixture_stop(&fx);
}

/* A POST from a client address of the loopback network (127/8): its
 * status, and the body into body (size bytes). */
static long post_from(const char *from, const char *path, const char *doc, char *body, size_t size)
{
    static char buf[65536];
    char req[8192];
    snprintf(req, sizeof req,
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "Content-Type: application/xml\r\nContent-Length: %zu\r\n\r\n%s",
             path, strlen(doc), doc);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me = {.sin_family = AF_INET};
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)acc_http_port(fx.srv))};
    inet_pton(AF_INET, from, &me.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) ||
        connect(fd, (struct sockaddr *)&to, sizeof to)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    send(fd, req, strlen(req), MSG_NOSIGNAL);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < sizeof buf && (got = recv(fd, buf + n, sizeof buf - 1 - n, 0)) > 0)
        n += (size_t)got;
    buf[n] = '\0';
    close(fd);
    const char *b = strstr(buf, "\r\n\r\n");
    snprintf(body, size, "%s", b ? b + 4 : "");
    return strncmp(buf, "HTTP/1.1 ", 9) == 0 ? strtol(buf + 9, NULL, 10) : -1;
}

/* Without [auth] one address that spent its share of the one user's open
 * agreements and quotes gets 403; another address still gets 201. */
static void test_two_addresses(void)
{
    char db[512];
    CU_ASSERT_FATAL(fresh_db("qq-addresses", db, sizeof db));
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx,
                                        "[negotiation]\nlead_time = PT0S\n"
                                        "[quota]\nmax_agreements_per_address = 2\n"
                                        "max_quotes_per_address = 1\n"
                                        "[site a]\nadapter = sim-batch\nnodes = 64\n",
                                        db),
                          0);
    static char body[65536];
    const char *doc = offer("anyone", 1, "PT1H");
    CU_ASSERT_EQUAL(post_from("127.0.0.2", "/agreements", doc, body, sizeof body), 201);
    CU_ASSERT_EQUAL(post_from("127.0.0.2", "/agreements", doc, body, sizeof body), 201);
    CU_ASSERT_EQUAL(post_from("127.0.0.2", "/agreements", doc, body, sizeof body), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "[quota] max_agreements_per_address = 2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "127.0.0.2"));
    CU_ASSERT_EQUAL(post_from("127.0.0.3", "/agreements", doc, body, sizeof body), 201);
    struct http_reply r;
    const char *const hdr[] = {"Content-Type: application/xml", NULL};
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), doc, strlen(doc), hdr, &r), 0);
    CU_ASSERT_EQUAL(r.status, 201);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(post_from("127.0.0.2", "/negotiations", doc, body, sizeof body), 201);
    CU_ASSERT_EQUAL(post_from("127.0.0.2", "/negotiations", doc, body, sizeof body), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "[quota] max_quotes_per_address = 1"));
    CU_ASSERT_EQUAL(post_from("127.0.0.3", "/negotiations", doc, body, sizeof body), 201);
    fixture_stop(&fx);
}

/* An offer of who for every node of site a for an hour, within 90 minutes. */
static char *full_hour(const char *who)
{
    char t[ACC_TIME_STRLEN];
    acc_time_format(acc_now() + 5400, t);
    static _Thread_local char buf[4096];
    const char *o = offer(who, 64, "PT1H");
    const char *at = strstr(o, "<co:Duration>");
    snprintf(buf, sizeof buf, "%.*s<co:Deadline>%s</co:Deadline>%s", (int)(at - o), o, t, at);
    return buf;
}

static void *reject(void *arg)
{
    (void)arg;
    struct http_reply r;
    post_as("alice", "/agreements", full_hour("alice"), &r);
    CU_ASSERT_EQUAL(r.status, 409);
    http_reply_free(&r);
    return NULL;
}

/* How many of who's agreements are in state. */
static int count_of(const char *who, const char *state)
{
    char path[256], auth[128];
    snprintf(path, sizeof path, "/agreements?state=%s&initiator=%s", state, who);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s-token-0123456789", who);
    const char *const hdr[] = {auth, NULL};
    struct http_reply r;
    if (http_do("GET", url(path), NULL, 0, hdr, &r))
        return -1;
    char *n = xml_get(r.body, "/co:AgreementList/@co:count");
    int v = n ? atoi(n) : -1;
    free(n);
    http_reply_free(&r);
    return v;
}

/* A burst of offers that find no slot (409, each kept Rejected) leaves at
 * most [database] max_rejected_per_user of them once answered. */
static void test_rejected_burst(void)
{
    CU_ASSERT_EQUAL_FATAL(start_users("qq-rejected", "[database]\nmax_rejected_per_user = 3\n"), 0);
    struct http_reply r;
    CU_ASSERT_EQUAL(post_as("bob", "/agreements", offer("bob", 64, "PT1H"), &r), 201);
    http_reply_free(&r);
    pthread_t t[12];
    for (int i = 0; i < 12; i++)
        pthread_create(&t[i], NULL, reject, NULL);
    for (int i = 0; i < 12; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(count_of("alice", "Rejected"), 3);
    CU_ASSERT_EQUAL(count_of("bob", "Observed"), 1);
    fixture_stop(&fx);
}

/* ------------------------------------------------- the embedded testbed */

static int start_embedded(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/qq-embedded.db", acc_test_tmpdir());
    return fixture_start(&fx, NULL, db);
}

static int stop_embedded(void)
{
    fixture_stop(&fx);
    return 0;
}

/* Every node of the testbed, 400 days ahead, for 100 years: 403 naming the
 * limit, and nothing stored. */
static void test_whole_testbed(void)
{
    char e[ACC_TIME_STRLEN], d[ACC_TIME_STRLEN], doc[4096];
    acc_time start = acc_now() + 400 * 86400;
    acc_time_format(start, e);
    acc_time_format(start + (int64_t)36526 * 86400, d);
    static const char comp[] =
        "<wsag:ServiceDescriptionTerm wsag:Name=\"%s\" wsag:ServiceName=\"metajob\">"
        "<co:Component><co:Site>%s</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>";
    char c[3][512];
    snprintf(c[0], sizeof c[0], comp, "a", "fzj-xd1", 64);
    snprintf(c[1], sizeof c[1], comp, "b", "caesar", 128);
    snprintf(c[2], sizeof c[2], comp, "c", "fh-brs", 32);
    snprintf(doc, sizeof doc,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>all</wsag:Name>"
             "<wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>"
             "</wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm "
             "wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\"><co:Schedule>"
             "<co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>P36525D</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
             "%s%s%s</wsag:All></wsag:Terms></wsag:AgreementOffer>",
             e, d, c[0], c[1], c[2]);
    const char *const hdr[] = {"Content-Type: application/xml", NULL};
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url("/agreements"), doc, strlen(doc), hdr, &r), 0);
    expect_fault(&r, 403, "QuotaExceeded", "[quota] max_nodes");
    http_reply_free(&r);
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url("/agreements"), NULL, 0, NULL, &r), 0);
    char *n = xml_get(r.body, "/co:AgreementList/@co:count");
    CU_ASSERT_STRING_EQUAL(n ? n : "", "0");
    free(n);
    http_reply_free(&r);
}

/* Each POST route takes its own media type only: 415 otherwise. */
static void test_media_types(void)
{
    static const struct {
        const char *path, *type;
        long status;
    } cases[] = {
        {"/negotiations", "application/json", 415},
        {"/negotiations", "text/plain; charset=utf-8", 415},
        {"/agreements", "application/json", 415},
        {"/agreements/aaaaaaaaaaaaaaaa/modify", "text/plain", 415},
        {"/agreements/aaaaaaaaaaaaaaaa/modify", "application/xml", 404},
        {"/agreements/aaaaaaaaaaaaaaaa/modify", "application/x-www-form-urlencoded", 415},
        {"/agreements/aaaaaaaaaaaaaaaa/terminate", "text/plain", 415},
        {"/agreements/aaaaaaaaaaaaaaaa/terminate", "application/json", 404},
    };
    const char *body = "<x/>";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s", cases[i].type);
        const char *const hdr[] = {ct, NULL};
        struct http_reply r;
        CU_ASSERT_EQUAL_FATAL(http_do("POST", url(cases[i].path), body, strlen(body), hdr, &r), 0);
        if (r.status != cases[i].status)
            fprintf(stderr, "\n  %s as %s: %ld\n", cases[i].path, cases[i].type, r.status);
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        if (cases[i].status == 415) {
            char *c = xml_get(r.body, "/co:Fault/@co:code");
            CU_ASSERT_STRING_EQUAL(c ? c : "", "UnsupportedMediaType");
            free(c);
        }
        http_reply_free(&r);
    }
}

/* Accept is read as media ranges with q values. */
static void test_accept(void)
{
    static const struct {
        const char *accept;
        const char *type; /* what the answer is */
    } cases[] = {
        {NULL, "application/xml"},
        {"application/json", "application/json"},
        {"application/json;q=0", "application/xml"},
        {"application/json; q=0.0, */*", "application/xml"},
        {"*/*", "application/xml"},
        {"application/*", "application/xml"},
        {"application/xml;q=0.5, application/json", "application/json"},
        {"application/json;q=0.4, application/xml;q=0.9", "application/xml"},
        {"text/html, application/json;q=0.8, */*;q=0.1", "application/json"},
        {"application/json, application/xml", "application/json"},
        {"application/xml, application/json", "application/xml"},
        {"APPLICATION/JSON", "application/json"},
        {"application/jsonx", "application/xml"},
        {"application/xml;q=0, application/json;q=0.001", "application/json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char a[256];
        snprintf(a, sizeof a, "Accept: %s", cases[i].accept ? cases[i].accept : "");
        const char *const hdr[] = {a, NULL};
        struct http_reply r;
        CU_ASSERT_EQUAL_FATAL(http_do("GET", url("/agreements/aaaaaaaaaaaaaaaa"), NULL, 0,
                                      cases[i].accept ? hdr : NULL, &r),
                              0);
        CU_ASSERT_EQUAL(r.status, 404);
        if (strncmp(r.content_type, cases[i].type, strlen(cases[i].type)) != 0)
            fprintf(stderr, "\n  Accept %s: %s\n", a, r.content_type);
        CU_ASSERT_EQUAL(strncmp(r.content_type, cases[i].type, strlen(cases[i].type)), 0);
        http_reply_free(&r);
    }
}

static const struct acc_test_case users[] = {
    {"open quotes per user and in all", test_quote_bounds},
    {"concurrent offers of one user", test_agreements_race},
    {"node-hours on a site", test_node_hours},
    {"two client addresses without [auth]", test_two_addresses},
    {"a burst of Rejected agreements", test_rejected_burst},
    {NULL, NULL},
};

static const struct acc_test_case embedded[] = {
    {"every node for 100 years", test_whole_testbed},
    {"media types", test_media_types},
    {"Accept", test_accept},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"users", NULL, NULL, users},
    {"embedded testbed", start_embedded, stop_embedded, embedded},
    {NULL, NULL, NULL, NULL},
};
