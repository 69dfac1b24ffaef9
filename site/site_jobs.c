/* SPDX-License-Identifier: Apache-2.0 */
/* site_jobs.c - the job table of accord-site: checked Hydra proxies started
 * as the job's account (the site's job user when it names none; never
 * root), each in a process group and a directory of its own, through the
 * batch adapter's process command when the site has one; submit, status,
 * cancel, and stopping jobs past their reservation.
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

/* Looks the account up into *a; ACC_ERR_FORBIDDEN when it does not exist or
 * is root (what is the configuration's and what a job asks alike). */
static acc_err account(const char *user, struct sjobs_account *a, struct acc_error *err)
{
    struct passwd pw, *pwp = NULL;
    char pwbuf[4096];
    if (strlen(user) >= sizeof a->name || getpwnam_r(user, &pw, pwbuf, sizeof pwbuf, &pwp) != 0 ||
        !pwp)
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "account %.64s: no such user", user);
    if (pw.pw_uid == 0)
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "account %s: jobs never run as root", user);
    acc_strlcpy(a->name, user, sizeof a->name);
    a->uid = pw.pw_uid;
    a->gid = pw.pw_gid;
    a->n_groups = MAX_GROUPS;
    if (getgrouplist(user, pw.pw_gid, a->groups, &a->n_groups) < 0) {
        a->groups[0] = pw.pw_gid;
        a->n_groups = 1;
    }
    return ACC_OK;
}

static void free_table(struct acc_site_jobs *j)
{
    free(j->dir);
    free(j->proxy);
    free(j->nets);
    free(j->jobs);
    free(j);
}

/* Through the batch system the job starts in its directory on a compute
 * node as its account, not as root: every directory above it must let
 * others pass (x), here as on the nodes (the same path on a shared file
 * system).  What can be checked from here is this host's side. */
static acc_err reachable(const char *dir, struct acc_error *err)
{
    char path[PATH_MAX];
    if (!realpath(dir, path))
        return acc_error_set(err, ACC_ERR_CONFIG, "jobs directory %s: %s", dir, strerror(errno));
    for (char *slash = path + strlen(path); slash > path; slash = strrchr(path, '/')) {
        *slash = '\0';
        struct stat sb;
        const char *p = *path ? path : "/";
        if (stat(p, &sb) != 0 || !(sb.st_mode & S_IXOTH))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "jobs directory %s: %s does not let other users pass (mode "
                                 "o+x): the batch system starts each job there as its account",
                                 dir, p);
    }
    return ACC_OK;
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
    struct acc_site_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = account(user, &j->user, err);
    if (rc) {
        err->code = rc = ACC_ERR_CONFIG;
        acc_error_prefix(err, "job_user");
        goto fail;
    }
    j->max_jobs = cfg->max_jobs ? cfg->max_jobs : ACC_SITE_JOBS_MAX;
    j->output_limit = cfg->output_limit ? cfg->output_limit : ACC_SITE_JOBS_OUTPUT_MAX;
    j->batch = cfg->batch;
    j->dir = strdup(cfg->directory);
    j->proxy = strdup(cfg->proxy_path);
    j->nets = malloc(cfg->n_nets * sizeof *j->nets);
    j->jobs = calloc(j->max_jobs, sizeof *j->jobs);
    if (!j->dir || !j->proxy || !j->nets || !j->jobs) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    memcpy(j->nets, cfg->nets, cfg->n_nets * sizeof *j->nets);
    j->n_nets = cfg->n_nets;
    if (mkdir(j->dir, 0711) != 0 && errno != EEXIST) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "cannot make %s: %s", j->dir, strerror(errno));
        goto fail;
    }
    if (j->batch && (rc = reachable(j->dir, err)))
        goto fail;
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
 * directory, the account's groups and ids, exec. */
static acc_err spawn(const struct sjobs_account *j, const char *dir, const char *const *argv,
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
    if (j->batch && (!b->local_id || !acc_name_valid(b->local_id, 127)))
        return acc_error_set(err, ACC_ERR_INVALID, "job: reservation %s has no usable local id",
                             b->key);
    return acc_site_proxy_check(job->executable, job->args, job->n_args, j->nets, j->n_nets, NULL,
                                err);
}

