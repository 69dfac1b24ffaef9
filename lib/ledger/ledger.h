/* SPDX-License-Identifier: Apache-2.0 */
/* ledger.h - the booking ledger: bookings by key over per-resource
 * capacity calendars, kept in a calendar file of its own.
 *
 * A ledger holds named resources (a simulated cluster's nodes, a link's
 * Mbit/s), each with a capacity calendar (lib/calendar), and the bookings
 * on them by key: resource, start, end, amount and owner.  It answers as
 * the adapters built on it do: a preview (with a booking that is being
 * replaced counted as free), a reservation at the asked start or, when
 * that is taken and on_conflict is "later", at the earliest start within
 * max_later, a query that waits until the booking is on disk, a cancel.
 * sim-batch and sim-network (adapters/simsite) and tc (adapters/tc) book
 * through it.
 *
 * The calendars in memory decide.  Every change is queued for the calendar
 * file while the ledger's lock is held, so the disk sees the changes in
 * the order memory did, and the file is loaded back at start, so bookings
 * survive restarts.  A reservation's write is waited for when it is
 * verified (query), not when it is made: its commit overlaps the rest of a
 * negotiation's round (ledger_store.h).  A calendar in PostgreSQL is shared
 * by every accordd instance: there a booking is decided holding its
 * resource in every process, after reading back what the others changed on
 * it since this process last looked (ledger_internal.h).
 *
 * Locking: the plain functions take the ledger's lock themselves.  A
 * caller that must do several things as one step (a simulated site's
 * injected fault, a competing booking and the reservation) holds the lock
 * with acc_ledger_lock and calls the _locked functions meanwhile.
 */
#ifndef ACC_LEDGER_H
#define ACC_LEDGER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../calendar/calendar.h"
#include "../common/error.h"
#include "../common/kv.h"
#include "../common/timefmt.h"
#include "../model/reservation.h"

struct acc_ledger;
struct acc_sql_ticket; /* a queued write that someone waits for (lib/sql) */

/* A booking as the ledger keeps it. */
struct acc_ledger_booking {
    size_t res; /* the resource's index */
    acc_time start, end;
    int64_t amount;
    const char *owner; /* "accord", "background", "other-user", ... */
};

/* The settings of a ledger, from its adapter's section: calendar (the file;
 * default "<database>.sim-<name>"), on_conflict (later|refuse), max_later
 * (a duration). */
struct acc_ledger_options {
    const char *calendar; /* borrowed; NULL: beside the database */
    bool later;           /* book later when the asked start is taken (else refuse) */
    int64_t max_later;    /* how much later, seconds */
    /* Not a setting: the ledger works on a copy of its calendar file made at
     * open, which it neither locks nor writes (lib/sql's snapshot), so that
     * it can look beside the accordd that owns the file (--replay). */
    bool snapshot;
};

void acc_ledger_options_init(struct acc_ledger_options *o);
/* Whether key is one of the ledger's settings. */
bool acc_ledger_takes(const char *key);
/* Applies one of them; ACC_ERR_CONFIG (or the parser's error) when its
 * value is wrong. */
acc_err acc_ledger_option(struct acc_ledger_options *o, const char *key, const char *value,
                          struct acc_error *err);
/* Applies those of kv that are the ledger's (leaving the others to the
 * caller); an error names the setting. */
acc_err acc_ledger_options_apply(struct acc_ledger_options *o, const struct acc_kv *kv, size_t n,
                                 struct acc_error *err);

/* The calendar file of ledger `name`: its `calendar` setting when given
 * (NULL: none), else the file beside db_path that acc_ledger_open uses
 * (for backups).  Free *out. */
acc_err acc_ledger_calendar_path(const char *db_path, const char *name, const char *calendar,
                                 char **out, struct acc_error *err);

/* Opens ledger `name` (messages and local ids carry it) with its calendar
 * file; without o->calendar the file lies beside db_path.  durable: an
 * fsync at each commit. */
acc_err acc_ledger_open(const char *name, const char *db_path, const struct acc_ledger_options *o,
                        bool durable, struct acc_ledger **out, struct acc_error *err);
/* Commits what is still queued, then frees.  NULL does nothing. */
void acc_ledger_free(struct acc_ledger *l);

acc_err acc_ledger_add_resource(struct acc_ledger *l, const char *name, int64_t capacity,
                                struct acc_error *err);
/* Loads the stored bookings; call after every resource was added (those of
 * resources no longer added, and those that ended a day ago, are left out). */
acc_err acc_ledger_load(struct acc_ledger *l, struct acc_error *err);

const char *acc_ledger_name(const struct acc_ledger *l);
size_t acc_ledger_n_resources(const struct acc_ledger *l);
/* Lives as long as the ledger. */
const char *acc_ledger_resource_name(const struct acc_ledger *l, size_t r);
/* The resource called name (*r its index, when r is not NULL). */
bool acc_ledger_find(const struct acc_ledger *l, const char *name, size_t *r);
/* The same, as an error that names the ledger and the resource. */
acc_err acc_ledger_resource(const struct acc_ledger *l, const char *name, size_t *r,
                            struct acc_error *err);
