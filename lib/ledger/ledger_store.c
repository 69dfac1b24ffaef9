/* ledger_store.c - the booking ledger's calendar file (ledger_store.h). */
#include "ledger_store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../common/strutil.h"

/* Migration i brings the schema (PRAGMA user_version) from i to i + 1. */
static const char *const migrations[] = {
    "CREATE TABLE booking ("
    "  key        TEXT PRIMARY KEY,"
    "  resource   TEXT NOT NULL,"
    "  start_time INTEGER NOT NULL,"
    "  end_time   INTEGER NOT NULL,"
    "  amount     INTEGER NOT NULL,"
    "  owner      TEXT NOT NULL"
    ") WITHOUT ROWID;"
    /* Days for which the background load was made. */
    "CREATE TABLE load_day (day INTEGER PRIMARY KEY);",
};

enum { Q_PUT, Q_DELETE, Q_DAY_MARK, Q_LOAD, Q_DAY_GET, Q__COUNT };

static const char *const sql[Q__COUNT] = {
    [Q_PUT] = ("INSERT OR REPLACE INTO booking (key, resource, start_time, end_time, amount, "
               "owner) VALUES (?,?,?,?,?,?)"),
    [Q_DELETE] = "DELETE FROM booking WHERE key = ?",
    [Q_DAY_MARK] = "INSERT OR IGNORE INTO load_day (day) VALUES (?)",
    [Q_LOAD] = "SELECT key, resource, start_time, end_time, amount, owner FROM booking",
    [Q_DAY_GET] = "SELECT 1 FROM load_day WHERE day = ?",
};

/* A queued write: bookings to put (with a day to mark) or a key to remove.
 * It owns its strings. */
struct acc_ledger_write {
    struct acc_ledger_write *next;
    struct acc_ledger_store_booking *b;
    size_t n;
    int64_t day; /* -1: none */
    char *del;   /* the key to remove, or NULL */
    bool orphan; /* nobody waits: the committer frees it */
    bool done;
    acc_err rc;
    struct acc_error err;
};

struct acc_ledger_store {
    char *path;
    pthread_mutex_t conn_lock; /* the connection and its statements: one user at a time */
    sqlite3 *db;
    sqlite3_stmt *stmt[Q__COUNT];

    pthread_mutex_t lock; /* the queue */
    pthread_cond_t committed;
    pthread_cond_t work; /* a write was queued, or stopping (the writer) */
    struct acc_ledger_write *head, *tail;
    bool committing;
    bool stopping;
    pthread_t writer;
    bool writer_started;
};

static acc_err db_error(struct acc_ledger_store *ss, struct acc_error *err, const char *what)
{
    return acc_error_set(err, ACC_ERR_STORAGE, "calendar %s: %s: %s", ss->path, what,
                         ss->db ? sqlite3_errmsg(ss->db) : "cannot open");
}

static acc_err exec(struct acc_ledger_store *ss, const char *s, struct acc_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(ss->db, s, NULL, NULL, &msg) == SQLITE_OK)
        return ACC_OK;
    acc_error_set(err, ACC_ERR_STORAGE, "calendar %s: %s", ss->path, msg ? msg : "exec failed");
    sqlite3_free(msg);
    return ACC_ERR_STORAGE;
}

/* The prepared statement, reset and unbound; the caller holds conn_lock. */
static sqlite3_stmt *stmt(struct acc_ledger_store *ss, int q, struct acc_error *err)
{
    if (!ss->stmt[q] && sqlite3_prepare_v3(ss->db, sql[q], -1, SQLITE_PREPARE_PERSISTENT,
                                           &ss->stmt[q], NULL) != SQLITE_OK) {
        db_error(ss, err, "prepare");
        ss->stmt[q] = NULL;
    }
    return ss->stmt[q];
}

static void done(sqlite3_stmt *s)
{
    if (s) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
    }
}

static int bind_text(sqlite3_stmt *s, int i, const char *v)
{
    return sqlite3_bind_text64(s, i, v ? v : "", strlen(v ? v : ""), SQLITE_STATIC, SQLITE_UTF8);
}

/* Steps a bound statement that returns no rows; bind is the OR of the binds'
 * results, so a value that cannot be bound is an error, never a NULL. */
