/* SPDX-License-Identifier: Apache-2.0 */
/* sign_util.h - what the parts of test_sign share: programs run with
 * their output kept, files written in the test's directory, the sites of
 * their configurations, xmlsec started for the suites.  The short names are
 * the ones the tests were written with. */
#ifndef ACC_SIGN_UTIL_H
#define ACC_SIGN_UTIL_H

#include <stddef.h>

struct run {
    int status; /* exit status, or -1 */
    char *out;  /* standard output and error */
};

/* Runs argv (NULL-terminated) with its output in a file, and waits. */
struct run run_v(const char *const *argv);
#define RUN(...) run_v((const char *const[]){__VA_ARGS__, NULL})

void write_file(const char *path, const char *data, size_t len);
/* A file opened for writing (a log), or -1. */
int open_log(const char *path);
/* name in the test's directory; the last eight results stay valid. */
char *tmp_path(const char *name);

/* Two simulated sites and a link: a configuration's [site] sections. */
extern const char sites[];

/* A suite's set-up and tear-down: xmlsec for the tests' own checks (the
 * fixture starts libxml2's side). */
int sign_init(void);
int sign_fini(void);

#endif
