/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_real.h - what the parts of test_slurm_real share: the two real
 * Slurm clusters of the testbed (sitea, siteb) and the accordd in front of
 * them.  The short names are the ones the tests were written with. */
#ifndef ACC_SLURM_REAL_H
#define ACC_SLURM_REAL_H

#include "fixture.h"

/* The testbed's directory (SLURM_TESTBED_DIR) and each cluster's slurm.conf. */
extern char dir[256];
extern char conf_a[300], conf_b[300];
extern struct fixture fx;

/* Runs a Slurm command on a site's cluster; returns its output (free it) and
 * its exit code in *status. */
char *slurm(const char *site, int *status, const char *cmd, ...);
/* Every reservation and job gone from both clusters. */
void reset(void);

/* test_slurm_real_launch.c: a meta-job over both clusters. */
void test_launch_sbatch_and_mpiexec(void);

#endif
