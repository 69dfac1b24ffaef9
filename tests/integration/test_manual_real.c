/* SPDX-License-Identifier: Apache-2.0 */
/* test_manual_real.c - one meta-job with Hydra's manual launcher, for real
 * (root; MPICH): accordd's launcher runs mpiexec.hydra -launcher manual,
 * reads its HYDRA_LAUNCH lines and hands each proxy to its site through the
 * submit hook; here the hook is two site-side job tables (site/site_jobs.h,
 * what accord-site calls for POST /v1/jobs), which check each proxy and
 * start it as nobody.  accord-ring runs across both "sites" to RING OK.
 * Then: a control address outside the sites' networks is refused by the
 * sites and the run fails cleanly (mpiexec stopped, nothing left running);
 * an mpiexec that never prints its lines fails at proxy_timeout. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../site/site_jobs.h"
#include "launch.h"
#include "launcher.h"
#include "proc.h"
#include "strutil.h"
#include "testutil.h"

#define PEER "CN=accord-main"

struct site {
    const char *name, *key, *nodes;
    struct acc_site_jobs *jobs;
};

struct fix {
    char root[512];
    struct acc_config cfg;
    struct acc_launcher *l;
    struct site sites[2];
    struct acc_site_cidr *nets;
    size_t n_nets;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool ended;
    unsigned submitted, refused;
    enum acc_run_state state;
    int exit_status;
    char reason[512];
    char *output;
    struct acc_alloc_component comps[2];
    struct acc_agreement ag;
};

static struct site *site_of(struct fix *f, const char *name)
{
    for (size_t i = 0; i < 2; i++) {
        if (strcmp(f->sites[i].name, name) == 0)
            return &f->sites[i];
    }
    return NULL;
}

static acc_err h_submit(void *ctx, const char *site, const struct acc_job *job, char *id,
                        size_t id_len, struct acc_error *err)
{
    struct fix *f = ctx;
    struct site *s = site_of(f, site);
    if (!s)
        return acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "no site %s", site);
    /* what accord-site looks up in its journal for the key */
    struct acc_site_job_booking b = {
        .key = s->key, .local_id = "r1", .nodes = s->nodes, .start = f->ag.start, .end = f->ag.end};
    char buf[ACC_SITE_JOB_ID_MAX];
    acc_err rc = acc_site_jobs_submit(s->jobs, PEER, &b, job, acc_now(), buf, sizeof buf, err);
    pthread_mutex_lock(&f->lock);
    if (rc)
        f->refused++;
    else
        f->submitted++;
    pthread_mutex_unlock(&f->lock);
    if (!rc)
        acc_strlcpy(id, buf, id_len);
    return rc;
}

static acc_err h_status(void *ctx, const char *site, const char *id, struct acc_job_status *out,
                        struct acc_error *err)
{
    struct site *s = site_of(ctx, site);
    return s ? acc_site_jobs_status(s->jobs, PEER, id, out, err)
             : acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "no site %s", site);
}

static acc_err h_cancel(void *ctx, const char *site, const char *id, struct acc_error *err)
{
    struct site *s = site_of(ctx, site);
    return s ? acc_site_jobs_cancel(s->jobs, PEER, id, err)
             : acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "no site %s", site);
}

static void h_started(void *ctx, const struct acc_run *run)
{
    (void)ctx;
    (void)run;
}

