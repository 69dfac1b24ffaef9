#include "launcher.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/proc.h"
#include "../common/strutil.h"
#include "../launch/launch.h"

/* How often a running job is looked at, and every how many looks its batch
 * parts are asked about. */
#define WATCH_MS   200
#define BATCH_POLL 10

/* The wrapper that runs mpiexec: its output (stdout and stderr) goes to
 * `output` as it comes (head unbuffered, so that it can be followed while the
 * job runs) up to $1 bytes, the rest is only counted, and its exit status is
 * written to `status` when it ends by itself.  It lives in the job's process
 * group, so one kill reaches mpiexec, its proxies and the wrapper. */
static const char wrapper[] =
    "limit=$1; shift\n"
    "{ \"$@\"; echo $? > status.tmp && mv status.tmp status; } 2>&1 |\n"
    "    { stdbuf -o0 head -c \"$limit\"; wc -c > output.dropped; } > output\n";

enum phase { WAITING, RUNNING };

/* A component submitted to its site's batch system. */
struct part {
    char comp[64], site[64], job_id[64];
    bool done;
    struct acc_job_status status;
};

struct entry {
    char id[ACC_ID_LEN + 1];
    acc_time start, end;
    enum phase phase;
    bool stop;  /* terminate asked for it */
    bool adopt; /* running before a restart: watch pid, do not start */
    pid_t pid;  /* the wrapper: the job's process group; 0: no mpiexec part */
    int64_t pid_start;
    struct part *parts; /* batch jobs */
    size_t n_parts;
    struct acc_launcher *l;
    struct entry *next;
};

struct acc_launcher {
    const struct acc_config *cfg;
    struct acc_store *store;
    struct acc_launcher_hooks hooks;
    char *root; /* directory of the jobs' directories */
    char *path; /* PATH for jobs */

    pthread_mutex_t lock;
    pthread_cond_t cond; /* entries changed, a job ended, or stopping */
    struct entry *entries;
    unsigned watchers; /* job threads alive */
    bool stopping;
    pthread_t timer;
    bool timer_started;
};

/* ------------------------------------------------------------------ setup */

/* The directory of the jobs' directories, as an absolute path (it is
 * stored with each run and must mean the same after a restart from another
 * working directory): the configured one, or accord-jobs beside the
 * database. */
