/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_int.h - shared by the launcher's files; nothing outside
 * server/launch/launcher*.c includes it.
 *
 *   launcher.c        the public calls, the copies of what the service hands
 *                     over, the timer that starts jobs at their start
 *   launcher_start.c  a job's directory, its files, and the start of its
 *                     mpiexec part under the sh wrapper
 *   launcher_watch.c  one thread per job: starts it, watches it, stops it at
 *                     the end of its reservation or on terminate, collects
 *                     what it left and reports its end
 *   launcher_batch.c  the components submitted to their site's batch system
 *   launcher_process.c  the proxies of launch = batch sites' hosts, started
 *                     through their batch system (Hydra's -launcher-exec)
 */
#ifndef ACC_LAUNCHER_INT_H
#define ACC_LAUNCHER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "launch.h"
#include "launcher.h"

/* How often a running job is looked at, and every how many looks its batch
 * parts are asked about. */
#define ACC_LAUNCHER_WATCH_MS   200
#define ACC_LAUNCHER_BATCH_POLL 10

/* The most bytes read from a file that holds one number (status,
 * output.dropped). */
#define ACC_LAUNCHER_NUMBER_FILE_MAX 64

enum acc_launcher_phase { ACC_LAUNCHER_WAITING, ACC_LAUNCHER_RUNNING };

/* A component submitted to its site's batch system. */
struct acc_launcher_part {
    char comp[64], site[64], job_id[64];
    bool done;
    struct acc_job_status status;
};

/* One job the launcher holds: waiting for its start, or watched by a thread
 * of its own (which alone touches ag, run and the parts then). */
struct acc_launcher_entry {
    char id[ACC_ID_LEN + 1];
    enum acc_launcher_phase phase;
    bool stop;  /* terminate asked for it (or its agreement was no longer Observed) */
    bool adopt; /* running before a restart: watch pid, do not start */
    /* A modified agreement's new end for a running job (under the lock;
     * 0: none): its watcher moves its stop time (acc_launcher_retime). */
    acc_time new_end;
    pid_t pid; /* the wrapper: the job's process group; 0: no mpiexec part */
    int64_t pid_start;
    /* Under systemd: the transient unit the job runs in ("": accordd's
     * child); e->pid is then its main process, not our child. */
    char unit[96];
    int64_t unit_asked;              /* when systemd was last asked about it (acc_mono_us) */
    bool unit_alive;                 /* what it said */
    struct acc_launcher_part *parts; /* batch jobs */
    size_t n_parts;
    /* The launcher's own copies of what it was handed: the agreement's id,
     * state, start, end and components, and the run without its output. */
    struct acc_agreement ag;
    struct acc_run run;
    struct acc_launcher *l;
    struct acc_launcher_entry *next;
};

struct acc_launcher {
    const struct acc_config *cfg;
    struct acc_launcher_hooks hooks;
    char *root; /* directory of the jobs' directories */
    char *path; /* "PATH=..." for jobs */
    bool units; /* jobs start in transient systemd units (launcher_unit.c) */

    pthread_mutex_t lock;
    pthread_cond_t cond; /* entries changed, a job ended, or stopping */
    struct acc_launcher_entry *entries;
    unsigned watchers; /* job threads alive */
    bool stopping;
    pthread_t timer;
    bool timer_started;
};

void acc_launcher_entry_free(struct acc_launcher_entry *e);

/* launcher_start.c */

/* Writes text to dir/name; false (err set) when it cannot. */
bool acc_launcher_write_file(const char *dir, const char *name, const char *text,
                             struct acc_error *err);
/* Reads at most max bytes of dir/name; NULL when it does not exist (or out
 * of memory).  free() it. */
char *acc_launcher_read_file(const char *dir, const char *name, size_t max, size_t *len);
/* Starts the job of e: its directory and descriptions, its batch parts,
 * then its mpiexec part; e->run is running then.  On failure nothing of it
 * runs. */
acc_err acc_launcher_start_job(struct acc_launcher *l, struct acc_launcher_entry *e,
                               struct acc_error *err);

/* launcher_unit.c */

/* Starts cmd in the transient unit u (acc_launch_unit_command) and returns
 * once it runs; *pid: its main process, 0 when it already ended. */
acc_err acc_launcher_unit_start(const struct acc_launch_unit *u, const char *const *cmd, pid_t *pid,
                                struct acc_error *err);
/* Whether unit still runs (active, or starting or stopping); true too when
 * systemd cannot be asked. */
bool acc_launcher_unit_active(const char *unit);
/* The unit of agreement id's job ("accord-job-ID-*.service") that systemd
 * still knows, into out; false when there is none. */
bool acc_launcher_unit_find(const char *id, char *out, size_t size);
/* Sends signal (a name: "SIGTERM", "SIGKILL") to every process of unit. */
acc_err acc_launcher_unit_kill(const char *unit, const char *signal, struct acc_error *err);

/* launcher_watch.c */

/* The thread of one entry (arg): starts it unless adopted, watches it to
 * its end, reports, and frees the entry. */
void *acc_launcher_watch_main(void *arg);

/* launcher_manual.c */

/* With launcher = manual, after mpiexec (e->pid) started for hosts: waits
 * for its HYDRA_LAUNCH lines and submits each proxy to the site of its host
 * as a part of e.  On failure the proxies submitted are cancelled and
 * mpiexec is killed and reaped (e->pid 0). */
acc_err acc_launcher_manual_proxies(struct acc_launcher *l, struct acc_launcher_entry *e,
                                    const struct acc_launch_hosts *hosts, struct acc_error *err);

/* launcher_batch.c */

/* user: the account the parts run as (accordd is root or may switch);
 * NULL: accordd's own. */
acc_err acc_launcher_submit_parts(struct acc_launcher *l, struct acc_launcher_entry *e,
                                  const char *description, const char *user, struct acc_error *err);
/* Stops the batch parts that still run. */
void acc_launcher_cancel_parts(struct acc_launcher *l, struct acc_launcher_entry *e);
/* Asks about the parts that still run (when poll); true when every part
 * has ended. */
bool acc_launcher_parts_done(struct acc_launcher *l, struct acc_launcher_entry *e, bool poll);
/* The first part that ended other than with exit status 0, or NULL. */
const struct acc_launcher_part *acc_launcher_part_failed(const struct acc_launcher_entry *e);
/* The parts as "COMPONENT SITE JOBID" lines in e->run.batch, and back
 * (after a restart); false when out of memory. */
bool acc_launcher_batch_text(struct acc_launcher_entry *e);
bool acc_launcher_batch_parse(struct acc_launcher_entry *e, const char *text);

/* launcher_process.c */

/* Whether a component of hosts is on a site with launch = batch. */
bool acc_launcher_has_batch(const struct acc_launcher *l, const struct acc_launch_hosts *hosts);
/* Writes DIR/launch.sh, Hydra's -launcher-exec for the job: the hosts of
 * launch = batch sites through their adapter's process command (for the
 * job's account, or NULL: accordd's own), the others as launcher = fork or
 * ssh would; its path into path.  ACC_ERR_CONFIG with another launcher. */
acc_err acc_launcher_batch_script(struct acc_launcher *l, struct acc_launcher_entry *e,
                                  const struct acc_launch_hosts *hosts, const char *account,
                                  char *path, size_t len, struct acc_error *err);

#endif
