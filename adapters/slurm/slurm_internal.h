/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_internal.h - what the files of the slurm adapter share; nothing
 * outside adapters/slurm/ includes it.
 *
 *   slurm.c      the adapter's operations (the one exported
 *                acc_slurm_ops), its settings, open and close
 *   slurm_cmd.c  running Slurm's commands (through adapters/batch: SLURM_CONF,
 *                TZ=UTC, a time limit; epoch times), classifying their
 *                failures by Slurm's messages, and reading their outputs
 *   avail.c      the free frames from node states and busy intervals
 *
 * Internal names start with slurm_. */
#ifndef ACC_SLURM_INTERNAL_H
#define ACC_SLURM_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../lib/common/proc.h"
#include "../adapter.h"
#include "../batch/batch.h"
#include "avail.h"

struct slurm {
    struct acc_batch b; /* the site's name, bin_dir, timeout, SLURM_CONF */
    char *conf;         /* SLURM_CONF, or NULL for Slurm's default */
    char *partition;    /* or NULL: the cluster's default */
    char *users;        /* Users= of the reservations without an account */
    char *accounts;     /* Accounts= of every reservation, when set */
};

/* Runs a Slurm command; *r holds its output whatever its exit code.  Fails
 * only when it could not run or timed out.  epoch: times in epoch seconds. */
acc_err slurm_run(struct slurm *s, const char *cmd, const char *const *args, bool epoch,
                  const char *input, struct acc_proc_result *r, struct acc_error *err);

/* Maps a failed command to an error code by Slurm's message, and sets err
 * ("site NAME: what: message"). */
acc_err slurm_classify(struct slurm *s, const char *what, const struct acc_proc_result *r,
                       struct acc_error *err);

/* The value of key=value in a one-line Slurm record, copied; NULL if absent. */
char *slurm_field(const char *line, const char *key);

/* Reads a reservation back into *out (node names as a comma list). */
acc_err slurm_show_reservation(struct slurm *s, const char *key, struct acc_reservation *out,
                               struct acc_error *err);

/* The outputs a preview reads, into a: sinfo -o '%N|%t' (nodes and whether
 * they take work), squeue -o '%i|%S|%e|%N' (running jobs; now: when it is),
 * scontrol show reservation -o.  They write into out.  ACC_ERR_NOMEM only. */
acc_err slurm_read_nodes(struct avail *a, char *out);
acc_err slurm_read_jobs(struct avail *a, acc_time now, char *out);
acc_err slurm_read_reservations(struct avail *a, char *out);

/* Slurm's ExitCode "status:signal", both small decimal numbers.  Anything
 * else is not read as 0, which would pass for success. */
bool slurm_exit_code(const char *v, int *status, int *sig);

#endif
