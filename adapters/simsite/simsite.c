/* SPDX-License-Identifier: Apache-2.0 */
/* simsite.c - the simulated sites' operations (simsite.h): the ledger's,
 * with the injected faults taken in the same step. */
#include "simsite.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/log.h"

/* ----------------------------------------------------------------- faults */

/* Takes the first armed fault for this call and resource, if any; the
 * caller holds the ledger's lock. */
static bool take_fault(struct simsite *s, enum simsite_call call, const char *resource,
                       struct simsite_fault *out)
{
    for (size_t i = 0; i < s->n_faults; i++) {
        struct simsite_fault *f = &s->faults[i];
        if (f->call != SIMSITE_CALL_ANY && f->call != call)
            continue;
        if (f->resource[0] && (!resource || strcmp(f->resource, resource) != 0))
            continue;
        *out = *f;
        if (f->count > 0 && --f->count == 0) {
            memmove(f, f + 1, (s->n_faults - i - 1) * sizeof *f);
            s->n_faults--;
        }
        return true;
    }
    return false;
}

/* Blocks for `seconds` (a slow resource manager), then lets the call go on
 * as usual; only a shutdown (interrupt) makes it fail, unless the call is
 * stuck (deaf to it, as a command that will not return).  The caller holds
 * the ledger's lock; others may use the site meanwhile. */
static acc_err hang_locked(struct simsite *s, int64_t seconds, bool stuck, struct acc_error *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds > 0 ? seconds : 3600;
    while (stuck || !s->interrupted) {
        if (!acc_ledger_cond_wait(s->ledger, &s->wake, &ts))
            return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: shutting down", s->name);
}

/* Applies the faults that make a call fail or wait; the caller holds the
 * ledger's lock. */
static acc_err failing_fault(struct simsite *s, const struct simsite_fault *f,
                             struct acc_error *err)
{
    switch (f->action) {
    case SIMSITE_FAULT_FAIL:
        return acc_error_set(err, ACC_ERR_ADAPTER, "%s: injected failure", s->name);
    case SIMSITE_FAULT_UNAVAILABLE:
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: injected outage", s->name);
    case SIMSITE_FAULT_HANG:
    case SIMSITE_FAULT_STUCK:
        return hang_locked(s, f->seconds, f->action == SIMSITE_FAULT_STUCK, err);
    default:
        return ACC_OK;
    }
}

/* Takes a fault of this call, if one is armed, and applies it; the caller
 * holds the ledger's lock. */
static acc_err call_fault_locked(struct simsite *s, enum simsite_call call, const char *resource,
                                 struct acc_error *err)
{
    struct simsite_fault f;
    return take_fault(s, call, resource, &f) ? failing_fault(s, &f, err) : ACC_OK;
}

/* What a reserve fault does beyond failing the call. */
struct reserve_fault {
    int64_t slow_write;                 /* seconds the booking takes to reach the disk */
    char compete_key[ACC_KEY_MAX + 16]; /* another user's booking made first */
    struct acc_sql_ticket *compete_write;
};

/* Another user books first what this reservation wants; the caller holds
 * the ledger's lock. */
static void compete_locked(struct simsite *s, const struct acc_ledger_ask *a,
                           const struct simsite_fault *f, struct reserve_fault *rf)
{
    const struct acc_calendar *cal = acc_ledger_calendar_locked(s->ledger, a->res);
    int64_t capacity = acc_calendar_capacity(cal);
    int64_t free_now = capacity - acc_calendar_peak(cal, a->start, a->start + a->duration);
    int64_t take = f->amount > 0 ? f->amount : capacity;
    if (take > free_now)
        take = free_now;
    snprintf(rf->compete_key, sizeof rf->compete_key, "other-%s", a->key);
    const char *key = rf->compete_key;
    if (take > 0 &&
        !acc_ledger_book_locked(s->ledger, key, a->res, a->start, a->start + a->duration, take,
                                "other-user") &&
        acc_ledger_persist_locked(s->ledger, &key, 1, -1, &rf->compete_write, NULL))
        acc_ledger_unbook_locked(s->ledger, key);
}

/* Takes a reserve fault, if one is armed: it fails the call, or changes
 * what is asked, or books for another user first.  The caller holds the
 * ledger's lock. */
static acc_err reserve_fault_locked(struct simsite *s, const char *resource,
                                    struct acc_ledger_ask *a, struct reserve_fault *rf,
                                    struct acc_error *err)
{
    struct simsite_fault f;
    if (!take_fault(s, SIMSITE_CALL_RESERVE, resource, &f))
        return ACC_OK;
    acc_err rc = failing_fault(s, &f, err);
    if (f.action == SIMSITE_FAULT_LATE)
        a->start += f.seconds > 0 ? f.seconds : 3600;
    if (f.action == SIMSITE_FAULT_SLOW_WRITE)
        rf->slow_write = f.seconds > 0 ? f.seconds : 1;
    if (f.action == SIMSITE_FAULT_SHRINK)
        a->amount -= f.amount > 0 ? f.amount : 1;
    if (a->amount < 1)
        a->amount = 1;
    if (f.action == SIMSITE_FAULT_COMPETE)
        compete_locked(s, a, &f, rf);
    return rc;
}

/* -------------------------------------------------------------- operations */

static acc_err preview_(struct simsite *s, const char *old_key, const struct acc_resource *res,
                        acc_time from, acc_time until, int64_t duration, struct acc_frames *out,
                        struct acc_error *err)
{
    size_t r = 0;
    acc_err rc = acc_ledger_resource(s->ledger, res->name, &r, err);
    if (rc)
        return rc;
    acc_ledger_lock(s->ledger);
    rc = call_fault_locked(s, SIMSITE_CALL_PREVIEW, res->name, err);
    if (!rc)
        rc = simsite_load_until_locked(s, until, err);
    if (!rc)
        rc = acc_ledger_preview_locked(s->ledger, old_key, r, from, until, duration, res->amount,
                                       out, err);
    acc_ledger_unlock(s->ledger);
    return rc;
}

acc_err simsite_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                        int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    return preview_(state, NULL, res, from, until, duration, out, err);
}

