/* store.c - connections, the group-commit writer, checkpoints and the bound
 * on the write-ahead log, the readers' pool, migrations, open and close. */
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/common/log.h"
#include "../lib/common/sync.h"
#include "migrations.h"
#include "store_internal.h"

/* How long writes nobody waits for may wait for company. */
#define LINGER_US 2000
/* How often the passive checkpointer moves the WAL into the database file. */
#define CHECKPOINT_MS 500
/* How long a statement waits for a lock held by another connection. */
#define BUSY_MS 10000
/* How long one full (TRUNCATE) checkpoint may wait for readers to finish
 * with the log; the writer holds its writes meanwhile, then tries again. */
#define WAL_WAIT_MS       1000
#define WAL_LIMIT_DEFAULT ((int64_t)64 << 20)

struct store_job {
    struct store_job *next;
    const struct store_op *op;
    void *arg;
    bool queued; /* nobody waits: the writer releases arg and frees the job */
    acc_err rc;
    struct acc_error err;
    bool done;
};

/* ------------------------------------------------------------ connections */

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
    sqlite3_busy_timeout(c->db, BUSY_MS);
    sqlite3_extended_result_codes(c->db, 1);
    /* journal_size_limit: a log that was reset is cut back to the limit
     * instead of keeping the size of its largest day. */
    char pragmas[160];
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA synchronous=%s; PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=%lld;",
             st->durable ? "FULL" : "NORMAL", (long long)st->wal_limit);
    acc_err rc = store_exec(c, pragmas, err);
    if (rc) {
        conn_close(c);
        return rc;
    }
    *out = c;
    return ACC_OK;
}

/* ----------------------------------------------------------------- writer */

static void run_batch(struct acc_store *st, struct store_job *jobs)
{
    struct conn *c = st->writer;
    struct acc_error berr;
    acc_error_clear(&berr);
    acc_err brc = store_exec(c, "BEGIN IMMEDIATE", &berr);
    if (brc == ACC_OK) {
        for (struct store_job *j = jobs; j; j = j->next) {
            if (store_exec(c, "SAVEPOINT job", &j->err)) {
                j->rc = ACC_ERR_STORAGE;
                continue;
            }
            j->rc = j->op->run(c, j->arg, &j->err);
            if (j->rc)
                store_exec(c, "ROLLBACK TO job", NULL);
            store_exec(c, "RELEASE job", NULL);
        }
        brc = store_exec(c, "COMMIT", &berr);
        if (brc)
            store_exec(c, "ROLLBACK", NULL);
    }
    if (brc) {
        acc_log_error("%s", berr.msg);
        for (struct store_job *j = jobs; j; j = j->next) {
            j->rc = brc;
            j->err = berr;
        }
    }
}

/* Called by SQLite after each commit of the writer with the number of frames
 * in the log (instead of the automatic checkpoint, which is off). */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((struct acc_store *)arg)->wal_frames = frames;
    return SQLITE_OK;
}

static bool stopping(struct acc_store *st)
{
    pthread_mutex_lock(&st->wlock);
    bool v = st->stopping;
    pthread_mutex_unlock(&st->wlock);
    return v;
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
static void wal_bound(struct acc_store *st)
{
    sqlite3 *db = st->writer->db;
    for (;;) {
        int64_t size = 32 + (int64_t)st->wal_frames * st->frame_bytes;
        if (st->wal_frames == 0 || size < st->wal_limit / 2)
            return;
        sqlite3_busy_timeout(db, WAL_WAIT_MS);
        int log = -1, copied = -1;
        int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &copied);
        sqlite3_busy_timeout(db, BUSY_MS);
        if (rc == SQLITE_OK) {
            st->wal_frames = 0;
            st->wal_warned = false;
            return;
        }
        if ((rc & 0xff) != SQLITE_BUSY) {
            acc_log_error("database: checkpoint: %s", sqlite3_errmsg(db));
            return;
        }
        if (size < st->wal_limit || stopping(st))
            return; /* again after the next batch */
        if (!st->wal_warned)
            acc_log_warn("database: the log is at its limit (%lld bytes) and readers keep it "
                         "from being reset; writes wait",
                         (long long)st->wal_limit);
        st->wal_warned = true;
    }
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
            struct timespec until = acc_mono_deadline(LINGER_US);
            while (st->awaited == 0 && !st->stopping &&
                   pthread_cond_timedwait(&st->wwork, &st->wlock, &until) != ETIMEDOUT)
                ;
        }
        struct store_job *jobs = st->head;
        st->head = st->tail = NULL;
        st->awaited = 0;
        pthread_mutex_unlock(&st->wlock);

        run_batch(st, jobs);

        /* Queued jobs are nobody's to wait for: settle them here. */
        struct store_job *queued = NULL;
        pthread_mutex_lock(&st->wlock);
        for (struct store_job *j = jobs, *next; j; j = next) {
            next = j->next;
            if (j->queued) {
                j->next = queued;
                queued = j;
            } else {
                j->done = true;
            }
        }
        pthread_cond_broadcast(&st->wdone);
        pthread_mutex_unlock(&st->wlock);
        for (struct store_job *j = queued, *next; j; j = next) {
            next = j->next;
            if (j->rc)
                acc_log_error("queued write failed: %s", j->err.msg);
            j->op->release(j->arg);
            free(j);
        }
        wal_bound(st);
        pthread_mutex_lock(&st->wlock);
    }
    pthread_mutex_unlock(&st->wlock);
    return NULL;
}

