/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_params.c - the parameters of one run: defaults (docs/science.md section 5)
 * and one table of keys, each with its type, bounds and meaning, so the
 * parser, the checks and docs/simulator.md name the same keys. */
#include "wsim.h"
#include "wsim_internal.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void wsim_params_init(struct wsim_params *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "run");
    snprintf(p->policy_name, sizeof p->policy_name, "GS");
    p->nclusters = 4;
    for (int i = 0; i < 4; i++)
        p->size[i] = 32;
    p->disc = WSIM_D_FCFS;
    p->fcfs = WSIM_GS;
    p->order = WSIM_ORD_DO;
    p->lpvar = WSIM_LP_GF;
    p->gp_locals_join = true;
    p->b3_fraction = 0.7;
    p->b3_round = WSIM_ROUND_CEIL;
    p->ideal_placement = WSIM_J_INITIAL;
    p->triggers = WSIM_TRIG_EVENTS;
    p->lslt = 1.0;
    p->reserve_candidates = 32;
    p->ext = 1.0;
    for (int i = 0; i <= WSIM_MAX_CLUSTERS; i++)
        p->ccr_m[i] = p->ccr_m_slow[i] = 1.0;
    for (int i = 0; i < WSIM_MAX_CLUSTERS; i++) {
        p->link_mbps[i] = 1000;
        p->routing[i] = 1;
    }
    p->bsbw = 500;
    p->kfrac = 0.7;
    p->wl = WSIM_W_SYNTH;
    p->composition[0] = 100;
    p->comp_size.kind = WSIM_DIST_CONST;
    p->comp_size.a = 1;
    p->total_size.kind = WSIM_DIST_CONST;
    p->total_size.a = 1;
    p->service.kind = WSIM_DIST_EXP;
    p->service.a = 1;
    p->split = WSIM_SPLIT_NONE;
    p->split_limit = 32;
    p->load = 0.5;
    p->jobs = 10000;
    p->warmup = 1000;
    p->replications = 5;
    p->ci_level = 0.95;
    p->sat_factor = 2.0;
    p->sat_min = 50;
    p->seed = 1;
}

void wsim_params_release(struct wsim_params *p)
{
    wsim_dist_release(&p->comp_size);
    wsim_dist_release(&p->total_size);
    wsim_dist_release(&p->service);
}

/* ---- value parsers */

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno)
        return false;
    *out = v;
    return true;
}

/* "a,b,c" into at most max doubles; the count in *n. */
static bool parse_list(const char *s, double *out, int max, int *n)
{
    *n = 0;
    while (*s) {
        if (*n >= max)
            return false;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v))
            return false;
        out[(*n)++] = v;
        s = end;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else if (*s)
            return false;
        while (*s == ' ')
            s++;
    }
    return *n > 0;
}

/* ---- the policy names */
struct policy_name {
    const char *name;
    enum wsim_discipline disc;
    int policy, variant;
};

static const struct policy_name policies[] = {
    {"GS", WSIM_D_FCFS, WSIM_GS, 0},
    {"SC", WSIM_D_FCFS, WSIM_SC, 0},
    {"LS-OR", WSIM_D_FCFS, WSIM_LS, WSIM_ORD_OR},
    {"LS-RD", WSIM_D_FCFS, WSIM_LS, WSIM_ORD_RD},
    {"LS-RO", WSIM_D_FCFS, WSIM_LS, WSIM_ORD_RO},
    {"LS-DO", WSIM_D_FCFS, WSIM_LS, WSIM_ORD_DO},
    {"LS", WSIM_D_FCFS, WSIM_LS, WSIM_ORD_DO},
    {"GP", WSIM_D_FCFS, WSIM_GP, 0},
    {"LP-LF", WSIM_D_FCFS, WSIM_LP, WSIM_LP_LF},
    {"LP-GF", WSIM_D_FCFS, WSIM_LP, WSIM_LP_GF},
    {"LP-RD", WSIM_D_FCFS, WSIM_LP, WSIM_LP_RD},
    {"LP", WSIM_D_FCFS, WSIM_LP, WSIM_LP_GF},
    {"WF", WSIM_D_KOALA, WSIM_K_WF, 0},
    {"FCM", WSIM_D_KOALA, WSIM_K_FCM, 0},
    {"CA", WSIM_D_KOALA, WSIM_K_CA, 0},
    {"NOCO", WSIM_D_KOALA, WSIM_K_NONE, 0},
    {"MIG", WSIM_D_JONES, WSIM_J_MIG, 0},
    {"IDEAL", WSIM_D_JONES, WSIM_J_IDEAL, 0},
    {"INITIAL", WSIM_D_JONES, WSIM_J_INITIAL, 0},
    {"A1", WSIM_D_JONES, WSIM_J_A1, 0},
    {"B1", WSIM_D_JONES, WSIM_J_B1, 0},
    {"B2", WSIM_D_JONES, WSIM_J_B2, 0},
    {"B3", WSIM_D_JONES, WSIM_J_B3, 0},
    {"B4", WSIM_D_JONES, WSIM_J_B4, 0},
    {"AR", WSIM_D_RESERVE, 0, 0},
};

