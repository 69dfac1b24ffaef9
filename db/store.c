#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/common/buf.h"
#include "../server/common/log.h"
#include "../server/common/strutil.h"
#include "migrations.h"

/* How long writes nobody waits for may wait for company. */
#define LINGER_US 2000
/* How often the WAL is checkpointed into the database file. */
#define CHECKPOINT_MS 500

/* ------------------------------------------------------------- statements */

enum stmt_id {
    S_AGR_INSERT,
    S_AGR_BY_IDEM,
    S_AGR_GET,
    S_AGR_GET_OFFER,
    S_AGR_STATE,
    S_AGR_SETTLE,
    S_AGR_SET_STATE,
    S_AGR_SET_STATE_REASON,
    S_AGR_COMPLETE_ENDED,
    S_AGR_COUNTS,
    S_COMP_DELETE,
    S_COMP_INSERT,
    S_COMP_GET,
    S_LINK_DELETE,
    S_LINK_INSERT,
    S_LINK_GET,
    S_TRACE_MAXSEQ,
    S_TRACE_INSERT,
    S_TRACE_GET,
    S_JOURNAL_PUT,
    S_JOURNAL_BY_AGR,
    S_JOURNAL_OPEN,
    S_SIM_PUT,
    S_SIM_DELETE,
    S_SIM_LOAD,
    S_SIM_DAY_MARK,
    S_SIM_DAY_GET,
    S_RUN_INSERT,
    S_RUN_GET,
    S_RUN_UPDATE,
    S_RUN_OPEN,
    S_PING,
    S__COUNT
};

#define AGR_COLUMNS                                                                            \
    "id, name, initiator, state, created, updated, start_time, end_time, earliest, deadline, " \
    "duration, strategy, launch, rounds, rollbacks, fault_code, reason, terms, guarantees"

static const char *const sql[S__COUNT] = {
    [S_AGR_INSERT] = "INSERT INTO agreement (id, name, initiator, state, created, updated, "
                     "earliest, deadline, duration, strategy, launch, idem_key, offer, terms, "
                     "guarantees) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_AGR_BY_IDEM] = "SELECT id FROM agreement WHERE idem_key = ?",
    [S_AGR_GET] = "SELECT " AGR_COLUMNS " FROM agreement WHERE id = ?",
    [S_AGR_GET_OFFER] = "SELECT offer FROM agreement WHERE id = ?",
    [S_AGR_STATE] = "SELECT state FROM agreement WHERE id = ?",
    [S_AGR_SETTLE] = "UPDATE agreement SET state = ?, updated = ?, start_time = ?, end_time = ?, "
                     "rounds = ?, rollbacks = ?, fault_code = ?, reason = ? WHERE id = ?",
    [S_AGR_SET_STATE] = "UPDATE agreement SET state = ?, updated = ? WHERE id = ?",
    [S_AGR_SET_STATE_REASON] = "UPDATE agreement SET state = ?, updated = ?, reason = ? WHERE id = "
                               "?", /* A launched job moves its own agreement (the launcher stops it
                                     * at the end first and records why). */
    [S_AGR_COMPLETE_ENDED] = "UPDATE agreement SET state = 'Complete', updated = ? "
                             "WHERE state = 'Observed' AND end_time <= ? AND seq NOT IN "
                             "(SELECT agreement FROM run WHERE state IN ('waiting', 'running'))",
    [S_AGR_COUNTS] = "SELECT state, count(*) FROM agreement GROUP BY state",
    [S_COMP_DELETE] = "DELETE FROM allocation_component WHERE agreement = "
                      "(SELECT seq FROM agreement WHERE id = ?)",
    [S_COMP_INSERT] = "INSERT INTO allocation_component (agreement, idx, name, site, nodes, ppn, "
                      "reservation, local_id, node_names, executable, args) "
                      "VALUES ((SELECT seq FROM agreement WHERE id = ?), ?,?,?,?,?,?,?,?,?,?)",
    [S_COMP_GET] =
        "SELECT name, site, nodes, ppn, reservation, local_id, node_names, executable, args "
        "FROM allocation_component WHERE agreement = (SELECT seq FROM agreement WHERE id = ?) "
        "ORDER BY idx",
    [S_LINK_DELETE] = "DELETE FROM allocation_link WHERE agreement = "
                      "(SELECT seq FROM agreement WHERE id = ?)",
    [S_LINK_INSERT] = "INSERT INTO allocation_link (agreement, idx, name, from_comp, to_comp, "
                      "site_a, site_b, link, bandwidth, reservation, local_id) "
                      "VALUES ((SELECT seq FROM agreement WHERE id = ?), ?,?,?,?,?,?,?,?,?,?)",
    [S_LINK_GET] = "SELECT name, from_comp, to_comp, site_a, site_b, link, bandwidth, "
                   "reservation, local_id FROM allocation_link WHERE agreement = (SELECT seq FROM "
                   "agreement WHERE id = ?) "
                   "ORDER BY idx",
    [S_TRACE_MAXSEQ] = "SELECT coalesce(max(seq), 0) FROM trace_event WHERE agreement = "
                       "(SELECT seq FROM agreement WHERE id = ?)",
    [S_TRACE_INSERT] = "INSERT INTO trace_event (agreement, seq, round, kind, target, "
                       "adapter, amount, t_from, t_until, t_result, status, elapsed_us, detail) "
                       "VALUES ((SELECT seq FROM agreement WHERE id = ?), ?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_TRACE_GET] = "SELECT seq, round, kind, target, adapter, amount, t_from, t_until, "
                    "t_result, status, elapsed_us, detail FROM trace_event "
                    "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?) ORDER BY seq",
    [S_JOURNAL_PUT] =
        "INSERT INTO reservation (key, agreement_id, round, adapter, kind, resource, amount, "
        "start_time, end_time, state, local_id, effective_start, effective_end, error, updated) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
        "state = excluded.state, local_id = excluded.local_id, "
        "effective_start = excluded.effective_start, effective_end = excluded.effective_end, "
        "error = excluded.error, updated = excluded.updated",
    [S_JOURNAL_BY_AGR] = "SELECT key, agreement_id, round, adapter, kind, resource, amount, "
                         "start_time, end_time, state, local_id, effective_start, effective_end, "
                         "error FROM reservation WHERE agreement_id = ? ORDER BY rowid",
    /* Open entries of negotiations that are over: their agreement is no longer
     * Pending.  One query, so the agreement's state and its entries come from
     * the same snapshot (a negotiation settles both in one transaction). */
    [S_JOURNAL_OPEN] =
        "SELECT r.key, r.agreement_id, r.round, r.adapter, r.kind, r.resource, r.amount, "
        "r.start_time, r.end_time, r.state, r.local_id, r.effective_start, r.effective_end, "
        "r.error FROM reservation r LEFT JOIN agreement a ON a.id = r.agreement_id "
        "WHERE r.state IN ('intent', 'reserved', 'unknown', 'cancel-failed') "
        "AND (a.state IS NULL OR a.state NOT IN ('Pending', 'PendingAndTerminating')) "
        "ORDER BY r.rowid",
    [S_SIM_PUT] = "INSERT OR REPLACE INTO sim_booking (adapter, key, resource, start_time, "
                  "end_time, amount, owner) VALUES (?,?,?,?,?,?,?)",
    [S_SIM_DELETE] = "DELETE FROM sim_booking WHERE adapter = ? AND key = ?",
    [S_SIM_LOAD] = "SELECT key, resource, start_time, end_time, amount, owner FROM sim_booking "
                   "WHERE adapter = ?",
    [S_SIM_DAY_MARK] = "INSERT OR IGNORE INTO sim_load_day (adapter, day) VALUES (?, ?)",
    [S_SIM_DAY_GET] = "SELECT 1 FROM sim_load_day WHERE adapter = ? AND day = ?",
    [S_RUN_INSERT] = "INSERT OR REPLACE INTO run (agreement, style, state, directory, metampich, "
                     "rsl, reason) VALUES ((SELECT seq FROM agreement WHERE id = ?), ?,?,?,?,?,?)",
    [S_RUN_GET] = "SELECT style, state, started, ended, exit_status, signal, pid, pid_start, "
                  "directory, command, reason, CASE WHEN ? THEN output END, output_total, "
                  "metampich, rsl, batch FROM run "
                  "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?)",
    [S_RUN_UPDATE] = "UPDATE run SET state = ?, started = ?, ended = ?, exit_status = ?, "
                     "signal = ?, pid = ?, pid_start = ?, directory = ?, command = ?, reason = ?, "
                     "output = ?, output_total = ?, batch = ? "
                     "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?)",
    [S_RUN_OPEN] = "SELECT a.id FROM run r JOIN agreement a ON a.seq = r.agreement "
                   "WHERE r.state IN ('waiting', 'running') ORDER BY a.start_time",
    [S_PING] = "SELECT count(*) FROM sqlite_master",
};

