/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.h - decoding UTF-8, for the renderers that must not pass on bytes
 * their format forbids. */
#ifndef ACC_UTF8_H
#define ACC_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the character at s into *cp and returns its length (1 to 4), or
 * 0 for an invalid sequence (overlong, surrogate, beyond U+10FFFF, cut
 * short).  s must be NUL-terminated. */
size_t acc_utf8_decode(const unsigned char *s, uint32_t *cp);

/* What keeps character c from being printable, or NULL: control
 * characters (C0, DEL and C1, U+0085 NEL among them), the line and
 * paragraph separators, and the bidirectional controls.  libxml2 takes
 * them all; in logs, listings and the lines of an idempotency key they
 * would start a new line, drive a terminal or reorder what is shown. */
const char *acc_utf8_unprintable(uint32_t c);

#endif
