/* SPDX-License-Identifier: Apache-2.0 */
/* test_hung_site.c - a hung site does not stall everyone (issue 32): accordd
 * in-process on real sockets, site h's previews hang (a simulator fault)
 * while 40 clients send offers for it and 4 others send offers for sites a
 * and b.  The others are served meanwhile; h's offers get fast 503s naming
 * it once its circuit breaker opens (most before a negotiation starts); /metrics and /healthz show
 * it; and the breaker closes again once h answers.  No timing is asserted beyond "fast" (machines
 * are noisy): tests/bench/hung-site-bench.sh measures the other sites' throughput. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "http_suite.h"
#include "testutil.h"
#include "timefmt.h"

#define HUNG_CLIENTS  40
#define OTHER_CLIENTS 4

static const char ini[] = "[server]\n"
                          "allow_control = yes\n"
                          "client_connections = 256\n"
                          "connection_limit = 512\n"
                          "pending_connections = 256\n"
                          "[database]\n"
                          "durable = no\n"
                          "[negotiation]\n"
                          "adapter_timeout = PT1S\n"
                          "workers = 8\n"
                          "adapter_max_calls = 2\n"
                          "breaker_failures = 3\n"
                          "breaker_cooldown = PT2S\n"
                          "[quota]\n"
                          "max_agreements = 1000000\n"
                          "[site h]\nadapter = sim-batch\nnodes = 1000\n"
                          "[site a]\nadapter = sim-batch\nnodes = 100000\n"
                          "[site b]\nadapter = sim-batch\nnodes = 100000\n";

static atomic_bool stop;

struct client {
    pthread_t tid;
    const char *doc;
    bool hung; /* its offers are for h */
    /* what it saw */
    unsigned agreed, open_503, busy_503, other;
    int64_t slowest_open_us; /* of the 503s that named an open breaker */
    bool named_site, said_when;
    char last_other[160]; /* what the last other answer was */
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    char u[128];
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    while (!atomic_load(&stop)) {
        struct http_reply r;
        int64_t t0 = acc_mono_us();
        struct acc_client_request rq = {
            .method = "POST", .url = u, .body = c->doc, .len = strlen(c->doc), .headers = XML_HDR};
        struct acc_client_reply cr;
        char why[ACC_CLIENT_ERROR_SIZE] = "";
        int rc = acc_client_do(&rq, &cr, why, sizeof why);
        r = (struct http_reply){.status = cr.status, .body = cr.body};
        int64_t took = acc_mono_us() - t0;
        if (rc == 0 && r.status == 201) {
            c->agreed++;
        } else if (rc == 0 && r.status == 503 && r.body &&
                   strstr(r.body, "circuit breaker is open")) {
            c->open_503++;
            c->slowest_open_us = took > c->slowest_open_us ? took : c->slowest_open_us;
            c->named_site |= strstr(r.body, "adapter h") != NULL;
            c->said_when |= strstr(r.body, "tried again at") != NULL ||
                            strstr(r.body, "probe call is under way") != NULL;
        } else if (rc == 0 && r.status == 503 && r.body && strstr(r.body, "in flight")) {
            c->busy_503++;
        } else {
            c->other++;
            snprintf(c->last_other, sizeof c->last_other, "%d %ld %.120s", rc, rc ? 0 : r.status,
                     rc       ? why
                     : r.body ? r.body
                              : "");
        }
        http_reply_free(&r);
        if (c->hung) /* as a client heeding Retry-After would, more or less */
            usleep(50000);
    }
    return NULL;
}

/* GET path into a malloc'd string (NULL on failure). */
static char *get_text(const char *path)
{
    struct http_reply r;
    char u[256];
    snprintf(u, sizeof u, "%s%s", fx.base, path);
    if (http_do("GET", u, NULL, 0, NULL, &r) != 0)
        return NULL;
    char *s = r.body ? strdup(r.body) : NULL;
    http_reply_free(&r);
    return s;
}

/* The value of one sample line of /metrics, or -1. */
static long long metric(const char *sample)
{
    char *m = get_text("/metrics");
    long long v = -1;
    char *p = m ? strstr(m, sample) : NULL;
    if (p)
        sscanf(p + strlen(sample), " %lld", &v);
    free(m);
    return v;
}

static void control(const char *what)
{
    struct http_reply r;
    char u[256];
    snprintf(u, sizeof u, "%s/adapters/h/control/%s", fx.base, what);
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    http_reply_free(&r);
}