static void h_ended(void *ctx, const struct acc_run *run, const char *reason)
{
    struct fix *f = ctx;
    pthread_mutex_lock(&f->lock);
    f->ended = true;
    f->state = run->state;
    f->exit_status = run->exit_status;
    snprintf(f->reason, sizeof f->reason, "%s", reason);
    free(f->output);
    f->output = acc_strndup(run->output ? run->output : "", run->output ? run->output_len : 0);
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static bool wait_ended(struct fix *f, int secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += secs;
    pthread_mutex_lock(&f->lock);
    while (!f->ended && pthread_cond_timedwait(&f->cond, &f->lock, &ts) == 0) {
    }
    bool e = f->ended;
    pthread_mutex_unlock(&f->lock);
    return e;
}

/* mpiexec: MPICH's, or a stand-in; control: the -localhost address. */
static bool fix_open(struct fix *f, const char *name, const char *mpiexec, const char *control,
                     const char *extra)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    snprintf(f->root, sizeof f->root, "%s/%s", acc_test_tmpdir(), name);
    /* nobody must reach the run's directory (Hydra's proxies work in it) */
    if (chmod(acc_test_tmpdir(), 0711) != 0 || mkdir(f->root, 0711) != 0)
        return false;
    char ini[2048];
    const char *account = acc_test_job_account(); /* under root, mpiexec runs as nobody */
    snprintf(ini, sizeof ini,
             "[launch]\nenabled = yes\ndirectory = %s/runs\nmpiexec = %s\nlauncher = manual\n"
             "control_address = %s\ncontrol_ports = 51000:51100\ngrace = PT2S\n%s%s%s%s"
             "[site alpha]\nadapter = sim-batch\nnodes = 4\n"
             "[site beta]\nadapter = sim-batch\nnodes = 4\n",
             f->root, mpiexec, control, account ? "account = " : "", account ? account : "",
             account ? "\n" : "", extra);
    struct acc_error err;
    if (acc_config_load_string(ini, "t", &f->cfg, &err)) {
        fprintf(stderr, "config: %s\n", err.msg);
        return false;
    }
    if (acc_site_cidrs_parse("127.0.0.0/8", &f->nets, &f->n_nets, &err))
        return false;
    f->sites[0] = (struct site){.name = "alpha", .key = "key-a", .nodes = "alpha-n1,alpha-n2"};
    f->sites[1] = (struct site){.name = "beta", .key = "key-b", .nodes = "beta-n1"};
    for (size_t i = 0; i < 2; i++) {
        char dir[600];
        snprintf(dir, sizeof dir, "%s/site-%s", f->root, f->sites[i].name);
        struct acc_site_jobs_cfg jc = {.directory = dir,
                                       .proxy_path = "/usr/bin/hydra_pmi_proxy",
                                       .job_user = "nobody",
                                       .nets = f->nets,
                                       .n_nets = f->n_nets};
        if (acc_site_jobs_open(&jc, &f->sites[i].jobs, &err)) {
            fprintf(stderr, "site jobs: %s\n", err.msg);
            return false;
        }
    }
    struct acc_launcher_hooks h = {.ctx = f,
                                   .started = h_started,
                                   .ended = h_ended,
                                   .submit = h_submit,
                                   .job_status = h_status,
                                   .job_cancel = h_cancel};
    if (acc_launcher_new(&f->cfg, &h, &f->l, &err))
        return false;
    static char *ring_args[] = {NULL};
    f->comps[0] = (struct acc_alloc_component){.name = "left",
                                               .site = "alpha",
                                               .nodes = 2,
                                               .ppn = 1,
                                               .reservation = "key-a",
                                               .local_id = "r1",
                                               .executable = ACC_BUILD_DIR "/accord-ring",
                                               .args = ring_args};
    f->comps[1] = f->comps[0];
    f->comps[1].name = "right";
    f->comps[1].site = "beta";
    f->comps[1].nodes = 1;
    f->comps[1].reservation = "key-b";
    acc_strlcpy(f->ag.id, "manualtest000001", sizeof f->ag.id);
    f->ag.state = ACC_STATE_OBSERVED;
    f->ag.launch = ACC_LAUNCH_METAMPICH;
    f->ag.start = acc_now() - 1;
    f->ag.end = f->ag.start + 120;
    f->ag.comps = f->comps;
    f->ag.n_comps = 2;
    return true;
}

