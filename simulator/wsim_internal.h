/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_internal.h - what the simulator's files share: the state of a run,
 * its event heap and queues, and the disciplines' entry points.  Not a
 * public header: the command, the replay and the tests use wsim.h. */
#ifndef ACC_WSIM_INTERNAL_H
#define ACC_WSIM_INTERNAL_H

#include "wsim.h"
#include "../lib/policy/policy.h"
#include "../lib/calendar/calendar.h"

enum wsim_ev { WSIM_EV_DEPART, WSIM_EV_SCAN, WSIM_EV_ARSTART };

struct wsim_event {
    double t;
    uint64_t seq;
    uint32_t job, ver;
    int type;
};

struct wsim_heap {
    struct wsim_event *v;
    size_t n, cap;
    uint64_t seq;
};
bool wsim_heap_push(struct wsim_heap *h, double t, int type, uint32_t job, uint32_t ver);
bool wsim_heap_pop(struct wsim_heap *h, struct wsim_event *out);
void wsim_heap_free(struct wsim_heap *h);

/* A queue of job indexes in arrival order. */
struct wsim_queue {
    uint32_t *v;
    size_t head, n, cap;
};
bool wsim_queue_push(struct wsim_queue *q, uint32_t job);
uint32_t wsim_queue_at(const struct wsim_queue *q, size_t i);
void wsim_queue_pop(struct wsim_queue *q);
/* Keeps the jobs for which keep[i] is true (i from the head), in order. */
void wsim_queue_filter(struct wsim_queue *q, const bool *keep);
void wsim_queue_free(struct wsim_queue *q);

/* A running co-allocated job of the bandwidth model. */
struct wsim_bwjob {
    uint32_t job;
    struct acc_bw_residual res;
    double req[WSIM_MAX_CLUSTERS]; /* eq. (1) on each link */
};

struct wsim_state {
    const struct wsim_params *p;
    struct wsim_workload_set *w;
    char *err;
    size_t errlen;
    bool failed;
    struct wsim_rng rng; /* the policy's draws (LS-RD, LP-RD) */
    uint64_t tie_state;  /* the policy module's random ties */
    double now;
    int nc;
    int64_t idle[WSIM_MAX_CLUSTERS], size[WSIM_MAX_CLUSTERS];
    double latency[WSIM_MAX_CLUSTERS * WSIM_MAX_CLUSTERS];
    double link_max[WSIM_MAX_CLUSTERS], link_load[WSIM_MAX_CLUSTERS];
    struct wsim_heap heap;
    uint32_t *ver; /* per job: the live departure event's version */
    /* queues: locals 0 .. nc-1, global nc */
    struct wsim_queue q[WSIM_MAX_CLUSTERS + 1];
    size_t queued;
    int do_list[WSIM_MAX_CLUSTERS + 1]; /* LS-DO: order of last disabling */
    bool scan_pending;
    int64_t min_total; /* the smallest job of the workload */
    /* the bandwidth model */
    struct wsim_bwjob *bw;
    size_t nbw, capbw;
    double last_change;
    /* the reservation mode */
    struct acc_calendar cal[WSIM_MAX_CLUSTERS];
    uint32_t *live;
    size_t nlive, caplive, live_mark;
    /* sampled at each arrival */
    double *qlen;
    size_t nqlen;
};

bool wsim_fail(struct wsim_state *s, const char *fmt, ...);
/* Formats a message into err (len bytes) and returns false: the failure of
 * the functions that answer with a message (parameters, files, traces). */
bool wsim_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Placement through lib/policy; fits into j->alloc on success. */
bool wsim_place(struct wsim_state *s, uint32_t job, enum acc_policy_id id,
                enum acc_request_type type, size_t fixed_cluster, bool *fits);
/* Starts a placed job now: takes its units, its service time from the
 * communication model, its departure event. */
void wsim_start(struct wsim_state *s, uint32_t job, double exec_from);
/* The service time of a job as placed (models without dynamic state). */
double wsim_service_time(const struct wsim_params *p, const struct wsim_job *j);
double wsim_banen_time(int app, int total, int k);
int wsim_total_units(const struct wsim_params *p);

/* The bandwidth model: a co-allocated job starts or ends. */
void wsim_bw_start(struct wsim_state *s, uint32_t job);
void wsim_bw_end(struct wsim_state *s, uint32_t job);
/* What each link carries now: the sum of sd_j BW_i^j over the running
 * co-allocated jobs (<= the requirement-based link_load). */
void wsim_bw_used(const struct wsim_state *s, double *used);

/* The disciplines: an arrival, a departure (after the release), a scan. */
void wsim_fcfs_arrival(struct wsim_state *s, uint32_t job);
void wsim_fcfs_departure(struct wsim_state *s, uint32_t job);
void wsim_scan_arrival(struct wsim_state *s, uint32_t job);
void wsim_scan_departure(struct wsim_state *s, uint32_t job);
void wsim_scan_tick(struct wsim_state *s);
bool wsim_reserve_init(struct wsim_state *s);
void wsim_reserve_arrival(struct wsim_state *s, uint32_t job);
void wsim_reserve_free(struct wsim_state *s);

#endif
