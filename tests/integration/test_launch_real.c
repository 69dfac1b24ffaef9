/* test_launch_real.c - meta-jobs started for real by the real accordd at the
 * agreed start: MPICH's mpiexec.hydra runs accord-ring (examples/mpi) with
 * one MPMD segment per component.
 *
 *   - a 3-component ring runs, every component's ranks report, the job
 *     succeeds, the agreement is Complete with exit status 0 and the output
 *     is kept; the rest of the reservation is given back;
 *   - a failing program: Complete with its non-zero status;
 *   - a hanging program: stopped before its reservation ends;
 *   - terminate while the job runs: the job is stopped, everything released;
 *   - kill -9 before the start: the timer survives the restart;
 *   - kill -9 while the job runs: the job goes on and its end is recorded;
 *   - across emulated sites: each component in a network namespace of its
 *     own, reached through an ssh stand-in, MPI traffic over veth (root). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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

static char base[64];
static char db[256], ini[256], jobs[256];
static pid_t accordd = -1;

/* grace 2 s: a job still running 2 s before its end is stopped. */
static const char config_fmt[] = "[server]\n"
                                 "allow_control = yes\n"
                                 "[negotiation]\n"
                                 "lead_time = PT1S\n"
                                 "[launch]\n"
                                 "enabled = yes\n"
                                 "grace = PT2S\n"
                                 "directory = %s\n"
                                 "path = %s\n"
                                 "%s"
                                 "[site alpha]\n"
                                 "adapter = sim-batch\n"
                                 "nodes = 8\n"
                                 "hosts = alpha-n[1-8]\n"
                                 "[site beta]\n"
                                 "adapter = sim-batch\n"
                                 "nodes = 8\n"
                                 "contact = beta.example.org:2119/jobmanager-slurm\n"
                                 "[site gamma]\n"
                                 "adapter = sim-batch\n"
                                 "nodes = 8\n"
                                 "[network net]\n"
                                 "adapter = sim-network\n"
                                 "[link alpha_beta]\n"
                                 "sites = alpha beta\n"
                                 "capacity = 1000\n"
                                 "network = net\n";

static bool write_config(const char *extra_launch, const char *extra_sites)
{
    FILE *f = fopen(ini, "w");
    if (!f)
        return false;
    fprintf(f, config_fmt, jobs, ACC_BUILD_DIR, extra_launch ? extra_launch : "");
    if (extra_sites)
        fputs(extra_sites, f);
    fclose(f);
    return true;
}

static pid_t start(void)
{
    return daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
}

static void stop(int sig)
{
    if (accordd > 0) {
        kill(accordd, sig);
        waitpid(accordd, NULL, 0);
    }
    accordd = -1;
}

static char *call(const char *method, const char *path, const char *body, long *status)
{
    return daemon_call(base, method, path, body, status);
}

/* An offer whose components all run accord-ring with extra arguments,
 * starting `ahead` seconds from now. */
struct comp {
    const char *name, *site;
    int nodes, ppn;
};

static char *offer(const char *style, int ahead, const char *duration, const struct comp *c, int n,
                   const char *args)
{
    char start[32];
    time_t t = time(NULL) + ahead;
    strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    size_t cap = 8192;
    char *o = malloc(cap);
    int used = snprintf(
        o, cap,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>ring</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
        "<co:Schedule><co:EarliestStart>%s</co:EarliestStart><co:Duration>%s</co:Duration>"
        "</co:Schedule></wsag:ServiceDescriptionTerm>",
        start, duration);
    for (int i = 0; i < n; i++)
        used +=
            snprintf(o + used, cap - (size_t)used,
                     "<wsag:ServiceDescriptionTerm wsag:Name=\"%s\" wsag:ServiceName=\"metajob\">"
                     "<co:Component><co:Site>%s</co:Site><co:Nodes>%d</co:Nodes>"
                     "<co:ProcessesPerNode>%d</co:ProcessesPerNode>"
                     "<co:Executable>accord-ring</co:Executable>%s</co:Component>"
                     "</wsag:ServiceDescriptionTerm>",
                     c[i].name, c[i].site, c[i].nodes, c[i].ppn, args ? args : "");
    snprintf(o + used, cap - (size_t)used,
             "<wsag:ServiceDescriptionTerm wsag:Name=\"launch\" wsag:ServiceName=\"metajob\">"
             "<co:Launch style=\"%s\"/></wsag:ServiceDescriptionTerm>"
             "</wsag:All></wsag:Terms></wsag:AgreementOffer>",
             style);
    return o;
}

