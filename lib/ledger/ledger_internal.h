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
};

/* Shared calendars (acc_ledger_store_shared): memory's bookings of
 * resource r, or booking key, made what the store holds now (another
 * process may have booked or cancelled).  Nothing to do for a file. */
acc_err ledger_sync_res_locked(struct acc_ledger *l, size_t r, struct acc_error *err);
acc_err ledger_sync_key_locked(struct acc_ledger *l, const char *key, struct acc_error *err);

#endif
