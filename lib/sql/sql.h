/* SPDX-License-Identifier: Apache-2.0 */
/* sql.h - the one SQL layer: every database Accord keeps (accordd's store,
 * the booking ledger of the simulated sites, the tc adapter's state,
 * accord-site's journal) is opened, migrated, queried and written through
 * it.
 *
 * The interface names no database library: a backend (sql_internal.h, a
 * table of operations in the manner of SQLite's VFS) does the work: SQLite
 * for a path (sql_sqlite.c: WAL, the project's pragmas), PostgreSQL for a
 * postgresql:// URL (sql_pg.c, libpq).  What differs
 * between dialects stays out of the callers' way where it can: parameters
 * are positional `?` (a backend that numbers them rewrites the text),
 * transactions are asked for by what they do (acc_sql_begin's write flag),
 * and the schema version is the backend's to keep.
 *
 *   database    acc_sql_open: a path (or ":memory:"), the project's
 *               settings, numbered migrations from embedded .sql files
 *               applied at once; one main connection, and a pool of reader
 *               connections (acc_sql_reader_take)
 *   statements  prepared once per connection and cached in a slot
 *               (struct acc_sql_query), or once (acc_sql_prepare_once);
 *               bound in order with the first failure kept, stepped, read
 *   errors      the library's codes become acc_err here: ACC_ERR_NOMEM for
 *               memory, ACC_ERR_KEY_REUSED for a value a unique or primary
 *               key already holds, ACC_ERR_STORAGE_AWAY (a 503 with
 *               Retry-After) for a database server that cannot be reached
 *               now, ACC_ERR_STORAGE for everything else, with
 *               a message that names the database ("calendar /var/lib/x:
 *               write: disk I/O error")
 *   writer      sql_writer.h: one thread, group commit
 *   one writer  a database file is opened by one acc_sql_open at a time
 *               (a lock file beside it, sql_lock.c)
 *
 * A connection is used by one thread at a time: the main connection under
 * acc_sql_main_lock (or by the writer), a reader by whoever took it.
 */
#ifndef ACC_SQL_H
#define ACC_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/embed.h"
#include "../common/error.h"
#include "../common/timefmt.h"

/* How long a statement waits for a lock another connection holds. */
#define ACC_SQL_BUSY_MS 10000
/* Seconds a client is told to wait (Retry-After) when the database server
 * cannot be reached (ACC_ERR_STORAGE_AWAY: restarting, failing over). */
#define SQL_RETRY_AFTER 2
/* The bound on the write-ahead log when none is given (bytes). */
#define ACC_SQL_WAL_LIMIT_DEFAULT ((int64_t)64 << 20)

struct acc_sql;      /* an open database */
struct acc_sql_conn; /* one connection to it */
struct acc_sql_stmt; /* a prepared statement of a connection */
struct acc_sql_query;

/* ---------------------------------------------------------------- backends
 *
 * Each backend is a driver, as Dovecot's lib-sql drivers are: a name, the
 * URL schemes it takes, and what it can do.  Callers ask for what they
 * need (a directory beside the database, several programs on it, a dump),
 * never which backend it is, and never read the location themselves. */

enum {
    /* A file on this machine (a directory beside it for what goes with it:
     * the signing pair, the jobs' directories, the simulated calendars). */
    ACC_SQL_CAP_FILE = 1u << 0,
    /* One program writes it: acc_sql_open takes a lock beside the file,
     * and a second open is refused. */
    ACC_SQL_CAP_ONE_WRITER = 1u << 1,
    /* The server keeps the locks (advisory locks, row locks): several
     * programs share the database, each instance of accordd among them. */
    ACC_SQL_CAP_SERVER_LOCKS = 1u << 2,
    /* LISTEN/NOTIFY: one connection can wake another's program. */
    ACC_SQL_CAP_NOTIFY = 1u << 3,
    /* acc_sql_backup copies it, while it serves, into a file of the same
     * backend (SQLite's backup API). */
    ACC_SQL_CAP_ONLINE_BACKUP = 1u << 4,
    /* acc_sql_dump writes it, while it serves, in the server's own dump
     * format (pg_dump -Fc), and acc_sql_restore loads such a dump into an
     * empty database. */
    ACC_SQL_CAP_DUMP = 1u << 5,
};

struct acc_sql_driver {
    const char *name;           /* "sqlite", "postgresql" */
    const char *const *schemes; /* the URL schemes it takes, NULL-ended (none: a path) */
    unsigned caps;              /* ACC_SQL_CAP_... */
};

