/* site_store.c - accord-site's own SQLite: the journal of the bookings it
 * made for its peers (site_bookings) and the jobs it started (site_jobs),
 * with their migrations.
 *
 * One connection behind a mutex: the daemon's writes are a few short
 * statements per protocol call, and one connection keeps the intent/reserved
 * sequence of a key simple to reason about.  Prepared statements never leave
 * this file. */
#include "site_internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"

/* Tombstones (cancelled rows) a peer may leave at once: the oldest go. */
#define SITE_TOMBSTONES_MAX 4096
/* Cancelled rows and ended reservations are kept this long (seconds). */
#define SITE_KEEP 86400

static const char *const migrations[] = {
    /* 1 */
    "CREATE TABLE site_bookings ("
    "  key TEXT PRIMARY KEY,"
    "  peer TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('nodes', 'bandwidth')),"
    "  resource TEXT NOT NULL,"
    "  amount INTEGER NOT NULL,"
    "  start INTEGER NOT NULL," /* as asked */
    "  end INTEGER NOT NULL,"   /* as asked */
    "  old_key TEXT NOT NULL DEFAULT '',"
    "  local_id TEXT NOT NULL DEFAULT '',"
    "  eff_start INTEGER NOT NULL DEFAULT 0," /* as the adapter booked it */
    "  eff_end INTEGER NOT NULL DEFAULT 0,"
    "  eff_amount INTEGER NOT NULL DEFAULT 0,"
    "  nodes TEXT,"
    "  state TEXT NOT NULL CHECK (state IN ('intent', 'reserved', 'cancelled')),"
    "  created INTEGER NOT NULL,"
    "  updated INTEGER NOT NULL);"
    "CREATE INDEX site_bookings_peer ON site_bookings (peer, state, updated);"
    "CREATE TABLE site_jobs ("
    "  id TEXT PRIMARY KEY,"
    "  key TEXT NOT NULL,"
    "  peer TEXT NOT NULL,"
    "  host TEXT,"
    "  local_job TEXT,"
    "  state TEXT NOT NULL,"
    "  exit_status INTEGER NOT NULL DEFAULT -1,"
    "  signal INTEGER NOT NULL DEFAULT 0,"
    "  created INTEGER NOT NULL,"
    "  updated INTEGER NOT NULL);",
};

struct site_store {
    sqlite3 *db;
    pthread_mutex_t lock;
};

static acc_err db_error(sqlite3 *db, struct acc_error *err, const char *what)
{
    return acc_error_set(err, ACC_ERR_STORAGE, "database: %s: %s", what,
                         db ? sqlite3_errmsg(db) : "cannot open");
}

static acc_err exec(sqlite3 *db, const char *sql, struct acc_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        acc_error_set(err, ACC_ERR_STORAGE, "database: %s", msg ? msg : "exec failed");
        sqlite3_free(msg);
        return ACC_ERR_STORAGE;
    }
    return ACC_OK;
}

static acc_err migrate(sqlite3 *db, struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    int version = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return db_error(db, err, "user_version");
    if (sqlite3_step(s) == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    int known = (int)(sizeof migrations / sizeof *migrations);
    if (version > known)
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "database: schema version %d is newer than this accord-site (%d)",
                             version, known);
    for (int v = version; v < known; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d;", v + 1);
        acc_err rc = exec(db, "BEGIN IMMEDIATE", err);
        if (!rc)
            rc = exec(db, migrations[v], err);
        if (!rc)
            rc = exec(db, bump, err);
        if (!rc)
            rc = exec(db, "COMMIT", err);
        if (rc) {
            exec(db, "ROLLBACK", NULL);
            acc_error_prefix(err, "migration %d", v + 1);
            return rc;
        }
    }
    return ACC_OK;
}

acc_err site_store_open(const char *path, bool durable, struct site_store **out,
                        struct acc_error *err)
{
    *out = NULL;
    struct site_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&st->lock, NULL);
    acc_err rc = ACC_OK;
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = db_error(st->db, err, path);
        goto out;
    }
    sqlite3_busy_timeout(st->db, 5000);
    rc = exec(st->db,
              durable ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                      : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
              err);
    if (!rc)
        rc = migrate(st->db, err);
out:
    if (rc) {
        acc_error_prefix(err, "%s", path);
        site_store_close(st);
        return rc;
    }
    *out = st;
    return ACC_OK;
}

