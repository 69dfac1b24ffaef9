/* store_internal.h - what the files of db/ share and nothing outside sees:
 * connections and their prepared statements, the one write primitive, the
 * readers' pool, and binding and reading helpers.
 *
 *   store.c            connections, the group-commit writer, checkpoints and
 *                      the WAL bound, readers, migrations, open and close
 *   store_sql.c        statements: preparing, binding (every result
 *                      checked), stepping, reading columns
 *   store_agreement.c  agreements and their allocation: writes
 *   store_agreement_read.c  ... and reads (one, lists, ids, counts)
 *   store_journal.c    the reservation journal and the negotiation trace
 *   store_run.c        launches (runs)
 *
 * Internal names start with store_; sqlite3 types never leave db/. */
#ifndef ACC_STORE_INTERNAL_H
#define ACC_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* Every prepared statement has a slot in each connection's cache; its text
 * lives beside the code that runs it (struct stmt_def). */
enum stmt_id {
    S_AGR_INSERT,
    S_AGR_BY_IDEM,
    S_AGR_FREE_IDEM,
    S_AGR_GET,
    S_AGR_GET_OFFER,
    S_AGR_STATE,
    S_AGR_SETTLE,
    S_AGR_SET_STATE,
    S_AGR_SET_STATE_REASON,
    S_AGR_COMPLETE_ENDED,
    S_AGR_COUNTS,
    S_COMP_DELETE,
    S_COMP_INSERT,
    S_COMP_GET,
    S_LINK_DELETE,
    S_LINK_INSERT,
    S_LINK_GET,
    S_TRACE_MAXSEQ,
    S_TRACE_INSERT,
    S_TRACE_GET,
    S_JOURNAL_PUT,
    S_JOURNAL_BY_AGR,
    S_JOURNAL_OPEN,
    S_RUN_INSERT,
    S_RUN_GET,
    S_RUN_UPDATE,
    S_RUN_OPEN,
    S_PING,
    S_VER_STATE,
    S_VER_FLAG,
    S_VER_SNAPSHOT,
    S_VER_SNAP_COMP,
    S_VER_SNAP_LINK,
    S_VER_BUMP,
    S_VER_GET,
    S_VER_COMP_GET,
    S_VER_LINK_GET,
    S_VER_RECOVER,
    S__COUNT
};

struct stmt_def {
    enum stmt_id id;
    const char *sql;
};

struct conn {
    sqlite3 *db;
    sqlite3_stmt *stmt[S__COUNT];
    struct conn *next; /* free list */
};

/* A write: runs inside the writer's transaction, in a savepoint of its own. */
typedef acc_err (*store_job_fn)(struct conn *c, void *arg, struct acc_error *err);

/* What store_write needs to know of a kind of write.  copy makes the
 * arguments the store's own (for ACC_STORE_NOWAIT: the caller's may be gone
 * before the writer runs); release frees such a copy.  A write without
 * copy can only be awaited. */
struct store_op {
    store_job_fn run;
    void *(*copy)(const void *arg);
    void (*release)(void *arg);
};

struct store_job;

struct acc_store {
    char *path;
    bool durable;
    int64_t wal_limit; /* bytes */

    /* writer */
    struct conn *writer;
    pthread_t writer_thread;
    bool writer_started;
    pthread_mutex_t wlock;
    pthread_cond_t wwork; /* jobs queued or stopping */
    pthread_cond_t wdone; /* a batch finished */
    struct store_job *head, *tail;
    unsigned awaited; /* jobs in the queue that someone waits for */
    bool stopping;
    int wal_frames;      /* frames in the log after the last commit (writer thread only) */
    int64_t frame_bytes; /* page size + frame header */
    bool wal_warned;

    /* passive checkpoints, off the writer's path */
    pthread_t checkpointer;
    bool checkpointer_started;
    pthread_cond_t ckwake;

    /* readers */
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
    struct conn *free_readers;
    unsigned readers, max_readers;
};

/* The one write primitive: runs op->run(arg) in the writer's next group
 * commit.  Without ACC_STORE_NOWAIT it waits for the commit and returns the
 * write's own result; with it, it queues a copy of arg and returns at once
 * (a failure is logged).  Writes commit in the order they were queued. */
acc_err store_write(struct acc_store *st, const struct store_op *op, void *arg, unsigned flags,
                    struct acc_error *err);

/* A connection of the readers' pool, and one in a read transaction (every
 * statement sees one snapshot). */
acc_err store_reader_take(struct acc_store *st, struct conn **out, struct acc_error *err);
void store_reader_give(struct acc_store *st, struct conn *c);
acc_err store_read_begin(struct acc_store *st, struct conn **c, struct acc_error *err);
void store_read_end(struct acc_store *st, struct conn *c);

