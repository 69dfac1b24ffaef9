/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_real.c - the slurm adapter and accordd against two real Slurm
 * clusters on this machine (sitea 8 nodes, siteb 16), which ctest starts
 * with tests/slurm/start-testbed.sh and stops afterwards.  One program, one
 * suite: the tests take turns on the clusters (test_slurm_real_launch.c has
 * the meta-job launched with sbatch and mpiexec). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "fixture.h"
#include "hook_adapter.h"
#include "http_client.h"
#include "proc.h"
#include "run_as.h"
#include "slurm_real.h"
#include "store.h"
#include "testutil.h"
#include "timefmt.h"

static void iso(acc_time t, char *out)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

static int setup(void)
{
    const char *d = getenv("SLURM_TESTBED_DIR");
    if (!d) {
        fprintf(stderr, "SLURM_TESTBED_DIR is not set: run this through ctest, which starts "
                        "the Slurm testbed (tests/slurm/start-testbed.sh)\n");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s", d);
    snprintf(conf_a, sizeof conf_a, "%s/sitea/slurm.conf", dir);
    snprintf(conf_b, sizeof conf_b, "%s/siteb/slurm.conf", dir);
    char ini[4096], db[256];
    /* under root the jobs run as nobody (tests/support/fixture.c), who must
     * be one of sitea's reservation users and reach the program */
    static const char *const ring[] = {ACC_BUILD_DIR "/accord-ring", NULL};
    /* sitea's components go into their reservation with sbatch, siteb's
     * with mpiexec (only agreements with a launch style start anything). */
    snprintf(ini, sizeof ini,
             "[server]\nallow_control = yes\n"
             "[negotiation]\nadapter_timeout = PT20S\nlead_time = PT10S\n"
             "[launch]\nenabled = yes\ngrace = PT5S\npath = %s\ndirectory = %s/jobs\n"
             "[site sitea]\nadapter = slurm\nnodes = 8\nslurm_conf = %s\nlaunch = sbatch\n"
             "users = root,nobody\n"
             "[site siteb]\nadapter = slurm\nnodes = 16\nslurm_conf = %s\n"
             "[network wan]\nadapter = sim-network\n"
             "[link sitea_siteb]\nsites = sitea siteb\ncapacity = 10000\nnetwork = wan\n",
             acc_test_job_bin(ACC_BUILD_DIR, ring), acc_test_tmpdir(), conf_a, conf_b);
    snprintf(db, sizeof db, "%s/slurm-real.db", acc_test_tmpdir());
    if (fixture_start(&fx, ini, db))
        return 1;
    reset();
    return 0;
}

static int teardown(void)
{
    reset();
    fixture_stop(&fx);
    return 0;
}

static int reservation_nodes(const char *site, const char *name, acc_time *start)
{
    int st;
    char *out = slurm(site, &st, "scontrol", "show", "reservation", name, "-o", NULL);
    int cnt = -1;
    const char *c = strstr(out, " NodeCnt=");
    const char *s = strstr(out, " StartTime=");
    if (st == 0 && c)
        cnt = (int)strtol(c + 9, NULL, 10);
    if (st == 0 && s && start)
        *start = strtoll(s + 11, NULL, 10);
    free(out);
    return cnt;
}

/* ------------------------------------------------------------------ tests */

static void test_preview_matches_slurm(void)
{
    reset();
    acc_time now = acc_now();
    /* 6 of sitea's 8 nodes run a job for 2 minutes; another user holds 6
     * nodes over [now+5min, now+10min). */
    int st;
    free(slurm("sitea", &st, "sbatch", "-N", "6", "-t", "2", "-o", "/dev/null", "--wrap",
               "sleep 600", NULL));
    CU_ASSERT_EQUAL(st, 0);
    bool running = false;
    for (int i = 0; i < 100 && !running; i++) {
        char *q = slurm("sitea", NULL, "squeue", "-h", "-t", "R", NULL);
        running = *q != '\0';
        free(q);
        if (!running)
            usleep(100000);
    }
    CU_ASSERT_TRUE_FATAL(running);
    char *q = slurm("sitea", NULL, "squeue", "-h", "-t", "R", "-o", "%e", NULL);
    acc_time job_end = strtoll(q, NULL, 10);
    free(q);
    CU_ASSERT_TRUE_FATAL(job_end > now);
    char s1[32], start_opt[48];
    iso(now + 300, s1);
    snprintf(start_opt, sizeof start_opt, "StartTime=%s", s1);
    free(slurm("sitea", &st, "scontrol", "create", "reservation", "ReservationName=other",
               start_opt, "Duration=5", "NodeCnt=6", "Users=root", NULL));
    CU_ASSERT_EQUAL(st, 0);

    char path[256], until[ACC_TIME_STRLEN];
    acc_time_format(now + 3600, until);
    snprintf(path, sizeof path, "%s/sites/sitea/preview?nodes=4&duration=PT2M&until=%s", fx.base,
             until);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("GET", path, NULL, 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    /* After the job, before "other" (2 minutes must fit), and after it. */
    CU_ASSERT_EQUAL_FATAL(xml_count(r.body, "//co:Frame"), 2);
    char *f0s = xml_get(r.body, "(//co:Frame)[1]/@co:start");
    char *f0e = xml_get(r.body, "(//co:Frame)[1]/@co:end");
    char *f1s = xml_get(r.body, "(//co:Frame)[2]/@co:start");
    acc_time a0, a1, b0;
    acc_time_parse(f0s, &a0, NULL);
    acc_time_parse(f0e, &a1, NULL);
    acc_time_parse(f1s, &b0, NULL);
    CU_ASSERT_EQUAL(a0, job_end + 1); /* Slurm frees a job's nodes a second after its end */
    CU_ASSERT_EQUAL(a1, now + 300);
    CU_ASSERT_EQUAL(b0, now + 600);
    free(f0s);
    free(f0e);
    free(f1s);
    http_reply_free(&r);

    /* What Slurm then really grants: 4 nodes at each frame's start ... */
    acc_time ok[] = {a0, b0};
    for (int i = 0; i < 2; i++) {
        char w[32], opt[48];
        iso(ok[i], w);
        snprintf(opt, sizeof opt, "StartTime=%s", w);
        free(slurm("sitea", &st, "scontrol", "create", "reservation", "ReservationName=probe", opt,
                   "Duration=2", "NodeCnt=4", "Users=root", NULL));
        CU_ASSERT_EQUAL(st, 0);
        CU_ASSERT_EQUAL(reservation_nodes("sitea", "probe", NULL), 4);
        free(slurm("sitea", NULL, "scontrol", "delete", "ReservationName=probe", NULL));
    }
    /* ... and not 4 outside the frames: while the job runs, during "other". */
    acc_time not_ok[] = {a0 - 30, now + 400};
    for (int i = 0; i < 2; i++) {
        char w[32], opt[48];
        iso(not_ok[i], w);
        snprintf(opt, sizeof opt, "StartTime=%s", w);
        free(slurm("sitea", &st, "scontrol", "create", "reservation", "ReservationName=probe", opt,
                   "Duration=2", "NodeCnt=4", "Users=root", NULL));
        int got = st == 0 ? reservation_nodes("sitea", "probe", NULL) : 0;
        CU_ASSERT_TRUE(got < 4); /* refused, or silently shrunk */
        free(slurm("sitea", NULL, "scontrol", "delete", "ReservationName=probe", NULL));
    }
    reset();
}

static const char offer_fmt[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>slurm</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
    "<co:Duration>%s</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>sitea</co:Site><co:Nodes>%d</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>siteb</co:Site><co:Nodes>%d</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"m\"><co:Link>"
    "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>100</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>";

static void test_agreement_on_both_clusters(void)
{
    reset();
    char doc[4096], u[256];
    snprintf(doc, sizeof doc, offer_fmt, "PT5M", 4, 8);
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    const char *hdr[] = {"Content-Type: application/xml", NULL};
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", u, doc, strlen(doc), hdr, &r), 0);
    if (r.status != 201)
        fprintf(stderr, "\n  %.500s\n", r.body);
    CU_ASSERT_EQUAL_FATAL(r.status, 201);
    char *start_s = xml_get(r.body, "//co:Allocation/co:Start");
    acc_time start;
    acc_time_parse(start_s, &start, NULL);
    char *ka = xml_get(r.body, "//co:ComponentAllocation[@co:name='a']/co:Reservation");
    char *kb = xml_get(r.body, "//co:ComponentAllocation[@co:name='b']/co:Reservation");
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:ComponentAllocation[@co:name='a']/co:NodeName"), 4);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:ComponentAllocation[@co:name='b']/co:NodeName"), 8);
    char *loc = strdup(r.location);
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ka);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kb);
    /* Visible in scontrol show reservation on both clusters, at the common start. */
    acc_time sa = 0, sb = 0;
    CU_ASSERT_EQUAL(reservation_nodes("sitea", ka, &sa), 4);
    CU_ASSERT_EQUAL(reservation_nodes("siteb", kb, &sb), 8);
    CU_ASSERT_EQUAL(sa, start);
    CU_ASSERT_EQUAL(sb, start);
    /* Terminate: both gone. */
    snprintf(u, sizeof u, "%s%s/terminate", fx.base, loc);
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(reservation_nodes("sitea", ka, NULL), -1);
    CU_ASSERT_EQUAL(reservation_nodes("siteb", kb, NULL), -1);
    free(start_s);
    free(ka);
    free(kb);
    free(loc);
}

