/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay.c - the core of accordd --replay on hand-made live frames:
 * overlay levels, intersection across sites, jobs that only fit later,
 * the policy's view, truncated previews, the window and the bounds, and a
 * brute-force model of one site. */
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "replay.h"
#include "testutil.h"

#define MAXS 4

/* The live load: a calendar per site (what is booked now), previewed as an
 * adapter would, at most max_frames frames per answer (0: 4096). */
struct live {
    struct acc_calendar cal[MAXS];
    size_t max_frames;
    size_t calls;
    bool fail;
};

static acc_err provider(void *ctx, size_t site, int64_t amount, acc_time from, acc_time until,
                        struct acc_frames *out, struct acc_error *err)
{
    struct live *l = ctx;
    l->calls++;
    if (l->fail)
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "site %zu is down", site);
    return acc_calendar_preview(&l->cal[site], from, until, 1, amount,
                                l->max_frames ? l->max_frames : 4096, out);
}

static struct acc_replay_site sites[MAXS] = {{"a", 8}, {"b", 8}, {"c", 8}, {"d", 8}};

static void live_init(struct live *l, size_t n, const int64_t *nodes)
{
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < n; i++) {
        sites[i].nodes = nodes[i];
        acc_calendar_init(&l->cal[i], nodes[i]);
    }
}

static void live_free(struct live *l)
{
    for (size_t i = 0; i < MAXS; i++)
        acc_calendar_release(&l->cal[i]);
}

static struct acc_replay_setup setup_of(struct live *l, size_t n, const char *policy)
{
    struct acc_replay_setup s = {.sites = sites,
                                 .n_sites = n,
                                 .candidates = 4,
                                 .from = 0,
                                 .until = 100000,
                                 .live = provider,
                                 .ctx = l};
    acc_policy_opts_init(&s.policy, ACC_POLICY_EARLIEST);
    CU_ASSERT_TRUE(acc_policy_parse(policy, &s.policy));
    return s;
}

static struct acc_replay_job total(acc_time submit, int64_t nodes, int64_t dur)
{
    struct acc_replay_job j = {.submit = submit, .duration = dur, .total = nodes, .n_comp = 1};
    j.comp[0] = nodes;
    return j;
}

static struct acc_replay_job two(acc_time submit, int64_t x, int64_t y, int64_t dur)
{
    struct acc_replay_job j = {.submit = submit, .duration = dur, .total = x + y, .n_comp = 2};
    j.comp[0] = x;
    j.comp[1] = y;
    return j;
}

static acc_err run(const struct acc_replay_setup *s, const struct acc_replay_job *j, size_t n,
                   struct acc_replay_placement *o)
{
    struct acc_replay_stats st;
    struct acc_error err;
    return acc_replay_run(s, j, n, o, &st, &err);
}

/* One site of 10 nodes, 4 of them booked live during [100, 200).  The
 * replay's own jobs stack on top: the third needs 1 node for 150 s and
 * finds 9 + 7 free before 100 but only 6 live during [100, 200) against
 * 6 of its own: it starts at 200. */
static void test_overlay_levels(void)
{
    struct live l;
    int64_t nodes[] = {10};
    live_init(&l, 1, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 100, 200, 4));
    struct acc_replay_setup s = setup_of(&l, 1, "earliest");
    struct acc_replay_job j[] = {total(0, 6, 300), total(0, 2, 50), total(0, 1, 150),
                                 total(0, 3, 50)};
    struct acc_replay_placement o[4];
    ACC_ASSERT_OK(run(&s, j, 4, o));
    CU_ASSERT_TRUE(o[0].placed && o[0].start == 0 && o[0].end == 300);
    CU_ASSERT_TRUE(o[1].placed && o[1].start == 0);
    CU_ASSERT_TRUE(o[2].placed);
    CU_ASSERT_EQUAL(o[2].start, 200);
    /* 3 more for 50 s: 6 + 2 + 3 > 10 before 50; during [50, 100) 6 + 3
     * of 10; during [100, 200) not with 6 live: exactly [50, 100). */
    CU_ASSERT_EQUAL(o[3].start, 50);
    CU_ASSERT_EQUAL(o[3].n, 1);
    CU_ASSERT_EQUAL(o[3].size[0], 3);
    live_free(&l);
}

