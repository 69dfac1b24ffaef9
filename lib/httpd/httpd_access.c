/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_access.c - what the front end tells the operator: one line per
 * request (the access log) and its answers counted by status code, for
 * /metrics.  A line is one formatted write (acc_log), so that it costs
 * little more than the answer's own system calls and needs no lock. */
#include "httpd_int.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "../common/log.h"
#include "../common/timefmt.h"

/* Longest path said in full; a longer one ends with "...". */
#define PATH_MAX_SAID 200

void httpd_count_answer(struct acc_httpd *d, int status)
{
    if (status >= 100 && status < HTTPD_CODES)
        atomic_fetch_add_explicit(&d->answers[status], 1, memory_order_relaxed);
}

uint64_t acc_httpd_answers(struct acc_httpd *d, unsigned code)
{
    return code >= 100 && code < HTTPD_CODES ? atomic_load(&d->answers[code]) : 0;
}

/* The duration histogram's upper bounds (microseconds): from a request
 * answered from memory to one that waited for a negotiation's rounds. */
static const int64_t duration_us[HTTPD_DURATION_BOUNDS] = {
    500,    1000,   2500,   5000,    10000,   25000,   50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};

void httpd_count_duration(struct acc_httpd *d, unsigned cls, int64_t us)
{
    if (us < 0)
        us = 0;
    unsigned i = 0;
    while (i < HTTPD_DURATION_BOUNDS && us > duration_us[i])
        i++;
    struct httpd_duration *h = &d->duration[cls < d->n_classes ? cls : 0];
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (uint64_t)us, memory_order_relaxed);
}

/* s as one word of a log line: a byte that could end the line, forge a
 * field or is not ASCII (the path is decoded: %0A is a newline) is written
 * %XX; at most max bytes of s are said. */
static void said(const char *s, size_t max, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0, i = 0;
    for (; s[i] && i < max && o + 4 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '%' || c == '\\') {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    if (s[i] && o + 4 < size) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

bool httpd_client_address(struct MHD_Connection *con, char *out, size_t size)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    const void *a = NULL;
    if (sa && sa->sa_family == AF_INET)
        a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
    else if (sa && sa->sa_family == AF_INET6)
        a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    if (a && inet_ntop(sa->sa_family, a, out, (socklen_t)size))
        return true;
    snprintf(out, size, "-");
    return false;
}

void httpd_access_line(struct acc_httpd *d, const char *address, const char *method,
                       const char *path, int status, const char *user, int64_t us)
{
    if (!d->opt.access_log || !method || !acc_log_enabled(ACC_LOG_INFO))
        return;
    char m[3 * 16 + 4], p[3 * PATH_MAX_SAID + 4], u[3 * 64 + 4];
    char code[8] = "-";
    said(method, 16, m, sizeof m);
    said(path ? path : "", PATH_MAX_SAID, p, sizeof p);
    if (user && user[0])
        said(user, 63, u, sizeof u);
    else
        snprintf(u, sizeof u, "-");
    if (status)
        snprintf(code, sizeof code, "%d", status);
    acc_log_info("access: %s %s \"%s %s\" %s %" PRId64 ".%03d ms", address, u, m, p, code,
                 us / 1000, (int)(us % 1000));
}

static void metric(struct acc_buf *out, const char *name, const char *type, const char *help)
{
    acc_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The histogram, cumulative as Prometheus reads it, for every class
 * (answered or not: a series that appears late looks like a reset). The
 * buckets are read one by one while requests go on, so the count is the
 * sum of the buckets as read, never less than a bucket's. */
static void durations(struct acc_httpd *d, struct acc_buf *out)
{
    metric(out, "accord_http_request_duration_seconds", "histogram",
           "How long answered requests took, from their request line to their answer sent, by "
           "route class.");
    for (unsigned c = 0; c < d->n_classes; c++) {
        const char *name = c ? d->opt.route_classes[c - 1] : "other";
        const struct httpd_duration *h = &d->duration[c];
        uint64_t n = 0;
        for (unsigned i = 0; i <= HTTPD_DURATION_BOUNDS; i++) {
            n += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
            if (i < HTTPD_DURATION_BOUNDS)
                acc_buf_printf(out,
                               "accord_http_request_duration_seconds_bucket{route=\"%s\","
                               "le=\"%g\"} %" PRIu64 "\n",
                               name, (double)duration_us[i] / 1e6, n);
            else
                acc_buf_printf(out,
                               "accord_http_request_duration_seconds_bucket{route=\"%s\","
                               "le=\"+Inf\"} %" PRIu64 "\n",
                               name, n);
        }
        acc_buf_printf(out,
                       "accord_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n"
                       "accord_http_request_duration_seconds_count{route=\"%s\"} %" PRIu64 "\n",
                       name, (double)atomic_load(&h->sum_us) / 1e6, name, n);
    }
}

void acc_httpd_metrics(struct acc_httpd *d, struct acc_buf *out)
{
    metric(out, "accord_http_requests_total", "counter", "HTTP requests answered, by status code.");
    for (unsigned c = 100; c < HTTPD_CODES; c++) {
        uint64_t n = atomic_load(&d->answers[c]);
        if (n)
            acc_buf_printf(out, "accord_http_requests_total{code=\"%u\"} %" PRIu64 "\n", c, n);
    }
    durations(d, out);
    struct acc_httpd_stats st;
    acc_httpd_stats(d, &st);
    metric(out, "accord_http_connections_refused_total", "counter",
           "Connections closed at accept: their address held pending_connections without a "
           "whole request head.");
    acc_buf_printf(out, "accord_http_connections_refused_total %" PRIu64 "\n", st.refused);
    metric(out, "accord_http_connections_expired_total", "counter",
           "Connections closed without a whole request head by their deadline "
           "(header_timeout; kept alive: timeout).");
    acc_buf_printf(out, "accord_http_connections_expired_total %" PRIu64 "\n", st.expired);
    metric(out, "accord_http_connections_waiting", "gauge",
           "Connections open that wait for a request head.");
    acc_buf_printf(out, "accord_http_connections_waiting %u\n", st.waiting);
    metric(out, "accord_http_connections_evicted_total", "counter",
           "Idle kept-alive connections closed to make room at connection_limit.");
    acc_buf_printf(out, "accord_http_connections_evicted_total %" PRIu64 "\n", st.evicted);
    metric(out, "accord_http_connections_full_total", "counter",
           "Connections closed at accept: connection_limit reached and none idle.");
    acc_buf_printf(out, "accord_http_connections_full_total %" PRIu64 "\n", st.full);
    metric(out, "accord_http_bodies_cut_total", "counter",
           "Connections closed with a request body still arriving at request_timeout.");
    acc_buf_printf(out, "accord_http_bodies_cut_total %" PRIu64 "\n", st.cut);
    metric(out, "accord_http_unsent_bytes", "gauge",
           "Answer bytes held until their clients read them.");
    acc_buf_printf(out, "accord_http_unsent_bytes %zu\n", st.unsent);
    metric(out, "accord_http_unsent_refused_total", "counter",
           "Answers refused (503): max_unsent or client_unsent would have been passed.");
    acc_buf_printf(out, "accord_http_unsent_refused_total %" PRIu64 "\n", st.unsent_refused);
}
