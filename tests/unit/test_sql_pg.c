/* SPDX-License-Identifier: Apache-2.0 */
/* test_sql_pg.c - the PostgreSQL backend's failure paths (lib/sql/sql_pg.c,
 * sql_pg_stmt.c) on the server ACCORD_TEST_DB_URL names (tests/pg): a
 * reader made while the server is away, a statement prepared on a
 * connection that is gone, connections idle while the server ended them
 * (used again without an error), a lock held past lock_timeout, a transaction
 * whose connection went (never carried on, outside it, on a new one), one
 * a read-only server refused, one left idle too long, a writer's batch the
 * server ends to break a deadlock.
 *
 * The program has a database of its own; a second connection ends the
 * program's connections to it with pg_terminate_backend (what a client sees
 * of a server switching over) or closes the database to new ones, and opens
 * it again afterwards. */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger_store.h"
#include "sql.h"
#include "sql_writer.h"
#include "testutil.h"

static const struct acc_embedded two[] = {
    {"0001_kv.sql", "CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);", 0},
    {"0002_log.sql", "CREATE TABLE log (seq SERIAL PRIMARY KEY, what TEXT NOT NULL);", 0},
    {NULL, NULL, 0},
};

enum { Q_PUT, Q_GET, Q_LOG, Q_BUMP, Q__COUNT };

static const struct acc_sql_query q_put = {Q_PUT, "INSERT INTO kv (k, v) VALUES (?, ?)"},
                                  q_get = {Q_GET, "SELECT v FROM kv WHERE k = ?"},
                                  q_log = {Q_LOG, "INSERT INTO log (what) VALUES (?)"},
                                  q_bump = {Q_BUMP, "UPDATE kv SET v = v + 1 WHERE k = ?"};

static char url[600], dbname[64];
static PGconn *admin; /* to the server's own database, not the test's */

static bool admin_exec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool admin_exec(const char *fmt, ...)
{
    char sql[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    PGresult *r = PQexec(admin, sql);
    ExecStatusType st = PQresultStatus(r);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

/* Every connection of the program to its database ended, as a server
 * going down ends them. */
static void kill_conns(void)
{
    CU_ASSERT_TRUE(admin_exec("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                              "WHERE datname = '%s' AND pid <> pg_backend_pid()",
                              dbname));
}

static void allow_conns(bool on)
{
    CU_ASSERT_TRUE(
        admin_exec("ALTER DATABASE %s ALLOW_CONNECTIONS %s", dbname, on ? "true" : "false"));
}

static int setup(void)
{
    const char *server = getenv("ACCORD_TEST_DB_URL");
    if (!acc_test_db_is_pg()) {
        fprintf(stderr, "test_sql_pg: ACCORD_TEST_DB_URL names no PostgreSQL server\n");
        return 1;
    }
    if (!acc_test_db("sqlpg", url, sizeof url))
        return 1;
    snprintf(dbname, sizeof dbname, "t_sqlpg_%ld", (long)getpid());
    admin = PQconnectdb(server);
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "%s: %s", server, PQerrorMessage(admin));
        return 1;
    }
    PQclear(PQexec(admin, "SET client_min_messages = warning"));
    return 0;
}

static int teardown(void)
{
    if (!admin)
        return 0;
    admin_exec("ALTER DATABASE %s ALLOW_CONNECTIONS true", dbname);
    admin_exec("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = "
               "'%s' AND pid <> pg_backend_pid()",
               dbname);
    admin_exec("DROP DATABASE IF EXISTS %s", dbname);
    PQfinish(admin);
    admin = NULL;
    return 0;
}

static struct acc_sql *open_db(void)
{
    const struct acc_sql_options opt = {
        .path = url,
        .label = "test",
        .program = "test_sql_pg",
        .migrations = two,
        .n_migrations = 2,
        .n_slots = Q__COUNT,
    };
    struct acc_sql *db = NULL;
    struct acc_error err;
    acc_err rc = acc_sql_open(&opt, &db, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    return db;
}

static acc_err put(struct acc_sql_conn *c, const char *k, int64_t v, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, k);
    acc_sql_bind_i64(s, v);
    return acc_sql_run(s, "put", err);
}

/* v of key k on a connection of its own, -1 when there is none. */
static int64_t get(struct acc_sql *db, const char *k)
{
    struct acc_sql_conn *c = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_sql_reader_take(db, &c, &err));
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_get, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, k);
    bool row = false;
    ACC_ASSERT_OK(acc_sql_step(s, &row, "get", &err));
    int64_t v = row ? acc_sql_col_i64(s, 0) : -1;
    acc_sql_done(s);
    acc_sql_reader_give(db, c);
    return v;
}

