/* SPDX-License-Identifier: Apache-2.0 */
/* test_httpd.c - lib/httpd's connection bounds on a real libmicrohttpd
 * server in this process, over loopback from addresses of the test's
 * choosing (all of 127.0.0.0/8 is this host): connections that never finish
 * their request head (no bytes, one byte at a time, a partial TLS
 * ClientHello, an idle TLS session) are bounded per address and closed at
 * their deadline, so that a client from another address is served; a
 * kept-alive connection's next head has its deadline too; a second daemon
 * cannot take an address in use; a chunked body past what may be drained
 * is cut off rather than read whole; answered requests are counted in the
 * duration histogram of their route class. */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "httpd.h"
#include "loopback.h"
#include "testutil.h"
#include "timefmt.h"
#include "tls_client.h"
#include "tls_server.h"

static char certs[256];
static atomic_int handled; /* requests the handle hook answered */

static void handle(void *app, const struct acc_httpd_request *rq, void *state,
                   struct acc_httpd_reply *rs)
{
    (void)app, (void)rq, (void)state;
    atomic_fetch_add(&handled, 1);
    rs->status = 200;
    rs->content_type = "text/plain";
    acc_buf_append(&rs->body, "ok\n", 3);
}

static void fault(void *app, const struct acc_httpd_request *rq, const struct acc_error *err,
                  struct acc_httpd_reply *rs)
{
    (void)app, (void)rq;
    rs->content_type = "text/plain";
    acc_buf_append(&rs->body, err->msg, strlen(err->msg));
}

static const struct acc_httpd_ops ops = {.handle = handle, .fault = fault};

static struct acc_httpd_options options(void)
{
    return (struct acc_httpd_options){
        .host = "127.0.0.1",
        .threads = 2,
        .connection_limit = 64,
        .client_connections = 64,
        .pending_connections = 4,
        .header_timeout = 1,
        .timeout = 30, /* only the deadline closes a silent connection here */
        .request_timeout = 30,
        .max_body = 1000,
        .drain_max = 4000,
    };
}

static struct acc_httpd *start(const struct acc_httpd_options *o)
{
    struct acc_httpd *d = NULL;
    struct acc_error err = {0};
    acc_err rc = acc_httpd_start(o, &ops, NULL, &d, &err);
    if (rc)
        fprintf(stderr, "acc_httpd_start: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    return d;
}

static void send_all(int fd, const void *data, size_t len)
{
    (void)!send(fd, data, len, MSG_NOSIGNAL);
}

/* One GET on a new connection (HTTPS: with accord-main's certificate, the
 * TLS part of the file): its status, 0 when there was no answer. */
static const char *cert(const char *name);

static long get_path(unsigned port, bool tls, const char *path)
{
    char url[128];
    snprintf(url, sizeof url, "%s://127.0.0.1:%u%s", tls ? "https" : "http", port, path);
    CURL *c = curl_easy_init();
    if (tls) {
        struct acc_tls_client tc = {
            .ca = cert("ca.crt"), .certificate = cert("accord.crt"), .key = cert("accord.key")};
        CU_ASSERT_EQUAL(acc_tls_curl_setup(c, &tc), ACC_OK);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    FILE *null = fopen("/dev/null", "w");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, null);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    fclose(null);
    return status;
}

static long get(unsigned port, bool tls)
{
    return get_path(port, tls, "/");
}

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* Silent connections: the ones over the bound of their address are closed
 * as they are accepted, the others at their deadline; the total limit (64)
 * is never reached and a client from another address is served at once. */
static void test_silent_connections(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    enum { N = 64 };
    int fds[N];
    int64_t opened = acc_mono_us(); /* no deadline can pass before opened + 1 s */
    for (int i = 0; i < N; i++)
        fds[i] = acc_test_connect_from("127.0.50.1", port);
    /* Accepted (or refused) by the server's threads in their own time:
     * under a sanitizer that may take a while. */
    struct acc_httpd_stats st;
    for (int tries = 0; tries < 100; tries++) {
        acc_httpd_stats(d, &st);
        if (st.refused + st.waiting >= N)
            break;
        usleep(20000);
    }
    CU_ASSERT_EQUAL(st.refused, (uint64_t)(N - 4));
    CU_ASSERT_EQUAL(st.waiting, 4);
    int refused = 0;
    for (int i = 0; i < N; i++)
        refused += fds[i] < 0 || acc_test_closed_within(fds[i], 50);
    CU_ASSERT_EQUAL(refused, N - 4);
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(get(port, false), 200);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 1000000);
    /* The four held ones are closed at their deadline (1 s), not before. */
    int held[N], n_held = 0;
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0 && !acc_test_closed_within(fds[i], 0))
            held[n_held++] = fds[i];
    CU_ASSERT_EQUAL(n_held, 4);
    int expired = 0;
    for (int i = 0; i < n_held; i++)
        expired += acc_test_closed_within(held[i], 2500);
    CU_ASSERT_EQUAL(expired, 4);
    CU_ASSERT_TRUE(acc_mono_us() - opened >= 1000000);
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.expired, 4);
    CU_ASSERT_EQUAL(st.waiting, 0);
    close_all(fds, N);
    acc_httpd_stop(d);
}

