/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy.c - the placement policies of KOALA and Bucur & Epema on the
 * definitional test vectors of docs/science.md (§1.9, §2.8, §3.5) and on
 * hand-made cases: ties, exhausted capacity, bounds, the k limit, one
 * cluster, bad input.  Jones et al. and the bandwidth model are in
 * test_policy_jones.c. */
#include <math.h>
#include <stdlib.h>

#include "policy.h"
#include "policy_check.h"
#include "testutil.h"

/* ------------------------------------------------------------- §1.9 KOALA */

static void test_koala_vectors(void)
{
    int64_t i16[] = {16, 16, 16}, s8[] = {8, 8, 8};
    struct acc_policy_system s = acc_pt_system(3, i16);
    struct acc_policy_request r = acc_pt_nonfixed(3, s8);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_WF, &s, &r);
    acc_pt_expect_per(&p, 3, (int64_t[]){8, 8, 8});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 3);
    r = acc_pt_flexible(24);
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){16, 8});

    int64_t idle[] = {10, 30, 20};
    s = acc_pt_system(3, idle);
    r = acc_pt_flexible(25);
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){25});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 1);
    r = acc_pt_flexible(45);
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){30, 15});
    r = acc_pt_flexible(55);
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 3, (size_t[]){1, 2, 0}, (int64_t[]){30, 20, 5});
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    CU_ASSERT_TRUE(acc_policy_parse("fcm-2", &o));
    CU_ASSERT_EQUAL(o.max_clusters, 2);
    p = acc_pt_run(&s, &r, &o);
    CU_ASSERT_FALSE(p.fits);
    CU_ASSERT_EQUAL(p.n, 0);
    r = acc_pt_flexible(70);
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);

    /* KOALA WF with repeats: C1 holds two components. */
    int64_t idle4[] = {20, 12, 8, 4}, s10[] = {10, 10, 10};
    s = acc_pt_system(4, idle4);
    r = acc_pt_nonfixed(3, s10);
    p = acc_pt_run_id(ACC_POLICY_WF, &s, &r);
    acc_pt_expect_parts(&p, 3, (size_t[]){0, 1, 0}, (int64_t[]){10, 10, 10});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 2);
}

static void test_ca_vector(void)
{
    int64_t idle[] = {16, 16, 16};
    double lat[] = {0.05, 1.00, 2.00, 1.00, 0.04, 1.50, 2.00, 1.50, 0.06};
    struct acc_policy_system s = acc_pt_system(3, idle);
    s.latency = lat;
    struct acc_policy_request r = acc_pt_flexible(12);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_CA, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){12});
    r = acc_pt_flexible(24);
    p = acc_pt_run_id(ACC_POLICY_CA, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){16, 8});
    /* Without the matrix CA cannot run: bad input, not a no-fit. */
    s.latency = NULL;
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_CA);
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
}

static void test_ca_average_option(void)
{
    /* C3 has nothing idle.  Over all clusters C1's mean latency (with the
     * far C3) is worse than C2's; over the idle ones only, C1 is better. */
    int64_t idle[] = {10, 10, 0};
    double lat[] = {0.1, 1.0, 9.0, 1.0, 0.2, 1.0, 9.0, 1.0, 0.1};
    struct acc_policy_system s = acc_pt_system(3, idle);
    s.latency = lat;
    struct acc_policy_request r = acc_pt_flexible(15);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_CA);
    struct acc_placement p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){10, 5});
    o.ca_avg = ACC_CA_AVG_IDLE;
    p = acc_pt_run(&s, &r, &o);
    acc_pt_expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){10, 5});
}

static void test_single_and_total(void)
{
    int64_t idle[] = {20, 30, 30}, sizes[] = {10, 15};
    struct acc_policy_system s = acc_pt_system(3, idle);
    struct acc_policy_request r = acc_pt_nonfixed(2, sizes);
    /* No co-allocation: all on the cluster with most idle (tie: lowest). */
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_SINGLE, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 1}, (int64_t[]){10, 15});
    r = acc_pt_flexible(31);
    p = acc_pt_run_id(ACC_POLICY_SINGLE, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    r = (struct acc_policy_request){.type = ACC_REQ_TOTAL, .total = 30};
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){30});
    /* MIG is best fit even for a total request: 20 takes 18 most tightly. */
    r.total = 18;
    p = acc_pt_run_id(ACC_POLICY_MIG, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){18});
}

