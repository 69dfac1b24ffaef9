/* SPDX-License-Identifier: Apache-2.0 */
/* launch_real.h - what the parts of test_launch_real share: the real accordd
 * with [launch] as a child process (three sites alpha, beta, gamma of
 * sim-batch), offers whose components run accord-ring, and the agreement's
 * and its job's states read back.  Its helpers carry the prefix lr_, so that no two test
 * support headers export one name with two meanings. */
#ifndef ACC_LAUNCH_REAL_H
#define ACC_LAUNCH_REAL_H

#include <stdbool.h>
#include <sys/types.h>

extern char base[64];
extern char db[256], ini[256], jobs[256];
extern pid_t accordd;

/* The configuration at ini: the three sites, [launch] with extra_launch
 * added (NULL: none) and extra_sites after them (NULL: none). */
bool lr_write_config(const char *extra_launch, const char *extra_sites);
pid_t lr_start(void);
void lr_stop(int sig);
char *lr_call(const char *method, const char *path, const char *body, long *status);

/* An offer whose components all run accord-ring with extra arguments,
 * starting `ahead` seconds from now. */
struct comp {
    const char *name, *site;
    int nodes, ppn;
};

char *lr_offer(const char *style, int ahead, const char *duration, const struct comp *c, int n,
               const char *args);
/* Submits; returns the agreement id (free it) or NULL. */
char *lr_submit(const char *doc);
/* The agreement's state and its job's (free both). */
void lr_states(const char *id, char **agreement, char **job);
/* Wait (at most secs) until the agreement's state, or its job's, is want;
 * true if so. */
bool lr_wait_agreement(const char *id, const char *want, int secs);
bool lr_wait_job(const char *id, const char *want, int secs);
char *lr_get(const char *id, const char *what, long *st);
/* Prints the job's document and kept output to stderr: why an assertion
 * about it failed. */
void lr_print_job(const char *id);
char *lr_job_field(const char *id, const char *field);
/* The job ended by itself with exit status 0. */
void lr_assert_exited_ok(const char *id);

/* The set-up and tear-down of test_launch_real_netns.c's suite: the
 * emulated sites made and removed (root). */
int lr_netns_setup(void);
int lr_netns_cleanup(void);

#endif
