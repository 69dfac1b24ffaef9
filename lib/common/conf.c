/* SPDX-License-Identifier: Apache-2.0 */
/* conf.c - what the INI readers share (conf.h). */
#include "conf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "timefmt.h"

int acc_conf_bad(struct acc_conf_first *f, const char *section, const char *fmt, ...)
{
    if (!f->failed) {
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        acc_error_set(&f->err, ACC_ERR_CONFIG, "[%s] %s", section, msg);
        f->failed = true;
    }
    return 0;
}

int acc_conf_set_str(char **dst, const char *v)
{
    char *s = strdup(v);
    if (!s)
        return 0;
    free(*dst);
    *dst = s;
    return 1;
}

acc_err acc_conf_listen(const char *v, char **host, unsigned *port, struct acc_error *err)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return acc_error_set(err, ACC_ERR_CONFIG, "listen '%s' is not HOST:PORT", v);
    int64_t p;
    if (acc_parse_i64(colon + 1, 0, 65535, &p, err))
        return acc_error_set(err, ACC_ERR_CONFIG, "listen '%s': bad port", v);
    const char *h = v;
    size_t hl = (size_t)(colon - v);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') { /* [::1]:8080 */
        h++;
        hl -= 2;
    }
    char *s = acc_strndup(h, hl);
    if (!s)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    free(*host);
    *host = s;
    *port = (unsigned)p;
    return ACC_OK;
}

acc_err acc_conf_seconds(const char *v, int64_t min, int64_t max, int64_t *out,
                         struct acc_error *err)
{
    if (v[0] == 'P' || v[0] == 'p') {
        int64_t d;
        if (acc_duration_parse(v, &d, err))
            return err->code;
        if (d < min || d > max)
            return acc_error_set(err, ACC_ERR_CONFIG, "%s is outside %lld..%lld seconds", v,
                                 (long long)min, (long long)max);
        *out = d;
        return ACC_OK;
    }
    int64_t n;
    if (acc_parse_i64(v, INT64_MIN, INT64_MAX, &n, err))
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' is not seconds or a duration such as PT30S",
                             v);
    return acc_parse_i64(v, min, max, out, err);
}

void acc_conf_print_str(FILE *out, const char *key, const char *v)
{
    if (v)
        fprintf(out, "%s = %s\n", key, v);
}

void acc_conf_print_duration(FILE *out, const char *key, int64_t secs)
{
    char d[ACC_DURATION_STRLEN];
    acc_duration_format(secs, d);
    fprintf(out, "%s = %s\n", key, d);
}
