#include "sim_core.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/hash.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"

#define MAX_FRAMES 4096
#define DAY        86400

/* ------------------------------------------------------------------ helpers */

static void local_id_of(const struct sim *s, const char *key, char *out, size_t size)
{
    snprintf(out, size, "%s-%08" PRIx64, s->name, acc_fnv1a64(key) & 0xffffffff);
}

struct sim_resource *sim_find_res(struct sim *s, const char *name, size_t *idx)
{
    for (size_t i = 0; i < s->n_res; i++) {
        if (strcmp(s->res[i].name, name) == 0) {
            if (idx)
                *idx = i;
            return &s->res[i];
        }
    }
    return NULL;
}

void sim_booking_free(struct sim_booking *b)
{
    if (b) {
        free(b->owner);
        free(b);
    }
}

static void fill_reservation(const struct sim *s, const char *key, const struct sim_booking *b,
                             struct acc_reservation *out)
{
    memset(out, 0, sizeof *out);
    local_id_of(s, key, out->local_id, sizeof out->local_id);
    out->start = b->start;
    out->end = b->end;
    out->amount = b->amount;
}

/* Adds a booking to memory (calendar and map); the caller holds the lock. */
acc_err sim_book_locked(struct sim *s, const char *key, size_t res, acc_time start, acc_time end,
                        int64_t amount, const char *owner)
{
    struct sim_booking *b = calloc(1, sizeof *b);
    if (!b)
        return ACC_ERR_NOMEM;
    b->res = res;
    b->start = start;
    b->end = end;
    b->amount = amount;
    b->owner = strdup(owner ? owner : "");
    if (!b->owner) {
        free(b);
        return ACC_ERR_NOMEM;
    }
    struct acc_calendar *cal = &s->res[res].cal;
    acc_err rc = acc_calendar_add(cal, start, end, amount);
    if (!rc) {
        rc = acc_map_put(&s->bookings, key, b);
        if (rc)
            acc_calendar_remove(cal, start, end, amount);
    }
    if (rc)
        sim_booking_free(b);
    return rc;
}

void sim_unbook_locked(struct sim *s, const char *key)
{
    struct sim_booking *b = acc_map_take(&s->bookings, key);
    if (!b)
        return;
    sim_store_forget(s->store, b->pending);
    acc_calendar_remove(&s->res[b->res].cal, b->start, b->end, b->amount);
    sim_booking_free(b);
}

/* Queues the write of a booking that is in memory; the caller holds the
 * lock, so writes are queued in the order of the changes they record.  With
 * w the caller then waits for it without the lock (sim_store_wait). */
acc_err sim_persist_locked(struct sim *s, const char *key, struct sim_store_write **w,
                           struct acc_error *err)
{
    const struct sim_booking *b = acc_map_get(&s->bookings, key);
    struct sim_store_booking sb = {key, s->res[b->res].name, b->start, b->end, b->amount, b->owner};
    return sim_store_put(s->store, &sb, 1, -1, w, err);
}

/* ----------------------------------------------------------------- faults */

