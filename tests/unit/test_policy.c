/* test_policy.c - the placement policies and the bandwidth model on the
 * definitional test vectors of science.md (§1.9, §2.8, §3.5, §4.7) and on
 * hand-made cases: ties, exhausted capacity, bounds, the k limit, one
 * cluster, bad input. */
#include <math.h>
#include <stdlib.h>

#include "policy.h"
#include "testutil.h"

#define NEAR(a, b, eps) CU_ASSERT_DOUBLE_EQUAL((a), (b), (eps))

static struct acc_policy_system sys_of(size_t n, const int64_t *idle)
{
    return (struct acc_policy_system){.n_clusters = n, .idle = idle};
}

static struct acc_policy_request flexible(int64_t total)
{
    return (struct acc_policy_request){.type = ACC_REQ_FLEXIBLE, .total = total};
}

static struct acc_policy_request nonfixed(size_t n, const int64_t *sizes)
{
    return (struct acc_policy_request){.type = ACC_REQ_NONFIXED, .n_components = n, .sizes = sizes};
}

static struct acc_placement run(const struct acc_policy_system *s,
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

static struct acc_placement run_id(enum acc_policy_id id, const struct acc_policy_system *s,
                                   const struct acc_policy_request *r)
{
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, id);
    return run(s, r, &o);
}

/* The units per cluster equal want[0 .. n-1]. */
static void expect_per(const struct acc_placement *p, size_t n, const int64_t *want)
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

/* The parts in order: (cluster, size) pairs. */
static void expect_parts(const struct acc_placement *p, size_t n, const size_t *cl,
                         const int64_t *sz)
{
    CU_ASSERT_TRUE_FATAL(p->fits);
    CU_ASSERT_EQUAL_FATAL(p->n, n);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(p->cluster[i], cl[i]);
        CU_ASSERT_EQUAL(p->size[i], sz[i]);
    }
}

/* ------------------------------------------------------------- §1.9 KOALA */

static void test_koala_vectors(void)
{
    int64_t i16[] = {16, 16, 16}, s8[] = {8, 8, 8};
    struct acc_policy_system s = sys_of(3, i16);
    struct acc_policy_request r = nonfixed(3, s8);
    struct acc_placement p = run_id(ACC_POLICY_WF, &s, &r);
    expect_per(&p, 3, (int64_t[]){8, 8, 8});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 3);
    r = flexible(24);
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){16, 8});

    int64_t idle[] = {10, 30, 20};
    s = sys_of(3, idle);
    r = flexible(25);
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){25});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 1);
    r = flexible(45);
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){30, 15});
    r = flexible(55);
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 3, (size_t[]){1, 2, 0}, (int64_t[]){30, 20, 5});
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    CU_ASSERT_TRUE(acc_policy_parse("fcm-2", &o));
    CU_ASSERT_EQUAL(o.max_clusters, 2);
    p = run(&s, &r, &o);
    CU_ASSERT_FALSE(p.fits);
    CU_ASSERT_EQUAL(p.n, 0);
    r = flexible(70);
    p = run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);

    /* KOALA WF with repeats: C1 holds two components. */
    int64_t idle4[] = {20, 12, 8, 4}, s10[] = {10, 10, 10};
    s = sys_of(4, idle4);
    r = nonfixed(3, s10);
    p = run_id(ACC_POLICY_WF, &s, &r);
    expect_parts(&p, 3, (size_t[]){0, 1, 0}, (int64_t[]){10, 10, 10});
    CU_ASSERT_EQUAL(acc_placement_n_clusters(&p), 2);
}

static void test_ca_vector(void)
{
    int64_t idle[] = {16, 16, 16};
    double lat[] = {0.05, 1.00, 2.00, 1.00, 0.04, 1.50, 2.00, 1.50, 0.06};
    struct acc_policy_system s = sys_of(3, idle);
    s.latency = lat;
    struct acc_policy_request r = flexible(12);
    struct acc_placement p = run_id(ACC_POLICY_CA, &s, &r);
    expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){12});
    r = flexible(24);
    p = run_id(ACC_POLICY_CA, &s, &r);
    expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){16, 8});
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
    struct acc_policy_system s = sys_of(3, idle);
    s.latency = lat;
    struct acc_policy_request r = flexible(15);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_CA);
    struct acc_placement p = run(&s, &r, &o);
    expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){10, 5});
    o.ca_avg = ACC_CA_AVG_IDLE;
    p = run(&s, &r, &o);
    expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){10, 5});
}

