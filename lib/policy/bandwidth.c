/* SPDX-License-Identifier: Apache-2.0 */
/* bandwidth.c - Jones et al.'s bandwidth-centric model (docs/science.md §4.2-4.3:
 * eqs. 1, 3-7, the allotment rules) and the application-sized link
 * bandwidth Accord books. */
#include "policy.h"

#include <math.h>
#include <string.h>

double acc_bw_requirement(int64_t n_i, int64_t n_T, double ppbw)
{
    if (n_T < 2 || n_i <= 0 || n_i >= n_T)
        return 0;
    return (double)n_i * ppbw * (double)(n_T - n_i) / (double)(n_T - 1);
}

double acc_bw_pair(int64_t n_a, int64_t n_b, double ppbw)
{
    if (n_a < 1 || n_b < 1)
        return 0;
    return acc_bw_requirement(n_a, n_a + n_b, ppbw);
}

double acc_bw_from_step(double bytes_per_step, double step_seconds)
{
    if (!(bytes_per_step >= 0) || !(step_seconds > 0) || !isfinite(bytes_per_step) ||
        !isfinite(step_seconds))
        return -1;
    return 8.0 * bytes_per_step / step_seconds / 1e6;
}

acc_err acc_bw_mbit(double mbit, int64_t max, int64_t *out, struct acc_error *err)
{
    if (!isfinite(mbit) || !(mbit > 0))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "the computed bandwidth %g Mbit/s is not a positive number", mbit);
    /* A hair above a whole number is floating-point noise, not a need. */
    double up = ceil(mbit - 1e-9);
    if (up > (double)max)
        return acc_error_set(err, ACC_ERR_CAPACITY,
                             "the computed bandwidth %.3f Mbit/s is more than %lld", mbit,
                             (long long)max);
    *out = (int64_t)up < 1 ? 1 : (int64_t)up;
    return ACC_OK;
}

double acc_bw_ppbw_from_bsbw(double bsbw, int64_t n_T, enum acc_bsbw_reading r)
{
    if (n_T < 2)
        return 0;
    double n = (double)n_T;
    return r == ACC_BSBW_B ? 2.0 * bsbw / n : 4.0 * bsbw * (n - 1) / (n * n);
}

double acc_bw_saturation(double bw_max, double demand)
{
    return demand > 0 ? bw_max / demand : INFINITY;
}

bool acc_bw_limits(int64_t n_T, double ppbw, double avail, double *n1, double *n2)
{
    double n = (double)n_T;
    *n1 = *n2 = n / 2;
    if (n_T < 2 || !(ppbw > 0))
        return false;
    double disc = n * n - 4.0 * avail * (n - 1) / ppbw;
    if (disc < 0)
        return false;
    double root = sqrt(disc);
    *n1 = (n - root) / 2;
    *n2 = (n + root) / 2;
    return true;
}

