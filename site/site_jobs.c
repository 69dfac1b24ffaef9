/* SPDX-License-Identifier: Apache-2.0 */
/* site_jobs.c - the job table of accord-site: checked Hydra proxies started
 * as the site's job user, each in a process group and a directory of its
 * own; submit, status, cancel, and stopping jobs past their reservation.
 * What a job leaves on disk, and finding it again after a restart of the
 * daemon, is site_jobs_record.c.
 * The proxy runs under a small sh wrapper (the launcher's own in accordd)
 * that writes output and status, so a job that outlives the daemon still
 * leaves its outcome. */
#define _GNU_SOURCE /* close_range, getgrouplist */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/common/account.h"
#include "../lib/common/buf.h"
#include "../lib/common/proc.h"
#include "../lib/common/strutil.h"
#include "site_jobs.h"
#include "site_jobs_int.h"

static const char wrapper[] = "limit=$1; shift\n"
                              "{ \"$@\"; echo $? > status.tmp && mv status.tmp status; } 2>&1 |\n"
                              "    { head -c \"$limit\"; wc -c > output.dropped; } > output\n";

static bool group_alive(const struct site_job *x)
{
    return kill(-x->pid, 0) == 0 || errno != ESRCH;
}

/* SIGTERM to the group, SIGKILL after 2 s when it is still there. */
static void stop(struct acc_site_jobs *j, struct site_job *x)
{
    sjobs_settle(j, x);
    if (x->done)
        return;
    char path[PATH_MAX];
    sjobs_record_path(j, x->id, ".cancelled", path, sizeof path);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    kill(-x->pid, SIGTERM);
    for (int i = 0; i < 40 && group_alive(x); i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        /* ours, or (found again by a restart of the same process) still
         * our child: reaped, else its zombie keeps the group */
        waitpid(x->pid, NULL, WNOHANG);
    }
    if (group_alive(x))
        kill(-x->pid, SIGKILL);
    for (int i = 0; i < 40 && waitpid(x->pid, NULL, WNOHANG) == 0; i++) {
        struct timespec ts = {0, 25 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    x->child = false;  /* reaped (or left to init): judged by its start time now */
    x->pid_start = -1; /* never matches again: the job ended */
    sjobs_settle(j, x);
}

/* Jobs past their reservation's end are stopped. */
static void sweep(struct acc_site_jobs *j, acc_time now)
{
    for (size_t i = 0; i < j->n; i++) {
        sjobs_settle(j, &j->jobs[i]);
        if (!j->jobs[i].done && j->jobs[i].end <= now)
            stop(j, &j->jobs[i]);
    }
}

/* "NAME=value", malloc'd; NULL when out of memory. */
static char *env_entry(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *e = malloc(len);
    if (e)
        snprintf(e, len, "%s=%s", name, value);
    return e;
}

static void free_table(struct acc_site_jobs *j)
{
    free(j->dir);
    free(j->proxy);
    free(j->user);
    free(j->srun);
    free(j->slurm_conf);
    free(j->qsub);
    free(j->sge_root);
    free(j->sge_cell);
    free(j->nets);
    free(j->jobs);
    free(j);
}

acc_err acc_site_jobs_open(const struct acc_site_jobs_cfg *cfg, struct acc_site_jobs **out,
                           struct acc_error *err)
{
    const char *user = cfg->job_user && *cfg->job_user ? cfg->job_user : "nobody";
    if (!cfg->directory || !*cfg->directory)
        return acc_error_set(err, ACC_ERR_CONFIG, "no jobs directory");
    if (!cfg->proxy_path || cfg->proxy_path[0] != '/' || access(cfg->proxy_path, X_OK) != 0)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "hydra_pmi_proxy = %s: not an absolute path of an executable",
                             cfg->proxy_path ? cfg->proxy_path : "(none)");
    if (cfg->n_nets == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "control_networks: no network given");
    struct passwd pw, *pwp = NULL;
    char pwbuf[4096];
    if (getpwnam_r(user, &pw, pwbuf, sizeof pwbuf, &pwp) != 0 || !pwp)
        return acc_error_set(err, ACC_ERR_CONFIG, "job_user %s: no such user", user);
    if (pw.pw_uid == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "job_user %s: proxies never run as root", user);
    struct acc_site_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = ACC_OK;
    j->uid = pw.pw_uid;
    j->gid = pw.pw_gid;
    j->n_groups = MAX_GROUPS;
    if (getgrouplist(user, pw.pw_gid, j->groups, &j->n_groups) < 0) {
        j->groups[0] = pw.pw_gid;
        j->n_groups = 1;
    }
    j->max_jobs = cfg->max_jobs ? cfg->max_jobs : ACC_SITE_JOBS_MAX;
    j->output_limit = cfg->output_limit ? cfg->output_limit : ACC_SITE_JOBS_OUTPUT_MAX;
    j->use_srun = cfg->srun;
    j->dir = strdup(cfg->directory);
    j->proxy = strdup(cfg->proxy_path);
    j->user = strdup(user);
    j->srun = strdup(cfg->srun_path ? cfg->srun_path : "srun");
    const char *sc = cfg->slurm_conf ? cfg->slurm_conf : getenv("SLURM_CONF");
    j->slurm_conf = sc ? malloc(strlen(sc) + 12) : NULL;
    if (j->slurm_conf)
        snprintf(j->slurm_conf, strlen(sc) + 12, "SLURM_CONF=%s", sc);
    j->use_qsub = cfg->qsub && !cfg->srun;
    j->qsub = strdup(cfg->qsub_path ? cfg->qsub_path : "qsub");
    j->sge_root = cfg->sge_root ? env_entry("SGE_ROOT", cfg->sge_root) : NULL;
    j->sge_cell = cfg->sge_cell ? env_entry("SGE_CELL", cfg->sge_cell) : NULL;
    j->nets = malloc(cfg->n_nets * sizeof *j->nets);
    j->jobs = calloc(j->max_jobs, sizeof *j->jobs);
    if (!j->dir || !j->proxy || !j->user || !j->srun || !j->nets || !j->jobs ||
        (sc && !j->slurm_conf) || !j->qsub || (cfg->sge_root && !j->sge_root) ||
        (cfg->sge_cell && !j->sge_cell)) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    memcpy(j->nets, cfg->nets, cfg->n_nets * sizeof *j->nets);
    j->n_nets = cfg->n_nets;
    if (mkdir(j->dir, 0711) != 0 && errno != EEXIST) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "cannot make %s: %s", j->dir, strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&j->lock, NULL);
    rc = sjobs_load_existing(j, err);
    if (rc) {
        pthread_mutex_destroy(&j->lock);
        goto fail;
    }
    *out = j;
    return ACC_OK;
fail:
    free_table(j);
    return rc;
}

