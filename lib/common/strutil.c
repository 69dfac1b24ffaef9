/* SPDX-License-Identifier: Apache-2.0 */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

acc_err acc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, struct acc_error *err)
{
    if (!s)
        return acc_error_set(err, ACC_ERR_INVALID, "missing number");
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return acc_error_set(err, ACC_ERR_INVALID, "missing number");
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p)
        return acc_error_set(err, ACC_ERR_INVALID, "'%.40s' is not a whole number", s);
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return acc_error_set(err, ACC_ERR_INVALID, "'%.40s' is not a whole number", s);
    if (errno == ERANGE || v < min || v > max)
        return acc_error_set(err, ACC_ERR_INVALID, "%.40s is out of range [%lld, %lld]", s,
                             (long long)min, (long long)max);
    *out = v;
    return ACC_OK;
}

acc_err acc_parse_bool(const char *s, bool *out, struct acc_error *err)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return ACC_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return ACC_OK;
        }
    }
    return acc_error_set(err, ACC_ERR_INVALID, "'%.40s' is not yes or no", s);
}

size_t acc_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);
    if (size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

char *acc_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *acc_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

bool acc_streq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

bool acc_name_valid(const char *s, size_t max)
{
    size_t n = 0;
    if (!s || !*s)
        return false;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-') || n >= max)
            return false;
    }
    return true;
}

char *acc_strtrim(char *s)
{
    char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    memmove(s, p, n);
    s[n] = '\0';
    return s;
}
