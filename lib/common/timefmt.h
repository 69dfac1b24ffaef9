/* SPDX-License-Identifier: Apache-2.0 */
/* timefmt.h - times and durations as Accord sees them.
 *
 * A time is whole seconds since the Unix epoch (UTC).  Documents carry RFC 3339
 * times ("2026-11-22T08:00:00Z") and ISO 8601 durations ("PT2H").
 */
#ifndef ACC_TIMEFMT_H
#define ACC_TIMEFMT_H

#include <stdint.h>

#include "error.h"

typedef int64_t acc_time;

#define ACC_TIME_STRLEN 21 /* "2026-11-22T08:00:00Z" + NUL */

/* The latest time Accord takes or computes, 9999-12-31T23:59:59Z: the
 * format has four digits for the year.  The earliest it shows is
 * 0001-01-01T00:00:00Z (xs:dateTime has no year 0). */
#define ACC_TIME_MAX        ((acc_time)253402300799)
#define ACC_TIME_MIN        ((acc_time)-62135596800)
#define ACC_DURATION_STRLEN 32

/* Wall clock, seconds. */
acc_time acc_now(void);

/* Monotonic clock, microseconds; for measuring, never for agreements. */
int64_t acc_mono_us(void);

/* Parses an RFC 3339 / xs:dateTime value.  An offset is applied; a value
 * without a zone is taken as UTC.  Fractions of a second are dropped.  Years
 * before 1970 and times after ACC_TIME_MAX are refused. */
acc_err acc_time_parse(const char *s, acc_time *out, struct acc_error *err);

/* Formats as RFC 3339 UTC with a "Z"; out has ACC_TIME_STRLEN bytes.  A
 * time outside ACC_TIME_MIN..ACC_TIME_MAX is shown as that bound, never
 * wrapped. */
void acc_time_format(acc_time t, char *out);

/* Parses an ISO 8601 / xs:duration value of days, hours, minutes and seconds
 * ("P1DT2H", "PT90M").  Years and months are refused: they have no fixed
 * length.  A leading '-' gives a negative value; the caller judges the sign. */
acc_err acc_duration_parse(const char *s, int64_t *secs, struct acc_error *err);

/* Formats seconds as the shortest duration ("PT2H", "P1DT30M", "PT0S"). */
void acc_duration_format(int64_t secs, char *out);

#endif
