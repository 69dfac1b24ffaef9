/* SPDX-License-Identifier: Apache-2.0 */
/* bench.c - Accord's figures (issue 2): prints, does not judge.
 *
 *   1. negotiation latency (median, p99) for 3 components + 3 links with the
 *      in-process simulated adapters: the service path (store, plan, engine,
 *      journal, settle) and the engine alone;
 *   2. sustained agreements per second with 16 concurrent HTTP clients
 *      (keep-alive, durable SQLite in WAL mode);
 *   3. mean preview rounds per negotiation under contention, iterative vs
 *      intersect, on the same workload;
 *   4. preview time over a calendar of 100,000 bookings.
 *
 * Usage: accord_bench [seconds for the HTTP run, default 10] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "calendar.h"
#include "config.h"
#include "engine.h"
#include "fixture.h"
#include "http_client.h"
#include "service.h"
#include "store.h"
#include "timefmt.h"
#include "tuning.h"
#include "xml.h"

#include <curl/curl.h>

static char dir[256];

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void percentiles(int64_t *v, size_t n, double *median, double *p99)
{
    qsort(v, n, sizeof *v, cmp_i64);
    *median = (double)v[n / 2];
    *p99 = (double)v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
}

/* Three sites, a full mesh of links, a background load. */
static const char testbed[] = "[database]\n"
                              "durable = %s\n"
                              "[negotiation]\n"
                              "strategy = %s\n"
                              "max_rounds = 500\n"
                              /* one user's thousands of agreements: no bound on them */
                              "[quota]\nmax_agreements = unlimited\nmax_node_hours = unlimited\n"
                              "max_mbit_hours = unlimited\n"
                              "[site fzj-xd1]\nadapter = sim-batch\nnodes = 64\nload = %s\n"
                              "[site caesar]\nadapter = sim-batch\nnodes = 128\nload = %s\n"
                              "[site fh-brs]\nadapter = sim-batch\nnodes = 32\nload = %s\n"
                              "[network wan]\nadapter = sim-network\nload = %s\n"
                              "[link l1]\nsites = fzj-xd1 caesar\ncapacity = 10000\nnetwork = wan\n"
                              "[link l2]\nsites = fzj-xd1 fh-brs\ncapacity = 10000\nnetwork = wan\n"
                              "[link l3]\nsites = caesar fh-brs\ncapacity = 10000\nnetwork = wan\n"
                              "[server]\nallow_control = yes\n";

static char *offer_doc(int nodes, const char *duration, int bw)
{
    char *buf = malloc(8192);
    snprintf(
        buf, 8192,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>bench</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
        "<co:Duration>%s</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Site>fzj-xd1</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Site>caesar</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"c\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Site>fh-brs</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"m\"><co:Link>"
        "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>%d</co:Bandwidth></co:Link>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"ac\" wsag:ServiceName=\"m\"><co:Link>"
        "<co:Between>a</co:Between><co:And>c</co:And><co:Bandwidth>%d</co:Bandwidth></co:Link>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"bc\" wsag:ServiceName=\"m\"><co:Link>"
        "<co:Between>b</co:Between><co:And>c</co:And><co:Bandwidth>%d</co:Bandwidth></co:Link>"
        "</wsag:ServiceDescriptionTerm>"
        "</wsag:All></wsag:Terms></wsag:AgreementOffer>",
        duration, nodes, nodes, nodes, bw, bw, bw);
    return buf;
}

