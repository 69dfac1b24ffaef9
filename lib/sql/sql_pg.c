/* SPDX-License-Identifier: Apache-2.0 */
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
 *               connection, one that cannot be made, a server going down,
 *               starting or full, a read-only standby, and a lock timeout,
 *               deadlock or serialization failure are SQL_AWAY (503); a
 *               lost connection is reset at the next statement (never
 *               inside the transaction it was lost in), and statements
 *               prepared before are prepared again; an idle connection
 *               the server ended (a restart) is found so before its next
 *               statement, and made again first: that statement succeeds
 *   timeouts    lock_timeout, idle_in_transaction_session_timeout; by
 *               default connect_timeout and TCP keepalives (the URL's own
 *               settings win)
 *
 * This file has the connections; sql_pg_stmt.c the statements.
 *   durability  durable: synchronous_commit on (the default), else off
 *
 * There is no write-ahead log of ours to bound and no file to lock: the
 * server keeps both. */
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbname.h"
#include "../common/log.h"
#include "sql_internal.h"

void pg_set_msg(struct pg *p, const char *m)
{
    snprintf(p->msg, sizeof p->msg, "%s", m && *m ? m : "failed");
    size_t n = strlen(p->msg);
    while (n && (p->msg[n - 1] == '\n' || p->msg[n - 1] == ' '))
        p->msg[--n] = '\0';
}

/* What a result says, in the layer's words (the message kept on p). */
enum sql_rc pg_rc_of(struct pg *p, const PGresult *r)
{
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    p->conflict = false;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY)
        return SQL_OK;
    pg_set_msg(p, r ? PQresultErrorMessage(r) : PQerrorMessage(p->conn));
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (state && strcmp(state, "23505") == 0)
        return SQL_DUPLICATE;
    /* the connection lost (libpq's own failures carry no SQLSTATE, and
     * libpq may not have marked the connection bad yet when a write to it
     * failed), the server shutting down or starting, a standby not promoted
     * yet (read-only): away for now */
    if (!r && PQstatus(p->conn) == CONNECTION_OK)
        return SQL_NOMEM;
    if (PQstatus(p->conn) != CONNECTION_OK || !state || strncmp(state, "08", 2) == 0 ||
        strncmp(state, "57P", 3) == 0 || strcmp(state, "25006") == 0 || strcmp(state, "53300") == 0)
        return SQL_AWAY;
    /* Another instance held the lock past lock_timeout (55P03), a deadlock
     * (40P01), a serialization failure (40001): nothing is wrong with the
     * database and the same request a moment later may pass, so it is a
     * 503 with Retry-After as well.  The connection is fine: the
     * transaction is not marked lost (a savepoint rolled back to goes on),
     * p->conflict says so to pg_lost_check.  A deadlock's victim is also
     * counted: the writer runs its batch again (sql_writer.c). */
    if (strcmp(state, "55P03") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0) {
        p->conflict = true;
        p->deadlocks += state[0] == '4';
        return SQL_AWAY;
    }
    return SQL_ERROR;
}

/* A transaction whose connection was lost is over: its statements fail
 * (never run on a new connection, outside it) until its COMMIT (which
 * fails) or ROLLBACK (nothing left to undo); then a BEGIN or a statement
 * of its own makes the connection again. */
void pg_lost_check(struct pg *p, enum sql_rc rc)
{
    if (rc != SQL_AWAY || p->conflict)
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
        /* a connection still up (a standby's read-only refusal, a failed
         * write libpq has not read the end of) still has the transaction
         * open, aborted: rolled back for real at its end, or before a new
         * one begins */
        if ((commit || rollback || begin) && PQstatus(p->conn) == CONNECTION_OK &&
            PQtransactionStatus(p->conn) != PQTRANS_IDLE)
            PQclear(PQexec(p->conn, "ROLLBACK"));
        if (commit || rollback) {
            p->lost = p->in_tx = false;
            pg_set_msg(p, "the connection to the database server was lost in the transaction");
            return rollback ? SQL_OK : SQL_AWAY;
        }
        if (!begin) {
            pg_set_msg(p, "the connection to the database server was lost in the transaction");
            return SQL_AWAY;
        }
        p->lost = p->in_tx = false;
    }
    if (!pg_alive(p)) {
        if (commit || rollback) /* over either way */
            p->in_tx = p->lost = false;
        return SQL_AWAY;
    }
    PGresult *r = PQexec(p->conn, sql);
    enum sql_rc rc = pg_rc_of(p, r);
    if (rc == SQL_OK) {
        const char *n = PQcmdTuples(r);
        p->changes = n && *n ? strtoll(n, NULL, 10) : 0;
    }
    /* the COMMIT of a transaction a failed statement aborted rolls back */
    if (rc == SQL_OK && commit && strcmp(PQcmdStatus(r), "ROLLBACK") == 0) {
        pg_set_msg(p, "the transaction was rolled back: a statement in it failed");
        rc = SQL_ERROR;
    }
    PQclear(r);
    if (begin && rc == SQL_OK)
        p->in_tx = true;
    pg_lost_check(p, rc);
    if (commit || rollback)
        p->in_tx = p->lost = false;
    return rc;
}

