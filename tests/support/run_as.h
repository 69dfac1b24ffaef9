/* SPDX-License-Identifier: Apache-2.0 */
/* run_as.h - throwaway local accounts for the tests of jobs that run as a
 * user's account (tests/support/run_as.c), and running an adapter's
 * process command as one of them. */
#ifndef ACC_TEST_RUN_AS_H
#define ACC_TEST_RUN_AS_H

#include <stdbool.h>
#include <sys/types.h>

#include "adapter.h"

/* Creates the local account name (useradd, no home, no shell); it is
 * removed by acc_test_account_remove, and at exit whatever happens to the
 * test.  false (and a message) when it cannot be made. */
bool acc_test_account_add(const char *name, uid_t *uid, gid_t *gid);
void acc_test_account_remove(const char *name);

/* Starts cmd (its words and its whole environment) as uid/gid with no
 * supplementary groups, after the words of prefix (NULL-ended, or NULL:
 * none, such as the Grid Engine testbed's on-gw), in its own process group,
 * its standard output and error into out (or /dev/null).  The child's pid,
 * or -1. */
pid_t acc_test_run_as(uid_t uid, gid_t gid, const char *const *prefix,
                      const struct acc_command *cmd, const char *out);

/* The pid of a process of uid whose command name is comm (the first found),
 * waiting up to ms; 0 when there is none. */
pid_t acc_test_find_process(uid_t uid, const char *comm, int ms);

#endif
