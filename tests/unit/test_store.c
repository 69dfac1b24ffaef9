/* SPDX-License-Identifier: Apache-2.0 */
/* test_store.c - the store: agreements, journal, trace, idempotency.  On
 * SQLite, or on PostgreSQL when ACCORD_TEST_DB_URL names a server
 * (test_store_pg, tests/pg). */
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "store.h"
#include "strutil.h"
#include "testutil.h"

static struct acc_store *st;
static char db[512];

/* SQLite's allocator, with a way to make allocations of one size fail (a
 * value too big for memory while it is bound). */
static sqlite3_mem_methods real_mem;
static atomic_int fail_size; /* 0: none fail */

static void *t_malloc(int n)
{
    int f = atomic_load(&fail_size);
    return f && (n == f || real_mem.xRoundup(n) == f) ? NULL : real_mem.xMalloc(n);
}

static void *t_realloc(void *p, int n)
{
    int f = atomic_load(&fail_size);
    return f && (n == f || real_mem.xRoundup(n) == f) ? NULL : real_mem.xRealloc(p, n);
}

static int setup(void)
{
    /* Before SQLite's first use in this program. */
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem) != SQLITE_OK)
        return 1;
    sqlite3_mem_methods m = real_mem;
    m.xMalloc = t_malloc;
    m.xRealloc = t_realloc;
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
        return 1;
    if (!acc_test_db("store", db, sizeof db))
        return 1;
    struct acc_store_options o = {db, true, 4, 0};
    return acc_store_open(&o, &st, NULL) ? 1 : 0;
}

static int teardown(void)
{
    acc_store_close(st);
    return 0;
}

static void fill(struct acc_agreement *a, const char *id, const char *initiator)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, id, sizeof a->id);
    a->name = strdup("run");
    a->initiator = strdup(initiator);
    a->state = ACC_STATE_PENDING;
    a->created = a->updated = 1000;
    a->earliest = 2000;
    a->deadline = 90000;
    a->duration = 3600;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->offer_xml = strdup("<offer/>");
    a->offer_len = 8;
    a->terms = strdup("a\nb");
}

static void test_create_get(void)
{
    struct acc_agreement a, b;
    struct acc_error err;
    bool dup;
    char first[ACC_ID_LEN + 1];
    fill(&a, "aaaaaaaaaaaaaaaa", "alice");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, "alice\nk1", 0, &dup, first, &err));
    CU_ASSERT_FALSE(dup);
    ACC_ASSERT_OK(acc_store_agreement_get(st, "aaaaaaaaaaaaaaaa", true, &b, &err));
    CU_ASSERT_STRING_EQUAL(b.initiator, "alice");
    CU_ASSERT_EQUAL(b.state, ACC_STATE_PENDING);
    CU_ASSERT_EQUAL(b.duration, 3600);
    CU_ASSERT_STRING_EQUAL(b.offer_xml, "<offer/>");
    CU_ASSERT_STRING_EQUAL(b.terms, "a\nb");
    acc_agreement_release(&b);
    /* The same idempotency key: nothing new, the first id back. */
    acc_strlcpy(a.id, "bbbbbbbbbbbbbbbb", sizeof a.id);
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, "alice\nk1", 0, &dup, first, &err));
    CU_ASSERT_TRUE(dup);
    CU_ASSERT_STRING_EQUAL(first, "aaaaaaaaaaaaaaaa");
    CU_ASSERT_EQUAL(acc_store_agreement_get(st, "bbbbbbbbbbbbbbbb", false, &b, &err),
                    ACC_ERR_NOT_FOUND);
    acc_agreement_release(&a);
    /* What /healthz asks (its SQL once failed on PostgreSQL 15). */
    ACC_ASSERT_OK(acc_store_ping(st, &err));
}

/* Whom an agreement is for is kept with it (issue 33), groups and odd
 * characters whole; never the user's token. */
