/* sql_pg.c - the PostgreSQL backend of the SQL layer, over libpq
 * (sql_internal.h).  A database is a libpq URL (postgresql://...), with
 * everything libpq takes in it: several hosts and target_session_attrs=
 * read-write pick the primary of a replicated cluster.
 *
 *   statements  the layer's positional `?` (and SQLite's `?NNN`) become
 *               `$n` at prepare; each statement is prepared on the server
 *               under a name of its own and described once, so that a
 *               value bound as text for a bytea parameter (SQLite would
 *               keep it as it is) is sent as raw bytes
 *   values      parameters go as text (integers, texts) or binary (blobs and
 *               texts for bytea); results come as text: integers are parsed,
 *               bytea is decoded when read, into a buffer kept until the next
 *               step or reset
 *   rows        a step runs the statement at its first call and hands out
 *               the rows of the one result, one per step
 *   schema      the version lives in acc_schema_version, one row per
 *               database of the project (the options' label), so that the
 *               store and the simulated sites' ledgers share one PostgreSQL
 *               database; migrations are serialised across programs by an
 *               advisory lock
 *   errors      SQLSTATE 23505 (unique_violation) is SQL_DUPLICATE; a lost
 *               connection is reset at the next statement, and statements
 *               prepared before are prepared again there
 *   durability  durable: synchronous_commit on (the default), else off
 *
 * There is no write-ahead log of ours to bound and no file to lock: the
 * server keeps both. */
#include <ctype.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "sql_internal.h"

#define OID_BOOL  16
#define OID_BYTEA 17

struct pg {
    PGconn *conn;
    char label[64];   /* the database's label: its row of acc_schema_version */
    char msg[512];    /* the last failure */
    int64_t changes;  /* rows the last statement touched */
    unsigned gen;     /* bumped by each reset: statements prepare again */
    unsigned next_id; /* statement names */
    bool durable;     /* synchronous_commit, set again after a reset */
    bool in_tx;       /* a BEGIN ran, and no COMMIT or ROLLBACK yet */
    bool lost;        /* the connection was lost inside that transaction */
};

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

static void set_msg(struct pg *p, const char *m)
{
    snprintf(p->msg, sizeof p->msg, "%s", m && *m ? m : "failed");
    size_t n = strlen(p->msg);
    while (n && (p->msg[n - 1] == '\n' || p->msg[n - 1] == ' '))
        p->msg[--n] = '\0';
}

/* What a result says, in the layer's words (the message kept on p). */
static enum sql_rc rc_of(struct pg *p, const PGresult *r)
{
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY)
        return SQL_OK;
    set_msg(p, r ? PQresultErrorMessage(r) : PQerrorMessage(p->conn));
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (state && strcmp(state, "23505") == 0)
        return SQL_DUPLICATE;
    /* the connection lost (libpq's own failures carry no SQLSTATE, and
     * libpq may not have marked the connection bad yet when a write to it
     * failed), the server shutting down or starting, a standby not promoted
     * yet (read-only): away for now */
    if (!r && PQstatus(p->conn) == CONNECTION_OK)
        return SQL_NOMEM;
    if (PQstatus(p->conn) != CONNECTION_OK || !state ||
        (state && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0 ||
                   strcmp(state, "25006") == 0)))
        return SQL_AWAY;
    return SQL_ERROR;
}

/* A connection that was lost is made again (libpq's reset: the same
 * hosts, in the same order, so a promoted standby is found).  Its session
 * settings and prepared statements went with it. */
static bool pg_alive(struct pg *p);

/* A transaction whose connection was lost is over: its statements fail
 * (never run on a new connection, outside it) until its COMMIT (which
 * fails) or ROLLBACK (nothing left to undo); then a BEGIN or a statement
 * of its own makes the connection again. */
static void lost_check(struct pg *p, enum sql_rc rc)
{
    if (rc != SQL_AWAY)
        return;
    if (p->in_tx)
        p->lost = true;
    /* libpq learns that a connection it could not write to is gone at its
     * next read: made now, so that the next statement makes a new one */
    if (PQstatus(p->conn) == CONNECTION_OK)
        PQconsumeInput(p->conn);
}