static void assert_away(acc_err rc, const struct acc_error *err)
{
    CU_ASSERT_EQUAL(rc, ACC_ERR_STORAGE_AWAY);
    CU_ASSERT_EQUAL(err->code, ACC_ERR_STORAGE_AWAY);
    CU_ASSERT_TRUE(err->retry_after > 0);
}

/* A reader made while no connection can be: 503 with Retry-After, as the
 * main connection's statements; both come back by themselves. */
static void test_reader_away(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    allow_conns(false);
    kill_conns();
    struct acc_sql_conn *r = NULL;
    assert_away(acc_sql_reader_take(db, &r, &err), &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot connect"));
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    assert_away(acc_sql_exec(c, "SELECT 1", &err), &err);
    acc_sql_main_unlock(db);
    allow_conns(true);
    ACC_ASSERT_OK(acc_sql_reader_take(db, &r, &err));
    acc_sql_reader_give(db, r);
    c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(acc_sql_exec(c, "SELECT 1", &err));
    acc_sql_main_unlock(db);
    acc_sql_close(db);
}

static acc_err count_row(void *ctx, const struct acc_ledger_store_booking *b)
{
    (void)b;
    (*(int *)ctx)++;
    return ACC_OK;
}

/* A statement prepared first on a connection the server ended: the code
 * the SQL layer set (503), at the layer and at a store's call site. */
static void test_prepare_away(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    allow_conns(false); /* the server away: the idle connection cannot be made again */
    kill_conns();
    acc_error_clear(&err);
    CU_ASSERT_PTR_NULL(acc_sql_prepare(c, &q_log, &err));
    assert_away(acc_sql_failed(&err), &err);
    CU_ASSERT_EQUAL(acc_sql_failed(NULL), ACC_ERR_STORAGE);
    allow_conns(true);
    ACC_ASSERT_OK(put(c, "p", 1, &err)); /* made again */
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(db, "p"), 1);
    acc_sql_close(db);

    struct acc_ledger_store *ss = NULL;
    ACC_ASSERT_OK(acc_ledger_store_open(url, true, false, &ss, &err));
    allow_conns(false);
    kill_conns();
    int n = 0;
    assert_away(acc_ledger_store_load(ss, count_row, &n, &err), &err);
    allow_conns(true);
    ACC_ASSERT_OK(acc_ledger_store_load(ss, count_row, &n, &err));
    acc_ledger_store_close(ss);
}

static acc_err put_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    return put(c, arg, 7, err);
}

/* Connections idle while the server ended them (a restart, a failover):
 * each is found gone before its first statement and made again, so that
 * statement succeeds (the first request after an outage is no 503): the
 * main connection, a reader of the pool, a writer's, a ledger's. */
static void test_idle_through_restart(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    const struct acc_sql_writer_options wopt = {0};
    struct acc_sql_writer *w = NULL;
    ACC_ASSERT_OK(acc_sql_writer_start(db, &wopt, &w, &err));
    static const struct acc_sql_job job = {put_job, NULL};
    ACC_ASSERT_OK(acc_sql_write(w, &job, "w1", &err));
    struct acc_sql_conn *r = NULL;
    ACC_ASSERT_OK(acc_sql_reader_take(db, &r, &err));
    ACC_ASSERT_OK(acc_sql_exec(r, "SELECT 1", &err));
    acc_sql_reader_give(db, r);
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(put(c, "m1", 1, &err));
    acc_sql_main_unlock(db);
    struct acc_ledger_store *ss = NULL;
    ACC_ASSERT_OK(acc_ledger_store_open(url, true, false, &ss, &err));
    int n = 0;
    ACC_ASSERT_OK(acc_ledger_store_load(ss, count_row, &n, &err));

    for (int round = 0; round < 2; round++) {
        kill_conns(); /* waits until every one has ended */
        c = acc_sql_main_lock(db);
        ACC_ASSERT_OK(put(c, round ? "m3" : "m2", 1, &err));
        acc_sql_main_unlock(db);
        ACC_ASSERT_OK(acc_sql_reader_take(db, &r, &err));
        struct acc_sql_stmt *s = acc_sql_prepare(r, &q_get, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        acc_sql_bind_text(s, "m1");
        bool row = false;
        ACC_ASSERT_OK(acc_sql_step(s, &row, "get", &err));
        CU_ASSERT_TRUE(row);
        acc_sql_done(s);
        acc_sql_reader_give(db, r);
        ACC_ASSERT_OK(acc_sql_write(w, &job, round ? "w3" : "w2", &err));
        ACC_ASSERT_OK(acc_ledger_store_load(ss, count_row, &n, &err));
    }
    CU_ASSERT_EQUAL(get(db, "w3"), 7);
    CU_ASSERT_EQUAL(get(db, "m3"), 1);
    acc_ledger_store_close(ss);
    acc_sql_writer_stop(w);
    acc_sql_close(db);
}

/* A table another connection holds past lock_timeout: 503 (a retry may
 * pass), and the transaction goes on from its savepoint. */
static void test_lock_timeout(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    PGconn *other = PQconnectdb(url);
    CU_ASSERT_EQUAL_FATAL(PQstatus(other), CONNECTION_OK);
    PQclear(PQexec(other, "BEGIN"));
    PGresult *r = PQexec(other, "LOCK TABLE kv IN ACCESS EXCLUSIVE MODE");
    CU_ASSERT_EQUAL(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(acc_sql_exec(c, "SET lock_timeout = 200", &err));
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(acc_sql_savepoint(c, "job", &err));
    assert_away(put(c, "l", 1, &err), &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lock"));
    acc_sql_rollback_to(c, "job");
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_log, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, "after the timeout");
    ACC_ASSERT_OK(acc_sql_run(s, "log", &err));
    ACC_ASSERT_OK(acc_sql_commit(c, &err));
    acc_sql_main_unlock(db);
    PQclear(PQexec(other, "ROLLBACK"));
    r = PQexec(other, "SELECT count(*) FROM log");
    CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 0, 0), "1");
    PQclear(r);
    PQfinish(other);
    acc_sql_close(db);
}