void acc_site_jobs_close(struct acc_site_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_destroy(&j->lock);
    free_table(j);
}

static bool host_in(const char *nodes, const char *host)
{
    size_t hl = strlen(host);
    for (const char *p = nodes; *p;) {
        p += strspn(p, " ,");
        size_t l = strcspn(p, " ,");
        if (l == hl && memcmp(p, host, l) == 0)
            return true;
        p += l;
    }
    return false;
}

/* Room in the table: the oldest ended job is forgotten (and its directory
 * removed) when it is full. */
static bool make_room(struct acc_site_jobs *j)
{
    if (j->n < j->max_jobs)
        return true;
    for (size_t i = 0; i < j->n; i++) {
        if (j->jobs[i].done) {
            sjobs_remove(j, j->jobs[i].id);
            memmove(&j->jobs[i], &j->jobs[i + 1], (j->n - i - 1) * sizeof *j->jobs);
            j->n--;
            return true;
        }
    }
    return false;
}

/* fork, then in the child only async-signal-safe calls: its own group, its
 * directory, the job user's groups and ids, exec. */
/* Whom a proxy runs as: the job's own account (its reservation's, which
 * the site's mapfile chose) or the site's job_user. */
struct runas {
    const char *name;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int n_groups;
    struct acc_account acct; /* the job's own, when it names one */
};

