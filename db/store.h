/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - accordd's database: agreements, allocations, the reservation
 * journal, negotiation traces, launches, versions and quotes.  (The booking
 * ledgers of the simulated sites and tc keep their calendars in files of
 * their own: lib/ledger.)
 *
 * Through the SQL layer (lib/sql): one file, WAL mode, the migrations of
 * db/migrations applied at open.  Writes go through the layer's writer
 * thread, which groups the writes queued by concurrent requests into one
 * transaction (group commit), so durable commits (fsync) are shared instead
 * of paid per request.  Each write still succeeds or fails
 * on its own (a savepoint each).  Reads use a pool of connections, one per
 * thread at a time.  Prepared statements never leave this module.
 *
 * The write-ahead log is bounded: past half of wal_limit the writer resets
 * it with a full (TRUNCATE) checkpoint between two group commits, and past
 * the limit it holds further writes until that succeeds; so the -wal file
 * exceeds the limit by at most one group commit.  docs/operations.md.
 */
#ifndef ACC_STORE_H
#define ACC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/common/error.h"
#include "../lib/model/model.h"

struct acc_store;

struct acc_store_options {
    const char *path;
    bool durable;      /* synchronous=FULL (fsync at every commit) vs NORMAL */
    unsigned readers;  /* most read connections at once (0: a default) */
    int64_t wal_limit; /* bytes the -wal file may reach (0: 64 MiB) */
};

/* Flags of the write functions.  Without ACC_STORE_NOWAIT a write returns
 * when it is committed (durable with `durable`), with its own result.  With
 * it, the write is queued and the call returns at once; a failure is only
 * logged.  Writes commit in the order they were made, so a queued write is
 * committed no later than any write awaited after it (acc_store_flush waits
 * for all of them). */
enum { ACC_STORE_NOWAIT = 1u << 0 };

acc_err acc_store_open(const struct acc_store_options *opt, struct acc_store **out,
                       struct acc_error *err);
void acc_store_close(struct acc_store *st);

/* ------------------------------------------------------------- agreements */

/* Inserts a new agreement (state, offer, window).  With an idempotency key
 * that was seen before nothing is written, *duplicate is set and existing
 * receives the first agreement's id.  ACC_STORE_NOWAIT (only without a key:
 * ACC_ERR_INVALID otherwise) suits a negotiation that follows at once, whose
 * first awaited write makes the agreement durable too. */
acc_err acc_store_agreement_create(struct acc_store *st, const struct acc_agreement *a,
                                   const char *idem_key, unsigned flags, bool *duplicate,
                                   char existing[ACC_ID_LEN + 1], struct acc_error *err);

/* Reads one agreement with its allocation; the offer document only when
 * with_offer.  ACC_ERR_NOT_FOUND for an unknown id. */
acc_err acc_store_agreement_get(struct acc_store *st, const char *id, bool with_offer,
                                struct acc_agreement *out, struct acc_error *err);

/* Writes the outcome of a negotiation in one transaction: state, times,
 * counters, reason, the allocation rows, the trace events, and the journal
 * entries given (typically their final states).  Only applies while the
 * stored state is one of `from` (a bit per enum acc_state); otherwise
 * ACC_ERR_STATE and nothing changes. */
acc_err acc_store_agreement_settle(struct acc_store *st, const struct acc_agreement *a,
                                   unsigned from, const struct acc_trace *trace,
                                   const struct acc_booking *bookings, size_t n_bookings,
                                   struct acc_error *err);

/* Keeps sig (lib/dsig's bytes) as the signature of the document of
 * agreement id as of `updated` (its updated time): written unawaited, and
 * only while the agreement is still as of then, so that a signature of an
 * older document never replaces a newer one's. */
acc_err acc_store_agreement_keep_signature(struct acc_store *st, const char *id, acc_time updated,
                                           const void *sig, size_t len, struct acc_error *err);

/* Moves an agreement to state `to` if its state is one of `from`; *was
 * receives the state found.  ACC_ERR_STATE when it is not in `from`.
 * reason may be NULL (kept as it is). */
acc_err acc_store_agreement_transition(struct acc_store *st, const char *id, unsigned from,
                                       enum acc_state to, const char *reason, enum acc_state *was,
                                       struct acc_error *err);

#define ACC_STATE_BIT(s) (1u << (s))

/* Newest first, with allocations, without offers. */
acc_err acc_store_agreement_list(struct acc_store *st, const struct acc_list_filter *f,
                                 struct acc_agreement_list *out, struct acc_error *err);