/* Copies the log into the database file now and then, from its own
 * connection, so that the writer seldom pays for a checkpoint. */
static void *checkpointer_main(void *arg)
{
    struct acc_store *st = arg;
    struct conn *c = NULL;
    if (conn_open(st, &c, NULL)) {
        acc_log_error("database: the checkpointer cannot open a connection");
        return NULL;
    }
    pthread_mutex_lock(&st->wlock);
    while (!st->stopping) {
        struct timespec until = acc_mono_deadline((int64_t)CHECKPOINT_MS * 1000);
        pthread_cond_timedwait(&st->ckwake, &st->wlock, &until);
        if (st->stopping)
            break;
        pthread_mutex_unlock(&st->wlock);
        int log = 0, done = 0;
        int rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
        if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
            acc_log_warn("database: checkpoint: %s", sqlite3_errmsg(c->db));
        pthread_mutex_lock(&st->wlock);
    }
    pthread_mutex_unlock(&st->wlock);
    conn_close(c);
    return NULL;
}

acc_err store_write(struct acc_store *st, const struct store_op *op, void *arg, unsigned flags,
                    struct acc_error *err)
{
    bool nowait = flags & ACC_STORE_NOWAIT;
    struct store_job stack = {.op = op, .arg = arg}, *j = &stack;
    if (nowait) {
        if (!op->copy)
            return acc_error_set(err, ACC_ERR_INTERNAL, "database: this write must be awaited");
        j = calloc(1, sizeof *j);
        void *own = j ? op->copy(arg) : NULL;
        if (!own) {
            free(j);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        *j = (struct store_job){.op = op, .arg = own, .queued = true};
    }
    acc_error_clear(&j->err);
    pthread_mutex_lock(&st->wlock);
    if (st->stopping) {
        pthread_mutex_unlock(&st->wlock);
        if (nowait) {
            op->release(j->arg);
            free(j);
        }
        return acc_error_set(err, ACC_ERR_STORAGE, "database: closing");
    }
    /* An awaited write wakes the writer at once; of the queued ones only the
     * first does, and the writer lingers for the others. */
    if (!nowait || !st->head)
        pthread_cond_signal(&st->wwork);
    if (st->tail)
        st->tail->next = j;
    else
        st->head = j;
    st->tail = j;
    if (nowait) {
        pthread_mutex_unlock(&st->wlock);
        return ACC_OK;
    }
    st->awaited++;
    while (!j->done)
        pthread_cond_wait(&st->wdone, &st->wlock);
    pthread_mutex_unlock(&st->wlock);
    if (j->rc)
        acc_error_copy(err, &j->err);
    return j->rc;
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
    static const struct store_op flush = {flush_job, NULL, NULL};
    return store_write(st, &flush, NULL, 0, err);
}

/* ---------------------------------------------------------------- readers */

acc_err store_reader_take(struct acc_store *st, struct conn **out, struct acc_error *err)
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

void store_reader_give(struct acc_store *st, struct conn *c)
{
    pthread_mutex_lock(&st->rlock);
    c->next = st->free_readers;
    st->free_readers = c;
    pthread_cond_signal(&st->rfree);
    pthread_mutex_unlock(&st->rlock);
}

acc_err store_read_begin(struct acc_store *st, struct conn **c, struct acc_error *err)
{
    acc_err rc = store_reader_take(st, c, err);
    if (rc)
        return rc;
    rc = store_exec(*c, "BEGIN", err);
    if (rc)
        store_reader_give(st, *c);
    return rc;
}

void store_read_end(struct acc_store *st, struct conn *c)
{
    store_exec(c, "COMMIT", NULL);
    store_reader_give(st, c);
}

acc_err acc_store_ping(struct acc_store *st, struct acc_error *err)
{
    static const struct stmt_def ping = {S_PING, "SELECT count(*) FROM sqlite_master"};
    struct conn *c;
    acc_err rc = store_reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store_stmt(c, &ping, err);
    if (!s)
        rc = ACC_ERR_STORAGE;
    else if (sqlite3_step(s) != SQLITE_ROW)
        rc = store_db_error(c->db, err, "ping");
    store_done(s);
    store_reader_give(st, c);
    return rc;
}

/* ------------------------------------------------------------- migrations */

static acc_err migrate(struct conn *c, struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    int version = 0;
    if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return store_db_error(c->db, err, "read schema version");
    if (sqlite3_step(s) == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);

    int newest = (int)acc_migrations_count;
    if (version > newest)
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "database: schema version %d is newer than this accordd (%d)", version,
                             newest);
    for (int v = version; v < newest; v++) {
        acc_err rc = store_exec(c, "BEGIN IMMEDIATE", err);
        if (rc)
            return rc;
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        rc = store_exec(c, acc_migrations[v].data, err);
        if (!rc)
            rc = store_exec(c, bump, err);
        if (rc) {
            store_exec(c, "ROLLBACK", NULL);
            acc_error_prefix(err, "migration %s", acc_migrations[v].name);
            return rc;
        }
        rc = store_exec(c, "COMMIT", err);
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

/* WAL lets readers work while the writer commits; the writer learns the
 * log's length after each commit, and the page size gives its bytes. */
static acc_err wal_setup(struct acc_store *st, struct acc_error *err)
{
    sqlite3 *db = st->writer->db;
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW || !sqlite3_column_text(s, 0) ||
        strcmp((const char *)sqlite3_column_text(s, 0), "wal") != 0)
        rc =
            acc_error_set(err, ACC_ERR_STORAGE, "database %s: cannot switch to WAL mode", st->path);
    sqlite3_finalize(s);
    s = NULL;
    if (!rc && (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &s, NULL) != SQLITE_OK ||
                sqlite3_step(s) != SQLITE_ROW))
        rc = store_db_error(db, err, "read page size");
    if (!rc)
        st->frame_bytes = sqlite3_column_int64(s, 0) + 24;
    sqlite3_finalize(s);
    /* Checkpoints are the checkpointer's and wal_bound's, never a commit's:
     * the hook replaces the automatic checkpoint. */
    if (!rc)
        sqlite3_wal_hook(db, wal_hook, st);
    return rc;
}

