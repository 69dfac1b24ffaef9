/* SPDX-License-Identifier: Apache-2.0 */
/* test_proto.c - the adapter protocol v1 (lib/proto): every document
 * written, validated against schema/adapter-protocol.xsd and read back;
 * faults for every code.  test_proto_bad.c: what the readers refuse. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_internal.h"
#include "strutil.h"
#include "testutil.h"

#define T0 ((acc_time)1795334400) /* 2026-11-22T08:00:00Z */

/* The writer's document is well-formed, starts with the declaration and
 * is valid against the schema; prints why not. */
static bool valid(const struct acc_buf *b)
{
    struct acc_error e = {0};
    const char *s = acc_buf_str(b);
    if (!s)
        return false;
    if (strncmp(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 38) != 0) {
        fprintf(stderr, "no XML declaration:\n%s\n", s);
        return false;
    }
    if (b->len > ACC_PROTO_BODY_MAX) {
        fprintf(stderr, "%zu bytes: over the body limit\n", b->len);
        return false;
    }
    if (getenv("ACC_TEST_DUMP"))
        fprintf(stderr, "%s\n", s);
    if (acc_proto_validate(s, b->len, &e) != ACC_OK) {
        fprintf(stderr, "invalid: %s\n%s\n", e.msg, s);
        return false;
    }
    return true;
}

