/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_watch.c - one thread per job: it starts the job (unless it was
 * running before a restart), watches it, stops it `grace` before the end of
 * its reservation or on terminate, collects what it left in its directory
 * and reports its end through the hooks. */
#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/log.h"
#include "../../lib/common/proc.h"
#include "../../lib/common/strutil.h"
#include "launcher_int.h"

/* Is the job's wrapper still there?  Reaps it when it is our child (not
 * when it was started before a restart, or by systemd in a unit). */
static bool job_alive(struct acc_launcher_entry *e, int *wstatus, bool *reaped)
{
    if (e->unit[0]) {
        /* systemd is asked once a second at most, not at every look */
        int64_t now = acc_mono_us();
        if (!e->unit_asked || now - e->unit_asked >= 1000000) {
            e->unit_asked = now;
            e->unit_alive = acc_launcher_unit_active(e->unit);
        }
        return e->unit_alive;
    }
    if (e->pid <= 0)
        return false; /* no mpiexec part */
    if (!e->adopt) {
        pid_t w = waitpid(e->pid, wstatus, WNOHANG);
        if (w == e->pid) {
            *reaped = true;
            return false;
        }
        if (w < 0 && errno == ECHILD)
            return false;
        return true;
    }
    int64_t st = acc_proc_start_time(e->pid);
    return st != 0 && st == e->pid_start;
}

/* Waits up to ms for the job to end; true when it did. */
static bool wait_gone(struct acc_launcher_entry *e, int64_t ms, int *wstatus, bool *reaped)
{
    int64_t until = acc_mono_us() + ms * 1000;
    do {
        if (!job_alive(e, wstatus, reaped))
            return true;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    } while (acc_mono_us() < until);
    return !job_alive(e, wstatus, reaped);
}

/* sig to the job's process group, or to every process of its unit (which
 * reaches those that left the group too, whatever account they run as). */
static void signal_job(struct acc_launcher_entry *e, int sig)
{
    if (!e->unit[0]) {
        kill(-e->pid, sig);
        return;
    }
    struct acc_error err;
    if (acc_launcher_unit_kill(e->unit, sig == SIGKILL ? "SIGKILL" : "SIGTERM", &err) &&
        sig != SIGKILL) /* SIGKILL goes to stragglers: the unit is usually gone by then */
        acc_log_warn("agreement %s: %s", e->id, err.msg);
}

/* SIGTERM to the whole group, SIGKILL after the grace period. */
static int stop_group(struct acc_launcher *l, struct acc_launcher_entry *e, int *wstatus,
                      bool *reaped)
{
    acc_launcher_cancel_parts(l, e);
    if (e->pid <= 0 && !e->unit[0])
        return SIGTERM; /* scancel sends SIGTERM, and SIGKILL after KillWait */
    signal_job(e, SIGTERM);
    if (wait_gone(e, l->cfg->launch.grace * 1000, wstatus, reaped)) {
        signal_job(e, SIGKILL); /* stragglers that outlived the wrapper */
        return SIGTERM;
    }
    signal_job(e, SIGKILL);
    wait_gone(e, 5000, wstatus, reaped);
    return SIGKILL;
}

/* Reads the one number in dir/name, in [0, max]: ACC_OK; ACC_ERR_NOT_FOUND
 * when there is no such file; ACC_ERR_INVALID when it is empty, too long or
 * holds anything but that number (why says so, with what it holds made
 * printable). */
static acc_err read_number(const char *dir, const char *name, int64_t max, int64_t *out, char *why,
                           size_t why_len)
{
    size_t len = 0;
    char *text = acc_launcher_read_file(dir, name, ACC_LAUNCHER_NUMBER_FILE_MAX, &len);
    if (!text)
        return ACC_ERR_NOT_FOUND;
    struct acc_error ignored;
    acc_err rc = ACC_OK;
    if (len == 0) {
        snprintf(why, why_len, "its %s file is empty", name);
        rc = ACC_ERR_INVALID;
    } else if (len >= ACC_LAUNCHER_NUMBER_FILE_MAX || strlen(text) != len ||
               acc_parse_i64(text, 0, max, out, &ignored)) {
        for (size_t i = 0; i < len; i++) {
            if (text[i] < 0x20 || text[i] > 0x7e)
                text[i] = text[i] == '\n' && i + 1 == len ? '\0' : '?';
        }
        snprintf(why, why_len, "its %s file holds no number in [0, %" PRId64 "] ('%.32s%s')", name,
                 max, text, len > 32 ? "..." : "");
        rc = ACC_ERR_INVALID;
    }
    free(text);
    return rc;
}

/* Collects what a job left: the mpiexec part's status and output in its
 * directory, then each batch part's status and output file.  A status file
 * that cannot be read as one leaves the exit status unknown (-1), with why
 * set. */
