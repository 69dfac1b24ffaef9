/* SPDX-License-Identifier: Apache-2.0 */
/* test_httpd_bounds.c - what lib/httpd bounds once a request head is whole
 * and as an answer goes out, on a real libmicrohttpd server in this process
 * over loopback from addresses of the test's choosing:
 *
 *   - a principal is counted as its head is whole: a peer that sends heads
 *     and then trickles bodies is refused past its `connections` at once,
 *     and every body is held to request_timeout, however slowly it comes
 *     (accord-site's lock-out by an admitted peer);
 *   - at connection_limit the connection idle the longest makes room for a
 *     new one (kept-alive clients filled accordd's limit);
 *   - the answer bytes held for clients that do not read them are bounded
 *     per address and in all (slow readers of large lists);
 *   - every answer is inert in a browser (a Content-Security-Policy that
 *     runs nothing, nosniff) and HTTPS answers carry HSTS. */
#define _GNU_SOURCE /* memmem */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
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

#define BIG (16u << 20) /* the answer of GET /big */

static char certs[256];
static char *big;                /* BIG bytes */
static atomic_int auth_saw_body; /* the auth hook was given a body */
static atomic_int handled;       /* answers the handle hook made */

static void handle(void *app, const struct acc_httpd_request *rq, void *state,
                   struct acc_httpd_reply *rs)
{
    (void)app, (void)state;
    atomic_fetch_add(&handled, 1);
    rs->status = 200;
    rs->content_type = "text/plain";
    if (strcmp(rq->path, "/big") == 0) {
        acc_buf_append(&rs->body, big, BIG);
    } else if (strcmp(rq->path, "/page") == 0) {
        acc_httpd_reply_header(rs, "Content-Security-Policy", "default-src 'self'");
        acc_buf_append(&rs->body, "<p>page</p>", 11);
    } else {
        acc_buf_append(&rs->body, "ok\n", 3);
    }
}

static void fault(void *app, const struct acc_httpd_request *rq, const struct acc_error *err,
                  struct acc_httpd_reply *rs)
{
    (void)app, (void)rq;
    rs->content_type = "text/plain";
    acc_buf_append(&rs->body, err->msg, strlen(err->msg));
}

/* Who asks: the X-Who header, held to 2 connections; without it, nobody. */
static bool auth(void *app, const struct acc_httpd_request *rq, void *state,
                 struct acc_httpd_who *who, struct acc_httpd_reply *rs)
{
    (void)app, (void)state, (void)rs;
    const char *w = acc_httpd_header(rq, "X-Who");
    if (rq->body_len) /* it is given the head alone */
        atomic_fetch_add(&auth_saw_body, 1);
    if (w) {
        snprintf(who->name, sizeof who->name, "%s", w);
        who->connections = 2;
    }
    return true;
}

static const struct acc_httpd_ops ops = {.auth = auth, .handle = handle, .fault = fault};

