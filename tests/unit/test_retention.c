/* SPDX-License-Identifier: Apache-2.0 */
/* test_retention.c - the data lifecycle in the store: retention deletes
 * what ended long ago with everything that is its own and nothing else;
 * the online backup; the copy made before a migration. */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "migrations.h"
#include "sql.h"
#include "store.h"
#include "strutil.h"
#include "testutil.h"

#define DAY  86400
#define LONG (1000 * (acc_time)DAY) /* "ended long ago" */

static struct acc_store *st;
static char db[256];
static sqlite3 *raw; /* the test's own look at the file */

static int setup(void)
{
    snprintf(db, sizeof db, "%s/retention.db", acc_test_tmpdir());
    struct acc_store_options o = {db, false, 4, 0};
    if (acc_store_open(&o, &st, NULL))
        return 1;
    if (sqlite3_open(db, &raw) != SQLITE_OK)
        return 1;
    sqlite3_busy_timeout(raw, 10000);
    sqlite3_exec(raw, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    return 0;
}

static int teardown(void)
{
    sqlite3_close(raw);
    acc_store_close(st);
    return 0;
}

static void sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sql(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *msg = NULL;
    int rc = sqlite3_exec(raw, text, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", text, msg);
    CU_ASSERT_EQUAL_FATAL(rc, SQLITE_OK);
    sqlite3_free(msg);
}

static long long count(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long long count(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sqlite3_stmt *s = NULL;
    long long n = -1;
    if (sqlite3_prepare_v2(raw, text, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* An agreement in `state`, last changed at `updated`, with a trace event,
 * an earlier version and a journal entry in `entry` state. */
static void make(const char *id, const char *state, acc_time updated, const char *key,
                 const char *entry)
{
    struct acc_agreement a;
    memset(&a, 0, sizeof a);
    acc_strlcpy(a.id, id, sizeof a.id);
    a.name = strdup("run");
    a.initiator = strdup("alice");
    a.state = ACC_STATE_PENDING;
    a.created = a.updated = 1000;
    a.duration = 3600;
    a.offer_xml = strdup("<offer/>");
    a.offer_len = 8;
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, key, 0, NULL, NULL, &err));
    acc_agreement_release(&a);
    sql("UPDATE agreement SET state = '%s', updated = %lld WHERE id = '%s'", state,
        (long long)updated, id);
    sql("INSERT INTO trace_event (agreement, seq, round, kind, status) "
        "SELECT seq, 1, 1, 'preview', 'ok' FROM agreement WHERE id = '%s'",
        id);
    sql("INSERT INTO agreement_version (agreement, version, created, replaced) "
        "SELECT seq, 1, 1, 2 FROM agreement WHERE id = '%s'",
        id);
    sql("INSERT INTO version_component (agreement, version, idx, name, site, nodes, ppn) "
        "SELECT seq, 1, 0, 'c', 's', 1, 1 FROM agreement WHERE id = '%s'",
        id);
    sql("INSERT INTO reservation (key, agreement_id, round, adapter, kind, resource, amount, "
        "start_time, end_time, state, updated) VALUES ('%s-k', '%s', 1, 'a', 'nodes', 'r', 1, "
        "1, 2, '%s', 1)",
        id, id, entry);
}

static void run_row(const char *id, const char *state, const char *dir)
{
    sql("INSERT INTO run (agreement, style, state, directory, metampich, rsl) "
        "SELECT seq, 'none', '%s', '%s', '', '' FROM agreement WHERE id = '%s'",
        state, dir, id);
}

static void test_prune_what_ended(void)
{
    acc_time now = acc_now(), old = now - LONG;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/jobs/aaaaaaaaaaaaaaa1", acc_test_tmpdir());
    make("aaaaaaaaaaaaaaa1", "Terminated", old, "alice\nkey-1", "released");
    run_row("aaaaaaaaaaaaaaa1", "exited", dir);
    sql("INSERT INTO quote (id, initiator, state, created, updated, agreement, duration, "
        "options, allocation, offer) VALUES ('qqqqqqqqqqqqqqq1', 'alice', 'Committed', 1, %lld, "
        "'aaaaaaaaaaaaaaa1', 1, '', '', x'00')",
        (long long)old);
    make("aaaaaaaaaaaaaaa2", "Complete", old, NULL, "released"); /* its run still runs */
    run_row("aaaaaaaaaaaaaaa2", "running", "/tmp/x/aaaaaaaaaaaaaaa2");
    make("aaaaaaaaaaaaaaa3", "Observed", old, NULL, "committed");
    make("aaaaaaaaaaaaaaa4", "Terminated", now - 10, NULL, "released"); /* recent */
    make("aaaaaaaaaaaaaaa5", "Rejected", old, NULL, "cancel-failed");   /* still open */
    make("aaaaaaaaaaaaaaa6", "Complete", old, NULL, "released");
    sql("UPDATE agreement SET modifying = 1 WHERE id = 'aaaaaaaaaaaaaaa6'");
    make("aaaaaaaaaaaaaaa7", "Complete", old, NULL, "released");
    run_row("aaaaaaaaaaaaaaa7", "exited", "/etc"); /* not a job's own directory */
    sql("INSERT INTO quote (id, initiator, state, created, updated, duration, options, "
        "allocation, offer) VALUES ('qqqqqqqqqqqqqqq2', 'alice', 'Expired', 1, %lld, 1, '', '', "
        "x'00'), ('qqqqqqqqqqqqqqq3', 'alice', 'Held', 1, %lld, 1, '', '', x'00')",
        (long long)old, (long long)old);

    struct acc_store_prune p = {.before = now - DAY, .limit = 100};
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_prune(st, &p, &err));
    CU_ASSERT_EQUAL(p.agreements, 2); /* 1 and 7 */
    CU_ASSERT_EQUAL(p.quotes, 1);     /* q2 (q1 went with its agreement) */
    CU_ASSERT_EQUAL_FATAL(p.n_directories, 1);
    CU_ASSERT_STRING_EQUAL(p.directories[0], dir);
    acc_store_prune_release(&p);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM agreement"), 5);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM agreement WHERE id IN ('aaaaaaaaaaaaaaa1', "
                          "'aaaaaaaaaaaaaaa7')"),
                    0);
    /* Nothing of theirs is left behind. */
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM trace_event"), 5);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM agreement_version"), 5);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM version_component"), 5);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM run"), 1);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM reservation"), 5);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM quote"), 1); /* the Held one */
    /* The idempotency key went with it: the key makes a new agreement. */
    struct acc_agreement a;
    memset(&a, 0, sizeof a);
    acc_strlcpy(a.id, "bbbbbbbbbbbbbbb1", sizeof a.id);
    a.initiator = strdup("alice");
    a.duration = 60;
    a.offer_xml = strdup("<o/>");
    a.offer_len = 4;
    bool dup = true;
    char first[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(acc_store_agreement_create(st, &a, "alice\nkey-1", 0, &dup, first, &err));
    CU_ASSERT_FALSE(dup);
    acc_agreement_release(&a);
    /* Again: nothing more is due. */
    ACC_ASSERT_OK(acc_store_prune(st, &p, &err));
    CU_ASSERT_EQUAL(p.agreements + p.quotes, 0);
    acc_store_prune_release(&p);
}

