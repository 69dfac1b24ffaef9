/* SPDX-License-Identifier: Apache-2.0 */
/* sql_pg_stmt.c - the PostgreSQL backend's statements (sql_pg.c has its
 * connections): `?` numbered into `$n`, prepared and described on the
 * server once per connection (again after a reset), bound as text or
 * bytes, run at the first step, and the rows of the one result handed out
 * a step at a time; bytea decoded when read.  And the backend's table. */
#include <ctype.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_internal.h"

#define OID_BOOL  16
#define OID_BYTEA 17

struct pg_stmt {
    struct pg *p;
    char *sql;     /* with $n */
    char name[24]; /* on the server */
    unsigned gen;  /* the connection's generation it was prepared in; 0: not */
    int nparams;
    Oid *types;
    const char **vals;
    int *lens, *fmts;
    char (*num)[24];     /* integers as text */
    void **owned;        /* copies of blobs bound with copy */
    PGresult *res;       /* of the current run; NULL: not run yet */
    int row, ncols;      /* the row a step handed out */
    unsigned char **dec; /* bytea decoded, per column, until the next step */
    size_t *declen;
};

/* ------------------------------------------------------------- statements */

/* `?` and `?NNN` outside quotes and comments become `$n`: a bare `?` is
 * one more than the largest number before it (SQLite's rule).  *nparams:
 * the largest. */