static void test_single_and_total(void)
{
    int64_t idle[] = {20, 30, 30}, sizes[] = {10, 15};
    struct acc_policy_system s = sys_of(3, idle);
    struct acc_policy_request r = nonfixed(2, sizes);
    /* No co-allocation: all on the cluster with most idle (tie: lowest). */
    struct acc_placement p = run_id(ACC_POLICY_SINGLE, &s, &r);
    expect_parts(&p, 2, (size_t[]){1, 1}, (int64_t[]){10, 15});
    r = flexible(31);
    p = run_id(ACC_POLICY_SINGLE, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    r = (struct acc_policy_request){.type = ACC_REQ_TOTAL, .total = 30};
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){30});
    /* MIG is best fit even for a total request: 20 takes 18 most tightly. */
    r.total = 18;
    p = run_id(ACC_POLICY_MIG, &s, &r);
    expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){18});
}

static void test_fixed(void)
{
    int64_t idle[] = {10, 5}, sizes[] = {6, 4, 5};
    size_t where[] = {0, 0, 1};
    struct acc_policy_system s = sys_of(2, idle);
    struct acc_policy_request r = {
        .type = ACC_REQ_FIXED, .n_components = 3, .sizes = sizes, .clusters = where};
    for (int id = 0; id < ACC_POLICY__COUNT; id++) {
        struct acc_policy_opts o;
        acc_policy_opts_init(&o, (enum acc_policy_id)id);
        double lat[] = {0, 1, 1, 0}, bw[] = {1000, 1000};
        s.latency = lat;
        s.link_max = bw;
        struct acc_placement p = run(&s, &r, &o);
        expect_parts(&p, 3, where, sizes);
    }
    sizes[1] = 5; /* 11 on a cluster of 10 */
    struct acc_placement p = run_id(ACC_POLICY_WF, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

/* ------------------------------------------------------------- §2.8 Bucur */

static void test_wf_norep_vectors(void)
{
    int64_t idle[] = {20, 12, 8, 4};
    struct acc_policy_system s = sys_of(4, idle);
    int64_t a[] = {10, 10}, b[] = {10, 10, 10}, c[] = {4, 12, 8};
    struct acc_policy_request r = nonfixed(2, a);
    struct acc_placement p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
    expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){10, 10});
    r = nonfixed(3, b);
    p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    p = run_id(ACC_POLICY_WF, &s, &r); /* KOALA's WF fits it, §1.9 */
    CU_ASSERT_TRUE(p.fits);
    r = nonfixed(3, c);
    p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
    /* In request order: 4 -> C3, 12 -> C1, 8 -> C2. */
    expect_parts(&p, 3, (size_t[]){2, 0, 1}, (int64_t[]){4, 12, 8});
    /* More components than clusters never fit. */
    int64_t five[] = {1, 1, 1, 1, 1};
    r = nonfixed(5, five);
    p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
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
    struct acc_policy_system s = sys_of(4, idle);
    struct acc_policy_request r = nonfixed(4, eights);
    struct acc_placement p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
    expect_per(&p, 4, eights);
}

/* ------------------------------------------------------------ ties, bounds */

