/* SPDX-License-Identifier: Apache-2.0 */
/* policy_check.h - what the policy tests share: building inputs, placing,
 * and checking a placement. */
#ifndef ACC_POLICY_CHECK_H
#define ACC_POLICY_CHECK_H

#include "policy.h"

#define NEAR(a, b, eps) CU_ASSERT_DOUBLE_EQUAL((a), (b), (eps))

struct acc_policy_system acc_pt_system(size_t n, const int64_t *idle);
struct acc_policy_request acc_pt_flexible(int64_t total);
struct acc_policy_request acc_pt_nonfixed(size_t n, const int64_t *sizes);
/* Places and asserts the input was valid. */
struct acc_placement acc_pt_run(const struct acc_policy_system *s,
                                const struct acc_policy_request *r,
                                const struct acc_policy_opts *o);
/* The same with the policy's default options. */
struct acc_placement acc_pt_run_id(enum acc_policy_id id, const struct acc_policy_system *s,
                                   const struct acc_policy_request *r);
/* It fits, and the units per cluster equal want[0 .. n-1]. */
void acc_pt_expect_per(const struct acc_placement *p, size_t n, const int64_t *want);
/* It fits, and the parts in order are these (cluster, size) pairs. */
void acc_pt_expect_parts(const struct acc_placement *p, size_t n, const size_t *cl,
                         const int64_t *sz);

#endif
