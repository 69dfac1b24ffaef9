/* SPDX-License-Identifier: Apache-2.0 */
/* policy.h - placement policies of the co-allocation literature and the
 * bandwidth model of Jones et al., as pure functions over plain data.
 *
 * The reference for every definition here is docs/science.md (the sections are
 * named at each function).  Nothing in this module knows HTTP, XML, SQL, a
 * calendar or the time of day: the caller hands in what the policy looks at
 * (idle counts, cluster sizes, a latency matrix, link capacities and loads),
 * a request and the policy's options, and gets a placement back.  accordd
 * (server/service/plan.c) and the what-if simulator accord-sim both use it.
 *
 * Units: sizes are allocation units (nodes in Accord), bandwidth Mbit/s,
 * latency any unit (only its order matters), time seconds.
 *
 * Every function is re-entrant; none allocates.  Functions that take
 * options return ACC_OK when the input was valid (whether or not the job
 * fits: see acc_placement.fits) and ACC_ERR_INVALID, with a message naming
 * the problem, for bad input (then *out is left cleared).
 */
#ifndef ACC_POLICY_H
#define ACC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/* Bounds: more clusters or components than these are bad input. */
#define ACC_POLICY_MAX_CLUSTERS 64
#define ACC_POLICY_MAX_PARTS    64

/* ---------------------------------------------------------------- inputs */

/* What a policy sees of the system at the moment of placement.  Arrays
 * are borrowed and indexed by cluster 0 .. n_clusters-1; the index is the
 * tie-break order ("lowest index"). */
struct acc_policy_system {
    size_t n_clusters;       /* 1 .. ACC_POLICY_MAX_CLUSTERS */
    const int64_t *idle;     /* idle (free) units per cluster now, >= 0; required */
    const int64_t *size;     /* cluster sizes; NULL: not used by any policy here */
    const double *latency;   /* n x n, row-major, symmetric, lat[c][c] intracluster;
                              * required by CA, else may be NULL */
    const double *link_max;  /* BW_i^max of cluster i's link to the centre (Jones
                              * §4.1); required by A1, B1-B4, else may be NULL */
    const double *link_load; /* sum of BW_i^j (eq. 1) of the co-allocated jobs
                              * now using link i; NULL: all links idle */
};

/* Request types (docs/science.md §1.2, §2.2). */
enum acc_request_type {
    ACC_REQ_FIXED,    /* component sizes and a cluster for each */
    ACC_REQ_NONFIXED, /* component sizes; the policy picks clusters
                       * (Bucur's "unordered" request is non-fixed placed
                       * by ACC_POLICY_WF_NOREP) */
    ACC_REQ_FLEXIBLE, /* a total only; the policy splits it */
    ACC_REQ_TOTAL     /* a total on one cluster (Bucur's total request) */
};

struct acc_policy_request {
    enum acc_request_type type;
    /* FIXED, NONFIXED: n_components in 1 .. ACC_POLICY_MAX_PARTS sizes >= 1 */
    size_t n_components;
    const int64_t *sizes;
    const size_t *clusters; /* FIXED only: the cluster of each component */
    /* FLEXIBLE, TOTAL: the total, >= 1 */
    int64_t total;
    /* FLEXIBLE only, bounds on the split (docs/science.md §1.2 defaults):
     * min_size: no part smaller (0 or 1: none); max_size: no part larger
     * (0: none); max_parts: at most so many parts (0: the number of
     * clusters).  A policy's own limit (FCM-k's k) applies as well. */
    int64_t min_size;
    int64_t max_size;
    size_t max_parts;
    /* Jones et al. (§4): the home cluster (LA) and the job's per-processor
     * bandwidth PPBW in Mbit/s (A1 needs it; 0 elsewhere). */
    size_t home;
    double ppbw;
};

/* ---------------------------------------------------------------- policies */

