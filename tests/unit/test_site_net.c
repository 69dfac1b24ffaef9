/* SPDX-License-Identifier: Apache-2.0 */
/* test_site_net.c - accord-site as a network's daemon: a sim-network
 * [network wan] with one [link] between two sites it does not host,
 * in-process over mutual TLS.  Each link is a bandwidth resource; the
 * peer's max_bandwidth bounds it; provisioning is forwarded to an adapter
 * that has it and refused by one that has not. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/proto/proto.h"
#include "../../site/site.h"
#include "site_client.h"
#include "testutil.h"

static char certs[512];
static struct acc_site *site;
static acc_time T;

static int suite_init(void)
{
    const char *tmp = acc_test_tmpdir();
    snprintf(certs, sizeof certs, "%s/certs", tmp);
    char cmd[700], text[2048];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    snprintf(text, sizeof text,
             "[daemon]\nname = net\nlisten = 127.0.0.1:0\ndatabase = %s/net.db\ndurable = no\n"
             "certificate = %s/site-net.crt\nkey = %s/site-net.key\nclient_ca = %s/ca.crt\n"
             "log_level = warn\n"
             "[network wan]\nadapter = sim-network\n"
             "[link alpha-beta]\nsites = alpha beta\ncapacity = 1000\nnetwork = wan\n"
             "[peer accord-main]\nsubject = CN=accord-main\nmax_bandwidth = 300\n",
             tmp, certs, certs, certs);
    struct acc_site_config cfg;
    struct acc_error err;
    if (acc_site_config_load_string(text, "test", &cfg, &err) ||
        acc_site_start(&cfg, &site, &err)) {
        fprintf(stderr, "test_site_net: %s\n", err.msg);
        return 1;
    }
    site_client_set(certs, acc_site_port(site));
    T = (acc_now() / 3600 + 2) * 3600;
    return 0;
}

static int suite_cleanup(void)
{
    acc_site_stop(site);
    curl_global_cleanup();
    return 0;
}

static long reserve(const char *key, int64_t mbits, struct acc_buf *out)
{
    struct acc_proto_reserve r = {
        .kind = ACC_RES_BANDWIDTH, .amount = mbits, .start = T, .duration = 3600};
    acc_strlcpy(r.resource, "alpha-beta", sizeof r.resource);
    struct acc_buf body = ACC_BUF_INIT;
    acc_proto_write_reserve(&r, &body);
    char path[128];
    snprintf(path, sizeof path, "/v1/reservations/%s", key);
    long st = site_request("accord", "PUT", path, body.data, body.len, out);
    acc_buf_release(&body);
    return st;
}

static void test_health(void)
{
    struct acc_buf out = ACC_BUF_INIT;
    CU_ASSERT_EQUAL_FATAL(site_request("accord", "GET", "/v1/health", NULL, 0, &out), 200);
    struct acc_proto_health h;
    struct acc_error err;
    ACC_ASSERT_OK(acc_proto_read_health(out.data, out.len, &h, &err));
    CU_ASSERT(h.up);
    CU_ASSERT_STRING_EQUAL(h.site, "net");
    CU_ASSERT(h.caps & ACC_CAP_BANDWIDTH);
    CU_ASSERT(h.caps & ACC_CAP_REPLACE);
    CU_ASSERT_FALSE(h.caps & ACC_CAP_NODES);
    CU_ASSERT_FALSE(h.caps & ACC_CAP_PROVISION);
    CU_ASSERT_EQUAL_FATAL(h.n_resources, 1);
    CU_ASSERT_EQUAL(h.resources[0].kind, ACC_RES_BANDWIDTH);
    CU_ASSERT_STRING_EQUAL(h.resources[0].name, "alpha-beta");
    CU_ASSERT_EQUAL(h.resources[0].capacity, 1000);
    acc_buf_release(&out);
}

static void test_bandwidth(void)
{
    struct acc_buf out = ACC_BUF_INIT, body = ACC_BUF_INIT;
    struct acc_error err;
    /* The link is bandwidth, not nodes. */
    struct acc_proto_preview p = {
        .kind = ACC_RES_NODES, .amount = 1, .from = T, .until = T + 7200, .duration = 3600};
    acc_strlcpy(p.resource, "alpha-beta", sizeof p.resource);
    acc_proto_write_preview(&p, &body);
    CU_ASSERT_EQUAL(site_request("accord", "POST", "/v1/preview", body.data, body.len, &out), 404);
    p.kind = ACC_RES_BANDWIDTH;
    p.amount = 300;
    acc_buf_reset(&body);
    acc_proto_write_preview(&p, &body);
    CU_ASSERT_EQUAL(site_request("accord", "POST", "/v1/preview", body.data, body.len, &out), 200);
    struct acc_frames f;
    ACC_ASSERT_OK(acc_proto_read_frames(out.data, out.len, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
    /* Over max_bandwidth: the site's limit. */
    CU_ASSERT_EQUAL(reserve("b0", 301, &out), 403);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "max_bandwidth"));
    /* Three of 300 fit the link's 1000 at T. */
    const char *keys[] = {"b1", "b2", "b3"};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(reserve(keys[i], 300, &out), 200);
        struct acc_reservation r = {0};
        ACC_ASSERT_OK(acc_proto_read_reservation(out.data, out.len, &r, &err));
        CU_ASSERT_EQUAL(r.start, T);
        CU_ASSERT_EQUAL(r.amount, 300);
        acc_reservation_release(&r);
    }
    /* sim-network does not provision: refused, naming why. */
    const char *a[] = {"10.79.1.11"}, *b[] = {"10.79.2.11"};
    struct acc_flow fl = {"alpha", "beta", a, 1, b, 1};
    acc_buf_reset(&body);
    acc_proto_write_flow(&fl, &body);
    CU_ASSERT_EQUAL(
        site_request("accord", "PUT", "/v1/reservations/b1/provision", body.data, body.len, &out),
        501);
    CU_ASSERT_EQUAL(site_fault_of(&out), ACC_ERR_UNSUPPORTED);
    /* Not this peer's key (none): not found before the adapter. */
    CU_ASSERT_EQUAL(
        site_request("accord", "PUT", "/v1/reservations/zz/provision", body.data, body.len, &out),
        404);
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/reservations/%s", keys[i]);
        CU_ASSERT_EQUAL(site_request("accord", "DELETE", path, NULL, 0, &out), 204);
    }
    acc_buf_release(&body);
    acc_buf_release(&out);
}

static const struct acc_test_case tests[] = {
    {"health of a network daemon", test_health},
    {"links as bandwidth resources", test_bandwidth},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"site_net", suite_init, suite_cleanup, tests},
    {NULL, NULL, NULL, NULL},
};
