/* SPDX-License-Identifier: Apache-2.0 */
/* test_remote_site.c - the remote adapter against REAL accord-site daemons
 * (libaccord_site, in-process, over mutual TLS with the certificates of
 * support/mkcerts.sh), not the fake of test_remote.c: a sim-batch site
 * "alpha" and a sim-network daemon "net" with a link alpha-beta.  What the
 * adapter asks goes through the daemon's journal, its peer limits and its
 * adapters; what the daemon refuses comes back with its code, naming the
 * site. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../../site/site.h"
#include "adapter.h"
#include "testutil.h"

#define H 3600

static char certs[512];
static struct acc_site *alpha, *net;

static const char *cert(const char *file)
{
    static char paths[8][600];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 600, "%s/%s", certs, file);
    return p;
}

static struct acc_site *start(const char *text)
{
    struct acc_site_config cfg;
    struct acc_error err;
    struct acc_site *s = NULL;
    if (acc_site_config_load_string(text, "test", &cfg, &err) || acc_site_start(&cfg, &s, &err)) {
        fprintf(stderr, "test_remote_site: %s\n", err.msg);
        return NULL;
    }
    return s;
}

static int setup(void)
{
    const char *tmp = acc_test_tmpdir();
    snprintf(certs, sizeof certs, "%s/certs", tmp);
    char cmd[700], text[2048];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    snprintf(text, sizeof text,
             "[daemon]\nname = alpha\nlisten = 127.0.0.1:0\ndatabase = %s/alpha.db\n"
             "durable = no\ncertificate = %s\nkey = %s\nclient_ca = %s\nlog_level = error\n"
             "[site alpha]\nadapter = sim-batch\nnodes = 16\nload = no\n"
             "[peer accord-main]\nsubject = CN=accord-main\nmax_nodes = 8\n"
             "max_duration = 43200\nmax_reservations = 3\n",
             tmp, cert("site-alpha.crt"), cert("site-alpha.key"), cert("ca.crt"));
    if (!(alpha = start(text)))
        return 1;
    snprintf(text, sizeof text,
             "[daemon]\nname = net\nlisten = 127.0.0.1:0\ndatabase = %s/net.db\ndurable = no\n"
             "certificate = %s\nkey = %s\nclient_ca = %s\nlog_level = error\n"
             "[network wan]\nadapter = sim-network\n"
             "[link alpha-beta]\nsites = alpha beta\ncapacity = 1000\nnetwork = wan\n"
             "[peer accord-main]\nsubject = CN=accord-main\nmax_bandwidth = 300\n",
             tmp, cert("site-net.crt"), cert("site-net.key"), cert("ca.crt"));
    return (net = start(text)) ? 0 : 1;
}

static int teardown(void)
{
    acc_site_stop(net);
    acc_site_stop(alpha);
    curl_global_cleanup();
    return 0;
}

/* accordd's remote adapter for [site alpha] or [network wan]. */
static struct acc_adapter *open_remote(bool network)
{
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u", acc_site_port(network ? net : alpha));
    struct acc_kv kv[] = {{"url", url},
                          {"ca", cert("ca.crt")},
                          {"certificate", cert("accord.crt")},
                          {"key", cert("accord.key")},
                          {"timeout", "5"}};
    static const struct acc_link_def links[] = {{"alpha-beta", "alpha", "beta", 1000}};
    struct acc_adapter_env env = {.name = network ? "wan" : "alpha",
                                  .section = network ? "[network wan]" : "[site alpha]",
                                  .db_path = ":memory:",
                                  .settings = kv,
                                  .n_settings = sizeof kv / sizeof kv[0],
                                  .nodes = 16,
                                  .links = network ? links : NULL,
                                  .n_links = network ? 1 : 0};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find("remote"), &env, &ad, &err)) {
        fprintf(stderr, "open remote: %s\n", err.msg);
        return NULL;
    }
    return ad;
}

static acc_time future(void)
{
    return (acc_now() / H + 48) * H;
}

/* rs-1 read back, cancelled by key alone and not booked again; rs-2 and
 * the rest cancelled.  r and r2 are read, not released. */
static void check_query_and_cancel(struct acc_adapter *ad, acc_time t,
                                   const struct acc_resource six, const struct acc_reservation r,
                                   const struct acc_reservation r2)
{
    struct acc_error err;
    struct acc_reservation q = {0}, r3 = {0};
    acc_err rc;
    ACC_ASSERT_OK(acc_adapter_query(ad, "rs-1", NULL, &q, &err));
    CU_ASSERT_STRING_EQUAL(q.local_id, r.local_id);
    CU_ASSERT_EQUAL(q.start, t);
    CU_ASSERT_EQUAL(q.amount, 6);
    acc_reservation_release(&q);
    /* Cancel by key alone (the local id unknown), then it is gone. */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rs-1", NULL, &err));
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "rs-1", NULL, &q, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha"));
    /* Cancelling again, or a key never reserved: nothing to do, no fault. */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rs-1", NULL, &err));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "never-1", NULL, &err));
    /* A cancelled key is not booked again. */
    rc = acc_adapter_reserve(ad, "rs-1", &six, t, 2 * H, &r3, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_STATE);
    /* The room rs-1 held is free again: 6 fit at t now. */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rs-4", &six, t, 2 * H, &r3, &err));
    CU_ASSERT_EQUAL(r3.start, t);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rs-2", r2.local_id, &err));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rs-3", NULL, &err));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rs-4", NULL, &err));
    acc_reservation_release(&r3);
}