/* ------------------------------------------------------------ connections */

struct conn {
    sqlite3 *db;
    sqlite3_stmt *stmt[S__COUNT];
    struct conn *next; /* free list */
};

typedef acc_err (*job_fn)(struct conn *c, void *arg, struct acc_error *err);

struct job {
    struct job *next;
    job_fn fn;
    void *arg;
    void (*release)(void *arg); /* queued jobs: frees arg; the writer frees the job */
    acc_err rc;
    struct acc_error err;
    bool done;
};

struct acc_store {
    char *path;
    bool durable;

    /* writer */
    struct conn *writer;
    pthread_t writer_thread;
    bool writer_started;
    pthread_mutex_t wlock;
    pthread_cond_t wwork; /* jobs queued or stopping */
    pthread_cond_t wdone; /* a batch finished */
    struct job *head, *tail;
    unsigned awaited; /* jobs in the queue that someone waits for */
    bool stopping;

    /* checkpoints, off the writer's path */
    pthread_t checkpointer;
    bool checkpointer_started;
    pthread_cond_t ckwake;

    /* readers */
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
    struct conn *free_readers;
    unsigned readers, max_readers;
};

static acc_err db_error(sqlite3 *db, struct acc_error *err, const char *what)
{
    return acc_error_set(err, ACC_ERR_STORAGE, "database: %s: %s", what,
                         db ? sqlite3_errmsg(db) : "cannot open");
}

static acc_err exec(struct conn *c, const char *s, struct acc_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, s, NULL, NULL, &msg) != SQLITE_OK) {
        acc_error_set(err, ACC_ERR_STORAGE, "database: %s", msg ? msg : "exec failed");
        sqlite3_free(msg);
        return ACC_ERR_STORAGE;
    }
    return ACC_OK;
}

static void conn_close(struct conn *c)
{
    if (!c)
        return;
    for (int i = 0; i < S__COUNT; i++)
        sqlite3_finalize(c->stmt[i]);
    sqlite3_close(c->db);
    free(c);
}

static acc_err conn_open(const struct acc_store *st, struct conn **out, struct acc_error *err)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(st->path, &c->db, flags, NULL) != SQLITE_OK) {
        acc_error_set(err, ACC_ERR_STORAGE, "database %s: %s", st->path,
                      c->db ? sqlite3_errmsg(c->db) : "cannot open");
        conn_close(c);
        return ACC_ERR_STORAGE;
    }
    sqlite3_busy_timeout(c->db, 10000);
    sqlite3_extended_result_codes(c->db, 1);
    acc_err rc = exec(c,
                      st->durable ? "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"
                                  : "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                      err);
    if (rc) {
        conn_close(c);
        return rc;
    }
    *out = c;
    return ACC_OK;
}

static sqlite3_stmt *stmt(struct conn *c, enum stmt_id id, struct acc_error *err)
{
    if (!c->stmt[id] && sqlite3_prepare_v3(c->db, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                           &c->stmt[id], NULL) != SQLITE_OK) {
        db_error(c->db, err, "prepare");
        c->stmt[id] = NULL;
        return NULL;
    }
    return c->stmt[id];
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
    return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
}

/* Binds a time, with 0 standing for "none" (NULL). */
static int bind_time(sqlite3_stmt *s, int i, acc_time t)
{
    return t ? sqlite3_bind_int64(s, i, t) : sqlite3_bind_null(s, i);
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    return v ? strdup((const char *)v) : NULL;
}

/* Whether column i holds a value that did not come through: SQLite answers
 * NULL for a text it could not copy for lack of memory, and col_dup NULL when
 * strdup fails.  A read must then fail rather than return a hole. */
static bool col_lost(sqlite3_stmt *s, int i, const void *v)
{
    return !v && sqlite3_column_type(s, i) != SQLITE_NULL;
}

static void col_copy(sqlite3_stmt *s, int i, char *dst, size_t size)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    acc_strlcpy(dst, v ? (const char *)v : "", size);
}

/* Reads a blob of NUL-terminated strings (the arguments of a component). */
static acc_err args_decode(sqlite3_stmt *s, int i, char ***out, size_t *n)
{
    const char *p = sqlite3_column_blob(s, i);
    size_t len = (size_t)sqlite3_column_bytes(s, i), count = 0;
    *out = NULL;
    *n = 0;
    for (size_t k = 0; p && k < len; k++)
        count += p[k] == '\0';
    if (!count)
        return ACC_OK;
    char **v = calloc(count, sizeof *v);
    if (!v)
        return ACC_ERR_NOMEM;
    for (size_t k = 0, j = 0; j < count; j++) {
        v[j] = strdup(p + k);
        if (!v[j]) {
            for (size_t m = 0; m < j; m++)
                free(v[m]);
            free(v);
            return ACC_ERR_NOMEM;
        }
        k += strlen(p + k) + 1;
    }
    *out = v;
    *n = count;
    return ACC_OK;
}

/* Runs a statement that returns no rows. */
static acc_err step_done(struct conn *c, sqlite3_stmt *s, struct acc_error *err, const char *what)
{
    int rc = sqlite3_step(s);
    acc_err r = ACC_OK;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        r = db_error(c->db, err, what);
    done(s);
    return r;
}

/* ----------------------------------------------------------------- writer */

static void run_batch(struct acc_store *st, struct job *jobs)
{
    struct conn *c = st->writer;
    struct acc_error berr;
    acc_error_clear(&berr);
    acc_err brc = exec(c, "BEGIN IMMEDIATE", &berr);
    if (brc == ACC_OK) {
        for (struct job *j = jobs; j; j = j->next) {
            if (exec(c, "SAVEPOINT job", &j->err)) {
                j->rc = ACC_ERR_STORAGE;
                continue;
            }
            j->rc = j->fn(c, j->arg, &j->err);
            if (j->rc)
                exec(c, "ROLLBACK TO job", NULL);
            exec(c, "RELEASE job", NULL);
        }
        brc = exec(c, "COMMIT", &berr);
        if (brc)
            exec(c, "ROLLBACK", NULL);
    }
    if (brc) {
        acc_log_error("%s", berr.msg);
        for (struct job *j = jobs; j; j = j->next) {
            j->rc = brc;
            j->err = berr;
        }
    }
}

static struct timespec monotonic_after_us(int64_t us)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)(us * 1000);
    ts.tv_sec += ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    return ts;
}

static void *writer_main(void *arg)
{
    struct acc_store *st = arg;
    pthread_mutex_lock(&st->wlock);
    for (;;) {
        while (!st->head && !st->stopping)
            pthread_cond_wait(&st->wwork, &st->wlock);
        if (!st->head)
            break;
        /* Nobody waits for queued writes: let them linger a moment so that
         * they share the commit (and the fsync) of the next awaited write. */
        if (st->awaited == 0 && !st->stopping) {
            struct timespec until = monotonic_after_us(LINGER_US);
            while (st->awaited == 0 && !st->stopping &&
                   pthread_cond_timedwait(&st->wwork, &st->wlock, &until) != ETIMEDOUT)
                ;
        }
        struct job *jobs = st->head;
        st->head = st->tail = NULL;
        st->awaited = 0;
        pthread_mutex_unlock(&st->wlock);

        run_batch(st, jobs);

        /* Queued jobs are nobody's to wait for: settle them here. */
        struct job *queued = NULL;
        pthread_mutex_lock(&st->wlock);
        for (struct job *j = jobs, *next; j; j = next) {
            next = j->next;
            if (j->release) {
                j->next = queued;
                queued = j;
            } else {
                j->done = true;
            }
        }
        pthread_cond_broadcast(&st->wdone);
        pthread_mutex_unlock(&st->wlock);
        for (struct job *j = queued, *next; j; j = next) {
            next = j->next;
            if (j->rc)
                acc_log_error("queued write failed: %s", j->err.msg);
            j->release(j->arg);
            free(j);
        }
        pthread_mutex_lock(&st->wlock);
    }
    pthread_mutex_unlock(&st->wlock);
    return NULL;
}