bool wsim_params_set_policy(struct wsim_params *p, const char *v, char *err, size_t len)
{
    /* B3-NN: B3 with the chunk NN% of the job. */
    if (!strncmp(v, "B3-", 3)) {
        long f;
        if (!parse_long(v + 3, &f) || f < 1 || f > 100)
            return wsim_errf(err, len, "B3-NN needs 1 <= NN <= 100 (the chunk, %% of the job)");
        p->disc = WSIM_D_JONES;
        p->jones = WSIM_J_B3;
        p->b3_fraction = (double)f / 100;
        snprintf(p->policy_name, sizeof p->policy_name, "%s", v);
        return true;
    }
    /* FCM-k: FCM limited to k clusters. */
    if (!strncmp(v, "FCM-", 4)) {
        long k;
        if (!parse_long(v + 4, &k) || k < 1 || k > WSIM_MAX_CLUSTERS)
            return wsim_errf(err, len, "FCM-k needs 1 <= k <= %d", WSIM_MAX_CLUSTERS);
        p->disc = WSIM_D_KOALA;
        p->koala = WSIM_K_FCM;
        p->maxc = (int)k;
        snprintf(p->policy_name, sizeof p->policy_name, "%s", v);
        return true;
    }
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        const struct policy_name *n = &policies[i];
        if (strcmp(n->name, v))
            continue;
        p->disc = n->disc;
        if (n->disc == WSIM_D_FCFS) {
            p->fcfs = (enum wsim_fcfs)n->policy;
            if (n->policy == WSIM_LS)
                p->order = (enum wsim_order)n->variant;
            if (n->policy == WSIM_LP)
                p->lpvar = (enum wsim_lpvar)n->variant;
        } else if (n->disc == WSIM_D_KOALA) {
            p->koala = (enum wsim_koala)n->policy;
            p->maxc = 0;
        } else if (n->disc == WSIM_D_JONES) {
            p->jones = (enum wsim_jones)n->policy;
        }
        snprintf(p->policy_name, sizeof p->policy_name, "%s", v);
        return true;
    }
    return wsim_errf(
        err, len,
        "unknown policy \"%s\" (GS, SC, LS-OR/RD/RO/DO, GP, LP-LF/GF/RD, WF, FCM, FCM-k, "
        "CA, NOCO, MIG, IDEAL, INITIAL, A1, B1-B4, AR)",
        v);
}

/* ---- the key table */
enum ktype { K_INT, K_LONG, K_DOUBLE, K_BOOL, K_ENUM, K_DIST, K_STR, K_SPECIAL };

struct key {
    const char *name;
    enum ktype type;
    size_t off;
    double lo, hi;
    const char *const *names; /* K_ENUM, NULL-terminated, in the enum's order */
};

#define F(field) offsetof(struct wsim_params, field)

static const char *const comm_names[] = {"none", "extension", "table", "ccr", "bandwidth", NULL};
static const char *const wl_names[] = {"synthetic", "total", "banen", "swf", NULL};
static const char *const app_names[] = {"poisson", "ensflow", "mix", NULL};
static const char *const rule_names[] = {"no", "co", "rco", "fco", NULL};
static const char *const order_names[] = {"OR", "RD", "RO", "DO", NULL};
static const char *const bsbw_names[] = {"A", "B", NULL};
static const char *const allot_names[] = {"min", "fill", NULL};
static const char *const chunk_names[] = {"most-free", "best-fit", NULL};
static const char *const discount_names[] = {">", ">=", NULL};
static const char *const ties_names[] = {"index", "random", NULL};
static const char *const round_names[] = {"ceil", "floor", "nearest", NULL};
static const char *const a1_order_names[] = {"free", "index", NULL};
static const char *const a1_solution_names[] = {"first", "least-link", NULL};
static const char *const bw_avail_names[] = {"requirement", "measured", NULL};
/* In enum wsim_jones's order; only the co-allocating modules may be set. */
static const char *const ideal_names[] = {"-", "-", "initial", "a1", "b1", "b2", "b3", "b4", NULL};
static const char *const trigger_names[] = {"events", "departures", "periodic", NULL};
static const char *const ca_avg_names[] = {"all", "idle", NULL};

