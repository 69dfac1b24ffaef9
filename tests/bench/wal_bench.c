/* wal_bench.c - the size of accordd's write-ahead log under sustained load
 * (issue 9's benchmark: WAL <= 64 MB throughout 100,000 agreements).  Prints,
 * does not judge; tests/integration/test_wal.c is the test.
 *
 * Starts the real accordd (the default wal_limit, 64 MiB, unless a second
 * argument gives one), posts N offers from 16 clients while 2 more read
 * agreements back, samples the -wal file every 2 ms, and prints the largest
 * size seen and the database's size.
 *
 * Usage: accord_wal_bench [agreements, default 100000] [wal_limit bytes] */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"

#define POSTERS 16
#define READERS 2

static int OFFERS = 100000;

static char base[64];
static char dir[64], db[256], wal[280], ini[256];

static const char config[] = "[database]\n"
                             "durable = no\n"
                             "%s"
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

static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>wal</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
    "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>alpha</co:Site><co:Nodes>4</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>beta</co:Site><co:Nodes>4</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>100</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

static atomic_int posted, created, failed;
static atomic_bool done;
static atomic_llong wal_max;
static char last_id[64];
static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;

static void *poster(void *arg)
{
    (void)arg;
    while (atomic_fetch_add(&posted, 1) < OFFERS) {
        long st;
        char *reply = daemon_call(base, "POST", "/agreements", offer, &st);
        if (st == 201) {
            atomic_fetch_add(&created, 1);
            char *id = reply ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
            if (id) {
                pthread_mutex_lock(&id_lock);
                snprintf(last_id, sizeof last_id, "%s", id);
                pthread_mutex_unlock(&id_lock);
            }
            free(id);
        } else {
            atomic_fetch_add(&failed, 1);
        }
        free(reply);
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        char path[128];
        pthread_mutex_lock(&id_lock);
        snprintf(path, sizeof path, last_id[0] ? "/agreements/%s" : "/agreements?limit=5", last_id);
        pthread_mutex_unlock(&id_lock);
        long st;
        free(daemon_call(base, "GET", path, NULL, &st));
    }
    return NULL;
}

static void *sampler(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        struct stat sb;
        if (stat(wal, &sb) == 0 && (long long)sb.st_size > atomic_load(&wal_max))
            atomic_store(&wal_max, (long long)sb.st_size);
        usleep(2000);
    }
    return NULL;
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        char *end;
        long n = strtol(argv[1], &end, 10);
        if (*end || n <= 0 || n > 100000000) {
            fprintf(stderr, "usage: accord_wal_bench [agreements] [wal_limit bytes]\n");
            return 2;
        }
        OFFERS = (int)n;
    }
    char limit[64] = "";
    if (argc > 2)
        snprintf(limit, sizeof limit, "wal_limit = %s\n", argv[2]);
    snprintf(dir, sizeof dir, "/tmp/accord-walbench-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    snprintf(db, sizeof db, "%s/wal.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(ini, sizeof ini, "%s/wal.ini", dir);
    FILE *f = fopen(ini, "w");
    if (!f)
        return 2;
    fprintf(f, config, limit);
    fclose(f);
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    if (pid <= 0) {
        fprintf(stderr, "accordd did not start\n");
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t post[POSTERS], read[READERS], sample;
    pthread_create(&sample, NULL, sampler, NULL);
    for (int i = 0; i < POSTERS; i++)
        pthread_create(&post[i], NULL, poster, NULL);
    for (int i = 0; i < READERS; i++)
        pthread_create(&read[i], NULL, reader, NULL);
    for (int i = 0; i < POSTERS; i++)
        pthread_join(post[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_store(&done, true);
    for (int i = 0; i < READERS; i++)
        pthread_join(read[i], NULL);
    pthread_join(sample, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%d agreements (%d failed) in %.1f s, %.0f/s; largest -wal %.1f MB (limit %s); "
           "database %.1f MB\n",
           atomic_load(&created), atomic_load(&failed), secs, atomic_load(&created) / secs,
           (double)atomic_load(&wal_max) / 1e6, argc > 2 ? argv[2] : "default 64 MiB",
           (double)file_size(db) / 1e6);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
