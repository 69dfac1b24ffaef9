/* test_wal.c - the real accordd binary under sustained load keeps its
 * SQLite write-ahead log within [database] wal_limit (defect 5: only passive
 * checkpoints ran and the -wal file grew without bound, 7.1 GB for a 0.5 GB
 * database).
 *
 * Several clients post offers while others read agreements back (readers
 * are what keep a passive checkpoint from ever resetting the log); a
 * sampler stats the -wal file every few milliseconds throughout. */
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
#include "testutil.h"

#define WAL_LIMIT (2 << 20)
/* What the log may exceed the limit by: the one transaction that is being
 * committed when the limit is crossed (a group commit of every write queued
 * meanwhile; a few hundred KiB here). */
#define WAL_SLACK (1 << 20)
#define POSTERS   6
#define READERS   2
#define OFFERS    3000 /* in all */
#define MAX_SECS  240

static char base[64];
static char db[256], wal[280], ini[256];

static const char config[] = "[database]\n"
                             "durable = no\n"
                             "wal_limit = %d\n"
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
static time_t deadline;
static char last_id[64];
static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;

static int setup(void)
{
    snprintf(db, sizeof db, "%s/wal.db", acc_test_tmpdir());
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(ini, sizeof ini, "%s/wal.ini", acc_test_tmpdir());
    FILE *f = fopen(ini, "w");
    if (!f)
        return 1;
    fprintf(f, config, WAL_LIMIT);
    fclose(f);
    return 0;
}

static void *poster(void *arg)
{
    (void)arg;
    while (atomic_fetch_add(&posted, 1) < OFFERS && time(NULL) < deadline) {
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

static void test_wal_bounded(void)
{
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    deadline = time(NULL) + MAX_SECS;
    pthread_t post[POSTERS], read[READERS], sample;
    pthread_create(&sample, NULL, sampler, NULL);
    for (int i = 0; i < POSTERS; i++)
        pthread_create(&post[i], NULL, poster, NULL);
    for (int i = 0; i < READERS; i++)
        pthread_create(&read[i], NULL, reader, NULL);
    for (int i = 0; i < POSTERS; i++)
        pthread_join(post[i], NULL);
    atomic_store(&done, true);
    for (int i = 0; i < READERS; i++)
        pthread_join(read[i], NULL);
    pthread_join(sample, NULL);

    long long max = atomic_load(&wal_max);
    printf("\n    %d agreements, %d failed; largest -wal %lld bytes (limit %d)\n",
           atomic_load(&created), atomic_load(&failed), max, WAL_LIMIT);
    CU_ASSERT_EQUAL(atomic_load(&failed), 0);
    CU_ASSERT_TRUE(atomic_load(&created) >= OFFERS / 2);
    CU_ASSERT_TRUE(max > 0);
    CU_ASSERT_TRUE(max <= WAL_LIMIT + WAL_SLACK);

    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static const struct acc_test_case tests[] = {
    {"the -wal file stays within wal_limit under sustained load", test_wal_bounded},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"wal", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