/* A transaction left idle this long is ended by the server (its locks let
 * go): an instance paused (SIGSTOP, a VM paused) in the middle of one
 * blocks the others no longer than that.  Accord's transactions do their
 * work in the process between statements (never a call to a site or an
 * adapter): milliseconds; three times lock_timeout leaves room for a
 * loaded machine. */
#define IDLE_TX_MS (3 * ACC_SQL_BUSY_MS)

static enum sql_rc session_setup(struct pg *p, bool durable)
{
    char sql[320];
    /* lock_timeout: SQLite's busy time; the messages in English whatever
     * the server's locale, as the rest of Accord's. */
    snprintf(sql, sizeof sql,
             "SET lock_timeout = %d; SET idle_in_transaction_session_timeout = %d; SET "
             "synchronous_commit = %s; SET client_min_messages = warning; SET lc_messages = 'C'",
             ACC_SQL_BUSY_MS, IDLE_TX_MS, durable ? "on" : "off");
    PGresult *r = PQexec(p->conn, sql);
    enum sql_rc rc = pg_rc_of(p, r);
    PQclear(r);
    if (rc != SQL_OK) { /* lc_messages needs a superuser: without it */
        snprintf(sql, sizeof sql,
                 "SET lock_timeout = %d; SET idle_in_transaction_session_timeout = %d; SET "
                 "synchronous_commit = %s; SET client_min_messages = warning",
                 ACC_SQL_BUSY_MS, IDLE_TX_MS, durable ? "on" : "off");
        r = PQexec(p->conn, sql);
        rc = pg_rc_of(p, r);
        PQclear(r);
    }
    return rc;
}

/* A connection that was lost is made again (libpq's reset: the same
 * hosts, in the same order, so a promoted standby is found).  Its session
 * settings and prepared statements went with it.  Never inside a
 * transaction: its statements would run on the new connection outside it
 * (and its COMMIT "succeed" there); the transaction is lost instead, and
 * its COMMIT fails.  A connection whose settings could not be made counts
 * as failed until they are. */
/* An idle connection the server ended (a restart, a failover,
 * pg_terminate_backend) still reads CONNECTION_OK until libpq reads from
 * it: its first statement would fail (a 503 for the first request after
 * the server is back).  Outside a transaction nothing is due on it but, at
 * most, a notice; a socket that can be read holds the server's goodbye
 * (FATAL 57P01) and its end.  Read now (a poll that does not wait, then up
 * to 50 ms for the end behind a message), so that libpq marks it bad and
 * pg_alive makes it again before the statement. */
static void idle_check(struct pg *p)
{
    int fd = PQsocket(p->conn);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (fd < 0 || poll(&pfd, 1, 0) <= 0)
        return;
    if (PQconsumeInput(p->conn) && PQstatus(p->conn) == CONNECTION_OK && poll(&pfd, 1, 50) > 0)
        PQconsumeInput(p->conn);
    if (PQstatus(p->conn) != CONNECTION_OK)
        acc_log_info("database: an idle connection was ended by the server; made again");
}

bool pg_alive(struct pg *p)
{
    if (!p->in_tx && PQstatus(p->conn) == CONNECTION_OK)
        idle_check(p);
    if (PQstatus(p->conn) == CONNECTION_OK && p->set_up)
        return true;
    if (PQstatus(p->conn) != CONNECTION_OK) {
        if (p->in_tx) {
            p->lost = true;
            pg_set_msg(p, "the connection to the database server was lost in the transaction");
            return false;
        }
        PQreset(p->conn);
        if (PQstatus(p->conn) != CONNECTION_OK) {
            pg_set_msg(p, PQerrorMessage(p->conn));
            return false;
        }
        p->gen++;
        acc_log_info("database: connection to PostgreSQL made again");
    }
    p->set_up = session_setup(p, p->durable) == SQL_OK;
    return p->set_up;
}

/* A search_path that names a schema not made yet (a ledger's own,
 * options=-csearch_path=ledger_x in the URL): made, by whichever program
 * comes first. */
