/* SPDX-License-Identifier: Apache-2.0 */
#include "timefmt.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

acc_time acc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (acc_time)ts.tv_sec;
}

int64_t acc_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so that no time zone or locale is ever involved. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

acc_err acc_time_parse(const char *s, acc_time *out, struct acc_error *err)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
    const char *p = s;

    while (isspace((unsigned char)*p))
        p++;
    if (strspn(p, "0123456789") > 4 && p[strspn(p, "0123456789")] == '-')
        goto late; /* xs:dateTime allows years of five digits and more */
    if (strlen(p) < 19 || !digits(p, 4, &Y) || p[4] != '-' || !digits(p + 5, 2, &M) ||
        p[7] != '-' || !digits(p + 8, 2, &D) || (p[10] != 'T' && p[10] != 't') ||
        !digits(p + 11, 2, &h) || p[13] != ':' || !digits(p + 14, 2, &m) || p[16] != ':' ||
        !digits(p + 17, 2, &sec))
        goto bad;
    p += 19;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p == '+' ? 1 : -1;
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            goto bad;
        p += 6;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '\0')
        goto bad;
    if (Y < 1970 || Y > 9999 || M < 1 || M > 12 || D < 1 || h > 23 || m > 59 || sec > 60)
        goto bad;
    if (D > mdays[M - 1] + (M == 2 && leap(Y)))
        goto bad;
    if (sec == 60)
        sec = 59; /* a leap second is the last second of its minute for us */
    acc_time t = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 + h * 3600 + m * 60 + sec;
    t -= sign * (oh * 3600 + om * 60);
    if (t > ACC_TIME_MAX)
        goto late;
    *out = t;
    return ACC_OK;
late:
    return acc_error_set(err, ACC_ERR_INVALID,
                         "'%.64s' is after 9999-12-31T23:59:59Z, the latest time Accord takes", s);
bad:
    return acc_error_set(err, ACC_ERR_INVALID,
                         "'%.64s' is not an RFC 3339 time such as 2026-11-22T08:00:00Z", s);
}

void acc_time_format(acc_time t, char *out)
{
    /* Four digits of year: a time outside them is shown at the nearest
     * bound rather than wrapped (year 10000 as 0000 would come before its
     * own start).  Parsing never gives such a time, and computed ones are
     * kept inside by their callers. */
    if (t > ACC_TIME_MAX)
        t = ACC_TIME_MAX;
    if (t < ACC_TIME_MIN)
        t = ACC_TIME_MIN;
    int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    int64_t rem = t - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    char tmp[64]; /* roomy, so the compiler need not prove the fields small */
    snprintf(tmp, sizeof tmp, "%04d-%02u-%02uT%02d:%02d:%02dZ", (int)y, mo, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60));
    memcpy(out, tmp, ACC_TIME_STRLEN - 1);
    out[ACC_TIME_STRLEN - 1] = '\0';
}

acc_err acc_duration_parse(const char *s, int64_t *secs, struct acc_error *err)
{
    const char *p = s;
    int64_t total = 0;
    int neg = 0;
    bool in_time = false, any = false;
    int last_rank = -1; /* designators must come in order D, H, M, S */

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (*p != 'P')
        goto bad;
    p++;
    while (*p && !isspace((unsigned char)*p)) {
        if (*p == 'T') {
            if (in_time)
                goto bad;
            in_time = true;
            p++;
            if (!isdigit((unsigned char)*p))
                goto bad;
            continue;
        }
        if (!isdigit((unsigned char)*p))
            goto bad;
        int64_t v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > 1000000000)
                return acc_error_set(err, ACC_ERR_INVALID, "duration '%.64s' is too long", s);
            v = v * 10 + (*p - '0');
            p++;
        }
        if (*p == '.')
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "duration '%.64s': use whole seconds, not fractions", s);
        int rank;
        int64_t unit;
        if (!in_time && (*p == 'Y' || *p == 'M'))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "duration '%.64s': years and months have no fixed length; "
                                 "use days (P30D) or hours",
                                 s);
        if (!in_time && *p == 'D') {
            rank = 0;
            unit = 86400;
        } else if (in_time && *p == 'H') {
            rank = 1;
            unit = 3600;
        } else if (in_time && *p == 'M') {
            rank = 2;
            unit = 60;
        } else if (in_time && *p == 'S') {
            rank = 3;
            unit = 1;
        } else {
            goto bad;
        }
        if (rank <= last_rank)
            goto bad;
        last_rank = rank;
        total += v * unit;
        any = true;
        p++;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p || !any)
        goto bad;
    if (total > (int64_t)366 * 86400 * 100)
        return acc_error_set(err, ACC_ERR_INVALID, "duration '%.64s' is too long", s);
    *secs = neg ? -total : total;
    return ACC_OK;
bad:
    return acc_error_set(err, ACC_ERR_INVALID,
                         "'%.64s' is not an ISO 8601 duration such as PT2H or P1DT30M", s);
}

void acc_duration_format(int64_t secs, char *out)
{
    char *p = out;
    size_t left = ACC_DURATION_STRLEN;
    int n;

    if (secs < 0) {
        *p++ = '-';
        left--;
        secs = -secs;
    }
    int64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
    n = snprintf(p, left, "P");
    p += n, left -= (size_t)n;
    if (d) {
        n = snprintf(p, left, "%lldD", (long long)d);
        p += n, left -= (size_t)n;
    }
    if (h || m || s || !d) {
        n = snprintf(p, left, "T");
        p += n, left -= (size_t)n;
        if (h) {
            n = snprintf(p, left, "%lldH", (long long)h);
            p += n, left -= (size_t)n;
        }
        if (m) {
            n = snprintf(p, left, "%lldM", (long long)m);
            p += n, left -= (size_t)n;
        }
        if (s || (!h && !m))
            snprintf(p, left, "%lldS", (long long)s);
    }
}
