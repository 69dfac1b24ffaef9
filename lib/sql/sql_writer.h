/* SPDX-License-Identifier: Apache-2.0 */
/* sql_writer.h - the group-commit writer of a database (sql.h): one thread
 * that runs the writes queued by every other thread in one transaction,
 * so that a durable commit (an fsync) is shared instead of paid per write.
 *
 * Each write runs in a savepoint of its own and succeeds or fails on its
 * own; when the commit itself fails, every write of the batch fails with
 * it and nothing of them is stored.  A batch the database server ends to
 * break a deadlock runs again whole, a few times before its writes fail.
 * Writes commit in the order they were queued.  A write is either awaited
 * at once (acc_sql_write: its argument is borrowed) or queued with its
 * argument handed over (acc_sql_write_queue), and then waited for later
 * with its ticket, or never (a failure is then logged).  Queuing never
 * touches the disk, so a caller may queue while it holds a lock of its
 * own: the order of its writes is the order in which it made its changes.
 *
 * A batch runs on the writer's thread, or on the thread of acc_sql_write_wait
 * when it finds writes queued and no batch running: it commits them itself
 * rather than wait for the writer to wake (the hand-over costs more than a
 * short batch).
 * Whoever runs a batch holds the database's main connection
 * (acc_sql_main_lock) meanwhile.  With bound_wal it also bounds the write-ahead log
 * between batches and keeps a checkpointer thread (sql.h's backend; the
 * store's bound is described in db/store.h).
 */
#ifndef ACC_SQL_WRITER_H
#define ACC_SQL_WRITER_H

#include <stdbool.h>

#include "sql.h"

struct acc_sql_writer;
struct acc_sql_ticket; /* a queued write someone will wait for */

/* A kind of write: run does it on the writer's connection, inside the
 * batch's transaction; release frees an argument handed over with
 * acc_sql_write_queue (after run, on the writer's thread).  run may be
 * called again for the same write, after a run that failed or succeeded,
 * when its batch was rolled back to end a deadlock with another program
 * (PostgreSQL): it must touch nothing but the database and arg, read of
 * arg only what it did not write, and set anew (never append to) what it
 * writes there. */
struct acc_sql_job {
    acc_err (*run)(struct acc_sql_conn *c, void *arg, struct acc_error *err);
    void (*release)(void *arg);
};

struct acc_sql_writer_options {
    /* How long writes nobody waits for may wait for company (microseconds;
     * 0: committed as soon as the writer sees them). */
    unsigned linger_us;
    /* Bound the write-ahead log to the database's wal_limit and checkpoint
     * it from a thread of its own, every checkpoint_ms. */
    bool bound_wal;
    unsigned checkpoint_ms;
};

acc_err acc_sql_writer_start(struct acc_sql *db, const struct acc_sql_writer_options *opt,
                             struct acc_sql_writer **out, struct acc_error *err);
/* Commits what is queued, stops the threads and frees the writer (before
 * acc_sql_close).  NULL does nothing. */
void acc_sql_writer_stop(struct acc_sql_writer *w);

/* Runs job->run(arg) in the next batch and returns its result once that is
 * committed.  arg is borrowed. */
acc_err acc_sql_write(struct acc_sql_writer *w, const struct acc_sql_job *job, void *arg,
                      struct acc_error *err);

/* Queues job->run(arg) and returns at once; arg is handed over (job->release
 * frees it, also when queuing fails).  With ticket, *ticket must be given to
 * acc_sql_write_wait or acc_sql_write_forget; without, nobody waits. */
acc_err acc_sql_write_queue(struct acc_sql_writer *w, const struct acc_sql_job *job, void *arg,
                            struct acc_sql_ticket **ticket, struct acc_error *err);
/* Waits until the ticket's write (and every write queued before it) is
 * committed, and frees the ticket; the write's result. */
acc_err acc_sql_write_wait(struct acc_sql_writer *w, struct acc_sql_ticket *t,
                           struct acc_error *err);
/* Whether the last write the database itself failed (away, a full disk,
 * a file that cannot be written: not a job's own refusal) has had no write
 * go through since: then *for_us (may be NULL) how long, in microseconds,
 * and msg (may be NULL) why. */
bool acc_sql_writer_failing(struct acc_sql_writer *w, int64_t *for_us, char *msg, size_t len);
/* Gives up a ticket nobody will wait for (its failure is then logged).
 * NULL does nothing. */
void acc_sql_write_forget(struct acc_sql_writer *w, struct acc_sql_ticket *t);

#endif
