/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_output.c - an experiment's figures as CSV (and every replication's),
 * the header of open modelling choices every result starts with, and its
 * plot as a gnuplot script with its data (one block per curve). */
#include "wsim_sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A metric's values over the replications of one point. */
static struct wsim_ci point_ci(const struct wsim_result *res, int reps, size_t m, double level,
                               int *sat)
{
    double v[1000];
    *sat = 0;
    for (int r = 0; r < reps; r++) {
        v[r] = wsim_metric_get(&res[r], m);
        *sat += res[r].saturated;
    }
    return wsim_ci_of(v, reps, level);
}

static void write_list(FILE *f, const double *v, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%g", i ? "," : "", v[i]);
    fputc('\n', f);
}

void wsim_params_write_choices(FILE *f, const struct wsim_params *p, const char *prefix)
{
    static const char *const names[] = {
        "ties",     "bsbw_reading", "allotment", "a1_order",        "a1_solution", "bw_avail",
        "discount", "b3_chunk",     "b3_round",  "ideal_placement", "triggers",    "ca_average"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        fprintf(f, "%s%s = %s\n", prefix, names[i], wsim_params_enum_name(p, names[i]));
    fprintf(f, "%sb4_start = %d\n", prefix, p->b4_start + 1);
    fprintf(f, "%sscan_period = %g\n", prefix, p->scan_period);
    fprintf(f, "%sstartup = %g\n", prefix, p->startup);
    fprintf(f, "%slslt = %g\n", prefix, p->lslt);
    fprintf(f, "%sbsbw = %g\n", prefix, p->bsbw);
    fprintf(f, "%sslow_clusters =", prefix);
    bool any = false;
    for (int c = 0; c < p->nclusters; c++) {
        if (p->slow_link[c])
            fprintf(f, "%s%d", any ? "," : " ", c + 1);
        any = any || p->slow_link[c];
    }
    fprintf(f, "%s\n", any ? "" : " none");
    double row[WSIM_MAX_CLUSTERS * WSIM_MAX_CLUSTERS];
    int n = p->nclusters;
    for (int c = 0; c < n; c++) {
        for (int d = 0; d < n; d++)
            row[c * n + d] = p->latency[c][d];
    }
    fprintf(f, "%slatency = ", prefix);
    write_list(f, row, n * n);
    fprintf(f, "%sccr_m = ", prefix);
    write_list(f, p->ccr_m + 1, n);
    fprintf(f, "%sccr_m_slow = ", prefix);
    write_list(f, p->ccr_m_slow + 1, n);
    fprintf(f, "%swarmup = %ld\n%sreplications = %d\n%sci_level = %g\n%sseed = %llu\n", prefix,
            p->warmup, prefix, p->replications, prefix, p->ci_level, prefix,
            (unsigned long long)p->seed);
}

/* The choices of curve c (its first point) as "# key = value" lines in a
 * buffer the caller frees; NULL when the point cannot be built or out of
 * memory. */
static char *curve_choices(const struct wsim_experiment *e, size_t c)
{
    struct wsim_params p;
    char err[WSIM_ERR_LEN], *buf = NULL;
    size_t len = 0;
    if (!wsim_experiment_params(e, c, 0, &p, err, sizeof err))
        return NULL;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        wsim_params_write_choices(m, &p, "# ");
        if (fclose(m)) {
            free(buf);
            buf = NULL;
        }
    }
    wsim_params_release(&p);
    return buf;
}

void wsim_write_header(FILE *f, const struct wsim_experiment *e)
{
    char *base = curve_choices(e, 0);
    if (!base)
        return; /* every point was checked when the file was read */
    fputs(base, f);
    for (size_t c = 1; c < e->ncurves; c++) {
        char *mine = curve_choices(e, c);
        /* Line by line: those of this curve that the first one lacks. */
        for (char *line = mine, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            *nl = 0;
            bool shared = false;
            for (const char *b = base; !shared && (b = strstr(b, line)); b++)
                shared = (b == base || b[-1] == '\n') && b[strlen(line)] == '\n';
            if (!shared)
                fprintf(f, "# curve %s: %s\n", e->curves[c], line + 2);
        }
        free(mine);
    }
    free(base);
}

void wsim_write_reps(FILE *f, const struct wsim_experiment *e, int reps,
                     const struct wsim_result *res)
{
    size_t nm = wsim_metric_count();
    wsim_write_header(f, e);
    fprintf(f, "curve,%s,replication,saturated", e->x_key ? e->x_key : "x");
    for (size_t m = 0; m < nm; m++)
        fprintf(f, ",%s", wsim_metric_names[m]);
    fputc('\n', f);
    for (size_t c = 0; c < e->ncurves; c++) {
        for (size_t x = 0; x < e->nxs; x++) {
            for (int r = 0; r < reps; r++) {
                const struct wsim_result *one = &res[(c * e->nxs + x) * (size_t)reps + (size_t)r];
                csv_field(f, e->curves[c]);
                fputc(',', f);
                csv_field(f, e->xs[x]);
                fprintf(f, ",%d,%d", r + 1, one->saturated ? 1 : 0);
                for (size_t m = 0; m < nm; m++)
                    fprintf(f, ",%.9g", wsim_metric_get(one, m));
                fputc('\n', f);
            }
        }
    }
}

