/* SPDX-License-Identifier: Apache-2.0 */
/* sge_internal.h - what the files of the sge adapter share; nothing outside
 * adapters/sge/ (and its unit test) includes it.
 *
 *   sge.c      the adapter's operations (the one exported acc_sge_ops),
 *              its settings, open and close
 *   sge_cmd.c  running Grid Engine's commands (through adapters/batch:
 *              SGE_ROOT, SGE_CELL, TZ=UTC, a time limit) and classifying
 *              their failures by Grid Engine's messages
 *   sge_xml.c  reading their -xml outputs with libxml2 (bounded, guarded):
 *              qrstat's advance reservations, qstat -f's queue instances
 *              and running jobs
 * The free frames are computed by the Slurm adapter's avail.c, which knows
 * nothing of Slurm: hosts, whether they take work, busy intervals.
 *
 * Internal names start with sge_. */
#ifndef ACC_SGE_INTERNAL_H
#define ACC_SGE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../lib/common/proc.h"
#include "../adapter.h"
#include "../batch/batch.h"
#include "../slurm/avail.h"

#define SGE_XML_MAX (4u << 20) /* the most any -xml output may hold */

struct sge {
    struct acc_batch b; /* the site's name, bin_dir, timeout, SGE_ROOT, SGE_CELL */
    char *root;         /* SGE_ROOT */
    char *cell;         /* SGE_CELL, or NULL: default */
    char *pe;           /* the parallel environment reservations ask for */
    char *queue;        /* the cluster queue whose hosts are planned with */
    /* qrsub -u: who may run jobs in the reservations without an account,
     * or NULL */
    char *users;
    int64_t slots; /* slots per host: N nodes are N * slots PE slots */
};

/* One host's part of a reservation. */
struct sge_grant {
    char *host;
    int64_t slots;
};

/* An advance reservation as qrstat -xml tells it (grants only with -ar). */
struct sge_ar {
    int64_t id;
    char *name;
    char state[8];
    acc_time start, end;
    struct sge_grant *grants;
    size_t n_grants;
};

struct sge_ars {
    struct sge_ar *v;
    size_t n;
};

void sge_ars_release(struct sge_ars *a);

/* "2026-11-27T16:02:00", Grid Engine's -xml time, read as UTC (the commands
 * run with TZ=UTC). */
bool sge_parse_time(const char *s, acc_time *out);

/* qrstat -xml and qrstat -ar IDS -xml: every <ar_summary>; <ar_unknown>
 * entries are left out.  Errors name what was wrong. */
acc_err sge_read_ars(const char *xml, size_t len, struct sge_ars *out, struct acc_error *err);

/* qstat -f -r -xml -q QUEUE: each queue instance's host goes into a, usable
 * when no state letter stops it and it has at least `slots` slots; each job
 * on it keeps it busy from its start until start + h_rt + 1 s, for good
 * without h_rt. */
acc_err sge_read_queues(const char *xml, size_t len, int64_t slots, acc_time now, struct avail *a,
                        struct acc_error *err);

/* Runs a Grid Engine command; *r holds its output whatever its exit code.
 * Fails only when it could not run or timed out. */
acc_err sge_run(struct sge *s, const char *cmd, const char *const *args, struct acc_proc_result *r,
                struct acc_error *err);
/* Maps a failed command to an error code by Grid Engine's message and sets
 * err ("site NAME: what: message"). */
acc_err sge_classify(struct sge *s, const char *what, const struct acc_proc_result *r,
                     struct acc_error *err);

#endif
