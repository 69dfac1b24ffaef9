/* SPDX-License-Identifier: Apache-2.0 */
/* retention_bench.c - what retention ([database] retain) costs the requests
 * that run meanwhile.  Prints, judges nothing.
 *
 * Makes N agreements that ended 30 days ago through the store itself (each
 * Terminated, with a trace of 4 events and 3 journal entries, as a
 * negotiation leaves them), starts the real accordd on that database with
 * retain = P1D, and has 16 clients post offers throughout.  A poller reads
 * accord_pruned_total every 20 ms: the posts that overlap the time it
 * moved are "with pruning", the others (before it starts and after it is
 * done, in the same run) "without".  Prints POST p50/p99 of each and how
 * long pruning took.
 *
 * Usage: accord_retention_bench [old agreements, default 10000] [most seconds, default 90] */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "store.h"
#include "strutil.h"
#include "wal_load.h"

#define CLIENTS  16
#define POLL_US  20000
#define AFTER_US 3000000 /* posts measured once pruning is done */
#define OLD      (30 * 86400)

struct sample {
    int64_t start, end; /* us */
};

struct client {
    struct sample *v;
    size_t n, cap;
    int failed;
};

static char base[64];
static atomic_bool stop;
static atomic_llong prune_start, prune_end; /* us; 0: not yet */
static int64_t t_zero;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - t_zero;
}

static int seed(const char *db, int n)
{
    struct acc_store *st = NULL;
    struct acc_store_options o = {db, false, 2, 0};
    struct acc_error err;
    if (acc_store_open(&o, &st, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    acc_time old = acc_now() - OLD;
    for (int i = 0; i < n; i++) {
        struct acc_agreement a;
        memset(&a, 0, sizeof a);
        snprintf(a.id, sizeof a.id, "old%013d", i);
        a.name = strdup("old");
        a.initiator = strdup("bench");
        a.state = ACC_STATE_PENDING;
        a.created = a.updated = old;
        a.duration = 3600;
        a.offer_xml = strdup(daemon_offer);
        a.offer_len = strlen(daemon_offer);
        struct acc_trace t;
        acc_trace_init(&t);
        for (int e = 0; e < 4; e++) {
            struct acc_trace_event ev = {.round = 1, .kind = ACC_TRACE_PREVIEW, .target = "alpha"};
            acc_trace_add(&t, &ev);
        }
        struct acc_booking b[3];
        memset(b, 0, sizeof b);
        for (int k = 0; k < 3; k++) {
            snprintf(b[k].key, sizeof b[k].key, "%s-%d", a.id, k);
            acc_strlcpy(b[k].agreement, a.id, sizeof b[k].agreement);
            acc_strlcpy(b[k].adapter, "alpha", sizeof b[k].adapter);
            acc_strlcpy(b[k].resource, "alpha", sizeof b[k].resource);
            b[k].amount = 4;
            b[k].start = old;
            b[k].end = old + 3600;
            b[k].state = ACC_BOOKING_CANCELLED;
        }
        acc_err rc = acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, &err);
        a.state = ACC_STATE_TERMINATED;
        a.updated = old;
        if (!rc)
            rc = acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, b, 3,
                                            &err);
        acc_trace_release(&t);
        acc_agreement_release(&a);
        if (rc) {
            fprintf(stderr, "seed: %s\n", err.msg);
            acc_store_close(st);
            return -1;
        }
    }
    acc_store_close(st);
    return 0;
}

static void *poster(void *arg)
{
    struct client *c = arg;
    while (!atomic_load(&stop)) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1024;
            struct sample *v = realloc(c->v, cap * sizeof *v);
            if (!v)
                break;
            c->v = v;
            c->cap = cap;
        }
        int64_t t0 = now_us();
        long st;
        free(daemon_call(base, "POST", "/agreements", daemon_offer, &st));
        if (st != 201) {
            c->failed++;
            continue;
        }
        c->v[c->n++] = (struct sample){t0, now_us()};
    }
    return NULL;
}

