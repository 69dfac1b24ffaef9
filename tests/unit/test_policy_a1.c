/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy_a1.c - Jones et al.'s A1 "Satisfy" driven through eqs. (7)-(9)
 * (docs/science.md §4.5) on hand-worked cases beyond §4.7's vector: a
 * negative and a zero discriminant, BW_avail at and below zero, a cluster
 * without free nodes, jobs no split can place, the search orders and the
 * least-link solution; then every small case against a brute force over
 * all splits.  The co-allocation module alone: local_first is off, so LA
 * and MIG do not place a job that fits on one cluster first. */
#include <math.h>
#include <stdlib.h>

#include "policy.h"
#include "policy_check.h"
#include "testutil.h"

#define NC 4

/* Four clusters; every link of capacity 1000 with `load` on it. */
struct a1_case {
    int64_t free[NC];
    double max[NC], load[NC];
    struct acc_policy_system sys;
    struct acc_policy_request req;
    struct acc_policy_opts o;
};

static void a1_setup(struct a1_case *c, const int64_t *free, const double *load, int64_t n_T,
                     double ppbw)
{
    for (int i = 0; i < NC; i++) {
        c->free[i] = free[i];
        c->max[i] = 1000;
        c->load[i] = load ? load[i] : 0;
    }
    c->sys = acc_pt_system(NC, c->free);
    c->sys.link_max = c->max;
    c->sys.link_load = c->load;
    c->req = acc_pt_flexible(n_T);
    c->req.ppbw = ppbw;
    acc_policy_opts_init(&c->o, ACC_POLICY_A1);
    c->o.local_first = false;
}

static struct acc_placement a1_run(const struct a1_case *c)
{
    return acc_pt_run(&c->sys, &c->req, &c->o);
}

/* Every link's requirement-based demand after the placement is within
 * LSLT: what A1 promises ("no link goes past LSLT"). */
static bool within(const struct a1_case *c, const int64_t *x)
{
    for (int i = 0; i < NC; i++) {
        if (x[i] == 0)
            continue; /* an unused cluster loads no link */
        double bw = acc_bw_requirement(x[i], c->req.total, c->req.ppbw);
        if (bw > c->o.lslt * c->max[i] - c->load[i] + 1e-9)
            return false;
    }
    return true;
}

/* Negative discriminant: n_T = 10, PPBW = 2 peaks at 2 * 100 / 36 = 5.56
 * Mbit/s (n_i = 5); with BW_avail = 6 on every link (load 994), eq. (7)'s
 * discriminant 100 - 4 * 6 * 9 / 2 = -8 < 0, so every n_i is admissible
 * and the search takes the largest first: 6 on C1, 4 on C2 (5.33 each). */
static void test_negative_discriminant(void)
{
    double n1, n2;
    CU_ASSERT_FALSE(acc_bw_limits(10, 2, 6, &n1, &n2));
    NEAR(n1, 5, 1e-12); /* the contract: n_T / 2 both */
    NEAR(n2, 5, 1e-12);
    struct a1_case c;
    a1_setup(&c, (int64_t[]){6, 5, 3, 0}, (double[]){994, 994, 994, 994}, 10, 2);
    struct acc_placement p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){6, 4, 0, 0});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_CO);
    NEAR(acc_bw_requirement(6, 10, 2), 5.333, 1e-3);
    CU_ASSERT_TRUE(within(&c, (int64_t[]){6, 4, 0, 0}));
}

/* Zero discriminant, in exact arithmetic: n_T = 6, PPBW = 5, BW_avail = 9
 * (load 991): 36 - 4 * 9 * 5 / 5 = 0, n1 = n2 = 3 and BW(3) = 9 is exactly
 * the limit, which is admissible (the requirement may equal BW_avail).
 * With BW_avail 8.99 the 3 is out: S1 = {0..2} u {4..6}. */
static void test_zero_discriminant(void)
{
    double n1, n2;
    CU_ASSERT_TRUE(acc_bw_limits(6, 5, 9, &n1, &n2));
    NEAR(n1, 3, 1e-12);
    NEAR(n2, 3, 1e-12);
    struct a1_case c;
    a1_setup(&c, (int64_t[]){3, 3, 0, 0}, (double[]){991, 991, 0, 0}, 6, 5);
    struct acc_placement p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){3, 3, 0, 0});
    c.load[0] = c.load[1] = 991.01;
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits); /* 3 + 3 needs the 3s, now above the limit */
    c.free[0] = 4;
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){4, 2, 0, 0}); /* 4 >= n2, 2 <= n1 */
}

