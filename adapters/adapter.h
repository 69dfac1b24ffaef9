/* SPDX-License-Identifier: Apache-2.0 */
/* adapter.h - the one interface behind which every resource manager sits.
 *
 * A batch system (sim-batch, slurm), a network reservation system
 * (sim-network) or a remote site daemon (remote) is reached through a table of
 * function pointers over opaque state, in the manner of SQLite's VFS: the
 * table starts with a version, new methods are only ever appended, the core
 * allocates the adapter's state from the declared size, and `control` is the
 * escape hatch that answers ACC_ERR_UNSUPPORTED for operations it does not
 * know.  Each adapter kind exports exactly one `const struct acc_adapter_ops`.
 *
 * Callers never call the table directly: they use the acc_adapter_* wrappers
 * below, which check capabilities, serialise adapters that are not
 * thread-safe, normalise what comes back (frames sorted, clipped, long
 * enough) and keep per-adapter statistics.
 *
 * Reservations are named by a key that Accord chooses (unique per attempt,
 * derived from the agreement id), so that a reservation whose outcome was
 * lost (time-out, crash) can still be found and cancelled by key alone.
 */
#ifndef ACC_ADAPTER_H
#define ACC_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/common/buf.h"
#include "../lib/common/error.h"
#include "../lib/common/kv.h"
#include "../lib/common/timefmt.h"
#include "../lib/model/model.h"
#include "../lib/model/reservation.h"

#define ACC_ADAPTER_OPS_VERSION 7

/* A link as configured, for network adapters. */
struct acc_link_def {
    const char *name;
    const char *site_a, *site_b;
    int64_t capacity; /* Mbit/s */
};

/* A command to run: its words and its whole environment ("NAME=value"),
 * each NULL-ended and malloc'd (acc_command_release). */
struct acc_command {
    char **argv;
    size_t argc;
    char **env;
    size_t n_env;
};

void acc_command_release(struct acc_command *c);

/* What the core hands an adapter when it opens. */
struct acc_adapter_env {
    const char *name;    /* instance name: the site or network name */
    const char *section; /* config section, for messages ("site caesar") */
    /* accordd's database file: adapters that keep state of their own keep
     * it in files beside it (or NULL; ":memory:": in memory) */
    const char *db_path;
    bool durable; /* [database] durable: their commits fsync too */
    /* Only looking (accordd --replay): an adapter that keeps a file works on
     * a copy of it, neither locking nor writing it, so that it can run
     * beside the accordd that owns the file (the simulators do). */
    bool snapshot;
    const struct acc_kv *settings;
    size_t n_settings;
    int64_t nodes;                    /* batch adapters: the configured node count */
    const struct acc_link_def *links; /* network adapters: the links they serve */
    size_t n_links;
};

/* A setting an adapter kind takes, with a value its check refuses (NULL:
 * any value is taken).  A name ending in '.' is a prefix (tc's
 * path.LINK.SITE). */
struct acc_adapter_setting {
    const char *name, *bad;
};

struct acc_adapter_ops {
    unsigned version; /* ACC_ADAPTER_OPS_VERSION */
    const char *kind; /* "sim-batch" */
    unsigned caps;
    size_t state_size;

    /* Opens the adapter in zeroed state of state_size bytes.  Unknown
     * settings are an error that names them. */
    acc_err (*open)(void *state, const struct acc_adapter_env *env, struct acc_error *err);
    /* Frees what open made; called once, after every call has returned, and
     * also after a failed open, on whatever that open left behind. */
    void (*close)(void *state);

    /* Free frames of at least `duration` for res within [from, until). */
    acc_err (*preview)(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err);
    /* Books res for [start, start + duration) under `key`.  The adapter may
     * book later than asked (its effective start goes into *out) or answer
     * ACC_ERR_BUSY when the resource is taken. */
    acc_err (*reserve)(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err);
    /* Reads a reservation back (verify).  ACC_ERR_NOT_FOUND when it is gone. */
    acc_err (*query)(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err);
    /* Removes a reservation.  Idempotent: an unknown key is success.
     * local_id may be NULL when only the key is known. */
    acc_err (*cancel)(void *state, const char *key, const char *local_id, struct acc_error *err);
    /* Starts a job inside a reservation (ACC_CAP_SUBMIT); may be NULL. */
    acc_err (*submit)(void *state, const struct acc_job *job, char *job_id, size_t job_id_len,
                      struct acc_error *err);
    /* Where a submitted job stands; a job the resource manager has forgotten
     * is done with an unknown status.  With submit. */
    acc_err (*job_status)(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err);
    /* Stops a submitted job; idempotent.  With submit. */
    acc_err (*job_cancel)(void *state, const char *job_id, struct acc_error *err);
    /* Is the resource manager reachable? */
    acc_err (*health)(void *state, struct acc_health *out);
    /* Adapter-specific operations (fault injection for simulators...).
     * Unknown operations: ACC_ERR_UNSUPPORTED.  May be NULL. */
    acc_err (*control)(void *state, const char *op, const struct acc_kv *args, size_t n_args,
                       struct acc_buf *reply, struct acc_error *err);
    /* Makes blocked calls return promptly (shutdown).  May be NULL. */
    void (*interrupt)(void *state);

