/* SPDX-License-Identifier: Apache-2.0 */
/* site_bench.c - accord-site's own cost per protocol call, in-process on
 * 127.0.0.1 over mutual TLS with kept-alive connections (libcurl), a
 * sim-batch site of 100000 nodes (never busy):
 *
 *   1. one client, N rounds of preview, reserve, query, cancel: median and
 *      p99 of each call;
 *   2. C clients at once (a connection each), each reserve + query + cancel
 *      in a loop: cycles per second and the reserve's median and p99.
 *
 *   accord_site_bench [--rounds N] [--clients C] [--cycles K] [--durable yes|no]
 *
 * It prints figures; nothing is asserted.  Run: tests/bench/site-bench.sh */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/proto/proto.h"
#include "../../lib/tls/tls_client.h"
#include "../../site/site.h"

static char certs[512];
static unsigned port;
static acc_time T;

struct client {
    CURL *c;
    struct curl_slist *h;
    struct acc_buf out;
};

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    acc_buf_append(arg, p, size * n);
    return size * n;
}

static void client_init(struct client *cl)
{
    char cert[600], key[600], ca[600];
    snprintf(cert, sizeof cert, "%s/accord.crt", certs);
    snprintf(key, sizeof key, "%s/accord.key", certs);
    snprintf(ca, sizeof ca, "%s/ca.crt", certs);
    cl->c = curl_easy_init();
    struct acc_tls_client tc = {ca, cert, key};
    if (!cl->c || acc_tls_curl_setup(cl->c, &tc)) {
        fprintf(stderr, "site_bench: cannot set up libcurl\n");
        exit(1);
    }
    cl->h = curl_slist_append(NULL, "Content-Type: application/xml");
    curl_easy_setopt(cl->c, CURLOPT_HTTPHEADER, cl->h);
    curl_easy_setopt(cl->c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(cl->c, CURLOPT_WRITEDATA, &cl->out);
    curl_easy_setopt(cl->c, CURLOPT_TIMEOUT, 30L);
    acc_buf_init(&cl->out);
}

static void client_release(struct client *cl)
{
    curl_slist_free_all(cl->h);
    curl_easy_cleanup(cl->c);
    acc_buf_release(&cl->out);
}

/* One call; its time in microseconds (exits on anything but ok). */
static int64_t call(struct client *cl, const char *method, const char *path,
                    const struct acc_buf *body, long ok)
{
    char url[256];
    snprintf(url, sizeof url, "https://127.0.0.1:%u%s", port, path);
    curl_easy_setopt(cl->c, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(cl->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
        curl_easy_setopt(cl->c, CURLOPT_POSTFIELDS, body->data);
    } else {
        curl_easy_setopt(cl->c, CURLOPT_HTTPGET, 1L); /* no body; the method below */
    }
    curl_easy_setopt(cl->c, CURLOPT_CUSTOMREQUEST, method);
    acc_buf_reset(&cl->out);
    int64_t t0 = acc_mono_us();
    long status = 0;
    if (curl_easy_perform(cl->c) == CURLE_OK)
        curl_easy_getinfo(cl->c, CURLINFO_RESPONSE_CODE, &status);
    int64_t dt = acc_mono_us() - t0;
    if (status != ok) {
        fprintf(stderr, "site_bench: %s %s: %ld %s\n", method, path, status,
                cl->out.data ? cl->out.data : "");
        exit(1);
    }
    return dt;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void print(const char *what, int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    printf("  %-8s median %7.0f us   p99 %7.0f us   (%zu calls)\n", what, (double)v[n / 2],
           (double)v[n * 99 / 100 >= n ? n - 1 : n * 99 / 100], n);
}

static void bodies(struct acc_buf *pv, struct acc_buf *rs)
{
    struct acc_proto_preview p = {
        .kind = ACC_RES_NODES, .amount = 1, .from = T, .until = T + 12 * 3600, .duration = 3600};
    acc_strlcpy(p.resource, "alpha", sizeof p.resource);
    acc_proto_write_preview(&p, pv);
    struct acc_proto_reserve r = {.kind = ACC_RES_NODES, .amount = 1, .start = T, .duration = 3600};
    acc_strlcpy(r.resource, "alpha", sizeof r.resource);
    acc_proto_write_reserve(&r, rs);
}

struct worker {
    pthread_t t;
    unsigned id, cycles;
    int64_t *reserve_us;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct client cl;
    client_init(&cl);
    struct acc_buf pv = ACC_BUF_INIT, rs = ACC_BUF_INIT;
    bodies(&pv, &rs);
    for (unsigned i = 0; i < w->cycles; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/reservations/w%u-%u", w->id, i);
        w->reserve_us[i] = call(&cl, "PUT", path, &rs, 200);
        call(&cl, "GET", path, NULL, 200);
        call(&cl, "DELETE", path, NULL, 204);
    }
    acc_buf_release(&pv);
    acc_buf_release(&rs);
    client_release(&cl);
    return NULL;
}

/* --rounds N --clients C --cycles K --durable yes|no; 2 (said) when a
 * number is not one. */
static int parse_args(int argc, char **argv, unsigned *rounds, unsigned *clients, unsigned *cycles,
                      const char **durable)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int64_t v = 0;
        if (strcmp(argv[i], "--durable") == 0) {
            *durable = argv[i + 1];
            continue;
        }
        if (acc_parse_i64(argv[i + 1], 1, 1000000, &v, NULL)) {
            fprintf(stderr,
                    "usage: %s [--rounds N] [--clients C] [--cycles K] [--durable "
                    "yes|no]\n",
                    argv[0]);
            return 2;
        }
        if (strcmp(argv[i], "--rounds") == 0)
            *rounds = (unsigned)v;
        else if (strcmp(argv[i], "--clients") == 0)
            *clients = (unsigned)v;
        else if (strcmp(argv[i], "--cycles") == 0)
            *cycles = (unsigned)v;
    }
    return 0;
}

/* The site daemon alpha (100000 nodes of sim-batch) in dir, with the
 * certificates of tests/support/mkcerts.sh; port and T set. */
static int start_site(const char *dir, const char *durable, struct acc_site **site)
{
    snprintf(certs, sizeof certs, "%s/certs", dir);
    char cmd[1024], text[4096], db[600];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0)
        return 1;
    snprintf(db, sizeof db, "%s/alpha.db", dir);
    snprintf(text, sizeof text,
             "[daemon]\nname = alpha\nlisten = 127.0.0.1:0\ndatabase = %s\ndurable = %s\n"
             "certificate = %s/site-alpha.crt\nkey = %s/site-alpha.key\nclient_ca = %s/ca.crt\n"
             "threads = 4\nmax_connections = 256\nlog_level = error\n"
             "[site alpha]\nadapter = sim-batch\nnodes = 100000\n"
             "[peer accord-main]\nsubject = CN=accord-main\nmax_nodes = 8\n"
             "max_reservations = 1000000\nconnections = 200\n",
             db, durable, certs, certs, certs);
    struct acc_site_config cfg;
    struct acc_error err;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (acc_site_config_load_string(text, "bench", &cfg, &err) ||
        acc_site_start(&cfg, site, &err)) {
        fprintf(stderr, "site_bench: %s\n", err.msg);
        return 1;
    }
    port = acc_site_port(*site);
    T = (acc_now() / 3600 + 2) * 3600;
    return 0;
}

