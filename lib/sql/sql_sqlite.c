/* SPDX-License-Identifier: Apache-2.0 */
/* sql_sqlite.c - the SQLite backend of the SQL layer (sql_internal.h): the
 * project's pragmas, WAL, the schema version in PRAGMA user_version, and
 * the bound on the write-ahead log that a writer keeps.  sqlite3 types
 * never leave this file. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/log.h"
#include "sql_internal.h"

/* How long one full (TRUNCATE) checkpoint may wait for readers to finish
 * with the log; the writer holds its writes meanwhile, then tries again. */
#define WAL_WAIT_MS 1000

struct lite {
    sqlite3 *db;
    /* the writer's connection, when it bounds the log */
    int wal_frames;      /* frames in the log after the last commit */
    int64_t frame_bytes; /* page size + frame header */
    bool wal_warned;
};

static enum sql_rc rc_of(int rc)
{
    if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return SQL_DUPLICATE;
    switch (rc & 0xff) {
    case SQLITE_OK:
        return SQL_OK;
    case SQLITE_ROW:
        return SQL_ROW;
    case SQLITE_DONE:
        return SQL_DONE;
    case SQLITE_NOMEM:
        return SQL_NOMEM;
    default:
        return SQL_ERROR;
    }
}

static void setup_once(void)
{
    /* SQLite's memory statistics take a global mutex on every allocation:
     * with a writer, readers and a checkpointer that is pure contention. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static void lite_disconnect(void *h)
{
    struct lite *l = h;
    sqlite3_close(l->db);
    free(l);
}

static enum sql_rc lite_exec(void *h, const char *sql, const char **msg)
{
    struct lite *l = h;
    int rc = sqlite3_exec(l->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK && msg)
        *msg = sqlite3_errmsg(l->db);
    enum sql_rc r = rc_of(rc);
    return r == SQL_ROW || r == SQL_DONE ? SQL_ERROR : r;
}

static acc_err lite_connect(const struct acc_sql_options *opt, void **h, struct acc_error *why)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup_once);
    struct lite *l = calloc(1, sizeof *l);
    if (!l)
        return acc_error_set(why, ACC_ERR_NOMEM, "out of memory");
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(opt->path, &l->db, flags, NULL) != SQLITE_OK) {
        acc_error_set(why, ACC_ERR_STORAGE, "%s", l->db ? sqlite3_errmsg(l->db) : "cannot open");
        lite_disconnect(l);
        return ACC_ERR_STORAGE;
    }
    sqlite3_busy_timeout(l->db, ACC_SQL_BUSY_MS);
    sqlite3_extended_result_codes(l->db, 1);
    /* journal_size_limit: a log that was reset is cut back to the limit
     * instead of keeping the size of its largest day.  temp_store=MEMORY:
     * the undo record of a savepoint (the writer runs each job in one)
     * stays in memory instead of spilling past 64 KiB into a temporary
     * file; nothing in it needs to survive a crash.  cache_size: the
     * connection's page cache, bounded (sql.h). */
    char pragmas[256], cache[48] = "";
    if (opt->cache_kib)
        snprintf(cache, sizeof cache, " PRAGMA cache_size=-%u;", opt->cache_kib);
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA synchronous=%s; PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=%lld; "
             "PRAGMA temp_store=MEMORY;%s",
             opt->durable ? "FULL" : "NORMAL", (long long)opt->wal_limit, cache);
    const char *msg = NULL;
    enum sql_rc rc = lite_exec(l, pragmas, &msg);
    if (rc != SQL_OK) {
        acc_error_set(why, rc == SQL_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE, "%s", msg);
        lite_disconnect(l);
        return rc == SQL_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE;
    }
    *h = l;
    return ACC_OK;
}

static const char *lite_errmsg(void *h)
{
    struct lite *l = h;
    return l && l->db ? sqlite3_errmsg(l->db) : "cannot open";
}