static acc_err choose_account(const struct acc_site_jobs *j, const struct acc_job *job,
                              struct runas *who, struct acc_error *err)
{
    memset(who, 0, sizeof *who);
    who->name = j->user;
    who->uid = j->uid;
    who->gid = j->gid;
    who->groups = j->groups;
    who->n_groups = j->n_groups;
    if (!job->user || !*job->user)
        return ACC_OK;
    /* never root: the lookup refuses an account whose uid is 0 */
    if (acc_account_lookup(job->user, &who->acct, err))
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "job: account %.64s: %s", job->user, err->msg);
    who->name = who->acct.name;
    who->uid = who->acct.uid;
    who->gid = who->acct.gid;
    who->groups = who->acct.groups;
    who->n_groups = (int)who->acct.n_groups;
    if (who->n_groups == 0) {
        who->groups = &who->acct.gid;
        who->n_groups = 1;
    }
    return ACC_OK;
}

static acc_err spawn(const struct runas *j, const char *dir, const char *const *argv,
                     const char *const *envp, pid_t *pid, struct acc_error *err)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = fork();
    if (p == 0) {
        for (int s = 1; s < NSIG; s++)
            signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int null = open("/dev/null", O_RDWR);
        if (setpgid(0, 0) != 0 || chdir(dir) != 0 || null < 0 || dup2(null, 0) < 0 ||
            dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        close_range(3, ~0u, 0);
        if (setgroups((size_t)j->n_groups, j->groups) != 0 || setgid(j->gid) != 0 ||
            setuid(j->uid) != 0 || setuid(0) == 0)
            _exit(126);
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p < 0)
        return acc_error_set(err, ACC_ERR_IO, "cannot start the proxy: %s", strerror(e));
    setpgid(p, p); /* either of us may come first */
    *pid = p;
    return ACC_OK;
}

static acc_err check_submit(struct acc_site_jobs *j, const char *peer,
                            const struct acc_site_job_booking *b, const struct acc_job *job,
                            acc_time now, struct acc_error *err)
{
    if (!peer || !*peer || strlen(peer) >= sizeof(((struct site_job *)0)->peer) ||
        strchr(peer, '\n'))
        return acc_error_set(err, ACC_ERR_INVALID, "job: no usable peer name");
    if (!job->key || !b->key || strcmp(job->key, b->key) != 0)
        return acc_error_set(err, ACC_ERR_INVALID, "job: key %.95s is not the booking's",
                             job->key ? job->key : "(none)");
    if (strlen(job->key) >= sizeof(((struct site_job *)0)->key))
        return acc_error_set(err, ACC_ERR_INVALID, "job: key too long");
    if (!job->host || !acc_name_valid(job->host, 63))
        return acc_error_set(err, ACC_ERR_INVALID, "job: host '%.63s' is not a host name",
                             job->host ? job->host : "");
    if (b->nodes && !host_in(b->nodes, job->host))
        return acc_error_set(err, ACC_ERR_INVALID, "job: host %s is not a host of reservation %s",
                             job->host, b->key);
    if (now < b->start || now >= b->end)
        return acc_error_set(err, ACC_ERR_STATE, "job: reservation %s is not running now", b->key);
    if ((j->use_srun || j->use_qsub) && (!b->local_id || !acc_name_valid(b->local_id, 127)))
        return acc_error_set(err, ACC_ERR_INVALID, "job: reservation %s has no usable local id",
                             b->key);
    return acc_site_proxy_check(job->executable, job->args, job->n_args, j->nets, j->n_nets, NULL,
                                err);
}

/* The words of qsub's part of the command line, kept while it is built. */
struct qsub_words {
    char ar[128], name[128], host[80], h_rt[40], out[PATH_MAX + 16];
};

/* h_rt: the job must end inside the reservation from when the scheduler
 * starts it (a few seconds on), so it asks for what is left less a margin:
 * 30 s, or half of what is left when that is a minute or less. */
