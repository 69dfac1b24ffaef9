/* SPDX-License-Identifier: Apache-2.0 */
/* sql_stmt.c - statements: the per-connection cache, binding with every
 * result checked, stepping, and reading columns (sql.h). */
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "sql.h"
#include "sql_internal.h"

void sql_stmt_free(struct acc_sql_stmt *s)
{
    if (!s)
        return;
    s->c->db->be->finalize(s->h);
    free(s);
}

static acc_err stmt_new(struct acc_sql_conn *c, const char *sql, bool keep,
                        struct acc_sql_stmt **out, struct acc_error *err)
{
    struct acc_sql_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    enum sql_rc rc = c->db->be->prepare(c->h, sql, keep, &s->h);
    if (rc != SQL_OK) {
        free(s);
        return sql_conn_fail(c, rc, "prepare", err);
    }
    s->c = c;
    s->next = 1;
    *out = s;
    return ACC_OK;
}

struct acc_sql_stmt *acc_sql_prepare(struct acc_sql_conn *c, const struct acc_sql_query *q,
                                     struct acc_error *err)
{
    if (q->slot >= c->db->opt.n_slots) {
        acc_error_set(err, ACC_ERR_INTERNAL, "%s: statement slot %u of %u", c->db->opt.label,
                      q->slot, c->db->opt.n_slots);
        return NULL;
    }
    struct acc_sql_stmt **slot = &c->cache[q->slot];
    if (!*slot && stmt_new(c, q->sql, true, slot, err))
        return NULL;
    /* A use that gave up before it was done (a failure between its binds
     * and its run, rows left unread) left it bound or stepped: its next
     * use starts afresh, binding from the first parameter. */
    if ((*slot)->used)
        acc_sql_done(*slot);
    return *slot;
}

acc_err acc_sql_prepare_once(struct acc_sql_conn *c, const char *sql, struct acc_sql_stmt **out,
                             struct acc_error *err)
{
    return stmt_new(c, sql, false, out, err);
}

void acc_sql_finalize(struct acc_sql_stmt *s)
{
    sql_stmt_free(s);
}

void acc_sql_done(struct acc_sql_stmt *s)
{
    if (!s)
        return;
    s->c->db->be->reset(s->h);
    s->next = 1;
    s->rc = SQL_OK;
    s->used = false;
}

/* ---------------------------------------------------------------- binding */

/* Moves on to the next parameter, keeping the first failure. */
static void bound(struct acc_sql_stmt *s, enum sql_rc rc)
{
    if (s->rc == SQL_OK && rc != SQL_OK)
        s->rc = rc;
    s->next++;
    s->used = true;
}

void acc_sql_bind_text(struct acc_sql_stmt *s, const char *v)
{
    if (s->rc != SQL_OK)
        return bound(s, SQL_OK);
    const struct sql_backend *be = s->c->db->be;
    bound(s, v ? be->bind_text(s->h, s->next, v, strlen(v)) : be->bind_null(s->h, s->next));
}

void acc_sql_bind_i64(struct acc_sql_stmt *s, int64_t v)
{
    if (s->rc != SQL_OK)
        return bound(s, SQL_OK);
    bound(s, s->c->db->be->bind_i64(s->h, s->next, v));
}

void acc_sql_bind_time(struct acc_sql_stmt *s, acc_time t)
{
    if (t)
        acc_sql_bind_i64(s, t);
    else
        acc_sql_bind_null(s);
}

void acc_sql_bind_blob(struct acc_sql_stmt *s, const void *p, size_t n, bool copy)
{
    if (s->rc != SQL_OK)
        return bound(s, SQL_OK);
    /* A zero-length blob is still a blob, not NULL: give it a pointer. */
    bound(s, s->c->db->be->bind_blob(s->h, s->next, p ? p : "", n, copy));
}

void acc_sql_bind_null(struct acc_sql_stmt *s)
{
    if (s->rc != SQL_OK)
        return bound(s, SQL_OK);
    bound(s, s->c->db->be->bind_null(s->h, s->next));
}

acc_err acc_sql_bound(struct acc_sql_stmt *s, const char *what, struct acc_error *err)
{
    if (s->rc == SQL_OK)
        return ACC_OK;
    enum sql_rc rc = s->rc;
    acc_sql_done(s);
    /* The bind's own result says more than the connection's message. */
    return sql_fail(s->c->db, rc, what,
                    rc == SQL_NOMEM ? "a value cannot be bound: out of memory"
                                    : "a value cannot be bound",
                    err);
}

acc_err acc_sql_step(struct acc_sql_stmt *s, bool *row, const char *what, struct acc_error *err)
{
    s->used = true;
    enum sql_rc rc = s->c->db->be->step(s->h);
    *row = rc == SQL_ROW;
    if (rc == SQL_ROW || rc == SQL_DONE)
        return ACC_OK;
    return sql_conn_fail(s->c, rc, what, err);
}

acc_err acc_sql_run(struct acc_sql_stmt *s, const char *what, struct acc_error *err)
{
    acc_err rc = acc_sql_bound(s, what, err);
    if (rc)
        return rc;
    bool row;
    rc = acc_sql_step(s, &row, what, err);
    acc_sql_done(s);
    return rc;
}

/* ---------------------------------------------------------------- columns */

bool acc_sql_col_null(struct acc_sql_stmt *s, int i)
{
    return s->c->db->be->col_null(s->h, i);
}

int64_t acc_sql_col_i64(struct acc_sql_stmt *s, int i)
{
    return s->c->db->be->col_i64(s->h, i);
}

int acc_sql_col_int(struct acc_sql_stmt *s, int i)
{
    return (int)s->c->db->be->col_i64(s->h, i);
}

const char *acc_sql_col_text(struct acc_sql_stmt *s, int i)
{
    return s->c->db->be->col_text(s->h, i);
}

char *acc_sql_col_dup(struct acc_sql_stmt *s, int i)
{
    const char *v = acc_sql_col_text(s, i);
    return v ? strdup(v) : NULL;
}

bool acc_sql_col_lost(struct acc_sql_stmt *s, int i, const void *v)
{
    return !v && !acc_sql_col_null(s, i);
}

void acc_sql_col_copy(struct acc_sql_stmt *s, int i, char *dst, size_t size)
{
    const char *v = acc_sql_col_text(s, i);
    acc_strlcpy(dst, v ? v : "", size);
}

const void *acc_sql_col_blob_ref(struct acc_sql_stmt *s, int i, size_t *len)
{
    return s->c->db->be->col_blob(s->h, i, len);
}

acc_err acc_sql_col_blob(struct acc_sql_stmt *s, int i, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (acc_sql_col_null(s, i))
        return ACC_OK;
    size_t n = 0;
    const void *blob = acc_sql_col_blob_ref(s, i, &n);
    if (n && !blob)
        return ACC_ERR_NOMEM; /* the library could not copy it */
    char *p = malloc(n + 1);
    if (!p)
        return ACC_ERR_NOMEM;
    if (n)
        memcpy(p, blob, n);
    p[n] = '\0';
    *out = p;
    *len = n;
    return ACC_OK;
}
