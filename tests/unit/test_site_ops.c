/* SPDX-License-Identifier: Apache-2.0 */
/* test_site_ops.c - accord-site at work: the Hydra proxies it starts for a
 * peer, connections per peer, and a reload of its configuration.  Part of
 * test_site (its one suite "site", after the protocol's operations). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "../../lib/proto/proto.h"
#include "../../site/site.h"
#include "loopback.h"
#include "site_client.h"
#include "site_daemon.h"
#include "testutil.h"

/* POST /v1/jobs of a Hydra proxy for key on host, as who. */
static long submit_as(const char *who, const char *key, const char *exe, const char *control,
                      struct acc_buf *out)
{
    const char *args[] = {"--control-port",  control,  "--rmk",      "user",
                          "--launcher",      "manual", "--demux",    "poll",
                          "--pgid",          "0",      "--retries",  "0",
                          "--usize",         "-2",     "--pmi-port", "0",
                          "--gpus-per-proc", "-2",     "--proxy-id", "0"};
    struct acc_job j = {.key = key,
                        .local_id = "peer-view",
                        .nodes = 1,
                        .ppn = 1,
                        .executable = exe,
                        .args = args,
                        .n_args = sizeof args / sizeof *args,
                        .host = "alpha-n1"};
    struct acc_buf body = ACC_BUF_INIT;
    acc_proto_write_job(&j, &body);
    long st = site_request(who, "POST", "/v1/jobs", body.data, body.len, out);
    acc_buf_release(&body);
    return st;
}

/* Whether job id (path /v1/jobs/ID) of accord-main ends within about 5 s. */
static bool job_ends(const char *path)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_job_status js;
    struct acc_error err;
    bool done = false;
    for (int i = 0; i < 100 && !done; i++) {
        done = site_request("accord", "GET", path, NULL, 0, &out) == 200 &&
               acc_proto_read_job_status(out.data, out.len, &js, &err) == ACC_OK && js.done;
        if (!done) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    acc_buf_release(&out);
    return done;
}

static bool job_running(const char *path)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_job_status js;
    struct acc_error err;
    bool running = site_request("accord", "GET", path, NULL, 0, &out) == 200 &&
                   acc_proto_read_job_status(out.data, out.len, &js, &err) == ACC_OK && !js.done;
    acc_buf_release(&out);
    return running;
}

static void submit_ok(const char *control, char *path, size_t len)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_error err;
    char id[64] = "";
    CU_ASSERT_EQUAL_FATAL(submit_as("accord", "j1", "hydra_pmi_proxy", control, &out), 201);
    ACC_ASSERT_OK(acc_proto_read_job_ref(out.data, out.len, id, sizeof id, &err));
    snprintf(path, len, "/v1/jobs/%s", id);
    acc_buf_release(&out);
}

/* The Hydra proxies the daemon starts for a peer (site_jobs.c does the
 * checks and the starting; here the routes, the booking handed over,
 * ownership, and the jobs going with their reservation). */
void test_jobs(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    unsigned lport = 0;
    int lfd = site_silent_listener(&lport);
    CU_ASSERT_FATAL(lfd >= 0);
    char control[64];
    snprintf(control, sizeof control, "127.0.0.1:%u", lport);
    CU_ASSERT_EQUAL_FATAL(sd_reserve("j1", 1, acc_now(), 600, &out), 200);
    /* Only hydra_pmi_proxy, with Hydra's options, control inside the networks. */
    CU_ASSERT_EQUAL(submit_as("accord", "j1", "/bin/sh", control, &out), 400);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(submit_as("accord", "j1", "hydra_pmi_proxy", "192.0.2.1:9", &out), 400);
    /* Not inside the reservation yet; another peer's key; an unknown one. */
    CU_ASSERT_EQUAL(submit_as("accord", "k2", "hydra_pmi_proxy", control, &out), 409);
    CU_ASSERT_EQUAL(submit_as("alice", "j1", "hydra_pmi_proxy", control, &out), 404);
    CU_ASSERT_EQUAL(submit_as("accord", "nokey", "hydra_pmi_proxy", control, &out), 404);
    char path[128];
    submit_ok(control, path, sizeof path);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CU_ASSERT(job_running(path));
    /* Another peer can neither see it nor stop it, nor its reservation. */
    CU_ASSERT_EQUAL(site_request("alice", "GET", path, NULL, 0, &out), 404);
    CU_ASSERT_EQUAL(site_request("alice", "DELETE", path, NULL, 0, &out), 404);
    CU_ASSERT_EQUAL(sd_call("alice", "DELETE", "j1", &out), 204);
    CU_ASSERT(job_running(path));
    /* Its owner stops it. */
    CU_ASSERT_EQUAL(site_request("accord", "DELETE", path, NULL, 0, &out), 204);
    CU_ASSERT(job_ends(path));
    /* A proxy goes with its reservation. */
    submit_ok(control, path, sizeof path);
    nanosleep(&ts, NULL);
    CU_ASSERT(job_running(path));
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "j1", &out), 204);
    CU_ASSERT(job_ends(path));
    close(lfd);
    acc_buf_release(&out);
}

