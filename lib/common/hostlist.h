/* SPDX-License-Identifier: Apache-2.0 */
/* hostlist.h - compressed host lists as Slurm writes them
 * ("sitea-n[01-03,05],siteb-n07"), expanded in-process: the Slurm adapter
 * reads squeue's and scontrol's node lists with it (three commands per
 * preview instead of one per job), and sites configure their launch hosts
 * in the same notation. */
#ifndef ACC_HOSTLIST_H
#define ACC_HOSTLIST_H

#include <stddef.h>

#include "error.h"

struct acc_hostlist {
    char **names;
    size_t n;
};

/* Expands expr into names (appended).  "(null)", "None" and "" are empty.
 * ACC_ERR_INVALID for a list it cannot read (unbalanced brackets, a range
 * that runs backwards or is absurdly long, a host number over 999999999, more
 * than 100000 names in all). */
acc_err acc_hostlist_expand(const char *expr, struct acc_hostlist *out);
void acc_hostlist_release(struct acc_hostlist *h);

#endif
