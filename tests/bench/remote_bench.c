/* SPDX-License-Identifier: Apache-2.0 */
/* remote_bench.c - the same 3-site negotiation through in-process adapters
 * and through remote adapters to three REAL accord-site daemons
 * (libaccord_site, each with its own SQLite journal and sim-batch calendar,
 * served on 127.0.0.1 over mutual TLS with the mkcerts.sh certificates),
 * driven through accordd's service layer (parse, store, plan, engine,
 * journal, settle).  The daemons run in this process (acc_site_start): the
 * same code as the accord-site binary minus main.c, no child processes to
 * clean up, and every figure of one run comes from one program.
 *
 * Prints, for each path, the median and p99 latency of one negotiation and
 * agreements/s with 16 concurrent clients; for the remote path also the
 * protocol calls per negotiation at each site, the sequential round trips a
 * negotiation waited for (the sum of the per-site calls only if they were
 * not concurrent), the median time of one call as the adapter saw it, and
 * how many TLS connections the adapters opened.  Prints figures; asserts
 * none.
 *
 *   accord_remote_bench [seconds of the 16-client run, default 10]
 *                       [negotiations of the latency run, default 1000]
 *                       [site threads, default 4 (accord-site's default)]
 *                       [durable yes|no, default yes (accordd and sites)]
 *                       [paths all|remote, default all: remote skips the
 *                        in-process runs, for profiling the remote path] */
#include <pthread.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "config.h"
#include "fixture.h"
#include "log.h"
#include "../../site/site.h"
#include "service.h"
#include "timefmt.h"
#include "xml.h"

static char dir[256], certs[512];
static const char *const names[3] = {"fzj-xd1", "caesar", "fh-brs"};
static const int64_t sizes[3] = {64, 128, 32};
static unsigned site_threads = 4;
static bool durable = true;

static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>bench</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
    "<co:Duration>PT15M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>fzj-xd1</co:Site><co:Nodes>1</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>caesar</co:Site><co:Nodes>1</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"c\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>fh-brs</co:Site><co:Nodes>1</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

/* The same with only its first component (one site). */
static const char offer1[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>bench</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
    "<co:Duration>PT15M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>fzj-xd1</co:Site><co:Nodes>1</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static const char *cert(const char *file)
{
    static char paths[8][600];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 600, "%s/%s", certs, file);
    return p;
}

/* The accordd configuration: in-process sim-batch sites, or remote ones. */
static void config_text(char *ini, size_t len, struct acc_site *const *site)
{
    size_t n = (size_t)snprintf(ini, len,
                                "[database]\ndurable = %s\n[negotiation]\nstrategy = intersect\n"
                                "max_rounds = 500\n[server]\nallow_control = yes\n"
                                /* one user's thousand negotiations: no bound on them */
                                "[quota]\nmax_agreements = unlimited\nmax_node_hours = unlimited\n"
                                "max_mbit_hours = unlimited\n",
                                durable ? "yes" : "no");
    for (int i = 0; i < 3 && n < len; i++) {
        if (!site)
            n += (size_t)snprintf(ini + n, len - n,
                                  "[site %s]\nadapter = sim-batch\nnodes = %lld\nload = no\n",
                                  names[i], (long long)sizes[i]);
        else
            n += (size_t)snprintf(ini + n, len - n,
                                  "[site %s]\nadapter = remote\nnodes = %lld\n"
                                  "url = https://127.0.0.1:%u\nca = %s\ncertificate = %s\n"
                                  "key = %s\nremote_name = %s\nconnections = 16\n",
                                  names[i], (long long)sizes[i], acc_site_port(site[i]),
                                  cert("ca.crt"), cert("accord.crt"), cert("accord.key"), names[i]);
    }
}

static struct acc_service *open_service(const char *name, struct acc_site *const *site,
                                        struct acc_config *cfg)
{
    char ini[4096], db[600];
    config_text(ini, sizeof ini, site);
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    struct acc_error err;
    struct acc_service *svc = NULL;
    if (acc_config_load_string(ini, name, cfg, &err) || acc_config_set_db(cfg, db, &err) ||
        acc_service_open(cfg, &svc, &err)) {
        fprintf(stderr, "remote_bench: %s\n", err.msg);
        exit(1);
    }
    return svc;
}

