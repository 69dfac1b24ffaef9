/* SPDX-License-Identifier: Apache-2.0 */
/* buf.h - a growable byte buffer for building replies and documents.
 *
 * Appends never fail loudly: on allocation failure the buffer is marked and
 * every later append is a no-op, so a sequence of appends is checked once
 * with acc_buf_ok() at the end.  The data is always NUL-terminated.
 */
#ifndef ACC_BUF_H
#define ACC_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct acc_buf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
};

#define ACC_BUF_INIT      \
    {                     \
        NULL, 0, 0, false \
    }

void acc_buf_init(struct acc_buf *b);
void acc_buf_release(struct acc_buf *b);
void acc_buf_reset(struct acc_buf *b);
bool acc_buf_ok(const struct acc_buf *b);
void acc_buf_append(struct acc_buf *b, const void *data, size_t len);
void acc_buf_puts(struct acc_buf *b, const char *s);
void acc_buf_putc(struct acc_buf *b, char c);
void acc_buf_printf(struct acc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as one single-quoted shell word (' inside as '\''). */
void acc_buf_shell_quote(struct acc_buf *b, const char *s);
/* Makes room for n more bytes; false when that failed. */
bool acc_buf_reserve(struct acc_buf *b, size_t n);
/* Returns the NUL-terminated data ("" for an empty buffer); NULL if failed. */
const char *acc_buf_str(const struct acc_buf *b);
/* Hands the data to the caller (free() it) and empties the buffer; NULL if
 * an append failed. */
char *acc_buf_detach(struct acc_buf *b, size_t *len);

#endif
