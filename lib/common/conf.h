/* SPDX-License-Identifier: Apache-2.0 */
/* conf.h - what the INI readers of accordd (server/config), accord-site
 * (site/) and the resource sections (resources/) share: the first error of
 * one key's reader, values copied into place, durations, and the two keys
 * both daemons have (listen = HOST:PORT, the database path).
 *
 * The readers follow inih's handler convention: 1 to go on, 0 to stop
 * (inih reads on and keeps the first such line).  The daemons record every
 * problem of a file with conf_report.h; inih itself is the readers'
 * business: nothing here parses a file. */
#ifndef ACC_CONF_H
#define ACC_CONF_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include "error.h"

/* The first error of an INI reader. */
struct acc_conf_first {
    struct acc_error err;
    bool failed;
};

/* Records "[section] message" in f unless an error is recorded already;
 * returns 0 (inih's "stop"). */
int acc_conf_bad(struct acc_conf_first *f, const char *section, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Replaces *dst with a copy of v; 1, or 0 when out of memory (*dst kept). */
int acc_conf_set_str(char **dst, const char *v);

/* listen = HOST:PORT or [HOST]:PORT into *host (replaced) and *port. */
acc_err acc_conf_listen(const char *v, char **host, unsigned *port, struct acc_error *err);

/* Seconds within [min, max], as a whole number ("90") or an ISO 8601
 * duration ("PT90S", "PT12H", "P1D"). */
acc_err acc_conf_seconds(const char *v, int64_t min, int64_t max, int64_t *out,
                         struct acc_error *err);

/* The effective configuration's lines (--print-config): "key = v" (v
 * NULL: no line) and "key = ISO 8601 duration". */
void acc_conf_print_str(FILE *out, const char *key, const char *v);
void acc_conf_print_duration(FILE *out, const char *key, int64_t secs);

#endif