/* Whether the location is a URL (scheme://...), of a driver built in or
 * not: anything else is a file's path (or "" and ":memory:"). */
bool acc_sql_is_url(const char *location);
/* The driver that serves a location: a URL's by its scheme, SQLite for a
 * path.  NULL, with a message that names the scheme (never a password),
 * for a URL no driver of this build takes, and for libpq's key=value
 * settings (dbname.h), which are no file either. */
const struct acc_sql_driver *acc_sql_driver_of(const char *location, struct acc_error *err);
/* Whether the location's driver can do every one of caps (false when no
 * driver takes it).  ":memory:" and "" are no file. */
bool acc_sql_location_can(const char *location, unsigned caps);
/* The location of a schema of its own (a plain word: letters, digits, _)
 * inside a server's database (ACC_SQL_CAP_SERVER_LOCKS): the same database,
 * its tables there (PostgreSQL: search_path, made at open).  NULL when out
 * of memory.  free() it. */
char *acc_sql_location_in_schema(const char *location, const char *schema);
/* The same for an open database. */
const struct acc_sql_driver *acc_sql_driver(const struct acc_sql *db);
bool acc_sql_can(const struct acc_sql *db, unsigned caps);
/* For a program that keeps its database in a file only (accord-site, the
 * tc adapter's state): ACC_ERR_CONFIG with a message that says what to
 * give instead when the location is not one (a URL, key=value settings);
 * `what` names what is kept there ("accord-site's journal"). */
acc_err acc_sql_need_file(const char *what, const char *location, struct acc_error *err);

struct acc_sql_options {
    /* the database file, or ":memory:"; or a PostgreSQL URL
     * (postgresql://... or postgres://..., anything libpq's connection
     * strings take, several hosts too); another scheme:// is refused */
    const char *path;
    const char *label; /* what it is, for messages ("calendar /var/lib/x: write: ...") */
    /* the program, for "schema version 7 is newer than this accordd (6)" */
    const char *program;
    bool durable;      /* every commit reaches the disk (SQLite: synchronous=FULL) */
    int64_t wal_limit; /* bytes the write-ahead log is cut back to (0: the default) */
    /* Migration i brings the schema from version i to i + 1 (embedded
     * NNNN_name.sql files, in name order); applied at open. */
    const struct acc_embedded *migrations;
    size_t n_migrations;
    /* PostgreSQL's own text of the migrations where the dialects differ:
     * a file here of the same name as one of migrations replaces it. */
    const struct acc_embedded *pg_migrations;
    size_t n_pg_migrations;
    unsigned n_slots;     /* prepared statements cached per connection (struct acc_sql_query) */
    unsigned max_readers; /* reader connections at most (0: 32) */
    /* The page cache of every connection but the main one (readers, the
     * checkpointer), in KiB (0: 256).  The main connection, the writer's,
     * keeps the backend's default (SQLite: 2 MiB).  With up to max_readers
     * readers this bounds what the database holds in memory however large
     * it grows; the operating system's cache keeps the rest. */
    unsigned cache_kib;
    /* Work on a copy in memory of the file as it is at open: the file is
     * only read, by a connection of its own that SQLite shares with the
     * owner like any other, and its lock is not taken (a file not made yet
     * is an empty database), so the daemon that owns it runs on undisturbed.
     * For a program that only looks (accordd --replay beside a serving
     * accordd).  Writes and migrations change the copy; there is only the
     * main connection (no readers). */
    bool snapshot;
};

/* Opens (creating) the database, applies the migrations it lacks, each in a
 * transaction of its own, and opens the main connection.  A schema newer
 * than the migrations is an error: a database is never used by an older
 * program than the one that last wrote it.
 *
 * A database file has one writer: before anything else the open takes an
 * exclusive lock on PATH.lock beside it (sql_lock.c) and holds it until
 * acc_sql_close.  The lock is per open, not per process: a second open of
 * the same file, in this process or another, fails (ACC_ERR_STORAGE) with
 * the database, the holder's pid and the lock file named.  Readers that
 * take no lock (the sqlite3 shell, a snapshot) are not refused; ":memory:"
 * takes none. */
acc_err acc_sql_open(const struct acc_sql_options *opt, struct acc_sql **out,
                     struct acc_error *err);
/* Closes every connection; statements and readers must be given back.
 * NULL does nothing. */
void acc_sql_close(struct acc_sql *db);

const char *acc_sql_path(const struct acc_sql *db);
/* The schema version now (the number of migrations applied). */
unsigned acc_sql_schema_version(const struct acc_sql *db);

/* lite or pg, whichever dialect c's database speaks (for the few
 * statements whose text differs). */
