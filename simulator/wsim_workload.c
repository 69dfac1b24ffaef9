/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_workload.c - the workloads: docs/science.md's generators (Bucur & Epema's
 * synthetic component streams, total sizes split by a limit or left
 * flexible, Banen et al.'s measured applications) and SWF traces.  A
 * workload is drawn from its own stream (seed, replication), so every policy
 * sees the same jobs. */
#include "wsim.h"
#include "wsim_internal.h"
#include "../lib/policy/policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Banen et al. section 3.2: T(app, size, k), 0 where the combination does
 * not exist. */
static const int banen_sizes[2][4] = {{8, 16, 32, 0}, {12, 15, 20, 30}};
static const int banen_nsizes[2] = {3, 4};
static const double banen_t[2][4][4] = {
    {{1230, 1390, 0, 0}, {649, 766, 0, 767}, {357, 402, 0, 440}, {0, 0, 0, 0}},
    {{3485, 3494, 3504, 3507}, {2836, 0, 2884, 0}, {1935, 2207, 0, 2155}, {1563, 1541, 1584, 0}},
};

double wsim_banen_time(int app, int total, int k)
{
    if (app < 0 || app > 1 || k < 1 || k > 4)
        return 0;
    for (int i = 0; i < banen_nsizes[app]; i++) {
        if (banen_sizes[app][i] == total)
            return banen_t[app][i][k - 1];
    }
    return 0;
}

static bool banen_allowed(enum wsim_banen_rule rule, int total, int k)
{
    switch (rule) {
    case WSIM_RULE_NO:
        return k == 1;
    case WSIM_RULE_CO:
        return true;
    case WSIM_RULE_RCO:
        return total / k <= 16;
    case WSIM_RULE_FCO:
        return total / k <= 16 && k <= 2;
    }
    return false;
}

static double banen_es_t1(int app)
{
    double m = 0;
    for (int i = 0; i < banen_nsizes[app]; i++)
        m += banen_sizes[app][i] * banen_t[app][i][0];
    return m / banen_nsizes[app];
}

static void banen_job(const struct wsim_params *p, struct wsim_rng *r, struct wsim_job *j)
{
    int app = p->app == WSIM_APP_MIX ? (int)wsim_rng_int(r, 0, 1) : (int)p->app;
    int i = (int)wsim_rng_int(r, 0, banen_nsizes[app] - 1);
    int total = banen_sizes[app][i];
    int ks[4], nk = 0;
    for (int k = 1; k <= 4; k++) {
        if (banen_t[app][i][k - 1] > 0 && banen_allowed(p->rule, total, k))
            ks[nk++] = k;
    }
    int k = ks[wsim_rng_int(r, 0, nk - 1)];
    j->app = app;
    j->total = total;
    j->ncomp = k;
    for (int c = 0; c < k; c++)
        j->comp[c] = total / k;
    j->t1 = banen_t[app][i][0];
}

int wsim_split_limit(int s, int limit, int nclusters, int *comp)
{
    int64_t parts[WSIM_MAX_COMP];
    size_t k = acc_policy_split_even(s, (size_t)nclusters, limit, parts);
    for (size_t i = 0; i < k; i++)
        comp[i] = (int)parts[i];
    return (int)k;
}

static int size_of(double x)
{
    long v = lround(x);
    return v < 1 ? 1 : v > 1000000 ? 1000000 : (int)v;
}

/* The total size split as the parameters say. */
static void shape(const struct wsim_params *p, struct wsim_job *j)
{
    if (p->split == WSIM_SPLIT_LIMIT) {
        j->ncomp = wsim_split_limit(j->total, p->split_limit, p->nclusters, j->comp);
    } else {
        j->ncomp = 1;
        j->comp[0] = j->total;
    }
}

/* E[s T1] of a synthetic generator. */
static double offered_work(const struct wsim_params *p)
{
    switch (p->wl) {
    case WSIM_W_SYNTH: {
        double ek = 0, sum = 0;
        for (int i = 0; i < WSIM_MAX_COMP; i++) {
            ek += (i + 1) * p->composition[i];
            sum += p->composition[i];
        }
        return ek / sum * wsim_dist_mean(&p->comp_size) * wsim_dist_mean(&p->service);
    }
    case WSIM_W_TOTAL:
        return wsim_dist_mean(&p->total_size) * wsim_dist_mean(&p->service);
    case WSIM_W_BANEN:
        if (p->app == WSIM_APP_MIX)
            return (banen_es_t1(0) + banen_es_t1(1)) / 2;
        return banen_es_t1((int)p->app);
    case WSIM_W_SWF:
        break;
    }
    return 0;
}

