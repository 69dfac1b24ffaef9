/* SPDX-License-Identifier: Apache-2.0 */
/* store_internal.h - what the files of db/ share and nothing outside sees:
 * the statements' slots and the one write primitive.  Connections,
 * statements, the readers' pool and the group-commit writer are the SQL
 * layer's (lib/sql).
 *
 *   store.c            open and close (migrations, the writer and the WAL
 *                      bound), the one write primitive, flush and ping
 *   store_agreement.c  agreements and their allocation: writes
 *   store_agreement_read.c  ... and reads (one, lists, ids, counts)
 *   store_journal.c    the reservation journal
 *   store_trace.c      the negotiation trace (one packed row per version)
 *   store_run.c        launches (runs)
 *   store_run_hold.c   ... and which instance holds each (several instances)
 *   store_version.c    versions of a modified agreement
 *   store_quote.c      quotes and their held reservations
 *   store_prune.c      retention (what ended long ago goes, a user's oldest
 *                      Rejected ones) and backups
 *   store_usage.c      what a user or client address holds (the quotas'
 *                      node-hours and Mbit-hours)
 *   store_pack.c       long texts kept compressed
 *   store_instance.c   several instances: their rows, leases, orphans
 *
 * Internal names start with store_; no database library's type is seen
 * here (the SQL layer keeps them). */
#ifndef ACC_STORE_INTERNAL_H
#define ACC_STORE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/sql/sql.h"
#include "../lib/sql/sql_writer.h"
#include "store.h"

/* Every prepared statement has a slot in each connection's cache; its text
 * lives beside the code that runs it (struct acc_sql_query). */
enum stmt_id {
    S_AGR_INSERT,
    S_AGR_BY_IDEM,
    S_AGR_FREE_IDEM,
    S_AGR_GET,
    S_AGR_GET_OFFER,
    S_AGR_STATE,
    S_AGR_SETTLE,
    S_AGR_SET_STATE,
    S_AGR_SET_STATE_REASON,
    S_AGR_KEEP_SIGNATURE,
    S_AGR_COMPLETE_ENDED,
    S_AGR_COUNTS,
    S_AGR_IDS,
    S_COMP_DELETE,
    S_COMP_INSERT,
    S_COMP_GET,
    S_LINK_DELETE,
    S_LINK_INSERT,
    S_LINK_GET,
    S_TRACE_OWNER,
    S_TRACE_PACK_GET,
    S_TRACE_PACK_PUT,
    S_TRACE_GET,
    S_JOURNAL_PUT,
    S_JOURNAL_MOVE,
    S_JOURNAL_BY_AGR,
    S_JOURNAL_OPEN,
    S_RUN_INSERT,
    S_RUN_GET,
    S_RUN_UPDATE,
    S_RUN_OPEN,
    S_RUN_HOLDS,
    S_RUN_TAKE,
    S_PING,
    S_VER_STATE,
    S_VER_FLAG,
    S_VER_UNFLAG,
    S_VER_OUTCOME,
    S_VER_SNAPSHOT,
    S_VER_SNAP_COMP,
    S_VER_SNAP_LINK,
    S_VER_BUMP,
    S_VER_GET,
    S_VER_COMP_GET,
    S_VER_LINK_GET,
    S_VER_RECOVER,
    S_OWN_PENDING,
    S_OWN_MARKS,
    S_OWN_HOLDS,
    S_WRITE_PROBE,
    S_QUOTE_STATE,
    S_QUOTE_PUT,
    S_QUOTE_CLAIM,
    S_QUOTE_UNCLAIM,
    S_QUOTE_GET,
    S_QUOTE_DUE,
    S_QUOTE_COUNT,
    S_QUOTE_INTERRUPTED,
    S_QUOTE_ORPHAN_OF,
    S_PRUNE_PICK,
    S_PRUNE_JOURNAL,
    S_PRUNE_QUOTE_JOURNAL,
    S_PRUNE_QUOTES_OF,
    S_PRUNE_AGREEMENT,
    S_PRUNE_QUOTE_PICK,
    S_PRUNE_QUOTE,
    S_INST_BEAT,
    S_INST_FORGET,
    S_LEASE_TAKE,
    S_LEASE_HOLDER,
    S_ORPHANS,
    S_MINE_STOPPED,
    S_DEAD_MARKS,
    S_INST_LEAVE,
    S_LEASE_FREE,
    S_ORPHAN_OF,
    S__COUNT
};

/* A kind of write: the job the writer runs (and how it frees an argument
 * handed over), and how to make the caller's argument the store's own for
 * ACC_STORE_NOWAIT (the caller's may be gone before the writer runs).  A
 * write without copy can only be awaited. */
