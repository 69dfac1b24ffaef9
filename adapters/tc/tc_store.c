/* SPDX-License-Identifier: Apache-2.0 */
/* tc_store.c - the tc adapter's own database, through the SQL layer: one
 * row per provisioned reservation with its endpoints, its leaf class id,
 * when it was first in place, its first violation and the last counters of
 * its classes (adapters/tc/migrations).  The bookings themselves are in the
 * ledger's calendar file (lib/ledger).  The caller serialises calls (struct tc's lock); the
 * database's main connection is used under its own lock all the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/sql/sql.h"
#include "tc_internal.h"

/* adapters/tc/migrations/NNNN_name.sql, compiled in (cmake/embed.cmake). */
extern const struct acc_embedded acc_tc_migrations[];
extern const size_t acc_tc_migrations_count;

enum { Q_PUT, Q_DELETE, Q_PURGE, Q_LOAD, Q__COUNT };

static const struct acc_sql_query
    q_put = {Q_PUT, "INSERT OR REPLACE INTO provision (key, local_id, link, start_time, "
                    "end_time, amount, class_id, addrs_a, addrs_b, activated, violated_at, why, "
                    "bytes, packets, drops) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
    q_delete = {Q_DELETE, "DELETE FROM provision WHERE key = ?"},
    q_purge = {Q_PURGE, "DELETE FROM provision WHERE end_time < ?"},
    q_load = {Q_LOAD, "SELECT key, local_id, link, start_time, end_time, amount, class_id, "
                      "addrs_a, addrs_b, activated, violated_at, why, bytes, packets, drops FROM "
                      "provision"};

struct tc_store {
    struct acc_sql *db;
};

void tc_prov_free(struct tc_prov *p)
{
    if (!p)
        return;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < p->n_addrs[s]; i++)
            free(p->addrs[s][i]);
        free(p->addrs[s]);
    }
    free(p->key);
    free(p->local_id);
    free(p);
}

acc_err tc_store_check(const char *db_path, const char *name, const char *setting,
                       struct acc_error *err)
{
    if (setting && !*setting)
        return acc_error_set(err, ACC_ERR_CONFIG, "state is empty");
    if (!setting && (!db_path || !*db_path))
        return acc_error_set(err, ACC_ERR_CONFIG, "needs a database path or a state file");
    if (setting)
        return acc_sql_need_file("the tc adapter's state", setting, err);
    /* Beside accordd's database when it is a file; a server's has no
     * "beside", and the state's statements are SQLite's. */
    if (strcmp(db_path, ":memory:") == 0 || acc_sql_location_can(db_path, ACC_SQL_CAP_FILE))
        return ACC_OK;
    return acc_error_set(err, ACC_ERR_CONFIG,
                         "accordd's database is a server's ([database] url), and the tc adapter "
                         "keeps its state in an SQLite file only: give it one (state = "
                         "/var/lib/accord/tc-%s.db)",
                         name);
}

acc_err tc_store_open(const char *db_path, const char *name, const char *setting, bool durable,
                      struct tc_store **out, struct acc_error *err)
{
    *out = NULL;
    acc_err rc = tc_store_check(db_path, name, setting, err);
    if (rc)
        return rc;
    struct tc_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_buf path;
    acc_buf_init(&path);
    if (setting)
        acc_buf_puts(&path, setting);
    else if (strcmp(db_path, ":memory:") == 0)
        acc_buf_puts(&path, db_path);
    else
        acc_buf_printf(&path, "%s.tc-%s", db_path, name);
    rc = acc_buf_ok(&path) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    const struct acc_sql_options opt = {
        .path = acc_buf_str(&path),
        .label = "tc state",
        .program = "accordd",
        .durable = durable,
        .migrations = acc_tc_migrations,
        .n_migrations = acc_tc_migrations_count,
        .n_slots = Q__COUNT,
    };
    if (!rc)
        rc = acc_sql_open(&opt, &st->db, err);
    acc_buf_release(&path);
    if (rc) {
        free(st);
        return rc;
    }
    *out = st;
    return ACC_OK;
}

void tc_store_close(struct tc_store *st)
{
    if (!st)
        return;
    acc_sql_close(st->db);
    free(st);
}

static char *join(char *const *v, size_t n)
{
    struct acc_buf b;
    acc_buf_init(&b);
    for (size_t i = 0; i < n; i++)
        acc_buf_printf(&b, "%s%s", i ? " " : "", v[i]);
    acc_buf_putc(&b, '\0');
    if (!acc_buf_ok(&b)) {
        acc_buf_release(&b);
        return NULL;
    }
    return acc_buf_detach(&b, NULL);
}

