/* SPDX-License-Identifier: Apache-2.0 */
/* hostile3_bench.c - the three hostile cases of issue 31 that a security
 * tester reproduced against the front end (lib/httpd), each on a daemon
 * in-process with its DEFAULT bounds, as an operator runs it:
 *
 *   A  accordd, kept-alive fill: from 66 addresses (127.0.81.1-66), 64
 *      connections each (client_connections), 4224 in all (over
 *      connection_limit, 4096), each GET /healthz, its answer read, then
 *      idle; a new client from 127.0.0.1 then makes 10 requests, each on a
 *      new connection, 200 ms apart.
 *   B  accord-site, an admitted peer locks out another: accord-main opens
 *      2048 TLS connections (max_connections), each a whole PUT head and
 *      then one body byte every 15 s; peer alice makes 20 requests after
 *      3 s of it and 10 more after request_timeout (hostile3_site.c).
 *   C  accordd, slow readers of large lists: 1000 agreements, then from 30
 *      addresses (127.0.82.1-30) 64 connections each GET
 *      /agreements?limit=1000 and read nothing (SO_RCVBUF 4096); after 5 s
 *      the process's memory, the answer bytes held, what the readers got
 *      and whether a new client still gets /healthz.
 *
 *   accord_hostile3_bench [--only A|B|C] [--site-seconds N] [--scale F]
 *                         [--name-bytes N]
 *
 * --scale multiplies the hostile side's counts (addresses, connections,
 * agreements; the CI smoke runs 0.05); --site-seconds is when B's second
 * batch starts (default 40: past request_timeout, 30 s, from every head).
 * --name-bytes (at most 4096) names C's agreements at that length: a small
 * SO_RCVBUF does not keep the server's send buffer small (Linux grows it to
 * tcp_wmem's maximum, 4 MiB by default), so a list of 1000 small agreements
 * (about 330 KiB) goes whole into the kernel and the front end holds none
 * of it; names of 4000 bytes make each list about 4 MiB, more than the
 * kernel takes.
 * It prints figures; nothing is asserted.  Built with
 * -DACC_BENCH_OLD_STATS it compiles against a front end whose
 * acc_httpd_stats counts only refused, expired and waiting (182f8d6), to
 * measure the version before.  Run: tests/bench/hostile3-bench.sh */
#include "hostile3.h"

#include <arpa/inet.h>
#include <errno.h>
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

#include "../../lib/common/log.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/tls/tls_client.h"
#include "fixture.h"

double h3_scale = 1.0;
char h3_certs[600];

unsigned h3_scaled(unsigned n)
{
    unsigned v = (unsigned)(n * h3_scale + 0.5);
    return v ? v : 1;
}

/* The process's resident memory, KiB (accordd runs in it). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* The kernel's TCP buffers in all, KiB (/proc/net/sockstat): what it holds
 * of answers sent and not yet read lies there, not in the process. */