acc_err simsite_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                                  acc_time from, acc_time until, int64_t duration,
                                  struct acc_frames *out, struct acc_error *err)
{
    return preview_(state, old_key, res, from, until, duration, out, err);
}

static acc_err reserve_(struct simsite *s, const char *key, const char *old_key,
                        const struct acc_resource *res, acc_time start, int64_t duration,
                        struct acc_reservation *out, struct acc_error *err)
{
    struct acc_ledger_ask a = {key, old_key, 0, start, duration, res->amount};
    acc_err rc = acc_ledger_resource(s->ledger, res->name, &a.res, err);
    if (!rc)
        rc = acc_ledger_check_start(s->ledger, start, err);
    if (rc)
        return rc;
    struct reserve_fault rf = {0};
    struct acc_sql_ticket *again = NULL;
    acc_ledger_lock(s->ledger);
    /* A key booked already is answered with its booking: no fault is taken. */
    if (!acc_ledger_get_locked(s->ledger, key))
        rc = reserve_fault_locked(s, res->name, &a, &rf, err);
    if (!rc)
        rc = acc_ledger_reserve_locked(s->ledger, &a, out, &again, err);
    acc_ledger_unlock(s->ledger);
    if (again)
        return acc_ledger_wait(s->ledger, again, err);

    if (rf.slow_write)
        sleep((unsigned)rf.slow_write);
    if (rf.compete_write && acc_ledger_wait(s->ledger, rf.compete_write, NULL))
        acc_log_warn("%s: competing booking %s not written", s->name, rf.compete_key);
    return rc;
}

acc_err simsite_reserve(void *state, const char *key, const struct acc_resource *res,
                        acc_time start, int64_t duration, struct acc_reservation *out,
                        struct acc_error *err)
{
    return reserve_(state, key, NULL, res, start, duration, out, err);
}

acc_err simsite_reserve_replacing(void *state, const char *key, const char *old_key,
                                  const struct acc_resource *res, acc_time start, int64_t duration,
                                  struct acc_reservation *out, struct acc_error *err)
{
    return reserve_(state, key, old_key, res, start, duration, out, err);
}

acc_err simsite_query(void *state, const char *key, const char *local_id,
                      struct acc_reservation *out, struct acc_error *err)
{
    struct simsite *s = state;
    (void)local_id; /* keys are unique here: the local id adds nothing */
    acc_err rc = acc_ledger_written(s->ledger, key, err);
    if (rc)
        return rc;
    acc_ledger_lock(s->ledger);
    rc = call_fault_locked(s, SIMSITE_CALL_QUERY, NULL, err);
    if (!rc)
        rc = acc_ledger_query_locked(s->ledger, key, out, err);
    acc_ledger_unlock(s->ledger);
    return rc;
}

acc_err simsite_cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    struct simsite *s = state;
    (void)local_id;
    struct acc_sql_ticket *w = NULL;
    acc_ledger_lock(s->ledger);
    acc_err rc = call_fault_locked(s, SIMSITE_CALL_CANCEL, NULL, err);
    if (!rc)
        rc = acc_ledger_cancel_locked(s->ledger, key, &w, err);
    acc_ledger_unlock(s->ledger);
    if (w)
        rc = acc_ledger_wait(s->ledger, w, err);
    return rc;
}

acc_err simsite_health(void *state, struct acc_health *out)
{
    struct simsite *s = state;
    acc_ledger_lock(s->ledger);
    out->up = true;
    snprintf(out->detail, sizeof out->detail, "simulated; %zu bookings",
             acc_ledger_count_locked(s->ledger));
    for (size_t i = 0; i < s->n_faults; i++) {
        if (s->faults[i].action == SIMSITE_FAULT_UNAVAILABLE &&
            s->faults[i].call == SIMSITE_CALL_ANY)
            out->up = false;
    }
    acc_ledger_unlock(s->ledger);
    return ACC_OK;
}

bool simsite_may_block(void *state)
{
    /* its calls work on the ledger (memory and its own file); only an armed
     * fault (hang, late, slow_write...) can hold one up */
    struct simsite *s = state;
    acc_ledger_lock(s->ledger);
    bool armed = s->n_faults > 0;
    acc_ledger_unlock(s->ledger);
    return armed;
}

void simsite_interrupt(void *state)
{
    struct simsite *s = state;
    acc_ledger_lock(s->ledger);
    s->interrupted = true;
    pthread_cond_broadcast(&s->wake);
    acc_ledger_unlock(s->ledger);
}
