/* SPDX-License-Identifier: Apache-2.0 */
/* test_launcher.c - the launcher without a store (part of test_launch): it
 * is handed an agreement and its run as plain data and reports through its
 * hooks, which these tests record.  A fake mpiexec (a shell script) stands
 * for MPICH's; jobs "running before a restart" are handed over with the pid
 * of a process that is gone and a directory made by hand. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "launcher.h"
#include "strutil.h"
#include "testutil.h"

extern const struct acc_test_case acc_launcher_tests[];

/* ------------------------------------------------------------ the hooks */

struct rec {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    acc_err may;      /* what may_start answers */
    unsigned started; /* calls of each hook */
    unsigned ended;
    enum acc_run_state state; /* of the last call */
    int exit_status;
    int64_t pid;
    int64_t output_total;
    char reason[512];
    char output[512];
};

static void rec_init(struct rec *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
}

static void rec_release(struct rec *r)
{
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
}

static acc_err rec_may_start(void *ctx, const char *id, struct acc_error *err)
{
    struct rec *r = ctx;
    if (r->may)
        return acc_error_set(err, r->may, "agreement %s: no longer wanted", id);
    return ACC_OK;
}

static void rec_started(void *ctx, const struct acc_run *run)
{
    struct rec *r = ctx;
    pthread_mutex_lock(&r->lock);
    r->started++;
    r->state = run->state;
    r->pid = run->pid;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void rec_ended(void *ctx, const struct acc_run *run, const char *reason)
{
    struct rec *r = ctx;
    pthread_mutex_lock(&r->lock);
    r->ended++;
    r->state = run->state;
    r->exit_status = run->exit_status;
    r->pid = run->pid;
    r->output_total = run->output_total;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
    snprintf(r->output, sizeof r->output, "%.*s", (int)(run->output ? run->output_len : 0),
             run->output ? run->output : "");
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Waits up to 10 s for the job's end; false when it did not come. */
static bool rec_wait_ended(struct rec *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&r->lock);
    while (!r->ended && pthread_cond_timedwait(&r->cond, &r->lock, &ts) == 0) {
    }
    bool ended = r->ended > 0;
    pthread_mutex_unlock(&r->lock);
    return ended;
}

/* ------------------------------------------------------------- fixture */

struct lfix {
    char root[256]; /* [launch] directory */
    struct acc_config cfg;
    struct rec rec;
    struct acc_launcher *l;
    struct acc_alloc_component comp;
    struct acc_agreement ag;
};

/* A launcher on one site alpha, jobs under a directory of their own; the
 * fake mpiexec prints its arguments' count and exits with FAKE_EXIT. */
static void lfix_open(struct lfix *f, const char *name)
{
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "%s/%s", acc_test_tmpdir(), name);
    CU_ASSERT_EQUAL_FATAL(mkdir(f->root, 0755), 0);
    char path[512], ini[1024];
    snprintf(path, sizeof path, "%s/fake-mpiexec", f->root);
    FILE *s = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    fputs("#!/bin/sh\necho \"fake mpiexec: $# arguments\"\nexit ${FAKE_EXIT:-7}\n", s);
    fclose(s);
    chmod(path, 0755);
    /* under root the jobs run as the test account (never as root) */
    const char *account = acc_test_job_account();
    snprintf(ini, sizeof ini,
             "[launch]\nenabled = yes\ndirectory = %s\nmpiexec = %s\ngrace = PT1S\n"
             "%s%s%s[site alpha]\nadapter = sim-batch\nnodes = 4\n",
             f->root, path, account ? "account = " : "", account ? account : "",
             account ? "\n" : "");
    ACC_ASSERT_OK(acc_config_load_string(ini, "t", &f->cfg, NULL));
    rec_init(&f->rec);
    struct acc_launcher_hooks h = {
        .ctx = &f->rec, .may_start = rec_may_start, .started = rec_started, .ended = rec_ended};
    ACC_ASSERT_OK(acc_launcher_new(&f->cfg, &h, &f->l, NULL));
    /* One component of one node, starting now, for a minute.  Borrowed
     * literals: the agreement is never released. */
    f->comp = (struct acc_alloc_component){
        .name = "one", .site = "alpha", .nodes = 1, .ppn = 1, .executable = "prog"};
    acc_strlcpy(f->ag.id, "launchertest0001", sizeof f->ag.id);
    f->ag.state = ACC_STATE_OBSERVED;
    f->ag.launch = ACC_LAUNCH_METAMPICH;
    f->ag.start = acc_now();
    f->ag.end = f->ag.start + 60;
    f->ag.comps = &f->comp;
    f->ag.n_comps = 1;
}

static void lfix_close(struct lfix *f)
{
    acc_launcher_free(f->l);
    rec_release(&f->rec);
    acc_config_release(&f->cfg);
}