enum acc_policy_id {
    ACC_POLICY_EARLIEST,  /* Accord's own: no policy order; every assignment is a
                           * candidate and the earliest common slot wins */
    ACC_POLICY_WF,        /* KOALA Worst Fit, repeats allowed (§1.4); non-fixed */
    ACC_POLICY_WF_NOREP,  /* Bucur & Epema's WF without repetitions (§2.2) */
    ACC_POLICY_FCM,       /* Flexible Cluster Minimization (§1.4); FCM-k with
                           * opts.max_clusters = k; flexible */
    ACC_POLICY_CA,        /* Communication-Aware, latency option (§1.4); flexible */
    ACC_POLICY_SINGLE,    /* no co-allocation: the whole job as one component on
                           * the cluster with most idle units (WF), §1.2 */
    ACC_POLICY_LA,        /* Jones: run whole on the home cluster only */
    ACC_POLICY_MIG,       /* Jones: run whole on the cluster with the fewest free
                           * units that still fits (best fit) */
    ACC_POLICY_MIGRATION, /* Jones "Migration Only": LA, else MIG */
    ACC_POLICY_INITIAL,   /* Jones Initial Strategy (also Ideal's placement):
                           * greedy fill by free units descending, no
                           * discounting */
    ACC_POLICY_A1,        /* Jones A1 "Satisfy" (eq. 7-9) */
    ACC_POLICY_B1,        /* Jones B1 largest free first */
    ACC_POLICY_B2,        /* Jones B2 least saturated link first */
    ACC_POLICY_B3,        /* Jones B3 chunking big-small, fraction opts.b3_fraction */
    ACC_POLICY_B4,        /* Jones B4 load balancing (round robin) */
    ACC_POLICY__COUNT
};

enum acc_tiebreak {
    ACC_TIE_LOWEST, /* lowest cluster index (default, §0) */
    ACC_TIE_RANDOM  /* uniformly among equal keys, drawn from opts.rng */
};

enum acc_ca_avg {
    ACC_CA_AVG_ALL, /* avg[c] over every cluster of the set (default, §1.4) */
    ACC_CA_AVG_IDLE /* only over clusters with idle units */
};

enum acc_b3_chunk {
    ACC_B3_MOST_FREE, /* the chunk goes to the cluster with most free units (default) */
    ACC_B3_BEST_FIT   /* to the cluster with the fewest free units that takes it */
};

enum acc_round {
    ACC_ROUND_CEIL, /* default for B3's chunk */
    ACC_ROUND_FLOOR,
    ACC_ROUND_NEAREST /* halves up */
};

enum acc_a1_order {
    ACC_A1_FREE_DESC, /* clusters by free units descending (default) */
    ACC_A1_INDEX      /* clusters in index order */
};

/* Which solution of eq. (9) A1 takes (§4.5 "the first solution found"). */
enum acc_a1_solution {
    ACC_A1_FIRST,     /* the first found in the search order (default) */
    ACC_A1_LEAST_LINK /* the least total link requirement added (sum over
                       * the job's clusters of eq. 1, i.e. the largest sum
                       * of X_i^2), by branch and bound; ties: the first
                       * found */
};

/* A policy and the open points of its definition (docs/science.md §5).  Start
 * from acc_policy_opts_init, which sets the documented defaults. */
struct acc_policy_opts {
    enum acc_policy_id id;
    enum acc_tiebreak tiebreak;
    uint64_t *rng;       /* ACC_TIE_RANDOM: the caller's generator state
                          * (acc_policy_rand); advanced by each draw */
    size_t max_clusters; /* FCM-k, CA, INITIAL, B*: most clusters used (0: all) */
    enum acc_ca_avg ca_avg;
    /* Jones et al. */
    bool local_first;   /* A1, B1-B4, INITIAL: the §4.4 template (LA, then
                         * MIG, then the module); default true */
    double lslt;        /* link saturation level threshold, 1.0 = 100% */
    bool discount_ge;   /* class B discounts u_i >= LSLT (default: u_i > LSLT) */
    double b3_fraction; /* B3: the chunk is f * n_T, 0 < f <= 1 (default 0.7) */
    enum acc_round b3_round;
    enum acc_b3_chunk b3_chunk;
    size_t b4_start; /* B4: the round robin starts at this cluster index (0) */
    enum acc_a1_order a1_order;
    enum acc_a1_solution a1_solution;
    uint64_t a1_max_steps; /* A1: branch-and-bound steps before giving up
                            * (a FAIL, reported as no fit); default 1e6 */
};

/* Sets the defaults of docs/science.md §5: tie lowest index, max_clusters 0,
 * CA over all clusters, local_first, LSLT 1.0, discount '>', B3 f = 0.7
 * ceil most-free, B4 from index 0, A1 free-descending taking the first
 * solution, 1e6 steps. */
void acc_policy_opts_init(struct acc_policy_opts *o, enum acc_policy_id id);

