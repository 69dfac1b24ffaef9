/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_start.c - a job's directory and files, and the start of its
 * mpiexec part under a small sh wrapper. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/log.h"
#include "../../lib/common/proc.h"
#include "../../lib/common/strutil.h"
#include "launcher_int.h"

/* The wrapper that runs mpiexec: its output (stdout and stderr) goes to
 * `output` as it comes (head unbuffered, so that it can be followed while the
 * job runs) up to $1 bytes, the rest is only counted, and its exit status is
 * written to `status` when it ends by itself.  It lives in the job's process
 * group, so one kill reaches mpiexec, its proxies and the wrapper. */
static const char wrapper[] =
    "limit=$1; shift\n"
    "{ \"$@\"; echo $? > status.tmp && mv status.tmp status; } 2>&1 |\n"
    "    { stdbuf -o0 head -c \"$limit\"; wc -c > output.dropped; } > output\n";

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

/* A job's directory belongs to the job's account, which may have put
 * anything there: its files are opened without following a link, and only
 * a regular file with one name is read or written. */
static int open_job_file(const char *path, int flags)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

bool acc_launcher_write_file(const char *dir, const char *name, const char *text,
                             struct acc_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open_job_file(path, O_WRONLY | O_CREAT);
    FILE *f = fd >= 0 && ftruncate(fd, 0) == 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    bool ok = f && fputs(text ? text : "", f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        acc_error_set(err, ACC_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

char *acc_launcher_read_file(const char *dir, const char *name, size_t max, size_t *len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open_job_file(path, O_RDONLY);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
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

/* Adds mode bits to path (never takes any away), as the file it is: not a
 * link followed (a job's account may own what is around it), and only
 * while accordd owns it. */
static acc_err open_up(const char *path, int flags, mode_t bits, struct acc_error *err)
{
    int fd = open(path, flags | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    acc_err rc = ACC_OK;
    if (fd < 0 || fstat(fd, &st) != 0)
        rc = acc_error_set(err, ACC_ERR_IO, "cannot open %s to the job's account: %s", path,
                           strerror(errno));
    else if (st.st_uid != geteuid())
        rc = acc_error_set(err, ACC_ERR_IO,
                           "cannot open %s to the job's account: it belongs to uid %u, not to "
                           "accordd (a start before this one gave it away); remove it to start "
                           "the job again",
                           path, (unsigned)st.st_uid);
    else if ((st.st_mode & bits) != bits && fchmod(fd, (st.st_mode & 07777) | bits) != 0)
        rc = acc_error_set(err, ACC_ERR_IO, "cannot open %s to the job's account: %s", path,
                           strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* For a job in a unit as another account, from an accordd that may have
 * no capability (it reads the job's files as anyone may, and never chowns):
 * the jobs' directory lets accounts through without listing it, the job's
 * own is readable (systemd gives it to the account) and so are the
 * descriptions accordd wrote into it, whatever accordd's umask. */
static acc_err open_for_unit(const struct acc_launcher *l, const char *dir, struct acc_error *err)
{
    static const char *const files[] = {"metampich.conf", "job.rsl"};
    char path[PATH_MAX];
    acc_err rc = open_up(l->root, O_DIRECTORY, 0711, err);
    if (!rc)
        rc = open_up(dir, O_DIRECTORY, 0755, err);
    for (size_t i = 0; !rc && i < sizeof files / sizeof *files; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, files[i]) >= sizeof path)
            return acc_error_set(err, ACC_ERR_IO, "the job's directory %s is too long", dir);
        rc = open_up(path, 0, 0644, err);
    }
    return rc;
}

/* The command line in the run (and, for people, in the file "command");
 * the job's old status goes (it would lie). */
static acc_err record_command(struct acc_run *r, const struct acc_argv *argv, struct acc_error *err)
{
    struct acc_buf cmd = ACC_BUF_INIT;
    acc_launch_quote_argv(argv, &cmd);
    acc_buf_putc(&cmd, '\n');
    struct acc_error ignored; /* the file is for people; the run keeps the command */
    if (acc_buf_ok(&cmd))
        acc_launcher_write_file(r->directory, "command", acc_buf_str(&cmd), &ignored);
    free(r->command);
    r->command = acc_buf_detach(&cmd, NULL);
    if (!r->command)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    r->command[strlen(r->command) - 1] = '\0'; /* the file's line end; arguments may hold more */
    /* status and output are the job's: old ones would lie */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/status", r->directory);
    unlink(path);
    return ACC_OK;
}

/* Runs argv under the sh wrapper (output limit, exit status file) in the
 * run's directory; e->pid is the wrapper's process. */
static acc_err spawn_wrapped(struct acc_launcher *l, struct acc_launcher_entry *e,
                             const struct acc_argv *argv, const struct acc_account *as,
                             struct acc_error *err)
{
    const struct acc_launch_cfg *lc = &l->cfg->launch;
    struct acc_run *r = &e->run;
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", lc->output_limit);
    const char **wargv = calloc(argv->n + 6, sizeof *wargv);
    if (!wargv)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    size_t k = 0;
    wargv[k++] = "/bin/sh";
    wargv[k++] = "-c";
    wargv[k++] = wrapper;
    wargv[k++] = "accord-job";
    wargv[k++] = limit;
    for (size_t i = 0; i < argv->n; i++)
        wargv[k++] = argv->v[i];
    wargv[k] = NULL;
    /* Hydra's control port within the configured range (manual launches:
     * the sites' proxies connect to it) */
    char ports[64] = "";
    if (lc->control_port_min)
        snprintf(ports, sizeof ports, "MPIEXEC_PORT_RANGE=%u:%u", lc->control_port_min,
                 lc->control_port_max);
    const char *env[] = {l->path, ports[0] ? ports : NULL, NULL};
    pid_t pid = 0;
    acc_err rc;
    if (l->units && !as && geteuid() == 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "no account for the job: it never runs as root");
    } else if (l->units) {
        /* the unit's name holds the start time: a job started again gets a
         * new one while the old unit may still be stopping */
        char unit[sizeof e->unit], what[160];
        if (!acc_launch_unit_name(e->id, (long long)time(NULL), unit, sizeof unit)) {
            free(wargv);
            return acc_error_set(err, ACC_ERR_INTERNAL, "no unit name for agreement %s", e->id);
        }
        snprintf(what, sizeof what, "Accord job of agreement %s", e->id);
        struct acc_launch_unit u = {.name = unit,
                                    .description = what,
                                    .user = as ? as->name : NULL,
                                    .directory = r->directory,
                                    .env = env,
                                    .n_env = 2,
                                    .stop_timeout = (unsigned)lc->grace,
                                    .give_directory = as != NULL};
        rc = acc_launcher_unit_start(&u, wargv, &pid, err);
        if (!rc)
            acc_strlcpy(e->unit, unit, sizeof e->unit);
    } else {
        rc = acc_proc_start_as(wargv, env, r->directory, as, &pid, err);
    }
    free(wargv);
    if (!rc) {
        e->pid = pid;
        e->pid_start = acc_proc_start_time(pid);
        r->pid = pid;
        r->pid_start = e->pid_start;
    }
    return rc;
}

/* Starts mpiexec for the components that are not batch jobs. */
static acc_err start_mpiexec(struct acc_launcher *l, struct acc_launcher_entry *e,
                             const struct acc_launch_hosts *hosts, const char *description,
                             const struct acc_account *as, struct acc_error *err)
{
    const struct acc_launch_cfg *lc = &l->cfg->launch;
    struct acc_run *r = &e->run;
    struct acc_argv argv = {0};
    struct acc_launch_comp *mine = calloc(hosts->n_comps ? hosts->n_comps : 1, sizeof *mine);
    if (!mine)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_launch_hosts part = *hosts;
    part.comps = mine;
    part.n_comps = 0;
    for (size_t i = 0; i < hosts->n_comps; i++) {
        const struct acc_site_cfg *site = acc_config_site(l->cfg, hosts->comps[i].comp->site);
        if (!site || !site->sbatch)
            mine[part.n_comps++] = hosts->comps[i];
    }
    acc_err rc = ACC_OK;
    if (part.n_comps == 0)
        goto out; /* every component is a batch job */
    /* launch = batch sites: Hydra starts every proxy through launch.sh */
    struct acc_launch_cfg with_exec = *lc;
    char script[PATH_MAX];
    if (acc_launcher_has_batch(l, &part)) {
        if (acc_launch_cfg_manual(lc)) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "launch = batch needs [launch] launcher = fork or ssh");
            goto out;
        }
        if ((rc = acc_launcher_batch_script(l, e, &part, as ? as->name : NULL, script,
                                            sizeof script, err)))
            goto out;
        with_exec.launcher = "rsh";
        with_exec.launcher_exec = script;
        lc = &with_exec;
    }
    if ((rc = acc_launch_command(&part, lc, r->style, description, &argv, err)) ||
        (rc = record_command(r, &argv, err)))
        goto out;
    rc = spawn_wrapped(l, e, &argv, as, err);
    if (!rc && acc_launch_cfg_manual(lc))
        rc = acc_launcher_manual_proxies(l, e, &part, err);
    if (rc) {
        r->pid = 0;
        r->pid_start = 0;
    }
out:
    acc_argv_release(&argv);
    free(mine);
    return rc;
}

acc_err acc_launcher_start_job(struct acc_launcher *l, struct acc_launcher_entry *e,
                               struct acc_error *err)
{
    struct acc_run *r = &e->run;
    struct acc_launch_hosts hosts;
    struct acc_account as;
    bool other = false;
    /* whom it runs as, again: the configuration may have changed since
     * the offer was taken */
    acc_err rc =
        acc_config_launch_account(l->cfg, e->ag.initiator, &e->ag.identity, &as, &other, err);
    if (!rc)
        rc = mkdirs(r->directory, err);
    if (!rc)
        rc = acc_launch_hosts_build(&e->ag, l->cfg, r->directory, &hosts, err);
    if (rc)
        return rc;
    char description[PATH_MAX];
    snprintf(description, sizeof description, "%s/%s", r->directory,
             r->style == ACC_LAUNCH_MPICH_G2 ? "job.rsl" : "metampich.conf");
    if (!acc_launcher_write_file(r->directory, "metampich.conf", r->metampich, err) ||
        !acc_launcher_write_file(r->directory, "job.rsl", r->rsl, err))
        rc = ACC_ERR_IO;
    if (!rc && other && l->units)
        rc = open_for_unit(l, r->directory, err);
    /* the job writes its output and status there as its account (a unit's
     * job gets it from systemd: accordd may have no CAP_CHOWN then) */
    if (!rc && other && !l->units && chown(r->directory, as.uid, as.gid) != 0)
        rc = acc_error_set(err, ACC_ERR_IO, "cannot give %s to %s: %s", r->directory, as.name,
                           strerror(errno));
    if (!rc)
        rc = acc_launcher_submit_parts(l, e, description, other ? as.name : NULL, err);
    if (!rc) {
        rc = start_mpiexec(l, e, &hosts, description, other ? &as : NULL, err);
        if (rc)
            acc_launcher_cancel_parts(l, e);
    }
    acc_launch_hosts_release(&hosts);
    if (rc)
        return rc;
    if (!acc_launcher_batch_text(e))
        acc_log_error("agreement %s: out of memory recording its batch jobs; they are not watched "
                      "again after a restart",
                      e->id);
    r->started = acc_now();
    r->state = ACC_RUN_RUNNING;
    return ACC_OK;
}
