/* SPDX-License-Identifier: Apache-2.0 */
/* test_tc_real.c - network reservations on the wire, end to end (issue 10):
 * the namespace testbed (tools/netbed.sh: sites alpha, beta, gamma behind a
 * WAN router, 200 Mbit/s uplinks), the real accordd binary with sim-batch
 * sites and the tc network adapter (audit every second), and real TCP flows
 * (accord-flowgen).
 *
 *   1. a link of 100 Mbit/s starting a few seconds ahead: no class before the
 *      start; the class at the start; the agreement's flow gets >= 90 % of it
 *      while background flows from other hosts and another site saturate the
 *      same uplinks; Fulfilled with the bytes counted; kill -9 of accordd: the
 *      class stays, and after the restart it is reconciled, still Fulfilled;
 *      a class deleted by hand comes back within the audit interval and the
 *      term is Violated with when and why; after the end the class is gone;
 *   2. terminate removes the class at once;
 *   3. accordd down across a reservation's end: the stale class is removed
 *      at the restart.
 *
 * Root only.  Brings the testbed down and kills its accordd however it ends:
 * a guardian process, holding the other end of a pipe, does it when this one
 * exits (even by SIGKILL).  The testbed is global, so the whole run holds
 * the lock /run/lock/accord-netbed.lock (flock) against other users of it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

#define NETBED    ACC_SOURCE_DIR "/tools/netbed.sh"
#define LOCK_PATH "/run/lock/accord-netbed.lock"
#define RATE      100 /* Mbit/s reserved, of the 200 Mbit/s uplinks */

static char ini[512], db[512], base[256];
static pid_t accordd = -1;
static int guard_fd = -1; /* the guardian's pipe */
static pid_t guardian = -1;

/* ------------------------------------------------------------ guardian */

static void guardian_main(int fd)
{
    char buf[4096];
    size_t used = 0;
    ssize_t n;
    while (used + 1 < sizeof buf && (n = read(fd, buf + used, sizeof buf - used - 1)) > 0)
        used += (size_t)n;
    buf[used] = '\0';
    if (strstr(buf, "done\n"))
        _exit(0); /* cleaned up by the test itself */
    for (char *p = strstr(buf, "pid "); p; p = strstr(p + 4, "pid ")) {
        long pid = strtol(p + 4, NULL, 10);
        char path[64], comm[32] = "";
        snprintf(path, sizeof path, "/proc/%ld/comm", pid);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = '\0';
            fclose(f);
        }
        if (strncmp(comm, "accordd", 7) == 0)
            kill((pid_t)pid, SIGKILL);
    }
    if (system(NETBED " down >/dev/null 2>&1") != 0)
        fprintf(stderr, "test_tc_real guardian: netbed down failed\n");
    /* The test's temporary directory (its exit handler did not run). */
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", acc_test_tmpdir());
    if (system(rm) != 0)
        fprintf(stderr, "test_tc_real guardian: %s failed\n", rm);
    _exit(0);
}

static void guard_note(const char *fmt, long v)
{
    char line[64];
    int len = snprintf(line, sizeof line, fmt, v);
    if (guard_fd >= 0 && write(guard_fd, line, (size_t)len) != len)
        fprintf(stderr, "guardian note lost\n");
}

/* ---------------------------------------------------------- helpers */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    double d = t - now_s();
    if (d > 0)
        usleep((useconds_t)(d * 1e6));
}

/* Leaf classes (not 1:1, not 1:9999) on NS/DEV with rate `rate` Mbit/s:
 * how many; *id the first one's minor. */
static int leaves(const char *ns, const char *dev, int rate, unsigned *id)
{
    char cmd[256], line[512], want[32];
    snprintf(cmd, sizeof cmd, "tc -n %s class show dev %s 2>/dev/null", ns, dev);
    snprintf(want, sizeof want, " rate %dMbit ", rate);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, p)) {
        unsigned minor;
        if (sscanf(line, "class htb 1:%u", &minor) != 1 || minor == 1 || minor == 9999)
            continue;
        if (strstr(line, want)) {
            if (n++ == 0 && id)
                *id = minor;
        }
    }
    pclose(p);
    return n;
}