/* A head sent one byte every 200 ms is never idle, yet closed at its
 * deadline; a kept-alive connection's next head likewise (timeout, 2 s). */
static void test_slow_heads(void)
{
    struct acc_httpd_options o = options();
    o.timeout = 2;
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    int slow = acc_test_connect_from("127.0.51.1", port);
    int kept = acc_test_connect_from("127.0.51.2", port);
    CU_ASSERT_FATAL(slow >= 0 && kept >= 0);
    const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(kept, req, sizeof req - 1);
    char buf[512] = "";
    CU_ASSERT_TRUE(recv(kept, buf, sizeof buf - 1, 0) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "200 OK"));
    send_all(slow, "GET / HTTP/1.1\r\nX-Slow: ", 24);
    send_all(kept, "GET / HTTP/1.1\r\nX-Slow: ", 24);
    int64_t t0 = acc_mono_us();
    int64_t slow_end = 0, kept_end = 0;
    while (acc_mono_us() - t0 < 5000000 && (!slow_end || !kept_end)) {
        if (!slow_end && acc_test_closed_within(slow, 0))
            slow_end = acc_mono_us();
        if (!kept_end && acc_test_closed_within(kept, 0))
            kept_end = acc_mono_us();
        send_all(slow, "a", 1);
        send_all(kept, "a", 1);
        usleep(200000);
    }
    /* Generous upper ends: a reaper short of CPU (a sanitizer, a loaded
     * machine) is late; without the deadlines neither would ever close. */
    CU_ASSERT_TRUE(slow_end && slow_end - t0 < 3000000);
    CU_ASSERT_TRUE(kept_end && kept_end - t0 > 1200000 && kept_end - t0 < 4500000);
    close(slow);
    close(kept);
    acc_httpd_stop(d);
}

/* A second daemon on an address in use fails to start and says why. */
static void test_address_in_use(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    o.port = acc_httpd_port(d);
    struct acc_httpd *twin = NULL;
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(acc_httpd_start(&o, &ops, NULL, &twin, &err), ACC_ERR_IO);
    CU_ASSERT_PTR_NULL(twin);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in use"));
    CU_ASSERT_EQUAL(get(o.port, false), 200);
    acc_httpd_stop(d);
}

/* A chunked body has no length to refuse early: past drain_max it is cut
 * off, not read to its end (64 MB were read before their 413). */
static void test_chunked_cut_off(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    int fd = acc_test_connect_from("127.0.52.1", acc_httpd_port(d));
    CU_ASSERT_FATAL(fd >= 0);
    const char head[] = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    send_all(fd, head, sizeof head - 1);
    static char chunk[65536 + 16];
    int hl = snprintf(chunk, sizeof chunk, "%x\r\n", 65536);
    memset(chunk + hl, 'a', 65536);
    memcpy(chunk + hl + 65536, "\r\n", 2);
    size_t sent = 0, len = (size_t)hl + 65536 + 2;
    int64_t t0 = acc_mono_us();
    while (sent < (64u << 20) && acc_mono_us() - t0 < 10000000) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 1000) <= 0)
            break; /* the server reads no more */
        ssize_t n = send(fd, chunk, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN)
            break;
        sent += n > 0 ? (size_t)n : 0;
    }
    CU_ASSERT_TRUE(sent < (32u << 20));
    CU_ASSERT_TRUE(acc_test_closed_within(fd, 2000));
    close(fd);
    acc_httpd_stop(d);
}

