/* SPDX-License-Identifier: Apache-2.0 */
/* conf_report.h - every problem of a configuration file, each with its
 * line, for the INI readers of accordd (server/config) and accord-site
 * (site/): `--check-config` lists them all, a normal start reports the
 * first.
 *
 * inih (as Debian builds it, without INI_HANDLER_LINENO) does not tell a
 * handler its line, so the file is read through acc_conf_report_read, an
 * fgets-like reader for ini_parse_stream that counts lines; the handler
 * calls acc_conf_report_key first, which takes the line and remembers
 * where each key was, so that the checks made after reading can name the
 * line of the key they are about.  Lines inih cannot read (neither a
 * comment, a [section] nor a key = value) are problems found by the reader:
 * inih itself says only which was the first.  Nothing here calls inih. */
#ifndef ACC_CONF_REPORT_H
#define ACC_CONF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

struct acc_conf_problem {
    int line;      /* 0: not known */
    bool after;    /* found by the checks after reading */
    bool warning;  /* a dangerous combination, not an error: the daemon starts */
    char *section; /* NULL: none (a line that is not INI) */
    char *key;     /* NULL: none */
    char *msg;     /* without the "[section] " of the readers' messages */
};

/* A key as read: where it was. */
struct acc_conf_seen {
    char *section, *key;
    int line;
};

struct acc_conf_report {
    struct acc_conf_problem *problems;
    size_t n_problems;
    struct acc_conf_seen *seen;
    size_t n_seen;
    bool nomem; /* a problem could not be recorded */

    /* The key being read (set by acc_conf_report_key). */
    const char *section, *key;
    int line;

    /* The reader: one of file and text, and the physical line it is in. */
    FILE *file;
    const char *text;
    int lines;
    bool mid_line; /* the last read ended without a newline */
    bool keyed;    /* the handler was called for the current line */
    char first;    /* its first character after blanks ('\0': none yet) */
    bool closes;   /* it holds a ']' */
};

/* Starts r empty, to read a file (text NULL) or text (file NULL). */
void acc_conf_report_init(struct acc_conf_report *r, FILE *file, const char *text);
void acc_conf_report_release(struct acc_conf_report *r);

/* inih's ini_reader over r (pass r as the stream). */
char *acc_conf_report_read(char *str, int num, void *r);

/* The handler's first call for each key. */
void acc_conf_report_key(struct acc_conf_report *r, const char *section, const char *key);

/* A problem with the key being read ("[section] message" is the first
 * error's text); returns 0, inih's "stop" (inih reads on). */
int acc_conf_report_bad(struct acc_conf_report *r, const char *section, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A problem of the section as a whole (an unknown section), reported
 * once for all its keys; returns 0. */
int acc_conf_report_section_bad(struct acc_conf_report *r, const char *section, const char *msg);

/* A reader's answer in inih's convention: 1 for ACC_OK; else 0, and e
 * (whose text may start with "[section] ") is recorded as a problem. */
int acc_conf_report_take(struct acc_conf_report *r, acc_err rc, const struct acc_error *e);

/* After ini_parse_stream returned rc: a line inih refused that nothing
 * recorded (out of memory in a reader), or inih out of memory. */
void acc_conf_report_parsed(struct acc_conf_report *r, int rc);

/* A problem found after reading, about `key` of `section` (key NULL: the
 * section as a whole), at the key's line when it was read.  Returns
 * ACC_ERR_CONFIG. */
acc_err acc_conf_report_after(struct acc_conf_report *r, const char *section, const char *key,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The same with an error whose text starts with "[section] ". */
acc_err acc_conf_report_after_err(struct acc_conf_report *r, const char *key,
                                  const struct acc_error *e);

/* The same at a line the caller kept (0: the key's last line), for a key
 * given many times ([policy] latency). */
acc_err acc_conf_report_after_at(struct acc_conf_report *r, int line, const char *key,
                                 const struct acc_error *e);

/* A warning about `key` of `section` (key NULL: the section; section
 * NULL: the file): a combination that works but is dangerous.  Printed
 * with the problems ("ORIGIN:LINE: warning: KEY: message"), but neither
 * acc_conf_report_failed nor acc_conf_report_first counts it. */
void acc_conf_report_warn(struct acc_conf_report *r, const char *section, const char *key,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The line where section's key was last read; 0 when it was not. */
int acc_conf_report_line(const struct acc_conf_report *r, const char *section, const char *key);

/* Whether r holds a problem (warnings do not count). */
bool acc_conf_report_failed(const struct acc_conf_report *r);

/* The first problem into err as a normal start reports it: "ORIGIN line
 * N: [section] message" for one found while reading, "[section] message"
 * after reading (after_origin: "ORIGIN: [section] message").  Returns
 * ACC_ERR_CONFIG, or ACC_OK without problems. */
acc_err acc_conf_report_first(const struct acc_conf_report *r, const char *origin,
                              bool after_origin, struct acc_error *err);

/* Every problem and warning, one line each: "ORIGIN:LINE: KEY: message"
 * ("ORIGIN:LINE: warning: KEY: message" for a warning), or
 * "ORIGIN: [SECTION] KEY: message" when the line is not known ("ORIGIN:LINE:
 * [SECTION] message" for a section as a whole, "ORIGIN:LINE: message" for
 * a line that is not INI). */
void acc_conf_report_print(const struct acc_conf_report *r, const char *origin, FILE *out);

#endif
