/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.h - starts the meta-job of an Observed agreement at its start
 * and watches it to its end.
 *
 * Every committed agreement gets its launch descriptions (describe).  Those
 * with a launch style get a timer; at the start the job is run with
 * mpiexec.hydra under a small sh wrapper, in its own process group, in a
 * directory of its own that keeps the descriptions, the output (bounded) and
 * the exit status.  Components on sites with launch = sbatch go into their
 * reservation through the site's batch system instead (one batch job each),
 * and the job ends when every part has ended.  The hosts of sites with
 * launch = batch stay in the one mpiexec, and Hydra starts their proxies
 * through the site's batch system (launcher_process.c).  The job is stopped when its
 * reservation ends (SIGTERM `grace` before the end, then SIGKILL) or when
 * the agreement is terminated.
 *
 * The launcher knows nothing of the store.  It is handed what it needs as
 * plain data (the agreement with its allocation, and the run with its
 * descriptions and directory) and reports every change of a run through
 * hooks, as the engine reports through its hooks; the caller records them.
 * After a restart the caller hands it the runs that were open again: waiting
 * ones get their timers, and jobs that were running (they do not depend on
 * accordd) are watched again by process id and their status read from the
 * directory when they end.
 */
#ifndef ACC_LAUNCHER_H
#define ACC_LAUNCHER_H

#include <stdbool.h>

#include "../../adapters/adapter.h"
#include "../../lib/common/error.h"
#include "../config/config.h"
#include "../../lib/model/model.h"

struct acc_launcher;

/* Called from the launcher's own threads, never under its lock.  run is
 * borrowed for the call: copy what is kept. */
struct acc_launcher_hooks {
    void *ctx;
    /* Asked just before a job starts: ACC_OK when it may.  ACC_ERR_STATE,
     * with the reason in err, when its agreement no longer wants it
     * (terminated meanwhile): the run ends terminated, nothing started.  Any
     * other error leaves the run as it was handed over (it is handed over
     * again after a restart); ACC_ERR_BUSY says so quietly (several
     * instances: another one holds the run, or its start moved and it is
     * handed over again).  May be NULL: every job may start. */
    acc_err (*may_start)(void *ctx, const char *agreement, struct acc_error *err);
    /* The job started: run->state is running, with started, pid, pid_start,
     * command and the batch parts set. */
    void (*started)(void *ctx, const struct acc_run *run);
    /* The job of run->agreement ended (or will never start); run->state is
     * final and run holds everything to record, its output too.  reason
     * says it in words for the agreement. */
    void (*ended)(void *ctx, const struct acc_run *run, const char *reason);
    /* The batch system of a site (launch = sbatch): submit a component into
     * its reservation, ask where a job stands, stop it.  Needed only when a
     * site has launch = sbatch. */
    acc_err (*submit)(void *ctx, const char *site, const struct acc_job *job, char *job_id,
                      size_t job_id_len, struct acc_error *err);
    acc_err (*job_status)(void *ctx, const char *site, const char *job_id,
                          struct acc_job_status *out, struct acc_error *err);
    acc_err (*job_cancel)(void *ctx, const char *site, const char *job_id, struct acc_error *err);
    /* The command that starts one process on job->host of a site with
     * launch = batch through its batch system (the adapter's
     * process_command).  Needed only when a site has launch = batch. */
    acc_err (*process_command)(void *ctx, const char *site, const struct acc_job *job,
                               struct acc_command *out, struct acc_error *err);
};

/* The jobs' directories go under [launch] directory, or accord-jobs beside
 * cfg->db_path.  cfg must outlive the launcher. */
acc_err acc_launcher_new(const struct acc_config *cfg, const struct acc_launcher_hooks *hooks,
                         struct acc_launcher **out, struct acc_error *err);
/* Stops the launcher's threads.  Jobs that run keep running: the next
 * start of accordd watches them again. */
void acc_launcher_free(struct acc_launcher *l);

/* Gives a committed agreement (state, start, end and allocation set) its
 * launch descriptions in a->run: waiting when it has a launch style and
 * launching is enabled, described otherwise, failed (with the reason) when
 * its hosts cannot be resolved. */
acc_err acc_launcher_describe(struct acc_launcher *l, struct acc_agreement *a,
                              struct acc_error *err);

/* Starts the job of a waiting run r of the committed agreement a (a->run
 * from describe) at a->start, at once if the start has passed.  The
 * launcher copies what it needs (a's id, state, start, end and components;
 * r without its output); a and r stay the caller's.  Nothing happens when
 * it already holds the agreement; out of memory is logged and the run waits
 * for the next restart. */
void acc_launcher_schedule(struct acc_launcher *l, const struct acc_agreement *a,
                           const struct acc_run *r);

/* After a restart: one run that was open (waiting or running) as it was
 * recorded, with its agreement.  A waiting run is scheduled; a running one
 * is watched again by process id (and stopped at once when a is no longer
 * Observed); what they become is reported through the hooks. */
void acc_launcher_resume_run(struct acc_launcher *l, const struct acc_agreement *a,
                             const struct acc_run *r);

/* For terminate: cancels the timer, or stops the job and waits until it is
 * gone (at most grace + a few seconds); the run ends as terminated.  False
 * when the launcher had nothing for id. */
bool acc_launcher_stop(struct acc_launcher *l, const char *id);

/* A modified agreement's new times (acc_launcher_retime's answer). */
enum acc_launcher_held { ACC_LAUNCHER_NONE, ACC_LAUNCHER_HELD_WAITING, ACC_LAUNCHER_HELD_RUNNING };

/* For a modified agreement: a waiting job's start timer moves to start and
 * its end to end; a running job is stopped `grace` before the new end
 * instead of the old (start is ignored).  Returns what the launcher held
 * for id (nothing changes for NONE). */
enum acc_launcher_held acc_launcher_retime(struct acc_launcher *l, const char *id, acc_time start,
                                           acc_time end);
/* What the launcher holds for id now. */
enum acc_launcher_held acc_launcher_held(struct acc_launcher *l, const char *id);

/* What a running job has written so far (its mpiexec part's output file,
 * at most output_limit bytes); NULL when there is none yet.  free() it. */
char *acc_launcher_output_so_far(struct acc_launcher *l, const struct acc_run *r, size_t *len);

/* Runs waiting and running, for metrics. */
void acc_launcher_counts(struct acc_launcher *l, unsigned *waiting, unsigned *running);

#endif
