/* SPDX-License-Identifier: Apache-2.0 */
/* replay.h - accordd --replay: a workload placed, in dry-run mode, on the
 * live calendars of accordd's own configuration (docs/operations.md,
 * docs/simulator.md).
 *
 * The core (replay.c) is a pure function over a provider of "live free
 * frames": for a site and a node count, the frames of a window during
 * which that many nodes are free now, as an adapter's preview with a
 * duration of one second answers.  The jobs are placed in submit order as
 * Accord's advance-reservation mode does: the policy (lib/policy) orders
 * candidate placements on the free node counts at the job's submit time,
 * and the earliest common slot of the first candidate that has one is
 * taken (under `earliest`, the earliest over every candidate).  The
 * replay's own earlier placements are kept in an in-memory overlay
 * (lib/calendar); n nodes are free at t when live_free(t) >=
 * n + overlay(t).  Nothing is reserved anywhere.
 *
 * The command (replay_cmd.c) opens the configured sites' adapters as
 * accordd does, reads the workload with accord-sim's parsers and
 * generators (simulator/), runs the core with previews as the provider, and
 * prints the placements (replay_print.c).  It never opens accordd's
 * database.
 */
#ifndef ACC_REPLAY_H
#define ACC_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../lib/common/error.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/model/model.h"
#include "../../lib/policy/policy.h"

/* Bounds, each an error that names it when passed. */
#define ACC_REPLAY_MAX_JOBS     100000  /* jobs of one replay */
#define ACC_REPLAY_MAX_SITES    16      /* sites (the simulator's workloads) */
#define ACC_REPLAY_MAX_PARTS    16      /* components of one job */
#define ACC_REPLAY_MAX_PREVIEWS 100000  /* provider calls of one replay */
#define ACC_REPLAY_MAX_FRAMES   4000000 /* live frames kept at once */
#define ACC_REPLAY_MAX_CANDS    32      /* candidate placements probed per job */

/* The frames within [from, until) during which `amount` (>= 1) nodes of
 * site `site` are free, sorted and disjoint; truncated set when the source
 * stopped early (nothing is known after the last frame: the core asks
 * again from there). */
typedef acc_err (*acc_replay_live_fn)(void *ctx, size_t site, int64_t amount, acc_time from,
                                      acc_time until, struct acc_frames *out,
                                      struct acc_error *err);

struct acc_replay_site {
    const char *name;
    int64_t nodes; /* the configured node count, >= 1 */
};

/* One job of the workload. */
struct acc_replay_job {
    acc_time submit;  /* absolute; jobs in submit order (not decreasing) */
    int64_t duration; /* seconds, >= 1 */
    int64_t total;    /* nodes */
    size_t n_comp;    /* 1 .. ACC_REPLAY_MAX_PARTS */
    int64_t comp[ACC_REPLAY_MAX_PARTS];
    bool flexible; /* one part that the policy may split (split = flexible) */
};

struct acc_replay_setup {
    const struct acc_replay_site *sites;
    size_t n_sites;                /* 1 .. ACC_REPLAY_MAX_SITES */
    struct acc_policy_opts policy; /* rng unused: ties from `seed` */
    uint64_t seed;                 /* tiebreak = random: mixed with the job's index */
    size_t candidates;             /* probed per job, 1 .. ACC_REPLAY_MAX_CANDS */
    acc_time from, until;          /* the window: no slot ends after until */
    acc_replay_live_fn live;
    void *ctx;
};

/* Where one job went. */
struct acc_replay_placement {
    bool placed;
    acc_time start, end; /* placed: the slot */
    size_t n;            /* placed: parts */
    size_t site[ACC_POLICY_MAX_PARTS];
    int64_t size[ACC_POLICY_MAX_PARTS];
    size_t n_sites;   /* distinct sites used (>= 2: co-allocated) */
    size_t candidate; /* placed: which candidate (1 = the policy's first) */
    bool fell_back;   /* the policy does not take the request: earliest placed it */
    bool on_capacity; /* nothing fit the free counts at submit: the policy saw capacities */
    char why[128];    /* not placed: the reason */
};

struct acc_replay_stats {
    size_t previews; /* provider calls */
    size_t frames;   /* live frames kept */
};

/* Places the jobs in order into out[0 .. n_jobs-1].  ACC_OK when the run
 * completed (jobs that found no slot in the window are out[i].placed =
 * false with the reason); ACC_ERR_INVALID for bad input, ACC_ERR_CAPACITY
 * when a bound is passed, the provider's error when it fails (then
 * nothing of out is meaningful). */
acc_err acc_replay_run(const struct acc_replay_setup *setup, const struct acc_replay_job *jobs,
                       size_t n_jobs, struct acc_replay_placement *out,
                       struct acc_replay_stats *stats, struct acc_error *err);

/* The figures of a replay. */
struct acc_replay_summary {
    size_t jobs, placed;
    double mean_wait, p50_wait, p90_wait, p99_wait, max_wait; /* s, placed jobs */
    double coalloc_share;                                     /* of placed jobs */
    double utilisation; /* the replay's node-seconds in [from, until) over
                         * the configured nodes times (until - from) */
    size_t fell_back, on_capacity;
};

/* Percentiles by nearest rank.  ACC_ERR_NOMEM only. */
acc_err acc_replay_summarise(const struct acc_replay_setup *setup,
                             const struct acc_replay_job *jobs, size_t n_jobs,
                             const struct acc_replay_placement *out, struct acc_replay_summary *sum,
                             struct acc_error *err);

/* Prints the placements and the summary: a text table, or CSV (the jobs,
 * then "#key,value" lines for the summary). */
void acc_replay_print(FILE *f, bool csv, const struct acc_replay_setup *setup,
                      const struct acc_replay_job *jobs, size_t n_jobs,
                      const struct acc_replay_placement *out, const struct acc_replay_summary *sum,
                      const struct acc_replay_stats *stats);

/* ---------------------------------------------------------- the command */

struct acc_config;

struct acc_replay_cmd {
    const char *workload; /* an SWF trace or an accord-sim parameter file */
    const char *policy;   /* NULL: the configured [negotiation] policy */
    const char *from;     /* ISO 8601 time; NULL: now */
    long jobs;            /* 0: the workload's own count */
    bool csv;
};

/* accordd --replay: opens the configured sites' adapters (never the
 * database), places the workload, prints to out; errors to err_out.
 * Returns the process exit status (0, 1 failure, 2 bad input). */
int acc_replay_command(const struct acc_config *cfg, const struct acc_replay_cmd *cmd, FILE *out,
                       FILE *err_out);

#endif