/* The run as describe made it; the caller frees it. */
static struct acc_run *lfix_describe(struct lfix *f)
{
    f->ag.run = NULL;
    ACC_ASSERT_OK(acc_launcher_describe(f->l, &f->ag, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->ag.run);
    return f->ag.run;
}

static void run_free(struct acc_run *r)
{
    acc_run_release(r);
    free(r);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* The pid of a process that has ended (and been reaped). */
static pid_t gone_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

/* A job "running before a restart" whose process is gone, with a status
 * file holding status (NULL: none) and output.dropped holding dropped. */
static void adopt_gone_dropped(struct lfix *f, const char *status, const char *dropped)
{
    struct acc_run *r = lfix_describe(f);
    CU_ASSERT_EQUAL(r->state, ACC_RUN_WAITING);
    CU_ASSERT_EQUAL_FATAL(mkdir(r->directory, 0755), 0);
    if (status)
        put(r->directory, "status", status);
    put(r->directory, "output", "hello\n");
    put(r->directory, "output.dropped", dropped);
    r->state = ACC_RUN_RUNNING;
    r->started = f->ag.start;
    r->pid = gone_pid();
    r->pid_start = 12345;
    acc_launcher_resume_run(f->l, &f->ag, r);
    run_free(r);
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f->rec));
}

static void adopt_gone(struct lfix *f, const char *status)
{
    adopt_gone_dropped(f, status, "0\n");
}

/* ---------------------------------------------------------------- tests */

/* Regression: a status file holding garbage was read with atoi as exit
 * status 0, so the job counted as a success. */
static void test_status_garbage(void)
{
    struct lfix f;
    lfix_open(&f, "garbage");
    adopt_gone(&f, "garbage\n");
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_LOST);
    CU_ASSERT_EQUAL(f.rec.exit_status, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.rec.reason, "garbage"));
    CU_ASSERT_STRING_EQUAL(f.rec.output, "hello\n");
    CU_ASSERT_EQUAL(f.rec.started, 0);
    lfix_close(&f);
}

/* An empty status file (the wrapper was killed while writing it) is no
 * status either. */
static void test_status_empty(void)
{
    struct lfix f;
    lfix_open(&f, "empty");
    adopt_gone(&f, "");
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_LOST);
    CU_ASSERT_EQUAL(f.rec.exit_status, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.rec.reason, "empty"));
    lfix_close(&f);
}

/* Out of range, or a number with something after it: no status. */
static void test_status_out_of_range(void)
{
    static const char *const bad[] = {"256\n", "-1\n", "3 4\n", "99999999999999999999\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct lfix f;
        char name[32];
        snprintf(name, sizeof name, "range%zu", i);
        lfix_open(&f, name);
        adopt_gone(&f, bad[i]);
        CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_LOST);
        CU_ASSERT_EQUAL(f.rec.exit_status, -1);
        lfix_close(&f);
    }
}

/* A status the wrapper wrote ("N\n") is read as it is. */
static void test_status_read(void)
{
    struct lfix f;
    lfix_open(&f, "status3");
    adopt_gone(&f, "3\n");
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_EXITED);
    CU_ASSERT_EQUAL(f.rec.exit_status, 3);
    CU_ASSERT_STRING_EQUAL(f.rec.reason, "the job exited with status 3");
    CU_ASSERT_EQUAL(f.rec.output_total, 6 + 0);
    lfix_close(&f);
    /* The count of bytes dropped is read strictly too: unknown, not 0. */
    lfix_open(&f, "dropped");
    adopt_gone_dropped(&f, "0\n", "lots\n");
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_EXITED);
    CU_ASSERT_EQUAL(f.rec.exit_status, 0);
    CU_ASSERT_EQUAL(f.rec.output_total, -1);
    lfix_close(&f);
    lfix_open(&f, "dropped2");
    adopt_gone_dropped(&f, "0\n", "10\n");
    CU_ASSERT_EQUAL(f.rec.output_total, 6 + 10);
    lfix_close(&f);
}

/* Without a status file: lost, as before. */
static void test_status_missing(void)
{
    struct lfix f;
    lfix_open(&f, "nostatus");
    adopt_gone(&f, NULL);
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_LOST);
    CU_ASSERT_EQUAL(f.rec.exit_status, -1);
    lfix_close(&f);
}

/* A waiting run whose start has come is started (the started hook has its
 * pid) and its end reported with the fake mpiexec's status and output. */
static void test_start_and_end(void)
{
    struct lfix f;
    lfix_open(&f, "start");
    struct acc_run *r = lfix_describe(&f);
    CU_ASSERT_EQUAL(r->state, ACC_RUN_WAITING);
    acc_launcher_schedule(f.l, &f.ag, r);
    run_free(r); /* the launcher keeps its own copy */
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f.rec));
    CU_ASSERT_EQUAL(f.rec.started, 1);
    CU_ASSERT_EQUAL(f.rec.ended, 1);
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_EXITED);
    CU_ASSERT_EQUAL(f.rec.exit_status, 7);
    CU_ASSERT_EQUAL(f.rec.pid, 0); /* ended: no process group any more */
    CU_ASSERT_PTR_NOT_NULL(strstr(f.rec.output, "fake mpiexec:"));
    lfix_close(&f);
}

/* may_start says the agreement no longer wants its job: terminated with
 * that reason, nothing started. */