static long tcp_kib(void)
{
    FILE *f = fopen("/proc/net/sockstat", "r");
    char line[256];
    long pages = -1;
    while (f && fgets(line, sizeof line, f)) {
        const char *mem = strncmp(line, "TCP:", 4) == 0 ? strstr(line, " mem ") : NULL;
        if (mem)
            pages = strtol(mem + 5, NULL, 10);
    }
    if (f)
        fclose(f);
    return pages < 0 ? -1 : pages * (sysconf(_SC_PAGESIZE) >> 10);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------ the well-behaved */

static size_t keep(char *p, size_t size, size_t n, void *arg)
{
    if (arg)
        acc_buf_append(arg, p, size * n);
    return size * n;
}

long h3_get(const char *url, const char *who, struct acc_buf *body, int64_t *us, CURLcode *rc)
{
    CURL *c = curl_easy_init();
    if (who) {
        char cert[700], key[700], ca[700];
        snprintf(cert, sizeof cert, "%s/%s.crt", h3_certs, who);
        snprintf(key, sizeof key, "%s/%s.key", h3_certs, who);
        snprintf(ca, sizeof ca, "%s/ca.crt", h3_certs);
        struct acc_tls_client tc = {ca, cert, key};
        acc_tls_curl_setup(c, &tc);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    int64_t t0 = acc_mono_us();
    *rc = curl_easy_perform(c);
    *us = acc_mono_us() - t0;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    return status;
}

void h3_tries(const char *label, const char *url, const char *who, unsigned n, unsigned gap_ms)
{
    int64_t *ok = calloc(n, sizeof *ok);
    unsigned answered = 0;
    char why[160] = "";
    for (unsigned i = 0; i < n; i++) {
        int64_t us;
        CURLcode rc;
        long status = h3_get(url, who, NULL, &us, &rc);
        if (rc == CURLE_OK && status == 200)
            ok[answered++] = us;
        else if (!why[0] && rc != CURLE_OK)
            snprintf(why, sizeof why, "%s after %.1f ms", curl_easy_strerror(rc), us / 1000.0);
        else if (!why[0])
            snprintf(why, sizeof why, "HTTP %ld after %.1f ms", status, us / 1000.0);
        if (i + 1 < n)
            usleep(gap_ms * 1000);
    }
    qsort(ok, answered, sizeof *ok, cmp64);
    printf("  %s: %u of %u answered 200", label, answered, n);
    if (answered)
        printf(", median %.1f ms, max %.1f ms", ok[answered / 2] / 1000.0,
               ok[answered - 1] / 1000.0);
    if (why[0])
        printf("; the first failed: %s", why);
    printf("\n");
    fflush(stdout);
    free(ok);
}

/* ------------------------------------------------------------ the crowd */

/* Plain HTTP connections from loopback addresses NET.1, NET.2, ... (PER
 * each, connection i from NET.(1 + i % addresses) so that each address's
 * are opened spread over the whole burst), each sending one request as
 * soon as it is connected.  One the daemon closes before its answer
 * (refused at accept, or at the limit) is opened again after PACE; one it
 * closes after its answer only when `again`. */
enum { NOT_SENT = 0, SENT = 1 }; /* status below 100; then the answer's code */
#define PACE_US 1000000

struct crowd {
    unsigned port, n, addresses;
    const char *net, *request;
    bool peek;  /* look at the answer's first bytes, read nothing (C) */
    bool again; /* open one again after the daemon closes it once answered (A) */
    int rcvbuf; /* SO_RCVBUF before connect; 0: the system's */
    int *fd;
    unsigned short *status;
    int64_t *reopen_at;
    uint64_t opened, early, late; /* closed before an answer, after it */
    int ep;
    pthread_mutex_t lock; /* the arrays and counts, between the thread and crowd_count */
    atomic_bool stop;
    pthread_t t;
};

static void crowd_open(struct crowd *c, unsigned i)
{
    c->status[i] = NOT_SENT;
    c->reopen_at[i] = acc_mono_us() + PACE_US; /* unless it opens */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    if (c->rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->rcvbuf, sizeof c->rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET};
    char from[32];
    snprintf(from, sizeof from, "%s.%u", c->net, 1 + i % c->addresses);
    inet_pton(AF_INET, from, &a.sin_addr);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        (connect(fd, (struct sockaddr *)&to, sizeof to) && errno != EINPROGRESS)) {
        close(fd);
        return;
    }
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u32 = i};
    epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev);
    c->fd[i] = fd;
    c->reopen_at[i] = INT64_MAX;
    c->opened++;
}

static void crowd_closed(struct crowd *c, unsigned i)
{
    close(c->fd[i]);
    c->fd[i] = -1;
    bool answered = c->status[i] >= 100;
    if (answered)
        c->late++;
    else
        c->early++;
    if (!answered || c->again)
        c->reopen_at[i] = acc_mono_us() + PACE_US;
}

/* An event on connection i: connected (its request goes), an answer, or
 * its end. */
