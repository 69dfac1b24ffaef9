/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool.c - the worker pool of adapter calls: bursts, time limits,
 * abandoned tasks and interruption. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "pool.h"
#include "testutil.h"
#include "timefmt.h"

/* A task that blocks until released (or 5 s pass, so a failing test ends). */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
    atomic_int ran;
};

static void gate_init(struct gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->open = false;
    atomic_init(&g->ran, 0);
}

static void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void blocked_task(void *arg)
{
    struct gate *g = arg;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    pthread_mutex_lock(&g->lock);
    while (!g->open && pthread_cond_timedwait(&g->cond, &g->lock, &ts) == 0)
        ;
    pthread_mutex_unlock(&g->lock);
    atomic_fetch_add(&g->ran, 1);
}

static void quick_task(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Defect: with one idle worker, tasks submitted together all counted on it
 * and ran one after another, so a hung call delayed the healthy ones of the
 * same round past their time limit.  Whether the idle worker wakes between
 * two submits is up to the scheduler, so the burst is repeated. */
static void test_burst_gets_workers(void)
{
    struct acc_pool *p = NULL;
    ACC_ASSERT_OK(acc_pool_new(64, &p, NULL));
    int late = 0;
    for (int round = 0; round < 50; round++) {
        atomic_int quick = 0;
        /* Leave exactly one idle worker behind (the first round) or a few. */
        struct acc_batch *warm = acc_batch_new(p, 1);
        ACC_ASSERT_OK(acc_batch_submit(warm, quick_task, NULL, &quick));
        CU_ASSERT_TRUE(acc_batch_wait(warm, 2000000));
        acc_batch_free(warm, NULL);

        struct gate g;
        gate_init(&g);
        struct acc_batch *hung = acc_batch_new(p, 1);
        struct acc_batch *b = acc_batch_new(p, 3);
        ACC_ASSERT_OK(acc_batch_submit(hung, blocked_task, NULL, &g));
        for (int i = 0; i < 3; i++)
            ACC_ASSERT_OK(acc_batch_submit(b, quick_task, NULL, &quick));
        /* The healthy tasks run while the hung one holds its worker. */
        if (!acc_batch_wait(b, 300000))
            late++;
        gate_open(&g);
        CU_ASSERT_TRUE(acc_batch_wait(hung, 5000000));
        CU_ASSERT_TRUE(acc_batch_wait(b, 5000000));
        CU_ASSERT_EQUAL(atomic_load(&quick), 4);
        acc_batch_free(hung, NULL);
        acc_batch_free(b, NULL);
    }
    CU_ASSERT_EQUAL(late, 0);
    acc_pool_free(p);
}

static void test_abandoned(void)
{
    struct acc_pool *p = NULL;
    ACC_ASSERT_OK(acc_pool_new(4, &p, NULL));
    struct gate g;
    gate_init(&g);
    atomic_int quick = 0;
    struct acc_batch *b = acc_batch_new(p, 2);
    ACC_ASSERT_OK(acc_batch_submit(b, blocked_task, NULL, &g));
    ACC_ASSERT_OK(acc_batch_submit(b, quick_task, NULL, &quick));
    CU_ASSERT_FALSE(acc_batch_wait(b, 200000));
    bool abandoned[2] = {false, false};
    acc_batch_free(b, abandoned);
    CU_ASSERT_TRUE(abandoned[0]);
    CU_ASSERT_FALSE(abandoned[1]);
    gate_open(&g);
    acc_pool_free(p); /* waits for the abandoned task */
    CU_ASSERT_EQUAL(atomic_load(&g.ran), 1);
}

struct waiter {
    struct acc_batch *b;
    bool all;
    int64_t waited_us;
};

static void *wait_main(void *arg)
{
    struct waiter *w = arg;
    int64_t t0 = acc_mono_us();
    w->all = acc_batch_wait(w->b, 30 * 1000000);
    w->waited_us = acc_mono_us() - t0;
    return NULL;
}

/* Shutdown: a wait on a hung task returns at once when the pool is
 * interrupted, and later waits do not block either. */
static void test_interrupt(void)
{
    struct acc_pool *p = NULL;
    ACC_ASSERT_OK(acc_pool_new(4, &p, NULL));
    struct gate g;
    gate_init(&g);
    struct acc_batch *b = acc_batch_new(p, 1);
    ACC_ASSERT_OK(acc_batch_submit(b, blocked_task, NULL, &g));
    struct waiter w = {b, true, 0};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, wait_main, &w), 0);
    struct timespec ts = {0, 100 * 1000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_FALSE(acc_pool_interrupted(p));
    acc_pool_interrupt(p);
    pthread_join(t, NULL);
    CU_ASSERT_FALSE(w.all);
    CU_ASSERT_TRUE(w.waited_us < 2000000);
    CU_ASSERT_TRUE(acc_pool_interrupted(p));
    acc_batch_free(b, NULL);

    struct acc_batch *later = acc_batch_new(p, 1);
    ACC_ASSERT_OK(acc_batch_submit(later, blocked_task, NULL, &g));
    int64_t t0 = acc_mono_us();
    CU_ASSERT_FALSE(acc_batch_wait(later, 10 * 1000000));
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 2000000);
    acc_batch_free(later, NULL);
    gate_open(&g);
    acc_pool_free(p);
}

static const struct acc_test_case tests[] = {
    {"a burst gets its own workers", test_burst_gets_workers},
    {"abandoned tasks", test_abandoned},
    {"interrupt", test_interrupt},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"pool", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
