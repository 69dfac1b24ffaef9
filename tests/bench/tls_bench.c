/* SPDX-License-Identifier: Apache-2.0 */
/* tls_bench.c - what a mutual TLS handshake costs against a kept-alive
 * connection: an in-process libmicrohttpd server with lib/tls (client
 * certificates required and admitted) and a libcurl client, N requests each
 * way.  Prints medians and p99; asserts nothing.
 *
 *   build/tests/accord_tls_bench [N]      (certificates: mkcerts.sh in a temp dir) */
#include <curl/curl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tls_client.h"
#include "tls_server.h"

static char dir[64];

static const char *file(const char *name)
{
    static char path[4][128];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static bool admit(void *arg, const struct acc_tls_peer *peer)
{
    (void)arg;
    return strcmp(peer->subject, "CN=accord-main") == 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload;
    static int seen;
    if (!*con_cls) { /* answer once the request is whole, so that it stays alive */
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    static char ok[] = "ok";
    struct MHD_Response *r = MHD_create_response_from_buffer(2, ok, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(con, 200, r);
    MHD_destroy_response(r);
    return rc;
}

static size_t sink(char *d, size_t s, size_t n, void *a)
{
    (void)d, (void)a;
    return s * n;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
    if (n < 10 || n > 1000000) {
        fprintf(stderr, "usage: accord_tls_bench [N: 10 to 1000000]\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/accord-tls-bench-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, dir);
    double *t = calloc((size_t)n, sizeof *t);
    struct acc_tls_server *tls = NULL;
    struct MHD_Daemon *d = NULL;
    struct acc_error err = {0};
    int status = 1;
    if (!t || system(cmd) != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        goto out;
    struct acc_tls_server_cfg cfg = {.certificate = file("server.crt"),
                                     .key = file("server.key"),
                                     .client_ca = file("ca.crt"),
                                     .admit = admit};
    if (acc_tls_server_new(&cfg, &tls, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        goto out;
    }
    struct MHD_OptionItem opts[8];
    size_t k = acc_tls_mhd_options(tls, opts, 6);
    opts[k++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, 2, NULL};
    opts[k] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | acc_tls_mhd_flags(tls),
                         0, NULL, NULL, handler, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!d || acc_tls_server_bind(tls, d, &err))
        goto out;
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/",
             MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
    struct acc_tls_client tc = {file("ca.crt"), file("accord.crt"), file("accord.key")};
    static const char *const what[] = {"new connection each (mutual TLS handshake + request)",
                                       "one kept-alive connection (request only)"};
    for (int mode = 0; mode < 2; mode++) {
        CURL *kept = curl_easy_init();
        for (long i = 0; i < n; i++) {
            CURL *c = mode ? kept : curl_easy_init();
            if (!c || acc_tls_curl_setup(c, &tc))
                goto out;
            curl_easy_setopt(c, CURLOPT_URL, url);
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
            double t0 = now_ms();
            CURLcode rc = curl_easy_perform(c);
            t[i] = now_ms() - t0;
            if (!mode)
                curl_easy_cleanup(c);
            if (rc) {
                fprintf(stderr, "request %ld: %s\n", i, curl_easy_strerror(rc));
                curl_easy_cleanup(kept);
                goto out;
            }
        }
        curl_easy_cleanup(kept);
        qsort(t, (size_t)n, sizeof *t, cmp);
        printf("%-55s median %7.3f ms  p99 %7.3f ms  (n=%ld)\n", what[mode], t[n / 2],
               t[n * 99 / 100], n);
    }
    status = 0;
out:
    MHD_stop_daemon(d);
    acc_tls_server_free(tls);
    curl_global_cleanup();
    free(t);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        status = 1;
    return status;
}
