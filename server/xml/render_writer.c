/* render_writer.c - the writer every renderer uses: libxml2's text writer
 * into an xmlBuffer, appended to the caller's acc_buf only when the document
 * is complete, so a failure never leaves half a document behind.  The
 * writer escapes; strings that did not come from a parsed document (adapter
 * messages, configuration) are first made into valid XML characters (see
 * clean()). */
#include "xml.h"

#include <inttypes.h>
#include <libxml/xmlwriter.h>
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

/* ---------------------------------------------------------------- writer */

void acc_xml_w_check(struct acc_xml_writer *w, int rc)
{
    if (rc < 0)
        w->failed = true;
}

void acc_xml_w_open(struct acc_xml_writer *w)
{
    w->failed = false;
    w->buf = xmlBufferCreate();
    w->w = w->buf ? xmlNewTextWriterMemory(w->buf, 0) : NULL;
    if (!w->w) {
        w->failed = true;
        return;
    }
    acc_xml_w_check(w, xmlTextWriterSetIndent(w->w, 1));
    acc_xml_w_check(w, xmlTextWriterSetIndentString(w->w, BAD_CAST "  "));
    acc_xml_w_check(w, xmlTextWriterStartDocument(w->w, "1.0", "UTF-8", NULL));
}

/* Ends the document and appends it to out. */
acc_err acc_xml_w_close(struct acc_xml_writer *w, struct acc_buf *out, struct acc_error *err)
{
    acc_err rc = ACC_OK;

    if (w->w) {
        if (!w->failed)
            acc_xml_w_check(w, xmlTextWriterEndDocument(w->w));
        xmlFreeTextWriter(w->w); /* flushes into buf */
        w->w = NULL;
    }
    if (w->failed || !w->buf) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    } else {
        acc_buf_append(out, xmlBufferContent(w->buf), (size_t)xmlBufferLength(w->buf));
        if (!acc_buf_ok(out))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    }
    xmlBufferFree(w->buf);
    w->buf = NULL;
    return rc;
}

void acc_xml_w_start(struct acc_xml_writer *w, const char *prefix, const char *name)
{
    if (!w->failed)
        acc_xml_w_check(w, xmlTextWriterStartElementNS(w->w, BAD_CAST prefix, BAD_CAST name, NULL));
}

/* The document element, declaring both namespaces. */
void acc_xml_w_start_root(struct acc_xml_writer *w, const char *prefix, const char *name)
{
    acc_xml_w_start(w, prefix, name);
    if (w->failed)
        return;
    acc_xml_w_check(w,
                    xmlTextWriterWriteAttribute(w->w, BAD_CAST "xmlns:wsag", BAD_CAST ACC_NS_WSAG));
    if (!w->failed)
        acc_xml_w_check(w,
                        xmlTextWriterWriteAttribute(w->w, BAD_CAST "xmlns:co", BAD_CAST ACC_NS_CO));
}

void acc_xml_w_end(struct acc_xml_writer *w)
{
    if (!w->failed)
        acc_xml_w_check(w, xmlTextWriterEndElement(w->w));
}

/* An attribute; prefix NULL for an unqualified one. */
void acc_xml_w_attr(struct acc_xml_writer *w, const char *prefix, const char *name,
                    const char *value)
{
    char *tmp;
    if (w->failed || !value)
        return;
    const char *v = clean(value, &tmp);
    if (!v) {
        w->failed = true;
        return;
    }
    if (prefix)
        acc_xml_w_check(w, xmlTextWriterWriteAttributeNS(w->w, BAD_CAST prefix, BAD_CAST name, NULL,
                                                         BAD_CAST v));
    else
        acc_xml_w_check(w, xmlTextWriterWriteAttribute(w->w, BAD_CAST name, BAD_CAST v));
    free(tmp);
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
    if (!v)
        w->failed = true;
    else
        acc_xml_w_check(w, xmlTextWriterWriteString(w->w, BAD_CAST v));
    free(tmp);
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
