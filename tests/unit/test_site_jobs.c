/* SPDX-License-Identifier: Apache-2.0 */
/* test_site_jobs.c - what accord-site agrees to start (the Hydra proxy
 * checker, every accepted and refused form) and its job table (real
 * processes as the job user nobody: start, status, bounded output, cancel
 * of the whole group, other peers, the bound, a restart).  Needs root for
 * the job user; skipped parts say so. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/kv.h"
#include "../../lib/common/timefmt.h"
#include "../../site/site_jobs.h"
#include "testutil.h"

static struct acc_site_cidr *nets;
static size_t n_nets;

static int suite_init(void)
{
    struct acc_error err;
    return acc_site_cidrs_parse("10.79.0.0/16, 127.0.0.1", &nets, &n_nets, &err) ? -1 : 0;
}

static int suite_cleanup(void)
{
    free(nets);
    return 0;
}

/* The line MPICH 4.0.2 printed, as measured (docs/launch.md). */
#define GOOD                                                                                 \
    "--control-port", "10.79.0.1:45839", "--rmk", "user", "--launcher", "manual", "--demux", \
        "poll", "--pgid", "0", "--retries", "10", "--usize", "-2", "--pmi-port", "0",        \
        "--gpus-per-proc", "-2", "--proxy-id", "1"

static acc_err check(const char *exe, const char *const *args, size_t n, struct acc_error *err)
{
    return acc_site_proxy_check(exe, args, n, nets, n_nets, NULL, err);
}