/* Submits; returns the agreement id (free it) or NULL. */
static char *submit(const char *doc)
{
    long st;
    char *reply = call("POST", "/agreements", doc, &st);
    CU_ASSERT_EQUAL(st, 201);
    char *id = reply && st == 201 ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
    free(reply);
    return id;
}

/* The agreement's state and its job's (free both). */
static void states(const char *id, char **agreement, char **job)
{
    char path[128];
    long st;
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    char *doc = call("GET", path, NULL, &st);
    *agreement = doc ? xml_get(doc, "/co:AgreementStatus/wsag:AgreementState/wsag:State") : NULL;
    *job = doc ? xml_get(doc, "/co:AgreementStatus/co:Job/co:State") : NULL;
    free(doc);
}

/* Waits (at most secs) until the agreement's state, or with job its job's,
 * is want; true if so. */
static bool wait_state(const char *id, bool job, const char *want, int secs)
{
    for (int i = 0; i < secs * 10; i++) {
        char *a, *j;
        states(id, &a, &j);
        const char *have = job ? j : a;
        bool ok = have && strcmp(have, want) == 0;
        free(a);
        free(j);
        if (ok)
            return true;
        usleep(100000);
    }
    return false;
}

static bool wait_agreement(const char *id, const char *want, int secs)
{
    return wait_state(id, false, want, secs);
}

static bool wait_job(const char *id, const char *want, int secs)
{
    return wait_state(id, true, want, secs);
}

static char *get(const char *id, const char *what, long *st)
{
    char path[160];
    snprintf(path, sizeof path, "/agreements/%s%s", id, what);
    return call("GET", path, NULL, st);
}

static char *job_field(const char *id, const char *field)
{
    long st;
    char *doc = get(id, "/launch", &st);
    char xp[64];
    snprintf(xp, sizeof xp, "/co:Job/co:%s", field);
    char *v = doc && st == 200 ? xml_get(doc, xp) : NULL;
    free(doc);
    return v;
}

/* The job ended by itself with exit status 0. */
static void assert_exited_ok(const char *id)
{
    char *js = job_field(id, "State"), *ex = job_field(id, "ExitStatus");
    CU_ASSERT_STRING_EQUAL(js ? js : "", "exited");
    CU_ASSERT_STRING_EQUAL(ex ? ex : "", "0");
    free(js);
    free(ex);
}

/* Ranks of accord-ring whose arguments hold marker. */
static int count_processes(const char *marker)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
        if (strcmp(comm, "accord-ring\n") != 0)
            continue;
        char stat[512] = "";
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(stat, sizeof stat, f))
                stat[0] = '\0';
            fclose(f);
        }
        const char *st = strrchr(stat, ')');
        if (st && st[1] == ' ' && (st[2] == 'Z' || st[2] == 'X'))
            continue; /* killed, not yet reaped */
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        char cmdline[4096];
        size_t len = 0;
        if ((f = fopen(path, "r"))) { /* /proc files have no size: read, don't stat */
            len = fread(cmdline, 1, sizeof cmdline - 1, f);
            fclose(f);
        }
        for (size_t i = 0; i < len; i++)
            cmdline[i] = cmdline[i] ? cmdline[i] : ' ';
        cmdline[len] = '\0';
        n += strstr(cmdline, marker) != NULL;
    }
    if (d)
        closedir(d);
    return n;
}

/* Waits (at most secs) until exactly n such ranks run. */
static int wait_processes(const char *marker, int n, int secs)
{
    int have = count_processes(marker);
    for (int i = 0; i < secs * 20 && have != n; i++) {
        usleep(50000);
        have = count_processes(marker);
    }
    return have;
}

/* Runs accordctl against the server; returns its exit code, *out its
 * standard output (free it). */
