/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - opening and closing the store (its database through the SQL
 * layer, the migrations of db/migrations, the group-commit writer with the
 * bound on the write-ahead log), the one write primitive, flush and ping. */
#include "store.h"

#include <stdlib.h>

#include "migrations.h"
#include "store_internal.h"

/* How long writes nobody waits for may wait for company.  A negotiation's
 * Pending agreement is queued unawaited, then its journalled intents are
 * awaited after the preview round: the wait lets both share one commit
 * (and one fsync) even when the previews take a few milliseconds.  Nothing
 * is less durable: an unawaited write was never promised to anyone, and
 * every awaited write commits what was queued before it. */
#define LINGER_US 20000
/* How often the passive checkpointer moves the WAL into the database file. */
#define CHECKPOINT_MS 500

acc_err store_write(struct acc_store *st, const struct store_op *op, void *arg, unsigned flags,
                    struct acc_error *err)
{
    if (!(flags & ACC_STORE_NOWAIT))
        return acc_sql_write(st->writer, &op->job, arg, err);
    if (!op->copy)
        return acc_error_set(err, ACC_ERR_INTERNAL, "database: this write must be awaited");
    void *own = op->copy(arg);
    if (!own)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return acc_sql_write_queue(st->writer, &op->job, own, NULL, err);
}

static acc_err flush_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    (void)c;
    (void)arg;
    (void)err;
    return ACC_OK;
}

acc_err acc_store_flush(struct acc_store *st, struct acc_error *err)
{
    /* An awaited write commits every write queued before it. */
    static const struct store_op flush = {{flush_job, NULL}, NULL};
    return store_write(st, &flush, NULL, 0, err);
}

bool acc_store_writes_failing(struct acc_store *st, int64_t *for_us, char *msg, size_t len)
{
    return acc_sql_writer_failing(st->writer, for_us, msg, len);
}

static acc_err probe_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    static const struct acc_sql_query probe = {
        S_WRITE_PROBE, "INSERT INTO lease (name, holder, expires) VALUES ('write probe', '', ?) "
                       "ON CONFLICT(name) DO UPDATE SET expires = excluded.expires"};
    (void)arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &probe, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, acc_now());
    return acc_sql_run(s, "write probe", err);
}

acc_err acc_store_write_probe(struct acc_store *st, struct acc_error *err)
{
    static const struct store_op op = {{probe_job, NULL}, NULL};
    return store_write(st, &op, NULL, 0, err);
}

acc_err acc_store_ping(struct acc_store *st, struct acc_error *err)
{
    /* PostgreSQL before 16 wants the subquery named */
    static const struct acc_sql_query ping = {
        S_PING, "SELECT count(*) FROM (SELECT 1 FROM agreement LIMIT 1) AS one"};
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ping, err);
    bool row = false;
    if (!s)
        rc = acc_sql_failed(err);
    else if (!(rc = acc_sql_step(s, &row, "ping", err)) && !row)
        rc = acc_error_set(err, ACC_ERR_STORAGE, "database: ping: no answer");
    acc_sql_done(s);
    acc_sql_reader_give(st->db, c);
    return rc;
}

acc_err acc_store_open(const struct acc_store_options *opt, struct acc_store **out,
                       struct acc_error *err)
{
    *out = NULL;
    struct acc_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&st->beat_lock, NULL);
    const struct acc_sql_options sql = {
        .path = opt->path,
        .label = "database",
        .program = "accordd",
        .durable = opt->durable,
        .wal_limit = opt->wal_limit,
        .migrations = acc_migrations,
        .n_migrations = acc_migrations_count,
        .pg_migrations = acc_pg_migrations,
        .n_pg_migrations = acc_pg_migrations_count,
        .n_slots = S__COUNT,
        .max_readers = opt->readers,
    };
    const struct acc_sql_writer_options w = {
        .linger_us = LINGER_US,
        .bound_wal = true,
        .checkpoint_ms = CHECKPOINT_MS,
    };
    acc_err rc = acc_sql_open(&sql, &st->db, err);
    if (!rc)
        rc = acc_sql_writer_start(st->db, &w, &st->writer, err);
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
    acc_sql_writer_stop(st->writer);
    if (st->beat)
        acc_sql_disconnect(st->beat);
    pthread_mutex_destroy(&st->beat_lock);
    acc_sql_close(st->db);
    free(st);
}
