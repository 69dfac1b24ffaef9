/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_bench.c - co-allocation on two real Slurm clusters: Accord's time
 * next to the time of the Slurm commands it ran (tests/bench/slurm-bench.sh
 * starts the clusters and runs this).
 *
 * Each negotiation's trace says how long every adapter call took; the calls
 * of one step (previews, reservations, verifies, cancels) run concurrently,
 * so the Slurm time on the critical path is the longest call of each step,
 * summed.  What is left of the negotiation's time is Accord's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"
#include "proc.h"
#include "service.h"
#include "store.h"
#include "timefmt.h"
#include "tuning.h"
#include "xml.h"

static char conf_a[300], conf_b[300];

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The mean time of a Slurm command, run n times directly. */
static double raw(const char *conf, const char *const *argv, int n)
{
    char env_conf[400];
    snprintf(env_conf, sizeof env_conf, "SLURM_CONF=%s", conf);
    const char *env[] = {env_conf, "TZ=UTC", "SLURM_TIME_FORMAT=%s", NULL};
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct acc_proc_result r;
        int64_t t0 = acc_mono_us();
        acc_proc_run(argv, env, NULL, 30000, 1 << 20, &r, NULL);
        total += acc_mono_us() - t0;
        acc_proc_result_release(&r);
    }
    return (double)total / n / 1000.0;
}

static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Context>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule>"
    "<co:Duration>PT10M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>sitea</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component>"
    "<co:Site>siteb</co:Site><co:Nodes>4</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"m\"><co:Link>"
    "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>100</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>";

/* The service over both clusters, its database bench.db beside them. */
static int open_service(const char *dir, struct acc_config *cfg, struct acc_service **svc)
{
    char ini[2048], db[400];
    snprintf(ini, sizeof ini,
             "[database]\ndurable = yes\n"
             "[site sitea]\nadapter = slurm\nnodes = 8\nslurm_conf = %s\n"
             "[site siteb]\nadapter = slurm\nnodes = 16\nslurm_conf = %s\n"
             "[network wan]\nadapter = sim-network\n"
             "[link ab]\nsites = sitea siteb\ncapacity = 10000\nnetwork = wan\n",
             conf_a, conf_b);
    snprintf(db, sizeof db, "%s/bench.db", dir);
    remove(db);
    struct acc_error err;
    if (acc_xml_init(&err) || acc_config_load_string(ini, "bench", cfg, &err) ||
        acc_config_set_db(cfg, db, &err) || acc_service_open(cfg, svc, &err)) {
        fprintf(stderr, "slurm_bench: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The longest Slurm call of each step of each round of agreement id's
 * negotiation, added up: Slurm's share of its critical path. */
static int64_t slurm_path_us(struct acc_service *svc, const char *id)
{
    struct acc_agreement ta;
    struct acc_trace t;
    struct acc_error err;
    int64_t slurm = 0;
    if (acc_service_trace(svc, id, &ta, &t, &err) == ACC_OK) {
        int64_t step_max = 0;
        unsigned round = 0;
        enum acc_trace_kind kind = ACC_TRACE__COUNT;
        for (size_t k = 0; k < t.n; k++) {
            const struct acc_trace_event *e = &t.v[k];
            bool slurm_call = e->adapter && strncmp(e->adapter, "site", 4) == 0;
            if (e->round != round || e->kind != kind) {
                slurm += step_max;
                step_max = 0;
                round = e->round;
                kind = e->kind;
            }
            if (slurm_call && e->elapsed_us > step_max)
                step_max = e->elapsed_us;
        }
        slurm += step_max;
        acc_trace_release(&t);
        acc_agreement_release(&ta);
    }
    return slurm;
}

/* The figures of n negotiations (at most the first 4096): the whole, Slurm's
 * share, Accord's own. */
static void report(int n, int agreed, int64_t *total, const int64_t *slurm)
{
    int64_t overhead[4096];
    int m = n < 4096 ? n : 4096;
    double mean_total = 0, mean_slurm = 0;
    for (int i = 0; i < m; i++) {
        overhead[i] = total[i] - slurm[i];
        mean_total += (double)total[i] / m;
        mean_slurm += (double)slurm[i] / m;
    }
    qsort(total, (size_t)m, sizeof *total, cmp);
    qsort(overhead, (size_t)m, sizeof *overhead, cmp);
    printf("co-allocation on sitea (2 of 8 nodes) + siteb (4 of 16) + a simulated link, "
           "%d negotiations, %d agreed:\n",
           n, agreed);
    printf("  Accord, offer to recorded agreement: mean %.1f ms, median %.1f ms\n",
           mean_total / 1000, (double)total[m / 2] / 1000);
    printf("  Slurm commands on its critical path: mean %.1f ms\n", mean_slurm / 1000);
    printf("  Accord's own share: mean %.1f ms, median %.1f ms (%.0f %%)\n",
           (mean_total - mean_slurm) / 1000, (double)overhead[m / 2] / 1000,
           mean_total > 0 ? 100 * (mean_total - mean_slurm) / mean_total : 0);
}

/* The raw commands, for scale. */
static void report_raw(void)
{
    const char *sinfo[] = {"sinfo", "-h", "-N", "-o", "%N|%t", NULL};
    const char *squeue[] = {"squeue", "-h", "-t", "R,S,CG", "-o", "%i|%S|%e|%N", NULL};
    const char *show[] = {"scontrol", "show", "reservation", "-o", NULL};
    const char *ping[] = {"scontrol", "ping", NULL};
    printf("  raw commands, mean of 20: sinfo %.1f ms, squeue %.1f ms, scontrol show "
           "reservation %.1f ms, scontrol ping %.1f ms\n",
           raw(conf_a, sinfo, 20), raw(conf_a, squeue, 20), raw(conf_a, show, 20),
           raw(conf_a, ping, 20));
}

int main(int argc, char **argv)
{
    const char *dir = getenv("SLURM_TESTBED_DIR");
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 20;
    if (!dir || n < 1) {
        fprintf(stderr, "usage: SLURM_TESTBED_DIR=... slurm_bench [negotiations]\n");
        return 2;
    }
    snprintf(conf_a, sizeof conf_a, "%s/sitea/slurm.conf", dir);
    snprintf(conf_b, sizeof conf_b, "%s/siteb/slurm.conf", dir);
    acc_log_set_level(ACC_LOG_ERROR);
    acc_tune_process();
    struct acc_config cfg;
    struct acc_service *svc;
    struct acc_error err;
    if (open_service(dir, &cfg, &svc))
        return 1;

    int64_t *total = calloc((size_t)n, sizeof *total), *slurm = calloc((size_t)n, sizeof *slurm);
    int agreed = 0;
    for (int i = 0; i < n; i++) {
        char id[ACC_ID_LEN + 1];
        acc_err rc = svc_negotiate_doc(svc, offer, id, &total[i], &err);
        bool stored = id[0] != '\0';
        agreed += rc == ACC_OK;
        if (rc)
            fprintf(stderr, "negotiation %d: %s\n", i, err.msg);
        if (stored) {
            slurm[i] = slurm_path_us(svc, id);
            svc_terminate_wait(svc, id, &err);
        }
    }
    report(n, agreed, total, slurm);
    report_raw();
    free(total);
    free(slurm);
    acc_service_close(svc);
    acc_config_release(&cfg);
    acc_xml_cleanup();
    return agreed == n ? 0 : 1;
}