/* Moves the WAL into the database file now and then, from its own
 * connection, so that the writer never pays for a checkpoint. */
static void *checkpointer_main(void *arg)
{
    struct acc_store *st = arg;
    struct conn *c = NULL;
    if (conn_open(st, &c, NULL)) {
        acc_log_error("database: the checkpointer cannot open a connection; the WAL will grow");
        return NULL;
    }
    pthread_mutex_lock(&st->wlock);
    while (!st->stopping) {
        struct timespec until = monotonic_after_us((int64_t)CHECKPOINT_MS * 1000);
        pthread_cond_timedwait(&st->ckwake, &st->wlock, &until);
        if (st->stopping)
            break;
        pthread_mutex_unlock(&st->wlock);
        int log = 0, done = 0;
        int rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            acc_log_warn("database: checkpoint: %s", sqlite3_errmsg(c->db));
        pthread_mutex_lock(&st->wlock);
    }
    pthread_mutex_unlock(&st->wlock);
    conn_close(c);
    return NULL;
}

/* Queues fn for the writer and waits for its commit. */
static acc_err write_job(struct acc_store *st, job_fn fn, void *arg, struct acc_error *err)
{
    struct job j = {.fn = fn, .arg = arg};
    acc_error_clear(&j.err);
    pthread_mutex_lock(&st->wlock);
    if (st->stopping) {
        pthread_mutex_unlock(&st->wlock);
        return acc_error_set(err, ACC_ERR_STORAGE, "database: closing");
    }
    if (st->tail)
        st->tail->next = &j;
    else
        st->head = &j;
    st->tail = &j;
    st->awaited++;
    pthread_cond_signal(&st->wwork);
    while (!j.done)
        pthread_cond_wait(&st->wdone, &st->wlock);
    pthread_mutex_unlock(&st->wlock);
    if (j.rc)
        acc_error_copy(err, &j.err);
    return j.rc;
}

/* Queues fn for the writer without waiting.  Writes are committed in queue
 * order, so a write queued now is durable no later than any write awaited
 * after it.  arg belongs to the store from here on (release frees it). */
static acc_err queue_job(struct acc_store *st, job_fn fn, void *arg, void (*release)(void *),
                         struct acc_error *err)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        release(arg);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    j->fn = fn;
    j->arg = arg;
    j->release = release;
    pthread_mutex_lock(&st->wlock);
    if (st->stopping) {
        pthread_mutex_unlock(&st->wlock);
        release(arg);
        free(j);
        return acc_error_set(err, ACC_ERR_STORAGE, "database: closing");
    }
    /* Only the first job wakes the writer: it lingers for the others. */
    if (!st->head)
        pthread_cond_signal(&st->wwork);
    if (st->tail)
        st->tail->next = j;
    else
        st->head = j;
    st->tail = j;
    pthread_mutex_unlock(&st->wlock);
    return ACC_OK;
}

/* ---------------------------------------------------------------- readers */

static acc_err reader_take(struct acc_store *st, struct conn **out, struct acc_error *err)
{
    pthread_mutex_lock(&st->rlock);
    while (!st->free_readers && st->readers >= st->max_readers)
        pthread_cond_wait(&st->rfree, &st->rlock);
    if (st->free_readers) {
        *out = st->free_readers;
        st->free_readers = (*out)->next;
        pthread_mutex_unlock(&st->rlock);
        return ACC_OK;
    }
    st->readers++;
    pthread_mutex_unlock(&st->rlock);
    acc_err rc = conn_open(st, out, err);
    if (rc) {
        pthread_mutex_lock(&st->rlock);
        st->readers--;
        pthread_cond_signal(&st->rfree);
        pthread_mutex_unlock(&st->rlock);
    }
    return rc;
}

static void reader_give(struct acc_store *st, struct conn *c)
{
    pthread_mutex_lock(&st->rlock);
    c->next = st->free_readers;
    st->free_readers = c;
    pthread_cond_signal(&st->rfree);
    pthread_mutex_unlock(&st->rlock);
}

/* A read transaction so that multi-statement reads see one snapshot. */
static acc_err read_begin(struct acc_store *st, struct conn **c, struct acc_error *err)
{
    acc_err rc = reader_take(st, c, err);
    if (rc)
        return rc;
    rc = exec(*c, "BEGIN", err);
    if (rc)
        reader_give(st, *c);
    return rc;
}

static void read_end(struct acc_store *st, struct conn *c)
{
    exec(c, "COMMIT", NULL);
    reader_give(st, c);
}

/* ------------------------------------------------------------- migrations */

static acc_err migrate(struct conn *c, struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    int version = 0;
    if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return db_error(c->db, err, "read schema version");
    if (sqlite3_step(s) == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);

    int newest = (int)acc_migrations_count;
    if (version > newest)
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "database: schema version %d is newer than this accordd (%d)", version,
                             newest);
    for (int v = version; v < newest; v++) {
        acc_err rc = exec(c, "BEGIN IMMEDIATE", err);
        if (rc)
            return rc;
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        rc = exec(c, acc_migrations[v].data, err);
        if (!rc)
            rc = exec(c, bump, err);
        if (rc) {
            exec(c, "ROLLBACK", NULL);
            acc_error_prefix(err, "migration %s", acc_migrations[v].name);
            return rc;
        }
        rc = exec(c, "COMMIT", err);
        if (rc)
            return rc;
        acc_log_info("database: applied migration %s", acc_migrations[v].name);
    }
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