static void crowd_event(struct crowd *c, unsigned i, uint32_t events)
{
    int fd = c->fd[i];
    if (fd < 0)
        return;
    if (c->status[i] == NOT_SENT) {
        if (events & (EPOLLERR | EPOLLHUP)) {
            crowd_closed(c, i);
        } else if (events & EPOLLOUT) {
            (void)!send(fd, c->request, strlen(c->request), MSG_NOSIGNAL);
            c->status[i] = SENT;
            /* a peeking reader hears of each new arrival once (edge) */
            struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (c->peek ? EPOLLET : 0),
                                     .data.u32 = i};
            epoll_ctl(c->ep, EPOLL_CTL_MOD, fd, &ev);
        }
        return;
    }
    char buf[16384];
    ssize_t n = recv(fd, buf, c->peek ? 16 : sizeof buf, MSG_DONTWAIT | (c->peek ? MSG_PEEK : 0));
    if (n >= 12 && c->status[i] == SENT)
        c->status[i] = memcmp(buf, "HTTP/1.", 7) == 0 ? (unsigned short)atoi(buf + 9) : 999;
    /* a reader that reads nothing sees the end as RDHUP, data or not */
    if (n == 0 || (n < 0 && errno != EAGAIN) || (c->peek && (events & (EPOLLRDHUP | EPOLLHUP))))
        crowd_closed(c, i);
    else if (!c->peek) /* read the rest of the answer now */
        while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
            ;
}