static void fix_run(struct fix *f)
{
    f->ag.run = NULL;
    ACC_ASSERT_OK(acc_launcher_describe(f->l, &f->ag, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->ag.run);
    acc_launcher_schedule(f->l, &f->ag, f->ag.run);
    acc_run_release(f->ag.run);
    free(f->ag.run);
    f->ag.run = NULL;
}

static void fix_close(struct fix *f)
{
    acc_launcher_stop(f->l, f->ag.id); /* a failed test leaves no mpiexec behind */
    acc_launcher_free(f->l);
    for (size_t i = 0; i < 2; i++) {
        if (f->sites[i].jobs) {
            /* nothing of a failed test keeps running */
            acc_site_jobs_cancel_key(f->sites[i].jobs, f->sites[i].key);
            acc_site_jobs_close(f->sites[i].jobs);
        }
    }
    free(f->nets);
    free(f->output);
    acc_config_release(&f->cfg);
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->cond);
}

static void test_ring(void)
{
    struct fix f;
    CU_ASSERT_TRUE_FATAL(fix_open(&f, "ring", "mpiexec.hydra", "127.0.0.1", ""));
    fix_run(&f);
    CU_ASSERT_TRUE(wait_ended(&f, 90));
    if (f.state != ACC_RUN_EXITED || !f.output || !strstr(f.output, "RING OK"))
        fprintf(stderr, "\nreason: %s\noutput:\n%s\n", f.reason, f.output);
    CU_ASSERT_EQUAL(f.state, ACC_RUN_EXITED);
    CU_ASSERT_EQUAL(f.exit_status, 0);
    CU_ASSERT_EQUAL(f.submitted, 3); /* one proxy per host: alpha-n1, alpha-n2, beta-n1 */
    CU_ASSERT_PTR_NOT_NULL(f.output ? strstr(f.output, "RING OK ranks=3 components=left:2,right:1")
                                    : NULL);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.sites[0].jobs), 0);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.sites[1].jobs), 0);
    /* each proxy is listed with its site's outcome */
    CU_ASSERT_PTR_NOT_NULL(f.output ? strstr(f.output, "== component right: proxy job p") : NULL);
    CU_ASSERT_PTR_NOT_NULL(f.output ? strstr(f.output, "on site beta, COMPLETED, exit status 0 ==")
                                    : NULL);
    fix_close(&f);
}

static void test_outside_networks(void)
{
    struct fix f;
    /* 10.x is not in the sites' 127.0.0.0/8: the first proxy is refused */
    CU_ASSERT_TRUE_FATAL(fix_open(&f, "outside", "mpiexec.hydra", "10.254.254.254", ""));
    fix_run(&f);
    CU_ASSERT_TRUE(wait_ended(&f, 60));
    CU_ASSERT_EQUAL(f.state, ACC_RUN_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.reason, "outside this site's control_networks"));
    CU_ASSERT_EQUAL(f.submitted, 0);
    CU_ASSERT_EQUAL(f.refused, 1);
    fix_close(&f);
}

/* An mpiexec that says nothing and waits; its pid goes to ROOT/pids/fake.pid
 * (a directory the job's account may write). */
static void silent_mpiexec(struct fix *f)
{
    char fake[600];
    snprintf(fake, sizeof fake, "%s/pids", f->root);
    CU_ASSERT_EQUAL_FATAL(mkdir(fake, 0755), 0);
    CU_ASSERT_EQUAL_FATAL(chmod(fake, 01777), 0);
    snprintf(fake, sizeof fake, "%s/fake-mpiexec", f->root);
    FILE *s = fopen(fake, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    fprintf(s, "#!/bin/sh\necho starting\necho $$ > %s/pids/fake.pid\nexec sleep 300\n", f->root);
    fclose(s);
    chmod(fake, 0755);
    free(f->cfg.launch.mpiexec);
    f->cfg.launch.mpiexec = strdup(fake);
}

/* The silent mpiexec is gone (or only its zombie is left). */
static void assert_silent_gone(struct fix *f)
{
    char path[700];
    snprintf(path, sizeof path, "%s/pids/fake.pid", f->root);
    char *pid = acc_test_slurp(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pid);
    long p = strtol(pid, NULL, 10);
    free(pid);
    CU_ASSERT_TRUE(p > 1);
    /* SIGKILL was sent to its group; its death is not instantaneous */
    for (int i = 0; i < 40 && acc_proc_start_time((pid_t)p) != 0; i++)
        usleep(50 * 1000);
    CU_ASSERT_EQUAL(acc_proc_start_time((pid_t)p), 0);
}

static void test_terminated_while_waiting(void)
{
    struct fix f;
    CU_ASSERT_TRUE_FATAL(fix_open(&f, "terminated", "/bin/true", "127.0.0.1", ""));
    silent_mpiexec(&f);
    fix_run(&f);
    /* until mpiexec runs and waits in the manual launcher */
    char path[700];
    snprintf(path, sizeof path, "%s/pids/fake.pid", f.root);
    for (int i = 0; i < 100 && access(path, F_OK) != 0; i++)
        usleep(50 * 1000);
    usleep(200 * 1000);
    int64_t t0 = acc_mono_us();
    CU_ASSERT_TRUE(acc_launcher_stop(f.l, f.ag.id));
    CU_ASSERT_TRUE(wait_ended(&f, 10));
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 5000000); /* not proxy_timeout's 30 s */
    CU_ASSERT_EQUAL(f.state, ACC_RUN_TERMINATED);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.reason, "terminated while its job started"));
    assert_silent_gone(&f);
    fix_close(&f);
}

