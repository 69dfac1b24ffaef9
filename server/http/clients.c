/* clients.c - open connections per client address, so that one client
 * cannot take every connection slot.  A hash table of addresses with a
 * count each, under one lock (connections come and go rarely compared with
 * what a request costs). */
#include "clients.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BUCKETS 1024

struct entry {
    unsigned char addr[16];
    unsigned char len;
    unsigned count;
    struct entry *next;
};

struct acc_clients {
    pthread_mutex_t lock;
    unsigned limit;
    struct entry *bucket[BUCKETS];
};

struct acc_client {
    struct entry *e; /* NULL: not counted (no address, or out of memory) */
    bool over;
};

struct acc_clients *acc_clients_new(unsigned limit)
{
    struct acc_clients *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    t->limit = limit;
    return t;
}

void acc_clients_free(struct acc_clients *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < BUCKETS; i++) {
        while (t->bucket[i]) {
            struct entry *e = t->bucket[i];
            t->bucket[i] = e->next;
            free(e);
        }
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* The bytes that identify a client: its IPv4 or IPv6 address. */
static size_t address_key(const struct sockaddr *sa, unsigned char out[16])
{
    if (sa && sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

static size_t hash(const unsigned char *k, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 16777619u;
    return h % BUCKETS;
}

struct acc_client *acc_clients_open(struct acc_clients *t, const struct sockaddr *sa)
{
    struct acc_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    unsigned char key[16];
    size_t n = address_key(sa, key);
    if (n == 0)
        return c;
    size_t b = hash(key, n);
    pthread_mutex_lock(&t->lock);
    struct entry *e = t->bucket[b];
    while (e && (e->len != n || memcmp(e->addr, key, n) != 0))
        e = e->next;
    if (!e && (e = calloc(1, sizeof *e))) {
        memcpy(e->addr, key, n);
        e->len = (unsigned char)n;
        e->next = t->bucket[b];
        t->bucket[b] = e;
    }
    if (e) {
        e->count++;
        c->over = e->count > t->limit;
        c->e = e;
    }
    pthread_mutex_unlock(&t->lock);
    return c;
}

bool acc_client_over_limit(const struct acc_client *c)
{
    return c && c->over;
}

void acc_clients_close(struct acc_clients *t, struct acc_client *c)
{
    if (!c)
        return;
    struct entry *e = c->e;
    if (e) {
        pthread_mutex_lock(&t->lock);
        if (--e->count == 0) {
            size_t b = hash(e->addr, e->len);
            for (struct entry **pp = &t->bucket[b]; *pp; pp = &(*pp)->next) {
                if (*pp == e) {
                    *pp = e->next;
                    free(e);
                    break;
                }
            }
        }
        pthread_mutex_unlock(&t->lock);
    }
    free(c);
}
