/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_settle.c - what a live process left unfinished when a write
 * failed (db/store_settle.c) and the numbered marks of modifications
 * (db/store_version.c): a mark is cleared only by the number that set it,
 * the process's own marks, Pending negotiations and half-booked holds are
 * listed for it alone, and a commit whose answer was lost can be read back.
 * On SQLite, or on PostgreSQL when ACCORD_TEST_DB_URL names a server
 * (test_store_settle_pg). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "strutil.h"
#include "testutil.h"

static struct acc_store *st;

static int setup(void)
{
    char db[512];
    if (!acc_test_db("settle", db, sizeof db))
        return 1;
    struct acc_store_options o = {db, false, 2, 0};
    if (acc_store_open(&o, &st, NULL))
        return 1;
    if (acc_store_shared(st)) {
        struct acc_error err;
        acc_store_set_instance(st, "mineminemineMINE");
        return acc_store_instance_beat(st, "host", 1, 100, 0, &err) ? 1 : 0;
    }
    return 0;
}

static int teardown(void)
{
    acc_store_close(st);
    return 0;
}

static void fill(struct acc_agreement *a, const char *id)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, id, sizeof a->id);
    a->name = strdup("run");
    a->initiator = strdup("frank");
    a->state = ACC_STATE_PENDING;
    a->created = a->updated = 1000;
    a->earliest = 2000;
    a->deadline = 90000;
    a->duration = 3600;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->offer_xml = strdup("<offer/>");
    a->offer_len = 8;
    a->terms = strdup("a");
}

/* Whether own (n of them) lists id, with mark when mark is not 0. */
static bool lists(const struct acc_store_own *own, size_t n, const char *id, int64_t mark)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(own[i].id, id) == 0 && (!mark || own[i].mark == mark))
            return true;
    return false;
}

static bool marked(const char *id, int64_t mark)
{
    struct acc_store_own *own = NULL;
    size_t n = 0;
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_own_marks(st, 1 << 30, &own, &n, &err));
    bool found = lists(own, n, id, mark);
    free(own);
    return found;
}