static const struct key keys[] = {
    {"name", K_STR, F(name), 0, 0, NULL},
    {"policy", K_SPECIAL, 0, 0, 0, NULL},
    {"clusters", K_SPECIAL, 0, 0, 0, NULL},
    {"slow_clusters", K_SPECIAL, 0, 0, 0, NULL},
    {"latency", K_SPECIAL, 0, 0, 0, NULL},
    {"ties", K_ENUM, F(random_ties), 0, 0, ties_names},
    {"local_order", K_ENUM, F(lorder), 0, 0, order_names},
    {"gp_locals_join", K_BOOL, F(gp_locals_join), 0, 0, NULL},
    {"scan_period", K_DOUBLE, F(scan_period), 0, 1e9, NULL},
    {"startup", K_DOUBLE, F(startup), 0, 1e9, NULL},
    {"b3_fraction", K_DOUBLE, F(b3_fraction), 0.01, 1, NULL},
    {"b3_chunk", K_ENUM, F(b3_best_fit), 0, 0, chunk_names},
    {"b3_round", K_ENUM, F(b3_round), 0, 0, round_names},
    {"b4_start", K_SPECIAL, 0, 0, 0, NULL},
    {"a1_order", K_ENUM, F(a1_index), 0, 0, a1_order_names},
    {"a1_solution", K_ENUM, F(a1_best), 0, 0, a1_solution_names},
    {"bw_avail", K_ENUM, F(bw_measured), 0, 0, bw_avail_names},
    {"ideal_placement", K_ENUM, F(ideal_placement), 0, 0, ideal_names},
    {"triggers", K_ENUM, F(triggers), 0, 0, trigger_names},
    {"ca_average", K_ENUM, F(ca_idle), 0, 0, ca_avg_names},
    {"lslt", K_DOUBLE, F(lslt), 0, 100, NULL},
    {"discount", K_ENUM, F(discount_ge), 0, 0, discount_names},
    {"reserve_candidates", K_INT, F(reserve_candidates), 1, 1024, NULL},
    {"comm", K_ENUM, F(comm), 0, 0, comm_names},
    {"extension", K_DOUBLE, F(ext), 0.01, 1000, NULL},
    {"ccr", K_DOUBLE, F(ccr), 0, 1000, NULL},
    {"ccr_m", K_SPECIAL, 0, 0, 0, NULL},
    {"ccr_m_slow", K_SPECIAL, 0, 0, 0, NULL},
    {"link_mbps", K_SPECIAL, 0, 0, 0, NULL},
    {"bsbw", K_DOUBLE, F(bsbw), 0, 1e9, NULL},
    {"bsbw_reading", K_ENUM, F(bsbw_reading_b), 0, 0, bsbw_names},
    {"allotment", K_ENUM, F(progressive_fill), 0, 0, allot_names},
    {"comp_fraction", K_DOUBLE, F(kfrac), 0, 1, NULL},
    {"workload", K_ENUM, F(wl), 0, 0, wl_names},
    {"composition", K_SPECIAL, 0, 0, 0, NULL},
    {"component_size", K_DIST, F(comp_size), 0, 0, NULL},
    {"size", K_DIST, F(total_size), 0, 0, NULL},
    {"service", K_DIST, F(service), 0, 0, NULL},
    {"split", K_SPECIAL, 0, 0, 0, NULL},
    {"app", K_ENUM, F(app), 0, 0, app_names},
    {"rule", K_ENUM, F(rule), 0, 0, rule_names},
    {"trace", K_STR, F(trace), 0, 0, NULL},
    {"routing", K_SPECIAL, 0, 0, 0, NULL},
    {"load", K_DOUBLE, F(load), 0, 100, NULL},
    {"interarrival", K_DOUBLE, F(interarrival), 0, 1e12, NULL},
    {"jobs", K_LONG, F(jobs), 1, 50000000, NULL},
    {"warmup", K_LONG, F(warmup), 0, 50000000, NULL},
    {"replications", K_INT, F(replications), 1, 1000, NULL},
    {"ci_level", K_DOUBLE, F(ci_level), 0.5, 0.999, NULL},
    {"sat_factor", K_DOUBLE, F(sat_factor), 1, 1e6, NULL},
    {"sat_min", K_LONG, F(sat_min), 0, 1000000000, NULL},
    {"seed", K_LONG, F(seed), 0, 9.2e18, NULL},
};

