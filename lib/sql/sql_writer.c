/* sql_writer.c - the group-commit writer (sql_writer.h). */
#include "sql_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "../common/log.h"
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
    bool stopping;

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

/* Runs a batch in one transaction on the main connection. */
static void run_batch(struct acc_sql_writer *w, struct acc_sql_ticket *batch)
{
    struct acc_error berr;
    acc_error_clear(&berr);
    struct acc_sql_conn *c = acc_sql_main_lock(w->db);
    acc_err brc = acc_sql_begin(c, ACC_SQL_WRITE, &berr);
    if (brc == ACC_OK) {
        for (struct acc_sql_ticket *t = batch; t; t = t->next) {
            acc_error_clear(&t->err);
            if ((t->rc = acc_sql_savepoint(c, "job", &t->err)))
                continue;
            t->rc = t->job->run(c, t->arg, &t->err);
            if (t->rc)
                acc_sql_rollback_to(c, "job");
            acc_sql_release(c, "job", NULL);
        }
        brc = acc_sql_commit(c, &berr);
        if (brc)
            acc_sql_rollback(c);
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

/* Settles a finished batch; the caller holds the lock. */
static void settle(struct acc_sql_writer *w, struct acc_sql_ticket *batch)
{
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

static bool stopping(void *arg)
{
    struct acc_sql_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    bool v = w->stopping;
    pthread_mutex_unlock(&w->lock);
    return v;
}

static void *writer_main(void *arg)
{
    struct acc_sql_writer *w = arg;
    const struct sql_backend *be = w->db->be;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->work, &w->lock);
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
        struct acc_sql_ticket *batch = w->head;
        w->head = w->tail = NULL;
        w->awaited = 0;
        pthread_mutex_unlock(&w->lock);
        run_batch(w, batch);
        pthread_mutex_lock(&w->lock);
        settle(w, batch);
        pthread_mutex_unlock(&w->lock);
        if (w->opt.bound_wal && be->after_batch) {
            acc_sql_main_lock(w->db);
            be->after_batch(w->db->main->h, w->db->opt.wal_limit, stopping, w);
            acc_sql_main_unlock(w->db);
        }
        pthread_mutex_lock(&w->lock);
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

acc_err acc_sql_write(struct acc_sql_writer *w, const struct acc_sql_job *job, void *arg,
                      struct acc_error *err)
{
    struct acc_sql_ticket t = {.job = job, .arg = arg};
    acc_err rc = enqueue(w, &t, true, err);
    if (rc)
        return rc;
    while (!t.done)
        pthread_cond_wait(&w->done, &w->lock);
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
        /* Somebody waits now: the writer stops lingering. */
        w->awaited++;
        pthread_cond_signal(&w->work);
    }
    while (!t->done)
        pthread_cond_wait(&w->done, &w->lock);
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