static void test_identity_kept(void)
{
    struct acc_agreement a, b;
    struct acc_error err;
    fill(&a, "iiiiiiiiiiiiiiii", "alice");
    struct acc_identity id = {.user = "alice",
                              .issuer = "https://idp.example.org/",
                              .subject = "line\none\\two:three",
                              .token = "secret.token.value"};
    ACC_ASSERT_OK(acc_identity_copy(&a.identity, &id));
    ACC_ASSERT_OK(acc_identity_add_group(&a.identity, "/cms/production"));
    ACC_ASSERT_OK(acc_identity_add_group(&a.identity, "urn:x:y\n"));
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(st, "iiiiiiiiiiiiiiii", false, &b, &err));
    CU_ASSERT_STRING_EQUAL(b.identity.user, "alice");
    CU_ASSERT_STRING_EQUAL(b.identity.issuer, "https://idp.example.org/");
    CU_ASSERT_STRING_EQUAL(b.identity.subject, "line\none\\two:three");
    CU_ASSERT_EQUAL_FATAL(b.identity.n_groups, 2);
    CU_ASSERT_STRING_EQUAL(b.identity.groups[0], "/cms/production");
    CU_ASSERT_STRING_EQUAL(b.identity.groups[1], "urn:x:y\n");
    CU_ASSERT_PTR_NULL(b.identity.token);
    acc_agreement_release(&b);
    acc_agreement_release(&a);
    /* an agreement of no one known: no identity back */
    fill(&a, "jjjjjjjjjjjjjjjj", "anonymous");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(st, "jjjjjjjjjjjjjjjj", false, &b, &err));
    CU_ASSERT_PTR_NULL(b.identity.user);
    CU_ASSERT_PTR_NULL(b.identity.subject);
    acc_agreement_release(&b);
    acc_agreement_release(&a);
}

static void test_settle_and_transitions(void)
{
    struct acc_agreement a, b;
    struct acc_error err;
    fill(&a, "cccccccccccccccc", "bob");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    a.state = ACC_STATE_OBSERVED;
    a.start = 5000;
    a.end = 8600;
    a.rounds = 2;
    a.n_comps = 1;
    a.comps = calloc(1, sizeof *a.comps);
    a.comps[0] = (struct acc_alloc_component){.name = strdup("a"),
                                              .site = strdup("site1"),
                                              .nodes = 4,
                                              .ppn = 2,
                                              .reservation = strdup("key1"),
                                              .local_id = strdup("L1"),
                                              .node_names = strdup("n1,n2")};
    struct acc_trace t;
    acc_trace_init(&t);
    struct acc_trace_event ev = {.round = 1,
                                 .kind = ACC_TRACE_PREVIEW,
                                 .target = "site site1",
                                 .status = ACC_ERR_TIMEOUT,
                                 .detail = "slow"};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev));
    ev.kind = ACC_TRACE_AGREE;
    ev.status = ACC_OK;
    ACC_ASSERT_OK(acc_trace_add(&t, &ev));
    ACC_ASSERT_OK(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, NULL, 0, &err));
    /* Settling again from Pending fails: it is Observed now. */
    CU_ASSERT_EQUAL(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, NULL, 0, &err),
        ACC_ERR_STATE);
    ACC_ASSERT_OK(acc_store_agreement_get(st, a.id, false, &b, &err));
    CU_ASSERT_EQUAL(b.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL(b.start, 5000);
    CU_ASSERT_EQUAL(b.n_comps, 1);
    CU_ASSERT_STRING_EQUAL(b.comps[0].node_names, "n1,n2");
    acc_agreement_release(&b);
    struct acc_trace back;
    ACC_ASSERT_OK(acc_store_trace_get(st, a.id, &back, &err));
    CU_ASSERT_EQUAL(back.n, 2);
    CU_ASSERT_EQUAL(back.v[0].status, ACC_ERR_TIMEOUT);
    CU_ASSERT_STRING_EQUAL(back.v[0].detail, "slow");
    CU_ASSERT_EQUAL(back.v[1].kind, ACC_TRACE_AGREE);
    acc_trace_release(&back);
    acc_trace_release(&t);

    enum acc_state was;
    CU_ASSERT_EQUAL(acc_store_agreement_transition(st, a.id, ACC_STATE_BIT(ACC_STATE_PENDING),
                                                   ACC_STATE_TERMINATED, NULL, &was, &err),
                    ACC_ERR_STATE);
    CU_ASSERT_EQUAL(was, ACC_STATE_OBSERVED);
    ACC_ASSERT_OK(acc_store_agreement_transition(st, a.id, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                                 ACC_STATE_OBSERVED_AND_TERMINATING, NULL, &was,
                                                 &err));
    unsigned done;
    ACC_ASSERT_OK(acc_store_agreement_complete_ended(st, 100000, &done, &err));
    CU_ASSERT_EQUAL(done, 0); /* terminating ones are not completed */
    acc_agreement_release(&a);
}