void site_store_close(struct site_store *st)
{
    if (!st)
        return;
    sqlite3_close_v2(st->db);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* ---------------------------------------------------------------- bookings */

static const char *state_name(enum site_state s)
{
    return s == SITE_INTENT ? "intent" : s == SITE_RESERVED ? "reserved" : "cancelled";
}

static enum site_state state_of(const char *s)
{
    return strcmp(s, "intent") == 0     ? SITE_INTENT
           : strcmp(s, "reserved") == 0 ? SITE_RESERVED
                                        : SITE_CANCELLED;
}

static const char *col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : "";
}

#define BOOKING_COLS                                                                         \
    "key, peer, kind, resource, amount, start, end, old_key, local_id, eff_start, eff_end, " \
    "eff_amount, nodes, state, created, updated"

static acc_err read_row(sqlite3_stmt *s, struct site_booking *b, struct acc_error *err)
{
    memset(b, 0, sizeof *b);
    acc_strlcpy(b->key, col(s, 0), sizeof b->key);
    acc_strlcpy(b->peer, col(s, 1), sizeof b->peer);
    b->kind = strcmp(col(s, 2), "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
    acc_strlcpy(b->resource, col(s, 3), sizeof b->resource);
    b->amount = sqlite3_column_int64(s, 4);
    b->start = sqlite3_column_int64(s, 5);
    b->end = sqlite3_column_int64(s, 6);
    acc_strlcpy(b->old_key, col(s, 7), sizeof b->old_key);
    acc_strlcpy(b->res.local_id, col(s, 8), sizeof b->res.local_id);
    b->res.start = sqlite3_column_int64(s, 9);
    b->res.end = sqlite3_column_int64(s, 10);
    b->res.amount = sqlite3_column_int64(s, 11);
    if (sqlite3_column_type(s, 12) != SQLITE_NULL && !(b->res.nodes = strdup(col(s, 12))))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    b->state = state_of(col(s, 13));
    b->created = sqlite3_column_int64(s, 14);
    b->updated = sqlite3_column_int64(s, 15);
    return ACC_OK;
}

void site_booking_release(struct site_booking *b)
{
    if (b)
        acc_reservation_release(&b->res);
}

acc_err site_store_get(struct site_store *st, const char *key, struct site_booking *out,
                       struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&st->lock);
    if (sqlite3_prepare_v2(st->db, "SELECT " BOOKING_COLS " FROM site_bookings WHERE key = ?1", -1,
                           &s, NULL) != SQLITE_OK ||
        sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
        rc = db_error(st->db, err, "read a booking");
        goto out;
    }
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW)
        rc = read_row(s, out, err);
    else if (step == SQLITE_DONE)
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no reservation %s", key);
    else
        rc = db_error(st->db, err, "read a booking");
out:
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* Runs one statement with the binds given as text or integers. */
struct bindv {
    bool is_text;
    const char *text; /* NULL: SQL NULL */
    int64_t i;
};

#define T(v) ((struct bindv){true, (v), 0})
#define I(v) ((struct bindv){false, NULL, (int64_t)(v)})

static acc_err run(struct site_store *st, const char *sql, const struct bindv *b, int n,
                   int *changes, struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&st->lock);
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        rc = db_error(st->db, err, "prepare");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        int r = b[i].is_text
                    ? (b[i].text ? sqlite3_bind_text(s, i + 1, b[i].text, -1, SQLITE_STATIC)
                                 : sqlite3_bind_null(s, i + 1))
                    : sqlite3_bind_int64(s, i + 1, b[i].i);
        if (r != SQLITE_OK) {
            rc = db_error(st->db, err, "bind");
            goto out;
        }
    }
    int step = sqlite3_step(s);
    if (step == SQLITE_CONSTRAINT) {
        rc = acc_error_set(err, ACC_ERR_KEY_REUSED, "the key is in use");
        goto out;
    }
    if (step != SQLITE_DONE) {
        rc = db_error(st->db, err, "write");
        goto out;
    }
    if (changes)
        *changes = sqlite3_changes(st->db);
out:
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

