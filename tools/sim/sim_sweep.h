/* sim_sweep.h - running an experiment's points in parallel, and writing its
 * figures (CSV) and plots (gnuplot). */
#ifndef ACC_SIM_SWEEP_H
#define ACC_SIM_SWEEP_H

#include "sim.h"

/* out[(curve * nxs + x) * reps + rep]; at most `jobs` processes at once
 * (1: in this process). */
bool sim_sweep_run(const struct sim_experiment *e, int reps, int jobs, struct sim_result *out,
                   char *err, size_t errlen);

/* The CSV: one row per (curve, x) with every metric's mean and CI
 * half-width over the replications. */
void sim_write_csv(FILE *f, const struct sim_experiment *e, int reps, double level,
                   const struct sim_result *res);
/* A gnuplot script drawing the experiment's metric against x, one curve per
 * curve value, error bars from the CIs, saturated points left out: writes
 * base.dat and base.gp, whose output is base.png. */
bool sim_write_plot(const char *base, const struct sim_experiment *e, int reps, double level,
                    const struct sim_result *res, char *err, size_t errlen);

#endif
