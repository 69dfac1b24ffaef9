/* SPDX-License-Identifier: Apache-2.0 */
/* test_sql.c - the SQL layer (lib/sql) on its own: migrations (applied
 * once, in order, a newer schema refused, a failing one leaving nothing),
 * statements (slots, binds in order, a unique key held twice), reads on
 * the readers' pool, and the group-commit writer (awaited and queued
 * writes, tickets, a failing write that spoils no other, order), and one
 * writer per database file (a second open refused, naming the holder's pid;
 * readers that take no lock not refused; the lock gone with its holder),
 * and snapshots (a copy in memory, made beside the writer), and a
 * database's password never shown (libpq's key=value settings refused, a
 * URL's password parameters and libpq's quoting of a broken URL hidden). */
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbname.h"
#include "sql.h"
#include "sql_writer.h"
#include "testutil.h"

static const struct acc_embedded two[] = {
    {"0001_kv.sql", "CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);", 0},
    {"0002_log.sql", "CREATE TABLE log (seq INTEGER PRIMARY KEY, what TEXT NOT NULL);", 0},
    {NULL, NULL, 0},
};

enum { Q_PUT, Q_GET, Q_LOG, Q_COUNT_LOG, Q__COUNT };

static const struct acc_sql_query q_put = {Q_PUT, "INSERT INTO kv (k, v) VALUES (?, ?)"},
                                  q_get = {Q_GET, "SELECT v FROM kv WHERE k = ?"},
                                  q_log = {Q_LOG, "INSERT INTO log (what) VALUES (?)"},
                                  q_count_log = {Q_COUNT_LOG, "SELECT count(*) FROM log"};

static char path[512];

static acc_err open_db(const struct acc_embedded *m, size_t n, struct acc_sql **db,
                       struct acc_error *err)
{
    const struct acc_sql_options opt = {
        .path = path,
        .label = "test",
        .program = "test_sql",
        .migrations = m,
        .n_migrations = n,
        .n_slots = Q__COUNT,
    };
    return acc_sql_open(&opt, db, err);
}

static int setup(void)
{
    snprintf(path, sizeof path, "%s/sql.db", acc_test_tmpdir());
    return 0;
}

static void fresh(void)
{
    char p[600];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* v of key k, -1 when there is none. */
static int64_t get(struct acc_sql_conn *c, const char *k)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_get, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, k);
    bool row = false;
    ACC_ASSERT_OK(acc_sql_bound(s, "get", NULL));
    ACC_ASSERT_OK(acc_sql_step(s, &row, "get", NULL));
    int64_t v = row ? acc_sql_col_i64(s, 0) : -1;
    acc_sql_done(s);
    return v;
}

static acc_err put(struct acc_sql_conn *c, const char *k, int64_t v, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put, err);
    if (!s)
        return ACC_ERR_STORAGE;
    acc_sql_bind_text(s, k);
    acc_sql_bind_i64(s, v);
    return acc_sql_run(s, "put", err);
}

