/* SPDX-License-Identifier: Apache-2.0 */
/* render_writer.c - the writer every renderer uses: elements, attributes
 * and text escaped into a buffer of its own, appended to the caller's
 * acc_buf only when the document is complete, so a failure never leaves
 * half a document behind.  Strings that did not come from a parsed document
 * (adapter messages, configuration) are first made into valid XML
 * characters (see clean()).
 *
 * It writes what libxml2's text writer writes with indentation on (two
 * spaces), byte for byte (the same escapes; an element with text stays on
 * one line; an empty one is <x/>), at a fraction of its cost: libxml2's
 * writer was more than half of rendering an agreement, and rendering most
 * of a GET once its signature is kept. */
#include "xml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/utf8.h"
#include "xml_internal.h"

/* ------------------------------------------------------------ characters */

/* Whether XML 1.0 allows the character. */
static bool xml_char(uint32_t c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
           (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;
}

/* Returns s when it holds only characters XML allows; otherwise a malloc'd
 * copy (in *tmp, for the caller to free) with every offending byte or
 * character replaced by U+FFFD; NULL when out of memory. */
static const char *clean(const char *s, char **tmp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), i = 0;
    uint32_t c;

    *tmp = NULL;
    for (size_t n; i < len; i += n)
        if (!(n = acc_utf8_decode(p + i, &c)) || !xml_char(c))
            break;
    if (i == len)
        return s;
    char *d = malloc(len * 3 + 1), *q = d;
    if (!d)
        return NULL;
    for (i = 0; i < len;) {
        size_t n = acc_utf8_decode(p + i, &c);
        if (n && xml_char(c)) {
            memcpy(q, p + i, n);
            q += n;
            i += n;
        } else {
            memcpy(q, "\xef\xbf\xbd", 3);
            q += 3;
            i += n ? n : 1;
        }
    }
    *q = '\0';
    *tmp = d;
    return d;
}

/* ---------------------------------------------------------------- escapes */

/* What c is written as, or NULL for itself: what libxml2's writer escapes in
 * text (xmlEncodeSpecialChars) and, in an attribute's value, whitespace
 * other than spaces too. */
static const char *escape_of(char c, bool attr)
{
    switch (c) {
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '&':
        return "&amp;";
    case '"':
        return "&quot;";
    case '\r':
        return "&#13;";
    case '\n':
        return attr ? "&#10;" : NULL;
    case '\t':
        return attr ? "&#9;" : NULL;
    default:
        return NULL;
    }
}

/* s escaped as text, or as an attribute's value. */
static void put_escaped(struct acc_buf *b, const char *s, bool attr)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = escape_of(*s, attr);
        if (!esc)
            continue;
        acc_buf_append(b, run, (size_t)(s - run));
        acc_buf_puts(b, esc);
        run = s + 1;
    }
    acc_buf_append(b, run, (size_t)(s - run));
}

/* ---------------------------------------------------------------- writer */

enum { EL_NAME, EL_TEXT }; /* start tag still open; content written */

static void put_qname(struct acc_buf *b, const char *prefix, const char *name)
{
    if (prefix) {
        acc_buf_puts(b, prefix);
        acc_buf_putc(b, ':');
    }
    acc_buf_puts(b, name);
}

static void indent(struct acc_xml_writer *w, size_t levels)
{
    for (size_t i = 0; i < levels; i++)
        acc_buf_append(&w->out, "  ", 2);
}

/* Ends the open start tag of the innermost element, if any. */
static void close_tag(struct acc_xml_writer *w, bool newline)
{
    if (w->depth && w->open[w->depth - 1].state == EL_NAME) {
        acc_buf_append(&w->out, newline ? ">\n" : ">", newline ? 2 : 1);
        w->open[w->depth - 1].state = EL_TEXT;
    }
}

static void note(struct acc_xml_writer *w)
{
    if (!acc_buf_ok(&w->out) || !acc_buf_ok(&w->names))
        w->failed = true;
}

void acc_xml_w_open(struct acc_xml_writer *w)
{
    *w = (struct acc_xml_writer){.doindent = true};
    acc_buf_init(&w->out);
    acc_buf_init(&w->names);
    acc_buf_puts(&w->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    note(w);
}

/* Ends the document and appends it to out. */
acc_err acc_xml_w_close(struct acc_xml_writer *w, struct acc_buf *out, struct acc_error *err)
{
    while (w->depth && !w->failed)
        acc_xml_w_end(w);
    acc_err rc = ACC_OK;
    if (w->failed) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    } else {
        acc_buf_append(out, w->out.data, w->out.len);
        if (!acc_buf_ok(out))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    }
    acc_buf_release(&w->out);
    acc_buf_release(&w->names);
    free(w->open);
    w->open = NULL;
    w->depth = w->cap = 0;
    return rc;
}

