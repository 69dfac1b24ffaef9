/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_sweep.c - an experiment's points: every (curve, x, replication) is a
 * task; up to `jobs` tasks run at once, each in a child process that sends
 * its figures back through a pipe.  Results are kept by task index, so the
 * output does not depend on which child finished first. */
#include "wsim.h"
#include "wsim_sweep.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct msg {
    bool ok;
    struct wsim_result r;
    char err[WSIM_ERR_LEN];
};

static void run_task(const struct wsim_experiment *e, size_t curve, size_t x, int rep,
                     struct msg *m)
{
    struct wsim_params p;
    struct wsim_workload_set w = {0};
    memset(m, 0, sizeof *m);
    if (!wsim_experiment_params(e, curve, x, &p, m->err, sizeof m->err))
        return;
    if (wsim_workload_make(&p, rep, &w, m->err, sizeof m->err))
        m->ok = wsim_run(&p, &w, rep, &m->r, m->err, sizeof m->err);
    wsim_workload_free(&w);
    wsim_params_release(&p);
}

static bool write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

static bool read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

struct child {
    pid_t pid;
    int fd;
    size_t task;
};

bool wsim_sweep_run(const struct wsim_experiment *e, int reps, int jobs, struct wsim_result *out,
                    char *err, size_t errlen)
{
    size_t ntask = e->ncurves * e->nxs * (size_t)reps, next = 0, done = 0;
    struct child *run = calloc((size_t)jobs, sizeof *run);
    bool ok = false;
    if (!run) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    int nrun = 0;
    err[0] = '\0';
    while (done < ntask) {
        while (nrun < jobs && next < ntask && !err[0]) {
            size_t t = next++;
            size_t rep = t % (size_t)reps, x = (t / (size_t)reps) % e->nxs,
                   curve = t / ((size_t)reps * e->nxs);
            if (jobs == 1) { /* in process: no fork for a single worker */
                struct msg m;
                run_task(e, curve, x, (int)rep, &m);
                if (!m.ok)
                    snprintf(err, errlen, "%s", m.err);
                out[t] = m.r;
                done++;
                continue;
            }
            int fds[2];
            if (pipe(fds)) {
                snprintf(err, errlen, "pipe: %s", strerror(errno));
                break;
            }
            pid_t pid = fork();
            if (pid < 0) {
                snprintf(err, errlen, "fork: %s", strerror(errno));
                close(fds[0]);
                close(fds[1]);
                break;
            }
            if (pid == 0) {
                close(fds[0]);
                struct msg m;
                run_task(e, curve, x, (int)rep, &m);
                _exit(write_all(fds[1], &m, sizeof m) ? 0 : 1);
            }
            close(fds[1]);
            run[nrun++] = (struct child){pid, fds[0], t};
        }
        if (!nrun)
            break;
        /* Reads whichever child is first in the list: its message is far
         * smaller than a pipe's buffer, so no child blocks on writing. */
        struct child c = run[0];
        memmove(&run[0], &run[1], (size_t)(nrun - 1) * sizeof *run);
        nrun--;
        struct msg m;
        bool got = read_all(c.fd, &m, sizeof m);
        close(c.fd);
        int status;
        while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!got)
            m.ok = false, snprintf(m.err, sizeof m.err, "a worker died (status %d)", status);
        if (!m.ok && !err[0])
            snprintf(err, errlen, "%s", m.err);
        out[c.task] = m.r;
        done++;
    }
    ok = done == ntask && !err[0];
    for (int i = 0; i < nrun; i++) {
        kill(run[i].pid, SIGTERM);
        close(run[i].fd);
        waitpid(run[i].pid, NULL, 0);
    }
    free(run);
    return ok;
}
