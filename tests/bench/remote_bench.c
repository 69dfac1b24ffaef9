/* remote_bench.c - the same 3-site negotiation through in-process adapters
 * and through remote adapters to three site daemons on loopback with mutual
 * TLS (tests/support/fake_site.c: the adapter protocol over lib/proto and
 * lib/tls, each serving its own sim-batch calendar), driven through
 * accordd's service layer (parse, store, plan, engine, journal, settle).
 * Prints the median and p99 latency of one negotiation and agreements/s
 * with 16 concurrent clients for each path, the sites' round trips and how
 * many TLS connections the remote adapters opened.  Prints figures; asserts
 * none.  Usage: accord_remote_bench [seconds of the 16-client run, default 10]
 * [negotiations of the latency run, default 1000] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "config.h"
#include "fake_site.h"
#include "fixture.h"
#include "service.h"
#include "timefmt.h"
#include "xml.h"

static char dir[256], certs[512];
static const char *const names[3] = {"fzj-xd1", "caesar", "fh-brs"};
static const int64_t sizes[3] = {64, 128, 32};

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
static void config_text(char *ini, size_t len, const struct fake_site *const *site)
{
    size_t n = (size_t)snprintf(ini, len,
                                "[database]\ndurable = yes\n[negotiation]\nstrategy = intersect\n"
                                "max_rounds = 500\nworkers = 8\n[server]\nallow_control = yes\n");
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
                                  names[i], (long long)sizes[i], (unsigned)fake_site_port(site[i]),
                                  cert("ca.crt"), cert("accord.crt"), cert("accord.key"), names[i]);
    }
}

static struct acc_service *open_service(const char *name, const struct fake_site *const *site,
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

static void latency(struct acc_service *svc, const char *label, int n)
{
    int64_t *us = calloc((size_t)n, sizeof *us);
    int ok = 0;
    struct acc_error err;
    for (int i = 0; i < n; i++) {
        char id[ACC_ID_LEN + 1];
        acc_err rc = svc_negotiate_doc(svc, offer, id, &us[i], &err);
        if (rc == ACC_ERR_MALFORMED || rc == ACC_ERR_SCHEMA) {
            fprintf(stderr, "remote_bench: %s\n", err.msg);
            exit(1);
        }
        ok += rc == ACC_OK;
        if (rc && ok == 0 && i == 0)
            fprintf(stderr, "remote_bench: %s: %s\n", label, err.msg);
    }
    qsort(us, (size_t)n, sizeof *us, cmp_i64);
    printf("%-10s latency of one negotiation: median %6lld us, p99 %6lld us (%d/%d agreed)\n",
           label, (long long)us[n / 2], (long long)us[(n * 99) / 100], ok, n);
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

static void throughput(struct acc_service *svc, const char *label, int seconds)
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
}

/* Each remote site's health round trip and the connections its adapter opened. */
static void remote_figures(struct acc_service *svc)
{
    struct acc_service_sites s;
    struct acc_error err;
    if (acc_service_sites(svc, &s, &err) == ACC_OK) {
        for (size_t i = 0; i < s.n_sites; i++)
            printf("remote     site %-8s health rtt %lld us, %llu calls (%s: %s)\n",
                   s.sites[i].name, (long long)s.sites[i].rtt_us,
                   (unsigned long long)s.sites[i].calls, s.sites[i].endpoint, s.sites[i].health);
        acc_service_sites_release(&s);
    }
    for (int i = 0; i < 3; i++) {
        struct acc_buf b = ACC_BUF_INIT;
        if (acc_service_control(svc, names[i], "stats", NULL, 0, &b, &err) == ACC_OK) {
            const char *c = strstr(acc_buf_str(&b), "connects ");
            const char *a = strstr(acc_buf_str(&b), "attempts ");
            printf("remote     site %-8s %lld exchanges over %lld TLS connections\n", names[i],
                   a ? strtoll(a + 9, NULL, 10) : -1LL, c ? strtoll(c + 9, NULL, 10) : -1LL);
        }
        acc_buf_release(&b);
    }
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
    int n = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1000;
    if (seconds < 1 || n < 1) {
        fprintf(stderr, "usage: accord_remote_bench [seconds] [negotiations]\n");
        return 2;
    }
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
    struct acc_config cfg;
    struct acc_service *svc = open_service("inproc-lat", NULL, &cfg);
    latency(svc, "in-process", n);
    acc_service_close(svc);
    acc_config_release(&cfg);
    svc = open_service("inproc-run", NULL, &cfg);
    throughput(svc, "in-process", seconds);
    acc_service_close(svc);
    acc_config_release(&cfg);

    for (int round = 0; round < 2; round++) {
        struct acc_adapter *backing[3];
        struct fake_site *site[3];
        for (int i = 0; i < 3; i++) {
            char db[600], section[64];
            snprintf(db, sizeof db, "%s/site-%d-%d.db", dir, round, i);
            snprintf(section, sizeof section, "[site %s]", names[i]);
            struct acc_kv kv[] = {{"load", "no"}};
            struct acc_adapter_env env = {.name = names[i],
                                          .section = section,
                                          .db_path = db,
                                          .durable = true,
                                          .settings = kv,
                                          .n_settings = 1,
                                          .nodes = sizes[i]};
            struct acc_error err;
            if (acc_adapter_open(acc_adapter_kind_find("sim-batch"), &env, &backing[i], &err)) {
                fprintf(stderr, "remote_bench: %s\n", err.msg);
                return 1;
            }
            struct fake_site_cfg fc = {.name = names[i],
                                       .ad = backing[i],
                                       .certificate = cert("site-alpha.crt"),
                                       .key = cert("site-alpha.key"),
                                       .client_ca = cert("ca.crt"),
                                       .threads = 0};
            site[i] = fake_site_start(&fc);
            if (!site[i])
                return 1;
        }
        svc = open_service(round ? "remote-run" : "remote-lat",
                           (const struct fake_site *const *)site, &cfg);
        if (round == 0)
            latency(svc, "remote", n);
        else
            throughput(svc, "remote", seconds);
        remote_figures(svc);
        acc_service_close(svc);
        acc_config_release(&cfg);
        for (int i = 0; i < 3; i++) {
            fake_site_stop(site[i]);
            acc_adapter_close(backing[i]);
        }
    }
    acc_xml_cleanup();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return 0;
}
