/* SPDX-License-Identifier: Apache-2.0 */
/* config_policy.c - the [policy] section (the latency matrix and the open
 * points of the placement policies) and which policies accordd runs.
 *
 *   [policy]
 *   latency = a b 2.5      one line per pair of sites (either order), any
 *   latency = a a 0.1      unit; a site with itself: intracluster (default 0)
 *   max_clusters = 2       most sites a flexible request is split over
 *   ca_average = all       CA's mean latency over all sites, or idle ones
 *   tiebreak = lowest      or random (seeded per agreement from seed)
 *   seed = 1
 */
#include "config_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"

#define MAX_LATENCIES 4096 /* lines; 64 sites need 2080 */
#define MAX_LATENCY   1e9  /* any unit, but finite */

static int latency_key(struct cfg_parse *p, const char *v)
{
    struct acc_config *c = p->c;
    char a[80], b[80], num[64], extra[2];
    if (sscanf(v, "%79s %79s %63s %1s", a, b, num, extra) != 3)
        return cfg_bad(p, "policy", "latency: 'SITE SITE VALUE', got '%.80s'", v);
    char *end = NULL;
    double d = strtod(num, &end);
    if (!end || *end || !isfinite(d) || d < 0 || d > MAX_LATENCY)
        return cfg_bad(p, "policy", "latency %s %s: '%s' is not a number from 0 to %g", a, b, num,
                       MAX_LATENCY);
    if (c->n_latencies == MAX_LATENCIES)
        return cfg_bad(p, "policy", "latency: more than %d lines", MAX_LATENCIES);
    void *grown = realloc(c->latencies, (c->n_latencies + 1) * sizeof *c->latencies);
    if (!grown)
        return 0;
    c->latencies = grown;
    struct acc_latency_cfg *l = &c->latencies[c->n_latencies];
    l->a = strdup(a);
    l->b = strdup(b);
    l->value = d;
    l->line = p->rep.line;
    if (!l->a || !l->b) {
        free(l->a);
        free(l->b);
        return 0;
    }
    c->n_latencies++;
    return 1;
}

int cfg_policy_key(struct cfg_parse *p, const char *k, const char *v)
{
    struct acc_policy_opts *o = &p->c->policy_options;
    struct acc_error e;
    int64_t n;
    if (strcmp(k, "latency") == 0)
        return latency_key(p, v);
    if (strcmp(k, "max_clusters") == 0) {
        if (acc_parse_i64(v, 0, ACC_POLICY_MAX_CLUSTERS, &n, &e))
            return cfg_bad(p, "policy", "max_clusters (0: all sites): %s", e.msg);
        o->max_clusters = (size_t)n;
    } else if (strcmp(k, "ca_average") == 0) {
        if (strcmp(v, "all") == 0)
            o->ca_avg = ACC_CA_AVG_ALL;
        else if (strcmp(v, "idle") == 0)
            o->ca_avg = ACC_CA_AVG_IDLE;
        else
            return cfg_bad(p, "policy",
                           "ca_average is all (over every site) or idle (over sites with idle "
                           "nodes)");
    } else if (strcmp(k, "tiebreak") == 0) {
        if (strcmp(v, "lowest") == 0)
            o->tiebreak = ACC_TIE_LOWEST;
        else if (strcmp(v, "random") == 0)
            o->tiebreak = ACC_TIE_RANDOM;
        else
            return cfg_bad(p, "policy", "tiebreak is lowest (the site configured first) or random");
    } else if (strcmp(k, "seed") == 0) {
        if (acc_parse_i64(v, 0, INT64_MAX, &n, &e))
            return cfg_bad(p, "policy", "seed: %s", e.msg);
        p->c->policy_seed = (uint64_t)n;
    } else {
        return cfg_bad(p, "policy",
                       "unknown key '%s' (latency, max_clusters, ca_average, tiebreak, seed)", k);
    }
    return 1;
}

static acc_err site_index(const struct acc_config *c, const char *name, size_t *out,
                          struct acc_error *err)
{
    for (size_t i = 0; i < c->res.n_sites; i++) {
        if (strcmp(c->res.sites[i].name, name) == 0) {
            *out = i;
            return ACC_OK;
        }
    }
    return acc_error_set(err, ACC_ERR_CONFIG, "[policy] latency names '%s', which is not a site",
                         name);
}

/* The matrix from the lines: symmetric, every pair given once (a site with
 * itself defaults to 0). */
