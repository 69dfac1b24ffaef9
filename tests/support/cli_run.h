/* SPDX-License-Identifier: Apache-2.0 */
/* cli_run.h - what the parts of test_cli share: the real accordctl run
 * against an accordd in-process (fx, ACCORD_URL set to it), its output and
 * exit status, and its --json read back.  The short names are the ones the
 * tests were written with. */
#ifndef ACC_CLI_RUN_H
#define ACC_CLI_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fixture.h"

extern struct fixture fx;

struct run {
    int status;
    char *out, *err;
};

void run_free(struct run *r);
/* Runs accordctl with the arguments given (NULL-terminated), against the
 * fixture unless an argument names another --server. */
struct run ctl(const char *server, const char *token, ...);
json_t *json_of(const struct run *r);
/* A string member of an object, or dflt. */
const char *jstr(const json_t *o, const char *key, const char *dflt);
/* An integer member of an object, or dflt. */
long long jint(const json_t *o, const char *key, long long dflt);
/* Whether every line of text takes at most width columns (one per
 * character: UTF-8 continuation bytes take none). */
bool lines_fit(const char *text, size_t width);

/* A suite's set-up and tear-down: fx on the embedded testbed (its database
 * cli.db), ACCORD_URL naming it, no ACCORD_TOKEN, no COLUMNS. */
int cli_setup(void);
int cli_teardown(void);

#endif
