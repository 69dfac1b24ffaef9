/* SPDX-License-Identifier: Apache-2.0 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "sync.h"

#define IDLE_EXIT_SECONDS 30
/* After an interruption, how long acc_pool_free waits for running tasks. */
#define POOL_INTERRUPTED_WAIT_US 500000

struct task {
    struct task *next; /* queue link */
    struct acc_batch *batch;
    acc_task_fn run;
    acc_abandon_fn abandoned;
    void *arg;
    bool started;
    bool done;
};

struct acc_batch {
    struct acc_pool *pool;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t cap, n, done;
    bool freed;  /* the caller let go */
    size_t refs; /* tasks still to finish after the caller let go */
    struct task *tasks;
    struct acc_batch *prev, *next; /* the pool's live batches (for interrupt) */
};

struct acc_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a task was queued, or stopping */
    pthread_cond_t empty; /* a worker ended */
    struct task *head, *tail;
    unsigned threads, idle, max_threads;
    unsigned queued; /* tasks waiting for a worker */
    bool stopping;
    atomic_bool interrupted;   /* waits return at once (shutdown) */
    struct acc_batch *batches; /* batches not yet freed */
};

static void batch_destroy(struct acc_batch *b)
{
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->cond);
    free(b->tasks);
    free(b);
}

/* Runs one task (or skips it if its batch was let go first) and settles it. */
static void task_execute(struct task *t)
{
    struct acc_batch *b = t->batch;

    pthread_mutex_lock(&b->lock);
    bool skip = b->freed;
    t->started = !skip;
    pthread_mutex_unlock(&b->lock);

    if (!skip)
        t->run(t->arg);

    pthread_mutex_lock(&b->lock);
    t->done = true;
    b->done++;
    bool abandoned = b->freed;
    bool last = false;
    if (abandoned)
        last = --b->refs == 0;
    /* The waiter only cares when all are done: one wake-up, not n. */
    else if (b->done == b->n)
        pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);

    if (abandoned) {
        if (t->abandoned)
            t->abandoned(t->arg, !skip);
        if (last)
            batch_destroy(b);
    }
}

static void *worker_main(void *arg)
{
    struct acc_pool *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stopping) {
            p->idle++;
            struct timespec ts = acc_mono_deadline((int64_t)IDLE_EXIT_SECONDS * 1000000);
            int rc = pthread_cond_timedwait(&p->work, &p->lock, &ts);
            p->idle--;
            if (rc == ETIMEDOUT && !p->head)
                goto out;
        }
        if (!p->head)
            break; /* stopping and nothing left */
        struct task *t = p->head;
        p->head = t->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        pthread_mutex_unlock(&p->lock);
        task_execute(t);
        pthread_mutex_lock(&p->lock);
    }
out:
    p->threads--;
    pthread_cond_broadcast(&p->empty);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

acc_err acc_pool_new(unsigned max_threads, struct acc_pool **out, struct acc_error *err)
{
    struct acc_pool *p = calloc(1, sizeof *p);
    if (!p)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory for the thread pool");
    pthread_mutex_init(&p->lock, NULL);
    acc_cond_init_monotonic(&p->work);
    acc_cond_init_monotonic(&p->empty);
    p->max_threads = max_threads ? max_threads : 1;
    *out = p;
    return ACC_OK;
}

bool acc_pool_free(struct acc_pool *p)
{
    if (!p)
        return true;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    struct timespec ts = acc_mono_deadline(POOL_INTERRUPTED_WAIT_US);
    while (p->threads > 0) {
        if (!atomic_load(&p->interrupted))
            pthread_cond_wait(&p->empty, &p->lock);
        else if (pthread_cond_timedwait(&p->empty, &p->lock, &ts) == ETIMEDOUT)
            break;
    }
    if (p->threads > 0) {
        /* Tasks deaf to the interruption: they keep the pool (the process
         * is about to end). */
        acc_log_warn("%u adapter call(s) still running at shutdown; not waiting for them",
                     p->threads);
        pthread_mutex_unlock(&p->lock);
        return false;
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->empty);
    free(p);
    return true;
}