/* One real accord-site daemon on 127.0.0.1 (an ephemeral port) hosting the
 * sim-batch calendar of names[i], admitting accord-main with limits no
 * negotiation here comes near. */
static struct acc_site *start_site(const char *tag, int i)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[daemon]\nname = %s\nlisten = 127.0.0.1:0\ndatabase = %s/site-%s-%d.db\n"
             "durable = %s\ncertificate = %s\nkey = %s\nclient_ca = %s\nthreads = %u\n"
             "max_connections = 256\nlog_level = error\n"
             "[site %s]\nadapter = sim-batch\nnodes = %lld\nload = no\n"
             "[peer accord-main]\nsubject = CN=accord-main\nmax_nodes = %lld\n"
             "max_reservations = 1000000\nconnections = 64\n",
             names[i], dir, tag, i, durable ? "yes" : "no", cert("site-alpha.crt"),
             cert("site-alpha.key"), cert("ca.crt"), site_threads, names[i], (long long)sizes[i],
             (long long)sizes[i]);
    struct acc_site_config cfg;
    struct acc_error err;
    struct acc_site *s = NULL;
    if (acc_site_config_load_string(text, "remote_bench", &cfg, &err) ||
        acc_site_start(&cfg, &s, &err)) {
        fprintf(stderr, "remote_bench: site %s: %s\n", names[i], err.msg);
        exit(1);
    }
    return s;
}

/* CPU time of the whole process (accordd's service and the sites). */
static int64_t cpu_us(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (int64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000 + u.ru_utime.tv_usec +
           u.ru_stime.tv_usec;
}

static int64_t stat_of(struct acc_service *svc, int i, const char *what)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error err;
    int64_t v = -1;
    if (acc_service_control(svc, names[i], "stats", NULL, 0, &b, &err) == ACC_OK) {
        const char *p = strstr(acc_buf_str(&b), what);
        if (p)
            v = strtoll(p + strlen(what) + 1, NULL, 10);
    }
    acc_buf_release(&b);
    return v;
}

static void latency(struct acc_service *svc, const char *label, const char *doc, int n,
                    int64_t *median)
{
    int64_t *us = calloc((size_t)n, sizeof *us);
    int ok = 0;
    struct acc_error err;
    int64_t cpu0 = cpu_us();
    for (int i = 0; i < n; i++) {
        char id[ACC_ID_LEN + 1];
        acc_err rc = svc_negotiate_doc(svc, doc, id, &us[i], &err);
        if (rc == ACC_ERR_MALFORMED || rc == ACC_ERR_SCHEMA) {
            fprintf(stderr, "remote_bench: %s\n", err.msg);
            exit(1);
        }
        ok += rc == ACC_OK;
        if (rc && ok == 0 && i == 0)
            fprintf(stderr, "remote_bench: %s: %s\n", label, err.msg);
    }
    int64_t cpu = (cpu_us() - cpu0) / n;
    qsort(us, (size_t)n, sizeof *us, cmp_i64);
    printf("%-10s latency of one negotiation: median %6lld us, p99 %6lld us (%d/%d agreed), "
           "CPU %lld us per negotiation (all threads, sites included)\n",
           label, (long long)us[n / 2], (long long)us[(n * 99) / 100], ok, n, (long long)cpu);
    *median = us[n / 2];
    free(us);
}

struct run {
    struct acc_service *svc;
    int64_t until;
    atomic_long ok, failed;
};

static void *client(void *arg)
{
    struct run *r = arg;
    struct acc_error err;
    while (acc_mono_us() < r->until) {
        char id[ACC_ID_LEN + 1];
        if (svc_negotiate_doc(r->svc, offer, id, NULL, &err) == ACC_OK)
            atomic_fetch_add(&r->ok, 1);
        else
            atomic_fetch_add(&r->failed, 1);
    }
    return NULL;
}