/* BW_avail at and below zero.  n_T = 10, PPBW = 2; C1's link exactly at
 * LSLT (load 1000: avail 0; discriminant 100, n1 = 0, n2 = 10, S1 = {0,
 * 10}) and C2's past it (load 1100: avail -100; n1 < 0, so eq. (8)'s
 * [0, floor(n1)] is empty and only the [ASSUMPTION] X_i = 0 is left). The
 * job goes to C3 and C4 although C1 and C2 have the most free nodes. */
static void test_avail_at_or_below_zero(void)
{
    double n1, n2;
    CU_ASSERT_TRUE(acc_bw_limits(10, 2, 0, &n1, &n2));
    NEAR(n1, 0, 1e-12);
    NEAR(n2, 10, 1e-12);
    CU_ASSERT_TRUE(acc_bw_limits(10, 2, -100, &n1, &n2));
    CU_ASSERT_TRUE(n1 < 0 && n2 > 10);
    struct a1_case c;
    a1_setup(&c, (int64_t[]){8, 8, 5, 5}, (double[]){1000, 1100, 0, 0}, 10, 2);
    struct acc_placement p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){0, 0, 5, 5});
    /* C4 full: 21 free nodes, but only C3's 5 may be used: no fit. */
    c.free[3] = 0;
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
    /* Every link past LSLT: a co-allocation is impossible. */
    for (int i = 0; i < NC; i++) {
        c.free[i] = 9;
        c.load[i] = 1200;
    }
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
    /* With the template on, a whole job still runs locally: one cluster
     * uses no link (X_i = n_T, the S1 = {.., n_T} end). */
    c.o.local_first = true;
    c.free[1] = 10;
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){0, 10, 0, 0});
}

/* A cluster with no free node is never part of a split, even with the
 * emptiest link; the search order decides among the others.  n_T = 12,
 * PPBW = 10, no load (discriminant 144 - 4 * 1000 * 11 / 10 < 0). */
static void test_cluster_without_free_nodes(void)
{
    struct a1_case c;
    a1_setup(&c, (int64_t[]){0, 5, 7, 6}, NULL, 12, 10);
    struct acc_placement p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){0, 0, 7, 5}); /* by free: C3, C4 */
    c.o.a1_order = ACC_A1_INDEX;
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){0, 5, 7, 0}); /* by index: C2, C3 */
    /* All but one cluster empty: nothing to co-allocate with. */
    c.free[1] = c.free[3] = 0;
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
}

/* Jobs that no split can place although the free nodes add up.  n_T = 20,
 * PPBW = 10, BW_avail = 40 everywhere (load 960): discriminant 400 - 304 =
 * 96, n1 = 5.10, n2 = 14.90; S1 = {0..5} u {15..20}; BW(5) = 39.47, BW(6)
 * = 44.21.  Free (14, 14, 14, 0): 42 free, at most 5 + 5 + 5 = 15 < 20.
 * Free (14, 14, 14, 14): exactly 5 on each.  Free (16, 4, 4, 0): 16 >= n2
 * on C1 and 4 on C2. */
static void test_unplaceable(void)
{
    double n1, n2;
    CU_ASSERT_TRUE(acc_bw_limits(20, 10, 40, &n1, &n2));
    NEAR(n1, 5.101, 1e-3);
    NEAR(n2, 14.899, 1e-3);
    NEAR(acc_bw_requirement(5, 20, 10), 39.474, 1e-3);
    NEAR(acc_bw_requirement(6, 20, 10), 44.211, 1e-3);
    struct a1_case c;
    a1_setup(&c, (int64_t[]){14, 14, 14, 0}, (double[]){960, 960, 960, 960}, 20, 10);
    struct acc_placement p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
    CU_ASSERT_EQUAL(p.n, 0);
    c.o.a1_solution = ACC_A1_LEAST_LINK; /* no solution either way */
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
    c.o.a1_solution = ACC_A1_FIRST;
    c.free[3] = 14;
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){5, 5, 5, 5});
    int64_t f3[NC] = {16, 4, 4, 0};
    for (int i = 0; i < NC; i++)
        c.free[i] = f3[i];
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){16, 4, 0, 0});
    NEAR(acc_bw_requirement(16, 20, 10), 33.684, 1e-3);
    /* LSLT scales BW_avail: at 50% of 1000 with 460 on every link, 40 are
     * left, as above. */
    c.o.lslt = 0.5;
    for (int i = 0; i < NC; i++) {
        c.load[i] = 460;
        c.free[i] = i < 3 ? 14 : 0;
    }
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
}

