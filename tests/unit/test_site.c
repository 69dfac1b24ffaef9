/* SPDX-License-Identifier: Apache-2.0 */
/* test_site.c - accord-site in-process on 127.0.0.1 (port 0) with a
 * sim-batch site, driven over mutual TLS with libcurl and the protocol's
 * own codec: health, preview, sd_reserve (the same key again, the same key
 * with other terms), query, cancel (an unknown key, another peer's key),
 * the peer's limits, a restart that keeps bookings, recovery of an intent
 * row a crash left, bodies too large, bad XML, paths and methods, and
 * certificates refused in the handshake.  The certificates are made by
 * tests/support/mkcerts.sh in the test's temporary directory.  One suite:
 * the tests build on the state the ones before left (test_site_ops.c has
 * the jobs, the connections per peer and reload). */
#include <curl/curl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/proto/proto.h"
#include "../../lib/tls/tls_server.h"
#include "../../site/site.h"
#include "site_client.h"
#include "site_daemon.h"
#include "testutil.h"

static int suite_init(void)
{
    const char *tmp = acc_test_tmpdir();
    snprintf(certs, sizeof certs, "%s/certs", tmp);
    snprintf(conf, sizeof conf, "%s/alpha.conf", tmp);
    snprintf(db, sizeof db, "%s/alpha.db", tmp);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0)
        return 1;
    T = (acc_now() / 3600 + 2) * 3600;
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : 1;
}

static int suite_cleanup(void)
{
    sd_stop();
    curl_global_cleanup();
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_config_errors(void)
{
    struct acc_site_config cfg;
    struct acc_error err;
    const char *no_ca = "[daemon]\nname = a\ncertificate = x\nkey = y\n"
                        "[site a]\nadapter = sim-batch\nnodes = 2\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(no_ca, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "client_ca"));
    const char *bad_peer = "[daemon]\nname = a\ncertificate = x\nkey = y\nclient_ca = z\n"
                           "[site a]\nadapter = sim-batch\nnodes = 2\n[peer p]\nmax_nodes = 2\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(bad_peer, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[peer p] needs subject"));
    const char *bad_limit = "[daemon]\nname = a\ncertificate = x\nkey = y\nclient_ca = z\n"
                            "[site a]\nadapter = sim-batch\nnodes = 2\n"
                            "[peer p]\nsubject = CN=p\nmax_duration = -5\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(bad_limit, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_duration"));
    const char *unknown = "[daemon]\nname = a\nbogus = 1\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(unknown, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bogus"));
    /* A network daemon: its links join sites it does not host. */
    const char *net = "[daemon]\nname = n\ncertificate = x\nkey = y\nclient_ca = z\n"
                      "[network wan]\nadapter = sim-network\n"
                      "[link a-b]\nsites = a b\ncapacity = 1000\nnetwork = wan\n"
                      "[peer p]\nsubject = CN=p\nmax_duration = PT12H\n";
    ACC_ASSERT_OK(acc_site_config_load_string(net, "t", &cfg, &err));
    CU_ASSERT_EQUAL(cfg.peers[0].max_duration, 43200);
    CU_ASSERT_EQUAL(cfg.res.n_links, 1);
    CU_ASSERT_EQUAL(cfg.request_timeout, 30); /* the default: a body's deadline */
    acc_site_config_release(&cfg);
    const char *deadline = "[daemon]\nname = n\ncertificate = x\nkey = y\nclient_ca = z\n"
                           "request_timeout = PT45S\n[network wan]\nadapter = sim-network\n"
                           "[link a-b]\nsites = a b\ncapacity = 1000\nnetwork = wan\n"
                           "[peer p]\nsubject = CN=p\n";
    ACC_ASSERT_OK(acc_site_config_load_string(deadline, "t", &cfg, &err));
    CU_ASSERT_EQUAL(cfg.request_timeout, 45);
    acc_site_config_release(&cfg);
}