static int ctl(char **out, const char *fmt, const char *id)
{
    char args[256], cmd[1024];
    snprintf(args, sizeof args, fmt, id);
    snprintf(cmd, sizeof cmd, "%s --server %s %s", ACCORDCTL_PATH, base, args);
    FILE *p = popen(cmd, "r");
    size_t cap = 1 << 16, len = 0;
    char *buf = calloc(1, cap);
    while (p && buf && len + 1 < cap) {
        size_t n = fread(buf + len, 1, cap - len - 1, p);
        if (n == 0)
            break;
        len += n;
    }
    int status = p ? pclose(p) : -1;
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int setup(void)
{
    snprintf(db, sizeof db, "%s/launch.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/launch.ini", acc_test_tmpdir());
    snprintf(jobs, sizeof jobs, "%s/jobs", acc_test_tmpdir());
    if (!write_config(NULL, NULL))
        return 1;
    accordd = start();
    return accordd > 0 ? 0 : 1;
}

static int cleanup(void)
{
    stop(SIGTERM);
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_ring(void)
{
    const struct comp c[] = {
        {"groundwater", "alpha", 2, 1}, {"particles", "beta", 1, 2}, {"viz", "gamma", 1, 1}};
    /* --sleep=2 keeps it running long enough to be seen Processing. */
    char *o = offer("metampich", 3, "PT40S", c, 3,
                    "<co:Argument>--sleep=2</co:Argument><co:Argument>two words</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char *a, *j;
    states(id, &a, &j);
    CU_ASSERT_STRING_EQUAL(a ? a : "", "Observed");
    CU_ASSERT_STRING_EQUAL(j ? j : "", "waiting");
    free(a);
    free(j);

    /* Both descriptions exist before the start. */
    long st;
    char *meta = get(id, "/launch/metampich", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "NUMHOSTS 3\n") : NULL);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "nodes=alpha-n1,alpha-n2;") : NULL);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "groundwater particles tcp alpha-n1:33000 "
                                               "beta-n1:33001;")
                                : NULL);
    free(meta);
    char *rsl = get(id, "/launch/rsl", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NOT_NULL(
        rsl ? strstr(rsl, "resourceManagerContact=\"beta.example.org:2119/jobmanager-slurm\"")
            : NULL);
    CU_ASSERT_PTR_NOT_NULL(rsl ? strstr(rsl, "(environment=(GLOBUS_DUROC_SUBJOB_INDEX 2))") : NULL);
    free(rsl);

    /* Running: the service terms are Processing. */
    CU_ASSERT_TRUE_FATAL(wait_job(id, "running", 15));
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    char *sdoc = call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(xml_count(sdoc ? sdoc : "<x/>", "//wsag:ServiceTermState[wsag:State="
                                                    "'Processing']"),
                    3);
    free(sdoc);

    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    assert_exited_ok(id);
    sdoc = call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(xml_count(sdoc ? sdoc : "<x/>", "//wsag:ServiceTermState[wsag:State="
                                                    "'Completed']"),
                    3);
    free(sdoc);

    char *out = get(id, "/launch/output", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NOT_NULL(
        out ? strstr(out, "RING OK ranks=5 components=groundwater:2,particles:2,viz:1") : NULL);
    /* every rank of every component ran where the reservation says */
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "component groundwater host alpha-n1 ") : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "component groundwater host alpha-n2 ") : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "component particles host beta-n1 ") : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "component viz host gamma-n1 ") : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "[--sleep=2] [two words]") : NULL);
    free(out);

    /* accordctl shows it all. */
    char *text = NULL;
    CU_ASSERT_EQUAL(ctl(&text, "launch %s", id), 0);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, ": exited\n") : NULL);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "exit status  0\n") : NULL);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "mpiexec.hydra -launcher fork") : NULL);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "launch %s --output", id), 0);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "RING OK ranks=5") : NULL);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "launch %s --metampich", id), 0);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "METAHOST particles {") : NULL);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "launch %s --rsl", id), 0);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "(label=\"subjob 1\")") : NULL);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "state %s", id), 0);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "metampich") : NULL);
    CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, "exited (exit status 0)") : NULL);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "launch %s --rsl --output", id), 2);
    free(text);
    CU_ASSERT_EQUAL(ctl(&text, "launch %s", "aaaaaaaaaaaaaaaa"), 3);
    free(text);

    /* The job ended long before the reservation: the rest went back. */
    char *b = call("POST", "/adapters/alpha/control/bookings", "", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NULL(b ? strstr(b, id) : "no reply");
    free(b);
    free(id);
}

