/* SPDX-License-Identifier: Apache-2.0 */
/* test_calendar.c - the capacity calendar and its preview arithmetic. */
#include <stdlib.h>

#include "calendar.h"
#include "testutil.h"

#define H 3600

static struct acc_calendar cal;

static int setup(void)
{
    acc_calendar_init(&cal, 10);
    return 0;
}

static void reset(void)
{
    acc_calendar_release(&cal);
    acc_calendar_init(&cal, 10);
}

static void preview(acc_time from, acc_time until, int64_t dur, int64_t amount,
                    struct acc_frames *out)
{
    acc_frames_init(out);
    ACC_ASSERT_OK(acc_calendar_preview(&cal, from, until, dur, amount, 1000, out));
}

static void test_empty(void)
{
    reset();
    struct acc_frames f;
    preview(0, 10 * H, H, 10, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 0);
    CU_ASSERT_EQUAL(f.v[0].end, 10 * H);
    acc_frames_release(&f);
    /* More than the capacity: never free. */
    preview(0, 10 * H, H, 11, &f);
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
}

static void test_add_and_peak(void)
{
    reset();
    ACC_ASSERT_OK(acc_calendar_add(&cal, 2 * H, 4 * H, 6));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 3 * H, 5 * H, 4));
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 0, 2 * H), 0);
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 2 * H, 3 * H), 6);
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 0, 10 * H), 10);
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 4 * H, 5 * H), 4);
    /* Full at 3h-4h: one more does not fit, and nothing changed. */
    CU_ASSERT_EQUAL(acc_calendar_add(&cal, 3 * H + 1, 3 * H + 2, 1), ACC_ERR_BUSY);
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 0, 10 * H), 10);
    CU_ASSERT_EQUAL(acc_calendar_add(&cal, 5, 5, 1), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_calendar_add(&cal, 5, 6, 0), ACC_ERR_INVALID);
}

static void test_touching_bookings(void)
{
    reset();
    /* End is exclusive: back to back is fine, even at full capacity. */
    ACC_ASSERT_OK(acc_calendar_add(&cal, 0, H, 10));
    ACC_ASSERT_OK(acc_calendar_add(&cal, H, 2 * H, 10));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 2 * H, 3 * H, 10));
    struct acc_frames f;
    preview(0, 5 * H, H, 1, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 3 * H);
    acc_frames_release(&f);
    /* Touching free frames are one frame, not two. */
    ACC_ASSERT_OK(acc_calendar_remove(&cal, H, 2 * H, 10));
    ACC_ASSERT_OK(acc_calendar_add(&cal, H, 90 * 60, 5));
    preview(0, 5 * H, 30 * 60, 5, &f);
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].start, H);
    CU_ASSERT_EQUAL(f.v[0].end, 2 * H); /* 5 free during [1h,1.5h), 10 during [1.5h,2h) */
    CU_ASSERT_EQUAL(f.v[1].start, 3 * H);
    acc_frames_release(&f);
}

static void test_short_frames_dropped(void)
{
    reset();
    ACC_ASSERT_OK(acc_calendar_add(&cal, H, 2 * H, 8));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 3 * H, 4 * H, 8));
    struct acc_frames f;
    /* With 5 nodes: free [0,1h), [2h,3h), [4h,...): each an hour; two hours
     * fit only in the last. */
    preview(0, 10 * H, 2 * H, 5, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 4 * H);
    CU_ASSERT_EQUAL(f.v[0].end, 10 * H);
    acc_frames_release(&f);
    preview(0, 10 * H, H, 5, &f);
    CU_ASSERT_EQUAL(f.n, 3);
    acc_frames_release(&f);
    /* With 2 nodes everything is free. */
    preview(0, 10 * H, 2 * H, 2, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 0);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(acc_calendar_earliest(&cal, 0, 10 * H, 2 * H, 5), 4 * H);
    CU_ASSERT_EQUAL(acc_calendar_earliest(&cal, 0, 5 * H, 2 * H, 5), -1);
}

