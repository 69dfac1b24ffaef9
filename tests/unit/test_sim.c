/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim.c - accord-sim: the identities the queue definitions imply,
 * asserted job by job for one seed; the residual-time update inside a run;
 * determinism; the figures of a hand-computed workload; the reservation
 * mode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsim.h"
#include "testutil.h"

/* Parameters from key = value lines (asserting each). */
static void params_trace(struct wsim_params *p, const char *const *kv, const char *trace)
{
    char err[WSIM_ERR_LEN];
    wsim_params_init(p);
    if (trace)
        CU_ASSERT_FATAL(wsim_params_set(p, "trace", trace, ".", err, sizeof err));
    for (size_t i = 0; kv[i]; i += 2) {
        bool ok = wsim_params_set(p, kv[i], kv[i + 1], ".", err, sizeof err);
        if (!ok)
            fprintf(stderr, "%s = %s: %s\n", kv[i], kv[i + 1], err);
        CU_ASSERT_FATAL(ok);
    }
    bool ok = wsim_params_check(p, err, sizeof err);
    if (!ok)
        fprintf(stderr, "check: %s\n", err);
    CU_ASSERT_FATAL(ok);
}

static void params(struct wsim_params *p, const char *const *kv)
{
    params_trace(p, kv, NULL);
}

static void set(struct wsim_params *p, const char *k, const char *v)
{
    char err[WSIM_ERR_LEN];
    CU_ASSERT_FATAL(wsim_params_set(p, k, v, ".", err, sizeof err));
}

/* Runs policy over the workload of p; the jobs (with outcome) in *w. */
static void run(struct wsim_params *p, const char *policy, struct wsim_workload_set *w,
                struct wsim_result *r)
{
    char err[WSIM_ERR_LEN];
    set(p, "policy", policy);
    CU_ASSERT_FATAL(wsim_workload_make(p, 0, w, err, sizeof err));
    bool ok = wsim_run(p, w, 0, r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "%s: %s\n", policy, err);
    CU_ASSERT_FATAL(ok);
}

/* The same start on the same clusters for every job. */
static size_t differences(const struct wsim_workload_set *a, const struct wsim_workload_set *b,
                          int nc)
{
    size_t d = 0;
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        bool same = a->v[i].start == b->v[i].start && a->v[i].end == b->v[i].end;
        for (int c = 0; c < nc; c++)
            same = same && a->v[i].alloc[c] == b->v[i].alloc[c];
        d += !same;
    }
    return d;
}

static const char *const bucur[] = {"clusters",       "32,32,32,32", "workload", "synthetic",
                                    "component_size", "dq:0.9:1:8",  "service",  "exp:1",
                                    "jobs",           "20000",       "warmup",   "1000",
                                    "load",           "0.7",         "seed",     "42",
                                    "routing",        "40,20,20,20", NULL};

static void same_schedules(const char *composition, const char *const *policies, size_t n)
{
    struct wsim_params p;
    params(&p, bucur);
    set(&p, "composition", composition);
    struct wsim_workload_set ref, w;
    struct wsim_result r;
    run(&p, policies[0], &ref, &r);
    /* Something waited: the identity is not the trivial one of an idle
     * system. */
    CU_ASSERT(r.mean_wait > 0.01);
    for (size_t i = 1; i < n; i++) {
        run(&p, policies[i], &w, &r);
        size_t d = differences(&ref, &w, p.nclusters);
        if (d)
            fprintf(stderr, "%s vs %s: %zu jobs differ\n", policies[0], policies[i], d);
        CU_ASSERT_EQUAL(d, 0);
        wsim_workload_free(&w);
    }
    wsim_workload_free(&ref);
    wsim_params_release(&p);
}

static void test_single_component_ls_lp_gp(void)
{
    static const char *const pol[] = {"LS-OR", "LS-DO", "LP-GF", "LP-LF", "LP-RD", "GP"};
    same_schedules("100", pol, sizeof pol / sizeof *pol);
}

static void test_multi_component_gs_lp_gp(void)
{
    static const char *const pol[] = {"GS", "LP-GF", "LP-LF", "GP"};
    same_schedules("0,50,25,25", pol, sizeof pol / sizeof *pol);
}

/* A control: with a mixed stream the policies do differ, so the test
 * above would see a difference if the disciplines ignored the policy. */
static void test_mixed_stream_differs(void)
{
    struct wsim_params p;
    params(&p, bucur);
    set(&p, "composition", "50,0,0,50");
    struct wsim_workload_set a, b;
    struct wsim_result r;
    run(&p, "GS", &a, &r);
    run(&p, "LS-DO", &b, &r);
    CU_ASSERT(differences(&a, &b, p.nclusters) > 100);
    wsim_workload_free(&a);
    wsim_workload_free(&b);
    wsim_params_release(&p);
}