bool wsim_params_set_clusters(struct wsim_params *p, const int64_t *sizes, int n, char *err,
                              size_t len)
{
    if (n < 1 || n > WSIM_MAX_CLUSTERS)
        return wsim_errf(err, len, "clusters: 1 to %d sizes separated by commas",
                         WSIM_MAX_CLUSTERS);
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 1 || sizes[i] > 1000000)
            return wsim_errf(err, len, "clusters: sizes are integers in 1..1000000");
    }
    p->nclusters = n;
    for (int i = 0; i < n; i++)
        p->size[i] = (int)sizes[i];
    return true;
}

static bool set_clusters(struct wsim_params *p, const char *v, char *err, size_t len)
{
    double l[WSIM_MAX_CLUSTERS];
    int64_t sizes[WSIM_MAX_CLUSTERS];
    int n;
    if (!parse_list(v, l, WSIM_MAX_CLUSTERS, &n))
        return wsim_errf(err, len, "clusters: 1 to %d sizes separated by commas",
                         WSIM_MAX_CLUSTERS);
    for (int i = 0; i < n; i++) {
        if (l[i] < 1 || l[i] > 1000000 || l[i] != floor(l[i]))
            return wsim_errf(err, len, "clusters: sizes are integers in 1..1000000");
        sizes[i] = (int64_t)l[i];
    }
    return wsim_params_set_clusters(p, sizes, n, err, len);
}

static bool set_slow_clusters(struct wsim_params *p, const char *v, char *err, size_t len)
{
    double l[WSIM_MAX_CLUSTERS];
    int n;
    bool s[WSIM_MAX_CLUSTERS] = {false};
    if (strcmp(v, "none")) {
        if (!parse_list(v, l, WSIM_MAX_CLUSTERS, &n))
            return wsim_errf(err, len, "slow_clusters: cluster indexes (from 1) or none");
        for (int i = 0; i < n; i++) {
            if (l[i] < 1 || l[i] > WSIM_MAX_CLUSTERS || l[i] != floor(l[i]))
                return wsim_errf(err, len, "slow_clusters: indexes from 1 to %d",
                                 WSIM_MAX_CLUSTERS);
            s[(int)l[i] - 1] = true;
        }
    }
    memcpy(p->slow_link, s, sizeof s);
    return true;
}

/* Row by row, C x C values. */
static bool set_latency(struct wsim_params *p, const char *v, char *err, size_t len)
{
    double l[WSIM_MAX_CLUSTERS * WSIM_MAX_CLUSTERS];
    int n;
    if (!parse_list(v, l, WSIM_MAX_CLUSTERS * WSIM_MAX_CLUSTERS, &n))
        return wsim_errf(err, len, "latency: C x C numbers, row by row");
    int c = (int)lround(sqrt((double)n));
    if (c * c != n)
        return wsim_errf(err, len, "latency: %d values is not a square matrix", n);
    for (int i = 0; i < c; i++) {
        for (int j = 0; j < c; j++) {
            if (l[i * c + j] < 0 || l[i * c + j] != l[j * c + i])
                return wsim_errf(err, len, "latency: values >= 0, symmetric");
        }
    }
    for (int i = 0; i < c; i++) {
        for (int j = 0; j < c; j++)
            p->latency[i][j] = l[i * c + j];
    }
    return true;
}

static bool is_numbers_key(const char *key)
{
    return !strcmp(key, "ccr_m") || !strcmp(key, "ccr_m_slow") || !strcmp(key, "link_mbps") ||
           !strcmp(key, "routing") || !strcmp(key, "composition");
}

/* The keys that take a list of numbers >= 0, one per cluster (or per
 * number of clusters): ccr_m, ccr_m_slow, link_mbps, routing, composition. */