static void test_health(void)
{
    sd_write_conf();
    sd_start();
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(sd_request("GET", "/v1/health", NULL, &out), 200);
    struct acc_proto_health h;
    struct acc_error err;
    ACC_ASSERT_OK(acc_proto_read_health(out.data, out.len, &h, &err));
    CU_ASSERT(h.up);
    CU_ASSERT_STRING_EQUAL(h.site, "alpha");
    CU_ASSERT_EQUAL(h.version, 1);
    CU_ASSERT(h.caps & ACC_CAP_NODES);
    CU_ASSERT_FALSE(h.caps & ACC_CAP_BANDWIDTH);
    CU_ASSERT(h.caps & ACC_CAP_SUBMIT); /* control_networks given, the proxy installed */
    CU_ASSERT_EQUAL_FATAL(h.n_resources, 1);
    CU_ASSERT_STRING_EQUAL(h.resources[0].name, "alpha");
    CU_ASSERT_EQUAL(h.resources[0].capacity, 16);
    acc_buf_release(&out);
}

static void test_preview(void)
{
    struct acc_proto_preview p = {
        .kind = ACC_RES_NODES, .amount = 4, .from = T, .until = T + 6 * 3600, .duration = 3600};
    acc_strlcpy(p.resource, "alpha", sizeof p.resource);
    struct acc_buf body = ACC_BUF_INIT, out = ACC_BUF_INIT;
    acc_proto_write_preview(&p, &body);
    CU_ASSERT_EQUAL(sd_request("POST", "/v1/preview", &body, &out), 200);
    struct acc_frames f;
    struct acc_error err;
    ACC_ASSERT_OK(acc_proto_read_frames(out.data, out.len, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1); /* an empty calendar: one frame, all of it */
    CU_ASSERT_EQUAL(f.v[0].start, T);
    CU_ASSERT_EQUAL(f.v[0].end, T + 6 * 3600);
    acc_frames_release(&f);
    /* An unknown resource is not found, naming what there is. */
    acc_strlcpy(p.resource, "beta", sizeof p.resource);
    acc_buf_reset(&body);
    acc_proto_write_preview(&p, &body);
    CU_ASSERT_EQUAL(sd_request("POST", "/v1/preview", &body, &out), 404);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "it has: alpha"));
    /* Over the peer's nodes: its limit, before the adapter sees it. */
    acc_strlcpy(p.resource, "alpha", sizeof p.resource);
    p.amount = 9;
    acc_buf_reset(&body);
    acc_proto_write_preview(&p, &body);
    CU_ASSERT_EQUAL(sd_request("POST", "/v1/preview", &body, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_nodes"));
    acc_buf_release(&body);
    acc_buf_release(&out);
}

static void test_reserve_idempotent(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(sd_reserve("k1", 4, T, 3600, &out), 200);
    struct acc_reservation r1 = {0}, r2 = {0};
    ACC_ASSERT_OK(acc_proto_read_reservation(out.data, out.len, &r1, &err));
    CU_ASSERT(r1.local_id[0] != '\0');
    CU_ASSERT_EQUAL(r1.start, T);
    CU_ASSERT_EQUAL(r1.end, T + 3600);
    CU_ASSERT_EQUAL(r1.amount, 4);
    /* The same key again: the same reservation, not a second one. */
    CU_ASSERT_EQUAL(sd_reserve("k1", 4, T, 3600, &out), 200);
    ACC_ASSERT_OK(acc_proto_read_reservation(out.data, out.len, &r2, &err));
    CU_ASSERT_STRING_EQUAL(r1.local_id, r2.local_id);
    /* The same key with other terms: refused, nothing changed. */
    CU_ASSERT_EQUAL(sd_reserve("k1", 5, T, 3600, &out), 422);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_KEY_REUSED);
    /* 16 nodes: two reservations of 6 fit at T beside the one k1 (a second
     * k1 would have left room for one). */
    CU_ASSERT_EQUAL(sd_booked_start("k1b", 6, T), T);
    CU_ASSERT_EQUAL(sd_booked_start("k1c", 6, T), T);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k1b", &out), 204);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k1c", &out), 204);
    /* Query reads it back from the adapter. */
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k1", &out), 200);
    acc_reservation_release(&r2);
    ACC_ASSERT_OK(acc_proto_read_reservation(out.data, out.len, &r2, &err));
    CU_ASSERT_STRING_EQUAL(r1.local_id, r2.local_id);
    CU_ASSERT_EQUAL(r2.start, T);
    acc_reservation_release(&r1);
    acc_reservation_release(&r2);
    acc_buf_release(&out);
}

