/* SPDX-License-Identifier: Apache-2.0 */
/* sge_bench.c - co-allocation across a real Slurm cluster and a real Grid
 * Engine cluster (tests/bench/sge-bench.sh starts both and runs this):
 * Accord's time per agreement next to the raw commands that book the same
 * (`scontrol create reservation` + `qrsub`, and their deletes), side by side
 * in one run, alternately.
 *
 * Accord's negotiation previews both sites, reserves at both, reads both
 * back (verify) and records the agreement; the calls of one step run
 * concurrently, so the batch systems' time on its critical path is the
 * longest call of each step, summed (from the negotiation's trace).  The raw
 * booking runs the two create commands one after the other, as an operator
 * (or a script) would, at a start and for a host count known beforehand. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fixture.h"
#include "proc.h"
#include "service.h"
#include "store.h"
#include "timefmt.h"
#include "tuning.h"
#include "xml.h"

static char conf_a[300], sge_root[300], sge_bin[300];

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Runs argv (a Slurm command with sitea's configuration, or one of the Grid
 * Engine testbed's wrappers); its time in us, -1 when it failed. */
static int64_t timed(const char *const *argv)
{
    char env_conf[400];
    snprintf(env_conf, sizeof env_conf, "SLURM_CONF=%s", conf_a);
    const char *env[] = {env_conf, "TZ=UTC", NULL};
    struct acc_proc_result r;
    int64_t t0 = acc_mono_us();
    acc_err rc = acc_proc_run(argv, env, NULL, 30000, 1 << 20, &r, NULL);
    int64_t us = acc_mono_us() - t0;
    if (rc || r.status != 0) {
        fprintf(stderr, "sge_bench: %s: %.200s%.200s\n", argv[0], rc ? "" : r.out,
                rc ? "did not run" : r.err);
        us = -1;
    }
    acc_proc_result_release(&r);
    return us;
}

/* One raw booking: scontrol create reservation (2 nodes of sitea) and qrsub
 * (1 host, 2 slots of PE mpi) at the same start, then both deleted.  *create
 * gets the time of the two creates, *del of the two deletes. */