/* Site beta's proxy fails at once: mpiexec would wait for it for ever. */
static void test_proxy_fails(void)
{
    struct fix f;
    CU_ASSERT_TRUE_FATAL(fix_open(&f, "proxyfails", "mpiexec.hydra", "127.0.0.1", ""));
    char bad[700], dir[700];
    snprintf(bad, sizeof bad, "%s/hydra_pmi_proxy", f.root);
    FILE *s = fopen(bad, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    fputs("#!/bin/sh\necho 'no MPI here' >&2\nexit 9\n", s);
    fclose(s);
    chmod(bad, 0755);
    acc_site_jobs_close(f.sites[1].jobs);
    snprintf(dir, sizeof dir, "%s/site-beta", f.root);
    struct acc_site_jobs_cfg jc = {.directory = dir,
                                   .proxy_path = bad,
                                   .job_user = "nobody",
                                   .nets = f.nets,
                                   .n_nets = f.n_nets};
    struct acc_error err;
    ACC_ASSERT_OK(acc_site_jobs_open(&jc, &f.sites[1].jobs, &err));
    fix_run(&f);
    CU_ASSERT_TRUE(wait_ended(&f, 60));
    CU_ASSERT_EQUAL(f.state, ACC_RUN_FAILED);
    if (!strstr(f.reason, "on site beta ended (FAILED, exit status 9)"))
        fprintf(stderr, "\nreason: %s\n", f.reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.reason, "on site beta ended (FAILED, exit status 9)"));
    CU_ASSERT_EQUAL(f.submitted, 3);
    /* alpha's proxies were cancelled with the job */
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.sites[0].jobs), 0);
    fix_close(&f);
}

static void test_no_lines(void)
{
    struct fix f;
    CU_ASSERT_TRUE_FATAL(fix_open(&f, "silent", "/bin/true", "127.0.0.1", "proxy_timeout = 2\n"));
    silent_mpiexec(&f);
    int64_t t0 = acc_mono_us();
    fix_run(&f);
    CU_ASSERT_TRUE(wait_ended(&f, 30));
    int64_t took = acc_mono_us() - t0;
    CU_ASSERT_EQUAL(f.state, ACC_RUN_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.reason, "within 2 s"));
    CU_ASSERT_TRUE(took >= 2000000 && took < 10000000);
    CU_ASSERT_EQUAL(f.submitted, 0);
    assert_silent_gone(&f); /* killed with its group */
    fix_close(&f);
}

static const struct acc_test_case tests[] = {
    {"accord-ring across two sites' proxies to RING OK", test_ring},
    {"a control address outside the sites' networks", test_outside_networks},
    {"no HYDRA_LAUNCH lines within proxy_timeout", test_no_lines},
    {"a proxy that fails at its site stops the job", test_proxy_fails},
    {"terminated while mpiexec waits for its lines", test_terminated_while_waiting},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"manual launch, real", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
