/* store_run.c - launches: the run of a committed agreement, its launch
 * descriptions, and what became of its job. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct stmt_def
    run_insert = {S_RUN_INSERT,
                  "INSERT OR REPLACE INTO run (agreement, style, state, directory, metampich, "
                  "rsl, reason) VALUES (" BY_ID ", ?,?,?,?,?,?)"},
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

acc_err store_run_insert(struct conn *c, const char *id, const struct acc_run *r,
                         struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &run_insert, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    store_bind_text(&b, acc_launch_name(r->style));
    store_bind_text(&b, acc_run_state_name(r->state));
    store_bind_text(&b, r->directory);
    store_bind_text(&b, r->metampich ? r->metampich : "");
    store_bind_text(&b, r->rsl ? r->rsl : "");
    store_bind_text(&b, r->reason);
    return store_bind_step(c, &b, "write launch descriptions", err);
}

static acc_err run_read(struct conn *c, const char *id, bool with_output, struct acc_run *r,
                        struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &run_get, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_i64(&b, with_output);
    store_bind_text(&b, id);
    acc_err rc = store_bound(c, &b, "read launch", err);
    if (rc)
        return rc;
    int step = sqlite3_step(s);
    if (step == SQLITE_DONE) {
        store_done(s);
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %.40s has no launch", id);
    }
    if (step != SQLITE_ROW) {
        store_done(s);
        return store_db_error(c->db, err, "read launch");
    }
    acc_strlcpy(r->agreement, id, sizeof r->agreement);
    const char *v = (const char *)sqlite3_column_text(s, 0);
    if (!v || !acc_launch_parse(v, &r->style))
        r->style = ACC_LAUNCH_NONE;
    v = (const char *)sqlite3_column_text(s, 1);
    if (!v || !acc_run_state_parse(v, &r->state))
        r->state = ACC_RUN_LOST;
    r->started = sqlite3_column_int64(s, 2);
    r->ended = sqlite3_column_int64(s, 3);
    r->exit_status = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 4);
    r->signal = sqlite3_column_int(s, 5);
    r->pid = sqlite3_column_int64(s, 6);
    r->pid_start = sqlite3_column_int64(s, 7);
    r->directory = store_col_dup(s, 8);
    r->command = store_col_dup(s, 9);
    r->reason = store_col_dup(s, 10);
    bool oom = store_col_blob(s, 11, &r->output, &r->output_len) != ACC_OK;
    r->output_total = sqlite3_column_type(s, 12) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 12);
    r->metampich = store_col_dup(s, 13);
    r->rsl = store_col_dup(s, 14);
    r->batch = store_col_dup(s, 15);
    oom |= !r->metampich || !r->rsl;
    store_done(s);
    return oom ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory") : ACC_OK;
}

acc_err acc_store_run_get(struct acc_store *st, const char *id, bool with_output,
                          struct acc_run *out, struct acc_error *err)
{
    struct conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    rc = run_read(c, id, with_output, out, err);
    store_read_end(st, c);
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

static acc_err run_update_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct run_arg *x = arg;
    const struct acc_run *r = x->r;
    acc_err rc;
    if (x->from &&
        (rc = store_transition(c, r->agreement, x->from, x->to, x->reason, &x->was, err)))
        return rc;
    sqlite3_stmt *s = store_stmt(c, &run_update, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, acc_run_state_name(r->state));
    store_bind_time(&b, r->started);
    store_bind_time(&b, r->ended);
    if (r->exit_status >= 0)
        store_bind_i64(&b, r->exit_status);
    else
        store_bind_null(&b);
    store_bind_i64(&b, r->signal);
    store_bind_i64(&b, r->pid);
    store_bind_i64(&b, r->pid_start);
    store_bind_text(&b, r->directory);
    store_bind_text(&b, r->command);
    store_bind_text(&b, r->reason);
    if (r->output)
        store_bind_blob(&b, r->output, r->output_len, false);
    else
        store_bind_null(&b);
    if (r->output_total >= 0)
        store_bind_i64(&b, r->output_total);
    else
        store_bind_null(&b);
    store_bind_text(&b, r->batch);
    store_bind_text(&b, r->agreement);
    if ((rc = store_bind_step(c, &b, "update launch", err)))
        return rc;
    if (sqlite3_changes(c->db) != 1)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %s has no launch", r->agreement);
    return ACC_OK;
}

acc_err acc_store_run_update(struct acc_store *st, const struct acc_run *r, struct acc_error *err)
{
    static const struct store_op op = {run_update_job, NULL, NULL};
    struct run_arg x = {r, 0, ACC_STATE_COMPLETE, NULL, ACC_STATE_PENDING};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_run_finish(struct acc_store *st, const struct acc_run *r, unsigned from,
                             enum acc_state to, const char *reason, enum acc_state *was,
                             struct acc_error *err)
{
    static const struct store_op op = {run_update_job, NULL, NULL};
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
    struct conn *c;
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store_stmt(c, &run_open, err);
    int step = SQLITE_DONE;
    while (s && (step = sqlite3_step(s)) == SQLITE_ROW) {
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        *ids = p;
        store_col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
    if (!s)
        rc = ACC_ERR_STORAGE;
    else if (!rc && step != SQLITE_DONE)
        rc = store_db_error(c->db, err, "list launches");
    store_done(s);
    store_read_end(st, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}