static int open_service(const char *name, bool durable, const char *strategy, bool load,
                        struct acc_config *cfg, struct acc_service **svc)
{
    char ini[4096], db[512];
    const char *l = load ? "yes" : "no";
    snprintf(ini, sizeof ini, testbed, durable ? "yes" : "no", strategy, l, l, l, l);
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    struct acc_error err;
    if (acc_config_load_string(ini, name, cfg, &err) || acc_config_set_db(cfg, db, &err) ||
        acc_service_open(cfg, svc, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------- 1. negotiation latency */

static void bench_latency(bool durable)
{
    struct acc_config cfg;
    struct acc_service *svc;
    if (open_service(durable ? "latency-full" : "latency-normal", durable, "intersect", true, &cfg,
                     &svc))
        return;
    char *doc = offer_doc(1, "PT15M", 10);
    struct acc_error err;
    enum { N = 2000 };
    static int64_t us[N];
    size_t ok = 0;
    for (int i = 0; i < N; i++) {
        char id[ACC_ID_LEN + 1];
        acc_err rc = svc_negotiate_doc(svc, doc, id, &us[i], &err);
        if (rc == ACC_ERR_MALFORMED || rc == ACC_ERR_SCHEMA) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        ok += rc == ACC_OK;
    }
    double med, p99;
    percentiles(us, N, &med, &p99);
    printf("negotiation latency, service path, synchronous=%s: median %.0f us, p99 %.0f us "
           "(%zu/%d agreed; target median <= 1000 us)\n",
           durable ? "FULL" : "NORMAL", med, p99, ok, N);
    free(doc);
    acc_service_close(svc);
    acc_config_release(&cfg);
}

/* The engine alone, against the simulators, journal in memory. */
static acc_err no_journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                          struct acc_error *e)
{
    (void)ctx;
    (void)b;
    (void)n;
    (void)durable;
    (void)e;
    return ACC_OK;
}

static void bench_engine(void)
{
    char db[512];
    snprintf(db, sizeof db, "%s/engine.db", dir); /* the simulators' calendars go beside it */
    struct acc_error err;
    const char *sites[] = {"fzj-xd1", "caesar", "fh-brs"};
    int64_t nodes[] = {64, 128, 32};
    struct acc_adapter *ad[4];
    for (int i = 0; i < 3; i++) {
        struct acc_adapter_env env = {
            .name = sites[i], .section = sites[i], .db_path = db, .nodes = nodes[i]};
        acc_adapter_open(acc_adapter_kind_find("sim-batch"), &env, &ad[i], &err);
    }
    struct acc_link_def links[] = {{"l1", "fzj-xd1", "caesar", 10000},
                                   {"l2", "fzj-xd1", "fh-brs", 10000},
                                   {"l3", "caesar", "fh-brs", 10000}};
    struct acc_adapter_env nenv = {
        .name = "wan", .section = "wan", .db_path = db, .links = links, .n_links = 3};
    acc_adapter_open(acc_adapter_kind_find("sim-network"), &nenv, &ad[3], &err);
    struct acc_engine *eng;
    struct acc_engine_options eo = {0};
    acc_engine_new(&eo, &eng, &err);
    enum { N = 2000 };
    static int64_t us[N];
    for (int i = 0; i < N; i++) {
        struct acc_engine_item items[6] = {
            {.adapter = ad[0],
             .res = {.kind = ACC_RES_NODES, .name = "fzj-xd1", .amount = 1},
             .label = "site fzj-xd1"},
            {.adapter = ad[1],
             .res = {.kind = ACC_RES_NODES, .name = "caesar", .amount = 1},
             .label = "site caesar"},
            {.adapter = ad[2],
             .res = {.kind = ACC_RES_NODES, .name = "fh-brs", .amount = 1},
             .label = "site fh-brs"},
            {.adapter = ad[3],
             .res = {.kind = ACC_RES_BANDWIDTH, .name = "l1", .amount = 10},
             .label = "link l1"},
            {.adapter = ad[3],
             .res = {.kind = ACC_RES_BANDWIDTH, .name = "l2", .amount = 10},
             .label = "link l2"},
            {.adapter = ad[3],
             .res = {.kind = ACC_RES_BANDWIDTH, .name = "l3", .amount = 10},
             .label = "link l3"},
        };
        acc_time now = acc_now();
        struct acc_engine_request rq = {
            .agreement = "benchbenchbench0",
            .earliest = now + 5,
            .deadline = now + 14 * 86400,
            .duration = 900,
            .strategy = ACC_STRATEGY_INTERSECT,
            .max_rounds = 32,
            .call_timeout_us = 15000000,
            .items = items,
            .n_items = 6,
            .hooks = {no_journal, NULL, NULL, NULL},
        };
        struct acc_engine_result res;
        int64_t t0 = acc_mono_us();
        acc_engine_negotiate(eng, &rq, &res);
        us[i] = acc_mono_us() - t0;
        acc_engine_items_release(items, 6);
    }
    double med, p99;
    percentiles(us, N, &med, &p99);
    printf("negotiation latency, engine and simulators only (calendars written through, "
           "synchronous=NORMAL): median %.0f us, p99 %.0f us\n",
           med, p99);
    acc_engine_free(eng);
    for (int i = 0; i < 4; i++)
        acc_adapter_close(ad[i]);
}

/* ------------------------------------------------------ 2. HTTP throughput */

struct client {
    pthread_t tid;
    const char *url;
    const char *doc;
    atomic_bool *stop;
    long ok, other;
};

static size_t sink(char *d, size_t s, size_t n, void *u)
{
    (void)d;
    (void)u;
    return s * n;
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/xml");
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->doc);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    while (!atomic_load(c->stop)) {
        long status = 0;
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (status == 201)
            c->ok++;
        else
            c->other++;
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

static void bench_http(int seconds, bool durable)
{
    char ini[4096], db[512];
    snprintf(ini, sizeof ini, testbed, durable ? "yes" : "no", "intersect", "yes", "yes", "yes",
             "yes");
    snprintf(db, sizeof db, "%s/http-%s.db", dir, durable ? "full" : "normal");
    struct fixture fx;
    if (fixture_start(&fx, ini, db))
        return;
    char url[128];
    snprintf(url, sizeof url, "%s/agreements", fx.base);
    char *doc = offer_doc(1, "PT15M", 10);
    atomic_bool stop = false;
    struct client c[16];
    for (int i = 0; i < 16; i++) {
        c[i] = (struct client){.url = url, .doc = doc, .stop = &stop};
        pthread_create(&c[i].tid, NULL, client_main, &c[i]);
    }
    int64_t t0 = acc_mono_us();
    sleep((unsigned)seconds);
    atomic_store(&stop, true);
    long ok = 0, other = 0;
    for (int i = 0; i < 16; i++) {
        pthread_join(c[i].tid, NULL);
        ok += c[i].ok;
        other += c[i].other;
    }
    double secs = (double)(acc_mono_us() - t0) / 1e6;
    printf("throughput, 16 HTTP clients, keep-alive, WAL, synchronous=%s: %.0f agreements/s "
           "(%ld agreed, %ld other replies in %.1f s; target >= 1000/s)\n",
           durable ? "FULL" : "NORMAL", (double)ok / secs, ok, other, secs);
    free(doc);
    fixture_stop(&fx);
}

/* -------------------------------------------------- 3. rounds, contention */

struct contender {
    pthread_t tid;
    struct acc_service *svc;
    const char *doc;
    int n;
};

static void *contend(void *arg)
{
    struct contender *c = arg;
    for (int i = 0; i < c->n; i++) {
        char id[ACC_ID_LEN + 1];
        struct acc_error err;
        svc_negotiate_doc(c->svc, c->doc, id, NULL, &err);
    }
    return NULL;
}

static void bench_rounds(void)
{
    static const char *const strategies[] = {"iterative", "intersect"};
    double mean[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        struct acc_config cfg;
        struct acc_service *svc;
        char name[64];
        snprintf(name, sizeof name, "rounds-%s", strategies[k]);
        if (open_service(name, false, strategies[k], true, &cfg, &svc))
            return;
        /* Big components, so that agreements crowd each other and the
         * background load. */
        char *doc = offer_doc(8, "PT2H", 2000);
        struct acc_error err;
        struct contender c[8];
        int64_t t0 = acc_mono_us();
        for (int i = 0; i < 8; i++) {
            c[i] = (struct contender){.svc = svc, .doc = doc, .n = 25};
            pthread_create(&c[i].tid, NULL, contend, &c[i]);
        }
        for (int i = 0; i < 8; i++)
            pthread_join(c[i].tid, NULL);
        struct acc_list_filter f = {.limit = 1000};
        struct acc_agreement_list l;
        acc_service_list(svc, &f, &l, &err);
        unsigned rounds = 0, rollbacks = 0, agreed = 0;
        for (size_t i = 0; i < l.n; i++) {
            rounds += l.v[i].rounds;
            rollbacks += l.v[i].rollbacks;
            agreed += l.v[i].state == ACC_STATE_OBSERVED;
        }
        mean[k] = l.n ? (double)rounds / (double)l.n : 0;
        printf("contention, %-9s: %zu negotiations by 8 threads, %u agreed, mean %.2f preview "
               "rounds, mean %.2f rollbacks, %.1f ms each\n",
               strategies[k], l.n, agreed, mean[k], l.n ? (double)rollbacks / (double)l.n : 0,
               l.n ? (double)(acc_mono_us() - t0) / 1000.0 / (double)l.n * 8 : 0);
        acc_agreement_list_release(&l);
        free(doc);
        acc_service_close(svc);
        acc_config_release(&cfg);
    }
    printf("contention: intersect needs %.2f of iterative's rounds (target <= 0.50)\n",
           mean[0] > 0 ? mean[1] / mean[0] : 0);
}

/* ------------------------------------------------ 4. preview, 100k bookings */

static void bench_preview(void)
{
    enum { N = 100000, REPS = 2000 };
    struct acc_cal_booking *b = malloc(N * sizeof *b);
    struct acc_calendar cal;
    acc_calendar_init(&cal, 1024);
    uint64_t x = 12345;
    acc_time t0 = 1900000000;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        acc_time s = t0 + (acc_time)((x >> 20) % (365 * 86400));
        acc_time d = 900 + (acc_time)((x >> 8) % (8 * 3600));
        b[i] = (struct acc_cal_booking){s, s + d, 1 + (int64_t)((x >> 40) % 16)};
    }
    int64_t t = acc_mono_us();
    acc_calendar_load(&cal, b, N);
    int64_t load_us = acc_mono_us() - t;
    static int64_t us[REPS];
    size_t frames = 0;
    for (int r = 0; r < REPS; r++) {
        struct acc_frames f;
        acc_frames_init(&f);
        acc_time from = t0 + (acc_time)(r % 300) * 86400;
        int64_t s = acc_mono_us();
        acc_calendar_preview(&cal, from, from + 14 * 86400, 7200, 640, 4096, &f);
        us[r] = acc_mono_us() - s;
        frames += f.n;
        acc_frames_release(&f);
    }
    double med, p99;
    percentiles(us, REPS, &med, &p99);
    printf("preview over %d bookings (%zu change points), 14-day window, 640 of 1024 units: "
           "median %.1f us, p99 %.1f us, %.0f frames each (calendar built in %.0f ms; target "
           "<= 1000 us)\n",
           N, cal.n, med, p99, (double)frames / REPS, (double)load_us / 1000);
    for (int r = 0; r < 20; r++) {
        struct acc_frames f;
        acc_frames_init(&f);
        int64_t s = acc_mono_us();
        acc_calendar_preview(&cal, t0, t0 + 365 * 86400, 7200, 640, 1 << 20, &f);
        us[r] = acc_mono_us() - s;
        acc_frames_release(&f);
    }
    percentiles(us, 20, &med, &p99);
    printf("preview over %d bookings, the whole year at once: median %.1f us\n", N, med);
    acc_calendar_release(&cal);
    free(b);
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
    if (seconds < 1)
        seconds = 10;
    snprintf(dir, sizeof dir, "/tmp/accord-bench-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    acc_log_set_level(ACC_LOG_ERROR);
    acc_tune_process(); /* as accordd does */
    struct acc_error err;
    if (acc_xml_init(&err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bench_preview();
    bench_engine();
    bench_latency(true);
    bench_latency(false);
    bench_rounds();
    bench_http(seconds, true);
    bench_http(seconds, false);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", dir);
    return 0;
}
