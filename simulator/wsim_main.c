/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_main.c - accord-sim: runs an experiment file and writes its figures.
 *
 *   accord-sim [-j N] [-o DIR] [--plot] [--set key=value]... [--schedule FILE] EXPERIMENT
 *   accord-sim --help | --version
 *
 * Without -o the CSV goes to standard output.  --schedule writes the first
 * point's job-by-job schedule (replication 1) instead of running the sweep. */
#include "wsim.h"
#include "wsim_sweep.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SETS 64

static void usage(FILE *f)
{
    fprintf(f, "usage: accord-sim [-j N] [-o DIR] [--plot] [--set key=value]... "
               "[--schedule FILE] EXPERIMENT\n"
               "       accord-sim --help | --version\n"
               "  -j N          replications in parallel (1..256 processes; default 1)\n"
               "  -o DIR        write DIR/NAME.csv (and with --plot NAME.dat, .gp, .png)\n"
               "  --plot        with -o: also a gnuplot script and its PNG\n"
               "  --set k=v     override a key of the file (after its own lines)\n"
               "  --schedule F  write the first point's schedule, job by job, to F and stop\n");
}

static bool parse_jobs(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < 1 || v > 256)
        return false;
    *out = (int)v;
    return true;
}

/* Appends "--set" overrides as base lines of the experiment. */
static bool apply_sets(struct wsim_experiment *e, char **sets, int nsets, char *err, size_t len)
{
    for (int i = 0; i < nsets; i++) {
        char *eq = strchr(sets[i], '=');
        if (!eq) {
            snprintf(err, len, "--set %s: expected key=value", sets[i]);
            return false;
        }
        struct wsim_kv *kv = realloc(e->kv, (e->nkv + 1) * sizeof *kv);
        if (!kv) {
            snprintf(err, len, "out of memory");
            return false;
        }
        e->kv = kv;
        kv[e->nkv] = (struct wsim_kv){strndup(sets[i], (size_t)(eq - sets[i])), strdup(eq + 1), 0};
        if (!kv[e->nkv].key || !kv[e->nkv].value) {
            free(kv[e->nkv].key);
            free(kv[e->nkv].value);
            snprintf(err, len, "out of memory");
            return false;
        }
        e->nkv++;
    }
    /* Checked once all are in: one may need another (jobs and warmup). */
    for (size_t c = 0; c < e->ncurves; c++) {
        for (size_t x = 0; x < e->nxs; x++) {
            struct wsim_params p;
            char msg[WSIM_ERR_LEN];
            if (!wsim_experiment_params(e, c, x, &p, msg, sizeof msg)) {
                snprintf(err, len, "--set: %s", msg);
                return false;
            }
            wsim_params_release(&p);
        }
    }
    return true;
}

static int schedule(const struct wsim_experiment *e, const char *path)
{
    char err[WSIM_ERR_LEN];
    struct wsim_params p;
    struct wsim_workload_set w = {0};
    struct wsim_result r;
    int rc = 1;
    if (!wsim_experiment_params(e, 0, 0, &p, err, sizeof err)) {
        fprintf(stderr, "accord-sim: %s\n", err);
        return 1;
    }
    FILE *f = NULL;
    if (!wsim_workload_make(&p, 0, &w, err, sizeof err) ||
        !wsim_run(&p, &w, 0, &r, err, sizeof err))
        goto out;
    f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f) {
        snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
        goto out;
    }
    wsim_params_write_choices(f, &p, "# ");
    fprintf(f, "job,submit,total,components,start,end,clusters,alloc\n");
    for (size_t i = 0; i < w.n; i++) {
        const struct wsim_job *j = &w.v[i];
        fprintf(f, "%zu,%.9g,%d,%d,%.9g,%.9g,%d,", i + 1, j->submit, j->total, j->ncomp, j->start,
                j->end, j->used);
        for (int c = 0; c < p.nclusters; c++)
            fprintf(f, "%s%d", c ? " " : "", j->alloc[c]);
        fputc('\n', f);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "accord-sim: %s\n", err);
    if (f && f != stdout && fclose(f))
        rc = 1;
    wsim_workload_free(&w);
    wsim_params_release(&p);
    return rc;
}

static int run_gnuplot(const char *dir, const char *name)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (chdir(dir))
            _exit(127);
        char gp[300];
        snprintf(gp, sizeof gp, "%s.gp", name);
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct options {
    int jobs;
    bool plot;
    const char *out_dir, *file, *sched;
    char *sets[MAX_SETS];
    int nsets;
};

enum { OPT_PLOT = 256, OPT_SET, OPT_SCHEDULE, OPT_VERSION };