static int64_t lite_changes(void *h)
{
    return sqlite3_changes(((struct lite *)h)->db);
}

/* One row of one integer column (a pragma). */
static acc_err pragma_int(struct lite *l, const char *sql, int64_t *out, struct acc_error *why)
{
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    if (sqlite3_prepare_v2(l->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW)
        rc = acc_error_set(why, ACC_ERR_STORAGE, "%s: %s", sql, sqlite3_errmsg(l->db));
    else
        *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc;
}

/* The copy goes through SQLite, as a reader of the file: a database in WAL
 * mode is the file and its log together, and a reader takes only a shared
 * lock, so the file's owner writes on.  The connection is not a read-only
 * one, which would leave behind the -wal and -shm files it had to make
 * when the owner is not running; this one, the last to close then, removes
 * them as the owner does.  It writes nothing of its own (as the last to
 * close, it folds a log a crash left back into the file, as the owner would
 * at its next start). */
static acc_err lite_copy_in(void *h, const char *path, struct acc_error *why)
{
    struct lite *l = h;
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return ACC_OK; /* not made yet: empty */
    sqlite3 *src = NULL;
    int rc = sqlite3_open_v2(path, &src, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_backup *b = NULL;
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(src, ACC_SQL_BUSY_MS);
        b = sqlite3_backup_init(l->db, "main", src, "main");
        rc = b ? SQLITE_OK : sqlite3_errcode(l->db);
    }
    /* Busy while the owner checkpoints: again, for the busy time at most. */
    for (int waited = 0; b && waited < ACC_SQL_BUSY_MS; waited += 10) {
        rc = sqlite3_backup_step(b, -1);
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
            break;
        sqlite3_sleep(10);
    }
    if (b)
        sqlite3_backup_finish(b);
    acc_err r = ACC_OK;
    if (rc != SQLITE_OK && rc != SQLITE_DONE)
        r = acc_error_set(why, rc_of(rc) == SQL_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE, "copy: %s",
                          src ? sqlite3_errmsg(src) : sqlite3_errstr(rc));
    sqlite3_close(src);
    return r;
}

/* Pages a backup copies per step: between steps the connection is free
 * for nothing else, but the copy can be given up (a failure) at once. */
#define BACKUP_PAGES 256

/* One row of one integer column of sql on l (the snapshot's first read). */
static acc_err first_int(struct lite *l, const char *sql, int64_t *out, struct acc_error *why)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(l->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    acc_err r = ACC_OK;
    if (rc != SQLITE_ROW)
        r = acc_error_set(why, rc_of(rc) == SQL_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE,
                          "backup: %s", sqlite3_errmsg(l->db));
    else if (out)
        *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return r;
}

/* The copy is made inside a read transaction of h's: every step copies
 * from the same snapshot, so writers that commit meanwhile (WAL) neither
 * wait for the copy nor make it start again, and `check` is answered from
 * that snapshot too.  The copy holds the log from being reset while it
 * runs (the writer's bound then waits, docs/operations.md). */
static acc_err lite_backup(void *h, const char *dest, const char *check_sql, int64_t *check,
                           struct acc_error *why)
{
    struct lite *l = h;
    sqlite3 *out = NULL;
    sqlite3_backup *b = NULL;
    if (sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return acc_error_set(why, ACC_ERR_STORAGE, "backup: %s", sqlite3_errmsg(l->db));
    acc_err r = first_int(l, check_sql ? check_sql : "SELECT count(*) FROM sqlite_master",
                          check_sql ? check : NULL, why);
    int rc = SQLITE_OK;
    if (!r &&
        sqlite3_open_v2(dest, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        r = acc_error_set(why, ACC_ERR_IO, "backup: %s: %s", dest,
                          out ? sqlite3_errmsg(out) : "cannot open");
    if (!r && !(b = sqlite3_backup_init(out, "main", l->db, "main")))
        r = acc_error_set(why, ACC_ERR_STORAGE, "backup: %s", sqlite3_errmsg(out));
    for (int waited = 0; !r;) {
        rc = sqlite3_backup_step(b, BACKUP_PAGES);
        if (rc == SQLITE_DONE)
            break;
        if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && waited < ACC_SQL_BUSY_MS) {
            sqlite3_sleep(10);
            waited += 10;
        } else if (rc != SQLITE_OK) {
            r = acc_error_set(why, rc_of(rc) == SQL_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE,
                              "backup: %s", sqlite3_errstr(rc));
        }
    }
    if (b && sqlite3_backup_finish(b) != SQLITE_OK && !r)
        r = acc_error_set(why, ACC_ERR_STORAGE, "backup: %s", sqlite3_errmsg(out));
    if (out && sqlite3_close(out) != SQLITE_OK && !r)
        r = acc_error_set(why, ACC_ERR_IO, "backup: %s: cannot close it", dest);
    sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL);
    return r;
}

/* WAL lets readers work while the writer commits. */
static acc_err lite_wal_setup(void *h, struct acc_error *why)
{
    struct lite *l = h;
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    if (sqlite3_prepare_v2(l->db, "PRAGMA journal_mode=WAL", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW || !sqlite3_column_text(s, 0) ||
        strcmp((const char *)sqlite3_column_text(s, 0), "wal") != 0) {
        /* An in-memory database keeps its log in memory: nothing to bound. */
        const char *mode = s ? (const char *)sqlite3_column_text(s, 0) : NULL;
        if (!mode || strcmp(mode, "memory") != 0)
            rc = acc_error_set(why, ACC_ERR_STORAGE, "cannot switch to WAL mode");
    }
    sqlite3_finalize(s);
    int64_t page = 0;
    if (!rc && !(rc = pragma_int(l, "PRAGMA page_size", &page, why)))
        l->frame_bytes = page + 24;
    return rc;
}

static unsigned lite_schema_version(void *h, struct acc_error *why, acc_err *rc)
{
    int64_t v = 0;
    *rc = pragma_int(h, "PRAGMA user_version", &v, why);
    return *rc ? 0 : (unsigned)v;
}

static enum sql_rc lite_set_schema_version(void *h, unsigned v)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %u", v);
    return lite_exec(h, sql, NULL);
}

/* ------------------------------------------------------------- statements */

static enum sql_rc lite_prepare(void *h, const char *sql, bool keep, void **s)
{
    struct lite *l = h;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(l->db, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return rc_of(rc) == SQL_NOMEM ? SQL_NOMEM : SQL_ERROR;
    }
    *s = st;
    return SQL_OK;
}

static void lite_finalize(void *s)
{
    sqlite3_finalize(s);
}

static void lite_reset(void *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

static enum sql_rc lite_bind_text(void *s, int i, const char *v, size_t n)
{
    return rc_of(sqlite3_bind_text64(s, i, v, n, SQLITE_STATIC, SQLITE_UTF8));
}

static enum sql_rc lite_bind_i64(void *s, int i, int64_t v)
{
    return rc_of(sqlite3_bind_int64(s, i, v));
}

static enum sql_rc lite_bind_blob(void *s, int i, const void *p, size_t n, bool copy)
{
    return rc_of(sqlite3_bind_blob64(s, i, p, n, copy ? SQLITE_TRANSIENT : SQLITE_STATIC));
}

static enum sql_rc lite_bind_null(void *s, int i)
{
    return rc_of(sqlite3_bind_null(s, i));
}

static enum sql_rc lite_step(void *s)
{
    enum sql_rc rc = rc_of(sqlite3_step(s));
    return rc == SQL_OK ? SQL_ERROR : rc;
}

static bool lite_col_null(void *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL;
}

static int64_t lite_col_i64(void *s, int i)
{
    return sqlite3_column_int64(s, i);
}

static const char *lite_col_text(void *s, int i)
{
    return (const char *)sqlite3_column_text(s, i);
}

static const void *lite_col_blob(void *s, int i, size_t *len)
{
    const void *p = sqlite3_column_blob(s, i);
    *len = (size_t)sqlite3_column_bytes(s, i);
    return p;
}

/* ------------------------------------------------------ the log's bound */

/* Called by SQLite after each commit of the writer with the number of frames
 * in the log (instead of the automatic checkpoint, which is then off). */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((struct lite *)arg)->wal_frames = frames;
    return SQLITE_OK;
}

static void lite_wal_bound_start(void *h)
{
    struct lite *l = h;
    sqlite3_wal_hook(l->db, wal_hook, l);
}

/* Keeps the log within wal_limit.  Passive checkpoints copy the log into the
 * database but cannot reset it while writes keep coming and readers keep
 * old snapshots, so under load it only grows.  When it passes half the
 * limit, the writer (between two batches, so no write of its own is open)
 * runs a TRUNCATE checkpoint: it copies everything, waits for the readers
 * still using the log, and cuts the file to zero.  Readers never wait for
 * it; the wait for them is bounded (WAL_WAIT_MS) and then retried.  Past the
 * full limit the writer starts no further batch until the log is reset, so
 * the file never exceeds the limit by more than the batch that crossed it. */
static void lite_after_batch(void *h, int64_t wal_limit, bool (*stopping)(void *arg), void *arg)
{
    struct lite *l = h;
    for (;;) {
        int64_t size = 32 + (int64_t)l->wal_frames * l->frame_bytes;
        if (l->wal_frames == 0 || size < wal_limit / 2)
            return;
        sqlite3_busy_timeout(l->db, WAL_WAIT_MS);
        int log = -1, copied = -1;
        int rc = sqlite3_wal_checkpoint_v2(l->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &copied);
        sqlite3_busy_timeout(l->db, ACC_SQL_BUSY_MS);
        if (rc == SQLITE_OK) {
            l->wal_frames = 0;
            l->wal_warned = false;
            return;
        }
        if ((rc & 0xff) != SQLITE_BUSY) {
            acc_log_error("database: checkpoint: %s", sqlite3_errmsg(l->db));
            return;
        }
        if (size < wal_limit || stopping(arg))
            return; /* again after the next batch */
        if (!l->wal_warned)
            acc_log_warn("database: the log is at its limit (%lld bytes) and readers keep it "
                         "from being reset; writes wait",
                         (long long)wal_limit);
        l->wal_warned = true;
    }
}

static void lite_checkpoint(void *h)
{
    struct lite *l = h;
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(l->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
        acc_log_warn("database: checkpoint: %s", sqlite3_errmsg(l->db));
}

const struct sql_backend sql_sqlite = {
    .driver = {.name = "sqlite",
               .schemes = NULL,
               .caps = ACC_SQL_CAP_FILE | ACC_SQL_CAP_ONE_WRITER | ACC_SQL_CAP_ONLINE_BACKUP},
    .connect = lite_connect,
    .disconnect = lite_disconnect,
    .errmsg = lite_errmsg,
    .exec = lite_exec,
    .changes = lite_changes,
    .copy_in = lite_copy_in,
    .backup = lite_backup,
    .wal_setup = lite_wal_setup,
    .schema_version = lite_schema_version,
    .set_schema_version = lite_set_schema_version,
    .begin_read = "BEGIN",
    .begin_write = "BEGIN IMMEDIATE",
    .prepare = lite_prepare,
    .finalize = lite_finalize,
    .reset = lite_reset,
    .bind_text = lite_bind_text,
    .bind_i64 = lite_bind_i64,
    .bind_blob = lite_bind_blob,
    .bind_null = lite_bind_null,
    .step = lite_step,
    .col_null = lite_col_null,
    .col_i64 = lite_col_i64,
    .col_text = lite_col_text,
    .col_blob = lite_col_blob,
    .wal_bound_start = lite_wal_bound_start,
    .after_batch = lite_after_batch,
    .checkpoint = lite_checkpoint,
};
