/* SPDX-License-Identifier: Apache-2.0 */
/* wsim.h - accord-sim, the what-if simulator: workloads replayed in
 * virtual time through the co-allocation queue disciplines and placement
 * policies of docs/simulator.md (the models of docs/science.md).
 *
 * A run is a pure function of its parameters and seed: no sleeping, no
 * wall clock, no rand(); the same parameters give the same jobs, the same
 * schedule and the same figures.  Placement goes through lib/policy (the
 * module accordd uses); the reservation mode books on capacity calendars
 * (lib/calendar), as accordd's simulated sites do.
 *
 * Names: wsim_ and WSIM_ ("what-if simulator").  "sim" alone named both
 * this program and the simulated sites (adapters/simsite, simsite_), and
 * both defined an external sim_start that accordd, which links both for
 * --replay, could not tell apart.  Not acc_: the simulator is a program
 * built on the library, with some two hundred names of its own (tables of
 * disciplines, policies, distributions); a short prefix that nothing else
 * uses keeps them apart from lib/'s acc_ names and readable in its tables.
 */
#ifndef ACC_WSIM_H
#define ACC_WSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WSIM_MAX_CLUSTERS 16
#define WSIM_MAX_COMP     16
#define WSIM_MAX_NAME     64
#define WSIM_MAX_LIST     64
#define WSIM_MAX_EMP      4096 /* points of an empirical distribution */
#define WSIM_ERR_LEN      256

/* ---- the deterministic random stream (xoshiro256**, splitmix64 seeding) */
struct wsim_rng {
    uint64_t s[4];
};
void wsim_rng_seed(struct wsim_rng *r, uint64_t seed, uint64_t stream);
uint64_t wsim_rng_next(struct wsim_rng *r);
double wsim_rng_uniform(struct wsim_rng *r); /* in (0, 1) */
double wsim_rng_exp(struct wsim_rng *r, double mean);
int64_t wsim_rng_int(struct wsim_rng *r, int64_t lo, int64_t hi); /* in [lo, hi] */
/* An index drawn with the given cumulative weights (cum[n-1] is the total). */
size_t wsim_rng_pick(struct wsim_rng *r, const double *cum, size_t n);

/* ---- parameters */
enum wsim_discipline { WSIM_D_FCFS, WSIM_D_KOALA, WSIM_D_JONES, WSIM_D_RESERVE };
enum wsim_fcfs { WSIM_GS, WSIM_LS, WSIM_GP, WSIM_LP, WSIM_SC };
enum wsim_order { WSIM_ORD_OR, WSIM_ORD_RD, WSIM_ORD_RO, WSIM_ORD_DO };
enum wsim_lpvar { WSIM_LP_LF, WSIM_LP_GF, WSIM_LP_RD };
enum wsim_koala { WSIM_K_WF, WSIM_K_FCM, WSIM_K_CA, WSIM_K_NONE };
enum wsim_jones {
    WSIM_J_MIG,
    WSIM_J_IDEAL,
    WSIM_J_INITIAL,
    WSIM_J_A1,
    WSIM_J_B1,
    WSIM_J_B2,
    WSIM_J_B3,
    WSIM_J_B4
};
/* Jones et al.'s open choices (docs/science.md §5) beyond the policy's own. */
enum wsim_round { WSIM_ROUND_CEIL, WSIM_ROUND_FLOOR, WSIM_ROUND_NEAREST };
enum wsim_trigger { WSIM_TRIG_EVENTS, WSIM_TRIG_DEPARTURES, WSIM_TRIG_PERIODIC };
enum wsim_comm { WSIM_C_NONE, WSIM_C_EXT, WSIM_C_TABLE, WSIM_C_CCR, WSIM_C_BW };
enum wsim_workload { WSIM_W_SYNTH, WSIM_W_TOTAL, WSIM_W_BANEN, WSIM_W_SWF };
enum wsim_dist {
    WSIM_DIST_CONST,
    WSIM_DIST_EXP,
    WSIM_DIST_UNIFORM,
    WSIM_DIST_SET,
    WSIM_DIST_DQ,
    WSIM_DIST_EMP
};
enum wsim_split { WSIM_SPLIT_NONE, WSIM_SPLIT_LIMIT, WSIM_SPLIT_FLEX };
enum wsim_banen_app { WSIM_APP_POISSON, WSIM_APP_ENSFLOW, WSIM_APP_MIX };
enum wsim_banen_rule { WSIM_RULE_NO, WSIM_RULE_CO, WSIM_RULE_RCO, WSIM_RULE_FCO };