static void collect(struct acc_launcher *l, struct acc_launcher_entry *e, char *why, size_t why_len)
{
    struct acc_run *r = &e->run;
    size_t limit = l->cfg->launch.output_limit, len = 0;
    struct acc_buf out = ACC_BUF_INIT;
    int64_t total = 0;
    if (e->pid > 0 || e->unit[0]) { /* a unit's job may have ended before its pid was asked */
        int64_t status = -1, dropped = 0;
        if (read_number(r->directory, "status", 255, &status, why, why_len) == ACC_OK)
            r->exit_status = (int)status;
        char *text = acc_launcher_read_file(r->directory, "output", limit, &len);
        if (text)
            acc_buf_append(&out, text, len);
        free(text);
        char ignored[160];
        acc_err drc = read_number(r->directory, "output.dropped", INT64_MAX - (int64_t)limit,
                                  &dropped, ignored, sizeof ignored);
        total = drc == ACC_ERR_INVALID ? -1 : (int64_t)len + dropped; /* unknown when unreadable */
    } else if (e->n_parts) {
        r->exit_status = 0; /* from the parts below */
    }
    for (size_t i = 0; i < e->n_parts; i++) {
        const struct acc_launcher_part *x = &e->parts[i];
        int st = x->done ? x->status.exit_status : -1;
        if (r->exit_status == 0 && st != 0)
            r->exit_status = st; /* the first failure (or an unknown status) tells */
        if (!r->signal && x->done && x->status.signal)
            r->signal = x->status.signal;
        char name[128 + 8];
        snprintf(name, sizeof name, "%s.out", x->comp);
        len = 0;
        size_t room = out.len < limit ? limit - out.len : 0;
        char *text = acc_launcher_read_file(r->directory, name, room, &len);
        /* a part on a site without launch = sbatch is a Hydra proxy (launcher = manual);
         * its ranks' output came through mpiexec */
        const struct acc_site_cfg *site = acc_config_site(l->cfg, x->site);
        acc_buf_printf(&out, "== component %s: %s %s on site %s, %s, exit status %d ==\n", x->comp,
                       site && !site->sbatch ? "proxy job" : "batch job", x->job_id, x->site,
                       x->done ? x->status.state : "stopped", st);
        if (text)
            acc_buf_append(&out, text, len);
        free(text);
        if (total >= 0)
            total += (int64_t)len;
    }
    free(r->output);
    r->output_len = 0;
    r->output = acc_buf_detach(&out, &r->output_len);
    r->output_total = total;
}

static void finish(struct acc_launcher *l, struct acc_run *r, enum acc_run_state st,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void finish(struct acc_launcher *l, struct acc_run *r, enum acc_run_state st,
                   const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    r->state = st;
    if (!r->ended)
        r->ended = acc_now();
    r->pid = 0;
    r->pid_start = 0;
    free(r->reason);
    r->reason = acc_strdup(reason);
    acc_log_info("agreement %s: job %s: %s", r->agreement, acc_run_state_name(st), reason);
    l->hooks.ended(l->hooks.ctx, r, reason);
}

/* Starts the job of e unless it must not start; false when it does not run
 * (its end is reported then, or it is left as it was handed over). */
static bool start(struct acc_launcher *l, struct acc_launcher_entry *e)
{
    struct acc_run *r = &e->run;
    struct acc_error err;
    pthread_mutex_lock(&l->lock);
    bool stop = e->stop;
    pthread_mutex_unlock(&l->lock);
    acc_err may = ACC_OK;
    if (!stop && l->hooks.may_start)
        may = l->hooks.may_start(l->hooks.ctx, e->id, &err);
    if (stop) {
        finish(l, r, ACC_RUN_TERMINATED, "the agreement was terminated before its start");
    } else if (may == ACC_ERR_STATE) {
        finish(l, r, ACC_RUN_TERMINATED, "%s", err.msg);
    } else if (may == ACC_ERR_BUSY) {
        acc_log_info("launch %s: not started here: %s", e->id, err.msg); /* handed over */
        return false;
    } else if (may) {
        acc_log_error("launch %s: %s", e->id, err.msg); /* handed over again after a restart */
        return false;
    } else if (acc_now() >= e->ag.end) {
        finish(l, r, ACC_RUN_MISSED,
               "accordd was not running during the reservation; the job never started");
    } else if ((may = acc_launcher_start_job(l, e, &err)) == ACC_ERR_CANCELLED) {
        finish(l, r, ACC_RUN_TERMINATED, "%s", err.msg); /* manual launch: terminated meanwhile */
    } else if (may == ACC_ERR_INTERRUPTED) {
        acc_log_warn("launch %s: %s", e->id, err.msg); /* started anew after a restart */
        return false;
    } else if (may) {
        finish(l, r, ACC_RUN_FAILED, "the job could not be started: %s", err.msg);
    } else {
        acc_log_info("agreement %s: job started (process group %d)", e->id, (int)e->pid);
        l->hooks.started(l->hooks.ctx, r);
    }
    return r->state == ACC_RUN_RUNNING;
}

/* Stopped `grace` before the end, so that the nodes are free at the end. */
static acc_time stop_time(const struct acc_launcher *l, const struct acc_agreement *a)
{
    acc_time deadline = a->end - l->cfg->launch.grace;
    return deadline <= a->start ? a->end : deadline;
}

/* How the watch of a job ended. */
struct watch {
    int wstatus;
    bool reaped;                            /* wstatus is the wrapper's */
    bool ended;                             /* the job and its batch parts ended by themselves */
    bool terminated;                        /* the agreement was terminated */
    bool detached;                          /* accordd stops: the job runs on for the next one */
    const struct acc_launcher_part *failed; /* a manual proxy ended early */
};

/* Watches the job until it ends, is due to stop, is terminated, a proxy
 * fails, or accordd stops. */
static void watch_job(struct acc_launcher *l, struct acc_launcher_entry *e, struct watch *w)
{
    struct acc_agreement *a = &e->ag;
    acc_time deadline = stop_time(l, a);
    unsigned tick = 0;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        if (l->stopping) {
            w->detached = true; /* leave it running: the next accordd watches it */
            break;
        }
        if (e->stop) {
            w->terminated = true;
            break;
        }
        if (e->new_end) {
            /* The agreement was modified: the job stops before its new end. */
            a->end = e->new_end;
            e->new_end = 0;
            deadline = stop_time(l, a);
        }
        pthread_mutex_unlock(&l->lock);
        /* Batch systems are asked every few seconds, not at every look. */
        bool alive = job_alive(e, &w->wstatus, &w->reaped);
        bool poll = tick++ % ACC_LAUNCHER_BATCH_POLL == 0;
        if (alive && acc_launch_cfg_manual(&l->cfg->launch)) {
            /* A proxy that failed at its site leaves mpiexec waiting for it. */
            acc_launcher_parts_done(l, e, poll);
            w->failed = acc_launcher_part_failed(e);
        }
        w->ended = !alive && acc_launcher_parts_done(l, e, poll);
        bool due = acc_now() >= deadline;
        pthread_mutex_lock(&l->lock);
        if (w->ended || due || w->failed)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += ACC_LAUNCHER_WATCH_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &ts);
    }
    pthread_mutex_unlock(&l->lock);
}