static void test_hung_site_does_not_stall_others(void)
{
    char db[256];
    CU_ASSERT_FATAL(acc_test_db("hung", db, sizeof db));
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, ini, db), 0);
    const char *h[] = {"h:1"}, *a[] = {"a:1"}, *b[] = {"b:1"};
    char *doc_h = strdup(hs_offer("hung", "<co:Duration>PT1H</co:Duration>", h, 1, 0));
    char *doc_a = strdup(hs_offer("other", "<co:Duration>PT1H</co:Duration>", a, 1, 0));
    char *doc_b = strdup(hs_offer("other", "<co:Duration>PT1H</co:Duration>", b, 1, 0));
    CU_ASSERT_FATAL(doc_h && doc_a && doc_b);

    /* every preview of h hangs 3 s, past adapter_timeout */
    control("fault?call=preview&action=hang&seconds=3&count=1000000");
    struct client c[HUNG_CLIENTS + OTHER_CLIENTS];
    memset(c, 0, sizeof c);
    atomic_store(&stop, false);
    for (int i = 0; i < HUNG_CLIENTS + OTHER_CLIENTS; i++) {
        c[i].hung = i < HUNG_CLIENTS;
        c[i].doc = c[i].hung ? doc_h : i % 2 ? doc_a : doc_b;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&c[i].tid, NULL, client_main, &c[i]), 0);
    }
    /* the breaker opens: /metrics and /healthz say so, naming h */
    long long open = 0;
    for (int i = 0; i < 200 && open != 1; i++) {
        usleep(100000);
        open = metric("accord_adapter_breaker_open{site=\"h\"}");
    }
    CU_ASSERT_EQUAL(open, 1);
    char *health = get_text("/healthz");
    CU_ASSERT_PTR_NOT_NULL(health);
    CU_ASSERT_PTR_NOT_NULL(health ? strstr(health, "degraded") : NULL);
    CU_ASSERT_PTR_NOT_NULL(health ? strstr(health, "circuit breaker open for h (") : NULL);
    free(health);
    CU_ASSERT_EQUAL(metric("accord_adapter_breaker_open{site=\"a\"}"), 0);
    sleep(3); /* clients on all sites keep going meanwhile */
    atomic_store(&stop, true);
    unsigned agreed_h = 0, open_503 = 0, busy_503 = 0, other = 0, served = 0;
    int64_t slowest = 0;
    bool named = true, when = true;
    for (int i = 0; i < HUNG_CLIENTS + OTHER_CLIENTS; i++) {
        pthread_join(c[i].tid, NULL);
        if (c[i].hung) {
            agreed_h += c[i].agreed;
            open_503 += c[i].open_503;
            busy_503 += c[i].busy_503;
            other += c[i].other;
            if (c[i].open_503) {
                named &= c[i].named_site;
                when &= c[i].said_when;
            }
            slowest = c[i].slowest_open_us > slowest ? c[i].slowest_open_us : slowest;
        } else {
            served += c[i].agreed;
            CU_ASSERT_EQUAL(c[i].open_503 + c[i].busy_503 + c[i].other, 0);
            if (c[i].other)
                printf("\n  client %d on a or b: %u failed, the last: %s\n", i, c[i].other,
                       c[i].last_other);
        }
    }
    printf("\n  h: %u agreed, %u open 503s (slowest %.0f ms), %u busy 503s, %u other; "
           "a and b: %u agreed\n",
           agreed_h, open_503, (double)slowest / 1000, busy_503, other, served);
    CU_ASSERT_EQUAL(agreed_h, 0);
    CU_ASSERT_TRUE(open_503 > 0);
    CU_ASSERT_TRUE(named);
    CU_ASSERT_TRUE(when);
    /* refused at once, not after adapter_timeout (1 s): generous for a
     * loaded machine, strict enough to tell */
    CU_ASSERT_TRUE(slowest < 900000);
    CU_ASSERT_TRUE(served >= 10);
    CU_ASSERT_TRUE(metric("accord_adapter_calls_refused_total{site=\"h\",reason=\"open\"}") > 0);
    /* most were refused before a negotiation started: nothing stored for them */
    CU_ASSERT_TRUE(metric("accord_offers_total{result=\"breaker_open\"}") > 0);
    CU_ASSERT_TRUE(metric("accord_adapter_breaker_opened_total{site=\"h\"}") >= 1);
    CU_ASSERT_EQUAL(metric("accord_adapter_calls_refused_total{site=\"a\",reason=\"open\"}"), 0);
    /* at most adapter_max_calls of h's calls were ever in flight */
    CU_ASSERT_TRUE(metric("accord_adapter_calls_in_flight{site=\"h\"}") <= 2);

    /* h answers again: after the cool-down a probe goes through and closes it */
    control("clear");
    bool agreed = false;
    char u[128];
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    for (int i = 0; i < 100 && !agreed; i++) {
        struct http_reply r;
        CU_ASSERT_EQUAL(http_do("POST", u, doc_h, strlen(doc_h), XML_HDR, &r), 0);
        agreed = r.status == 201;
        http_reply_free(&r);
        if (!agreed)
            usleep(200000);
    }
    CU_ASSERT_TRUE(agreed);
    CU_ASSERT_EQUAL(metric("accord_adapter_breaker_open{site=\"h\"}"), 0);
    health = get_text("/healthz");
    CU_ASSERT_PTR_NOT_NULL(health ? strstr(health, "ok: ") : NULL);
    free(health);
    free(doc_h);
    free(doc_a);
    free(doc_b);
    fixture_stop(&fx);
}

static const struct acc_test_case tests[] = {
    {"a hung site does not stall the others", test_hung_site_does_not_stall_others},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"hung site", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