/* Two components on two sites: a is busy [0, 100), b [150, 250); the
 * common slot of 100 s is at 250 (at 100 b has only 50 s). */
static void test_intersection(void)
{
    struct live l;
    int64_t nodes[] = {4, 4};
    live_init(&l, 2, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 0, 100, 4));
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[1], 150, 250, 1));
    struct acc_replay_setup s = setup_of(&l, 2, "earliest");
    struct acc_replay_job j[] = {two(0, 4, 4, 100)};
    struct acc_replay_placement o[1];
    ACC_ASSERT_OK(run(&s, j, 1, o));
    CU_ASSERT_TRUE_FATAL(o[0].placed);
    CU_ASSERT_EQUAL(o[0].start, 250);
    CU_ASSERT_EQUAL(o[0].end, 350);
    CU_ASSERT_EQUAL(o[0].n_sites, 2);
    CU_ASSERT_EQUAL(o[0].n, 2);
    CU_ASSERT_NOT_EQUAL(o[0].site[0], o[0].site[1]);
    live_free(&l);
}

/* Nothing fits at submit: the job waits for the live booking's end, and
 * its placement was ordered on the capacities. */
static void test_fits_only_later(void)
{
    struct live l;
    int64_t nodes[] = {8};
    live_init(&l, 1, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 0, 1000, 6));
    struct acc_replay_setup s = setup_of(&l, 1, "worst-fit");
    struct acc_replay_job j[] = {total(10, 4, 60), total(20, 2, 60)};
    struct acc_replay_placement o[2];
    ACC_ASSERT_OK(run(&s, j, 2, o));
    CU_ASSERT_TRUE(o[0].placed && o[0].on_capacity);
    CU_ASSERT_EQUAL(o[0].start, 1000);
    CU_ASSERT_TRUE(o[1].placed && !o[1].on_capacity);
    CU_ASSERT_EQUAL(o[1].start, 20); /* 2 free now, beside the live 6 */
    struct acc_replay_summary sum;
    struct acc_error err;
    ACC_ASSERT_OK(acc_replay_summarise(&s, j, 2, o, &sum, &err));
    CU_ASSERT_EQUAL(sum.placed, 2);
    CU_ASSERT_DOUBLE_EQUAL(sum.mean_wait, 990 / 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(sum.max_wait, 990, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(sum.p50_wait, 0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(sum.utilisation, (4 * 60 + 2 * 60) / (8.0 * 100000), 1e-12);
    live_free(&l);
}

/* The policy sees the free nodes at submit: worst fit takes b (8 free)
 * over a (2 free), not a (the lowest index on equal capacities). */
static void test_policy_sees_free_counts(void)
{
    struct live l;
    int64_t nodes[] = {8, 8};
    live_init(&l, 2, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 0, 500, 6));
    struct acc_replay_setup s = setup_of(&l, 2, "worst-fit");
    struct acc_replay_job j[] = {total(0, 2, 60), two(0, 2, 2, 60)};
    struct acc_replay_placement o[2];
    ACC_ASSERT_OK(run(&s, j, 2, o));
    CU_ASSERT_EQUAL(o[0].site[0], 1);
    CU_ASSERT_EQUAL(o[0].start, 0);
    /* Then b has 6 free, a 2: worst fit with repeats puts both on b. */
    CU_ASSERT_EQUAL(o[1].n, 2);
    CU_ASSERT_EQUAL(o[1].site[0], 1);
    CU_ASSERT_EQUAL(o[1].site[1], 1);
    CU_ASSERT_EQUAL(o[1].n_sites, 1);
    live_free(&l);
}

/* A policy takes its first candidate that has a slot; earliest the
 * earliest over all of them. */
static void test_first_candidate_or_earliest(void)
{
    struct live l;
    int64_t nodes[] = {4, 4};
    live_init(&l, 2, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 0, 100, 4));
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[1], 0, 50, 4));
    struct acc_replay_job j[] = {total(0, 4, 10)};
    struct acc_replay_placement o[1];
    struct acc_replay_setup s = setup_of(&l, 2, "worst-fit");
    ACC_ASSERT_OK(run(&s, j, 1, o));
    CU_ASSERT_EQUAL(o[0].site[0], 0);
    CU_ASSERT_EQUAL(o[0].start, 100);
    CU_ASSERT_EQUAL(o[0].candidate, 1);
    s = setup_of(&l, 2, "earliest");
    ACC_ASSERT_OK(run(&s, j, 1, o));
    CU_ASSERT_EQUAL(o[0].site[0], 1);
    CU_ASSERT_EQUAL(o[0].start, 50);
    /* fcm does not take a non-fixed request: earliest places it. */
    struct acc_replay_job k[] = {two(0, 2, 2, 10)};
    s = setup_of(&l, 2, "fcm");
    ACC_ASSERT_OK(run(&s, k, 1, o));
    CU_ASSERT_TRUE(o[0].placed && o[0].fell_back);
    live_free(&l);
}

