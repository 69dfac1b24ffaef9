/* SPDX-License-Identifier: Apache-2.0 */
/* kv.h - key/value settings, as read from a config section or a query. */
#ifndef ACC_KV_H
#define ACC_KV_H

#include <stddef.h>

#include "error.h"

struct acc_kv {
    const char *key;
    const char *value;
};

/* The value of the last entry named key, or NULL. */
const char *acc_kv_get(const struct acc_kv *kv, size_t n, const char *key);

/* Appends copies of k and v to the list *kv of *n entries, which owns
 * them; ACC_ERR_NOMEM leaves the list as it was. */
acc_err acc_kv_add(struct acc_kv **kv, size_t *n, const char *k, const char *v);

/* Frees a list built with acc_kv_add, its strings with it; NULL does nothing. */
void acc_kv_free(struct acc_kv *kv, size_t n);

#endif