static void test_cidrs(void)
{
    struct acc_error err;
    struct acc_site_cidr *v = NULL;
    size_t n = 0;
    ACC_ASSERT_OK(acc_site_cidrs_parse(" 192.168.0.0/24,10.0.0.1 0.0.0.0/0", &v, &n, &err));
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_TRUE(acc_site_cidrs_contain(v, 1, "192.168.0.255"));
    CU_ASSERT_FALSE(acc_site_cidrs_contain(v, 1, "192.168.1.0"));
    CU_ASSERT_TRUE(acc_site_cidrs_contain(v + 1, 1, "10.0.0.1"));
    CU_ASSERT_FALSE(acc_site_cidrs_contain(v + 1, 1, "10.0.0.2"));
    CU_ASSERT_TRUE(acc_site_cidrs_contain(v + 2, 1, "1.2.3.4"));
    free(v);
    static const char *const bad[] = {"",          "10.0.0.0/33", "10.0.0/8",    "10.0.0.256/8",
                                      "10.0.0.0/", "a.b.c.d",     "10.0.0.0/8x", "10.0.0.01",
                                      "-1.0.0.0",  "10.0.0.0/-1", "10.0.0.0 /8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = NULL;
        CU_ASSERT_EQUAL(acc_site_cidrs_parse(bad[i], &v, &n, &err), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NULL(v);
    }
    /* not a quad */
    static const char *const notq[] = {
        "10.79.1", "10.79.1.1.1", "10.79.1.x", " 10.79.1.1", "10.79.1.1 ", "", "10.79.1.1:5"};
    for (size_t i = 0; i < sizeof notq / sizeof notq[0]; i++)
        CU_ASSERT_FALSE(acc_site_cidrs_contain(nets, n_nets, notq[i]));
    CU_ASSERT_TRUE(acc_site_cidrs_contain(nets, n_nets, "10.79.255.1"));
    CU_ASSERT_TRUE(acc_site_cidrs_contain(nets, n_nets, "127.0.0.1"));
    CU_ASSERT_FALSE(acc_site_cidrs_contain(nets, n_nets, "127.0.0.2"));
}

static void test_check_accepts(void)
{
    struct acc_error err;
    const char *const a[] = {GOOD};
    long id = -5;
    ACC_ASSERT_OK(acc_site_proxy_check("/usr/bin/hydra_pmi_proxy", a, 20, nets, n_nets, &id, &err));
    CU_ASSERT_EQUAL(id, 1);
    /* the bare name, the peer's own directory (ignored: the site's path runs) */
    ACC_ASSERT_OK(check("hydra_pmi_proxy", a, 20, &err));
    ACC_ASSERT_OK(check("/opt/mpich/bin/hydra_pmi_proxy", a, 20, &err));
    /* any order; optional ones left out; select; loopback control */
    const char *const b[] = {"--proxy-id", "0",    "--demux",        "select",
                             "--pgid",     "3",    "--launcher",     "manual",
                             "--rmk",      "user", "--control-port", "127.0.0.1:1"};
    ACC_ASSERT_OK(check("hydra_pmi_proxy", b, 12, &err));
}

static void expect_refused(const char *exe, const char *const *args, size_t n, const char *why)
{
    struct acc_error err;
    err.msg[0] = '\0';
    acc_err rc = check(exe, args, n, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_INVALID);
    if (!strstr(err.msg, why)) {
        fprintf(stderr, "\nexpected '%s' in '%s'\n", why, err.msg);
        CU_FAIL("message does not say why");
    }
}

static void test_check_refuses_executables(void)
{
    const char *const a[] = {GOOD};
    expect_refused("/bin/sh", a, 20, "only hydra_pmi_proxy");
    expect_refused("", a, 20, "no executable");
    expect_refused(NULL, a, 20, "no executable");
    expect_refused("/usr/bin/hydra_pmi_proxy/", a, 20, "only hydra_pmi_proxy");
    expect_refused("hydra_pmi_proxy2", a, 20, "only hydra_pmi_proxy");
    expect_refused("xhydra_pmi_proxy", a, 20, "only hydra_pmi_proxy");
    expect_refused("mpiexec.hydra", a, 20, "only hydra_pmi_proxy");
}

/* GOOD with argument i replaced by v. */
static void refused_with(size_t i, const char *v, const char *why)
{
    const char *a[] = {GOOD};
    a[i] = v;
    expect_refused("hydra_pmi_proxy", a, 20, why);
}

static void test_check_refuses_values(void)
{
    /* control address */
    refused_with(1, "10.80.0.1:45839", "outside this site's control_networks");
    refused_with(1, "8.8.8.8:53", "outside");
    refused_with(1, "127.0.0.2:45839", "outside");
    refused_with(1, "localhost:45839", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:0", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:65536", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:-1", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:+80", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:80x", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1: 80", "not A.B.C.D:PORT");
    refused_with(1, "[::1]:80", "not A.B.C.D:PORT");
    refused_with(1, "10.79.0.1:80:80", "not A.B.C.D:PORT");
    refused_with(1, "", "not A.B.C.D:PORT");
    /* words */
    refused_with(3, "slurm", "--rmk");
    refused_with(5, "ssh", "--launcher");
    refused_with(5, "manual ", "--launcher");
    refused_with(7, "epoll", "--demux");
    refused_with(7, "poll|select", "--demux");
    refused_with(7, "", "--demux");
    /* numbers */
    refused_with(9, "-1", "--pgid");
    refused_with(9, "x", "--pgid");
    refused_with(9, "", "--pgid");
    refused_with(9, " 1", "--pgid");
    refused_with(9, "+1", "--pgid");
    refused_with(9, "1e3", "--pgid");
    refused_with(9, "1000001", "--pgid");
    refused_with(9, "99999999999999999999", "--pgid");
    refused_with(11, "1001", "--retries");
    refused_with(13, "-3", "--usize");
    refused_with(15, "65536", "--pmi-port");
    refused_with(17, "-3", "--gpus-per-proc");
    refused_with(19, "-1", "--proxy-id");
    refused_with(19, "0x1", "--proxy-id");
    refused_with(19, "1;reboot", "--proxy-id");
}

static void test_check_refuses_forms(void)
{
    /* an option not Hydra's, or an extra word */
    refused_with(0, "--exec", "not one of Hydra's proxy options");
    refused_with(2, "--rmk=user", "not one of");
    refused_with(0, "-control-port", "not one of");
    const char *const extra[] = {GOOD, "--bootstrap", "ssh"};
    expect_refused("hydra_pmi_proxy", extra, 22, "not one of");
    const char *const tail[] = {GOOD, "/bin/sh"};
    expect_refused("hydra_pmi_proxy", tail, 21, "not one of");
    /* twice */
    const char *const twice[] = {GOOD, "--proxy-id", "2"};
    expect_refused("hydra_pmi_proxy", twice, 22, "given twice");
    const char *const twice_ctl[] = {GOOD, "--control-port", "10.79.0.1:1"};
    expect_refused("hydra_pmi_proxy", twice_ctl, 22, "given twice");
    /* a repeated option is refused before its missing value */
    const char *const novalue[] = {GOOD, "--retries"};
    expect_refused("hydra_pmi_proxy", novalue, 21, "given twice");
    const char *const short_[] = {"--rmk",  "user", "--launcher", "manual", "--demux",       "poll",
                                  "--pgid", "0",    "--proxy-id", "0",      "--control-port"};
    expect_refused("hydra_pmi_proxy", short_, 11, "has no value");
    /* each required one missing */
    static const char *const required[] = {"--control-port", "--rmk",  "--launcher",
                                           "--demux",        "--pgid", "--proxy-id"};
    for (size_t r = 0; r < sizeof required / sizeof required[0]; r++) {
        const char *all[] = {GOOD};
        const char *v[20];
        size_t n = 0;
        for (size_t i = 0; i < 20; i += 2) {
            if (strcmp(all[i], required[r]) != 0) {
                v[n++] = all[i];
                v[n++] = all[i + 1];
            }
        }
        char why[64];
        snprintf(why, sizeof why, "%s is missing", required[r]);
        expect_refused("hydra_pmi_proxy", v, n, why);
    }
    /* nothing at all; NULL inside; too many */
    expect_refused("hydra_pmi_proxy", NULL, 0, "is missing");
    const char *nul[] = {GOOD};
    nul[4] = NULL;
    expect_refused("hydra_pmi_proxy", nul, 20, "missing");
    const char *many[ACC_SITE_PROXY_MAX_ARGS + 1];
    for (size_t i = 0; i < ACC_SITE_PROXY_MAX_ARGS + 1; i++)
        many[i] = "--pgid";
    expect_refused("hydra_pmi_proxy", many, ACC_SITE_PROXY_MAX_ARGS + 1, "at most");
}

/* ---- the job table: real processes as nobody ---- */

struct jfix {
    char dir[512], jobs[600], proxy[600];
    struct acc_site_jobs *j;
    struct acc_site_jobs_cfg cfg;
};

/* A stand-in proxy: prints its arguments and user; its mode is its --pgid
 * value: 0 writes 100 kB and exits 3, 1 sleeps (with a child in its
 * group). */
static const char stand_in[] = "#!/bin/sh\n"
                               "echo \"args: $*\"\n"
                               "echo \"user: $(id -un)\"\n"
                               "if [ \"${10}\" = 1 ]; then sleep 300 & sleep 300; exit 0; fi\n"
                               "head -c 100000 /dev/zero | tr '\\0' x\n"
                               "exit 3\n";

static bool jfix_open(struct jfix *f, size_t max_jobs)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/sj-XXXXXX", acc_test_tmpdir());
    if (!mkdtemp(f->dir))
        return false;
    /* the job user must reach its directory and the proxy */
    if (chmod(acc_test_tmpdir(), 0711) != 0 || chmod(f->dir, 0711) != 0)
        return false;
    snprintf(f->jobs, sizeof f->jobs, "%s/jobs", f->dir);
    snprintf(f->proxy, sizeof f->proxy, "%s/hydra_pmi_proxy", f->dir);
    FILE *p = fopen(f->proxy, "w");
    if (!p || fputs(stand_in, p) < 0 || fclose(p) != 0 || chmod(f->proxy, 0755) != 0)
        return false;
    f->cfg = (struct acc_site_jobs_cfg){.directory = f->jobs,
                                        .proxy_path = f->proxy,
                                        .job_user = "nobody",
                                        .nets = nets,
                                        .n_nets = n_nets,
                                        .max_jobs = max_jobs,
                                        .output_limit = 4096};
    struct acc_error err;
    if (acc_site_jobs_open(&f->cfg, &f->j, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return false;
    }
    return true;
}

/* As submit, the job for account user (NULL: the site's job user). */
static acc_err submit_as(struct jfix *f, const char *user, const char *peer, const char *host,
                         const char *mode, acc_time start, acc_time end, char *id,
                         struct acc_error *err)
{
    const char *a[] = {GOOD};
    a[9] = mode; /* --pgid: the stand-in's mode */
    struct acc_job job = {.key = "k1",
                          .host = host,
                          .executable = "hydra_pmi_proxy",
                          .args = a,
                          .n_args = 20,
                          .user = user};
    struct acc_site_job_booking b = {
        .key = "k1", .local_id = "r1", .nodes = "alpha-n1,alpha-n2", .start = start, .end = end};
    return acc_site_jobs_submit(f->j, peer, &b, &job, acc_now(), id, ACC_SITE_JOB_ID_MAX, err);
}

static acc_err submit(struct jfix *f, const char *peer, const char *host, const char *mode,
                      acc_time start, acc_time end, char *id, struct acc_error *err)
{
    const char *a[] = {GOOD};
    a[9] = mode; /* --pgid: the stand-in's mode */
    struct acc_job job = {
        .key = "k1", .host = host, .executable = "hydra_pmi_proxy", .args = a, .n_args = 20};
    struct acc_site_job_booking b = {
        .key = "k1", .local_id = "r1", .nodes = "alpha-n1,alpha-n2", .start = start, .end = end};
    return acc_site_jobs_submit(f->j, peer, &b, &job, acc_now(), id, ACC_SITE_JOB_ID_MAX, err);
}

static bool wait_done(struct jfix *f, const char *peer, const char *id, struct acc_job_status *st)
{
    struct acc_error err;
    for (int i = 0; i < 200; i++) {
        if (acc_site_jobs_status(f->j, peer, id, st, &err) == ACC_OK && st->done)
            return true;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static char *job_file(struct jfix *f, const char *id, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/%s", f->jobs, id, name);
    return acc_test_slurp(path, NULL);
}

static void test_jobs_run(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "(not root: the job table needs root to become nobody) ");
        return;
    }
    struct jfix f;
    CU_ASSERT_TRUE_FATAL(jfix_open(&f, 4));
    struct acc_error err;
    char id[ACC_SITE_JOB_ID_MAX];
    acc_time now = acc_now();
    ACC_ASSERT_OK(submit(&f, "CN=accord-main", "alpha-n2", "0", now - 10, now + 600, id, &err));
    struct acc_job_status st;
    CU_ASSERT_TRUE_FATAL(wait_done(&f, "CN=accord-main", id, &st));
    CU_ASSERT_STRING_EQUAL(st.state, "FAILED");
    CU_ASSERT_EQUAL(st.exit_status, 3);
    char *out = job_file(&f, id, "output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(strlen(out), 4096); /* bounded */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "user: nobody"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "args: --control-port 10.79.0.1:45839 --rmk user"));
    free(out);
    /* another peer sees nothing */
    CU_ASSERT_EQUAL(acc_site_jobs_status(f.j, "CN=intruder", id, &st, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(acc_site_jobs_cancel(f.j, "CN=intruder", id, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(acc_site_jobs_status(f.j, "CN=accord-main", "p1-999", &st, &err),
                    ACC_ERR_NOT_FOUND);
    /* refused, nothing started */
    char id2[ACC_SITE_JOB_ID_MAX];
    CU_ASSERT_EQUAL(submit(&f, "CN=accord-main", "beta-n1", "0", now - 10, now + 600, id2, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a host of reservation"));
    CU_ASSERT_EQUAL(submit(&f, "CN=accord-main", "alpha-n1", "0", now + 60, now + 600, id2, &err),
                    ACC_ERR_STATE);
    CU_ASSERT_EQUAL(submit(&f, "CN=accord-main", "alpha-n1", "0", now - 600, now, id2, &err),
                    ACC_ERR_STATE);
    CU_ASSERT_EQUAL(submit(&f, "CN=accord-main", "../x", "0", now - 10, now + 600, id2, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.j), 0);
    /* The job user owns its directory: a status file it turned into a
     * link (to a root file saying 0) is not followed after a restart. */
    acc_site_jobs_close(f.j);
    char status[1200], target[700];
    snprintf(status, sizeof status, "%s/%s/status", f.jobs, id);
    snprintf(target, sizeof target, "%s/zero", f.dir);
    FILE *z = fopen(target, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    fputs("0\n", z);
    fclose(z);
    CU_ASSERT_EQUAL(unlink(status), 0);
    CU_ASSERT_EQUAL(symlink(target, status), 0);
    ACC_ASSERT_OK(acc_site_jobs_open(&f.cfg, &f.j, &err));
    ACC_ASSERT_OK(acc_site_jobs_status(f.j, "CN=accord-main", id, &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, -1);
    CU_ASSERT_STRING_EQUAL(st.state, "FAILED");
    acc_site_jobs_close(f.j);
}

/* A job whose reservation was booked for an account (the site's mapfile
 * chose it) runs as that account, never as root. */
static void test_jobs_run_as_account(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "(not root: the job table needs root to become daemon) ");
        return;
    }
    struct jfix f;
    CU_ASSERT_TRUE_FATAL(jfix_open(&f, 4));
    struct acc_error err;
    char id[ACC_SITE_JOB_ID_MAX];
    acc_time now = acc_now();
    ACC_ASSERT_OK(
        submit_as(&f, "daemon", "CN=accord-main", "alpha-n2", "0", now - 10, now + 600, id, &err));
    struct acc_job_status st;
    CU_ASSERT_TRUE_FATAL(wait_done(&f, "CN=accord-main", id, &st));
    char *out = job_file(&f, id, "output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "user: daemon"));
    free(out);
    char id2[ACC_SITE_JOB_ID_MAX];
    CU_ASSERT_EQUAL(
        submit_as(&f, "root", "CN=accord-main", "alpha-n2", "0", now - 10, now + 600, id2, &err),
        ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "root"));
    CU_ASSERT_EQUAL(submit_as(&f, "acc-no-such-account", "CN=accord-main", "alpha-n2", "0",
                              now - 10, now + 600, id2, &err),
                    ACC_ERR_FORBIDDEN);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.j), 0);
    acc_site_jobs_close(f.j);
}

static void test_jobs_cancel_bound_restart(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "(not root) ");
        return;
    }
    struct jfix f;
    CU_ASSERT_TRUE_FATAL(jfix_open(&f, 2));
    struct acc_error err;
    char a[ACC_SITE_JOB_ID_MAX], b[ACC_SITE_JOB_ID_MAX], c[ACC_SITE_JOB_ID_MAX];
    acc_time now = acc_now();
    ACC_ASSERT_OK(submit(&f, "P", "alpha-n1", "1", now - 1, now + 600, a, &err));
    ACC_ASSERT_OK(submit(&f, "P", "alpha-n2", "1", now - 1, now + 600, b, &err));
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.j), 2);
    /* full of live jobs */
    CU_ASSERT_EQUAL(submit(&f, "P", "alpha-n1", "1", now - 1, now + 600, c, &err),
                    ACC_ERR_OVERLOADED);
    /* a restart finds both again, still running */
    acc_site_jobs_close(f.j);
    ACC_ASSERT_OK(acc_site_jobs_open(&f.cfg, &f.j, &err));
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.j), 2);
    struct acc_job_status st;
    ACC_ASSERT_OK(acc_site_jobs_status(f.j, "P", a, &st, &err));
    CU_ASSERT_FALSE(st.done);
    CU_ASSERT_STRING_EQUAL(st.state, "RUNNING");
    /* cancel stops the whole group (the background sleep too) */
    char rec[700];
    snprintf(rec, sizeof rec, "%s/%s.job", f.jobs, a);
    char *job = acc_test_slurp(rec, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int pid = 0;
    const char *pp = strstr(job, "\npid=");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    pid = (int)strtol(pp + 5, NULL, 10);
    free(job);
    CU_ASSERT_TRUE(pid > 1);
    CU_ASSERT_EQUAL(kill(-pid, 0), 0);
    ACC_ASSERT_OK(acc_site_jobs_cancel(f.j, "P", a, &err));
    CU_ASSERT_NOT_EQUAL(kill(-pid, 0), 0);
    ACC_ASSERT_OK(acc_site_jobs_status(f.j, "P", a, &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_STRING_EQUAL(st.state, "CANCELLED");
    ACC_ASSERT_OK(acc_site_jobs_cancel(f.j, "P", a, &err)); /* again: fine */
    /* an ended job makes room */
    ACC_ASSERT_OK(submit(&f, "P", "alpha-n1", "1", now - 1, now + 600, c, &err));
    /* the reservation's cancel stops the rest */
    CU_ASSERT_EQUAL(acc_site_jobs_cancel_key(f.j, "k1"), 2);
    CU_ASSERT_EQUAL(acc_site_jobs_running(f.j), 0);
    acc_site_jobs_close(f.j);
}

/* A stand-in batch command in f->dir: prints its words, the environment the
 * adapter gave and who runs it. */
static bool stand_in_command(struct jfix *f, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *p = fopen(path, "w");
    if (!p)
        return false;
    fprintf(p,
            "#!/bin/sh\necho \"%s: $*\"\necho \"env: $SLURM_CONF $SGE_ROOT $SGE_CELL $TZ "
            "$(id -un) $(pwd)\"\nexit 0\n",
            name);
    return fclose(p) == 0 && chmod(path, 0755) == 0;
}

/* Opens the table again with the batch adapter of kind over settings. */
static struct acc_adapter *open_batch(struct jfix *f, const char *kind,
                                      const struct acc_kv *settings, size_t n)
{
    acc_site_jobs_close(f->j);
    f->j = NULL;
    struct acc_adapter_env env = {
        .name = "alpha", .section = "site alpha", .settings = settings, .n_settings = n};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find(kind), &env, &ad, &err)) {
        fprintf(stderr, "adapter: %s\n", err.msg);
        return NULL;
    }
    f->cfg.batch = ad;
    if (acc_site_jobs_open(&f->cfg, &f->j, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        acc_adapter_close(ad);
        return NULL;
    }
    return ad;
}

/* A Slurm site: the proxy goes through the slurm adapter's srun into the
 * reservation on its host, run as the job's account (a stand-in srun
 * prints what it was given). */
static void test_jobs_srun(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "(not root) ");
        return;
    }
    struct jfix f;
    CU_ASSERT_TRUE_FATAL(jfix_open(&f, 4));
    CU_ASSERT_TRUE_FATAL(stand_in_command(&f, "srun"));
    char conf[700];
    snprintf(conf, sizeof conf, "%s/slurm.conf", f.dir);
    FILE *c = fopen(conf, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    fclose(c);
    struct acc_kv set[] = {{"bin_dir", f.dir}, {"slurm_conf", conf}};
    struct acc_adapter *ad = open_batch(&f, "slurm", set, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    char id[ACC_SITE_JOB_ID_MAX];
    acc_time now = acc_now();
    ACC_ASSERT_OK(submit(&f, "P", "alpha-n1", "0", now - 1, now + 600, id, &err));
    struct acc_job_status st;
    CU_ASSERT_TRUE_FATAL(wait_done(&f, "P", id, &st));
    CU_ASSERT_STRING_EQUAL(st.state, "COMPLETED");
    CU_ASSERT_EQUAL(st.exit_status, 0);
    char *out = job_file(&f, id, "output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    char want[2400];
    snprintf(want, sizeof want,
             "srun: --reservation=r1 --nodelist=alpha-n1 -N1 -n1 --job-name=accord-k1 "
             "--chdir=%s/%s --time=10 %s --control-port 10.79.0.1:45839 --rmk user",
             f.jobs, id, f.proxy);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    /* the adapter's SLURM_CONF, TZ=UTC, run as the job user in the job's directory */
    char env[2400];
    snprintf(env, sizeof env, "env: %s   UTC nobody %s/%s", conf, f.jobs, id);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, env));
    if (!strstr(out, want) || !strstr(out, env))
        fprintf(stderr, "\n%s\n", out);
    free(out);
    /* A job that names its account runs as it (daemon, uid 1, here);
     * root and unknown accounts are refused. */
    const char *a[] = {GOOD};
    struct acc_job job = {.key = "k1",
                          .host = "alpha-n1",
                          .executable = "hydra_pmi_proxy",
                          .args = a,
                          .n_args = 20,
                          .user = "daemon"};
    struct acc_site_job_booking b = {
        .key = "k1", .local_id = "r1", .nodes = "alpha-n1", .start = now - 1, .end = now + 600};
    ACC_ASSERT_OK(acc_site_jobs_submit(f.j, "P", &b, &job, now, id, sizeof id, &err));
    CU_ASSERT_TRUE_FATAL(wait_done(&f, "P", id, &st));
    out = job_file(&f, id, "output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, " UTC daemon "));
    free(out);
    struct stat sb;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", f.jobs, id);
    CU_ASSERT_EQUAL(stat(dir, &sb), 0);
    CU_ASSERT_EQUAL(sb.st_uid, 1); /* its directory is the account's */
    job.user = "root";
    CU_ASSERT_EQUAL(acc_site_jobs_submit(f.j, "P", &b, &job, now, id, sizeof id, &err),
                    ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "never run as root"));
    job.user = "no-such-account-here";
    CU_ASSERT_EQUAL(acc_site_jobs_submit(f.j, "P", &b, &job, now, id, sizeof id, &err),
                    ACC_ERR_FORBIDDEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such user"));
    acc_site_jobs_close(f.j);
    /* Through the batch system the account must reach its directory: a
     * parent that lets no one else pass is refused at open. */
    f.j = NULL;
    CU_ASSERT_EQUAL_FATAL(chmod(f.dir, 0700), 0);
    CU_ASSERT_EQUAL(acc_site_jobs_open(&f.cfg, &f.j, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not let other users pass"));
    CU_ASSERT_EQUAL(chmod(f.dir, 0711), 0);
    acc_adapter_close(ad);
}

/* A Grid Engine site: the proxy goes through the sge adapter's qsub -sync y
 * into the advance reservation on its host, as the job user, with the cell
 * in its environment (a stand-in qsub prints what it was given). */
static void test_jobs_qsub(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "(not root) ");
        return;
    }
    struct jfix f;
    CU_ASSERT_TRUE_FATAL(jfix_open(&f, 4));
    CU_ASSERT_TRUE_FATAL(stand_in_command(&f, "qsub"));
    char root[700], common[800];
    snprintf(root, sizeof root, "%s/sge", f.dir);
    snprintf(common, sizeof common, "%s/accord", root);
    CU_ASSERT_TRUE_FATAL(mkdir(root, 0755) == 0 && mkdir(common, 0755) == 0);
    snprintf(common, sizeof common, "%s/accord/common", root);
    CU_ASSERT_TRUE_FATAL(mkdir(common, 0755) == 0);
    struct acc_kv set[] = {
        {"bin_dir", f.dir}, {"sge_root", root}, {"cell", "accord"}, {"pe", "mpi"}};
    struct acc_adapter *ad = open_batch(&f, "sge", set, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    char id[ACC_SITE_JOB_ID_MAX];
    acc_time now = acc_now();
    acc_err rc = submit(&f, "P", "alpha-n1", "0", now - 1, now + 600, id, &err);
    if (rc)
        fprintf(stderr, "\nsubmit: %s\n", err.msg);
    ACC_ASSERT_OK(rc);
    struct acc_job_status st;
    CU_ASSERT_TRUE_FATAL(wait_done(&f, "P", id, &st));
    CU_ASSERT_STRING_EQUAL(st.state, "COMPLETED");
    char *out = job_file(&f, id, "output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    /* h_rt: what is left of the reservation (600 s, or 599) less 30 s */
    char want[2400];
    snprintf(want, sizeof want, "qsub: -sync y -ar r1 -N accord-k1 -l h=alpha-n1 -l h_rt=5");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    snprintf(want, sizeof want,
             " -wd %s/%s -o %s/%s/proxy.out -j y -b y -shell n %s --control-port "
             "10.79.0.1:45839 --rmk user",
             f.jobs, id, f.jobs, id, f.proxy);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    char env[2400];
    snprintf(env, sizeof env, "env:  %s accord UTC nobody", root);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, env));
    if (!strstr(out, want) || !strstr(out, env))
        fprintf(stderr, "\n%s\n", out);
    free(out);
    /* Without the reservation's id there is nothing to submit into. */
    const char *a[] = {GOOD};
    struct acc_job job = {
        .key = "k1", .host = "alpha-n1", .executable = "hydra_pmi_proxy", .args = a, .n_args = 20};
    struct acc_site_job_booking b = {
        .key = "k1", .nodes = "alpha-n1", .start = now - 1, .end = now + 600};
    CU_ASSERT_EQUAL(acc_site_jobs_submit(f.j, "P", &b, &job, now, id, sizeof id, &err),
                    ACC_ERR_INVALID);
    acc_site_jobs_close(f.j);
    acc_adapter_close(ad);
}

static void test_jobs_config(void)
{
    struct jfix f;
    memset(&f, 0, sizeof f);
    struct acc_site_jobs *j = NULL;
    struct acc_error err;
    struct acc_site_jobs_cfg cfg = {.directory = acc_test_tmpdir(),
                                    .proxy_path = "hydra_pmi_proxy",
                                    .nets = nets,
                                    .n_nets = n_nets};
    CU_ASSERT_EQUAL(acc_site_jobs_open(&cfg, &j, &err), ACC_ERR_CONFIG);
    cfg.proxy_path = "/bin/true";
    cfg.job_user = "no-such-user-here";
    CU_ASSERT_EQUAL(acc_site_jobs_open(&cfg, &j, &err), ACC_ERR_CONFIG);
    cfg.job_user = "root";
    CU_ASSERT_EQUAL(acc_site_jobs_open(&cfg, &j, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "never run as root"));
    cfg.job_user = NULL;
    cfg.n_nets = 0;
    CU_ASSERT_EQUAL(acc_site_jobs_open(&cfg, &j, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(j);
}

static const struct acc_test_case checker_tests[] = {
    {"control networks", test_cidrs},
    {"accepts Hydra's proxy line", test_check_accepts},
    {"refuses other executables", test_check_refuses_executables},
    {"refuses bad values", test_check_refuses_values},
    {"refuses other forms", test_check_refuses_forms},
    {NULL, NULL},
};

static const struct acc_test_case table_tests[] = {
    {"configuration refused", test_jobs_config},
    {"run as nobody, bounded output, other peers, refusals", test_jobs_run},
    {"run as the reservation's own account, never root", test_jobs_run_as_account},
    {"cancel a group, the bound, a restart", test_jobs_cancel_bound_restart},
    {"a Slurm site: through the adapter's srun --reservation, as the account", test_jobs_srun},
    {"a Grid Engine site: through the adapter's qsub -sync y -ar", test_jobs_qsub},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"site proxy check", suite_init, suite_cleanup, checker_tests},
    {"site jobs", suite_init, suite_cleanup, table_tests},
    {NULL, NULL, NULL, NULL},
};
