/* SPDX-License-Identifier: Apache-2.0 */
/* hostile3_site.c - case B of accord_hostile3_bench (hostile3_bench.c):
 * one admitted peer of accord-site tries to lock another out.
 *
 * The site admits two peers with the default bounds: accord-main (the
 * hostile one) and alice.  accord-main opens 2048 TLS connections (the
 * default max_connections), each a whole request head (PUT
 * /v1/reservations/kNNN, Content-Length: 1000) and then one body byte every
 * 15 s.  They come from 256 loopback addresses (8 each, under the default
 * pending_connections of 16 per address) and at most 64 are in their
 * handshake or head at once (2048 handshakes begun together take this
 * process longer than header_timeout), so that what bounds them is the
 * peer's own `connections`, not the address's or the head's deadline.
 * alice makes 20 requests 3 s after the last head and 10 more once
 * request_timeout has passed for every hostile head.  alice is also admin,
 * only so that she can read /metrics (the site keeps its front end to
 * itself): her `connections` are the default, as accord-main's. */
#define _GNU_SOURCE /* POLLRDHUP */
#include "hostile3.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/timefmt.h"
#include "../../lib/tls/tls_client.h"
#include "../../site/site.h"

#define BYTE_EVERY_US (15 * 1000000LL)
/* How often a paused request is let run without a byte: paused in its
 * body, libcurl reads nothing, not even an answer that came early. */
#define POKE_US 1000000LL
/* Hostile connections in their handshake or head at once. */
#define OPENING 64

/* One hostile request: its body goes a byte at a time, when due. */
struct upload {
    CURL *h;
    bool headed; /* libcurl asked for the body: the head is sent */
    bool due, done;
    int fd;        /* its socket (libcurl's callbacks); -1: none */
    unsigned sent; /* body bytes handed to libcurl */
    long code;     /* the answer's status; 0: none */
};

struct slowpeer {
    CURLM *m;
    struct upload *u;
    unsigned n, added, opening; /* added to the multi handle; of them, not headed nor done */
    struct curl_slist *hdr;
    pthread_mutex_t lock; /* the multi handle and u, between the thread and the counts */
    atomic_bool stop;
    pthread_t t;
};

/* libcurl's read callback: one byte when one is due, else a pause (the
 * driving loop lifts it every 15 s). */
static size_t one_byte(char *buf, size_t size, size_t n, void *arg)
{
    struct upload *u = arg;
    u->headed = true;
    if (!u->due || size * n < 1)
        return CURL_READFUNC_PAUSE;
    u->due = false;
    u->sent++;
    buf[0] = '<';
    return 1;
}

/* libcurl's socket callbacks: which socket is the request's (libcurl says
 * so only once a transfer is over). */
static int note_socket(void *arg, curl_socket_t fd, curlsocktype purpose)
{
    (void)purpose;
    ((struct upload *)arg)->fd = fd;
    return CURL_SOCKOPT_OK;
}

static int close_socket(void *arg, curl_socket_t fd)
{
    struct upload *u = arg;
    if (u->fd == fd)
        u->fd = -1;
    return close(fd);
}

static size_t drop(char *p, size_t size, size_t n, void *arg)
{
    (void)p, (void)arg;
    return size * n;
}

/* libcurl's handles are the driving thread's alone: it also unpauses them. */
static void *slow_main(void *arg)
{
    struct slowpeer *p = arg;
    int64_t next = acc_mono_us() + BYTE_EVERY_US, poke = acc_mono_us() + POKE_US;
    while (!atomic_load(&p->stop)) {
        pthread_mutex_lock(&p->lock);
        p->opening = 0;
        for (unsigned i = 0; i < p->added; i++)
            p->opening += !p->u[i].headed && !p->u[i].done;
        for (; p->added < p->n && p->opening < OPENING; p->opening++)
            curl_multi_add_handle(p->m, p->u[p->added++].h);
        int running, left;
        curl_multi_perform(p->m, &running);
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(p->m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *h = msg->easy_handle;
            char *priv = NULL;
            curl_easy_getinfo(h, CURLINFO_PRIVATE, &priv);
            struct upload *u = (struct upload *)priv;
            u->done = true;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &u->code);
            curl_multi_remove_handle(p->m, h);
        }
        int64_t now = acc_mono_us();
        if (now >= poke) {
            bool byte = now >= next;
            for (unsigned i = 0; i < p->added; i++) {
                if (!p->u[i].done) {
                    p->u[i].due |= byte;
                    curl_easy_pause(p->u[i].h, CURLPAUSE_CONT);
                }
            }
            next += byte ? BYTE_EVERY_US : 0;
            poke = now + POKE_US;
        }
        pthread_mutex_unlock(&p->lock);
        curl_multi_poll(p->m, NULL, 0, 100, NULL);
    }
    return NULL;
}