/* Another user takes all of sitea over the agreement's start, just before
 * Accord reserves. */
static acc_time competitor_end;

static void compete(void *ctx, const struct acc_resource *res, acc_time start, int64_t duration)
{
    (void)ctx;
    (void)res;
    char w[32], opt[48];
    iso(start, w);
    snprintf(opt, sizeof opt, "StartTime=%s", w);
    int st;
    free(slurm("sitea", &st, "scontrol", "create", "reservation", "ReservationName=competitor", opt,
               "Duration=10", "NodeCnt=8", "Users=root", NULL));
    CU_ASSERT_EQUAL(st, 0);
    competitor_end = start + 600;
    (void)duration;
}

static acc_err no_journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                          struct acc_error *e)
{
    (void)ctx;
    (void)b;
    (void)n;
    (void)durable;
    (void)e;
    return ACC_OK;
}

static void test_competing_reservation(void)
{
    reset();
    char db[256];
    snprintf(db, sizeof db, "%s/compete.db", acc_test_tmpdir());
    struct acc_kv sa[] = {{"slurm_conf", conf_a}}, sb[] = {{"slurm_conf", conf_b}};
    struct acc_adapter_env ea = {
        .name = "sitea", .section = "sitea", .settings = sa, .n_settings = 1, .nodes = 8};
    struct acc_adapter_env eb = {
        .name = "siteb", .section = "siteb", .settings = sb, .n_settings = 1, .nodes = 16};
    struct acc_link_def link = {"ab", "sitea", "siteb", 1000};
    struct acc_adapter_env en = {
        .name = "wan", .section = "wan", .db_path = db, .links = &link, .n_links = 1};
    struct acc_adapter *a = NULL, *b = NULL, *net = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &ea, &a, &err), 0);
    CU_ASSERT_EQUAL_FATAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &eb, &b, &err), 0);
    CU_ASSERT_EQUAL_FATAL(acc_adapter_open(acc_adapter_kind_find("sim-network"), &en, &net, &err),
                          0);
    struct acc_adapter *hooked = hook_wrap(a, compete, NULL);
    struct acc_engine *eng;
    struct acc_engine_options eo = {0};
    CU_ASSERT_EQUAL_FATAL(acc_engine_new(&eo, &eng, &err), 0);
    struct acc_engine_item items[3] = {
        {.adapter = hooked,
         .res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 4},
         .label = "site sitea"},
        {.adapter = b,
         .res = {.kind = ACC_RES_NODES, .name = "siteb", .amount = 4},
         .label = "site siteb"},
        {.adapter = net,
         .res = {.kind = ACC_RES_BANDWIDTH, .name = "ab", .amount = 100},
         .label = "link ab"},
    };
    acc_time now = acc_now();
    struct acc_engine_request rq = {
        .agreement = "competecompete00",
        .earliest = now + 30,
        .deadline = now + 86400,
        .duration = 120,
        .strategy = ACC_STRATEGY_INTERSECT,
        .max_rounds = 10,
        .call_timeout_us = 20000000,
        .items = items,
        .n_items = 3,
        .hooks = {no_journal, NULL, NULL, NULL},
    };
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &rq, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_TRUE(res.rollbacks >= 1);          /* verify caught it, everything was undone */
    CU_ASSERT_TRUE(res.start >= competitor_end); /* and it landed after, no overlap */
    acc_time sa_start = 0;
    CU_ASSERT_EQUAL(reservation_nodes("sitea", items[0].booking.key, &sa_start), 4);
    CU_ASSERT_TRUE(sa_start >= competitor_end);
    for (int i = 0; i < 3; i++)
        acc_adapter_cancel(items[i].adapter, items[i].booking.key, NULL, NULL);
    acc_engine_items_release(items, 3);
    acc_engine_free(eng);
    acc_adapter_close(hooked);
    acc_adapter_close(a);
    acc_adapter_close(b);
    acc_adapter_close(net);
    reset();
}

