/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_fake.h - what the parts of test_slurm share: the slurm adapter
 * opened on the fake Slurm commands of tests/slurm/fake, which answer from
 * the recorded outputs of a scenario folder and log their calls there.  The
 * short names are the ones the tests were written with. */
#ifndef ACC_SLURM_FAKE_H
#define ACC_SLURM_FAKE_H

#include "adapter.h"

extern char scenario[256];
extern char conf[256];

/* A fresh scenario folder for the fake commands. */
void scene(const char *name);
/* A file of the scenario, written from fmt. */
void put(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The commands the fakes were called with, one a line (free it). */
char *calls(void);
struct acc_adapter *open_slurm(const char *timeout);

#endif
