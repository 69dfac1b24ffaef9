/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_tally.c - open connections per key, so that one client (an address,
 * a principal) cannot take every connection slot, and the answer bytes an
 * address holds unsent.  A hash table of keys with a count each, under one
 * lock; an entry goes with its last connection and its last byte (an
 * answer may be dropped just after its connection is gone). */
#include "httpd_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"

#define BUCKETS 1024

struct httpd_tally_entry {
    unsigned char key[HTTPD_TALLY_KEY_MAX];
    size_t len;
    unsigned count;
    size_t bytes; /* answer bytes held (httpd_tally_hold) */
    struct httpd_tally_entry *next;
};

struct httpd_tally {
    pthread_mutex_t lock;
    struct httpd_tally_entry *bucket[BUCKETS];
};

struct httpd_tally *httpd_tally_new(void)
{
    struct httpd_tally *t = calloc(1, sizeof *t);
    if (t)
        pthread_mutex_init(&t->lock, NULL);
    return t;
}

void httpd_tally_free(struct httpd_tally *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < BUCKETS; i++) {
        while (t->bucket[i]) {
            struct httpd_tally_entry *e = t->bucket[i];
            t->bucket[i] = e->next;
            free(e);
        }
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static size_t hash(const unsigned char *k, size_t n)
{
    return (size_t)(acc_fnv1a64_bytes(k, n) % BUCKETS);
}

acc_err httpd_tally_open(struct httpd_tally *t, const void *key, size_t len, unsigned limit,
                         struct httpd_tally_entry **out, unsigned *open)
{
    *out = NULL;
    if (len > HTTPD_TALLY_KEY_MAX)
        len = HTTPD_TALLY_KEY_MAX;
    size_t b = hash(key, len);
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&t->lock);
    struct httpd_tally_entry *e = t->bucket[b];
    while (e && (e->len != len || memcmp(e->key, key, len) != 0))
        e = e->next;
    if (e && e->count >= limit) {
        *open = e->count;
        rc = ACC_ERR_TOO_MANY;
    } else if (!e && limit == 0) {
        *open = 0;
        rc = ACC_ERR_TOO_MANY;
    } else if (!e && !(e = calloc(1, sizeof *e))) {
        rc = ACC_ERR_NOMEM;
    } else {
        if (e->count == 0 && e->bytes == 0) { /* new */
            memcpy(e->key, key, len);
            e->len = len;
            e->next = t->bucket[b];
            t->bucket[b] = e;
        }
        e->count++;
        *out = e;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

unsigned httpd_tally_count(struct httpd_tally *t, const void *key, size_t len)
{
    if (len > HTTPD_TALLY_KEY_MAX)
        len = HTTPD_TALLY_KEY_MAX;
    size_t b = hash(key, len);
    unsigned n = 0;
    pthread_mutex_lock(&t->lock);
    for (const struct httpd_tally_entry *e = t->bucket[b]; e; e = e->next) {
        if (e->len == len && memcmp(e->key, key, len) == 0) {
            n = e->count;
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* Under t->lock: e goes once nothing counts it. */
static void drop_unused(struct httpd_tally *t, struct httpd_tally_entry *e)
{
    if (e->count || e->bytes)
        return;
    size_t b = hash(e->key, e->len);
    for (struct httpd_tally_entry **pp = &t->bucket[b]; *pp; pp = &(*pp)->next) {
        if (*pp == e) {
            *pp = e->next;
            free(e);
            break;
        }
    }
}

void httpd_tally_close(struct httpd_tally *t, struct httpd_tally_entry *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&t->lock);
    e->count--;
    drop_unused(t, e);
    pthread_mutex_unlock(&t->lock);
}

acc_err httpd_tally_hold(struct httpd_tally *t, struct httpd_tally_entry *e, size_t n, size_t limit,
                         size_t *held)
{
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&t->lock);
    *held = e->bytes;
    if (limit && e->bytes && n > limit - (e->bytes < limit ? e->bytes : limit))
        rc = ACC_ERR_TOO_MANY;
    else
        e->bytes += n;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

size_t httpd_tally_held(struct httpd_tally *t, struct httpd_tally_entry *e)
{
    pthread_mutex_lock(&t->lock);
    size_t n = e->bytes;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void httpd_tally_unhold(struct httpd_tally *t, struct httpd_tally_entry *e, size_t n)
{
    if (!e)
        return;
    pthread_mutex_lock(&t->lock);
    e->bytes -= n < e->bytes ? n : e->bytes;
    drop_unused(t, e);
    pthread_mutex_unlock(&t->lock);
}