static enum sql_rc pg_run(struct pg *p, const char *sql)
{
    bool begin = strncmp(sql, "BEGIN", 5) == 0, commit = strcmp(sql, "COMMIT") == 0,
         rollback = strcmp(sql, "ROLLBACK") == 0;
    if (p->lost) {
        if (commit || rollback) {
            p->lost = p->in_tx = false;
            set_msg(p, "the connection to the database server was lost in the transaction");
            return rollback ? SQL_OK : SQL_AWAY;
        }
        if (!begin) {
            set_msg(p, "the connection to the database server was lost in the transaction");
            return SQL_AWAY;
        }
        p->lost = p->in_tx = false;
    }
    if (!pg_alive(p))
        return SQL_AWAY;
    PGresult *r = PQexec(p->conn, sql);
    enum sql_rc rc = rc_of(p, r);
    if (rc == SQL_OK) {
        const char *n = PQcmdTuples(r);
        p->changes = n && *n ? strtoll(n, NULL, 10) : 0;
    }
    PQclear(r);
    if (begin && rc == SQL_OK)
        p->in_tx = true;
    lost_check(p, rc);
    if (commit || rollback)
        p->in_tx = p->lost = false;
    return rc;
}

static enum sql_rc session_setup(struct pg *p, bool durable)
{
    char sql[256];
    /* lock_timeout: SQLite's busy time; the messages in English whatever
     * the server's locale, as the rest of Accord's. */
    snprintf(sql, sizeof sql,
             "SET lock_timeout = %d; SET synchronous_commit = %s; SET client_min_messages = "
             "warning; SET lc_messages = 'C'",
             ACC_SQL_BUSY_MS, durable ? "on" : "off");
    PGresult *r = PQexec(p->conn, sql);
    enum sql_rc rc = rc_of(p, r);
    PQclear(r);
    if (rc != SQL_OK) { /* lc_messages needs a superuser: without it */
        snprintf(sql, sizeof sql,
                 "SET lock_timeout = %d; SET synchronous_commit = %s; SET "
                 "client_min_messages = warning",
                 ACC_SQL_BUSY_MS, durable ? "on" : "off");
        r = PQexec(p->conn, sql);
        rc = rc_of(p, r);
        PQclear(r);
    }
    return rc;
}

static bool pg_alive(struct pg *p)
{
    if (PQstatus(p->conn) == CONNECTION_OK)
        return true;
    PQreset(p->conn);
    if (PQstatus(p->conn) != CONNECTION_OK) {
        set_msg(p, PQerrorMessage(p->conn));
        return false;
    }
    p->gen++;
    acc_log_info("database: connection to PostgreSQL made again");
    return session_setup(p, p->durable) == SQL_OK;
}

/* A search_path that names a schema not made yet (a ledger's own,
 * options=-csearch_path=ledger_x in the URL): made, by whichever program
 * comes first. */
static enum sql_rc ensure_schema(struct pg *p)
{
    PGresult *r =
        PQexec(p->conn, "SELECT current_schema() IS NULL, current_setting('search_path')");
    enum sql_rc rc = rc_of(p, r);
    char sql[128] = "";
    if (rc == SQL_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't') {
        const char *name = PQgetvalue(r, 0, 1);
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (n == 0 || name[n] != '\0' || n > 63) {
            set_msg(p, "search_path names no schema there is, nor one to make");
            rc = SQL_ERROR;
        } else {
            snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS %s", name);
        }
    }
    PQclear(r);
    /* two programs at once: the second may fail on the first's; once more */
    if (rc == SQL_OK && sql[0] && pg_run(p, sql) != SQL_OK)
        rc = pg_run(p, sql);
    return rc;
}

static void pg_disconnect(void *h)
{
    struct pg *p = h;
    if (!p)
        return;
    PQfinish(p->conn);
    free(p);
}

static acc_err pg_connect(const struct acc_sql_options *opt, void **h, struct acc_error *why)
{
    struct pg *p = calloc(1, sizeof *p);
    if (!p)
        return acc_error_set(why, ACC_ERR_NOMEM, "out of memory");
    p->gen = 1;
    p->durable = opt->durable;
    snprintf(p->label, sizeof p->label, "%s", opt->label ? opt->label : "database");
    p->conn = PQconnectdb(opt->path);
    if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
        acc_error_set(why, ACC_ERR_STORAGE, "cannot connect: %s",
                      p->conn ? PQerrorMessage(p->conn) : "out of memory");
        size_t n = strlen(why->msg);
        while (n && why->msg[n - 1] == '\n')
            why->msg[--n] = '\0';
        pg_disconnect(p);
        return ACC_ERR_STORAGE;
    }
    if (session_setup(p, opt->durable) != SQL_OK || ensure_schema(p) != SQL_OK) {
        acc_error_set(why, ACC_ERR_STORAGE, "%s", p->msg);
        pg_disconnect(p);
        return ACC_ERR_STORAGE;
    }
    *h = p;
    return ACC_OK;
}

