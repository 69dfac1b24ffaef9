/* SPDX-License-Identifier: Apache-2.0 */
/* ledger_ops.c - the booking ledger's operations (ledger.h): preview,
 * reserve (at the asked start or later, replacing another booking or not),
 * the wait for a booking's write, query and cancel, each under the lock or
 * taking it. */
#include "ledger.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/hash.h"
#include "ledger_internal.h"

#define MAX_FRAMES 4096 /* frames of one preview */

static void fill_reservation(const struct acc_ledger *l, const char *key,
                             const struct acc_ledger_booking *b, struct acc_reservation *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->local_id, sizeof out->local_id, "%s-%08" PRIx64, l->name,
             acc_fnv1a64(key) & 0xffffffff);
    out->start = b->start;
    out->end = b->end;
    out->amount = b->amount;
}

/* Takes the amount of the booking old_key (if it is on resource r) off the
 * calendar for the time of one call; *lifted then for unlift_locked.  The
 * caller holds the lock, so nobody else sees the lifted calendar. */
static acc_err lift_locked(struct acc_ledger *l, size_t r, const char *old_key,
                           const struct acc_ledger_booking **lifted, struct acc_error *err)
{
    *lifted = NULL;
    const struct acc_ledger_booking *b = old_key ? acc_ledger_get_locked(l, old_key) : NULL;
    if (!b || b->res != r)
        return ACC_OK; /* gone, or another resource: nothing to count */
    if (acc_calendar_lift(&l->res[r].cal, b->start, b->end, b->amount))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    *lifted = b;
    return ACC_OK;
}

static void unlift_locked(struct acc_ledger *l, const struct acc_ledger_booking *b)
{
    if (b)
        acc_calendar_unlift(&l->res[b->res].cal, b->start, b->end, b->amount);
}

