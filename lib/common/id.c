/* SPDX-License-Identifier: Apache-2.0 */
#include "id.h"

#include <openssl/rand.h>
#include <string.h>

static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

acc_err acc_id_new(char out[ACC_ID_LEN + 1], struct acc_error *err)
{
    unsigned char raw[10];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return acc_error_set(err, ACC_ERR_INTERNAL, "the random number generator failed");
    /* 10 bytes = 80 bits = 16 groups of 5 bits. */
    for (int i = 0; i < ACC_ID_LEN; i++) {
        int bit = i * 5;
        unsigned v = (unsigned)raw[bit / 8] << 8;
        if (bit / 8 + 1 < (int)sizeof raw)
            v |= raw[bit / 8 + 1];
        out[i] = alphabet[(v >> (11 - bit % 8)) & 31];
    }
    out[ACC_ID_LEN] = '\0';
    return ACC_OK;
}

bool acc_id_valid(const char *s)
{
    if (!s || strlen(s) != ACC_ID_LEN)
        return false;
    for (int i = 0; i < ACC_ID_LEN; i++) {
        if (!strchr(alphabet, s[i]))
            return false;
    }
    return true;
}
