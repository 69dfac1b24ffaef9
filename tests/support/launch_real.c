/* SPDX-License-Identifier: Apache-2.0 */
/* launch_real.c - the real accordd with [launch] for test_launch_real's
 * parts (see launch_real.h). */
#include "launch_real.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"
#include "testutil.h"

char base[64];
char db[256], ini[256], jobs[256];
pid_t accordd = -1;

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
                                 "%s%s%s%s"
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

bool lr_write_config(const char *extra_launch, const char *extra_sites)
{
    FILE *f = fopen(ini, "w");
    if (!f)
        return false;
    /* under root the jobs run as the test account, from copies it reaches */
    static const char *const ring[] = {ACC_BUILD_DIR "/accord-ring", NULL};
    const char *account = acc_test_job_account();
    fprintf(f, config_fmt, jobs, acc_test_job_bin(ACC_BUILD_DIR, ring), account ? "account = " : "",
            account ? account : "", account ? "\n" : "", extra_launch ? extra_launch : "");
    if (extra_sites)
        fputs(extra_sites, f);
    fclose(f);
    return true;
}

pid_t lr_start(void)
{
    return daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
}

void lr_stop(int sig)
{
    if (accordd > 0) {
        kill(accordd, sig);
        waitpid(accordd, NULL, 0);
    }
    accordd = -1;
}

char *lr_call(const char *method, const char *path, const char *body, long *status)
{
    return daemon_call(base, method, path, body, status);
}

char *lr_offer(const char *style, int ahead, const char *duration, const struct comp *c, int n,
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

char *lr_submit(const char *doc)
{
    long st;
    char *reply = lr_call("POST", "/agreements", doc, &st);
    CU_ASSERT_EQUAL(st, 201);
    char *id = reply && st == 201 ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
    free(reply);
    return id;
}

/* The agreement's state and its job's (free both). */
void lr_states(const char *id, char **agreement, char **job)
{
    char path[128];
    long st;
    snprintf(path, sizeof path, "/agreements/%s/state", id);
    char *doc = lr_call("GET", path, NULL, &st);
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
        lr_states(id, &a, &j);
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

bool lr_wait_agreement(const char *id, const char *want, int secs)
{
    return wait_state(id, false, want, secs);
}

bool lr_wait_job(const char *id, const char *want, int secs)
{
    return wait_state(id, true, want, secs);
}

char *lr_get(const char *id, const char *what, long *st)
{
    char path[160];
    snprintf(path, sizeof path, "/agreements/%s%s", id, what);
    return lr_call("GET", path, NULL, st);
}

char *lr_job_field(const char *id, const char *field)
{
    long st;
    char *doc = lr_get(id, "/launch", &st);
    char xp[64];
    snprintf(xp, sizeof xp, "/co:Job/co:%s", field);
    char *v = doc && st == 200 ? xml_get(doc, xp) : NULL;
    free(doc);
    return v;
}

void lr_print_job(const char *id)
{
    long st;
    char *doc = lr_get(id, "/launch", &st), *out = lr_get(id, "/launch/output", &st);
    fprintf(stderr, "job of %s:\n%s\noutput kept:\n%s\n", id, doc ? doc : "(none)",
            out ? out : "(none)");
    free(doc);
    free(out);
}

/* The job ended by itself with exit status 0. */
void lr_assert_exited_ok(const char *id)
{
    char *js = lr_job_field(id, "State"), *ex = lr_job_field(id, "ExitStatus");
    CU_ASSERT_STRING_EQUAL(js ? js : "", "exited");
    CU_ASSERT_STRING_EQUAL(ex ? ex : "", "0");
    if (!js || !ex || strcmp(js, "exited") != 0 || strcmp(ex, "0") != 0)
        lr_print_job(id);
    free(js);
    free(ex);
}