/* Ids of the agreements in any of the states (a bit per state). */
acc_err acc_store_agreement_ids(struct acc_store *st, unsigned states, char (**ids)[ACC_ID_LEN + 1],
                                size_t *n, struct acc_error *err);

/* Observed agreements whose end passed become Complete; *count of them. */
acc_err acc_store_agreement_complete_ended(struct acc_store *st, acc_time now, unsigned *count,
                                           struct acc_error *err);

/* Count of agreements per state, for metrics (counts[ACC_STATE__COUNT]). */
acc_err acc_store_agreement_counts(struct acc_store *st, uint64_t *counts, struct acc_error *err);

/* The events of the current version's negotiation (or modification). */
acc_err acc_store_trace_get(struct acc_store *st, const char *id, struct acc_trace *out,
                            struct acc_error *err);
/* Those of one version (0: the current one); none for an unknown version. */
acc_err acc_store_trace_get_version(struct acc_store *st, const char *id, unsigned version,
                                    struct acc_trace *out, struct acc_error *err);

/* --------------------------------------------------------------- versions
 * (store_version.c, migration 0006).  A modification of an Observed
 * agreement: begin marks it (one at a time; housekeeping leaves the
 * reservations of a marked agreement alone), then commit or abort. */

/* Marks an Observed agreement as being modified by the modification
 * numbered mark (in [1, INT32_MAX], its own: a mark is cleared only by
 * the number that set it); *version receives its current version.
 * ACC_ERR_STATE (and nothing changes) when it is not Observed or another
 * modification is under way, with the reason. */
acc_err acc_store_modify_begin(struct acc_store *st, const char *id, int64_t mark,
                               unsigned *version, struct acc_error *err);
/* Clears the mark if it is still mark (the modification failed; nothing
 * else changes); *cleared (may be NULL) says whether it was. */
acc_err acc_store_modify_abort(struct acc_store *st, const char *id, int64_t mark, bool *cleared,
                               struct acc_error *err);
/* In one transaction, only while the agreement is still Observed, marked
 * with mark and at version `version` (else ACC_ERR_STATE, nothing
 * changes): keeps the current version as it is (its times and allocation)
 * with `change`, writes a's start, end, counters and allocation as
 * version + 1, the trace as that version's, and the journal entries given;
 * clears the mark. */
acc_err acc_store_modify_commit(struct acc_store *st, const struct acc_agreement *a,
                                unsigned version, int64_t mark, const char *change,
                                const struct acc_trace *trace, const struct acc_booking *bookings,
                                size_t n_bookings, struct acc_error *err);
/* Whether the commit of modification mark from `version` with `change`
 * was made, read back after the answer of its commit was lost: version + 1
 * exists with that change and the mark is gone. */
acc_err acc_store_modify_outcome(struct acc_store *st, const char *id, unsigned version,
                                 int64_t mark, const char *change, bool *committed,
                                 struct acc_error *err);
/* At start-up: no modification runs; clears every mark (the sweep then
 * cancels what a cut-short one had booked). */
acc_err acc_store_modify_recover(struct acc_store *st, struct acc_error *err);
/* ------------------------------------------------- unfinished work
 * (store_settle.c).  What this process (its instance; on a file, the one
 * process) left unfinished when a write failed and it lived on: rows last
 * changed before `before`, each with its id (and a modification's mark).
 * The service leaves out what it works on now and settles the rest. */
struct acc_store_own {
    char id[ACC_ID_LEN + 1];
    int64_t mark; /* acc_store_own_marks: the modification's number */
};
/* Its agreements still Pending or PendingAndTerminating. */
acc_err acc_store_own_pending(struct acc_store *st, acc_time before, struct acc_store_own **out,
                              size_t *n, struct acc_error *err);
/* Its marks of modifications (acc_store_modify_begin). */
acc_err acc_store_own_marks(struct acc_store *st, acc_time before, struct acc_store_own **out,
                            size_t *n, struct acc_error *err);
/* Its Advisory quotes with journal entries: holds it was booking (at most
 * 1000 at a time). */
acc_err acc_store_own_holds(struct acc_store *st, acc_time before, struct acc_store_own **out,
                            size_t *n, struct acc_error *err);

/* One version of an agreement (0: the current one): the agreement with that
 * version's times and allocation; out->versions the current version.
 * ACC_ERR_NOT_FOUND for an unknown id or version. */
acc_err acc_store_agreement_get_version(struct acc_store *st, const char *id, unsigned version,
                                        bool with_offer, struct acc_agreement *out,
                                        struct acc_error *err);