static bool raw_once(int i, acc_time start, int64_t *create, int64_t *del)
{
    char name[64], st[64], sge_st[32], arg_name[80], qrsub[400], qrdel[400];
    snprintf(name, sizeof name, "raw-%d", i);
    struct tm tm;
    time_t t = (time_t)start;
    gmtime_r(&t, &tm);
    strftime(st, sizeof st, "StartTime=%Y-%m-%dT%H:%M:%S", &tm);
    strftime(sge_st, sizeof sge_st, "%Y%m%d%H%M.%S", &tm);
    snprintf(arg_name, sizeof arg_name, "ReservationName=%s", name);
    snprintf(qrsub, sizeof qrsub, "%s/qrsub", sge_bin);
    snprintf(qrdel, sizeof qrdel, "%s/qrdel", sge_bin);
    const char *sc[] = {"scontrol",    "create",    "reservation", arg_name, st,
                        "Duration=10", "NodeCnt=2", "Users=root",  NULL};
    const char *qr[] = {qrsub, "-N", name, "-a", sge_st, "-d", "600", "-pe", "mpi", "2", NULL};
    const char *sd[] = {"scontrol", "delete", arg_name, NULL};
    const char *qd[] = {qrdel, name, NULL};
    int64_t a = timed(sc), b = timed(qr), c = timed(sd), d = timed(qd);
    *create = a + b;
    *del = c + d;
    return a >= 0 && b >= 0 && c >= 0 && d >= 0;
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
    "<co:Site>sgea</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

/* The service over both clusters, its database bench.db in dir. */
static int open_service(const char *dir, struct acc_config *cfg, struct acc_service **svc)
{
    char ini[2048], db[400];
    snprintf(ini, sizeof ini,
             "[database]\ndurable = yes\n"
             "[site sitea]\nadapter = slurm\nnodes = 8\nslurm_conf = %s\n"
             "[site sgea]\nadapter = sge\nnodes = 3\nhosts = sgea-n[1-3]\nsge_root = %s\n"
             "cell = accord\npe = mpi\nslots = 2\nbin_dir = %s\n",
             conf_a, sge_root, sge_bin);
    snprintf(db, sizeof db, "%s/sge-bench.db", dir);
    remove(db);
    struct acc_error err;
    if (acc_xml_init(&err) || acc_config_load_string(ini, "bench", cfg, &err) ||
        acc_config_set_db(cfg, db, &err) || acc_service_open(cfg, svc, &err)) {
        fprintf(stderr, "sge_bench: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The longest batch-system call of each step of each round of agreement
 * id's negotiation, added up: the batch systems' share of its critical path. */
static int64_t step_us[ACC_TRACE__COUNT]; /* each kind of step's part, summed over runs */

static int64_t batch_path_us(struct acc_service *svc, const char *id)
{
    struct acc_agreement ta;
    struct acc_trace t;
    struct acc_error err;
    int64_t sum = 0;
    if (acc_service_trace(svc, id, &ta, &t, &err) == ACC_OK) {
        int64_t step_max = 0;
        unsigned round = 0;
        enum acc_trace_kind kind = ACC_TRACE__COUNT;
        for (size_t k = 0; k < t.n; k++) {
            const struct acc_trace_event *e = &t.v[k];
            if (e->round != round || e->kind != kind) {
                sum += step_max;
                if (kind < ACC_TRACE__COUNT)
                    step_us[kind] += step_max;
                step_max = 0;
                round = e->round;
                kind = e->kind;
            }
            if (e->adapter && e->elapsed_us > step_max)
                step_max = e->elapsed_us;
        }
        sum += step_max;
        if (kind < ACC_TRACE__COUNT)
            step_us[kind] += step_max;
        acc_trace_release(&t);
        acc_agreement_release(&ta);
    }
    return sum;
}

static double median_ms(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return (double)v[n / 2] / 1000;
}

int main(int argc, char **argv)
{
    const char *sdir = getenv("SLURM_TESTBED_DIR"), *gdir = getenv("SGE_TESTBED_DIR");
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
    if (!sdir || !gdir || n < 1 || n > 1000) {
        fprintf(stderr, "usage: SLURM_TESTBED_DIR=... SGE_TESTBED_DIR=... sge_bench [1-1000]\n");
        return 2;
    }
    snprintf(conf_a, sizeof conf_a, "%s/sitea/slurm.conf", sdir);
    snprintf(sge_root, sizeof sge_root, "%s/root", gdir);
    snprintf(sge_bin, sizeof sge_bin, "%s/bin", gdir);
    acc_log_set_level(ACC_LOG_ERROR);
    acc_tune_process();
    struct acc_config cfg;
    struct acc_service *svc;
    struct acc_error err;
    if (open_service(sdir, &cfg, &svc))
        return 1;
    int64_t *total = calloc((size_t)n, sizeof *total), *batch = calloc((size_t)n, sizeof *batch),
            *own = calloc((size_t)n, sizeof *own), *create = calloc((size_t)n, sizeof *create),
            *del = calloc((size_t)n, sizeof *del), *term = calloc((size_t)n, sizeof *term);
    int agreed = 0, raw_ok = 0;
    for (int i = 0; i < n; i++) {
        /* alternately: the raw commands (an hour ahead, clear of Accord's
         * bookings), then Accord */
        raw_ok += raw_once(i, (acc_now() / 60 + 60) * 60, &create[i], &del[i]);
        char id[ACC_ID_LEN + 1];
        acc_err rc = svc_negotiate_doc(svc, offer, id, &total[i], &err);
        agreed += rc == ACC_OK;
        if (rc)
            fprintf(stderr, "negotiation %d: %s\n", i, err.msg);
        if (id[0]) {
            batch[i] = batch_path_us(svc, id);
            int64_t t0 = acc_mono_us();
            svc_terminate_wait(svc, id, &err);
            term[i] = acc_mono_us() - t0;
        }
        own[i] = total[i] - batch[i];
    }
    double mt = 0, mb = 0, mc = 0;
    for (int i = 0; i < n; i++) {
        mt += (double)total[i] / n / 1000;
        mb += (double)batch[i] / n / 1000;
        mc += (double)create[i] / n / 1000;
    }
    printf("co-allocation on Slurm sitea (2 of 8 nodes) + Grid Engine sgea (1 of 3 hosts), "
           "%d runs, %d agreed, %d raw bookings:\n",
           n, agreed, raw_ok);
    printf("  raw: scontrol create reservation + qrsub       mean %7.1f ms, median %7.1f ms\n", mc,
           median_ms(create, n));
    printf("  raw: scontrol delete reservation + qrdel       median %7.1f ms\n", median_ms(del, n));
    printf("  Accord: offer to recorded agreement            mean %7.1f ms, median %7.1f ms\n", mt,
           median_ms(total, n));
    printf("    batch commands on its critical path          mean %7.1f ms, median %7.1f ms\n", mb,
           median_ms(batch, n));
    for (int k = 0; k < ACC_TRACE__COUNT; k++) {
        if (step_us[k])
            printf("      %-8s (the slower site's call)            mean %7.1f ms\n",
                   acc_trace_kind_name((enum acc_trace_kind)k), (double)step_us[k] / n / 1000);
    }
    printf("    Accord's own share                           median %7.1f ms\n", median_ms(own, n));
    printf("  Accord: terminate (both deleted)               median %7.1f ms\n",
           median_ms(term, n));
    printf("  Accord adds per agreement (median): %.1f ms\n",
           median_ms(total, n) - median_ms(create, n));
    free(total);
    free(batch);
    free(own);
    free(create);
    free(del);
    free(term);
    acc_service_close(svc);
    acc_config_release(&cfg);
    acc_xml_cleanup();
    return agreed == n && raw_ok == n ? 0 : 1;
}