/* The run's end as the watch saw it (sig: the signal that stopped it). */
static void report(struct acc_launcher *l, struct acc_launcher_entry *e, const struct watch *w,
                   int sig, const char *why)
{
    struct acc_run *r = &e->run;
    const struct acc_launcher_part *failed = w->failed;
    if (failed) {
        r->signal = sig;
        finish(l, r, ACC_RUN_FAILED,
               "proxy job %s of component %s on site %s ended (%s, exit status %d) while "
               "mpiexec waited for it; the job was stopped",
               failed->job_id, failed->comp, failed->site, failed->status.state,
               failed->status.exit_status);
    } else if (w->terminated) {
        r->signal = sig;
        finish(l, r, ACC_RUN_TERMINATED,
               "the job was stopped because the agreement was "
               "terminated");
    } else if (!w->ended) {
        r->signal = sig;
        finish(l, r, ACC_RUN_STOPPED,
               "the job was still running %" PRId64 " s before the end of its reservation "
               "and was stopped (%s)",
               e->ag.end - r->ended > 0 ? e->ag.end - r->ended : 0,
               sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    } else if (r->exit_status >= 0) {
        finish(l, r, ACC_RUN_EXITED, "the job exited with status %d", r->exit_status);
    } else if (w->reaped && WIFSIGNALED(w->wstatus)) {
        r->signal = WTERMSIG(w->wstatus);
        finish(l, r, ACC_RUN_EXITED, "the job was killed by signal %d from outside accordd",
               r->signal);
    } else if (why[0]) {
        finish(l, r, ACC_RUN_LOST, "the job ended, but %s: its exit status is unknown", why);
    } else {
        finish(l, r, ACC_RUN_LOST,
               "the job ended without an exit status (killed from outside "
               "accordd?)");
    }
}

/* Starts (unless adopted) and watches one job to its end. */
static void run_entry(struct acc_launcher *l, struct acc_launcher_entry *e)
{
    struct acc_run *r = &e->run;
    if (!e->adopt && !start(l, e))
        return;
    if (e->adopt && !acc_launcher_batch_parse(e, r->batch))
        acc_log_error("agreement %s: out of memory reading its batch jobs back; only those read "
                      "are watched",
                      e->id);
    struct watch w = {0};
    int sig = 0;
    watch_job(l, e, &w);
    if (w.detached)
        return;
    if (!w.ended) {
        sig = stop_group(l, e, &w.wstatus, &w.reaped);
    } else {
        if (e->pid > 0 || e->unit[0])
            signal_job(e, SIGKILL); /* anything of the group that outlived the wrapper */
    }
    r->ended = acc_now();
    char why[160] = "";
    collect(l, e, why, sizeof why);
    report(l, e, &w, sig, why);
}

void *acc_launcher_watch_main(void *arg)
{
    struct acc_launcher_entry *e = arg;
    struct acc_launcher *l = e->l;
    run_entry(l, e);
    pthread_mutex_lock(&l->lock);
    for (struct acc_launcher_entry **p = &l->entries; *p; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            break;
        }
    }
    acc_launcher_entry_free(e);
    l->watchers--;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    return NULL;
}
