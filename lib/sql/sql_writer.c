/* SPDX-License-Identifier: Apache-2.0 */
/* sql_writer.c - the group-commit writer (sql_writer.h). */
#include "sql_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../common/log.h"
#include "../common/strutil.h"
#include "../common/timefmt.h"
#include "../common/sync.h"
#include "sql_internal.h"

#define CHECKPOINT_MS_DEFAULT 500

struct acc_sql_ticket {
    struct acc_sql_ticket *next;
    const struct acc_sql_job *job;
    void *arg;
    bool owned;  /* arg was handed over: released after the batch */
    bool orphan; /* nobody waits: the writer frees it */
    bool done;
    acc_err rc;
    struct acc_error err;
};

struct acc_sql_writer {
    struct acc_sql *db;
    struct acc_sql_writer_options opt;

    pthread_mutex_t lock;
    pthread_cond_t work;   /* writes queued, a waiter came, or stopping */
    pthread_cond_t done;   /* a batch finished */
    pthread_cond_t ckwake; /* the checkpointer: stopping */
    struct acc_sql_ticket *head, *tail;
    unsigned awaited; /* writes in the queue that someone waits for */
    bool committing;  /* a batch runs (on the writer's thread or a waiter's) */
    bool stopping;
    /* The last write's outcome for the database itself (not a job's own
     * refusal): failing since then, with why (acc_sql_writer_failing). */
    int64_t failing_since; /* acc_mono_us(); 0: the last write went through */
    char failing_msg[256];

    pthread_t thread, checkpointer;
    bool started, checkpointer_started;
};

static void ticket_free(struct acc_sql_ticket *t)
{
    if (!t)
        return;
    if (t->owned && t->job->release)
        t->job->release(t->arg);
    free(t);
}

/* Tries of a batch the server ends to break deadlocks: at the last one its
 * writes fail with the deadlock (503, retryable). */
#define DEADLOCK_TRIES 4

static unsigned deadlocks(struct acc_sql_conn *c)
{
    const struct sql_backend *be = c->db->be;
    return be->deadlocks ? be->deadlocks(c->h) : 0;
}

/* One attempt at a batch: its transaction committed, or rolled back whole
 * (*again) when a write was chosen to end a deadlock and another attempt
 * may follow; the batch's own failure, else ACC_OK. */
static acc_err try_batch(struct acc_sql_conn *c, struct acc_sql_ticket *batch, bool last,
                         bool *again, struct acc_error *berr)
{
    *again = false;
    acc_err brc = acc_sql_begin(c, ACC_SQL_WRITE, berr);
    if (brc)
        return brc;
    for (struct acc_sql_ticket *t = batch; t; t = t->next) {
        acc_error_clear(&t->err);
        if ((t->rc = acc_sql_savepoint(c, "job", &t->err)))
            continue;
        unsigned seen = deadlocks(c);
        t->rc = t->job->run(c, t->arg, &t->err);
        if (t->rc && !last && deadlocks(c) != seen) {
            /* Another program's transaction waits for a lock an earlier
             * write of this batch holds: rolling back to the savepoint
             * would keep that lock, and the next attempt would meet the
             * same deadlock.  Rolled back whole, the other side finishes,
             * and the batch runs again, in the same order. */
            acc_log_info("%s: %s; the batch of writes runs again", c->db->opt.label, t->err.msg);
            acc_sql_rollback(c);
            *again = true;
            return ACC_OK;
        }
        if (t->rc)
            acc_sql_rollback_to(c, "job");
        acc_sql_release(c, "job", NULL);
    }
    brc = acc_sql_commit(c, berr);
    if (brc)
        acc_sql_rollback(c);
    return brc;
}

/* Before a batch ended by a deadlock runs again: the other side was waiting
 * for a lock the batch held, and is woken when it goes; run again at once,
 * the batch would take the same rows before that program is scheduled and
 * meet the same deadlock (a row whose last writer rolled back is free to
 * the first who asks).  Some milliseconds, more at each try, with jitter so
 * that two instances' batches do not retry in step. */
