/* SPDX-License-Identifier: Apache-2.0 */
/* store_journal.c - the reservation journal (every reservation before it is
 * asked for and its outcome after; the negotiation trace: store_trace.c). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define JOURNAL_COLUMNS                                                                       \
    "r.key, r.agreement_id, r.round, r.adapter, r.kind, r.resource, r.amount, r.start_time, " \
    "r.end_time, r.state, r.local_id, r.effective_start, r.effective_end, r.error"

/* An entry written, or its outcome over what it was. */
#define JOURNAL_UPSERT                                                             \
    "INSERT INTO reservation (key, agreement_id, round, adapter, kind, resource, " \
    "amount, start_time, end_time, state, local_id, effective_start, "             \
    "effective_end, error, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "       \
    "ON CONFLICT(key) DO UPDATE SET state = excluded.state, "                      \
    "local_id = excluded.local_id, effective_start = excluded.effective_start, "   \
    "effective_end = excluded.effective_end, error = excluded.error, "             \
    "updated = excluded.updated"

static const struct acc_sql_query journal_put = {S_JOURNAL_PUT, JOURNAL_UPSERT};
/* PostgreSQL: agreement_id set by the upsert itself, which saves a round
 * trip per entry (journal_move).  An update that changes the indexed state
 * writes an entry in each of the row's indexes anyway, so the owner set
 * with it costs nothing more. */
static const struct acc_sql_query journal_put_pg = {S_JOURNAL_PUT, JOURNAL_UPSERT
                                                    ", agreement_id = excluded.agreement_id"};

static const struct acc_sql_query
    /* A held quote's entries change hands when the quote is committed:
     * only then is agreement_id written, so that an entry's outcome does
     * not rewrite its page of the index by agreement (reservation_agreement;
     * SQLite rewrites the index of every column an UPDATE sets, even to its
     * value). */
    journal_move = {S_JOURNAL_MOVE, "UPDATE reservation SET agreement_id = ?2 "
                                    "WHERE key = ?1 AND agreement_id <> ?2"},
    journal_by_agr = {S_JOURNAL_BY_AGR, "SELECT " JOURNAL_COLUMNS " FROM reservation r "
                                        "WHERE r.agreement_id = ? ORDER BY r.rowid"},
    /* Open entries of negotiations that are over: their agreement is
     * no longer Pending.  One query, so the agreement's state and its
     * entries come from the same snapshot (a negotiation settles both
     * in one transaction). */
    journal_open = {S_JOURNAL_OPEN,
                    "SELECT " JOURNAL_COLUMNS " FROM reservation r "
                    "LEFT JOIN agreement a ON a.id = r.agreement_id "
                    "WHERE r.state IN ('intent', 'reserved', 'unknown', 'cancel-failed') "
                    "AND (a.state IS NULL OR a.state NOT IN ('Pending', 'PendingAndTerminating')) "
                    "AND (a.modifying IS NULL OR a.modifying = 0) "
                    /* a quote's hold being booked (quote.c; at start-up
                     * svc_quote_recover ends those a stop cut short) */
                    "AND r.agreement_id NOT IN (SELECT id FROM quote WHERE state = 'Advisory') "
                    "ORDER BY r.rowid"};

/* ---------------------------------------------------------------- journal */

acc_err store_journal_put_one(struct acc_sql_conn *c, const struct acc_booking *bk, acc_time now,
                              struct acc_error *err)
{
    const struct acc_sql_query *put = acc_sql_pick(c, &journal_put, &journal_put_pg);
    struct acc_sql_stmt *s = acc_sql_prepare(c, put, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, bk->key);
    acc_sql_bind_text(s, bk->agreement);
    acc_sql_bind_i64(s, bk->round);
    acc_sql_bind_text(s, bk->adapter);
    acc_sql_bind_text(s, acc_resource_kind_name(bk->kind));
    acc_sql_bind_text(s, bk->resource);
    acc_sql_bind_i64(s, bk->amount);
    acc_sql_bind_i64(s, bk->start);
    acc_sql_bind_i64(s, bk->end);
    acc_sql_bind_text(s, acc_booking_state_name(bk->state));
    acc_sql_bind_text(s, bk->local_id[0] ? bk->local_id : NULL);
    acc_sql_bind_time(s, bk->eff_start);
    acc_sql_bind_time(s, bk->eff_end);
    acc_sql_bind_text(s, bk->error[0] ? bk->error : NULL);
    acc_sql_bind_i64(s, now);
    acc_err rc = acc_sql_run(s, "write journal", err);
    if (rc || put == &journal_put_pg)
        return rc;
    if (!(s = acc_sql_prepare(c, &journal_move, err)))
        return acc_sql_failed(err);
    acc_sql_bind_text(s, bk->key);
    acc_sql_bind_text(s, bk->agreement);
    return acc_sql_run(s, "write journal", err);
}

struct journal_arg {
    const struct acc_booking *b;
    size_t n;
};

static acc_err journal_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
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
    static const struct store_op op = {{journal_job, free}, journal_copy};
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
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, agreement ? &journal_by_agr : &journal_open, err);
    if (!s) {
        acc_sql_reader_give(st->db, c);
        return acc_sql_failed(err);
    }
    if (agreement)
        acc_sql_bind_text(s, agreement);
    bool row = false;
    rc = acc_sql_bound(s, "read journal", err);
    while (!rc && !(rc = acc_sql_step(s, &row, "read journal", err)) && row) {
        void *v = realloc(*out, (*n + 1) * sizeof **out);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *out = v;
        struct acc_booking *b = &(*out)[(*n)++];
        memset(b, 0, sizeof *b);
        acc_sql_col_copy(s, 0, b->key, sizeof b->key);
        acc_sql_col_copy(s, 1, b->agreement, sizeof b->agreement);
        b->round = (unsigned)acc_sql_col_int(s, 2);
        acc_sql_col_copy(s, 3, b->adapter, sizeof b->adapter);
        const char *kind = acc_sql_col_text(s, 4);
        b->kind = kind && strcmp(kind, "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
        acc_sql_col_copy(s, 5, b->resource, sizeof b->resource);
        b->amount = acc_sql_col_i64(s, 6);
        b->start = acc_sql_col_i64(s, 7);
        b->end = acc_sql_col_i64(s, 8);
        const char *state = acc_sql_col_text(s, 9);
        if (!state || !acc_booking_state_parse(state, &b->state))
            b->state = ACC_BOOKING_UNKNOWN;
        acc_sql_col_copy(s, 10, b->local_id, sizeof b->local_id);
        b->eff_start = acc_sql_col_i64(s, 11);
        b->eff_end = acc_sql_col_i64(s, 12);
        acc_sql_col_copy(s, 13, b->error, sizeof b->error);
    }
    acc_sql_done(s);
    acc_sql_reader_give(st->db, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
