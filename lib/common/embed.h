/* SPDX-License-Identifier: Apache-2.0 */
/* embed.h - files compiled into the binaries (schemas, migrations) by
 * cmake/embed.cmake.  Tables end with an entry whose name is NULL. */
#ifndef ACC_EMBED_H
#define ACC_EMBED_H

#include <stddef.h>

struct acc_embedded {
    const char *name; /* file name without directory */
    const char *data; /* the bytes, followed by a NUL */
    size_t len;
};

#endif
