/* SPDX-License-Identifier: Apache-2.0 */
/* ledger_store.h - the booking ledger's persistence (internal to
 * lib/ledger: adapters use ledger.h): its bookings and the days whose
 * background load a simulated site made, in a database of its own through
 * the SQL layer (lib/sql; its migrations in lib/ledger/migrations), not in
 * accordd's database: the core store knows nothing of ledgers.
 *
 * The file is the site's (or network's) `calendar` setting, or else
 * "<database>.sim-<name>" beside accordd's database (docs/adapters.md); a
 * database of ":memory:" gives an in-memory calendar.
 *
 * Writes are queued and committed in queue order by the SQL layer's writer
 * thread as soon as they are queued (group commit: one commit serves every
 * write queued meanwhile).
 * Queuing never touches the disk, so the ledger queues a write while it
 * holds its lock: the order of the writes is the order of the
 * changes in memory.  A reservation's write is waited for when the
 * reservation is verified (query), which the negotiation does before it
 * commits the agreement: a booking is in its file before any agreement that
 * uses it is committed in accordd's database, and meanwhile the commit
 * overlaps the rest of the negotiation's round.
 *
 * Thread-safe.  Only ledger_store.c knows SQL. */
#ifndef ACC_LEDGER_STORE_H
#define ACC_LEDGER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/timefmt.h"

struct acc_ledger_store;
struct acc_sql_ticket; /* a queued write someone waits for (lib/sql/sql_writer.h) */

struct acc_ledger_store_booking {
    const char *key;
    const char *resource;
    acc_time start, end;
    int64_t amount;
    const char *owner;
    /* read back from a shared calendar (else 0, false): the row's change
     * number, and whether it is a cancelled booking's tombstone (key,
     * resource and end only) */
    int64_t change;
    bool cancelled;
};

/* The calendar file of ledger `name`: `setting` when given, else beside
 * db_path.  Free *out. */
acc_err acc_ledger_store_path(const char *db_path, const char *name, const char *setting,
                              char **out, struct acc_error *err);

/* Opens (creating, migrating) the file; durable: an fsync at each commit;
 * snapshot: a copy of the file in memory instead (sql.h). */
acc_err acc_ledger_store_open(const char *path, bool durable, bool snapshot,
                              struct acc_ledger_store **out, struct acc_error *err);
/* Commits what is still queued, then closes.  NULL does nothing. */
void acc_ledger_store_close(struct acc_ledger_store *ss);

/* Queue bookings (with day >= 0 also marking that day's background load as
 * made), or the removal of one.  With w, *w must be given to
 * acc_ledger_store_wait; without, nobody waits and the write commits with the next
 * awaited one.  On failure nothing is queued. */
acc_err acc_ledger_store_put(struct acc_ledger_store *ss, const struct acc_ledger_store_booking *b,
                             size_t n, int64_t day, struct acc_sql_ticket **w,
                             struct acc_error *err);
acc_err acc_ledger_store_delete(struct acc_ledger_store *ss, const char *key,
                                struct acc_sql_ticket **w, struct acc_error *err);
/* Waits until w (and every write queued before it) is committed, and frees
 * w.  The write's result: when its commit failed, nothing of it is stored. */
acc_err acc_ledger_store_wait(struct acc_ledger_store *ss, struct acc_sql_ticket *w,
                              struct acc_error *err);

/* Gives up a write nobody will wait for: freed now if committed, else by
 * the committer.  NULL does nothing. */
void acc_ledger_store_forget(struct acc_ledger_store *ss, struct acc_sql_ticket *w);

/* Calls fn for every stored booking. */
acc_err acc_ledger_store_load(struct acc_ledger_store *ss,
                              acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                              void *ctx, struct acc_error *err);
/* ------------------------------------------------ shared calendars */

/* Whether the calendar is in a database server that other processes share
 * (PostgreSQL): then each write is made at once (acc_ledger_store_put and
 * _delete give no ticket), and the ledger reads back what changed on a
 * resource before it decides on it.
 *
 * Change numbers: every write of a booking there (a put, a cancel's
 * tombstone) takes the next number of one sequence inside a transaction
 * that holds the booking's resource's lock (pg_advisory_xact_lock) until it
 * commits: a write made outside acc_ledger_store_hold takes the locks
 * itself (of every resource it writes, in the order of their names; a
 * delete looks its key's resource up first).  So a resource's numbers
 * commit in the order they were taken, and whoever has seen number c of a
 * resource (holding the lock or not) has seen every lower one of it that
 * committed: reading only the rows above the highest number applied misses
 * nothing.  A key stays on the resource it was first stored for (a put
 * that would move it fails).  Rows and tombstones long ended are removed
 * under the lock too (acc_ledger_store_prune): no decision looks that far
 * back. */
bool acc_ledger_store_shared(const struct acc_ledger_store *ss);
/* The rows of resource whose change number is above after, tombstones too,
 * to fn in the order of their numbers; booking key (if stored). */
acc_err acc_ledger_store_changes(struct acc_ledger_store *ss, const char *resource, int64_t after,
                                 acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                                 void *ctx, struct acc_error *err);
acc_err acc_ledger_store_key(struct acc_ledger_store *ss, const char *key,
                             acc_err (*fn)(void *ctx, const struct acc_ledger_store_booking *b),
                             void *ctx, struct acc_error *err);
/* Opens a transaction holding resource's lock (pg_advisory_xact_lock) in
 * every process; reads and writes (of that resource only) go into it until
 * acc_ledger_store_let_go commits (commit) or rolls it back; *wrote (when
 * not NULL) is then the highest change number it committed, 0 for none.
 * One resource at a time. */
acc_err acc_ledger_store_hold(struct acc_ledger_store *ss, const char *resource,
                              struct acc_error *err);
acc_err acc_ledger_store_let_go(struct acc_ledger_store *ss, bool commit, int64_t *wrote,
                                struct acc_error *err);
/* Held: removes the rows and tombstones of the held resource that ended
 * before `before`. */
acc_err acc_ledger_store_prune(struct acc_ledger_store *ss, const char *resource, acc_time before,
                               struct acc_error *err);

acc_err acc_ledger_store_day_marked(struct acc_ledger_store *ss, int64_t day, bool *marked,
                                    struct acc_error *err);

#endif
