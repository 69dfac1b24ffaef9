/* SPDX-License-Identifier: Apache-2.0 */
/* queue.c - the one bounded negotiation queue (part of the service).
 *
 * Every negotiation, synchronous or ?mode=pending, is a job on this queue,
 * served by a fixed set of worker threads ([negotiation] workers).  A job
 * owns its offer and its Pending agreement, and has a completion: waiters
 * registered on it are called once when it ends, from the thread that ends
 * it, so an HTTP request waits without holding a thread.  The registry
 * (every job not done yet) lets terminate and idempotent replays find a
 * running job by its agreement's id.
 *
 * Lock order: the queue's lock, then a job's lock.  Waiters are called with
 * no lock held.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/sync.h"
#include "internal.h"

/* ------------------------------------------------------------------ jobs */

static struct acc_nego *nego_alloc(struct acc_service *svc, const char *id)
{
    struct acc_nego *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    atomic_init(&job->refs, 1);
    atomic_init(&job->stop, false);
    job->svc = svc;
    acc_strlcpy(job->id, id, sizeof job->id);
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->cond, NULL);
    return job;
}

static struct acc_nego *nego_ref(struct acc_nego *job)
{
    atomic_fetch_add(&job->refs, 1);
    return job;
}

void acc_nego_release(struct acc_nego *job)
{
    if (!job || atomic_fetch_sub(&job->refs, 1) != 1)
        return;
    acc_offer_release(&job->offer);
    acc_agreement_release(&job->a);
    free(job->mod);
    acc_agreement_release(&job->changed);
    if (job->free_data)
        job->free_data(job->data);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->cond);
    free(job);
}

const char *acc_nego_id(const struct acc_nego *job)
{
    return job->id;
}

bool acc_nego_when_done(struct acc_nego *job, struct acc_nego_waiter *w)
{
    pthread_mutex_lock(&job->lock);
    bool later = !job->done;
    if (later) {
        w->next = job->waiters;
        job->waiters = w;
    }
    pthread_mutex_unlock(&job->lock);
    return later;
}

bool acc_nego_is_done(struct acc_nego *job)
{
    pthread_mutex_lock(&job->lock);
    bool done = job->done;
    pthread_mutex_unlock(&job->lock);
    return done;
}

void acc_nego_wait(struct acc_nego *job)
{
    pthread_mutex_lock(&job->lock);
    while (!job->settled)
        pthread_cond_wait(&job->cond, &job->lock);
    pthread_mutex_unlock(&job->lock);
}

acc_err acc_nego_result(struct acc_nego *job, struct acc_error *err)
{
    pthread_mutex_lock(&job->lock);
    acc_err rc = job->done ? job->result : ACC_ERR_STATE;
    if (rc && err)
        acc_error_copy(err, &job->err);
    pthread_mutex_unlock(&job->lock);
    return rc;
}

