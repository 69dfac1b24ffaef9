/* SPDX-License-Identifier: Apache-2.0 */
/* simsite.h - the simulated sites: what sim-batch and sim-network share.
 * Each books on a booking ledger (lib/ledger) of its resources, adds a
 * deterministic background load, and takes injected faults.  Internal to
 * adapters/simsite: the rest of the tree sees only the adapters' tables
 * (acc_sim_batch_ops, acc_sim_network_ops).
 *
 * sim-batch serves one resource (the site's nodes); sim-network one per link
 * (Mbit/s).  The ledger decides and keeps the bookings in the site's
 * calendar file, so they survive restarts.
 *
 * Faults (for tests and demos), armed with the "fault" control:
 *   call=preview|reserve|query|cancel|any
 *   action=fail|unavailable|hang|late|compete|shrink|slow_write
 *   seconds=N (hang: how long; late: how much later; slow_write: how long a
 *   reserve's booking takes to reach the disk)  amount=N (compete, shrink)
 *   count=N (how many calls; 0 = until cleared)  resource=NAME (only this one)
 * A fault is taken under the ledger's lock, in the same step as the
 * booking it disturbs.
 */
#ifndef ACC_SIMSITE_H
#define ACC_SIMSITE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../lib/ledger/ledger.h"
#include "../adapter.h"

enum simsite_call {
    SIMSITE_CALL_ANY,
    SIMSITE_CALL_PREVIEW,
    SIMSITE_CALL_RESERVE,
    SIMSITE_CALL_QUERY,
    SIMSITE_CALL_CANCEL
};

enum simsite_action {
    SIMSITE_FAULT_FAIL,
    SIMSITE_FAULT_UNAVAILABLE,
    SIMSITE_FAULT_HANG,
    SIMSITE_FAULT_LATE,
    SIMSITE_FAULT_COMPETE,
    SIMSITE_FAULT_SHRINK,
    SIMSITE_FAULT_SLOW_WRITE,
    SIMSITE_FAULT_STUCK, /* like hang, but deaf to a shutdown: a command that will not return */
};

struct simsite_fault {
    enum simsite_call call;
    enum simsite_action action;
    int64_t seconds;
    int64_t amount;
    int count; /* remaining; 0 = unlimited */
    char resource[64];
};

#define SIMSITE_MAX_FAULTS 16

struct simsite {
    const char *kind;
    char *name;
    struct acc_ledger *ledger;
    pthread_cond_t wake; /* hangs wait here, with the ledger's lock */

    /* Guarded by the ledger's lock. */
    bool interrupted;
    int64_t loaded_until_day; /* days before this have their load */
    struct simsite_fault faults[SIMSITE_MAX_FAULTS];
    size_t n_faults;

    /* Settings, fixed at open. */
    bool load;        /* generate background load */
    uint64_t seed;    /* of the background load */
    int load_days;    /* days ahead to generate */
    int load_percent; /* how busy the load makes a resource, roughly */
};

/* Settings every simulated site takes: load, seed, load_days, load_percent,
 * and the ledger's (calendar, on_conflict, max_later).  Opens the ledger;
 * the caller adds its resources to s->ledger, then calls simsite_start. */
acc_err simsite_open(struct simsite *s, const char *kind, const struct acc_adapter_env *env,
                     struct acc_error *err);
/* Checks the settings as simsite_open reads them, opening nothing
 * (struct acc_adapter_ops check). */
acc_err simsite_check(const struct acc_adapter_env *env, const char **key, struct acc_error *err);
/* The settings a simulated site takes (struct acc_adapter_ops settings). */
extern const struct acc_adapter_setting simsite_settings[];
/* Loads persisted bookings and generates the background load. */
acc_err simsite_start(struct simsite *s, struct acc_error *err);

/* The operations, with the signatures of struct acc_adapter_ops so that both
 * adapters' tables point at them directly; state is a struct simsite. */
void simsite_close(void *state);
acc_err simsite_preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                        int64_t duration, struct acc_frames *out, struct acc_error *err);
acc_err simsite_reserve(void *state, const char *key, const struct acc_resource *res,
                        acc_time start, int64_t duration, struct acc_reservation *out,
                        struct acc_error *err);
/* Version 3 (ACC_CAP_REPLACE): as preview and reserve, with the booking
 * old_key's amount counted as free (lib/ledger). */
acc_err simsite_preview_replacing(void *state, const char *old_key, const struct acc_resource *res,
                                  acc_time from, acc_time until, int64_t duration,
                                  struct acc_frames *out, struct acc_error *err);
acc_err simsite_reserve_replacing(void *state, const char *key, const char *old_key,
                                  const struct acc_resource *res, acc_time start, int64_t duration,
                                  struct acc_reservation *out, struct acc_error *err);
acc_err simsite_query(void *state, const char *key, const char *local_id,
                      struct acc_reservation *out, struct acc_error *err);
acc_err simsite_cancel(void *state, const char *key, const char *local_id, struct acc_error *err);
acc_err simsite_health(void *state, struct acc_health *out);
acc_err simsite_control(void *state, const char *op, const struct acc_kv *args, size_t n_args,
                        struct acc_buf *reply, struct acc_error *err);
void simsite_interrupt(void *state);
bool simsite_may_block(void *state);

/* Makes the background load of every day up to until (bounded ahead); the
 * caller holds the ledger's lock. */
acc_err simsite_load_until_locked(struct simsite *s, acc_time until, struct acc_error *err);

#endif