static struct acc_httpd_options options(void)
{
    return (struct acc_httpd_options){
        .host = "127.0.0.1",
        .threads = 2,
        .connection_limit = 64,
        .client_connections = 64,
        .pending_connections = 8,
        .header_timeout = 5,
        .timeout = 30,
        .request_timeout = 2,
        .max_body = 1000,
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

static void send_all(int fd, const char *s)
{
    (void)!send(fd, s, strlen(s), MSG_NOSIGNAL);
}

/* What the server sent on fd within ms (at most size - 1 bytes), without
 * waiting for the end of the stream. */
static char *read_some(int fd, int ms, char *buf, size_t size)
{
    size_t n = 0;
    int64_t end = acc_mono_us() + (int64_t)ms * 1000;
    while (n + 1 < size) {
        int left = (int)((end - acc_mono_us()) / 1000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t r = recv(fd, buf + n, size - 1 - n, MSG_DONTWAIT);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (memmem(buf, n, "\r\n\r\n", 4))
            break; /* the head is in */
    }
    buf[n] = '\0';
    return buf;
}

/* A request on a new connection from `from`, its answer's head. */
static char *ask(const char *from, unsigned port, const char *req, char *buf, size_t size)
{
    int fd = acc_test_connect_from(from, port);
    CU_ASSERT_FATAL(fd >= 0);
    send_all(fd, req);
    read_some(fd, 3000, buf, size);
    close(fd);
    return buf;
}

/* ---------------------------------------------------------- principals */

/* A principal held to 2 connections sends 3 heads, each followed by one
 * byte of a body of 100: the third is refused at once (429, closed) rather
 * than once its body is whole, the other two are cut off at
 * request_timeout (2 s) though bytes keep coming, and another principal is
 * served all along. */
static void test_principal_at_head(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    const char head[] = "POST / HTTP/1.1\r\nHost: x\r\nX-Who: peer\r\nContent-Length: 100\r\n\r\na";
    int fds[3];
    char buf[2048];
    int refused = -1;
    int64_t t0 = acc_mono_us();
    for (int i = 0; i < 3; i++) {
        fds[i] = acc_test_connect_from("127.0.60.1", port);
        CU_ASSERT_FATAL(fds[i] >= 0);
        send_all(fds[i], head);
        usleep(100000); /* in order: the third is the one over */
    }
    read_some(fds[2], 1000, buf, sizeof buf);
    if (strstr(buf, " 429 ") && strstr(buf, "peer holds 2 connections"))
        refused = 2;
    CU_ASSERT_EQUAL(refused, 2);
    CU_ASSERT_TRUE(acc_test_closed_within(fds[2], 1000));
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 1800000); /* long before the deadline */
    /* The two within the bound trickle on, and are cut at the deadline. */
    struct acc_httpd_stats st;
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.receiving, 2);
    ask("127.0.60.2", port, "GET / HTTP/1.1\r\nHost: x\r\nX-Who: other\r\n\r\n", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 200 "));
    bool cut[2] = {false, false};
    while (acc_mono_us() - t0 < 5000000 && !(cut[0] && cut[1])) {
        for (int i = 0; i < 2; i++) {
            cut[i] = cut[i] || acc_test_closed_within(fds[i], 0);
            if (!cut[i])
                send_all(fds[i], "b");
        }
        usleep(200000);
    }
    CU_ASSERT_TRUE(cut[0] && cut[1]);
    CU_ASSERT_TRUE(acc_mono_us() - t0 >= 2000000);
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.cut, 2);
    CU_ASSERT_EQUAL(st.receiving, 0);
    /* The principal's connections are free again. */
    ask("127.0.60.1", port, "GET / HTTP/1.1\r\nHost: x\r\nX-Who: peer\r\n\r\n", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 200 "));
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    acc_httpd_stop(d);
    CU_ASSERT_EQUAL(atomic_load(&auth_saw_body), 0);
}

/* A body that never comes is cut at the deadline too: silence after a
 * head is no longer held until the idle timeout (30 s here). */
static void test_silent_body(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    int fd = acc_test_connect_from("127.0.61.1", acc_httpd_port(d));
    CU_ASSERT_FATAL(fd >= 0);
    int64_t t0 = acc_mono_us();
    send_all(fd, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    CU_ASSERT_FALSE(acc_test_closed_within(fd, 1500));
    CU_ASSERT_TRUE(acc_test_closed_within(fd, 3000));
    CU_ASSERT_TRUE(acc_mono_us() - t0 >= 2000000);
    close(fd);
    acc_httpd_stop(d);
}

/* ------------------------------------------------------ connection limit */

/* The limit (8) filled by kept-alive clients from 8 addresses: a new
 * client is served at once, the oldest idle one closed for it; filled by
 * connections that all wait for their heads, a new one is refused. */
static void test_limit_idle_make_room(void)
{
    struct acc_httpd_options o = options();
    o.connection_limit = 8;
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    int kept[8];
    char buf[2048];
    for (int i = 0; i < 8; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.0.62.%d", i + 1);
        kept[i] = acc_test_connect_from(from, port);
        CU_ASSERT_FATAL(kept[i] >= 0);
        send_all(kept[i], "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        read_some(kept[i], 2000, buf, sizeof buf);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 200 "));
        usleep(20000); /* kept[0] idles the longest */
    }
    struct acc_httpd_stats st;
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.open, 8);
    int fresh[3]; /* new clients that stay: each takes the place of the oldest idle */
    for (int i = 0; i < 3; i++) {
        int64_t t0 = acc_mono_us();
        fresh[i] = acc_test_connect_from("127.0.63.1", port);
        CU_ASSERT_FATAL(fresh[i] >= 0);
        send_all(fresh[i], "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        CU_ASSERT_PTR_NOT_NULL(strstr(read_some(fresh[i], 2000, buf, sizeof buf), " 200 "));
        CU_ASSERT_TRUE(acc_mono_us() - t0 < 1000000);
        CU_ASSERT_TRUE(acc_test_closed_within(kept[i], 1000)); /* the oldest idle went */
        CU_ASSERT_FALSE(acc_test_closed_within(kept[i + 1], 0));
    }
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.evicted, 3);
    for (int i = 0; i < 8; i++)
        close(kept[i]);
    for (int i = 0; i < 3; i++)
        close(fresh[i]);
    /* Eight that wait for their heads (4 per address): none idle. */
    for (int tries = 0; tries < 100 && st.open; tries++) {
        usleep(20000);
        acc_httpd_stats(d, &st);
    }
    int waiting[8];
    for (int i = 0; i < 8; i++)
        waiting[i] = acc_test_connect_from(i < 4 ? "127.0.64.1" : "127.0.64.2", port);
    for (int tries = 0; tries < 100 && st.waiting < 8; tries++) {
        usleep(20000);
        acc_httpd_stats(d, &st);
    }
    CU_ASSERT_EQUAL(st.waiting, 8);
    int fd = acc_test_connect_from("127.0.65.1", port);
    CU_ASSERT_TRUE(acc_test_closed_within(fd, 1000));
    close(fd);
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.full, 1);
    for (int i = 0; i < 8; i++)
        close(waiting[i]);
    acc_httpd_stop(d);
}

