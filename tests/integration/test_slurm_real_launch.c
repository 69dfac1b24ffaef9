/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_real_launch.c - a meta-job over both real Slurm clusters:
 * sitea's component a batch job in its reservation (sbatch), siteb's under
 * mpiexec.  Part of test_slurm_real (its one suite "slurm", in turn). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostlist.h"
#include "http_client.h"
#include "slurm_real.h"
#include "testutil.h"
#include "timefmt.h"

/* The meta-job: two nodes of sitea in batch, two ranks on siteb. */
static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>mixed</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
    "<co:Duration>PT2M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"batch\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>sitea</co:Site><co:Nodes>2</co:Nodes><co:Executable>accord-ring</co:Executable>"
    "<co:Argument>--sleep=2</co:Argument><co:Argument>in batch</co:Argument></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"hydra\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>siteb</co:Site><co:Nodes>1</co:Nodes><co:ProcessesPerNode>2</co:ProcessesPerNode>"
    "<co:Executable>accord-ring</co:Executable></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"l\" wsag:ServiceName=\"m\">"
    "<co:Launch style=\"mpich-g2\"/></wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

/* Waits (at most 90 s) until the job at u has ended; its state (free it). */
static char *wait_ended(const char *u)
{
    char *state = NULL;
    struct http_reply r;
    for (int i = 0; i < 900; i++) {
        free(state);
        state = NULL;
        if (http_do("GET", u, NULL, 0, NULL, &r) == 0 && r.status == 200)
            state = xml_get(r.body, "/co:Job/co:State");
        http_reply_free(&r);
        if (state && strcmp(state, "waiting") != 0 && strcmp(state, "running") != 0)
            break;
        usleep(100000);
    }
    return state;
}

/* Slurm ran that job on the reservation's nodes, from its start (the
 * reservation itself is gone: released when the job ended early). */
static void check_batch_job(const char *job_id, const char *n1, const char *n2, const char *start_s)
{
    char *show = slurm("sitea", NULL, "scontrol", "show", "job", "-o", job_id, NULL);
    const char *nl = strstr(show, " NodeList=");
    struct acc_hostlist h = {0};
    if (nl) {
        char *list = strndup(nl + 10, strcspn(nl + 10, " \n"));
        CU_ASSERT_EQUAL(acc_hostlist_expand(list, &h), ACC_OK);
        free(list);
    }
    CU_ASSERT_EQUAL(h.n, 2);
    CU_ASSERT_TRUE(h.n == 2 && ((strcmp(h.names[0], n1) == 0 && strcmp(h.names[1], n2) == 0) ||
                                (strcmp(h.names[0], n2) == 0 && strcmp(h.names[1], n1) == 0)));
    acc_hostlist_release(&h);
    const char *st = strstr(show, " StartTime="); /* epoch seconds (see slurm()) */
    acc_time began = st ? strtoll(st + 11, NULL, 10) : 0, start = 0;
    acc_time_parse(start_s, &start, NULL);
    CU_ASSERT_TRUE(start > 0 && began >= start && began <= start + 15);
    free(show);
}

/* A meta-job over both clusters: sitea's component is a batch job in its
 * reservation (sbatch), siteb's runs under mpiexec; the job ends when both
 * have, and what each wrote is kept. */
void test_launch_sbatch_and_mpiexec(void)
{
    reset();
    char u[256];
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    const char *hdr[] = {"Content-Type: application/xml", NULL};
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", u, offer, strlen(offer), hdr, &r), 0);
    if (r.status != 201)
        fprintf(stderr, "\n  %.500s\n", r.body);
    CU_ASSERT_EQUAL_FATAL(r.status, 201);
    char *id = xml_get(r.body, "/wsag:Agreement/@wsag:AgreementId");
    char *n1 = xml_get(r.body, "//co:ComponentAllocation[@co:name='batch']/co:NodeName[1]");
    char *n2 = xml_get(r.body, "//co:ComponentAllocation[@co:name='batch']/co:NodeName[2]");
    char *start_s = xml_get(r.body, "//co:Allocation/co:Start");
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    /* Complete once both parts ended (the start is about 10 s ahead). */
    snprintf(u, sizeof u, "%s/agreements/%s/launch", fx.base, id);
    char *state = wait_ended(u), *job_id = NULL;
    CU_ASSERT_STRING_EQUAL(state ? state : "", "exited");
    CU_ASSERT_EQUAL_FATAL(http_do("GET", u, NULL, 0, NULL, &r), 0);
    char *ex = xml_get(r.body, "/co:Job/co:ExitStatus");
    CU_ASSERT_STRING_EQUAL(ex ? ex : "", "0");
    http_reply_free(&r);
    snprintf(u, sizeof u, "%s/agreements/%s/launch/output", fx.base, id);
    CU_ASSERT_EQUAL_FATAL(http_do("GET", u, NULL, 0, NULL, &r), 0);
    /* mpiexec ran siteb's two ranks; sitea's part ran as a batch job */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "RING OK ranks=2 components=hydra:2"));
    const char *head = strstr(r.body, "== component batch: batch job ");
    CU_ASSERT_PTR_NOT_NULL(head);
    if (head) {
        job_id = strndup(head + 30, strcspn(head + 30, " "));
        CU_ASSERT_PTR_NOT_NULL(strstr(head, "on site sitea, COMPLETED, exit status 0 =="));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "component batch host"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "[--sleep=2] [in batch]"));
    http_reply_free(&r);
    if (job_id && n1 && n2 && start_s)
        check_batch_job(job_id, n1, n2, start_s);
    free(job_id);
    free(n1);
    free(n2);
    free(start_s);
    free(ex);
    free(state);
    free(id);
    reset();
}
