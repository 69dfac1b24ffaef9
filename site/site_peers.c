/* SPDX-License-Identifier: Apache-2.0 */
/* site_peers.c - the Accord instances a site admits ([peer NAME]), found by
 * their certificate's subject DN or SHA-256 fingerprint, with their limits.
 * The table is replaced whole on SIGHUP; lib/httpd counts the open
 * connections by name, so that a reload neither forgets nor doubles them. */
#include "site_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../lib/common/strutil.h"

struct entry {
    struct site_peer view;
    char *subject, *fingerprint;
};

struct site_peers {
    pthread_mutex_t lock;
    struct entry *v;
    size_t n;
};

static void entries_free(struct entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].subject);
        free(v[i].fingerprint);
    }
    free(v);
}

static acc_err entries_make(const struct acc_site_peer_cfg *v, size_t n, struct entry **out,
                            struct acc_error *err)
{
    struct entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        acc_strlcpy(e[i].view.name, v[i].name, sizeof e[i].view.name);
        e[i].view.max_nodes = v[i].max_nodes;
        e[i].view.max_bandwidth = v[i].max_bandwidth;
        e[i].view.max_duration = v[i].max_duration;
        e[i].view.max_advance = v[i].max_advance;
        e[i].view.max_reservations = v[i].max_reservations;
        e[i].view.connections = v[i].connections;
        e[i].view.admin = v[i].admin;
        e[i].view.metrics_only = v[i].metrics_only;
        e[i].subject = acc_strdup(v[i].subject);
        e[i].fingerprint = acc_strdup(v[i].fingerprint);
        if ((v[i].subject && !e[i].subject) || (v[i].fingerprint && !e[i].fingerprint)) {
            entries_free(e, n);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    *out = e;
    return ACC_OK;
}

acc_err site_peers_new(const struct acc_site_peer_cfg *v, size_t n, struct site_peers **out,
                       struct acc_error *err)
{
    *out = NULL;
    struct site_peers *p = calloc(1, sizeof *p);
    if (!p)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = entries_make(v, n, &p->v, err);
    if (rc) {
        free(p);
        return rc;
    }
    p->n = n;
    pthread_mutex_init(&p->lock, NULL);
    *out = p;
    return ACC_OK;
}

void site_peers_free(struct site_peers *p)
{
    if (!p)
        return;
    entries_free(p->v, p->n);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

acc_err site_peers_replace(struct site_peers *p, const struct acc_site_peer_cfg *v, size_t n,
                           struct acc_error *err)
{
    struct entry *e = NULL;
    acc_err rc = entries_make(v, n, &e, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&p->lock);
    struct entry *old = p->v;
    size_t old_n = p->n;
    p->v = e;
    p->n = n;
    pthread_mutex_unlock(&p->lock);
    entries_free(old, old_n);
    return ACC_OK;
}

static bool matches(const struct entry *e, const char *subject, const char *fingerprint)
{
    if (e->fingerprint && fingerprint && strcasecmp(e->fingerprint, fingerprint) == 0)
        return true;
    return e->subject && subject && strcmp(e->subject, subject) == 0;
}

bool site_peers_find(struct site_peers *p, const char *subject, const char *fingerprint,
                     struct site_peer *out)
{
    bool found = false;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->n && !found; i++) {
        if (matches(&p->v[i], subject, fingerprint)) {
            if (out)
                *out = p->v[i].view;
            found = true;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return found;
}
