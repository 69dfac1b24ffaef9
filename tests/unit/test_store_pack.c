/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_pack.c - what migration 0008 changed in the store: long texts
 * stored compressed, the trace one packed row per version, an older
 * database's rows read as they were. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "migrations.h"
#include "sql.h"
#include "store.h"
#include "strutil.h"
#include "testutil.h"

static struct acc_store *st;
static char db[256];

static int setup(void)
{
    snprintf(db, sizeof db, "%s/pack.db", acc_test_tmpdir());
    struct acc_store_options o = {db, false, 2, 0};
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
    a->initiator = strdup(initiator);
    a->state = ACC_STATE_PENDING;
    a->created = a->updated = 1000;
    a->duration = 3600;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->offer_xml = strdup("<offer/>");
    a->offer_len = 8;
}

static void add_events(struct acc_trace *t, int n, const char *detail)
{
    for (int i = 0; i < n; i++) {
        struct acc_trace_event ev = {.round = (unsigned)i + 1,
                                     .kind = i ? ACC_TRACE_RESERVE : ACC_TRACE_PREVIEW,
                                     .target = "site alpha",
                                     .adapter = i % 2 ? NULL : "alpha",
                                     .amount = 4,
                                     .t_from = 1795791793,
                                     .t_until = 1795795393 + i,
                                     .status = i == 1 ? ACC_ERR_TIMEOUT : ACC_OK,
                                     .elapsed_us = 100 + i,
                                     .detail = (char *)detail};
        CU_ASSERT_EQUAL_FATAL(acc_trace_add(t, &ev), ACC_OK);
    }
}

/* The trace is stored in one row and read back event by event as it was;
 * a second write to the same version appends. */
static void test_trace_packed(void)
{
    struct acc_agreement a;
    struct acc_error err;
    fill(&a, "tttttttttttttttt", "al");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    struct acc_trace t, back;
    acc_trace_init(&t);
    add_events(&t, 12, "acc-tttttttttttttttt-r1i0: reserved as alpha-1, starting then");
    a.state = ACC_STATE_REJECTED;
    ACC_ASSERT_OK(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_trace_get(st, a.id, &back, &err));
    CU_ASSERT_EQUAL_FATAL(back.n, 12);
    for (size_t i = 0; i < back.n; i++) {
        CU_ASSERT_EQUAL(back.v[i].round, t.v[i].round);
        CU_ASSERT_EQUAL(back.v[i].kind, t.v[i].kind);
        CU_ASSERT_EQUAL(back.v[i].status, t.v[i].status);
        CU_ASSERT_EQUAL(back.v[i].t_until, t.v[i].t_until);
        CU_ASSERT_EQUAL(back.v[i].elapsed_us, t.v[i].elapsed_us);
        CU_ASSERT_EQUAL(back.v[i].adapter == NULL, t.v[i].adapter == NULL);
        CU_ASSERT_STRING_EQUAL(back.v[i].detail, t.v[i].detail);
    }
    acc_trace_release(&back);
    sqlite3 *r = NULL;
    sqlite3_open(db, &r);
    sqlite3_stmt *s = NULL;
    sqlite3_prepare_v2(r, "SELECT count(*), sum(length(events)) FROM trace_pack", -1, &s, NULL);
    CU_ASSERT_EQUAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_EQUAL(sqlite3_column_int(s, 0), 1);
    CU_ASSERT_TRUE(sqlite3_column_int(s, 1) < 400); /* 12 events, compressed */
    sqlite3_finalize(s);
    /* Another write to the same version (a second settle is refused, so
     * through a version bump's path: store_trace_put appends). */
    struct acc_trace t2;
    acc_trace_init(&t2);
    add_events(&t2, 1, "appended");
    a.state = ACC_STATE_TERMINATED;
    ACC_ASSERT_OK(
        acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_REJECTED), &t2, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_trace_get(st, a.id, &back, &err));
    CU_ASSERT_EQUAL(back.n, 13);
    CU_ASSERT_STRING_EQUAL(back.n == 13 ? back.v[12].detail : "", "appended");
    acc_trace_release(&back);
    /* A damaged row is an error, not a shorter trace. */
    CU_ASSERT_EQUAL(
        sqlite3_exec(r, "UPDATE trace_pack SET events = x'5401000000'", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(r);
    CU_ASSERT_EQUAL(acc_store_trace_get(st, a.id, &back, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "damaged"));
    /* An agreement without events, or none at all: no events. */
    ACC_ASSERT_OK(acc_store_trace_get(st, "nnnnnnnnnnnnnnnn", &back, &err));
    CU_ASSERT_EQUAL(back.n, 0);
    acc_trace_release(&t);
    acc_trace_release(&t2);
    acc_agreement_release(&a);
}

static sqlite3_int64 raw_offer(const char *path, const char *id, int *first)
{
    sqlite3 *r = NULL;
    sqlite3_stmt *s = NULL;
    sqlite3_int64 n = -1;
    sqlite3_open(path, &r);
    sqlite3_prepare_v2(r,
                       "SELECT length(CAST(offer AS BLOB)), hex(substr(offer, 1, 2)) "
                       "FROM agreement WHERE id = ?",
                       -1, &s, NULL);
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        n = sqlite3_column_int64(s, 0);
        *first = strcmp((const char *)sqlite3_column_text(s, 1), "007A") == 0;
    }
    sqlite3_finalize(s);
    sqlite3_close(r);
    return n;
}

