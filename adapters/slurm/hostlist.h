/* hostlist.h - Slurm's compressed node lists ("sitea-n[01-03,05],siteb-n07"),
 * expanded without asking scontrol, so that a preview costs three commands
 * instead of one per job and reservation. */
#ifndef ACC_HOSTLIST_H
#define ACC_HOSTLIST_H

#include <stddef.h>

#include "../../server/common/error.h"

struct hostlist {
    char **names;
    size_t n;
};

/* Expands expr into names (appended).  "(null)", "None" and "" are empty.
 * ACC_ERR_INVALID for a list it cannot read (unbalanced brackets, a range
 * that runs backwards or is absurdly long). */
acc_err hostlist_expand(const char *expr, struct hostlist *out);
void hostlist_release(struct hostlist *h);

#endif
