/* SPDX-License-Identifier: Apache-2.0 */
/* test_sge_real.c - the conformance checks of the adapters, asked of the sge
 * adapter on a real Grid Engine cluster (tests/sge/start-testbed.sh, a ctest
 * fixture: 3 exec hosts of 2 slots, PE mpi with allocation rule 2): reserve,
 * query, cancel, idempotence, a full cluster, a past start, a competing
 * reservation made by hand between preview and reserve (refused and rolled
 * back), a running job's h_rt, and a reservation whose id was lost found and
 * cancelled by its name.  Labels root;sge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adapter.h"
#include "run_as.h"
#include "testutil.h"

#define H 3600

static char dir[512], root[600], bin[600];

static int setup(void)
{
    const char *d = getenv("SGE_TESTBED_DIR");
    snprintf(dir, sizeof dir, "%s", d ? d : "/tmp/sge-testbed");
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(bin, sizeof bin, "%s/bin", dir);
    return 0;
}

/* The adapter whose commands run in bin_dir (NULL: the testbed's wrappers,
 * which run them on the qmaster host). */
static struct acc_adapter *open_sge_in(const char *bin_dir)
{
    struct acc_kv kv[] = {{"sge_root", root},
                          {"cell", "accord"},
                          {"pe", "mpi"},
                          {"queue", "all.q"},
                          {"slots", "2"},
                          {"users", "nobody"},
                          {"bin_dir", bin_dir ? bin_dir : bin},
                          {"timeout", "PT20S"}};
    struct acc_adapter_env env = {.name = "sgea",
                                  .section = "[site sgea]",
                                  .settings = kv,
                                  .n_settings = sizeof kv / sizeof *kv,
                                  .nodes = 3};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find("sge"), &env, &ad, &err))
        fprintf(stderr, "open sge: %s\n", err.msg);
    return ad;
}

static struct acc_adapter *open_sge(void)
{
    return open_sge_in(NULL);
}

/* A Grid Engine command on the testbed's qmaster host; its exit code. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[2048];
    int n = snprintf(cmd, sizeof cmd, "cd %s && PATH=%s:$PATH TZ=UTC; ", dir, bin);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static acc_time future(int hours)
{
    return (acc_now() / H + 24 * 10 + hours) * H;
}

static struct acc_resource nodes(int64_t n)
{
    return (struct acc_resource){.kind = ACC_RES_NODES, .name = "sgea", .amount = n};
}

static void test_health(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_TRUE(h.up);
    acc_adapter_close(ad);
}

static void test_reserve_query_cancel(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_reservation r, again;
    struct acc_error err;
    acc_time t = future(0);
    struct acc_resource two = nodes(2), three = nodes(3);
    acc_err rc = acc_adapter_reserve(ad, "acc-conf-1", &two, t, 2 * H, &r, &err);
    if (rc)
        fprintf(stderr, "reserve: %s\n", err.msg);
    ACC_ASSERT_OK(rc);
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.end, t + 2 * H);
    CU_ASSERT_EQUAL(r.amount, 2);
    CU_ASSERT_NOT_EQUAL(r.local_id[0], '\0');
    CU_ASSERT_PTR_NOT_NULL(r.nodes && strstr(r.nodes, "sgea-n") && strchr(r.nodes, ','));
    /* The same key again is the same reservation, not a second one. */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "acc-conf-1", &two, t, 2 * H, &again, &err));
    CU_ASSERT_STRING_EQUAL(again.local_id, r.local_id);
    acc_reservation_release(&again);
    ACC_ASSERT_OK(acc_adapter_query(ad, "acc-conf-1", r.local_id, &again, &err));
    CU_ASSERT_EQUAL(again.amount, 2);
    CU_ASSERT_STRING_EQUAL(again.nodes ? again.nodes : "", r.nodes ? r.nodes : "?");
    acc_reservation_release(&again);
    /* Previews see it: 3 hosts are not free during it. */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &three, t - 4 * H, t + 6 * H, H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].end, t);
    CU_ASSERT_EQUAL(f.v[1].start, t + 2 * H);
    acc_frames_release(&f);
    /* The real qrstat agrees. */
    CU_ASSERT_EQUAL(sh("qrstat -u '*' | grep -q acc-conf-1"), 0);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-conf-1", r.local_id, &err));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-conf-1", NULL, &err)); /* idempotent */
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-conf-1", r.local_id, &again, &err),
                    ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-conf-1", NULL, &again, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_NOT_EQUAL(sh("qrstat -u '*' | grep -q acc-conf-1"), 0);
    acc_reservation_release(&r);
    acc_adapter_close(ad);
}

