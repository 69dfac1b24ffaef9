/* store_journal.c - the reservation journal (every reservation before it is
 * asked for and its outcome after) and the negotiation trace. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define JOURNAL_COLUMNS                                                                       \
    "r.key, r.agreement_id, r.round, r.adapter, r.kind, r.resource, r.amount, r.start_time, " \
    "r.end_time, r.state, r.local_id, r.effective_start, r.effective_end, r.error"

static const struct stmt_def
    journal_put = {S_JOURNAL_PUT,
                   "INSERT INTO reservation (key, agreement_id, round, adapter, kind, resource, "
                   "amount, start_time, end_time, state, local_id, effective_start, "
                   "effective_end, error, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                   "ON CONFLICT(key) DO UPDATE SET state = excluded.state, "
                   "agreement_id = excluded.agreement_id, "
                   "local_id = excluded.local_id, effective_start = excluded.effective_start, "
                   "effective_end = excluded.effective_end, error = excluded.error, "
                   "updated = excluded.updated"},
    journal_by_agr = {S_JOURNAL_BY_AGR, "SELECT " JOURNAL_COLUMNS " FROM reservation r "
                                        "WHERE r.agreement_id = ? ORDER BY r.rowid"},
    /* Open entries of negotiations that are over: their agreement is no
     * longer Pending.  One query, so the agreement's state and its entries
     * come from the same snapshot (a negotiation settles both in one
     * transaction). */
    journal_open = {S_JOURNAL_OPEN,
                    "SELECT " JOURNAL_COLUMNS " FROM reservation r "
                    "LEFT JOIN agreement a ON a.id = r.agreement_id "
                    "WHERE r.state IN ('intent', 'reserved', 'unknown', 'cancel-failed') "
                    "AND (a.state IS NULL OR a.state NOT IN ('Pending', 'PendingAndTerminating')) "
                    "AND (a.modifying IS NULL OR a.modifying = 0) "
                    /* a quote's hold being booked (quote.c) */
                    "AND r.agreement_id NOT IN (SELECT id FROM quote WHERE state = 'Advisory') "
                    "ORDER BY r.rowid"},
    trace_maxseq = {S_TRACE_MAXSEQ,
                    "SELECT coalesce(max(seq), 0), (SELECT version FROM agreement WHERE id = ?1) "
                    "FROM trace_event WHERE agreement = (SELECT seq FROM agreement WHERE id = ?1)"},
    trace_insert = {S_TRACE_INSERT,
                    "INSERT INTO trace_event (agreement, seq, round, kind, target, adapter, "
                    "amount, t_from, t_until, t_result, status, elapsed_us, detail, version) "
                    "VALUES ((SELECT seq FROM agreement WHERE id = ?), ?,?,?,?,?,?,?,?,?,?,?,?,?)"},
    trace_get = {S_TRACE_GET,
                 "SELECT seq, round, kind, target, adapter, amount, t_from, t_until, t_result, "
                 "status, elapsed_us, detail FROM trace_event "
                 "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?1) AND version = "
                 "coalesce(nullif(?2, 0), (SELECT version FROM agreement WHERE id = ?1)) "
                 "ORDER BY seq"};

/* ---------------------------------------------------------------- journal */

acc_err store_journal_put_one(struct conn *c, const struct acc_booking *bk, acc_time now,
                              struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &journal_put, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, bk->key);
    store_bind_text(&b, bk->agreement);
    store_bind_i64(&b, bk->round);
    store_bind_text(&b, bk->adapter);
    store_bind_text(&b, acc_resource_kind_name(bk->kind));
    store_bind_text(&b, bk->resource);
    store_bind_i64(&b, bk->amount);
    store_bind_i64(&b, bk->start);
    store_bind_i64(&b, bk->end);
    store_bind_text(&b, acc_booking_state_name(bk->state));
    store_bind_text(&b, bk->local_id[0] ? bk->local_id : NULL);
    store_bind_time(&b, bk->eff_start);
    store_bind_time(&b, bk->eff_end);
    store_bind_text(&b, bk->error[0] ? bk->error : NULL);
    store_bind_i64(&b, now);
    return store_bind_step(c, &b, "write journal", err);
}

struct journal_arg {
    const struct acc_booking *b;
    size_t n;
};