static void test_job_starts_inside_reservation(void)
{
    reset();
    struct acc_kv sb[] = {{"slurm_conf", conf_b}};
    struct acc_adapter_env eb = {
        .name = "siteb", .section = "siteb", .settings = sb, .n_settings = 1, .nodes = 16};
    struct acc_adapter *b = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &eb, &b, &err), 0);
    acc_time start = acc_now() + 8;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "siteb", .amount = 2};
    struct acc_reservation rsv;
    ACC_ASSERT_OK(acc_adapter_reserve(b, "acc-jobtest", &res, start, 120, &rsv, &err));
    char out[300];
    snprintf(out, sizeof out, "%s/job.out", acc_test_tmpdir());
    const char *args[] = {"-c", "echo started on $(hostname) $SLURM_JOB_NODELIST; sleep 60"};
    struct acc_job job = {.key = "acc-jobtest",
                          .local_id = rsv.local_id,
                          .nodes = 2,
                          .ppn = 1,
                          .executable = "/bin/sh",
                          .args = args,
                          .n_args = 2,
                          .output = out,
                          .end = rsv.end};
    char id[64];
    ACC_ASSERT_OK(acc_adapter_submit(b, &job, id, sizeof id, &err));
    /* Pending until the reservation starts, then running inside it. */
    char *q = slurm("siteb", NULL, "squeue", "-h", "-j", id, "-o", "%T", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(q, "PENDING"));
    free(q);
    acc_time began = 0;
    for (int i = 0; i < 300 && !began; i++) {
        q = slurm("siteb", NULL, "squeue", "-h", "-j", id, "-o", "%T|%S|%N", NULL);
        if (strncmp(q, "RUNNING|", 8) == 0) {
            began = strtoll(q + 8, NULL, 10);
            /* on the reservation's nodes */
            char *nodes = strrchr(q, '|') + 1;
            nodes[strcspn(nodes, "\n")] = '\0';
            char *rn =
                slurm("siteb", NULL, "scontrol", "show", "reservation", "acc-jobtest", "-o", NULL);
            CU_ASSERT_PTR_NOT_NULL(strstr(rn, nodes));
            free(rn);
        }
        free(q);
        if (!began)
            usleep(100000);
    }
    CU_ASSERT_TRUE(began >= start && began <= start + 15);
    /* Cancelling the reservation takes its job with it. */
    ACC_ASSERT_OK(acc_adapter_cancel(b, "acc-jobtest", rsv.local_id, &err));
    CU_ASSERT_EQUAL(reservation_nodes("siteb", "acc-jobtest", NULL), -1);
    q = slurm("siteb", NULL, "squeue", "-h", "-t", "R,PD", "-j", id, NULL);
    CU_ASSERT_PTR_NULL(strstr(q, "RUNNING"));
    free(q);
    acc_reservation_release(&rsv);
    acc_adapter_close(b);
    reset();
}

