/* SPDX-License-Identifier: Apache-2.0 */
/* sql_internal.h - what the files of lib/sql share and nothing outside
 * sees: the backend's table of operations and the structs behind the opaque
 * handles of sql.h.
 *
 *   sql.c          databases, connections, the readers' pool, transactions,
 *                  migrations
 *   sql_driver.c   which backend a location names, and what it can do
 *   sql_dump.c     a server's dump and restore (pg_dump, pg_restore)
 *   dbname.c       a location as messages show it (dbname.h)
 *   sql_stmt.c     statements: the per-connection cache, binding, stepping,
 *                  columns
 *   sql_sqlite.c   the SQLite backend
 *   sql_pg.c       the PostgreSQL backend (libpq): connections
 *   sql_pg_stmt.c  ... its statements, and its table
 *   sql_writer.c   the group-commit writer (sql_writer.h)
 *   sql_lock.c     one writer per database file (the lock beside it)
 *
 * A backend is one const table, as SQLite's VFS is: a new backend fills the
 * same table (a PostgreSQL one over libpq: `?` numbered into `$n` at
 * prepare, the schema version in a table of its own, no WAL hooks).  The
 * handles it returns (void *) are its own; the layer never looks inside. */
#ifndef ACC_SQL_INTERNAL_H
#define ACC_SQL_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>

#include "sql.h"

/* What a bind or a step answered, in the layer's words. */
enum sql_rc {
    SQL_OK,
    SQL_ROW,
    SQL_DONE,
    SQL_NOMEM,
    SQL_DUPLICATE, /* a unique or primary key would hold one value twice */
    SQL_AWAY,      /* the server cannot be reached now (a retry may succeed) */
    SQL_ERROR,
};

struct sql_backend {
    /* Its name, schemes and capabilities (sql.h).  ACC_SQL_CAP_ONE_WRITER:
     * acc_sql_open locks the file (sql_lock.c) unless it is in memory. */
    struct acc_sql_driver driver;
    /* A connection with the project's settings (busy time-out, durability,
     * foreign keys, the log's size limit); *why says what failed. */
    acc_err (*connect)(const struct acc_sql_options *opt, void **h, struct acc_error *why);
    void (*disconnect)(void *h);
    /* The library's message for the last failure on h. */
    const char *(*errmsg)(void *h);
    /* Statements that return nothing; *msg (static or h's) on failure. */
    enum sql_rc (*exec)(void *h, const char *sql, const char **msg);
    int64_t (*changes)(void *h);
    /* Copies the database at path, as it is now, into h (an empty database
     * in memory) without writing or locking the file; no file: nothing. */
    acc_err (*copy_in)(void *h, const char *path, struct acc_error *why);
    /* Copies the database of h, as one snapshot, into the new file dest;
     * with check_sql, *check is that query's one integer in the same
     * snapshot.  h must have no transaction open. */
    acc_err (*backup)(void *h, const char *dest, const char *check_sql, int64_t *check,
                      struct acc_error *why);
    /* The write-ahead log on (main connection, once). */
    acc_err (*wal_setup)(void *h, struct acc_error *why);
    /* Serialises migrations across programs sharing one database (take:
     * before the version is read; then let go); NULL: the file's lock does. */
    void (*schema_lock)(void *h, bool take);
    unsigned (*schema_version)(void *h, struct acc_error *why, acc_err *rc);
    /* Sets the version inside the migration's transaction. */
    enum sql_rc (*set_schema_version)(void *h, unsigned v);
    const char *begin_read, *begin_write; /* the statements that start a transaction */

    enum sql_rc (*prepare)(void *h, const char *sql, bool keep, void **s);
    void (*finalize)(void *s);
    void (*reset)(void *s); /* and unbind */
    enum sql_rc (*bind_text)(void *s, int i, const char *v, size_t n);
    enum sql_rc (*bind_i64)(void *s, int i, int64_t v);
    enum sql_rc (*bind_blob)(void *s, int i, const void *p, size_t n, bool copy);
    enum sql_rc (*bind_null)(void *s, int i);
    enum sql_rc (*step)(void *s);
    bool (*col_null)(void *s, int i);
    int64_t (*col_i64)(void *s, int i);
    const char *(*col_text)(void *s, int i);
    const void *(*col_blob)(void *s, int i, size_t *len);

    /* The write-ahead log, for a writer that bounds it (sql_writer.c); NULL
     * where the database keeps its log itself.  wal_bound_start makes the
     * writer's connection count the log instead of checkpointing at its
     * commits; after_batch runs on it between two batches; checkpoint
     * copies the log into the database from a connection of its own,
     * passively. */
    void (*wal_bound_start)(void *h);
    void (*after_batch)(void *h, int64_t wal_limit, bool (*stopping)(void *arg), void *arg);
    void (*checkpoint)(void *h);