/* ------------------------------------------------------------------ TLS */

static const char *cert(const char *name)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", certs, name);
    return p;
}

static bool admit_main(void *arg, const struct acc_tls_peer *peer)
{
    (void)arg;
    return strcmp(peer->subject, "CN=accord-main") == 0;
}

/* accord-site's lock-out: with a total of 64, 64 connections that send no
 * TLS bytes and 64 that stop after 5 bytes of a ClientHello (from 8
 * addresses) left no room for the admitted peer.  Now each address holds
 * at most 4 of them, each for 1 s, and the peer is served at once. */
static void test_tls_handshakes(void)
{
    struct acc_tls_server_cfg tc = {.certificate = cert("server.crt"),
                                    .key = cert("server.key"),
                                    .client_ca = cert("ca.crt"),
                                    .admit = admit_main};
    struct acc_httpd_options o = options();
    o.tls = &tc;
    o.quiet = true; /* GnuTLS's complaint about each cut handshake */
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    enum { N = 128 };
    int fds[N];
    static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};
    for (int i = 0; i < N; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.0.53.%d", 1 + i % 8);
        fds[i] = acc_test_connect_from(from, port);
        if (fds[i] >= 0 && i >= N / 2)
            send_all(fds[i], hello, sizeof hello);
    }
    struct acc_httpd_stats st;
    for (int tries = 0; tries < 100; tries++) { /* all accepted or refused */
        acc_httpd_stats(d, &st);
        if (st.refused + st.waiting >= N)
            break;
        usleep(20000);
    }
    CU_ASSERT_EQUAL(st.refused, (uint64_t)(N - 8 * 4));
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(get(port, true), 200);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 1000000);
    /* Every one is closed by its deadline. */
    int closed = 0;
    for (int i = 0; i < N; i++)
        closed += fds[i] < 0 || acc_test_closed_within(fds[i], 2500);
    CU_ASSERT_EQUAL(closed, N);
    close_all(fds, N);
    /* An admitted peer's idle sessions (handshake done, no request) are
     * pending too: a curl handle that connects only. */
    CURL *idle[8];
    for (int i = 0; i < 8; i++) {
        idle[i] = curl_easy_init();
        struct acc_tls_client cl = {
            .ca = cert("ca.crt"), .certificate = cert("accord.crt"), .key = cert("accord.key")};
        acc_tls_curl_setup(idle[i], &cl);
        char url[64];
        snprintf(url, sizeof url, "https://127.0.0.1:%u/", port);
        curl_easy_setopt(idle[i], CURLOPT_URL, url);
        curl_easy_setopt(idle[i], CURLOPT_CONNECT_ONLY, 1L);
        curl_easy_setopt(idle[i], CURLOPT_INTERFACE, "127.0.54.1");
        curl_easy_perform(idle[i]);
    }
    acc_httpd_stats(d, &st);
    CU_ASSERT_TRUE(st.waiting <= 4);
    CU_ASSERT_EQUAL(get(port, true), 200);
    for (int i = 0; i < 8; i++)
        curl_easy_cleanup(idle[i]);
    acc_httpd_stop(d);
}

/* The request-duration histogram: a handler that classes /fast as 0 and
 * /slow (30 ms) as 1, /none not at all and /bad past the list. */
static void classed(void *app, const struct acc_httpd_request *rq, void *state,
                    struct acc_httpd_reply *rs)
{
    if (strcmp(rq->path, "/fast") == 0)
        acc_httpd_set_route_class(state, 0);
    else if (strcmp(rq->path, "/slow") == 0) {
        acc_httpd_set_route_class(state, 1);
        usleep(30000);
    } else if (strcmp(rq->path, "/bad") == 0)
        acc_httpd_set_route_class(state, 2); /* past the list: ignored */
    handle(app, rq, state, rs);
}

