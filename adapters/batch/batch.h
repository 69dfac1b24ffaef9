/* SPDX-License-Identifier: Apache-2.0 */
/* batch.h - what the two batch adapters (adapters/slurm, adapters/sge)
 * share: running their batch system's commands (bin_dir, an environment of
 * their own with TZ=UTC, a time limit, bounded output), the settings that
 * say how (bin_dir, timeout), and the command that starts one process on
 * one host of a reservation (the process_command operation, adapter.h).
 *
 * Internal to the adapters: names start with acc_batch_. */
#ifndef ACC_ADAPTERS_BATCH_H
#define ACC_ADAPTERS_BATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../lib/common/error.h"
#include "../../lib/common/proc.h"
#include "../adapter.h"

#define ACC_BATCH_ENV_MAX 3 /* environment entries beyond TZ=UTC */

/* How an adapter runs its commands; zeroed, then acc_batch_init. */
struct acc_batch {
    char *name;    /* the site, for messages */
    char *bin_dir; /* where the commands are, or NULL: PATH */
    int64_t timeout_ms;
    size_t max_output; /* the most output read from a command */
    /* "NAME=value" entries every command gets (SLURM_CONF, SGE_ROOT...) */
    char env[ACC_BATCH_ENV_MAX][PATH_MAX + 16];
    size_t n_env;
};

/* The defaults (15 s, 4 MiB) and the site's name. */
acc_err acc_batch_init(struct acc_batch *b, const char *name, struct acc_error *err);
void acc_batch_release(struct acc_batch *b);

/* Takes bin_dir = and timeout = (a duration such as PT15S).  false when k
 * is neither (nothing done); else *rc says whether v was taken. */
bool acc_batch_setting(struct acc_batch *b, const char *k, const char *v, acc_err *rc,
                       struct acc_error *err);
/* Checks what the settings name (bin_dir is a directory), as open and
 * check do; *key: the setting at fault. */
acc_err acc_batch_check(const struct acc_batch *b, const char **key, struct acc_error *err);
/* Adds NAME=value to what every command gets. */
acc_err acc_batch_env(struct acc_batch *b, const char *name, const char *value,
                      struct acc_error *err);

/* BIN_DIR/cmd, or cmd; false when it does not fit. */
bool acc_batch_path(const struct acc_batch *b, const char *cmd, char *out, size_t len);

/* Runs cmd with args (NULL-ended, at most 22) with the adapter's
 * environment, TZ=UTC and extra (or NULL) added, input on its standard
 * input (or NULL); *r holds what it said whatever its exit code.  Fails
 * only when it could not run or timed out ("site NAME: ..."). */
acc_err acc_batch_run(const struct acc_batch *b, const char *cmd, const char *const *args,
                      const char *extra, const char *input, struct acc_proc_result *r,
                      struct acc_error *err);

/* The command and environment that start one process: acc_command (adapter.h)
 * being built word by word.  Each returns false when out of memory. */
bool acc_batch_word(struct acc_command *c, const char *w);
bool acc_batch_wordf(struct acc_command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The command's program (BIN_DIR/cmd) as its first word, and the adapter's
 * environment as the command's. */
acc_err acc_batch_command_start(const struct acc_batch *b, const char *cmd, struct acc_command *c,
                                struct acc_error *err);

/* The checks every process_command makes of a job (a host, a reservation
 * id, an absolute executable, words without a newline); "site NAME: ...". */
acc_err acc_batch_process_check(const struct acc_batch *b, const struct acc_job *job,
                                struct acc_error *err);

#endif