static char *number_params(const char *sql, int *nparams)
{
    size_t n = strlen(sql);
    char *out = malloc(n * 4 + 1);
    if (!out)
        return NULL;
    char *o = out;
    int max = 0;
    for (const char *s = sql; *s;) {
        if (*s == '\'' || *s == '"') {
            char q = *s;
            *o++ = *s++;
            while (*s && *s != q)
                *o++ = *s++;
            if (*s)
                *o++ = *s++;
        } else if (s[0] == '-' && s[1] == '-') {
            while (*s && *s != '\n')
                *o++ = *s++;
        } else if (*s == '?') {
            s++;
            int k = 0;
            if (isdigit((unsigned char)*s))
                for (; isdigit((unsigned char)*s); s++)
                    k = k * 10 + (*s - '0');
            else
                k = max + 1;
            if (k > max)
                max = k;
            o += sprintf(o, "$%d", k);
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    *nparams = max;
    return out;
}

static void clear_row(struct pg_stmt *s)
{
    for (int i = 0; s->dec && i < s->ncols; i++) {
        free(s->dec[i]);
        s->dec[i] = NULL;
    }
}

static void clear_result(struct pg_stmt *s)
{
    clear_row(s);
    free(s->dec);
    free(s->declen);
    s->dec = NULL;
    s->declen = NULL;
    PQclear(s->res);
    s->res = NULL;
    s->row = -1;
    s->ncols = 0;
}

static void free_owned(struct pg_stmt *s)
{
    for (int i = 0; s->owned && i < s->nparams; i++) {
        free(s->owned[i]);
        s->owned[i] = NULL;
    }
}

static void pg_finalize(void *h)
{
    struct pg_stmt *s = h;
    if (!s)
        return;
    clear_result(s);
    free_owned(s);
    if (s->gen && s->gen == s->p->gen && PQstatus(s->p->conn) == CONNECTION_OK &&
        PQtransactionStatus(s->p->conn) != PQTRANS_INERROR) {
        char sql[48];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
        PGresult *r = PQexec(s->p->conn, sql);
        pg_lost_check(s->p, pg_rc_of(s->p, r));
        PQclear(r);
    }
    free(s->sql);
    free(s->types);
    free(s->vals);
    free(s->lens);
    free(s->fmts);
    free(s->num);
    free(s->owned);
    free(s);
}

/* Prepares s on the server (again after a reset) and learns its
 * parameters' types. */
static enum sql_rc server_prepare(struct pg_stmt *s)
{
    struct pg *p = s->p;
    if (p->lost) {
        pg_set_msg(p, "the connection to the database server was lost in the transaction");
        return SQL_AWAY;
    }
    if (!pg_alive(p))
        return SQL_AWAY;
    if (s->gen == p->gen)
        return SQL_OK;
    snprintf(s->name, sizeof s->name, "acc_%u", ++p->next_id);
    PGresult *r = PQprepare(p->conn, s->name, s->sql, 0, NULL);
    enum sql_rc rc = pg_rc_of(p, r);
    PQclear(r);
    pg_lost_check(p, rc);
    if (rc != SQL_OK)
        return rc;
    r = PQdescribePrepared(p->conn, s->name);
    rc = pg_rc_of(p, r);
    if (rc == SQL_OK) {
        for (int i = 0; i < s->nparams && i < PQnparams(r); i++)
            s->types[i] = PQparamtype(r, i);
        s->gen = p->gen;
    }
    PQclear(r);
    pg_lost_check(p, rc);
    return rc;
}

static enum sql_rc pg_prepare(void *h, const char *sql, bool keep, void **out)
{
    (void)keep; /* every statement is kept on the server until finalized */
    struct pg_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return SQL_NOMEM;
    s->p = h;
    s->row = -1;
    s->sql = number_params(sql, &s->nparams);
    int n = s->nparams ? s->nparams : 1;
    s->types = calloc((size_t)n, sizeof *s->types);
    s->vals = calloc((size_t)n, sizeof *s->vals);
    s->lens = calloc((size_t)n, sizeof *s->lens);
    s->fmts = calloc((size_t)n, sizeof *s->fmts);
    s->num = calloc((size_t)n, sizeof *s->num);
    s->owned = calloc((size_t)n, sizeof *s->owned);
    if (!s->sql || !s->types || !s->vals || !s->lens || !s->fmts || !s->num || !s->owned) {
        pg_finalize(s);
        return SQL_NOMEM;
    }
    enum sql_rc rc = server_prepare(s);
    if (rc != SQL_OK) {
        pg_finalize(s);
        return rc;
    }
    *out = s;
    return SQL_OK;
}

static void pg_reset(void *h)
{
    struct pg_stmt *s = h;
    clear_result(s);
    free_owned(s);
    for (int i = 0; i < s->nparams; i++) {
        s->vals[i] = NULL;
        s->lens[i] = 0;
        s->fmts[i] = 0;
    }
}

static bool param_ok(struct pg_stmt *s, int i)
{
    return i >= 1 && i <= s->nparams;
}

static enum sql_rc pg_bind_text(void *h, int i, const char *v, size_t n)
{
    struct pg_stmt *s = h;
    if (!param_ok(s, i))
        return SQL_ERROR;
    s->vals[i - 1] = v;
    s->lens[i - 1] = (int)n;
    /* a text kept in a bytea column goes as its bytes */
    s->fmts[i - 1] = s->types[i - 1] == OID_BYTEA ? 1 : 0;
    return SQL_OK;
}

static enum sql_rc pg_bind_i64(void *h, int i, int64_t v)
{
    struct pg_stmt *s = h;
    if (!param_ok(s, i))
        return SQL_ERROR;
    snprintf(s->num[i - 1], sizeof s->num[i - 1], "%" PRId64, v);
    s->vals[i - 1] = s->num[i - 1];
    s->fmts[i - 1] = 0;
    return SQL_OK;
}

static enum sql_rc pg_bind_blob(void *h, int i, const void *p, size_t n, bool copy)
{
    struct pg_stmt *s = h;
    if (!param_ok(s, i) || n > INT32_MAX)
        return SQL_ERROR;
    if (copy) {
        void *c = malloc(n ? n : 1);
        if (!c)
            return SQL_NOMEM;
        memcpy(c, p, n);
        free(s->owned[i - 1]);
        s->owned[i - 1] = c;
        p = c;
    }
    s->vals[i - 1] = p;
    s->lens[i - 1] = (int)n;
    s->fmts[i - 1] = 1;
    return SQL_OK;
}

static enum sql_rc pg_bind_null(void *h, int i)
{
    struct pg_stmt *s = h;
    if (!param_ok(s, i))
        return SQL_ERROR;
    s->vals[i - 1] = NULL;
    return SQL_OK;
}

static enum sql_rc execute(struct pg_stmt *s)
{
    struct pg *p = s->p;
    if (p->lost) {
        pg_set_msg(p, "the connection to the database server was lost in the transaction");
        return SQL_AWAY;
    }
    enum sql_rc rc = server_prepare(s);
    if (rc != SQL_OK)
        return rc;
    s->res = PQexecPrepared(p->conn, s->name, s->nparams, s->vals, s->lens, s->fmts, 0);
    rc = pg_rc_of(p, s->res);
    if (rc != SQL_OK) {
        PQclear(s->res);
        s->res = NULL;
        pg_lost_check(p, rc);
        return rc;
    }
    const char *n = PQcmdTuples(s->res);
    p->changes = n && *n ? strtoll(n, NULL, 10) : 0;
    s->ncols = PQnfields(s->res);
    if (s->ncols) {
        s->dec = calloc((size_t)s->ncols, sizeof *s->dec);
        s->declen = calloc((size_t)s->ncols, sizeof *s->declen);
        if (!s->dec || !s->declen) {
            clear_result(s);
            return SQL_NOMEM;
        }
    }
    return SQL_OK;
}

static enum sql_rc pg_step(void *h)
{
    struct pg_stmt *s = h;
    if (!s->res) {
        enum sql_rc rc = execute(s);
        if (rc != SQL_OK)
            return rc;
    }
    clear_row(s);
    if (s->row + 1 >= PQntuples(s->res))
        return SQL_DONE;
    s->row++;
    return SQL_ROW;
}

static bool has_col(struct pg_stmt *s, int i)
{
    return s->res && s->row >= 0 && i >= 0 && i < s->ncols;
}

static bool pg_col_null(void *h, int i)
{
    struct pg_stmt *s = h;
    return !has_col(s, i) || PQgetisnull(s->res, s->row, i);
}

static int64_t pg_col_i64(void *h, int i)
{
    struct pg_stmt *s = h;
    if (pg_col_null(s, i))
        return 0;
    const char *v = PQgetvalue(s->res, s->row, i);
    if (PQftype(s->res, i) == OID_BOOL)
        return v[0] == 't';
    return strtoll(v, NULL, 10);
}

/* A bytea column's bytes, decoded once per row (NUL-terminated). */
static const unsigned char *bytea(struct pg_stmt *s, int i, size_t *len)
{
    if (!s->dec[i]) {
        size_t n = 0;
        unsigned char *raw =
            PQunescapeBytea((const unsigned char *)PQgetvalue(s->res, s->row, i), &n);
        if (!raw)
            return NULL;
        unsigned char *c = malloc(n + 1);
        if (c) {
            memcpy(c, raw, n);
            c[n] = '\0';
        }
        PQfreemem(raw);
        if (!c)
            return NULL;
        s->dec[i] = c;
        s->declen[i] = n;
    }
    *len = s->declen[i];
    return s->dec[i];
}

static const char *pg_col_text(void *h, int i)
{
    struct pg_stmt *s = h;
    if (pg_col_null(s, i))
        return NULL;
    if (PQftype(s->res, i) == OID_BYTEA) {
        size_t n;
        return (const char *)bytea(s, i, &n);
    }
    return PQgetvalue(s->res, s->row, i);
}

static const void *pg_col_blob(void *h, int i, size_t *len)
{
    struct pg_stmt *s = h;
    *len = 0;
    if (pg_col_null(s, i))
        return NULL;
    if (PQftype(s->res, i) == OID_BYTEA)
        return bytea(s, i, len);
    *len = (size_t)PQgetlength(s->res, s->row, i);
    return PQgetvalue(s->res, s->row, i);
}

/* libpq takes both. */
static const char *const pg_schemes[] = {"postgresql", "postgres", NULL};

const struct sql_backend sql_pg = {
    .driver = {.name = "postgresql",
               .schemes = pg_schemes,
               .caps = ACC_SQL_CAP_SERVER_LOCKS | ACC_SQL_CAP_NOTIFY | ACC_SQL_CAP_DUMP},
    .connect = pg_connect,
    .disconnect = pg_disconnect,
    .errmsg = pg_errmsg,
    .exec = pg_exec,
    .changes = pg_changes,
    .deadlocks = pg_deadlocks,
    .schema_lock = pg_schema_lock,
    .schema_version = pg_schema_version,
    .set_schema_version = pg_set_schema_version,
    /* A reader sees one snapshot, as SQLite's read transaction does. */
    .begin_read = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    .begin_write = "BEGIN",
    .prepare = pg_prepare,
    .finalize = pg_finalize,
    .reset = pg_reset,
    .bind_text = pg_bind_text,
    .bind_i64 = pg_bind_i64,
    .bind_blob = pg_bind_blob,
    .bind_null = pg_bind_null,
    .step = pg_step,
    .col_null = pg_col_null,
    .col_i64 = pg_col_i64,
    .col_text = pg_col_text,
    .col_blob = pg_col_blob,
};