static void test_failing(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 2}, {"b", "beta", 1, 1}};
    char *o = offer("mpich-g2", 2, "PT40S", c, 2, "<co:Argument>--exit=3</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    char *js = job_field(id, "State"), *ex = job_field(id, "ExitStatus"),
         *why = job_field(id, "Reason");
    CU_ASSERT_STRING_EQUAL(js ? js : "", "exited");
    CU_ASSERT_TRUE(ex && atoi(ex) != 0);
    CU_ASSERT_PTR_NOT_NULL(why ? strstr(why, "exited with status") : NULL);
    free(js);
    free(ex);
    free(why);
    long st;
    char *out = get(id, "/launch/output", &st);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "RING OK ranks=3") : NULL);
    free(out);
    free(id);
}

static void test_hanging(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "gamma", 1, 1}};
    char *o = offer("metampich", 2, "PT10S", c, 2,
                    "<co:Argument>--hang</co:Argument><co:Argument>marker-hang</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128];
    long st;
    snprintf(path, sizeof path, "/agreements/%s", id);
    char *doc = call("GET", path, NULL, &st);
    char *end = doc ? xml_get(doc, "//co:Allocation/co:End") : NULL;
    free(doc);
    CU_ASSERT_TRUE_FATAL(wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-hang", 2, 5), 2);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    char *js = job_field(id, "State"), *ended = job_field(id, "Ended");
    CU_ASSERT_STRING_EQUAL(js ? js : "", "stopped");
    /* stopped by the end of its reservation, not after */
    CU_ASSERT_TRUE(ended && end && strcmp(ended, end) <= 0);
    CU_ASSERT_EQUAL(wait_processes("marker-hang", 0, 5), 0);
    free(js);
    free(ended);
    free(end);
    free(id);
}

static void test_terminate_running(void)
{
    const struct comp c[] = {{"a", "alpha", 2, 1}, {"b", "beta", 1, 1}};
    char *o = offer("metampich", 2, "PT5M", c, 2,
                    "<co:Argument>--hang</co:Argument><co:Argument>marker-term</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-term", 3, 5), 3);
    char path[128];
    long st;
    /* What it wrote so far can be read while it runs. */
    char *out = NULL;
    for (int i = 0; i < 50 && !(out && strstr(out, "RING OK ranks=3")); i++) {
        free(out);
        usleep(100000);
        out = get(id, "/launch/output", &st);
    }
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "RING OK ranks=3") : NULL);
    free(out);
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    char *reply = call("POST", path, "", &st);
    CU_ASSERT_EQUAL(st, 200);
    free(reply);
    char *a, *j;
    states(id, &a, &j);
    CU_ASSERT_STRING_EQUAL(a ? a : "", "Terminated");
    CU_ASSERT_STRING_EQUAL(j ? j : "", "terminated");
    free(a);
    free(j);
    CU_ASSERT_EQUAL(wait_processes("marker-term", 0, 5), 0);
    char *b = call("POST", "/adapters/alpha/control/bookings", "", &st);
    CU_ASSERT_PTR_NULL(b ? strstr(b, id) : "no reply");
    free(b);
    free(id);
}

static void test_timer_survives_restart(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "beta", 1, 1}};
    char *o = offer("metampich", 5, "PT40S", c, 2, NULL);
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    stop(SIGKILL);
    accordd = start();
    CU_ASSERT_TRUE_FATAL(accordd > 0);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    assert_exited_ok(id);
    free(id);
}

static void test_job_survives_restart(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "beta", 1, 1}};
    char *o = offer("metampich", 2, "PT40S", c, 2,
                    "<co:Argument>--sleep=4</co:Argument><co:Argument>marker-adopt</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-adopt", 2, 5), 2);
    stop(SIGKILL);
    /* The job does not depend on accordd. */
    CU_ASSERT_EQUAL(count_processes("marker-adopt"), 2);
    accordd = start();
    CU_ASSERT_TRUE_FATAL(accordd > 0);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    assert_exited_ok(id);
    long st;
    char *out = get(id, "/launch/output", &st);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "RING OK ranks=2") : NULL);
    free(out);
    free(id);
}