static void test_prune_in_batches(void)
{
    acc_time old = acc_now() - LONG;
    sql("DELETE FROM agreement");
    sql("DELETE FROM reservation");
    for (int i = 0; i < 250; i++) {
        char id[32];
        snprintf(id, sizeof id, "cccccccccccc%04d", i);
        make(id, "Terminated", old + i, NULL, "released");
    }
    struct acc_store_prune p = {.before = acc_now() - DAY, .limit = 100};
    struct acc_error err;
    unsigned seen[3];
    for (int b = 0; b < 3; b++) {
        ACC_ASSERT_OK(acc_store_prune(st, &p, &err));
        seen[b] = p.agreements;
        acc_store_prune_release(&p);
    }
    CU_ASSERT_EQUAL(seen[0], 100);
    CU_ASSERT_EQUAL(seen[1], 100);
    CU_ASSERT_EQUAL(seen[2], 50);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM agreement"), 0);
    CU_ASSERT_EQUAL(count("SELECT count(*) FROM reservation"), 0);
    p.limit = 0;
    CU_ASSERT_EQUAL(acc_store_prune(st, &p, &err), ACC_ERR_INVALID);
}

static void test_backup_copy(void)
{
    make("dddddddddddddd01", "Observed", acc_now(), NULL, "committed");
    make("dddddddddddddd02", "Observed", acc_now(), NULL, "committed");
    char dest[300], part[310];
    snprintf(dest, sizeof dest, "%s/copy.db", acc_test_tmpdir());
    snprintf(part, sizeof part, "%s.part", dest);
    int64_t n = -1;
    struct acc_error err;
    ACC_ASSERT_OK(acc_store_backup(st, dest, &n, &err));
    CU_ASSERT_EQUAL(n, count("SELECT count(*) FROM agreement"));
    CU_ASSERT_EQUAL(access(part, F_OK), -1);
    sqlite3 *c = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(dest, &c), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    sqlite3_prepare_v2(c, "SELECT count(*) FROM agreement WHERE id LIKE 'ddd%'", -1, &s, NULL);
    CU_ASSERT_EQUAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_EQUAL(sqlite3_column_int(s, 0), 2);
    sqlite3_finalize(s);
    sqlite3_close(c);
    /* A file that is there is never overwritten. */
    CU_ASSERT_EQUAL(acc_store_backup(st, dest, &n, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exists already"));
}

/* A database at the schema before the newest, opened by this accordd: the
 * copy PATH.pre-vN comes first, and holds the old schema and its rows. */
static void test_copy_before_migration(void)
{
    char path[300], pre[320];
    snprintf(path, sizeof path, "%s/old.db", acc_test_tmpdir());
    snprintf(pre, sizeof pre, "%s.pre-v%zu", path, acc_migrations_count);
    struct acc_sql_options o = {.path = path,
                                .label = "database",
                                .migrations = acc_migrations,
                                .n_migrations = acc_migrations_count - 1};
    struct acc_sql *old = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_sql_open(&o, &old, &err));
    struct acc_sql_conn *c = acc_sql_main_lock(old);
    ACC_ASSERT_OK(acc_sql_exec(c,
                               "INSERT INTO agreement (id, initiator, state, created, updated, "
                               "duration, strategy, launch, offer) VALUES ('eeeeeeeeeeeeeee1', "
                               "'al', 'Complete', 1, 1, 1, 'intersect', 'none', x'00')",
                               &err));
    /* its run, whose launch descriptions (compressed bytes) 0012 moves
     * from TEXT to BLOB columns: unchanged */
    ACC_ASSERT_OK(acc_sql_exec(c,
                               "INSERT INTO run (agreement, style, state, metampich, rsl, batch, "
                               "instance) SELECT seq, 'metampich', 'waiting', x'00ff10', x'7a00', "
                               "'b1', 'i1' FROM agreement",
                               &err));
    acc_sql_main_unlock(old);
    acc_sql_close(old);
    CU_ASSERT_EQUAL(access(pre, F_OK), -1);

    struct acc_store_options so = {path, false, 2, 0};
    struct acc_store *s2 = NULL;
    ACC_ASSERT_OK(acc_store_open(&so, &s2, &err));
    acc_store_close(s2);
    CU_ASSERT_EQUAL_FATAL(access(pre, F_OK), 0);
    sqlite3 *r = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(pre, &r), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    sqlite3_prepare_v2(r, "PRAGMA user_version", -1, &s, NULL);
    CU_ASSERT_EQUAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_EQUAL((size_t)sqlite3_column_int(s, 0), acc_migrations_count - 1);
    sqlite3_finalize(s);
    sqlite3_prepare_v2(r, "SELECT id FROM agreement", -1, &s, NULL);
    CU_ASSERT_EQUAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 0), "eeeeeeeeeeeeeee1");
    sqlite3_finalize(s);
    sqlite3_close(r);
    /* 0012: the run is there as it was, its descriptions blobs in BLOB
     * columns, its index made again */
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &r), SQLITE_OK);
    sqlite3_prepare_v2(r,
                       "SELECT hex(metampich), hex(rsl), typeof(metampich), batch, instance, "
                       "(SELECT type FROM pragma_table_info('run') WHERE name = 'rsl'), "
                       "(SELECT count(*) FROM sqlite_master WHERE name = 'run_open') FROM run "
                       "WHERE state = 'waiting'",
                       -1, &s, NULL);
    CU_ASSERT_EQUAL_FATAL(sqlite3_step(s), SQLITE_ROW);
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 0), "00FF10");
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 1), "7A00");
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 2), "blob");
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 3), "b1");
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 4), "i1");
    CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(s, 5), "BLOB");
    CU_ASSERT_EQUAL(sqlite3_column_int(s, 6), 1);
    sqlite3_finalize(s);
    sqlite3_close(r);
    /* Opened again at the newest schema: no further copy. */
    char pre2[330];
    snprintf(pre2, sizeof pre2, "%s.2", pre);
    ACC_ASSERT_OK(acc_store_open(&so, &s2, &err));
    acc_store_close(s2);
    CU_ASSERT_EQUAL(access(pre2, F_OK), -1);
    /* A new database has nothing to copy. */
    char fresh[300], fresh_pre[330];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", acc_test_tmpdir());
    snprintf(fresh_pre, sizeof fresh_pre, "%s.pre-v%zu", fresh, acc_migrations_count);
    so.path = fresh;
    ACC_ASSERT_OK(acc_store_open(&so, &s2, &err));
    acc_store_close(s2);
    CU_ASSERT_EQUAL(access(fresh_pre, F_OK), -1);
}