/* ---------------------------------------------------------------- quotes */

/* Writes the quote (a new one, or its new state) and the journal entries
 * given, in one transaction.  from (a bit per enum acc_quote_state): 0 for
 * a new quote, else the stored state must be one of them (ACC_ERR_STATE,
 * nothing written, otherwise; ACC_ERR_NOT_FOUND for an unknown id). */
acc_err acc_store_quote_put(struct acc_store *st, const struct acc_quote *q, unsigned from,
                            const struct acc_booking *bookings, size_t n_bookings,
                            struct acc_error *err);
/* An Advisory quote whose hold was cut short while booking, written as q
 * (Rejected).  With alive_since (not 0) it is a dead instance's, and is
 * written only if that instance is still not seen since then, judged again
 * inside the write: one whose beat came back keeps its hold (ACC_ERR_STATE,
 * as for a quote that moved on). */
acc_err acc_store_quote_end_orphan(struct acc_store *st, const struct acc_quote *q,
                                   acc_time alive_since, struct acc_error *err);
/* A commit of a held quote (POST /agreements?quote=), one transaction: the
 * quote (state Committed, agreement set) from Held and claimed by a, its
 * bookings (the held entries, now a's committed ones), and a settled from
 * Pending with its trace.  ACC_ERR_STATE (nothing written) when the quote
 * is no longer Held or claimed by a, or a is no longer Pending. */
acc_err acc_store_quote_commit(struct acc_store *st, const struct acc_quote *q,
                               const struct acc_agreement *a, const struct acc_trace *trace,
                               const struct acc_booking *bookings, size_t n_bookings,
                               struct acc_error *err);
/* claim: a Held quote no request is committing is marked as being committed
 * as the agreement (ACC_ERR_STATE otherwise: exactly one request wins);
 * !claim: that mark is taken off again (a commit that did not happen). */
acc_err acc_store_quote_claim(struct acc_store *st, const char *id, const char *agreement,
                              bool claim, struct acc_error *err);
/* One quote with its options, allocation and offer; ACC_ERR_NOT_FOUND. */
acc_err acc_store_quote_get(struct acc_store *st, const char *id, struct acc_quote *out,
                            struct acc_error *err);
/* Ids of the open quotes (Advisory, Held) whose hold_until is <= now
 * (at most 1000, the earliest first). */
acc_err acc_store_quote_due(struct acc_store *st, acc_time now, char (**ids)[ACC_ID_LEN + 1],
                            size_t *n, struct acc_error *err);
/* Ids of the Advisory quotes that have journal entries (at most 1000, the
 * oldest first): their hold was being booked.  At start-up, when nothing
 * books, each is one a stop cut short; the open-journal query leaves their
 * entries alone until the quote is no longer Advisory.  On a shared
 * database only those of instances not seen since alive_since (or of
 * none): a dead instance's (on a file every quote is of none). */
acc_err acc_store_quote_interrupted(struct acc_store *st, acc_time alive_since,
                                    char (**ids)[ACC_ID_LEN + 1], size_t *n, struct acc_error *err);
/* Open quotes (Advisory, Held): the initiator's, those from client (an
 * address; NULL: none counted) and all. */
struct acc_quote_count {
    uint64_t mine, client, all;
};
acc_err acc_store_quote_count(struct acc_store *st, const char *initiator, const char *client,
                              struct acc_quote_count *out, struct acc_error *err);

/* ------------------------------------------------------- what a user holds
 * (store_usage.c) */

/* Whose agreements and quotes: an initiator's, or (initiator NULL) those
 * that came from a client address; both NULL: everyone's. */
struct acc_store_owner {
    const char *initiator;
    const char *client;
};

/* One reservation an owner holds: of an open agreement (committed) or a
 * held quote. */
struct acc_usage_row {
    char id[ACC_ID_LEN + 1]; /* the agreement's or quote's */
    enum acc_resource_kind kind;
    char resource[128]; /* the site (nodes) or the link (bandwidth) */
    int64_t amount;
    acc_time start, end;
};

/* The reservations the owner's Observed (and ObservedAndTerminating)
 * agreements have committed and its Held quotes hold, that end after now:
 * a malloc'd array (free it). */
acc_err acc_store_usage(struct acc_store *st, const struct acc_store_owner *o, acc_time now,
                        struct acc_usage_row **out, size_t *n, struct acc_error *err);

/* ---------------------------------------------------------------- journal */

