/* SPDX-License-Identifier: Apache-2.0 */
/* store_run_hold.c - which instance holds a run (several accordd on one
 * database, store.h): the timer of a waiting run and the watch of a running
 * job belong to one instance, recorded in run.instance.  The instance that
 * negotiated an agreement holds its run from the commit; a job is started
 * only by the instance that takes the run at that moment, so that it starts
 * once; the leader takes the runs of instances that died. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "store_internal.h"

/* held by no live instance: none, or one not seen within age ?2 by the
 * database's clock NOW (store_internal.h) */
#define UNHELD(col, NOW) \
    "(" col " IS NULL OR " col " NOT IN (SELECT id FROM instance WHERE seen >= " NOW " - ?2))"
/* open, and held here (?1) or by no live instance */
#define OPEN_HERE_OR_UNHELD(NOW) \
    "r.state IN ('waiting', 'running') AND (r.instance = ?1 OR " UNHELD("r.instance", NOW) ")"
#define RUN_HOLDS(NOW)                                          \
    "SELECT a.id, a.state, a.start_time, a.end_time, r.state, " \
    "CASE WHEN r.instance = ?1 THEN 1 ELSE 0 END, i.host "      \
    "FROM run r JOIN agreement a ON a.seq = r.agreement "       \
    "LEFT JOIN instance i ON i.id = r.instance "                \
    "WHERE " OPEN_HERE_OR_UNHELD(NOW) " ORDER BY a.start_time"
#define RUN_TAKE(NOW)                                         \
    "UPDATE run SET instance = ?1 WHERE agreement = "         \
    "(SELECT seq FROM agreement WHERE id = ?3) AND state IN " \
    "('waiting', 'running') AND (instance = ?1 OR " UNHELD("instance", NOW) ")"

static const struct acc_sql_query run_holds = {S_RUN_HOLDS, RUN_HOLDS(DB_NOW_LITE)},
                                  run_holds_pg = {S_RUN_HOLDS, RUN_HOLDS(DB_NOW_PG)},
                                  run_take = {S_RUN_TAKE, RUN_TAKE(DB_NOW_LITE)},
                                  run_take_pg = {S_RUN_TAKE, RUN_TAKE(DB_NOW_PG)};

static acc_err read_hold(struct acc_sql_stmt *s, struct acc_store_run_hold *h,
                         struct acc_error *err)
{
    memset(h, 0, sizeof *h);
    acc_sql_col_copy(s, 0, h->id, sizeof h->id);
    const char *state = acc_sql_col_text(s, 1), *run = acc_sql_col_text(s, 4);
    if (!state || !acc_state_parse(state, &h->state) || !run || !acc_run_state_parse(run, &h->run))
        return acc_error_set(err, ACC_ERR_STORAGE, "database: the run of %s is damaged", h->id);
    h->start = acc_sql_col_i64(s, 2);
    h->end = acc_sql_col_i64(s, 3);
    h->mine = acc_sql_col_int(s, 5) != 0;
    acc_sql_col_copy(s, 6, h->host, sizeof h->host);
    return ACC_OK;
}

acc_err acc_store_run_holds(struct acc_store *st, acc_time alive_since,
                            struct acc_store_run_hold **out, size_t *n, struct acc_error *err)
{
    *out = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &run_holds, &run_holds_pg), err);
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        acc_sql_bind_text(s, st->instance);
        acc_sql_bind_i64(s, store_age(alive_since));
        rc = acc_sql_bound(s, "list runs", err);
    }
    size_t cap = 0;
    bool row = false;
    while (!rc && !(rc = acc_sql_step(s, &row, "list runs", err)) && row) {
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            struct acc_store_run_hold *m = realloc(*out, nc * sizeof *m);
            if (!m) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            *out = m;
            cap = nc;
        }
        if (!(rc = read_hold(s, &(*out)[*n], err)))
            (*n)++;
    }
    acc_sql_done(s);
    acc_sql_read_end(st->db, c);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

struct take_arg {
    const char *instance, *id;
    acc_time alive_since;
    bool taken;
};

static acc_err take_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct take_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &run_take, &run_take_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->instance);
    acc_sql_bind_i64(s, store_age(x->alive_since));
    acc_sql_bind_text(s, x->id);
    acc_err rc = acc_sql_run(s, "take a run", err);
    x->taken = !rc && acc_sql_changes(c) == 1;
    return rc;
}

acc_err acc_store_run_take(struct acc_store *st, const char *id, acc_time alive_since, bool *taken,
                           struct acc_error *err)
{
    *taken = true;
    if (!st->instance[0])
        return ACC_OK; /* one accordd: every run is its own */
    static const struct store_op op = {{take_job, NULL}, NULL};
    struct take_arg x = {st->instance, id, alive_since, false};
    acc_err rc = store_write(st, &op, &x, 0, err);
    *taken = !rc && x.taken;
    return rc;
}
