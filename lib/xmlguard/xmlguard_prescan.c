/* SPDX-License-Identifier: Apache-2.0 */
/* xmlguard_prescan.c - one linear pass over a document's bytes before libxml2 sees
 * them.
 *
 * libxml2 (2.9) checks each attribute of an element against every earlier
 * one, and each namespace declaration against the others: 149,000
 * attributes on one element, a valid offer under 1 MiB, cost 70 s of CPU
 * before any SAX callback could count them.  So they are counted here,
 * where each byte costs the same.
 *
 * The count never runs short of what libxml2 will parse:
 *   - every '<' that is not "</", "<!" or "<?" starts an element, even
 *     inside what looks like a quoted value or a comment: libxml2 refuses a
 *     '<' in a value and then reads on from it as from a new tag;
 *   - inside a start tag, every '=' outside quotes is an attribute (or a
 *     namespace declaration); a start tag ends at '>' outside quotes, and
 *     libxml2 reads no attribute after a syntax error in a tag until the
 *     next '<';
 *   - the bytes are what libxml2 reads: acc_xmlguard_read() has it take them as
 *     UTF-8 whatever the document declares (UTF-7 or EBCDIC would hide the
 *     markup from this pass), and a NUL byte, where libxml2 would stop
 *     reading as if the document ended, is refused here.
 * It may count more than libxml2 (markup inside a comment counts too);
 * that only matters to documents far outside what an offer or a protocol
 * document needs.
 */
#include <stdio.h>
#include <string.h>

#include "xmlguard.h"

/* The element name after '<' for a message: up to a blank, '/' or '>'. */
static void element_name(const char *p, const char *end, char *out, size_t size)
{
    size_t n = 0;
    while (p + n < end && n + 1 < size && !strchr(" \t\r\n/>=\"'<", p[n]) && p[n] != '\0')
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

acc_err acc_xmlguard_prescan(const char *data, size_t len, const struct acc_xmlguard_limits *lim,
                             struct acc_error *err)
{
    enum { TEXT, TAG, QUOTED } state = TEXT;
    const char *end = data + len, *tag = NULL;
    char quote = 0;
    unsigned long line = 1, tag_line = 1;
    unsigned on_element = 0, total = 0;

    for (const char *p = data; p < end; p++) {
        char c = *p;
        if (c == '\0')
            return acc_error_set(err, ACC_ERR_MALFORMED,
                                 "line %lu: byte %zu is a NUL character, which no XML document "
                                 "holds",
                                 line, (size_t)(p - data));
        if (c == '\n') {
            line++;
        } else if (c == '<') {
            bool start = p + 1 < end && p[1] != '/' && p[1] != '!' && p[1] != '?';
            state = start ? TAG : TEXT;
            tag = p + 1;
            tag_line = line;
            on_element = 0;
        } else if (state == QUOTED) {
            if (c == quote)
                state = TAG;
        } else if (state == TAG) {
            if (c == '"' || c == '\'') {
                state = QUOTED;
                quote = c;
            } else if (c == '>') {
                state = TEXT;
            } else if (c == '=') {
                char name[72];
                if (++on_element > lim->max_attributes) {
                    element_name(tag, end, name, sizeof name);
                    return acc_error_set(err, ACC_ERR_TOO_MANY_ATTRS,
                                         "line %lu: element %s has more than %u attributes",
                                         tag_line, name, lim->max_attributes);
                }
                if (++total > lim->max_total_attributes) {
                    element_name(tag, end, name, sizeof name);
                    return acc_error_set(err, ACC_ERR_TOO_MANY_ATTRS,
                                         "line %lu: element %s: the document has more than %u "
                                         "attributes in all",
                                         tag_line, name, lim->max_total_attributes);
                }
            }
        }
    }
    return ACC_OK;
}