static void test_fixed(void)
{
    int64_t idle[] = {10, 5}, sizes[] = {6, 4, 5};
    size_t where[] = {0, 0, 1};
    struct acc_policy_system s = acc_pt_system(2, idle);
    struct acc_policy_request r = {
        .type = ACC_REQ_FIXED, .n_components = 3, .sizes = sizes, .clusters = where};
    for (int id = 0; id < ACC_POLICY__COUNT; id++) {
        struct acc_policy_opts o;
        acc_policy_opts_init(&o, (enum acc_policy_id)id);
        double lat[] = {0, 1, 1, 0}, bw[] = {1000, 1000};
        s.latency = lat;
        s.link_max = bw;
        struct acc_placement p = acc_pt_run(&s, &r, &o);
        acc_pt_expect_parts(&p, 3, where, sizes);
    }
    sizes[1] = 5; /* 11 on a cluster of 10 */
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_WF, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

/* ------------------------------------------------------------- §2.8 Bucur */

static void test_wf_norep_vectors(void)
{
    int64_t idle[] = {20, 12, 8, 4};
    struct acc_policy_system s = acc_pt_system(4, idle);
    int64_t a[] = {10, 10}, b[] = {10, 10, 10}, c[] = {4, 12, 8};
    struct acc_policy_request r = acc_pt_nonfixed(2, a);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){10, 10});
    r = acc_pt_nonfixed(3, b);
    p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    p = acc_pt_run_id(ACC_POLICY_WF, &s, &r); /* KOALA's WF fits it, §1.9 */
    CU_ASSERT_TRUE(p.fits);
    r = acc_pt_nonfixed(3, c);
    p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    /* In request order: 4 -> C3, 12 -> C1, 8 -> C2. */
    acc_pt_expect_parts(&p, 3, (size_t[]){2, 0, 1}, (int64_t[]){4, 12, 8});
    /* More components than clusters never fit. */
    int64_t five[] = {1, 1, 1, 1, 1};
    r = acc_pt_nonfixed(5, five);
    p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_split_vectors(void)
{
    static const struct {
        int64_t s, L;
        size_t k;
        int64_t parts[4];
    } v[] = {
        {64, 16, 4, {16, 16, 16, 16}},
        {64, 24, 3, {22, 21, 21}},
        {64, 32, 2, {32, 32}},
        {40, 16, 3, {14, 13, 13}},
        {40, 24, 2, {20, 20}},
        {40, 32, 2, {20, 20}},
        {17, 16, 2, {9, 8}},
        {17, 24, 1, {17}},
        {17, 32, 1, {17}},
        {128, 16, 4, {32, 32, 32, 32}},
        {128, 24, 4, {32, 32, 32, 32}},
        {128, 32, 4, {32, 32, 32, 32}},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        int64_t parts[4] = {0};
        size_t k = acc_policy_split_even(v[i].s, 4, v[i].L, parts);
        CU_ASSERT_EQUAL(k, v[i].k);
        for (size_t j = 0; j < k && j < 4; j++)
            CU_ASSERT_EQUAL(parts[j], v[i].parts[j]);
    }
    int64_t parts[4];
    CU_ASSERT_EQUAL(acc_policy_split_even(0, 4, 16, parts), 0);
    CU_ASSERT_EQUAL(acc_policy_split_even(10, 0, 16, parts), 0);
    CU_ASSERT_EQUAL(acc_policy_split_even(10, 4, 0, parts), 0);
}