static int64_t qsub_h_rt(acc_time now, acc_time end)
{
    int64_t left = end - now;
    int64_t h = left > 60 ? left - 30 : left / 2;
    return h < 1 ? 1 : h;
}

/* Appends `qsub -sync y -ar LOCALID -N accord-KEY -l h=HOST -l h_rt=N -wd
 * DIR -o DIR/proxy.out -j y -b y` to argv from k; the new count. */
static size_t qsub_args(struct acc_site_jobs *j, const struct acc_site_job_booking *b,
                        const struct acc_job *job, acc_time now, const char *dir, const char **argv,
                        size_t k, struct qsub_words *q)
{
    snprintf(q->ar, sizeof q->ar, "%s", b->local_id);
    snprintf(q->name, sizeof q->name, "accord-%s", job->key);
    snprintf(q->host, sizeof q->host, "h=%s", job->host);
    snprintf(q->h_rt, sizeof q->h_rt, "h_rt=%" PRId64, qsub_h_rt(now, b->end));
    snprintf(q->out, sizeof q->out, "%s/proxy.out", dir);
    const char *words[] = {j->qsub, "-sync", "y",  "-ar",   q->ar, "-N", q->name,
                           "-l",    q->host, "-l", q->h_rt, "-wd", dir,  "-o",
                           q->out,  "-j",    "y",  "-b",    "y",   NULL};
    for (size_t i = 0; words[i]; i++)
        argv[k++] = words[i];
    return k;
}

/* The proxy's whole environment (7 entries at most with the NULL):
 * PATH, HOME, USER, and SLURM_CONF or SGE_ROOT and SGE_CELL when set. */
static void job_env(const struct acc_site_jobs *j, const char *home, const char *user,
                    const char **envp)
{
    size_t n = 0;
    envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
    envp[n++] = home;
    envp[n++] = user;
    const char *extra[] = {j->slurm_conf, j->use_qsub ? j->sge_root : NULL,
                           j->use_qsub ? j->sge_cell : NULL};
    for (size_t i = 0; i < 3; i++) {
        if (extra[i])
            envp[n++] = extra[i];
    }
    envp[n] = NULL;
}

acc_err acc_site_jobs_submit(struct acc_site_jobs *j, const char *peer,
                             const struct acc_site_job_booking *b, const struct acc_job *job,
                             acc_time now, char *id, size_t id_len, struct acc_error *err)
{
    acc_err rc = check_submit(j, peer, b, job, now, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&j->lock);
    sweep(j, now);
    struct site_job x = {0};
    char dir[PATH_MAX], limit[32], resv[160], nodelist[80], name[128];
    struct qsub_words q;
    const char *argv[32 + ACC_SITE_PROXY_MAX_ARGS];
    if (!make_room(j)) {
        rc = acc_error_set(err, ACC_ERR_OVERLOADED, "job: this site runs %zu jobs already",
                           j->max_jobs);
        goto out;
    }
    struct runas who;
    if ((rc = choose_account(j, job, &who, err)))
        goto out;
    snprintf(x.id, sizeof x.id, "p%" PRId64 "-%u", (int64_t)now, j->seq++);
    acc_strlcpy(x.peer, peer, sizeof x.peer);
    acc_strlcpy(x.key, job->key, sizeof x.key);
    acc_strlcpy(x.host, job->host, sizeof x.host);
    x.end = b->end;
    sjobs_dir_path(j, x.id, NULL, dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 || chown(dir, who.uid, who.gid) != 0) {
        rc = acc_error_set(err, ACC_ERR_IO, "job: cannot make %s: %s", dir, strerror(errno));
        goto out;
    }
    size_t k = 0;
    snprintf(limit, sizeof limit, "%zu", j->output_limit);
    argv[k++] = "/bin/sh";
    argv[k++] = "-c";
    argv[k++] = wrapper;
    argv[k++] = "accord-proxy";
    argv[k++] = limit;
    if (j->use_qsub) {
        k = qsub_args(j, b, job, now, dir, argv, k, &q);
    } else if (j->use_srun) {
        snprintf(resv, sizeof resv, "--reservation=%s", b->local_id);
        snprintf(nodelist, sizeof nodelist, "--nodelist=%s", job->host);
        snprintf(name, sizeof name, "--job-name=accord-%s", job->key);
        argv[k++] = j->srun;
        argv[k++] = resv;
        argv[k++] = nodelist;
        argv[k++] = "-N1";
        argv[k++] = "-n1";
        argv[k++] = name;
    }
    argv[k++] = j->proxy;
    for (size_t i = 0; i < job->n_args; i++)
        argv[k++] = job->args[i];
    argv[k] = NULL;
    char home[PATH_MAX + 8], user[96];
    snprintf(home, sizeof home, "HOME=%s", dir);
    snprintf(user, sizeof user, "USER=%s", who.name);
    const char *envp[8];
    job_env(j, home, user, envp);
    rc = spawn(&who, dir, argv, envp, &x.pid, err);
    if (rc) {
        sjobs_remove(j, x.id);
        goto out;
    }
    x.child = true;
    x.pid_start = acc_proc_start_time(x.pid);
    if (!sjobs_write_record(j, &x)) {
        /* not found again after a restart: better not run at all */
        struct site_job tmp = x;
        stop(j, &tmp);
        sjobs_remove(j, x.id);
        rc = acc_error_set(err, ACC_ERR_IO, "job: cannot record %s", x.id);
        goto out;
    }
    acc_strlcpy(x.st.state, "RUNNING", sizeof x.st.state);
    x.st.exit_status = -1;
    j->jobs[j->n++] = x;
    if (acc_strlcpy(id, x.id, id_len) >= id_len)
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "job id buffer too small");
out:
    pthread_mutex_unlock(&j->lock);
    return rc;
}