/* A distribution of sizes or times. */
struct wsim_dist_spec {
    enum wsim_dist kind;
    double a, b, q; /* const a; exp mean a; uniform [a, b]; D(q) on [a, b] */
    size_t n;       /* set and empirical: values and cumulative weights */
    double *val, *cum;
};

struct wsim_params {
    char name[WSIM_MAX_NAME];
    char policy_name[WSIM_MAX_NAME];
    /* system */
    int nclusters;
    int size[WSIM_MAX_CLUSTERS];
    bool slow_link[WSIM_MAX_CLUSTERS]; /* GbE only: CCR sets with it use ccr_m_slow */
    double latency[WSIM_MAX_CLUSTERS][WSIM_MAX_CLUSTERS];
    bool random_ties;
    /* discipline and policy */
    enum wsim_discipline disc;
    enum wsim_fcfs fcfs;
    enum wsim_order order;  /* LS variant */
    enum wsim_order lorder; /* the locals' order in GP and LP */
    enum wsim_lpvar lpvar;
    bool gp_locals_join;
    enum wsim_koala koala;
    int maxc; /* FCM-k; 0: number of clusters */
    double scan_period;
    double startup; /* KOALA start-up overhead, s */
    enum wsim_jones jones;
    double b3_fraction;
    bool b3_best_fit;
    enum wsim_round b3_round;
    int b4_start;                    /* B4's round robin starts at this cluster (from 0) */
    bool a1_index;                   /* A1 searches clusters in index order (else free desc.) */
    bool a1_best;                    /* A1 takes the least-link solution (else the first) */
    bool bw_measured;                /* A1's BW_avail from the allotted use (else requirements) */
    enum wsim_jones ideal_placement; /* Ideal's module (Initial Strategy) */
    enum wsim_trigger triggers;      /* Jones: when the queue is passed */
    bool ca_idle;                    /* CA's average over clusters with idle units */
    double lslt;
    bool discount_ge;
    int reserve_candidates; /* reservation mode: assignments probed */
    /* communication */
    enum wsim_comm comm;
    double ext;
    double ccr;
    double ccr_m[WSIM_MAX_CLUSTERS + 1];      /* by clusters used */
    double ccr_m_slow[WSIM_MAX_CLUSTERS + 1]; /* the same with a slow-link cluster */
    double link_mbps[WSIM_MAX_CLUSTERS];
    double bsbw, kfrac;
    bool bsbw_reading_b;
    bool progressive_fill;
    /* workload */
    enum wsim_workload wl;
    double composition[WSIM_MAX_COMP]; /* % of jobs with 1..C components */
    struct wsim_dist_spec comp_size;   /* synthetic: each component */
    struct wsim_dist_spec total_size;  /* total: the job */
    struct wsim_dist_spec service;
    enum wsim_split split;
    int split_limit;
    enum wsim_banen_app app;
    enum wsim_banen_rule rule;
    char trace[256];
    double routing[WSIM_MAX_CLUSTERS]; /* weights of the home cluster */
    double load;                       /* target net utilization; 0: the trace's own times */
    double interarrival;               /* if > 0 and load == 0: mean interarrival, s */
    /* run */
    long jobs;
    long warmup;
    int replications;
    double ci_level;
    double sat_factor;
    long sat_min;
    uint64_t seed;
};

/* The defaults of docs/science.md section 5. */
void wsim_params_init(struct wsim_params *p);
void wsim_params_release(struct wsim_params *p);
/* Applies one key = value; false with a message in err (nothing changed
 * that the caller keeps: the caller discards p on failure). */
bool wsim_params_set(struct wsim_params *p, const char *key, const char *value, const char *dir,
                     char *err, size_t errlen);
/* The keys "policy" and "clusters" as typed calls, for programs that
 * set parameters themselves (accordd --replay): a policy by its name (the
 * names of docs/simulator.md), and n cluster sizes.  Scalar parameters are
 * plain fields of struct wsim_params. */
bool wsim_params_set_policy(struct wsim_params *p, const char *name, char *err, size_t errlen);
bool wsim_params_set_clusters(struct wsim_params *p, const int64_t *sizes, int n, char *err,
                              size_t errlen);
/* The open modelling choices of docs/science.md §5 as "key = value"
 * lines, each prefixed by `prefix` (e.g. "# "), for the header of every
 * result. */
void wsim_params_write_choices(FILE *f, const struct wsim_params *p, const char *prefix);
/* The name of an enumerated key's value ("a1_solution" -> "first"); NULL
 * for a key that is not one. */
const char *wsim_params_enum_name(const struct wsim_params *p, const char *key);
/* Checks the whole set; false with a message. */
bool wsim_params_check(const struct wsim_params *p, char *err, size_t errlen);
/* Parses a distribution ("exp:1", "set:8,16,32", "dq:0.9:1:8", ...). */
bool wsim_dist_parse(struct wsim_dist_spec *d, const char *text, const char *dir, char *err,
                     size_t errlen);
