/* SPDX-License-Identifier: Apache-2.0 */
#include "map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

struct acc_map_slot {
    char *key; /* NULL: empty; TOMB: deleted */
    void *value;
};

static char tomb_marker;
#define TOMB (&tomb_marker)

void acc_map_init(struct acc_map *m)
{
    memset(m, 0, sizeof *m);
}

void acc_map_release(struct acc_map *m)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key && m->slots[i].key != TOMB)
            free(m->slots[i].key);
    }
    free(m->slots);
    acc_map_init(m);
}

static struct acc_map_slot *find(const struct acc_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = acc_fnv1a64(key) & (m->cap - 1);
    for (;;) {
        struct acc_map_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMB && strcmp(s->key, key) == 0)
            return s;
        i = (i + 1) & (m->cap - 1);
    }
}

static acc_err grow(struct acc_map *m)
{
    /* Rehash into a table at most half full; when tombstones caused the
     * growth, that may be the same size. */
    size_t cap = m->cap < 16 ? 16 : m->cap;
    while ((m->n + 1) * 2 > cap)
        cap *= 2;
    struct acc_map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return ACC_ERR_NOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct acc_map_slot *s = &m->slots[i];
        if (!s->key || s->key == TOMB)
            continue;
        size_t j = acc_fnv1a64(s->key) & (cap - 1);
        while (slots[j].key)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->tombs = 0;
    return ACC_OK;
}

void *acc_map_get(const struct acc_map *m, const char *key)
{
    struct acc_map_slot *s = find(m, key);
    return s ? s->value : NULL;
}

acc_err acc_map_put(struct acc_map *m, const char *key, void *value)
{
    struct acc_map_slot *s = find(m, key);
    if (s) {
        s->value = value;
        return ACC_OK;
    }
    if ((m->n + m->tombs + 1) * 4 > m->cap * 3) {
        acc_err rc = grow(m);
        if (rc)
            return rc;
    }
    char *k = strdup(key);
    if (!k)
        return ACC_ERR_NOMEM;
    size_t i = acc_fnv1a64(key) & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != TOMB)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == TOMB)
        m->tombs--;
    m->slots[i].key = k;
    m->slots[i].value = value;
    m->n++;
    return ACC_OK;
}

void *acc_map_take(struct acc_map *m, const char *key)
{
    struct acc_map_slot *s = find(m, key);
    if (!s)
        return NULL;
    void *v = s->value;
    free(s->key);
    s->key = TOMB;
    s->value = NULL;
    m->n--;
    m->tombs++;
    return v;
}

void acc_map_each(const struct acc_map *m, void (*fn)(const char *key, void *value, void *ctx),
                  void *ctx)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key && m->slots[i].key != TOMB)
            fn(m->slots[i].key, m->slots[i].value, ctx);
    }
}