static void test_not_wanted(void)
{
    struct lfix f;
    lfix_open(&f, "unwanted");
    f.rec.may = ACC_ERR_STATE;
    struct acc_run *r = lfix_describe(&f);
    acc_launcher_schedule(f.l, &f.ag, r);
    run_free(r);
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f.rec));
    CU_ASSERT_EQUAL(f.rec.started, 0);
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_TERMINATED);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.rec.reason, "no longer wanted"));
    char path[512];
    snprintf(path, sizeof path, "%s/%s/status", f.root, f.ag.id);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    lfix_close(&f);
}

/* Stopping a run that waits for its start: terminated, never started. */
static void test_stop_waiting(void)
{
    struct lfix f;
    lfix_open(&f, "stopwait");
    f.ag.start += 3600;
    f.ag.end += 3600;
    struct acc_run *r = lfix_describe(&f);
    acc_launcher_schedule(f.l, &f.ag, r);
    run_free(r);
    unsigned waiting = 0, running = 0;
    acc_launcher_counts(f.l, &waiting, &running);
    CU_ASSERT_EQUAL(waiting, 1);
    CU_ASSERT_TRUE(acc_launcher_stop(f.l, f.ag.id));
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f.rec));
    CU_ASSERT_EQUAL(f.rec.started, 0);
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_TERMINATED);
    CU_ASSERT_FALSE(acc_launcher_stop(f.l, f.ag.id)); /* nothing left */
    lfix_close(&f);
}

/* Waits up to 10 s for the job's start; false when it did not come. */
static bool rec_wait_started(struct rec *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&r->lock);
    while (!r->started && pthread_cond_timedwait(&r->cond, &r->lock, &ts) == 0) {
    }
    bool started = r->started > 0;
    pthread_mutex_unlock(&r->lock);
    return started;
}

/* A modified agreement whose run waits: the start moved from an hour ahead
 * to now starts the job now (and an unknown id holds nothing). */
static void test_retime_waiting(void)
{
    struct lfix f;
    lfix_open(&f, "retimewait");
    f.ag.start += 3600;
    f.ag.end += 3600;
    struct acc_run *r = lfix_describe(&f);
    acc_launcher_schedule(f.l, &f.ag, r);
    run_free(r);
    CU_ASSERT_EQUAL(acc_launcher_held(f.l, f.ag.id), ACC_LAUNCHER_HELD_WAITING);
    CU_ASSERT_EQUAL(acc_launcher_retime(f.l, "nosuchagreement1", acc_now(), acc_now() + 60),
                    ACC_LAUNCHER_NONE);
    usleep(300000);
    CU_ASSERT_EQUAL(f.rec.started, 0); /* still an hour to go */
    acc_time now = acc_now();
    CU_ASSERT_EQUAL(acc_launcher_retime(f.l, f.ag.id, now, now + 60), ACC_LAUNCHER_HELD_WAITING);
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f.rec));
    CU_ASSERT_EQUAL(f.rec.started, 1);
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_EXITED);
    CU_ASSERT_EQUAL(f.rec.exit_status, 7);
    lfix_close(&f);
}

/* A modified agreement whose job runs: its end brought forward from an hour
 * ahead to 3 s ahead stops the job `grace` (1 s) before the new end. */
static void test_retime_running(void)
{
    struct lfix f;
    lfix_open(&f, "retimerun");
    char path[512];
    snprintf(path, sizeof path, "%s/fake-mpiexec", f.root);
    put(f.root, "fake-mpiexec", "#!/bin/sh\necho long job\nexec sleep 120\n");
    CU_ASSERT_EQUAL(chmod(path, 0755), 0);
    f.ag.end = f.ag.start + 3600;
    struct acc_run *r = lfix_describe(&f);
    acc_launcher_schedule(f.l, &f.ag, r);
    run_free(r);
    CU_ASSERT_TRUE_FATAL(rec_wait_started(&f.rec));
    CU_ASSERT_EQUAL(acc_launcher_held(f.l, f.ag.id), ACC_LAUNCHER_HELD_RUNNING);
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(acc_launcher_retime(f.l, f.ag.id, 0, acc_now() + 3), ACC_LAUNCHER_HELD_RUNNING);
    CU_ASSERT_TRUE_FATAL(rec_wait_ended(&f.rec));
    int64_t took = acc_mono_us() - t0;
    CU_ASSERT_EQUAL(f.rec.state, ACC_RUN_STOPPED);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.rec.reason, "stopped"));
    CU_ASSERT_TRUE(took < 6000000); /* new end - grace, plus the stop itself */
    lfix_close(&f);
}

const struct acc_test_case acc_launcher_tests[] = {
    {"status file with garbage", test_status_garbage},
    {"empty status file", test_status_empty},
    {"status out of range", test_status_out_of_range},
    {"status read", test_status_read},
    {"no status file", test_status_missing},
    {"start, hooks and end", test_start_and_end},
    {"may_start refuses", test_not_wanted},
    {"stop a waiting run", test_stop_waiting},
    {"retime a waiting run: the moved start starts it", test_retime_waiting},
    {"retime a running job: the new end stops it", test_retime_running},
    {NULL, NULL},
};
