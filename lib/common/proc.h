/* SPDX-License-Identifier: Apache-2.0 */
/* proc.h - running a program to its end, under a time limit.
 *
 * For adapters that drive a resource manager through its commands (Slurm's
 * scontrol, squeue, sinfo, sbatch).  The child runs in its own process group
 * with the caller's environment plus the given variables; its standard output
 * and error are collected (bounded); past the time limit the whole group is
 * killed.  Safe to call from many threads at once (posix_spawn, descriptors
 * opened close-on-exec). */
#ifndef ACC_PROC_H
#define ACC_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include <sys/types.h>

#include "account.h"
#include "error.h"

struct acc_proc_result {
    int status;     /* exit code; -1 when killed by a signal */
    bool timed_out; /* killed at the time limit */
    char *out;      /* standard output, NUL-terminated */
    size_t out_len;
    char *err; /* standard error, NUL-terminated */
    size_t err_len;
};

/* Runs argv[0] (looked up in PATH when it has no '/') with argv.  env holds
 * "NAME=value" entries that are added to (or replace in) the environment;
 * input, when not NULL, is written to the child's standard input.  Returns
 * ACC_OK when the program ran (whatever its exit code), ACC_ERR_TIMEOUT when
 * it was killed at the limit, ACC_ERR_IO when it could not be started. */
acc_err acc_proc_run(const char *const *argv, const char *const *env, const char *input,
                     int64_t timeout_ms, size_t max_output, struct acc_proc_result *out,
                     struct acc_error *err);

void acc_proc_result_release(struct acc_proc_result *r);

/* What a command said: its standard error, or its output when it wrote no
 * error, leading blanks skipped; "no message" when there is nothing. */
const char *acc_proc_said(const struct acc_proc_result *r);
/* Whether its output or its error holds what. */
bool acc_proc_says(const struct acc_proc_result *r, const char *what);

/* A failed command's words and what they mean: a resource manager's
 * message and the error code it is. */
struct acc_proc_verdict {
    const char *text;
    acc_err code;
};

/* The error of a command that failed: the code of the first verdict whose
 * text it says (fallback when none does), the message "site SITE: WHAT:
 * what it said" on one line. */
acc_err acc_proc_fail(const struct acc_proc_result *r, const struct acc_proc_verdict *v, size_t n,
                      acc_err fallback, const char *site, const char *what, struct acc_error *err);

/* Starts argv and returns at once: for a meta-job that outlives the call
 * (and may outlive accordd).  The child runs in directory cwd (NULL: ours),
 * in its own process group (*pid is also its group id), with default signal
 * handling, the environment merged as for acc_proc_run, and /dev/null as its
 * standard input, output and error.  The caller reaps it. */
acc_err acc_proc_start(const char *const *argv, const char *const *env, const char *cwd, pid_t *pid,
                       struct acc_error *err);

/* As acc_proc_start, for a program that must never hold privileges (a
 * meta-job): it runs as the account as (its groups, gid and uid), or as
 * the caller's own when as is NULL, with no capability at all (none of the
 * caller's, ambient ones included), and never as root: the child ends
 * before exec when it is root or could become root again.  argv[0] must be
 * an absolute path.  Switching accounts needs acc_account_can_switch. */
acc_err acc_proc_start_as(const char *const *argv, const char *const *env, const char *cwd,
                          const struct acc_account *as, pid_t *pid, struct acc_error *err);

/* When process pid started, in clock ticks after boot (from /proc), so that
 * a recorded pid can be recognised after a restart; 0 when there is no such
 * process (or only its zombie). */
int64_t acc_proc_start_time(pid_t pid);

/* For a daemon's main thread, before it starts any other: blocks SIGINT,
 * SIGTERM and SIGHUP (threads started later inherit the mask, so only a
 * sigwait() on *sigs takes them) and ignores SIGPIPE. */
void acc_proc_daemon_signals(sigset_t *sigs);
#endif
