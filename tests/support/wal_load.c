/* SPDX-License-Identifier: Apache-2.0 */
#include "wal_load.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"
#include "timefmt.h"

const char wal_load_config[] = "[database]\n"
                               "durable = no\n"
                               "%s"
                               /* one user's load: no bound on their open agreements */
                               "[quota]\n"
                               "max_agreements = unlimited\n"
                               "[site alpha]\n"
                               "adapter = sim-batch\n"
                               "nodes = 1000000\n"
                               "[site beta]\n"
                               "adapter = sim-batch\n"
                               "nodes = 1000000\n"
                               "[network net]\n"
                               "adapter = sim-network\n"
                               "[link alpha_beta]\n"
                               "sites = alpha beta\n"
                               "capacity = 100000000\n"
                               "network = net\n";

struct run {
    const struct wal_load *w;
    atomic_int posted, created, failed;
    atomic_bool done;
    atomic_llong wal_max;
    pthread_mutex_t id_lock;
    char last_id[64];
};

static void *poster(void *arg)
{
    struct run *r = arg;
    while (atomic_fetch_add(&r->posted, 1) < r->w->offers &&
           (!r->w->deadline || time(NULL) < r->w->deadline)) {
        long st;
        char *reply = daemon_call(r->w->base, "POST", "/agreements", daemon_offer, &st);
        if (st == 201) {
            atomic_fetch_add(&r->created, 1);
            char *id = reply ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
            if (id) {
                pthread_mutex_lock(&r->id_lock);
                snprintf(r->last_id, sizeof r->last_id, "%s", id);
                pthread_mutex_unlock(&r->id_lock);
            }
            free(id);
        } else {
            atomic_fetch_add(&r->failed, 1);
        }
        free(reply);
    }
    return NULL;
}

static void *reader(void *arg)
{
    struct run *r = arg;
    while (!atomic_load(&r->done)) {
        char path[128];
        pthread_mutex_lock(&r->id_lock);
        snprintf(path, sizeof path, r->last_id[0] ? "/agreements/%s" : "/agreements?limit=5",
                 r->last_id);
        pthread_mutex_unlock(&r->id_lock);
        long st;
        free(daemon_call(r->w->base, "GET", path, NULL, &st));
    }
    return NULL;
}

static void *sampler(void *arg)
{
    struct run *r = arg;
    while (!atomic_load(&r->done)) {
        struct stat sb;
        if (stat(r->w->wal, &sb) == 0 && (long long)sb.st_size > atomic_load(&r->wal_max))
            atomic_store(&r->wal_max, (long long)sb.st_size);
        usleep(2000);
    }
    return NULL;
}

void wal_load_run(struct wal_load *w)
{
    struct run r = {.w = w};
    pthread_mutex_init(&r.id_lock, NULL);
    pthread_t *post = calloc((size_t)w->posters, sizeof *post);
    pthread_t *read = calloc((size_t)w->readers, sizeof *read);
    pthread_t sample;
    if (!post || !read)
        abort();
    int64_t t0 = acc_mono_us();
    pthread_create(&sample, NULL, sampler, &r);
    for (int i = 0; i < w->posters; i++)
        pthread_create(&post[i], NULL, poster, &r);
    for (int i = 0; i < w->readers; i++)
        pthread_create(&read[i], NULL, reader, &r);
    for (int i = 0; i < w->posters; i++)
        pthread_join(post[i], NULL);
    w->seconds = (double)(acc_mono_us() - t0) / 1e6;
    atomic_store(&r.done, true);
    for (int i = 0; i < w->readers; i++)
        pthread_join(read[i], NULL);
    pthread_join(sample, NULL);
    w->created = atomic_load(&r.created);
    w->failed = atomic_load(&r.failed);
    w->wal_max = atomic_load(&r.wal_max);
    pthread_mutex_destroy(&r.id_lock);
    free(post);
    free(read);
}
