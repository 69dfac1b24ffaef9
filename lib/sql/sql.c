/* SPDX-License-Identifier: Apache-2.0 */
/* sql.c - databases: open and migrate, the main connection, the readers'
 * pool, transactions and errors (sql.h). */
#include "sql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbname.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "sql_internal.h"

#define READERS_DEFAULT   32
#define CACHE_KIB_DEFAULT 256

acc_err sql_fail(const struct acc_sql *db, enum sql_rc rc, const char *what, const char *msg,
                 struct acc_error *err)
{
    acc_err code = rc == SQL_NOMEM       ? ACC_ERR_NOMEM
                   : rc == SQL_DUPLICATE ? ACC_ERR_KEY_REUSED
                   : rc == SQL_AWAY      ? ACC_ERR_STORAGE_AWAY
                                         : ACC_ERR_STORAGE;
    acc_error_set(err, code, "%s %s: %s: %s", db->opt.label, db->opt.path, what,
                  msg ? msg : "failed");
    if (err && rc == SQL_AWAY)
        err->retry_after = SQL_RETRY_AFTER;
    return code;
}

acc_err sql_conn_fail(struct acc_sql_conn *c, enum sql_rc rc, const char *what,
                      struct acc_error *err)
{
    return sql_fail(c->db, rc, what, c->db->be->errmsg(c->h), err);
}

/* ------------------------------------------------------------ connections */

void acc_sql_disconnect(struct acc_sql_conn *c)
{
    if (!c)
        return;
    for (unsigned i = 0; c->cache && i < c->db->opt.n_slots; i++)
        sql_stmt_free(c->cache[i]);
    free(c->cache);
    if (c->h)
        c->db->be->disconnect(c->h);
    free(c);
}

/* A connection to path (the database's own, or ":memory:" for a snapshot's
 * main connection). */