static void test_bad_offers(void)
{
    long st;
    /* A launched component needs a program. */
    const char *no_exe =
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Context>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
        "<co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"nox\" wsag:ServiceName=\"m\"><co:Component>"
        "<co:Site>alpha</co:Site><co:Nodes>1</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"l\" wsag:ServiceName=\"m\">"
        "<co:Launch style=\"metampich\"/></wsag:ServiceDescriptionTerm>"
        "</wsag:All></wsag:Terms></wsag:AgreementOffer>";
    char *reply = call("POST", "/agreements", no_exe, &st);
    CU_ASSERT_EQUAL(st, 400);
    CU_ASSERT_PTR_NOT_NULL(reply ? strstr(reply, "component nox has no co:Executable") : NULL);
    free(reply);
    /* A lone ':' would split the component in two. */
    const struct comp c[] = {{"a", "alpha", 1, 1}};
    char *o = offer("mpich-g2", 5, "PT1M", c, 1, "<co:Argument>:</co:Argument>");
    reply = call("POST", "/agreements", o, &st);
    CU_ASSERT_EQUAL(st, 400);
    free(reply);
    free(o);
    /* Nothing was stored. */
    char *list = call("GET", "/agreements?state=Observed", NULL, &st);
    CU_ASSERT_EQUAL(st, 200);
    free(list);
    /* Launch files of unknown agreements and unknown files. */
    reply = call("GET", "/agreements/aaaaaaaaaaaaaaaa/launch/rsl", NULL, &st);
    CU_ASSERT_EQUAL(st, 404);
    free(reply);
}

static const struct acc_test_case tests[] = {
    {"three components run a real MPI ring; Complete with status 0", test_ring},
    {"a failing program: Complete with its non-zero status", test_failing},
    {"a hanging program is stopped at the end of its reservation", test_hanging},
    {"terminate stops a running job and releases everything", test_terminate_running},
    {"kill -9 before the start: the job still starts on time", test_timer_survives_restart},
    {"kill -9 while the job runs: its end is still recorded", test_job_survives_restart},
    {"launch offers without programs are refused", test_bad_offers},
    {NULL, NULL},
};

/* ------------------------------------------------------- output bounds */

static int bounded_setup(void)
{
    snprintf(db, sizeof db, "%s/bounded.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/bounded.ini", acc_test_tmpdir());
    if (!write_config("output_limit = 200\n", NULL))
        return 1;
    accordd = start();
    return accordd > 0 ? 0 : 1;
}

static void test_output_bounded(void)
{
    const struct comp c[] = {{"a", "alpha", 2, 2}, {"b", "beta", 1, 2}};
    char *o = offer("metampich", 2, "PT40S", c, 2, NULL);
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 30));
    long st;
    char *out = get(id, "/launch/output", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_TRUE(out && strlen(out) == 200); /* six ranks write more than that */
    char *bytes = job_field(id, "OutputBytes"), *ex = job_field(id, "ExitStatus");
    CU_ASSERT_TRUE(bytes && atoi(bytes) > 300);
    CU_ASSERT_STRING_EQUAL(ex ? ex : "", "0"); /* cutting the output does not hurt the job */
    free(bytes);
    free(ex);
    free(out);
    free(id);
}

static const struct acc_test_case bounded_tests[] = {
    {"the output kept is bounded, the rest only counted", test_output_bounded},
    {NULL, NULL},
};

/* ------------------------------------------------ across emulated sites */

/* Three sites in network namespaces of their own (tests/mpi/netns-sites.sh),
 * reached by Hydra through the ssh stand-in tests/mpi/nsssh. */
static char netns_dir[256];

static const char netns_launch_fmt[] = "launcher = ssh\n"
                                       "launcher_exec = %s/tests/mpi/nsssh\n"
                                       "localhost = 10.78.0.1\n"
                                       "env = UCX_TLS=tcp\n"
                                       "env = LD_PRELOAD=%s\n";

static const char netns_sites[] = "[site sitea]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = sitea-n[1-4]\n"
                                  "[site siteb]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = siteb-n[1-4]\n"
                                  "[site sitec]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = sitec-n[1-4]\n";