/* A reservation booked for an account names it in Users= (scontrol show
 * reservation), and a process started through the adapter's process command
 * (srun --reservation --nodelist -N1 -n1) by that account (a throwaway one,
 * removed at the end) runs on the node asked for under its uid (/proc). */
static void test_account_reservation_and_process(void)
{
    reset();
    struct acc_kv sb[] = {{"slurm_conf", conf_b}, {"users", "root"}};
    struct acc_adapter_env eb = {
        .name = "siteb", .section = "siteb", .settings = sb, .n_settings = 2, .nodes = 16};
    struct acc_adapter *b = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &eb, &b, &err), 0);
    char name[33], work[300];
    snprintf(name, sizeof name, "accsl%ld", (long)getpid());
    uid_t uid;
    gid_t gid;
    CU_ASSERT_TRUE_FATAL(acc_test_account_add(name, &uid, &gid));
    struct acc_resource res = {
        .kind = ACC_RES_NODES, .name = "siteb", .amount = 1, .account = name};
    struct acc_reservation rsv;
    ACC_ASSERT_OK(acc_adapter_reserve(b, "acc-account", &res, acc_now(), 300, &rsv, &err));
    char *show = slurm("siteb", NULL, "scontrol", "show", "reservation", "acc-account", "-o", NULL);
    char want[64];
    snprintf(want, sizeof want, " Users=%s ", name); /* the account, not the users setting */
    CU_ASSERT_PTR_NOT_NULL(strstr(show, want));
    if (!strstr(show, want))
        fprintf(stderr, "\n%s\n", show);
    free(show);
    snprintf(work, sizeof work, "%s/job-XXXXXX", acc_test_tmpdir());
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(work));
    CU_ASSERT_EQUAL_FATAL(chown(work, uid, gid), 0);
    chmod(acc_test_tmpdir(), 0711);
    const char *args[] = {"60"};
    struct acc_job job = {.key = "acc-account",
                          .local_id = rsv.local_id,
                          .nodes = 1,
                          .executable = "/bin/sleep",
                          .args = args,
                          .n_args = 1,
                          .directory = work,
                          .end = rsv.end,
                          .host = rsv.nodes,
                          .user = name};
    struct acc_command cmd;
    ACC_ASSERT_OK(acc_adapter_process_command(b, &job, &cmd, &err));
    char out[400];
    snprintf(out, sizeof out, "%s/srun.out", work);
    pid_t srun = acc_test_run_as(uid, gid, NULL, &cmd, out);
    CU_ASSERT_TRUE(srun > 0);
    pid_t p = acc_test_find_process(uid, "sleep", 30000);
    CU_ASSERT_TRUE(p > 0); /* found by its uid: it runs as the account */
    if (p <= 0) {
        char *o = read_file(out, NULL);
        fprintf(stderr, "srun: %s\n", o ? o : "(nothing)");
        free(o);
    }
    /* Slurm's own word: a step of the account's on the node asked for */
    char *q = slurm("siteb", NULL, "squeue", "-h", "-u", name, "-o", "%T|%N|%R", NULL);
    snprintf(want, sizeof want, "RUNNING|%s|", rsv.nodes ? rsv.nodes : "?");
    CU_ASSERT_PTR_NOT_NULL(strstr(q, want));
    free(q);
    /* the reservation's end (its cancel here) takes the step; srun ends */
    ACC_ASSERT_OK(acc_adapter_cancel(b, "acc-account", rsv.local_id, &err));
    int status = -1;
    for (int i = 0; i < 200 && srun > 0 && waitpid(srun, &status, WNOHANG) == 0; i++)
        usleep(100000);
    CU_ASSERT_TRUE(status != -1);
    if (srun > 0 && kill(srun, 0) == 0) {
        kill(-srun, SIGKILL);
        waitpid(srun, NULL, 0);
    }
    acc_command_release(&cmd);
    acc_reservation_release(&rsv);
    acc_adapter_close(b);
    acc_test_account_remove(name);
    reset();
}

