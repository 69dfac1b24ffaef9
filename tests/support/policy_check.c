/* SPDX-License-Identifier: Apache-2.0 */
/* policy_check.c - see policy_check.h. */
#include "policy_check.h"

#include <stdio.h>

#include "testutil.h"

struct acc_policy_system acc_pt_system(size_t n, const int64_t *idle)
{
    return (struct acc_policy_system){.n_clusters = n, .idle = idle};
}

struct acc_policy_request acc_pt_flexible(int64_t total)
{
    return (struct acc_policy_request){.type = ACC_REQ_FLEXIBLE, .total = total};
}

struct acc_policy_request acc_pt_nonfixed(size_t n, const int64_t *sizes)
{
    return (struct acc_policy_request){.type = ACC_REQ_NONFIXED, .n_components = n, .sizes = sizes};
}

struct acc_placement acc_pt_run(const struct acc_policy_system *s,
                                const struct acc_policy_request *r, const struct acc_policy_opts *o)
{
    struct acc_placement p;
    struct acc_error err;
    acc_err rc = acc_policy_place(s, r, o, &p, &err);
    CU_ASSERT_EQUAL(rc, ACC_OK);
    if (rc)
        fprintf(stderr, "unexpected: %s\n", err.msg);
    return p;
}

struct acc_placement acc_pt_run_id(enum acc_policy_id id, const struct acc_policy_system *s,
                                   const struct acc_policy_request *r)
{
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, id);
    return acc_pt_run(s, r, &o);
}

void acc_pt_expect_per(const struct acc_placement *p, size_t n, const int64_t *want)
{
    int64_t per[ACC_POLICY_MAX_CLUSTERS];
    CU_ASSERT_TRUE_FATAL(p->fits);
    acc_placement_per_cluster(p, n, per);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(per[i], want[i]);
        if (per[i] != want[i])
            fprintf(stderr, "cluster %zu: %lld, want %lld\n", i, (long long)per[i],
                    (long long)want[i]);
    }
}

void acc_pt_expect_parts(const struct acc_placement *p, size_t n, const size_t *cl,
                         const int64_t *sz)
{
    CU_ASSERT_TRUE_FATAL(p->fits);
    CU_ASSERT_EQUAL_FATAL(p->n, n);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(p->cluster[i], cl[i]);
        CU_ASSERT_EQUAL(p->size[i], sz[i]);
    }
}