#define SITE "[site a]\nadapter = sim-batch\nnodes = 4\n"

/* [database] retain: forever by default, a duration of at least a day. */
static void test_retain_key(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string(SITE "[database]\npath = x.db\n", "t", &c, &err));
    CU_ASSERT_EQUAL(c.retain, 0);
    acc_config_release(&c);
    ACC_ASSERT_OK(acc_config_load_string(SITE "[database]\nretain = P400D\n", "t", &c, &err));
    CU_ASSERT_EQUAL(c.retain, 400 * DAY);
    acc_config_release(&c);
    ACC_ASSERT_OK(acc_config_load_string(SITE "[database]\nretain = forever\n", "t", &c, &err));
    CU_ASSERT_EQUAL(c.retain, 0);
    acc_config_release(&c);
    static const char *const bad[] = {"PT1H", "0", "P0D", "soon", "-P5D", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, SITE "[database]\nretain = %s\n", bad[i]);
        CU_ASSERT_EQUAL(acc_config_load_string(text, "t", &c, &err), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "retain"));
    }
}

static const struct acc_test_case tests[] = {
    {"[database] retain", test_retain_key},
    {"retention deletes what ended long ago, with all that is its own", test_prune_what_ended},
    {"retention goes in batches", test_prune_in_batches},
    {"an online copy of the store", test_backup_copy},
    {"a copy before a migration", test_copy_before_migration},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"retention", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