static acc_err split(const char *s, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    while (*s) {
        s += strspn(s, " ");
        size_t len = strcspn(s, " ");
        if (!len)
            break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 4;
            char **v = realloc(*out, cap * sizeof *v);
            if (!v)
                return ACC_ERR_NOMEM;
            *out = v;
        }
        if (!((*out)[*n] = acc_strndup(s, len)))
            return ACC_ERR_NOMEM;
        (*n)++;
        s += len;
    }
    return ACC_OK;
}

static acc_err exec_key(struct tc_store *st, const struct acc_sql_query *q, const char *key,
                        acc_time t, struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, q, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    if (!rc) {
        if (key)
            acc_sql_bind_text(s, key);
        else
            acc_sql_bind_i64(s, t);
        rc = acc_sql_run(s, "write", err);
    }
    acc_sql_main_unlock(st->db);
    return rc;
}

acc_err tc_store_put(struct tc_store *st, const struct tc_prov *p, const char *link_name,
                     struct acc_error *err)
{
    char *a = join(p->addrs[0], p->n_addrs[0]), *b = join(p->addrs[1], p->n_addrs[1]);
    if (!a || !b) {
        free(a);
        free(b);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_put, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    if (!rc) {
        acc_sql_bind_text(s, p->key);
        acc_sql_bind_text(s, p->local_id);
        acc_sql_bind_text(s, link_name);
        acc_sql_bind_i64(s, p->start);
        acc_sql_bind_i64(s, p->end);
        acc_sql_bind_i64(s, p->amount);
        acc_sql_bind_i64(s, p->id);
        acc_sql_bind_text(s, a);
        acc_sql_bind_text(s, b);
        acc_sql_bind_i64(s, p->activated);
        acc_sql_bind_i64(s, p->violated_at);
        acc_sql_bind_text(s, p->why);
        acc_sql_bind_i64(s, (int64_t)p->bytes);
        acc_sql_bind_i64(s, (int64_t)p->packets);
        acc_sql_bind_i64(s, (int64_t)p->drops);
        rc = acc_sql_run(s, "write", err);
    }
    acc_sql_main_unlock(st->db);
    free(a);
    free(b);
    return rc;
}

acc_err tc_store_delete(struct tc_store *st, const char *key, struct acc_error *err)
{
    return exec_key(st, &q_delete, key, 0, err);
}

acc_err tc_store_purge(struct tc_store *st, acc_time before, struct acc_error *err)
{
    return exec_key(st, &q_purge, NULL, before, err);
}

static char *col_dup(struct acc_sql_stmt *s, int i)
{
    const char *t = acc_sql_col_text(s, i);
    return acc_strdup(t ? t : "");
}

/* One row as a provision (its link's name in *link); NULL when out of
 * memory. */
static struct tc_prov *read_row(struct acc_sql_stmt *s, char **link)
{
    struct tc_prov *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->key = col_dup(s, 0);
    p->local_id = col_dup(s, 1);
    p->start = acc_sql_col_i64(s, 3);
    p->end = acc_sql_col_i64(s, 4);
    p->amount = acc_sql_col_i64(s, 5);
    p->id = (unsigned)acc_sql_col_i64(s, 6);
    const char *a = acc_sql_col_text(s, 7), *b = acc_sql_col_text(s, 8);
    p->activated = acc_sql_col_i64(s, 9);
    p->violated_at = acc_sql_col_i64(s, 10);
    acc_sql_col_copy(s, 11, p->why, sizeof p->why);
    p->bytes = (uint64_t)acc_sql_col_i64(s, 12);
    p->packets = (uint64_t)acc_sql_col_i64(s, 13);
    p->drops = (uint64_t)acc_sql_col_i64(s, 14);
    *link = col_dup(s, 2);
    if (!p->key || !p->local_id || !*link || split(a ? a : "", &p->addrs[0], &p->n_addrs[0]) ||
        split(b ? b : "", &p->addrs[1], &p->n_addrs[1])) {
        free(*link);
        *link = NULL;
        tc_prov_free(p);
        return NULL;
    }
    return p;
}

acc_err tc_store_load(struct tc_store *st,
                      acc_err (*fn)(void *ctx, struct tc_prov *p, const char *link_name,
                                    struct acc_error *err),
                      void *ctx, struct acc_error *err)
{
    struct acc_sql_conn *c = acc_sql_main_lock(st->db);
    struct acc_sql_stmt *s = acc_sql_prepare(c, &q_load, err);
    acc_err rc = s ? ACC_OK : acc_sql_failed(err);
    bool row = false;
    while (!rc && !(rc = acc_sql_step(s, &row, "read", err)) && row) {
        char *link = NULL;
        struct tc_prov *p = read_row(s, &link);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        rc = fn(ctx, p, link, err);
        free(link);
    }
    acc_sql_done(s);
    acc_sql_main_unlock(st->db);
    return rc;
}