/* Stable names, as used in the configuration and in offers:
 * "earliest", "worst-fit", "worst-fit-distinct", "fcm", "fcm-K" (FCM with
 * max_clusters = K >= 1), "ca", "single", "la", "mig", "migration",
 * "initial", "a1", "b1", "b2", "b3", "b4".  acc_policy_parse sets id
 * (and max_clusters for "fcm-K") in *o and leaves the rest alone; false
 * for an unknown name. */
const char *acc_policy_name(enum acc_policy_id id);
bool acc_policy_parse(const char *name, struct acc_policy_opts *o);

/* Which request types a policy places.  Every policy checks a FIXED
 * request as given and places a TOTAL request on one cluster (LA: home;
 * MIG, MIGRATION: best fit; others: most idle).  NONFIXED: EARLIEST, WF,
 * WF_NOREP, SINGLE (as one component of the sum).  FLEXIBLE: every policy
 * but WF and WF_NOREP (EARLIEST splits it as FCM does). */
bool acc_policy_accepts(enum acc_policy_id id, enum acc_request_type type);

/* The generator behind ACC_TIE_RANDOM (splitmix64): the next 64 random bits
 * from *state.  Deterministic for a seed, so the simulator's runs repeat. */
uint64_t acc_policy_rand(uint64_t *state);

/* ---------------------------------------------------------------- output */

/* Where each part of the job goes.  For FIXED and NONFIXED requests part i
 * is component comp[i] of the request, in the request's order (n equals
 * n_components); for FLEXIBLE and TOTAL requests the parts are the policy's
 * split, in the order the policy filled them, comp[i] = i. */
enum acc_policy_step {
    ACC_STEP_NONE, /* not a Jones policy, or no fit */
    ACC_STEP_LA,   /* placed whole on the home cluster */
    ACC_STEP_MIG,  /* placed whole elsewhere (migrated) */
    ACC_STEP_CO    /* placed by the co-allocation module */
};

struct acc_placement {
    bool fits; /* false: the job does not fit now (it waits); n = 0 */
    size_t n;
    size_t cluster[ACC_POLICY_MAX_PARTS];
    int64_t size[ACC_POLICY_MAX_PARTS];
    size_t comp[ACC_POLICY_MAX_PARTS];
    enum acc_policy_step step;
};

/* Units per cluster of a placement into per_cluster[0 .. n_clusters-1]. */
void acc_placement_per_cluster(const struct acc_placement *p, size_t n_clusters,
                               int64_t *per_cluster);

/* Number of distinct clusters a placement uses (>= 2: co-allocated). */
size_t acc_placement_n_clusters(const struct acc_placement *p);

/* ---------------------------------------------------------------- placing */

/* Places one request under one policy on the system as it is now
 * (docs/science.md §1.4, §2.2, §4.4-4.5).  ACC_OK with out->fits telling
 * whether it fits; ACC_ERR_INVALID for bad input (a NULL array the policy
 * needs, a size < 1, a cluster index out of range, a request type the
 * policy does not take, more than the bounds). */
acc_err acc_policy_place(const struct acc_policy_system *sys, const struct acc_policy_request *req,
                         const struct acc_policy_opts *opts, struct acc_placement *out,
                         struct acc_error *err);

/* Up to max candidate placements in the policy's order of preference, for
 * a caller (accordd) that books the first candidate with a common slot and
 * falls back to the next.  Candidate 1 is acc_policy_place's answer;
 * candidate k+1 is the policy's answer with the cluster holding the most
 * units of candidate k (lowest index on a tie) also taken out (idle 0), so
 * each fall-back avoids the cluster the previous one leaned on most.  The
 * sequence stops at the first no-fit or at max; a placement equal to an
 * earlier one is skipped.  A FIXED request has one candidate.  *n_out = 0
 * when nothing fits. */
acc_err acc_policy_candidates(const struct acc_policy_system *sys,
                              const struct acc_policy_request *req,
                              const struct acc_policy_opts *opts, struct acc_placement *out,
                              size_t max, size_t *n_out, struct acc_error *err);

/* Bucur & Epema's split of a total s over C clusters with component limit
 * L (§2.6): k = the smallest k in 1..C with ceil(s/k) <= L (else C); then
 * s mod k parts of ceil(s/k) and the rest of floor(s/k), largest first.
 * Writes k sizes to parts (room for C) and returns k; 0 for bad input
 * (s < 1, C < 1 or C > ACC_POLICY_MAX_PARTS, L < 1). */
size_t acc_policy_split_even(int64_t s, size_t C, int64_t L, int64_t *parts);