static char *absolute(const char *configured, const char *db_path)
{
    struct acc_buf b = ACC_BUF_INIT;
    char cwd[PATH_MAX];
    const char *slash = strrchr(db_path, '/');
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

static acc_err mkdirs(const char *path, struct acc_error *err)
{
    char tmp[PATH_MAX];
    if (acc_strlcpy(tmp, path, sizeof tmp) >= sizeof tmp)
        return acc_error_set(err, ACC_ERR_IO, "directory name too long: %.80s", path);
    for (char *p = tmp + 1;; p++) {
        bool last = *p == '\0';
        if (*p == '/' || last) {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return acc_error_set(err, ACC_ERR_IO, "cannot make %s: %s", tmp, strerror(errno));
            if (last)
                break;
            *p = '/';
        }
    }
    return ACC_OK;
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
    struct acc_launch_plan plan;
    struct acc_error perr;
    struct acc_buf meta = ACC_BUF_INIT, rsl = ACC_BUF_INIT;
    acc_err rc = acc_launch_plan_build(a, l->cfg, r->directory, &plan, &perr);
    if (rc == ACC_OK) {
        rc = acc_launch_metampich(&plan, &meta);
        if (!rc)
            rc = acc_launch_rsl(&plan, &rsl);
        acc_launch_plan_release(&plan);
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

/* ------------------------------------------------------------ one job */

static bool write_file(const char *dir, const char *name, const char *text, struct acc_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text ? text : "", f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        acc_error_set(err, ACC_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* Reads at most max bytes of dir/name; NULL when it does not exist. */
static char *read_file(const char *dir, const char *name, size_t max, size_t *len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

/* Records the batch parts as "COMPONENT SITE JOBID" lines in r->batch. */
static void batch_text(const struct entry *e, struct acc_run *r)
{
    struct acc_buf b = ACC_BUF_INIT;
    for (size_t i = 0; i < e->n_parts; i++)
        acc_buf_printf(&b, "%s %s %s\n", e->parts[i].comp, e->parts[i].site, e->parts[i].job_id);
    free(r->batch);
    r->batch = e->n_parts ? acc_buf_detach(&b, NULL) : NULL;
    acc_buf_release(&b);
}

/* Reads r->batch back into e->parts (after a restart). */
static void batch_parse(struct entry *e, const char *text)
{
    for (const char *p = text; p && *p;) {
        struct part x = {0};
        if (sscanf(p, "%63s %63s %63s", x.comp, x.site, x.job_id) == 3) {
            struct part *v = realloc(e->parts, (e->n_parts + 1) * sizeof *v);
            if (!v)
                break;
            e->parts = v;
            e->parts[e->n_parts++] = x;
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
}

/* Stops the batch parts that still run. */
static void cancel_parts(struct acc_launcher *l, struct entry *e)
{
    for (size_t i = 0; i < e->n_parts; i++) {
        struct acc_error err;
        if (!e->parts[i].done &&
            l->hooks.job_cancel(l->hooks.ctx, e->parts[i].site, e->parts[i].job_id, &err))
            acc_log_warn("agreement %s: %s", e->id, err.msg);
    }
}

/* Submits the components of sites with launch = sbatch into their
 * reservations, each with the environment its mpiexec segment would get. */
static acc_err submit_parts(struct acc_launcher *l, struct entry *e, const struct acc_agreement *a,
                            const struct acc_run *r, const char *description, struct acc_error *err)
{
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        const struct acc_site_cfg *site = acc_config_site(l->cfg, c->site);
        if (!site || !site->sbatch)
            continue;
        char v[5][PATH_MAX + 64], output[PATH_MAX];
        snprintf(v[0], sizeof v[0], "ACCORD_AGREEMENT=%s", a->id);
        snprintf(v[1], sizeof v[1], "ACCORD_COMPONENT=%s", c->name);
        snprintf(v[2], sizeof v[2], "ACCORD_LAUNCH_DESCRIPTION=%s", description);
        if (r->style == ACC_LAUNCH_MPICH_G2) {
            snprintf(v[3], sizeof v[3], "GLOBUS_DUROC_SUBJOB_INDEX=%zu", i);
            v[4][0] = '\0';
        } else {
            snprintf(v[3], sizeof v[3], "METAMPICH_CONFIG=%s", description);
            snprintf(v[4], sizeof v[4], "METAMPICH_METAHOST=%s", c->name);
        }
        const char *env[] = {l->path, v[0], v[1], v[2], v[3], v[4][0] ? v[4] : NULL, NULL};
        snprintf(output, sizeof output, "%s/%s.out", r->directory, c->name);
        struct acc_job job = {.key = c->reservation,
                              .local_id = c->local_id,
                              .nodes = c->nodes,
                              .ppn = c->ppn,
                              .executable = c->executable,
                              .args = (const char *const *)c->args,
                              .n_args = c->n_args,
                              .directory = r->directory,
                              .output = output,
                              .end = a->end,
                              .env = env};
        struct part x = {0};
        acc_strlcpy(x.comp, c->name, sizeof x.comp);
        acc_strlcpy(x.site, c->site, sizeof x.site);
        acc_err rc = l->hooks.submit(l->hooks.ctx, c->site, &job, x.job_id, sizeof x.job_id, err);
        struct part *pv = rc ? NULL : realloc(e->parts, (e->n_parts + 1) * sizeof *pv);
        if (!rc && !pv)
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (rc) {
            acc_error_prefix(err, "component %s", c->name);
            cancel_parts(l, e);
            return rc;
        }
        e->parts = pv;
        e->parts[e->n_parts++] = x;
        acc_log_info("agreement %s: component %s is batch job %s on site %s", a->id, c->name,
                     x.job_id, c->site);
    }
    return ACC_OK;
}

/* Starts mpiexec for the components that are not batch jobs. */
static acc_err start_mpiexec(struct acc_launcher *l, struct entry *e,
                             const struct acc_launch_plan *plan, struct acc_run *r,
                             const char *description, struct acc_error *err)
{
    const struct acc_launch_cfg *lc = &l->cfg->launch;
    struct acc_launch_comp *mine = calloc(plan->n_comps ? plan->n_comps : 1, sizeof *mine);
    if (!mine)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_launch_plan part = *plan;
    part.comps = mine;
    part.n_comps = 0;
    for (size_t i = 0; i < plan->n_comps; i++) {
        const struct acc_site_cfg *site = acc_config_site(l->cfg, plan->comps[i].comp->site);
        if (!site || !site->sbatch)
            mine[part.n_comps++] = plan->comps[i];
    }
    if (part.n_comps == 0) {
        free(mine);
        return ACC_OK; /* every component is a batch job */
    }
    struct acc_argv argv = {0};
    acc_err rc = acc_launch_command(&part, lc, r->style, description, &argv, err);
    free(mine);
    if (rc)
        return rc;
    struct acc_buf cmd = ACC_BUF_INIT;
    acc_launch_quote_argv(&argv, &cmd);
    acc_buf_putc(&cmd, '\n');
    struct acc_error ignored; /* the file is for people; the run keeps the command */
    if (acc_buf_ok(&cmd))
        write_file(r->directory, "command", acc_buf_str(&cmd), &ignored);
    free(r->command);
    r->command = acc_buf_detach(&cmd, NULL);
    if (!r->command) {
        acc_argv_release(&argv);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    r->command[strlen(r->command) - 1] = '\0'; /* the file's line end; arguments may hold more */
    /* status and output are the job's: old ones would lie */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/status", r->directory);
    unlink(path);

    char limit[32];
    snprintf(limit, sizeof limit, "%zu", lc->output_limit);
    const char **wargv = calloc(argv.n + 6, sizeof *wargv);
    if (!wargv) {
        acc_argv_release(&argv);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    wargv[k++] = "/bin/sh";
    wargv[k++] = "-c";
    wargv[k++] = wrapper;
    wargv[k++] = "accord-job";
    wargv[k++] = limit;
    for (size_t i = 0; i < argv.n; i++)
        wargv[k++] = argv.v[i];
    wargv[k] = NULL;
    const char *env[] = {l->path, NULL};
    pid_t pid = 0;
    rc = acc_proc_start(wargv, env, r->directory, &pid, err);
    free(wargv);
    acc_argv_release(&argv);
    if (rc)
        return rc;
    e->pid = pid;
    e->pid_start = acc_proc_start_time(pid);
    r->pid = pid;
    r->pid_start = e->pid_start;
    return ACC_OK;
}

/* Starts the job of e: its batch parts, then its mpiexec part.  On failure
 * nothing of it runs. */
static acc_err start_job(struct acc_launcher *l, struct entry *e, struct acc_agreement *a,
                         struct acc_run *r, struct acc_error *err)
{
    struct acc_launch_plan plan;
    acc_err rc = mkdirs(r->directory, err);
    if (!rc)
        rc = acc_launch_plan_build(a, l->cfg, r->directory, &plan, err);
    if (rc)
        return rc;
    char description[PATH_MAX];
    snprintf(description, sizeof description, "%s/%s", r->directory,
             r->style == ACC_LAUNCH_MPICH_G2 ? "job.rsl" : "metampich.conf");
    if (!write_file(r->directory, "metampich.conf", r->metampich, err) ||
        !write_file(r->directory, "job.rsl", r->rsl, err))
        rc = ACC_ERR_IO;
    if (!rc)
        rc = submit_parts(l, e, a, r, description, err);
    if (!rc) {
        rc = start_mpiexec(l, e, &plan, r, description, err);
        if (rc)
            cancel_parts(l, e);
    }
    acc_launch_plan_release(&plan);
    if (rc)
        return rc;
    batch_text(e, r);
    r->started = acc_now();
    r->state = ACC_RUN_RUNNING;
    return ACC_OK;
}

/* Is the job's wrapper still there?  Reaps it when it is our child. */
static bool job_alive(struct entry *e, int *wstatus, bool *reaped)
{
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
static bool wait_gone(struct entry *e, int64_t ms, int *wstatus, bool *reaped)
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

/* SIGTERM to the whole group, SIGKILL after the grace period. */
static int stop_group(struct acc_launcher *l, struct entry *e, int *wstatus, bool *reaped)
{
    cancel_parts(l, e);
    if (e->pid <= 0)
        return SIGTERM; /* scancel sends SIGTERM, and SIGKILL after KillWait */
    kill(-e->pid, SIGTERM);
    if (wait_gone(e, l->cfg->launch.grace * 1000, wstatus, reaped)) {
        kill(-e->pid, SIGKILL); /* stragglers that outlived the wrapper */
        return SIGTERM;
    }
    kill(-e->pid, SIGKILL);
    wait_gone(e, 5000, wstatus, reaped);
    return SIGKILL;
}

/* Polls the batch parts that still run (when poll); true when every part
 * has ended. */
static bool parts_done(struct acc_launcher *l, struct entry *e, bool poll)
{
    bool all = true;
    for (size_t i = 0; i < e->n_parts; i++) {
        struct part *x = &e->parts[i];
        if (!x->done && poll) {
            struct acc_error err;
            struct acc_job_status st;
            if (l->hooks.job_status(l->hooks.ctx, x->site, x->job_id, &st, &err))
                acc_log_warn("agreement %s: %s", e->id, err.msg); /* asked again later */
            else if (st.done) {
                x->done = true;
                x->status = st;
            }
        }
        all &= x->done;
    }
    return all;
}

/* Collects what a job left: the mpiexec part's status and output in its
 * directory, then each batch part's status and output file. */
static void collect(struct acc_launcher *l, struct entry *e, struct acc_run *r)
{
    size_t limit = l->cfg->launch.output_limit, len = 0;
    struct acc_buf out = ACC_BUF_INIT;
    int64_t total = 0;
    if (e->pid > 0) {
        char *status = read_file(r->directory, "status", 64, NULL);
        if (status) {
            r->exit_status = atoi(status);
            free(status);
        }
        char *text = read_file(r->directory, "output", limit, &len);
        if (text)
            acc_buf_append(&out, text, len);
        free(text);
        char *dropped = read_file(r->directory, "output.dropped", 64, NULL);
        total += (int64_t)len + (dropped ? strtoll(dropped, NULL, 10) : 0);
        free(dropped);
    } else if (e->n_parts) {
        r->exit_status = 0; /* from the parts below */
    }
    for (size_t i = 0; i < e->n_parts; i++) {
        const struct part *x = &e->parts[i];
        int st = x->done ? x->status.exit_status : -1;
        if (r->exit_status == 0 && st != 0)
            r->exit_status = st; /* the first failure (or an unknown status) tells */
        if (!r->signal && x->done && x->status.signal)
            r->signal = x->status.signal;
        char name[128 + 8];
        snprintf(name, sizeof name, "%s.out", x->comp);
        len = 0;
        size_t room = out.len < limit ? limit - out.len : 0;
        char *text = read_file(r->directory, name, room, &len);
        acc_buf_printf(&out, "== component %s: batch job %s on site %s, %s, exit status %d ==\n",
                       x->comp, x->job_id, x->site, x->done ? x->status.state : "stopped", st);
        if (text)
            acc_buf_append(&out, text, len);
        free(text);
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

/* Starts (unless adopted) and watches one job to its end. */
static void run_entry(struct acc_launcher *l, struct entry *e)
{
    struct acc_agreement a;
    struct acc_run r;
    struct acc_error err;
    if (acc_store_agreement_get(l->store, e->id, false, &a, &err)) {
        acc_log_error("launch %s: %s", e->id, err.msg);
        return;
    }
    if (acc_store_run_get(l->store, e->id, false, &r, &err)) {
        acc_log_error("launch %s: %s", e->id, err.msg);
        acc_agreement_release(&a);
        return;
    }
    acc_time now = acc_now();
    if (!e->adopt) {
        pthread_mutex_lock(&l->lock);
        bool stop = e->stop;
        pthread_mutex_unlock(&l->lock);
        if (stop) {
            finish(l, &r, ACC_RUN_TERMINATED, "the agreement was terminated before its start");
        } else if (a.state != ACC_STATE_OBSERVED) {
            finish(l, &r, ACC_RUN_TERMINATED, "the agreement is %s; the job was not started",
                   acc_state_name(a.state));
        } else if (now >= a.end) {
            finish(l, &r, ACC_RUN_MISSED,
                   "accordd was not running during the reservation; the job never started");
        } else if (start_job(l, e, &a, &r, &err)) {
            finish(l, &r, ACC_RUN_FAILED, "the job could not be started: %s", err.msg);
        } else {
            acc_log_info("agreement %s: job started (process group %d)", e->id, (int)e->pid);
            if (acc_store_run_update(l->store, &r, &err))
                acc_log_error("launch %s: %s", e->id, err.msg);
        }
        if (r.state != ACC_RUN_RUNNING)
            goto out;
    } else {
        batch_parse(e, r.batch);
        if (a.state != ACC_STATE_OBSERVED) {
            pthread_mutex_lock(&l->lock);
            e->stop = true; /* terminated while accordd was away */
            pthread_mutex_unlock(&l->lock);
        }
    }

    /* Stopped `grace` before the end, so that the nodes are free at the end. */
    acc_time deadline = a.end - l->cfg->launch.grace;
    if (deadline <= a.start)
        deadline = a.end;
    int wstatus = 0, sig = 0;
    unsigned tick = 0;
    bool reaped = false, ended = false, terminated = false, detached = false;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        if (l->stopping) {
            detached = true; /* leave it running: the next accordd watches it */
            break;
        }
        if (e->stop) {
            terminated = true;
            break;
        }
        pthread_mutex_unlock(&l->lock);
        /* Batch systems are asked every few seconds, not at every look. */
        ended = !job_alive(e, &wstatus, &reaped) && parts_done(l, e, tick++ % BATCH_POLL == 0);
        bool due = acc_now() >= deadline;
        pthread_mutex_lock(&l->lock);
        if (ended || due)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WATCH_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &ts);
    }
    pthread_mutex_unlock(&l->lock);
    if (detached)
        goto out;
    if (!ended) {
        sig = stop_group(l, e, &wstatus, &reaped);
    } else {
        if (e->pid > 0)
            kill(-e->pid, SIGKILL); /* anything of the group that outlived the wrapper */
    }
    r.ended = acc_now();
    collect(l, e, &r);
    if (terminated) {
        r.signal = sig;
        finish(l, &r, ACC_RUN_TERMINATED,
               "the job was stopped because the agreement was "
               "terminated");
    } else if (!ended) {
        r.signal = sig;
        finish(l, &r, ACC_RUN_STOPPED,
               "the job was still running %" PRId64 " s before the end of its reservation "
               "and was stopped (%s)",
               a.end - r.ended > 0 ? a.end - r.ended : 0, sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    } else if (r.exit_status >= 0) {
        finish(l, &r, ACC_RUN_EXITED, "the job exited with status %d", r.exit_status);
    } else if (reaped && WIFSIGNALED(wstatus)) {
        r.signal = WTERMSIG(wstatus);
        finish(l, &r, ACC_RUN_EXITED, "the job was killed by signal %d from outside accordd",
               r.signal);
    } else {
        finish(l, &r, ACC_RUN_LOST,
               "the job ended without an exit status (killed from outside "
               "accordd?)");
    }
out:
    acc_run_release(&r);
    acc_agreement_release(&a);
}

static void *watcher_main(void *arg)
{
    struct entry *e = arg;
    struct acc_launcher *l = e->l;
    run_entry(l, e);
    pthread_mutex_lock(&l->lock);
    for (struct entry **p = &l->entries; *p; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            break;
        }
    }
    free(e->parts);
    free(e);
    l->watchers--;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* Under the lock: e goes to its own thread. */
static void spawn_watcher(struct acc_launcher *l, struct entry *e)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    e->phase = RUNNING;
    l->watchers++;
    if (pthread_create(&t, &at, watcher_main, e) != 0) {
        /* Try again at the next tick of the timer. */
        l->watchers--;
        e->phase = WAITING;
        acc_log_error("launch %s: cannot start a thread", e->id);
    }
    pthread_attr_destroy(&at);
}

/* ---------------------------------------------------------------- timer */

static void *timer_main(void *arg)
{
    struct acc_launcher *l = arg;
    pthread_mutex_lock(&l->lock);
    while (!l->stopping) {
        acc_time now = acc_now(), next = 0;
        for (struct entry *e = l->entries; e; e = e->next) {
            if (e->phase != WAITING)
                continue;
            if (e->start <= now)
                spawn_watcher(l, e);
            if (e->phase == WAITING && (!next || e->start < next))
                next = e->start <= now ? now + 1 : e->start;
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

static struct entry *find(struct acc_launcher *l, const char *id)
{
    for (struct entry *e = l->entries; e; e = e->next) {
        if (strcmp(e->id, id) == 0)
            return e;
    }
    return NULL;
}

static void add_entry(struct acc_launcher *l, const char *id, acc_time start, acc_time end,
                      bool adopt, pid_t pid, int64_t pid_start)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e) {
        acc_log_error("launch %s: out of memory; it starts after a restart", id);
        return;
    }
    acc_strlcpy(e->id, id, sizeof e->id);
    e->start = start;
    e->end = end;
    e->adopt = adopt;
    e->pid = pid;
    e->pid_start = pid_start;
    e->l = l;
    pthread_mutex_lock(&l->lock);
    if (find(l, id)) {
        pthread_mutex_unlock(&l->lock);
        free(e);
        return;
    }
    e->next = l->entries;
    l->entries = e;
    if (adopt)
        spawn_watcher(l, e);
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

void acc_launcher_schedule(struct acc_launcher *l, const char *id, acc_time start, acc_time end)
{
    add_entry(l, id, start, end, false, 0, 0);
}

bool acc_launcher_stop(struct acc_launcher *l, const char *id)
{
    pthread_mutex_lock(&l->lock);
    struct entry *e = find(l, id);
    if (!e) {
        pthread_mutex_unlock(&l->lock);
        return false;
    }
    e->stop = true;
    if (e->phase == WAITING)
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
    return read_file(r->directory, "output", l->cfg->launch.output_limit, len);
}

void acc_launcher_counts(struct acc_launcher *l, unsigned *waiting, unsigned *running)
{
    *waiting = *running = 0;
    pthread_mutex_lock(&l->lock);
    for (struct entry *e = l->entries; e; e = e->next) {
        if (e->phase == WAITING)
            (*waiting)++;
        else
            (*running)++;
    }
    pthread_mutex_unlock(&l->lock);
}

acc_err acc_launcher_resume(struct acc_launcher *l, struct acc_error *err)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc = acc_store_run_open(l->store, &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct acc_agreement a;
        struct acc_run r;
        struct acc_error e;
        if (acc_store_agreement_get(l->store, ids[i], false, &a, &e)) {
            acc_log_error("launch %s: %s", ids[i], e.msg);
            continue;
        }
        if (!acc_store_run_get(l->store, ids[i], false, &r, &e)) {
            if (r.state == ACC_RUN_RUNNING) {
                acc_log_info("agreement %s: watching its job again (process group %" PRId64 ")",
                             ids[i], r.pid);
                add_entry(l, ids[i], a.start, a.end, true, (pid_t)r.pid, r.pid_start);
            } else {
                add_entry(l, ids[i], a.start, a.end, false, 0, 0);
            }
            acc_run_release(&r);
        }
        acc_agreement_release(&a);
    }
    free(ids);
    return ACC_OK;
}

/* --------------------------------------------------------- new, free */

acc_err acc_launcher_new(const struct acc_config *cfg, struct acc_store *st,
                         const struct acc_launcher_hooks *hooks, struct acc_launcher **out,
                         struct acc_error *err)
{
    struct acc_launcher *l = calloc(1, sizeof *l);
    if (!l)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    l->cfg = cfg;
    l->store = st;
    l->hooks = *hooks;
    l->root = absolute(cfg->launch.directory ? cfg->launch.directory : NULL, cfg->db_path);
    l->path = job_path(&cfg->launch);
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
        struct entry *e = l->entries;
        l->entries = e->next;
        free(e->parts);
        free(e);
    }
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    free(l->root);
    free(l->path);
    free(l);
}
