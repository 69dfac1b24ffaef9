/* SPDX-License-Identifier: Apache-2.0 */
#include "utf8.h"

size_t acc_utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t n;
    uint32_t c, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, c = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, c = s[0] & 0x0f, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

const char *acc_utf8_unprintable(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
        return "a control character";
    if (c == 0x2028 || c == 0x2029)
        return "a line or paragraph separator";
    if ((c >= 0x200e && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
        (c >= 0x2066 && c <= 0x2069) || c == 0x061c)
        return "a bidirectional control";
    return NULL;
}