static void deadlock_pause(unsigned tries)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned long ms = 10UL * tries + (unsigned long)(now.tv_nsec / 1000) % (10UL * tries);
    struct timespec d = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    while (nanosleep(&d, &d) != 0 && errno == EINTR)
        ;
}

/* Runs a batch in one transaction on the main connection.  Several
 * programs share a PostgreSQL database, and two batches may lock the same
 * rows in opposite orders: the one the server ends runs again, every job
 * of it (each sets what it writes in its argument anew: sql_writer.h). */
static void run_batch(struct acc_sql_writer *w, struct acc_sql_ticket *batch)
{
    struct acc_error berr;
    acc_error_clear(&berr);
    struct acc_sql_conn *c = acc_sql_main_lock(w->db);
    acc_err brc = ACC_OK;
    bool again = true;
    for (unsigned n = 1; again; n++) {
        brc = try_batch(c, batch, n == DEADLOCK_TRIES, &again, &berr);
        if (again)
            deadlock_pause(n);
    }
    acc_sql_main_unlock(w->db);
    if (brc) {
        acc_log_error("%s", berr.msg);
        for (struct acc_sql_ticket *t = batch; t; t = t->next) {
            t->rc = brc;
            t->err = berr;
        }
    }
}

/* Whether the database itself failed a write (it is away, its disk is
 * full, its file cannot be written), rather than the job refusing. */
static bool storage_failed(acc_err rc)
{
    return rc == ACC_ERR_STORAGE || rc == ACC_ERR_STORAGE_AWAY;
}

/* Settles a finished batch; the caller holds the lock. */
static void settle(struct acc_sql_writer *w, struct acc_sql_ticket *batch)
{
    const struct acc_sql_ticket *failed = NULL;
    bool wrote = false;
    for (const struct acc_sql_ticket *t = batch; t; t = t->next) {
        if (storage_failed(t->rc))
            failed = failed ? failed : t;
        else if (!t->rc)
            wrote = true;
    }
    if (failed) {
        if (!w->failing_since)
            w->failing_since = acc_mono_us();
        acc_strlcpy(w->failing_msg, failed->err.msg, sizeof w->failing_msg);
    } else if (wrote) {
        w->failing_since = 0;
    }
    for (struct acc_sql_ticket *t = batch, *next; t; t = next) {
        next = t->next;
        if (t->owned && t->job->release)
            t->job->release(t->arg);
        t->owned = false;
        if (t->orphan) {
            if (t->rc)
                acc_log_error("queued write failed: %s", t->err.msg);
            free(t);
        } else {
            t->done = true; /* its waiter frees it from here on */
        }
    }
    pthread_cond_broadcast(&w->done);
}

bool acc_sql_writer_failing(struct acc_sql_writer *w, int64_t *for_us, char *msg, size_t len)
{
    pthread_mutex_lock(&w->lock);
    int64_t since = w->failing_since;
    if (since && msg && len)
        acc_strlcpy(msg, w->failing_msg, len);
    pthread_mutex_unlock(&w->lock);
    if (for_us)
        *for_us = since ? acc_mono_us() - since : 0;
    return since != 0;
}

static bool stopping(void *arg)
{
    struct acc_sql_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    bool v = w->stopping;
    pthread_mutex_unlock(&w->lock);
    return v;
}

/* Runs what is queued as one batch on this thread: the writer's, or that of
 * a waiter who found nobody committing, which saves the hand-over to the
 * writer's thread (its wake-up costs more than a short batch).  The caller
 * holds the lock, and holds it again after. */