/* accord_pruned_total{kind="agreement"}, or -1. */
static long long pruned(void)
{
    long st;
    char *m = daemon_call(base, "GET", "/metrics", NULL, &st);
    const char *k = m ? strstr(m, "accord_pruned_total{kind=\"agreement\"} ") : NULL;
    long long v = k ? atoll(k + strlen("accord_pruned_total{kind=\"agreement\"} ")) : -1;
    free(m);
    return v;
}

static void poll_until(int n, int64_t deadline)
{
    int64_t last = now_us();
    long long before = 0;
    while (now_us() < deadline) {
        usleep(POLL_US);
        long long v = pruned();
        int64_t t = now_us();
        if (v > before && !atomic_load(&prune_start))
            atomic_store(&prune_start, last); /* it moved since the last poll */
        if (v >= n && !atomic_load(&prune_end))
            atomic_store(&prune_end, t);
        if (atomic_load(&prune_end) && t > atomic_load(&prune_end) + AFTER_US)
            return;
        before = v > before ? v : before;
        last = t;
    }
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, int64_t *v, size_t n)
{
    if (!n) {
        printf("  %-16s no posts\n", what);
        return;
    }
    qsort(v, n, sizeof *v, cmp);
    printf("  %-16s %6zu posts  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", what, n,
           (double)v[n / 2] / 1000, (double)v[(n * 99) / 100] / 1000, (double)v[n - 1] / 1000);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int secs = argc > 2 ? atoi(argv[2]) : 90;
    if (n <= 0 || n > 10000000 || secs <= 5 || secs > 3600) {
        fprintf(stderr, "usage: accord_retention_bench [old agreements] [most seconds, > 5]\n");
        return 2;
    }
    char dir[64] = "/tmp/accord-retbench-XXXXXX", db[128], ini[128];
    if (!mkdtemp(dir))
        return 2;
    snprintf(db, sizeof db, "%s/ret.db", dir);
    snprintf(ini, sizeof ini, "%s/ret.ini", dir);
    FILE *f = fopen(ini, "w");
    if (!f)
        return 2;
    fprintf(f, wal_load_config, "retain = P1D\n");
    fclose(f);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t_zero = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    if (seed(db, n))
        return 1;
    printf("machine: %ld cores; %d agreements that ended 30 days ago, %.1f s to make\n",
           sysconf(_SC_NPROCESSORS_ONLN), n, (double)now_us() / 1e6);
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    if (pid <= 0)
        return 1;
    struct client c[CLIENTS];
    pthread_t t[CLIENTS];
    memset(c, 0, sizeof c);
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&t[i], NULL, poster, &c[i]);
    poll_until(n, now_us() + (int64_t)secs * 1000000);
    atomic_store(&stop, true);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(t[i], NULL);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);

    int64_t ws = atomic_load(&prune_start), we = atomic_load(&prune_end);
    size_t total = 0;
    int failed = 0;
    for (int i = 0; i < CLIENTS; i++) {
        total += c[i].n;
        failed += c[i].failed;
    }
    int64_t *with = calloc(total + 1, sizeof *with), *without = calloc(total + 1, sizeof *without);
    size_t nw = 0, nwo = 0;
    for (int i = 0; i < CLIENTS; i++) {
        for (size_t k = 0; k < c[i].n; k++) {
            const struct sample *s = &c[i].v[k];
            bool overlap = ws && s->start < (we ? we : INT64_MAX) && s->end > ws;
            (overlap ? with : without)[overlap ? nw++ : nwo++] = s->end - s->start;
        }
        free(c[i].v);
    }
    printf("%d clients posting offers (%d failed)\n", CLIENTS, failed);
    if (!ws || !we)
        printf("pruning did not finish within %d s (started: %s)\n", secs, ws ? "yes" : "no");
    else
        printf("pruning %d agreements took %.2f s (+- %d ms, the poll)\n", n,
               (double)(we - ws) / 1e6, POLL_US / 1000);
    report("without pruning", without, nwo);
    report("with pruning", with, nw);
    free(with);
    free(without);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return ws && we ? 0 : 1;
}