struct acc_batch *acc_batch_new(struct acc_pool *pool, size_t n)
{
    struct acc_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->tasks = calloc(n ? n : 1, sizeof *b->tasks);
    if (!b->tasks) {
        free(b);
        return NULL;
    }
    b->pool = pool;
    b->cap = n;
    pthread_mutex_init(&b->lock, NULL);
    acc_cond_init_monotonic(&b->cond);
    pthread_mutex_lock(&pool->lock);
    b->next = pool->batches;
    if (pool->batches)
        pool->batches->prev = b;
    pool->batches = b;
    pthread_mutex_unlock(&pool->lock);
    return b;
}

acc_err acc_batch_submit(struct acc_batch *b, acc_task_fn run, acc_abandon_fn abandoned, void *arg)
{
    pthread_mutex_lock(&b->lock); /* workers read n while earlier tasks finish */
    if (b->n >= b->cap) {
        pthread_mutex_unlock(&b->lock);
        return ACC_ERR_INTERNAL;
    }
    struct task *t = &b->tasks[b->n++];
    t->batch = b;
    t->run = run;
    t->abandoned = abandoned;
    t->arg = arg;
    pthread_mutex_unlock(&b->lock);

    struct acc_pool *p = b->pool;
    pthread_mutex_lock(&p->lock);
    /* Start a worker unless an idle one is left for this task: tasks
     * submitted together must not all count on the same idle worker, or they
     * run one after another and a hung call delays the rest. */
    if (p->idle <= p->queued && p->threads < p->max_threads && !p->stopping) {
        pthread_t tid;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&tid, &attr, worker_main, p) == 0)
            p->threads++;
        else
            acc_log_warn("could not start a worker thread; the task waits for a free one");
        pthread_attr_destroy(&attr);
    }
    if (p->threads == 0) {
        /* No worker at all: run the task here rather than never. */
        pthread_mutex_unlock(&p->lock);
        task_execute(t);
        return ACC_OK;
    }
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    p->queued++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return ACC_OK;
}

bool acc_batch_wait(struct acc_batch *b, int64_t timeout_us)
{
    struct timespec ts = acc_mono_deadline(timeout_us < 0 ? 0 : timeout_us);
    pthread_mutex_lock(&b->lock);
    while (b->done < b->n && !atomic_load(&b->pool->interrupted)) {
        if (timeout_us < 0) {
            pthread_cond_wait(&b->cond, &b->lock);
        } else if (pthread_cond_timedwait(&b->cond, &b->lock, &ts) == ETIMEDOUT) {
            break;
        }
    }
    bool all = b->done == b->n;
    pthread_mutex_unlock(&b->lock);
    return all;
}

void acc_batch_free(struct acc_batch *b, bool *abandoned)
{
    if (!b)
        return;
    struct acc_pool *p = b->pool;
    pthread_mutex_lock(&p->lock);
    if (b->prev)
        b->prev->next = b->next;
    else
        p->batches = b->next;
    if (b->next)
        b->next->prev = b->prev;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_lock(&b->lock);
    b->freed = true;
    for (size_t i = 0; abandoned && i < b->n; i++)
        abandoned[i] = !b->tasks[i].done;
    b->refs = b->n - b->done;
    bool now = b->refs == 0;
    pthread_mutex_unlock(&b->lock);
    if (now)
        batch_destroy(b);
}

void acc_pool_interrupt(struct acc_pool *p)
{
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->interrupted, true);
    /* Under each batch's lock, so a waiter between its check and its wait
     * cannot miss the wake-up. */
    for (struct acc_batch *b = p->batches; b; b = b->next) {
        pthread_mutex_lock(&b->lock);
        pthread_cond_broadcast(&b->cond);
        pthread_mutex_unlock(&b->lock);
    }
    pthread_mutex_unlock(&p->lock);
}

bool acc_pool_interrupted(struct acc_pool *p)
{
    return atomic_load(&p->interrupted);
}
