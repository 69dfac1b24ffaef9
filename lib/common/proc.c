/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE  /* pipe2: descriptors born close-on-exec, no race with other threads forking \
                      */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <grp.h>
#include <pthread.h>
#include <linux/capability.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strutil.h"
#include "timefmt.h"

extern char **environ;

/* environ with the given entries added or replacing those of the same name. */
static char **merged_env(const char *const *extra)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[k])
        k++;
    char **env = calloc(n + k + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool replaced = false;
        for (size_t j = 0; j < k && !replaced; j++)
            replaced = strncmp(extra[j], environ[i], nl) == 0 && extra[j][nl] == '=';
        if (!replaced)
            env[m++] = environ[i];
    }
    for (size_t j = 0; j < k; j++)
        env[m++] = (char *)extra[j];
    return env;
}

struct sink {
    char *data;
    size_t len, max;
};

static void sink_read(int fd, struct sink *s, bool *open_)
{
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0 || (errno != EINTR && errno != EAGAIN))
            *open_ = false;
        return;
    }
    size_t take = (size_t)n;
    if (s->len + take > s->max)
        take = s->max - s->len; /* keep the start, drop the rest */
    if (take) {
        char *p = realloc(s->data, s->len + take + 1);
        if (!p)
            return;
        s->data = p;
        memcpy(s->data + s->len, buf, take);
        s->len += take;
        s->data[s->len] = '\0';
    }
}

/* Its own process group, default signals, nothing blocked: a clean child
 * whose whole family can be killed at once. */
static void clean_child(posix_spawnattr_t *attr)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &all);
    posix_spawnattr_setpgroup(attr, 0);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                       POSIX_SPAWN_SETSIGDEF);
}

/* Spawns argv (looked up in PATH unless it names a path) with the file
 * actions fa and env added to environ, as a clean child.  0, -1 when out
 * of memory, else posix_spawn's error. */
static int spawn_clean(const char *const *argv, const char *const *env,
                       const posix_spawn_file_actions_t *fa, pid_t *pid)
{
    char **envp = merged_env(env);
    posix_spawnattr_t attr;
    if (!envp)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        free(envp);
        return -1;
    }
    clean_child(&attr);
    int e = strchr(argv[0], '/') ? posix_spawn(pid, argv[0], fa, &attr, (char *const *)argv, envp)
                                 : posix_spawnp(pid, argv[0], fa, &attr, (char *const *)argv, envp);
    posix_spawnattr_destroy(&attr);
    free(envp);
    return e;
}

/* A running child and our ends of its standard streams (-1: closed). */
struct child {
    pid_t pid;
    int in;       /* writes to its stdin */
    int out, err; /* read its stdout and stderr */
};