/* The connection lost inside a transaction where libpq alone learns it (a
 * statement let go of): the statements after fail, never run on a new
 * connection outside the transaction, and its COMMIT fails. */
static void test_lost_in_transaction(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    struct acc_sql_stmt *once = NULL;
    ACC_ASSERT_OK(acc_sql_prepare_once(c, "SELECT 1", &once, &err));
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "a", 1, &err));
    kill_conns();
    acc_sql_finalize(once); /* its DEALLOCATE finds the connection gone */
    assert_away(put(c, "b", 2, &err), &err);
    assert_away(acc_sql_commit(c, &err), &err);
    acc_sql_rollback(c);
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(db, "a"), -1);
    CU_ASSERT_EQUAL(get(db, "b"), -1);
    /* and the next transaction is made on a new connection */
    c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "c", 3, &err));
    ACC_ASSERT_OK(acc_sql_commit(c, &err));
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(db, "c"), 3);
    acc_sql_close(db);
}

/* A transaction a read-only server refused (a standby not promoted yet):
 * 503, and it is rolled back on the server, so the connection's next one
 * works. */
static void test_read_only_refused(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(acc_sql_exec(c, "SET TRANSACTION READ ONLY", &err));
    assert_away(put(c, "r", 1, &err), &err);
    acc_sql_rollback(c); /* as a caller whose statement failed does */
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "r", 2, &err));
    ACC_ASSERT_OK(acc_sql_commit(c, &err));
    /* a COMMIT after the failure fails, and rolls back too */
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(acc_sql_exec(c, "SET TRANSACTION READ ONLY", &err));
    assert_away(put(c, "s", 1, &err), &err);
    assert_away(acc_sql_commit(c, &err), &err);
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "s", 2, &err));
    ACC_ASSERT_OK(acc_sql_commit(c, &err));
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(db, "r"), 2);
    CU_ASSERT_EQUAL(get(db, "s"), 2);
    acc_sql_close(db);
}

/* A transaction left idle is ended by the server (the timeout is set on
 * every connection); the connection is made again for the next one. */
static void test_idle_in_transaction(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    struct acc_sql_stmt *s = NULL;
    ACC_ASSERT_OK(acc_sql_prepare_once(
        c, "SELECT current_setting('idle_in_transaction_session_timeout')", &s, &err));
    bool row = false;
    ACC_ASSERT_OK(acc_sql_step(s, &row, "setting", &err));
    CU_ASSERT_TRUE(row);
    CU_ASSERT_STRING_EQUAL(acc_sql_col_text(s, 0), "30s");
    acc_sql_finalize(s);
    ACC_ASSERT_OK(acc_sql_exec(c, "SET idle_in_transaction_session_timeout = 200", &err));
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "i", 1, &err));
    usleep(600 * 1000);
    assert_away(put(c, "j", 2, &err), &err);
    assert_away(acc_sql_commit(c, &err), &err);
    acc_sql_rollback(c);
    ACC_ASSERT_OK(acc_sql_begin(c, ACC_SQL_WRITE, &err));
    ACC_ASSERT_OK(put(c, "k", 3, &err));
    ACC_ASSERT_OK(acc_sql_commit(c, &err));
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(db, "i"), -1);
    CU_ASSERT_EQUAL(get(db, "k"), 3);
    acc_sql_close(db);
}