static void test_other_peer(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    /* alice sees nothing of accord-main's k1, and her cancel does nothing. */
    CU_ASSERT_EQUAL(sd_call("alice", "GET", "k1", &out), 404);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(sd_call("alice", "DELETE", "k1", &out), 204);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k1", &out), 200);
    /* Nor may she book under its key. */
    CU_ASSERT_EQUAL(sd_reserve_as("alice", "k1", 2, T, 3600, &out), 422);
    /* Her own limits apply to her: 4 nodes. */
    CU_ASSERT_EQUAL(sd_reserve_as("alice", "a1", 5, T, 3600, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_PEER_LIMIT);
    acc_buf_release(&out);
}

static void test_cancel(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k1", &out), 204);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k1", &out), 404);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k1", &out), 204); /* idempotent */
    /* A cancelled key is not booked again. */
    CU_ASSERT_EQUAL(sd_reserve("k1", 4, T, 3600, &out), 409);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_STATE);
    /* An unknown key: 204, and a reserve arriving after its cancel books
     * nothing. */
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "never-booked", &out), 204);
    CU_ASSERT_EQUAL(sd_reserve("never-booked", 4, T, 3600, &out), 409);
    /* The capacity k1 held is free again: 8 + 8 fit at T. */
    CU_ASSERT_EQUAL(sd_booked_start("k2", 8, T), T);
    CU_ASSERT_EQUAL(sd_booked_start("k3", 8, T), T);
    acc_buf_release(&out);
}

static void test_limits(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(sd_reserve("l1", 9, T + 86400 / 2, 3600, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_nodes"));
    CU_ASSERT_EQUAL(sd_reserve("l2", 1, T, 3 * 3600, &out), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_duration"));
    CU_ASSERT_EQUAL(sd_reserve("l3", 1, acc_now() + 2 * 86400, 3600, &out), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_advance"));
    /* k2 and k3 are open; a third fits, a fourth is over max_reservations. */
    CU_ASSERT_EQUAL(sd_reserve("l4", 1, T + 3 * 3600, 3600, &out), 200);
    CU_ASSERT_EQUAL(sd_reserve("l5", 1, T + 3 * 3600, 3600, &out), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_reservations"));
    /* Nothing of the refused ones was journalled. */
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "l1", &out), 404);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "l5", &out), 404);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "l4", &out), 204);
    /* The count is kept in memory as an upper bound; at the limit it is
     * counted again, and the cancel of l4 made room for one. */
    CU_ASSERT_EQUAL(sd_reserve("l6", 1, T + 3 * 3600, 3600, &out), 200);
    CU_ASSERT_EQUAL(sd_reserve("l7", 1, T + 3 * 3600, 3600, &out), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "holds 3 open reservations"));
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "l6", &out), 204);
    acc_buf_release(&out);
}

static void test_restart_keeps_bookings(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    sd_stop();
    sd_start();
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k2", &out), 200);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k3", &out), 200);
    /* k2 holds 8 of 16 nodes at T: the adapter's calendar came back too. */
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k3", &out), 204);
    CU_ASSERT_EQUAL(sd_booked_start("k4", 8, T), T);
    /* sim-batch books later than asked when the start is taken. */
    CU_ASSERT_EQUAL(sd_reserve("k5", 8, T, 3600, &out), 200);
    struct acc_reservation r = {0};
    struct acc_error err;
    ACC_ASSERT_OK(acc_proto_read_reservation(out.data, out.len, &r, &err));
    CU_ASSERT(r.start >= T + 3600);
    acc_reservation_release(&r);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k5", &out), 204);
    acc_buf_release(&out);
}