static int netns_script(const char *verb)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/mpi/netns-sites.sh %s %s%s", ACC_SOURCE_DIR, verb,
             netns_dir, strcmp(verb, "up") == 0 ? " sitea siteb sitec" : "");
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int netns_setup(void)
{
    snprintf(netns_dir, sizeof netns_dir, "%s/netns", acc_test_tmpdir());
    snprintf(db, sizeof db, "%s/netns.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/netns.ini", acc_test_tmpdir());
    mkdir(netns_dir, 0755);
    if (netns_script("up") != 0) {
        fprintf(stderr, "cannot make the emulated sites (root and iproute2 are needed)\n");
        return 1;
    }
    char launch[1024], map[300];
    snprintf(launch, sizeof launch, netns_launch_fmt, ACC_SOURCE_DIR, UCX_SHIM);
    snprintf(map, sizeof map, "%s/ns-map", netns_dir);
    setenv("NSSSH_MAP", map, 1); /* accordd -> mpiexec -> nsssh */
    if (!write_config(launch, netns_sites))
        return 1;
    accordd = start();
    return accordd > 0 ? 0 : 1;
}

static int netns_cleanup(void)
{
    stop(SIGTERM);
    return netns_script("down") == 0 ? 0 : 1;
}

static long long veth_bytes(const char *site)
{
    long long total = 0;
    static const char *const dir[] = {"rx", "tx"};
    for (int i = 0; i < 2; i++) {
        char path[160];
        snprintf(path, sizeof path, "/sys/class/net/acv-%s/statistics/%s_bytes", site, dir[i]);
        FILE *f = fopen(path, "r");
        long long v = 0;
        if (f) {
            if (fscanf(f, "%lld", &v) != 1)
                v = 0;
            fclose(f);
        }
        total += v;
    }
    return total;
}

static void test_across_namespaces(void)
{
    static const char *const sites[] = {"sitea", "siteb", "sitec"};
    long long before[3];
    for (int i = 0; i < 3; i++)
        before[i] = veth_bytes(sites[i]);
    const struct comp c[] = {
        {"flow", "sitea", 2, 1}, {"particles", "siteb", 1, 2}, {"viz", "sitec", 1, 1}};
    char *o = offer("mpich-g2", 3, "PT1M", c, 3, "<co:Argument>across sites</co:Argument>");
    char *id = submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(wait_agreement(id, "Complete", 60));
    assert_exited_ok(id);
    long st;
    char *out = get(id, "/launch/output", &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "RING OK ranks=5 components=flow:2,particles:2,viz:1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[across sites]"));
    /* Each component's ranks ran in its site's namespace, none in ours. */
    char mine[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", mine, sizeof mine - 1);
    mine[n > 0 ? n : 0] = '\0';
    char ns[3][64] = {"", "", ""};
    for (const char *line = out; (line = strstr(line, "rank ")); line++) {
        char comp[64], host[64], netns[64];
        if (sscanf(line, "rank %*d/%*d component %63s host %63s netns %63s", comp, host, netns) !=
            3)
            continue;
        for (int i = 0; i < 3; i++) {
            if (strcmp(comp, c[i].name) != 0)
                continue;
            CU_ASSERT_EQUAL(strncmp(host, sites[i], 5), 0);
            if (!ns[i][0])
                snprintf(ns[i], sizeof ns[i], "%s", netns);
            CU_ASSERT_STRING_EQUAL(ns[i], netns); /* one namespace per component */
        }
    }
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_TRUE(ns[i][0] != '\0');
        CU_ASSERT_STRING_NOT_EQUAL(ns[i], mine);
        for (int k = i + 1; k < 3; k++)
            CU_ASSERT_STRING_NOT_EQUAL(ns[i], ns[k]);
        /* MPI traffic really crossed each site's link */
        CU_ASSERT_TRUE(veth_bytes(sites[i]) - before[i] > 10000);
    }
    free(out);
    free(id);
}

static const struct acc_test_case netns_tests[] = {
    {"components in network namespaces talk MPI over veth (ssh stand-in)", test_across_namespaces},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"launch", setup, cleanup, tests},
    {"launch with a small output limit", bounded_setup, cleanup, bounded_tests},
    {"launch across emulated sites", netns_setup, netns_cleanup, netns_tests},
    {NULL, NULL, NULL, NULL},
};