static void test_list_filters(void)
{
    struct acc_agreement_list l;
    struct acc_error err;
    struct acc_list_filter f = {.initiator = "bob"};
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_EQUAL(l.total, 1);
    acc_agreement_list_release(&l);
    f = (struct acc_list_filter){.site = "site1"};
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_EQUAL(l.n ? l.v[0].n_comps : 0, 1);
    acc_agreement_list_release(&l);
    f = (struct acc_list_filter){.state = "Pending"};
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 1); /* alice's */
    acc_agreement_list_release(&l);
    f = (struct acc_list_filter){.from = 9000}; /* bob's ends at 8600 */
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_EQUAL(l.total, 0);
    acc_agreement_list_release(&l);
    f = (struct acc_list_filter){.limit = 1, .offset = 1};
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 1);
    uint64_t counts[ACC_STATE__COUNT], all = 0;
    ACC_ASSERT_OK(acc_store_agreement_counts(st, counts, &err));
    for (int i = 0; i < ACC_STATE__COUNT; i++)
        all += counts[i];
    CU_ASSERT_EQUAL(l.total, all); /* every agreement, not the page's one */
    CU_ASSERT_TRUE(l.total >= 2);
    acc_agreement_list_release(&l);
    f = (struct acc_list_filter){.offset = 1000}; /* past the end: none, and the total */
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_EQUAL(l.total, all);
    acc_agreement_list_release(&l);
    CU_ASSERT_EQUAL(counts[ACC_STATE_PENDING], 1);
    CU_ASSERT_EQUAL(counts[ACC_STATE_OBSERVED_AND_TERMINATING], 1);
}