    /* ---- version 2 (NSI: reserve books; provision hands over the data
     * plane's endpoints; the adapter activates the data plane by itself at
     * the reservation's start and removes it at its end or on cancel) */

    /* Hands over the endpoints of reservation key (ACC_CAP_PROVISION).
     * Idempotent: the same key with the same flow is success; a different
     * flow replaces it.  Unknown key: ACC_ERR_NOT_FOUND.  Returns once the
     * endpoints are durable. */
    acc_err (*provision)(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err);
    /* What became of it (ACC_CAP_PROVISION).  Unknown key: ACC_ERR_NOT_FOUND. */
    acc_err (*provision_status)(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err);

    /* ---- version 3 (changing a committed agreement, ACC_CAP_REPLACE: the
     * new version is booked while the old one stays booked) */

    /* As preview, counting the reservation old_key as free (an unknown
     * old_key, or one on another resource, counts for nothing). */
    acc_err (*preview_replacing)(void *state, const char *old_key, const struct acc_resource *res,
                                 acc_time from, acc_time until, int64_t duration,
                                 struct acc_frames *out, struct acc_error *err);
    /* As reserve, counting the reservation old_key's amount as available
     * over the overlap.  Both reservations then exist (over the overlap the
     * resource may be booked beyond its capacity) until the caller cancels
     * the old one (the change is committed) or the new one (it failed). */
    acc_err (*reserve_replacing)(void *state, const char *key, const char *old_key,
                                 const struct acc_resource *res, acc_time start, int64_t duration,
                                 struct acc_reservation *out, struct acc_error *err);

    /* ---- version 4 (adapters whose capabilities are known only once open:
     * remote ones, which serve whatever their site daemon serves) */

    /* Called once after a successful open; the instance's capabilities are
     * caps & instance_caps(state).  May be NULL: caps. */
    unsigned (*instance_caps)(void *state);

    /* ---- version 5 (calls that answer at once) */

    /* Whether a call made now could be slow to answer: one that waits on
     * another process or host, or on an armed fault.  The calls of an
     * adapter that answers false (it works on its memory and its own files
     * only) run on the negotiation's own thread, with no time limit and no
     * hand-over to the call pool.  May be NULL: any call may be slow. */
    bool (*may_block)(void *state);

    /* ---- version 6 (`--check-config` checks what a start checks) */

    /* Checks env's settings as open does, with the same code, touching
     * nothing outside (no file written, no daemon asked, no kernel state
     * changed; files may be looked at).  *key: the setting at fault, or
     * NULL for the section as a whole.  May be NULL: open's checks cannot
     * run apart from it, and only a start finds its problems. */
    acc_err (*check)(const struct acc_adapter_env *env, const char **key, struct acc_error *err);
    /* The settings the kind takes, ended by a NULL name (with check): a
     * setting check took that is not listed is refused, so that the list
     * is whole and a test can walk it.  May be NULL. */
    const struct acc_adapter_setting *settings;

    /* ---- version 7 (a job's processes through the batch system,
     * ACC_CAP_PROCESS) */

    /* The command that starts one process, job->executable with job->args,
     * on job->host inside the reservation job->local_id (key job->key),
     * through the batch system, in job->directory, ending by job->end
     * (Slurm: srun --reservation --nodelist -N1 -n1; Grid Engine: qsub
     * -sync y -ar -l h=HOST -b y).  The caller runs it, as the account
     * job->user (never root; the batch system takes the account from the
     * process that asks), and supervises it: the command lasts as long as
     * the process does, ends with its exit status, and stops it when it is
     * signalled.  Nothing is run here, so that each daemon keeps its own
     * way of watching what it started (accord-site's process groups and
     * records, Hydra's launcher in accordd). */
    acc_err (*process_command)(void *state, const struct acc_job *job, struct acc_command *out,
                               struct acc_error *err);
};

/* The compiled-in kinds, NULL-terminated. */
extern const struct acc_adapter_ops *const acc_adapter_kinds[];

