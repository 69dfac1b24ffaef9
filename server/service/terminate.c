/* SPDX-License-Identifier: Apache-2.0 */
/* terminate.c - ending agreements on request: a negotiation is stopped and
 * rolls back, committed reservations are cancelled (part of the service). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "internal.h"

/* Cancels the committed reservations of an agreement (and those whose
 * cancel failed before); ACC_ERR_UNAVAILABLE when some are still there
 * (the journal keeps them for housekeeping to retry). */
acc_err svc_cancel_committed(struct acc_service *svc, const char *id, struct acc_error *err)
{
    struct acc_booking *b = NULL;
    size_t n = 0, k = 0;
    acc_err rc = acc_store_journal_get(svc->store, id, &b, &n, err);
    if (rc)
        return rc;
    /* Its reservations: those committed, and those a cancel already failed on. */
    for (size_t i = 0; i < n; i++) {
        if (b[i].state == ACC_BOOKING_COMMITTED || b[i].state == ACC_BOOKING_CANCEL_FAILED)
            b[k++] = b[i];
    }
    size_t failed = svc_cancel_bookings(svc, b, k);
    for (size_t i = 0; failed && i < k; i++) {
        if (b[i].state != ACC_BOOKING_CANCELLED) {
            rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                               "%zu of %zu reservations could not be cancelled yet (%s: %s); "
                               "accordd keeps retrying",
                               failed, k, b[i].adapter, b[i].error[0] ? b[i].error : "unknown");
            break;
        }
    }
    free(b);
    return rc;
}

/* Ends an agreement that is ObservedAndTerminating: its job is stopped, its
 * reservations cancelled; Terminated when all are gone. */
acc_err svc_release_reservations(struct acc_service *svc, const char *id, struct acc_error *err)
{
    acc_launcher_stop(svc->launcher, id);
    acc_err rc = svc_cancel_committed(svc, id, err);
    if (!rc) {
        enum acc_state was;
        rc = acc_store_agreement_transition(svc->store, id,
                                            ACC_STATE_BIT(ACC_STATE_OBSERVED_AND_TERMINATING),
                                            ACC_STATE_TERMINATED, NULL, &was, err);
        if (rc == ACC_ERR_STATE && was == ACC_STATE_TERMINATED)
            rc = ACC_OK; /* housekeeping (or another request) finished it first */
    }
    return rc;
}

acc_err acc_service_terminate(struct acc_service *svc, const char *id, struct acc_agreement *out,
                              struct acc_nego **wait, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    *wait = NULL;
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    enum acc_state was;
    acc_err rc = ACC_OK;
    acc_err t = acc_store_agreement_transition(svc->store, id, ACC_STATE_BIT(ACC_STATE_PENDING),
                                               ACC_STATE_PENDING_AND_TERMINATING, NULL, &was, err);
    if (t == ACC_ERR_STATE)
        t = acc_store_agreement_transition(svc->store, id, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                           ACC_STATE_OBSERVED_AND_TERMINATING, NULL, &was, err);
    if (t && t != ACC_ERR_STATE)
        return t;
    switch (was) {
    case ACC_STATE_PENDING:
    case ACC_STATE_PENDING_AND_TERMINATING: {
        struct acc_nego *job = svc_queue_find(svc, id);
        if (job) {
            /* It rolls back and records Terminated; the caller waits for it. */
            svc_queue_stop_job(svc, job);
            *wait = job;
        } else if (svc->shared) {
            /* Another instance negotiates it: it finds the agreement
             * PendingAndTerminating at its next beat and rolls back (the
             * leader ends it if that instance died).  Ending it here would
             * let the sweep cancel reservations that negotiation still
             * holds and uses. */
            acc_log_info("agreement %s: terminate passed to the instance negotiating it", id);
        } else {
            /* Nobody negotiates it here (recovery ends such ones). */
            acc_store_agreement_transition(svc->store, id,
                                           ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                           ACC_STATE_TERMINATED, NULL, NULL, NULL);
        }
        break;
    }
    case ACC_STATE_OBSERVED:
    case ACC_STATE_OBSERVED_AND_TERMINATING:
        rc = svc_release_reservations(svc, id, err);
        break;
    case ACC_STATE_TERMINATED:
        break; /* already: terminate is idempotent */
    default:
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s and cannot be terminated", id,
                             acc_state_name(was));
    }
    struct acc_error gerr;
    acc_err g = acc_store_agreement_get(svc->store, id, false, out, &gerr);
    if (g && !rc)
        rc = acc_error_copy(err, &gerr);
    if (rc) {
        acc_nego_release(*wait);
        *wait = NULL;
    }
    return rc;
}