/* A long offer is stored compressed and read back as it was; a short one as
 * it is; a damaged packed value is an error, not a hole. */
static void test_packed_offer(void)
{
    struct acc_agreement a, b;
    struct acc_error err;
    fill(&a, "pppppppppppppppp", "al");
    free(a.offer_xml);
    struct acc_buf x = ACC_BUF_INIT;
    acc_buf_puts(&x, "<wsag:AgreementOffer>");
    for (int i = 0; i < 40; i++)
        acc_buf_printf(&x, "<co:Component n=\"%d\"><co:Nodes>4</co:Nodes></co:Component>", i);
    acc_buf_puts(&x, "</wsag:AgreementOffer>");
    CU_ASSERT_FATAL(acc_buf_ok(&x));
    a.offer_len = x.len;
    a.offer_xml = acc_strndup(x.data, x.len);
    acc_buf_release(&x);
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err));
    ACC_ASSERT_OK(acc_store_agreement_get(st, a.id, true, &b, &err));
    CU_ASSERT_EQUAL(b.offer_len, a.offer_len);
    CU_ASSERT_TRUE(b.offer_xml && memcmp(b.offer_xml, a.offer_xml, a.offer_len) == 0);
    acc_agreement_release(&b);
    int packed = 0;
    sqlite3_int64 n = raw_offer(db, a.id, &packed);
    CU_ASSERT_TRUE(packed);
    CU_ASSERT_TRUE(n > 0 && n < (sqlite3_int64)a.offer_len / 4);
    struct acc_agreement c;
    fill(&c, "qqqqqqqqqqqqqqqq", "al");
    ACC_ASSERT_OK(acc_store_agreement_create(st, &c, NULL, 0, NULL, NULL, &err));
    acc_agreement_release(&c);
    ACC_ASSERT_OK(acc_store_agreement_get(st, "qqqqqqqqqqqqqqqq", true, &b, &err));
    CU_ASSERT_EQUAL(b.offer_len, 8); /* short: as it is */
    acc_agreement_release(&b);
    CU_ASSERT_EQUAL(raw_offer(db, "qqqqqqqqqqqqqqqq", &packed), 8);
    CU_ASSERT_FALSE(packed);
    sqlite3 *r = NULL;
    sqlite3_open(db, &r);
    CU_ASSERT_EQUAL(sqlite3_exec(r,
                                 "UPDATE agreement SET offer = x'007a10000000789c00' "
                                 "WHERE id = 'pppppppppppppppp'",
                                 NULL, NULL, NULL),
                    SQLITE_OK);
    sqlite3_close(r);
    CU_ASSERT_EQUAL(acc_store_agreement_get(st, a.id, true, &b, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "damaged"));
    acc_agreement_release(&a);
}

/* A database of the schema before 0008 keeps its agreements, and finds them
 * by state without the index 0008 drops. */