static acc_err build_matrix(struct acc_config *c, int *line, struct acc_error *err)
{
    size_t n = c->res.n_sites;
    if (c->n_latencies == 0)
        return ACC_OK;
    if (n > ACC_POLICY_MAX_CLUSTERS)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[policy] latency: the policies place on at most %d sites, and %zu "
                             "are configured",
                             ACC_POLICY_MAX_CLUSTERS, n);
    double *m = malloc(n * n * sizeof *m);
    if (!m)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n * n; i++)
        m[i] = -1;
    acc_err rc = ACC_OK;
    for (size_t k = 0; k < c->n_latencies && !rc; k++) {
        const struct acc_latency_cfg *l = &c->latencies[k];
        size_t a = 0, b = 0;
        *line = l->line;
        if ((rc = site_index(c, l->a, &a, err)) || (rc = site_index(c, l->b, &b, err)))
            break;
        if (m[a * n + b] >= 0)
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "[policy] latency between %s and %s is given twice", l->a, l->b);
        else
            m[a * n + b] = m[b * n + a] = l->value;
    }
    if (!rc)
        *line = 0; /* a pair missing: no line of its own */
    for (size_t a = 0; a < n && !rc; a++) {
        if (m[a * n + a] < 0)
            m[a * n + a] = 0;
        for (size_t b = a + 1; b < n && !rc; b++) {
            if (m[a * n + b] < 0)
                rc = acc_error_set(err, ACC_ERR_CONFIG,
                                   "[policy] latency: none given between %s and %s (give every "
                                   "pair of sites: latency = %s %s VALUE)",
                                   c->res.sites[a].name, c->res.sites[b].name, c->res.sites[a].name,
                                   c->res.sites[b].name);
        }
    }
    if (rc) {
        free(m);
        return rc;
    }
    c->latency = m;
    return ACC_OK;
}

acc_err acc_config_policy(const struct acc_config *c, const char *name, struct acc_policy_opts *out,
                          struct acc_error *err)
{
    struct acc_policy_opts named = c->policy;
    if (name) {
        acc_policy_opts_init(&named, ACC_POLICY_EARLIEST);
        if (!acc_policy_parse(name, &named))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "placement policy '%.40s' is unknown (accordd runs earliest, "
                                 "worst-fit, worst-fit-distinct, single, fcm, fcm-K, ca, mig and "
                                 "initial)",
                                 name);
    }
    const char *pn = acc_policy_name(named.id);
    switch (named.id) {
    case ACC_POLICY_LA:
    case ACC_POLICY_MIGRATION:
        return acc_error_set(err, ACC_ERR_INVALID,
                             "placement policy %s first tries the job's home site (Jones et al.'s "
                             "local attempt), and an offer names none; mig (best fit) or initial "
                             "place without one",
                             pn);
    case ACC_POLICY_A1:
    case ACC_POLICY_B1:
    case ACC_POLICY_B2:
    case ACC_POLICY_B3:
    case ACC_POLICY_B4:
        return acc_error_set(err, ACC_ERR_INVALID,
                             "placement policy %s weighs each site's link to a central switch and "
                             "the bandwidth the running co-allocated jobs use on it (Jones et "
                             "al.'s star network); accordd's links join pairs of sites and it "
                             "keeps no per-link load of running jobs, so it does not run %s (the "
                             "simulator does)",
                             pn, pn);
    case ACC_POLICY_CA:
        if (!c->latency)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "placement policy ca needs the latency between every pair of "
                                 "sites, and this accordd has none: [policy] latency = A B VALUE");
        break;
    default:
        break;
    }
    *out = c->policy_options;
    out->id = named.id;
    out->rng = NULL;
    out->local_first = false; /* no home site: Jones's template starts at MIG */
    if (named.max_clusters)
        out->max_clusters = named.max_clusters; /* fcm-K */
    return ACC_OK;
}

acc_err cfg_policy_finish(struct acc_config *c, struct acc_conf_report *r)
{
    acc_err rc = ACC_OK;
    struct acc_error e;
    int line = 0;
    if (build_matrix(c, &line, &e))
        rc = acc_conf_report_after_at(r, line, "latency", &e);
    struct acc_policy_opts o;
    if (acc_config_policy(c, NULL, &o, &e))
        rc = acc_conf_report_after(r, "negotiation", "policy", "policy: %s", e.msg);
    return rc;
}

void cfg_policy_release(struct acc_config *c)
{
    for (size_t i = 0; i < c->n_latencies; i++) {
        free(c->latencies[i].a);
        free(c->latencies[i].b);
    }
    free(c->latencies);
    free(c->latency);
    c->latencies = NULL;
    c->latency = NULL;
    c->n_latencies = 0;
}
