/* SPDX-License-Identifier: Apache-2.0 */
/* site_jobs.h - the only jobs accord-site starts for its peers: the Hydra
 * proxies of a meta-job that accordd launched with `mpiexec.hydra -launcher
 * manual` (docs/launch.md, "Across domains").
 *
 *   site_proxy.c  acc_site_proxy_check: the executable must be
 *                 hydra_pmi_proxy and the arguments exactly Hydra's options
 *                 with checked values (the control address inside the
 *                 configured networks), nothing else
 *   site_jobs.c   the job table behind POST/GET/DELETE /v1/jobs: a checked
 *                 proxy of a key the peer holds, on a host of that
 *                 reservation, inside its time, started as the job's
 *                 account (the configured job user when the job names
 *                 none; never root) in a process group of its own (here
 *                 by fork and exec, or through the batch adapter's
 *                 process command: srun --reservation, qsub -sync y -ar), its
 *                 output bounded in a directory of its own; status and
 *                 cancel by id; a bounded number of jobs
 *
 * Nothing here knows HTTP, XML or SQL: the daemon looks the booking up in
 * its journal and hands it over as plain data.  A job's state lives in files
 * (DIRECTORY/ID.job, the daemon's record; DIRECTORY/ID/status and output,
 * the proxy's), so jobs survive a restart of the daemon and are found again
 * by acc_site_jobs_open. */
#ifndef ACC_SITE_JOBS_H
#define ACC_SITE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../adapters/adapter.h"
#include "../lib/common/error.h"
#include "../lib/common/timefmt.h"

/* The basename of the one executable a site starts. */
#define ACC_SITE_PROXY_NAME "hydra_pmi_proxy"
/* The most arguments a proxy gets (Hydra's 10 options with their values). */
#define ACC_SITE_PROXY_MAX_ARGS 24
/* The default bound of the job table (live and remembered jobs). */
#define ACC_SITE_JOBS_MAX 64
/* The default bound of one job's output file, bytes. */
#define ACC_SITE_JOBS_OUTPUT_MAX (1024 * 1024)
/* Job ids: "p" then digits and '-', well inside acc_proto_key_ok. */
#define ACC_SITE_JOB_ID_MAX 48

/* One IPv4 network of `control_networks` (host byte order). */
struct acc_site_cidr {
    uint32_t addr, mask;
};

/* Parses a list "10.79.0.0/16, 127.0.0.1/32" (blanks or commas between;
 * an address without /N is /32) into a malloc'd array; at most 64.
 * ACC_ERR_CONFIG naming the bad entry; *out untouched then.  free() it. */
acc_err acc_site_cidrs_parse(const char *text, struct acc_site_cidr **out, size_t *n,
                             struct acc_error *err);

/* True when the dotted quad a (exactly four decimal parts) lies in one of
 * nets. */
bool acc_site_cidrs_contain(const struct acc_site_cidr *nets, size_t n_nets, const char *a);

/* Checks what a peer asks to start.  executable's basename must be
 * hydra_pmi_proxy (the configured absolute path is what runs; the peer's
 * directory part is ignored).  args must be Hydra's options, each at most
 * once, each followed by its value:
 *   --control-port A.B.C.D:PORT   required; the address inside nets
 *   --rmk user                    required
 *   --launcher manual             required
 *   --demux poll|select           required
 *   --pgid N  --proxy-id N        required, 0..1000000
 *   --retries N                   0..1000
 *   --usize N  --gpus-per-proc N  -2..1000000
 *   --pmi-port N                  0..65535
 * and nothing else.  *proxy_id (may be NULL) gets --proxy-id.
 * ACC_ERR_INVALID naming the first offending argument. */
acc_err acc_site_proxy_check(const char *executable, const char *const *args, size_t n_args,
                             const struct acc_site_cidr *nets, size_t n_nets, long *proxy_id,
                             struct acc_error *err);