static void test_marks(void)
{
    struct acc_agreement a;
    struct acc_error err;
    fill(&a, "markmarkmarkmark");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    a.state = ACC_STATE_OBSERVED;
    a.start = 5000;
    a.end = 8600;
    ACC_ASSERT_OK(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), NULL, NULL, 0, &err));
    unsigned v = 0, v2;
    CU_ASSERT_EQUAL(acc_store_modify_begin(st, a.id, 0, &v, &err), ACC_ERR_INTERNAL);
    ACC_ASSERT_OK(acc_store_modify_begin(st, a.id, 7, &v, &err));
    CU_ASSERT_TRUE(marked(a.id, 7));
    /* another number clears nothing */
    bool cleared = true;
    ACC_ASSERT_OK(acc_store_modify_abort(st, a.id, 8, &cleared, &err));
    CU_ASSERT_FALSE(cleared);
    CU_ASSERT_TRUE(marked(a.id, 7));
    CU_ASSERT_EQUAL(acc_store_modify_begin(st, a.id, 9, &v2, &err), ACC_ERR_STATE);
    ACC_ASSERT_OK(acc_store_modify_abort(st, a.id, 7, &cleared, &err));
    CU_ASSERT_TRUE(cleared);
    CU_ASSERT_FALSE(marked(a.id, 0));
    /* the commit of a modification whose mark is gone is refused */
    ACC_ASSERT_OK(acc_store_modify_begin(st, a.id, 9, &v, &err));
    struct acc_trace t;
    acc_trace_init(&t);
    a.end = 9600;
    a.updated = 1100;
    CU_ASSERT_EQUAL(acc_store_modify_commit(st, &a, v, 10, "end later", &t, NULL, 0, &err),
                    ACC_ERR_STATE);
    /* not made yet: still marked 9 */
    bool made = true;
    ACC_ASSERT_OK(acc_store_modify_outcome(st, a.id, v, 9, "end later", &made, &err));
    CU_ASSERT_FALSE(made);
    ACC_ASSERT_OK(acc_store_modify_commit(st, &a, v, 9, "end later", &t, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_modify_outcome(st, a.id, v, 9, "end later", &made, &err));
    CU_ASSERT_TRUE(made);
    /* another change, or another mark, is not this one */
    ACC_ASSERT_OK(acc_store_modify_outcome(st, a.id, v, 9, "end sooner", &made, &err));
    CU_ASSERT_FALSE(made);
    /* read back once a later version replaced it: still found */
    ACC_ASSERT_OK(acc_store_modify_begin(st, a.id, 11, &v2, &err));
    CU_ASSERT_EQUAL(v2, v + 1);
    a.end = 10600;
    a.updated = 1200;
    ACC_ASSERT_OK(acc_store_modify_commit(st, &a, v2, 11, "end later still", &t, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_modify_outcome(st, a.id, v, 9, "end later", &made, &err));
    CU_ASSERT_TRUE(made);
    CU_ASSERT_EQUAL(acc_store_modify_outcome(st, "nonenonenonenone", 1, 9, "x", &made, &err),
                    ACC_ERR_NOT_FOUND);
    CU_ASSERT_FALSE(marked(a.id, 0));
    acc_trace_release(&t);
    acc_agreement_release(&a);
}

static void test_pending_and_holds(void)
{
    struct acc_agreement a;
    struct acc_error err;
    fill(&a, "pendpendpendpend");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    struct acc_store_own *own = NULL;
    size_t n = 0;
    /* changed at 1000: listed as of 2000, not as of 500 */
    ACC_ASSERT_OK(acc_store_own_pending(st, 2000, &own, &n, &err));
    CU_ASSERT_TRUE(lists(own, n, a.id, 0));
    free(own);
    ACC_ASSERT_OK(acc_store_own_pending(st, 500, &own, &n, &err));
    CU_ASSERT_FALSE(lists(own, n, a.id, 0));
    free(own);
    /* an Advisory quote with a journal entry: a hold being booked */
    struct acc_quote q = {0};
    acc_strlcpy(q.id, "holdholdholdhold", sizeof q.id);
    q.initiator = "frank";
    q.state = ACC_QUOTE_ADVISORY;
    q.created = q.updated = 1000;
    q.hold_until = 5000;
    q.held_option = -1;
    q.duration = 3600;
    ACC_ASSERT_OK(acc_store_quote_put(st, &q, 0, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_own_holds(st, 2000, &own, &n, &err));
    CU_ASSERT_FALSE(lists(own, n, q.id, 0)); /* nothing booked yet */
    free(own);
    struct acc_booking b = {.round = 1, .amount = 2, .start = 10, .end = 20};
    acc_strlcpy(b.key, "hold-own", sizeof b.key);
    acc_strlcpy(b.agreement, q.id, sizeof b.agreement);
    acc_strlcpy(b.adapter, "site1", sizeof b.adapter);
    acc_strlcpy(b.resource, "site1", sizeof b.resource);
    b.state = ACC_BOOKING_RESERVED;
    ACC_ASSERT_OK(acc_store_journal_put(st, &b, 1, 0, &err));
    ACC_ASSERT_OK(acc_store_own_holds(st, 2000, &own, &n, &err));
    CU_ASSERT_TRUE(lists(own, n, q.id, 0));
    free(own);
    if (acc_store_shared(st)) {
        /* another instance's are not this one's */
        acc_store_set_instance(st, "otherotherotherX");
        ACC_ASSERT_OK(acc_store_own_pending(st, 2000, &own, &n, &err));
        CU_ASSERT_FALSE(lists(own, n, a.id, 0));
        free(own);
        ACC_ASSERT_OK(acc_store_own_holds(st, 2000, &own, &n, &err));
        CU_ASSERT_FALSE(lists(own, n, q.id, 0));
        free(own);
        acc_store_set_instance(st, "mineminemineMINE");
    }
    acc_agreement_release(&a);
}

static void test_write_probe(void)
{
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_write_probe(st, &err));
    ACC_ASSERT_OK(acc_store_write_probe(st, &err)); /* again: the same row */
    char why[64];
    int64_t for_us = -1;
    CU_ASSERT_FALSE(acc_store_writes_failing(st, &for_us, why, sizeof why));
    CU_ASSERT_EQUAL(for_us, 0);
}

static const struct acc_test_case tests[] = {
    {"a modification's mark is cleared only by its number", test_marks},
    {"this process's Pending negotiations and half-booked holds", test_pending_and_holds},
    {"the write probe", test_write_probe},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"store_settle", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