static void test_horizon(void)
{
    reset();
    ACC_ASSERT_OK(acc_calendar_add(&cal, 0, 8 * H, 10));
    struct acc_frames f;
    /* The window ends at 9h: one free hour, too short for two. */
    preview(0, 9 * H, 2 * H, 1, &f);
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    preview(0, 10 * H, 2 * H, 1, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 8 * H);
    CU_ASSERT_EQUAL(f.v[0].end, 10 * H);
    acc_frames_release(&f);
    /* A window that starts inside a booking. */
    preview(4 * H, 12 * H, H, 1, &f);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, 8 * H);
    acc_frames_release(&f);
    /* A window before any booking ends where the booking starts. */
    ACC_ASSERT_OK(acc_calendar_add(&cal, 20 * H, 21 * H, 10));
    preview(10 * H, 30 * H, H, 1, &f);
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].end, 20 * H);
    CU_ASSERT_EQUAL(f.v[1].start, 21 * H);
    CU_ASSERT_EQUAL(f.v[1].end, 30 * H);
    acc_frames_release(&f);
}

static void test_remove_restores(void)
{
    reset();
    ACC_ASSERT_OK(acc_calendar_add(&cal, 2 * H, 4 * H, 6));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 3 * H, 5 * H, 4));
    ACC_ASSERT_OK(acc_calendar_remove(&cal, 2 * H, 4 * H, 6));
    ACC_ASSERT_OK(acc_calendar_remove(&cal, 3 * H, 5 * H, 4));
    CU_ASSERT_EQUAL(cal.n, 0); /* no stale points are left */
    CU_ASSERT_EQUAL(acc_calendar_peak(&cal, 0, 100 * H), 0);
}

static void test_truncation(void)
{
    reset();
    for (int i = 0; i < 20; i++)
        ACC_ASSERT_OK(acc_calendar_add(&cal, (2 * i + 1) * H, (2 * i + 2) * H, 10));
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_calendar_preview(&cal, 0, 100 * H, H, 1, 5, &f));
    CU_ASSERT_EQUAL(f.n, 5);
    CU_ASSERT_TRUE(f.truncated);
    acc_frames_release(&f);
}

static void test_load_matches_adds(void)
{
    /* Bulk load and one-by-one adds give the same step function. */
    struct acc_cal_booking b[500];
    struct acc_calendar one;
    acc_calendar_init(&one, 1000);
    unsigned seed = 7;
    size_t n = 0;
    for (int i = 0; i < 500; i++) {
        seed = seed * 1103515245 + 12345;
        acc_time s = (seed >> 8) % 10000;
        acc_time d = 1 + (seed >> 4) % 300;
        int64_t a = 1 + (seed >> 2) % 5;
        if (acc_calendar_add(&one, s, s + d, a) == ACC_OK)
            b[n++] = (struct acc_cal_booking){s, s + d, a};
    }
    struct acc_calendar two;
    acc_calendar_init(&two, 1000);
    ACC_ASSERT_OK(acc_calendar_load(&two, b, n));
    CU_ASSERT_EQUAL(one.n, two.n);
    for (size_t i = 0; i < one.n && i < two.n; i++) {
        CU_ASSERT_EQUAL(one.pts[i].t, two.pts[i].t);
        CU_ASSERT_EQUAL(one.pts[i].used, two.pts[i].used);
    }
    acc_calendar_release(&one);
    acc_calendar_release(&two);
}