/* ------------------------------------------------------------- statements */

acc_err store_db_error(sqlite3 *db, struct acc_error *err, const char *what);
acc_err store_exec(struct conn *c, const char *sql, struct acc_error *err);
/* The connection's prepared statement (prepared on first use); NULL with
 * *err set when it cannot be prepared. */
sqlite3_stmt *store_stmt(struct conn *c, const struct stmt_def *d, struct acc_error *err);
/* Resets a statement and clears its bindings (NULL is fine). */
void store_done(sqlite3_stmt *s);

/* Binding parameters 1, 2, 3... in order.  The first failure sticks (and
 * later binds do nothing); store_bound or store_bind_step turn it into
 * ACC_ERR_STORAGE, so a value the database cannot take is an error, never a
 * NULL.  Text and blobs are bound without a copy: they must live until the
 * statement is stepped. */
struct store_bind {
    sqlite3_stmt *s;
    int next;
    int rc;
};

#define STORE_BIND(stmt) ((struct store_bind){(stmt), 1, SQLITE_OK})

void store_bind_text(struct store_bind *b, const char *v); /* NULL binds NULL */
void store_bind_i64(struct store_bind *b, int64_t v);
void store_bind_time(struct store_bind *b, acc_time t); /* 0 binds NULL ("none") */
void store_bind_blob(struct store_bind *b, const void *p, size_t n, bool copy);
void store_bind_null(struct store_bind *b);
/* Binds to a named parameter (:name) if the statement has it. */
void store_bind_named_text(struct store_bind *b, const char *name, const char *v);
void store_bind_named_i64(struct store_bind *b, const char *name, int64_t v);
/* ACC_OK when every bind succeeded; else resets the statement and says
 * which value could not be bound. */
acc_err store_bound(struct conn *c, struct store_bind *b, const char *what, struct acc_error *err);
/* store_bound, then runs a statement that returns no rows, and resets it. */
acc_err store_bind_step(struct conn *c, struct store_bind *b, const char *what,
                        struct acc_error *err);

char *store_col_dup(sqlite3_stmt *s, int i);
/* Whether column i holds a value that did not come through (v is what was
 * read of it): SQLite answers NULL for a text it could not copy for lack of
 * memory, and store_col_dup NULL when strdup fails.  A read must then fail
 * rather than return a hole. */
bool store_col_lost(sqlite3_stmt *s, int i, const void *v);
void store_col_copy(sqlite3_stmt *s, int i, char *dst, size_t size);
/* A blob column as a malloc'd NUL-terminated copy; *len its length.  NULL
 * column: *out NULL.  ACC_ERR_NOMEM when out of memory. */
acc_err store_col_blob(sqlite3_stmt *s, int i, char **out, size_t *len);
/* Reads a blob of NUL-terminated strings (the arguments of a component). */
acc_err store_args_decode(sqlite3_stmt *s, int i, char ***out, size_t *n);

/* ------------------------------------------------- shared by the writes */

/* The current state of an agreement inside the writer's transaction. */
acc_err store_current_state(struct conn *c, const char *id, enum acc_state *out,
                            struct acc_error *err);
/* Moves an agreement to `to` if its state is in `from` (*was: the state
 * found); reason NULL keeps the stored one. */
acc_err store_transition(struct conn *c, const char *id, unsigned from, enum acc_state to,
                         const char *reason, enum acc_state *was, struct acc_error *err);
/* store_agreement.c: acc_store_agreement_settle inside a write transaction. */
acc_err store_agreement_settle_in(struct conn *c, const struct acc_agreement *a, unsigned from,
                                  const struct acc_trace *trace, const struct acc_booking *bookings,
                                  size_t n_bookings, struct acc_error *err);
acc_err store_journal_put_one(struct conn *c, const struct acc_booking *b, acc_time now,
                              struct acc_error *err);
/* The events are the given version's (0: the agreement's current one). */
acc_err store_trace_put(struct conn *c, const char *id, const struct acc_trace *t, unsigned version,
                        struct acc_error *err);
/* Replace the allocation rows of a->id with a's. */
acc_err store_write_components(struct conn *c, const struct acc_agreement *a,
                               struct acc_error *err);
acc_err store_write_links(struct conn *c, const struct acc_agreement *a, struct acc_error *err);
/* The run of a settled agreement: its style and launch descriptions. */
acc_err store_run_insert(struct conn *c, const char *id, const struct acc_run *r,
                         struct acc_error *err);

#endif