static void close_fds(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* Starts argv with env added to environ, its standard streams on pipes
 * (ours in *c). */
static acc_err spawn_child(const char *const *argv, const char *const *env, struct child *c,
                           struct acc_error *err)
{
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    bool fa_ok = false;
    acc_err rc = ACC_OK;
    if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) {
        rc = acc_error_set(err, ACC_ERR_IO, "cannot make pipes for %s: %s", argv[0],
                           strerror(errno));
        goto out;
    }
    fa_ok = posix_spawn_file_actions_init(&fa) == 0;
    if (!fa_ok) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
    posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
    posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
    /* nothing else of ours: a library's descriptor opened without
     * close-on-exec (a socket of libcurl's, say) stays with us */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    int e = spawn_clean(argv, env, &fa, &c->pid);
    if (e != 0) {
        c->pid = -1;
        rc = e < 0 ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory")
                   : acc_error_set(err, ACC_ERR_IO, "cannot run %s: %s", argv[0], strerror(e));
        goto out;
    }
    c->in = pin[1];
    c->out = pout[0];
    c->err = perr[0];
    pin[1] = pout[0] = perr[0] = -1;
out:
    close_fds(pin, 2);
    close_fds(pout, 2);
    close_fds(perr, 2);
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Feeds input to the child and reads its output until both streams close
 * or the deadline passes (*timed_out). */
static void pump(struct child *c, const char *input, int64_t deadline, struct sink *so,
                 struct sink *se, bool *timed_out)
{
    size_t written = 0, in_len = input ? strlen(input) : 0;
    bool out_open = true, err_open = true;
    while (out_open || err_open || c->in >= 0) {
        int64_t left_us = deadline - acc_mono_us();
        if (left_us <= 0) {
            *timed_out = true;
            break;
        }
        struct pollfd fds[3];
        int nf = 0, io = -1, ie = -1, ii = -1;
        if (out_open) {
            fds[nf] = (struct pollfd){c->out, POLLIN, 0};
            io = nf++;
        }
        if (err_open) {
            fds[nf] = (struct pollfd){c->err, POLLIN, 0};
            ie = nf++;
        }
        if (c->in >= 0) {
            fds[nf] = (struct pollfd){c->in, POLLOUT, 0};
            ii = nf++;
        }
        int r = poll(fds, (nfds_t)nf, (int)(left_us / 1000 + 1));
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (io >= 0 && fds[io].revents)
            sink_read(c->out, so, &out_open);
        if (ie >= 0 && fds[ie].revents)
            sink_read(c->err, se, &err_open);
        if (ii >= 0 && fds[ii].revents) {
            ssize_t w =
                (fds[ii].revents & POLLOUT) ? write(c->in, input + written, in_len - written) : -1;
            if (w > 0)
                written += (size_t)w;
            if (w < 0 || written == in_len)
                close_fds(&c->in, 1);
        }
    }
}

/* Waits for the child (killed with its group once past the deadline);
 * its wait status in *st. */
static void reap(pid_t pid, int64_t deadline, bool *timed_out, int *st)
{
    if (*timed_out)
        kill(-pid, SIGKILL);
    for (;;) {
        pid_t w = waitpid(pid, st, *timed_out ? 0 : WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
        if (w == 0) {
            /* Output closed but the child lingers: give it the rest of its time. */
            if (acc_mono_us() >= deadline) {
                *timed_out = true;
                kill(-pid, SIGKILL);
            } else {
                struct timespec ts = {0, 2 * 1000000};
                nanosleep(&ts, NULL);
            }
        }
    }
}

acc_err acc_proc_run(const char *const *argv, const char *const *env, const char *input,
                     int64_t timeout_ms, size_t max_output, struct acc_proc_result *out,
                     struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    out->status = -1;
    struct child c = {.pid = -1, .in = -1, .out = -1, .err = -1};
    struct sink so = {NULL, 0, max_output}, se = {NULL, 0, max_output};
    acc_err rc = spawn_child(argv, env, &c, err);
    if (rc)
        goto out;
    if (!input || !*input)
        close_fds(&c.in, 1);
    else
        fcntl(c.in, F_SETFL, O_NONBLOCK);
    int64_t deadline = acc_mono_us() + timeout_ms * 1000;
    pump(&c, input, deadline, &so, &se, &out->timed_out);
    int st = 0;
    reap(c.pid, deadline, &out->timed_out, &st);
    if (out->timed_out) {
        rc = acc_error_set(err, ACC_ERR_TIMEOUT, "%s did not finish within %lld ms", argv[0],
                           (long long)timeout_ms);
    } else if (WIFEXITED(st)) {
        out->status = WEXITSTATUS(st);
        if (out->status == 127 && se.len == 0)
            rc = acc_error_set(err, ACC_ERR_IO, "cannot run %s", argv[0]);
    }
out:
    close_fds(&c.in, 1);
    close_fds(&c.out, 1);
    close_fds(&c.err, 1);
    out->out = so.data ? so.data : strdup("");
    out->out_len = so.len;
    out->err = se.data ? se.data : strdup("");
    out->err_len = se.len;
    return rc;
}

void acc_proc_result_release(struct acc_proc_result *r)
{
    if (!r)
        return;
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

acc_err acc_proc_start(const char *const *argv, const char *const *env, const char *cwd, pid_t *pid,
                       struct acc_error *err)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (cwd)
        posix_spawn_file_actions_addchdir_np(&fa, cwd);
    int e = spawn_clean(argv, env, &fa, pid);
    posix_spawn_file_actions_destroy(&fa);
    if (e < 0)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (e > 0)
        return acc_error_set(err, ACC_ERR_IO, "cannot run %s%s%s: %s", argv[0], cwd ? " in " : "",
                             cwd ? cwd : "", strerror(e));
    return ACC_OK;
}

/* The child of acc_proc_start_as, between fork and exec: only
 * async-signal-safe calls.  On failure it writes its errno to report and
 * ends. */
static _Noreturn void become(const char *const *argv, char *const *envp, const char *cwd,
                             const struct acc_account *as, int report)
{
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDWR);
    if (setpgid(0, 0) != 0 || (cwd && chdir(cwd) != 0) || null < 0 || dup2(null, 0) < 0 ||
        dup2(null, 1) < 0 || dup2(null, 2) < 0)
        goto fail;
    /* everything but the standard streams and the report pipe */
    if (report > 3)
        close_range(3, (unsigned)report - 1, 0);
    close_range((unsigned)report + 1, ~0u, 0);
    if (as &&
        (setgroups(as->n_groups, as->groups) != 0 || setgid(as->gid) != 0 || setuid(as->uid) != 0))
        goto fail;
    /* A daemon that switches accounts without being root holds CAP_SETUID
     * and friends; from one non-root uid to another the kernel keeps them
     * (and ambient ones would pass exec).  The program gets none. */
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none_caps[2] = {{0, 0, 0}, {0, 0, 0}};
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 ||
        syscall(SYS_capset, &hdr, none_caps) != 0)
        goto fail;
    if (getuid() == 0 || geteuid() == 0 || setuid(0) == 0) {
        errno = EPERM; /* root, or root could come back */
        goto fail;
    }
    execve(argv[0], (char *const *)argv, envp);
fail:;
    int e = errno;
    ssize_t ignored = write(report, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

acc_err acc_proc_start_as(const char *const *argv, const char *const *env, const char *cwd,
                          const struct acc_account *as, pid_t *pid, struct acc_error *err)
{
    if (argv[0][0] != '/')
        return acc_error_set(err, ACC_ERR_INVALID, "%s: not an absolute path", argv[0]);
    char **envp = merged_env(env);
    int report[2];
    if (!envp)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (pipe2(report, O_CLOEXEC) != 0) {
        free(envp);
        return acc_error_set(err, ACC_ERR_IO, "cannot run %s: %s", argv[0], strerror(errno));
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = fork();
    if (p == 0)
        become(argv, envp, cwd, as, report[1]);
    int fe = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(report[1]);
    free(envp);
    if (p < 0) {
        close(report[0]);
        return acc_error_set(err, ACC_ERR_IO, "cannot run %s: %s", argv[0], strerror(fe));
    }
    setpgid(p, p); /* either of us may come first */
    int child_errno = 0;
    ssize_t n;
    while ((n = read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n > 0) { /* it ended before exec: reap it, say why */
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
        return acc_error_set(err, ACC_ERR_IO, "cannot run %s as %s%s%s: %s", argv[0],
                             as ? as->name : "its own account", cwd ? " in " : "", cwd ? cwd : "",
                             strerror(child_errno));
    }
    *pid = p;
    return ACC_OK;
}

int64_t acc_proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* After the command name in parentheses (which may hold spaces and
     * parentheses itself) come the fields from the 3rd on; starttime is 22nd. */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    if (!p)
        return 0;
    long long v = strtoll(p + 1, NULL, 10);
    /* A zombie still has its stat; it is as good as gone. */
    char *state = strrchr(buf, ')');
    if (state && state[1] == ' ' && state[2] == 'Z')
        return 0;
    return v;
}

void acc_proc_daemon_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}

const char *acc_proc_said(const struct acc_proc_result *r)
{
    const char *t = r->err_len ? r->err : r->out;
    while (*t == ' ' || *t == '\n')
        t++;
    return *t ? t : "no message";
}

bool acc_proc_says(const struct acc_proc_result *r, const char *what)
{
    return strstr(r->err, what) || strstr(r->out, what);
}

acc_err acc_proc_fail(const struct acc_proc_result *r, const struct acc_proc_verdict *v, size_t n,
                      acc_err fallback, const char *site, const char *what, struct acc_error *err)
{
    acc_err code = fallback;
    for (size_t i = 0; i < n; i++) {
        if (acc_proc_says(r, v[i].text)) {
            code = v[i].code;
            break;
        }
    }
    char msg[512];
    acc_strlcpy(msg, acc_proc_said(r), sizeof msg);
    acc_strtrim(msg);
    for (char *p = msg; *p; p++) {
        if (*p == '\n')
            *p = ' ';
    }
    return acc_error_set(err, code, "site %s: %s: %s", site, what, msg);
}