int wsim_total_units(const struct wsim_params *p)
{
    int t = 0;
    for (int i = 0; i < p->nclusters; i++)
        t += p->size[i];
    return t;
}

static bool from_trace(const struct wsim_params *p, const double *rcum, struct wsim_rng *r,
                       struct wsim_workload_set *w, char *err, size_t errlen)
{
    char path[512];
    const char *t = p->trace;
    FILE *f = fopen(t, "r");
    if (!f) {
        wsim_errf(err, errlen, "%s: cannot open: %s", t, strerror(errno));
        return false;
    }
    struct wsim_swf_job *v = NULL;
    size_t n = 0, skipped = 0;
    snprintf(path, sizeof path, "%s", t);
    bool ok = wsim_swf_parse(f, path, &v, &n, &skipped, err, errlen);
    fclose(f);
    if (!ok)
        return false;
    size_t use = n < (size_t)p->jobs ? n : (size_t)p->jobs;
    int units = wsim_total_units(p);
    w->v = calloc(use, sizeof *w->v);
    if (!w->v) {
        free(v);
        return wsim_errf(err, errlen, "out of memory");
    }
    double t0 = v[0].submit, work = 0;
    size_t m = 0;
    for (size_t i = 0; i < use; i++) {
        if (v[i].procs > units)
            continue; /* could never start here */
        struct wsim_job *j = &w->v[m++];
        j->submit = v[i].submit - t0;
        j->t1 = v[i].run;
        j->total = (int)v[i].procs;
        j->home = (int)wsim_rng_pick(r, rcum, (size_t)p->nclusters);
        shape(p, j);
        work += j->total * j->t1;
    }
    free(v);
    w->n = m;
    if (m < 2) {
        wsim_workload_free(w);
        return wsim_errf(err, errlen, "%s: fewer than 2 jobs fit on %d units", t, units);
    }
    /* Scaled to the target load by stretching or compressing the arrivals. */
    double span = w->v[m - 1].submit - w->v[0].submit;
    if (p->load > 0 && span > 0) {
        double own = work / ((double)units * span);
        double factor = own / p->load;
        for (size_t i = 0; i < m; i++)
            w->v[i].submit *= factor;
    }
    w->offered = work / (double)m;
    return true;
}

bool wsim_workload_make(const struct wsim_params *p, int rep, struct wsim_workload_set *w,
                        char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    struct wsim_rng r;
    wsim_rng_seed(&r, p->seed, 1000003ULL * (uint64_t)rep + 1);
    double rcum[WSIM_MAX_CLUSTERS], ccum[WSIM_MAX_COMP];
    for (int i = 0; i < p->nclusters; i++)
        rcum[i] = (i ? rcum[i - 1] : 0) + p->routing[i];
    for (int i = 0; i < WSIM_MAX_COMP; i++)
        ccum[i] = (i ? ccum[i - 1] : 0) + p->composition[i];
    if (p->wl == WSIM_W_SWF)
        return from_trace(p, rcum, &r, w, err, errlen);
    w->v = calloc((size_t)p->jobs, sizeof *w->v);
    if (!w->v)
        return wsim_errf(err, errlen, "out of memory for %ld jobs", p->jobs);
    w->n = (size_t)p->jobs;
    w->offered = offered_work(p);
    double mean_ia = p->load > 0 ? w->offered / (p->load * wsim_total_units(p)) : p->interarrival;
    double now = 0;
    for (size_t i = 0; i < w->n; i++) {
        struct wsim_job *j = &w->v[i];
        now += wsim_rng_exp(&r, mean_ia);
        j->submit = now;
        j->home = (int)wsim_rng_pick(&r, rcum, (size_t)p->nclusters);
        switch (p->wl) {
        case WSIM_W_SYNTH:
            j->ncomp = (int)wsim_rng_pick(&r, ccum, WSIM_MAX_COMP) + 1;
            j->total = 0;
            for (int c = 0; c < j->ncomp; c++) {
                j->comp[c] = size_of(wsim_dist_draw(&p->comp_size, &r));
                j->total += j->comp[c];
            }
            j->t1 = wsim_dist_draw(&p->service, &r);
            break;
        case WSIM_W_TOTAL:
            j->total = size_of(wsim_dist_draw(&p->total_size, &r));
            j->t1 = wsim_dist_draw(&p->service, &r);
            shape(p, j);
            break;
        case WSIM_W_BANEN:
            banen_job(p, &r, j);
            break;
        case WSIM_W_SWF:
            break;
        }
    }
    return true;
}

void wsim_workload_free(struct wsim_workload_set *w)
{
    free(w->v);
    w->v = NULL;
    w->n = 0;
}
