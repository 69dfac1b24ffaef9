/* SPDX-License-Identifier: Apache-2.0 */
/* sql_dump.c - a server's database dumped and restored with its own tools
 * (ACC_SQL_CAP_DUMP, sql.h): pg_dump's custom format, pg_restore into an
 * empty database.
 *
 * The tools get the connection as libpq reads it from the URL: each of its
 * settings that has an environment variable (PGHOST, PGPORT, PGUSER,
 * PGPASSWORD, PGSSLMODE, PGTARGETSESSIONATTRS ...) through the child's
 * environment, the others in a key=value string after -d; a secret one
 * (the password) goes through the environment only, never on a command
 * line where ps would show it. */
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/proc.h"
#include "dbname.h"
#include "sql_internal.h"

/* How long a dump or a restore may take, and how much it may say. */
#define DUMP_TIMEOUT_MS ((int64_t)3600 * 1000)
#define DUMP_SAID_MAX   ((size_t)64 << 10)
#define DUMP_ENV_MAX    48

/* The connection for a tool: env ("PGHOST=...", malloc'd, NULL-ended) and
 * conninfo (-d's value). */
struct tool_conn {
    char *env[DUMP_ENV_MAX + 1];
    size_t n_env;
    struct acc_buf conninfo;
};

static void tool_conn_release(struct tool_conn *t)
{
    for (size_t i = 0; i < t->n_env; i++)
        free(t->env[i]);
    acc_buf_release(&t->conninfo);
}

static bool secret(const char *keyword)
{
    return strcmp(keyword, "password") == 0 || strcmp(keyword, "sslpassword") == 0 ||
           strstr(keyword, "secret") != NULL;
}

/* url's settings into t; label names the database in messages (the URL
 * shown without its password). */
static acc_err tool_conn_of(const char *url, const char *label, struct tool_conn *t,
                            struct acc_error *err)
{
    memset(t, 0, sizeof *t);
    acc_buf_init(&t->conninfo);
    char *why = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &why);
    if (!opts) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", why ? why : "out of memory");
        acc_db_scrub(msg, sizeof msg, url);
        PQfreemem(why);
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: %s", label, msg);
    }
    acc_err rc = ACC_OK;
    for (PQconninfoOption *o = opts; !rc && o->keyword; o++) {
        if (!o->val || !*o->val)
            continue;
        if (o->envvar && t->n_env < DUMP_ENV_MAX) {
            struct acc_buf b;
            acc_buf_init(&b);
            acc_buf_printf(&b, "%s=%s", o->envvar, o->val);
            if (!acc_buf_ok(&b) || !(t->env[t->n_env++] = acc_buf_detach(&b, NULL)))
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            acc_buf_release(&b);
        } else if (secret(o->keyword)) {
            rc = acc_error_set(err, ACC_ERR_UNSUPPORTED,
                               "%s: its %s cannot be handed to pg_dump without a command line "
                               "that shows it; give it in a file (passfile, or PGPASSFILE)",
                               label, o->keyword);
        } else {
            /* key='value', with ' and \ escaped as libpq reads them */
            acc_buf_printf(&t->conninfo, "%s%s='", t->conninfo.len ? " " : "", o->keyword);
            for (const char *c = o->val; *c; c++) {
                if (*c == '\'' || *c == '\\')
                    acc_buf_append(&t->conninfo, "\\", 1);
                acc_buf_append(&t->conninfo, c, 1);
            }
            acc_buf_append(&t->conninfo, "'", 1);
        }
    }
    PQconninfoFree(opts);
    /* -d takes a key=value string once it holds an '=' (an empty one: the
     * environment's settings alone) */
    if (!rc && !t->conninfo.len)
        acc_buf_puts(&t->conninfo, "connect_timeout=10");
    if (!rc && !acc_buf_ok(&t->conninfo))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (rc)
        tool_conn_release(t);
    return rc;
}

/* Runs a tool with t's connection; what it said, on failure, into err. */
static acc_err run_tool(const char *const *argv, const struct tool_conn *t, const char *label,
                        struct acc_error *err)
{
    struct acc_proc_result r = {0};
    acc_err rc = acc_proc_run(argv, (const char *const *)t->env, NULL, DUMP_TIMEOUT_MS,
                              DUMP_SAID_MAX, &r, err);
    if (rc == ACC_ERR_TIMEOUT)
        acc_error_set(err, ACC_ERR_TIMEOUT, "%s: %s ran longer than %lld s and was stopped", label,
                      argv[0], (long long)(DUMP_TIMEOUT_MS / 1000));
    else if (rc)
        acc_error_prefix(err, "%s: %s", label, argv[0]);
    else if (r.status != 0) {
        /* its first line: the rest repeats it for each object */
        const char *said = acc_proc_said(&r);
        rc = acc_error_set(err, ACC_ERR_STORAGE, "%s: %s failed (exit %d): %.*s", label, argv[0],
                           r.status, (int)strcspn(said, "\n"), said);
    }
    acc_proc_result_release(&r);
    return rc;
}