/* Inserts or updates journal entries (by key), all in one transaction.
 * ACC_STORE_NOWAIT suits states whose loss in a crash recovery tolerates
 * (outcomes: cancelling by key works without the local id). */
acc_err acc_store_journal_put(struct acc_store *st, const struct acc_booking *b, size_t n,
                              unsigned flags, struct acc_error *err);

/* Waits until every write queued so far is committed. */
acc_err acc_store_flush(struct acc_store *st, struct acc_error *err);

/* Entries of one agreement (agreement != NULL), or every open entry
 * (intent, reserved, unknown, cancel-failed) of the agreements that are not
 * being negotiated (not Pending): what is left over and must be cancelled.
 * Free *out. */
acc_err acc_store_journal_get(struct acc_store *st, const char *agreement, struct acc_booking **out,
                              size_t *n, struct acc_error *err);

/* -------------------------------------------------------------------- runs */

/* The launch of an agreement (written by acc_store_agreement_settle with
 * a->run); the output only when with_output.  ACC_ERR_NOT_FOUND when the
 * agreement has none. */
acc_err acc_store_run_get(struct acc_store *st, const char *id, bool with_output,
                          struct acc_run *out, struct acc_error *err);

/* Records where the run stands (everything but style and descriptions). */
acc_err acc_store_run_update(struct acc_store *st, const struct acc_run *r, struct acc_error *err);

/* The same, and in the same transaction moves the agreement to `to` if its
 * state is one of `from` (as acc_store_agreement_transition); when it is
 * not, ACC_ERR_STATE and nothing changes. */
acc_err acc_store_run_finish(struct acc_store *st, const struct acc_run *r, unsigned from,
                             enum acc_state to, const char *reason, enum acc_state *was,
                             struct acc_error *err);

/* Ids of the agreements whose run is waiting or running, earliest start
 * first.  Free *ids. */
acc_err acc_store_run_open(struct acc_store *st, char (**ids)[ACC_ID_LEN + 1], size_t *n,
                           struct acc_error *err);

/* -------------------------------------------- retention and backups
 * (store_prune.c) */

/* One batch of retention ([database] retain): the agreements that ended
 * (Complete, Terminated, Rejected) and were last changed before `before`,
 * at most `limit` of them, go with everything
 * that is theirs: allocation, trace, versions, run, journal entries, the
 * quote they were committed from, and their idempotency key.  Never one
 * being modified, one whose run is waiting or running, or one with a
 * journal entry still open (a reservation housekeeping must cancel yet).
 * Ended quotes (neither Advisory nor Held) changed before `before` whose
 * agreement is gone or that have none go too, with their journal entries.
 * One write of the writer: it holds other writes only that long. */
struct acc_store_prune {
    acc_time before;
    unsigned limit;
    /* out */
    unsigned agreements, quotes;
    /* the job directories of the pruned agreements' runs (a path whose
     * last part is the agreement's id), for the caller to remove */
    char **directories;
    size_t n_directories;
};
acc_err acc_store_prune(struct acc_store *st, struct acc_store_prune *p, struct acc_error *err);
/* Frees the directories (the rest of p stays). */
void acc_store_prune_release(struct acc_store_prune *p);

/* [database] max_rejected_per_user: of the owner's Rejected agreements
 * the newest `keep` stay; older ones go (at most 256 in one call, the
 * oldest first) with everything that is theirs, as retention deletes,
 * their idempotency key too.  One with a journal entry still open is left
 * for a later call.  *deleted: how many went. */
acc_err acc_store_prune_rejected(struct acc_store *st, const struct acc_store_owner *o,
                                 unsigned keep, unsigned *deleted, struct acc_error *err);

/* A whole, consistent copy of the database into the new file dest while it
 * serves on: a file's copy (sql.h's acc_sql_backup), or a server's dump
 * (acc_sql_dump, pg_dump's custom format); *agreements is the number of
 * agreements in the copy. */
acc_err acc_store_backup(struct acc_store *st, const char *dest, int64_t *agreements,
                         struct acc_error *err);

/* ------------------------------------------------------------------ health */

/* A cheap read, for /healthz. */
acc_err acc_store_ping(struct acc_store *st, struct acc_error *err);
/* Whether writes fail for the database's sake (it is away, its disk is
 * full) and none went through since: *for_us how long, msg why. */
bool acc_store_writes_failing(struct acc_store *st, int64_t *for_us, char *msg, size_t len);
/* A small write, to learn whether writes go through again (one row of the
 * lease table, which no lease uses). */
acc_err acc_store_write_probe(struct acc_store *st, struct acc_error *err);