/* GS on 1 x 128 with each job one component of its total size is SC (the
 * total request) on the multi-component stream. */
static void test_one_cluster_gs_is_sc(void)
{
    struct wsim_params p;
    params(&p, bucur);
    set(&p, "clusters", "128");
    set(&p, "routing", "1");
    set(&p, "composition", "25,25,25,25");
    struct wsim_workload_set sc, gs;
    struct wsim_result r;
    run(&p, "SC", &sc, &r);
    CU_ASSERT(r.mean_wait > 0.01);
    char err[WSIM_ERR_LEN];
    set(&p, "policy", "GS");
    CU_ASSERT_FATAL(wsim_workload_make(&p, 0, &gs, err, sizeof err));
    for (size_t i = 0; i < gs.n; i++) {
        gs.v[i].comp[0] = gs.v[i].total;
        gs.v[i].ncomp = 1;
    }
    CU_ASSERT_FATAL(wsim_run(&p, &gs, 0, &r, err, sizeof err));
    CU_ASSERT_EQUAL(differences(&sc, &gs, 1), 0);
    wsim_workload_free(&sc);
    wsim_workload_free(&gs);
    wsim_params_release(&p);
}

static char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", acc_test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

/* docs/science.md 4.7: T_E = 100, K = 0.7, sd 0.5 from t = 0, 1.0 from t = 50:
 * the job ends at 111.538.  Two jobs (2, 2) on 2 x 4 nodes each need BSBW =
 * 1000 Mbit/s on both 1000 Mbit/s links, so together sd = 0.5; the second
 * (T_E = 38.4615) ends at 1.3 T_E = 50 and the first speeds up. */