static acc_err connect_to(struct acc_sql *db, const char *path, bool is_main,
                          struct acc_sql_conn **out, struct acc_error *err)
{
    struct acc_sql_conn *c = calloc(1, sizeof *c);
    if (!c || (db->opt.n_slots && !(c->cache = calloc(db->opt.n_slots, sizeof *c->cache)))) {
        free(c);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    c->db = db;
    struct acc_sql_options o = db->opt;
    o.path = path == db->opt.path ? db->url : path;
    /* the backend's default for the main connection, a small cache else */
    o.cache_kib = is_main ? 0 : db->opt.cache_kib ? db->opt.cache_kib : CACHE_KIB_DEFAULT;
    acc_err rc = db->be->connect(&o, &c->h, err);
    /* At open, a server that cannot be reached is the program's failure to
     * start, told as such; later (a reader made while the server restarts)
     * it is away for now: 503 with Retry-After. */
    if (rc == ACC_ERR_STORAGE_AWAY && is_main) {
        rc = ACC_ERR_STORAGE;
        if (err) {
            err->code = rc;
            err->retry_after = 0;
        }
    }
    if (rc) {
        acc_error_prefix(err, "%s %s", db->opt.label, db->opt.path);
        acc_sql_disconnect(c);
        return rc;
    }
    *out = c;
    return ACC_OK;
}

acc_err acc_sql_connect(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err)
{
    /* Another connection would open the file itself, not the copy. */
    if (db->opt.snapshot)
        return acc_error_set(err, ACC_ERR_INTERNAL, "%s %s: a copy in memory has one connection",
                             db->opt.label, db->opt.path);
    return connect_to(db, db->opt.path, false, out, err);
}

struct acc_sql_conn *acc_sql_main_lock(struct acc_sql *db)
{
    pthread_mutex_lock(&db->main_lock);
    return db->main;
}

void acc_sql_main_unlock(struct acc_sql *db)
{
    pthread_mutex_unlock(&db->main_lock);
}

/* ---------------------------------------------------------------- readers */

acc_err acc_sql_reader_take(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err)
{
    pthread_mutex_lock(&db->rlock);
    while (!db->free_readers && db->readers >= db->opt.max_readers)
        pthread_cond_wait(&db->rfree, &db->rlock);
    if (db->free_readers) {
        *out = db->free_readers;
        db->free_readers = (*out)->next;
        pthread_mutex_unlock(&db->rlock);
        return ACC_OK;
    }
    db->readers++;
    pthread_mutex_unlock(&db->rlock);
    acc_err rc = acc_sql_connect(db, out, err);
    if (rc) {
        pthread_mutex_lock(&db->rlock);
        db->readers--;
        pthread_cond_signal(&db->rfree);
        pthread_mutex_unlock(&db->rlock);
    }
    return rc;
}

void acc_sql_reader_give(struct acc_sql *db, struct acc_sql_conn *c)
{
    pthread_mutex_lock(&db->rlock);
    c->next = db->free_readers;
    db->free_readers = c;
    pthread_cond_signal(&db->rfree);
    pthread_mutex_unlock(&db->rlock);
}

acc_err acc_sql_read_begin(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err)
{
    acc_err rc = acc_sql_reader_take(db, out, err);
    if (rc)
        return rc;
    rc = acc_sql_begin(*out, 0, err);
    if (rc)
        acc_sql_reader_give(db, *out);
    return rc;
}

void acc_sql_read_end(struct acc_sql *db, struct acc_sql_conn *c)
{
    acc_sql_commit(c, NULL);
    acc_sql_reader_give(db, c);
}

/* ----------------------------------------------------------- transactions */

acc_err acc_sql_exec(struct acc_sql_conn *c, const char *sql, struct acc_error *err)
{
    const char *msg = NULL;
    enum sql_rc rc = c->db->be->exec(c->h, sql, &msg);
    return rc == SQL_OK ? ACC_OK : sql_fail(c->db, rc, "exec", msg, err);
}

int64_t acc_sql_changes(struct acc_sql_conn *c)
{
    return c->db->be->changes(c->h);
}

acc_err acc_sql_begin(struct acc_sql_conn *c, unsigned flags, struct acc_error *err)
{
    const struct sql_backend *be = c->db->be;
    return acc_sql_exec(c, flags & ACC_SQL_WRITE ? be->begin_write : be->begin_read, err);
}

acc_err acc_sql_commit(struct acc_sql_conn *c, struct acc_error *err)
{
    return acc_sql_exec(c, "COMMIT", err);
}

void acc_sql_rollback(struct acc_sql_conn *c)
{
    acc_sql_exec(c, "ROLLBACK", NULL);
}

/* Savepoint names are the caller's plain words, never input. */
static acc_err savepoint_op(struct acc_sql_conn *c, const char *op, const char *name,
                            struct acc_error *err)
{
    char sql[96];
    int n = snprintf(sql, sizeof sql, "%s %s", op, name);
    if (n < 0 || (size_t)n >= sizeof sql)
        return acc_error_set(err, ACC_ERR_INTERNAL, "savepoint name too long");
    return acc_sql_exec(c, sql, err);
}

acc_err acc_sql_savepoint(struct acc_sql_conn *c, const char *name, struct acc_error *err)
{
    return savepoint_op(c, "SAVEPOINT", name, err);
}

acc_err acc_sql_release(struct acc_sql_conn *c, const char *name, struct acc_error *err)
{
    return savepoint_op(c, "RELEASE", name, err);
}

void acc_sql_rollback_to(struct acc_sql_conn *c, const char *name)
{
    savepoint_op(c, "ROLLBACK TO", name, NULL);
}

/* ---------------------------------------------------------------- backups */

const struct acc_sql_query *acc_sql_pick(struct acc_sql_conn *c, const struct acc_sql_query *lite,
                                         const struct acc_sql_query *pg)
{
    return c->db->be == &sql_pg ? pg : lite;
}

/* The copy goes to DEST.part first and is renamed when whole, so that a
 * file named dest is always a complete copy; nothing is left on failure. */
static acc_err backup_from(const struct sql_backend *be, void *h, const char *label,
                           const char *dest, const char *check_sql, int64_t *check,
                           struct acc_error *err)
{
    char part[4096];
    if (snprintf(part, sizeof part, "%s.part", dest) >= (int)sizeof part)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: backup file name too long", label);
    if (access(dest, F_OK) == 0)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: backup %s exists already", label, dest);
    unlink(part);
    acc_err rc = be->backup(h, part, check_sql, check, err);
    if (!rc && rename(part, dest) != 0)
        rc = acc_error_set(err, ACC_ERR_IO, "%s: backup: cannot rename %s: %s", label, part,
                           strerror(errno));
    if (rc) {
        unlink(part);
        char journal[4200];
        snprintf(journal, sizeof journal, "%s-journal", part);
        unlink(journal);
        acc_error_prefix(err, "%s", label);
    }
    return rc;
}

acc_err acc_sql_backup(struct acc_sql *db, const char *dest, const char *check_sql, int64_t *check,
                       struct acc_error *err)
{
    if (!sql_is_file(db->opt.path) || db->opt.snapshot || !db->be->backup)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "%s %s: not a database file this build can copy", db->opt.label,
                             db->opt.path);
    struct acc_sql_conn *c = NULL;
    acc_err rc = acc_sql_connect(db, &c, err);
    if (rc)
        return rc;
    char label[512];
    snprintf(label, sizeof label, "%s %s", db->opt.label, db->opt.path);
    rc = backup_from(db->be, c->h, label, dest, check_sql, check, err);
    acc_sql_disconnect(c);
    return rc;
}