acc_err acc_ledger_preview_locked(struct acc_ledger *l, const char *old_key, size_t r,
                                  acc_time from, acc_time until, int64_t duration, int64_t amount,
                                  struct acc_frames *out, struct acc_error *err)
{
    const struct acc_ledger_booking *lifted = NULL;
    acc_err rc = ledger_sync_res_locked(l, r, err);
    if (!rc)
        rc = lift_locked(l, r, old_key, &lifted, err);
    if (!rc && acc_calendar_preview(&l->res[r].cal, from, until, duration, amount, MAX_FRAMES, out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    unlift_locked(l, lifted);
    return rc;
}

/* Where a reservation goes: at its start, or when that is taken (and the
 * ledger books later) at the earliest start within max_later; the caller
 * holds the lock and has lifted the booking it replaces. */
static acc_err place_locked(struct acc_ledger *l, const struct acc_ledger_ask *a, acc_time *at,
                            struct acc_error *err)
{
    const struct acc_calendar *cal = &l->res[a->res].cal;
    *at = a->start;
    if (acc_calendar_fits(cal, a->start, a->start + a->duration, a->amount))
        return ACC_OK;
    *at = l->later ? acc_calendar_earliest(cal, a->start, a->start + l->max_later + a->duration,
                                           a->duration, a->amount)
                   : -1;
    if (*at < 0)
        return acc_error_set(err, ACC_ERR_BUSY, "%s: %" PRId64 " of %s not free for the asked time",
                             l->name, a->amount, l->res[a->res].name);
    return ACC_OK;
}

static acc_err reserve_in_memory(struct acc_ledger *l, const struct acc_ledger_ask *a,
                                 struct acc_reservation *out, struct acc_sql_ticket **again,
                                 struct acc_error *err);

/* A shared calendar decides in one transaction that holds the resource in
 * every process sharing it: what changed on it since this process last
 * looked read back, the place found, the booking written (with the next
 * change number), committed.  Two instances cannot both book what only one
 * of them fits. */
acc_err acc_ledger_reserve_locked(struct acc_ledger *l, const struct acc_ledger_ask *a,
                                  struct acc_reservation *out, struct acc_sql_ticket **again,
                                  struct acc_error *err)
{
    if (!acc_ledger_store_shared(l->store))
        return reserve_in_memory(l, a, out, again, err);
    *again = NULL;
    acc_err rc = acc_ledger_store_hold(l->store, l->res[a->res].name, err);
    if (rc)
        return rc;
    if (!(rc = ledger_sync_res_locked(l, a->res, err)) &&
        !(rc = ledger_prune_held_locked(l, a->res, err)))
        rc = reserve_in_memory(l, a, out, again, err);
    /* a commit that fails leaves nothing stored: nothing booked */
    int64_t wrote = 0;
    acc_err crc = acc_ledger_store_let_go(l->store, !rc, &wrote, rc ? NULL : err);
    if (!rc && crc) {
        acc_ledger_unbook_locked(l, a->key);
        rc = crc;
    }
    /* Every change of the resource up to the lock was read, and the lock
     * let no other in before this write's: memory holds all up to it. */
    if (!rc && wrote > l->res[a->res].seen)
        l->res[a->res].seen = wrote;
    return rc;
}

static acc_err reserve_in_memory(struct acc_ledger *l, const struct acc_ledger_ask *a,
                                 struct acc_reservation *out, struct acc_sql_ticket **again,
                                 struct acc_error *err)
{
    *again = NULL;
    const struct acc_ledger_booking *have = acc_ledger_get_locked(l, a->key);
    if (have) {
        /* The same key again: the booking it already has, once it is on
         * disk (the call that made it may still be writing it). */
        fill_reservation(l, a->key, have, out);
        return acc_ledger_store_put(l->store, NULL, 0, -1, again, err);
    }
    const struct acc_ledger_booking *lifted = NULL;
    acc_time at = a->start;
    acc_err rc = lift_locked(l, a->res, a->old_key, &lifted, err);
    if (!rc)
        rc = place_locked(l, a, &at, err);
    if (!rc) {
        rc = acc_ledger_book_locked(l, a->key, a->res, at, at + a->duration, a->amount, "accord");
        if (rc == ACC_ERR_NOMEM)
            acc_error_set(err, rc, "out of memory");
    }
    /* The old booking is back: over the overlap both count until the
     * caller cancels one of them. */
    unlift_locked(l, lifted);
    /* The write is queued under the lock, so a cancel of this key that
     * comes next is also written next; the disk is waited for without it. */
    struct acc_sql_ticket *w = NULL;
    if (!rc && (rc = acc_ledger_persist_locked(l, &a->key, 1, -1, &w, err)))
        acc_ledger_unbook_locked(l, a->key);
    if (!rc) {
        struct ledger_entry *b = acc_map_get(&l->bookings, a->key);
        /* Waited for by the verifying query (or given up with the booking):
         * the commit goes on while the negotiation's round does. */
        b->pending = w;
        fill_reservation(l, a->key, &b->b, out);
    }
    return rc;
}

acc_err acc_ledger_query_locked(struct acc_ledger *l, const char *key, struct acc_reservation *out,
                                struct acc_error *err)
{
    acc_err rc = ledger_sync_key_locked(l, key, err);
    if (rc)
        return rc;
    const struct acc_ledger_booking *b = acc_ledger_get_locked(l, key);
    if (!b)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "%s: no reservation %s", l->name, key);
    fill_reservation(l, key, b, out);
    return ACC_OK;
}

acc_err acc_ledger_cancel_locked(struct acc_ledger *l, const char *key, struct acc_sql_ticket **w,
                                 struct acc_error *err)
{
    /* Queued before the booking leaves memory: the disk sees the changes
     * in the order memory did. */
    acc_err rc = acc_ledger_store_delete(l->store, key, w, err);
    if (!rc)
        acc_ledger_unbook_locked(l, key);
    return rc;
}

/* ------------------------------------------------- operations, locking */

acc_err acc_ledger_preview(struct acc_ledger *l, const char *old_key,
                           const struct acc_resource *res, acc_time from, acc_time until,
                           int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    size_t r = 0;
    acc_err rc = acc_ledger_resource(l, res->name, &r, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&l->lock);
    rc = acc_ledger_preview_locked(l, old_key, r, from, until, duration, res->amount, out, err);
    pthread_mutex_unlock(&l->lock);
    return rc;
}

acc_err acc_ledger_reserve(struct acc_ledger *l, const char *key, const char *old_key,
                           const struct acc_resource *res, acc_time start, int64_t duration,
                           struct acc_reservation *out, struct acc_error *err)
{
    struct acc_ledger_ask a = {key, old_key, 0, start, duration, res->amount};
    acc_err rc = acc_ledger_resource(l, res->name, &a.res, err);
    if (!rc)
        rc = acc_ledger_check_start(l, start, err);
    if (rc)
        return rc;
    struct acc_sql_ticket *again = NULL;
    pthread_mutex_lock(&l->lock);
    rc = acc_ledger_reserve_locked(l, &a, out, &again, err);
    pthread_mutex_unlock(&l->lock);
    return again ? acc_ledger_wait(l, again, err) : rc;
}

acc_err acc_ledger_written(struct acc_ledger *l, const char *key, struct acc_error *err)
{
    pthread_mutex_lock(&l->lock);
    struct ledger_entry *b = acc_map_get(&l->bookings, key);
    struct acc_sql_ticket *w = b ? b->pending : NULL;
    if (b)
        b->pending = NULL;
    pthread_mutex_unlock(&l->lock);
    if (!w || !acc_ledger_store_wait(l->store, w, err))
        return ACC_OK;
    pthread_mutex_lock(&l->lock);
    acc_ledger_unbook_locked(l, key); /* a cancel may have come meanwhile: then nothing is left */
    pthread_mutex_unlock(&l->lock);
    return acc_error_set(err, ACC_ERR_ADAPTER, "%s: calendar not written: %s", l->name,
                         err ? err->msg : "storage error");
}

acc_err acc_ledger_query(struct acc_ledger *l, const char *key, struct acc_reservation *out,
                         struct acc_error *err)
{
    acc_err rc = acc_ledger_written(l, key, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&l->lock);
    rc = acc_ledger_query_locked(l, key, out, err);
    pthread_mutex_unlock(&l->lock);
    return rc;
}

acc_err acc_ledger_cancel(struct acc_ledger *l, const char *key, struct acc_error *err)
{
    struct acc_sql_ticket *w = NULL;
    pthread_mutex_lock(&l->lock);
    acc_err rc = acc_ledger_cancel_locked(l, key, &w, err);
    pthread_mutex_unlock(&l->lock);
    if (w)
        rc = acc_ledger_wait(l, w, err);
    return rc;
}