static acc_err step(struct acc_ledger_store *ss, sqlite3_stmt *s, int bind, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    if (bind != SQLITE_OK)
        rc = acc_error_set(err, ACC_ERR_STORAGE, "calendar %s: a value cannot be bound", ss->path);
    else if (sqlite3_step(s) != SQLITE_DONE)
        rc = db_error(ss, err, "write");
    done(s);
    return rc;
}

static acc_err apply(struct acc_ledger_store *ss, const struct acc_ledger_write *w,
                     struct acc_error *err)
{
    sqlite3_stmt *s;
    acc_err rc = ACC_OK;
    if (w->del) {
        if (!(s = stmt(ss, Q_DELETE, err)))
            return ACC_ERR_STORAGE;
        return step(ss, s, bind_text(s, 1, w->del), err);
    }
    for (size_t i = 0; !rc && i < w->n; i++) {
        const struct acc_ledger_store_booking *b = &w->b[i];
        if (!(s = stmt(ss, Q_PUT, err)))
            return ACC_ERR_STORAGE;
        int bind = bind_text(s, 1, b->key) | bind_text(s, 2, b->resource) |
                   sqlite3_bind_int64(s, 3, b->start) | sqlite3_bind_int64(s, 4, b->end) |
                   sqlite3_bind_int64(s, 5, b->amount) | bind_text(s, 6, b->owner);
        rc = step(ss, s, bind, err);
    }
    if (!rc && w->day >= 0) {
        if (!(s = stmt(ss, Q_DAY_MARK, err)))
            return ACC_ERR_STORAGE;
        rc = step(ss, s, sqlite3_bind_int64(s, 1, w->day), err);
    }
    return rc;
}

/* Commits a batch in one transaction: all of it, or (with every write's
 * result set to the failure) none. */
static void commit(struct acc_ledger_store *ss, struct acc_ledger_write *batch)
{
    struct acc_error err;
    acc_error_clear(&err);
    pthread_mutex_lock(&ss->conn_lock);
    acc_err rc = exec(ss, "BEGIN IMMEDIATE", &err);
    for (struct acc_ledger_write *w = batch; !rc && w; w = w->next)
        rc = apply(ss, w, &err);
    if (!rc)
        rc = exec(ss, "COMMIT", &err);
    if (rc)
        exec(ss, "ROLLBACK", NULL);
    pthread_mutex_unlock(&ss->conn_lock);
    for (struct acc_ledger_write *w = batch; w; w = w->next) {
        w->rc = rc;
        w->err = err;
    }
}

static void write_free(struct acc_ledger_write *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        free((char *)w->b[i].key);
        free((char *)w->b[i].resource);
        free((char *)w->b[i].owner);
    }
    free(w->b);
    free(w->del);
    free(w);
}

/* Commits everything queued so far; the caller holds lock and is the only
 * committer.  Returns with lock held. */
static void commit_queued(struct acc_ledger_store *ss)
{
    struct acc_ledger_write *batch = ss->head;
    ss->head = ss->tail = NULL;
    ss->committing = true;
    pthread_mutex_unlock(&ss->lock);
    if (batch)
        commit(ss, batch);
    pthread_mutex_lock(&ss->lock);
    for (struct acc_ledger_write *w = batch, *next; w; w = next) {
        next = w->next;
        if (w->orphan) {
            if (w->rc)
                acc_log_error("%s", w->err.msg);
            write_free(w);
        } else {
            w->done = true; /* its waiter frees it from here on */
        }
    }
    ss->committing = false;
    pthread_cond_broadcast(&ss->committed);
}

static acc_err enqueue(struct acc_ledger_store *ss, struct acc_ledger_write *w,
                       struct acc_ledger_write **out, struct acc_error *err)
{
    if (!w)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    w->orphan = out == NULL;
    pthread_mutex_lock(&ss->lock);
    if (ss->tail)
        ss->tail->next = w;
    else
        ss->head = w;
    ss->tail = w;
    pthread_cond_signal(&ss->work);
    pthread_mutex_unlock(&ss->lock);
    if (out)
        *out = w;
    return ACC_OK;
}

acc_err acc_ledger_store_put(struct acc_ledger_store *ss, const struct acc_ledger_store_booking *b,
                             size_t n, int64_t day, struct acc_ledger_write **out,
                             struct acc_error *err)
{
    struct acc_ledger_write *w = calloc(1, sizeof *w);
    if (w && n && !(w->b = calloc(n, sizeof *w->b))) {
        free(w);
        w = NULL;
    }
    for (size_t i = 0; w && i < n; i++) {
        struct acc_ledger_store_booking *c = &w->b[w->n++];
        *c = (struct acc_ledger_store_booking){acc_strdup(b[i].key), acc_strdup(b[i].resource),
                                               b[i].start,           b[i].end,
                                               b[i].amount,          acc_strdup(b[i].owner)};
        if (!c->key || !c->resource || (b[i].owner && !c->owner)) {
            write_free(w);
            w = NULL;
        }
    }
    if (w)
        w->day = day;
    return enqueue(ss, w, out, err);
}