/* A preview that stops after one frame gives the same placements. */
static void test_truncated_previews(void)
{
    struct live l;
    int64_t nodes[] = {4, 4};
    live_init(&l, 2, nodes);
    for (int k = 0; k < 20; k++) {
        ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], k * 100, k * 100 + 60, 3));
        ACC_ASSERT_OK(acc_calendar_add(&l.cal[1], k * 100 + 30, k * 100 + 90, 2));
    }
    struct acc_replay_job j[] = {two(0, 2, 2, 45), total(5, 3, 30), two(7, 1, 3, 200),
                                 total(9, 4, 500)};
    struct acc_replay_placement a[4], b[4];
    struct acc_replay_setup s = setup_of(&l, 2, "earliest");
    ACC_ASSERT_OK(run(&s, j, 4, a));
    size_t full = l.calls;
    l.max_frames = 1;
    l.calls = 0;
    ACC_ASSERT_OK(run(&s, j, 4, b));
    CU_ASSERT_TRUE(l.calls > full);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_TRUE(a[i].placed && b[i].placed);
        CU_ASSERT_EQUAL(a[i].start, b[i].start);
        CU_ASSERT_EQUAL(a[i].site[0], b[i].site[0]);
    }
    CU_ASSERT_TRUE(a[3].start >= 1960); /* 4 nodes on a site only after its load */
    live_free(&l);
}

/* The window: no slot ends after it; a job submitted after it is not
 * placed; neither stops the replay. */
static void test_window(void)
{
    struct live l;
    int64_t nodes[] = {4};
    live_init(&l, 1, nodes);
    ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], 0, 900, 4));
    struct acc_replay_setup s = setup_of(&l, 1, "earliest");
    s.until = 1000;
    struct acc_replay_job j[] = {total(0, 1, 150), total(0, 1, 100), total(1000, 1, 1)};
    struct acc_replay_placement o[3];
    ACC_ASSERT_OK(run(&s, j, 3, o));
    CU_ASSERT_FALSE(o[0].placed);
    CU_ASSERT_PTR_NOT_NULL(strstr(o[0].why, "no common slot"));
    CU_ASSERT_TRUE(o[1].placed && o[1].start == 900 && o[1].end == 1000);
    CU_ASSERT_FALSE(o[2].placed);
    CU_ASSERT_PTR_NOT_NULL(strstr(o[2].why, "after the window"));
    live_free(&l);
}