static void commit_queued(struct acc_sql_writer *w)
{
    struct acc_sql_ticket *batch = w->head;
    w->head = w->tail = NULL;
    w->awaited = 0;
    w->committing = true;
    pthread_mutex_unlock(&w->lock);
    run_batch(w, batch);
    pthread_mutex_lock(&w->lock);
    settle(w, batch);
    pthread_mutex_unlock(&w->lock);
    const struct sql_backend *be = w->db->be;
    if (w->opt.bound_wal && be->after_batch) {
        acc_sql_main_lock(w->db);
        be->after_batch(w->db->main->h, w->db->opt.wal_limit, stopping, w);
        acc_sql_main_unlock(w->db);
    }
    pthread_mutex_lock(&w->lock);
    w->committing = false;
    /* Waiters whose writes came meanwhile may lead the next batch; else
     * the writer takes it. */
    pthread_cond_broadcast(&w->done);
    if (w->head)
        pthread_cond_signal(&w->work);
}

static void *writer_main(void *arg)
{
    struct acc_sql_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->stopping && (!w->head || w->committing))
            pthread_cond_wait(&w->work, &w->lock);
        while (w->committing) /* stopping: a waiter's batch ends first */
            pthread_cond_wait(&w->done, &w->lock);
        if (!w->head)
            break;
        /* Nobody waits for what is queued: let it linger a moment so that
         * it shares the commit (and the fsync) of the next awaited write. */
        if (w->awaited == 0 && !w->stopping && w->opt.linger_us) {
            struct timespec until = acc_mono_deadline(w->opt.linger_us);
            while (w->awaited == 0 && !w->stopping &&
                   pthread_cond_timedwait(&w->work, &w->lock, &until) != ETIMEDOUT)
                ;
        }
        if (w->committing || !w->head)
            continue; /* a waiter took it meanwhile */
        commit_queued(w);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Copies the log into the database file now and then, from its own
 * connection, so that the writer seldom pays for a checkpoint. */
