/* sim.h - accord-sim, the what-if simulator: workloads replayed in virtual
 * time through the co-allocation queue disciplines and placement policies of
 * docs/simulator.md (the models of science.md).
 *
 * A run is a pure function of its parameters and seed: no sleeping, no
 * wall clock, no rand(); the same parameters give the same jobs, the same
 * schedule and the same figures.  Placement goes through lib/policy (the
 * module accordd uses); the reservation mode books on adapters/sim's
 * capacity calendars, as accordd's simulators do.
 */
#ifndef ACC_SIM_H
#define ACC_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_MAX_CLUSTERS 16
#define SIM_MAX_COMP     16
#define SIM_MAX_NAME     64
#define SIM_MAX_LIST     64
#define SIM_MAX_EMP      4096 /* points of an empirical distribution */
#define SIM_ERR_LEN      256

/* ---- the deterministic random stream (xoshiro256**, splitmix64 seeding) */
struct sim_rng {
    uint64_t s[4];
};
void sim_rng_seed(struct sim_rng *r, uint64_t seed, uint64_t stream);
uint64_t sim_rng_next(struct sim_rng *r);
double sim_rng_uniform(struct sim_rng *r); /* in (0, 1) */
double sim_rng_exp(struct sim_rng *r, double mean);
int64_t sim_rng_int(struct sim_rng *r, int64_t lo, int64_t hi); /* in [lo, hi] */
/* An index drawn with the given cumulative weights (cum[n-1] is the total). */
size_t sim_rng_pick(struct sim_rng *r, const double *cum, size_t n);

/* ---- parameters */
enum sim_discipline { SIM_D_FCFS, SIM_D_KOALA, SIM_D_JONES, SIM_D_RESERVE };
enum sim_fcfs { SIM_GS, SIM_LS, SIM_GP, SIM_LP, SIM_SC };
enum sim_order { SIM_ORD_OR, SIM_ORD_RD, SIM_ORD_RO, SIM_ORD_DO };
enum sim_lpvar { SIM_LP_LF, SIM_LP_GF, SIM_LP_RD };
enum sim_koala { SIM_K_WF, SIM_K_FCM, SIM_K_CA, SIM_K_NONE };
enum sim_jones {
    SIM_J_MIG,
    SIM_J_IDEAL,
    SIM_J_INITIAL,
    SIM_J_A1,
    SIM_J_B1,
    SIM_J_B2,
    SIM_J_B3,
    SIM_J_B4
};
enum sim_comm { SIM_C_NONE, SIM_C_EXT, SIM_C_TABLE, SIM_C_CCR, SIM_C_BW };
enum sim_workload { SIM_W_SYNTH, SIM_W_TOTAL, SIM_W_BANEN, SIM_W_SWF };
enum sim_dist {
    SIM_DIST_CONST,
    SIM_DIST_EXP,
    SIM_DIST_UNIFORM,
    SIM_DIST_SET,
    SIM_DIST_DQ,
    SIM_DIST_EMP
};
enum sim_split { SIM_SPLIT_NONE, SIM_SPLIT_LIMIT, SIM_SPLIT_FLEX };
enum sim_banen_app { SIM_APP_POISSON, SIM_APP_ENSFLOW, SIM_APP_MIX };
enum sim_banen_rule { SIM_RULE_NO, SIM_RULE_CO, SIM_RULE_RCO, SIM_RULE_FCO };

/* A distribution of sizes or times. */
struct sim_dist_spec {
    enum sim_dist kind;
    double a, b, q; /* const a; exp mean a; uniform [a, b]; D(q) on [a, b] */
    size_t n;       /* set and empirical: values and cumulative weights */
    double *val, *cum;
};

struct sim_params {
    char name[SIM_MAX_NAME];
    char policy_name[SIM_MAX_NAME];
    /* system */
    int nclusters;
    int size[SIM_MAX_CLUSTERS];
    bool slow_link[SIM_MAX_CLUSTERS]; /* GbE only: CCR sets with it use ccr_m_slow */
    double latency[SIM_MAX_CLUSTERS][SIM_MAX_CLUSTERS];
    bool random_ties;
    /* discipline and policy */
    enum sim_discipline disc;
    enum sim_fcfs fcfs;
    enum sim_order order;  /* LS variant */
    enum sim_order lorder; /* the locals' order in GP and LP */
    enum sim_lpvar lpvar;
    bool gp_locals_join;
    enum sim_koala koala;
    int maxc; /* FCM-k; 0: number of clusters */
    double scan_period;
    double startup; /* KOALA start-up overhead, s */
    enum sim_jones jones;
    double b3_fraction;
    bool b3_best_fit;
    double lslt;
    bool discount_ge;
    int reserve_candidates; /* reservation mode: assignments probed */
    /* communication */
    enum sim_comm comm;
    double ext;
    double ccr;
    double ccr_m[SIM_MAX_CLUSTERS + 1];      /* by clusters used */
    double ccr_m_slow[SIM_MAX_CLUSTERS + 1]; /* the same with a slow-link cluster */
    double link_mbps[SIM_MAX_CLUSTERS];
    double bsbw, kfrac;
    bool bsbw_reading_b;
    bool progressive_fill;
    /* workload */
    enum sim_workload wl;
    double composition[SIM_MAX_COMP]; /* % of jobs with 1..C components */
    struct sim_dist_spec comp_size;   /* synthetic: each component */
    struct sim_dist_spec total_size;  /* total: the job */
    struct sim_dist_spec service;
    enum sim_split split;
    int split_limit;
    enum sim_banen_app app;
    enum sim_banen_rule rule;
    char trace[256];
    double routing[SIM_MAX_CLUSTERS]; /* weights of the home cluster */
    double load;                      /* target net utilization; 0: the trace's own times */
    double interarrival;              /* if > 0 and load == 0: mean interarrival, s */
    /* run */
    long jobs;
    long warmup;
    int replications;
    double ci_level;
    double sat_factor;
    long sat_min;
    uint64_t seed;
};