static bool set_numbers(struct wsim_params *p, const char *key, const char *v, char *err,
                        size_t len)
{
    double l[WSIM_MAX_CLUSTERS];
    int n;
    if (!parse_list(v, l, WSIM_MAX_CLUSTERS, &n))
        return wsim_errf(err, len, "%s: 1 to %d numbers separated by commas", key,
                         WSIM_MAX_CLUSTERS);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (l[i] < 0)
            return wsim_errf(err, len, "%s: numbers >= 0", key);
        sum += l[i];
    }
    if (!strcmp(key, "ccr_m") || !strcmp(key, "ccr_m_slow")) {
        /* The factor for 1, 2, ... clusters; the last repeats. */
        double *m = !strcmp(key, "ccr_m") ? p->ccr_m : p->ccr_m_slow;
        for (int i = 1; i <= WSIM_MAX_CLUSTERS; i++)
            m[i] = l[i - 1 < n ? i - 1 : n - 1];
        m[0] = m[1];
    } else if (!strcmp(key, "link_mbps")) {
        for (int i = 0; i < WSIM_MAX_CLUSTERS; i++) {
            if (l[i < n ? i : n - 1] <= 0)
                return wsim_errf(err, len, "link_mbps: capacities > 0");
            p->link_mbps[i] = l[i < n ? i : n - 1];
        }
    } else {
        if (sum <= 0)
            return wsim_errf(err, len, "%s: the weights add up to 0", key);
        double *dst = !strcmp(key, "routing") ? p->routing : p->composition;
        for (int i = 0; i < WSIM_MAX_CLUSTERS; i++)
            dst[i] = i < n ? l[i] : 0;
    }
    return true;
}

static bool set_split(struct wsim_params *p, const char *v, char *err, size_t len)
{
    long lim;
    if (!strcmp(v, "none")) {
        p->split = WSIM_SPLIT_NONE;
    } else if (!strcmp(v, "flexible")) {
        p->split = WSIM_SPLIT_FLEX;
    } else if (!strncmp(v, "limit:", 6) && parse_long(v + 6, &lim) && lim >= 1 && lim <= 1000000) {
        p->split = WSIM_SPLIT_LIMIT;
        p->split_limit = (int)lim;
    } else {
        return wsim_errf(err, len, "split: none, flexible or limit:L (L >= 1)");
    }
    return true;
}

/* The keys of the table marked K_SPECIAL. */
static bool set_special(struct wsim_params *p, const char *key, const char *v, char *err,
                        size_t len)
{
    if (!strcmp(key, "policy"))
        return wsim_params_set_policy(p, v, err, len);
    if (!strcmp(key, "clusters"))
        return set_clusters(p, v, err, len);
    if (!strcmp(key, "slow_clusters"))
        return set_slow_clusters(p, v, err, len);
    if (!strcmp(key, "latency"))
        return set_latency(p, v, err, len);
    if (is_numbers_key(key))
        return set_numbers(p, key, v, err, len);
    if (!strcmp(key, "split"))
        return set_split(p, v, err, len);
    if (!strcmp(key, "b4_start")) {
        long c;
        if (!parse_long(v, &c) || c < 1 || c > WSIM_MAX_CLUSTERS)
            return wsim_errf(err, len, "b4_start: a cluster from 1 to %d", WSIM_MAX_CLUSTERS);
        p->b4_start = (int)c - 1;
        return true;
    }
    return wsim_errf(err, len, "unknown key \"%s\"", key);
}

