/* SPDX-License-Identifier: Apache-2.0 */
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
 *   - a small output limit: the output kept is bounded, the rest counted;
 *   - across emulated sites (test_launch_real_netns.c): each component in a
 *     network namespace of its own, reached through an ssh stand-in, MPI
 *     traffic over veth (root).
 * One program: its suites run one after another, never two accordd with
 * launches at once. */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "launch_real.h"
#include "testutil.h"

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
    if (!lr_write_config(NULL, NULL))
        return 1;
    accordd = lr_start();
    return accordd > 0 ? 0 : 1;
}

static int cleanup(void)
{
    lr_stop(SIGTERM);
    return 0;
}

/* ------------------------------------------------------------------ tests */

/* Both descriptions exist before the start. */
static void check_descriptions(const char *id)
{
    long st;
    char *meta = lr_get(id, "/launch/metampich", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "NUMHOSTS 3\n") : NULL);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "nodes=alpha-n1,alpha-n2;") : NULL);
    CU_ASSERT_PTR_NOT_NULL(meta ? strstr(meta, "groundwater particles tcp alpha-n1:33000 "
                                               "beta-n1:33001;")
                                : NULL);
    free(meta);
    char *rsl = lr_get(id, "/launch/rsl", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_PTR_NOT_NULL(
        rsl ? strstr(rsl, "resourceManagerContact=\"beta.example.org:2119/jobmanager-slurm\"")
            : NULL);
    CU_ASSERT_PTR_NOT_NULL(rsl ? strstr(rsl, "(environment=(GLOBUS_DUROC_SUBJOB_INDEX 2))") : NULL);
    free(rsl);
}

/* Every rank of every component reported in the output kept. */
static void check_ring_output(const char *id)
{
    long st;
    char *out = lr_get(id, "/launch/output", &st);
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
}

/* accordctl shows it all. */
static void check_accordctl(const char *id)
{
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
}

/* Whether simulated site alpha answers and holds nothing of agreement id. */
static bool alpha_free_of(const char *id)
{
    long st;
    char *b = lr_call("POST", "/adapters/alpha/control/bookings", "", &st);
    bool free_of = st == 200 && b && !strstr(b, id);
    free(b);
    return free_of;
}

static void test_ring(void)
{
    const struct comp c[] = {
        {"groundwater", "alpha", 2, 1}, {"particles", "beta", 1, 2}, {"viz", "gamma", 1, 1}};
    /* --sleep=2 keeps it running long enough to be seen Processing. */
    char *o = lr_offer("metampich", 3, "PT40S", c, 3,
                       "<co:Argument>--sleep=2</co:Argument><co:Argument>two words</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char *a, *j;
    lr_states(id, &a, &j);
    CU_ASSERT_STRING_EQUAL(a ? a : "", "Observed");
    CU_ASSERT_STRING_EQUAL(j ? j : "", "waiting");
    free(a);
    free(j);

    check_descriptions(id);
    long st;

    /* Running: the service terms are Processing. */
    CU_ASSERT_TRUE_FATAL(lr_wait_job(id, "running", 15));
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    char *sdoc = lr_call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(xml_count(sdoc ? sdoc : "<x/>", "//wsag:ServiceTermState[wsag:State="
                                                    "'Processing']"),
                    3);
    free(sdoc);

    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    lr_assert_exited_ok(id);
    sdoc = lr_call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(xml_count(sdoc ? sdoc : "<x/>", "//wsag:ServiceTermState[wsag:State="
                                                    "'Completed']"),
                    3);
    free(sdoc);

    check_ring_output(id);
    check_accordctl(id);

    /* The job ended long before the reservation: the rest went back (the
     * agreement says Complete first, then its reservations are released:
     * within 5 s). */
    bool back = false;
    for (int i = 0; i < 50 && !(back = alpha_free_of(id)); i++)
        usleep(100000);
    CU_ASSERT_TRUE(back);
    free(id);
}

static void test_failing(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 2}, {"b", "beta", 1, 1}};
    char *o = lr_offer("mpich-g2", 2, "PT40S", c, 2, "<co:Argument>--exit=3</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    char *js = lr_job_field(id, "State"), *ex = lr_job_field(id, "ExitStatus"),
         *why = lr_job_field(id, "Reason");
    CU_ASSERT_STRING_EQUAL(js ? js : "", "exited");
    CU_ASSERT_TRUE(ex && atoi(ex) != 0);
    CU_ASSERT_PTR_NOT_NULL(why ? strstr(why, "exited with status") : NULL);
    free(js);
    free(ex);
    free(why);
    long st;
    char *out = lr_get(id, "/launch/output", &st);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "RING OK ranks=3") : NULL);
    free(out);
    free(id);
}