void test_connection_limit(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CURL *open[4];
    /* accord-main may hold 4 connections: each handle keeps its own. */
    for (int i = 0; i < 4; i++) {
        open[i] = site_handle("accord", &out);
        CU_ASSERT_EQUAL(site_perform(open[i], &out), 200);
    }
    CURL *fifth = site_handle("accord", &out);
    CU_ASSERT_EQUAL(site_perform(fifth, &out), 429);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_TOO_MANY);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "connections = 4"));
    /* The kept ones still work; another peer is not counted against it. */
    CU_ASSERT_EQUAL(site_perform(open[0], &out), 200);
    CU_ASSERT_EQUAL(site_request("alice", "GET", "/v1/health", NULL, 0, &out), 200);
    /* One closed: room for one more (the daemon sees the close shortly). */
    curl_easy_cleanup(open[3]);
    long st = -1;
    for (int tries = 0; tries < 50 && st != 200; tries++) {
        st = site_perform(fifth, &out);
        if (st != 200) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    CU_ASSERT_EQUAL(st, 200);
    for (int i = 0; i < 3; i++)
        curl_easy_cleanup(open[i]);
    curl_easy_cleanup(fifth);
    acc_buf_release(&out);
}

/* Anyone who reached the port locked the peers out, without a certificate:
 * 64 connections that sent no TLS bytes, or 5 bytes of a ClientHello, took
 * all 64 slots.  With the defaults each address holds at most 16 such
 * connections (the rest are closed as they are accepted), each for 5 s,
 * and there is room for many addresses: the peer is served at once. */
void test_hostile_connections(void)
{
    enum { N = 64 + 8 * 20 };
    int fds[N];
    static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};
    for (int i = 0; i < N; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.0.%d.%d", 71 + (i >= 64), 1 + i % 8);
        fds[i] = acc_test_connect_from(from, acc_site_port(site));
        if (fds[i] >= 0 && i >= 64)
            send(fds[i], hello, sizeof hello, MSG_NOSIGNAL);
    }
    /* Refused as the daemon's threads accept them (a while under load). */
    int open = N;
    for (int tries = 0; tries < 50 && open != 64 + 8 * 16; tries++) {
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
        open = 0;
        for (int i = 0; i < N; i++)
            open += !acc_test_closed_within(fds[i], 0);
    }
    CU_ASSERT_EQUAL(open, 64 + 8 * 16); /* 8 silent from 8 addresses; 16 of 20 from 8 more */
    struct acc_buf out = ACC_BUF_INIT;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CU_ASSERT_EQUAL(site_request("accord", "GET", "/v1/health", NULL, 0, &out), 200);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Served before the hostile connections' 5 s are up (not after them;
     * the margin is for valgrind on a busy machine, which took over 1 s). */
    CU_ASSERT_TRUE((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 4000000000L);
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    acc_buf_release(&out);
}

void test_reload(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    /* A file that names intruder as a peer: after reload it is admitted. */
    FILE *f = fopen(conf, "a");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "[peer intruder]\nsubject = CN=intruder\n");
    fclose(f);
    struct acc_site_config fresh;
    struct acc_error err;
    ACC_ASSERT_OK(acc_site_config_load_file(conf, &fresh, &err));
    ACC_ASSERT_OK(acc_site_reload(site, &fresh, &err));
    CU_ASSERT_EQUAL(site_request("intruder", "GET", "/v1/health", NULL, 0, &out), 200);
    CU_ASSERT_EQUAL(sd_call("intruder", "GET", "k2", &out), 404); /* not its key */
    /* A reload naming a missing certificate changes nothing. */
    ACC_ASSERT_OK(acc_site_config_load_file(conf, &fresh, &err));
    free(fresh.certificate);
    fresh.certificate = acc_strdup("/nonexistent.crt");
    CU_ASSERT_NOT_EQUAL(acc_site_reload(site, &fresh, &err), ACC_OK);
    CU_ASSERT_EQUAL(site_request("accord", "GET", "/v1/health", NULL, 0, &out), 200);
    /* The file without intruder again: its kept-alive connection is
     * refused on its next request, a new one in the handshake. */
    CURL *kept = site_handle("intruder", &out);
    CU_ASSERT_EQUAL(site_perform(kept, &out), 200);
    sd_write_conf();
    ACC_ASSERT_OK(acc_site_config_load_file(conf, &fresh, &err));
    ACC_ASSERT_OK(acc_site_reload(site, &fresh, &err));
    CU_ASSERT_EQUAL(site_perform(kept, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_FORBIDDEN);
    CU_ASSERT_EQUAL(site_request("intruder", "GET", "/v1/health", NULL, 0, &out), -1);
    curl_easy_cleanup(kept);
    acc_buf_release(&out);
}