static void test_full_and_past(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_reservation r;
    struct acc_error err;
    acc_time t = future(10);
    struct acc_resource all = nodes(3), one = nodes(1);
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "acc-fill", &all, t, H, &r, &err));
    acc_reservation_release(&r);
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-more", &one, t + 60, H, &r, &err), ACC_ERR_BUSY);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "qrsub"));
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-more", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-fill", NULL, &err));
    /* A start in the past: refused with Grid Engine's words. */
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-past", &one, acc_now() - H, H, &r, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "start time is in the past"));
    /* More hosts than the cluster has: busy, nothing left behind. */
    struct acc_resource four = nodes(4);
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-four", &four, t, H, &r, &err), ACC_ERR_BUSY);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-four", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    acc_adapter_close(ad);
}

/* Between preview and reserve someone books a host by hand: the preview's
 * frame is gone, the reserve is refused, no reservation of Accord's key is
 * left (what the engine's verify-and-rollback relies on). */
static void test_competing(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    acc_time t = future(20);
    struct acc_resource all = nodes(3);
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &all, t, t + H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
    char when[32];
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(when, sizeof when, "%Y%m%d%H%M.%S", &tm);
    CU_ASSERT_EQUAL_FATAL(sh("qrsub -N someone-else -a %s -d 3600 -pe mpi 2 >/dev/null", when), 0);
    struct acc_reservation r;
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-compete", &all, t, H, &r, &err), ACC_ERR_BUSY);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "acc-compete", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &all, t, t + H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(sh("qrdel someone-else >/dev/null"), 0);
    acc_adapter_close(ad);
}

/* accordd booked but did not record (killed in between): at restart the
 * reservation is found by its key alone and cancelled. */
static void test_lost_id(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    struct acc_reservation r;
    acc_time t = future(30);
    struct acc_resource one = nodes(1);
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "acc-lost-r1i0", &one, t, H, &r, &err));
    acc_reservation_release(&r);
    acc_adapter_close(ad);
    ad = open_sge(); /* a restart: nothing but the key */
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    ACC_ASSERT_OK(acc_adapter_query(ad, "acc-lost-r1i0", NULL, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.amount, 1);
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-lost-r1i0", NULL, &err));
    CU_ASSERT_NOT_EQUAL(sh("qrstat -u '*' | grep -q acc-lost"), 0);
    acc_adapter_close(ad);
}

/* A reservation booked for an account names it in its users list (qrsub -u,
 * qrstat -ar ID), and a process started through the adapter's process
 * command by that account (a throwaway one, removed at the end) runs in the
 * reservation on the host asked for, under its uid (/proc, while it runs). */
