/* SPDX-License-Identifier: Apache-2.0 */
/* replay_print.c - the figures of a replay and its output: a text table or
 * CSV, one line per job, then the summary (replay.h). */
#include "replay.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q of the values at or below. */
static double rank(const double *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

acc_err acc_replay_summarise(const struct acc_replay_setup *setup,
                             const struct acc_replay_job *jobs, size_t n_jobs,
                             const struct acc_replay_placement *out, struct acc_replay_summary *sum,
                             struct acc_error *err)
{
    memset(sum, 0, sizeof *sum);
    sum->jobs = n_jobs;
    double *w = malloc((n_jobs ? n_jobs : 1) * sizeof *w);
    if (!w)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    double total = 0, used = 0, nodes = 0, co = 0;
    for (size_t c = 0; c < setup->n_sites; c++)
        nodes += (double)setup->sites[c].nodes;
    for (size_t i = 0; i < n_jobs; i++) {
        const struct acc_replay_placement *o = &out[i];
        sum->fell_back += o->fell_back;
        sum->on_capacity += o->on_capacity;
        if (!o->placed)
            continue;
        acc_time submit = jobs[i].submit > setup->from ? jobs[i].submit : setup->from;
        w[sum->placed++] = (double)(o->start - submit);
        total += (double)(o->start - submit);
        co += o->n_sites >= 2;
        acc_time a = o->start > setup->from ? o->start : setup->from;
        acc_time b = o->end < setup->until ? o->end : setup->until;
        for (size_t k = 0; b > a && k < o->n; k++)
            used += (double)o->size[k] * (double)(b - a);
    }
    if (sum->placed) {
        qsort(w, sum->placed, sizeof *w, cmp_double);
        sum->mean_wait = total / (double)sum->placed;
        sum->p50_wait = rank(w, sum->placed, 0.50);
        sum->p90_wait = rank(w, sum->placed, 0.90);
        sum->p99_wait = rank(w, sum->placed, 0.99);
        sum->max_wait = w[sum->placed - 1];
        sum->coalloc_share = co / (double)sum->placed;
    }
    sum->utilisation = used / (nodes * (double)(setup->until - setup->from));
    free(w);
    return ACC_OK;
}

/* "a:4 b:4" */
static void parts(const struct acc_replay_setup *s, const struct acc_replay_placement *o, char *buf,
                  size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < o->n && at < len; k++) {
        int m = snprintf(buf + at, len - at, "%s%s:%" PRId64, k ? " " : "",
                         s->sites[o->site[k]].name, o->size[k]);
        if (m < 0)
            break;
        at += (size_t)m;
    }
}

void acc_replay_print(FILE *f, bool csv, const struct acc_replay_setup *setup,
                      const struct acc_replay_job *jobs, size_t n_jobs,
                      const struct acc_replay_placement *out, const struct acc_replay_summary *sum,
                      const struct acc_replay_stats *stats)
{
    char from[ACC_TIME_STRLEN], until[ACC_TIME_STRLEN];
    acc_time_format(setup->from, from);
    acc_time_format(setup->until, until);
    if (csv)
        fputs("job,submit,nodes,duration_s,placement,start,end,wait_s,candidate,note\n", f);
    else
        fprintf(f,
                "replay of %zu jobs on %zu sites, policy %s, window %s to %s (dry run: nothing "
                "booked)\n%6s  %-20s  %6s  %8s  %-20s  %-20s  %8s  %s\n",
                n_jobs, setup->n_sites, acc_policy_name(setup->policy.id), from, until, "job",
                "submit", "nodes", "dur_s", "start", "end", "wait_s", "placement");
    for (size_t i = 0; i < n_jobs; i++) {
        const struct acc_replay_placement *o = &out[i];
        char sub[ACC_TIME_STRLEN], st[ACC_TIME_STRLEN] = "-", en[ACC_TIME_STRLEN] = "-";
        char pl[512], wait[32] = "-", note[160] = "";
        acc_time_format(jobs[i].submit, sub);
        acc_time submit = jobs[i].submit > setup->from ? jobs[i].submit : setup->from;
        if (o->placed) {
            acc_time_format(o->start, st);
            acc_time_format(o->end, en);
            snprintf(wait, sizeof wait, "%" PRId64, (int64_t)(o->start - submit));
            parts(setup, o, pl, sizeof pl);
        } else {
            snprintf(pl, sizeof pl, "not placed: %s", o->why);
        }
        snprintf(note, sizeof note, "%s%s%s",
                 o->fell_back ? "earliest (policy does not take it)" : "",
                 o->fell_back && o->on_capacity ? "; " : "",
                 o->on_capacity ? "on capacities (nothing free at submit)" : "");
        if (csv)
            fprintf(f, "%zu,%s,%" PRId64 ",%" PRId64 ",%s,%s,%s,%s,%zu,%s\n", i + 1, sub,
                    jobs[i].total, jobs[i].duration, pl, o->placed ? st : "", o->placed ? en : "",
                    o->placed ? wait : "", o->candidate, note);
        else
            fprintf(f, "%6zu  %-20s  %6" PRId64 "  %8" PRId64 "  %-20s  %-20s  %8s  %s%s%s\n",
                    i + 1, sub, jobs[i].total, jobs[i].duration, st, en, wait, pl,
                    note[0] ? "  # " : "", note);
    }
    if (csv) {
        fprintf(f,
                "#jobs,%zu\n#placed,%zu\n#mean_wait_s,%.3f\n#p50_wait_s,%.0f\n#p90_wait_s,%.0f\n"
                "#p99_wait_s,%.0f\n#max_wait_s,%.0f\n#coalloc_share,%.4f\n#utilisation,%.6f\n"
                "#window_start,%s\n#window_end,%s\n#policy,%s\n#previews,%zu\n",
                sum->jobs, sum->placed, sum->mean_wait, sum->p50_wait, sum->p90_wait, sum->p99_wait,
                sum->max_wait, sum->coalloc_share, sum->utilisation, from, until,
                acc_policy_name(setup->policy.id), stats->previews);
        return;
    }
    fprintf(f,
            "summary: %zu jobs, %zu placed, %zu not placed; wait mean %.1f s, p50 %.0f s, "
            "p90 %.0f s, p99 %.0f s, max %.0f s; co-allocated %.1f%%; utilisation by the "
            "replay %.2f%% of the nodes over the window; %zu previews\n",
            sum->jobs, sum->placed, sum->jobs - sum->placed, sum->mean_wait, sum->p50_wait,
            sum->p90_wait, sum->p99_wait, sum->max_wait, 100 * sum->coalloc_share,
            100 * sum->utilisation, stats->previews);
    if (sum->fell_back || sum->on_capacity)
        fprintf(f,
                "note: %zu jobs placed by earliest (policy %s does not take their request), "
                "%zu ordered on capacities (no placement fit the free nodes at submit)\n",
                sum->fell_back, acc_policy_name(setup->policy.id), sum->on_capacity);
}
