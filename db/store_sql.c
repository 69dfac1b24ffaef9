/* store_sql.c - statements: preparing them once per connection, binding with
 * every result checked, stepping, and reading columns. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"

acc_err store_db_error(sqlite3 *db, struct acc_error *err, const char *what)
{
    return acc_error_set(err, ACC_ERR_STORAGE, "database: %s: %s", what,
                         db ? sqlite3_errmsg(db) : "cannot open");
}

acc_err store_exec(struct conn *c, const char *sql, struct acc_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        acc_error_set(err, ACC_ERR_STORAGE, "database: %s", msg ? msg : "exec failed");
        sqlite3_free(msg);
        return ACC_ERR_STORAGE;
    }
    return ACC_OK;
}

sqlite3_stmt *store_stmt(struct conn *c, const struct stmt_def *d, struct acc_error *err)
{
    if (!c->stmt[d->id] && sqlite3_prepare_v3(c->db, d->sql, -1, SQLITE_PREPARE_PERSISTENT,
                                              &c->stmt[d->id], NULL) != SQLITE_OK) {
        store_db_error(c->db, err, "prepare");
        c->stmt[d->id] = NULL;
        return NULL;
    }
    return c->stmt[d->id];
}

void store_done(sqlite3_stmt *s)
{
    if (s) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
    }
}

/* ---------------------------------------------------------------- binding */

static void bound(struct store_bind *b, int rc)
{
    if (b->rc == SQLITE_OK && rc != SQLITE_OK)
        b->rc = rc;
    b->next++;
}

void store_bind_text(struct store_bind *b, const char *v)
{
    if (b->rc != SQLITE_OK)
        return bound(b, SQLITE_OK);
    bound(b, v ? sqlite3_bind_text64(b->s, b->next, v, strlen(v), SQLITE_STATIC, SQLITE_UTF8)
               : sqlite3_bind_null(b->s, b->next));
}

void store_bind_i64(struct store_bind *b, int64_t v)
{
    if (b->rc != SQLITE_OK)
        return bound(b, SQLITE_OK);
    bound(b, sqlite3_bind_int64(b->s, b->next, v));
}

void store_bind_time(struct store_bind *b, acc_time t)
{
    if (t)
        store_bind_i64(b, t);
    else
        store_bind_null(b);
}

void store_bind_blob(struct store_bind *b, const void *p, size_t n, bool copy)
{
    if (b->rc != SQLITE_OK)
        return bound(b, SQLITE_OK);
    /* A zero-length blob is still a blob, not NULL: give SQLite a pointer. */
    bound(b, sqlite3_bind_blob64(b->s, b->next, p ? p : "", n,
                                 copy ? SQLITE_TRANSIENT : SQLITE_STATIC));
}

void store_bind_null(struct store_bind *b)
{
    if (b->rc != SQLITE_OK)
        return bound(b, SQLITE_OK);
    bound(b, sqlite3_bind_null(b->s, b->next));
}

void store_bind_named_text(struct store_bind *b, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index(b->s, name);
    if (i && b->rc == SQLITE_OK)
        b->rc = v ? sqlite3_bind_text64(b->s, i, v, strlen(v), SQLITE_STATIC, SQLITE_UTF8)
                  : sqlite3_bind_null(b->s, i);
}

void store_bind_named_i64(struct store_bind *b, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(b->s, name);
    if (i && b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->s, i, v);
}

acc_err store_bound(struct conn *c, struct store_bind *b, const char *what, struct acc_error *err)
{
    (void)c; /* the bind's own code says more than the connection's message */
    if (b->rc == SQLITE_OK)
        return ACC_OK;
    store_done(b->s);
    return acc_error_set(err, b->rc == SQLITE_NOMEM ? ACC_ERR_NOMEM : ACC_ERR_STORAGE,
                         "database: %s: a value cannot be bound: %s", what, sqlite3_errstr(b->rc));
}

acc_err store_bind_step(struct conn *c, struct store_bind *b, const char *what,
                        struct acc_error *err)
{
    acc_err r = store_bound(c, b, what, err);
    if (r)
        return r;
    int rc = sqlite3_step(b->s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        r = store_db_error(c->db, err, what);
    store_done(b->s);
    return r;
}

/* ---------------------------------------------------------------- columns */

bool store_col_lost(sqlite3_stmt *s, int i, const void *v)
{
    return !v && sqlite3_column_type(s, i) != SQLITE_NULL;
}

char *store_col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    return v ? strdup((const char *)v) : NULL;
}

void store_col_copy(sqlite3_stmt *s, int i, char *dst, size_t size)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    acc_strlcpy(dst, v ? (const char *)v : "", size);
}

acc_err store_col_blob(sqlite3_stmt *s, int i, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (sqlite3_column_type(s, i) == SQLITE_NULL)
        return ACC_OK;
    const void *blob = sqlite3_column_blob(s, i);
    int n = sqlite3_column_bytes(s, i);
    if (n && !blob)
        return ACC_ERR_NOMEM; /* SQLite could not copy it */
    char *p = malloc((size_t)n + 1);
    if (!p)
        return ACC_ERR_NOMEM;
    if (n)
        memcpy(p, blob, (size_t)n);
    p[n] = '\0';
    *out = p;
    *len = (size_t)n;
    return ACC_OK;
}

acc_err store_args_decode(sqlite3_stmt *s, int i, char ***out, size_t *n)
{
    const char *p = sqlite3_column_blob(s, i);
    size_t len = (size_t)sqlite3_column_bytes(s, i), count = 0;
    *out = NULL;
    *n = 0;
    for (size_t k = 0; p && k < len; k++)
        count += p[k] == '\0';
    if (!count)
        return ACC_OK;
    char **v = calloc(count, sizeof *v);
    if (!v)
        return ACC_ERR_NOMEM;
    for (size_t k = 0, j = 0; j < count; j++) {
        v[j] = strdup(p + k);
        if (!v[j]) {
            for (size_t m = 0; m < j; m++)
                free(v[m]);
            free(v);
            return ACC_ERR_NOMEM;
        }
        k += strlen(p + k) + 1;
    }
    *out = v;
    *n = count;
    return ACC_OK;
}
