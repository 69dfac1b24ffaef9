#include "kv.h"

#include <string.h>

const char *acc_kv_get(const struct acc_kv *kv, size_t n, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(kv[i].key, key) == 0)
            v = kv[i].value;
    }
    return v;
}
