/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_metrics.c - the figures of a run (over the jobs after the warm-up)
 * and confidence intervals over replications (Student t). */
#include "wsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile of sorted values. */
static double pct(const double *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

void wsim_result_compute(const struct wsim_params *p, const struct wsim_workload_set *w,
                         const double *qlen, struct wsim_result *r)
{
    memset(r, 0, sizeof *r);
    size_t first = (size_t)p->warmup < w->n ? (size_t)p->warmup : 0;
    size_t n = w->n - first;
    double *resp = malloc((n ? n : 1) * sizeof *resp);
    double work_net = 0, work_gross = 0, sum_r = 0, sum_w = 0, sum_x = 0, loc = 0, glob = 0;
    long coal = 0;
    int units = 0;
    for (int c = 0; c < p->nclusters; c++)
        units += p->size[c];
    for (size_t i = first; i < w->n; i++) {
        const struct wsim_job *j = &w->v[i];
        double rt = j->end - j->submit;
        if (resp)
            resp[i - first] = rt;
        sum_r += rt;
        sum_w += j->start - j->submit;
        sum_x += j->end - j->start;
        work_net += j->total * j->t1;
        work_gross += j->total * (j->end - j->placed);
        coal += j->used > 1;
        if (j->global) {
            glob += rt;
            r->n_global++;
        } else {
            loc += rt;
            r->n_local++;
        }
    }
    r->measured = (long)n;
    if (n) {
        r->mean_resp = sum_r / (double)n;
        r->mean_wait = sum_w / (double)n;
        r->mean_exec = sum_x / (double)n;
        r->coalloc_share = (double)coal / (double)n;
    }
    r->mean_resp_local = r->n_local ? loc / (double)r->n_local : 0;
    r->mean_resp_global = r->n_global ? glob / (double)r->n_global : 0;
    if (resp && n) {
        qsort(resp, n, sizeof *resp, cmp_double);
        r->p50_resp = pct(resp, n, 0.50);
        r->p90_resp = pct(resp, n, 0.90);
        r->p95_resp = pct(resp, n, 0.95);
        r->p99_resp = pct(resp, n, 0.99);
    }
    free(resp);
    /* The horizon: the span of the measured arrivals. */
    r->horizon = n > 1 ? w->v[w->n - 1].submit - w->v[first].submit : 0;
    if (r->horizon > 0 && units) {
        r->util_net = work_net / ((double)units * r->horizon);
        r->util_gross = work_gross / ((double)units * r->horizon);
    }
    r->offered_net = p->load;
    /* Saturation: the queue at the last arrival against its mean over the
     * second quarter of the arrivals. */
    size_t a = w->n / 4, b = w->n / 2;
    double q2 = 0;
    for (size_t i = a; i < b; i++)
        q2 += qlen[i];
    r->q2_queue = b > a ? q2 / (double)(b - a) : 0;
    r->end_queue = w->n ? qlen[w->n - 1] : 0;
    r->saturated = r->end_queue >= (double)p->sat_min && r->end_queue > p->sat_factor * r->q2_queue;
}

/* ---- Student t: the regularized incomplete beta by its continued
 * fraction, its inverse by bisection (no table, any level). */
static double betacf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < 1e-300)
        d = 1e-300;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < 1e-300)
            d = 1e-300;
        c = 1 + aa / c;
        if (fabs(c) < 1e-300)
            c = 1e-300;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < 1e-300)
            d = 1e-300;
        c = 1 + aa / c;
        if (fabs(c) < 1e-300)
            c = 1e-300;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-14)
            break;
    }
    return h;
}

static double ibeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
    if (x < (a + 1) / (a + b + 2))
        return bt * betacf(a, b, x) / a;
    return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* P(|T| <= t) for df degrees of freedom. */
static double t_central(double t, int df)
{
    double x = df / (df + t * t);
    return 1 - ibeta(df / 2.0, 0.5, x);
}

double wsim_t_quantile(double level, int df)
{
    if (df < 1)
        return 0;
    double lo = 0, hi = 1e6;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (t_central(mid, df) < level)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

struct wsim_ci wsim_ci_of(const double *x, int n, double level)
{
    struct wsim_ci ci = {0, 0};
    if (n < 1)
        return ci;
    for (int i = 0; i < n; i++)
        ci.mean += x[i];
    ci.mean /= n;
    if (n < 2)
        return ci;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - ci.mean) * (x[i] - ci.mean);
    ci.half = wsim_t_quantile(level, n - 1) * sqrt(ss / (n - 1) / n);
    return ci;
}

/* ---- metrics by name, in the CSV's column order */
const char *const wsim_metric_names[] = {
    "mean_resp",  "p50_resp",    "p90_resp",  "p95_resp",   "p99_resp",
    "mean_wait",  "mean_exec",   "util_net",  "util_gross", "coalloc_share",
    "resp_local", "resp_global", "saturated", NULL,
};

size_t wsim_metric_count(void)
{
    size_t n = 0;
    while (wsim_metric_names[n])
        n++;
    return n;
}

long wsim_metric_index(const char *name)
{
    for (size_t i = 0; wsim_metric_names[i]; i++) {
        if (!strcmp(wsim_metric_names[i], name))
            return (long)i;
    }
    return -1;
}

double wsim_metric_get(const struct wsim_result *r, size_t i)
{
    const double v[] = {r->mean_resp,
                        r->p50_resp,
                        r->p90_resp,
                        r->p95_resp,
                        r->p99_resp,
                        r->mean_wait,
                        r->mean_exec,
                        r->util_net,
                        r->util_gross,
                        r->coalloc_share,
                        r->mean_resp_local,
                        r->mean_resp_global,
                        r->saturated ? 1.0 : 0.0};
    return i < sizeof v / sizeof *v ? v[i] : 0;
}
