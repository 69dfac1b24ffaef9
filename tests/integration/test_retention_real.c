/* SPDX-License-Identifier: Apache-2.0 */
/* test_retention_real.c - [database] retain in the real accordd: what
 * ended longer ago is deleted by housekeeping (its job directory too),
 * counted in accord_pruned_total; what is open stays. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "store.h"
#include "strutil.h"
#include "testutil.h"
#include "wal_load.h"

#define OLD_ONES 50

static char db[300], ini[300], jobdir[400];
static pid_t pid = -1;

static int teardown(void)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return 0;
}

static int add(struct acc_store *st, const char *id)
{
    struct acc_agreement a;
    memset(&a, 0, sizeof a);
    acc_strlcpy(a.id, id, sizeof a.id);
    a.name = strdup("old");
    a.initiator = strdup("tester");
    a.state = ACC_STATE_PENDING;
    a.created = a.updated = 1000;
    a.duration = 3600;
    a.offer_xml = strdup(daemon_offer);
    a.offer_len = strlen(daemon_offer);
    int rc = acc_store_agreement_create(st, &a, NULL, 0, NULL, NULL, NULL);
    acc_agreement_release(&a);
    return rc;
}

/* OLD_ONES agreements Terminated 30 days ago (the first with a job
 * directory), one Observed as long ago, through the store and then aged. */
static int setup(void)
{
    snprintf(db, sizeof db, "%s/ret.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/ret.ini", acc_test_tmpdir());
    FILE *f = fopen(ini, "w");
    if (!f)
        return 1;
    fprintf(f, wal_load_config, "retain = P1D\n");
    fclose(f);
    struct acc_store *st = NULL;
    struct acc_store_options o = {db, false, 2, 0};
    if (acc_store_open(&o, &st, NULL))
        return 1;
    int rc = 0;
    for (int i = 0; i < OLD_ONES && !rc; i++) {
        char id[32];
        snprintf(id, sizeof id, "oldoldoldold%04d", i);
        rc = add(st, id);
    }
    rc = rc || add(st, "stillobservedxxx");
    acc_store_close(st);
    snprintf(jobdir, sizeof jobdir, "%s/accord-jobs/oldoldoldold0000", acc_test_tmpdir());
    char sql[1200];
    snprintf(sql, sizeof sql,
             "PRAGMA foreign_keys=ON;"
             "UPDATE agreement SET state = 'Terminated', updated = %lld;"
             "UPDATE agreement SET state = 'Observed', end_time = %lld "
             "WHERE id = 'stillobservedxxx';"
             "INSERT INTO run (agreement, style, state, directory, metampich, rsl) "
             "SELECT seq, 'none', 'exited', '%s', '', '' FROM agreement "
             "WHERE id = 'oldoldoldold0000';",
             (long long)(acc_now() - 30 * 86400), (long long)(acc_now() + 86400), jobdir);
    sqlite3 *c = NULL;
    rc = rc || sqlite3_open(db, &c) != SQLITE_OK || sqlite3_exec(c, sql, 0, 0, 0) != SQLITE_OK;
    sqlite3_close(c);
    char sub[420], out[440];
    snprintf(sub, sizeof sub, "%s/accord-jobs", acc_test_tmpdir());
    snprintf(out, sizeof out, "%s/output", jobdir);
    mkdir(sub, 0700);
    mkdir(jobdir, 0700);
    f = fopen(out, "w");
    if (f)
        fclose(f);
    return rc || !f;
}

static long long pruned(const char *base)
{
    long st;
    char *m = daemon_call(base, "GET", "/metrics", NULL, &st);
    const char *k = m ? strstr(m, "accord_pruned_total{kind=\"agreement\"} ") : NULL;
    long long v = k ? atoll(k + strlen("accord_pruned_total{kind=\"agreement\"} ")) : -1;
    free(m);
    return v;
}

static void test_retain_prunes(void)
{
    char base[64];
    pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    /* the first housekeeping pass comes 5 s after the start */
    long long n = 0;
    for (int i = 0; i < 300 && (n = pruned(base)) < OLD_ONES; i++)
        usleep(100 * 1000);
    CU_ASSERT_EQUAL(n, OLD_ONES);
    long st;
    free(daemon_call(base, "GET", "/agreements/oldoldoldold0007", NULL, &st));
    CU_ASSERT_EQUAL(st, 404);
    free(daemon_call(base, "GET", "/agreements/stillobservedxxx", NULL, &st));
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_EQUAL(access(jobdir, F_OK), -1);
    /* and a new agreement is made as before */
    free(daemon_call(base, "POST", "/agreements", daemon_offer, &st));
    CU_ASSERT_EQUAL(st, 201);
}

static const struct acc_test_case tests[] = {
    {"retain deletes what ended long ago, and its job directory", test_retain_prunes},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"retention in accordd", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
