/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_proto.c - libFuzzer harness for the adapter protocol's readers: any
 * bytes go to every reader.  A refusal must say why; an accepted document,
 * written back, must read again to the same values (when the rewrite is
 * within the body limit: escaping can lengthen text); a fault always
 * yields a code and a message.  Crashes, leaks and sanitizer reports are
 * what libFuzzer looks for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok)
        abort();
}

/* A refusal names its reason. */
static void refused(acc_err rc, const struct acc_error *e)
{
    check(rc != ACC_OK && e->code == rc && e->msg[0] != '\0');
}

static bool fits(const struct acc_buf *b)
{
    check(acc_buf_ok(b));
    return b->len <= ACC_PROTO_BODY_MAX;
}

static void preview(const char *s, size_t n)
{
    struct acc_proto_preview p, q;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_preview(s, n, &p, &e);
    if (rc) {
        refused(rc, &e);
        return;
    }
    acc_proto_write_preview(&p, &b);
    if (fits(&b)) {
        check(acc_proto_read_preview(b.data, b.len, &q, &e) == ACC_OK);
        check(p.kind == q.kind && strcmp(p.resource, q.resource) == 0 && p.amount == q.amount &&
              p.from == q.from && p.until == q.until && p.duration == q.duration &&
              strcmp(p.old_key, q.old_key) == 0);
        acc_proto_preview_release(&q);
    }
    acc_proto_preview_release(&p);
    acc_buf_release(&b);
}

static void frames(const char *s, size_t n)
{
    struct acc_frames f, g;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_frames(s, n, &f, &e);
    if (rc) {
        refused(rc, &e);
        check(f.n == 0 && f.v == NULL);
        return;
    }
    acc_proto_write_frames(&f, &b);
    check(fits(&b));
    check(acc_proto_read_frames(b.data, b.len, &g, &e) == ACC_OK);
    check(g.n == f.n && g.truncated == f.truncated);
    for (size_t i = 0; i < f.n; i++)
        check(g.v[i].start == f.v[i].start && g.v[i].end == f.v[i].end);
    acc_frames_release(&g);
    acc_frames_release(&f);
    acc_buf_release(&b);
}

static void reserve(const char *s, size_t n)
{
    struct acc_proto_reserve r, q;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_reserve(s, n, &r, &e);
    if (rc) {
        refused(rc, &e);
        return;
    }
    acc_proto_write_reserve(&r, &b);
    check(fits(&b));
    check(acc_proto_read_reserve(b.data, b.len, &q, &e) == ACC_OK);
    check(r.kind == q.kind && strcmp(r.resource, q.resource) == 0 && r.amount == q.amount &&
          r.start == q.start && r.duration == q.duration && strcmp(r.old_key, q.old_key) == 0);
    acc_proto_reserve_release(&q);
    acc_proto_reserve_release(&r);
    acc_buf_release(&b);
}

static void reservation(const char *s, size_t n)
{
    struct acc_reservation r, q;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_reservation(s, n, &r, &e);
    if (rc) {
        refused(rc, &e);
        return;
    }
    acc_proto_write_reservation("k", ACC_RES_NODES, "x", &r, &b);
    if (fits(&b)) {
        check(acc_proto_read_reservation(b.data, b.len, &q, &e) == ACC_OK);
        check(strcmp(q.local_id, r.local_id) == 0 && q.start == r.start && q.end == r.end &&
              q.amount == r.amount && !q.nodes == !r.nodes);
        check(!r.nodes || strcmp(q.nodes, r.nodes) == 0);
        free(q.nodes); /* acc_reservation_release is in libaccord_adapters */
    }
    free(r.nodes);
    acc_buf_release(&b);
}

static void flow(const char *s, size_t n)
{
    struct acc_proto_flow f, g;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_flow(s, n, &f, &e);
    if (rc) {
        refused(rc, &e);
        return;
    }
    acc_proto_write_flow(&f.flow, &b);
    if (fits(&b)) {
        check(acc_proto_read_flow(b.data, b.len, &g, &e) == ACC_OK);
        check(g.flow.n_a == f.flow.n_a && g.flow.n_b == f.flow.n_b);
        check(strcmp(g.flow.site_a, f.flow.site_a) == 0);
        for (size_t i = 0; i < f.flow.n_b; i++)
            check(strcmp(g.flow.addrs_b[i], f.flow.addrs_b[i]) == 0);
        acc_proto_flow_release(&g);
    }
    acc_proto_flow_release(&f);
    acc_buf_release(&b);
}

static void provision_status(const char *s, size_t n)
{
    struct acc_provision_status p, q;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_provision_status(s, n, &p, &e);
    if (rc) {
        refused(rc, &e);
        return;
    }
    acc_proto_write_provision_status(&p, &b);
    if (fits(&b)) {
        check(acc_proto_read_provision_status(b.data, b.len, &q, &e) == ACC_OK);
        check(p.provisioned == q.provisioned && p.active == q.active && p.start == q.start &&
              p.end == q.end && p.activated == q.activated && p.state == q.state &&
              p.violated_at == q.violated_at && strcmp(p.why, q.why) == 0 && p.bytes == q.bytes &&
              p.packets == q.packets && p.drops == q.drops);
    }
    acc_buf_release(&b);
}

static void job(const char *s, size_t n)
{
    struct acc_proto_job j, k;
    struct acc_error e = {0};
    struct acc_buf b = ACC_BUF_INIT;
    acc_err rc = acc_proto_read_job(s, n, &j, &e);
    if (rc) {
        refused(rc, &e);
        check(j.key == NULL && j.args == NULL);
        return;
    }
    acc_proto_write_job(&j.job, &b);
    if (fits(&b)) {
        check(acc_proto_read_job(b.data, b.len, &k, &e) == ACC_OK);
        check(k.job.n_args == j.job.n_args && k.n_env == j.n_env && k.job.end == j.job.end);
        check(strcmp(k.job.executable, j.job.executable) == 0);
        for (size_t i = 0; i < j.job.n_args; i++)
            check(strcmp(k.job.args[i], j.job.args[i]) == 0);
        for (size_t i = 0; i < j.n_env; i++)
            check(strcmp(k.job.env[i], j.job.env[i]) == 0);
        acc_proto_job_release(&k);
    }
    acc_proto_job_release(&j);
    acc_buf_release(&b);
}

static void small_ones(const char *s, size_t n)
{
    struct acc_error e = {0};
    char id[ACC_KEY_MAX];
    struct acc_job_status js;
    acc_err rc = acc_proto_read_job_ref(s, n, id, sizeof id, &e);
    if (rc)
        refused(rc, &e);
    else
        check(acc_proto_key_ok(id));
    memset(&e, 0, sizeof e);
    rc = acc_proto_read_job_status(s, n, &js, &e);
    if (rc)
        refused(rc, &e);
    else
        check(js.state[0] != '\0');

    struct acc_proto_health *h = malloc(sizeof *h);
    check(h != NULL);
    memset(&e, 0, sizeof e);
    rc = acc_proto_read_health(s, n, h, &e);
    if (rc)
        refused(rc, &e);
    else
        check(h->n_resources <= ACC_PROTO_MAX_RESOURCES && h->version >= 1);
    free(h);

    memset(&e, 0, sizeof e);
    rc = acc_proto_read_fault(s, n, &e);
    check(rc != ACC_OK && rc < ACC_ERR__COUNT && e.code == rc && e.msg[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    preview(s, size);
    frames(s, size);
    reserve(s, size);
    reservation(s, size);
    flow(s, size);
    provision_status(s, size);
    job(s, size);
    small_ones(s, size);
    return 0;
}