struct store_op {
    struct acc_sql_job job;
    void *(*copy)(const void *arg);
};

struct acc_store {
    struct acc_sql *db;
    struct acc_sql_writer *writer;
    char instance[ACC_ID_LEN + 1]; /* this accordd's, on a shared database ("": none) */
    /* The beat's connection (several instances): its row and the lease are
     * written there, each statement on its own (autocommit), never behind
     * the writer's batches nor holding the lease row for one. */
    struct acc_sql_conn *beat;
    pthread_mutex_t beat_lock;
};

/* The one write primitive: runs op->run(arg) in the writer's next group
 * commit.  Without ACC_STORE_NOWAIT it waits for the commit and returns the
 * write's own result; with it, it queues a copy of arg and returns at once
 * (a failure is logged).  Writes commit in the order they were queued. */
acc_err store_write(struct acc_store *st, const struct store_op *op, void *arg, unsigned flags,
                    struct acc_error *err);

/* ------------------------------------------- the database's clock */

/* The database's clock (seconds since the epoch) inside a statement: the
 * instances' rows (seen) and leases are written and judged by it, so that
 * every instance compares times of one clock and one set wrong misjudges
 * nobody (PostgreSQL: the server's; SQLite, one process: its own).  A time
 * of this process (alive_since) is bound as its age by this process's
 * clock (store_age) and compared as DB_NOW - age: the same instant on the
 * database's clock.  Each statement that does has two texts
 * (acc_sql_pick), one per dialect, in the same slot. */
#define DB_NOW_LITE "CAST(strftime('%s', 'now') AS INTEGER)"
#define DB_NOW_PG   "CAST(floor(extract(epoch FROM clock_timestamp())) AS BIGINT)"
static inline int64_t store_age(acc_time t)
{
    return acc_now() - t;
}

/* ------------------------------------------------- shared by the writes */

/* The current state of an agreement inside the writer's transaction. */
/* Whether the instance of agreement (or quote) id is still not seen since
 * alive_since: ACC_OK when it is dead, ACC_ERR_STATE when it is alive
 * again (store_instance.c). */
acc_err store_still_dead(struct acc_sql_conn *c, bool quote, const char *id, acc_time alive_since,
                         struct acc_error *err);
acc_err store_current_state(struct acc_sql_conn *c, const char *id, enum acc_state *out,
                            struct acc_error *err);
/* Moves an agreement to `to` if its state is in `from` (*was: the state
 * found); reason NULL keeps the stored one. */
acc_err store_transition(struct acc_sql_conn *c, const char *id, unsigned from, enum acc_state to,
                         const char *reason, enum acc_state *was, struct acc_error *err);
/* store_agreement.c: acc_store_agreement_settle inside a write transaction. */
acc_err store_agreement_settle_in(struct acc_sql_conn *c, const struct acc_agreement *a,
                                  unsigned from, const struct acc_trace *trace,
                                  const struct acc_booking *bookings, size_t n_bookings,
                                  struct acc_error *err);
acc_err store_journal_put_one(struct acc_sql_conn *c, const struct acc_booking *b, acc_time now,
                              struct acc_error *err);
/* The events are the given version's (0: the agreement's current one). */
acc_err store_trace_put(struct acc_sql_conn *c, const char *id, const struct acc_trace *t,
                        unsigned version, struct acc_error *err);
/* Replace the allocation rows of a->id with a's. */
acc_err store_write_components(struct acc_sql_conn *c, const struct acc_agreement *a,
                               struct acc_error *err);
acc_err store_write_links(struct acc_sql_conn *c, const struct acc_agreement *a,
                          struct acc_error *err);
/* store_pack.c: long texts (an offer, the launch descriptions) compressed
 * when that saves space.  Binds v (n bytes) packed, or as it is: as text
 * (text) or a blob.  Reads either form back as a malloc'd NUL-terminated
 * copy (NULL column: *out NULL); ACC_ERR_STORAGE for a damaged value. */
/* store_identity.c: an agreement's identity as its column's text
 * (malloc'd; NULL when it names no one or memory ran out; never the
 * token), and back (unknown lines skipped; ACC_ERR_NOMEM). */
char *store_identity_pack(const struct acc_identity *id);
acc_err store_identity_unpack(const char *text, struct acc_identity *out);

void store_bind_packed(struct acc_sql_stmt *s, const char *v, size_t n, bool text);
acc_err store_col_unpacked(struct acc_sql_stmt *s, int i, bool text, char **out, size_t *len);
/* The run of a settled agreement: its style and launch descriptions. */
acc_err store_run_insert(struct acc_sql_conn *c, const char *id, const struct acc_run *r,
                         struct acc_error *err);

#endif
