/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.c - the launcher's calls: the descriptions of a committed
 * agreement, the copies of what the service hands over, and the timer that
 * gives each job its own thread at its start (launcher_watch.c). */
#include "launcher.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/log.h"
#include "../../lib/common/notify.h"
#include "../../lib/common/strutil.h"
#include "../../lib/sql/sql.h"
#include "launcher_int.h"

/* ------------------------------------------------------------------ setup */

/* The directory of the jobs' directories, as an absolute path (it is
 * stored with each run and must mean the same after a restart from another
 * working directory): the configured one, or accord-jobs beside the
 * database file (in the working directory for a database server's URL). */
static char *absolute(const char *configured, const char *db_path)
{
    struct acc_buf b = ACC_BUF_INIT;
    char cwd[PATH_MAX];
    const char *slash =
        acc_sql_location_can(db_path, ACC_SQL_CAP_FILE) ? strrchr(db_path, '/') : NULL;
    if (configured) {
        if (configured[0] != '/' && getcwd(cwd, sizeof cwd))
            acc_buf_printf(&b, "%s/", cwd);
        acc_buf_puts(&b, configured);
    } else if (slash && strcmp(db_path, ":memory:") != 0) {
        if (db_path[0] != '/' && getcwd(cwd, sizeof cwd))
            acc_buf_printf(&b, "%s/", cwd);
        acc_buf_printf(&b, "%.*s/accord-jobs", (int)(slash - db_path), db_path);
    } else {
        acc_buf_printf(&b, "%s/accord-jobs", getcwd(cwd, sizeof cwd) ? cwd : ".");
    }
    return acc_buf_detach(&b, NULL);
}

/* PATH for jobs: the configured prefix (default: accordd's own directory,
 * where the example programs are built) before accordd's PATH. */
static char *job_path(const struct acc_launch_cfg *lc)
{
    char self[PATH_MAX];
    const char *prefix = lc->path;
    if (!prefix) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = '\0';
            char *slash = strrchr(self, '/');
            if (slash)
                *slash = '\0';
            prefix = self;
        }
    }
    const char *old = getenv("PATH");
    if (!old)
        old = "/usr/local/bin:/usr/bin:/bin";
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_printf(&b, "PATH=%s%s%s", prefix ? prefix : "", prefix ? ":" : "", old);
    return acc_buf_detach(&b, NULL);
}

static char *job_dir(const struct acc_launcher *l, const char *id)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_printf(&b, "%s/%s", l->root, id);
    return acc_buf_detach(&b, NULL);
}

/* ---------------------------------------------------------- descriptions */