acc_err acc_bw_allot(size_t n_jobs, size_t n_links, const double *req, const double *bw_max,
                     enum acc_bw_allot_rule rule, double *sd, struct acc_error *err)
{
    if (n_jobs > ACC_BW_MAX_JOBS || n_links > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "allotment: %zu jobs on %zu links (at most %d and %d)", n_jobs,
                             n_links, ACC_BW_MAX_JOBS, ACC_POLICY_MAX_CLUSTERS);
    if ((n_jobs && n_links && !req) || (n_links && !bw_max) || (n_jobs && !sd))
        return acc_error_set(err, ACC_ERR_INVALID, "allotment: missing arrays");
    for (size_t k = 0; k < n_links; k++) {
        if (!(bw_max[k] > 0) || !isfinite(bw_max[k]))
            return acc_error_set(err, ACC_ERR_INVALID, "allotment: link %zu has capacity %g", k,
                                 bw_max[k]);
    }
    for (size_t i = 0; i < n_jobs * n_links; i++) {
        if (!(req[i] >= 0) || !isfinite(req[i]))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "allotment: job %zu needs %g Mbit/s on link %zu", i / n_links,
                                 req[i], i % n_links);
    }
    double demand[ACC_POLICY_MAX_CLUSTERS] = {0};
    for (size_t j = 0; j < n_jobs; j++) {
        sd[j] = 1.0;
        for (size_t k = 0; k < n_links; k++)
            demand[k] += req[j * n_links + k];
    }
    if (rule == ACC_ALLOT_MIN_RULE) {
        for (size_t j = 0; j < n_jobs; j++) {
            for (size_t k = 0; k < n_links; k++) {
                double sat = acc_bw_saturation(bw_max[k], demand[k]);
                if (req[j * n_links + k] > 0 && sat < sd[j])
                    sd[j] = sat;
            }
        }
        return ACC_OK;
    }
    /* Progressive filling: every job not yet frozen holds the common level
     * t; raise t to the first link that fills (or to 1), freeze the jobs on
     * that link, and go on with the rest.  Each pass freezes at least one
     * job, so there are at most n_jobs passes. */
    bool active[ACC_BW_MAX_JOBS];
    size_t n_active = 0;
    for (size_t j = 0; j < n_jobs; j++) {
        active[j] = false;
        for (size_t k = 0; k < n_links; k++)
            active[j] = active[j] || req[j * n_links + k] > 0;
        n_active += active[j];
    }
    double frozen[ACC_POLICY_MAX_CLUSTERS] = {0};
    while (n_active > 0) {
        double act[ACC_POLICY_MAX_CLUSTERS] = {0}, t = 1.0;
        for (size_t j = 0; j < n_jobs; j++) {
            for (size_t k = 0; active[j] && k < n_links; k++)
                act[k] += req[j * n_links + k];
        }
        for (size_t k = 0; k < n_links; k++) {
            if (act[k] > 0) {
                double room = (bw_max[k] - frozen[k]) / act[k];
                t = room < t ? room : t;
            }
        }
        t = t < 0 ? 0 : t;
        bool full[ACC_POLICY_MAX_CLUSTERS];
        for (size_t k = 0; k < n_links; k++)
            full[k] = act[k] > 0 && frozen[k] + t * act[k] >= bw_max[k] * (1 - 1e-12);
        for (size_t j = 0; j < n_jobs; j++) {
            if (!active[j])
                continue;
            bool stop = t >= 1.0;
            for (size_t k = 0; k < n_links && !stop; k++)
                stop = full[k] && req[j * n_links + k] > 0;
            if (!stop)
                continue;
            sd[j] = t;
            active[j] = false;
            n_active--;
            for (size_t k = 0; k < n_links; k++)
                frozen[k] += t * req[j * n_links + k];
        }
    }
    return ACC_OK;
}

acc_err acc_bw_residual_start(double t_e, double k, double sd, struct acc_bw_residual *r,
                              struct acc_error *err)
{
    if (!(t_e >= 0) || !isfinite(t_e) || !(k >= 0 && k <= 1) || !(sd > 0 && sd <= 1))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "residual time: T_E %g, K %g, sd %g (T_E >= 0, K in [0, 1], sd in "
                             "(0, 1] needed)",
                             t_e, k, sd);
    r->tp = k * t_e;
    r->tc = (1 - k) * t_e / sd;
    r->sd = sd;
    return ACC_OK;
}

acc_err acc_bw_residual_update(struct acc_bw_residual *r, double dt, double sd_new,
                               struct acc_error *err)
{
    if (!(sd_new > 0 && sd_new <= 1) || isnan(dt))
        return acc_error_set(err, ACC_ERR_INVALID, "residual time: sd %g (in (0, 1] needed), dt %g",
                             sd_new, dt);
    double te = r->tp + r->tc;
    dt = dt < 0 ? 0 : dt > te ? te : dt;
    if (te > 0) {
        double dp = dt / te * r->tp, dc = dt / te * r->tc; /* eq. (6) */
        r->tp -= dp;                                       /* eq. (5) */
        r->tc = (r->tc - dc) * r->sd / sd_new;
    }
    r->sd = sd_new;
    return ACC_OK;
}

double acc_bw_residual_left(const struct acc_bw_residual *r)
{
    return r->tp + r->tc;
}