/* The class on all four devices of link alpha-beta (both directions): how
 * many, or -1 when the devices differ (said on stderr unless quiet). */
static int leaves_on(int rate, bool quiet)
{
    int a = leaves("acc-gw-alpha", "up0", rate, NULL), b = leaves("acc-wan", "to-beta", rate, NULL);
    int c = leaves("acc-gw-beta", "up0", rate, NULL), d = leaves("acc-wan", "to-alpha", rate, NULL);
    if (a == b && b == c && c == d)
        return a;
    if (!quiet)
        fprintf(stderr, "\n  leaves of %d Mbit/s differ: %d %d %d %d\n", rate, a, b, c, d);
    return -1;
}

static int leaves_ab(int rate)
{
    return leaves_on(rate, false);
}

/* Waits up to `seconds` for leaves_ab(rate) == want. */
static bool wait_leaves(int rate, int want, double seconds)
{
    double until = now_s() + seconds;
    do {
        if (leaves_on(rate, true) == want)
            return true;
        usleep(100000);
    } while (now_s() < until);
    return leaves_ab(rate) == want; /* says how the devices differ */
}

static void start_accordd(void)
{
    accordd = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_FATAL(accordd > 0);
    guard_note("pid %ld\n", (long)accordd);
}

static void kill_accordd(int sig)
{
    if (accordd <= 0)
        return;
    kill(accordd, sig);
    waitpid(accordd, NULL, 0);
    accordd = -1;
}

/* An agreement: component a (alpha, 1 node) and b (beta or gamma, 1 node),
 * link ab of `mbit`, from start for `seconds`, exactly (deadline = end).
 * Its id (free it), or NULL. */
static char *agree(const char *site_b, int mbit, acc_time start, int seconds)
{
    char s[ACC_TIME_STRLEN], e[ACC_TIME_STRLEN], offer[4096];
    acc_time_format(start, s);
    acc_time_format(start + seconds, e);
    snprintf(offer, sizeof offer,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>tc-real</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"m\">"
             "<co:Schedule><co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>PT%dS</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
             "<co:Site>alpha</co:Site><co:Nodes>1</co:Nodes></co:Component>"
             "</wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component>"
             "<co:Site>%s</co:Site><co:Nodes>1</co:Nodes></co:Component>"
             "</wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"m\"><co:Link>"
             "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>%d</co:Bandwidth>"
             "</co:Link></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
             "</wsag:AgreementOffer>",
             s, e, seconds, site_b, mbit);
    long status;
    char *reply = daemon_call(base, "POST", "/agreements", offer, &status);
    char *id = status == 201 && reply ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
    if (!id)
        fprintf(stderr, "\n  POST: %ld %s\n", status, reply ? reply : "(no reply)");
    free(reply);
    return id;
}

/* The link term ab's guarantee: state, and the XML of the whole status
 * (free both). */
static char *guarantee(const char *id, char **doc)
{
    char path[128];
    long status;
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    *doc = daemon_call(base, "GET", path, NULL, &status);
    if (status != 200 || !*doc)
        return NULL;
    return xml_get(*doc, "//wsag:GuaranteeTermState[@wsag:termName='ab']/wsag:State");
}

static char *lg(const char *doc, const char *el)
{
    char xp[160];
    snprintf(xp, sizeof xp, "//wsag:GuaranteeTermState[@wsag:termName='ab']/co:LinkGuarantee/co:%s",
             el);
    return xml_get(doc, xp);
}

static bool guarantee_is(const char *id, const char *want)
{
    char *doc = NULL, *st = guarantee(id, &doc);
    bool ok = st && strcmp(st, want) == 0;
    if (!ok)
        fprintf(stderr, "\n  guarantee of %s is %s, not %s:\n%s\n", id, st ? st : "(none)", want,
                doc ? doc : "(no reply)");
    free(st);
    free(doc);
    return ok;
}

/* The audit puts a class back first and records the violation after it:
 * guarantee_is(id, want) within 2 s. */
static bool guarantee_soon(const char *id, const char *want)
{
    for (int i = 0; i < 20; i++) {
        char *doc = NULL, *st = guarantee(id, &doc);
        bool ok = st && strcmp(st, want) == 0;
        free(st);
        free(doc);
        if (ok)
            return true;
        usleep(100000);
    }
    return guarantee_is(id, want);
}

