/* SPDX-License-Identifier: Apache-2.0 */
/* hostile_bench.c - how long an admitted client waits while hostile
 * connections press on each daemon's front end (issue 24).
 *
 * Against accordd (plain HTTP) and then accord-site (mutual TLS), each
 * in-process with its default connection bounds, a thread keeps HOSTILE
 * connections open from 50 loopback addresses (127.0.80.1-50): half send
 * nothing (no request, no TLS bytes), half send one byte of a request head
 * (or of a ClientHello) every 5 s.  Every one the daemon closes is opened
 * again at once, so the pressure never lets up.  Meanwhile an admitted
 * client from 127.0.0.1 makes TRIES requests, each on a new connection
 * (GET /healthz; accord-site: GET /v1/health with its certificate), 100 ms
 * apart: their median and maximum, and what the hostile side saw.
 *
 *   accord_hostile_bench [--hostile N] [--tries N] [--reopen-ms MS]
 *
 * --reopen-ms: how long a closed hostile connection waits before it is
 * opened again (0, the default: at once, a storm of reconnections; on one
 * machine that storm also takes the CPU the daemon and the client share).
 *
 * It prints figures; nothing is asserted.  Run: tests/bench/hostile-bench.sh */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/common/timefmt.h"
#include "../../lib/tls/tls_client.h"
#include "../../site/site.h"
#include "fixture.h"

#define ADDRESSES 50

static char certs[600];

/* ------------------------------------------------------------ the hostile */

struct hostile {
    unsigned port, n;
    int *fd;
    int64_t *next_byte; /* monotonic us; 0: a silent one */
    int64_t *reopen_at; /* closed: when to open it again */
    int64_t pace;       /* microseconds before a closed one is opened again */
    int ep;
    atomic_bool stop;
    atomic_uint open;               /* connected now */
    atomic_uint_least64_t reopened; /* closed by the daemon and opened again */
    pthread_t t;
};

static int hostile_connect(const struct hostile *h, unsigned i)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET};
    char from[32];
    snprintf(from, sizeof from, "127.0.80.%u", 1 + i % ADDRESSES);
    inet_pton(AF_INET, from, &a.sin_addr);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)h->port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        (connect(fd, (struct sockaddr *)&to, sizeof to) && errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLIN, .data.u32 = i};
    epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev);
    return fd;
}

/* Connection i was closed by the daemon: opened again now or after pace. */
static void hostile_closed(struct hostile *h, unsigned i)
{
    close(h->fd[i]);
    h->fd[i] = -1;
    atomic_fetch_sub(&h->open, 1);
    atomic_fetch_add(&h->reopened, 1);
    h->reopen_at[i] = acc_mono_us() + h->pace;
}

/* Opens connection i (again). */
static void hostile_reopen(struct hostile *h, unsigned i)
{
    h->fd[i] = hostile_connect(h, i);
    if (h->fd[i] >= 0)
        atomic_fetch_add(&h->open, 1);
    if (h->next_byte[i])
        h->next_byte[i] = acc_mono_us(); /* its first byte at once */
}

static void *hostile_main(void *arg)
{
    struct hostile *h = arg;
    struct epoll_event ev[256];
    while (!atomic_load(&h->stop)) {
        int n = epoll_wait(h->ep, ev, 256, 50);
        for (int k = 0; k < n; k++) {
            unsigned i = ev[k].data.u32;
            char buf[256];
            if (h->fd[i] < 0 || recv(h->fd[i], buf, sizeof buf, MSG_DONTWAIT) > 0)
                continue; /* an answer: read, the end comes later */
            hostile_closed(h, i);
        }
        int64_t now = acc_mono_us();
        for (unsigned i = 0; i < h->n; i++) {
            if (h->fd[i] < 0) {
                if (now >= h->reopen_at[i])
                    hostile_reopen(h, i);
            } else if (h->next_byte[i] && now >= h->next_byte[i]) {
                /* A request head or a TLS record header, a byte at a time. */
                (void)!send(h->fd[i], "\x16", 1, MSG_NOSIGNAL);
                h->next_byte[i] = now + 5000000;
            }
        }
    }
    return NULL;
}

static void hostile_start(struct hostile *h, unsigned port, unsigned n, int64_t pace)
{
    memset(h, 0, sizeof *h);
    h->port = port;
    h->n = n;
    h->pace = pace;
    h->reopen_at = calloc(n, sizeof *h->reopen_at);
    h->fd = malloc(n * sizeof *h->fd);
    h->next_byte = calloc(n, sizeof *h->next_byte);
    h->ep = epoll_create1(EPOLL_CLOEXEC);
    for (unsigned i = 0; i < n; i++) {
        h->fd[i] = -1;
        h->next_byte[i] = i % 2 ? 1 : 0; /* odd ones: slow bytes */
        hostile_reopen(h, i);
    }
    pthread_create(&h->t, NULL, hostile_main, h);
}

static void hostile_stop(struct hostile *h)
{
    atomic_store(&h->stop, true);
    pthread_join(h->t, NULL);
    for (unsigned i = 0; i < h->n; i++)
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    close(h->ep);
    free(h->fd);
    free(h->next_byte);
    free(h->reopen_at);
}

/* ------------------------------------------------------------ the admitted */

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p, (void)arg;
    return size * n;
}

/* Where a try's time went (libcurl's timings, microseconds from its start):
 * connected (TCP), handshake done (TLS), first byte of the answer. */
struct phases {
    int64_t connect, tls, first;
};