acc_err acc_sql_copy_file(const char *label, const char *src, const char *dest,
                          struct acc_error *err)
{
    const struct sql_backend *be = sql_backend_of(src);
    if (!be || !sql_is_file(src) || !be->backup || acc_db_is_conninfo(src)) {
        char *shown = acc_db_shown(src);
        acc_error_set(err, ACC_ERR_UNSUPPORTED, "%s %s: not a database file", label,
                      shown ? shown : "(out of memory)");
        free(shown);
        return ACC_ERR_UNSUPPORTED;
    }
    /* The backend would make a file that is not there. */
    if (access(src, F_OK) != 0)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s %s: %s", label, src, strerror(errno));
    const struct acc_sql_options o = {
        .path = src, .label = label, .durable = false, .wal_limit = ACC_SQL_WAL_LIMIT_DEFAULT};
    void *h = NULL;
    acc_err rc = be->connect(&o, &h, err);
    char full[512];
    snprintf(full, sizeof full, "%s %s", label, src);
    if (rc) {
        acc_error_prefix(err, "%s", full);
        return rc;
    }
    rc = backup_from(be, h, full, dest, NULL, NULL, err);
    be->disconnect(h);
    return rc;
}

/* Before the first migration of a database that has a schema: a whole copy
 * of it as it is, PATH.pre-vN (N the version it is brought to), or
 * PATH.pre-vN.K when one of that name is there already (a migration that
 * failed earlier: its copy is kept). */
static acc_err pre_migration_copy(struct acc_sql *db, unsigned newest, struct acc_error *err)
{
    char dest[4096];
    for (unsigned k = 1; k < 100; k++) {
        int n = k == 1 ? snprintf(dest, sizeof dest, "%s.pre-v%u", db->opt.path, newest)
                       : snprintf(dest, sizeof dest, "%s.pre-v%u.%u", db->opt.path, newest, k);
        if (n < 0 || (size_t)n >= sizeof dest)
            return acc_error_set(err, ACC_ERR_INVALID, "%s %s: path too long for its backup",
                                 db->opt.label, db->opt.path);
        if (access(dest, F_OK) != 0)
            break;
    }
    char label[512];
    snprintf(label, sizeof label, "%s %s", db->opt.label, db->opt.path);
    acc_err rc = backup_from(db->be, db->main->h, label, dest, NULL, NULL, err);
    if (rc) {
        acc_error_prefix(err, "before its migration");
        return rc;
    }
    acc_log_info("%s %s: copied to %s before migrating it to schema version %u", db->opt.label,
                 db->opt.path, dest, newest);
    return ACC_OK;
}