static void test_ties(void)
{
    int64_t idle[] = {10, 10, 10, 10};
    struct acc_policy_system s = sys_of(4, idle);
    struct acc_policy_request r = flexible(5);
    struct acc_placement p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){5});
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
        p = run(&s, &r, &o);
        CU_ASSERT_TRUE_FATAL(p.fits);
        seen[p.cluster[0]]++;
        first[i] = p.cluster[0];
    }
    for (int i = 0; i < 4; i++)
        CU_ASSERT_TRUE(seen[i] > 20);
    o.rng = &again;
    for (int i = 0; i < 200; i++) {
        p = run(&s, &r, &o);
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
    struct acc_policy_system s = sys_of(3, idle);
    struct acc_policy_request r = flexible(1);
    for (int id = ACC_POLICY_EARLIEST; id < ACC_POLICY__COUNT; id++) {
        if (!acc_policy_accepts((enum acc_policy_id)id, ACC_REQ_FLEXIBLE))
            continue;
        struct acc_policy_opts o;
        acc_policy_opts_init(&o, (enum acc_policy_id)id);
        double lat[9] = {0}, bw[] = {1000, 1000, 1000};
        s.latency = lat;
        s.link_max = bw;
        struct acc_placement p = run(&s, &r, &o);
        CU_ASSERT_FALSE(p.fits);
    }
    int64_t one[] = {1};
    r = nonfixed(1, one);
    struct acc_placement p = run_id(ACC_POLICY_WF, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_flexible_bounds(void)
{
    int64_t idle[] = {10, 30, 20};
    struct acc_policy_system s = sys_of(3, idle);
    struct acc_policy_request r = flexible(55);
    r.max_parts = 2;
    struct acc_placement p = run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    /* At most 25 a part: 25 + 20 + 10. */
    r = flexible(55);
    r.max_size = 25;
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 3, (size_t[]){1, 2, 0}, (int64_t[]){25, 20, 10});
    /* At least 12 a part: C1's 10 is too small to be a part.  For 52, C2's
     * 30 leaves 22; C3's 20 would leave a part of 2, and the 10 it could
     * give instead is under 12 too: no fit. */
    r = flexible(45);
    r.min_size = 12;
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){30, 15});
    r.total = 52;
    p = run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    r.total = 40;
    r.min_size = 15;
    p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 2, (size_t[]){1, 2}, (int64_t[]){25, 15});
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
    struct acc_policy_system s = sys_of(1, idle);
    struct acc_policy_request r = flexible(8);
    struct acc_placement p = run_id(ACC_POLICY_FCM, &s, &r);
    expect_parts(&p, 1, (size_t[]){0}, (int64_t[]){8});
    r.total = 9;
    p = run_id(ACC_POLICY_FCM, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    int64_t comps[] = {4, 4};
    r = nonfixed(2, comps);
    p = run_id(ACC_POLICY_WF, &s, &r);
    expect_parts(&p, 2, (size_t[]){0, 0}, (int64_t[]){4, 4});
    p = run_id(ACC_POLICY_WF_NOREP, &s, &r);
    CU_ASSERT_FALSE(p.fits);
}

static void test_bad_input(void)
{
    int64_t idle[] = {4, -1};
    struct acc_policy_system s = sys_of(2, idle);
    struct acc_policy_request r = flexible(2);
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
    r = nonfixed(2, sizes);
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
    r = flexible(2);
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
    struct acc_policy_system s = sys_of(3, idle);
    struct acc_policy_request r = flexible(25);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_FCM);
    struct acc_placement c[8];
    size_t n = 0;
    struct acc_error err;
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 8, &n, &err));
    /* 25 on C2; then without C2: 20 + 5; then without C3 too: no fit. */
    CU_ASSERT_EQUAL_FATAL(n, 2);
    expect_parts(&c[0], 1, (size_t[]){1}, (int64_t[]){25});
    expect_parts(&c[1], 2, (size_t[]){2, 0}, (int64_t[]){20, 5});
    CU_ASSERT_EQUAL(idle[1], 30); /* the caller's counts are untouched */
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 1, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    r.total = 61;
    ACC_ASSERT_OK(acc_policy_candidates(&s, &r, &o, c, 8, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
}

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
    struct acc_policy_system s = sys_of(4, free);
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
    struct acc_policy_request r = flexible(30);
    r.ppbw = 10;
    struct acc_placement p = run_id(ACC_POLICY_A1, &s, &r);
    expect_per(&p, 4, (int64_t[]){25, 5, 0, 0});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_CO);
    NEAR(acc_bw_requirement(25, 30, 10), 43.10, 1e-2);
    NEAR(acc_bw_requirement(5, 30, 10), 43.10, 1e-2);
    free[0] = 20;
    p = run_id(ACC_POLICY_A1, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    /* Load counts against the threshold: with 20 already on C2's link only
     * 40 is left there, so C2 admits at most 4 (35.9; 5 needs 43.1), and the
     * depth-first search, largest first, ends with 1 on C3. */
    free[0] = 25;
    double load[] = {0, 20, 0, 0};
    s.link_load = load;
    p = run_id(ACC_POLICY_A1, &s, &r);
    expect_per(&p, 4, (int64_t[]){25, 4, 1, 0});
    /* A tiny step budget gives up: no fit, not an error. */
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_A1);
    o.a1_max_steps = 1;
    p = run(&s, &r, &o);
    CU_ASSERT_FALSE(p.fits);
}