static void test_migration_fewer_writes(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/pre9.db", acc_test_tmpdir());
    /* the migrations before 0008 (later ones may follow it) */
    size_t before = 0;
    while (before < acc_migrations_count && strncmp(acc_migrations[before].name, "0008", 4) != 0)
        before++;
    CU_ASSERT_FATAL(before < acc_migrations_count);
    struct acc_sql_options o = {
        .path = path, .label = "database", .migrations = acc_migrations, .n_migrations = before};
    struct acc_sql *old = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_sql_open(&o, &old, &err));
    struct acc_sql_conn *c = acc_sql_main_lock(old);
    ACC_ASSERT_OK(acc_sql_exec(c,
                               "INSERT INTO agreement (id, initiator, state, created, updated, "
                               "duration, strategy, launch, offer) VALUES "
                               "('mmmmmmmmmmmmmmm1', 'al', 'Pending', 1, 1, 1, 'intersect', "
                               "'none', x'00'), ('mmmmmmmmmmmmmmm2', 'al', 'Observed', 2, 2, 1, "
                               "'intersect', 'none', '<offer>' || printf('%.400c', 'x') || "
                               "'</offer>')",
                               &err));
    ACC_ASSERT_OK(acc_sql_exec(c,
                               "INSERT INTO trace_event (agreement, seq, round, kind, status, "
                               "detail) SELECT seq, 1, 1, 'preview', 'AdapterTimeout', 'old' "
                               "FROM agreement WHERE id = 'mmmmmmmmmmmmmmm1'",
                               &err));
    acc_sql_main_unlock(old);
    acc_sql_close(old);
    struct acc_store_options so = {path, false, 2, 0};
    struct acc_store *s2 = NULL;
    ACC_ASSERT_OK(acc_store_open(&so, &s2, &err));
    struct acc_list_filter f = {.state = "Observed"};
    struct acc_agreement_list l;
    ACC_ASSERT_OK(acc_store_agreement_list(s2, &f, &l, &err));
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_STRING_EQUAL(l.n ? l.v[0].id : "", "mmmmmmmmmmmmmmm2");
    acc_agreement_list_release(&l);
    uint64_t counts[ACC_STATE__COUNT];
    ACC_ASSERT_OK(acc_store_agreement_counts(s2, counts, &err));
    CU_ASSERT_EQUAL(counts[ACC_STATE_PENDING], 1);
    struct acc_agreement a; /* an offer stored as it was, before packing */
    ACC_ASSERT_OK(acc_store_agreement_get(s2, "mmmmmmmmmmmmmmm2", true, &a, &err));
    CU_ASSERT_EQUAL(a.offer_len, 415);
    CU_ASSERT_TRUE(a.offer_xml && strncmp(a.offer_xml, "<offer>xxx", 10) == 0);
    acc_agreement_release(&a);
    /* Its trace: the old event first, then those written since. */
    fill(&a, "mmmmmmmmmmmmmmm1", "al");
    a.state = ACC_STATE_REJECTED;
    struct acc_trace t, back;
    acc_trace_init(&t);
    add_events(&t, 2, "new");
    ACC_ASSERT_OK(
        acc_store_agreement_settle(s2, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, NULL, 0, &err));
    ACC_ASSERT_OK(acc_store_trace_get(s2, a.id, &back, &err));
    CU_ASSERT_EQUAL_FATAL(back.n, 3);
    CU_ASSERT_STRING_EQUAL(back.v[0].detail, "old");
    CU_ASSERT_EQUAL(back.v[0].status, ACC_ERR_TIMEOUT);
    CU_ASSERT_STRING_EQUAL(back.v[2].detail, "new");
    acc_trace_release(&back);
    acc_trace_release(&t);
    acc_agreement_release(&a);
    acc_store_close(s2);
    sqlite3 *r = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &r), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    sqlite3_prepare_v2(r,
                       "SELECT count(*) FROM sqlite_schema WHERE name IN "
                       "('agreement_state', 'agreement_state_updated')",
                       -1, &s, NULL);
    CU_ASSERT_EQUAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_EQUAL(sqlite3_column_int(s, 0), 1); /* the one that serves both */
    sqlite3_finalize(s);
    sqlite3_close(r);
}

static const struct acc_test_case tests[] = {
    {"long offers are stored compressed", test_packed_offer},
    {"the trace is one packed row", test_trace_packed},
    {"a database from before 0008 keeps its agreements", test_migration_fewer_writes},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"store_pack", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
