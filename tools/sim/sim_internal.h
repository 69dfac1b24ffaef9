/* sim_internal.h - what the simulator's files share: the state of a run,
 * its event heap and queues, and the disciplines' entry points.  Not a
 * public header: tools and tests use sim.h. */
#ifndef ACC_SIM_INTERNAL_H
#define ACC_SIM_INTERNAL_H

#include "sim.h"
#include "policy.h"
#include "calendar.h"

enum sim_ev { SIM_EV_DEPART, SIM_EV_SCAN, SIM_EV_ARSTART };

struct sim_event {
    double t;
    uint64_t seq;
    uint32_t job, ver;
    int type;
};

struct sim_heap {
    struct sim_event *v;
    size_t n, cap;
    uint64_t seq;
};
bool sim_heap_push(struct sim_heap *h, double t, int type, uint32_t job, uint32_t ver);
bool sim_heap_pop(struct sim_heap *h, struct sim_event *out);
void sim_heap_free(struct sim_heap *h);

/* A queue of job indexes in arrival order. */
struct sim_queue {
    uint32_t *v;
    size_t head, n, cap;
};
bool sim_queue_push(struct sim_queue *q, uint32_t job);
uint32_t sim_queue_at(const struct sim_queue *q, size_t i);
void sim_queue_pop(struct sim_queue *q);
/* Keeps the jobs for which keep[i] is true (i from the head), in order. */
void sim_queue_filter(struct sim_queue *q, const bool *keep);
void sim_queue_free(struct sim_queue *q);

/* A running co-allocated job of the bandwidth model. */
struct sim_bwjob {
    uint32_t job;
    struct acc_bw_residual res;
    double req[SIM_MAX_CLUSTERS]; /* eq. (1) on each link */
};

struct sim_state {
    const struct sim_params *p;
    struct sim_workload_set *w;
    char *err;
    size_t errlen;
    bool failed;
    struct sim_rng rng; /* the policy's draws (LS-RD, LP-RD) */
    uint64_t tie_state; /* the policy module's random ties */
    double now;
    int nc;
    int64_t idle[SIM_MAX_CLUSTERS], size[SIM_MAX_CLUSTERS];
    double latency[SIM_MAX_CLUSTERS * SIM_MAX_CLUSTERS];
    double link_max[SIM_MAX_CLUSTERS], link_load[SIM_MAX_CLUSTERS];
    struct sim_heap heap;
    uint32_t *ver; /* per job: the live departure event's version */
    /* queues: locals 0 .. nc-1, global nc */
    struct sim_queue q[SIM_MAX_CLUSTERS + 1];
    size_t queued;
    int do_list[SIM_MAX_CLUSTERS + 1]; /* LS-DO: order of last disabling */
    bool scan_pending;
    int64_t min_total; /* the smallest job of the workload */
    /* the bandwidth model */
    struct sim_bwjob *bw;
    size_t nbw, capbw;
    double last_change;
    /* the reservation mode */
    struct acc_calendar cal[SIM_MAX_CLUSTERS];
    uint32_t *live;
    size_t nlive, caplive, live_mark;
    /* sampled at each arrival */
    double *qlen;
    size_t nqlen;
};

bool sim_fail(struct sim_state *s, const char *fmt, ...);

/* Placement through lib/policy; fits into j->alloc on success. */
bool sim_place(struct sim_state *s, uint32_t job, enum acc_policy_id id, enum acc_request_type type,
               size_t fixed_cluster, bool *fits);
/* Starts a placed job now: takes its units, its service time from the
 * communication model, its departure event. */
void sim_start(struct sim_state *s, uint32_t job, double exec_from);
/* The service time of a job as placed (models without dynamic state). */
double sim_service_time(const struct sim_params *p, const struct sim_job *j);
double sim_banen_time(int app, int total, int k);
int sim_total_units(const struct sim_params *p);

/* The bandwidth model: a co-allocated job starts or ends. */
void sim_bw_start(struct sim_state *s, uint32_t job);
void sim_bw_end(struct sim_state *s, uint32_t job);

/* The disciplines: an arrival, a departure (after the release), a scan. */
void sim_fcfs_arrival(struct sim_state *s, uint32_t job);
void sim_fcfs_departure(struct sim_state *s, uint32_t job);
void sim_scan_arrival(struct sim_state *s, uint32_t job);
void sim_scan_departure(struct sim_state *s, uint32_t job);
void sim_scan_tick(struct sim_state *s);
bool sim_reserve_init(struct sim_state *s);
void sim_reserve_arrival(struct sim_state *s, uint32_t job);
void sim_reserve_free(struct sim_state *s);

#endif
