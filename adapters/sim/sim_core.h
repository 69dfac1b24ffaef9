/* sim_core.h - what sim-batch and sim-network share: capacity calendars per
 * resource, bookings by key, persistence in a calendar file of their own
 * (sim_store.h), deterministic background load, and fault injection.
 *
 * sim-batch serves one resource (the site's nodes); sim-network one per link
 * (Mbit/s).  The calendars in memory decide; every change is queued for the
 * calendar file while the lock is held (so the disk sees the changes in the
 * order memory did), committed before the call returns, and loaded back at
 * open, so bookings survive restarts.
 *
 * Faults (for tests and demos), armed with the "fault" control:
 *   call=preview|reserve|query|cancel|any
 *   action=fail|unavailable|hang|late|compete|shrink|slow_write
 *   seconds=N (hang: how long; late: how much later; slow_write: how long a
 *   reserve's booking takes to reach the disk)  amount=N (compete, shrink)
 *   count=N (how many calls; 0 = until cleared)  resource=NAME (only this one)
 */
#ifndef ACC_SIM_CORE_H
#define ACC_SIM_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../lib/common/map.h"
#include "../adapter.h"
#include "calendar.h"
#include "sim_store.h"

enum sim_call { SIM_CALL_ANY, SIM_CALL_PREVIEW, SIM_CALL_RESERVE, SIM_CALL_QUERY, SIM_CALL_CANCEL };

enum sim_action {
    SIM_FAULT_FAIL,
    SIM_FAULT_UNAVAILABLE,
    SIM_FAULT_HANG,
    SIM_FAULT_LATE,
    SIM_FAULT_COMPETE,
    SIM_FAULT_SHRINK,
    SIM_FAULT_SLOW_WRITE,
    SIM_FAULT_STUCK, /* like hang, but deaf to a shutdown: a command that will not return */
};

struct sim_fault {
    enum sim_call call;
    enum sim_action action;
    int64_t seconds;
    int64_t amount;
    int count; /* remaining; 0 = unlimited */
    char resource[64];
};

#define SIM_MAX_FAULTS 16

/* A booking in memory, by key in struct sim's map. */
struct sim_booking {
    size_t res;
    acc_time start, end;
    int64_t amount;
    char *owner;
    /* The booking's write while nobody has waited for it (reserve queues
     * it, the verifying query waits for it); NULL once known written. */
    struct sim_store_write *pending;
};

struct sim_resource {
    char *name;
    struct acc_calendar cal;
};

struct sim {
    const char *kind;
    char *name;
    struct sim_store *store; /* the calendar file */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* hangs wait here */
    bool interrupted;

    struct sim_resource *res;
    size_t n_res;
    struct acc_map bookings; /* key -> struct sim_booking */

    bool later;        /* book later when the asked start is taken (else refuse) */
    int64_t max_later; /* how far later, seconds */
    bool load;         /* generate background load */
    uint64_t seed;
    int load_days;            /* days ahead to generate */
    int load_percent;         /* how busy the load makes a resource, roughly */
    int64_t loaded_until_day; /* days before this have their load */

    struct sim_fault faults[SIM_MAX_FAULTS];
    size_t n_faults;
};

/* Settings every simulator takes: load, seed, load_days, load_percent,
 * on_conflict (later|refuse), max_later (a duration), calendar (the file;
 * default "<database>.sim-<name>").  Opens the calendar file. */
acc_err sim_open(struct sim *s, const char *kind, const struct acc_adapter_env *env,
                 const char *const *own_keys, struct acc_error *err);
acc_err sim_add_resource(struct sim *s, const char *name, int64_t capacity, struct acc_error *err);
/* Loads persisted bookings and generates the background load; call after
 * every resource was added. */
acc_err sim_start(struct sim *s, struct acc_error *err);

/* The operations, with the signatures of struct acc_adapter_ops so that both
 * simulators' tables point at them directly; state is a struct sim. */
void sim_close(void *state);
acc_err sim_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                    int64_t duration, struct acc_frames *out, struct acc_error *err);
acc_err sim_reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                    int64_t duration, struct acc_reservation *out, struct acc_error *err);
/* Version 3 (ACC_CAP_REPLACE): as preview and reserve, with the booking
 * old_key's amount counted as free (lifted from the calendar for the time
 * of the call, under the lock); after reserve_replacing both bookings exist
 * until one is cancelled. */
acc_err sim_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                              acc_time from, acc_time until, int64_t duration,
                              struct acc_frames *out, struct acc_error *err);
acc_err sim_reserve_replacing(void *state, const char *key, const char *old_key,
                              const struct acc_resource *res, acc_time start, int64_t duration,
                              struct acc_reservation *out, struct acc_error *err);
acc_err sim_query(void *state, const char *key, const char *local_id, struct acc_reservation *out,
                  struct acc_error *err);
acc_err sim_cancel(void *state, const char *key, const char *local_id, struct acc_error *err);
acc_err sim_health(void *state, struct acc_health *out);
acc_err sim_control(void *state, const char *op, const struct acc_kv *args, size_t n_args,
                    struct acc_buf *reply, struct acc_error *err);
void sim_interrupt(void *state);

/* Shared by the simulator's files. */
void sim_booking_free(struct sim_booking *b);
/* Makes the background load of every day up to until (bounded ahead); the
 * caller holds the lock. */
acc_err sim_load_until_locked(struct sim *s, acc_time until, struct acc_error *err);

/* For sim_control.c.  The resource named `name` (*idx its index), or NULL. */
struct sim_resource *sim_find_res(struct sim *s, const char *name, size_t *idx);
/* The callers of these hold s->lock: a booking added to (or removed from)
 * memory, and the queuing of a booking's write (*w then for sim_store_wait,
 * after the lock is released). */
acc_err sim_book_locked(struct sim *s, const char *key, size_t res, acc_time start, acc_time end,
                        int64_t amount, const char *owner);
void sim_unbook_locked(struct sim *s, const char *key);
acc_err sim_persist_locked(struct sim *s, const char *key, struct sim_store_write **w,
                           struct acc_error *err);

#endif
