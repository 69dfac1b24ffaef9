/* SPDX-License-Identifier: Apache-2.0 */
/* store_pack.c - long texts kept compressed: the offer of an agreement and
 * its launch descriptions (store_internal.h).  A packed value is a blob of
 * PACK_HEAD bytes (a NUL, 'z', the unpacked length in 4 bytes, little
 * endian) and then the zlib stream; a document of XML or a launch
 * description never begins with a NUL, so a value written before 0008 (the
 * text itself) reads back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "store_internal.h"

#define PACK_HEAD 6
/* Shorter values are kept as they are: too little to gain. */
#define PACK_MIN 160
/* The longest value unpacked: an offer is bounded far below (the body
 * limit); a longer length is a damaged row, not a reason to allocate. */
#define PACK_MAX (64u << 20)

/* The values are a few kilobytes: a window of 4 KiB and a small hash table
 * find what repeats in them as well as zlib's defaults do, and cost far less
 * to set up (the defaults clear 64 KiB of hash for every value: a third of
 * the cost of packing an offer).  Any zlib reader takes the stream (the
 * window's size is in its header). */
#define PACK_WINDOW_BITS 12
#define PACK_MEM_LEVEL   2

/* Deflates v into out (room for *z bytes); *z becomes the length. */
static bool deflate_small(const char *v, size_t n, unsigned char *out, uLongf *z)
{
    z_stream d = {0};
    if (deflateInit2(&d, Z_BEST_SPEED, Z_DEFLATED, PACK_WINDOW_BITS, PACK_MEM_LEVEL,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    d.next_in = (Bytef *)(uintptr_t)v;
    d.avail_in = (uInt)n;
    d.next_out = out;
    d.avail_out = (uInt)*z;
    int zr = deflate(&d, Z_FINISH);
    *z = d.total_out;
    deflateEnd(&d);
    return zr == Z_STREAM_END;
}

void store_bind_packed(struct acc_sql_stmt *s, const char *v, size_t n, bool text)
{
    unsigned char *p = NULL;
    uLongf z = 0;
    if (v && n >= PACK_MIN && n <= PACK_MAX) {
        z = compressBound((uLong)n);
        p = malloc(PACK_HEAD + z);
    }
    if (p && deflate_small(v, n, p + PACK_HEAD, &z) && PACK_HEAD + z < n) {
        p[0] = '\0';
        p[1] = 'z';
        for (int i = 0; i < 4; i++)
            p[2 + i] = (unsigned char)(n >> (8 * i));
        acc_sql_bind_blob(s, p, PACK_HEAD + z, true);
    } else if (text) {
        acc_sql_bind_text(s, v);
    } else {
        acc_sql_bind_blob(s, v, n, false);
    }
    free(p);
}

acc_err store_col_unpacked(struct acc_sql_stmt *s, int i, bool text, char **out, size_t *len)
{
    size_t n = 0;
    const unsigned char *p = acc_sql_col_blob_ref(s, i, &n);
    if (!p || n < PACK_HEAD || p[0] != '\0' || p[1] != 'z') {
        if (!text)
            return acc_sql_col_blob(s, i, out, len);
        *out = acc_sql_col_dup(s, i);
        *len = *out ? strlen(*out) : 0;
        return *out || acc_sql_col_null(s, i) ? ACC_OK : ACC_ERR_NOMEM;
    }
    *out = NULL;
    *len = 0;
    size_t want = 0;
    for (int k = 0; k < 4; k++)
        want |= (size_t)p[2 + k] << (8 * k);
    if (want > PACK_MAX)
        return ACC_ERR_STORAGE;
    char *v = malloc(want + 1);
    if (!v)
        return ACC_ERR_NOMEM;
    uLongf got = (uLongf)want;
    int zr = uncompress((Bytef *)v, &got, p + PACK_HEAD, (uLong)(n - PACK_HEAD));
    if (zr != Z_OK || got != want) {
        free(v);
        return zr == Z_MEM_ERROR ? ACC_ERR_NOMEM : ACC_ERR_STORAGE;
    }
    v[want] = '\0';
    *out = v;
    *len = want;
    return ACC_OK;
}
