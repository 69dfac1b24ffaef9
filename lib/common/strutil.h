/* SPDX-License-Identifier: Apache-2.0 */
/* strutil.h - bounded string and number helpers (no atoi, no strcpy). */
#ifndef ACC_STRUTIL_H
#define ACC_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Parses a whole decimal integer in [min, max]; surrounding blanks allowed. */
acc_err acc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, struct acc_error *err);

/* Parses yes/no, true/false, on/off, 1/0. */
acc_err acc_parse_bool(const char *s, bool *out, struct acc_error *err);

/* Copies at most size-1 bytes and terminates; returns strlen(src). */
size_t acc_strlcpy(char *dst, const char *src, size_t size);

/* strdup that accepts NULL (and returns NULL for it). */
char *acc_strdup(const char *s);

/* Duplicates n bytes and terminates. */
char *acc_strndup(const char *s, size_t n);

/* True when the two strings are equal, either being NULL counting as "". */
bool acc_streq(const char *a, const char *b);

/* True for a name made of [A-Za-z0-9._-], 1..max characters: sites, links,
 * components.  Keeps names safe in paths, logs and reservation names. */
bool acc_name_valid(const char *s, size_t max);

/* Removes leading and trailing white space in place and returns s. */
char *acc_strtrim(char *s);

#endif