static void test_hanging(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "gamma", 1, 1}};
    char *o = lr_offer("metampich", 2, "PT10S", c, 2,
                       "<co:Argument>--hang</co:Argument><co:Argument>marker-hang</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128];
    long st;
    snprintf(path, sizeof path, "/agreements/%s", id);
    char *doc = lr_call("GET", path, NULL, &st);
    char *end = doc ? xml_get(doc, "//co:Allocation/co:End") : NULL;
    free(doc);
    CU_ASSERT_TRUE_FATAL(lr_wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-hang", 2, 5), 2);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    char *js = lr_job_field(id, "State"), *ended = lr_job_field(id, "Ended");
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
    char *o = lr_offer("metampich", 2, "PT5M", c, 2,
                       "<co:Argument>--hang</co:Argument><co:Argument>marker-term</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(lr_wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-term", 3, 5), 3);
    char path[128];
    long st;
    /* What it wrote so far can be read while it runs. */
    char *out = NULL;
    for (int i = 0; i < 50 && !(out && strstr(out, "RING OK ranks=3")); i++) {
        free(out);
        usleep(100000);
        out = lr_get(id, "/launch/output", &st);
    }
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "RING OK ranks=3") : NULL);
    free(out);
    snprintf(path, sizeof path, "/agreements/%s/terminate", id);
    char *reply = lr_call("POST", path, "", &st);
    CU_ASSERT_EQUAL(st, 200);
    free(reply);
    char *a, *j;
    lr_states(id, &a, &j);
    CU_ASSERT_STRING_EQUAL(a ? a : "", "Terminated");
    CU_ASSERT_STRING_EQUAL(j ? j : "", "terminated");
    free(a);
    free(j);
    CU_ASSERT_EQUAL(wait_processes("marker-term", 0, 5), 0);
    CU_ASSERT_TRUE(alpha_free_of(id));
    free(id);
}

static void test_timer_survives_restart(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "beta", 1, 1}};
    char *o = lr_offer("metampich", 5, "PT40S", c, 2, NULL);
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    lr_stop(SIGKILL);
    accordd = lr_start();
    CU_ASSERT_TRUE_FATAL(accordd > 0);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    lr_assert_exited_ok(id);
    free(id);
}

static void test_job_survives_restart(void)
{
    const struct comp c[] = {{"a", "alpha", 1, 1}, {"b", "beta", 1, 1}};
    char *o =
        lr_offer("metampich", 2, "PT40S", c, 2,
                 "<co:Argument>--sleep=4</co:Argument><co:Argument>marker-adopt</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(lr_wait_job(id, "running", 15));
    CU_ASSERT_EQUAL(wait_processes("marker-adopt", 2, 5), 2);
    lr_stop(SIGKILL);
    /* The job does not depend on accordd. */
    CU_ASSERT_EQUAL(count_processes("marker-adopt"), 2);
    accordd = lr_start();
    CU_ASSERT_TRUE_FATAL(accordd > 0);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    lr_assert_exited_ok(id);
    long st;
    char *out = lr_get(id, "/launch/output", &st);
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
    char *reply = lr_call("POST", "/agreements", no_exe, &st);
    CU_ASSERT_EQUAL(st, 400);
    CU_ASSERT_PTR_NOT_NULL(reply ? strstr(reply, "component nox has no co:Executable") : NULL);
    free(reply);
    /* A lone ':' would split the component in two. */
    const struct comp c[] = {{"a", "alpha", 1, 1}};
    char *o = lr_offer("mpich-g2", 5, "PT1M", c, 1, "<co:Argument>:</co:Argument>");
    reply = lr_call("POST", "/agreements", o, &st);
    CU_ASSERT_EQUAL(st, 400);
    free(reply);
    free(o);
    /* Nothing was stored. */
    char *list = lr_call("GET", "/agreements?state=Observed", NULL, &st);
    CU_ASSERT_EQUAL(st, 200);
    free(list);
    /* Launch files of unknown agreements and unknown files. */
    reply = lr_call("GET", "/agreements/aaaaaaaaaaaaaaaa/launch/rsl", NULL, &st);
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
    if (!lr_write_config("output_limit = 200\n", NULL))
        return 1;
    accordd = lr_start();
    return accordd > 0 ? 0 : 1;
}

static void test_output_bounded(void)
{
    const struct comp c[] = {{"a", "alpha", 2, 2}, {"b", "beta", 1, 2}};
    char *o = lr_offer("metampich", 2, "PT40S", c, 2, NULL);
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 30));
    long st;
    char *out = lr_get(id, "/launch/output", &st);
    CU_ASSERT_EQUAL(st, 200);
    CU_ASSERT_TRUE(out && strlen(out) == 200); /* six ranks write more than that */
    char *bytes = lr_job_field(id, "OutputBytes"), *ex = lr_job_field(id, "ExitStatus");
    CU_ASSERT_TRUE(bytes && atoi(bytes) > 300);
    CU_ASSERT_STRING_EQUAL(ex ? ex : "", "0"); /* cutting the output does not hurt the job */
    if (!ex || strcmp(ex, "0") != 0)
        lr_print_job(id);
    free(bytes);
    free(ex);
    free(out);
    free(id);
}

static const struct acc_test_case bounded_tests[] = {
    {"the output kept is bounded, the rest only counted", test_output_bounded},
    {NULL, NULL},
};

/* test_launch_real_netns.c: across emulated sites. */
extern const struct acc_test_case netns_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"launch", setup, cleanup, tests},
    {"launch with a small output limit", bounded_setup, cleanup, bounded_tests},
    {"launch across emulated sites", lr_netns_setup, lr_netns_cleanup, netns_tests},
    {NULL, NULL, NULL, NULL},
};