static void test_account(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    char name[33], work[700];
    snprintf(name, sizeof name, "accsg%ld", (long)getpid());
    uid_t uid;
    gid_t gid;
    CU_ASSERT_TRUE_FATAL(acc_test_account_add(name, &uid, &gid));
    struct acc_error err;
    struct acc_resource one = nodes(1);
    one.account = name;
    acc_time start = acc_now() + 3;
    struct acc_reservation r;
    acc_err rc = acc_adapter_reserve(ad, "acc-account-1", &one, start, 180, &r, &err);
    if (rc)
        fprintf(stderr, "reserve: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    CU_ASSERT_EQUAL(sh("qrstat -ar %s | grep -E '^acl_list +%s$' >/dev/null", r.local_id, name), 0);
    if (sh("qrstat -ar %s | grep -E '^acl_list +%s$' >/dev/null", r.local_id, name) != 0)
        sh("qrstat -ar %s >&2", r.local_id);
    /* the job's directory: the account's, on the file system the exec hosts see */
    snprintf(work, sizeof work, "%s/job-XXXXXX", acc_test_tmpdir());
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(work));
    CU_ASSERT_EQUAL_FATAL(chown(work, uid, gid), 0);
    chmod(acc_test_tmpdir(), 0711);
    const char *args[] = {"60"};
    char *host = strdup(r.nodes ? r.nodes : "");
    host[strcspn(host, ",")] = '\0';
    struct acc_job job = {.key = "acc-account-1",
                          .local_id = r.local_id,
                          .nodes = 1,
                          .executable = "/bin/sleep",
                          .args = args,
                          .n_args = 1,
                          .directory = work,
                          .end = r.end,
                          .host = host,
                          .user = name};
    /* qsub itself on the gateway host (a submit host that resolves every
     * host), as the account: the adapter as accord-site there would have it */
    struct acc_adapter *gw_ad = open_sge_in("/usr/lib/gridengine");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gw_ad);
    struct acc_command cmd;
    ACC_ASSERT_OK(acc_adapter_process_command(gw_ad, &job, &cmd, &err));
    acc_adapter_close(gw_ad);
    char gw[700], out[800];
    snprintf(gw, sizeof gw, "%s/on-gw", bin);
    snprintf(out, sizeof out, "%s/qsub.out", work);
    const char *prefix[] = {gw, NULL};
    pid_t qsub = acc_test_run_as(uid, gid, prefix, &cmd, out);
    CU_ASSERT_TRUE(qsub > 0);
    pid_t p = acc_test_find_process(uid, "sleep", 30000);
    CU_ASSERT_TRUE(p > 0); /* found by its uid: it runs as the account */
    if (p <= 0) {
        char *o = acc_test_slurp(out, NULL);
        fprintf(stderr, "qsub: %s\n", o ? o : "(nothing)");
        free(o);
    }
    /* Grid Engine ran it as the account, in the AR, on the host asked for */
    CU_ASSERT_EQUAL(sh("qstat -u %s -s r | grep -q ' %s '", name, name), 0);
    CU_ASSERT_EQUAL(sh("qstat -u %s -s r | grep -q '@%s '", name, host), 0);
    /* the reservation's end (here its cancel) takes the job with it, and
     * qsub -sync y ends */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-account-1", r.local_id, &err));
    int status = -1;
    for (int i = 0; i < 200 && qsub > 0 && waitpid(qsub, &status, WNOHANG) == 0; i++)
        usleep(100000);
    CU_ASSERT_TRUE(WIFEXITED(status) || WIFSIGNALED(status));
    if (qsub > 0 && kill(qsub, 0) == 0) {
        kill(-qsub, SIGKILL);
        waitpid(qsub, NULL, 0);
    }
    sh("qdel -u %s >/dev/null 2>&1", name);
    acc_command_release(&cmd);
    acc_reservation_release(&r);
    free(host);
    acc_test_account_remove(name);
    acc_adapter_close(ad);
}

/* A running job without a reservation keeps its host busy until its h_rt
 * ends (+1 s); one without h_rt keeps it busy for good. */
static void test_running_job(void)
{
    struct acc_adapter *ad = open_sge();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(sh("nsenter -t $(cat run/qmaster.pid) -n -u -m -- setpriv --reuid=65534 "
                             "--regid=65534 --clear-groups env SGE_ROOT=%s SGE_CELL=accord "
                             "SGE_QMASTER_PORT=6444 /usr/lib/gridengine/qsub -wd /tmp -o /dev/null "
                             "-e /dev/null -N acc-job -l h_rt=1200 -pe mpi 2 -b y /bin/sleep 1200 "
                             ">/dev/null",
                             root),
                          0);
    int running = 0;
    for (int i = 0; i < 100 && !running; i++) {
        running = sh("qstat -u '*' -s r | grep -q acc-job") == 0;
        if (!running)
            usleep(100000);
    }
    CU_ASSERT_TRUE_FATAL(running);
    acc_time now = acc_now();
    struct acc_resource all = nodes(3);
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &all, now, now + 2 * H, 60, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_TRUE(f.v[0].start >= now + 1190 && f.v[0].start <= now + 1202);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(sh("qdel -u nobody >/dev/null 2>&1"), 0);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"the qmaster answers", test_health},
    {"reserve, query, cancel", test_reserve_query_cancel},
    {"a full cluster, a past start", test_full_and_past},
    {"a competing reservation between preview and reserve", test_competing},
    {"a reservation whose id was lost is found by name", test_lost_id},
    {"a running job's h_rt", test_running_job},
    {"a reservation for an account; a process as it, through qsub -sync y -ar", test_account},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sge_real", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