static const char *pg_errmsg(void *h)
{
    struct pg *p = h;
    return p ? p->msg : "cannot connect";
}

static enum sql_rc pg_exec(void *h, const char *sql, const char **msg)
{
    struct pg *p = h;
    enum sql_rc rc = pg_run(p, sql);
    if (rc != SQL_OK && msg)
        *msg = p->msg;
    return rc;
}

static int64_t pg_changes(void *h)
{
    return ((struct pg *)h)->changes;
}

/* ------------------------------------------------------------- migrations */

#define SCHEMA_TABLE                                                                 \
    "CREATE TABLE IF NOT EXISTS acc_schema_version (name TEXT PRIMARY KEY, version " \
    "BIGINT NOT NULL)"
/* Two programs migrating one database at once: the second waits for the
 * first and then finds the version it left (pg_advisory_lock, this key). */
#define MIGRATION_LOCK   "SELECT pg_advisory_lock(7262810001)"
#define MIGRATION_UNLOCK "SELECT pg_advisory_unlock(7262810001)"

static void pg_schema_lock(void *h, bool take)
{
    pg_run(h, take ? MIGRATION_LOCK : MIGRATION_UNLOCK);
}

static unsigned pg_schema_version(void *h, struct acc_error *why, acc_err *rc)
{
    struct pg *p = h;
    *rc = ACC_OK;
    if (pg_run(p, SCHEMA_TABLE) != SQL_OK) {
        *rc = acc_error_set(why, ACC_ERR_STORAGE, "schema version: %s", p->msg);
        return 0;
    }
    const char *vals[1] = {p->label};
    PGresult *r = PQexecParams(p->conn, "SELECT version FROM acc_schema_version WHERE name = $1", 1,
                               NULL, vals, NULL, NULL, 0);
    unsigned v = 0;
    if (rc_of(p, r) != SQL_OK)
        *rc = acc_error_set(why, ACC_ERR_STORAGE, "schema version: %s", p->msg);
    else if (PQntuples(r) == 1)
        v = (unsigned)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

static enum sql_rc pg_set_schema_version(void *h, unsigned v)
{
    struct pg *p = h;
    char num[16];
    snprintf(num, sizeof num, "%u", v);
    const char *vals[2] = {p->label, num};
    PGresult *r = PQexecParams(p->conn,
                               "INSERT INTO acc_schema_version (name, version) VALUES ($1, $2) "
                               "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
                               2, NULL, vals, NULL, NULL, 0);
    enum sql_rc rc = rc_of(p, r);
    PQclear(r);
    return rc;
}

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
        PQclear(PQexec(s->p->conn, sql));
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
        set_msg(p, "the connection to the database server was lost in the transaction");
        return SQL_AWAY;
    }
    if (!pg_alive(p))
        return SQL_AWAY;
    if (s->gen == p->gen)
        return SQL_OK;
    snprintf(s->name, sizeof s->name, "acc_%u", ++p->next_id);
    PGresult *r = PQprepare(p->conn, s->name, s->sql, 0, NULL);
    enum sql_rc rc = rc_of(p, r);
    PQclear(r);
    lost_check(p, rc);
    if (rc != SQL_OK)
        return rc;
    r = PQdescribePrepared(p->conn, s->name);
    rc = rc_of(p, r);
    if (rc == SQL_OK) {
        for (int i = 0; i < s->nparams && i < PQnparams(r); i++)
            s->types[i] = PQparamtype(r, i);
        s->gen = p->gen;
    }
    PQclear(r);
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
        set_msg(p, "the connection to the database server was lost in the transaction");
        return SQL_AWAY;
    }
    enum sql_rc rc = server_prepare(s);
    if (rc != SQL_OK)
        return rc;
    s->res = PQexecPrepared(p->conn, s->name, s->nparams, s->vals, s->lens, s->fmts, 0);
    rc = rc_of(p, s->res);
    if (rc != SQL_OK) {
        PQclear(s->res);
        s->res = NULL;
        lost_check(p, rc);
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

const struct sql_backend sql_pg = {
    .name = "postgresql",
    .one_writer_file = false,
    .connect = pg_connect,
    .disconnect = pg_disconnect,
    .errmsg = pg_errmsg,
    .exec = pg_exec,
    .changes = pg_changes,
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