/* A second daemon on the journal of a running one refuses to start, naming
 * the journal and the holder, before its recovery could cancel anything of
 * the first one's; so does one on a hard link of it (another name, with
 * another lock file beside it), before SQLite makes a second write-ahead log
 * of the file; the first one serves on. */
static void test_second_daemon_refused(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_site_config cfg;
    struct acc_error err;
    ACC_ASSERT_OK(acc_site_config_load_file(conf, &cfg, &err));
    struct acc_site *second = NULL;
    CU_ASSERT_EQUAL(acc_site_start(&cfg, &second, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(second);
    char want[1400];
    snprintf(want, sizeof want,
             "database %s is in use by another program (pid %ld, lock file %s.lock)", db,
             (long)getpid(), db);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));

    char hard[600], side[700];
    snprintf(hard, sizeof hard, "%s-hard", db);
    unlink(hard);
    CU_ASSERT_EQUAL_FATAL(link(db, hard), 0);
    ACC_ASSERT_OK(acc_site_config_load_file(conf, &cfg, &err));
    ACC_ASSERT_OK(acc_site_config_set_db(&cfg, hard, &err));
    CU_ASSERT_EQUAL(acc_site_start(&cfg, &second, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(second);
    acc_site_stop(second);
    snprintf(want, sizeof want,
             "database %s is in use by another program (pid %ld, which has the same file open "
             "as %s)",
             hard, (long)getpid(), db);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    snprintf(side, sizeof side, "%s-wal", hard);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
    unlink(hard);
    snprintf(side, sizeof side, "%s.sim-alpha", hard);
    unlink(side);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k2", &out), 200);
    acc_buf_release(&out);
}

/* A crash between the adapter's reserve and the journal's "reserved": the
 * row says intent while the adapter holds the booking.  Start-up cancels it
 * at the adapter by key. */
static void test_intent_recovered(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    sd_stop();
    sqlite3 *h = NULL;
    CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
    CU_ASSERT_FATAL(sqlite3_exec(h, "UPDATE site_bookings SET state = 'intent' WHERE key = 'k4'",
                                 NULL, NULL, NULL) == SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_changes(h), 1);
    sqlite3_close(h);
    sd_start();
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k4", &out), 404);
    /* k4's 8 nodes are free at the adapter again. */
    CU_ASSERT_EQUAL(sd_booked_start("k6", 8, T), T);
    /* And a retry of k4 is not booked: it was cancelled. */
    CU_ASSERT_EQUAL(sd_reserve("k4", 8, T, 3600, &out), 409);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_STATE);
    acc_buf_release(&out);
}

/* A power loss may take an intent row (it is written without waiting for
 * the disk; the "reserved" row that follows carries it there) while the
 * adapter keeps the booking, before the peer heard back.  The peer cancels
 * such a key: the journal does not know it, and the cancel reaches the
 * adapter all the same. */
static void test_lost_intent_cancelled(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    sd_stop();
    sqlite3 *h = NULL;
    CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
    CU_ASSERT_FATAL(sqlite3_exec(h, "DELETE FROM site_bookings WHERE key = 'k6'", NULL, NULL,
                                 NULL) == SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_changes(h), 1);
    sqlite3_close(h);
    sd_start();
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "k6", &out), 404);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", "k6", &out), 204);
    /* k6's 8 nodes are free at the adapter again (k2 holds the other 8). */
    CU_ASSERT_EQUAL(sd_booked_start("k7", 8, T), T);
    /* And a late reserve of k6 books nothing. */
    CU_ASSERT_EQUAL(sd_reserve("k6", 8, T, 3600, &out), 409);
    acc_buf_release(&out);
}

