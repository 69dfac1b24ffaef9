/* SPDX-License-Identifier: Apache-2.0 */
/* test_proto_identity.c - <Identity> in Preview, Reserve and Job: written,
 * valid against the schema, read back whole; absent (an older peer's
 * document) reads as no one; bad identities refused naming the element. */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "proto_internal.h"
#include "testutil.h"

#define T0 ((acc_time)1795334400)

static bool schema_ok(const struct acc_buf *b)
{
    struct acc_error e = {0};
    if (acc_proto_validate(b->data, b->len, &e) == ACC_OK)
        return true;
    fprintf(stderr, "invalid: %s\n%s\n", e.msg, b->data);
    return false;
}

static char *groups[] = {"/cms/production", "urn:geant:example.org:group:hpc#idp"};

static const struct acc_identity alice = {.user = "alice",
                                          .issuer = "https://idp.example.org/",
                                          .subject = "a1b2-c3 & <d>",
                                          .groups = groups,
                                          .n_groups = 2,
                                          .token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"};

static void same(const struct acc_identity *a, const struct acc_identity *b)
{
    CU_ASSERT_STRING_EQUAL(a->user, b->user);
    CU_ASSERT_STRING_EQUAL(a->issuer, b->issuer);
    CU_ASSERT_STRING_EQUAL(a->subject, b->subject);
    CU_ASSERT_EQUAL_FATAL(a->n_groups, b->n_groups);
    for (size_t i = 0; i < a->n_groups; i++)
        CU_ASSERT_STRING_EQUAL(a->groups[i], b->groups[i]);
    if (a->token) {
        CU_ASSERT_STRING_EQUAL(a->token, b->token);
    } else {
        CU_ASSERT_PTR_NULL(b->token);
    }
}

static void test_preview_reserve(void)
{
    struct acc_proto_preview p = {.kind = ACC_RES_NODES,
                                  .amount = 2,
                                  .from = T0,
                                  .until = T0 + 86400,
                                  .duration = 600,
                                  .identity = alice},
                             q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    strcpy(p.resource, "alpha");
    acc_proto_write_preview(&p, &b);
    CU_ASSERT(schema_ok(&b));
    ACC_ASSERT_OK(acc_proto_read_preview(b.data, b.len, &q, &e));
    same(&alice, &q.identity);
    acc_proto_preview_release(&q);
    CU_ASSERT_PTR_NULL(q.identity.user);

    /* without one: an older peer's document */
    p.identity = (struct acc_identity){.user = NULL};
    acc_buf_reset(&b);
    acc_proto_write_preview(&p, &b);
    CU_ASSERT_PTR_NULL(strstr(b.data, "Identity"));
    ACC_ASSERT_OK(acc_proto_read_preview(b.data, b.len, &q, &e));
    CU_ASSERT_PTR_NULL(q.identity.user);
    CU_ASSERT_PTR_NULL(q.identity.subject);

    /* a static-token user: the name only, and no token */
    struct acc_proto_reserve r = {.kind = ACC_RES_NODES,
                                  .amount = 1,
                                  .start = T0,
                                  .duration = 600,
                                  .identity = {.user = "bob"}},
                             s;
    strcpy(r.resource, "alpha");
    acc_buf_reset(&b);
    acc_proto_write_reserve(&r, &b);
    CU_ASSERT(schema_ok(&b));
    ACC_ASSERT_OK(acc_proto_read_reserve(b.data, b.len, &s, &e));
    CU_ASSERT_STRING_EQUAL(s.identity.user, "bob");
    CU_ASSERT_PTR_NULL(s.identity.issuer);
    CU_ASSERT_PTR_NULL(s.identity.token);
    CU_ASSERT_EQUAL(s.identity.n_groups, 0);
    acc_proto_reserve_release(&s);
    acc_buf_release(&b);
}

static void test_job(void)
{
    struct acc_job j = {
        .key = "k1", .nodes = 1, .ppn = 1, .executable = "/bin/true", .identity = &alice};
    struct acc_proto_job q;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    acc_proto_write_job(&j, &b);
    CU_ASSERT(schema_ok(&b));
    ACC_ASSERT_OK(acc_proto_read_job(b.data, b.len, &q, &e));
    CU_ASSERT_PTR_EQUAL_FATAL(q.job.identity, &q.identity);
    same(&alice, q.job.identity);
    acc_proto_job_release(&q);
    j.identity = NULL;
    acc_buf_reset(&b);
    acc_proto_write_job(&j, &b);
    ACC_ASSERT_OK(acc_proto_read_job(b.data, b.len, &q, &e));
    CU_ASSERT_PTR_NULL(q.job.identity);
    acc_proto_job_release(&q);
    acc_buf_release(&b);
}

/* A Preview with identity element text id; the reader's code, message in e. */
static acc_err read_with(const char *id, struct acc_error *e)
{
    char doc[20000];
    snprintf(doc, sizeof doc,
             "<Preview xmlns=\"urn:accord:site:1\"><Resource kind=\"nodes\" name=\"a\" "
             "amount=\"1\"/><From>2026-11-22T08:00:00Z</From><Until>2026-11-23T08:00:00Z</Until>"
             "<Duration>PT10M</Duration>%s</Preview>",
             id);
    struct acc_proto_preview p;
    memset(e, 0, sizeof *e);
    acc_err rc = acc_proto_read_preview(doc, strlen(doc), &p, e);
    if (rc == ACC_OK)
        acc_proto_preview_release(&p);
    return rc;
}

static void test_refused(void)
{
    struct acc_error e;
    CU_ASSERT_EQUAL(read_with("<Identity/>", &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "names neither user nor subject"));
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\" issuer=\"https://i/\"/>", &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "an issuer without a subject"));
    CU_ASSERT_EQUAL(read_with("<Identity user=\"\"/>", &e), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a&#10;b\"/>", &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "control character"));
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\" role=\"x\"/>", &e), ACC_ERR_BAD_REQUEST);
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\"><Group></Group></Identity>", &e),
                    ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\"><Token>a b</Token></Identity>", &e),
                    ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(
        read_with("<Identity user=\"a\"><Token>x</Token><Token>y</Token></Identity>", &e),
        ACC_ERR_BAD_REQUEST);
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\"><Role>x</Role></Identity>", &e),
                    ACC_ERR_BAD_REQUEST);
    CU_ASSERT_EQUAL(read_with("<Identity user=\"a\"/><Identity user=\"b\"/>", &e),
                    ACC_ERR_BAD_REQUEST);
    /* more groups than an identity holds */
    char many[8000] = "<Identity user=\"a\">";
    for (int i = 0; i <= ACC_IDENTITY_MAX_GROUPS; i++)
        strcat(many, "<Group>g</Group>");
    strcat(many, "</Identity>");
    CU_ASSERT_EQUAL(read_with(many, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 64 groups"));
    CU_ASSERT_EQUAL(read_with("<Identity subject=\"CN=carol\"><Group>/g</Group></Identity>", &e),
                    ACC_OK);
}

const struct acc_test_case acc_proto_identity_tests[] = {
    {"preview_reserve", test_preview_reserve},
    {"job", test_job},
    {"refused", test_refused},
    {NULL, NULL},
};