/* ------------------------------------------------------- unsent answers */

/* GET /big (16 MiB) read by nobody: an address holds at most client_unsent
 * (20 MiB), all of them max_unsent (40 MiB); an answer past either is a
 * 503 that says which, a small one still goes, and what a client gives
 * back (its connection closed) is free again. */
static void test_unsent_answers(void)
{
    struct acc_httpd_options o = options();
    o.max_unsent = 40u << 20;
    o.client_unsent = 20u << 20;
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    const char req[] = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
    char buf[2048];
    int a1 = acc_test_connect_from("127.0.66.1", port);
    send_all(a1, req);
    CU_ASSERT_PTR_NOT_NULL(strstr(read_some(a1, 3000, buf, sizeof buf), " 200 "));
    /* the same address again: over its 20 MiB */
    int a2 = acc_test_connect_from("127.0.66.1", port);
    send_all(a2, req);
    read_some(a2, 3000, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 503 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "client_unsent"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Retry-After"));
    /* another address: 32 of 40 MiB */
    int b = acc_test_connect_from("127.0.66.2", port);
    send_all(b, req);
    CU_ASSERT_PTR_NOT_NULL(strstr(read_some(b, 3000, buf, sizeof buf), " 200 "));
    struct acc_httpd_stats st;
    acc_httpd_stats(d, &st);
    CU_ASSERT_TRUE(st.unsent > (size_t)(16u << 20) && st.unsent <= (size_t)(32u << 20));
    /* a third: over the 40 MiB of all, yet a small answer goes */
    ask("127.0.66.3", port, req, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 503 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "max_unsent"));
    ask("127.0.66.3", port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 200 "));
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.unsent_refused, 2);
    struct acc_buf m = ACC_BUF_INIT;
    acc_httpd_metrics(d, &m);
    acc_buf_append(&m, "", 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.data, "\naccord_http_unsent_refused_total 2\n"));
    acc_buf_release(&m);
    /* a1 gives up: its bytes are free, and the third address is served */
    close(a1);
    close(a2);
    bool served = false;
    for (int i = 0; i < 50 && !served; i++) {
        int c = acc_test_connect_from("127.0.66.3", port);
        send_all(c, req);
        served = strstr(read_some(c, 3000, buf, sizeof buf), " 200 ") != NULL;
        close(c);
        if (!served)
            usleep(100000);
    }
    CU_ASSERT_TRUE(served);
    close(b);
    for (int i = 0; i < 100 && st.unsent; i++) {
        usleep(20000);
        acc_httpd_stats(d, &st);
    }
    CU_ASSERT_EQUAL(st.unsent, 0);
    acc_httpd_stop(d);
}

/* A client whose unread answers fill its share is refused before its
 * next answer is made (making them cost the threads' time while slow
 * readers held them); a client that holds nothing is served. */
