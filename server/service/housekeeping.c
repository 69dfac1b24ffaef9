/* housekeeping.c - recovery at start-up and the periodic pass: agreements
 * whose reservation ended become Complete, reservations left open are
 * cancelled, interrupted terminations are finished, link provisionings
 * that failed are retried (part of the service). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/log.h"
#include "internal.h"

#define HOUSEKEEPING_SECONDS 5

/* ---------------------------------------------------------- housekeeping */

/* Cancels the reservations that negotiations left open (a crash, a time-out,
 * a failed cancel).  The store leaves out the entries of agreements still
 * Pending, so a negotiation running now is never touched. */
static void sweep_open_reservations(struct acc_service *svc)
{
    struct acc_booking *b = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_journal_get(svc->store, NULL, &b, &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    if (n) {
        size_t failed = svc_cancel_bookings(svc, b, n);
        acc_log_info("housekeeping: released %zu reservation(s) left open%s", n - failed,
                     failed ? "; some could not be cancelled yet" : "");
    }
    free(b);
}

static void finish_terminations(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_agreement_ids(svc->store, ACC_STATE_BIT(ACC_STATE_OBSERVED_AND_TERMINATING), &ids,
                                &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (svc_release_reservations(svc, ids[i], &err))
            acc_log_warn("housekeeping: agreement %s: %s", ids[i], err.msg);
    }
    free(ids);
}

static void housekeeping_pass(struct acc_service *svc)
{
    unsigned done = 0;
    struct acc_error err;
    if (acc_store_agreement_complete_ended(svc->store, acc_now(), &done, &err))
        acc_log_error("housekeeping: %s", err.msg);
    else if (done)
        acc_log_debug("housekeeping: %u agreement(s) complete", done);
    svc_quote_expire(svc);
    sweep_open_reservations(svc);
    finish_terminations(svc);
    svc_provision_retry(svc);
}

/* At start-up nothing negotiates yet: every Pending agreement was cut short,
 * and once they are ended every open reservation is a leftover. */
acc_err svc_recover(struct acc_service *svc, struct acc_error *err)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc = acc_store_agreement_ids(svc->store,
                                         ACC_STATE_BIT(ACC_STATE_PENDING) |
                                             ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                         &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, ids[i], false, &a, NULL))
            continue;
        bool terminating = a.state == ACC_STATE_PENDING_AND_TERMINATING;
        a.state = terminating ? ACC_STATE_TERMINATED : ACC_STATE_REJECTED;
        a.updated = acc_now();
        free(a.fault_code);
        free(a.reason);
        a.fault_code = terminating ? NULL : strdup(acc_err_symbol(ACC_ERR_INTERRUPTED));
        a.reason = strdup("accordd stopped during the negotiation; every reservation it had "
                          "made was released; submit the offer again");
        struct acc_error serr;
        if (acc_store_agreement_settle(svc->store, &a,
                                       ACC_STATE_BIT(ACC_STATE_PENDING) |
                                           ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                       NULL, NULL, 0, &serr))
            acc_log_error("recovery: agreement %s: %s", ids[i], serr.msg);
        else
            acc_log_warn("recovery: agreement %s was being negotiated; now %s", ids[i],
                         acc_state_name(a.state));
        acc_agreement_release(&a);
    }
    free(ids);
    /* No modification runs yet: what a cut-short one booked is a leftover. */
    struct acc_error merr;
    if (acc_store_modify_recover(svc->store, &merr))
        acc_log_error("recovery: %s", merr.msg);
    /* Nor does a hold: what one cut short booked is a leftover too. */
    svc_quote_recover(svc);
    /* Now that none is Pending, every open reservation is a leftover. */
    sweep_open_reservations(svc);
    finish_terminations(svc);
    /* Links of agreements still ahead are provisioned again (idempotent):
     * by housekeeping, at once, not here on the way to serving. */
    struct acc_error perr;
    if (svc_provision_recover(svc, &perr))
        acc_log_error("recovery: %s", perr.msg);
    return ACC_OK;
}

void *svc_housekeeping_main(void *arg)
{
    struct acc_service *svc = arg;
    svc_provision_retry(svc); /* what recovery queued */
    pthread_mutex_lock(&svc->lock);
    while (!atomic_load(&svc->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += HOUSEKEEPING_SECONDS;
        pthread_cond_timedwait(&svc->wake, &svc->lock, &ts);
        if (atomic_load(&svc->stopping))
            break;
        pthread_mutex_unlock(&svc->lock);
        housekeeping_pass(svc);
        pthread_mutex_lock(&svc->lock);
    }
    pthread_mutex_unlock(&svc->lock);
    return NULL;
}

/* --------------------------------------------------------- open, close */