static const struct acc_httpd_ops classed_ops = {.handle = classed, .fault = fault};

/* The value of one series of text, or -1. */
static double series(const char *text, const char *name)
{
    char key[200];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

/* Each answered request is counted in its class's histogram, or in
 * "other"; every class is shown from the start; a daemon with more classes
 * than the layer counts does not start. */
static void test_duration_histogram(void)
{
    static const char *const classes[] = {"fast", "slow", NULL};
    struct acc_httpd_options o = options();
    o.route_classes = classes;
    struct acc_httpd *d = NULL;
    struct acc_error err = {0};
    CU_ASSERT_EQUAL_FATAL(acc_httpd_start(&o, &classed_ops, NULL, &d, &err), ACC_OK);
    struct acc_buf m = ACC_BUF_INIT;
    acc_httpd_metrics(d, &m);
    const char *t = acc_buf_str(&m);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "# TYPE accord_http_request_duration_seconds histogram\n"));
    CU_ASSERT_EQUAL(series(t, "accord_http_request_duration_seconds_count{route=\"slow\"}"), 0);
    CU_ASSERT_EQUAL(series(t, "accord_http_request_duration_seconds_count{route=\"other\"}"), 0);
    acc_buf_release(&m);
    unsigned port = acc_httpd_port(d);
    const char *paths[] = {"/fast", "/fast", "/fast", "/slow", "/slow", "/none", "/bad"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        CU_ASSERT_EQUAL(get_path(port, false, paths[i]), 200);
    /* A request is counted as it completes, just after its client has read
     * the answer. */
    double fast = -1, slow = -1, other = -1;
    for (int i = 0;; i++) {
        acc_buf_release(&m);
        acc_httpd_metrics(d, &m);
        t = acc_buf_str(&m);
        fast = series(t, "accord_http_request_duration_seconds_count{route=\"fast\"}");
        slow = series(t, "accord_http_request_duration_seconds_count{route=\"slow\"}");
        other = series(t, "accord_http_request_duration_seconds_count{route=\"other\"}");
        if ((fast == 3 && slow == 2 && other == 2) || i == 200)
            break;
        usleep(10000);
    }
    CU_ASSERT_EQUAL(fast, 3);
    CU_ASSERT_EQUAL(slow, 2);
    CU_ASSERT_EQUAL(other, 2);
    /* The slow ones took 30 ms at least: none under 25 ms, both by +Inf,
     * and their sum is at least 60 ms. */
    CU_ASSERT_EQUAL(
        series(t, "accord_http_request_duration_seconds_bucket{route=\"slow\",le=\"0.025\"}"), 0);
    CU_ASSERT_EQUAL(
        series(t, "accord_http_request_duration_seconds_bucket{route=\"slow\",le=\"+Inf\"}"), 2);
    CU_ASSERT(series(t, "accord_http_request_duration_seconds_sum{route=\"slow\"}") >= 0.06);
    /* Buckets are cumulative: +Inf is the count. */
    CU_ASSERT_EQUAL(
        series(t, "accord_http_request_duration_seconds_bucket{route=\"fast\",le=\"+Inf\"}"), 3);
    acc_buf_release(&m);
    acc_httpd_stop(d);

    static const char *const many[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
                                       "j", "k", "l", "m", "n", "o", "p", NULL};
    o.route_classes = many;
    d = NULL;
    CU_ASSERT_EQUAL(acc_httpd_start(&o, &classed_ops, NULL, &d, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "route classes"));
    CU_ASSERT_PTR_NULL(d);
}

static int init(void)
{
    snprintf(certs, sizeof certs, "%s/certs", acc_test_tmpdir());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR, certs);
    return system(cmd) == 0 ? 0 : 1;
}

static const struct acc_test_case tests[] = {
    {"silent connections: bounded per address, closed at their deadline", test_silent_connections},
    {"slow heads, new and kept alive, closed at their deadline", test_slow_heads},
    {"a second daemon on an address in use does not start", test_address_in_use},
    {"a chunked body past drain_max is cut off", test_chunked_cut_off},
    {"TLS: silent and partial handshakes do not lock the peer out", test_tls_handshakes},
    {"request durations by route class", test_duration_histogram},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"httpd", init, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
