/* SPDX-License-Identifier: Apache-2.0 */
/* json_writer.c - the JSON writer's strings (json_writer.h).
 *
 * Strings are escaped here and nowhere else: quotes, backslashes and every
 * control character (\u00XX when it has no short form); bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid UTF-8 JSON.
 */
#include "json.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/common/utf8.h"
#include "json_writer.h"

/* Length of the valid multi-byte UTF-8 character at s, 0 if invalid or one
 * JSON should not carry raw. */
static size_t utf8_len(const unsigned char *s)
{
    uint32_t c;
    size_t n = acc_utf8_decode(s, &c);
    /* U+2028 and U+2029 are valid JSON but end lines in JavaScript. */
    if (n < 2 || c == 0x2028 || c == 0x2029)
        return 0;
    return n;
}

void acc_json_string(struct acc_buf *out, const char *s)
{
    if (!s) {
        acc_buf_puts(out, "null");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    acc_buf_putc(out, '"');
    while (*p) {
        /* Copy the longest run that needs no escaping in one go. */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            acc_buf_append(out, run, (size_t)(p - run));
        if (!*p)
            break;
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            acc_buf_putc(out, '\\');
            acc_buf_putc(out, (char)c);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\b':
                acc_buf_puts(out, "\\b");
                break;
            case '\f':
                acc_buf_puts(out, "\\f");
                break;
            case '\n':
                acc_buf_puts(out, "\\n");
                break;
            case '\r':
                acc_buf_puts(out, "\\r");
                break;
            case '\t':
                acc_buf_puts(out, "\\t");
                break;
            default:
                acc_buf_printf(out, "\\u%04x", c);
            }
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n) {
                acc_buf_append(out, p, n);
                p += n;
            } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
                acc_buf_printf(out, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
                p += 3;
            } else {
                acc_buf_puts(out, "\\ufffd");
                p++;
            }
        }
    }
    acc_buf_putc(out, '"');
}