static void test_bad_requests(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    /* Over 64 KiB: refused on its Content-Length. */
    size_t big = ACC_PROTO_BODY_MAX + 100;
    char *body = malloc(big);
    CU_ASSERT_FATAL(body != NULL);
    memset(body, ' ', big);
    CU_ASSERT_EQUAL(site_request("accord", "POST", "/v1/preview", body, big, &out), 413);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_TOO_LARGE);
    free(body);
    const char *bad = "<Preview xmlns='urn:accord:site:1'><unclosed>";
    CU_ASSERT_EQUAL(site_request("accord", "POST", "/v1/preview", bad, strlen(bad), &out), 400);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_MALFORMED);
    const char *dtd = "<!DOCTYPE x [<!ENTITY e 'x'>]><Preview xmlns='urn:accord:site:1'/>";
    long st = site_request("accord", "POST", "/v1/preview", dtd, strlen(dtd), &out);
    CU_ASSERT(st == 400 || st == 422);
    CU_ASSERT_EQUAL(site_request("accord", "GET", "/v1/nothing", NULL, 0, &out), 404);
    CU_ASSERT_EQUAL(site_request("accord", "POST", "/v1/health", "", 0, &out), 405);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_METHOD);
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "bad%20key", &out), 400); /* docs/protocol.md */
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_BAD_REQUEST);
    acc_buf_release(&out);
}

/* Keys outside the protocol's [A-Za-z0-9._:-]{1,95} (never . or ..) are 400
 * InvalidRequest naming what is wrong, whatever the method, and nothing is
 * booked.  Defects: z%00y booked key z; a 96-byte key and .. were 404. */
static void test_bad_keys(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    char k95[96], k96[97], k300[301];
    memset(k95, 'k', 95);
    k95[95] = '\0';
    memset(k96, 'k', 96);
    k96[96] = '\0';
    memset(k300, 'k', 300);
    k300[300] = '\0';
    static const char *const methods[] = {"PUT", "GET", "DELETE"};
    const struct {
        const char *key, *says;
    } bad[] = {
        {"z%00y", "NUL"},
        {k96, "96 bytes; at most 95"},
        {k300, "300 bytes; at most 95"},
        {"..", "'..'"},
        {".", "'.'"},
        {"%2E%2E", "'..'"},
        {"a%20b", "' ' (0x20)"},
        {"caf%C3%A9", "0xc3"},
        {"a%0Ab", "0x0a"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t m = 0; m < 3; m++) {
            long st = m == 0 ? sd_reserve(bad[i].key, 1, T + 20 * 3600, 3600, &out)
                             : sd_call("accord", methods[m], bad[i].key, &out);
            CU_ASSERT_EQUAL(st, 400);
            CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_BAD_REQUEST);
            acc_buf_putc(&out, '\0');
            if (!strstr(out.data, bad[i].says)) {
                CU_FAIL("the fault does not say what is wrong with the key");
                fprintf(stderr, "\n  %s %.40s: %s\n", methods[m], bad[i].key, out.data);
            }
        }
    }
    /* Nothing was booked under the part before %00. */
    CU_ASSERT_EQUAL(sd_call("accord", "GET", "z", &out), 404);
    /* The longest key there is, and a job id no better than a key. */
    CU_ASSERT_EQUAL(sd_reserve(k95, 1, T + 20 * 3600, 3600, &out), 200);
    CU_ASSERT_EQUAL(sd_call("accord", "DELETE", k95, &out), 204);
    CU_ASSERT_EQUAL(site_request("accord", "GET", "/v1/jobs/..", NULL, 0, &out), 400);
    acc_buf_putc(&out, '\0');
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "job id"));
    acc_buf_release(&out);
}

/* /metrics: an admin peer's (accord-main) with the figures of what came
 * before; another peer's is refused. */