/* ------------------------------------------------------------- deadlock */

struct crossing {
    struct acc_sql_writer *w;
    atomic_int runs;
    acc_err rc;
    struct acc_error err;
};

static acc_err bump(struct acc_sql_conn *c, const char *k, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_bump, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, k);
    return acc_sql_run(s, "bump", err);
}

/* Row a, then row b: the order opposite to the other program's. */
static acc_err cross_run(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct crossing *x = arg;
    atomic_fetch_add(&x->runs, 1);
    acc_err rc = bump(c, "a", err);
    return rc ? rc : bump(c, "b", err);
}

static void *cross_write(void *arg)
{
    static const struct acc_sql_job job = {cross_run, NULL};
    struct crossing *x = arg;
    x->rc = acc_sql_write(x->w, &job, x, &x->err);
    return NULL;
}

/* Connections of the test's database that wait for a lock. */
static int lock_waiters(void)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' AND "
             "wait_event_type = 'Lock'",
             dbname);
    PGresult *r = PQexec(admin, sql);
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

/* The writer's batch holds row a and waits for b; another program holds b
 * and then asks for a.  The writer waited first, so its server process
 * finds the deadlock and ends its transaction: the batch is rolled back
 * whole (a savepoint would keep a locked, and meet the deadlock again), the
 * other program goes on, and the batch runs again: the write succeeds and
 * is stored once. */
static void test_deadlock_runs_again(void)
{
    struct acc_sql *db = open_db();
    struct acc_error err;
    struct crossing x = {.runs = 0};
    const struct acc_sql_writer_options wopt = {0};
    ACC_ASSERT_OK(acc_sql_writer_start(db, &wopt, &x.w, &err));
    PGconn *other = PQconnectdb(url);
    CU_ASSERT_EQUAL_FATAL(PQstatus(other), CONNECTION_OK);
    PGresult *r0;
    /* only the writer's server process looks for the deadlock: a slow
     * test thread cannot make this side the victim */
    r0 = PQexec(other, "SET deadlock_timeout = '1min'");
    CU_ASSERT_EQUAL(PQresultStatus(r0), PGRES_COMMAND_OK);
    PQclear(r0);
    PQclear(PQexec(other, "INSERT INTO kv (k, v) VALUES ('a', 0), ('b', 0)"));
    PQclear(PQexec(other, "BEGIN"));
    PGresult *r = PQexec(other, "UPDATE kv SET v = v + 10 WHERE k = 'b'");
    CU_ASSERT_EQUAL(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);

    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, cross_write, &x), 0);
    for (int i = 0; i < 500 && lock_waiters() < 1; i++) /* the writer waits for b */
        usleep(10 * 1000);
    CU_ASSERT_EQUAL(lock_waiters(), 1);
    CU_ASSERT_EQUAL(PQsendQuery(other, "UPDATE kv SET v = v + 10 WHERE k = 'a'"), 1);
    /* the other program is not the one ended: its update passes */
    while ((r = PQgetResult(other))) {
        CU_ASSERT_EQUAL(PQresultStatus(r), PGRES_COMMAND_OK);
        PQclear(r);
    }
    PQclear(PQexec(other, "COMMIT"));
    pthread_join(th, NULL);
    if (x.rc)
        fprintf(stderr, "%s\n", x.err.msg);
    CU_ASSERT_EQUAL(x.rc, ACC_OK);
    CU_ASSERT_EQUAL(atomic_load(&x.runs), 2);
    CU_ASSERT_EQUAL(get(db, "a"), 11);
    CU_ASSERT_EQUAL(get(db, "b"), 11);
    PQclear(PQexec(other, "DELETE FROM kv WHERE k IN ('a', 'b')"));
    PQfinish(other);
    acc_sql_writer_stop(x.w);
    acc_sql_close(db);
}

static const struct acc_test_case tests[] = {
    {"a reader made while the server is away", test_reader_away},
    {"a statement prepared on a connection gone", test_prepare_away},
    {"connections idle through a restart", test_idle_through_restart},
    {"a lock held past lock_timeout", test_lock_timeout},
    {"a connection lost inside a transaction", test_lost_in_transaction},
    {"a transaction a read-only server refused", test_read_only_refused},
    {"a transaction left idle", test_idle_in_transaction},
    {"a batch ended to break a deadlock runs again", test_deadlock_runs_again},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sql on PostgreSQL", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