/* ------------------------------------------------------------- migrations */

/* Migration v: PostgreSQL's own text of it when it has one. */
static const struct acc_embedded *migration(const struct acc_sql *db, unsigned v)
{
    const struct acc_embedded *m = &db->opt.migrations[v];
    for (size_t i = 0; db->be == &sql_pg && i < db->opt.n_pg_migrations; i++)
        if (strcmp(db->opt.pg_migrations[i].name, m->name) == 0)
            return &db->opt.pg_migrations[i];
    return m;
}

static acc_err migrate_locked(struct acc_sql *db, struct acc_error *err);

/* How much longer than its TimeoutStartSec= a daemon tells systemd it may
 * take, from now, whenever it begins a step of unknown length: waiting for
 * another instance's migration, copying the database, one migration. */
#define MIGRATION_EXTEND_USEC (300ull * 1000000ull)

/* Tells systemd that the start goes on (EXTEND_TIMEOUT_USEC, and the
 * watchdog's keep-alive); nothing when not started by it. */
static void migration_step(void)
{
    acc_notify_extend_timeout(MIGRATION_EXTEND_USEC);
    acc_notify_watchdog();
}

static acc_err migrate(struct acc_sql *db, struct acc_error *err)
{
    void *h = db->main->h;
    migration_step();
    if (db->be->schema_lock)
        db->be->schema_lock(h, true);
    acc_err rc = migrate_locked(db, err);
    if (db->be->schema_lock)
        db->be->schema_lock(h, false);
    return rc;
}

static acc_err migrate_locked(struct acc_sql *db, struct acc_error *err)
{
    struct acc_sql_conn *c = db->main;
    acc_err rc = ACC_OK;
    unsigned version = db->be->schema_version(c->h, err, &rc);
    if (rc)
        return rc;
    unsigned newest = (unsigned)db->opt.n_migrations;
    if (version > newest)
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "%s %s: schema version %u is newer than this %s (%u)", db->opt.label,
                             db->opt.path, version, db->opt.program ? db->opt.program : "program",
                             newest);
    if (version < newest)
        migration_step();
    if (version > 0 && version < newest && sql_is_file(db->opt.path) && !db->opt.snapshot &&
        db->be->backup && (rc = pre_migration_copy(db, newest, err)))
        return rc;
    for (unsigned v = version; v < newest; v++) {
        const struct acc_embedded *m = migration(db, v);
        migration_step();
        if ((rc = acc_sql_begin(c, ACC_SQL_WRITE, err)))
            return rc;
        rc = acc_sql_exec(c, m->data, err);
        enum sql_rc vr = rc ? SQL_OK : db->be->set_schema_version(c->h, v + 1);
        if (!rc && vr != SQL_OK)
            rc = sql_conn_fail(c, vr, "schema version", err);
        if (!rc)
            rc = acc_sql_commit(c, err);
        if (rc) {
            acc_sql_rollback(c);
            acc_error_prefix(err, "migration %s", m->name);
            return rc;
        }
        acc_log_info("%s %s: applied migration %s", db->opt.label, db->opt.path, m->name);
    }
    db->version = newest > version ? newest : version;
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

static acc_err copy_options(struct acc_sql *db, const struct acc_sql_options *opt,
                            struct acc_error *err)
{
    db->opt = *opt;
    db->url = strdup(opt->path ? opt->path : "");
    /* The path as messages show it: a URL without its password
     * (postgresql://user:secret@host/db -> postgresql://user@host/db). */
    db->opt.path = db->url ? acc_db_shown(db->url) : NULL;
    db->opt.label = strdup(opt->label ? opt->label : "database");
    if (!db->url || !db->opt.path || !db->opt.label)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!db->opt.wal_limit)
        db->opt.wal_limit = ACC_SQL_WAL_LIMIT_DEFAULT;
    if (!db->opt.max_readers)
        db->opt.max_readers = READERS_DEFAULT;
    return ACC_OK;
}