static void test_metrics(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(sd_request("GET", "/metrics", NULL, &out), 200);
    const char *m = out.data ? out.data : "";
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "# TYPE accord_http_requests_total counter\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "\naccord_http_requests_total{code=\"200\"} "));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "\naccord_http_requests_total{code=\"404\"} "));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(m, "\naccord_adapter_up{adapter=\"alpha\",kind=\"sim-batch\"} 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "\naccord_site_jobs_running 0\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "\naccord_http_connections_waiting "));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "\naccord_build_info{version=\"" ACCORD_VERSION "\"} 1\n"));
    CU_ASSERT_EQUAL(site_request("alice", "GET", "/metrics", NULL, 0, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data ? out.data : "", "admin = yes"));
    CU_ASSERT_PTR_NULL(strstr(out.data ? out.data : "", "accord_"));
    /* A bad value of the flag is refused with the key named. */
    struct acc_site_config cfg;
    struct acc_error err;
    const char *bad = "[daemon]\nname = a\ncertificate = x\nkey = y\nclient_ca = z\n"
                      "[site a]\nadapter = sim-batch\nnodes = 2\n"
                      "[peer p]\nsubject = CN=p\nadmin = perhaps\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(bad, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "admin"));
    const char *bad_only = "[daemon]\nname = a\ncertificate = x\nkey = y\nclient_ca = z\n"
                           "[site a]\nadapter = sim-batch\nnodes = 2\n"
                           "[peer p]\nsubject = CN=p\nmetrics_only = maybe\n";
    CU_ASSERT_EQUAL(acc_site_config_load_string(bad_only, "t", &cfg, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "metrics_only"));
    const char *good = "[daemon]\nname = a\ncertificate = x\nkey = y\nclient_ca = z\n"
                       "access_log = no\n[site a]\nadapter = sim-batch\nnodes = 2\n"
                       "[peer p]\nsubject = CN=p\nadmin = yes\n[peer q]\nsubject = CN=q\n"
                       "[peer m]\nsubject = CN=m\nmetrics_only = yes\n";
    ACC_ASSERT_OK(acc_site_config_load_string(good, "t", &cfg, &err));
    CU_ASSERT_FALSE(cfg.access_log);
    CU_ASSERT_TRUE(cfg.peers[0].admin);
    CU_ASSERT_FALSE(cfg.peers[0].metrics_only);
    CU_ASSERT_FALSE(cfg.peers[1].admin);
    CU_ASSERT_FALSE(cfg.peers[1].metrics_only);
    CU_ASSERT_TRUE(cfg.peers[2].metrics_only);
    acc_site_config_release(&cfg);
    acc_buf_release(&out);
}

static void test_handshake_refusals(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(site_request("accord", "GET", "/v1/health", NULL, 0, &out), 200);
    /* Same CA, no [peer] names it; another CA; expired; tampered; none:
     * the handshake fails, no HTTP answer at all. */
    const char *refused[] = {"intruder", "stranger", "expired", "tampered", NULL};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        CU_ASSERT_EQUAL(site_request(refused[i], "GET", "/v1/health", NULL, 0, &out), -1);
    acc_buf_release(&out);
}

static const struct acc_test_case tests[] = {
    {"config errors", test_config_errors},
    {"health", test_health},
    {"preview", test_preview},
    {"reserve: the same key again is the same reservation", test_reserve_idempotent},
    {"another peer sees and cancels nothing", test_other_peer},
    {"cancel, unknown keys, cancelled keys", test_cancel},
    {"peer limits", test_limits},
    {"restart keeps bookings", test_restart_keeps_bookings},
    {"a second daemon on the journal refuses to start", test_second_daemon_refused},
    {"intent rows cancelled at start-up", test_intent_recovered},
    {"a lost intent's booking goes with the peer's cancel", test_lost_intent_cancelled},
    {"bad requests", test_bad_requests},
    {"bad keys: 400, nothing booked", test_bad_keys},
    {"metrics: admin peers only", test_metrics},
    {"handshake refusals", test_handshake_refusals},
    {"jobs: Hydra proxies", test_jobs},
    {"connections per peer", test_connection_limit},
    {"connections that never finish their handshake", test_hostile_connections},
    {"reload", test_reload},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"site", suite_init, suite_cleanup, tests},
    {NULL, NULL, NULL, NULL},
};