static void sqlite_setup(void)
{
    /* SQLite's memory statistics take a global mutex on every allocation:
     * with a writer, readers and a checkpointer that is pure contention. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

acc_err acc_store_open(const struct acc_store_options *opt, struct acc_store **out,
                       struct acc_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_setup);
    struct acc_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&st->wlock, NULL);
    pthread_condattr_t mono;
    pthread_condattr_init(&mono);
    pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    pthread_cond_init(&st->wwork, &mono);
    pthread_cond_init(&st->ckwake, &mono);
    pthread_condattr_destroy(&mono);
    pthread_cond_init(&st->wdone, NULL);
    pthread_mutex_init(&st->rlock, NULL);
    pthread_cond_init(&st->rfree, NULL);
    st->durable = opt->durable;
    st->max_readers = opt->readers ? opt->readers : 32;
    st->path = strdup(opt->path);
    acc_err rc = st->path ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = conn_open(st, &st->writer, err);
    if (!rc) {
        /* WAL lets readers work while the writer commits. */
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(st->writer->db, "PRAGMA journal_mode=WAL", -1, &s, NULL) !=
                SQLITE_OK ||
            sqlite3_step(s) != SQLITE_ROW ||
            strcmp((const char *)sqlite3_column_text(s, 0), "wal") != 0)
            rc = acc_error_set(err, ACC_ERR_STORAGE, "database %s: cannot switch to WAL mode",
                               opt->path);
        sqlite3_finalize(s);
    }
    if (!rc)
        rc = migrate(st->writer, err);
    if (!rc) {
        if (pthread_create(&st->writer_thread, NULL, writer_main, st) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the database writer");
        else
            st->writer_started = true;
    }
    if (!rc) {
        /* Checkpoints are the checkpointer's job, not the committing writer's. */
        rc = exec(st->writer, "PRAGMA wal_autocheckpoint=0", err);
        if (!rc && pthread_create(&st->checkpointer, NULL, checkpointer_main, st) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the database checkpointer");
        else if (!rc)
            st->checkpointer_started = true;
    }
    if (rc) {
        acc_store_close(st);
        return rc;
    }
    *out = st;
    return ACC_OK;
}

void acc_store_close(struct acc_store *st)
{
    if (!st)
        return;
    if (st->writer_started) {
        pthread_mutex_lock(&st->wlock);
        st->stopping = true;
        pthread_cond_signal(&st->wwork);
        pthread_cond_signal(&st->ckwake);
        pthread_mutex_unlock(&st->wlock);
        pthread_join(st->writer_thread, NULL);
        if (st->checkpointer_started)
            pthread_join(st->checkpointer, NULL);
    }
    while (st->free_readers) {
        struct conn *c = st->free_readers;
        st->free_readers = c->next;
        conn_close(c);
    }
    conn_close(st->writer);
    pthread_mutex_destroy(&st->wlock);
    pthread_cond_destroy(&st->wwork);
    pthread_cond_destroy(&st->wdone);
    pthread_cond_destroy(&st->ckwake);
    pthread_mutex_destroy(&st->rlock);
    pthread_cond_destroy(&st->rfree);
    free(st->path);
    free(st);
}

/* ------------------------------------------------------------- agreements */

struct create_arg {
    const struct acc_agreement *a;
    const char *idem_key;
    bool duplicate;
    char existing[ACC_ID_LEN + 1];
};

static acc_err create_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct create_arg *x = arg;
    const struct acc_agreement *a = x->a;
    sqlite3_stmt *s;

    if (x->idem_key) {
        if (!(s = stmt(c, S_AGR_BY_IDEM, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, x->idem_key);
        if (sqlite3_step(s) == SQLITE_ROW) {
            x->duplicate = true;
            col_copy(s, 0, x->existing, sizeof x->existing);
            done(s);
            return ACC_OK;
        }
        done(s);
    }
    if (!(s = stmt(c, S_AGR_INSERT, err)))
        return ACC_ERR_STORAGE;
    bind_text(s, 1, a->id);
    bind_text(s, 2, a->name);
    bind_text(s, 3, a->initiator ? a->initiator : "anonymous");
    bind_text(s, 4, acc_state_name(a->state));
    sqlite3_bind_int64(s, 5, a->created);
    sqlite3_bind_int64(s, 6, a->updated);
    bind_time(s, 7, a->earliest);
    bind_time(s, 8, a->deadline);
    sqlite3_bind_int64(s, 9, a->duration);
    bind_text(s, 10, acc_strategy_name(a->strategy));
    bind_text(s, 11, acc_launch_name(a->launch));
    bind_text(s, 12, x->idem_key);
    sqlite3_bind_blob(s, 13, a->offer_xml, (int)a->offer_len, SQLITE_STATIC);
    bind_text(s, 14, a->terms);
    bind_text(s, 15, a->guarantees);
    return step_done(c, s, err, "insert agreement");
}

acc_err acc_store_agreement_create(struct acc_store *st, const struct acc_agreement *a,
                                   const char *idem_key, bool *duplicate,
                                   char existing[ACC_ID_LEN + 1], struct acc_error *err)
{
    struct create_arg x = {.a = a, .idem_key = idem_key};
    acc_err rc = write_job(st, create_job, &x, err);
    if (rc)
        return rc;
    if (duplicate)
        *duplicate = x.duplicate;
    if (existing)
        memcpy(existing, x.existing, sizeof x.existing);
    return ACC_OK;
}

struct create_queued {
    struct create_arg x;
    struct acc_agreement a;
};

static acc_err create_queued_job(struct conn *c, void *arg, struct acc_error *err)
{
    return create_job(c, &((struct create_queued *)arg)->x, err);
}

static void free_create_queued(void *arg)
{
    struct create_queued *q = arg;
    acc_agreement_release(&q->a);
    free(q);
}

acc_err acc_store_agreement_queue_create(struct acc_store *st, const struct acc_agreement *a,
                                         struct acc_error *err)
{
    struct create_queued *q = calloc(1, sizeof *q);
    if (!q)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_agreement *c = &q->a;
    memcpy(c->id, a->id, sizeof c->id);
    c->state = a->state;
    c->created = a->created;
    c->updated = a->updated;
    c->earliest = a->earliest;
    c->deadline = a->deadline;
    c->duration = a->duration;
    c->strategy = a->strategy;
    c->launch = a->launch;
    c->name = acc_strdup(a->name);
    c->initiator = acc_strdup(a->initiator);
    c->terms = acc_strdup(a->terms);
    c->guarantees = acc_strdup(a->guarantees);
    c->offer_xml = acc_strndup(a->offer_xml, a->offer_len);
    c->offer_len = a->offer_len;
    q->x.a = c;
    if ((a->name && !c->name) || (a->initiator && !c->initiator) || (a->terms && !c->terms) ||
        (a->guarantees && !c->guarantees) || !c->offer_xml) {
        free_create_queued(q);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    return queue_job(st, create_queued_job, q, free_create_queued, err);
}

static acc_err read_agreement_row(sqlite3_stmt *s, struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    col_copy(s, 0, a->id, sizeof a->id);
    a->name = col_dup(s, 1);
    a->initiator = col_dup(s, 2);
    const char *state = (const char *)sqlite3_column_text(s, 3);
    if (col_lost(s, 3, state))
        return ACC_ERR_NOMEM;
    if (!state || !acc_state_parse(state, &a->state))
        a->state = ACC_STATE_REJECTED;
    a->created = sqlite3_column_int64(s, 4);
    a->updated = sqlite3_column_int64(s, 5);
    a->start = sqlite3_column_int64(s, 6);
    a->end = sqlite3_column_int64(s, 7);
    a->earliest = sqlite3_column_int64(s, 8);
    a->deadline = sqlite3_column_int64(s, 9);
    a->duration = sqlite3_column_int64(s, 10);
    const char *strategy = (const char *)sqlite3_column_text(s, 11);
    if (col_lost(s, 11, strategy))
        return ACC_ERR_NOMEM;
    if (!strategy || !acc_strategy_parse(strategy, &a->strategy))
        a->strategy = ACC_STRATEGY_DEFAULT;
    const char *launch = (const char *)sqlite3_column_text(s, 12);
    if (col_lost(s, 12, launch))
        return ACC_ERR_NOMEM;
    if (!launch || !acc_launch_parse(launch, &a->launch))
        a->launch = ACC_LAUNCH_NONE;
    a->rounds = (unsigned)sqlite3_column_int(s, 13);
    a->rollbacks = (unsigned)sqlite3_column_int(s, 14);
    a->fault_code = col_dup(s, 15);
    a->reason = col_dup(s, 16);
    a->terms = col_dup(s, 17);
    a->guarantees = col_dup(s, 18);
    if (col_lost(s, 1, a->name) || !a->initiator || col_lost(s, 15, a->fault_code) ||
        col_lost(s, 16, a->reason) || col_lost(s, 17, a->terms) || col_lost(s, 18, a->guarantees))
        return ACC_ERR_NOMEM;
    return ACC_OK;
}

static acc_err read_allocation(struct conn *c, struct acc_agreement *a, struct acc_error *err)
{
    sqlite3_stmt *s = stmt(c, S_COMP_GET, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, a->id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(a->comps, (a->n_comps + 1) * sizeof *a->comps);
        if (!v) {
            done(s);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        a->comps = v;
        struct acc_alloc_component *x = &a->comps[a->n_comps++];
        memset(x, 0, sizeof *x);
        x->name = col_dup(s, 0);
        x->site = col_dup(s, 1);
        x->nodes = sqlite3_column_int64(s, 2);
        x->ppn = sqlite3_column_int64(s, 3);
        x->reservation = col_dup(s, 4);
        x->local_id = col_dup(s, 5);
        x->node_names = col_dup(s, 6);
        x->executable = col_dup(s, 7);
        if (col_lost(s, 0, x->name) || col_lost(s, 1, x->site) || col_lost(s, 4, x->reservation) ||
            col_lost(s, 5, x->local_id) || col_lost(s, 6, x->node_names) ||
            col_lost(s, 7, x->executable) || args_decode(s, 8, &x->args, &x->n_args)) {
            done(s);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    done(s);
    if (rc != SQLITE_DONE)
        return db_error(c->db, err, "read allocation");

    if (!(s = stmt(c, S_LINK_GET, err)))
        return ACC_ERR_STORAGE;
    bind_text(s, 1, a->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(a->links, (a->n_links + 1) * sizeof *a->links);
        if (!v) {
            done(s);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        a->links = v;
        struct acc_alloc_link *x = &a->links[a->n_links++];
        memset(x, 0, sizeof *x);
        x->name = col_dup(s, 0);
        x->from = col_dup(s, 1);
        x->to = col_dup(s, 2);
        x->site_a = col_dup(s, 3);
        x->site_b = col_dup(s, 4);
        x->link = col_dup(s, 5);
        x->bandwidth = sqlite3_column_int64(s, 6);
        x->reservation = col_dup(s, 7);
        x->local_id = col_dup(s, 8);
        if (col_lost(s, 0, x->name) || col_lost(s, 1, x->from) || col_lost(s, 2, x->to) ||
            col_lost(s, 3, x->site_a) || col_lost(s, 4, x->site_b) || col_lost(s, 5, x->link) ||
            col_lost(s, 7, x->reservation) || col_lost(s, 8, x->local_id)) {
            done(s);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    done(s);
    if (rc != SQLITE_DONE)
        return db_error(c->db, err, "read allocation");
    return ACC_OK;
}

static acc_err get_one(struct conn *c, const char *id, bool with_offer, struct acc_agreement *out,
                       struct acc_error *err)
{
    sqlite3_stmt *s = stmt(c, S_AGR_GET, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        done(s);
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    }
    if (rc != SQLITE_ROW) {
        done(s);
        return db_error(c->db, err, "read agreement");
    }
    acc_err r = read_agreement_row(s, out);
    done(s);
    if (r)
        return acc_error_set(err, r, "out of memory");
    r = read_allocation(c, out, err);
    if (r == ACC_OK && with_offer) {
        if (!(s = stmt(c, S_AGR_GET_OFFER, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, id);
        int step = sqlite3_step(s);
        if (step != SQLITE_ROW && step != SQLITE_DONE) {
            r = db_error(c->db, err, "read offer");
        } else if (step == SQLITE_ROW) {
            int len = sqlite3_column_bytes(s, 0);
            const void *blob = sqlite3_column_blob(s, 0);
            out->offer_xml = len && col_lost(s, 0, blob) ? NULL : malloc((size_t)len + 1);
            if (out->offer_xml) {
                if (len)
                    memcpy(out->offer_xml, blob, (size_t)len);
                out->offer_xml[len] = '\0';
                out->offer_len = (size_t)len;
            } else {
                r = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            }
        }
        done(s);
    }
    return r;
}

acc_err acc_store_agreement_get(struct acc_store *st, const char *id, bool with_offer,
                                struct acc_agreement *out, struct acc_error *err)
{
    struct conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = read_begin(st, &c, err);
    if (rc)
        return rc;
    rc = get_one(c, id, with_offer, out, err);
    read_end(st, c);
    if (rc)
        acc_agreement_release(out);
    return rc;
}

/* The current state of an agreement inside the writer's transaction. */
static acc_err current_state(struct conn *c, const char *id, enum acc_state *out,
                             struct acc_error *err)
{
    sqlite3_stmt *s = stmt(c, S_AGR_STATE, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, id);
    int rc = sqlite3_step(s);
    acc_err r = ACC_OK;
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (!v || !acc_state_parse(v, out))
            r = acc_error_set(err, ACC_ERR_STORAGE, "agreement %s has a bad state", id);
    } else if (rc == SQLITE_DONE) {
        r = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    } else {
        r = db_error(c->db, err, "read state");
    }
    done(s);
    return r;
}

static acc_err journal_put_one(struct conn *c, const struct acc_booking *b, acc_time now,
                               struct acc_error *err)
{
    sqlite3_stmt *s = stmt(c, S_JOURNAL_PUT, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, b->key);
    bind_text(s, 2, b->agreement);
    sqlite3_bind_int(s, 3, (int)b->round);
    bind_text(s, 4, b->adapter);
    bind_text(s, 5, acc_resource_kind_name(b->kind));
    bind_text(s, 6, b->resource);
    sqlite3_bind_int64(s, 7, b->amount);
    sqlite3_bind_int64(s, 8, b->start);
    sqlite3_bind_int64(s, 9, b->end);
    bind_text(s, 10, acc_booking_state_name(b->state));
    bind_text(s, 11, b->local_id[0] ? b->local_id : NULL);
    bind_time(s, 12, b->eff_start);
    bind_time(s, 13, b->eff_end);
    bind_text(s, 14, b->error[0] ? b->error : NULL);
    sqlite3_bind_int64(s, 15, now);
    return step_done(c, s, err, "write journal");
}

static acc_err trace_put(struct conn *c, const char *id, const struct acc_trace *t,
                         struct acc_error *err)
{
    if (!t || t->n == 0)
        return ACC_OK;
    sqlite3_stmt *s = stmt(c, S_TRACE_MAXSEQ, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, id);
    int64_t base = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    done(s);
    for (size_t i = 0; i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        if (!(s = stmt(c, S_TRACE_INSERT, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, id);
        sqlite3_bind_int64(s, 2, base + (int64_t)i + 1);
        sqlite3_bind_int(s, 3, (int)e->round);
        bind_text(s, 4, acc_trace_kind_name(e->kind));
        bind_text(s, 5, e->target);
        bind_text(s, 6, e->adapter);
        sqlite3_bind_int64(s, 7, e->amount);
        bind_time(s, 8, e->t_from);
        bind_time(s, 9, e->t_until);
        bind_time(s, 10, e->t_result);
        bind_text(s, 11, acc_err_symbol(e->status));
        sqlite3_bind_int64(s, 12, e->elapsed_us);
        bind_text(s, 13, e->detail);
        acc_err rc = step_done(c, s, err, "write trace");
        if (rc)
            return rc;
    }
    return ACC_OK;
}

struct settle_arg {
    const struct acc_agreement *a;
    unsigned from;
    const struct acc_trace *trace;
    const struct acc_booking *bookings;
    size_t n_bookings;
};

static acc_err settle_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct settle_arg *x = arg;
    const struct acc_agreement *a = x->a;
    enum acc_state cur;
    acc_err rc = current_state(c, a->id, &cur, err);
    if (rc)
        return rc;
    if (!(x->from & ACC_STATE_BIT(cur)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", a->id, acc_state_name(cur));

    sqlite3_stmt *s = stmt(c, S_AGR_SETTLE, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, acc_state_name(a->state));
    sqlite3_bind_int64(s, 2, a->updated);
    bind_time(s, 3, a->start);
    bind_time(s, 4, a->end);
    sqlite3_bind_int(s, 5, (int)a->rounds);
    sqlite3_bind_int(s, 6, (int)a->rollbacks);
    bind_text(s, 7, a->fault_code);
    bind_text(s, 8, a->reason);
    bind_text(s, 9, a->id);
    if ((rc = step_done(c, s, err, "update agreement")))
        return rc;

    if (!(s = stmt(c, S_COMP_DELETE, err)))
        return ACC_ERR_STORAGE;
    bind_text(s, 1, a->id);
    if ((rc = step_done(c, s, err, "update allocation")))
        return rc;
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *x2 = &a->comps[i];
        if (!(s = stmt(c, S_COMP_INSERT, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, a->id);
        sqlite3_bind_int64(s, 2, (int64_t)i);
        bind_text(s, 3, x2->name);
        bind_text(s, 4, x2->site);
        sqlite3_bind_int64(s, 5, x2->nodes);
        sqlite3_bind_int64(s, 6, x2->ppn);
        bind_text(s, 7, x2->reservation);
        bind_text(s, 8, x2->local_id);
        bind_text(s, 9, x2->node_names);
        bind_text(s, 10, x2->executable);
        struct acc_buf args = ACC_BUF_INIT;
        for (size_t j = 0; j < x2->n_args; j++)
            acc_buf_append(&args, x2->args[j], strlen(x2->args[j]) + 1);
        if (!acc_buf_ok(&args))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (x2->n_args)
            sqlite3_bind_blob(s, 11, args.data, (int)args.len, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s, 11);
        acc_buf_release(&args);
        if ((rc = step_done(c, s, err, "write allocation")))
            return rc;
    }
    if (!(s = stmt(c, S_LINK_DELETE, err)))
        return ACC_ERR_STORAGE;
    bind_text(s, 1, a->id);
    if ((rc = step_done(c, s, err, "update allocation")))
        return rc;
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        if (!(s = stmt(c, S_LINK_INSERT, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, a->id);
        sqlite3_bind_int64(s, 2, (int64_t)i);
        bind_text(s, 3, l->name);
        bind_text(s, 4, l->from);
        bind_text(s, 5, l->to);
        bind_text(s, 6, l->site_a);
        bind_text(s, 7, l->site_b);
        bind_text(s, 8, l->link);
        sqlite3_bind_int64(s, 9, l->bandwidth);
        bind_text(s, 10, l->reservation);
        bind_text(s, 11, l->local_id);
        if ((rc = step_done(c, s, err, "write allocation")))
            return rc;
    }
    if ((rc = trace_put(c, a->id, x->trace, err)))
        return rc;
    if (a->run) {
        if (!(s = stmt(c, S_RUN_INSERT, err)))
            return ACC_ERR_STORAGE;
        bind_text(s, 1, a->id);
        bind_text(s, 2, acc_launch_name(a->run->style));
        bind_text(s, 3, acc_run_state_name(a->run->state));
        bind_text(s, 4, a->run->directory);
        bind_text(s, 5, a->run->metampich ? a->run->metampich : "");
        bind_text(s, 6, a->run->rsl ? a->run->rsl : "");
        bind_text(s, 7, a->run->reason);
        if ((rc = step_done(c, s, err, "write launch descriptions")))
            return rc;
    }
    for (size_t i = 0; i < x->n_bookings; i++) {
        if ((rc = journal_put_one(c, &x->bookings[i], a->updated, err)))
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_agreement_settle(struct acc_store *st, const struct acc_agreement *a,
                                   unsigned from, const struct acc_trace *trace,
                                   const struct acc_booking *bookings, size_t n_bookings,
                                   struct acc_error *err)
{
    struct settle_arg x = {a, from, trace, bookings, n_bookings};
    return write_job(st, settle_job, &x, err);
}

struct transition_arg {
    const char *id;
    unsigned from;
    enum acc_state to;
    const char *reason;
    enum acc_state was;
};

static acc_err transition_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct transition_arg *x = arg;
    acc_err rc = current_state(c, x->id, &x->was, err);
    if (rc)
        return rc;
    if (!(x->from & ACC_STATE_BIT(x->was)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", x->id,
                             acc_state_name(x->was));
    sqlite3_stmt *s = stmt(c, x->reason ? S_AGR_SET_STATE_REASON : S_AGR_SET_STATE, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, acc_state_name(x->to));
    sqlite3_bind_int64(s, 2, acc_now());
    if (x->reason) {
        bind_text(s, 3, x->reason);
        bind_text(s, 4, x->id);
    } else {
        bind_text(s, 3, x->id);
    }
    return step_done(c, s, err, "update state");
}

acc_err acc_store_agreement_transition(struct acc_store *st, const char *id, unsigned from,
                                       enum acc_state to, const char *reason, enum acc_state *was,
                                       struct acc_error *err)
{
    struct transition_arg x = {id, from, to, reason, ACC_STATE_PENDING};
    acc_err rc = write_job(st, transition_job, &x, err);
    if (was && (rc == ACC_OK || rc == ACC_ERR_STATE))
        *was = x.was;
    return rc;
}

acc_err acc_store_agreement_list(struct acc_store *st, const struct acc_list_filter *f,
                                 struct acc_agreement_list *out, struct acc_error *err)
{
    char q[1024];
    int n = snprintf(
        q, sizeof q,
        "SELECT " AGR_COLUMNS " FROM agreement WHERE 1=1%s%s%s%s%s "
        "ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?",
        f->state ? " AND state = :state" : "", f->initiator ? " AND initiator = :initiator" : "",
        f->site ? " AND seq IN (SELECT agreement FROM allocation_component "
                  "WHERE site = :site)"
                : "",
        f->from ? " AND end_time > :from" : "", f->until ? " AND start_time < :until" : "");
    if (n < 0 || (size_t)n >= sizeof q)
        return acc_error_set(err, ACC_ERR_INTERNAL, "list query too long");
    memset(out, 0, sizeof *out);

    struct conn *c;
    acc_err rc = read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c->db, q, -1, &s, NULL) != SQLITE_OK) {
        rc = db_error(c->db, err, "list agreements");
        goto out;
    }
    int i;
    if (f->state && (i = sqlite3_bind_parameter_index(s, ":state")))
        bind_text(s, i, f->state);
    if (f->initiator && (i = sqlite3_bind_parameter_index(s, ":initiator")))
        bind_text(s, i, f->initiator);
    if (f->site && (i = sqlite3_bind_parameter_index(s, ":site")))
        bind_text(s, i, f->site);
    if (f->from && (i = sqlite3_bind_parameter_index(s, ":from")))
        sqlite3_bind_int64(s, i, f->from);
    if (f->until && (i = sqlite3_bind_parameter_index(s, ":until")))
        sqlite3_bind_int64(s, i, f->until);
    int np = sqlite3_bind_parameter_count(s);
    sqlite3_bind_int64(s, np - 1, f->limit ? f->limit : 100);
    sqlite3_bind_int64(s, np, f->offset);

    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        out->v = v;
        struct acc_agreement *a = &out->v[out->n++];
        if (read_agreement_row(s, a)) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = read_allocation(c, a, err)))
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_error(c->db, err, "list agreements");
out:
    sqlite3_finalize(s);
    read_end(st, c);
    if (rc)
        acc_agreement_list_release(out);
    return rc;
}

acc_err acc_store_agreement_ids(struct acc_store *st, unsigned states, char (**ids)[ACC_ID_LEN + 1],
                                size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct conn *c;
    acc_err rc = read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT id, state FROM agreement WHERE state NOT IN "
                           "('Rejected', 'Complete', 'Terminated') OR ? ORDER BY created",
                           -1, &s, NULL) != SQLITE_OK) {
        rc = db_error(c->db, err, "list ids");
        goto out;
    }
    /* Final states are many and rarely wanted: scan them only when asked. */
    unsigned finals = ACC_STATE_BIT(ACC_STATE_REJECTED) | ACC_STATE_BIT(ACC_STATE_COMPLETE) |
                      ACC_STATE_BIT(ACC_STATE_TERMINATED);
    sqlite3_bind_int(s, 1, (states & finals) != 0);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        enum acc_state st_;
        const char *v = (const char *)sqlite3_column_text(s, 1);
        if (!v || !acc_state_parse(v, &st_) || !(states & ACC_STATE_BIT(st_)))
            continue;
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        *ids = p;
        col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
    if (step != SQLITE_DONE)
        rc = db_error(c->db, err, "list ids");
out:
    sqlite3_finalize(s);
    read_end(st, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

struct complete_arg {
    acc_time now;
    unsigned count;
};

static acc_err complete_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct complete_arg *x = arg;
    sqlite3_stmt *s = stmt(c, S_AGR_COMPLETE_ENDED, err);
    if (!s)
        return ACC_ERR_STORAGE;
    sqlite3_bind_int64(s, 1, x->now);
    sqlite3_bind_int64(s, 2, x->now);
    acc_err rc = step_done(c, s, err, "complete agreements");
    x->count = (unsigned)sqlite3_changes(c->db);
    return rc;
}

acc_err acc_store_agreement_complete_ended(struct acc_store *st, acc_time now, unsigned *count,
                                           struct acc_error *err)
{
    struct complete_arg x = {now, 0};
    acc_err rc = write_job(st, complete_job, &x, err);
    if (count)
        *count = rc ? 0 : x.count;
    return rc;
}

acc_err acc_store_agreement_counts(struct acc_store *st, uint64_t *counts, struct acc_error *err)
{
    memset(counts, 0, ACC_STATE__COUNT * sizeof *counts);
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_AGR_COUNTS, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        enum acc_state x;
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (v && acc_state_parse(v, &x))
            counts[x] = (uint64_t)sqlite3_column_int64(s, 1);
    }
    if (step != SQLITE_DONE)
        rc = db_error(c->db, err, "count agreements");
    done(s);
    reader_give(st, c);
    return rc;
}

acc_err acc_store_trace_get(struct acc_store *st, const char *id, struct acc_trace *out,
                            struct acc_error *err)
{
    acc_trace_init(out);
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_TRACE_GET, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    bind_text(s, 1, id);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        struct acc_trace_event e = {0};
        e.round = (unsigned)sqlite3_column_int(s, 1);
        const char *kind = (const char *)sqlite3_column_text(s, 2);
        if (!kind || !acc_trace_kind_parse(kind, &e.kind))
            e.kind = ACC_TRACE_FAIL;
        e.target = (char *)sqlite3_column_text(s, 3);
        e.adapter = (char *)sqlite3_column_text(s, 4);
        e.amount = sqlite3_column_int64(s, 5);
        e.t_from = sqlite3_column_int64(s, 6);
        e.t_until = sqlite3_column_int64(s, 7);
        e.t_result = sqlite3_column_int64(s, 8);
        const char *status = (const char *)sqlite3_column_text(s, 9);
        e.status = ACC_OK;
        for (int k = 0; status && k < ACC_ERR__COUNT; k++) {
            if (strcmp(status, acc_err_symbol((acc_err)k)) == 0)
                e.status = (acc_err)k;
        }
        e.elapsed_us = sqlite3_column_int64(s, 10);
        e.detail = (char *)sqlite3_column_text(s, 11);
        if (acc_trace_add(out, &e)) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_error(c->db, err, "read trace");
    done(s);
    reader_give(st, c);
    if (rc)
        acc_trace_release(out);
    return rc;
}

/* ---------------------------------------------------------------- journal */

struct journal_arg {
    const struct acc_booking *b;
    size_t n;
};

static acc_err journal_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct journal_arg *x = arg;
    acc_time now = acc_now();
    for (size_t i = 0; i < x->n; i++) {
        acc_err rc = journal_put_one(c, &x->b[i], now, err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_journal_put(struct acc_store *st, const struct acc_booking *b, size_t n,
                              struct acc_error *err)
{
    if (n == 0)
        return ACC_OK;
    struct journal_arg x = {b, n};
    return write_job(st, journal_job, &x, err);
}

static void free_journal_arg(void *arg)
{
    struct journal_arg *x = arg;
    free((void *)x->b);
    free(x);
}

acc_err acc_store_journal_queue(struct acc_store *st, const struct acc_booking *b, size_t n,
                                struct acc_error *err)
{
    if (n == 0)
        return ACC_OK;
    struct journal_arg *x = malloc(sizeof *x);
    struct acc_booking *copy = malloc(n * sizeof *copy);
    if (!x || !copy) {
        free(x);
        free(copy);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    memcpy(copy, b, n * sizeof *copy);
    x->b = copy;
    x->n = n;
    return queue_job(st, journal_job, x, free_journal_arg, err);
}

acc_err acc_store_journal_get(struct acc_store *st, const char *agreement, struct acc_booking **out,
                              size_t *n, struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, agreement ? S_JOURNAL_BY_AGR : S_JOURNAL_OPEN, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    if (agreement)
        bind_text(s, 1, agreement);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(*out, (*n + 1) * sizeof **out);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *out = v;
        struct acc_booking *b = &(*out)[(*n)++];
        memset(b, 0, sizeof *b);
        col_copy(s, 0, b->key, sizeof b->key);
        col_copy(s, 1, b->agreement, sizeof b->agreement);
        b->round = (unsigned)sqlite3_column_int(s, 2);
        col_copy(s, 3, b->adapter, sizeof b->adapter);
        const char *kind = (const char *)sqlite3_column_text(s, 4);
        b->kind = kind && strcmp(kind, "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
        col_copy(s, 5, b->resource, sizeof b->resource);
        b->amount = sqlite3_column_int64(s, 6);
        b->start = sqlite3_column_int64(s, 7);
        b->end = sqlite3_column_int64(s, 8);
        const char *state = (const char *)sqlite3_column_text(s, 9);
        if (!state || !acc_booking_state_parse(state, &b->state))
            b->state = ACC_BOOKING_UNKNOWN;
        col_copy(s, 10, b->local_id, sizeof b->local_id);
        b->eff_start = sqlite3_column_int64(s, 11);
        b->eff_end = sqlite3_column_int64(s, 12);
        col_copy(s, 13, b->error, sizeof b->error);
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_error(c->db, err, "read journal");
    done(s);
    reader_give(st, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* ------------------------------------------------------ simulator calendars */

struct sim_put_arg {
    const char *adapter;
    const struct acc_sim_booking *b;
    size_t n;
    int64_t day;
};

static acc_err sim_put_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct sim_put_arg *x = arg;
    acc_err rc;
    for (size_t i = 0; i < x->n; i++) {
        const struct acc_sim_booking *b = &x->b[i];
        sqlite3_stmt *s = stmt(c, S_SIM_PUT, err);
        if (!s)
            return ACC_ERR_STORAGE;
        bind_text(s, 1, x->adapter);
        bind_text(s, 2, b->key);
        bind_text(s, 3, b->resource);
        sqlite3_bind_int64(s, 4, b->start);
        sqlite3_bind_int64(s, 5, b->end);
        sqlite3_bind_int64(s, 6, b->amount);
        bind_text(s, 7, b->owner ? b->owner : "");
        if ((rc = step_done(c, s, err, "write calendar")))
            return rc;
    }
    if (x->day >= 0) {
        sqlite3_stmt *s = stmt(c, S_SIM_DAY_MARK, err);
        if (!s)
            return ACC_ERR_STORAGE;
        bind_text(s, 1, x->adapter);
        sqlite3_bind_int64(s, 2, x->day);
        if ((rc = step_done(c, s, err, "write calendar")))
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_sim_put(struct acc_store *st, const char *adapter,
                          const struct acc_sim_booking *b, size_t n, int64_t day,
                          struct acc_error *err)
{
    struct sim_put_arg x = {adapter, b, n, day};
    return write_job(st, sim_put_job, &x, err);
}

struct sim_delete_arg {
    const char *adapter, *key;
};

static acc_err sim_delete_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct sim_delete_arg *x = arg;
    sqlite3_stmt *s = stmt(c, S_SIM_DELETE, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, x->adapter);
    bind_text(s, 2, x->key);
    return step_done(c, s, err, "write calendar");
}

acc_err acc_store_sim_delete(struct acc_store *st, const char *adapter, const char *key,
                             struct acc_error *err)
{
    struct sim_delete_arg x = {adapter, key};
    return write_job(st, sim_delete_job, &x, err);
}

/* A queued calendar write owns its strings. */
struct sim_queued {
    struct sim_put_arg put;
    struct acc_sim_booking b;
    struct sim_delete_arg del;
    char *adapter, *key, *resource, *owner;
};

static void free_sim_queued(void *arg)
{
    struct sim_queued *q = arg;
    free(q->adapter);
    free(q->key);
    free(q->resource);
    free(q->owner);
    free(q);
}

static struct sim_queued *sim_queued_new(const char *adapter, const char *key, const char *resource,
                                         const char *owner)
{
    struct sim_queued *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->adapter = acc_strdup(adapter);
    q->key = acc_strdup(key);
    q->resource = acc_strdup(resource);
    q->owner = acc_strdup(owner);
    if (!q->adapter || !q->key || (resource && !q->resource) || (owner && !q->owner)) {
        free_sim_queued(q);
        return NULL;
    }
    return q;
}

static acc_err sim_queued_put_job(struct conn *c, void *arg, struct acc_error *err)
{
    return sim_put_job(c, &((struct sim_queued *)arg)->put, err);
}

static acc_err sim_queued_delete_job(struct conn *c, void *arg, struct acc_error *err)
{
    return sim_delete_job(c, &((struct sim_queued *)arg)->del, err);
}

acc_err acc_store_sim_queue_put(struct acc_store *st, const char *adapter,
                                const struct acc_sim_booking *b, struct acc_error *err)
{
    struct sim_queued *q = sim_queued_new(adapter, b->key, b->resource, b->owner);
    if (!q)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    q->b = (struct acc_sim_booking){q->key, q->resource, b->start, b->end, b->amount, q->owner};
    q->put = (struct sim_put_arg){q->adapter, &q->b, 1, -1};
    return queue_job(st, sim_queued_put_job, q, free_sim_queued, err);
}

acc_err acc_store_sim_queue_delete(struct acc_store *st, const char *adapter, const char *key,
                                   struct acc_error *err)
{
    struct sim_queued *q = sim_queued_new(adapter, key, NULL, NULL);
    if (!q)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    q->del = (struct sim_delete_arg){q->adapter, q->key};
    return queue_job(st, sim_queued_delete_job, q, free_sim_queued, err);
}

acc_err acc_store_sim_load(struct acc_store *st, const char *adapter,
                           acc_err (*fn)(void *ctx, const struct acc_sim_booking *b), void *ctx,
                           struct acc_error *err)
{
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_SIM_LOAD, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    bind_text(s, 1, adapter);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        struct acc_sim_booking b = {
            .key = (const char *)sqlite3_column_text(s, 0),
            .resource = (const char *)sqlite3_column_text(s, 1),
            .start = sqlite3_column_int64(s, 2),
            .end = sqlite3_column_int64(s, 3),
            .amount = sqlite3_column_int64(s, 4),
            .owner = (const char *)sqlite3_column_text(s, 5),
        };
        if (!b.key || !b.resource)
            continue;
        if ((rc = fn(ctx, &b))) {
            acc_error_set(err, rc, "loading the calendar of %s failed", adapter);
            break;
        }
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_error(c->db, err, "read calendar");
    done(s);
    reader_give(st, c);
    return rc;
}

acc_err acc_store_sim_day_marked(struct acc_store *st, const char *adapter, int64_t day,
                                 bool *marked, struct acc_error *err)
{
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_SIM_DAY_GET, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    bind_text(s, 1, adapter);
    sqlite3_bind_int64(s, 2, day);
    int step = sqlite3_step(s);
    *marked = step == SQLITE_ROW;
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = db_error(c->db, err, "read calendar");
    done(s);
    reader_give(st, c);
    return rc;
}

static acc_err flush_job(struct conn *c, void *arg, struct acc_error *err)
{
    (void)c;
    (void)arg;
    (void)err;
    return ACC_OK;
}

acc_err acc_store_flush(struct acc_store *st, struct acc_error *err)
{
    /* An awaited write commits every write queued before it. */
    return write_job(st, flush_job, NULL, err);
}

acc_err acc_store_ping(struct acc_store *st, struct acc_error *err)
{
    struct conn *c;
    acc_err rc = reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_PING, err);
    if (!s) {
        reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    if (sqlite3_step(s) != SQLITE_ROW)
        rc = db_error(c->db, err, "ping");
    done(s);
    reader_give(st, c);
    return rc;
}

/* -------------------------------------------------------------------- runs */

static acc_err run_read(struct conn *c, const char *id, bool with_output, struct acc_run *r,
                        struct acc_error *err)
{
    sqlite3_stmt *s = stmt(c, S_RUN_GET, err);
    if (!s)
        return ACC_ERR_STORAGE;
    sqlite3_bind_int(s, 1, with_output);
    bind_text(s, 2, id);
    int step = sqlite3_step(s);
    if (step == SQLITE_DONE) {
        done(s);
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %.40s has no launch", id);
    }
    if (step != SQLITE_ROW) {
        done(s);
        return db_error(c->db, err, "read launch");
    }
    acc_strlcpy(r->agreement, id, sizeof r->agreement);
    const char *v = (const char *)sqlite3_column_text(s, 0);
    if (!v || !acc_launch_parse(v, &r->style))
        r->style = ACC_LAUNCH_NONE;
    v = (const char *)sqlite3_column_text(s, 1);
    if (!v || !acc_run_state_parse(v, &r->state))
        r->state = ACC_RUN_LOST;
    r->started = sqlite3_column_int64(s, 2);
    r->ended = sqlite3_column_int64(s, 3);
    r->exit_status = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 4);
    r->signal = sqlite3_column_int(s, 5);
    r->pid = sqlite3_column_int64(s, 6);
    r->pid_start = sqlite3_column_int64(s, 7);
    r->directory = col_dup(s, 8);
    r->command = col_dup(s, 9);
    r->reason = col_dup(s, 10);
    bool oom = false;
    if (sqlite3_column_type(s, 11) != SQLITE_NULL) {
        int len = sqlite3_column_bytes(s, 11);
        const void *blob = sqlite3_column_blob(s, 11);
        r->output = malloc((size_t)len + 1);
        if (r->output) {
            if (len)
                memcpy(r->output, blob, (size_t)len);
            r->output[len] = '\0';
            r->output_len = (size_t)len;
        }
        oom |= !r->output;
    }
    r->output_total = sqlite3_column_type(s, 12) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 12);
    r->metampich = col_dup(s, 13);
    r->rsl = col_dup(s, 14);
    r->batch = col_dup(s, 15);
    oom |= !r->metampich || !r->rsl;
    done(s);
    return oom ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory") : ACC_OK;
}

acc_err acc_store_run_get(struct acc_store *st, const char *id, bool with_output,
                          struct acc_run *out, struct acc_error *err)
{
    struct conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = read_begin(st, &c, err);
    if (rc)
        return rc;
    rc = run_read(c, id, with_output, out, err);
    read_end(st, c);
    if (rc)
        acc_run_release(out);
    return rc;
}

struct run_arg {
    const struct acc_run *r;
    unsigned from; /* 0: leave the agreement alone */
    enum acc_state to;
    const char *reason;
    enum acc_state was;
};

static acc_err run_update_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct run_arg *x = arg;
    const struct acc_run *r = x->r;
    acc_err rc;
    if (x->from) {
        struct transition_arg t = {r->agreement, x->from, x->to, x->reason, ACC_STATE_PENDING};
        rc = transition_job(c, &t, err);
        x->was = t.was;
        if (rc)
            return rc;
    }
    sqlite3_stmt *s = stmt(c, S_RUN_UPDATE, err);
    if (!s)
        return ACC_ERR_STORAGE;
    bind_text(s, 1, acc_run_state_name(r->state));
    bind_time(s, 2, r->started);
    bind_time(s, 3, r->ended);
    if (r->exit_status >= 0)
        sqlite3_bind_int(s, 4, r->exit_status);
    sqlite3_bind_int(s, 5, r->signal);
    sqlite3_bind_int64(s, 6, r->pid);
    sqlite3_bind_int64(s, 7, r->pid_start);
    bind_text(s, 8, r->directory);
    bind_text(s, 9, r->command);
    bind_text(s, 10, r->reason);
    if (r->output)
        sqlite3_bind_blob(s, 11, r->output, (int)r->output_len, SQLITE_STATIC);
    if (r->output_total >= 0)
        sqlite3_bind_int64(s, 12, r->output_total);
    bind_text(s, 13, r->batch);
    bind_text(s, 14, r->agreement);
    if ((rc = step_done(c, s, err, "update launch")))
        return rc;
    if (sqlite3_changes(c->db) != 1)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %s has no launch", r->agreement);
    return ACC_OK;
}

acc_err acc_store_run_update(struct acc_store *st, const struct acc_run *r, struct acc_error *err)
{
    struct run_arg x = {r, 0, ACC_STATE_COMPLETE, NULL, ACC_STATE_PENDING};
    return write_job(st, run_update_job, &x, err);
}

acc_err acc_store_run_finish(struct acc_store *st, const struct acc_run *r, unsigned from,
                             enum acc_state to, const char *reason, enum acc_state *was,
                             struct acc_error *err)
{
    struct run_arg x = {r, from, to, reason, ACC_STATE_PENDING};
    acc_err rc = write_job(st, run_update_job, &x, err);
    if (was && (rc == ACC_OK || rc == ACC_ERR_STATE))
        *was = x.was;
    return rc;
}

acc_err acc_store_run_open(struct acc_store *st, char (**ids)[ACC_ID_LEN + 1], size_t *n,
                           struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct conn *c;
    acc_err rc = read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(c, S_RUN_OPEN, err);
    int step = SQLITE_DONE;
    while (s && (step = sqlite3_step(s)) == SQLITE_ROW) {
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *ids = p;
        col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
    if (!s)
        rc = ACC_ERR_STORAGE;
    else if (!rc && step != SQLITE_DONE)
        rc = db_error(c->db, err, "list launches");
    done(s);
    read_end(st, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}