const struct acc_sql_query *acc_sql_pick(struct acc_sql_conn *c, const struct acc_sql_query *lite,
                                         const struct acc_sql_query *pg);

/* The main connection, for one user at a time: lock, use, unlock.  A
 * writer (sql_writer.h) takes the same lock around each of its batches. */
struct acc_sql_conn *acc_sql_main_lock(struct acc_sql *db);
void acc_sql_main_unlock(struct acc_sql *db);

/* A reader connection of the pool (opened when none is free and fewer than
 * max_readers exist; otherwise it waits for one).  acc_sql_read_begin also
 * starts a read transaction, so every statement sees one snapshot. */
acc_err acc_sql_reader_take(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err);
void acc_sql_reader_give(struct acc_sql *db, struct acc_sql_conn *c);
acc_err acc_sql_read_begin(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err);
void acc_sql_read_end(struct acc_sql *db, struct acc_sql_conn *c);

/* A connection of one's own (a checkpointer), outside the pool. */
acc_err acc_sql_connect(struct acc_sql *db, struct acc_sql_conn **out, struct acc_error *err);
void acc_sql_disconnect(struct acc_sql_conn *c);

/* ---------------------------------------------------------------- backups */

/* A whole copy of the database as it is now, into the new file dest (an
 * error when dest exists), made from a connection of its own while the
 * database serves on: one snapshot, copied in steps (SQLite: the backup
 * API inside a read transaction), written to DEST.part and renamed when
 * whole, so that dest is complete or absent.  With check_sql (a query of
 * one integer, such as a count), *check is its answer in the snapshot that
 * was copied.  ACC_ERR_UNSUPPORTED for a database in memory or a snapshot.
 *
 * acc_sql_open makes such a copy, PATH.pre-vN, before it applies the
 * migrations to a database that has a schema (N: the version migrated to;
 * PATH.pre-vN.2 and on when that name is taken).  */
acc_err acc_sql_backup(struct acc_sql *db, const char *dest, const char *check_sql, int64_t *check,
                       struct acc_error *err);
/* The same for a database file that another opened (an adapter's
 * calendar): read as any reader would, without its lock.  ACC_ERR_NOT_FOUND
 * when src is not there.  label names it in messages. */
acc_err acc_sql_copy_file(const char *label, const char *src, const char *dest,
                          struct acc_error *err);

/* A dump of a server's database as it is now (ACC_SQL_CAP_DUMP: pg_dump's
 * custom format, pg_dump -Fc) into the new file dest (an error when it
 * exists), while it serves on: one snapshot, exported by a connection of
 * its own that holds it while pg_dump reads (--snapshot), so that with
 * check_sql *check is that query's integer in what was dumped.  pg_dump
 * gets the connection through its environment (PGHOST, PGPASSWORD ...)
 * and a key=value string without secrets: a password is never on a
 * command line.  Written to DEST.part, renamed when whole.
 * ACC_ERR_UNSUPPORTED for a backend that has no dumps. */
acc_err acc_sql_dump(struct acc_sql *db, const char *dest, const char *check_sql, int64_t *check,
                     struct acc_error *err);
/* Loads a dump of acc_sql_dump into the database at location (pg_restore:
 * one transaction, stopped at the first error, the objects owned by the
 * user restoring), which must be empty: ACC_ERR_STATE, naming what it
 * holds, when it has a table, a view or a sequence. */
acc_err acc_sql_restore(const char *location, const char *dump, struct acc_error *err);

/* ----------------------------------------------------------- transactions */

enum { ACC_SQL_WRITE = 1u << 0 };

/* BEGIN: with ACC_SQL_WRITE the write lock is taken at once (SQLite's
 * IMMEDIATE), so a transaction that will write never fails half-way for
 * a lock another writer holds. */
acc_err acc_sql_begin(struct acc_sql_conn *c, unsigned flags, struct acc_error *err);
acc_err acc_sql_commit(struct acc_sql_conn *c, struct acc_error *err);
/* Rolls back; never fails (what could fail leaves nothing to undo). */
void acc_sql_rollback(struct acc_sql_conn *c);
/* Savepoints inside a transaction, named by a plain word. */
acc_err acc_sql_savepoint(struct acc_sql_conn *c, const char *name, struct acc_error *err);
acc_err acc_sql_release(struct acc_sql_conn *c, const char *name, struct acc_error *err);
void acc_sql_rollback_to(struct acc_sql_conn *c, const char *name);