/* One client, each call of the protocol in turn on a kept-alive connection. */
static void bench_one_client(unsigned rounds)
{
    printf("one client, %u rounds (kept-alive connection):\n", rounds);
    int64_t *lat[4];
    for (int k = 0; k < 4; k++)
        lat[k] = calloc(rounds, sizeof **lat);
    struct client cl;
    client_init(&cl);
    struct acc_buf pv = ACC_BUF_INIT, rs = ACC_BUF_INIT;
    bodies(&pv, &rs);
    for (unsigned i = 0; i < rounds; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/reservations/s-%u", i);
        lat[0][i] = call(&cl, "POST", "/v1/preview", &pv, 200);
        lat[1][i] = call(&cl, "PUT", path, &rs, 200);
        lat[2][i] = call(&cl, "GET", path, NULL, 200);
        lat[3][i] = call(&cl, "DELETE", path, NULL, 204);
    }
    const char *names[] = {"preview", "reserve", "query", "cancel"};
    for (int k = 0; k < 4; k++) {
        print(names[k], lat[k], rounds);
        free(lat[k]);
    }
    client_release(&cl);
    acc_buf_release(&pv);
    acc_buf_release(&rs);
}

/* clients at once, cycles each of reserve + query + cancel. */
static void bench_clients(unsigned clients, unsigned cycles)
{
    struct worker *w = calloc(clients, sizeof *w);
    int64_t *all = calloc((size_t)clients * cycles, sizeof *all);
    int64_t t0 = acc_mono_us();
    for (unsigned i = 0; i < clients; i++) {
        w[i] = (struct worker){.id = i, .cycles = cycles, .reserve_us = all + (size_t)i * cycles};
        pthread_create(&w[i].t, NULL, work, &w[i]);
    }
    for (unsigned i = 0; i < clients; i++)
        pthread_join(w[i].t, NULL);
    double secs = (double)(acc_mono_us() - t0) / 1e6;
    printf("%u clients at once, %u cycles each of reserve + query + cancel:\n", clients, cycles);
    printf("  %.0f cycles/s (%.0f calls/s) over %.2f s\n", clients * cycles / secs,
           3.0 * clients * cycles / secs, secs);
    print("reserve", all, (size_t)clients * cycles);
    free(all);
    free(w);
}

int main(int argc, char **argv)
{
    unsigned rounds = 500, clients = 16, cycles = 100;
    const char *durable = "yes";
    if (parse_args(argc, argv, &rounds, &clients, &cycles, &durable))
        return 2;
    char dir[] = "/tmp/accord-site-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    struct acc_site *site = NULL;
    if (start_site(dir, durable, &site))
        return 1;

    printf("accord-site over mutual TLS on 127.0.0.1, sim-batch, durable = %s\n", durable);
    bench_one_client(rounds);
    bench_clients(clients, cycles);
    acc_site_stop(site);
    curl_global_cleanup();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