static void *crowd_main(void *arg)
{
    struct crowd *c = arg;
    struct epoll_event ev[512];
    while (!atomic_load(&c->stop)) {
        int n = epoll_wait(c->ep, ev, 512, 20);
        pthread_mutex_lock(&c->lock);
        for (int k = 0; k < n; k++)
            crowd_event(c, ev[k].data.u32, ev[k].events);
        int64_t now = acc_mono_us();
        for (unsigned i = 0; i < c->n; i++)
            if (c->fd[i] < 0 && now >= c->reopen_at[i])
                crowd_open(c, i);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

static void crowd_start(struct crowd *c)
{
    c->fd = malloc(c->n * sizeof *c->fd);
    c->status = calloc(c->n, sizeof *c->status);
    c->reopen_at = calloc(c->n, sizeof *c->reopen_at);
    c->ep = epoll_create1(EPOLL_CLOEXEC);
    pthread_mutex_init(&c->lock, NULL);
    for (unsigned i = 0; i < c->n; i++) {
        c->fd[i] = -1;
        crowd_open(c, i); /* as fast as the kernel takes them */
    }
    pthread_create(&c->t, NULL, crowd_main, c);
}

static void crowd_stop(struct crowd *c)
{
    atomic_store(&c->stop, true);
    pthread_join(c->t, NULL);
    for (unsigned i = 0; i < c->n; i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    close(c->ep);
    pthread_mutex_destroy(&c->lock);
    free(c->fd);
    free(c->status);
    free(c->reopen_at);
}

struct crowd_count {
    unsigned open, held, waiting;   /* open now: all, answered, not yet answered */
    unsigned ok, busy, many, other; /* answers seen on connections, open or closed: 200, 503, 429 */
    uint64_t opened, early, late;
};

static void crowd_count(struct crowd *c, struct crowd_count *k)
{
    memset(k, 0, sizeof *k);
    pthread_mutex_lock(&c->lock);
    for (unsigned i = 0; i < c->n; i++) {
        unsigned s = c->status[i];
        if (c->fd[i] >= 0) {
            k->open++;
            k->held += s >= 100;
            k->waiting += s < 100;
        }
        k->ok += s == 200;
        k->busy += s == 503;
        k->many += s == 429;
        k->other += s >= 100 && s != 200 && s != 503 && s != 429;
    }
    k->opened = c->opened;
    k->early = c->early;
    k->late = c->late;
    pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- accordd */

static void start_accordd(struct fixture *fx, const char *dir, const char *ini)
{
    char db[700];
    snprintf(db, sizeof db, "%s/accord-%ld.db", dir, (long)acc_mono_us());
    if (fixture_start(fx, ini, db)) {
        fprintf(stderr, "hostile3_bench: accordd does not start\n");
        exit(1);
    }
}

static void print_front(struct fixture *fx)
{
    struct acc_httpd_stats st;
    acc_httpd_stats(atomic_load(&fx->ctx.httpd), &st);
#ifdef ACC_BENCH_OLD_STATS
    printf("  front end: %llu refused at accept (pending_connections), %llu closed at their"
           " head's deadline, %u waiting for a head (this version counts nothing else)\n",
           (unsigned long long)st.refused, (unsigned long long)st.expired, st.waiting);
#else
    printf("  front end: %llu idle connections evicted, %llu refused when full, %u open, %llu"
           " refused at accept (pending_connections), %llu closed at their head's deadline;"
           " %zu KiB unsent, %llu answers refused for it (503)\n",
           (unsigned long long)st.evicted, (unsigned long long)st.full, st.open,
           (unsigned long long)st.refused, (unsigned long long)st.expired, st.unsent >> 10,
           (unsigned long long)st.unsent_refused);
#endif
}

/* A: idle kept-alive connections at connection_limit. */
static void bench_fill(const char *dir)
{
    struct fixture fx;
    start_accordd(&fx, dir, "[site a]\nadapter = sim-batch\nnodes = 8\n");
    struct crowd c = {
        .port = acc_http_port(fx.srv),
        .addresses = h3_scaled(66),
        .net = "127.0.81",
        .request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        .again = true,
    };
    c.n = c.addresses * fx.cfg.client_connections;
    printf("A. accordd, kept-alive fill (connection_limit %u, client_connections %u, idle"
           " timeout %u s): %u connections from %u addresses (127.0.81.1-%u), each GET"
           " /healthz, its answer read, then idle; one the daemon closes is opened again 1 s"
           " later\n",
           fx.cfg.connection_limit, fx.cfg.client_connections, fx.cfg.timeout, c.n, c.addresses,
           c.addresses);
    int64_t t0 = acc_mono_us();
    crowd_start(&c);
    /* filled: the most held idle at once has not grown for a second (those
     * over the limit never get an answer, or take another's place) */
    struct crowd_count k;
    unsigned last = 0;
    int64_t since = t0;
    do {
        usleep(100000);
        crowd_count(&c, &k);
        if (k.held > last)
            since = acc_mono_us(), last = k.held;
    } while ((!last || acc_mono_us() - since < 1000000) && acc_mono_us() - t0 < 30000000);
    printf("  hostile, filled in %.1f s: %u held idle (answered, open), %u open waiting for an"
           " answer\n",
           (since - t0) / 1e6, k.held, k.waiting);
    char url[128];
    snprintf(url, sizeof url, "%s/healthz", fx.base);
    h3_tries("new client from 127.0.0.1, GET /healthz on a new connection each, 200 ms apart", url,
             NULL, 10, 200);
    crowd_count(&c, &k);
    printf("  hostile, at the end: %u held idle, %u waiting for an answer; since the start %llu"
           " opened, %llu closed by the daemon before an answer, %llu after it; answers 200 %u,"
           " 429 %u, other %u\n",
           k.held, k.waiting, (unsigned long long)k.opened, (unsigned long long)k.early,
           (unsigned long long)k.late, k.ok, k.many, k.other + k.busy);
    print_front(&fx);
    crowd_stop(&c);
    fixture_stop(&fx);
}

/* An offer of one node, named by name (the list shows each name). */
static const char offer_fmt[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>%s</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
    "<co:Schedule><co:Duration>PT15M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>a</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

static void print_readers(struct crowd *c, double at)
{
    struct crowd_count k;
    crowd_count(c, &k);
    printf("  at %.1f s: the process's VmRSS %ld MiB, the kernel's TCP buffers (all sockets)"
           " %ld MiB; readers' heads: 200 %u, 503 %u, 429 %u, other %u, none yet %u (%u open,"
           " %llu closed before an answer and opened again)\n",
           at, rss_kib() >> 10, tcp_kib() >> 10, k.ok, k.busy, k.many, k.other, k.waiting, k.open,
           (unsigned long long)k.early);
}

/* C: readers that ask for large answers and read none of them. */
static void bench_readers(const char *dir, unsigned name_bytes)
{
    struct fixture fx;
    /* the quota is lifted only so that one user fills the list */
    start_accordd(&fx, dir,
                  "[quota]\nmax_agreements = unlimited\n"
                  "[site a]\nadapter = sim-batch\nnodes = 100000\n");
    unsigned agreements = h3_scaled(1000), made = 0;
    size_t len = name_bytes ? name_bytes : 8;
    char *name = malloc(len + 1), *doc = malloc(sizeof offer_fmt + len);
    memset(name, 'n', len);
    name[len] = '\0';
    sprintf(doc, offer_fmt, name);
    int64_t t0 = acc_mono_us();
    for (unsigned i = 0; i < agreements; i++) {
        char id[ACC_ID_LEN + 1];
        struct acc_error err;
        made += svc_negotiate_doc(fx.svc, doc, id, NULL, &err) == ACC_OK;
    }
    free(doc);
    free(name);
    char url[160];
    snprintf(url, sizeof url, "%s/agreements?limit=1000", fx.base);
    struct acc_buf one;
    acc_buf_init(&one);
    int64_t us;
    CURLcode rc;
    long status = h3_get(url, NULL, &one, &us, &rc);
    struct crowd c = {
        .port = acc_http_port(fx.srv),
        .addresses = h3_scaled(30),
        .net = "127.0.82",
        .request = "GET /agreements?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        .peek = true,
        .rcvbuf = 4096,
    };
    c.n = c.addresses * fx.cfg.client_connections;
    printf("C. accordd, slow readers (client_connections %u", fx.cfg.client_connections);
#ifndef ACC_BENCH_OLD_STATS
    printf(", max_unsent %zu MiB, client_unsent %zu MiB", fx.cfg.max_unsent >> 20,
           fx.cfg.client_unsent >> 20);
#endif
    printf("): %u agreements (names of %zu bytes) made in %.1f s; one GET /agreements?limit=1000: "
           "HTTP %ld, %zu"
           " KiB in %.1f ms\n",
           made, len, (acc_mono_us() - t0) / 1e6, status, one.len >> 10, us / 1000.0);
    acc_buf_release(&one);
    printf("  %u readers from %u addresses (127.0.82.1-%u), SO_RCVBUF 4096, each the same GET"
           " and then reading nothing; before them VmRSS %ld MiB, TCP buffers %ld MiB\n",
           c.n, c.addresses, c.addresses, rss_kib() >> 10, tcp_kib() >> 10);
    t0 = acc_mono_us();
    crowd_start(&c);
    sleep(5);
    print_readers(&c, (acc_mono_us() - t0) / 1e6);
    print_front(&fx);
    snprintf(url, sizeof url, "%s/healthz", fx.base);
    h3_tries("new client from 127.0.0.1, GET /healthz on a new connection each, 200 ms apart", url,
             NULL, 10, 200);
    /* the rest of the readers' answers, if the 5 s did not see them all */
    struct crowd_count k;
    for (crowd_count(&c, &k); k.waiting && acc_mono_us() - t0 < 60000000; crowd_count(&c, &k))
        usleep(200000);
    print_readers(&c, (acc_mono_us() - t0) / 1e6);
    print_front(&fx);
    crowd_stop(&c);
    fixture_stop(&fx);
}

int main(int argc, char **argv)
{
    const char *only = "ABC";
    unsigned site_seconds = 40, name_bytes = 0;
    bool bad = argc % 2 == 0; /* options come in pairs */
    for (int i = 1; i + 1 < argc && !bad; i += 2) {
        const char *v = argv[i + 1];
        if (strcmp(argv[i], "--only") == 0 && v[0] && strchr("ABC", v[0]))
            only = v;
        else if (strcmp(argv[i], "--site-seconds") == 0 && atoi(v) > 0)
            site_seconds = (unsigned)atoi(v);
        else if (strcmp(argv[i], "--name-bytes") == 0 && atoi(v) >= 0 && atoi(v) <= 4096)
            name_bytes = (unsigned)atoi(v);
        else if (strcmp(argv[i], "--scale") == 0 && atof(v) > 0)
            h3_scale = atof(v);
        else
            bad = true;
    }
    if (bad) {
        fprintf(stderr,
                "usage: %s [--only A|B|C] [--site-seconds N] [--scale F] [--name-bytes N]\n",
                argv[0]);
        return 2;
    }
    /* Both ends of every connection are in this process: A holds 2 x 4224. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char dir[] = "/tmp/accord-hostile3-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* the in-process accordd logs as the configuration's log_level would */
    acc_log_set_level(ACC_LOG_ERROR);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strchr(only, 'A'))
        bench_fill(dir);
    if (strchr(only, 'B'))
        h3_bench_site(dir, site_seconds);
    if (strchr(only, 'C'))
        bench_readers(dir, name_bytes);
    curl_global_cleanup();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