static struct site_job *find(struct acc_site_jobs *j, const char *peer, const char *id)
{
    for (size_t i = 0; id && peer && i < j->n; i++) {
        if (strcmp(j->jobs[i].id, id) == 0)
            return strcmp(j->jobs[i].peer, peer) == 0 ? &j->jobs[i] : NULL;
    }
    return NULL;
}

acc_err acc_site_jobs_status(struct acc_site_jobs *j, const char *peer, const char *id,
                             struct acc_job_status *out, struct acc_error *err)
{
    pthread_mutex_lock(&j->lock);
    sweep(j, acc_now());
    struct site_job *x = find(j, peer, id);
    if (x) {
        if (x->done) {
            *out = x->st;
        } else {
            memset(out, 0, sizeof *out);
            out->exit_status = -1;
            acc_strlcpy(out->state, "RUNNING", sizeof out->state);
        }
    }
    pthread_mutex_unlock(&j->lock);
    if (!x)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no job %.95s", id ? id : "");
    return ACC_OK;
}

acc_err acc_site_jobs_cancel(struct acc_site_jobs *j, const char *peer, const char *id,
                             struct acc_error *err)
{
    pthread_mutex_lock(&j->lock);
    struct site_job *x = find(j, peer, id);
    if (x)
        stop(j, x);
    pthread_mutex_unlock(&j->lock);
    if (!x)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no job %.95s", id ? id : "");
    return ACC_OK;
}

size_t acc_site_jobs_cancel_key(struct acc_site_jobs *j, const char *key)
{
    size_t n = 0;
    pthread_mutex_lock(&j->lock);
    for (size_t i = 0; key && i < j->n; i++) {
        struct site_job *x = &j->jobs[i];
        sjobs_settle(j, x);
        if (!x->done && strcmp(x->key, key) == 0) {
            stop(j, x);
            n++;
        }
    }
    pthread_mutex_unlock(&j->lock);
    return n;
}

size_t acc_site_jobs_running(struct acc_site_jobs *j)
{
    size_t n = 0;
    pthread_mutex_lock(&j->lock);
    for (size_t i = 0; i < j->n; i++) {
        sjobs_settle(j, &j->jobs[i]);
        n += !j->jobs[i].done;
    }
    pthread_mutex_unlock(&j->lock);
    return n;
}