static void test_migrations(void)
{
    fresh();
    struct acc_sql *db = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(open_db(two, 1, &db, &err));
    CU_ASSERT_EQUAL(acc_sql_schema_version(db), 1);
    ACC_ASSERT_OK(put(acc_sql_main_lock(db), "a", 1, &err));
    acc_sql_main_unlock(db);
    acc_sql_close(db);

    /* The next program adds the second migration; the first is not run again. */
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    CU_ASSERT_EQUAL(acc_sql_schema_version(db), 2);
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(db), "a"), 1);
    acc_sql_main_unlock(db);
    acc_sql_close(db);

    /* An older program refuses the newer database, naming both versions. */
    CU_ASSERT_EQUAL(open_db(two, 1, &db, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "schema version 2 is newer than this test_sql (1)"));

    /* A migration that fails leaves the version and the schema as they were. */
    const struct acc_embedded bad[] = {
        two[0], two[1], {"0003_bad.sql", "CREATE TABLE t (x); CREATE TABLE t (y);", 0}};
    CU_ASSERT_EQUAL(open_db(bad, 3, &db, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "migration 0003_bad.sql"));
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    CU_ASSERT_EQUAL(acc_sql_schema_version(db), 2);
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    CU_ASSERT_EQUAL(acc_sql_exec(c, "SELECT * FROM t", &err), ACC_ERR_STORAGE);
    acc_sql_main_unlock(db);
    acc_sql_close(db);

    /* A URL names a backend this build does not have: refused before any file is made. */
    const struct acc_sql_options url = {.path = "mysql://db.example.org/accord",
                                        .label = "database"};
    CU_ASSERT_EQUAL(acc_sql_open(&url, &db, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no backend"));
    /* PostgreSQL's, on a server that is not there: a clear error that does
     * not show the password. */
    const struct acc_sql_options pg = {
        .path = "postgresql://accord:s3cret@/accord?host=/nonexistent-dir&port=1",
        .label = "database"};
    CU_ASSERT_EQUAL(acc_sql_open(&pg, &db, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot connect"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "postgresql://accord@/accord"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
}

/* What names a database is never shown with its password: libpq's
 * key=value settings are refused (SQLite would have made a file of that
 * name) saying why; a URL's password parameters are left out; a URL libpq
 * cannot parse, which libpq quotes back whole, has its password hidden. */
static void test_no_password_shown(void)
{
    struct acc_sql *db = NULL;
    struct acc_error err;
    const struct acc_sql_options kv = {
        .path = "host=/tmp port=5 dbname=x user=u password=s3cret sslpassword='k3y k3y'",
        .label = "database"};
    CU_ASSERT_EQUAL(acc_sql_open(&kv, &db, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "database host=/tmp port=5 dbname=x user=u: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "key=value settings are not taken"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "postgresql://"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "k3y"));
    CU_ASSERT_NOT_EQUAL(access("host=", F_OK), 0);
    /* A copy of such a "file" is refused the same way. */
    CU_ASSERT_EQUAL(acc_sql_copy_file("calendar", kv.path, "/nonexistent/x", &err),
                    ACC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));

    const struct acc_sql_options param = {
        .path = "postgresql://accord@/accord?host=/nonexistent-dir&port=1&password=s3cret",
        .label = "database"};
    CU_ASSERT_EQUAL(acc_sql_open(&param, &db, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "postgresql://accord@/accord?host=/nonexistent-dir"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));

    const struct acc_sql_options broken = {.path = "postgresql://accord:s3cret@[::1/accord",
                                           .label = "database"};
    CU_ASSERT_EQUAL(acc_sql_open(&broken, &db, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot connect"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
}

static void test_statements(void)
{
    fresh();
    struct acc_sql *db;
    struct acc_error err;
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    struct acc_sql_conn *c = acc_sql_main_lock(db);
    ACC_ASSERT_OK(put(c, "a", 1, &err));
    /* A key held twice is KeyReused, and the table keeps the first. */
    CU_ASSERT_EQUAL(put(c, "a", 2, &err), ACC_ERR_KEY_REUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "test "));
    CU_ASSERT_EQUAL(get(c, "a"), 1);
    /* NOT NULL refuses a NULL: a storage error, not a key. */
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, "b");
    acc_sql_bind_null(s);
    CU_ASSERT_EQUAL(acc_sql_run(s, "put", &err), ACC_ERR_STORAGE);
    CU_ASSERT_EQUAL(get(c, "b"), -1);
    /* A use that gave up after its first bind (a failure in between)
     * leaves the next use of the statement binding from the first again. */
    s = acc_sql_prepare(c, &q_put, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, "abandoned");
    ACC_ASSERT_OK(put(c, "c", 3, &err));
    CU_ASSERT_EQUAL(get(c, "c"), 3);
    CU_ASSERT_EQUAL(get(c, "abandoned"), -1);
    /* So does one whose row was left unread (stepped, never done). */
    s = acc_sql_prepare(c, &q_get, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    acc_sql_bind_text(s, "c");
    bool stepped = false;
    ACC_ASSERT_OK(acc_sql_step(s, &stepped, "get", &err));
    CU_ASSERT_TRUE(stepped);
    CU_ASSERT_EQUAL(get(c, "a"), 1);
    /* A slot beyond n_slots is a bug, said as one. */
    const struct acc_sql_query beyond = {Q__COUNT, "SELECT 1"};
    CU_ASSERT_PTR_NULL(acc_sql_prepare(c, &beyond, &err));
    CU_ASSERT_EQUAL(err.code, ACC_ERR_INTERNAL);
    /* A statement prepared once; bad SQL is a storage error naming "prepare". */
    CU_ASSERT_EQUAL(acc_sql_prepare_once(c, "SELEC nothing", &s, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "prepare"));
    ACC_ASSERT_OK(acc_sql_prepare_once(c, "SELECT ?2 || ?1", &s, &err));
    acc_sql_bind_text(s, "x");
    acc_sql_bind_text(s, "y");
    bool row;
    ACC_ASSERT_OK(acc_sql_step(s, &row, "concat", &err));
    CU_ASSERT_TRUE(row);
    CU_ASSERT_STRING_EQUAL(acc_sql_col_text(s, 0), "yx");
    acc_sql_finalize(s);
    acc_sql_main_unlock(db);

    /* A reader in a read transaction sees what was committed. */
    struct acc_sql_conn *r;
    ACC_ASSERT_OK(acc_sql_read_begin(db, &r, &err));
    CU_ASSERT_EQUAL(get(r, "a"), 1);
    acc_sql_read_end(db, r);
    acc_sql_close(db);
}

/* ----------------------------------------------------------------- writer */

struct log_arg {
    char what[32];
    bool fail;
};

static acc_err log_run(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct log_arg *a = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_log, err);
    if (!s)
        return ACC_ERR_STORAGE;
    acc_sql_bind_text(s, a->what);
    acc_err rc = acc_sql_run(s, "log", err);
    if (!rc && a->fail)
        rc = acc_error_set(err, ACC_ERR_INVALID, "%s fails after its insert", a->what);
    return rc;
}

static int released;

static void log_release(void *arg)
{
    released++;
    free(arg);
}

static const struct acc_sql_job log_job = {log_run, log_release};
static const struct acc_sql_job log_borrowed = {log_run, NULL};

static struct log_arg *log_new(const char *what, bool fail)
{
    struct log_arg *a = calloc(1, sizeof *a);
    snprintf(a->what, sizeof a->what, "%s", what);
    a->fail = fail;
    return a;
}

static int64_t count_log(struct acc_sql *db)
{
    struct acc_sql_conn *r;
    ACC_ASSERT_OK(acc_sql_reader_take(db, &r, NULL));
    struct acc_sql_stmt *s = acc_sql_prepare(r, &q_count_log, NULL);
    bool row = false;
    ACC_ASSERT_OK(acc_sql_step(s, &row, "count", NULL));
    int64_t n = row ? acc_sql_col_i64(s, 0) : -1;
    acc_sql_done(s);
    acc_sql_reader_give(db, r);
    return n;
}

static void test_writer(void)
{
    fresh();
    released = 0;
    struct acc_sql *db;
    struct acc_sql_writer *w;
    struct acc_error err;
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    const struct acc_sql_writer_options wo = {.linger_us = 1000, .bound_wal = true};
    ACC_ASSERT_OK(acc_sql_writer_start(db, &wo, &w, &err));

    /* Queued writes with and without tickets, one of them failing: it alone
     * is undone, and every argument handed over is released once. */
    struct acc_sql_ticket *t1, *t2;
    ACC_ASSERT_OK(acc_sql_write_queue(w, &log_job, log_new("one", false), &t1, &err));
    ACC_ASSERT_OK(acc_sql_write_queue(w, &log_job, log_new("two", true), &t2, &err));
    ACC_ASSERT_OK(acc_sql_write_queue(w, &log_job, log_new("three", false), NULL, &err));
    struct acc_sql_ticket *t4;
    ACC_ASSERT_OK(acc_sql_write_queue(w, &log_job, log_new("four", false), &t4, &err));
    acc_sql_write_forget(w, t4);
    ACC_ASSERT_OK(acc_sql_write_wait(w, t1, &err));
    CU_ASSERT_EQUAL(acc_sql_write_wait(w, t2, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "two fails"));
    /* An awaited write commits every write queued before it. */
    struct log_arg five = {"five", false};
    ACC_ASSERT_OK(acc_sql_write(w, &log_borrowed, &five, &err));
    CU_ASSERT_EQUAL(count_log(db), 4);
    CU_ASSERT_EQUAL(released, 4); /* the four handed over */
    /* In the order they were queued. */
    struct acc_sql_conn *r;
    struct acc_sql_stmt *s;
    ACC_ASSERT_OK(acc_sql_reader_take(db, &r, &err));
    ACC_ASSERT_OK(acc_sql_prepare_once(r,
                                       "SELECT group_concat(what, ' ') FROM "
                                       "(SELECT what FROM log ORDER BY seq)",
                                       &s, &err));
    bool row;
    ACC_ASSERT_OK(acc_sql_step(s, &row, "order", &err));
    CU_ASSERT_STRING_EQUAL(acc_sql_col_text(s, 0), "one three four five");
    acc_sql_finalize(s);
    acc_sql_reader_give(db, r);

    /* Queued writes still waiting at the stop are committed by it. */
    ACC_ASSERT_OK(acc_sql_write_queue(w, &log_job, log_new("six", false), NULL, &err));
    acc_sql_writer_stop(w);
    CU_ASSERT_EQUAL(count_log(db), 5);
    CU_ASSERT_EQUAL(released, 5);
    acc_sql_close(db);
}

/* The lock file's text: the holder's pid, "" when none holds it. */
static void lock_text(char *out, size_t size)
{
    char p[600];
    snprintf(p, sizeof p, "%s.lock", path);
    out[0] = '\0';
    FILE *f = fopen(p, "r");
    if (f) {
        size_t n = fread(out, 1, size - 1, f);
        out[n] = '\0';
        fclose(f);
    }
}

/* A reader that takes no lock, as the sqlite3 shell: k's value, or -1. */
static int64_t shell_get(const char *k)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *s = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT v FROM kv WHERE k = ?", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_bind_text(s, 1, k, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

/* A second open of a database file is refused while the first has it: in
 * this process (the lock is per open, not per process), through a link
 * (symbolic or hard), and in another process; the message names the
 * database, the holder's pid and the lock file (or, through a hard link,
 * the name the holder has the file by).  Readers are not refused; closing
 * lets go. */
static void test_one_writer(void)
{
    fresh();
    struct acc_sql *db = NULL, *db2 = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    ACC_ASSERT_OK(put(acc_sql_main_lock(db), "a", 7, &err));
    acc_sql_main_unlock(db);
    char text[64], want[PATH_MAX + 1400];
    lock_text(text, sizeof text);
    snprintf(want, sizeof want, "%ld\n", (long)getpid());
    CU_ASSERT_STRING_EQUAL(text, want);

    CU_ASSERT_EQUAL(open_db(two, 2, &db2, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(db2);
    snprintf(want, sizeof want, "test %s is in use by another program (pid %ld, lock file %s.lock)",
             path, (long)getpid(), path);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    /* A symbolic link to the database is the same database. */
    char link_path[600];
    snprintf(link_path, sizeof link_path, "%s-link", path);
    unlink(link_path);
    CU_ASSERT_EQUAL_FATAL(symlink(path, link_path), 0);
    const struct acc_sql_options via_link = {.path = link_path, .label = "test"};
    CU_ASSERT_EQUAL(acc_sql_open(&via_link, &db2, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in use by another program"));
    unlink(link_path);
    /* A hard link is another name of the same file, with a lock file of
     * its own: the file's own lock refuses it, before SQLite would make a
     * write-ahead log of its own beside it.  The first open writes on (the
     * refusal dropped none of its SQLite locks). */
    char hard[600], real[PATH_MAX], side[700];
    snprintf(hard, sizeof hard, "%s-hard", path);
    unlink(hard);
    CU_ASSERT_EQUAL_FATAL(link(path, hard), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(path, real));
    const struct acc_sql_options via_hard = {.path = hard, .label = "test"};
    CU_ASSERT_EQUAL(acc_sql_open(&via_hard, &db2, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NULL(db2);
    snprintf(want, sizeof want,
             "test %s is in use by another program (pid %ld, which has the same file open as %s)",
             hard, (long)getpid(), path);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    snprintf(side, sizeof side, "%s-wal", hard);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
    ACC_ASSERT_OK(put(acc_sql_main_lock(db), "b", 8, &err));
    acc_sql_main_unlock(db);
    /* Another process: refused before it touches the database, by its
     * name and by the other name (the holder named by /proc). */
    snprintf(want, sizeof want,
             "test %s is in use by another program (pid %ld, which has the same file open as %s)",
             hard, (long)getpid(), real);
    pid_t child = fork();
    if (child == 0)
        _exit(open_db(two, 2, &db2, &err) == ACC_ERR_STORAGE &&
                      strstr(err.msg, "in use by another program") &&
                      acc_sql_open(&via_hard, &db2, &err) == ACC_ERR_STORAGE &&
                      strstr(err.msg, want)
                  ? 0
                  : 1);
    int status = -1;
    CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
    unlink(hard);
    /* A reader that takes no lock reads on. */
    CU_ASSERT_EQUAL(shell_get("a"), 7);
    /* In memory: nothing to share, never refused. */
    const struct acc_sql_options mem = {.path = ":memory:", .label = "test"};
    struct acc_sql *m1 = NULL, *m2 = NULL;
    ACC_ASSERT_OK(acc_sql_open(&mem, &m1, &err));
    ACC_ASSERT_OK(acc_sql_open(&mem, &m2, &err));
    acc_sql_close(m1);
    acc_sql_close(m2);

    acc_sql_close(db);
    lock_text(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, ""); /* no pid of a process that let go */
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(db), "a"), 7);
    acc_sql_main_unlock(db);
    acc_sql_close(db);
    /* A failed open lets go too (a schema newer than the program). */
    CU_ASSERT_EQUAL(open_db(two, 1, &db, &err), ACC_ERR_STORAGE);
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    acc_sql_close(db);
}

/* A database not made yet, named twice: by a symbolic link that points
 * nowhere yet, and by the file it will be.  The first open makes it; the
 * second, by the other name (another lock file), is refused all the same. */
static void test_one_writer_new_file(void)
{
    char target[600], dangling[600];
    snprintf(target, sizeof target, "%s-new", path);
    snprintf(dangling, sizeof dangling, "%s-to-new", path);
    unlink(target);
    unlink(dangling);
    CU_ASSERT_EQUAL_FATAL(symlink(target, dangling), 0);
    const struct acc_sql_options by_link = {.path = dangling, .label = "test"},
                                 by_file = {.path = target, .label = "test"};
    struct acc_sql *db = NULL, *db2 = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_sql_open(&by_link, &db, &err));
    CU_ASSERT_EQUAL(access(target, F_OK), 0);
    CU_ASSERT_EQUAL(acc_sql_open(&by_file, &db2, &err), ACC_ERR_STORAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in use by another program"));
    CU_ASSERT_PTR_NULL(db2);
    acc_sql_close(db);
    /* Closed, it lets go of the file under every name. */
    ACC_ASSERT_OK(acc_sql_open(&by_file, &db2, &err));
    acc_sql_close(db2);
    unlink(dangling);
    unlink(target);
}

/* A holder killed with SIGKILL leaves no lock behind. */
static void test_holder_killed(void)
{
    fresh();
    int ready[2];
    CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        struct acc_sql *db = NULL;
        char ok = open_db(two, 2, &db, NULL) == ACC_OK ? 'y' : 'n';
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char ok = 0;
    CU_ASSERT_EQUAL(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    CU_ASSERT_EQUAL(ok, 'y');
    struct acc_sql *db = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL(open_db(two, 2, &db, &err), ACC_ERR_STORAGE);
    char want[64];
    snprintf(want, sizeof want, "(pid %ld,", (long)child);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    ACC_ASSERT_OK(open_db(two, 2, &db, &err));
    acc_sql_close(db);
}

/* A snapshot: a copy in memory of the file as it was at open, made beside
 * the writer that holds it; the two go their own ways after.  A snapshot of
 * a file not made yet is empty and makes no file. */
static void test_snapshot(void)
{
    fresh();
    struct acc_sql *db = NULL, *snap = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(open_db(two, 1, &db, &err));
    ACC_ASSERT_OK(put(acc_sql_main_lock(db), "a", 7, &err));
    acc_sql_main_unlock(db);
    const struct acc_sql_options so = {.path = path,
                                       .label = "test",
                                       .migrations = two,
                                       .n_migrations = 2,
                                       .n_slots = Q__COUNT,
                                       .snapshot = true};
    ACC_ASSERT_OK(acc_sql_open(&so, &snap, &err));
    CU_ASSERT_EQUAL(acc_sql_schema_version(snap), 2); /* the copy migrated, not the file */
    struct acc_sql_conn *c = acc_sql_main_lock(snap);
    CU_ASSERT_EQUAL(get(c, "a"), 7);
    ACC_ASSERT_OK(put(c, "b", 8, &err));
    acc_sql_main_unlock(snap);
    ACC_ASSERT_OK(put(acc_sql_main_lock(db), "c", 9, &err));
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(snap), "c"), -1);
    acc_sql_main_unlock(snap);
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(db), "b"), -1);
    acc_sql_main_unlock(db);
    CU_ASSERT_EQUAL(acc_sql_schema_version(db), 1);
    struct acc_sql_conn *other = NULL;
    CU_ASSERT_EQUAL(acc_sql_reader_take(snap, &other, &err), ACC_ERR_INTERNAL);
    acc_sql_close(snap);
    acc_sql_close(db);
    /* Without the writer too, and nothing is left beside the file. */
    ACC_ASSERT_OK(acc_sql_open(&so, &snap, &err));
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(snap), "c"), 9);
    acc_sql_main_unlock(snap);
    acc_sql_close(snap);
    char p[600];
    snprintf(p, sizeof p, "%s-wal", path);
    CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s-shm", path);
    CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
    fresh();
    ACC_ASSERT_OK(acc_sql_open(&so, &snap, &err));
    CU_ASSERT_EQUAL(get(acc_sql_main_lock(snap), "a"), -1);
    acc_sql_main_unlock(snap);
    acc_sql_close(snap);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
}

/* Which backend a location names, and what it can do: the one place that
 * reads a location (sql.h, "backends"). */
static void test_drivers(void)
{
    struct acc_error err = {0};
    CU_ASSERT_TRUE(acc_sql_is_url("postgresql://u@h/db"));
    CU_ASSERT_TRUE(acc_sql_is_url("mysql://h/db"));
    CU_ASSERT_FALSE(acc_sql_is_url("/var/lib/accord/accord.db"));
    CU_ASSERT_FALSE(acc_sql_is_url("/data/a://b.db")); /* a path: no scheme before it */
    CU_ASSERT_FALSE(acc_sql_is_url("://x"));
    CU_ASSERT_FALSE(acc_sql_is_url(":memory:"));

    const struct acc_sql_driver *d = acc_sql_driver_of("accord.db", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(d->name, "sqlite");
    CU_ASSERT_TRUE(acc_sql_location_can("accord.db", ACC_SQL_CAP_FILE | ACC_SQL_CAP_ONE_WRITER |
                                                         ACC_SQL_CAP_ONLINE_BACKUP));
    CU_ASSERT_FALSE(acc_sql_location_can("accord.db", ACC_SQL_CAP_SERVER_LOCKS));
    CU_ASSERT_FALSE(acc_sql_location_can("accord.db", ACC_SQL_CAP_DUMP));
    /* in memory: SQLite's, but no file, nothing to copy */
    CU_ASSERT_FALSE(acc_sql_location_can(":memory:", ACC_SQL_CAP_FILE));
    CU_ASSERT_FALSE(acc_sql_location_can(":memory:", ACC_SQL_CAP_ONLINE_BACKUP));

    for (int i = 0; i < 2; i++) {
        const char *url = i ? "POSTGRES://u:secret@h/db" : "postgresql://u:secret@h1,h2/db";
        d = acc_sql_driver_of(url, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_STRING_EQUAL(d->name, "postgresql");
        CU_ASSERT_TRUE(acc_sql_location_can(url, ACC_SQL_CAP_SERVER_LOCKS | ACC_SQL_CAP_DUMP));
        CU_ASSERT_FALSE(acc_sql_location_can(url, ACC_SQL_CAP_FILE));
        CU_ASSERT_FALSE(acc_sql_location_can(url, ACC_SQL_CAP_ONE_WRITER));
        /* a store only SQLite serves refuses it, without its password */
        CU_ASSERT_EQUAL(acc_sql_need_file("the journal", url, &err), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the journal is kept in an SQLite file only"));
        CU_ASSERT_PTR_NULL(strstr(err.msg, "secret"));
    }
    CU_ASSERT_EQUAL(acc_sql_need_file("the journal", "/tmp/x.db", &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_sql_need_file("the journal", ":memory:", &err), ACC_OK);

    /* a scheme no driver takes; libpq's key=value settings */
    CU_ASSERT_PTR_NULL(acc_sql_driver_of("mysql://u:secret@h/db", &err));
    CU_ASSERT_EQUAL(err.code, ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no backend of this build takes a mysql:// URL"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "secret"));
    CU_ASSERT_FALSE(acc_sql_location_can("mysql://h/db", 0));
    CU_ASSERT_PTR_NULL(acc_sql_driver_of("host=h dbname=x password=secret", &err));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "secret"));
    CU_ASSERT_EQUAL(acc_sql_need_file("the journal", "host=h password=secret", &err),
                    ACC_ERR_CONFIG);

    /* another database on the same server: user, hosts, parameters kept */
    char *u = acc_db_url_with_name("postgresql://u@h1:5,h2/accord?sslmode=require", "t_1");
    CU_ASSERT_STRING_EQUAL(u, "postgresql://u@h1:5,h2/t_1?sslmode=require");
    free(u);
    u = acc_db_url_with_name("postgresql:///accord?host=/tmp&port=15432", "new");
    CU_ASSERT_STRING_EQUAL(u, "postgresql:///new?host=/tmp&port=15432");
    free(u);
    u = acc_db_url_with_name("postgresql://h", "x");
    CU_ASSERT_STRING_EQUAL(u, "postgresql://h/x");
    free(u);
    CU_ASSERT_PTR_NULL(acc_db_url_with_name("accord.db", "x"));
    /* a schema of its own in the same database */
    u = acc_sql_location_in_schema("postgresql://u@h/db", "ledger_a");
    CU_ASSERT_STRING_EQUAL(u, "postgresql://u@h/db?options=-csearch_path%3Dledger_a");
    free(u);
    u = acc_sql_location_in_schema("postgresql:///db?host=/tmp", "ledger_b");
    CU_ASSERT_STRING_EQUAL(u, "postgresql:///db?host=/tmp&options=-csearch_path%3Dledger_b");
    free(u);

    /* a file is copied, not dumped, and put back in place, not restored */
    char file[300], dest[320];
    snprintf(file, sizeof file, "%s/drivers.db", acc_test_tmpdir());
    snprintf(dest, sizeof dest, "%s.dump", file);
    struct acc_sql_options o = {.path = file, .label = "kv", .n_slots = 1};
    struct acc_sql *db = NULL;
    ACC_ASSERT_OK(acc_sql_open(&o, &db, &err));
    CU_ASSERT_TRUE(acc_sql_can(db, ACC_SQL_CAP_FILE | ACC_SQL_CAP_ONLINE_BACKUP));
    CU_ASSERT_FALSE(acc_sql_can(db, ACC_SQL_CAP_DUMP));
    CU_ASSERT_STRING_EQUAL(acc_sql_driver(db)->name, "sqlite");
    CU_ASSERT_EQUAL(acc_sql_dump(db, dest, NULL, NULL, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_NOT_EQUAL(access(dest, F_OK), 0);
    acc_sql_close(db);
    CU_ASSERT_EQUAL(acc_sql_restore(file, dest, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not from a dump"));
    CU_ASSERT_EQUAL(acc_sql_restore("mysql://h/db", dest, &err), ACC_ERR_CONFIG);
    unlink(file);
}

static const struct acc_test_case tests[] = {
    {"backends: which, and what they can do", test_drivers},
    {"migrations", test_migrations},
    {"no password shown", test_no_password_shown},
    {"statements and readers", test_statements},
    {"group-commit writer", test_writer},
    {"one writer per database file", test_one_writer},
    {"one writer per database file not made yet", test_one_writer_new_file},
    {"a killed holder leaves no lock", test_holder_killed},
    {"a snapshot beside the writer", test_snapshot},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sql", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
