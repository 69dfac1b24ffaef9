/* SPDX-License-Identifier: Apache-2.0 */
/* ledger_store.c - the booking ledger's calendar file (ledger_store.h), on
 * the SQL layer: its migrations (lib/ledger/migrations), its statements, its
 * writes through the group-commit writer, and a shared calendar's writes
 * numbered under their resources' locks and its changes read back. */
#include "ledger_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "../sql/sql.h"
#include "../sql/sql_writer.h"

/* lib/ledger/migrations/NNNN_name.sql, compiled in (cmake/embed.cmake). */
extern const struct acc_embedded acc_ledger_migrations[];
extern const size_t acc_ledger_migrations_count;
extern const struct acc_embedded acc_ledger_pg_migrations[]; /* migrations/postgres */
extern const size_t acc_ledger_pg_migrations_count;

enum {
    Q_PUT,
    Q_DELETE,
    Q_DAY_MARK,
    Q_LOAD,
    Q_DAY_GET,
    Q_PUT_PG,
    Q_RESOURCE_OF,
    Q_CANCEL,
    Q_CHANGES,
    Q_KEY,
    Q_LOCK,
    Q_PRUNE,
    Q_PRUNE_GONE,
    Q__COUNT
};

/* a booking's row as read back; the last column says a cancel's tombstone */
#define COLUMNS "key, resource, start_time, end_time, amount, owner, change_no"

static const struct acc_sql_query
    /* a calendar file (SQLite): change numbers stay 0, a cancel removes */
    q_put = {Q_PUT, "INSERT INTO booking (key, resource, start_time, end_time, amount, owner) "
                    "VALUES (?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                    "resource = excluded.resource, start_time = excluded.start_time, "
                    "end_time = excluded.end_time, amount = excluded.amount, "
                    "owner = excluded.owner"},
    q_delete = {Q_DELETE, "DELETE FROM booking WHERE key = ?"},
    /* both */
    q_day_mark = {Q_DAY_MARK, "INSERT INTO load_day (day) VALUES (?) ON CONFLICT DO NOTHING"},
    q_load = {Q_LOAD, "SELECT " COLUMNS ", 0 FROM booking"},
    q_day_get = {Q_DAY_GET, "SELECT 1 FROM load_day WHERE day = ?"},
    /* shared calendars (PostgreSQL), each write numbered under its
     * resource's lock; a key never moves to another resource */
    q_put_pg = {Q_PUT_PG, "INSERT INTO booking (" COLUMNS ") "
                          "VALUES (?,?,?,?,?,?, nextval('booking_change')) "
                          "ON CONFLICT(key) DO UPDATE SET start_time = excluded.start_time, "
                          "end_time = excluded.end_time, amount = excluded.amount, "
                          "owner = excluded.owner, change_no = excluded.change_no "
                          "WHERE booking.resource = excluded.resource RETURNING change_no"},
    q_resource_of = {Q_RESOURCE_OF, "SELECT resource FROM booking WHERE key = ?"},
    q_cancel = {Q_CANCEL, "WITH gone AS (DELETE FROM booking WHERE key = ? AND resource = ? "
                          "RETURNING key, resource, end_time) "
                          "INSERT INTO booking_gone (key, resource, end_time, change_no) "
                          "SELECT key, resource, end_time, nextval('booking_change') FROM gone"},
    q_changes = {Q_CHANGES,
                 "SELECT " COLUMNS ", 0 FROM booking WHERE resource = ? AND change_no > ? "
                 "UNION ALL SELECT key, resource, 0, end_time, 0, '', change_no, 1 "
                 "FROM booking_gone WHERE resource = ? AND change_no > ? "
                 "ORDER BY 7"},
    q_key = {Q_KEY, "SELECT " COLUMNS ", 0 FROM booking WHERE key = ?"},
    /* held to the commit: one booking transaction per resource at a time,
     * in every process that shares the database */
    q_lock = {Q_LOCK, "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/' || ?))"},
    q_prune = {Q_PRUNE, "DELETE FROM booking WHERE resource = ? AND end_time < ?"},
    q_prune_gone = {Q_PRUNE_GONE, "DELETE FROM booking_gone WHERE resource = ? AND end_time < ?"};

