/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_sweep.h - running an experiment's points in parallel, and writing its
 * figures (CSV) and plots (gnuplot). */
#ifndef ACC_WSIM_SWEEP_H
#define ACC_WSIM_SWEEP_H

#include "wsim.h"

/* out[(curve * nxs + x) * reps + rep]; at most `jobs` processes at once
 * (1: in this process). */
bool wsim_sweep_run(const struct wsim_experiment *e, int reps, int jobs, struct wsim_result *out,
                    char *err, size_t errlen);

/* The header of every result: "# key = value" lines with the open modelling
 * choices of the first point, then "# curve NAME: key = value" for each
 * choice a curve sets otherwise. */
void wsim_write_header(FILE *f, const struct wsim_experiment *e);
/* Every replication's figures, one row per (curve, x, replication): the
 * raw values behind the CIs, for paired comparisons (common random
 * numbers: replication r is the same workload under every setting). */
void wsim_write_reps(FILE *f, const struct wsim_experiment *e, int reps,
                     const struct wsim_result *res);
/* The CSV: one row per (curve, x) with every metric's mean and CI
 * half-width over the replications. */
void wsim_write_csv(FILE *f, const struct wsim_experiment *e, int reps, double level,
                    const struct wsim_result *res);
/* A gnuplot script drawing the experiment's metric against x, one curve per
 * curve value, error bars from the CIs, saturated points left out: writes
 * base.dat and base.gp, whose output is base.png. */
bool wsim_write_plot(const char *base, const struct wsim_experiment *e, int reps, double level,
                     const struct wsim_result *res, char *err, size_t errlen);

#endif
