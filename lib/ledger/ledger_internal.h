/* SPDX-License-Identifier: Apache-2.0 */
/* ledger_internal.h - what the booking ledger's files share (ledger.c:
 * settings, life, the bookings in memory and their writes; ledger_ops.c:
 * the operations).  Not a public header: adapters use ledger.h. */
#ifndef ACC_LEDGER_INTERNAL_H
#define ACC_LEDGER_INTERNAL_H

#include "../common/map.h"
#include "ledger.h"
#include "ledger_store.h"

struct ledger_entry {
    struct acc_ledger_booking b; /* b.owner is the booking's own copy */
    /* The booking's write while nobody has waited for it (reserve queues
     * it, the verifying query waits for it); NULL once known written. */
    struct acc_sql_ticket *pending;
};

struct ledger_res {
    char *name;
    struct acc_calendar cal;
    /* Shared calendars: the highest change number of the resource's stored
     * rows that memory has applied (ledger_store.h), and when this process
     * last pruned its long-ended rows. */
    int64_t seen;
    acc_time pruned;
};

struct acc_ledger {
    char *name;
    bool later;
    int64_t max_later;
    struct acc_ledger_store *store; /* the calendar file */
    pthread_mutex_t lock;           /* the resources' calendars and the bookings */
    struct ledger_res *res;
    size_t n_res;
    struct acc_map bookings; /* key -> struct ledger_entry */
    uint64_t rows_read;      /* by the syncs of a shared calendar */
};

/* Shared calendars (acc_ledger_store_shared): memory's bookings of
 * resource r, or booking key, made what the store holds now (another
 * process may have booked or cancelled).  Resource r reads only the rows
 * that changed since it last did (their change numbers above its seen);
 * whether holding the resource's lock or not, what it reads is every
 * change of the resource up to some number, in order (ledger_store.h), so
 * memory is what the store held at that number.  Nothing to do for a
 * file. */
acc_err ledger_sync_res_locked(struct acc_ledger *l, size_t r, struct acc_error *err);
acc_err ledger_sync_key_locked(struct acc_ledger *l, const char *key, struct acc_error *err);
/* Holding resource r in the store: removes its rows that ended long ago,
 * at most once an hour (nothing decides on them; a process that missed
 * their change keeps an ended booking in memory, which decides nothing). */
acc_err ledger_prune_held_locked(struct acc_ledger *l, size_t r, struct acc_error *err);

#endif