struct acc_ledger_store {
    struct acc_sql *db;
    struct acc_sql_writer *writer;
    bool shared;               /* PostgreSQL: written at once, read back before deciding */
    struct acc_sql_conn *hold; /* the main connection while a resource is held */
    int64_t wrote;             /* the highest change number of the held transaction */
};

/* A queued write: bookings to put (with a day to mark) or a key to remove.
 * It owns its strings; the writer frees it after its batch. */
struct write {
    struct acc_ledger_store_booking *b;
    size_t n;
    int64_t day; /* -1: none */
    char *del;   /* the key to remove, or NULL */
};

static void write_free(void *arg)
{
    struct write *w = arg;
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

/* A booking's six columns, in the order both puts take them. */
static void bind_booking(struct acc_sql_stmt *s, const struct acc_ledger_store_booking *b)
{
    acc_sql_bind_text(s, b->key);
    acc_sql_bind_text(s, b->resource);
    acc_sql_bind_i64(s, b->start);
    acc_sql_bind_i64(s, b->end);
    acc_sql_bind_i64(s, b->amount);
    acc_sql_bind_text(s, b->owner ? b->owner : "");
}

static acc_err put_booking(struct acc_sql_conn *c, const struct acc_ledger_store_booking *b,
                           struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put, err);
    if (!s)
        return acc_sql_failed(err);
    bind_booking(s, b);
    return acc_sql_run(s, "write", err);
}

static acc_err apply(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    const struct write *w = arg;
    struct acc_sql_stmt *s;
    if (w->del) {
        if (!(s = acc_sql_prepare(c, &q_delete, err)))
            return acc_sql_failed(err);
        acc_sql_bind_text(s, w->del);
        return acc_sql_run(s, "write", err);
    }
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < w->n; i++)
        rc = put_booking(c, &w->b[i], err);
    if (!rc && w->day >= 0) {
        if (!(s = acc_sql_prepare(c, &q_day_mark, err)))
            return acc_sql_failed(err);
        acc_sql_bind_i64(s, w->day);
        rc = acc_sql_run(s, "write", err);
    }
    return rc;
}

static const struct acc_sql_job apply_job = {apply, write_free};

/* ------------------------------------------- shared calendars' writes */

static acc_err lock_resource(struct acc_sql_conn *c, const char *resource, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_lock, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, resource);
    return acc_sql_run(s, "lock", err);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The locks of every resource the write's bookings are on, in the order of
 * their names (as every process takes them): no two writes wait for each
 * other in a circle. */
static acc_err lock_all(struct acc_sql_conn *c, const struct write *w, struct acc_error *err)
{
    if (!w->n)
        return ACC_OK; /* a day's mark alone, or a delete (it locks its own) */
    const char **names = calloc(w->n, sizeof *names);
    if (!names)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < w->n; i++)
        names[i] = w->b[i].resource;
    qsort(names, w->n, sizeof *names, name_cmp);
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < w->n; i++) {
        if (i == 0 || strcmp(names[i - 1], names[i]) != 0)
            rc = lock_resource(c, names[i], err);
    }
    free(names);
    return rc;
}

/* Puts one booking with the next change number (kept in ss->wrote). */
static acc_err put_numbered(struct acc_ledger_store *ss, struct acc_sql_conn *c,
                            const struct acc_ledger_store_booking *b, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put_pg, err);
    if (!s)
        return acc_sql_failed(err);
    bind_booking(s, b);
    bool row = false;
    acc_err rc = acc_sql_bound(s, "write", err);
    if (!rc)
        rc = acc_sql_step(s, &row, "write", err);
    if (!rc && row && acc_sql_col_i64(s, 0) > ss->wrote)
        ss->wrote = acc_sql_col_i64(s, 0);
    acc_sql_done(s);
    if (!rc && !row)
        rc = acc_error_set(err, ACC_ERR_INVALID,
                           "calendar %s: booking %s is stored for another "
                           "resource than %s",
                           acc_sql_path(ss->db), b->key, b->resource);
    return rc;
}

/* Removes booking key, leaving a tombstone with the next change number,
 * holding its resource's lock (looked up first: a key never moves).  A key
 * not stored is left as it is. */
