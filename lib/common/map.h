/* SPDX-License-Identifier: Apache-2.0 */
/* map.h - a string-keyed hash map (open addressing, linear probing).
 * Keys are copied; values are borrowed pointers. */
#ifndef ACC_MAP_H
#define ACC_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct acc_map {
    struct acc_map_slot *slots;
    size_t cap, n, tombs;
};

void acc_map_init(struct acc_map *m);
void acc_map_release(struct acc_map *m);
void *acc_map_get(const struct acc_map *m, const char *key);
/* Inserts or replaces. */
acc_err acc_map_put(struct acc_map *m, const char *key, void *value);
/* Removes and returns the value (NULL when absent). */
void *acc_map_take(struct acc_map *m, const char *key);
/* Calls fn for every entry; fn must not change the map. */
void acc_map_each(const struct acc_map *m, void (*fn)(const char *key, void *value, void *ctx),
                  void *ctx);

#endif