void wsim_dist_release(struct wsim_dist_spec *d);
double wsim_dist_draw(const struct wsim_dist_spec *d, struct wsim_rng *r);
double wsim_dist_mean(const struct wsim_dist_spec *d);

/* ---- an experiment file: base keys, the curves and the x axis */
struct wsim_kv {
    char *key, *value;
    int line;
};
struct wsim_experiment {
    struct wsim_kv *kv;
    size_t nkv;
    char *dir;               /* of the file, for relative paths */
    char *curve_key, *x_key; /* "policy", "load", ... */
    char **curves, **xs;     /* values */
    size_t ncurves, nxs;
    char *metric; /* what the plot shows */
    char *plot_x; /* a metric as the plot's x (NULL: the x values) */
    char *title;
};
/* Reads a file of key = value lines; false with "file:line: message". */
bool wsim_experiment_load(struct wsim_experiment *e, const char *path, char *err, size_t errlen);
bool wsim_experiment_parse(struct wsim_experiment *e, const char *text, const char *dir,
                           const char *name, char *err, size_t errlen);
void wsim_experiment_free(struct wsim_experiment *e);
/* The parameters of one (curve, x) point. */
bool wsim_experiment_params(const struct wsim_experiment *e, size_t curve, size_t x,
                            struct wsim_params *p, char *err, size_t errlen);

/* ---- jobs */
struct wsim_job {
    double submit; /* arrival */
    double t1;     /* single-cluster execution time of the whole job */
    int total;     /* units */
    int ncomp;     /* requested components; 1 for single and flexible requests */
    int comp[WSIM_MAX_COMP];
    int home; /* home cluster, local queue */
    int app;  /* banen: the application (table) */
    /* outcome */
    double start, end, placed;
    int alloc[WSIM_MAX_CLUSTERS]; /* units per cluster */
    int used;                     /* distinct clusters */
    bool global;                  /* went through a global queue (GP, LP) */
};

struct wsim_workload_set {
    struct wsim_job *v;
    size_t n;
    double offered; /* E[s T1] used to set the rate; 0 for traces at their own times */
};

/* Generates p->jobs jobs (synthetic) or reads the trace; the stream is the
 * seed's workload stream (replication rep), the same for every policy. */
bool wsim_workload_make(const struct wsim_params *p, int rep, struct wsim_workload_set *w,
                        char *err, size_t errlen);
void wsim_workload_free(struct wsim_workload_set *w);
/* docs/science.md 2.6: the as-equal-as-possible split with limit L over C clusters. */
int wsim_split_limit(int s, int limit, int nclusters, int *comp);

/* ---- SWF traces (Parallel Workloads Archive) */
struct wsim_swf_job {
    long id;
    double submit, wait, run;
    long procs, req_procs;
    double req_time;
    int status;
};
#define WSIM_SWF_MAX_LINE 4096
/* Parses an SWF text; false with "name:line: message".  Jobs with an
 * unknown (-1) submit time, run time or size are skipped, and counted. */
bool wsim_swf_parse(FILE *f, const char *name, struct wsim_swf_job **out, size_t *n,
                    size_t *skipped, char *err, size_t errlen);

/* ---- a run */
struct wsim_result {
    long measured;
    double mean_resp, mean_wait, mean_exec;
    double p50_resp, p90_resp, p95_resp, p99_resp;
    double mean_resp_local, mean_resp_global;
    long n_local, n_global;
    double util_net, util_gross, offered_net;
    double coalloc_share;
    double horizon;
    bool saturated;
    double end_queue, q2_queue;
};

/* Runs the workload through the discipline; fills every job's outcome and
 * the run's figures. */
bool wsim_run(const struct wsim_params *p, struct wsim_workload_set *w, int rep,
              struct wsim_result *r, char *err, size_t errlen);
/* The figures of a run over its measured jobs. */
void wsim_result_compute(const struct wsim_params *p, const struct wsim_workload_set *w,
                         const double *qlen, struct wsim_result *r);

/* ---- confidence intervals */
/* The two-sided Student t quantile for the level (e.g. 0.95) and df. */
double wsim_t_quantile(double level, int df);
struct wsim_ci {
    double mean, half;
};
struct wsim_ci wsim_ci_of(const double *x, int n, double level);

/* Named metrics of a result, for CSV columns and plots. */
extern const char *const wsim_metric_names[];
double wsim_metric_get(const struct wsim_result *r, size_t i);
size_t wsim_metric_count(void);
long wsim_metric_index(const char *name);

#endif