static acc_err cancel_numbered(struct acc_sql_conn *c, const char *key, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_resource_of, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, key);
    bool row = false;
    char *resource = NULL;
    acc_err rc = acc_sql_bound(s, "read", err);
    if (!rc)
        rc = acc_sql_step(s, &row, "read", err);
    if (!rc && row && !(resource = acc_strdup(acc_sql_col_text(s, 0))))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_sql_done(s);
    if (!rc && resource)
        rc = lock_resource(c, resource, err);
    if (!rc && resource) {
        if (!(s = acc_sql_prepare(c, &q_cancel, err))) {
            rc = acc_sql_failed(err);
        } else {
            acc_sql_bind_text(s, key);
            acc_sql_bind_text(s, resource);
            rc = acc_sql_run(s, "write", err);
        }
    }
    free(resource);
    return rc;
}

static acc_err apply_numbered(struct acc_ledger_store *ss, struct acc_sql_conn *c,
                              const struct write *w, struct acc_error *err)
{
    if (w->del)
        return cancel_numbered(c, w->del, err);
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < w->n; i++)
        rc = put_numbered(ss, c, &w->b[i], err);
    if (!rc && w->day >= 0) {
        struct acc_sql_stmt *s = acc_sql_prepare(c, &q_day_mark, err);
        if (!s)
            return acc_sql_failed(err);
        acc_sql_bind_i64(s, w->day);
        rc = acc_sql_run(s, "write", err);
    }
    return rc;
}

/* A shared calendar's write is made at once, numbered under its resources'
 * locks: in the held resource's transaction when there is one (which
 * holds the lock), else in one of its own that takes them.  Another
 * process decides on it next.  A file's is queued for the group-commit
 * writer. */
static acc_err queue(struct acc_ledger_store *ss, struct write *w, struct acc_sql_ticket **out,
                     struct acc_error *err)
{
    if (!ss->shared)
        return acc_sql_write_queue(ss->writer, &apply_job, w, out, err);
    if (out)
        *out = NULL;
    acc_err rc;
    if (ss->hold) {
        rc = apply_numbered(ss, ss->hold, w, err);
    } else {
        struct acc_sql_conn *c = acc_sql_main_lock(ss->db);
        rc = acc_sql_begin(c, ACC_SQL_WRITE, err);
        if (!rc)
            rc = lock_all(c, w, err);
        if (!rc && !(rc = apply_numbered(ss, c, w, err)))
            rc = acc_sql_commit(c, err);
        if (rc)
            acc_sql_rollback(c);
        acc_sql_main_unlock(ss->db);
    }
    write_free(w);
    return rc;
}

acc_err acc_ledger_store_put(struct acc_ledger_store *ss, const struct acc_ledger_store_booking *b,
                             size_t n, int64_t day, struct acc_sql_ticket **out,
                             struct acc_error *err)
{
    struct write *w = calloc(1, sizeof *w);
    if (w && n && !(w->b = calloc(n, sizeof *w->b))) {
        free(w);
        w = NULL;
    }
    for (size_t i = 0; w && i < n; i++) {
        struct acc_ledger_store_booking *c = &w->b[w->n++];
        *c = b[i];
        c->key = acc_strdup(b[i].key);
        c->resource = acc_strdup(b[i].resource);
        c->owner = acc_strdup(b[i].owner);
        if (!c->key || !c->resource || (b[i].owner && !c->owner)) {
            write_free(w);
            w = NULL;
        }
    }
    if (!w)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    w->day = day;
    return queue(ss, w, out, err);
}

acc_err acc_ledger_store_delete(struct acc_ledger_store *ss, const char *key,
                                struct acc_sql_ticket **out, struct acc_error *err)
{
    struct write *w = calloc(1, sizeof *w);
    if (w && !(w->del = strdup(key))) {
        free(w);
        w = NULL;
    }
    if (!w)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    w->day = -1;
    return queue(ss, w, out, err);
}

acc_err acc_ledger_store_wait(struct acc_ledger_store *ss, struct acc_sql_ticket *w,
                              struct acc_error *err)
{
    return w ? acc_sql_write_wait(ss->writer, w, err) : ACC_OK;
}

