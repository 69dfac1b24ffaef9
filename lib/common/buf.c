/* SPDX-License-Identifier: Apache-2.0 */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void acc_buf_init(struct acc_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = false;
}

void acc_buf_release(struct acc_buf *b)
{
    free(b->data);
    acc_buf_init(b);
}

void acc_buf_reset(struct acc_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->data)
        b->data[0] = '\0';
}

bool acc_buf_ok(const struct acc_buf *b)
{
    return !b->failed;
}

bool acc_buf_reserve(struct acc_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n >= SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void acc_buf_append(struct acc_buf *b, const void *data, size_t len)
{
    if (!acc_buf_reserve(b, len))
        return;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void acc_buf_puts(struct acc_buf *b, const char *s)
{
    acc_buf_append(b, s, strlen(s));
}

void acc_buf_putc(struct acc_buf *b, char c)
{
    acc_buf_append(b, &c, 1);
}

void acc_buf_printf(struct acc_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        acc_buf_append(b, small, (size_t)n);
        return;
    }
    if (!acc_buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *acc_buf_str(const struct acc_buf *b)
{
    if (b->failed)
        return NULL;
    return b->data ? b->data : "";
}

char *acc_buf_detach(struct acc_buf *b, size_t *len)
{
    if (b->failed) {
        acc_buf_release(b);
        return NULL;
    }
    if (!b->data && !acc_buf_reserve(b, 0))
        return NULL;
    char *p = b->data;
    if (len)
        *len = b->len;
    acc_buf_init(b);
    return p;
}

void acc_buf_shell_quote(struct acc_buf *b, const char *s)
{
    acc_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            acc_buf_puts(b, "'\\''");
        else
            acc_buf_putc(b, *s);
    }
    acc_buf_putc(b, '\'');
}