static acc_err journal_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct journal_arg *x = arg;
    acc_time now = acc_now();
    for (size_t i = 0; i < x->n; i++) {
        acc_err rc = store_journal_put_one(c, &x->b[i], now, err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

/* Entries are plain values: a copy is one allocation beside the argument. */
static void *journal_copy(const void *arg)
{
    const struct journal_arg *from = arg;
    struct journal_arg *x = malloc(sizeof *x + from->n * sizeof *from->b);
    if (!x)
        return NULL;
    struct acc_booking *b = (struct acc_booking *)(x + 1);
    memcpy(b, from->b, from->n * sizeof *b);
    x->b = b;
    x->n = from->n;
    return x;
}

acc_err acc_store_journal_put(struct acc_store *st, const struct acc_booking *b, size_t n,
                              unsigned flags, struct acc_error *err)
{
    static const struct store_op op = {journal_job, journal_copy, free};
    if (n == 0)
        return ACC_OK;
    struct journal_arg x = {b, n};
    return store_write(st, &op, &x, flags, err);
}

acc_err acc_store_journal_get(struct acc_store *st, const char *agreement, struct acc_booking **out,
                              size_t *n, struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    struct conn *c;
    acc_err rc = store_reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store_stmt(c, agreement ? &journal_by_agr : &journal_open, err);
    if (!s) {
        store_reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    struct store_bind bind = STORE_BIND(s);
    if (agreement)
        store_bind_text(&bind, agreement);
    int step = SQLITE_DONE;
    rc = store_bound(c, &bind, "read journal", err);
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(*out, (*n + 1) * sizeof **out);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *out = v;
        struct acc_booking *b = &(*out)[(*n)++];
        memset(b, 0, sizeof *b);
        store_col_copy(s, 0, b->key, sizeof b->key);
        store_col_copy(s, 1, b->agreement, sizeof b->agreement);
        b->round = (unsigned)sqlite3_column_int(s, 2);
        store_col_copy(s, 3, b->adapter, sizeof b->adapter);
        const char *kind = (const char *)sqlite3_column_text(s, 4);
        b->kind = kind && strcmp(kind, "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
        store_col_copy(s, 5, b->resource, sizeof b->resource);
        b->amount = sqlite3_column_int64(s, 6);
        b->start = sqlite3_column_int64(s, 7);
        b->end = sqlite3_column_int64(s, 8);
        const char *state = (const char *)sqlite3_column_text(s, 9);
        if (!state || !acc_booking_state_parse(state, &b->state))
            b->state = ACC_BOOKING_UNKNOWN;
        store_col_copy(s, 10, b->local_id, sizeof b->local_id);
        b->eff_start = sqlite3_column_int64(s, 11);
        b->eff_end = sqlite3_column_int64(s, 12);
        store_col_copy(s, 13, b->error, sizeof b->error);
    }
    if (!rc && step != SQLITE_DONE)
        rc = store_db_error(c->db, err, "read journal");
    store_done(s);
    store_reader_give(st, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* ------------------------------------------------------------------ trace */

acc_err store_trace_put(struct conn *c, const char *id, const struct acc_trace *t, unsigned version,
                        struct acc_error *err)
{
    if (!t || t->n == 0)
        return ACC_OK;
    sqlite3_stmt *s = store_stmt(c, &trace_maxseq, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    acc_err rc = store_bound(c, &b, "write trace", err);
    if (rc)
        return rc;
    int step = sqlite3_step(s);
    int64_t base = step == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    if (step == SQLITE_ROW && !version)
        version = (unsigned)sqlite3_column_int64(s, 1);
    store_done(s);
    if (step != SQLITE_ROW)
        return store_db_error(c->db, err, "write trace");
    for (size_t i = 0; i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        if (!(s = store_stmt(c, &trace_insert, err)))
            return ACC_ERR_STORAGE;
        b = STORE_BIND(s);
        store_bind_text(&b, id);
        store_bind_i64(&b, base + (int64_t)i + 1);
        store_bind_i64(&b, e->round);
        store_bind_text(&b, acc_trace_kind_name(e->kind));
        store_bind_text(&b, e->target);
        store_bind_text(&b, e->adapter);
        store_bind_i64(&b, e->amount);
        store_bind_time(&b, e->t_from);
        store_bind_time(&b, e->t_until);
        store_bind_time(&b, e->t_result);
        store_bind_text(&b, acc_err_symbol(e->status));
        store_bind_i64(&b, e->elapsed_us);
        store_bind_text(&b, e->detail);
        store_bind_i64(&b, version ? version : 1);
        if ((rc = store_bind_step(c, &b, "write trace", err)))
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_trace_get(struct acc_store *st, const char *id, struct acc_trace *out,
                            struct acc_error *err)
{
    return acc_store_trace_get_version(st, id, 0, out, err);
}

acc_err acc_store_trace_get_version(struct acc_store *st, const char *id, unsigned version,
                                    struct acc_trace *out, struct acc_error *err)
{
    acc_trace_init(out);
    struct conn *c;
    acc_err rc = store_reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store_stmt(c, &trace_get, err);
    if (!s) {
        store_reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    store_bind_i64(&b, version);
    int step = SQLITE_DONE;
    rc = store_bound(c, &b, "read trace", err);
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
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
        rc = store_db_error(c->db, err, "read trace");
    store_done(s);
    store_reader_give(st, c);
    if (rc)
        acc_trace_release(out);
    return rc;
}