static void test_random_against_model(void)
{
    /* Random adds and removes, checked against a per-second array. */
    enum { T = 2000 };
    static int64_t model[T];
    struct acc_calendar c;
    acc_calendar_init(&c, 20);
    memset(model, 0, sizeof model);
    struct acc_cal_booking live[400];
    size_t n = 0;
    unsigned seed = 99;
    for (int step = 0; step < 4000; step++) {
        seed = seed * 1103515245 + 12345;
        if (n > 0 && (seed >> 16) % 3 == 0) {
            size_t k = (seed >> 4) % n;
            ACC_ASSERT_OK(acc_calendar_remove(&c, live[k].start, live[k].end, live[k].amount));
            for (acc_time t = live[k].start; t < live[k].end; t++)
                model[t] -= live[k].amount;
            live[k] = live[--n];
            continue;
        }
        acc_time s = (seed >> 8) % (T - 100);
        acc_time d = 1 + (seed >> 3) % 99;
        int64_t a = 1 + (seed >> 12) % 8;
        int64_t peak = 0;
        for (acc_time t = s; t < s + d; t++)
            peak = model[t] > peak ? model[t] : peak;
        acc_err rc = acc_calendar_add(&c, s, s + d, a);
        CU_ASSERT_EQUAL(rc, peak + a <= 20 ? ACC_OK : ACC_ERR_BUSY);
        if (rc == ACC_OK && n < 400) {
            live[n++] = (struct acc_cal_booking){s, s + d, a};
            for (acc_time t = s; t < s + d; t++)
                model[t] += a;
        } else if (rc == ACC_OK) {
            acc_calendar_remove(&c, s, s + d, a);
        }
    }
    /* The earliest start for 10 over 50 s agrees with the model. */
    acc_time want = -1;
    for (acc_time t = 0; t + 50 <= T && want < 0; t++) {
        bool ok = true;
        for (acc_time u = t; u < t + 50 && ok; u++)
            ok = model[u] + 10 <= 20;
        if (ok)
            want = t;
    }
    CU_ASSERT_EQUAL(acc_calendar_earliest(&c, 0, T, 50, 10), want);
    acc_calendar_release(&c);
}

static void test_walk(void)
{
    /* The walk reports the level at its start, then every change after. */
    reset();
    CU_ASSERT_EQUAL(acc_calendar_capacity(&cal), 10);
    struct acc_cal_walk w;
    acc_time t = -1;
    int64_t used = -1;
    CU_ASSERT_EQUAL(acc_calendar_walk_start(&w, &cal, 0), 0);
    CU_ASSERT_FALSE(acc_calendar_walk_next(&w, &t, &used));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 2 * H, 4 * H, 6));
    ACC_ASSERT_OK(acc_calendar_add(&cal, 3 * H, 5 * H, 4));
    static const struct {
        acc_time t;
        int64_t used;
    } want[] = {{3 * H, 10}, {4 * H, 4}, {5 * H, 0}};
    CU_ASSERT_EQUAL(acc_calendar_walk_start(&w, &cal, 2 * H + 1), 6);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_TRUE(acc_calendar_walk_next(&w, &t, &used));
        CU_ASSERT_EQUAL(t, want[i].t);
        CU_ASSERT_EQUAL(used, want[i].used);
    }
    CU_ASSERT_FALSE(acc_calendar_walk_next(&w, &t, &used));
    /* At a change point the walk starts with its level and goes on after it. */
    CU_ASSERT_EQUAL(acc_calendar_walk_start(&w, &cal, 4 * H), 4);
    CU_ASSERT_TRUE(acc_calendar_walk_next(&w, &t, &used));
    CU_ASSERT_EQUAL(t, 5 * H);
    CU_ASSERT_EQUAL(acc_calendar_walk_start(&w, &cal, 0), 0);
    CU_ASSERT_TRUE(acc_calendar_walk_next(&w, &t, &used));
    CU_ASSERT_EQUAL(t, 2 * H);
    CU_ASSERT_EQUAL(used, 6);
}

static int teardown(void)
{
    acc_calendar_release(&cal);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"empty calendar", test_empty},
    {"add and peak", test_add_and_peak},
    {"touching bookings and frames", test_touching_bookings},
    {"frames shorter than the duration", test_short_frames_dropped},
    {"horizon", test_horizon},
    {"remove restores", test_remove_restores},
    {"truncation", test_truncation},
    {"bulk load equals adds", test_load_matches_adds},
    {"random operations against a model", test_random_against_model},
    {"walk through the levels", test_walk},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"calendar", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
