/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy_jones.c - Jones et al.'s scheduling template, A1 and class B
 * (docs/science.md §4.4-4.5) and the bandwidth model (eqs. 1, 3-7, allotment,
 * residual time) on the vectors of §4.7 and hand-made cases. */
#include <math.h>
#include <stdlib.h>

#include "policy.h"
#include "policy_check.h"
#include "testutil.h"

/* ----------------------------------------------------------- §4.7 Jones */

static void test_eq1_vectors(void)
{
    static const double want[] = {0, 1.0, 1.6, 1.8, 1.6, 1.0, 0};
    for (int64_t n = 0; n <= 6; n++)
        NEAR(acc_bw_requirement(n, 6, 1.0), want[n], 1e-12);
    NEAR(acc_bw_requirement(3, 6, 10.0), 18.0, 1e-12);
    NEAR(acc_bw_pair(3, 3, 1.0), 1.8, 1e-12);
    NEAR(acc_bw_pair(25, 5, 10.0), 43.1034, 1e-4);
    CU_ASSERT_EQUAL(acc_bw_requirement(1, 1, 5.0), 0);
    NEAR(acc_bw_ppbw_from_bsbw(1.0, 30, ACC_BSBW_A), 0.12889, 1e-5);
    NEAR(acc_bw_ppbw_from_bsbw(1.0, 30, ACC_BSBW_B), 0.06667, 1e-5);
    NEAR(acc_bw_from_step(1.25e6, 0.1), 100.0, 1e-9);
    CU_ASSERT_TRUE(acc_bw_from_step(1, 0) < 0);
    int64_t mb = 0;
    struct acc_error err;
    ACC_ASSERT_OK(acc_bw_mbit(43.1034, 1000, &mb, &err));
    CU_ASSERT_EQUAL(mb, 44);
    ACC_ASSERT_OK(acc_bw_mbit(100.0 + 1e-12, 1000, &mb, &err));
    CU_ASSERT_EQUAL(mb, 100);
    CU_ASSERT_EQUAL(acc_bw_mbit(1000.5, 1000, &mb, &err), ACC_ERR_CAPACITY);
    CU_ASSERT_EQUAL(acc_bw_mbit(NAN, 1000, &mb, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_bw_mbit(0, 1000, &mb, &err), ACC_ERR_INVALID);
    CU_ASSERT_TRUE(isinf(acc_bw_saturation(1000, 0)));
    NEAR(acc_bw_saturation(1000, 1500), 0.6667, 1e-4);
}

static void test_eq7_vector(void)
{
    double n1, n2;
    CU_ASSERT_TRUE(acc_bw_limits(30, 10, 60, &n1, &n2));
    NEAR(n1, 7.8586, 1e-4);
    NEAR(n2, 22.1414, 1e-4);
    NEAR(acc_bw_requirement(7, 30, 10), 55.52, 1e-2);
    NEAR(acc_bw_requirement(8, 30, 10), 60.69, 1e-2);
    /* Plenty available: every n_i is within the limit. */
    CU_ASSERT_FALSE(acc_bw_limits(30, 10, 1000, &n1, &n2));
}

static struct acc_policy_system jones_sys(int64_t *free, double *max, double *load)
{
    struct acc_policy_system s = acc_pt_system(4, free);
    s.link_max = max;
    s.link_load = load;
    return s;
}

static void test_a1_vector(void)
{
    /* BW_avail = 60 on every link: LSLT 1.0, capacity 60, no load. */
    int64_t free[] = {25, 15, 10, 5};
    double max[] = {60, 60, 60, 60};
    struct acc_policy_system s = jones_sys(free, max, NULL);
    struct acc_policy_request r = acc_pt_flexible(30);
    r.ppbw = 10;
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_A1, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){25, 5, 0, 0});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_CO);
    NEAR(acc_bw_requirement(25, 30, 10), 43.10, 1e-2);
    NEAR(acc_bw_requirement(5, 30, 10), 43.10, 1e-2);
    free[0] = 20;
    p = acc_pt_run_id(ACC_POLICY_A1, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    /* Load counts against the threshold: with 20 already on C2's link only
     * 40 is left there, so C2 admits at most 4 (35.9; 5 needs 43.1), and the
     * depth-first search, largest first, ends with 1 on C3. */
    free[0] = 25;
    double load[] = {0, 20, 0, 0};
    s.link_load = load;
    p = acc_pt_run_id(ACC_POLICY_A1, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){25, 4, 1, 0});
    /* A tiny step budget gives up: no fit, not an error. */
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_A1);
    o.a1_max_steps = 1;
    p = acc_pt_run(&s, &r, &o);
    CU_ASSERT_FALSE(p.fits);
}