/* A meta-job over both clusters: sitea's component is a batch job in its
 * reservation (sbatch), siteb's runs under mpiexec; the job ends when both
 * have, and what each wrote is kept. */
static pid_t pid_of(const char *file)
{
    char *p = read_file(file, NULL);
    pid_t pid = p ? (pid_t)strtol(p, NULL, 10) : 0;
    free(p);
    return pid;
}

static void test_controller_down(void)
{
    reset();
    char pidfile[400];
    snprintf(pidfile, sizeof pidfile, "%s/sitea/run/slurmctld.pid", dir);
    pid_t ctld = pid_of(pidfile);
    CU_ASSERT_TRUE_FATAL(ctld > 0);
    kill(ctld, SIGTERM);
    for (int i = 0; i < 100 && kill(ctld, 0) == 0; i++)
        usleep(100000);

    char doc[4096], u[256];
    snprintf(doc, sizeof doc, offer_fmt, "PT5M", 2, 2);
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    const char *hdr[] = {"Content-Type: application/xml", NULL};
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", u, doc, strlen(doc), hdr, &r), 0);
    CU_ASSERT_EQUAL(r.status, 503);
    char *code = xml_get(r.body, "/co:Fault/@co:code");
    CU_ASSERT_TRUE(
        code && (strcmp(code, "AdapterUnavailable") == 0 || strcmp(code, "AdapterTimeout") == 0));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "sitea"));
    char *id = xml_get(r.body, "/co:Fault/co:AgreementId");
    free(code);
    http_reply_free(&r);
    /* Nothing booked anywhere: siteb holds no reservation of it. */
    char *res = slurm("siteb", NULL, "scontrol", "show", "reservation", "-o", NULL);
    CU_ASSERT_PTR_NULL(id ? strstr(res, id) : "no agreement id");
    free(res);
    free(id);

    /* Bring sitea's controller back for whoever comes next. */
    char marker[400];
    snprintf(marker, sizeof marker, "SLURM_TESTBED_DAEMON_OF=%s", dir);
    char env_conf[400];
    snprintf(env_conf, sizeof env_conf, "SLURM_CONF=%s", conf_a);
    const char *argv[] = {"slurmctld", "-f", conf_a, NULL};
    const char *env[] = {marker, env_conf, NULL};
    struct acc_proc_result pr;
    struct acc_error err;
    ACC_ASSERT_OK(acc_proc_run(argv, env, NULL, 30000, 65536, &pr, &err));
    acc_proc_result_release(&pr);
    bool up = false;
    for (int i = 0; i < 100 && !up; i++) {
        char *p = slurm("sitea", NULL, "scontrol", "ping", NULL);
        up = strstr(p, "is UP") != NULL;
        free(p);
        if (!up)
            usleep(200000);
    }
    CU_ASSERT_TRUE(up);
}

static const struct acc_test_case tests[] = {
    {"a preview matches what Slurm then grants", test_preview_matches_slurm},
    {"an agreement across both clusters, visible in scontrol; terminate",
     test_agreement_on_both_clusters},
    {"a competing reservation between preview and reserve: rollback, after it",
     test_competing_reservation},
    {"a job submitted into a reservation starts inside it", test_job_starts_inside_reservation},
    {"a reservation for an account; a process as it, through srun --reservation",
     test_account_reservation_and_process},
    {"a meta-job: sbatch on one cluster, mpiexec for the other", test_launch_sbatch_and_mpiexec},
    {"a controller down: 503, nothing booked", test_controller_down},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"slurm", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