/* Runs statements that return nothing (schema, pragmas). */
acc_err acc_sql_exec(struct acc_sql_conn *c, const char *sql, struct acc_error *err);
/* Rows the last statement of c inserted, changed or deleted. */
int64_t acc_sql_changes(struct acc_sql_conn *c);

/* ------------------------------------------------------------- statements */

/* A statement kept prepared in slot `slot` (< n_slots) of every connection
 * that runs it; its text lives beside the code that runs it. */
struct acc_sql_query {
    unsigned slot;
    const char *sql;
};

/* The connection's statement for q, prepared on first use, ready to bind
 * (reset, nothing bound); NULL with *err set when it cannot be prepared.
 * Give it back with acc_sql_done. */
struct acc_sql_stmt *acc_sql_prepare(struct acc_sql_conn *c, const struct acc_sql_query *q,
                                     struct acc_error *err);
/* The code of a failed acc_sql_prepare (NULL): the one it set in err
 * (ACC_ERR_STORAGE_AWAY when the server went away while preparing, so a
 * 503, not a 500); ACC_ERR_STORAGE when err is NULL or holds none. */
static inline acc_err acc_sql_failed(const struct acc_error *err)
{
    return err && err->code != ACC_OK ? err->code : ACC_ERR_STORAGE;
}
/* A statement for this once (a query built for the request); free it with
 * acc_sql_finalize. */
acc_err acc_sql_prepare_once(struct acc_sql_conn *c, const char *sql, struct acc_sql_stmt **out,
                             struct acc_error *err);
void acc_sql_finalize(struct acc_sql_stmt *s);
/* Resets a statement and unbinds its parameters (NULL is fine). */
void acc_sql_done(struct acc_sql_stmt *s);

/* Binding parameters 1, 2, 3... in order.  The first failure sticks (later
 * binds do nothing) and acc_sql_bound reports it, so a value the database
 * cannot take is an error, never a NULL.  Text and blobs are not copied
 * (unless copy): they must live until the statement is stepped. */
void acc_sql_bind_text(struct acc_sql_stmt *s, const char *v); /* NULL binds NULL */
void acc_sql_bind_i64(struct acc_sql_stmt *s, int64_t v);
void acc_sql_bind_time(struct acc_sql_stmt *s, acc_time t); /* 0 binds NULL ("none") */
void acc_sql_bind_blob(struct acc_sql_stmt *s, const void *p, size_t n, bool copy);
void acc_sql_bind_null(struct acc_sql_stmt *s);
/* ACC_OK when every bind succeeded; otherwise resets the statement and says
 * which value could not be bound. */
acc_err acc_sql_bound(struct acc_sql_stmt *s, const char *what, struct acc_error *err);

/* The next row: ACC_OK with *row true (read its columns), or with *row
 * false when there is none left; a failure names `what`. */
acc_err acc_sql_step(struct acc_sql_stmt *s, bool *row, const char *what, struct acc_error *err);
/* acc_sql_bound, then steps a statement that returns no rows (or whose rows
 * do not matter), then acc_sql_done. */
acc_err acc_sql_run(struct acc_sql_stmt *s, const char *what, struct acc_error *err);

/* --------------------------------------------------------------- columns */

bool acc_sql_col_null(struct acc_sql_stmt *s, int i);
int64_t acc_sql_col_i64(struct acc_sql_stmt *s, int i);
int acc_sql_col_int(struct acc_sql_stmt *s, int i);
/* The text of column i, valid until the next step or reset; NULL for NULL,
 * and also when the library could not copy it (see acc_sql_col_lost). */
const char *acc_sql_col_text(struct acc_sql_stmt *s, int i);
/* A malloc'd copy of the text (NULL for NULL or out of memory). */
char *acc_sql_col_dup(struct acc_sql_stmt *s, int i);
/* Whether column i holds a value that did not come through (v is what was
 * read of it): a text the library could not copy for lack of memory, or a
 * copy that failed.  A read must then fail rather than return a hole. */
bool acc_sql_col_lost(struct acc_sql_stmt *s, int i, const void *v);
/* Copies the text into dst (truncated; "" for NULL). */
void acc_sql_col_copy(struct acc_sql_stmt *s, int i, char *dst, size_t size);
/* The bytes of a blob column, valid until the next step or reset; *len its
 * length (NULL and 0 for NULL). */
const void *acc_sql_col_blob_ref(struct acc_sql_stmt *s, int i, size_t *len);
/* A blob column as a malloc'd NUL-terminated copy; *len its length.  NULL
 * column: *out NULL.  ACC_ERR_NOMEM when out of memory. */
acc_err acc_sql_col_blob(struct acc_sql_stmt *s, int i, char **out, size_t *len);

#endif
