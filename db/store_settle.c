/* SPDX-License-Identifier: Apache-2.0 */
/* store_settle.c - what this process left unfinished when a write failed
 * (the database away, a full disk) while it stayed alive: its negotiations
 * still Pending, its modifications' marks, the quotes whose hold it was
 * booking (store.h).  On a file there is one process and no instance:
 * everything is its own. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define NEGOTIATING "('Pending', 'PendingAndTerminating')"
/* this process's rows: ?1 its instance, NULL on a file */
#define MINE(col) "(CAST(?1 AS TEXT) IS NULL OR " col " = ?1)"

static const struct acc_sql_query
    own_pending = {S_OWN_PENDING, "SELECT id FROM agreement WHERE state IN " NEGOTIATING
                                  " AND " MINE("instance") " AND updated < ?2"},
    own_marks = {S_OWN_MARKS, "SELECT id, modifying FROM agreement WHERE modifying != 0 AND "
                              "state = 'Observed' AND " MINE("instance") " AND updated < ?2"},
    own_holds = {S_OWN_HOLDS,
                 "SELECT q.id FROM quote q WHERE q.state = 'Advisory' AND EXISTS "
                 "(SELECT 1 FROM reservation r WHERE r.agreement_id = q.id) AND " MINE(
                     "q.instance") " AND q.updated < ?2 ORDER BY q.created LIMIT 1000"};

/* The rows of q: their id, and with marks their mark too. */
static acc_err own_rows(struct acc_store *st, const struct acc_sql_query *q, acc_time before,
                        struct acc_store_own **out, size_t *n, struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, q, err);
    size_t cap = 0;
    bool row = false;
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        acc_sql_bind_text(s, acc_store_instance(st));
        acc_sql_bind_i64(s, before);
        rc = acc_sql_bound(s, "unfinished work", err);
    }
    while (!rc && !(rc = acc_sql_step(s, &row, "unfinished work", err)) && row) {
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            struct acc_store_own *m = realloc(*out, nc * sizeof *m);
            if (!m) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            *out = m;
            cap = nc;
        }
        struct acc_store_own *o = &(*out)[(*n)++];
        acc_sql_col_copy(s, 0, o->id, sizeof o->id);
        o->mark = q == &own_marks ? acc_sql_col_i64(s, 1) : 0;
    }
    if (s)
        acc_sql_done(s);
    acc_sql_reader_give(st->db, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

acc_err acc_store_own_pending(struct acc_store *st, acc_time before, struct acc_store_own **out,
                              size_t *n, struct acc_error *err)
{
    return own_rows(st, &own_pending, before, out, n, err);
}

acc_err acc_store_own_marks(struct acc_store *st, acc_time before, struct acc_store_own **out,
                            size_t *n, struct acc_error *err)
{
    return own_rows(st, &own_marks, before, out, n, err);
}

acc_err acc_store_own_holds(struct acc_store *st, acc_time before, struct acc_store_own **out,
                            size_t *n, struct acc_error *err)
{
    return own_rows(st, &own_holds, before, out, n, err);
}
