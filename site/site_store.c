/* SPDX-License-Identifier: Apache-2.0 */
/* site_store.c - accord-site's own database: the journal of the bookings it
 * made for its peers (site_bookings) and the jobs it started (site_jobs),
 * with their migrations (site/migrations), through the SQL layer.
 *
 * One connection, the database's main one, behind its lock: the daemon's
 * writes are a few short statements per protocol call, and one connection
 * keeps the intent/reserved sequence of a key simple to reason about.
 *
 * Durable or lazy: a durable journal (synchronous=FULL) waits for the disk
 * on every commit, except the writes that site_internal.h calls lazy (an
 * intent, the delete of a refused one).  Those commit without waiting
 * (synchronous=NORMAL for that one statement): the write-ahead log is one
 * file written in order, so the next durable commit carries them to the
 * disk with it, and only a power loss before it can lose them; a crash of
 * the daemon alone never does. */
#include "site_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "../lib/sql/sql.h"

/* Tombstones (cancelled rows) a peer may leave at once: the oldest go. */
#define SITE_TOMBSTONES_MAX 4096
/* Cancelled rows and ended reservations are kept this long (seconds). */
#define SITE_KEEP 86400

/* site/migrations/NNNN_name.sql, compiled in (cmake/embed.cmake). */
extern const struct acc_embedded acc_site_migrations[];
extern const size_t acc_site_migrations_count;

#define BOOKING_COLS                                                                         \
    "key, peer, kind, resource, amount, start, end, old_key, local_id, eff_start, eff_end, " \
    "eff_amount, nodes, state, created, updated, account"

enum {
    Q_GET,
    Q_INTENT,
    Q_RESERVED,
    Q_SET_STATE,
    Q_DELETE,
    Q_TOMBSTONE,
    Q_TOMBSTONES_TRIM,
    Q_PRUNE,
    Q_COUNT_OPEN,
    Q_INTENTS,
    Q__COUNT
};

/* Peers whose open reservations are bounded from memory (site_store_open_fewer);
 * more are counted every time. */
#define SITE_BOUNDS_MAX 64

static const struct acc_sql_query
    q_get = {Q_GET, "SELECT " BOOKING_COLS " FROM site_bookings WHERE key = ?1"},
    q_intent = {Q_INTENT, "INSERT INTO site_bookings (key, peer, kind, resource, amount, start, "
                          "end, old_key, state, created, updated, account) VALUES (?1, ?2, ?3, "
                          "?4, ?5, ?6, ?7, ?8, 'intent', ?9, ?9, ?10)"},
    q_reserved = {Q_RESERVED,
                  "UPDATE site_bookings SET state = 'reserved', local_id = ?2, eff_start = ?3, "
                  "eff_end = ?4, eff_amount = ?5, nodes = ?6, updated = ?7 WHERE key = ?1"},
    q_set_state = {Q_SET_STATE, "UPDATE site_bookings SET state = ?2, updated = ?3 WHERE key = ?1"},
    q_delete = {Q_DELETE, "DELETE FROM site_bookings WHERE key = ?1"},
    q_tombstone = {Q_TOMBSTONE,
                   "INSERT OR IGNORE INTO site_bookings (key, peer, kind, resource, amount, start, "
                   "end, state, created, updated) VALUES (?1, ?2, 'nodes', '', 0, 0, 0, "
                   "'cancelled', ?3, ?3)"},
    q_tombstones_trim = {Q_TOMBSTONES_TRIM,
                         "DELETE FROM site_bookings WHERE key IN (SELECT key FROM site_bookings "
                         "WHERE peer = ?1 AND state = 'cancelled' ORDER BY updated DESC LIMIT -1 "
                         "OFFSET ?2)"},
    q_prune = {Q_PRUNE, "DELETE FROM site_bookings WHERE (state = 'cancelled' AND updated < ?1) OR "
                        "(state = 'reserved' AND eff_end < ?1)"},
    q_count_open = {Q_COUNT_OPEN, "SELECT count(*) FROM site_bookings WHERE peer = ?1 AND "
                                  "((state = 'reserved' AND eff_end > ?2) OR state = 'intent')"},
    q_intents = {Q_INTENTS, "SELECT " BOOKING_COLS " FROM site_bookings WHERE state = 'intent'"};

/* An upper bound on a peer's open reservations: the last count, plus one
 * for every reserve admitted since. */
struct open_bound {
    char peer[64];
    int64_t bound;
};

struct site_store {
    struct acc_sql *db;
    bool durable;
    /* The connection commits lazily (synchronous=NORMAL) although the
     * journal is durable: putting FULL back failed; every durable write
     * tries again first.  Under the main lock. */
    bool lazy_now;
    pthread_mutex_t bounds_lock;
    struct open_bound bounds[SITE_BOUNDS_MAX];
    size_t n_bounds;
};

