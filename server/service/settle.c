/* SPDX-License-Identifier: Apache-2.0 */
/* settle.c - recording how a negotiation ended (part of the service; see
 * internal.h), shared by a negotiation (negotiate.c), the commit of a held
 * quote (quote_commit.c) and a modification (modify.c): a rejection and its
 * settling write, the reservations of a run that cannot be recorded, and
 * what follows a commit. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/strutil.h"
#include "internal.h"

void svc_reject(struct acc_agreement *a, acc_err code, const char *reason)
{
    a->state = ACC_STATE_REJECTED;
    free(a->fault_code);
    free(a->reason);
    a->fault_code = acc_strdup(acc_err_symbol(code));
    a->reason = acc_strdup(reason);
}

void svc_drop_run(struct acc_agreement *a)
{
    if (a->run) {
        acc_run_release(a->run);
        free(a->run);
        a->run = NULL;
    }
}

/* How long a write whose answer was lost waits for the database to tell
 * what became of it, and how often it asks. */
#define LOST_WAIT_MS 20000
#define LOST_POLL_MS 250

bool svc_lost_wait(struct acc_service *svc, int *waited_ms)
{
    if (*waited_ms >= LOST_WAIT_MS || atomic_load(&svc->stopping))
        return false;
    struct timespec d = {0, LOST_POLL_MS * 1000000L};
    nanosleep(&d, NULL);
    *waited_ms += LOST_POLL_MS;
    return true;
}

acc_err svc_made_after_lost(struct acc_service *svc, const char *id, bool *made, enum acc_state *st)
{
    for (int waited = 0;;) {
        struct acc_agreement cur;
        if (!acc_store_agreement_get(svc->store, id, false, &cur, NULL)) {
            *st = cur.state;
            *made = cur.state == ACC_STATE_OBSERVED ||
                    cur.state == ACC_STATE_OBSERVED_AND_TERMINATING ||
                    cur.state == ACC_STATE_COMPLETE;
            acc_agreement_release(&cur);
            return ACC_OK;
        }
        if (!svc_lost_wait(svc, &waited))
            return ACC_ERR_STORAGE_AWAY;
    }
}

acc_err svc_ended_by_recovery(struct acc_service *svc, const char *id, struct acc_error *err)
{
    struct acc_agreement cur;
    if (acc_store_agreement_get(svc->store, id, false, &cur, NULL))
        return ACC_OK;
    bool cut = cur.state == ACC_STATE_REJECTED && cur.fault_code &&
               strcmp(cur.fault_code, acc_err_symbol(ACC_ERR_INTERRUPTED)) == 0;
    acc_agreement_release(&cur);
    if (!cut)
        return ACC_OK;
    return acc_error_set(err, ACC_ERR_INTERRUPTED,
                         "the negotiation of agreement %s was ended by another instance, which "
                         "took this one for stopped (the database was out of reach); every "
                         "reservation it had made is released; submit the offer again",
                         id);
}

acc_err svc_settle_rejected(struct acc_service *svc, struct acc_agreement *a, unsigned from,
                            const struct acc_trace *trace, const char *terminated_reason,
                            bool *terminated, struct acc_error *err)
{
    acc_err rc = acc_store_agreement_settle(svc->store, a, from, trace, NULL, 0, err);
    *terminated = rc == ACC_ERR_STATE;
    if (!rc)
        svc_prune_rejected(svc, a); /* one more Rejected: the owner's oldest may go */
    if (!*terminated)
        return rc;
    /* Terminated while it was negotiated: record the end as Terminated. */
    a->state = ACC_STATE_TERMINATED;
    if (terminated_reason) {
        free(a->reason);
        a->reason = acc_strdup(terminated_reason);
    }
    rc = acc_store_agreement_settle(svc->store, a, ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                    trace, NULL, 0, err);
    if (rc == ACC_ERR_STATE && svc_ended_by_recovery(svc, a->id, err)) {
        *terminated = false; /* not by its client: retryable */
        return ACC_ERR_INTERRUPTED;
    }
    return rc;
}

void svc_undo_items(struct acc_service *svc, struct acc_engine_item *items, size_t n)
{
    struct acc_booking *b = calloc(n ? n : 1, sizeof *b);
    if (!b)
        return; /* the journal still says reserved: housekeeping cancels them */
    for (size_t i = 0; i < n; i++) {
        b[i] = items[i].booking;
        b[i].state = ACC_BOOKING_RESERVED;
    }
    svc_cancel_bookings(svc, b, n);
    for (size_t i = 0; i < n; i++)
        items[i].booking = b[i];
    free(b);
}

#define UNSTARTED_REASON                                                     \
    "accordd was stopped before the negotiation began; nothing was booked; " \
    "submit the offer again"

acc_err svc_settle_unstarted(struct acc_service *svc, struct acc_agreement *a, bool terminated,
                             struct acc_error *err)
{
    a->updated = acc_now();
    if (terminated) {
        a->state = ACC_STATE_TERMINATED;
        free(a->reason);
        a->reason = acc_strdup("terminated before its negotiation began");
    } else {
        svc_reject(a, ACC_ERR_INTERRUPTED, UNSTARTED_REASON);
    }
    return acc_store_agreement_settle(svc->store, a,
                                      ACC_STATE_BIT(ACC_STATE_PENDING) |
                                          ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                      NULL, NULL, 0, err);
}

acc_err svc_precommit(struct acc_service *svc, struct acc_agreement *a, struct acc_error *err)
{
    if (!svc->precommit)
        return ACC_OK;
    acc_err rc = svc->precommit(svc->precommit_arg, a, err);
    if (rc)
        acc_error_prefix(err, "the agreement's document could not be made and signed, so "
                              "nothing was committed");
    return rc;
}

void svc_after_commit(struct acc_service *svc, const struct acc_agreement *a)
{
    /* The network adapters that install reservations on the wire get their
     * flows (a failure is retried by housekeeping). */
    svc_provision_committed(svc, a);
    if (a->run && a->run->state == ACC_RUN_WAITING)
        acc_launcher_schedule(svc->launcher, a, a->run);
}