acc_err acc_store_open(const struct acc_store_options *opt, struct acc_store **out,
                       struct acc_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_setup);
    if (opt->wal_limit < 0)
        return acc_error_set(err, ACC_ERR_INVALID, "database: wal_limit must not be negative");
    struct acc_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&st->wlock, NULL);
    acc_cond_init_monotonic(&st->wwork);
    acc_cond_init_monotonic(&st->ckwake);
    pthread_cond_init(&st->wdone, NULL);
    pthread_mutex_init(&st->rlock, NULL);
    pthread_cond_init(&st->rfree, NULL);
    st->durable = opt->durable;
    st->wal_limit = opt->wal_limit ? opt->wal_limit : WAL_LIMIT_DEFAULT;
    st->max_readers = opt->readers ? opt->readers : 32;
    st->path = strdup(opt->path);
    acc_err rc = st->path ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = conn_open(st, &st->writer, err);
    if (!rc)
        rc = wal_setup(st, err);
    if (!rc)
        rc = migrate(st->writer, err);
    if (!rc) {
        if (pthread_create(&st->writer_thread, NULL, writer_main, st) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the database writer");
        else
            st->writer_started = true;
    }
    if (!rc) {
        if (pthread_create(&st->checkpointer, NULL, checkpointer_main, st) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the database checkpointer");
        else
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
