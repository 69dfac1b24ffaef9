/* SPDX-License-Identifier: Apache-2.0 */
/* json_writer.h - the one JSON writer every renderer in server/json uses
 * (internal to this folder).
 *
 * No library: the shapes are fixed and flat, so a writer that tracks only
 * "is a comma due" suffices.  Absent values (NULL strings, zero times) are
 * left out; arrays are always present, if empty.  The member helpers are
 * static inline because a document is hundreds of them and the renderers
 * sit in files of their own (tests/bench/json_bench.c measures it). */
#ifndef ACC_JSON_WRITER_H
#define ACC_JSON_WRITER_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/timefmt.h"
#include "json.h"

/* Where the next member or element goes: whether a comma is due. */
struct jw {
    struct acc_buf *out;
    bool comma;
};

static inline void jw_sep(struct jw *j)
{
    if (j->comma)
        acc_buf_putc(j->out, ',');
    j->comma = true;
}

static inline void jw_key(struct jw *j, const char *k)
{
    jw_sep(j);
    acc_json_string(j->out, k);
    acc_buf_putc(j->out, ':');
}

static inline void jw_open_obj(struct jw *j)
{
    acc_buf_putc(j->out, '{');
    j->comma = false;
}

static inline void jw_close_obj(struct jw *j)
{
    acc_buf_putc(j->out, '}');
    j->comma = true;
}

/* An array as the value of member k. */
static inline void jw_open_arr(struct jw *j, const char *k)
{
    jw_key(j, k);
    acc_buf_putc(j->out, '[');
    j->comma = false;
}

static inline void jw_close_arr(struct jw *j)
{
    acc_buf_putc(j->out, ']');
    j->comma = true;
}

/* An object as the value of member k. */
static inline void jw_member_obj(struct jw *j, const char *k)
{
    jw_key(j, k);
    jw_open_obj(j);
}

/* An object as an array element. */
static inline void jw_elem_obj(struct jw *j)
{
    jw_sep(j);
    jw_open_obj(j);
}

static inline void jw_str(struct jw *j, const char *k, const char *v)
{
    if (!v)
        return;
    jw_key(j, k);
    acc_json_string(j->out, v);
}

static inline void jw_i64(struct jw *j, const char *k, int64_t v)
{
    jw_key(j, k);
    acc_buf_printf(j->out, "%" PRId64, v);
}

static inline void jw_bool(struct jw *j, const char *k, bool v)
{
    jw_key(j, k);
    acc_buf_puts(j->out, v ? "true" : "false");
}

/* A time, even when 0 (the quote shows every time it has). */
static inline void jw_time_always(struct jw *j, const char *k, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    jw_str(j, k, s);
}

/* A time, left out when 0 (not set). */
static inline void jw_time(struct jw *j, const char *k, acc_time t)
{
    if (t)
        jw_time_always(j, k, t);
}

static inline void jw_duration(struct jw *j, const char *k, int64_t secs)
{
    char s[ACC_DURATION_STRLEN];
    acc_duration_format(secs, s);
    jw_str(j, k, s);
}

/* A string as an array element. */
static inline void jw_elem_str(struct jw *j, const char *v)
{
    jw_sep(j);
    acc_json_string(j->out, v);
}

/* The non-empty pieces of s between separators, trimmed, as strings.
 * Static like the rest: a renderer's struct jw then stays in registers
 * (an external function taking its address costs 0.3 % of the agreement's
 * instructions, measured with callgrind). */
static inline void jw_split(struct jw *j, const char *s, char separator)
{
    while (s && *s) {
        const char *e = strchr(s, separator);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        size_t a = 0;
        while (a < n && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
            a++;
        while (n > a && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
            n--;
        if (n > a) {
            char piece[1024];
            if (n - a < sizeof piece) {
                memcpy(piece, s + a, n - a);
                piece[n - a] = '\0';
                jw_elem_str(j, piece);
            } else {
                /* Longer than any reason Accord writes: keep it whole. */
                struct acc_buf tmp = ACC_BUF_INIT;
                acc_buf_append(&tmp, s + a, n - a);
                const char *str = acc_buf_str(&tmp);
                if (str)
                    jw_elem_str(j, str);
                else
                    j->out->failed = true;
                acc_buf_release(&tmp);
            }
        }
        s = e ? e + 1 : NULL;
    }
}

/* Every document ends with a newline, so a terminal shows it whole. */
static inline void jw_end_doc(struct jw *j)
{
    acc_buf_putc(j->out, '\n');
}

#endif