static void test_nodes(void)
{
    struct acc_adapter *ad = open_remote(false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_TRUE(h.up);
    CU_ASSERT_TRUE(h.rtt_us > 0);
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_NODES));
    CU_ASSERT_FALSE(acc_adapter_has(ad, ACC_CAP_PROVISION));

    acc_time t = future();
    const struct acc_resource six = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 6};
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &six, t, t + 24 * H, 2 * H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t);
    CU_ASSERT_EQUAL(f.v[0].end, t + 24 * H);
    acc_frames_release(&f);

    struct acc_reservation r = {0}, again = {0};
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rs-1", &six, t, 2 * H, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.end, t + 2 * H);
    CU_ASSERT_EQUAL(r.amount, 6);
    CU_ASSERT_TRUE(r.local_id[0] != '\0');
    /* The same key again (a retry): the same reservation, not a second. */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rs-1", &six, t, 2 * H, &again, &err));
    CU_ASSERT_STRING_EQUAL(again.local_id, r.local_id);
    /* 16 - 6 = 10 left at t: another 6 still fits there. */
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &six, t, t + 24 * H, 2 * H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n >= 1, true);
    CU_ASSERT_EQUAL(f.v[0].start, t);
    acc_frames_release(&f);
    const struct acc_resource eight = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 8};
    struct acc_reservation r2 = {0};
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rs-2", &eight, t, 2 * H, &r2, &err));
    /* Now 16 - 14 = 2 at t: a preview of 6 finds room only after rs-1 and rs-2. */
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &six, t, t + 24 * H, 2 * H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n >= 1, true);
    CU_ASSERT_EQUAL(f.v[0].start, t + 2 * H);
    acc_frames_release(&f);
    /* 6 + 8 held of 16: a third of 6 asked for t is booked where the
     * batch system has room, after them, and the adapter says so. */
    struct acc_reservation r3 = {0};
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rs-3", &six, t, 2 * H, &r3, &err));
    CU_ASSERT_EQUAL(r3.start, t + 2 * H);
    acc_reservation_release(&r3);
    acc_err rc;
    /* The same key with other parameters: the key is Accord's, not reusable. */
    rc = acc_adapter_reserve(ad, "rs-1", &six, t + H, 2 * H, &r3, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_KEY_REUSED);
    check_query_and_cancel(ad, t, six, r, r2);
    acc_reservation_release(&r);
    acc_reservation_release(&again);
    acc_reservation_release(&r2);
    acc_adapter_close(ad);
}

static void test_peer_limits(void)
{
    struct acc_adapter *ad = open_remote(false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    struct acc_reservation r = {0};
    acc_time t = future() + 24 * H;
    /* More nodes than the peer's max_nodes = 8, though the site has 16. */
    const struct acc_resource nine = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 9};
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "pl-1", &nine, t, H, &r, &err), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_nodes"));
    printf("\n    %s\n", err.msg);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "pl-1", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    /* Longer than max_duration = 12 h. */
    const struct acc_resource one = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 1};
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "pl-2", &one, t, 13 * H, &r, &err), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_duration"));
    /* max_reservations = 3 held at once: the fourth is refused. */
    const char *keys[] = {"pl-a", "pl-b", "pl-c"};
    for (int i = 0; i < 3; i++) {
        ACC_ASSERT_OK(acc_adapter_reserve(ad, keys[i], &one, t, H, &r, &err));
        acc_reservation_release(&r);
    }
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "pl-d", &one, t, H, &r, &err), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_reservations"));
    for (int i = 0; i < 3; i++)
        ACC_ASSERT_OK(acc_adapter_cancel(ad, keys[i], NULL, &err));
    acc_adapter_close(ad);
}

static void test_network(void)
{
    struct acc_adapter *ad = open_remote(true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_BANDWIDTH));
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_PROVISION));
    CU_ASSERT_FALSE(acc_adapter_has(ad, ACC_CAP_NODES));
    acc_time t = future();
    const struct acc_resource bw = {.kind = ACC_RES_BANDWIDTH, .name = "alpha-beta", .amount = 300};
    const struct acc_resource too_much = {
        .kind = ACC_RES_BANDWIDTH, .name = "alpha-beta", .amount = 301};
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &bw, t, t + 4 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
    struct acc_reservation r = {0};
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "nw-0", &too_much, t, H, &r, &err), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_bandwidth"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "network wan"));
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "nw-1", &bw, t, H, &r, &err));
    CU_ASSERT_EQUAL(r.amount, 300);

    /* Provision end to end: the flow crosses the protocol and reaches the
     * daemon's sim-network adapter, which cannot provision: its refusal
     * comes back with its code, naming the site. */
    const char *a[] = {"10.79.1.11", "10.79.1.12"}, *b[] = {"10.79.2.11"};
    struct acc_flow fl = {"alpha", "beta", a, 2, b, 1};
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "nw-1", r.local_id, &fl, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "network wan"));
    printf("\n    %s\n", err.msg);
    struct acc_provision_status st;
    CU_ASSERT_EQUAL(acc_adapter_provision_status(ad, "nw-1", &st, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "network wan"));
    /* A key this peer does not hold: not found before any adapter. */
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "nw-9", NULL, &fl, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(acc_adapter_provision_status(ad, "nw-9", &st, &err), ACC_ERR_NOT_FOUND);
    /* A bad flow is refused by the adapter before anything is sent. */
    const char *bad[] = {"10.79.1.300"};
    struct acc_flow fb = {"alpha", "beta", bad, 1, b, 1};
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "nw-1", r.local_id, &fb, &err), ACC_ERR_INVALID);

    ACC_ASSERT_OK(acc_adapter_cancel(ad, "nw-1", NULL, &err));
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "nw-1", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    acc_reservation_release(&r);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"nodes: preview, reserve, same-key retry, query, cancel by key", test_nodes},
    {"the daemon's peer limits come back as PeerLimit naming the limit", test_peer_limits},
    {"network: bandwidth, provision and its status end to end", test_network},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"remote_site", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
