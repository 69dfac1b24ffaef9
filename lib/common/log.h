/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - one line per event on standard error, with a UTC timestamp:
 *
 *   2026-11-27T12:00:00.123Z accordd error: message
 *
 * or, when standard error is the systemd journal (JOURNAL_STREAM names it),
 * with the syslog priority journald reads instead of the time, program and
 * level, which it records itself ("<3>" error, "<4>" warn, "<6>" info,
 * "<7>" debug):
 *
 *   <3>message
 *
 * The level is the one process-wide setting besides the server context:
 * it is set once at start-up from the configuration.
 */
#ifndef ACC_LOG_H
#define ACC_LOG_H

#include <stdbool.h>

enum acc_log_level { ACC_LOG_ERROR, ACC_LOG_WARN, ACC_LOG_INFO, ACC_LOG_DEBUG };

void acc_log_set_level(enum acc_log_level level);
/* The program named in each line ("accordd" unless set; accord-site sets
 * its own), set once before any thread starts; name must outlive it. */
void acc_log_set_program(const char *name);
bool acc_log_enabled(enum acc_log_level level);
/* Looks again whether standard error is the journal (done by the first line
 * logged; again after standard error is redirected); true if it is. */
bool acc_log_detect_journal(void);
/* "error", "warn", "info", "debug"; false for anything else. */
bool acc_log_parse_level(const char *s, enum acc_log_level *out);
/* The name of a level, as acc_log_parse_level reads it. */
const char *acc_log_level_name(enum acc_log_level level);
void acc_log(enum acc_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define acc_log_error(...) acc_log(ACC_LOG_ERROR, __VA_ARGS__)
#define acc_log_warn(...)  acc_log(ACC_LOG_WARN, __VA_ARGS__)
#define acc_log_info(...)  acc_log(ACC_LOG_INFO, __VA_ARGS__)
#define acc_log_debug(...) acc_log(ACC_LOG_DEBUG, __VA_ARGS__)

#endif