static void test_class_b_vectors(void)
{
    int64_t free[] = {20, 15, 10, 5};
    double max[] = {1000, 1000, 1000, 1000}, load[] = {300, 1100, 500, 200};
    struct acc_policy_system s = jones_sys(free, max, load);
    struct acc_policy_request r = acc_pt_flexible(30);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_B1, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 0, 10, 0});
    p = acc_pt_run_id(ACC_POLICY_B2, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 0, 5, 5});
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_B3);
    p = acc_pt_run(&s, &r, &o); /* f = 0.7: a chunk of 21 fits nowhere */
    CU_ASSERT_FALSE(p.fits);
    o.b3_fraction = 0.6;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){18, 0, 10, 2});
    acc_pt_expect_parts(&p, 3, (size_t[]){0, 2, 3}, (int64_t[]){18, 10, 2});
    p = acc_pt_run_id(ACC_POLICY_B4, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){15, 0, 10, 5});
    p = acc_pt_run_id(ACC_POLICY_INITIAL, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 10, 0, 0});
    /* Discounting at exactly LSLT is the '>=' option. */
    load[1] = 1000;
    p = acc_pt_run_id(ACC_POLICY_B1, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 10, 0, 0});
    acc_policy_opts_init(&o, ACC_POLICY_B1);
    o.discount_ge = true;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 0, 10, 0});
    /* Fewer free units left than n_T after discounting: every module fails. */
    load[0] = 2000;
    load[1] = 2000;
    for (int id = ACC_POLICY_B1; id <= ACC_POLICY_B4; id++) {
        p = acc_pt_run_id((enum acc_policy_id)id, &s, &r);
        CU_ASSERT_FALSE(p.fits);
    }
}

static void test_b3_best_fit_and_b4_start(void)
{
    int64_t free[] = {30, 22, 10, 5};
    double max[] = {1000, 1000, 1000, 1000};
    struct acc_policy_system s = jones_sys(free, max, NULL);
    struct acc_policy_request r = acc_pt_flexible(40);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_B3);
    o.local_first = false;
    o.b3_fraction = 0.5; /* chunk 20 */
    struct acc_placement p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){20, 20});
    o.b3_chunk = ACC_B3_BEST_FIT;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){20, 20});
    /* B4 from cluster 2: the extra unit above the level goes to C3 first. */
    acc_policy_opts_init(&o, ACC_POLICY_B4);
    o.local_first = false;
    r.total = 22; /* level 5 gives 20; the 2 left go to C1 and C2 */
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){6, 6, 5, 5});
    r.total = 20; /* level 5: 5+5+5+5 = 20 */
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){5, 5, 5, 5});
    r.total = 21;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){6, 5, 5, 5});
    o.b4_start = 2;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_per(&p, 4, (int64_t[]){5, 5, 6, 5});
}

