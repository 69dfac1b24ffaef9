/* kv.h - key/value settings, as read from a config section or a query. */
#ifndef ACC_KV_H
#define ACC_KV_H

#include <stddef.h>

struct acc_kv {
    const char *key;
    const char *value;
};

/* The value of the last entry named key, or NULL. */
const char *acc_kv_get(const struct acc_kv *kv, size_t n, const char *key);

#endif