/* ------------------------------------------ several instances (PostgreSQL) */

/* Whether other accordd may share the database (PostgreSQL). */
bool acc_store_shared(const struct acc_store *st);
/* This accordd's instance id (ACC_ID_LEN characters): the agreements it
 * negotiates name it from now on.  NULL: none. */
void acc_store_set_instance(struct acc_store *st, const char *id);
const char *acc_store_instance(const struct acc_store *st);
/* Times of instances and leases are the database's: every statement below
 * reads its clock (PostgreSQL's clock_timestamp()) itself, and a time
 * passed in (alive_since, forget_before) is of this process's clock and is
 * turned into the database's by its age (now - t here, the database's now
 * minus that there), so that an instance whose clock is wrong misjudges
 * neither the others nor itself. */
/* This instance's row: seen now by the database's clock (made with host,
 * pid and started the first time); with forget_before, rows of instances
 * not seen since then go. */
acc_err acc_store_instance_beat(struct acc_store *st, const char *host, int64_t pid,
                                acc_time started, acc_time forget_before, struct acc_error *err);
/* How far this process's clock is from the database's: *offset_us, the
 * database's time minus this clock's at the middle of the round trip that
 * read it (*rtt_us, its length), on the beat's connection.  On a file
 * (SQLite, one process, one clock) 0 and 0, without a statement. */
acc_err acc_store_clock(struct acc_store *st, int64_t *offset_us, int64_t *rtt_us,
                        struct acc_error *err);
/* This instance stops: its leases are free at once and it counts as dead
 * (the leader takes its runs at its next beat instead of after the
 * lease). */
acc_err acc_store_instance_leave(struct acc_store *st, struct acc_error *err);
/* Takes lease `name` for this instance for `seconds` from now by the
 * database's clock when it is free or expired (by that clock), or renews
 * it when this instance holds it; *held: whether it holds it now. */
acc_err acc_store_lease(struct acc_store *st, const char *name, int64_t seconds, bool *held,
                        struct acc_error *err);
/* Agreements being negotiated by an instance not seen since alive_since
 * (or by none that said so): a dead instance's, to be ended. */
acc_err acc_store_orphans(struct acc_store *st, acc_time alive_since, char (**ids)[ACC_ID_LEN + 1],
                          size_t *n, struct acc_error *err);
/* Settles a negotiation nobody runs any more (as a->state, from Pending or
 * PendingAndTerminating, like acc_store_agreement_settle).  With
 * alive_since (not 0) it is a dead instance's, and is settled only if that
 * instance is still not seen since then, judged again inside the write,
 * after the agreement's row is taken: an instance whose beat came back
 * since the orphans were listed keeps its negotiation (ACC_ERR_STATE, as
 * for an agreement that moved on). */
acc_err acc_store_agreement_end_orphan(struct acc_store *st, const struct acc_agreement *a,
                                       acc_time alive_since, struct acc_error *err);
/* Agreements this instance negotiates that another one was asked to
 * terminate (PendingAndTerminating). */
acc_err acc_store_stopped_here(struct acc_store *st, char (**ids)[ACC_ID_LEN + 1], size_t *n,
                               struct acc_error *err);
/* An open run (waiting or running) as the instances see it: its
 * agreement's state and times, and who holds its timer or job. */
struct acc_store_run_hold {
    char id[ACC_ID_LEN + 1]; /* the agreement's */
    enum acc_state state;
    acc_time start, end;
    enum acc_run_state run;
    bool mine;      /* held by this instance */
    char host[256]; /* the holder's host ("" when none or unknown) */
};
/* The open runs this instance holds, and those no live instance holds
 * (none, or one not seen since alive_since): the beat's list.  free() *out. */
acc_err acc_store_run_holds(struct acc_store *st, acc_time alive_since,
                            struct acc_store_run_hold **out, size_t *n, struct acc_error *err);
/* Takes the open run of id for this instance when this instance holds it
 * already or no live instance does; *taken: whether this instance holds it
 * now.  On a file (one accordd) it is always taken. */
acc_err acc_store_run_take(struct acc_store *st, const char *id, acc_time alive_since, bool *taken,
                           struct acc_error *err);
/* Clears the marks of modifications (acc_store_modify_begin) made by an
 * instance not seen since alive_since (*cleared: how many): the journal's
 * sweep then releases what they booked; the agreements keep their version. */
acc_err acc_store_modify_orphans(struct acc_store *st, acc_time alive_since, size_t *cleared,
                                 struct acc_error *err);
#endif