void acc_ledger_store_forget(struct acc_ledger_store *ss, struct acc_sql_ticket *w)
{
    acc_sql_write_forget(ss->writer, w);
}

/* ------------------------------------------------------------------ reads */

/* The booking of the row s is on (the columns of q_load and the queries
 * like it); its texts are s's until the next step. */
static struct acc_ledger_store_booking booking_of(struct acc_sql_stmt *s)
{
    return (struct acc_ledger_store_booking){
        .key = acc_sql_col_text(s, 0),
        .resource = acc_sql_col_text(s, 1),
        .start = acc_sql_col_i64(s, 2),
        .end = acc_sql_col_i64(s, 3),
        .amount = acc_sql_col_i64(s, 4),
        .owner = acc_sql_col_text(s, 5),
        .change = acc_sql_col_i64(s, 6),
        .cancelled = acc_sql_col_i64(s, 7) != 0,
    };
}

acc_err acc_ledger_store_load(struct acc_ledger_store *ss,
                              acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                              void *ctx, struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(ss->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_load, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    while (!rc && !(rc = acc_sql_step(s, &row, "read", err)) && row) {
        struct acc_ledger_store_booking b = booking_of(s);
        if (!b.key || !b.resource)
            continue;
        if ((rc = fn(ctx, &b)))
            acc_error_set(err, rc, "calendar %s: loading failed", acc_sql_path(ss->db));
    }
    acc_sql_done(s);
    acc_sql_main_unlock(ss->db);
    return rc;
}

/* The rows of q (bound with text and, unless after < 0, an integer) to fn,
 * on the held connection or the main one. */
static acc_err rows_of(struct acc_ledger_store *ss, const struct acc_sql_query *q, const char *text,
                       int64_t after,
                       acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                       void *ctx, struct acc_error *err)
{
    struct acc_sql_conn *c = ss->hold ? ss->hold : acc_sql_main_lock(ss->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, q, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    if (!rc) {
        acc_sql_bind_text(s, text);
        if (after >= 0)
            acc_sql_bind_i64(s, after);
        if (after >= 0 && q == &q_changes) { /* the tombstones' side */
            acc_sql_bind_text(s, text);
            acc_sql_bind_i64(s, after);
        }
        rc = acc_sql_bound(s, "read", err);
    }
    while (!rc && !(rc = acc_sql_step(s, &row, "read", err)) && row) {
        struct acc_ledger_store_booking b = booking_of(s);
        if (b.key && b.resource && (rc = fn(ctx, &b)))
            acc_error_set(err, rc, "calendar %s: reading failed", acc_sql_path(ss->db));
    }
    acc_sql_done(s);
    if (!ss->hold)
        acc_sql_main_unlock(ss->db);
    return rc;
}

bool acc_ledger_store_shared(const struct acc_ledger_store *ss)
{
    return ss->shared;
}

acc_err acc_ledger_store_changes(struct acc_ledger_store *ss, const char *resource, int64_t after,
                                 acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                                 void *ctx, struct acc_error *err)
{
    return rows_of(ss, &q_changes, resource, after, fn, ctx, err);
}

acc_err acc_ledger_store_key(struct acc_ledger_store *ss, const char *key,
                             acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                             void *ctx, struct acc_error *err)
{
    return rows_of(ss, &q_key, key, -1, fn, ctx, err);
}

acc_err acc_ledger_store_hold(struct acc_ledger_store *ss, const char *resource,
                              struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(ss->db);
    acc_err rc = acc_sql_begin(c, ACC_SQL_WRITE, err);
    if (!rc)
        rc = lock_resource(c, resource, err);
    if (rc) {
        acc_sql_rollback(c);
        acc_sql_main_unlock(ss->db);
        return rc;
    }
    ss->hold = c;
    ss->wrote = 0;
    return ACC_OK;
}

acc_err acc_ledger_store_let_go(struct acc_ledger_store *ss, bool commit, int64_t *wrote,
                                struct acc_error *err)
{
    acc_err rc = commit ? acc_sql_commit(ss->hold, err) : ACC_OK;
    if (!commit || rc)
        acc_sql_rollback(ss->hold);
    if (wrote)
        *wrote = commit && !rc ? ss->wrote : 0;
    ss->hold = NULL;
    acc_sql_main_unlock(ss->db);
    return rc;
}

acc_err acc_ledger_store_prune(struct acc_ledger_store *ss, const char *resource, acc_time before,
                               struct acc_error *err)
{
    acc_err rc = ACC_OK;
    const struct acc_sql_query *q[] = {&q_prune, &q_prune_gone};
    for (size_t i = 0; !rc && i < 2; i++) {
        struct acc_sql_stmt *s = acc_sql_prepare(ss->hold, q[i], err);
        if (!s)
            return acc_sql_failed(err);
        acc_sql_bind_text(s, resource);
        acc_sql_bind_i64(s, before);
        rc = acc_sql_run(s, "prune", err);
    }
    return rc;
}

acc_err acc_ledger_store_day_marked(struct acc_ledger_store *ss, int64_t day, bool *marked,
                                    struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(ss->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_day_get, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    if (!rc) {
        acc_sql_bind_i64(s, day);
        if (!(rc = acc_sql_bound(s, "read", err)))
            rc = acc_sql_step(s, &row, "read", err);
    }
    *marked = !rc && row;
    acc_sql_done(s);
    acc_sql_main_unlock(ss->db);
    return rc;
}

/* ------------------------------------------------------------ open, close */

/* A ledger in the database server of db_path: a schema of its own there,
 * ledger_NAME (lib/sql names it in the location and makes it), so that its
 * tables and its schema version are its own while every instance shares
 * them. */
static acc_err shared_path(const char *db_path, const char *name, char **out, struct acc_error *err)
{
    size_t n = strlen(name) + 8;
    char *schema = malloc(n);
    if (!schema)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    char *o = schema + snprintf(schema, n, "ledger_");
    for (const char *p = name; *p; p++)
        *o++ = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p
               : (*p >= 'A' && *p <= 'Z')                           ? (char)(*p - 'A' + 'a')
                                                                    : '_';
    *o = '\0';
    *out = acc_sql_location_in_schema(db_path, schema);
    free(schema);
    return *out ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

acc_err acc_ledger_store_path(const char *db_path, const char *name, const char *setting,
                              char **out, struct acc_error *err)
{
    if (setting && !*setting)
        return acc_error_set(err, ACC_ERR_CONFIG, "calendar is empty");
    if (!setting && (!db_path || !*db_path))
        return acc_error_set(err, ACC_ERR_CONFIG, "needs a database path or a calendar file");
    if (!setting && strcmp(db_path, ":memory:") == 0)
        setting = db_path;
    if (!setting && acc_sql_location_can(db_path, ACC_SQL_CAP_SERVER_LOCKS))
        return shared_path(db_path, name, out, err);
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

acc_err acc_ledger_store_open(const char *path, bool durable, bool snapshot,
                              struct acc_ledger_store **out, struct acc_error *err)
{
    *out = NULL;
    struct acc_ledger_store *ss = calloc(1, sizeof *ss);
    if (!ss)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    /* One connection writes, so SQLite's own checkpoints at commit keep
     * the log short; it is cut back to 4 MiB when reset. */
    const struct acc_sql_options opt = {
        .path = path,
        .label = "calendar",
        .program = "accordd",
        .durable = durable,
        .wal_limit = (int64_t)4 << 20,
        .migrations = acc_ledger_migrations,
        .n_migrations = acc_ledger_migrations_count,
        .pg_migrations = acc_ledger_pg_migrations,
        .n_pg_migrations = acc_ledger_pg_migrations_count,
        .n_slots = Q__COUNT,
        .snapshot = snapshot,
    };
    const struct acc_sql_writer_options w = {0};
    acc_err rc = acc_sql_open(&opt, &ss->db, err);
    if (!rc)
        rc = acc_sql_writer_start(ss->db, &w, &ss->writer, err);
    if (!rc)
        ss->shared = acc_sql_can(ss->db, ACC_SQL_CAP_SERVER_LOCKS);
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
    acc_sql_writer_stop(ss->writer);
    acc_sql_close(ss->db);
    free(ss);
}