static void test_unsent_early(void)
{
    struct acc_httpd_options o = options();
    o.max_unsent = 40u << 20;
    o.client_unsent = 8u << 20;
    struct acc_httpd *d = start(&o);
    unsigned port = acc_httpd_port(d);
    char buf[2048];
    int a = acc_test_connect_from("127.0.67.1", port);
    send_all(a, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    /* alone, over its share: it goes */
    CU_ASSERT_PTR_NOT_NULL(strstr(read_some(a, 3000, buf, sizeof buf), " 200 "));
    int made = atomic_load(&handled);
    ask("127.0.67.1", port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 503 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "client_unsent"));
    CU_ASSERT_EQUAL(atomic_load(&handled), made); /* refused before it was made */
    ask("127.0.67.2", port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 200 "));
    struct acc_httpd_stats st;
    acc_httpd_stats(d, &st);
    CU_ASSERT_EQUAL(st.unsent_refused, 1);
    close(a);
    acc_httpd_stop(d);
}

/* --------------------------------------------------------------- headers */

static const char *cert(const char *name)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", certs, name);
    return p;
}

static size_t keep_headers(char *data, size_t size, size_t n, void *arg)
{
    acc_buf_append(arg, data, size * n);
    return size * n;
}

/* The response headers of GET path. */
static void headers_of(unsigned port, bool tls, const char *path, struct acc_buf *out)
{
    char url[96];
    snprintf(url, sizeof url, "%s://127.0.0.1:%u%s", tls ? "https" : "http", port, path);
    CURL *c = curl_easy_init();
    if (tls) {
        struct acc_tls_client tc = {.ca = cert("ca.crt")};
        CU_ASSERT_EQUAL(acc_tls_curl_setup(c, &tc), ACC_OK);
    }
    FILE *null = fopen("/dev/null", "w");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, null);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep_headers);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    CU_ASSERT_EQUAL(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    fclose(null);
    acc_buf_append(out, "", 1);
}

static void test_headers(void)
{
    struct acc_httpd_options o = options();
    struct acc_httpd *d = start(&o);
    struct acc_buf h = ACC_BUF_INIT;
    headers_of(acc_httpd_port(d), false, "/", &h);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(h.data, "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'; "
                       "sandbox\r\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h.data, "X-Content-Type-Options: nosniff\r\n"));
    CU_ASSERT_PTR_NULL(strstr(h.data, "Strict-Transport-Security"));
    /* a page of the daemon's own keeps its policy, one only */
    acc_buf_reset(&h);
    headers_of(acc_httpd_port(d), false, "/page", &h);
    CU_ASSERT_PTR_NOT_NULL(strstr(h.data, "Content-Security-Policy: default-src 'self'\r\n"));
    CU_ASSERT_PTR_NULL(strstr(h.data, "'none'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h.data, "X-Content-Type-Options: nosniff\r\n"));
    acc_httpd_stop(d);

    struct acc_tls_server_cfg tc = {.certificate = cert("server.crt"), .key = cert("server.key")};
    o.tls = &tc;
    d = start(&o);
    acc_buf_reset(&h);
    headers_of(acc_httpd_port(d), true, "/", &h);
    CU_ASSERT_PTR_NOT_NULL(strstr(h.data, "Strict-Transport-Security: max-age=31536000\r\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h.data, "Content-Security-Policy: default-src 'none'"));
    acc_buf_release(&h);
    acc_httpd_stop(d);
}

static int init(void)
{
    snprintf(certs, sizeof certs, "%s/certs", acc_test_tmpdir());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR, certs);
    if (!(big = malloc(BIG)))
        return 1;
    memset(big, 'x', BIG);
    return system(cmd) == 0 ? 0 : 1;
}

static int cleanup(void)
{
    free(big);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"a principal is counted at its head; bodies are held to their deadline",
     test_principal_at_head},
    {"a body that never comes is cut at its deadline", test_silent_body},
    {"at the connection limit the oldest idle connection makes room", test_limit_idle_make_room},
    {"unsent answers are bounded per address and in all", test_unsent_answers},
    {"a client that holds its share of unsent answers is refused early", test_unsent_early},
    {"answers run nothing in a browser; HTTPS ones carry HSTS", test_headers},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"httpd bounds", init, cleanup, tests},
    {NULL, NULL, NULL, NULL},
};
