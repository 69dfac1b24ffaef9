/* SPDX-License-Identifier: Apache-2.0 */
/* site_daemon.c - the accord-site of test_site's parts (see site_daemon.h). */
#include "site_daemon.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../lib/common/strutil.h"
#include "../../lib/proto/proto.h"
#include "../../lib/tls/tls_server.h"
#include "site_client.h"
#include "testutil.h"

char certs[512], conf[512], db[512];
struct acc_site *site;
acc_time T; /* a start well ahead, on a whole hour */

void sd_write_conf(void)
{
    char alice_fp[ACC_TLS_FP_LEN];
    struct acc_tls_peer id;
    char path[600];
    snprintf(path, sizeof path, "%s/alice.crt", certs);
    CU_ASSERT_FATAL(acc_tls_file_identity(path, &id, NULL) == ACC_OK);
    acc_strlcpy(alice_fp, id.fingerprint, sizeof alice_fp);
    FILE *f = fopen(conf, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f,
            "[daemon]\nname = alpha\nlisten = 127.0.0.1:0\ndatabase = %s\ndurable = no\n"
            "certificate = %s/site-alpha.crt\nkey = %s/site-alpha.key\nclient_ca = %s/ca.crt\n"
            "threads = 2\nlog_level = warn\ncontrol_networks = 127.0.0.0/8\n"
            /* Under valgrind on a loaded machine a TLS handshake and its head
             * took more than the default 5 s (CI: the connection closed at its
             * deadline, the test's request lost); the deadline itself is
             * test_httpd's. */
            "header_timeout = 60\n"
            "[site alpha]\nadapter = sim-batch\nnodes = 16\n"
            "[peer accord-main]\nsubject = CN=accord-main\nmax_nodes = 8\n"
            "max_duration = PT2H\nmax_advance = 86400\nmax_reservations = 3\nconnections = 4\n"
            "admin = yes\n"
            "[peer alice]\nfingerprint = %s\nmax_nodes = 4\n",
            db, certs, certs, certs, alice_fp);
    fclose(f);
}

void sd_start(void)
{
    struct acc_site_config cfg;
    struct acc_error err;
    acc_err rc = acc_site_config_load_file(conf, &cfg, &err);
    if (rc)
        fprintf(stderr, "config: %s\n", err.msg);
    CU_ASSERT_FATAL(rc == ACC_OK);
    rc = acc_site_start(&cfg, &site, &err);
    if (rc)
        fprintf(stderr, "start: %s\n", err.msg);
    CU_ASSERT_FATAL(rc == ACC_OK);
    site_client_set(certs, acc_site_port(site));
}

void sd_stop(void)
{
    acc_site_stop(site);
    site = NULL;
}

/* ------------------------------------------------------------------ client */

long sd_request(const char *method, const char *path, const struct acc_buf *body,
                struct acc_buf *out)
{
    return site_request("accord", method, path, body ? body->data : NULL, body ? body->len : 0,
                        out);
}

long sd_reserve_as(const char *who, const char *key, int64_t nodes, acc_time start,
                   int64_t duration, struct acc_buf *out)
{
    struct acc_proto_reserve r = {
        .kind = ACC_RES_NODES, .amount = nodes, .start = start, .duration = duration};
    acc_strlcpy(r.resource, "alpha", sizeof r.resource);
    struct acc_buf body = ACC_BUF_INIT;
    acc_proto_write_reserve(&r, &body);
    char path[400];
    snprintf(path, sizeof path, "/v1/reservations/%s", key);
    long st = site_request(who, "PUT", path, body.data, body.len, out);
    acc_buf_release(&body);
    return st;
}

long sd_reserve(const char *key, int64_t nodes, acc_time start, int64_t duration,
                struct acc_buf *out)
{
    return sd_reserve_as("accord", key, nodes, start, duration, out);
}

acc_time sd_booked_start(const char *key, int64_t nodes, acc_time start)
{
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_reservation r = {0};
    struct acc_error err;
    acc_time t = -1;
    if (sd_reserve(key, nodes, start, 3600, &out) == 200 &&
        acc_proto_read_reservation(out.data, out.len, &r, &err) == ACC_OK)
        t = r.start;
    acc_reservation_release(&r);
    acc_buf_release(&out);
    return t;
}

long sd_call(const char *who, const char *method, const char *key, struct acc_buf *out)
{
    char path[400];
    snprintf(path, sizeof path, "/v1/reservations/%s", key);
    return site_request(who, method, path, NULL, 0, out);
}