/* How the daemon starts jobs (its [daemon] section). */
struct acc_site_jobs_cfg {
    const char *directory;            /* the jobs' directories go under it (made 0711) */
    const char *proxy_path;           /* absolute path of hydra_pmi_proxy */
    const char *job_user;             /* user the proxies run as (NULL: "nobody") */
    const struct acc_site_cidr *nets; /* control_networks (copied) */
    size_t n_nets;
    size_t max_jobs;     /* 0: ACC_SITE_JOBS_MAX */
    size_t output_limit; /* 0: ACC_SITE_JOBS_OUTPUT_MAX */
    /* The adapter that starts the proxies through the site's batch system
     * (a resource's adapter with ACC_CAP_PROCESS: slurm's srun
     * --reservation --nodelist=HOST -N1 -n1, sge's qsub -sync y -ar -l
     * h=HOST), run here as the job's account and watched as its process
     * group; NULL: the proxy is forked and exec'd here.  Not owned. */
    struct acc_adapter *batch;
};

/* The booking the job is for, as the daemon's journal holds it (only
 * reserved bookings of the asking peer are handed over). */
struct acc_site_job_booking {
    const char *key;
    const char *local_id;
    const char *nodes; /* "a,b" the reservation's hosts, or NULL: none named (then
                          any valid host name is taken: the proxy runs here) */
    acc_time start, end;
};

struct acc_site_jobs;

/* Checks cfg (the proxy path absolute and executable, the user known, the
 * directory made) and finds the jobs of an earlier run in the directory
 * again.  ACC_ERR_CONFIG naming what is wrong. */
acc_err acc_site_jobs_open(const struct acc_site_jobs_cfg *cfg, struct acc_site_jobs **out,
                           struct acc_error *err);
/* Frees the table; the jobs keep running (the next open finds them). */
void acc_site_jobs_close(struct acc_site_jobs *j);

/* Starts job (job->key, job->host, job->executable, job->args, and
 * job->user: the local account it runs as, set by the daemon's own mapping
 * of the user, NULL: the job user; the rest is ignored: a proxy needs no
 * directory, environment or output of the peer's choosing) for peer inside
 * booking b, at now.  Refuses, changing nothing: ACC_ERR_INVALID a proxy
 * that fails the check, a host not in b->nodes, a key other than b->key;
 * ACC_ERR_FORBIDDEN an account that does not exist or is root;
 * ACC_ERR_STATE now outside [b->start, b->end);
 * ACC_ERR_OVERLOADED when the table is full of live jobs; ACC_ERR_IO when
 * the job cannot be started.  On success id (at least ACC_SITE_JOB_ID_MAX
 * bytes) gets the new job's id. */
acc_err acc_site_jobs_submit(struct acc_site_jobs *j, const char *peer,
                             const struct acc_site_job_booking *b, const struct acc_job *job,
                             acc_time now, char *id, size_t id_len, struct acc_error *err);

/* Where job id of peer stands (RUNNING, COMPLETED, FAILED, CANCELLED;
 * done with exit_status or signal).  ACC_ERR_NOT_FOUND for an unknown id
 * or another peer's. */
acc_err acc_site_jobs_status(struct acc_site_jobs *j, const char *peer, const char *id,
                             struct acc_job_status *out, struct acc_error *err);

/* Stops job id of peer: SIGTERM to its process group, SIGKILL 2 s later
 * if it is still there (srun forwards the signal to the step).  A job
 * that already ended: ACC_OK.  ACC_ERR_NOT_FOUND as for status. */
acc_err acc_site_jobs_cancel(struct acc_site_jobs *j, const char *peer, const char *id,
                             struct acc_error *err);

/* Stops every live job of reservation key (it was cancelled or ended);
 * returns how many were stopped. */
size_t acc_site_jobs_cancel_key(struct acc_site_jobs *j, const char *key);

/* Live jobs, for /v1/health and metrics. */
size_t acc_site_jobs_running(struct acc_site_jobs *j);

#endif