    /* How many of h's transactions have been chosen so far to end a
     * deadlock (or failed to serialise): such a transaction, rolled back
     * whole, lets the other side finish, and may then pass when run again
     * (sql_writer.c).  NULL where one writer has the database to itself. */
    unsigned (*deadlocks)(void *h);
};

extern const struct sql_backend sql_sqlite;
extern const struct sql_backend sql_pg; /* sql_pg.c: postgresql:// and postgres:// */

/* The backend of a location (sql_driver.c): a path is SQLite's, a URL the
 * backend's whose scheme it has; NULL for another scheme. */
const struct sql_backend *sql_backend_of(const char *path);
/* A database that is a file ("" and ":memory:" are SQLite's temporary and
 * in-memory ones, which nobody else can open; a URL is a server's). */
bool sql_is_file(const char *path);

/* ------------------------------------------- the PostgreSQL backend's own */

struct pg_conn;   /* libpq's PGconn */
struct pg_result; /* and PGresult */

/* A connection (sql_pg.c), its statements (sql_pg_stmt.c). */
struct pg {
    struct pg_conn *conn; /* libpq's PGconn */
    char label[64];       /* the database's label: its row of acc_schema_version */
    char msg[512];        /* the last failure */
    int64_t changes;      /* rows the last statement touched */
    unsigned gen;         /* bumped by each reset: statements prepare again */
    unsigned next_id;     /* statement names */
    bool durable;         /* synchronous_commit, set again after a reset */
    bool in_tx;           /* a BEGIN ran, and no COMMIT or ROLLBACK yet */
    bool lost;            /* the connection was lost inside that transaction */
    bool conflict;        /* the last failure: a lock or serialization conflict */
    unsigned deadlocks;   /* deadlocks and serialization failures so far */
    bool set_up;          /* the session's settings made on this connection */
};

/* The message of the last failure, kept on p. */
void pg_set_msg(struct pg *p, const char *m);
/* What a result says, in the layer's words (its message kept on p). */
enum sql_rc pg_rc_of(struct pg *p, const struct pg_result *r);
/* A connection that was lost made again (false: it cannot be now). */
bool pg_alive(struct pg *p);
/* After a failure rc: a transaction whose connection was lost is over. */
void pg_lost_check(struct pg *p, enum sql_rc rc);
acc_err pg_connect(const struct acc_sql_options *opt, void **h, struct acc_error *why);
void pg_disconnect(void *h);
const char *pg_errmsg(void *h);
enum sql_rc pg_exec(void *h, const char *sql, const char **msg);
int64_t pg_changes(void *h);
unsigned pg_deadlocks(void *h);
void pg_schema_lock(void *h, bool take);
unsigned pg_schema_version(void *h, struct acc_error *why, acc_err *rc);
enum sql_rc pg_set_schema_version(void *h, unsigned v);

struct acc_sql_stmt {
    struct acc_sql_conn *c;
    void *h;
    int next;       /* the parameter the next bind fills */
    enum sql_rc rc; /* the first bind that failed */
    bool used;      /* bound or stepped since it was last done */
};

struct acc_sql_conn {
    struct acc_sql *db;
    void *h;
    struct acc_sql_stmt **cache; /* n_slots */
    struct acc_sql_conn *next;   /* the pool's free list */
};

struct acc_sql {
    const struct sql_backend *be;
    struct acc_sql_options opt; /* path and label are copies (path without a password) */
    char *url;                  /* what the backend connects to: the path as given */
    unsigned version;
    int lock_fd; /* sql_lock.c's lock file, held while open; -1: none */
    int file_fd; /* sql_lock.c's descriptor of the database file itself; -1: none */
    dev_t file_dev;
    ino_t file_ino;
    pid_t file_pid;            /* the process that took it (a child of fork has none of it) */
    struct acc_sql *held_next; /* the process's other databases whose file_fd is held */

    pthread_mutex_t main_lock;
    struct acc_sql_conn *main;

    pthread_mutex_t rlock;
    pthread_cond_t rfree;
    struct acc_sql_conn *free_readers;
    unsigned readers;
};

/* "label path: what: msg" into err, as ACC_ERR_STORAGE (NOMEM: ACC_ERR_NOMEM). */
acc_err sql_fail(const struct acc_sql *db, enum sql_rc rc, const char *what, const char *msg,
                 struct acc_error *err);
/* The same with the connection's own last message. */
acc_err sql_conn_fail(struct acc_sql_conn *c, enum sql_rc rc, const char *what,
                      struct acc_error *err);
void sql_stmt_free(struct acc_sql_stmt *s);

/* Takes the exclusive lock on the lock file of db's path (PATH.lock) into
 * db->lock_fd and the one on the database file itself (every name of it)
 * into db->file_fd, or fails (ACC_ERR_STORAGE) naming the database, the
 * pid that holds it and the lock file or the name it has it under.
 * sql_lock_drop lets go of both (-1: nothing). */
acc_err sql_lock_take(struct acc_sql *db, struct acc_error *err);
void sql_lock_drop(struct acc_sql *db);

#endif