bool wsim_params_set(struct wsim_params *p, const char *key, const char *value, const char *dir,
                     char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct key *k = &keys[i];
        if (strcmp(k->name, key))
            continue;
        char *field = (char *)p + k->off;
        double d;
        long l;
        switch (k->type) {
        case K_INT:
        case K_LONG:
            if (!parse_long(value, &l) || l < k->lo || l > k->hi)
                return wsim_errf(err, errlen, "%s: an integer in %.0f..%.0f", key, k->lo, k->hi);
            if (k->type == K_INT)
                *(int *)field = (int)l;
            else if (!strcmp(key, "seed"))
                *(uint64_t *)field = (uint64_t)l;
            else
                *(long *)field = l;
            return true;
        case K_DOUBLE:
            if (!parse_double(value, &d) || d < k->lo || d > k->hi)
                return wsim_errf(err, errlen, "%s: a number in %g..%g", key, k->lo, k->hi);
            *(double *)field = d;
            return true;
        case K_BOOL:
            if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1"))
                *(bool *)field = true;
            else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
                *(bool *)field = false;
            else
                return wsim_errf(err, errlen, "%s: yes or no", key);
            return true;
        case K_ENUM:
            for (int j = 0; k->names[j]; j++) {
                if (strcmp(k->names[j], value) || !strcmp(value, "-"))
                    continue;
                /* bool-valued two-name enums are stored as bool */
                if (k->names[2] == NULL)
                    *(bool *)field = j == 1;
                else
                    *(int *)field = j;
                return true;
            }
            {
                char all[160] = "";
                for (int j = 0; k->names[j]; j++) {
                    size_t used = strlen(all);
                    if (strcmp(k->names[j], "-"))
                        snprintf(all + used, sizeof all - used, "%s%s", used ? ", " : "",
                                 k->names[j]);
                }
                return wsim_errf(err, errlen, "%s: one of %s", key, all);
            }
        case K_DIST:
            return wsim_dist_parse((struct wsim_dist_spec *)field, value, dir, err, errlen);
        case K_STR:
            if (strlen(value) >= (k->off == F(name) ? WSIM_MAX_NAME : 256))
                return wsim_errf(err, errlen, "%s: too long", key);
            snprintf(field, k->off == F(name) ? WSIM_MAX_NAME : 256, "%s", value);
            return true;
        case K_SPECIAL:
            return set_special(p, key, value, err, errlen);
        }
    }
    return wsim_errf(err, errlen, "unknown key \"%s\"", key);
}

bool wsim_params_check(const struct wsim_params *p, char *err, size_t len)
{
    if (p->warmup >= p->jobs && p->wl != WSIM_W_SWF)
        return wsim_errf(err, len, "warmup (%ld) must be smaller than jobs (%ld)", p->warmup,
                         p->jobs);
    if (p->disc == WSIM_D_FCFS && p->fcfs == WSIM_SC && p->nclusters != 1)
        return wsim_errf(err, len,
                         "SC is the single-cluster policy: clusters must name one cluster");
    if (p->disc == WSIM_D_RESERVE && p->comm == WSIM_C_BW)
        return wsim_errf(err, len,
                         "the reservation mode books fixed durations: comm = bandwidth "
                         "needs a queue discipline");
    if (p->wl == WSIM_W_SWF && !p->trace[0])
        return wsim_errf(err, len, "workload = swf needs trace = FILE");
    if (p->wl != WSIM_W_SWF && p->load <= 0 && p->interarrival <= 0)
        return wsim_errf(err, len, "a synthetic workload needs load > 0 or interarrival > 0");
    if (p->comm == WSIM_C_TABLE && p->wl != WSIM_W_BANEN)
        return wsim_errf(err, len, "comm = table uses the run-time tables of workload = banen");
    if (p->wl == WSIM_W_SYNTH) {
        double sum = 0;
        for (int i = 0; i < WSIM_MAX_COMP; i++) {
            if (p->composition[i] > 0 && i >= p->nclusters && p->disc == WSIM_D_FCFS &&
                p->fcfs != WSIM_SC)
                return wsim_errf(err, len, "composition: jobs of %d components on %d clusters",
                                 i + 1, p->nclusters);
            sum += p->composition[i];
        }
        if (sum <= 0)
            return wsim_errf(err, len, "composition: no job has a number of components");
    }
    double rsum = 0;
    for (int i = 0; i < p->nclusters; i++)
        rsum += p->routing[i];
    if (rsum <= 0)
        return wsim_errf(err, len, "routing: the clusters' weights add up to 0");
    if (p->b4_start >= p->nclusters)
        return wsim_errf(err, len, "b4_start: cluster %d of %d", p->b4_start + 1, p->nclusters);
    if (p->disc == WSIM_D_JONES && p->triggers == WSIM_TRIG_PERIODIC && p->scan_period <= 0)
        return wsim_errf(err, len, "triggers = periodic needs scan_period > 0");
    if (p->disc == WSIM_D_KOALA && p->koala == WSIM_K_CA) {
        bool any = false;
        for (int i = 0; i < p->nclusters; i++)
            any = any || p->latency[i][i] > 0;
        if (!any)
            return wsim_errf(err, len, "CA needs latency = the C x C matrix");
    }
    return true;
}

const char *wsim_params_enum_name(const struct wsim_params *p, const char *key)
{
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        if (keys[k].type != K_ENUM || strcmp(keys[k].name, key))
            continue;
        const char *field = (const char *)p + keys[k].off;
        return keys[k].names[keys[k].names[2] ? *(const int *)field : *(const bool *)field];
    }
    return NULL;
}
