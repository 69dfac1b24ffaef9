/* SPDX-License-Identifier: Apache-2.0 */
/* leftovers.c - what this process left unfinished when a write failed and
 * it lived on (part of the service).  PostgreSQL stopped for some seconds,
 * or a full disk under SQLite: a negotiation whose end could not be
 * written stays Pending, a modification whose mark could not be cleared
 * keeps every later modification out (409) and its new reservations out
 * of the sweep, a hold that could not be recorded keeps its quote Advisory
 * with the reservations it made.  Nothing here works on them any more:
 * once the database answers again, each housekeeping pass settles them as
 * the start-up recovery settles what a crash left, without a restart.
 * What runs now is left out (the queue's jobs, the holds being booked),
 * and a mark is cleared only if it is still the number its modification
 * set (a later one's is another). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "internal.h"

void svc_busy_enter(struct acc_service *svc, struct svc_busy *b, const char *id)
{
    b->id = id;
    pthread_mutex_lock(&svc->busy_lock);
    b->next = svc->busy;
    svc->busy = b;
    pthread_mutex_unlock(&svc->busy_lock);
}

void svc_busy_leave(struct acc_service *svc, struct svc_busy *b)
{
    pthread_mutex_lock(&svc->busy_lock);
    struct svc_busy **pp = &svc->busy;
    while (*pp && *pp != b)
        pp = &(*pp)->next;
    if (*pp)
        *pp = b->next;
    pthread_mutex_unlock(&svc->busy_lock);
}

bool svc_busy_has(struct acc_service *svc, const char *id)
{
    bool found = false;
    pthread_mutex_lock(&svc->busy_lock);
    for (const struct svc_busy *b = svc->busy; b && !found; b = b->next)
        found = strcmp(b->id, id) == 0;
    pthread_mutex_unlock(&svc->busy_lock);
    return found;
}

/* Negotiations end at the latest after their time limit; one this recent
 * may still be about to be handed to a worker. */
static acc_time grace(const struct acc_service *svc)
{
    return svc->cfg->lease > 0 ? svc->cfg->lease : 30;
}

/* Negotiations whose end was never written: Pending in the store, in no
 * queue here.  Ended as interrupted (their reservations go with the
 * sweep; their Idempotency-Key may be negotiated again). */
static void end_stranded(struct acc_service *svc)
{
    struct acc_store_own *own = NULL;
    size_t n = 0, k = 0;
    struct acc_error err;
    if (acc_store_own_pending(svc->store, acc_now() - grace(svc), &own, &n, &err)) {
        acc_log_warn("leftovers: %s", err.msg);
        return;
    }
    char(*ids)[ACC_ID_LEN + 1] = calloc(n ? n : 1, sizeof *ids);
    for (size_t i = 0; ids && i < n; i++) {
        struct acc_nego *job = svc_queue_find(svc, own[i].id);
        if (job)
            acc_nego_release(job); /* still negotiating */
        else
            memcpy(ids[k++], own[i].id, sizeof ids[0]);
    }
    if (k)
        acc_log_warn("leftovers: %zu negotiation(s) whose end could not be written", k);
    svc_end_interrupted(svc, ids, k, 0);
    free(ids);
    free(own);
}

/* Marks of modifications that ended here without clearing them. */
static void clear_marks(struct acc_service *svc)
{
    struct acc_store_own *own = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_own_marks(svc->store, acc_now() + 1, &own, &n, &err)) {
        acc_log_warn("leftovers: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (svc_busy_has(svc, own[i].id))
            continue; /* its modification runs */
        bool cleared = false;
        if (acc_store_modify_abort(svc->store, own[i].id, own[i].mark, &cleared, &err))
            acc_log_warn("leftovers: agreement %s: %s", own[i].id, err.msg);
        else if (cleared)
            acc_log_warn("leftovers: agreement %s: the mark of a modification that failed is "
                         "cleared; the agreement keeps its version",
                         own[i].id);
    }
    free(own);
}

/* Holds whose record failed: their quotes Rejected. */
static void end_holds(struct acc_service *svc)
{
    struct acc_store_own *own = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_own_holds(svc->store, acc_now() + 1, &own, &n, &err)) {
        acc_log_warn("leftovers: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!svc_busy_has(svc, own[i].id))
            svc_quote_reject_cut(svc, own[i].id, 0,
                                 "the database could not record the hold while it was booked");
    }
    free(own);
}

void svc_leftovers(struct acc_service *svc)
{
    /* writes failed and none went through since: does one now? (/healthz
     * says degraded until one does) */
    struct acc_error err;
    if (acc_store_writes_failing(svc->store, NULL, NULL, 0) &&
        acc_store_write_probe(svc->store, &err))
        return; /* still failing: nothing can be settled */
    end_stranded(svc);
    clear_marks(svc);
    end_holds(svc);
}