static const struct option long_options[] = {
    {"plot", no_argument, NULL, OPT_PLOT},
    {"set", required_argument, NULL, OPT_SET},
    {"schedule", required_argument, NULL, OPT_SCHEDULE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* A bad command line: the reason, then the usage; 2. */
static int bad_usage(const char *fmt, const char *what)
{
    fputs("accord-sim: ", stderr);
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    usage(stderr);
    return 2;
}

/* The command line into o; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *o)
{
    int opt;
    opterr = 0; /* the messages below name accord-sim, not argv[0] */
    while ((opt = getopt_long(argc, argv, ":j:o:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("accord-sim %s\n", ACCORD_VERSION);
            return 0;
        case 'j':
            if (!parse_jobs(optarg, &o->jobs))
                return bad_usage("-j: '%s' is not a number from 1 to 256", optarg);
            break;
        case 'o':
            o->out_dir = optarg;
            break;
        case OPT_PLOT:
            o->plot = true;
            break;
        case OPT_SET:
            if (o->nsets == MAX_SETS)
                return bad_usage("more than %s --set options", "64");
            o->sets[o->nsets++] = optarg;
            break;
        case OPT_SCHEDULE:
            o->sched = optarg;
            break;
        case ':':
            return bad_usage("option '%s' needs a value", argv[optind - 1]);
        default:
            return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 < argc)
        return bad_usage("one EXPERIMENT file, not also '%s'", argv[optind + 1]);
    if (optind == argc)
        return bad_usage("%s", "which EXPERIMENT file?");
    o->file = argv[optind];
    if (o->plot && !o->out_dir)
        return bad_usage("%s", "--plot needs -o DIR");
    return -1;
}

/* DIR/NAME.csv, and with --plot the plot's files and its PNG. */
static bool write_out(const struct options *o, const struct wsim_experiment *e, const char *name,
                      int reps, double level, const struct wsim_result *res, char *err, size_t len)
{
    if (mkdir(o->out_dir, 0755) && errno != EEXIST) {
        snprintf(err, len, "%s: %s", o->out_dir, strerror(errno));
        return false;
    }
    char path[900];
    snprintf(path, sizeof path, "%s/%s.csv", o->out_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return false;
    }
    wsim_write_csv(f, e, reps, level, res);
    if (fclose(f)) {
        snprintf(err, len, "%s: write error", path);
        return false;
    }
    /* The replications' raw figures beside it, for paired comparisons. */
    snprintf(path, sizeof path, "%s/%s-reps.csv", o->out_dir, name);
    f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return false;
    }
    wsim_write_reps(f, e, reps, res);
    if (fclose(f)) {
        snprintf(err, len, "%s: write error", path);
        return false;
    }
    if (!o->plot)
        return true;
    snprintf(path, sizeof path, "%s/%s", o->out_dir, name);
    if (!wsim_write_plot(path, e, reps, level, res, err, len))
        return false;
    if (run_gnuplot(o->out_dir, name) != 0) {
        snprintf(err, len, "gnuplot failed on %s.gp (is gnuplot-nox installed?)", path);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    struct options o = {.jobs = 1};
    int st = parse_args(argc, argv, &o);
    if (st >= 0)
        return st;
    char err[1024];
    struct wsim_experiment e;
    struct wsim_result *res = NULL;
    int rc = 1;
    if (!wsim_experiment_load(&e, o.file, err, sizeof err)) {
        fprintf(stderr, "accord-sim: %s\n", err);
        return 1;
    }
    if (!apply_sets(&e, o.sets, o.nsets, err, sizeof err))
        goto out;
    if (o.sched) {
        rc = schedule(&e, o.sched);
        wsim_experiment_free(&e);
        return rc;
    }
    struct wsim_params p0;
    if (!wsim_experiment_params(&e, 0, 0, &p0, err, sizeof err))
        goto out;
    int reps = p0.replications;
    double level = p0.ci_level;
    char name[WSIM_MAX_NAME];
    snprintf(name, sizeof name, "%s", p0.name);
    wsim_params_release(&p0);
    res = calloc(e.ncurves * e.nxs * (size_t)reps, sizeof *res);
    if (!res) {
        snprintf(err, sizeof err, "out of memory");
        goto out;
    }
    if (!wsim_sweep_run(&e, reps, o.jobs, res, err, sizeof err))
        goto out;
    if (!o.out_dir)
        wsim_write_csv(stdout, &e, reps, level, res);
    else if (!write_out(&o, &e, name, reps, level, res, err, sizeof err))
        goto out;
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "accord-sim: %s\n", err);
    free(res);
    wsim_experiment_free(&e);
    return rc;
}