/* §3.5: equal components of the measured applications. */
static void test_banen_vectors(void)
{
    int64_t parts[4];
    size_t k = acc_policy_split_even(32, 4, 8, parts);
    CU_ASSERT_EQUAL(k, 4);
    for (size_t i = 0; i < k; i++)
        CU_ASSERT_EQUAL(parts[i], 8);
    k = acc_policy_split_even(30, 3, 10, parts);
    CU_ASSERT_EQUAL(k, 3);
    for (size_t i = 0; i < k; i++)
        CU_ASSERT_EQUAL(parts[i], 10);
    /* Four components of 8 on 4 x 32, distinct clusters. */
    int64_t idle[] = {32, 32, 32, 32}, eights[] = {8, 8, 8, 8};
    struct acc_policy_system s = acc_pt_system(4, idle);
    struct acc_policy_request r = acc_pt_nonfixed(4, eights);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    acc_pt_expect_per(&p, 4, eights);
}

/* ------------------------------------------------------------ ties, bounds */

static void test_ties(void)
{
    int64_t idle[] = {10, 10, 10, 10};
    struct acc_policy_system s = acc_pt_system(4, idle);
    struct acc_policy_request r = acc_pt_flexible(5);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){5});
    /* Random: every cluster gets chosen over many draws, and one seed
     * repeats itself. */
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    uint64_t rng = 42, again = 42;
    o.tiebreak = ACC_TIE_RANDOM;
    o.rng = &rng;
    unsigned seen[4] = {0};
    size_t first[200];
    for (int i = 0; i < 200; i++) {
        p = acc_pt_run(&s, &r, &o);
        CU_ASSERT_TRUE_FATAL(p.fits);
        seen[p.cluster[0]]++;
        first[i] = p.cluster[0];
    }
    for (int i = 0; i < 4; i++)
        CU_ASSERT_TRUE(seen[i] > 20);
    o.rng = &again;
    for (int i = 0; i < 200; i++) {
        p = acc_pt_run(&s, &r, &o);
        CU_ASSERT_EQUAL(p.cluster[0], first[i]);
    }
    /* No generator: bad input. */
    o.rng = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
}

static void test_exhausted(void)
{
    int64_t idle[] = {0, 0, 0};
    struct acc_policy_system s = acc_pt_system(3, idle);
    struct acc_policy_request r = acc_pt_flexible(1);
    for (int id = ACC_POLICY_EARLIEST; id < ACC_POLICY__COUNT; id++) {
        if (!acc_policy_accepts((enum acc_policy_id)id, ACC_REQ_FLEXIBLE))
            continue;
        struct acc_policy_opts o;
        acc_policy_opts_init(&o, (enum acc_policy_id)id);
        double lat[9] = {0}, bw[] = {1000, 1000, 1000};
        s.latency = lat;
        s.link_max = bw;
        struct acc_placement p = acc_pt_run(&s, &r, &o);
        CU_ASSERT_FALSE(p.fits);
    }
    int64_t one[] = {1};
    r = acc_pt_nonfixed(1, one);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_WF, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_flexible_bounds(void)
{
    int64_t idle[] = {10, 30, 20};
    struct acc_policy_system s = acc_pt_system(3, idle);
    struct acc_policy_request r = acc_pt_flexible(55);
    r.max_parts = 2;
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    /* At most 25 a part: 25 + 20 + 10. */
    r = acc_pt_flexible(55);
    r.max_size = 25;
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 3, (size_t[]){1, 2, 0}, (int64_t[]){25, 20, 10});
    /* At least 12 a part: C1's 10 is too small to be a part.  For 52, C2's
     * 30 leaves 22; C3's 20 would leave a part of 2, and the 10 it could
     * give instead is under 12 too: no fit. */
    r = acc_pt_flexible(45);
    r.min_size = 12;
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){30, 15});
    r.total = 52;
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    r.total = 40;
    r.min_size = 15;
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){25, 15});
    /* Contradictory bounds are bad input. */
    r.min_size = 20;
    r.max_size = 10;
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
}