/* Takes the first armed fault for this call and resource, if any. */
static bool take_fault(struct sim *s, enum sim_call call, const char *resource,
                       struct sim_fault *out)
{
    for (size_t i = 0; i < s->n_faults; i++) {
        struct sim_fault *f = &s->faults[i];
        if (f->call != SIM_CALL_ANY && f->call != call)
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
 * the lock; others may use the simulator meanwhile. */
static acc_err hang_locked(struct sim *s, int64_t seconds, bool stuck, struct acc_error *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds > 0 ? seconds : 3600;
    while (stuck || !s->interrupted) {
        if (pthread_cond_timedwait(&s->wake, &s->lock, &ts) == ETIMEDOUT)
            return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: shutting down", s->name);
}

/* Applies the faults that make a call fail or wait; the caller holds the lock. */
static acc_err failing_fault(struct sim *s, const struct sim_fault *f, struct acc_error *err)
{
    switch (f->action) {
    case SIM_FAULT_FAIL:
        return acc_error_set(err, ACC_ERR_ADAPTER, "%s: injected failure", s->name);
    case SIM_FAULT_UNAVAILABLE:
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: injected outage", s->name);
    case SIM_FAULT_HANG:
    case SIM_FAULT_STUCK:
        return hang_locked(s, f->seconds, f->action == SIM_FAULT_STUCK, err);
    default:
        return ACC_OK;
    }
}

/* -------------------------------------------------------------- operations */

static acc_err resolve(struct sim *s, const struct acc_resource *res, size_t *idx,
                       struct acc_error *err)
{
    if (!sim_find_res(s, res->name, idx))
        return acc_error_set(err, ACC_ERR_INVALID, "%s has no resource '%s'", s->name, res->name);
    return ACC_OK;
}

/* Takes the amount of the booking old_key (if it is on resource r) off the
 * calendar for the time of one call; *lifted then for unlift_locked.  The
 * caller holds the lock, so nobody else sees the lifted calendar. */
static acc_err lift_locked(struct sim *s, size_t r, const char *old_key,
                           const struct sim_booking **lifted, struct acc_error *err)
{
    *lifted = NULL;
    const struct sim_booking *b = old_key ? acc_map_get(&s->bookings, old_key) : NULL;
    if (!b || b->res != r)
        return ACC_OK; /* gone, or another resource: nothing to count */
    if (acc_calendar_lift(&s->res[r].cal, b->start, b->end, b->amount))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    *lifted = b;
    return ACC_OK;
}

static void unlift_locked(struct sim *s, const struct sim_booking *b)
{
    if (b)
        acc_calendar_unlift(&s->res[b->res].cal, b->start, b->end, b->amount);
}

static acc_err preview_(struct sim *s, const char *old_key, const struct acc_resource *res,
                        acc_time from, acc_time until, int64_t duration, struct acc_frames *out,
                        struct acc_error *err)
{
    size_t r = 0;
    acc_err rc = resolve(s, res, &r, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&s->lock);
    struct sim_fault f;
    if (take_fault(s, SIM_CALL_PREVIEW, res->name, &f))
        rc = failing_fault(s, &f, err);
    if (!rc)
        rc = sim_load_until_locked(s, until, err);
    const struct sim_booking *lifted = NULL;
    if (!rc)
        rc = lift_locked(s, r, old_key, &lifted, err);
    if (!rc &&
        acc_calendar_preview(&s->res[r].cal, from, until, duration, res->amount, MAX_FRAMES, out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    unlift_locked(s, lifted);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

acc_err sim_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                    int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    return preview_(state, NULL, res, from, until, duration, out, err);
}

acc_err sim_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                              acc_time from, acc_time until, int64_t duration,
                              struct acc_frames *out, struct acc_error *err)
{
    return preview_(state, old_key, res, from, until, duration, out, err);
}

static acc_err reserve_(struct sim *s, const char *key, const char *old_key,
                        const struct acc_resource *res, acc_time start, int64_t duration,
                        struct acc_reservation *out, struct acc_error *err)
{
    size_t r = 0;
    acc_err rc = resolve(s, res, &r, err);
    if (rc)
        return rc;
    if (start < acc_now() - 60)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: start time lies in the past", s->name);

    char compete_key[ACC_KEY_MAX + 16] = "";
    int64_t slow_write = 0;
    struct sim_store_write *w = NULL, *cw = NULL;
    pthread_mutex_lock(&s->lock);
    struct acc_calendar *cal = &s->res[r].cal;
    struct sim_booking *have = acc_map_get(&s->bookings, key);
    if (have) {
        /* The same key again: the booking it already has, once it is on
         * disk (the call that made it may still be writing it). */
        fill_reservation(s, key, have, out);
        rc = sim_store_put(s->store, NULL, 0, -1, &w, err);
        pthread_mutex_unlock(&s->lock);
        if (!rc)
            rc = sim_store_wait(s->store, w, err);
        return rc;
    }
    struct sim_fault f;
    int64_t amount = res->amount;
    acc_time at = start;
    if (take_fault(s, SIM_CALL_RESERVE, res->name, &f)) {
        rc = failing_fault(s, &f, err);
        if (f.action == SIM_FAULT_LATE)
            at = start + (f.seconds > 0 ? f.seconds : 3600);
        if (f.action == SIM_FAULT_SLOW_WRITE)
            slow_write = f.seconds > 0 ? f.seconds : 1;
        if (f.action == SIM_FAULT_SHRINK)
            amount = res->amount - (f.amount > 0 ? f.amount : 1);
        if (amount < 1)
            amount = 1;
        if (f.action == SIM_FAULT_COMPETE) {
            /* Another user books first what this reservation wants. */
            int64_t free_now = cal->capacity - acc_calendar_peak(cal, start, start + duration);
            int64_t take = f.amount > 0 ? f.amount : cal->capacity;
            if (take > free_now)
                take = free_now;
            snprintf(compete_key, sizeof compete_key, "other-%s", key);
            if (take > 0 &&
                !sim_book_locked(s, compete_key, r, start, start + duration, take, "other-user") &&
                sim_persist_locked(s, compete_key, &cw, NULL))
                sim_unbook_locked(s, compete_key);
        }
    }
    const struct sim_booking *lifted = NULL;
    if (!rc)
        rc = lift_locked(s, r, old_key, &lifted, err);
    if (!rc) {
        if (!acc_calendar_fits(cal, at, at + duration, amount)) {
            acc_time later = s->later ? acc_calendar_earliest(cal, at, at + s->max_later + duration,
                                                              duration, amount)
                                      : -1;
            if (later < 0)
                rc = acc_error_set(err, ACC_ERR_BUSY,
                                   "%s: %" PRId64 " of %s not free for the asked time", s->name,
                                   amount, res->name);
            at = later;
        }
    }
    if (!rc) {
        rc = sim_book_locked(s, key, r, at, at + duration, amount, "accord");
        if (rc == ACC_ERR_NOMEM)
            acc_error_set(err, rc, "out of memory");
    }
    /* The old booking is back: over the overlap both count until the
     * caller cancels one of them. */
    unlift_locked(s, lifted);
    /* The write is queued under the lock, so a cancel of this key that
     * comes next is also written next; the disk is waited for without it. */
    if (!rc && (rc = sim_persist_locked(s, key, &w, err)))
        sim_unbook_locked(s, key);
    if (!rc) {
        struct sim_booking *b = acc_map_get(&s->bookings, key);
        /* Waited for by the verifying query (or given up with the booking):
         * the commit goes on while the negotiation's round does. */
        b->pending = w;
        fill_reservation(s, key, b, out);
    }
    pthread_mutex_unlock(&s->lock);

    if (slow_write)
        sleep((unsigned)slow_write);
    if (cw && sim_store_wait(s->store, cw, NULL))
        acc_log_warn("%s: competing booking %s not written", s->name, compete_key);
    return rc;
}

acc_err sim_reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                    int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    return reserve_(state, key, NULL, res, start, duration, out, err);
}

acc_err sim_reserve_replacing(void *state, const char *key, const char *old_key,
                              const struct acc_resource *res, acc_time start, int64_t duration,
                              struct acc_reservation *out, struct acc_error *err)
{
    return reserve_(state, key, old_key, res, start, duration, out, err);
}

/* Waits for a booking's write if nobody has yet; a write that failed takes
 * the booking back (not in the file: not booked). */
static acc_err written(struct sim *s, const char *key, struct acc_error *err)
{
    pthread_mutex_lock(&s->lock);
    struct sim_booking *b = acc_map_get(&s->bookings, key);
    struct sim_store_write *w = b ? b->pending : NULL;
    if (b)
        b->pending = NULL;
    pthread_mutex_unlock(&s->lock);
    if (!w || !sim_store_wait(s->store, w, err))
        return ACC_OK;
    pthread_mutex_lock(&s->lock);
    sim_unbook_locked(s, key); /* a cancel may have come meanwhile: then nothing is left */
    pthread_mutex_unlock(&s->lock);
    return acc_error_set(err, ACC_ERR_ADAPTER, "%s: calendar not written: %s", s->name,
                         err ? err->msg : "storage error");
}

acc_err sim_query(void *state, const char *key, const char *local_id, struct acc_reservation *out,
                  struct acc_error *err)
{
    struct sim *s = state;
    (void)local_id; /* keys are unique here: the local id adds nothing */
    acc_err rc = written(s, key, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&s->lock);
    struct sim_fault f;
    if (take_fault(s, SIM_CALL_QUERY, NULL, &f))
        rc = failing_fault(s, &f, err);
    if (!rc) {
        struct sim_booking *b = acc_map_get(&s->bookings, key);
        if (b)
            fill_reservation(s, key, b, out);
        else
            rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", s->name, key);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

acc_err sim_cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    struct sim *s = state;
    (void)local_id;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&s->lock);
    struct sim_fault f;
    if (take_fault(s, SIM_CALL_CANCEL, NULL, &f))
        rc = failing_fault(s, &f, err);
    /* Queued under the lock, before the booking leaves memory: the disk
     * sees the changes in the order memory did.  Written even for a key
     * memory no longer has, so that a cancel retried after a failed write
     * removes it from disk too. */
    struct sim_store_write *w = NULL;
    if (!rc && !(rc = sim_store_delete(s->store, key, &w, err)))
        sim_unbook_locked(s, key);
    pthread_mutex_unlock(&s->lock);
    if (w)
        rc = sim_store_wait(s->store, w, err);
    return rc;
}

acc_err sim_health(void *state, struct acc_health *out)
{
    struct sim *s = state;
    pthread_mutex_lock(&s->lock);
    out->up = true;
    snprintf(out->detail, sizeof out->detail, "simulated; %zu bookings", s->bookings.n);
    for (size_t i = 0; i < s->n_faults; i++) {
        if (s->faults[i].action == SIM_FAULT_UNAVAILABLE && s->faults[i].call == SIM_CALL_ANY)
            out->up = false;
    }
    pthread_mutex_unlock(&s->lock);
    return ACC_OK;
}

void sim_interrupt(void *state)
{
    struct sim *s = state;
    pthread_mutex_lock(&s->lock);
    s->interrupted = true;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
}