static void test_preview(void)
{
    struct acc_proto_preview p = {.kind = ACC_RES_NODES,
                                  .amount = 4,
                                  .from = T0,
                                  .until = T0 + 86400,
                                  .duration = 5400},
                             q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_strlcpy(p.resource, "alpha", sizeof p.resource);
    acc_proto_write_preview(&p, &b);
    CU_ASSERT(valid(&b));
    memset(&q, 0x5a, sizeof q);
    ACC_ASSERT_OK(acc_proto_read_preview(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.kind, ACC_RES_NODES);
    CU_ASSERT_STRING_EQUAL(q.resource, "alpha");
    CU_ASSERT_EQUAL(q.amount, 4);
    CU_ASSERT_EQUAL(q.from, T0);
    CU_ASSERT_EQUAL(q.until, T0 + 86400);
    CU_ASSERT_EQUAL(q.duration, 5400);
    CU_ASSERT_STRING_EQUAL(q.old_key, "");
    CU_ASSERT_PTR_NULL(strstr(b.data, "Replacing"));

    /* bandwidth, an old key, an odd duration */
    p.kind = ACC_RES_BANDWIDTH;
    p.amount = 750;
    p.duration = 90061; /* P1DT1H1M1S */
    acc_strlcpy(p.resource, "alpha-beta", sizeof p.resource);
    acc_strlcpy(p.old_key, "agr-1:v1.c0", sizeof p.old_key);
    acc_buf_reset(&b);
    acc_proto_write_preview(&p, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_preview(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.kind, ACC_RES_BANDWIDTH);
    CU_ASSERT_STRING_EQUAL(q.resource, "alpha-beta");
    CU_ASSERT_EQUAL(q.amount, 750);
    CU_ASSERT_EQUAL(q.duration, 90061);
    CU_ASSERT_STRING_EQUAL(q.old_key, "agr-1:v1.c0");
    acc_buf_release(&b);
}

static void test_frames(void)
{
    struct acc_frames f, g;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_frames_init(&f);
    /* none */
    acc_proto_write_frames(&f, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_frames(b.data, b.len, &g, &e));
    CU_ASSERT_EQUAL(g.n, 0);
    CU_ASSERT_FALSE(g.truncated);
    acc_frames_release(&g);

    ACC_ASSERT_OK(acc_frames_push(&f, T0, T0 + 3600));
    ACC_ASSERT_OK(acc_frames_push(&f, T0 + 7200, ACC_TIME_MAX));
    f.truncated = true;
    acc_buf_reset(&b);
    acc_proto_write_frames(&f, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_frames(b.data, b.len, &g, &e));
    CU_ASSERT_EQUAL_FATAL(g.n, 2);
    CU_ASSERT_EQUAL(g.v[0].start, T0);
    CU_ASSERT_EQUAL(g.v[0].end, T0 + 3600);
    CU_ASSERT_EQUAL(g.v[1].start, T0 + 7200);
    CU_ASSERT_EQUAL(g.v[1].end, ACC_TIME_MAX);
    CU_ASSERT(g.truncated);
    acc_frames_release(&g);

    /* more than a document holds: the first ACC_PROTO_MAX_FRAMES, truncated */
    acc_frames_reset(&f);
    for (int i = 0; i < ACC_PROTO_MAX_FRAMES + 100; i++)
        ACC_ASSERT_OK(acc_frames_push(&f, T0 + i * 100, T0 + i * 100 + 50));
    acc_buf_reset(&b);
    acc_proto_write_frames(&f, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_frames(b.data, b.len, &g, &e));
    CU_ASSERT_EQUAL(g.n, ACC_PROTO_MAX_FRAMES);
    CU_ASSERT(g.truncated);
    CU_ASSERT_EQUAL(g.v[ACC_PROTO_MAX_FRAMES - 1].start, T0 + (ACC_PROTO_MAX_FRAMES - 1) * 100);
    acc_frames_release(&g);
    acc_frames_release(&f);
    acc_buf_release(&b);
}

static void test_reserve(void)
{
    struct acc_proto_reserve r = {.kind = ACC_RES_NODES, .amount = 2, .start = T0, .duration = 60},
                             q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_strlcpy(r.resource, "beta", sizeof r.resource);
    acc_proto_write_reserve(&r, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_reserve(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.kind, ACC_RES_NODES);
    CU_ASSERT_STRING_EQUAL(q.resource, "beta");
    CU_ASSERT_EQUAL(q.amount, 2);
    CU_ASSERT_EQUAL(q.start, T0);
    CU_ASSERT_EQUAL(q.duration, 60);
    CU_ASSERT_STRING_EQUAL(q.old_key, "");

    acc_strlcpy(r.old_key, "k-old", sizeof r.old_key);
    acc_buf_reset(&b);
    acc_proto_write_reserve(&r, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_reserve(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.old_key, "k-old");
    acc_buf_release(&b);
}

static void test_reservation(void)
{
    struct acc_reservation r = {.start = T0, .end = T0 + 3600, .amount = 3}, q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_strlcpy(r.local_id, "accord_agr-1.c0", sizeof r.local_id);
    r.nodes = "node-1,node-2,n3.example.org";
    acc_proto_write_reservation("agr-1.c0", ACC_RES_NODES, "alpha", &r, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "state=\"Observed\""));
    ACC_ASSERT_OK(acc_proto_read_reservation(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.local_id, "accord_agr-1.c0");
    CU_ASSERT_EQUAL(q.start, T0);
    CU_ASSERT_EQUAL(q.end, T0 + 3600);
    CU_ASSERT_EQUAL(q.amount, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q.nodes);
    CU_ASSERT_STRING_EQUAL(q.nodes, "node-1,node-2,n3.example.org");
    acc_reservation_release(&q);

    /* no node names (a link), no local id, markup in an id */
    r.nodes = NULL;
    r.local_id[0] = '\0';
    acc_buf_reset(&b);
    acc_proto_write_reservation("agr-1.l0", ACC_RES_BANDWIDTH, "a-b", &r, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_reservation(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.local_id, "");
    acc_strlcpy(r.local_id, "a&b<c\"d'e>", sizeof r.local_id);
    acc_buf_reset(&b);
    acc_proto_write_reservation("agr-1.l0", ACC_RES_BANDWIDTH, "a-b", &r, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_reservation(b.data, b.len, &q, &e));
    CU_ASSERT_PTR_NULL(q.nodes);
    CU_ASSERT_STRING_EQUAL(q.local_id, "a&b<c\"d'e>");
    acc_buf_release(&b);
}

static void test_flow(void)
{
    const char *a[] = {"10.79.1.11", "10.79.1.12"}, *bb[] = {"192.168.0.1"};
    struct acc_flow f = {"alpha", "beta", a, 2, bb, 1};
    struct acc_proto_flow q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_proto_write_flow(&f, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_flow(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.flow.site_a, "alpha");
    CU_ASSERT_STRING_EQUAL(q.flow.site_b, "beta");
    CU_ASSERT_EQUAL_FATAL(q.flow.n_a, 2);
    CU_ASSERT_EQUAL_FATAL(q.flow.n_b, 1);
    CU_ASSERT_STRING_EQUAL(q.flow.addrs_a[1], "10.79.1.12");
    CU_ASSERT_STRING_EQUAL(q.flow.addrs_b[0], "192.168.0.1");
    acc_proto_flow_release(&q);
    acc_proto_flow_release(&q); /* twice: harmless */

    /* the most addresses a side may have, and an empty side */
    const char **many = calloc(ACC_PROTO_MAX_ADDRS, sizeof *many);
    char(*text)[16] = calloc(ACC_PROTO_MAX_ADDRS, 16);
    CU_ASSERT_FATAL(many && text);
    for (int i = 0; i < ACC_PROTO_MAX_ADDRS; i++) {
        snprintf(text[i], 16, "10.0.%d.%d", i / 200, i % 200);
        many[i] = text[i];
    }
    struct acc_flow g = {"a", "b", many, ACC_PROTO_MAX_ADDRS, NULL, 0};
    acc_buf_reset(&b);
    acc_proto_write_flow(&g, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_flow(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.flow.n_a, ACC_PROTO_MAX_ADDRS);
    CU_ASSERT_EQUAL(q.flow.n_b, 0);
    CU_ASSERT_STRING_EQUAL(q.flow.addrs_a[ACC_PROTO_MAX_ADDRS - 1], text[ACC_PROTO_MAX_ADDRS - 1]);
    acc_proto_flow_release(&q);
    free(many);
    free(text);
    acc_buf_release(&b);
}

static void test_provision_status(void)
{
    struct acc_provision_status s = {.provisioned = true,
                                     .active = false,
                                     .start = T0,
                                     .end = T0 + 600,
                                     .activated = T0 + 1,
                                     .state = ACC_GUARANTEE_VIOLATED,
                                     .violated_at = T0 + 300,
                                     .bytes = UINT64_MAX,
                                     .packets = 12,
                                     .drops = 0},
                                q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_strlcpy(s.why, "class 1:10 on veth-a <gone> & \"missing\"", sizeof s.why);
    acc_proto_write_provision_status(&s, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_provision_status(b.data, b.len, &q, &e));
    CU_ASSERT(q.provisioned);
    CU_ASSERT_FALSE(q.active);
    CU_ASSERT_EQUAL(q.start, T0);
    CU_ASSERT_EQUAL(q.end, T0 + 600);
    CU_ASSERT_EQUAL(q.activated, T0 + 1);
    CU_ASSERT_EQUAL(q.state, ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_EQUAL(q.violated_at, T0 + 300);
    CU_ASSERT_STRING_EQUAL(q.why, s.why);
    CU_ASSERT_EQUAL(q.bytes, UINT64_MAX);
    CU_ASSERT_EQUAL(q.packets, 12);
    CU_ASSERT_EQUAL(q.drops, 0);

    struct acc_provision_status z = {.start = T0, .end = T0 + 1};
    acc_buf_reset(&b);
    acc_proto_write_provision_status(&z, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_provision_status(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.state, ACC_GUARANTEE_NOT_DETERMINED);
    CU_ASSERT_EQUAL(q.activated, 0);
    CU_ASSERT_EQUAL(q.violated_at, 0);
    CU_ASSERT_STRING_EQUAL(q.why, "");
    acc_buf_release(&b);
}

static void test_job(void)
{
    const char *args[] = {"--control-port", "10.79.0.1:50001", "--rmk", "user", "", "a b <&> 'q'"};
    const char *env[] = {"PATH=/usr/bin:/bin", "EMPTY=", NULL};
    struct acc_job j = {.key = "agr-7.c1",
                        .local_id = "42",
                        .nodes = 1,
                        .ppn = 2,
                        .executable = "hydra_pmi_proxy",
                        .args = args,
                        .n_args = 6,
                        .directory = "/var/lib/accord-site/jobs/x",
                        .output = "/var/lib/accord-site/jobs/x/out",
                        .end = T0 + 3600,
                        .env = env,
                        .host = "node-2"};
    struct acc_proto_job q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    acc_proto_write_job(&j, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.job.key, "agr-7.c1");
    CU_ASSERT_STRING_EQUAL(q.job.local_id, "42");
    CU_ASSERT_STRING_EQUAL(q.job.host, "node-2");
    CU_ASSERT_EQUAL(q.job.nodes, 1);
    CU_ASSERT_EQUAL(q.job.ppn, 2);
    CU_ASSERT_STRING_EQUAL(q.job.executable, "hydra_pmi_proxy");
    CU_ASSERT_EQUAL_FATAL(q.job.n_args, 6);
    for (size_t i = 0; i < 6; i++)
        CU_ASSERT_STRING_EQUAL(q.job.args[i], args[i]);
    CU_ASSERT_STRING_EQUAL(q.job.directory, j.directory);
    CU_ASSERT_STRING_EQUAL(q.job.output, j.output);
    CU_ASSERT_EQUAL(q.job.end, T0 + 3600);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q.job.env);
    CU_ASSERT_STRING_EQUAL(q.job.env[0], "PATH=/usr/bin:/bin");
    CU_ASSERT_STRING_EQUAL(q.job.env[1], "EMPTY=");
    CU_ASSERT_PTR_NULL(q.job.env[2]);
    acc_proto_job_release(&q);

    /* the least: no local id, host, arguments, directory, output, env, end */
    struct acc_job m = {.key = "k", .nodes = 2, .ppn = 1, .executable = "/bin/true"};
    acc_buf_reset(&b);
    acc_proto_write_job(&m, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job(b.data, b.len, &q, &e));
    CU_ASSERT_PTR_NULL(q.job.local_id);
    CU_ASSERT_PTR_NULL(q.job.host);
    CU_ASSERT_PTR_NULL(q.job.directory);
    CU_ASSERT_PTR_NULL(q.job.output);
    CU_ASSERT_PTR_NULL(q.job.env);
    CU_ASSERT_EQUAL(q.job.n_args, 0);
    CU_ASSERT_EQUAL(q.job.end, 0);
    acc_proto_job_release(&q);
    acc_buf_release(&b);
}

static void test_job_ref_and_status(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    char id[ACC_KEY_MAX];
    struct acc_job_status s = {.done = true, .exit_status = 3, .signal = 0}, q;

    acc_proto_write_job_ref("sim:1234", &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job_ref(b.data, b.len, id, sizeof id, &e));
    CU_ASSERT_STRING_EQUAL(id, "sim:1234");
    /* a buffer too small for it */
    CU_ASSERT_EQUAL(acc_proto_read_job_ref(b.data, b.len, id, 4, &e), ACC_ERR_INVALID);

    acc_strlcpy(s.state, "COMPLETED", sizeof s.state);
    acc_buf_reset(&b);
    acc_proto_write_job_status(&s, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job_status(b.data, b.len, &q, &e));
    CU_ASSERT(q.done);
    CU_ASSERT_EQUAL(q.exit_status, 3);
    CU_ASSERT_EQUAL(q.signal, 0);
    CU_ASSERT_STRING_EQUAL(q.state, "COMPLETED");

    struct acc_job_status k = {.done = true, .exit_status = -1, .signal = 9};
    acc_strlcpy(k.state, "CANCELLED+", sizeof k.state);
    acc_buf_reset(&b);
    acc_proto_write_job_status(&k, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job_status(b.data, b.len, &q, &e));
    CU_ASSERT_EQUAL(q.exit_status, -1);
    CU_ASSERT_EQUAL(q.signal, 9);
    CU_ASSERT_STRING_EQUAL(q.state, "CANCELLED+");

    /* the writer keeps a status within what the protocol carries */
    struct acc_job_status odd = {.done = false, .exit_status = 300, .signal = -5};
    acc_buf_reset(&b);
    acc_proto_write_job_status(&odd, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job_status(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.state, "UNKNOWN");
    CU_ASSERT_EQUAL(q.exit_status, -1);
    CU_ASSERT_EQUAL(q.signal, 0);
    acc_strlcpy(odd.state, "NODE FAIL\t\x80", sizeof odd.state);
    acc_buf_reset(&b);
    acc_proto_write_job_status(&odd, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_job_status(b.data, b.len, &q, &e));
    CU_ASSERT_STRING_EQUAL(q.state, "NODE_FAIL__");
    acc_buf_release(&b);
}

static void test_health(void)
{
    struct acc_proto_health h = {.up = true,
                                 .version = ACC_PROTO_VERSION,
                                 .caps = ACC_CAP_NODES | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES |
                                         ACC_CAP_REPLACE | ACC_CAP_THREADSAFE,
                                 .n_resources = 2};
    struct acc_proto_health *q = calloc(1, sizeof *q);
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};

    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    acc_strlcpy(h.site, "alpha", sizeof h.site);
    acc_strlcpy(h.detail, "sim-batch: 8 nodes", sizeof h.detail);
    h.resources[0].kind = ACC_RES_NODES;
    acc_strlcpy(h.resources[0].name, "alpha", sizeof h.resources[0].name);
    h.resources[0].capacity = 8;
    h.resources[1].kind = ACC_RES_BANDWIDTH;
    acc_strlcpy(h.resources[1].name, "alpha-wan", sizeof h.resources[1].name);
    h.resources[1].capacity = 1000;
    acc_proto_write_health(&h, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_health(b.data, b.len, q, &e));
    CU_ASSERT(q->up);
    CU_ASSERT_EQUAL(q->version, 1);
    CU_ASSERT_STRING_EQUAL(q->site, "alpha");
    CU_ASSERT_STRING_EQUAL(q->detail, "sim-batch: 8 nodes");
    CU_ASSERT_EQUAL(q->caps, h.caps);
    CU_ASSERT_EQUAL_FATAL(q->n_resources, 2);
    CU_ASSERT_EQUAL(q->resources[1].kind, ACC_RES_BANDWIDTH);
    CU_ASSERT_STRING_EQUAL(q->resources[1].name, "alpha-wan");
    CU_ASSERT_EQUAL(q->resources[1].capacity, 1000);

    /* every capability; down, no detail, no resources */
    struct acc_proto_health d = {.up = false, .version = 1, .caps = 0xffu};
    acc_strlcpy(d.site, "net", sizeof d.site);
    acc_buf_reset(&b);
    acc_proto_write_health(&d, &b);
    CU_ASSERT(valid(&b));
    ACC_ASSERT_OK(acc_proto_read_health(b.data, b.len, q, &e));
    CU_ASSERT_FALSE(q->up);
    CU_ASSERT_EQUAL(q->caps, 0xffu);
    CU_ASSERT_EQUAL(q->n_resources, 0);
    CU_ASSERT_STRING_EQUAL(q->detail, "");

    /* a capability word of a newer site grants nothing and is no error */
    static const char newer[] = "<Health xmlns=\"" ACC_PROTO_NS "\" up=\"true\" version=\"2\" "
                                "site=\"x\"><Capabilities> nodes  teleport\n</Capabilities>"
                                "</Health>";
    ACC_ASSERT_OK(acc_proto_read_health(newer, strlen(newer), q, &e));
    CU_ASSERT_EQUAL(q->caps, ACC_CAP_NODES);
    CU_ASSERT_EQUAL(q->version, 2);
    free(q);
    acc_buf_release(&b);
}

static void test_fault(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e;

    /* every code comes back as itself with its message */
    for (int c = 1; c < ACC_ERR__COUNT; c++) {
        char msg[128];
        snprintf(msg, sizeof msg, "code %d: <%s> & \"more\"\nsecond line", c, acc_err_symbol(c));
        acc_buf_reset(&b);
        acc_proto_write_fault((acc_err)c, "alpha", msg, &b);
        CU_ASSERT(valid(&b));
        memset(&e, 0, sizeof e);
        CU_ASSERT_EQUAL(acc_proto_read_fault(b.data, b.len, &e), (acc_err)c);
        CU_ASSERT_EQUAL(e.code, (acc_err)c);
        CU_ASSERT_STRING_EQUAL(e.msg, msg);
    }
    /* an unknown code (a newer site's): Adapter, the code kept in the text */
    static const char unknown[] =
        "<Fault xmlns=\"" ACC_PROTO_NS "\" code=\"QuantumFlux\" site=\"a\">it broke</Fault>";
    CU_ASSERT_EQUAL(acc_proto_read_fault(unknown, strlen(unknown), &e), ACC_ERR_ADAPTER);
    CU_ASSERT_STRING_EQUAL(e.msg, "QuantumFlux: it broke");
    /* "Ok" is no fault */
    static const char ok[] = "<Fault xmlns=\"" ACC_PROTO_NS "\" code=\"Ok\">fine</Fault>";
    CU_ASSERT_EQUAL(acc_proto_read_fault(ok, strlen(ok), &e), ACC_ERR_ADAPTER);
    /* unreadable bodies: Adapter, "protocol error: ..." */
    static const char *const bad[] = {
        "<html><body>502 Bad Gateway</body></html>",
        "",
        "<Fault xmlns=\"" ACC_PROTO_NS "\">no code</Fault>",
        "<Fault xmlns=\"urn:other\" code=\"Busy\">x</Fault>",
        "<Fault xmlns=\"" ACC_PROTO_NS "\" code=\"Busy\"><b>x</b></Fault>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(acc_proto_read_fault(bad[i], strlen(bad[i]), &e), ACC_ERR_ADAPTER);
        CU_ASSERT_EQUAL(strncmp(e.msg, "protocol error: ", 16), 0);
    }
    /* no message: the code's default text; no site: no attribute */
    acc_buf_reset(&b);
    acc_proto_write_fault(ACC_ERR_BUSY, NULL, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NULL(strstr(b.data, "site="));
    CU_ASSERT_EQUAL(acc_proto_read_fault(b.data, b.len, &e), ACC_ERR_BUSY);
    CU_ASSERT_STRING_EQUAL(e.msg, acc_err_text(ACC_ERR_BUSY));
    /* bytes XML cannot carry are replaced: still a valid document */
    acc_buf_reset(&b);
    acc_proto_write_fault(ACC_ERR_ADAPTER, "alpha",
                          "bell\a nul-less \x01 bad \xff\xfe utf8 \xef\xbf\xbf", &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_EQUAL(acc_proto_read_fault(b.data, b.len, &e), ACC_ERR_ADAPTER);
    CU_ASSERT_STRING_EQUAL(e.msg, "bell? nul-less ? bad ?? utf8 ?");
    acc_buf_release(&b);
}

/* The schema is really checked: documents it does not describe fail. */
static void test_schema_refuses(void)
{
    static const char *const invalid[] = {
        "<JobRef xmlns=\"" ACC_PROTO_NS "\"/>",
        "<JobRef xmlns=\"" ACC_PROTO_NS "\" id=\"a/b\"/>",
        "<Frames xmlns=\"" ACC_PROTO_NS "\"><Frame start=\"now\" end=\"later\"/></Frames>",
        "<Reserve xmlns=\"" ACC_PROTO_NS "\"><Start>2026-11-22T08:00:00Z</Start></Reserve>",
        "<Health xmlns=\"" ACC_PROTO_NS "\" up=\"true\" version=\"1\" site=\"a\">"
        "<Capabilities/><Extra/></Health>",
        "<Unknown xmlns=\"" ACC_PROTO_NS "\"/>",
    };
    struct acc_error e;
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        CU_ASSERT_EQUAL(acc_proto_validate(invalid[i], strlen(invalid[i]), &e), ACC_ERR_SCHEMA);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "line 1"));
    }
    /* and what is not ours at all is refused before */
    static const char other[] = "<JobRef xmlns=\"urn:x\" id=\"a\"/>";
    CU_ASSERT_EQUAL(acc_proto_validate(other, strlen(other), &e), ACC_ERR_BAD_REQUEST);
}

static void test_symbols(void)
{
    for (int c = 0; c < ACC_ERR__COUNT; c++)
        CU_ASSERT_EQUAL(acc_err_from_symbol(acc_err_symbol((acc_err)c)), (acc_err)c);
    CU_ASSERT_EQUAL(acc_err_from_symbol("PeerLimit"), ACC_ERR_PEER_LIMIT);
    CU_ASSERT_EQUAL(acc_err_http_status(ACC_ERR_PEER_LIMIT), 403);
    CU_ASSERT_EQUAL(acc_err_from_symbol("NoSuchCode"), ACC_ERR__COUNT);
    CU_ASSERT_EQUAL(acc_err_from_symbol(""), ACC_ERR__COUNT);
    CU_ASSERT_EQUAL(acc_err_from_symbol("busy"), ACC_ERR__COUNT); /* case matters */
}

static void test_key_ok(void)
{
    char longest[ACC_KEY_MAX], too_long[ACC_KEY_MAX + 1];
    memset(longest, 'k', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    memset(too_long, 'k', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';

    CU_ASSERT(acc_proto_key_ok("agr-1.c0"));
    CU_ASSERT(acc_proto_key_ok("A:b_c.d-9"));
    CU_ASSERT(acc_proto_key_ok(longest));
    CU_ASSERT_FALSE(acc_proto_key_ok(too_long));
    CU_ASSERT_FALSE(acc_proto_key_ok(""));
    CU_ASSERT_FALSE(acc_proto_key_ok(NULL));
    CU_ASSERT_FALSE(acc_proto_key_ok("a/b"));
    CU_ASSERT_FALSE(acc_proto_key_ok(".."));
    CU_ASSERT_FALSE(acc_proto_key_ok("a b"));
    CU_ASSERT_FALSE(acc_proto_key_ok("a%2F"));
    CU_ASSERT_FALSE(acc_proto_key_ok("k\n"));
}

static const struct acc_test_case tests[] = {
    {"preview", test_preview},
    {"frames", test_frames},
    {"reserve", test_reserve},
    {"reservation", test_reservation},
    {"flow", test_flow},
    {"provision_status", test_provision_status},
    {"job", test_job},
    {"job_ref_and_status", test_job_ref_and_status},
    {"health", test_health},
    {"fault", test_fault},
    {"schema_refuses", test_schema_refuses},
    {"symbols", test_symbols},
    {"key_ok", test_key_ok},
    {NULL, NULL},
};

/* test_proto_bad.c: what the readers refuse; test_proto_docs.c: the
 * examples of docs/protocol.md. */
extern const struct acc_test_case acc_proto_bad_tests[];
extern const struct acc_test_case acc_proto_docs_tests[];
/* test_proto_identity.c: <Identity> in Preview, Reserve and Job. */
extern const struct acc_test_case acc_proto_identity_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"proto", NULL, NULL, tests},
    {"proto_bad", NULL, NULL, acc_proto_bad_tests},
    {"proto_docs", NULL, NULL, acc_proto_docs_tests},
    {"proto_identity", NULL, NULL, acc_proto_identity_tests},
    {NULL, NULL, NULL, NULL},
};