static long throughput(struct acc_service *svc, const char *label, int seconds)
{
    enum { CLIENTS = 16 };
    struct run r = {.svc = svc};
    pthread_t th[CLIENTS];
    int64_t t0 = acc_mono_us();
    r.until = t0 + (int64_t)seconds * 1000000;
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&th[i], NULL, client, &r);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(th[i], NULL);
    double s = (double)(acc_mono_us() - t0) / 1e6;
    printf("%-10s 16 clients for %.1f s: %.0f agreements/s (%ld agreed, %ld not)\n", label, s,
           (double)atomic_load(&r.ok) / s, atomic_load(&r.ok), atomic_load(&r.failed));
    return atomic_load(&r.ok) + atomic_load(&r.failed);
}

/* The time of one protocol call as a remote adapter sees it (one at a time,
 * kept-alive connection): median of n previews, reserves, queries and
 * cancels against site 0, through an adapter of its own. */
static void call_times(struct acc_site *site, int n)
{
    char url[64], section[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u", acc_site_port(site));
    snprintf(section, sizeof section, "[site %s]", names[0]);
    struct acc_kv kv[] = {{"url", url},
                          {"ca", cert("ca.crt")},
                          {"certificate", cert("accord.crt")},
                          {"key", cert("accord.key")}};
    struct acc_adapter_env env = {.name = names[0],
                                  .section = section,
                                  .db_path = ":memory:",
                                  .settings = kv,
                                  .n_settings = 4,
                                  .nodes = sizes[0]};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find("remote"), &env, &ad, &err)) {
        fprintf(stderr, "remote_bench: %s\n", err.msg);
        exit(1);
    }
    const char *ops[4] = {"preview", "reserve", "query", "cancel"};
    int64_t *t[4];
    for (int o = 0; o < 4; o++)
        t[o] = calloc((size_t)n, sizeof *t[o]);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = names[0], .amount = 1};
    acc_time from = (acc_now() / 3600 + 1) * 3600;
    size_t frames = 0;
    int64_t cpu0 = cpu_us();
    for (int i = 0; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "calltime-%d", i);
        struct acc_frames f;
        struct acc_reservation rsv = {0};
        acc_frames_init(&f);
        int64_t t0 = acc_mono_us();
        acc_err rc =
            acc_adapter_preview(ad, &res, acc_now(), acc_now() + 14 * 86400, 900, &f, &err);
        frames += f.n;
        int64_t t1 = acc_mono_us();
        rc = rc ? rc : acc_adapter_reserve(ad, key, &res, from + 900 * (i % 90), 900, &rsv, &err);
        int64_t t2 = acc_mono_us();
        acc_reservation_release(&rsv);
        memset(&rsv, 0, sizeof rsv);
        rc = rc ? rc : acc_adapter_query(ad, key, NULL, &rsv, &err);
        int64_t t3 = acc_mono_us();
        rc = rc ? rc : acc_adapter_cancel(ad, key, NULL, &err);
        int64_t t4 = acc_mono_us();
        acc_reservation_release(&rsv);
        acc_frames_release(&f);
        if (rc) {
            fprintf(stderr, "remote_bench: call times: %s\n", err.msg);
            exit(1);
        }
        t[0][i] = t1 - t0, t[1][i] = t2 - t1, t[2][i] = t3 - t2, t[3][i] = t4 - t3;
    }
    printf("remote     one call, one at a time (median of %d):", n);
    for (int o = 0; o < 4; o++) {
        qsort(t[o], (size_t)n, sizeof *t[o], cmp_i64);
        printf(" %s %lld us%s", ops[o], (long long)t[o][n / 2], o < 3 ? "," : "\n");
        free(t[o]);
    }
    printf("remote     (previews of 14 days as the negotiations', %zu frames on average; CPU "
           "%lld us per call, both ends)\n",
           frames / (size_t)n, (long long)((cpu_us() - cpu0) / (4 * n)));
    acc_adapter_close(ad);
}