/* Takes the job out of the registry and the count, then tells its waiters. */
static void nego_finish(struct acc_nego *job, acc_err rc, const struct acc_error *err)
{
    struct svc_queue *q = &job->svc->queue;
    pthread_mutex_lock(&q->lock);
    for (struct acc_nego **pp = &q->active; *pp; pp = &(*pp)->active) {
        if (*pp == job) {
            *pp = job->active;
            break;
        }
    }
    q->length--;
    if (job->pending_mode)
        q->pending--;
    if (q->length == 0)
        pthread_cond_broadcast(&q->idle);
    pthread_mutex_unlock(&q->lock);

    /* done: the result is there and no waiter is taken any more; then the
     * waiters are called; then acc_nego_wait returns (all of them ran). */
    pthread_mutex_lock(&job->lock);
    job->done = true;
    job->result = rc;
    if (rc && err)
        acc_error_copy(&job->err, err);
    struct acc_nego_waiter *w = job->waiters;
    job->waiters = NULL;
    pthread_mutex_unlock(&job->lock);
    while (w) {
        struct acc_nego_waiter *next = w->next; /* w may be gone after fn */
        w->fn(w->arg);
        w = next;
    }
    pthread_mutex_lock(&job->lock);
    job->settled = true;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

struct acc_nego *svc_nego_new(struct acc_service *svc, const struct acc_agreement *a,
                              struct acc_offer *offer, bool pending_mode)
{
    struct acc_nego *job = nego_alloc(svc, a->id);
    if (!job)
        return NULL;
    /* The window and strategy are all the negotiation needs of the row. */
    job->a.state = a->state;
    memcpy(job->a.id, a->id, sizeof job->a.id);
    job->a.created = a->created;
    job->a.updated = a->updated;
    job->a.earliest = a->earliest;
    job->a.deadline = a->deadline;
    job->a.duration = a->duration;
    job->a.strategy = a->strategy;
    job->a.launch = a->launch;
    /* and whose it is: its quotas, and the Rejected ones kept for its owner */
    job->a.initiator = acc_strdup(a->initiator);
    job->a.client = acc_strdup(a->client);
    /* and whom it is for: the launch at its start hands it to the sites */
    if ((a->initiator && !job->a.initiator) || (a->client && !job->a.client) ||
        svc_identity_keep(&job->a.identity, &a->identity)) {
        acc_nego_release(job);
        return NULL;
    }
    job->offer = *offer;
    memset(offer, 0, sizeof *offer);
    job->pending_mode = pending_mode;
    struct svc_queue *q = &svc->queue;
    pthread_mutex_lock(&q->lock);
    job->active = q->active;
    q->active = job;
    pthread_mutex_unlock(&q->lock);
    return job;
}

struct acc_nego *svc_nego_modify_new(struct acc_service *svc, const char *id,
                                     const struct acc_modification *m)
{
    struct acc_nego *job = nego_alloc(svc, id);
    if (!job)
        return NULL;
    job->mod = malloc(sizeof *job->mod);
    if (!job->mod) {
        acc_nego_release(job);
        return NULL;
    }
    *job->mod = *m;
    return job;
}

struct acc_nego *svc_nego_new_run(struct acc_service *svc, const char *id,
                                  acc_err (*run)(struct acc_service *, struct acc_nego *,
                                                 struct acc_error *),
                                  void *data, void (*free_data)(void *))
{
    struct acc_nego *job = nego_alloc(svc, id);
    if (!job) {
        free_data(data);
        return NULL;
    }
    job->run = run;
    job->data = data;
    job->free_data = free_data;
    return job;
}

struct acc_nego *svc_nego_done(struct acc_service *svc, const char *id, acc_err result,
                               const struct acc_error *err)
{
    struct acc_nego *job = nego_alloc(svc, id);
    if (!job)
        return NULL;
    job->done = job->settled = true;
    job->result = result;
    if (result && err)
        acc_error_copy(&job->err, err);
    return job;
}

void svc_nego_abort(struct acc_nego *job, acc_err rc, const struct acc_error *err)
{
    nego_finish(job, rc, err);
}

/* ----------------------------------------------------------------- queue */

acc_err svc_queue_reserve(struct acc_service *svc, bool pending_mode, struct acc_error *err)
{
    struct svc_queue *q = &svc->queue;
    acc_err rc = svc_instance_clock_refuse(svc, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&q->lock);
    if (q->stopping) {
        rc = acc_error_set(err, ACC_ERR_INTERRUPTED,
                           "accordd is shutting down; submit the offer again when it is back");
    } else if (q->length >= q->limit) {
        rc = acc_error_set(err, ACC_ERR_OVERLOADED,
                           "%zu negotiations are queued or running, the most this server "
                           "takes at once ([negotiation] queue_length); retry later",
                           q->length);
    } else if (pending_mode && q->pending >= q->max_pending) {
        rc = acc_error_set(err, ACC_ERR_OVERLOADED,
                           "%zu negotiations with mode=pending are under way, the most this "
                           "server takes at once ([negotiation] max_pending); retry later",
                           q->pending);
    } else {
        q->length++;
        q->pending += pending_mode;
    }
    pthread_mutex_unlock(&q->lock);
    if (rc == ACC_ERR_OVERLOADED)
        atomic_fetch_add(&svc->refused_busy, 1);
    return rc;
}

void svc_queue_unreserve(struct acc_service *svc, bool pending_mode)
{
    struct svc_queue *q = &svc->queue;
    pthread_mutex_lock(&q->lock);
    q->length--;
    q->pending -= pending_mode;
    if (q->length == 0)
        pthread_cond_broadcast(&q->idle);
    pthread_mutex_unlock(&q->lock);
}

void svc_queue_push(struct acc_service *svc, struct acc_nego *job)
{
    struct svc_queue *q = &svc->queue;
    nego_ref(job);
    pthread_mutex_lock(&q->lock);
    job->queued = true;
    job->next = NULL;
    if (q->tail)
        q->tail->next = job;
    else
        q->head = job;
    q->tail = job;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->lock);
}

struct acc_nego *svc_queue_find(struct acc_service *svc, const char *id)
{
    struct svc_queue *q = &svc->queue;
    struct acc_nego *found = NULL;
    pthread_mutex_lock(&q->lock);
    for (struct acc_nego *j = q->active; j && !found; j = j->active) {
        if (strcmp(j->id, id) == 0)
            found = nego_ref(j);
    }
    pthread_mutex_unlock(&q->lock);
    return found;
}

/* Unlinks a job from the waiting list; false when a worker has it. */
static bool unqueue_locked(struct svc_queue *q, struct acc_nego *job)
{
    if (!job->queued)
        return false;
    struct acc_nego *prev = NULL;
    for (struct acc_nego *j = q->head; j; prev = j, j = j->next) {
        if (j != job)
            continue;
        if (prev)
            prev->next = j->next;
        else
            q->head = j->next;
        if (q->tail == j)
            q->tail = prev;
        job->queued = false;
        return true;
    }
    return false;
}