acc_err site_store_check(const char *path, struct acc_error *err)
{
    /* The journal's statements and its one connection are SQLite's: a
     * server's database is refused here, not at the first booking. */
    return acc_sql_need_file("accord-site's journal", path, err);
}

acc_err site_store_open(const char *path, bool durable, struct site_store **out,
                        struct acc_error *err)
{
    *out = NULL;
    acc_err rc = site_store_check(path, err);
    if (rc)
        return rc;
    struct site_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    const struct acc_sql_options opt = {
        .path = path,
        .label = "database",
        .program = "accord-site",
        .durable = durable,
        .migrations = acc_site_migrations,
        .n_migrations = acc_site_migrations_count,
        .n_slots = Q__COUNT,
    };
    rc = acc_sql_open(&opt, &st->db, err);
    if (rc) {
        free(st);
        return rc;
    }
    st->durable = durable;
    pthread_mutex_init(&st->bounds_lock, NULL);
    *out = st;
    return ACC_OK;
}

void site_store_close(struct site_store *st)
{
    if (!st)
        return;
    acc_sql_close(st->db);
    pthread_mutex_destroy(&st->bounds_lock);
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

static const char *col(struct acc_sql_stmt *s, int i)
{
    const char *t = acc_sql_col_text(s, i);
    return t ? t : "";
}

static acc_err read_row(struct acc_sql_stmt *s, struct site_booking *b, struct acc_error *err)
{
    memset(b, 0, sizeof *b);
    acc_strlcpy(b->key, col(s, 0), sizeof b->key);
    acc_strlcpy(b->peer, col(s, 1), sizeof b->peer);
    b->kind = strcmp(col(s, 2), "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
    acc_strlcpy(b->resource, col(s, 3), sizeof b->resource);
    b->amount = acc_sql_col_i64(s, 4);
    b->start = acc_sql_col_i64(s, 5);
    b->end = acc_sql_col_i64(s, 6);
    acc_strlcpy(b->old_key, col(s, 7), sizeof b->old_key);
    acc_strlcpy(b->res.local_id, col(s, 8), sizeof b->res.local_id);
    b->res.start = acc_sql_col_i64(s, 9);
    b->res.end = acc_sql_col_i64(s, 10);
    b->res.amount = acc_sql_col_i64(s, 11);
    if (!acc_sql_col_null(s, 12) && !(b->res.nodes = strdup(col(s, 12))))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    b->state = state_of(col(s, 13));
    b->created = acc_sql_col_i64(s, 14);
    b->updated = acc_sql_col_i64(s, 15);
    acc_strlcpy(b->account, col(s, 16), sizeof b->account);
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
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_get, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    if (!rc) {
        acc_sql_bind_text(s, key);
        if (!(rc = acc_sql_bound(s, "read a booking", err)))
            rc = acc_sql_step(s, &row, "read a booking", err);
    }
    if (!rc)
        rc = row ? read_row(s, out, err)
                 : acc_error_set(err, ACC_ERR_NOT_FOUND, "no reservation %s", key);
    acc_sql_done(s);
    acc_sql_main_unlock(st->db);
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

/* The connection's synchronous setting for the next commit (a durable
 * journal only).  The pragma takes effect when it is prepared, so it is
 * run afresh each time rather than kept prepared. */
static acc_err set_lazy(struct site_store *st, struct acc_sql_conn *c, bool lazy,
                        struct acc_error *err)
{
    if (!st->durable || st->lazy_now == lazy)
        return ACC_OK;
    acc_err rc =
        acc_sql_exec(c, lazy ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL", err);
    if (!rc)
        st->lazy_now = lazy;
    return rc;
}

static acc_err run_as(struct site_store *st, bool lazy, const struct acc_sql_query *q,
                      const struct bindv *b, int n, struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = NULL;
    acc_err rc = set_lazy(st, c, lazy, err);
    if (!rc && !(s = acc_sql_prepare(c, q, err)))
        rc = acc_sql_failed(err);
    for (int i = 0; !rc && i < n; i++) {
        if (b[i].is_text)
            acc_sql_bind_text(s, b[i].text);
        else
            acc_sql_bind_i64(s, b[i].i);
    }
    if (!rc)
        rc = acc_sql_run(s, "write", err);
    /* Back to durable at once; if that fails, the next durable write tries
     * again before it writes. */
    if (lazy)
        set_lazy(st, c, false, NULL);
    acc_sql_main_unlock(st->db);
    if (rc == ACC_ERR_KEY_REUSED)
        acc_error_set(err, ACC_ERR_KEY_REUSED, "the key is in use");
    return rc;
}

static acc_err run(struct site_store *st, const struct acc_sql_query *q, const struct bindv *b,
                   int n, struct acc_error *err)
{
    return run_as(st, false, q, b, n, err);
}

acc_err site_store_intent(struct site_store *st, const struct site_booking *b, acc_time now,
                          struct acc_error *err)
{
    const struct bindv v[] = {
        T(b->key),      T(b->peer),    T(acc_resource_kind_name(b->kind)),
        T(b->resource), I(b->amount),  I(b->start),
        I(b->end),      T(b->old_key), I(now),
        T(b->account),
    };
    return run_as(st, true, &q_intent, v, 10, err);
}

acc_err site_store_reserved(struct site_store *st, const char *key, const struct acc_reservation *r,
                            acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {
        T(key), T(r->local_id), I(r->start), I(r->end), I(r->amount), T(r->nodes), I(now),
    };
    return run(st, &q_reserved, v, 7, err);
}

acc_err site_store_set_state(struct site_store *st, const char *key, enum site_state state,
                             acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {T(key), T(state_name(state)), I(now)};
    return run(st, &q_set_state, v, 3, err);
}

acc_err site_store_delete(struct site_store *st, const char *key, bool lazy, struct acc_error *err)
{
    const struct bindv v[] = {T(key)};
    return run_as(st, lazy, &q_delete, v, 1, err);
}

acc_err site_store_tombstone(struct site_store *st, const char *peer, const char *key, acc_time now,
                             struct acc_error *err)
{
    const struct bindv v[] = {T(key), T(peer), I(now)};
    acc_err rc = run(st, &q_tombstone, v, 3, err);
    if (rc)
        return rc;
    const struct bindv w[] = {T(peer), I(SITE_TOMBSTONES_MAX)};
    return run(st, &q_tombstones_trim, w, 2, err);
}

acc_err site_store_prune(struct site_store *st, acc_time now, struct acc_error *err)
{
    const struct bindv v[] = {I(now - SITE_KEEP)};
    return run(st, &q_prune, v, 1, err);
}

static acc_err count_open(struct site_store *st, const char *peer, acc_time now, int64_t *n,
                          struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_count_open, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    if (!rc) {
        acc_sql_bind_text(s, peer);
        acc_sql_bind_i64(s, now);
        if (!(rc = acc_sql_bound(s, "count reservations", err)))
            rc = acc_sql_step(s, &row, "count reservations", err);
    }
    if (!rc)
        *n = row ? acc_sql_col_i64(s, 0) : 0;
    acc_sql_done(s);
    acc_sql_main_unlock(st->db);
    return rc;
}

/* The peer's bound, made when there is room (NULL: none, count always). */
static struct open_bound *bound_of(struct site_store *st, const char *peer)
{
    for (size_t i = 0; i < st->n_bounds; i++) {
        if (strcmp(st->bounds[i].peer, peer) == 0)
            return &st->bounds[i];
    }
    if (st->n_bounds == SITE_BOUNDS_MAX || strlen(peer) >= sizeof st->bounds[0].peer)
        return NULL;
    struct open_bound *b = &st->bounds[st->n_bounds++];
    acc_strlcpy(b->peer, peer, sizeof b->peer);
    b->bound = INT64_MAX; /* not counted yet */
    return b;
}

acc_err site_store_open_fewer(struct site_store *st, const char *peer, acc_time now, int64_t max,
                              bool *fewer, int64_t *n, struct acc_error *err)
{
    pthread_mutex_lock(&st->bounds_lock);
    struct open_bound *b = bound_of(st, peer);
    if (b && b->bound < max) {
        *n = b->bound++;
        *fewer = true;
        pthread_mutex_unlock(&st->bounds_lock);
        return ACC_OK;
    }
    pthread_mutex_unlock(&st->bounds_lock);
    acc_err rc = count_open(st, peer, now, n, err);
    if (rc)
        return rc;
    *fewer = *n < max;
    pthread_mutex_lock(&st->bounds_lock);
    if ((b = bound_of(st, peer)) != NULL)
        b->bound = *n + (*fewer ? 1 : 0);
    pthread_mutex_unlock(&st->bounds_lock);
    return ACC_OK;
}

acc_err site_store_intents(struct site_store *st, struct site_booking **out, size_t *n,
                           struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    struct site_booking *v = NULL;
    size_t cnt = 0, cap = 0;
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_intents, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    while (!rc && !(rc = acc_sql_step(s, &row, "read intents", err)) && row) {
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct site_booking *p = realloc(v, nc * sizeof *v);
            if (!p) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            v = p;
            cap = nc;
        }
        if ((rc = read_row(s, &v[cnt], err)) != ACC_OK)
            break;
        cnt++;
    }
    acc_sql_done(s);
    acc_sql_main_unlock(st->db);
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