/* ACC_ERR_INVALID when a reservation's start lies in the past. */
acc_err acc_ledger_check_start(const struct acc_ledger *l, acc_time start, struct acc_error *err);

/* ------------------------------------------- operations (take the lock) */

/* The signatures follow struct acc_adapter_ops; old_key: the booking being
 * replaced (its amount counts as free for the call), or NULL.  After a
 * reservation replacing another both exist until one is cancelled. */
acc_err acc_ledger_preview(struct acc_ledger *l, const char *old_key,
                           const struct acc_resource *res, acc_time from, acc_time until,
                           int64_t duration, struct acc_frames *out, struct acc_error *err);
acc_err acc_ledger_reserve(struct acc_ledger *l, const char *key, const char *old_key,
                           const struct acc_resource *res, acc_time start, int64_t duration,
                           struct acc_reservation *out, struct acc_error *err);
/* Waits for booking key's write if nobody has yet; a write that failed
 * takes the booking back (not in the file: not booked). */
acc_err acc_ledger_written(struct acc_ledger *l, const char *key, struct acc_error *err);
/* acc_ledger_written, then the booking. */
acc_err acc_ledger_query(struct acc_ledger *l, const char *key, struct acc_reservation *out,
                         struct acc_error *err);
acc_err acc_ledger_cancel(struct acc_ledger *l, const char *key, struct acc_error *err);
/* A copy of booking key (owner NULL: it lives under the lock only). */
bool acc_ledger_get(struct acc_ledger *l, const char *key, struct acc_ledger_booking *out);

/* Waits until w (and every write queued before it) is committed, and frees
 * w; its result.  Without the lock. */
acc_err acc_ledger_wait(struct acc_ledger *l, struct acc_sql_ticket *w, struct acc_error *err);
/* Stored rows read back by a shared calendar's syncs so far (not counting
 * the load): what reading only the changes saves, for tests and figures. */
uint64_t acc_ledger_rows_read(struct acc_ledger *l);
/* Whether day was marked (acc_ledger_persist_locked). */
acc_err acc_ledger_day_marked(struct acc_ledger *l, int64_t day, bool *marked,
                              struct acc_error *err);

/* ---------------------------------------------------- under the lock */

void acc_ledger_lock(struct acc_ledger *l);
void acc_ledger_unlock(struct acc_ledger *l);
/* Waits on cond with the lock released meanwhile (a simulated site's
 * injected hang); false once `until` has passed. */
bool acc_ledger_cond_wait(struct acc_ledger *l, pthread_cond_t *cond, const struct timespec *until);

const struct acc_calendar *acc_ledger_calendar_locked(const struct acc_ledger *l, size_t r);
size_t acc_ledger_count_locked(const struct acc_ledger *l);
/* Valid until the lock is released. */
const struct acc_ledger_booking *acc_ledger_get_locked(const struct acc_ledger *l, const char *key);
void acc_ledger_each_locked(const struct acc_ledger *l,
                            void (*fn)(const char *key, const struct acc_ledger_booking *b,
                                       void *ctx),
                            void *ctx);

/* Books in memory only (ACC_ERR_BUSY when it does not fit); persist it
 * next, or unbook it. */
acc_err acc_ledger_book_locked(struct acc_ledger *l, const char *key, size_t r, acc_time start,
                               acc_time end, int64_t amount, const char *owner);
/* Takes a booking out of memory (its unawaited write is given up). */
void acc_ledger_unbook_locked(struct acc_ledger *l, const char *key);
/* Queues the write of the n bookings keys (in memory), with day >= 0 also
 * marking that day.  With w the caller waits for *w (acc_ledger_wait,
 * usually after releasing the lock); without, nobody waits and it commits
 * with the next awaited write. */
acc_err acc_ledger_persist_locked(struct acc_ledger *l, const char *const *keys, size_t n,
                                  int64_t day, struct acc_sql_ticket **w, struct acc_error *err);

/* What a reservation asks for, once its resource is resolved. */
struct acc_ledger_ask {
    const char *key;
    const char *old_key; /* the booking it replaces, or NULL */
    size_t res;
    acc_time start;
    int64_t duration, amount;
};

acc_err acc_ledger_preview_locked(struct acc_ledger *l, const char *old_key, size_t r,
                                  acc_time from, acc_time until, int64_t duration, int64_t amount,
                                  struct acc_frames *out, struct acc_error *err);
/* Books and queues its write (waited for by acc_ledger_written).  When key
 * is booked already, *out is that booking and *again a write to wait for
 * after releasing the lock (the call that made it may still be writing
 * it); else *again is NULL. */
acc_err acc_ledger_reserve_locked(struct acc_ledger *l, const struct acc_ledger_ask *a,
                                  struct acc_reservation *out, struct acc_sql_ticket **again,
                                  struct acc_error *err);
acc_err acc_ledger_query_locked(struct acc_ledger *l, const char *key, struct acc_reservation *out,
                                struct acc_error *err);
/* Queues the removal (even of a key memory no longer has, so that a cancel
 * retried after a failed write removes it from the file too) and takes the
 * booking out of memory; wait for *w after releasing the lock. */
acc_err acc_ledger_cancel_locked(struct acc_ledger *l, const char *key, struct acc_sql_ticket **w,
                                 struct acc_error *err);

#endif