static void test_jones_template(void)
{
    int64_t free[] = {20, 15, 10, 5};
    double max[] = {1000, 1000, 1000, 1000};
    struct acc_policy_system s = jones_sys(free, max, NULL);
    struct acc_policy_request r = acc_pt_flexible(12);
    r.home = 1;
    /* LA: the home cluster has 15 >= 12. */
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_B1, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){12});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_LA);
    /* MIG: home 3 has 10; best fit elsewhere is C2 (15) before C1 (20). */
    r.home = 3;
    r.total = 14;
    p = acc_pt_run_id(ACC_POLICY_A1, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){14});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_MIG);
    /* Migration Only never co-allocates. */
    r.total = 25;
    p = acc_pt_run_id(ACC_POLICY_MIGRATION, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    p = acc_pt_run_id(ACC_POLICY_B1, &s, &r);
    acc_pt_expect_per(&p, 4, (int64_t[]){20, 5, 0, 0});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_CO);
    p = acc_pt_run_id(ACC_POLICY_LA, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_residual_vector(void)
{
    struct acc_bw_residual res;
    struct acc_error err;
    ACC_ASSERT_OK(acc_bw_residual_start(100, 0.7, 0.5, &res, &err));
    NEAR(res.tc, 60, 1e-9);
    NEAR(res.tp, 70, 1e-9);
    NEAR(acc_bw_residual_left(&res), 130, 1e-9);
    ACC_ASSERT_OK(acc_bw_residual_update(&res, 50, 1.0, &err));
    NEAR(res.tc, 18.462, 1e-3);
    NEAR(res.tp, 43.077, 1e-3);
    NEAR(50 + acc_bw_residual_left(&res), 111.538, 1e-3);
    /* An unchanged sd leaves the end where it was. */
    struct acc_bw_residual same;
    ACC_ASSERT_OK(acc_bw_residual_start(100, 0.7, 0.5, &same, &err));
    ACC_ASSERT_OK(acc_bw_residual_update(&same, 30, 0.5, &err));
    NEAR(30 + acc_bw_residual_left(&same), 130, 1e-9);
    CU_ASSERT_EQUAL(acc_bw_residual_update(&same, 1, 0, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_bw_residual_start(100, 1.5, 1, &same, &err), ACC_ERR_INVALID);
}

static void test_allotment_vector(void)
{
    /* Links 1, 2, 3 (index 0..2); A: 600 on link 1; B: 900 on link 1 and
     * 2000 on link 3. */
    double req[] = {600, 0, 0, 900, 0, 2000}, max[] = {1000, 1000, 1000}, sd[2];
    struct acc_error err;
    ACC_ASSERT_OK(acc_bw_allot(2, 3, req, max, ACC_ALLOT_MIN_RULE, sd, &err));
    NEAR(sd[0], 0.6667, 1e-4);
    NEAR(sd[1], 0.5, 1e-12);
    ACC_ASSERT_OK(acc_bw_allot(2, 3, req, max, ACC_ALLOT_FILL, sd, &err));
    NEAR(sd[1], 0.5, 1e-12);
    NEAR(sd[0], 0.9167, 1e-4);
    /* Unsaturated links slow nobody; a job on no link is never slowed. */
    double light[] = {100, 0, 0, 0, 0, 0};
    ACC_ASSERT_OK(acc_bw_allot(2, 3, light, max, ACC_ALLOT_FILL, sd, &err));
    NEAR(sd[0], 1.0, 1e-12);
    NEAR(sd[1], 1.0, 1e-12);
    ACC_ASSERT_OK(acc_bw_allot(2, 3, light, max, ACC_ALLOT_MIN_RULE, sd, &err));
    NEAR(sd[0], 1.0, 1e-12);
    double bad[] = {-1, 0, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(acc_bw_allot(2, 3, bad, max, ACC_ALLOT_FILL, sd, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_bw_allot(ACC_BW_MAX_JOBS + 1, 3, req, max, ACC_ALLOT_FILL, sd, &err),
                    ACC_ERR_INVALID);
}

static const struct acc_test_case tests[] = {
    {"eq. 1 (4.7)", test_eq1_vectors},
    {"eq. 7 (4.7)", test_eq7_vector},
    {"A1 (4.7)", test_a1_vector},
    {"class B (4.7)", test_class_b_vectors},
    {"B3 best fit, B4 start", test_b3_best_fit_and_b4_start},
    {"Jones template", test_jones_template},
    {"residual time (4.7)", test_residual_vector},
    {"allotment (4.7)", test_allotment_vector},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"policy-jones", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