static void test_journal(void)
{
    struct acc_booking b[2];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 2; i++) {
        snprintf(b[i].key, sizeof b[i].key, "k-%d", i);
        acc_strlcpy(b[i].agreement, "dddddddddddddddd", sizeof b[i].agreement);
        acc_strlcpy(b[i].adapter, "site1", sizeof b[i].adapter);
        acc_strlcpy(b[i].resource, "site1", sizeof b[i].resource);
        b[i].amount = 2;
        b[i].state = ACC_BOOKING_INTENT;
    }
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_journal_put(st, b, 2, 0, &err));
    b[0].state = ACC_BOOKING_CANCELLED;
    b[1].state = ACC_BOOKING_RESERVED;
    acc_strlcpy(b[1].local_id, "L7", sizeof b[1].local_id);
    ACC_ASSERT_OK(acc_store_journal_put(st, b, 2, 0, &err));
    /* An open entry of an agreement still being negotiated (Pending) is
     * not a leftover. */
    struct acc_booking busy = b[1];
    acc_strlcpy(busy.key, "k-pending", sizeof busy.key);
    acc_strlcpy(busy.agreement, "aaaaaaaaaaaaaaaa", sizeof busy.agreement);
    ACC_ASSERT_OK(acc_store_journal_put(st, &busy, 1, 0, &err));
    struct acc_booking *got;
    size_t n;
    ACC_ASSERT_OK(acc_store_journal_get(st, NULL, &got, &n, &err));
    CU_ASSERT_EQUAL(n, 1); /* only the reserved one of a finished negotiation */
    CU_ASSERT_STRING_EQUAL(n ? got[0].local_id : "", "L7");
    free(got);
    ACC_ASSERT_OK(acc_store_journal_get(st, "dddddddddddddddd", &got, &n, &err));
    CU_ASSERT_EQUAL(n, 2);
    free(got);
    /* An entry that changes hands (a held quote's, committed to an
     * agreement) moves with its outcome; the others stay. */
    acc_strlcpy(b[0].agreement, "ffffffffffffffff", sizeof b[0].agreement);
    ACC_ASSERT_OK(acc_store_journal_put(st, b, 1, 0, &err));
    ACC_ASSERT_OK(acc_store_journal_get(st, "ffffffffffffffff", &got, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(n ? got[0].key : "", "k-0");
    CU_ASSERT_EQUAL(n ? got[0].state : 0, ACC_BOOKING_CANCELLED);
    free(got);
    ACC_ASSERT_OK(acc_store_journal_get(st, "dddddddddddddddd", &got, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(n ? got[0].key : "", "k-1");
    free(got);
}

struct writer {
    pthread_t tid;
    int base;
    int failures;
};

static void *write_many(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < 50; i++) {
        struct acc_agreement a;
        char id[ACC_ID_LEN + 1];
        snprintf(id, sizeof id, "w%02d%012d", w->base, i);
        fill(&a, id, "many");
        struct acc_error err;
        if (acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err))
            w->failures++;
        acc_agreement_release(&a);
    }
    return NULL;
}

static void test_concurrent_writers_group_commit(void)
{
    struct writer w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (struct writer){.base = i};
        pthread_create(&w[i].tid, NULL, write_many, &w[i]);
    }
    int failures = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(w[i].tid, NULL);
        failures += w[i].failures;
    }
    CU_ASSERT_EQUAL(failures, 0);
    struct acc_list_filter f = {.initiator = "many", .limit = 1000};
    struct acc_agreement_list l;
    ACC_ASSERT_OK(acc_store_agreement_list(st, &f, &l, NULL));
    CU_ASSERT_EQUAL(l.n, 400);
    acc_agreement_list_release(&l);
}

static void test_reopen_keeps_everything(void)
{
    acc_store_close(st);
    struct acc_store_options o = {db, true, 4, 0};
    ACC_ASSERT_OK(acc_store_open(&o, &st, NULL));
    struct acc_agreement b;
    ACC_ASSERT_OK(acc_store_agreement_get(st, "cccccccccccccccc", false, &b, NULL));
    CU_ASSERT_EQUAL(b.state, ACC_STATE_OBSERVED_AND_TERMINATING);
    acc_agreement_release(&b);
}

