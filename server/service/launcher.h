/* launcher.h - starts the meta-job of an Observed agreement at its start
 * and watches it to its end (part of the service).
 *
 * Every committed agreement gets its launch descriptions (describe).  Those
 * with a launch style get a timer; at the start the job is run with * mpiexec.hydra under a small
 * sh wrapper, in its own process group, in a directory of its own that keeps the descriptions, the
 * output (bounded) and the exit status.  Components on sites with launch = sbatch go into their
 * reservation through the site's batch system instead (one batch job each),
 * and the job ends when every part has ended.  The job is stopped when its reservation ends
 * (SIGTERM `grace` before the end, then SIGKILL) or when the agreement is terminated.
 *
 * Everything the launcher knows is in the store, so a restart loses
 * nothing: waiting runs get their timers again, and jobs that were running
 * (they do not depend on accordd) are watched again by process id and
 * their status read from the directory when they end.
 */
#ifndef ACC_LAUNCHER_H
#define ACC_LAUNCHER_H

#include <stdbool.h>

#include "../../adapters/adapter.h"
#include "../../db/store.h"
#include "../common/error.h"
#include "../config/config.h"
#include "../model/model.h"

struct acc_launcher;

struct acc_launcher_hooks {
    void *ctx;
    /* The job of run->agreement ended; run->state is final and run holds
     * everything to record.  reason says it in words for the agreement.
     * Called from the launcher's own threads. */
    void (*ended)(void *ctx, const struct acc_run *run, const char *reason);
    /* The batch system of a site (launch = sbatch): submit a component into
     * its reservation, ask where a job stands, stop it. */
    acc_err (*submit)(void *ctx, const char *site, const struct acc_job *job, char *job_id,
                      size_t job_id_len, struct acc_error *err);
    acc_err (*job_status)(void *ctx, const char *site, const char *job_id,
                          struct acc_job_status *out, struct acc_error *err);
    acc_err (*job_cancel)(void *ctx, const char *site, const char *job_id, struct acc_error *err);
};

acc_err acc_launcher_new(const struct acc_config *cfg, struct acc_store *st,
                         const struct acc_launcher_hooks *hooks, struct acc_launcher **out,
                         struct acc_error *err);
/* Stops the launcher's threads.  Jobs that run keep running: the next
 * start of accordd watches them again. */
void acc_launcher_free(struct acc_launcher *l);

/* Gives a committed agreement (state, start, end and allocation set) its
 * launch descriptions in a->run: waiting when it has a launch style and
 * launching is enabled, described otherwise, failed (with the reason) when
 * its hosts cannot be resolved. */
acc_err acc_launcher_describe(struct acc_launcher *l, struct acc_agreement *a,
                              struct acc_error *err);

/* After a restart: timers for the waiting runs, watchers for running jobs. */
acc_err acc_launcher_resume(struct acc_launcher *l, struct acc_error *err);

/* Starts the job of agreement id at start (at once if start has passed). */
void acc_launcher_schedule(struct acc_launcher *l, const char *id, acc_time start, acc_time end);

/* For terminate: cancels the timer, or stops the job and waits until it is
 * gone (at most grace + a few seconds); the run ends as terminated.  False
 * when the launcher had nothing for id. */
bool acc_launcher_stop(struct acc_launcher *l, const char *id);

/* What a running job has written so far (its mpiexec part's output file,
 * at most output_limit bytes); NULL when there is none yet.  free() it. */
char *acc_launcher_output_so_far(struct acc_launcher *l, const struct acc_run *r, size_t *len);

/* Runs waiting and running, for metrics. */
void acc_launcher_counts(struct acc_launcher *l, unsigned *waiting, unsigned *running);

#endif
