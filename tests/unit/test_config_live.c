/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_live.c - the generations that SIGHUP makes (config_live.c):
 * a taker keeps the one it took however many reloads come after, the last
 * taker frees it (ASan and valgrind see the rest), and takers on several
 * threads while another reloads see one whole generation each. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "config.h"
#include "testutil.h"

static const char base_ini[] = "[site a]\nadapter = sim-batch\nnodes = 4\n";

/* A configuration whose [quota] max_agreements is n: the mark of its
 * generation. */
static void load(struct acc_config *c, int n)
{
    char ini[256];
    struct acc_error err;
    snprintf(ini, sizeof ini, "[quota]\nmax_agreements = %d\nmax_quotes = %d\n%s", n, n, base_ini);
    ACC_ASSERT_OK(acc_config_load_string(ini, "t.ini", c, &err));
}

static int64_t mark(const struct acc_config *c)
{
    return acc_config_quota(c, NULL, NULL)->agreements;
}

static void test_generations(void)
{
    struct acc_config c, fresh;
    struct acc_error err;
    load(&c, 1);
    /* Never reloaded: the configuration itself. */
    const struct acc_config *g0 = acc_config_live(&c);
    CU_ASSERT_PTR_EQUAL(g0, &c);
    acc_config_unlive(&c, g0);

    load(&fresh, 2);
    ACC_ASSERT_OK(acc_config_reload(&c, &fresh, &err));
    CU_ASSERT_PTR_NULL(fresh.origin); /* moved */
    const struct acc_config *g2 = acc_config_live(&c);
    CU_ASSERT_EQUAL(mark(g2), 2);
    CU_ASSERT_EQUAL(mark(&c), 1); /* the start's own stays as it was */

    /* Two more reloads while g2 is held: it stays whole. */
    load(&fresh, 3);
    ACC_ASSERT_OK(acc_config_reload(&c, &fresh, &err));
    const struct acc_config *g3 = acc_config_live(&c);
    load(&fresh, 4);
    ACC_ASSERT_OK(acc_config_reload(&c, &fresh, &err));
    CU_ASSERT_EQUAL(mark(g2), 2);
    CU_ASSERT_EQUAL(mark(g3), 3);
    const struct acc_config *g4 = acc_config_live(&c);
    CU_ASSERT_EQUAL(mark(g4), 4);
    acc_config_unlive(&c, g2); /* frees it: nothing else holds it */
    acc_config_unlive(&c, g4);
    /* The configuration released while g3 is still taken: g3 outlives it. */
    acc_config_release(&c);
    CU_ASSERT_EQUAL(mark(g3), 3);
    acc_config_unlive(&c, g3);
}

struct race {
    struct acc_config *c;
    atomic_bool stop;
    atomic_long seen, torn;
};

static void *taker(void *arg)
{
    struct race *r = arg;
    while (!atomic_load(&r->stop)) {
        const struct acc_config *g = acc_config_live(r->c);
        const struct acc_quota *q = acc_config_quota(g, NULL, NULL);
        if (q->agreements != q->quotes) /* one generation's both or not */
            atomic_fetch_add(&r->torn, 1);
        atomic_fetch_add(&r->seen, 1);
        acc_config_unlive(r->c, g);
    }
    return NULL;
}

static void test_reload_under_takers(void)
{
    struct acc_config c;
    struct acc_error err;
    load(&c, 1);
    struct race r = {.c = &c};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, taker, &r), 0);
    for (int n = 2; n < 300; n++) {
        /* the takers take between any two reloads (a busy machine may
         * not have run them yet) */
        long seen = atomic_load(&r.seen);
        while (atomic_load(&r.seen) == seen)
            sched_yield();
        struct acc_config fresh;
        load(&fresh, n);
        ACC_ASSERT_OK(acc_config_reload(&c, &fresh, &err));
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_TRUE(atomic_load(&r.seen) >= 298);
    CU_ASSERT_EQUAL(atomic_load(&r.torn), 0);
    const struct acc_config *g = acc_config_live(&c);
    CU_ASSERT_EQUAL(mark(g), 299);
    acc_config_unlive(&c, g);
    acc_config_release(&c);
}

static const struct acc_test_case tests[] = {
    {"a taker keeps its generation; the last one frees it", test_generations},
    {"reloads while three threads take and give back", test_reload_under_takers},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config_live", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