/* The proxy's whole environment: PATH, HOME, USER, and what the batch
 * adapter's command needs (TZ, SLURM_CONF or SGE_ROOT and SGE_CELL). */
static const char **job_env(const char *home, const char *user, const struct acc_command *cmd)
{
    const char **envp = calloc(4 + cmd->n_env, sizeof *envp);
    if (!envp)
        return NULL;
    size_t n = 0;
    envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
    envp[n++] = home;
    envp[n++] = user;
    for (size_t i = 0; i < cmd->n_env; i++)
        envp[n++] = cmd->env[i];
    envp[n] = NULL;
    return envp;
}

/* The batch adapter's command for the proxy (nothing without one). */
static acc_err batch_command(struct acc_site_jobs *j, const struct acc_site_job_booking *b,
                             const struct acc_job *job, const char *account, const char *dir,
                             struct acc_command *cmd, struct acc_error *err)
{
    memset(cmd, 0, sizeof *cmd);
    if (!j->batch)
        return ACC_OK;
    char output[PATH_MAX + 16];
    snprintf(output, sizeof output, "%s/proxy.out", dir);
    struct acc_job p = {.key = job->key,
                        .local_id = b->local_id,
                        .nodes = 1,
                        .ppn = 1,
                        .executable = j->proxy,
                        .args = job->args,
                        .n_args = job->n_args,
                        .directory = dir,
                        .output = output,
                        .end = b->end,
                        .host = job->host,
                        .user = account};
    acc_err rc = acc_adapter_process_command(j->batch, &p, cmd, err);
    if (rc)
        acc_error_prefix(err, "job");
    return rc;
}

acc_err acc_site_jobs_submit(struct acc_site_jobs *j, const char *peer,
                             const struct acc_site_job_booking *b, const struct acc_job *job,
                             acc_time now, char *id, size_t id_len, struct acc_error *err)
{
    acc_err rc = check_submit(j, peer, b, job, now, err);
    if (rc)
        return rc;
    struct sjobs_account who = j->user;
    if (job->user && (rc = account(job->user, &who, err)))
        return rc;
    pthread_mutex_lock(&j->lock);
    sweep(j, now);
    struct site_job x = {0};
    struct acc_command cmd = {0};
    const char **envp = NULL;
    char dir[PATH_MAX], limit[32];
    const char *argv[48 + ACC_SITE_PROXY_MAX_ARGS];
    if (!make_room(j)) {
        rc = acc_error_set(err, ACC_ERR_OVERLOADED, "job: this site runs %zu jobs already",
                           j->max_jobs);
        goto out;
    }
    snprintf(x.id, sizeof x.id, "p%" PRId64 "-%u", (int64_t)now, j->seq++);
    acc_strlcpy(x.peer, peer, sizeof x.peer);
    acc_strlcpy(x.key, job->key, sizeof x.key);
    acc_strlcpy(x.host, job->host, sizeof x.host);
    x.end = b->end;
    sjobs_dir_path(j, x.id, NULL, dir, sizeof dir);
    if ((rc = batch_command(j, b, job, who.name, dir, &cmd, err)))
        goto out;
    if (cmd.argc + 6 > sizeof argv / sizeof *argv) { /* the wrapper's 5 words, the NULL */
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "job: the batch command is too long");
        goto out;
    }
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
    if (cmd.argc) { /* the batch command ends with the proxy and its arguments */
        for (size_t i = 0; i < cmd.argc; i++)
            argv[k++] = cmd.argv[i];
    } else {
        argv[k++] = j->proxy;
        for (size_t i = 0; i < job->n_args; i++)
            argv[k++] = job->args[i];
    }
    argv[k] = NULL;
    char home[PATH_MAX + 8], user[96];
    snprintf(home, sizeof home, "HOME=%s", dir);
    snprintf(user, sizeof user, "USER=%s", who.name);
    if (!(envp = job_env(home, user, &cmd))) {
        sjobs_remove(j, x.id);
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
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
    free(envp);
    acc_command_release(&cmd);
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