acc_err site_store_intent(struct site_store *st, const struct site_booking *b, acc_time now,
                          struct acc_error *err)
{
    const struct bindv v[] = {
        T(b->key),      T(b->peer),    T(acc_resource_kind_name(b->kind)),
        T(b->resource), I(b->amount),  I(b->start),
        I(b->end),      T(b->old_key), I(now),
    };
    return run(st,
               "INSERT INTO site_bookings (key, peer, kind, resource, amount, start, end, "
               "old_key, state, created, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
               "'intent', ?9, ?9)",
               v, 9, NULL, err);
}

acc_err site_store_reserved(struct site_store *st, const char *key, const struct acc_reservation *r,
                            acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {
        T(key), T(r->local_id), I(r->start), I(r->end), I(r->amount), T(r->nodes), I(now),
    };
    return run(st,
               "UPDATE site_bookings SET state = 'reserved', local_id = ?2, eff_start = ?3, "
               "eff_end = ?4, eff_amount = ?5, nodes = ?6, updated = ?7 WHERE key = ?1",
               v, 7, NULL, err);
}

acc_err site_store_set_state(struct site_store *st, const char *key, enum site_state state,
                             acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {T(key), T(state_name(state)), I(now)};
    return run(st, "UPDATE site_bookings SET state = ?2, updated = ?3 WHERE key = ?1", v, 3, NULL,
               err);
}

acc_err site_store_delete(struct site_store *st, const char *key, struct acc_error *err)
{
    const struct bindv v[] = {T(key)};
    return run(st, "DELETE FROM site_bookings WHERE key = ?1", v, 1, NULL, err);
}

acc_err site_store_tombstone(struct site_store *st, const char *peer, const char *key, acc_time now,
                             struct acc_error *err)
{
    const struct bindv v[] = {T(key), T(peer), I(now)};
    acc_err rc = run(st,
                     "INSERT OR IGNORE INTO site_bookings (key, peer, kind, resource, amount, "
                     "start, end, state, created, updated) VALUES (?1, ?2, 'nodes', '', 0, 0, 0, "
                     "'cancelled', ?3, ?3)",
                     v, 3, NULL, err);
    if (rc)
        return rc;
    const struct bindv w[] = {T(peer), I(SITE_TOMBSTONES_MAX)};
    return run(st,
               "DELETE FROM site_bookings WHERE key IN (SELECT key FROM site_bookings WHERE "
               "peer = ?1 AND state = 'cancelled' ORDER BY updated DESC LIMIT -1 OFFSET ?2)",
               w, 2, NULL, err);
}

acc_err site_store_prune(struct site_store *st, acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {I(now - SITE_KEEP)};
    return run(st,
               "DELETE FROM site_bookings WHERE (state = 'cancelled' AND updated < ?1) OR "
               "(state = 'reserved' AND eff_end < ?1)",
               v, 1, NULL, err);
}

acc_err site_store_count_open(struct site_store *st, const char *peer, acc_time now, int64_t *n,
                              struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&st->lock);
    if (sqlite3_prepare_v2(st->db,
                           "SELECT count(*) FROM site_bookings WHERE peer = ?1 AND "
                           "((state = 'reserved' AND eff_end > ?2) OR state = 'intent')",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_text(s, 1, peer, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(s, 2, now) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        rc = db_error(st->db, err, "count reservations");
        goto out;
    }
    *n = sqlite3_column_int64(s, 0);
out:
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

acc_err site_store_intents(struct site_store *st, struct site_booking **out, size_t *n,
                           struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = NULL;
    struct site_booking *v = NULL;
    size_t cnt = 0, cap = 0;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&st->lock);
    if (sqlite3_prepare_v2(st->db,
                           "SELECT " BOOKING_COLS " FROM site_bookings WHERE state = 'intent'", -1,
                           &s, NULL) != SQLITE_OK) {
        rc = db_error(st->db, err, "read intents");
        goto out;
    }
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct site_booking *p = realloc(v, nc * sizeof *v);
            if (!p) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                goto out;
            }
            v = p;
            cap = nc;
        }
        if ((rc = read_row(s, &v[cnt], err)) != ACC_OK)
            goto out;
        cnt++;
    }
    if (step != SQLITE_DONE)
        rc = db_error(st->db, err, "read intents");
out:
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->lock);
    if (rc) {
        for (size_t i = 0; i < cnt; i++)
            site_booking_release(&v[i]);
        free(v);
        return rc;
    }
    *out = v;
    *n = cnt;
    return ACC_OK;
}