/* ---------------------------------------------------- bandwidth (Jones §4.3) */

/* Eq. (1): job j's requirement on the link of a cluster holding n_i of its
 * n_T nodes: n_i * ppbw * (n_T - n_i) / (n_T - 1); 0 when n_i <= 0,
 * n_i >= n_T or n_T < 2. */
double acc_bw_requirement(int64_t n_i, int64_t n_T, double ppbw);

/* A two-ended link of an application, n_a nodes on one side and n_b on
 * the other, all-to-all at ppbw per processor: eq. (1) with n_T = n_a +
 * n_b, which is the same on both sides (n_a * n_b * ppbw / (n_T - 1)). */
double acc_bw_pair(int64_t n_a, int64_t n_b, double ppbw);

/* Bandwidth of bytes_per_step sent over a link every step_seconds:
 * 8 * bytes / step / 1e6 Mbit/s.  Negative for bad input (bytes < 0,
 * step <= 0). */
double acc_bw_from_step(double bytes_per_step, double step_seconds);

/* Rounds a computed bandwidth up to whole Mbit/s (what a link reservation
 * books); ACC_ERR_INVALID when it is not finite, <= 0 or above max. */
acc_err acc_bw_mbit(double mbit, int64_t max, int64_t *out, struct acc_error *err);

/* BSBW -> PPBW (§4.2, a GAP): reading A, PPBW = 4 BSBW (n_T - 1) / n_T^2
 * (default); reading B, PPBW = 2 BSBW / n_T.  0 for n_T < 2. */
enum acc_bsbw_reading { ACC_BSBW_A, ACC_BSBW_B };
double acc_bw_ppbw_from_bsbw(double bsbw, int64_t n_T, enum acc_bsbw_reading r);

/* Eq. (3): BW_i^sat = bw_max / demand; +infinity when demand <= 0. */
double acc_bw_saturation(double bw_max, double demand);

/* Eq. (7): the n_i with requirement exactly `avail`.  True with n1 <= n2
 * when the discriminant is >= 0 (admissible: n_i <= n1 or n_i >= n2);
 * false when every n_i is within avail (then n1 = n2 = n_T / 2). */
bool acc_bw_limits(int64_t n_T, double ppbw, double avail, double *n1, double *n2);

/* Bandwidth allotment (§4.3): the slowdown sd_j of every job from its
 * requirements.  req is n_jobs x n_links row-major (req[j*n_links + k] =
 * BW_k^j, 0 where j does not use link k); sd gets n_jobs values in (0, 1]
 * (1 for a job using no link).  MIN_RULE: sd_j = min(1, min over j's links
 * of BW_k^sat); FILL: progressive filling.  Allotment on link k = sd_j *
 * BW_k^j (eq. 4 read backwards).  ACC_ERR_INVALID for bad input (a
 * negative requirement, bw_max <= 0, more than ACC_POLICY_MAX_CLUSTERS
 * links or 4096 jobs). */
enum acc_bw_allot_rule { ACC_ALLOT_MIN_RULE, ACC_ALLOT_FILL };
#define ACC_BW_MAX_JOBS 4096
acc_err acc_bw_allot(size_t n_jobs, size_t n_links, const double *req, const double *bw_max,
                     enum acc_bw_allot_rule rule, double *sd, struct acc_error *err);

/* Eqs. (5)-(6): the remaining times of one running co-allocated job. */
struct acc_bw_residual {
    double tp; /* T^R_P: remaining computation wall time */
    double tc; /* T^R_C: remaining communication wall time at the current sd */
    double sd; /* the current slowdown, (0, 1] */
};

/* At start: T^R_P = K T_E, T^R_C = (1 - K) T_E / sd.  Bad input (T_E < 0,
 * K outside [0, 1], sd outside (0, 1]) gives ACC_ERR_INVALID. */
acc_err acc_bw_residual_start(double t_e, double k, double sd, struct acc_bw_residual *r,
                              struct acc_error *err);

/* At a state change dt seconds after the last one, with the new slowdown:
 * eq. (6) then (5).  dt is clamped to [0, T^R_E]. */
acc_err acc_bw_residual_update(struct acc_bw_residual *r, double dt, double sd_new,
                               struct acc_error *err);

/* T^R_E = T^R_P + T^R_C: the job ends this long after the last change. */
double acc_bw_residual_left(const struct acc_bw_residual *r);

#endif