acc_err acc_ledger_store_delete(struct acc_ledger_store *ss, const char *key,
                                struct acc_ledger_write **out, struct acc_error *err)
{
    struct acc_ledger_write *w = calloc(1, sizeof *w);
    if (w && !(w->del = strdup(key))) {
        free(w);
        w = NULL;
    }
    if (w)
        w->day = -1;
    return enqueue(ss, w, out, err);
}

acc_err acc_ledger_store_wait(struct acc_ledger_store *ss, struct acc_ledger_write *w,
                              struct acc_error *err)
{
    pthread_mutex_lock(&ss->lock);
    while (!w->done) {
        if (ss->committing)
            pthread_cond_wait(&ss->committed, &ss->lock);
        else
            commit_queued(ss); /* this waiter commits for everyone queued */
    }
    pthread_mutex_unlock(&ss->lock);
    acc_err rc = w->rc;
    if (rc)
        acc_error_copy(err, &w->err);
    write_free(w);
    return rc;
}

void acc_ledger_store_forget(struct acc_ledger_store *ss, struct acc_ledger_write *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&ss->lock);
    bool done = w->done;
    if (!done)
        w->orphan = true; /* the committer frees it */
    pthread_mutex_unlock(&ss->lock);
    if (done)
        write_free(w);
}

/* Commits what is queued as soon as it is: a write is usually on disk
 * before anyone waits for it. */
static void *writer_main(void *arg)
{
    struct acc_ledger_store *ss = arg;
    pthread_mutex_lock(&ss->lock);
    for (;;) {
        while (!ss->head && !ss->stopping)
            pthread_cond_wait(&ss->work, &ss->lock);
        if (!ss->head)
            break;
        if (ss->committing)
            pthread_cond_wait(&ss->committed, &ss->lock);
        else
            commit_queued(ss);
    }
    pthread_mutex_unlock(&ss->lock);
    return NULL;
}

/* ------------------------------------------------------------------ reads */

acc_err acc_ledger_store_load(struct acc_ledger_store *ss,
                              acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                              void *ctx, struct acc_error *err)
{
    pthread_mutex_lock(&ss->conn_lock);
    sqlite3_stmt *s = stmt(ss, Q_LOAD, err);
    acc_err rc = s ? ACC_OK : ACC_ERR_STORAGE;
    int r = SQLITE_DONE;
    while (!rc && (r = sqlite3_step(s)) == SQLITE_ROW) {
        struct acc_ledger_store_booking b = {
            .key = (const char *)sqlite3_column_text(s, 0),
            .resource = (const char *)sqlite3_column_text(s, 1),
            .start = sqlite3_column_int64(s, 2),
            .end = sqlite3_column_int64(s, 3),
            .amount = sqlite3_column_int64(s, 4),
            .owner = (const char *)sqlite3_column_text(s, 5),
        };
        if (!b.key || !b.resource)
            continue;
        if ((rc = fn(ctx, &b)))
            acc_error_set(err, rc, "calendar %s: loading failed", ss->path);
    }
    if (!rc && r != SQLITE_DONE)
        rc = db_error(ss, err, "read");
    done(s);
    pthread_mutex_unlock(&ss->conn_lock);
    return rc;
}

acc_err acc_ledger_store_day_marked(struct acc_ledger_store *ss, int64_t day, bool *marked,
                                    struct acc_error *err)
{
    pthread_mutex_lock(&ss->conn_lock);
    sqlite3_stmt *s = stmt(ss, Q_DAY_GET, err);
    acc_err rc = s ? ACC_OK : ACC_ERR_STORAGE;
    if (!rc && sqlite3_bind_int64(s, 1, day) != SQLITE_OK)
        rc = db_error(ss, err, "read");
    int r = rc ? SQLITE_ERROR : sqlite3_step(s);
    *marked = r == SQLITE_ROW;
    if (!rc && r != SQLITE_ROW && r != SQLITE_DONE)
        rc = db_error(ss, err, "read");
    done(s);
    pthread_mutex_unlock(&ss->conn_lock);
    return rc;
}