void acc_xml_w_start(struct acc_xml_writer *w, const char *prefix, const char *name)
{
    if (w->failed)
        return;
    if (w->depth == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        struct acc_xml_open *v = realloc(w->open, cap * sizeof *v);
        if (!v) {
            w->failed = true;
            return;
        }
        w->open = v;
        w->cap = cap;
    }
    close_tag(w, true);
    w->open[w->depth++] = (struct acc_xml_open){.name = w->names.len, .state = EL_NAME};
    put_qname(&w->names, prefix, name);
    acc_buf_putc(&w->names, '\0');
    indent(w, w->depth - 1);
    acc_buf_putc(&w->out, '<');
    put_qname(&w->out, prefix, name);
    note(w);
}

/* The document element, declaring both namespaces. */
void acc_xml_w_start_root(struct acc_xml_writer *w, const char *prefix, const char *name)
{
    acc_xml_w_start(w, prefix, name);
    acc_xml_w_attr(w, NULL, "xmlns:wsag", ACC_NS_WSAG);
    acc_xml_w_attr(w, NULL, "xmlns:co", ACC_NS_CO);
}

void acc_xml_w_end(struct acc_xml_writer *w)
{
    if (w->failed || !w->depth)
        return;
    struct acc_xml_open *e = &w->open[w->depth - 1];
    if (e->state == EL_NAME) {
        acc_buf_append(&w->out, "/>\n", 3);
    } else {
        if (w->doindent)
            indent(w, w->depth - 1);
        acc_buf_append(&w->out, "</", 2);
        acc_buf_puts(&w->out, w->names.data + e->name);
        acc_buf_append(&w->out, ">\n", 2);
    }
    w->doindent = true;
    w->names.len = e->name;
    w->depth--;
    note(w);
}

/* An attribute; prefix NULL for an unqualified one. */
void acc_xml_w_attr(struct acc_xml_writer *w, const char *prefix, const char *name,
                    const char *value)
{
    char *tmp;
    if (w->failed || !value)
        return;
    if (!w->depth || w->open[w->depth - 1].state != EL_NAME) {
        w->failed = true; /* a renderer's mistake: after the element's content */
        return;
    }
    const char *v = clean(value, &tmp);
    if (!v) {
        w->failed = true;
        return;
    }
    acc_buf_putc(&w->out, ' ');
    put_qname(&w->out, prefix, name);
    acc_buf_append(&w->out, "=\"", 2);
    put_escaped(&w->out, v, true);
    acc_buf_putc(&w->out, '"');
    free(tmp);
    note(w);
}

void acc_xml_w_attr_i64(struct acc_xml_writer *w, const char *prefix, const char *name, int64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    acc_xml_w_attr(w, prefix, name, s);
}

void acc_xml_w_attr_time(struct acc_xml_writer *w, const char *prefix, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    acc_xml_w_attr(w, prefix, name, s);
}

void acc_xml_w_text(struct acc_xml_writer *w, const char *s)
{
    char *tmp;
    if (w->failed || !s)
        return;
    const char *v = clean(s, &tmp);
    if (!v) {
        w->failed = true;
        return;
    }
    close_tag(w, false);
    w->doindent = false;
    put_escaped(&w->out, v, false);
    free(tmp);
    note(w);
}

/* <prefix:name>s</prefix:name>, nothing when s is NULL. */
void acc_xml_w_el(struct acc_xml_writer *w, const char *prefix, const char *name, const char *s)
{
    if (!s)
        return;
    acc_xml_w_start(w, prefix, name);
    acc_xml_w_text(w, s);
    acc_xml_w_end(w);
}

void acc_xml_w_el_i64(struct acc_xml_writer *w, const char *prefix, const char *name, int64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    acc_xml_w_el(w, prefix, name, s);
}

void acc_xml_w_el_u64(struct acc_xml_writer *w, const char *prefix, const char *name, uint64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRIu64, v);
    acc_xml_w_el(w, prefix, name, s);
}

void acc_xml_w_el_time(struct acc_xml_writer *w, const char *prefix, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    acc_xml_w_el(w, prefix, name, s);
}

/* One element per non-empty line of s (or per comma-separated item). */
void acc_xml_w_el_split(struct acc_xml_writer *w, const char *prefix, const char *name,
                        const char *s, char sep)
{
    while (s && *s && !w->failed) {
        const char *e = strchr(s, sep);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *item = acc_strndup(s, n);
        if (!item) {
            w->failed = true;
            return;
        }
        acc_strtrim(item);
        if (*item)
            acc_xml_w_el(w, prefix, name, item);
        free(item);
        s = e ? e + 1 : NULL;
    }
}