static void test_one_cluster(void)
{
    int64_t idle[] = {8};
    struct acc_policy_system s = acc_pt_system(1, idle);
    struct acc_policy_request r = acc_pt_flexible(8);
    struct acc_placement p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    acc_pt_expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){8});
    r.total = 9;
    p = acc_pt_run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    int64_t comps[] = {4, 4};
    r = acc_pt_nonfixed(2, comps);
    p = acc_pt_run_id(ACC_POLICY_WF, &s, &r);
    acc_pt_expect_parts(&p, 2, (size_t[]){0, 0}, (int64_t[]){4, 4});
    p = acc_pt_run_id(ACC_POLICY_WF_NOREP, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_bad_input(void)
{
    int64_t idle[] = {4, -1};
    struct acc_policy_system s = acc_pt_system(2, idle);
    struct acc_policy_request r = acc_pt_flexible(2);
    struct acc_policy_opts o;
    struct acc_placement p;
    struct acc_error err;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    idle[1] = 4;
    r.total = 0;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    /* WF places components, not a total. */
    r.total = 2;
    o.id = ACC_POLICY_WF;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "flexible"));
    int64_t sizes[] = {1, 0};
    r = acc_pt_nonfixed(2, sizes);
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    size_t where[] = {0, 2};
    sizes[1] = 1;
    r.type = ACC_REQ_FIXED;
    r.clusters = where;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    s.n_clusters = ACC_POLICY_MAX_CLUSTERS + 1;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
    /* A1 and class B need the link capacities. */
    s.n_clusters = 2;
    r = acc_pt_flexible(2);
    o.id = ACC_POLICY_B1;
    CU_ASSERT_EQUAL(acc_policy_place(&s, &r, &o, &p, &err), ACC_ERR_INVALID);
}

static void test_names(void)
{
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_EARLIEST);
    for (int id = 0; id < ACC_POLICY__COUNT; id++) {
        CU_ASSERT_TRUE(acc_policy_parse(acc_policy_name((enum acc_policy_id)id), &o));
        CU_ASSERT_EQUAL(o.id, id);
    }
    CU_ASSERT_FALSE(acc_policy_parse("fcm-0", &o));
    CU_ASSERT_FALSE(acc_policy_parse("fcm-2x", &o));
    CU_ASSERT_FALSE(acc_policy_parse("fcm-65", &o));
    CU_ASSERT_FALSE(acc_policy_parse("best-fit", &o));
    CU_ASSERT_FALSE(acc_policy_parse(NULL, &o));
    CU_ASSERT_TRUE(acc_policy_parse("fcm-3", &o));
    CU_ASSERT_EQUAL(o.id, ACC_POLICY_FCM);
    CU_ASSERT_EQUAL(o.max_clusters, 3);
}

static void test_candidates(void)
{
    int64_t idle[] = {10, 30, 20};
    struct acc_policy_system s = acc_pt_system(3, idle);
    struct acc_policy_request r = acc_pt_flexible(25);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    struct acc_placement c[8];
    size_t n = 0;
    struct acc_error err;
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 8, &n, &err));
    /* 25 on C2; then without C2: 20 + 5; then without C3 too: no fit. */
    CU_ASSERT_EQUAL_FATAL(n, 2);
    acc_pt_expect_parts(&c[0], 1, (size_t[]){1}, (int64_t[]){25});
    acc_pt_expect_parts(&c[1], 2, (size_t[]){2, 0}, (int64_t[]){20, 5});
    CU_ASSERT_EQUAL(idle[1], 30); /* the caller's counts are untouched */
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 1, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    r.total = 61;
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 8, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
}

static const struct acc_test_case tests[] = {
    {"KOALA WF and FCM vectors (1.9)", test_koala_vectors},
    {"CA vector (1.9)", test_ca_vector},
    {"CA average over idle clusters", test_ca_average_option},
    {"no co-allocation and total requests", test_single_and_total},
    {"fixed requests under every policy", test_fixed},
    {"WF without repetitions (2.8)", test_wf_norep_vectors},
    {"splitting (2.8)", test_split_vectors},
    {"measured-application components (3.5)", test_banen_vectors},
    {"ties", test_ties},
    {"exhausted capacity", test_exhausted},
    {"flexible bounds", test_flexible_bounds},
    {"one cluster", test_one_cluster},
    {"bad input", test_bad_input},
    {"names", test_names},
    {"candidates", test_candidates},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"policy", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