/* What each site saw per negotiation, and the TLS connections opened. */
static void remote_figures(struct acc_service *svc, const int64_t *calls0, long negotiations)
{
    struct acc_service_sites s;
    struct acc_error err;
    if (acc_service_sites(svc, &s, &err) == ACC_OK) {
        for (size_t i = 0; i < s.n_sites; i++)
            printf("remote     site %-8s health rtt %lld us (%s: %s)\n", s.sites[i].name,
                   (long long)s.sites[i].rtt_us, s.sites[i].endpoint, s.sites[i].health);
        acc_service_sites_release(&s);
    }
    for (int i = 0; i < 3; i++) {
        int64_t calls = stat_of(svc, i, "calls") - calls0[i];
        printf("remote     site %-8s %.2f protocol calls per negotiation (%lld exchanges, %lld "
               "retries, over %lld TLS connections)\n",
               names[i], negotiations ? (double)calls / (double)negotiations : 0.0,
               (long long)stat_of(svc, i, "attempts"), (long long)stat_of(svc, i, "retries"),
               (long long)stat_of(svc, i, "connects"));
    }
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
    int n = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1000;
    long threads = argc > 3 ? strtol(argv[3], NULL, 10) : 4;
    if (argc > 4)
        durable = strcmp(argv[4], "no") != 0;
    bool inproc = argc <= 5 || strcmp(argv[5], "remote") != 0;
    if (seconds < 1 || n < 1 || threads < 1 || threads > 64 ||
        (argc > 4 && strcmp(argv[4], "yes") != 0 && strcmp(argv[4], "no") != 0) ||
        (argc > 5 && strcmp(argv[5], "all") != 0 && strcmp(argv[5], "remote") != 0)) {
        fprintf(stderr, "usage: accord_remote_bench [seconds] [negotiations] [site threads] "
                        "[durable yes|no] [paths all|remote]\n");
        return 2;
    }
    site_threads = (unsigned)threads;
    acc_log_set_level(ACC_LOG_ERROR); /* the daemons' start-up lines are not figures */
    snprintf(dir, sizeof dir, "/tmp/accord-remote-bench-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(certs, sizeof certs, "%s/certs", dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "sh %s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR,
             certs);
    if (system(cmd) != 0)
        return 1;

    struct acc_error xerr;
    if (acc_xml_init(&xerr)) {
        fprintf(stderr, "remote_bench: %s\n", xerr.msg);
        return 1;
    }
    printf("3 sites, 16-client runs of %d s, %d negotiations for latency, durable = %s, "
           "accord-site threads = %u\n",
           seconds, n, durable ? "yes" : "no", site_threads);
    struct acc_config cfg;
    int64_t inproc_median = 0, remote_median = 0, inproc1 = 0, remote1 = 0;
    struct acc_service *svc = NULL;
    if (inproc) {
        svc = open_service("inproc-lat", NULL, &cfg);
        latency(svc, "in-process", offer, n, &inproc_median);
        latency(svc, "in-proc 1", offer1, n, &inproc1);
        acc_service_close(svc);
        acc_config_release(&cfg);
        svc = open_service("inproc-run", NULL, &cfg);
        throughput(svc, "in-process", seconds);
        acc_service_close(svc);
        acc_config_release(&cfg);
    }

    for (int round = 0; round < 2; round++) {
        struct acc_site *site[3];
        for (int i = 0; i < 3; i++)
            site[i] = start_site(round ? "run" : "lat", i);
        svc = open_service(round ? "remote-run" : "remote-lat", site, &cfg);
        int64_t calls0[3];
        for (int i = 0; i < 3; i++)
            calls0[i] = stat_of(svc, i, "calls");
        long done = n;
        if (round == 0)
            latency(svc, "remote", offer, n, &remote_median);
        else
            done = throughput(svc, "remote", seconds);
        remote_figures(svc, calls0, done);
        if (round == 0) {
            latency(svc, "remote 1", offer1, n, &remote1);
            if (inproc)
                printf(
                    "remote     what the remote path adds: %lld us with 3 sites, %lld us with 1 "
                    "(3 sites cost %.2f times 1: 1 if a round's calls ran fully concurrently, 3 if "
                    "one after another)\n",
                    (long long)(remote_median - inproc_median), (long long)(remote1 - inproc1),
                    remote1 - inproc1 > 0
                        ? (double)(remote_median - inproc_median) / (double)(remote1 - inproc1)
                        : 0.0);
            call_times(site[0], n < 200 ? n : 200);
        }
        acc_service_close(svc);
        acc_config_release(&cfg);
        for (int i = 0; i < 3; i++)
            acc_site_stop(site[i]);
    }
    acc_xml_cleanup();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return 0;
}