/* flowgen in a host's namespace, in the background; its pid. */
static pid_t spawn(const char *ns, const char *args, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "exec ip netns exec %s %s %s >%s 2>&1", ns, FLOWGEN_PATH, args,
                 out);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static double mbit_of(const char *path)
{
    char *t = read_file(path, NULL);
    const char *m = t ? strstr(t, "RESULT mbit_s=") : NULL;
    double v = m ? strtod(m + strlen("RESULT mbit_s="), NULL) : -1;
    free(t);
    return v;
}

/* ------------------------------------------------------------- tests */

/* Scenario 1: the window of a 100 Mbit/s link alpha-beta. */
/* The agreement's flow alpha-n1 -> beta-n1 against background from
 * alpha-n2 (same alpha uplink, same WAN port to beta) and gamma-n1 (same
 * WAN port to beta), each with 4 streams. */
static void check_flows(void)
{
    char out[4][256];
    for (int i = 0; i < 4; i++)
        snprintf(out[i], sizeof out[i], "%s/flow%d.txt", acc_test_tmpdir(), i);
    pid_t srv1 = spawn("acc-beta1", "serve 5401", "/dev/null");
    pid_t srv2 = spawn("acc-beta2", "serve 5402", "/dev/null");
    usleep(300000);
    pid_t bg1 = spawn("acc-alpha2", "send 10.79.2.12 5402 --streams 4 --seconds 7", out[1]);
    pid_t bg2 = spawn("acc-gamma1", "send 10.79.2.12 5402 --streams 4 --seconds 7", out[2]);
    usleep(1000000);
    pid_t real = spawn("acc-alpha1", "send 10.79.2.11 5401 --streams 1 --seconds 5", out[0]);
    waitpid(real, NULL, 0);
    waitpid(bg1, NULL, 0);
    waitpid(bg2, NULL, 0);
    kill(srv1, SIGTERM);
    kill(srv2, SIGTERM);
    waitpid(srv1, NULL, 0);
    waitpid(srv2, NULL, 0);
    double got = mbit_of(out[0]), b1 = mbit_of(out[1]), b2 = mbit_of(out[2]);
    printf("  reserved %d Mbit/s: the agreement's flow got %.1f Mbit/s; background alpha-n2 "
           "%.1f, gamma-n1 %.1f (uplinks of 200)\n",
           RATE, got, b1, b2);
    CU_ASSERT(got >= 0.9 * RATE);
    CU_ASSERT(b1 > 0 && b2 > 0);
    CU_ASSERT(b1 + b2 >= 60); /* the background did use what was left */
}

/* The guarantee Fulfilled, the bytes its classes carried; its activation
 * time (free it). */
static char *check_fulfilled(const char *id)
{
    char *doc = NULL, *st = guarantee(id, &doc);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT(st && strcmp(st, "Fulfilled") == 0);
    char *bytes = doc ? lg(doc, "Bytes") : NULL, *act = doc ? lg(doc, "Activated") : NULL;
    long long carried = bytes ? strtoll(bytes, NULL, 10) : 0;
    printf("  Fulfilled; its classes carried %lld bytes\n", carried);
    CU_ASSERT(carried >= (long long)(0.9 * RATE * 1e6 / 8 * 4)); /* >= 4 s of the flow */
    CU_ASSERT_PTR_NOT_NULL(act);
    free(st);
    free(bytes);
    free(doc);
    return act;
}

/* kill -9 of accordd: the reservation stands, so its class stays. */
static void check_survives_kill(const char *id, const char *act)
{
    kill_accordd(SIGKILL);
    usleep(1500000);
    CU_ASSERT_EQUAL(leaves_ab(RATE), 1);
    start_accordd();
    usleep(1500000);
    CU_ASSERT_EQUAL(leaves_ab(RATE), 1);
    CU_ASSERT(guarantee_is(id, "Fulfilled"));
    char *doc = NULL;
    free(guarantee(id, &doc));
    char *act2 = doc ? lg(doc, "Activated") : NULL;
    CU_ASSERT(act && act2 && strcmp(act, act2) == 0); /* the same activation */
    free(act2);
    free(doc);
}