/* The first solution against the least-link one.  n_T = 20, PPBW = 10;
 * C2's link has 20 left (load 980: n1 = 2.13, n2 = 17.87, S1 = {0..2} u
 * {18..20}), C1 and C3 plenty.  Depth-first by free nodes (C1 12, C2 11,
 * C3 10), largest first: 12 on C1, then C2's largest admissible 2, then 6
 * on C3 (links 50.5 + 18.9 + 44.2 = 113.7).  The least-link solution
 * skips C2: (12, 0, 8) with 50.5 + 50.5 = 101.1. */
static void test_first_and_least_link(void)
{
    struct a1_case c;
    a1_setup(&c, (int64_t[]){12, 11, 10, 0}, (double[]){0, 980, 0, 0}, 20, 10);
    struct acc_placement p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){12, 2, 6, 0});
    c.o.a1_solution = ACC_A1_LEAST_LINK;
    p = a1_run(&c);
    acc_pt_expect_per(&p, NC, (int64_t[]){12, 0, 8, 0});
    double first = acc_bw_requirement(12, 20, 10) + acc_bw_requirement(2, 20, 10) +
                   acc_bw_requirement(6, 20, 10);
    double best = acc_bw_requirement(12, 20, 10) + acc_bw_requirement(8, 20, 10);
    NEAR(first, 113.68, 1e-2);
    NEAR(best, 101.05, 1e-2);
    /* Out of steps before any solution: no fit, either way. */
    c.o.a1_max_steps = 1;
    p = a1_run(&c);
    CU_ASSERT_FALSE(p.fits);
}

/* The largest sum of X_i^2 over every split within the sets of eq. (8) and
 * the free nodes; -1 when there is none. */
static int64_t brute_best(const struct a1_case *c)
{
    int64_t n = c->req.total, best = -1, x[NC];
    for (x[0] = 0; x[0] <= c->free[0] && x[0] <= n; x[0]++) {
        for (x[1] = 0; x[1] <= c->free[1] && x[0] + x[1] <= n; x[1]++) {
            for (x[2] = 0; x[2] <= c->free[2] && x[0] + x[1] + x[2] <= n; x[2]++) {
                x[3] = n - x[0] - x[1] - x[2];
                if (x[3] > c->free[3] || !within(c, x))
                    continue;
                int64_t sq = 0;
                for (int i = 0; i < NC; i++)
                    sq += x[i] * x[i];
                best = sq > best ? sq : best;
            }
        }
    }
    return best;
}

/* Random small cases: A1 places exactly when some split exists; its split
 * adds up to n_T, stays within the free nodes and keeps every link within
 * LSLT; the least-link split has the brute force's largest sum of X^2. */
static void test_against_brute_force(void)
{
    uint64_t rng = 37;
    int placed = 0, failed = 0;
    for (int round = 0; round < 3000; round++) {
        struct a1_case c;
        int64_t free[NC];
        double load[NC];
        for (int i = 0; i < NC; i++) {
            free[i] = (int64_t)(acc_policy_rand(&rng) % 16);
            load[i] = (double)(acc_policy_rand(&rng) % 1100);
        }
        int64_t n_T = 2 + (int64_t)(acc_policy_rand(&rng) % 29);
        double ppbw = 1 + (double)(acc_policy_rand(&rng) % 200);
        a1_setup(&c, free, load, n_T, ppbw);
        int64_t want = brute_best(&c);
        for (int mode = 0; mode < 2; mode++) {
            c.o.a1_solution = mode ? ACC_A1_LEAST_LINK : ACC_A1_FIRST;
            struct acc_placement p = a1_run(&c);
            CU_ASSERT_EQUAL(p.fits, want >= 0);
            if (!p.fits)
                continue;
            int64_t per[NC], sum = 0, sq = 0;
            acc_placement_per_cluster(&p, NC, per);
            for (int i = 0; i < NC; i++) {
                CU_ASSERT_TRUE(per[i] <= free[i]);
                sum += per[i];
                sq += per[i] * per[i];
            }
            CU_ASSERT_EQUAL(sum, n_T);
            CU_ASSERT_TRUE(within(&c, per));
            if (mode)
                CU_ASSERT_EQUAL(sq, want);
        }
        placed += want >= 0;
        failed += want < 0;
    }
    /* Both outcomes were exercised. */
    CU_ASSERT_TRUE(placed > 300);
    CU_ASSERT_TRUE(failed > 300);
}

static const struct acc_test_case tests[] = {
    {"negative discriminant", test_negative_discriminant},
    {"zero discriminant", test_zero_discriminant},
    {"BW_avail at or below zero", test_avail_at_or_below_zero},
    {"cluster without free nodes", test_cluster_without_free_nodes},
    {"no split places the job", test_unplaceable},
    {"first and least-link solutions", test_first_and_least_link},
    {"against a brute force", test_against_brute_force},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"policy-a1", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
