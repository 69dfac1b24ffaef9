/* SPDX-License-Identifier: Apache-2.0 */
/* store_run.c - launches: the run of a committed agreement, its launch
 * descriptions, and what became of its job. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct acc_sql_query
    run_insert = {S_RUN_INSERT,
                  /* a run made again starts afresh (both dialects' upsert) */
                  "INSERT INTO run (agreement, style, state, directory, metampich, rsl, reason, "
                  "instance) VALUES (" BY_ID ", ?,?,?,?,?,?, "
                  /* held by the instance that negotiated it (NULL on a file) */
                  "(SELECT instance FROM agreement WHERE id = ?)) "
                  "ON CONFLICT(agreement) DO UPDATE SET instance = excluded.instance, "
                  "style = excluded.style, state = excluded.state, "
                  "directory = excluded.directory, metampich = excluded.metampich, "
                  "rsl = excluded.rsl, reason = excluded.reason, started = NULL, ended = NULL, "
                  "exit_status = NULL, signal = NULL, pid = NULL, pid_start = NULL, "
                  "command = NULL, output = NULL, output_total = NULL, batch = NULL"},
    run_get = {S_RUN_GET,
               "SELECT style, state, started, ended, exit_status, signal, pid, pid_start, "
               "directory, command, reason, CASE WHEN ? THEN output END, output_total, "
               "metampich, rsl, batch FROM run WHERE agreement = " BY_ID},
    run_update = {S_RUN_UPDATE,
                  "UPDATE run SET state = ?, started = ?, ended = ?, exit_status = ?, "
                  "signal = ?, pid = ?, pid_start = ?, directory = ?, command = ?, reason = ?, "
                  "output = ?, output_total = ?, batch = ? WHERE agreement = " BY_ID},
    run_open = {S_RUN_OPEN, "SELECT a.id FROM run r JOIN agreement a ON a.seq = r.agreement "
                            "WHERE r.state IN ('waiting', 'running') ORDER BY a.start_time"};

acc_err store_run_insert(struct acc_sql_conn *c, const char *id, const struct acc_run *r,
                         struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &run_insert, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_sql_bind_text(s, acc_launch_name(r->style));
    acc_sql_bind_text(s, acc_run_state_name(r->state));
    acc_sql_bind_text(s, r->directory);
    const char *meta = r->metampich ? r->metampich : "", *rsl = r->rsl ? r->rsl : "";
    store_bind_packed(s, meta, strlen(meta), true);
    store_bind_packed(s, rsl, strlen(rsl), true);
    acc_sql_bind_text(s, r->reason);
    acc_sql_bind_text(s, id);
    return acc_sql_run(s, "write launch descriptions", err);
}

static acc_err run_read(struct acc_sql_conn *c, const char *id, bool with_output, struct acc_run *r,
                        struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &run_get, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, with_output);
    acc_sql_bind_text(s, id);
    acc_err rc = acc_sql_bound(s, "read launch", err);
    if (rc)
        return rc;
    bool row;
    if ((rc = acc_sql_step(s, &row, "read launch", err)) || !row) {
        acc_sql_done(s);
        return rc ? rc : acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %.40s has no launch", id);
    }
    acc_strlcpy(r->agreement, id, sizeof r->agreement);
    const char *v = acc_sql_col_text(s, 0);
    if (!v || !acc_launch_parse(v, &r->style))
        r->style = ACC_LAUNCH_NONE;
    v = acc_sql_col_text(s, 1);
    if (!v || !acc_run_state_parse(v, &r->state))
        r->state = ACC_RUN_LOST;
    r->started = acc_sql_col_i64(s, 2);
    r->ended = acc_sql_col_i64(s, 3);
    r->exit_status = acc_sql_col_null(s, 4) ? -1 : acc_sql_col_int(s, 4);
    r->signal = acc_sql_col_int(s, 5);
    r->pid = acc_sql_col_i64(s, 6);
    r->pid_start = acc_sql_col_i64(s, 7);
    r->directory = acc_sql_col_dup(s, 8);
    r->command = acc_sql_col_dup(s, 9);
    r->reason = acc_sql_col_dup(s, 10);
    bool oom = acc_sql_col_blob(s, 11, &r->output, &r->output_len) != ACC_OK;
    r->output_total = acc_sql_col_null(s, 12) ? -1 : acc_sql_col_i64(s, 12);
    size_t n;
    acc_err prc = store_col_unpacked(s, 13, true, &r->metampich, &n);
    if (!prc)
        prc = store_col_unpacked(s, 14, true, &r->rsl, &n);
    r->batch = acc_sql_col_dup(s, 15);
    oom |= prc == ACC_ERR_NOMEM || (!prc && (!r->metampich || !r->rsl));
    acc_sql_done(s);
    if (prc == ACC_ERR_STORAGE)
        return acc_error_set(err, prc, "database: the launch descriptions of %.40s are damaged",
                             id);
    return oom ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory") : ACC_OK;
}