/* Deleted by hand: back within the audit interval, and Violated. */
static void check_deleted_by_hand(const char *id)
{
    unsigned minor = 0;
    CU_ASSERT_EQUAL_FATAL(leaves("acc-gw-alpha", "up0", RATE, &minor), 1);
    CU_ASSERT_EQUAL(sh("tc -n acc-gw-alpha filter del dev up0 parent 1: prio %u && "
                       "tc -n acc-gw-alpha class del dev up0 classid 1:%u",
                       minor, minor),
                    0);
    double gone = now_s();
    CU_ASSERT_EQUAL(leaves("acc-gw-alpha", "up0", RATE, NULL), 0);
    CU_ASSERT(wait_leaves(RATE, 1, 3.0));
    printf("  deleted by hand: back after %.2f s\n", now_s() - gone);
    CU_ASSERT(guarantee_soon(id, "Violated"));
    char *doc = NULL;
    free(guarantee(id, &doc));
    char *at = doc ? lg(doc, "ViolatedAt") : NULL, *why = doc ? lg(doc, "Reason") : NULL;
    printf("  Violated at %s: %s\n", at ? at : "?", why ? why : "?");
    CU_ASSERT_PTR_NOT_NULL(at);
    CU_ASSERT(why && strstr(why, "missing"));
    acc_time vt = 0;
    CU_ASSERT(at && acc_time_parse(at, &vt, NULL) == ACC_OK && vt >= (acc_time)gone - 1 &&
              vt <= (acc_time)gone + 3);
    free(at);
    free(why);
    free(doc);
}