void wsim_write_csv(FILE *f, const struct wsim_experiment *e, int reps, double level,
                    const struct wsim_result *res)
{
    size_t nm = wsim_metric_count();
    wsim_write_header(f, e);
    fprintf(f, "curve,%s,replications,saturated_replications", e->x_key ? e->x_key : "x");
    for (size_t m = 0; m < nm; m++)
        fprintf(f, ",%s,%s_ci", wsim_metric_names[m], wsim_metric_names[m]);
    fputc('\n', f);
    for (size_t c = 0; c < e->ncurves; c++) {
        for (size_t x = 0; x < e->nxs; x++) {
            const struct wsim_result *r = &res[(c * e->nxs + x) * (size_t)reps];
            int sat = 0;
            csv_field(f, e->curves[c]);
            fputc(',', f);
            csv_field(f, e->xs[x]);
            point_ci(r, reps, 0, level, &sat);
            fprintf(f, ",%d,%d", reps, sat);
            for (size_t m = 0; m < nm; m++) {
                struct wsim_ci ci = point_ci(r, reps, m, level, &sat);
                fprintf(f, ",%.6g,%.6g", ci.mean, ci.half);
            }
            fputc('\n', f);
        }
    }
}

static bool numeric(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && !errno;
}

bool wsim_write_plot(const char *base, const struct wsim_experiment *e, int reps, double level,
                     const struct wsim_result *res, char *err, size_t errlen)
{
    char path[600];
    long m = wsim_metric_index(e->metric);
    bool num = true;
    double v;
    for (size_t x = 0; x < e->nxs; x++)
        num = num && numeric(e->xs[x], &v);
    num = num || e->plot_x;
    snprintf(path, sizeof path, "%s.dat", base);
    FILE *d = fopen(path, "w");
    if (!d) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    wsim_write_header(d, e);
    for (size_t c = 0; c < e->ncurves; c++) {
        fprintf(d, "# %s\n", e->curves[c]);
        for (size_t x = 0; x < e->nxs; x++) {
            int sat = 0;
            struct wsim_ci ci =
                point_ci(&res[(c * e->nxs + x) * (size_t)reps], reps, (size_t)m, level, &sat);
            /* A point saturated in most replications has no meaningful mean. */
            if (sat * 2 > reps)
                continue;
            if (e->plot_x) {
                struct wsim_ci px = point_ci(&res[(c * e->nxs + x) * (size_t)reps], reps,
                                             (size_t)wsim_metric_index(e->plot_x), level, &sat);
                fprintf(d, "%.6g %.6g %.6g\n", px.mean, ci.mean, ci.half);
            } else if (num)
                fprintf(d, "%s %.6g %.6g\n", e->xs[x], ci.mean, ci.half);
            else
                fprintf(d, "%zu %.6g %.6g\n", x, ci.mean, ci.half);
        }
        fprintf(d, "\n\n");
    }
    bool ok = !ferror(d);
    ok = (fclose(d) == 0) && ok;
    snprintf(path, sizeof path, "%s.gp", base);
    FILE *g = fopen(path, "w");
    if (!ok || !g) {
        if (g)
            fclose(g);
        snprintf(err, errlen, "%s: cannot write", path);
        return false;
    }
    const char *slash = strrchr(base, '/');
    const char *file = slash ? slash + 1 : base;
    fprintf(g, "# accord-sim: %s\n", e->title ? e->title : file);
    fprintf(g, "set terminal pngcairo size 900,600 noenhanced\nset output '%s.png'\n", file);
    /* Two lines: the experiment, then how to read the plot. */
    fprintf(g, "set title \"");
    for (const char *t = e->title ? e->title : file; *t; t++)
        fputc(*t == '"' || *t == '\\' ? '\'' : *t, g);
    fprintf(g, "\\n%s; %d replications, %.0f%% CI; saturated points left out\"\n", e->metric, reps,
            level * 100);
    fprintf(g, "set xlabel '%s'\nset ylabel '%s'\nset key outside right\nset grid\n",
            e->plot_x  ? e->plot_x
            : e->x_key ? e->x_key
                       : "",
            e->metric);
    if (!num) {
        fprintf(g, "set xtics (");
        for (size_t x = 0; x < e->nxs; x++)
            fprintf(g, "%s'%s' %zu", x ? ", " : "", e->xs[x], x);
        fprintf(g, ") rotate by -30\nset xrange [-0.5:%zu.5]\n", e->nxs - 1);
    }
    fprintf(g, "plot ");
    for (size_t c = 0; c < e->ncurves; c++)
        fprintf(g, "%s'%s.dat' index %zu using 1:2:3 with yerrorlines title '%s'",
                c ? ", \\\n     " : "", file, c, e->curves[c][0] ? e->curves[c] : e->metric);
    fprintf(g, "\n");
    ok = !ferror(g);
    ok = (fclose(g) == 0) && ok;
    if (!ok)
        snprintf(err, errlen, "%s: write error", path);
    return ok;
}