/* Ends a job that never ran: recorded Terminated or Interrupted. */
static void end_unstarted(struct acc_service *svc, struct acc_nego *job, bool terminated)
{
    struct acc_error err;
    if (job->mod) {
        /* A change that never began changed nothing. */
        acc_err rc = acc_error_set(&err, ACC_ERR_INTERRUPTED,
                                   "accordd was stopped before the change began; agreement %s "
                                   "is as it was; send the modification again",
                                   job->id);
        nego_finish(job, rc, &err);
        acc_nego_release(job); /* the queue's reference */
        return;
    }
    if (job->run) {
        /* Nothing stored yet: only the answer. */
        acc_error_set(&err, ACC_ERR_INTERRUPTED, "accordd is stopping; nothing was booked");
        nego_finish(job, ACC_ERR_INTERRUPTED, &err);
        acc_nego_release(job);
        return;
    }
    acc_err rc = svc_settle_unstarted(svc, &job->a, terminated, &err);
    if (job->quote[0])
        svc_quote_unclaim(svc, job->quote, job->id);
    if (rc == ACC_OK)
        rc = terminated ? acc_error_set(&err, ACC_ERR_CANCELLED,
                                        "the agreement was terminated before its negotiation "
                                        "began")
                        : acc_error_set(&err, ACC_ERR_INTERRUPTED,
                                        "accordd was stopped before the negotiation began; "
                                        "nothing was booked; submit the offer again");
    nego_finish(job, rc, &err);
    acc_nego_release(job); /* the queue's reference */
}

void svc_queue_stop_job(struct acc_service *svc, struct acc_nego *job)
{
    struct svc_queue *q = &svc->queue;
    atomic_store(&job->stop, true);
    pthread_mutex_lock(&q->lock);
    bool mine = unqueue_locked(q, job);
    pthread_mutex_unlock(&q->lock);
    if (mine)
        end_unstarted(svc, job, true);
}

static void *worker_main(void *arg)
{
    struct acc_service *svc = arg;
    struct svc_queue *q = &svc->queue;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->work, &q->lock);
        if (!q->head)
            break;
        struct acc_nego *job = q->head;
        q->head = job->next;
        if (!q->head)
            q->tail = NULL;
        job->queued = false;
        bool stopping = q->stopping;
        pthread_mutex_unlock(&q->lock);

        if (stopping || atomic_load(&job->stop)) {
            end_unstarted(svc, job, atomic_load(&job->stop));
        } else {
            struct acc_error err;
            acc_err rc = job->mod   ? svc_modify_run(svc, job->id, job->mod, &job->changed, &err)
                         : job->run ? job->run(svc, job, &err)
                                    : svc_negotiate(svc, job, &err);
            nego_finish(job, rc, &err);
            acc_nego_release(job);
        }
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

acc_err svc_queue_start(struct acc_service *svc, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    struct svc_queue *q = &svc->queue;
    q->limit = cfg->queue_length;
    q->max_pending = cfg->max_pending;
    q->workers = calloc(cfg->workers, sizeof *q->workers);
    if (!q->workers)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (unsigned i = 0; i < cfg->workers; i++) {
        if (pthread_create(&q->workers[i], NULL, worker_main, svc) != 0)
            return acc_error_set(err, ACC_ERR_INTERNAL, "cannot start negotiation worker %u of %u",
                                 i + 1, cfg->workers);
        q->n_workers++;
    }
    return ACC_OK;
}

void svc_queue_stop(struct acc_service *svc)
{
    struct svc_queue *q = &svc->queue;
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    struct acc_nego *waiting = q->head;
    for (struct acc_nego *j = waiting; j; j = j->next)
        j->queued = false;
    q->head = q->tail = NULL;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->lock);
    /* Jobs no worker took end here, Interrupted; the workers end theirs. */
    while (waiting) {
        struct acc_nego *next = waiting->next;
        end_unstarted(svc, waiting, atomic_load(&waiting->stop));
        waiting = next;
    }
}

bool svc_queue_wait_idle(struct acc_service *svc, int64_t timeout_us)
{
    struct svc_queue *q = &svc->queue;
    struct timespec ts = acc_mono_deadline(timeout_us);
    pthread_mutex_lock(&q->lock);
    while (q->length > 0 && pthread_cond_timedwait(&q->idle, &q->lock, &ts) == 0)
        ;
    bool idle = q->length == 0;
    pthread_mutex_unlock(&q->lock);
    return idle;
}

void svc_queue_join(struct acc_service *svc)
{
    struct svc_queue *q = &svc->queue;
    for (unsigned i = 0; i < q->n_workers; i++)
        pthread_join(q->workers[i], NULL);
    q->n_workers = 0;
}

void svc_queue_init(struct svc_queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work, NULL);
    acc_cond_init_monotonic(&q->idle);
}

void svc_queue_release(struct svc_queue *q)
{
    free(q->workers);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
}