acc_err acc_sql_dump(struct acc_sql *db, const char *dest, const char *check_sql, int64_t *check,
                     struct acc_error *err)
{
    char label[512];
    snprintf(label, sizeof label, "%s %s", db->opt.label, db->opt.path);
    if (!(db->be->driver.caps & ACC_SQL_CAP_DUMP))
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "%s: a %s database is not dumped (acc_sql_backup copies it)", label,
                             db->be->driver.name);
    char part[4096];
    if (snprintf(part, sizeof part, "%s.part", dest) >= (int)sizeof part)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: dump file name too long", label);
    if (access(dest, F_OK) == 0)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: dump %s exists already", label, dest);
    unlink(part);
    struct tool_conn t;
    acc_err rc = tool_conn_of(db->url, label, &t, err);
    if (rc)
        return rc;
    /* One snapshot for the count and the dump: this connection exports it
     * and holds it open while pg_dump reads in it. */
    struct acc_sql_conn *c = NULL;
    struct acc_sql_stmt *s = NULL;
    char snap[128] = "";
    bool row = false;
    rc = acc_sql_connect(db, &c, err);
    if (!rc)
        rc = acc_sql_begin(c, 0, err);
    if (!rc)
        rc = acc_sql_prepare_once(c, "SELECT pg_export_snapshot()", &s, err);
    if (!rc)
        rc = acc_sql_step(s, &row, "export the snapshot", err);
    if (!rc && row)
        acc_sql_col_copy(s, 0, snap, sizeof snap);
    acc_sql_finalize(s);
    s = NULL;
    if (!rc && !snap[0])
        rc = acc_error_set(err, ACC_ERR_STORAGE, "%s: no snapshot to dump from", label);
    if (!rc && check_sql) {
        row = false;
        rc = acc_sql_prepare_once(c, check_sql, &s, err);
        if (!rc)
            rc = acc_sql_step(s, &row, "count", err);
        if (!rc)
            *check = row ? acc_sql_col_i64(s, 0) : 0;
        acc_sql_finalize(s);
    }
    if (!rc) {
        char snap_arg[160], file_arg[4200];
        snprintf(snap_arg, sizeof snap_arg, "--snapshot=%s", snap);
        snprintf(file_arg, sizeof file_arg, "--file=%s", part);
        const char *argv[] = {"pg_dump", "--format=custom", "--no-password",          snap_arg,
                              file_arg,  "--dbname",        acc_buf_str(&t.conninfo), NULL};
        rc = run_tool(argv, &t, label, err);
    }
    if (c) {
        acc_sql_rollback(c);
        acc_sql_disconnect(c);
    }
    tool_conn_release(&t);
    if (!rc && rename(part, dest) != 0)
        rc = acc_error_set(err, ACC_ERR_IO, "%s: dump: cannot rename %s: %s", label, part,
                           strerror(errno));
    if (rc)
        unlink(part);
    return rc;
}

/* What the database holds that a restore would collide with: tables,
 * views, sequences, in any schema but the server's own.  *what names a few;
 * -1 when it cannot be asked. */
static int64_t holds(PGconn *pc, char *what, size_t size)
{
    PGresult *r = PQexec(pc, "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN "
                             "pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN "
                             "('r', 'p', 'v', 'm', 'S', 'f') AND n.nspname NOT IN "
                             "('pg_catalog', 'information_schema') AND n.nspname NOT LIKE "
                             "'pg\\_%' ORDER BY 1");
    int64_t n = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK) {
        n = PQntuples(r);
        what[0] = '\0';
        for (int i = 0; i < n && i < 3; i++)
            snprintf(what + strlen(what), size - strlen(what), "%s%s", i ? ", " : "",
                     PQgetvalue(r, i, 0));
        if (n > 3)
            snprintf(what + strlen(what), size - strlen(what), " ...");
    }
    PQclear(r);
    return n;
}

acc_err acc_sql_restore(const char *location, const char *dump, struct acc_error *err)
{
    const struct acc_sql_driver *d = acc_sql_driver_of(location, err);
    if (!d)
        return ACC_ERR_CONFIG;
    char *shown = acc_db_shown(location);
    char label[512];
    snprintf(label, sizeof label, "database %s", shown ? shown : "?");
    free(shown);
    if (!(d->caps & ACC_SQL_CAP_DUMP))
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "%s: a %s database is restored by putting the file in place, not "
                             "from a dump",
                             label, d->name);
    if (access(dump, R_OK) != 0)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "dump %s: %s", dump, strerror(errno));
    /* An empty database only: a restore over tables would mix two
     * databases' rows, or stop half-way on the first that is there. */
    PGconn *pc = PQconnectdb(location);
    char what[256] = "";
    int64_t n = -1;
    if (PQstatus(pc) == CONNECTION_OK)
        n = holds(pc, what, sizeof what);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(pc));
    msg[strcspn(msg, "\n")] = '\0';
    acc_db_scrub(msg, sizeof msg, location);
    PQfinish(pc);
    if (n < 0)
        return acc_error_set(err, ACC_ERR_STORAGE, "%s: %s", label, msg);
    if (n > 0)
        return acc_error_set(err, ACC_ERR_STATE,
                             "%s is not empty (%lld tables, views or sequences: %s): a dump is "
                             "restored into a new, empty database only (createdb NAME, then "
                             "restore into it)",
                             label, (long long)n, what);
    struct tool_conn t;
    acc_err rc = tool_conn_of(location, label, &t, err);
    if (rc)
        return rc;
    /* all or nothing: one transaction, stopped at the first error; the
     * objects belong to whoever restores (the accordd that will use it) */
    const char *argv[] = {"pg_restore",
                          "--no-password",
                          "--exit-on-error",
                          "--single-transaction",
                          "--no-owner",
                          "--no-privileges",
                          "--dbname",
                          acc_buf_str(&t.conninfo),
                          dump,
                          NULL};
    rc = run_tool(argv, &t, label, err);
    tool_conn_release(&t);
    if (!rc)
        acc_log_info("%s: restored from %s", label, dump);
    return rc;
}
