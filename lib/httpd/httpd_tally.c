/* httpd_tally.c - open connections per key, so that one client (an address,
 * a principal) cannot take every connection slot.  A hash table of keys
 * with a count each, under one lock; an entry goes with its last
 * connection. */
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
        if (e->count == 0) { /* new */
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

void httpd_tally_close(struct httpd_tally *t, struct httpd_tally_entry *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&t->lock);
    if (--e->count == 0) {
        size_t b = hash(e->key, e->len);
        for (struct httpd_tally_entry **pp = &t->bucket[b]; *pp; pp = &(*pp)->next) {
            if (*pp == e) {
                *pp = e->next;
                free(e);
                break;
            }
        }
    }
    pthread_mutex_unlock(&t->lock);
}