/* The defaults of science.md section 5. */
void sim_params_init(struct sim_params *p);
void sim_params_release(struct sim_params *p);
/* Applies one key = value; false with a message in err (nothing changed
 * that the caller keeps: the caller discards p on failure). */
bool sim_params_set(struct sim_params *p, const char *key, const char *value, const char *dir,
                    char *err, size_t errlen);
/* Checks the whole set; false with a message. */
bool sim_params_check(const struct sim_params *p, char *err, size_t errlen);
/* Parses a distribution ("exp:1", "set:8,16,32", "dq:0.9:1:8", ...). */
bool sim_dist_parse(struct sim_dist_spec *d, const char *text, const char *dir, char *err,
                    size_t errlen);
void sim_dist_release(struct sim_dist_spec *d);
double sim_dist_draw(const struct sim_dist_spec *d, struct sim_rng *r);
double sim_dist_mean(const struct sim_dist_spec *d);

/* ---- an experiment file: base keys, the curves and the x axis */
struct sim_kv {
    char *key, *value;
    int line;
};
struct sim_experiment {
    struct sim_kv *kv;
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
bool sim_experiment_load(struct sim_experiment *e, const char *path, char *err, size_t errlen);
bool sim_experiment_parse(struct sim_experiment *e, const char *text, const char *dir,
                          const char *name, char *err, size_t errlen);
void sim_experiment_free(struct sim_experiment *e);
/* The parameters of one (curve, x) point. */
bool sim_experiment_params(const struct sim_experiment *e, size_t curve, size_t x,
                           struct sim_params *p, char *err, size_t errlen);

/* ---- jobs */
struct sim_job {
    double submit; /* arrival */
    double t1;     /* single-cluster execution time of the whole job */
    int total;     /* units */
    int ncomp;     /* requested components; 1 for single and flexible requests */
    int comp[SIM_MAX_COMP];
    int home; /* home cluster, local queue */
    int app;  /* banen: the application (table) */
    /* outcome */
    double start, end, placed;
    int alloc[SIM_MAX_CLUSTERS]; /* units per cluster */
    int used;                    /* distinct clusters */
    bool global;                 /* went through a global queue (GP, LP) */
};

struct sim_workload_set {
    struct sim_job *v;
    size_t n;
    double offered; /* E[s T1] used to set the rate; 0 for traces at their own times */
};

/* Generates p->jobs jobs (synthetic) or reads the trace; the stream is the
 * seed's workload stream (replication rep), the same for every policy. */
bool sim_workload_make(const struct sim_params *p, int rep, struct sim_workload_set *w, char *err,
                       size_t errlen);
void sim_workload_free(struct sim_workload_set *w);
/* science.md 2.6: the as-equal-as-possible split with limit L over C clusters. */
int sim_split_limit(int s, int limit, int nclusters, int *comp);

/* ---- SWF traces (Parallel Workloads Archive) */
struct sim_swf_job {
    long id;
    double submit, wait, run;
    long procs, req_procs;
    double req_time;
    int status;
};
#define SIM_SWF_MAX_LINE 4096
/* Parses an SWF text; false with "name:line: message".  Jobs with an
 * unknown (-1) submit time, run time or size are skipped, and counted. */
bool sim_swf_parse(FILE *f, const char *name, struct sim_swf_job **out, size_t *n, size_t *skipped,
                   char *err, size_t errlen);

/* ---- a run */
struct sim_result {
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
bool sim_run(const struct sim_params *p, struct sim_workload_set *w, int rep, struct sim_result *r,
             char *err, size_t errlen);
/* The figures of a run over its measured jobs. */
void sim_result_compute(const struct sim_params *p, const struct sim_workload_set *w,
                        const double *qlen, struct sim_result *r);

/* ---- confidence intervals */
/* The two-sided Student t quantile for the level (e.g. 0.95) and df. */
double sim_t_quantile(double level, int df);
struct sim_ci {
    double mean, half;
};
struct sim_ci sim_ci_of(const double *x, int n, double level);

/* Named metrics of a result, for CSV columns and plots. */
extern const char *const sim_metric_names[];
double sim_metric_get(const struct sim_result *r, size_t i);
size_t sim_metric_count(void);
long sim_metric_index(const char *name);

#endif