acc_err acc_store_run_get(struct acc_store *st, const char *id, bool with_output,
                          struct acc_run *out, struct acc_error *err)
{
    struct acc_sql_conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    rc = run_read(c, id, with_output, out, err);
    acc_sql_read_end(st->db, c);
    if (rc)
        acc_run_release(out);
    return rc;
}

struct run_arg {
    const struct acc_run *r;
    unsigned from; /* 0: leave the agreement alone */
    enum acc_state to;
    const char *reason;
    enum acc_state was;
};

static acc_err run_update_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct run_arg *x = arg;
    const struct acc_run *r = x->r;
    acc_err rc;
    if (x->from &&
        (rc = store_transition(c, r->agreement, x->from, x->to, x->reason, &x->was, err)))
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &run_update, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, acc_run_state_name(r->state));
    acc_sql_bind_time(s, r->started);
    acc_sql_bind_time(s, r->ended);
    if (r->exit_status >= 0)
        acc_sql_bind_i64(s, r->exit_status);
    else
        acc_sql_bind_null(s);
    acc_sql_bind_i64(s, r->signal);
    acc_sql_bind_i64(s, r->pid);
    acc_sql_bind_i64(s, r->pid_start);
    acc_sql_bind_text(s, r->directory);
    acc_sql_bind_text(s, r->command);
    acc_sql_bind_text(s, r->reason);
    if (r->output)
        acc_sql_bind_blob(s, r->output, r->output_len, false);
    else
        acc_sql_bind_null(s);
    if (r->output_total >= 0)
        acc_sql_bind_i64(s, r->output_total);
    else
        acc_sql_bind_null(s);
    acc_sql_bind_text(s, r->batch);
    acc_sql_bind_text(s, r->agreement);
    if ((rc = acc_sql_run(s, "update launch", err)))
        return rc;
    if (acc_sql_changes(c) != 1)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %s has no launch", r->agreement);
    return ACC_OK;
}

acc_err acc_store_run_update(struct acc_store *st, const struct acc_run *r, struct acc_error *err)
{
    static const struct store_op op = {{run_update_job, NULL}, NULL};
    struct run_arg x = {r, 0, ACC_STATE_COMPLETE, NULL, ACC_STATE_PENDING};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_run_finish(struct acc_store *st, const struct acc_run *r, unsigned from,
                             enum acc_state to, const char *reason, enum acc_state *was,
                             struct acc_error *err)
{
    static const struct store_op op = {{run_update_job, NULL}, NULL};
    struct run_arg x = {r, from, to, reason, ACC_STATE_PENDING};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (was && (rc == ACC_OK || rc == ACC_ERR_STATE))
        *was = x.was;
    return rc;
}

acc_err acc_store_run_open(struct acc_store *st, char (**ids)[ACC_ID_LEN + 1], size_t *n,
                           struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &run_open, err);
    bool row = false;
    while (s && !(rc = acc_sql_step(s, &row, "list launches", err)) && row) {
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *ids = p;
        acc_sql_col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
    if (!s)
        rc = acc_sql_failed(err);
    acc_sql_done(s);
    acc_sql_read_end(st->db, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}
