/* SPDX-License-Identifier: Apache-2.0 */
#include "kv.h"

#include <stdlib.h>
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

acc_err acc_kv_add(struct acc_kv **kv, size_t *n, const char *k, const char *v)
{
    void *p = realloc(*kv, (*n + 1) * sizeof **kv);
    if (!p)
        return ACC_ERR_NOMEM;
    *kv = p;
    char *ks = strdup(k), *vs = strdup(v);
    if (!ks || !vs) {
        free(ks);
        free(vs);
        return ACC_ERR_NOMEM;
    }
    (*kv)[*n].key = ks;
    (*kv)[*n].value = vs;
    (*n)++;
    return ACC_OK;
}

void acc_kv_free(struct acc_kv *kv, size_t n)
{
    for (size_t i = 0; kv && i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}