/* ------------------------------------------------------------ open, close */

acc_err acc_ledger_store_path(const char *db_path, const char *name, const char *setting,
                              char **out, struct acc_error *err)
{
    if (setting && !*setting)
        return acc_error_set(err, ACC_ERR_CONFIG, "calendar is empty");
    if (!setting && (!db_path || !*db_path))
        return acc_error_set(err, ACC_ERR_CONFIG, "needs a database path or a calendar file");
    if (!setting && strcmp(db_path, ":memory:") == 0)
        setting = db_path;
    size_t n = setting ? strlen(setting) + 1 : strlen(db_path) + strlen(name) + 6;
    *out = malloc(n);
    if (!*out)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (setting)
        memcpy(*out, setting, n);
    else
        snprintf(*out, n, "%s.sim-%s", db_path, name);
    return ACC_OK;
}

static acc_err migrate(struct acc_ledger_store *ss, struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    int version = 0, newest = (int)(sizeof migrations / sizeof migrations[0]);
    if (sqlite3_prepare_v2(ss->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return db_error(ss, err, "read schema version");
    if (sqlite3_step(s) == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (version > newest)
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "calendar %s: schema version %d is newer than this accordd (%d)",
                             ss->path, version, newest);
    for (int v = version; v < newest; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        acc_err rc = exec(ss, "BEGIN IMMEDIATE", err);
        if (!rc && !(rc = exec(ss, migrations[v], err)) && !(rc = exec(ss, bump, err)))
            rc = exec(ss, "COMMIT", err);
        if (rc) {
            exec(ss, "ROLLBACK", NULL);
            return rc;
        }
    }
    return ACC_OK;
}

acc_err acc_ledger_store_open(const char *path, bool durable, struct acc_ledger_store **out,
                              struct acc_error *err)
{
    struct acc_ledger_store *ss = calloc(1, sizeof *ss);
    if (!ss)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&ss->conn_lock, NULL);
    pthread_mutex_init(&ss->lock, NULL);
    pthread_cond_init(&ss->committed, NULL);
    pthread_cond_init(&ss->work, NULL);
    acc_err rc =
        (ss->path = strdup(path)) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (!rc && sqlite3_open_v2(path, &ss->db, flags, NULL) != SQLITE_OK)
        rc = db_error(ss, err, "open");
    if (!rc) {
        sqlite3_busy_timeout(ss->db, 10000);
        sqlite3_extended_result_codes(ss->db, 1);
        /* WAL, checkpointed by SQLite at each commit past 1000 pages, and
         * cut back to 4 MiB when reset: one connection writes, so the log
         * is reset at each such checkpoint. */
        rc = exec(ss,
                  durable ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                            "PRAGMA journal_size_limit=4194304;"
                          : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                            "PRAGMA journal_size_limit=4194304;",
                  err);
    }
    if (!rc)
        rc = migrate(ss, err);
    if (!rc) {
        if (pthread_create(&ss->writer, NULL, writer_main, ss) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the writer thread");
        else
            ss->writer_started = true;
    }
    if (rc) {
        acc_error_prefix(err, "simulator calendar");
        acc_ledger_store_close(ss);
        return rc;
    }
    *out = ss;
    return ACC_OK;
}

void acc_ledger_store_close(struct acc_ledger_store *ss)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->lock);
    ss->stopping = true;
    pthread_cond_signal(&ss->work);
    pthread_mutex_unlock(&ss->lock);
    if (ss->writer_started)
        pthread_join(ss->writer, NULL);
    pthread_mutex_lock(&ss->lock);
    while (ss->committing)
        pthread_cond_wait(&ss->committed, &ss->lock);
    if (ss->head && ss->db)
        commit_queued(ss);
    pthread_mutex_unlock(&ss->lock);
    for (struct acc_ledger_write *w = ss->head, *next; w; w = next) {
        next = w->next;
        write_free(w);
    }
    for (int i = 0; i < Q__COUNT; i++)
        sqlite3_finalize(ss->stmt[i]);
    sqlite3_close(ss->db);
    pthread_mutex_destroy(&ss->conn_lock);
    pthread_mutex_destroy(&ss->lock);
    pthread_cond_destroy(&ss->committed);
    pthread_cond_destroy(&ss->work);
    free(ss->path);
    free(ss);
}
