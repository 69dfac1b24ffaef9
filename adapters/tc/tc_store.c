/* tc_store.c - the tc adapter's own SQLite file: one row per provisioned
 * reservation with its endpoints, its leaf class id, when it was first in
 * place, its first violation and the last counters of its classes.  The
 * bookings themselves are in the ledger's calendar file (lib/ledger).
 * The caller serialises calls (struct tc's lock). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "tc_internal.h"

struct tc_store {
    sqlite3 *db;
    char *path;
};

static const char schema[] = "CREATE TABLE IF NOT EXISTS provision ("
                             "  key TEXT PRIMARY KEY, local_id TEXT NOT NULL, link TEXT NOT NULL,"
                             "  start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,"
                             "  amount INTEGER NOT NULL, class_id INTEGER NOT NULL UNIQUE,"
                             "  addrs_a TEXT NOT NULL, addrs_b TEXT NOT NULL,"
                             "  activated INTEGER NOT NULL, violated_at INTEGER NOT NULL,"
                             "  why TEXT NOT NULL, bytes INTEGER NOT NULL,"
                             "  packets INTEGER NOT NULL, drops INTEGER NOT NULL"
                             ") WITHOUT ROWID;";

static acc_err db_error(struct tc_store *st, struct acc_error *err, const char *what)
{
    return acc_error_set(err, ACC_ERR_STORAGE, "tc state %s: %s: %s", st->path, what,
                         st->db ? sqlite3_errmsg(st->db) : "cannot open");
}

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

acc_err tc_store_open(const char *db_path, const char *name, const char *setting, bool durable,
                      struct tc_store **out, struct acc_error *err)
{
    *out = NULL;
    if (setting && !*setting)
        return acc_error_set(err, ACC_ERR_CONFIG, "state is empty");
    if (!setting && (!db_path || !*db_path))
        return acc_error_set(err, ACC_ERR_CONFIG, "needs a database path or a state file");
    struct tc_store *st = calloc(1, sizeof *st);
    if (!st)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_buf b;
    acc_buf_init(&b);
    if (setting)
        acc_buf_puts(&b, setting);
    else if (strcmp(db_path, ":memory:") == 0)
        acc_buf_puts(&b, db_path);
    else
        acc_buf_printf(&b, "%s.tc-%s", db_path, name);
    if (!acc_buf_ok(&b)) {
        acc_buf_release(&b);
        free(st);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    st->path = acc_buf_detach(&b, NULL);
    acc_err rc = ACC_OK;
    if (sqlite3_open_v2(st->path, &st->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK) {
        rc = db_error(st, err, "open");
        goto out;
    }
    sqlite3_busy_timeout(st->db, 5000);
    char setup[512];
    snprintf(setup, sizeof setup, "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s; %s",
             durable ? "FULL" : "NORMAL", schema);
    char *msg = NULL;
    if (sqlite3_exec(st->db, setup, NULL, NULL, &msg) != SQLITE_OK) {
        rc = acc_error_set(err, ACC_ERR_STORAGE, "tc state %s: %s", st->path,
                           msg ? msg : "cannot create");
        sqlite3_free(msg);
    }
out:
    if (rc) {
        tc_store_close(st);
        return rc;
    }
    *out = st;
    return ACC_OK;
}

void tc_store_close(struct tc_store *st)
{
    if (!st)
        return;
    sqlite3_close(st->db);
    free(st->path);
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

static acc_err exec_key(struct tc_store *st, const char *sql, const char *key, acc_time t,
                        struct acc_error *err)
{
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return db_error(st, err, "prepare");
    int bind = key ? sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) : sqlite3_bind_int64(s, 1, t);
    if (bind != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE)
        rc = db_error(st, err, "write");
    sqlite3_finalize(s);
    return rc;
}

acc_err tc_store_put(struct tc_store *st, const struct tc_prov *p, const char *link_name,
                     struct acc_error *err)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO provision (key, local_id, link, start_time, end_time, amount,"
        " class_id, addrs_a, addrs_b, activated, violated_at, why, bytes, packets, drops)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    char *a = join(p->addrs[0], p->n_addrs[0]), *b = join(p->addrs[1], p->n_addrs[1]);
    sqlite3_stmt *s = NULL;
    acc_err rc = ACC_OK;
    if (!a || !b) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        rc = db_error(st, err, "prepare");
        goto out;
    }
    int bind = sqlite3_bind_text(s, 1, p->key, -1, SQLITE_STATIC) |
               sqlite3_bind_text(s, 2, p->local_id, -1, SQLITE_STATIC) |
               sqlite3_bind_text(s, 3, link_name, -1, SQLITE_STATIC) |
               sqlite3_bind_int64(s, 4, p->start) | sqlite3_bind_int64(s, 5, p->end) |
               sqlite3_bind_int64(s, 6, p->amount) | sqlite3_bind_int64(s, 7, p->id) |
               sqlite3_bind_text(s, 8, a, -1, SQLITE_STATIC) |
               sqlite3_bind_text(s, 9, b, -1, SQLITE_STATIC) |
               sqlite3_bind_int64(s, 10, p->activated) | sqlite3_bind_int64(s, 11, p->violated_at) |
               sqlite3_bind_text(s, 12, p->why, -1, SQLITE_STATIC) |
               sqlite3_bind_int64(s, 13, (int64_t)p->bytes) |
               sqlite3_bind_int64(s, 14, (int64_t)p->packets) |
               sqlite3_bind_int64(s, 15, (int64_t)p->drops);
    if (bind != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE)
        rc = db_error(st, err, "write");
out:
    sqlite3_finalize(s);
    free(a);
    free(b);
    return rc;
}

acc_err tc_store_delete(struct tc_store *st, const char *key, struct acc_error *err)
{
    return exec_key(st, "DELETE FROM provision WHERE key = ?", key, 0, err);
}

acc_err tc_store_purge(struct tc_store *st, acc_time before, struct acc_error *err)
{
    return exec_key(st, "DELETE FROM provision WHERE end_time < ?", NULL, before, err);
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return acc_strdup(t ? (const char *)t : "");
}

acc_err tc_store_load(struct tc_store *st,
                      acc_err (*fn)(void *ctx, struct tc_prov *p, const char *link_name,
                                    struct acc_error *err),
                      void *ctx, struct acc_error *err)
{
    static const char sql[] =
        "SELECT key, local_id, link, start_time, end_time, amount, class_id, addrs_a, addrs_b,"
        " activated, violated_at, why, bytes, packets, drops FROM provision";
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return db_error(st, err, "prepare");
    acc_err rc = ACC_OK;
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct tc_prov *p = calloc(1, sizeof *p);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        p->key = col_dup(s, 0);
        p->local_id = col_dup(s, 1);
        p->start = sqlite3_column_int64(s, 3);
        p->end = sqlite3_column_int64(s, 4);
        p->amount = sqlite3_column_int64(s, 5);
        p->id = (unsigned)sqlite3_column_int64(s, 6);
        const unsigned char *a = sqlite3_column_text(s, 7), *b = sqlite3_column_text(s, 8);
        p->activated = sqlite3_column_int64(s, 9);
        p->violated_at = sqlite3_column_int64(s, 10);
        const unsigned char *why = sqlite3_column_text(s, 11);
        acc_strlcpy(p->why, why ? (const char *)why : "", sizeof p->why);
        p->bytes = (uint64_t)sqlite3_column_int64(s, 12);
        p->packets = (uint64_t)sqlite3_column_int64(s, 13);
        p->drops = (uint64_t)sqlite3_column_int64(s, 14);
        char *link = col_dup(s, 2);
        if (!p->key || !p->local_id || !link ||
            split(a ? (const char *)a : "", &p->addrs[0], &p->n_addrs[0]) ||
            split(b ? (const char *)b : "", &p->addrs[1], &p->n_addrs[1])) {
            free(link);
            tc_prov_free(p);
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        rc = fn(ctx, p, link, err);
        free(link);
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_error(st, err, "read");
    sqlite3_finalize(s);
    return rc;
}