static void test_window(void)
{
    acc_time t0 = acc_now() + 6;
    char *id = agree("beta", RATE, t0, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    /* Before the start: no class, nothing determined. */
    CU_ASSERT_EQUAL(leaves_ab(RATE), 0);
    CU_ASSERT(guarantee_is(id, "NotDetermined"));
    sleep_until((double)t0 - 1.5);
    CU_ASSERT_EQUAL(leaves_ab(RATE), 0);
    /* At the start (one audit interval of slack): the class. */
    CU_ASSERT(wait_leaves(RATE, 1, 3.5));
    double appeared = now_s() - (double)t0;
    printf("\n  class in place %.2f s after the start\n", appeared);
    CU_ASSERT(appeared < 2.0);

    check_flows();

    char *act = check_fulfilled(id);

    check_survives_kill(id, act);
    free(act);

    check_deleted_by_hand(id);

    /* After the end: gone. */
    sleep_until((double)t0 + 24);
    CU_ASSERT(wait_leaves(RATE, 0, 2.5));
    CU_ASSERT(guarantee_is(id, "Violated")); /* Violated stays Violated */
    free(id);
}

/* Scenario 2: terminate removes the class at once. */
static void test_terminate(void)
{
    acc_time t0 = acc_now() + 3;
    char *id = agree("beta", 60, t0, 60);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    sleep_until((double)t0);
    CU_ASSERT(wait_leaves(60, 1, 3.0));
    char path[128];
    long status;
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    double t = now_s();
    free(daemon_call(base, "POST", path, NULL, &status));
    CU_ASSERT_EQUAL(status, 200);
    CU_ASSERT_EQUAL(leaves_ab(60), 0); /* at once: when terminate has answered */
    printf("\n  terminated: class removed within %.2f s\n", now_s() - t);
    free(id);
}

/* Scenario 3: accordd down across a reservation's end. */
static void test_down_across_end(void)
{
    acc_time t0 = acc_now() + 3;
    char *id = agree("beta", 70, t0, 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    sleep_until((double)t0);
    CU_ASSERT(wait_leaves(70, 1, 3.0));
    kill_accordd(SIGKILL);
    sleep_until((double)t0 + 5 + 1.5);
    CU_ASSERT_EQUAL(leaves_ab(70), 1); /* stale: nobody removed it */
    double t = now_s();
    start_accordd();
    CU_ASSERT(wait_leaves(70, 0, 3.0));
    printf("\n  stale class removed %.2f s after accordd was started again\n", now_s() - t);
    free(id);
}

/* ------------------------------------------------------------ set-up */

static int lock_fd = -1;

static int setup(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_tc_real needs root\n");
        return 1;
    }
    lock_fd = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0)
        return 1;
    for (int i = 0; flock(lock_fd, LOCK_EX | LOCK_NB) != 0; i++) {
        if (i == 0)
            fprintf(stderr, "test_tc_real: waiting for %s (the testbed is in use)\n", LOCK_PATH);
        if (i >= 240) {
            fprintf(stderr, "test_tc_real: the testbed stayed in use for 2 minutes\n");
            return 1;
        }
        usleep(500000);
    }
    (void)acc_test_tmpdir(); /* made now, so that the guardian knows it */
    int p[2];
    if (pipe(p) != 0)
        return 1;
    /* Not inherited by accordd or flowgen: only this process holds it. */
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    guardian = fork();
    if (guardian == 0) {
        close(p[1]);
        guardian_main(p[0]);
    }
    close(p[0]);
    guard_fd = p[1];
    printf("\n  files in %s\n", acc_test_tmpdir());
    if (sh("CAP=200mbit %s up >/dev/null", NETBED) != 0) {
        fprintf(stderr, "test_tc_real: netbed up failed\n");
        return 1;
    }
    snprintf(db, sizeof db, "%s/tc.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/tc.ini", acc_test_tmpdir());
    FILE *f = fopen(ini, "w");
    if (!f)
        return 1;
    fputs("[negotiation]\nlead_time = PT1S\n[launch]\nenabled = no\n"
          "[site alpha]\nadapter = sim-batch\nnodes = 2\nhosts = alpha-n[1-2]\n"
          "addresses = 10.79.1.[11-12]\n"
          "[site beta]\nadapter = sim-batch\nnodes = 2\nhosts = beta-n[1-2]\n"
          "addresses = 10.79.2.[11-12]\n"
          "[site gamma]\nadapter = sim-batch\nnodes = 2\nhosts = gamma-n[1-2]\n"
          "addresses = 10.79.3.[11-12]\n"
          "[network wan]\nadapter = tc\n"
          "path.alpha-beta.alpha = acc-gw-alpha/up0 acc-wan/to-beta\n"
          "path.alpha-beta.beta = acc-gw-beta/up0 acc-wan/to-alpha\n"
          "path.alpha-gamma.alpha = acc-gw-alpha/up0 acc-wan/to-gamma\n"
          "path.alpha-gamma.gamma = acc-gw-gamma/up0 acc-wan/to-alpha\n"
          "path.beta-gamma.beta = acc-gw-beta/up0 acc-wan/to-gamma\n"
          "path.beta-gamma.gamma = acc-gw-gamma/up0 acc-wan/to-beta\n"
          "ceil = rate\nquantum = 15140\naudit_interval = 1s\nactivation_grace = 2s\n"
          "command_timeout = 5s\n"
          "[link alpha-beta]\nsites = alpha beta\ncapacity = 200\nnetwork = wan\n"
          "[link alpha-gamma]\nsites = alpha gamma\ncapacity = 200\nnetwork = wan\n"
          "[link beta-gamma]\nsites = beta gamma\ncapacity = 200\nnetwork = wan\n",
          f);
    fclose(f);
    accordd = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    if (accordd <= 0) {
        fprintf(stderr, "test_tc_real: accordd did not start\n");
        return 1;
    }
    guard_note("pid %ld\n", (long)accordd);
    return 0;
}

static int teardown(void)
{
    kill_accordd(SIGTERM);
    int rc = sh("%s down >/dev/null", NETBED);
    if (guard_fd >= 0) {
        if (rc == 0)
            if (write(guard_fd, "done\n", 5) != 5) /* nothing left for the guardian */
                fprintf(stderr, "guardian note lost\n");
        close(guard_fd);
        guard_fd = -1;
        waitpid(guardian, NULL, 0);
    }
    if (lock_fd >= 0)
        close(lock_fd);
    return rc == 0 ? 0 : 1;
}

static const struct acc_test_case tests[] = {
    {"a link's window on the wire", test_window},
    {"terminate removes the class at once", test_terminate},
    {"accordd down across the end", test_down_across_end},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"tc-real", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