acc_err acc_launcher_describe(struct acc_launcher *l, struct acc_agreement *a,
                              struct acc_error *err)
{
    struct acc_run *r = calloc(1, sizeof *r);
    if (!r)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_strlcpy(r->agreement, a->id, sizeof r->agreement);
    r->style = a->launch;
    r->exit_status = -1;
    r->output_total = -1;
    r->directory = job_dir(l, a->id);
    struct acc_launch_hosts hosts;
    struct acc_error perr;
    struct acc_buf meta = ACC_BUF_INIT, rsl = ACC_BUF_INIT;
    acc_err rc = acc_launch_hosts_build(a, l->cfg, r->directory, &hosts, &perr);
    if (rc == ACC_OK) {
        rc = acc_launch_metampich(&hosts, &meta);
        if (!rc)
            rc = acc_launch_rsl(&hosts, &rsl);
        acc_launch_hosts_release(&hosts);
        if (rc)
            acc_error_set(&perr, rc, "cannot write the launch descriptions");
    }
    if (rc == ACC_ERR_NOMEM || !r->directory) {
        acc_buf_release(&meta);
        acc_buf_release(&rsl);
        acc_run_release(r);
        free(r);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    r->metampich = acc_buf_detach(&meta, NULL);
    r->rsl = acc_buf_detach(&rsl, NULL);
    if (rc) {
        /* The agreement stands; only its launch cannot happen. */
        r->state = ACC_RUN_FAILED;
        r->reason = acc_strdup(perr.msg);
    } else if (a->launch == ACC_LAUNCH_NONE || !l->cfg->launch.enabled) {
        r->state = ACC_RUN_DESCRIBED;
        r->reason = acc_strdup(a->launch == ACC_LAUNCH_NONE
                                   ? "launch style none: described, not started by accordd"
                                   : "launching is disabled on this accordd ([launch] enabled)");
    } else {
        r->state = ACC_RUN_WAITING;
    }
    if (a->run) {
        acc_run_release(a->run);
        free(a->run);
    }
    a->run = r;
    return ACC_OK;
}

/* ------------------------------------------------------------- the copies */

/* *dst = a copy of src (NULL stays NULL); false when out of memory. */
static bool dup_str(char **dst, const char *src)
{
    *dst = acc_strdup(src);
    return !src || *dst;
}

static bool copy_component(struct acc_alloc_component *d, const struct acc_alloc_component *s)
{
    d->nodes = s->nodes;
    d->ppn = s->ppn;
    bool ok = dup_str(&d->name, s->name) && dup_str(&d->site, s->site) &&
              dup_str(&d->reservation, s->reservation) && dup_str(&d->local_id, s->local_id) &&
              dup_str(&d->node_names, s->node_names) && dup_str(&d->executable, s->executable);
    if (ok && s->n_args) {
        d->args = calloc(s->n_args, sizeof *d->args);
        ok = d->args != NULL;
        for (size_t i = 0; ok && i < s->n_args; i++, d->n_args++)
            ok = dup_str(&d->args[i], s->args[i]);
    }
    return ok; /* what was copied is freed with the agreement */
}

/* What the launcher keeps of the agreement: its id, owner, state, start,
 * end and components (the descriptions, which need more, are in the run). */
static bool copy_agreement(struct acc_agreement *d, const struct acc_agreement *s)
{
    memset(d, 0, sizeof *d);
    acc_strlcpy(d->id, s->id, sizeof d->id);
    d->state = s->state;
    d->start = s->start;
    d->end = s->end;
    d->launch = s->launch;
    if (!dup_str(&d->initiator, s->initiator) || acc_identity_copy(&d->identity, &s->identity))
        return false;
    if (!s->n_comps)
        return true;
    d->comps = calloc(s->n_comps, sizeof *d->comps);
    if (!d->comps)
        return false;
    for (size_t i = 0; i < s->n_comps; i++) {
        d->n_comps++;
        if (!copy_component(&d->comps[i], &s->comps[i]))
            return false;
    }
    return true;
}

/* The run without its output (it is collected when the job ends). */
static bool copy_run(struct acc_run *d, const struct acc_run *s)
{
    *d = *s;
    d->directory = d->command = d->batch = d->reason = d->output = d->metampich = d->rsl = NULL;
    d->output_len = 0;
    return dup_str(&d->directory, s->directory) && dup_str(&d->command, s->command) &&
           dup_str(&d->batch, s->batch) && dup_str(&d->reason, s->reason) &&
           dup_str(&d->metampich, s->metampich) && dup_str(&d->rsl, s->rsl);
}

void acc_launcher_entry_free(struct acc_launcher_entry *e)
{
    if (!e)
        return;
    free(e->parts);
    acc_agreement_release(&e->ag);
    acc_run_release(&e->run);
    free(e);
}

/* ------------------------------------------------------------ the timer */

/* Under the lock: e goes to its own thread. */
static void spawn_watcher(struct acc_launcher *l, struct acc_launcher_entry *e)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    e->phase = ACC_LAUNCHER_RUNNING;
    l->watchers++;
    if (pthread_create(&t, &at, acc_launcher_watch_main, e) != 0) {
        /* Try again at the next tick of the timer. */
        l->watchers--;
        e->phase = ACC_LAUNCHER_WAITING;
        acc_log_error("launch %s: cannot start a thread", e->id);
    }
    pthread_attr_destroy(&at);
}