static void *checkpointer_main(void *arg)
{
    struct acc_sql_writer *w = arg;
    struct acc_sql_conn *c = NULL;
    struct acc_error err;
    if (acc_sql_connect(w->db, &c, &err)) {
        acc_log_error("%s; the checkpointer does not run", err.msg);
        return NULL;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        struct timespec until = acc_mono_deadline((int64_t)w->opt.checkpoint_ms * 1000);
        pthread_cond_timedwait(&w->ckwake, &w->lock, &until);
        if (w->stopping)
            break;
        pthread_mutex_unlock(&w->lock);
        w->db->be->checkpoint(c->h);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    acc_sql_disconnect(c);
    return NULL;
}

/* Appends t; refuses once stopping.  An awaited write wakes the writer at
 * once; of the others only the first does, and the writer lingers. */
static acc_err enqueue(struct acc_sql_writer *w, struct acc_sql_ticket *t, bool awaited,
                       struct acc_error *err)
{
    pthread_mutex_lock(&w->lock);
    if (w->stopping) {
        pthread_mutex_unlock(&w->lock);
        return acc_error_set(err, ACC_ERR_STORAGE, "%s %s: closing", w->db->opt.label,
                             w->db->opt.path);
    }
    if (awaited || !w->head)
        pthread_cond_signal(&w->work);
    if (w->tail)
        w->tail->next = t;
    else
        w->head = t;
    w->tail = t;
    w->awaited += awaited;
    return ACC_OK; /* with the lock held */
}

/* Until t is committed.  A write not done is queued or in the running
 * batch; with lead, this thread commits the queue itself when no batch
 * runs.  The caller holds the lock. */
static void wait_done(struct acc_sql_writer *w, struct acc_sql_ticket *t, bool lead)
{
    while (!t->done) {
        if (lead && !w->committing && w->head)
            commit_queued(w);
        else
            pthread_cond_wait(&w->done, &w->lock);
    }
}

acc_err acc_sql_write(struct acc_sql_writer *w, const struct acc_sql_job *job, void *arg,
                      struct acc_error *err)
{
    struct acc_sql_ticket t = {.job = job, .arg = arg};
    acc_err rc = enqueue(w, &t, true, err);
    if (rc)
        return rc;
    /* Awaited at once, by many threads at a time (accordd's requests): the
     * writer's thread gathers them into batches (measured: leading them
     * here took about 10 % off accordd's agreements per second). */
    wait_done(w, &t, false);
    pthread_mutex_unlock(&w->lock);
    if (t.rc)
        acc_error_copy(err, &t.err);
    return t.rc;
}

acc_err acc_sql_write_queue(struct acc_sql_writer *w, const struct acc_sql_job *job, void *arg,
                            struct acc_sql_ticket **ticket, struct acc_error *err)
{
    struct acc_sql_ticket *t = calloc(1, sizeof *t);
    if (!t) {
        if (job->release)
            job->release(arg);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    *t = (struct acc_sql_ticket){.job = job, .arg = arg, .owned = true, .orphan = !ticket};
    acc_err rc = enqueue(w, t, false, err);
    if (rc) {
        ticket_free(t);
        return rc;
    }
    pthread_mutex_unlock(&w->lock);
    if (ticket)
        *ticket = t;
    return ACC_OK;
}

acc_err acc_sql_write_wait(struct acc_sql_writer *w, struct acc_sql_ticket *t,
                           struct acc_error *err)
{
    pthread_mutex_lock(&w->lock);
    if (!t->done) {
        w->awaited++; /* somebody waits now: nothing lingers */
        pthread_cond_signal(&w->work);
    }
    /* A write queued a while ago and waited for now (a booking verified):
     * commit it here rather than wait for the writer to wake. */
    wait_done(w, t, true);
    pthread_mutex_unlock(&w->lock);
    acc_err rc = t->rc;
    if (rc)
        acc_error_copy(err, &t->err);
    free(t);
    return rc;
}

void acc_sql_write_forget(struct acc_sql_writer *w, struct acc_sql_ticket *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&w->lock);
    bool done = t->done;
    if (!done)
        t->orphan = true; /* the writer frees it */
    pthread_mutex_unlock(&w->lock);
    if (done) {
        if (t->rc)
            acc_log_error("queued write failed: %s", t->err.msg);
        free(t);
    }
}

/* ------------------------------------------------------------ start, stop */

acc_err acc_sql_writer_start(struct acc_sql *db, const struct acc_sql_writer_options *opt,
                             struct acc_sql_writer **out, struct acc_error *err)
{
    *out = NULL;
    struct acc_sql_writer *w = calloc(1, sizeof *w);
    if (!w)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    w->db = db;
    w->opt = *opt;
    if (!w->opt.checkpoint_ms)
        w->opt.checkpoint_ms = CHECKPOINT_MS_DEFAULT;
    if (w->opt.bound_wal && !db->be->after_batch)
        w->opt.bound_wal = false;
    pthread_mutex_init(&w->lock, NULL);
    acc_cond_init_monotonic(&w->work);
    acc_cond_init_monotonic(&w->ckwake);
    pthread_cond_init(&w->done, NULL);
    if (w->opt.bound_wal) {
        /* Checkpoints are the checkpointer's and the bound's, never a
         * commit's. */
        acc_sql_main_lock(db);
        db->be->wal_bound_start(db->main->h);
        acc_sql_main_unlock(db);
    }
    acc_err rc = ACC_OK;
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "%s: cannot start the writer", db->opt.label);
    else
        w->started = true;
    if (!rc && w->opt.bound_wal) {
        if (pthread_create(&w->checkpointer, NULL, checkpointer_main, w) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "%s: cannot start the checkpointer",
                               db->opt.label);
        else
            w->checkpointer_started = true;
    }
    if (rc) {
        acc_sql_writer_stop(w);
        return rc;
    }
    *out = w;
    return ACC_OK;
}

void acc_sql_writer_stop(struct acc_sql_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->work);
    pthread_cond_signal(&w->ckwake);
    pthread_mutex_unlock(&w->lock);
    if (w->started)
        pthread_join(w->thread, NULL);
    if (w->checkpointer_started)
        pthread_join(w->checkpointer, NULL);
    /* A writer that never started leaves its queue (empty but for writes
     * queued in between) to be given up. */
    for (struct acc_sql_ticket *t = w->head, *next; t; t = next) {
        next = t->next;
        ticket_free(t);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->ckwake);
    free(w);
}
