/* SPDX-License-Identifier: Apache-2.0 */
/* store_usage.c - what a user (or a client address) holds: the committed
 * reservations of their open agreements and those their held quotes hold,
 * read from the journal, where each has its resource, amount and times
 * (the [quota] max_node_hours and max_mbit_hours of the service). */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* The owner's condition on a table's initiator and client columns, with
 * ?2 its value; "" for everyone. */
static const char *owner_cond(const struct acc_store_owner *o)
{
    if (o->initiator)
        return " AND initiator = ?2";
    return o->client ? " AND client = ?2" : "";
}

acc_err acc_store_usage(struct acc_store *st, const struct acc_store_owner *o, acc_time now,
                        struct acc_usage_row **out, size_t *n, struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    char q[1024];
    const char *who = owner_cond(o);
    /* A held quote's entries become its agreement's when it is committed
     * (store_journal.c), in the write that makes the agreement Observed:
     * a reservation is never counted twice. */
    snprintf(q, sizeof q,
             "SELECT r.agreement_id, r.kind, r.resource, r.amount, r.start_time, r.end_time "
             "FROM reservation r WHERE r.state IN ('committed', 'held') AND r.end_time > ?1 "
             "AND r.agreement_id IN (SELECT id FROM agreement WHERE state IN ('Observed', "
             "'ObservedAndTerminating')%s UNION ALL SELECT id FROM quote WHERE state = 'Held'%s)",
             who, who);
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = NULL;
    size_t cap = 0;
    if ((rc = acc_sql_prepare_once(c, q, &s, err)))
        goto out;
    acc_sql_bind_i64(s, now);
    if (who[0])
        acc_sql_bind_text(s, o->initiator ? o->initiator : o->client);
    bool row = false;
    rc = acc_sql_bound(s, "read reservations held", err);
    while (!rc && !(rc = acc_sql_step(s, &row, "read reservations held", err)) && row) {
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 32;
            void *p = realloc(*out, nc * sizeof **out);
            if (!p) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            *out = p;
            cap = nc;
        }
        struct acc_usage_row *u = &(*out)[(*n)++];
        acc_sql_col_copy(s, 0, u->id, sizeof u->id);
        const char *kind = acc_sql_col_text(s, 1);
        u->kind = kind && strcmp(kind, "bandwidth") == 0 ? ACC_RES_BANDWIDTH : ACC_RES_NODES;
        acc_sql_col_copy(s, 2, u->resource, sizeof u->resource);
        u->amount = acc_sql_col_i64(s, 3);
        u->start = acc_sql_col_i64(s, 4);
        u->end = acc_sql_col_i64(s, 5);
    }
out:
    acc_sql_finalize(s);
    acc_sql_read_end(st->db, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