/* Bad input and bounds: clear errors, nothing placed. */
static void test_bounds(void)
{
    struct live l;
    int64_t nodes[] = {4, 4};
    live_init(&l, 2, nodes);
    struct acc_replay_setup s = setup_of(&l, 2, "earliest");
    struct acc_replay_placement o[2];
    struct acc_replay_stats st;
    struct acc_error err;
    struct acc_replay_job j[] = {total(10, 1, 5), total(5, 1, 5)};
    CU_ASSERT_EQUAL(acc_replay_run(&s, j, 2, o, &st, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "job 2 is submitted before job 1"));
    struct acc_replay_job z[] = {two(0, 0, 1, 5)};
    z[0].total = 1;
    CU_ASSERT_EQUAL(acc_replay_run(&s, z, 1, o, &st, &err), ACC_ERR_INVALID);
    struct acc_replay_job d[] = {total(0, 1, 0)};
    CU_ASSERT_EQUAL(acc_replay_run(&s, d, 1, o, &st, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_replay_run(&s, j, ACC_REPLAY_MAX_JOBS + 1, o, &st, &err), ACC_ERR_CAPACITY);
    struct acc_replay_setup bad = s;
    bad.n_sites = 0;
    CU_ASSERT_EQUAL(acc_replay_run(&bad, j, 1, o, &st, &err), ACC_ERR_INVALID);
    bad = s;
    bad.until = bad.from;
    CU_ASSERT_EQUAL(acc_replay_run(&bad, j, 1, o, &st, &err), ACC_ERR_INVALID);
    bad = s;
    bad.candidates = ACC_REPLAY_MAX_CANDS + 1;
    CU_ASSERT_EQUAL(acc_replay_run(&bad, j, 1, o, &st, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(l.calls, 0); /* nothing was asked */
    /* A failing provider's error comes back. */
    l.fail = true;
    CU_ASSERT_EQUAL(acc_replay_run(&s, j + 1, 1, o, &st, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "down"));
    l.fail = false;
    /* The preview bound: one-second frames alternating free and busy,
     * one frame per answer, over a window longer than the bound allows. */
    acc_calendar_release(&l.cal[0]);
    acc_calendar_init(&l.cal[0], 4);
    for (acc_time t = 0; t < 2 * (ACC_REPLAY_MAX_PREVIEWS + 10); t += 2)
        ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], t + 1, t + 2, 4));
    l.max_frames = 1;
    s.n_sites = 1;
    s.until = 2 * (ACC_REPLAY_MAX_PREVIEWS + 10);
    struct acc_replay_job big[] = {total(0, 1, 5)};
    CU_ASSERT_EQUAL(acc_replay_run(&s, big, 1, o, &st, &err), ACC_ERR_CAPACITY);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "previews"));
    live_free(&l);
}

/* One site against a brute-force model: random live load, random jobs;
 * each job starts at the first second from which its nodes are free for
 * its whole duration beside the live load and the earlier jobs. */
static void test_against_model(void)
{
    enum { T = 3000, N = 6 };
    static int64_t used[T];
    struct live l;
    int64_t nodes[] = {N};
    live_init(&l, 1, nodes);
    memset(used, 0, sizeof used);
    uint64_t x = 12345;
    for (int k = 0; k < 40; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        acc_time a = (acc_time)((x >> 33) % 2000), d = 1 + (acc_time)((x >> 20) % 200);
        int64_t amt = 1 + (int64_t)((x >> 10) % 3);
        if (acc_calendar_fits(&l.cal[0], a, a + d, amt)) {
            ACC_ASSERT_OK(acc_calendar_add(&l.cal[0], a, a + d, amt));
            for (acc_time t = a; t < a + d; t++)
                used[t] += amt;
        }
    }
    struct acc_replay_job j[60];
    acc_time sub = 0;
    for (int i = 0; i < 60; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        sub += (acc_time)((x >> 33) % 30);
        j[i] = total(sub, 1 + (int64_t)((x >> 20) % N), 1 + (int64_t)((x >> 8) % 120));
    }
    struct acc_replay_setup s = setup_of(&l, 1, "earliest");
    s.until = T;
    struct acc_replay_placement o[60];
    ACC_ASSERT_OK(run(&s, j, 60, o));
    for (int i = 0; i < 60; i++) {
        acc_time want = -1;
        for (acc_time t = j[i].submit; want < 0 && t + j[i].duration <= T; t++) {
            bool ok = true;
            for (acc_time u = t; ok && u < t + j[i].duration; u++)
                ok = used[u] + j[i].total <= N;
            if (ok)
                want = t;
        }
        CU_ASSERT_EQUAL(o[i].placed, want >= 0);
        if (want < 0)
            continue;
        CU_ASSERT_EQUAL(o[i].start, want);
        for (acc_time u = want; u < want + j[i].duration; u++)
            used[u] += j[i].total;
    }
    live_free(&l);
}

static const struct acc_test_case tests[] = {
    {"overlay levels on one site", test_overlay_levels},
    {"intersection across sites", test_intersection},
    {"a job that only fits later", test_fits_only_later},
    {"the policy sees free counts at submit", test_policy_sees_free_counts},
    {"first candidate with a slot; earliest over all", test_first_candidate_or_earliest},
    {"truncated previews give the same placements", test_truncated_previews},
    {"the window", test_window},
    {"bad input and bounds", test_bounds},
    {"one site against a brute-force model", test_against_model},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"replay", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