static void test_class_b_vectors(void)
{
    int64_t free[] = {20, 15, 10, 5};
    double max[] = {1000, 1000, 1000, 1000}, load[] = {300, 1100, 500, 200};
    struct acc_policy_system s = jones_sys(free, max, load);
    struct acc_policy_request r = flexible(30);
    struct acc_placement p = run_id(ACC_POLICY_B1, &s, &r);
    expect_per(&p, 4, (int64_t[]){20, 0, 10, 0});
    p = run_id(ACC_POLICY_B2, &s, &r);
    expect_per(&p, 4, (int64_t[]){20, 0, 5, 5});
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_B3);
    p = run(&s, &r, &o); /* f = 0.7: a chunk of 21 fits nowhere */
    CU_ASSERT_FALSE(p.fits);
    o.b3_fraction = 0.6;
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){18, 0, 10, 2});
    expect_parts(&p, 3, (size_t[]){0, 2, 3}, (int64_t[]){18, 10, 2});
    p = run_id(ACC_POLICY_B4, &s, &r);
    expect_per(&p, 4, (int64_t[]){15, 0, 10, 5});
    p = run_id(ACC_POLICY_INITIAL, &s, &r);
    expect_per(&p, 4, (int64_t[]){20, 10, 0, 0});
    /* Discounting at exactly LSLT is the '>=' option. */
    load[1] = 1000;
    p = run_id(ACC_POLICY_B1, &s, &r);
    expect_per(&p, 4, (int64_t[]){20, 10, 0, 0});
    acc_policy_opts_init(&o, ACC_POLICY_B1);
    o.discount_ge = true;
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){20, 0, 10, 0});
    /* Fewer free units left than n_T after discounting: every module fails. */
    load[0] = 2000;
    load[1] = 2000;
    for (int id = ACC_POLICY_B1; id <= ACC_POLICY_B4; id++) {
        p = run_id((enum acc_policy_id)id, &s, &r);
        CU_ASSERT_FALSE(p.fits);
    }
}

static void test_b3_best_fit_and_b4_start(void)
{
    int64_t free[] = {30, 22, 10, 5};
    double max[] = {1000, 1000, 1000, 1000};
    struct acc_policy_system s = jones_sys(free, max, NULL);
    struct acc_policy_request r = flexible(40);
    struct acc_policy_opts o;
    acc_policy_opts_init(&o, ACC_POLICY_B3);
    o.local_first = false;
    o.b3_fraction = 0.5; /* chunk 20 */
    struct acc_placement p = run(&s, &r, &o);
    expect_parts(&p, 2, (size_t[]){0, 1}, (int64_t[]){20, 20});
    o.b3_chunk = ACC_B3_BEST_FIT;
    p = run(&s, &r, &o);
    expect_parts(&p, 2, (size_t[]){1, 0}, (int64_t[]){20, 20});
    /* B4 from cluster 2: the extra unit above the level goes to C3 first. */
    acc_policy_opts_init(&o, ACC_POLICY_B4);
    o.local_first = false;
    r.total = 22; /* level 5 gives 20; the 2 left go to C1 and C2 */
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){6, 6, 5, 5});
    r.total = 20; /* level 5: 5+5+5+5 = 20 */
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){5, 5, 5, 5});
    r.total = 21;
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){6, 5, 5, 5});
    o.b4_start = 2;
    p = run(&s, &r, &o);
    expect_per(&p, 4, (int64_t[]){5, 5, 6, 5});
}

static void test_jones_template(void)
{
    int64_t free[] = {20, 15, 10, 5};
    double max[] = {1000, 1000, 1000, 1000};
    struct acc_policy_system s = jones_sys(free, max, NULL);
    struct acc_policy_request r = flexible(12);
    r.home = 1;
    /* LA: the home cluster has 15 >= 12. */
    struct acc_placement p = run_id(ACC_POLICY_B1, &s, &r);
    expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){12});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_LA);
    /* MIG: home 3 has 10; best fit elsewhere is C2 (15) before C1 (20). */
    r.home = 3;
    r.total = 14;
    p = run_id(ACC_POLICY_A1, &s, &r);
    expect_parts(&p, 1, (size_t[]){1}, (int64_t[]){14});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_MIG);
    /* Migration Only never co-allocates. */
    r.total = 25;
    p = run_id(ACC_POLICY_MIGRATION, &s, &r);
    CU_ASSERT_FALSE(p.fits);
    p = run_id(ACC_POLICY_B1, &s, &r);
    expect_per(&p, 4, (int64_t[]){20, 5, 0, 0});
    CU_ASSERT_EQUAL(p.step, ACC_STEP_CO);
    p = run_id(ACC_POLICY_LA, &s, &r);
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
    {"policy", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