static void slow_start(struct slowpeer *p, unsigned port, unsigned n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->u = calloc(n, sizeof *p->u);
    p->m = curl_multi_init();
    /* every request a connection of its own, all at once */
    curl_multi_setopt(p->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
    curl_multi_setopt(p->m, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    curl_multi_setopt(p->m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    p->hdr = curl_slist_append(NULL, "Content-Type: application/xml");
    p->hdr = curl_slist_append(p->hdr, "Expect:"); /* the body follows the head at once */
    char cert[700], key[700], ca[700];
    snprintf(cert, sizeof cert, "%s/accord.crt", h3_certs);
    snprintf(key, sizeof key, "%s/accord.key", h3_certs);
    snprintf(ca, sizeof ca, "%s/ca.crt", h3_certs);
    struct acc_tls_client tc = {ca, cert, key};
    for (unsigned i = 0; i < n; i++) {
        struct upload *u = &p->u[i];
        u->due = true; /* the first byte with the head */
        u->h = curl_easy_init();
        acc_tls_curl_setup(u->h, &tc);
        char url[128], from[64];
        snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/reservations/k%u", port, i);
        snprintf(from, sizeof from, "host!127.0.%u.%u", 83 + (i % 256) / 128, 1 + i % 128);
        curl_easy_setopt(u->h, CURLOPT_URL, url);
        curl_easy_setopt(u->h, CURLOPT_INTERFACE, from);
        curl_easy_setopt(u->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(u->h, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(u->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(u->h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(u->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)1000);
        curl_easy_setopt(u->h, CURLOPT_READFUNCTION, one_byte);
        curl_easy_setopt(u->h, CURLOPT_READDATA, u);
        curl_easy_setopt(u->h, CURLOPT_HTTPHEADER, p->hdr);
        curl_easy_setopt(u->h, CURLOPT_WRITEFUNCTION, drop);
        curl_easy_setopt(u->h, CURLOPT_PRIVATE, (char *)u);
        u->fd = -1;
        curl_easy_setopt(u->h, CURLOPT_SOCKOPTFUNCTION, note_socket);
        curl_easy_setopt(u->h, CURLOPT_SOCKOPTDATA, u);
        curl_easy_setopt(u->h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
        curl_easy_setopt(u->h, CURLOPT_CLOSESOCKETDATA, u);
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_create(&p->t, NULL, slow_main, p);
}

static void slow_stop(struct slowpeer *p)
{
    atomic_store(&p->stop, true);
    curl_multi_wakeup(p->m);
    pthread_join(p->t, NULL);
    for (unsigned i = 0; i < p->n; i++) {
        if (i < p->added && !p->u[i].done)
            curl_multi_remove_handle(p->m, p->u[i].h);
        curl_easy_cleanup(p->u[i].h);
    }
    curl_multi_cleanup(p->m);
    curl_slist_free_all(p->hdr);
    pthread_mutex_destroy(&p->lock);
    free(p->u);
}

/* Whether the site has closed the connection of a request libcurl still
 * runs: libcurl reads the end but goes on until a send fails, a byte or
 * two (15 or 30 s) later. */
static bool ended(const struct upload *u)
{
    struct pollfd pf = {.fd = u->fd, .events = POLLRDHUP};
    return u->fd >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* What the hostile uploads got so far. */
static void slow_print(struct slowpeer *p, int64_t t0)
{
    unsigned many = 0, answered = 0, closed = 0, sending = 0, most = 0;
    long other = 0;
    pthread_mutex_lock(&p->lock);
    for (unsigned i = 0; i < p->n; i++) {
        const struct upload *u = &p->u[i];
        if (!u->done)
            ended(u) ? closed++ : sending++;
        else if (u->code == 429)
            many++;
        else if (u->code)
            answered++, other = u->code;
        else
            closed++;
        most = u->sent > most ? u->sent : most;
    }
    pthread_mutex_unlock(&p->lock);
    printf("  hostile at %.1f s: %u answered 429, %u answered otherwise",
           (acc_mono_us() - t0) / 1e6, many, answered);
    if (answered)
        printf(" (e.g. HTTP %ld)", other);
    printf(", %u closed by the site with no answer read, %u open and sending (%u body bytes sent "
           "at most)\n",
           closed, sending, most);
}

/* The site's front end, as its /metrics says (read as alice, the admin). */
static void print_metrics(unsigned port)
{
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/metrics", port);
    struct acc_buf body;
    acc_buf_init(&body);
    int64_t us;
    CURLcode rc;
    long status = h3_get(url, "alice", &body, &us, &rc);
    if (rc != CURLE_OK || status != 200) {
        printf("  site front end: /metrics unreachable (%s, HTTP %ld)\n", curl_easy_strerror(rc),
               status);
        acc_buf_release(&body);
        return;
    }
    printf("  site front end (/metrics):");
    /* The counters, not the request-duration histogram's many lines. */
    const char *prefix = "accord_http_", *histogram = "accord_http_request_duration_seconds";
    for (const char *line = acc_buf_str(&body); line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, prefix, strlen(prefix)) == 0 &&
            strncmp(line, histogram, strlen(histogram)) != 0)
            printf(" %.*s;", (int)(len - strlen(prefix)), line + strlen(prefix));
        line = end ? end + 1 : NULL;
    }
    printf("\n");
    acc_buf_release(&body);
}

void h3_bench_site(const char *dir, unsigned seconds)
{
    snprintf(h3_certs, sizeof h3_certs, "%s/certs", dir);
    char cmd[1024], text[4096];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR,
             h3_certs);
    if (system(cmd) != 0)
        exit(1);
    snprintf(text, sizeof text,
             "[daemon]\nname = alpha\nlisten = 127.0.0.1:0\ndatabase = %s/alpha.db\n"
             "certificate = %s/site-alpha.crt\nkey = %s/site-alpha.key\nclient_ca = %s/ca.crt\n"
             "log_level = error\n[site alpha]\nadapter = sim-batch\nnodes = 8\n"
             "[peer accord-main]\nsubject = CN=accord-main\n"
             "[peer alice]\nsubject = CN=alice\nadmin = yes\n",
             dir, h3_certs, h3_certs, h3_certs);
    struct acc_site_config cfg;
    struct acc_site *site;
    struct acc_error err;
    if (acc_site_config_load_string(text, "bench", &cfg, &err)) {
        fprintf(stderr, "hostile3_bench: %s\n", err.msg);
        exit(1);
    }
    unsigned n = h3_scaled(2048);
    printf("B. accord-site (max_connections %u, pending_connections %u per address, header"
           " timeout %u s, idle timeout %u s",
           cfg.max_connections, cfg.pending_connections, cfg.header_timeout, cfg.timeout);
#ifndef ACC_BENCH_OLD_STATS
    printf(", request_timeout %u s", cfg.request_timeout);
#endif
    printf(", each peer's connections %u): peer accord-main opens %u TLS connections from %u"
           " addresses, each a PUT head (Content-Length: 1000), then a body byte every 15 s\n",
           cfg.peers[0].connections, n, n < 256 ? n : 256);
    if (acc_site_start(&cfg, &site, &err)) {
        fprintf(stderr, "hostile3_bench: %s\n", err.msg);
        exit(1);
    }
    unsigned port = acc_site_port(site);
    struct slowpeer p;
    int64_t t0 = acc_mono_us();
    slow_start(&p, port, n);
    /* every head sent, or its connection ended (at most a minute) */
    bool opened = false;
    while (!opened && acc_mono_us() - t0 < 60000000) {
        usleep(100000);
        pthread_mutex_lock(&p.lock);
        opened = p.added == p.n && p.opening == 0;
        pthread_mutex_unlock(&p.lock);
    }
    printf("  hostile: all %u opened %s %.1f s\n", n, opened ? "by" : "NOT by",
           (acc_mono_us() - t0) / 1e6);
    slow_print(&p, t0);
    sleep(3);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/health", port);
    h3_tries("peer alice 3 s later, GET /v1/health on a new connection each, 500 ms apart", url,
             "alice", 20, 500);
    slow_print(&p, t0);
    int64_t at = t0 + (int64_t)seconds * 1000000;
    if (acc_mono_us() < at)
        usleep((useconds_t)(at - acc_mono_us()));
    char label[128];
    snprintf(label, sizeof label, "peer alice at %.0f s, the same, 500 ms apart",
             (acc_mono_us() - t0) / 1e6);
    h3_tries(label, url, "alice", 10, 500);
    slow_print(&p, t0);
    print_metrics(port);
    slow_stop(&p);
    acc_site_stop(site);
}