static void test_residual_time_in_a_run(void)
{
    const char *trace = write_tmp(
        "residual.swf", "; two co-allocated jobs\n"
                        "1 0 -1 100 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                        "2 0 -1 38.461538461538 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n");
    static const char *const kv[] = {"clusters", "4,4",    "workload",  "swf",  "load",
                                     "0",        "split",  "limit:2",   "comm", "bandwidth",
                                     "bsbw",     "1000",   "link_mbps", "1000", "comp_fraction",
                                     "0.7",      "warmup", "0",         NULL};
    struct wsim_params p;
    params_trace(&p, kv, trace);
    struct wsim_workload_set w;
    struct wsim_result r;
    run(&p, "GS", &w, &r);
    CU_ASSERT_EQUAL_FATAL(w.n, 2);
    CU_ASSERT_EQUAL(w.v[0].used, 2);
    CU_ASSERT_DOUBLE_EQUAL(w.v[1].end, 50.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(w.v[0].end, 111.538, 1e-3);
    wsim_workload_free(&w);
    /* Alone, at sd = 1 (no contention): 100 s; with progressive filling the
     * same two jobs share equally, so the figure is the same. */
    set(&p, "allotment", "fill");
    run(&p, "GS", &w, &r);
    CU_ASSERT_DOUBLE_EQUAL(w.v[0].end, 111.538, 1e-3);
    wsim_workload_free(&w);
    wsim_params_release(&p);
}

static const char *tiny_trace = "; Version: 2.2\n"
                                ";  a hand-computed workload on one cluster of 4\n"
                                "1 0 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 1 -1 5 2 -1 -1 2 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 2 -1 5 -1 -1 -1 2 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "4 3 -1 -1 2 -1 -1 2 -1 -1 0 -1 -1 -1 -1 -1 -1 -1\n";

/* J1 runs 0-10 on all 4; J2 and J3 wait for it and run 10-15 side by side
 * (J3's size comes from the requested processors); J4 has no run time and
 * is skipped.  Responses 10, 14, 13; waits 0, 9, 8. */
static void check_tiny(const char *policy)
{
    static const char *const kv[] = {"clusters", "4",      "workload", "swf", "load",
                                     "0",        "warmup", "0",        NULL};
    struct wsim_params p;
    params_trace(&p, kv, write_tmp("tiny.swf", tiny_trace));
    struct wsim_workload_set w;
    struct wsim_result r;
    run(&p, policy, &w, &r);
    CU_ASSERT_EQUAL_FATAL(w.n, 3);
    CU_ASSERT_DOUBLE_EQUAL(w.v[1].start, 10, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(w.v[2].start, 10, 1e-9);
    CU_ASSERT_EQUAL(r.measured, 3);
    CU_ASSERT_DOUBLE_EQUAL(r.mean_resp, 37.0 / 3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.mean_wait, 17.0 / 3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.p50_resp, 13, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.p99_resp, 14, 1e-9);
    /* 60 unit-seconds over 4 units and the 2 s of arrivals. */
    CU_ASSERT_DOUBLE_EQUAL(r.util_net, 60.0 / 8, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.util_gross, 60.0 / 8, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.coalloc_share, 0, 1e-12);
    wsim_workload_free(&w);
    wsim_params_release(&p);
}

static void test_metrics_tiny(void)
{
    check_tiny("GS");
    check_tiny("FCM");
    check_tiny("AR"); /* booked at arrival: the same slots */
}

static void test_determinism(void)
{
    struct wsim_params p;
    params(&p, bucur);
    set(&p, "composition", "50,25,25,0");
    set(&p, "policy", "LS-RD"); /* draws from the policy stream too */
    struct wsim_workload_set a, b;
    struct wsim_result ra, rb;
    run(&p, "LS-RD", &a, &ra);
    run(&p, "LS-RD", &b, &rb);
    CU_ASSERT_EQUAL(a.n, b.n);
    CU_ASSERT(memcmp(a.v, b.v, a.n * sizeof *a.v) == 0);
    CU_ASSERT(memcmp(&ra, &rb, sizeof ra) == 0);
    wsim_workload_free(&b);
    set(&p, "seed", "43");
    run(&p, "LS-RD", &b, &rb);
    CU_ASSERT(memcmp(a.v, b.v, a.n * sizeof *a.v) != 0);
    wsim_workload_free(&a);
    wsim_workload_free(&b);
    wsim_params_release(&p);
}

static void test_generators(void)
{
    /* D(0.9) on [1, 8], 1 counted as a power of 2: mean 3.4929. */
    struct wsim_dist_spec d = {0};
    char err[WSIM_ERR_LEN];
    CU_ASSERT_FATAL(wsim_dist_parse(&d, "dq:0.9:1:8", ".", err, sizeof err));
    CU_ASSERT_DOUBLE_EQUAL(wsim_dist_mean(&d), 3.4929, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(d.cum[0] / d.cum[7], 0.2519, 1e-4);
    wsim_dist_release(&d);
    CU_ASSERT_FALSE(wsim_dist_parse(&d, "dq:0.9:0:8", ".", err, sizeof err));
    CU_ASSERT_FALSE(wsim_dist_parse(&d, "weibull:1", ".", err, sizeof err));
    /* Banen [rco]: 72.2% of Poisson jobs multi-component, to sampling
     * precision over 200,000 jobs. */
    static const char *const kv[] = {"workload", "banen",  "app",  "poisson", "rule", "rco",
                                     "jobs",     "200000", "comm", "table",   NULL};
    struct wsim_params p;
    params(&p, kv);
    struct wsim_workload_set w;
    CU_ASSERT_FATAL(wsim_workload_make(&p, 0, &w, err, sizeof err));
    size_t multi = 0;
    for (size_t i = 0; i < w.n; i++)
        multi += w.v[i].ncomp > 1;
    CU_ASSERT_DOUBLE_EQUAL((double)multi / (double)w.n, 13.0 / 18, 0.005);
    /* lambda = rho P / E[s T1]: Poisson at 0.5 -> mean interarrival 164.83 s */
    CU_ASSERT_DOUBLE_EQUAL(w.offered, 10549.33, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(w.v[w.n - 1].submit / (double)w.n, 164.83, 1.5);
    wsim_workload_free(&w);
    wsim_params_release(&p);
    /* Bucur's split (docs/science.md 2.8). */
    int comp[WSIM_MAX_COMP];
    CU_ASSERT_EQUAL(wsim_split_limit(64, 24, 4, comp), 3);
    CU_ASSERT(comp[0] == 22 && comp[1] == 21 && comp[2] == 21);
    CU_ASSERT_EQUAL(wsim_split_limit(17, 16, 4, comp), 2);
    CU_ASSERT(comp[0] == 9 && comp[1] == 8);
}

static void test_swf_parser(void)
{
    struct wsim_swf_job *v = NULL;
    size_t n = 0, skipped = 0;
    char err[WSIM_ERR_LEN];
    FILE *f = fmemopen((void *)tiny_trace, strlen(tiny_trace), "r");
    CU_ASSERT_FATAL(wsim_swf_parse(f, "tiny", &v, &n, &skipped, err, sizeof err));
    fclose(f);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(skipped, 1);
    CU_ASSERT_EQUAL(v[2].procs, 2); /* the requested size stands in for -1 */
    CU_ASSERT_DOUBLE_EQUAL(v[1].run, 5, 1e-12);
    free(v);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"; ok\n1 0 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1\n", "bad:2: 17 fields"},
        {"1 0 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1 7\n", "bad:1: more than 18"},
        {"1 0 -1 1x 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n", "bad:1: field 4 is not"},
        {"1 0 -1 10 -4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n", "bad:1: field 5 is negative"},
        {"1 5 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
         "2 4 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
         "bad:2: submit time 4 before"},
        {"; only a header\n", "bad: no job"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fmemopen((void *)bad[i].text, strlen(bad[i].text), "r");
        v = NULL;
        bool ok = wsim_swf_parse(f, "bad", &v, &n, &skipped, err, sizeof err);
        fclose(f);
        CU_ASSERT_FALSE(ok);
        CU_ASSERT_PTR_NULL(v);
        if (strncmp(err, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "case %zu: %s\n", i, err);
        CU_ASSERT(strncmp(err, bad[i].msg, strlen(bad[i].msg)) == 0);
    }
    /* A line past the bound. */
    size_t len = WSIM_SWF_MAX_LINE + 100;
    char *longline = malloc(len + 2);
    CU_ASSERT_FATAL(longline != NULL);
    memset(longline, ' ', len);
    longline[len] = '\n';
    longline[len + 1] = '\0';
    f = fmemopen(longline, len + 1, "r");
    CU_ASSERT_FALSE(wsim_swf_parse(f, "long", &v, &n, &skipped, err, sizeof err));
    CU_ASSERT(strstr(err, "long:1: line longer") != NULL);
    fclose(f);
    free(longline);
}

static void test_experiment_file(void)
{
    struct wsim_experiment e;
    char err[WSIM_ERR_LEN];
    const char *good = "# a sweep\nname = t\npolicy = GS\njobs = 100\nwarmup = 10\n"
                       "curves = policy: GS | LS-DO\nx = load: 0.1..0.3/0.1\n";
    CU_ASSERT_FATAL(wsim_experiment_parse(&e, good, ".", "good", err, sizeof err));
    CU_ASSERT_EQUAL(e.ncurves, 2);
    CU_ASSERT_EQUAL(e.nxs, 3);
    CU_ASSERT_STRING_EQUAL(e.xs[2], "0.3");
    struct wsim_params p;
    CU_ASSERT_FATAL(wsim_experiment_params(&e, 1, 2, &p, err, sizeof err));
    CU_ASSERT_EQUAL(p.fcfs, WSIM_LS);
    CU_ASSERT_DOUBLE_EQUAL(p.load, 0.3, 1e-12);
    wsim_params_release(&p);
    wsim_experiment_free(&e);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"name = t\njobs = ten\n", "f:2: jobs: an integer"},
        {"\n\npolicy = XX\n", "f:3: unknown policy"},
        {"colour = red\n", "f:1: unknown key"},
        {"jobs\n", "f:1: expected key = value"},
        {"x = load: 0.5..0.1/0.1\n", "f:1: x: a range"},
        {"jobs = 10\nwarmup = 20\n", "f: curve 1, x 1: warmup"},
        {"clusters = 8,8\ncomposition = 0,0,100\n", "f: curve 1, x 1: composition"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bool ok = wsim_experiment_parse(&e, bad[i].text, ".", "f", err, sizeof err);
        CU_ASSERT_FALSE(ok);
        if (strncmp(err, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "case %zu: %s\n", i, err);
        CU_ASSERT(strncmp(err, bad[i].msg, strlen(bad[i].msg)) == 0);
    }
}

static void test_t_quantile(void)
{
    CU_ASSERT_DOUBLE_EQUAL(wsim_t_quantile(0.95, 1), 12.706, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(wsim_t_quantile(0.95, 4), 2.776, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(wsim_t_quantile(0.99, 10), 3.169, 1e-3);
    double x[] = {1, 2, 3, 4, 5};
    struct wsim_ci ci = wsim_ci_of(x, 5, 0.95);
    CU_ASSERT_DOUBLE_EQUAL(ci.mean, 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ci.half, 2.776 * sqrt(2.5 / 5), 1e-3);
}

static const struct acc_test_case wsim_tests[] = {
    {"single-component: LS = LP = GP job by job", test_single_component_ls_lp_gp},
    {"multi-component: GS = LP = GP job by job", test_multi_component_gs_lp_gp},
    {"mixed stream: GS and LS differ", test_mixed_stream_differs},
    {"one cluster: GS = SC job by job", test_one_cluster_gs_is_sc},
    {"residual-time update in a run (111.538 s)", test_residual_time_in_a_run},
    {"metrics of a hand-computed workload", test_metrics_tiny},
    {"same seed, same schedule", test_determinism},
    {"generators", test_generators},
    {"SWF parser", test_swf_parser},
    {"experiment files", test_experiment_file},
    {"t quantiles and CIs", test_t_quantile},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sim", NULL, NULL, wsim_tests},
    {NULL, NULL, NULL, NULL},
};