const struct acc_adapter_ops *acc_adapter_kind_find(const char *kind);

/* ------------------------------------------------------ instances and calls */

struct acc_adapter;

/* Opens an instance of `ops` (see open above). */
acc_err acc_adapter_open(const struct acc_adapter_ops *ops, const struct acc_adapter_env *env,
                         struct acc_adapter **out, struct acc_error *err);
void acc_adapter_close(struct acc_adapter *ad);

/* Checks the settings of an instance of `ops` without opening it (see
 * check above); err starts with the section and the kind ("[site a]
 * adapter slurm: ..."), *key the setting at fault (NULL: the section).  ACC_OK for a kind
 * without check. */
acc_err acc_adapter_check(const struct acc_adapter_ops *ops, const struct acc_adapter_env *env,
                          const char **key, struct acc_error *err);

const char *acc_adapter_name(const struct acc_adapter *ad);
const char *acc_adapter_kind(const struct acc_adapter *ad);
bool acc_adapter_has(const struct acc_adapter *ad, unsigned cap);
/* Whether a call made now answers at once (see may_block above). */
bool acc_adapter_prompt(struct acc_adapter *ad);

/* The wrappers below translate and check; on failure err names the adapter. */
acc_err acc_adapter_preview(struct acc_adapter *ad, const struct acc_resource *res, acc_time from,
                            acc_time until, int64_t duration, struct acc_frames *out,
                            struct acc_error *err);
acc_err acc_adapter_reserve(struct acc_adapter *ad, const char *key, const struct acc_resource *res,
                            acc_time start, int64_t duration, struct acc_reservation *out,
                            struct acc_error *err);
acc_err acc_adapter_query(struct acc_adapter *ad, const char *key, const char *local_id,
                          struct acc_reservation *out, struct acc_error *err);
acc_err acc_adapter_cancel(struct acc_adapter *ad, const char *key, const char *local_id,
                           struct acc_error *err);
acc_err acc_adapter_submit(struct acc_adapter *ad, const struct acc_job *job, char *job_id,
                           size_t job_id_len, struct acc_error *err);
acc_err acc_adapter_job_status(struct acc_adapter *ad, const char *job_id,
                               struct acc_job_status *out, struct acc_error *err);
acc_err acc_adapter_job_cancel(struct acc_adapter *ad, const char *job_id, struct acc_error *err);
acc_err acc_adapter_health(struct acc_adapter *ad, struct acc_health *out);
acc_err acc_adapter_control(struct acc_adapter *ad, const char *op, const struct acc_kv *args,
                            size_t n_args, struct acc_buf *reply, struct acc_error *err);
void acc_adapter_interrupt(struct acc_adapter *ad);
/* Version 2; ACC_ERR_UNSUPPORTED when the adapter lacks ACC_CAP_PROVISION
 * (every version 1 table). */
acc_err acc_adapter_provision(struct acc_adapter *ad, const char *key, const char *local_id,
                              const struct acc_flow *flow, struct acc_error *err);
acc_err acc_adapter_provision_status(struct acc_adapter *ad, const char *key,
                                     struct acc_provision_status *out, struct acc_error *err);

/* Version 3.  With old_key (a reservation being replaced) and an adapter
 * with ACC_CAP_REPLACE, preview and reserve as if old_key's amount were
 * free; without either, plain preview and reserve (the old booking then
 * counts against the new one: a change overlapping it on the same resource
 * needs room for both). */
acc_err acc_adapter_preview_replacing(struct acc_adapter *ad, const char *old_key,
                                      const struct acc_resource *res, acc_time from, acc_time until,
                                      int64_t duration, struct acc_frames *out,
                                      struct acc_error *err);
acc_err acc_adapter_reserve_replacing(struct acc_adapter *ad, const char *key, const char *old_key,
                                      const struct acc_resource *res, acc_time start,
                                      int64_t duration, struct acc_reservation *out,
                                      struct acc_error *err);

/* Version 7; ACC_ERR_UNSUPPORTED when the adapter lacks ACC_CAP_PROCESS.
 * *out is zeroed first and holds nothing on failure. */
acc_err acc_adapter_process_command(struct acc_adapter *ad, const struct acc_job *job,
                                    struct acc_command *out, struct acc_error *err);

/* Counters since open, for /metrics and /sites. */
struct acc_adapter_stats {
    uint64_t calls, failures;
    int64_t busy_us;       /* total time spent inside the adapter */
    bool up;               /* its last call did not fail (true before any) */
    acc_time last_failure; /* the last failed call's end; 0: none yet */
};

void acc_adapter_stats(const struct acc_adapter *ad, struct acc_adapter_stats *out);

#endif