/* One GET on a new connection: microseconds, or -1 when it failed. */
static int64_t admitted_get(const char *url, bool tls, struct phases *ph)
{
    CURL *c = curl_easy_init();
    if (tls) {
        char cert[700], key[700], ca[700];
        snprintf(cert, sizeof cert, "%s/accord.crt", certs);
        snprintf(key, sizeof key, "%s/accord.key", certs);
        snprintf(ca, sizeof ca, "%s/ca.crt", certs);
        struct acc_tls_client tc = {ca, cert, key};
        acc_tls_curl_setup(c, &tc);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    int64_t t0 = acc_mono_us();
    long status = 0;
    CURLcode rc = curl_easy_perform(c);
    int64_t took = acc_mono_us() - t0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t v = 0;
    curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &v);
    ph->connect = v;
    curl_easy_getinfo(c, CURLINFO_APPCONNECT_TIME_T, &v);
    ph->tls = v;
    curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME_T, &v);
    ph->first = v;
    curl_easy_cleanup(c);
    return rc == CURLE_OK && status == 200 ? took : -1;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct run {
    unsigned hostile, tries;
    int64_t pace;
};

static void measure(const char *name, unsigned port, const char *url, bool tls,
                    const struct run *run)
{
    unsigned hostile = run->hostile, tries = run->tries;
    struct hostile h;
    hostile_start(&h, port, hostile, run->pace);
    sleep(2); /* the pressure settles: bounds hit, deadlines running */
    int64_t *us = calloc(tries, sizeof *us);
    int64_t *conn = calloc(tries, sizeof *conn), *hs = calloc(tries, sizeof *hs),
            *first = calloc(tries, sizeof *first);
    unsigned failed = 0, min_open = hostile;
    for (unsigned i = 0; i < tries; i++) {
        unsigned open = atomic_load(&h.open);
        min_open = open < min_open ? open : min_open;
        struct phases ph = {0, 0, 0};
        us[i] = admitted_get(url, tls, &ph);
        conn[i] = ph.connect;
        hs[i] = ph.tls;
        first[i] = ph.first;
        failed += us[i] < 0;
        usleep(100000);
    }
    uint64_t reopened = atomic_load(&h.reopened);
    hostile_stop(&h);
    qsort(us, tries, sizeof *us, cmp64);
    qsort(conn, tries, sizeof *conn, cmp64);
    qsort(hs, tries, sizeof *hs, cmp64);
    qsort(first, tries, sizeof *first, cmp64);
    printf("%s: %u hostile connections from %d addresses (half silent, half a byte per 5 s),"
           " each the daemon closes opened again after %lld ms: at least %u connected at each"
           " try, %llu closed by the daemon and opened again\n",
           name, hostile, ADDRESSES, (long long)(run->pace / 1000), min_open,
           (unsigned long long)reopened);
    if (failed)
        printf("  %u of %u tries FAILED\n", failed, tries);
    printf("  admitted client, new connection each: median %.1f ms, max %.1f ms (%u tries)\n",
           us[failed + (tries - failed) / 2] / 1000.0, us[tries - 1] / 1000.0, tries);
    printf("  of which, median: connected %.1f ms, TLS done %.1f ms, first byte %.1f ms\n",
           conn[tries / 2] / 1000.0, hs[tries / 2] / 1000.0, first[tries / 2] / 1000.0);
    free(us);
    free(conn);
    free(hs);
    free(first);
}

/* ---------------------------------------------------------------- daemons */

static void bench_accordd(const char *dir, const struct run *run)
{
    struct fixture fx;
    char db[700];
    snprintf(db, sizeof db, "%s/accord.db", dir);
    if (fixture_start(
            &fx, "[server]\nlog_level = error\n[site a]\nadapter = sim-batch\nnodes = 8\n", db)) {
        fprintf(stderr, "hostile_bench: accordd does not start\n");
        exit(1);
    }
    char url[128];
    snprintf(url, sizeof url, "%s/healthz", fx.base);
    measure("accordd", acc_http_port(fx.srv), url, false, run);
    fixture_stop(&fx);
}

static void bench_site(const char *dir, const struct run *run)
{
    snprintf(certs, sizeof certs, "%s/certs", dir);
    char cmd[1024], text[4096];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0)
        exit(1);
    snprintf(text, sizeof text,
             "[daemon]\nname = alpha\nlisten = 127.0.0.1:0\ndatabase = %s/alpha.db\n"
             "certificate = %s/site-alpha.crt\nkey = %s/site-alpha.key\nclient_ca = %s/ca.crt\n"
             "log_level = error\n[site alpha]\nadapter = sim-batch\nnodes = 8\n"
             "[peer accord-main]\nsubject = CN=accord-main\n",
             dir, certs, certs, certs);
    struct acc_site_config cfg;
    struct acc_site *site;
    struct acc_error err;
    if (acc_site_config_load_string(text, "bench", &cfg, &err) ||
        acc_site_start(&cfg, &site, &err)) {
        fprintf(stderr, "hostile_bench: %s\n", err.msg);
        exit(1);
    }
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/health", acc_site_port(site));
    measure("accord-site", acc_site_port(site), url, true, run);
    acc_site_stop(site);
}

int main(int argc, char **argv)
{
    struct run run = {.hostile = 5000, .tries = 50};
    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned v = (unsigned)strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--hostile") == 0 && v > 0)
            run.hostile = v;
        else if (strcmp(argv[i], "--tries") == 0 && v > 0)
            run.tries = v;
        else if (strcmp(argv[i], "--reopen-ms") == 0)
            run.pace = (int64_t)v * 1000;
        else {
            fprintf(stderr, "usage: %s [--hostile N] [--tries N] [--reopen-ms MS]\n", argv[0]);
            return 2;
        }
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char dir[] = "/tmp/accord-hostile-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bench_accordd(dir, &run);
    bench_site(dir, &run);
    curl_global_cleanup();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