static void *timer_main(void *arg)
{
    struct acc_launcher *l = arg;
    pthread_mutex_lock(&l->lock);
    while (!l->stopping) {
        acc_time now = acc_now(), next = 0;
        for (struct acc_launcher_entry *e = l->entries; e; e = e->next) {
            if (e->phase != ACC_LAUNCHER_WAITING)
                continue;
            if (e->ag.start <= now)
                spawn_watcher(l, e);
            if (e->phase == ACC_LAUNCHER_WAITING && (!next || e->ag.start < next))
                next = e->ag.start <= now ? now + 1 : e->ag.start;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (next) {
            /* Wake exactly at the second of the start. */
            ts.tv_sec = (time_t)next;
            ts.tv_nsec = 0;
        } else {
            ts.tv_sec += 60;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &ts);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* ------------------------------------------------------------- the jobs */

static struct acc_launcher_entry *find(struct acc_launcher *l, const char *id)
{
    for (struct acc_launcher_entry *e = l->entries; e; e = e->next) {
        if (strcmp(e->id, id) == 0)
            return e;
    }
    return NULL;
}

/* Takes a copy of a and r: waiting for its start, or (adopt) watched at
 * once. */
static void add_entry(struct acc_launcher *l, const struct acc_agreement *a,
                      const struct acc_run *r, bool adopt)
{
    struct acc_launcher_entry *e = calloc(1, sizeof *e);
    if (!e || !copy_agreement(&e->ag, a) || !copy_run(&e->run, r)) {
        acc_log_error("launch %s: out of memory; it starts after a restart", a->id);
        acc_launcher_entry_free(e);
        return;
    }
    acc_strlcpy(e->id, a->id, sizeof e->id);
    e->adopt = adopt;
    if (adopt) {
        e->pid = (pid_t)r->pid;
        e->pid_start = r->pid_start;
        /* a job started in a unit of its own is watched and stopped through
         * systemd (its processes may be hidden from accordd: ProtectProc=) */
        if (l->units && acc_launcher_unit_find(a->id, e->unit, sizeof e->unit))
            acc_log_info("agreement %s: its job runs in %s", a->id, e->unit);
        e->stop = a->state != ACC_STATE_OBSERVED; /* terminated while accordd was away */
    }
    e->l = l;
    pthread_mutex_lock(&l->lock);
    if (find(l, a->id)) {
        pthread_mutex_unlock(&l->lock);
        acc_launcher_entry_free(e);
        return;
    }
    e->next = l->entries;
    l->entries = e;
    if (adopt)
        spawn_watcher(l, e);
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

void acc_launcher_schedule(struct acc_launcher *l, const struct acc_agreement *a,
                           const struct acc_run *r)
{
    add_entry(l, a, r, false);
}

void acc_launcher_resume_run(struct acc_launcher *l, const struct acc_agreement *a,
                             const struct acc_run *r)
{
    if (r->state == ACC_RUN_RUNNING)
        acc_log_info("agreement %s: watching its job again (process group %" PRId64 ")", a->id,
                     r->pid);
    add_entry(l, a, r, r->state == ACC_RUN_RUNNING);
}

enum acc_launcher_held acc_launcher_retime(struct acc_launcher *l, const char *id, acc_time start,
                                           acc_time end)
{
    pthread_mutex_lock(&l->lock);
    struct acc_launcher_entry *e = find(l, id);
    enum acc_launcher_held held = ACC_LAUNCHER_NONE;
    bool moved = false;
    if (e && e->phase == ACC_LAUNCHER_WAITING) {
        /* The timer reads start under the lock; the watcher is not born yet. */
        moved = e->ag.start != start || e->ag.end != end;
        e->ag.start = start;
        e->ag.end = end;
        held = ACC_LAUNCHER_HELD_WAITING;
    } else if (e) {
        moved = e->ag.end != end || e->new_end;
        if (moved)
            e->new_end = end; /* the watcher owns e->ag: it takes the new end */
        held = ACC_LAUNCHER_HELD_RUNNING;
    }
    if (moved)
        pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    return held;
}

enum acc_launcher_held acc_launcher_held(struct acc_launcher *l, const char *id)
{
    pthread_mutex_lock(&l->lock);
    struct acc_launcher_entry *e = find(l, id);
    enum acc_launcher_held held = !e                                 ? ACC_LAUNCHER_NONE
                                  : e->phase == ACC_LAUNCHER_WAITING ? ACC_LAUNCHER_HELD_WAITING
                                                                     : ACC_LAUNCHER_HELD_RUNNING;
    pthread_mutex_unlock(&l->lock);
    return held;
}

bool acc_launcher_stop(struct acc_launcher *l, const char *id)
{
    pthread_mutex_lock(&l->lock);
    struct acc_launcher_entry *e = find(l, id);
    if (!e) {
        pthread_mutex_unlock(&l->lock);
        return false;
    }
    e->stop = true;
    if (e->phase == ACC_LAUNCHER_WAITING)
        spawn_watcher(l, e); /* it records the run as terminated, starting nothing */
    pthread_cond_broadcast(&l->cond);
    /* The watcher frees e when it is done: wait for it to leave the list. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += l->cfg->launch.grace + 10;
    while (find(l, id) && !l->stopping) {
        if (pthread_cond_timedwait(&l->cond, &l->lock, &ts) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&l->lock);
    return true;
}

char *acc_launcher_output_so_far(struct acc_launcher *l, const struct acc_run *r, size_t *len)
{
    *len = 0;
    if (!r->directory)
        return NULL;
    return acc_launcher_read_file(r->directory, "output", l->cfg->launch.output_limit, len);
}

void acc_launcher_counts(struct acc_launcher *l, unsigned *waiting, unsigned *running)
{
    *waiting = *running = 0;
    pthread_mutex_lock(&l->lock);
    for (struct acc_launcher_entry *e = l->entries; e; e = e->next) {
        if (e->phase == ACC_LAUNCHER_WAITING)
            (*waiting)++;
        else
            (*running)++;
    }
    pthread_mutex_unlock(&l->lock);
}

/* --------------------------------------------------------- new, free */

acc_err acc_launcher_new(const struct acc_config *cfg, const struct acc_launcher_hooks *hooks,
                         struct acc_launcher **out, struct acc_error *err)
{
    struct acc_launcher *l = calloc(1, sizeof *l);
    if (!l)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    l->cfg = cfg;
    l->hooks = *hooks;
    l->root = absolute(cfg->launch.directory, cfg->db_path);
    l->path = job_path(&cfg->launch);
    /* Under systemd a job as accordd's child would share its service's
     * sandbox and cgroup: each goes to a unit of its own instead, which
     * only root may ask PID 1 for (launcher_unit.c). */
    l->units = acc_notify_under_systemd() && geteuid() == 0;
    if (cfg->launch.enabled && acc_notify_under_systemd())
        acc_log_info("jobs run %s",
                     l->units ? "in transient units of their own (accord-jobs.slice)"
                              : "inside accordd's service: only root may start units for them");
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    if (!l->root || !l->path) {
        acc_launcher_free(l);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (pthread_create(&l->timer, NULL, timer_main, l) != 0) {
        acc_launcher_free(l);
        return acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the launcher");
    }
    l->timer_started = true;
    *out = l;
    return ACC_OK;
}

void acc_launcher_free(struct acc_launcher *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->lock);
    l->stopping = true;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    if (l->timer_started)
        pthread_join(l->timer, NULL);
    pthread_mutex_lock(&l->lock);
    while (l->watchers > 0)
        pthread_cond_wait(&l->cond, &l->lock);
    while (l->entries) {
        struct acc_launcher_entry *e = l->entries;
        l->entries = e->next;
        acc_launcher_entry_free(e);
    }
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    free(l->root);
    free(l->path);
    free(l);
}