acc_err acc_sql_open(const struct acc_sql_options *opt, struct acc_sql **out, struct acc_error *err)
{
    *out = NULL;
    const char *label = opt->label ? opt->label : "database";
    if (opt->wal_limit < 0)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: wal_limit must not be negative", label);
    const struct sql_backend *be = sql_backend_of(opt->path ? opt->path : "");
    /* libpq's key=value settings would be a file's name to SQLite (made
     * in a directory "host=" or the like); the message shows them without
     * their password. */
    bool conninfo = be && acc_db_is_conninfo(opt->path);
    if (!be || conninfo) {
        char *shown = acc_db_shown(opt->path);
        acc_error_set(err, ACC_ERR_CONFIG, "%s %s: %s", label, shown ? shown : "(out of memory)",
                      conninfo ? "libpq's key=value settings are not taken: a PostgreSQL "
                                 "database is named by a URL (postgresql://USER@HOST/DB?...)"
                               : "no backend of this build takes it");
        free(shown);
        return ACC_ERR_CONFIG;
    }
    struct acc_sql *db = calloc(1, sizeof *db);
    if (!db)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    db->be = be;
    db->lock_fd = -1;
    db->file_fd = -1;
    pthread_mutex_init(&db->main_lock, NULL);
    pthread_mutex_init(&db->rlock, NULL);
    pthread_cond_init(&db->rfree, NULL);
    acc_err rc = copy_options(db, opt, err);
    /* Locked before the first connection: a second program touches
     * nothing, not even the migrations.  A snapshot only reads the file. */
    bool snapshot = db->opt.snapshot && sql_is_file(db->opt.path);
    if (!rc && db->opt.snapshot && !be->copy_in)
        rc = acc_error_set(err, ACC_ERR_UNSUPPORTED,
                           "%s %s: a copy in memory is made of a database file only", db->opt.label,
                           db->opt.path);
    if (!rc && (be->driver.caps & ACC_SQL_CAP_ONE_WRITER) && sql_is_file(db->opt.path) && !snapshot)
        rc = sql_lock_take(db, err);
    if (!rc)
        rc = connect_to(db, snapshot ? ":memory:" : db->opt.path, true, &db->main, err);
    if (!rc && snapshot && (rc = db->be->copy_in(db->main->h, db->opt.path, err)))
        acc_error_prefix(err, "%s %s", db->opt.label, db->opt.path);
    if (!rc && db->be->wal_setup && (rc = db->be->wal_setup(db->main->h, err)))
        acc_error_prefix(err, "%s %s", db->opt.label, db->opt.path);
    if (!rc)
        rc = migrate(db, err);
    if (rc) {
        acc_sql_close(db);
        return rc;
    }
    *out = db;
    return ACC_OK;
}

void acc_sql_close(struct acc_sql *db)
{
    if (!db)
        return;
    while (db->free_readers) {
        struct acc_sql_conn *c = db->free_readers;
        db->free_readers = c->next;
        acc_sql_disconnect(c);
    }
    acc_sql_disconnect(db->main);
    /* Last, once every connection is closed (and SQLite has folded its
     * log back): the next writer starts from a database at rest. */
    sql_lock_drop(db);
    pthread_mutex_destroy(&db->main_lock);
    pthread_mutex_destroy(&db->rlock);
    pthread_cond_destroy(&db->rfree);
    free((char *)db->opt.path);
    free(db->url);
    free((char *)db->opt.label);
    free(db);
}

const char *acc_sql_path(const struct acc_sql *db)
{
    return db->opt.path;
}

unsigned acc_sql_schema_version(const struct acc_sql *db)
{
    return db->version;
}
