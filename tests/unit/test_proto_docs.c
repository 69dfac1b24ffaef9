/* SPDX-License-Identifier: Apache-2.0 */
/* test_proto_docs.c - every example of docs/protocol.md is valid against
 * the schema and read by its reader, so the documentation cannot drift from
 * the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_internal.h"
#include "testutil.h"

/* Every example of docs/protocol.md is valid and read by its reader. */
static acc_err read_example(const char *s, size_t n, struct acc_error *e)
{
    const char *lt = strchr(s, '<');
    char root[32] = "";
    size_t k = 0;
    while (lt && k + 1 < sizeof root && lt[k + 1] >= 'A' && lt[k + 1] <= 'z') {
        root[k] = lt[k + 1];
        k++;
    }
    root[k] = '\0';
    acc_err rc = acc_proto_validate(s, n, e);
    if (rc)
        return rc;
    if (strcmp(root, "Preview") == 0) {
        struct acc_proto_preview p;
        rc = acc_proto_read_preview(s, n, &p, e);
        if (!rc)
            acc_proto_preview_release(&p);
        return rc;
    }
    if (strcmp(root, "Frames") == 0) {
        struct acc_frames f;
        rc = acc_proto_read_frames(s, n, &f, e);
        acc_frames_release(&f);
        return rc;
    }
    if (strcmp(root, "Reserve") == 0) {
        struct acc_proto_reserve r;
        rc = acc_proto_read_reserve(s, n, &r, e);
        if (!rc)
            acc_proto_reserve_release(&r);
        return rc;
    }
    if (strcmp(root, "Reservation") == 0) {
        struct acc_reservation r = {.nodes = NULL};
        rc = acc_proto_read_reservation(s, n, &r, e);
        free(r.nodes);
        return rc;
    }
    if (strcmp(root, "Flow") == 0) {
        struct acc_proto_flow f;
        rc = acc_proto_read_flow(s, n, &f, e);
        acc_proto_flow_release(&f);
        return rc;
    }
    if (strcmp(root, "ProvisionStatus") == 0) {
        struct acc_provision_status p;
        return acc_proto_read_provision_status(s, n, &p, e);
    }
    if (strcmp(root, "Job") == 0) {
        struct acc_proto_job j;
        rc = acc_proto_read_job(s, n, &j, e);
        acc_proto_job_release(&j);
        return rc;
    }
    if (strcmp(root, "JobRef") == 0) {
        char id[ACC_KEY_MAX];
        return acc_proto_read_job_ref(s, n, id, sizeof id, e);
    }
    if (strcmp(root, "JobStatus") == 0) {
        struct acc_job_status j;
        return acc_proto_read_job_status(s, n, &j, e);
    }
    if (strcmp(root, "Health") == 0) {
        struct acc_proto_health *h = calloc(1, sizeof *h);
        rc = h ? acc_proto_read_health(s, n, h, e) : ACC_ERR_NOMEM;
        free(h);
        return rc;
    }
    if (strcmp(root, "Fault") == 0)
        return acc_proto_read_fault(s, n, e) == ACC_ERR_PEER_LIMIT ? ACC_OK : ACC_ERR_INTERNAL;
    return acc_error_set(e, ACC_ERR_INTERNAL, "no reader for %s", root);
}

static void test_docs_examples(void)
{
    size_t len, count = 0;
    char *doc = acc_test_slurp(ACC_SOURCE_DIR "/docs/protocol.md", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    for (char *p = strstr(doc, "```xml\n"); p; p = strstr(p, "```xml\n")) {
        p += 7;
        char *end = strstr(p, "```");
        CU_ASSERT_PTR_NOT_NULL_FATAL(end);
        struct acc_error e = {0};
        acc_err rc = read_example(p, (size_t)(end - p), &e);
        if (rc)
            fprintf(stderr, "docs/protocol.md example %zu: %s\n%.*s\n", count, e.msg,
                    (int)(end - p), p);
        CU_ASSERT_EQUAL(rc, ACC_OK);
        count++;
        p = end + 3;
    }
    CU_ASSERT_EQUAL(count, 12); /* every document has one; Preview a second, with its Identity */
    free(doc);
}

const struct acc_test_case acc_proto_docs_tests[] = {
    {"docs_examples", test_docs_examples},
    {NULL, NULL},
};