static void test_not_a_database(void)
{
    struct acc_store *s = NULL;
    struct acc_error err;
    if (acc_test_db_is_pg()) {
        /* a server without that database */
        char url[600];
        snprintf(url, sizeof url, "%s", db);
        char *name = strstr(url, "/t_store_");
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        memcpy(name + 1, "nonesuch", 8);
        struct acc_store_options o = {url, true, 2, 0};
        CU_ASSERT_EQUAL(acc_store_open(&o, &s, &err), ACC_ERR_STORAGE);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot connect"));
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/garbage.db", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    fputs("this is not a database, but it is long enough to look like a header....", f);
    fclose(f);
    struct acc_store_options o = {path, true, 2, 0};
    CU_ASSERT_EQUAL(acc_store_open(&o, &s, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(s);
    o.path = "/nonexistent-dir/x.db";
    CU_ASSERT_EQUAL(acc_store_open(&o, &s, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent-dir/x.db"));
}

/* Item 9 of the probe: bind results were unchecked, so a value that could
 * not be bound went in as NULL.  A component's arguments that SQLite cannot
 * take (out of memory while they are bound) must fail the settle and leave
 * the agreement as it was, never store it without its arguments.  The
 * failure is made in SQLite's allocator: nothing to make fail on
 * PostgreSQL, whose values are not copied by the library when bound. */
static void test_bind_failure_is_an_error(void)
{
    if (acc_test_db_is_pg())
        return;
    struct acc_agreement a, b;
    struct acc_error err;
    fill(&a, "bindbindbindbind", "carol");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    enum { ARG = 123455 }; /* with its NUL: 123,456 bytes, a size nothing else has */
    char *big = malloc(ARG + 1);
    memset(big, 'x', ARG);
    big[ARG] = '\0';
    a.state = ACC_STATE_OBSERVED;
    a.start = 5000;
    a.end = 8600;
    a.n_comps = 1;
    a.comps = calloc(1, sizeof *a.comps);
    a.comps[0] = (struct acc_alloc_component){.name = strdup("a"),
                                              .site = strdup("site1"),
                                              .nodes = 1,
                                              .ppn = 1,
                                              .executable = strdup("/bin/prog")};
    a.comps[0].args = calloc(1, sizeof *a.comps[0].args);
    a.comps[0].args[0] = big;
    a.comps[0].n_args = 1;

    atomic_store(&fail_size, ARG + 1);
    acc_err rc =
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), NULL, NULL, 0, &err);
    atomic_store(&fail_size, 0);
    CU_ASSERT_NOT_EQUAL(rc, ACC_OK);
    ACC_ASSERT_OK(acc_store_agreement_get(st, a.id, false, &b, &err));
    if (rc == ACC_OK) { /* what it did before: stored, without the arguments */
        CU_ASSERT_EQUAL(b.n_comps, 1);
        CU_ASSERT_EQUAL(b.n_comps ? b.comps[0].n_args : 0, 1);
    } else { /* nothing changed */
        CU_ASSERT_EQUAL(b.state, ACC_STATE_PENDING);
        CU_ASSERT_EQUAL(b.n_comps, 0);
    }
    acc_agreement_release(&b);

    /* With the memory back, the same settle stores every byte. */
    ACC_ASSERT_OK(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), NULL, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(st, a.id, false, &b, &err));
    CU_ASSERT_EQUAL(b.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL_FATAL(b.n_comps, 1);
    CU_ASSERT_EQUAL_FATAL(b.comps[0].n_args, 1);
    CU_ASSERT_EQUAL(strlen(b.comps[0].args[0]), ARG);
    acc_agreement_release(&b);
    acc_agreement_release(&a);
}

/* The one write primitive: a write made with ACC_STORE_NOWAIT returns at
 * once and is committed no later than any write awaited after it. */
static void test_nowait_order(void)
{
    struct acc_error err;
    struct acc_agreement a, b;
    fill(&a, "nowaitnowaitnowa", "dave");
    /* A key needs an awaited create (its answer is whether it was seen). */
    CU_ASSERT_EQUAL(
        acc_store_agreement_create(st, &a, "dave\nk", ACC_STORE_NOWAIT, NULL, NULL, &err),
        ACC_ERR_INVALID);
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, ACC_STORE_NOWAIT, NULL, NULL, &err));
    struct acc_booking j = {.round = 1,
                            .kind = ACC_RES_NODES,
                            .amount = 2,
                            .start = 10,
                            .end = 20,
                            .state = ACC_BOOKING_RESERVED};
    acc_strlcpy(j.key, "nowait-key", sizeof j.key);
    acc_strlcpy(j.agreement, a.id, sizeof j.agreement);
    acc_strlcpy(j.adapter, "site1", sizeof j.adapter);
    acc_strlcpy(j.resource, "site1", sizeof j.resource);
    ACC_ASSERT_OK(acc_store_journal_put(st, &j, 1, ACC_STORE_NOWAIT, &err));
    memset(&j, 0, sizeof j); /* the store has its own copy */
    /* One awaited write later, both are there. */
    ACC_ASSERT_OK(acc_store_agreement_transition(st, a.id, ACC_STATE_BIT(ACC_STATE_PENDING),
                                                 ACC_STATE_REJECTED, "test", NULL, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(st, a.id, true, &b, &err));
    CU_ASSERT_STRING_EQUAL(b.offer_xml, "<offer/>");
    CU_ASSERT_EQUAL(b.state, ACC_STATE_REJECTED);
    acc_agreement_release(&b);
    struct acc_booking *got = NULL;
    size_t n = 0;
    ACC_ASSERT_OK(acc_store_journal_get(st, a.id, &got, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(n ? got[0].key : "", "nowait-key");
    free(got);
    acc_agreement_release(&a);
}

/* A quote whose hold a stop cut short is Advisory with journal entries;
 * the open-journal query leaves them to the hold while the quote is
 * Advisory (it may be booking), and they are the sweep's once it is not. */
/* Times of this process around the instance's beat: it is seen since
 * SEEN_SINCE and not since UNSEEN_SINCE (the store judges them by the
 * database's clock, from their age). */
#define SEEN_SINCE   (acc_now() - 60)
#define UNSEEN_SINCE (acc_now() + 60)

/* A store of its own on database name; on a shared database what it writes
 * is an instance's that was last seen now (by the database's clock). */
static struct acc_store *open_seen_now(const char *name)
{
    char path[512];
    struct acc_store *st2 = NULL;
    struct acc_error err;
    if (!acc_test_db(name, path, sizeof path))
        return NULL;
    struct acc_store_options o = {path, false, 2, 0};
    ACC_ASSERT_OK(acc_store_open(&o, &st2, &err));
    if (st2 && acc_store_shared(st2)) {
        acc_store_set_instance(st2, "instinstinstinst");
        ACC_ASSERT_OK(acc_store_instance_beat(st2, "host", 1, 100, 0, &err));
    }
    return st2;
}

static void test_interrupted_hold(void)
{
    struct acc_store *qs = open_seen_now("quotes");
    CU_ASSERT_PTR_NOT_NULL_FATAL(qs);
    struct acc_error err;
    static const char *const ids[] = {"advisoryadvisory", "holdingholdingho", "heldheldheldheld"};
    struct acc_quote q[3];
    struct acc_booking b[3];
    for (int i = 0; i < 3; i++) {
        memset(&q[i], 0, sizeof q[i]);
        acc_strlcpy(q[i].id, ids[i], sizeof q[i].id);
        q[i].initiator = "erin";
        q[i].state = ACC_QUOTE_ADVISORY;
        q[i].created = q[i].updated = 1000 + i;
        q[i].hold_until = 5000;
        q[i].held_option = -1;
        q[i].duration = 3600;
        ACC_ASSERT_OK(acc_store_quote_put(qs, &q[i], 0, NULL, 0, &err));
        b[i] = (struct acc_booking){.round = 1, .amount = 2, .start = 10, .end = 20};
        snprintf(b[i].key, sizeof b[i].key, "hold-%d", i);
        acc_strlcpy(b[i].agreement, ids[i], sizeof b[i].agreement);
        acc_strlcpy(b[i].adapter, "site1", sizeof b[i].adapter);
        acc_strlcpy(b[i].resource, "site1", sizeof b[i].resource);
    }
    /* 1 is booking its hold (alpha reserved); 2 is held. */
    b[1].state = ACC_BOOKING_RESERVED;
    ACC_ASSERT_OK(acc_store_journal_put(qs, &b[1], 1, 0, &err));
    b[2].state = ACC_BOOKING_HELD;
    q[2].state = ACC_QUOTE_HELD;
    ACC_ASSERT_OK(acc_store_quote_put(qs, &q[2], 1u << ACC_QUOTE_ADVISORY, &b[2], 1, &err));
    char(*got)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    if (acc_store_shared(qs)) {
        /* its instance lives (seen since): the hold may be booking */
        ACC_ASSERT_OK(acc_store_quote_interrupted(qs, SEEN_SINCE, &got, &n, &err));
        CU_ASSERT_EQUAL(n, 0);
        free(got);
    }
    /* its instance not seen since: dead (on a file: every quote) */
    ACC_ASSERT_OK(acc_store_quote_interrupted(qs, UNSEEN_SINCE, &got, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(n ? got[0] : "", ids[1]);
    free(got);
    struct acc_booking *open = NULL;
    ACC_ASSERT_OK(acc_store_journal_get(qs, NULL, &open, &n, &err));
    CU_ASSERT_EQUAL(n, 0); /* the hold's own while it may be booking */
    free(open);
    /* Recovery ends it: its entry is a leftover like any other.  On a
     * shared database only while its instance stays dead, judged again as
     * it is written: seen since, it keeps its hold. */
    q[1].state = ACC_QUOTE_REJECTED;
    if (acc_store_shared(qs)) {
        CU_ASSERT_EQUAL(acc_store_quote_end_orphan(qs, &q[1], SEEN_SINCE, &err), ACC_ERR_STATE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "alive again"));
        ACC_ASSERT_OK(acc_store_quote_interrupted(qs, UNSEEN_SINCE, &got, &n, &err));
        CU_ASSERT_EQUAL(n, 1); /* still Advisory, still booking */
        free(got);
    }
    ACC_ASSERT_OK(acc_store_quote_end_orphan(qs, &q[1], UNSEEN_SINCE, &err));
    ACC_ASSERT_OK(acc_store_quote_interrupted(qs, UNSEEN_SINCE, &got, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
    free(got);
    ACC_ASSERT_OK(acc_store_journal_get(qs, NULL, &open, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(n ? open[0].key : "", "hold-1");
    free(open);
    acc_store_close(qs);
}

/* The leader ends a dead instance's negotiation only while that instance
 * stays dead: judged again inside the write. */
static void test_end_orphan(void)
{
    struct acc_store *os = open_seen_now("orphans");
    CU_ASSERT_PTR_NOT_NULL_FATAL(os);
    struct acc_error err;
    bool shared = acc_store_shared(os);
    struct acc_agreement a, got;
    fill(&a, "orphanorphanorph", "erin");
    ACC_ASSERT_OK(acc_store_agreement_create(os, &a, NULL, 0, NULL, NULL, &err));
    a.state = ACC_STATE_REJECTED;
    a.updated = 1001;
    if (shared) {
        /* seen since: left to it, still Pending */
        CU_ASSERT_EQUAL(acc_store_agreement_end_orphan(os, &a, SEEN_SINCE, &err), ACC_ERR_STATE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "alive again"));
        ACC_ASSERT_OK(acc_store_agreement_get(os, a.id, false, &got, &err));
        CU_ASSERT_EQUAL(got.state, ACC_STATE_PENDING);
        acc_agreement_release(&got);
    }
    /* not seen since (on a file: no instance): ended */
    ACC_ASSERT_OK(acc_store_agreement_end_orphan(os, &a, UNSEEN_SINCE, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(os, a.id, false, &got, &err));
    CU_ASSERT_EQUAL(got.state, ACC_STATE_REJECTED);
    acc_agreement_release(&got);
    /* once ended, not again */
    CU_ASSERT_EQUAL(acc_store_agreement_end_orphan(os, &a, UNSEEN_SINCE, &err), ACC_ERR_STATE);
    acc_agreement_release(&a);
    acc_store_close(os);
}

static const struct acc_test_case tests[] = {
    {"create, get, idempotency key", test_create_get},
    {"settle, trace, transitions", test_settle_and_transitions},
    {"list filters and counts", test_list_filters},
    {"journal", test_journal},
    {"concurrent writers share commits", test_concurrent_writers_group_commit},
    {"reopen keeps everything", test_reopen_keeps_everything},
    {"not a database", test_not_a_database},
    {"a value that cannot be bound is an error, not a NULL", test_bind_failure_is_an_error},
    {"no-wait writes commit before later awaited ones", test_nowait_order},
    {"a hold a stop cut short", test_interrupted_hold},
    {"a dead instance's negotiation ended only while it stays dead", test_end_orphan},
    {"identity kept, never the token", test_identity_kept},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"store", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