static enum sql_rc ensure_schema(struct pg *p)
{
    PGresult *r =
        PQexec(p->conn, "SELECT current_schema() IS NULL, current_setting('search_path')");
    enum sql_rc rc = pg_rc_of(p, r);
    char sql[128] = "";
    if (rc == SQL_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't') {
        const char *name = PQgetvalue(r, 0, 1);
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (n == 0 || name[n] != '\0' || n > 63) {
            pg_set_msg(p, "search_path names no schema there is, nor one to make");
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

void pg_disconnect(void *h)
{
    struct pg *p = h;
    if (!p)
        return;
    PQfinish(p->conn);
    free(p);
}

/* A connection to url, with defaults the URL's own settings override (its
 * keywords come after them: libpq keeps the last value of each): a host
 * that does not answer is given up after connect_timeout seconds (each of
 * several hosts, and at a reset), and a peer gone silent (a host down, a
 * cable pulled, a failover) is noticed by TCP's keepalives and its
 * user timeout within about 20 s rather than the kernel's 2 hours or 15
 * minutes.  A Unix socket ignores the TCP ones. */
static PGconn *connect_url(const char *url)
{
    static const char *const keys[] = {
        "connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "dbname",          NULL};
    const char *const vals[] = {"5", "1", "10", "5", "3", "20000", url, NULL};
    return PQconnectdbParams(keys, vals, 1);
}

acc_err pg_connect(const struct acc_sql_options *opt, void **h, struct acc_error *why)
{
    struct pg *p = calloc(1, sizeof *p);
    if (!p)
        return acc_error_set(why, ACC_ERR_NOMEM, "out of memory");
    p->gen = 1;
    p->durable = opt->durable;
    snprintf(p->label, sizeof p->label, "%s", opt->label ? opt->label : "database");
    p->conn = connect_url(opt->path);
    if (!p->conn) {
        pg_disconnect(p);
        return acc_error_set(why, ACC_ERR_NOMEM, "out of memory");
    }
    /* The server down, starting, full (too_many_connections) or not
     * answering: a retry may succeed, so 503 with Retry-After (a reader
     * made while the server restarts), never a 500. */
    enum sql_rc rc = SQL_AWAY;
    char msg[sizeof p->msg + 16];
    if (PQstatus(p->conn) != CONNECTION_OK)
        pg_set_msg(p, PQerrorMessage(p->conn));
    else if ((rc = session_setup(p, opt->durable)) == SQL_OK) {
        p->set_up = true;
        rc = ensure_schema(p);
    }
    if (rc != SQL_OK) {
        acc_err code = rc == SQL_AWAY    ? ACC_ERR_STORAGE_AWAY
                       : rc == SQL_NOMEM ? ACC_ERR_NOMEM
                                         : ACC_ERR_STORAGE;
        snprintf(msg, sizeof msg, "%s%s",
                 PQstatus(p->conn) != CONNECTION_OK ? "cannot connect: " : "", p->msg);
        /* libpq quotes back a URL it cannot parse, password and all */
        acc_db_scrub(msg, sizeof msg, opt->path);
        acc_error_set(why, code, "%s", msg);
        if (rc == SQL_AWAY && why)
            why->retry_after = SQL_RETRY_AFTER;
        pg_disconnect(p);
        return code;
    }
    *h = p;
    return ACC_OK;
}

const char *pg_errmsg(void *h)
{
    struct pg *p = h;
    return p ? p->msg : "cannot connect";
}

enum sql_rc pg_exec(void *h, const char *sql, const char **msg)
{
    struct pg *p = h;
    enum sql_rc rc = pg_run(p, sql);
    if (rc != SQL_OK && msg)
        *msg = p->msg;
    return rc;
}

int64_t pg_changes(void *h)
{
    return ((struct pg *)h)->changes;
}

unsigned pg_deadlocks(void *h)
{
    return ((struct pg *)h)->deadlocks;
}

/* ------------------------------------------------------------- migrations */

#define SCHEMA_TABLE                                                                 \
    "CREATE TABLE IF NOT EXISTS acc_schema_version (name TEXT PRIMARY KEY, version " \
    "BIGINT NOT NULL)"
/* Two programs migrating one database at once: the second waits for the
 * first and then finds the version it left (pg_advisory_lock, this key). */
#define MIGRATION_LOCK   "SELECT pg_advisory_lock(7262810001)"
#define MIGRATION_UNLOCK "SELECT pg_advisory_unlock(7262810001)"

void pg_schema_lock(void *h, bool take)
{
    pg_run(h, take ? MIGRATION_LOCK : MIGRATION_UNLOCK);
}

unsigned pg_schema_version(void *h, struct acc_error *why, acc_err *rc)
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
    if (pg_rc_of(p, r) != SQL_OK)
        *rc = acc_error_set(why, ACC_ERR_STORAGE, "schema version: %s", p->msg);
    else if (PQntuples(r) == 1)
        v = (unsigned)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

enum sql_rc pg_set_schema_version(void *h, unsigned v)
{
    struct pg *p = h;
    char num[16];
    snprintf(num, sizeof num, "%u", v);
    const char *vals[2] = {p->label, num};
    PGresult *r = PQexecParams(p->conn,
                               "INSERT INTO acc_schema_version (name, version) VALUES ($1, $2) "
                               "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
                               2, NULL, vals, NULL, NULL, 0);
    enum sql_rc rc = pg_rc_of(p, r);
    PQclear(r);
    return rc;
}
