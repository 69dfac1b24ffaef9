/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_manual.c - a meta-job across domains without ssh: mpiexec.hydra
 * runs here with -launcher manual, prints one HYDRA_LAUNCH line per host and
 * waits for the proxies to connect to its control port; each line goes to
 * the daemon of the site that owns the host (the launcher's submit hook,
 * job.host set), which starts the proxy inside the reservation.
 *
 * Measured with MPICH 4.0.2 (docs/launch.md): with -hosts hA:2,hB:1 and two
 * MPMD segments Hydra printed
 *   HYDRA_LAUNCH: /usr/bin/hydra_pmi_proxy --control-port 127.0.0.1:45839
 *   --rmk user --launcher manual --demux poll --pgid 0 --retries 10
 *   --usize -2 --pmi-port 0 --gpus-per-proc -2 --proxy-id 0
 * (and the same with --proxy-id 1), then HYDRA_LAUNCH_END; proxy N serves
 * the N-th host of -hosts. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "../../lib/common/log.h"
#include "../../lib/common/proc.h"
#include "../../lib/common/strutil.h"
#include "launcher_int.h"

#define PREFIX     "HYDRA_LAUNCH: "
#define END_MARKER "HYDRA_LAUNCH_END"

void acc_manual_release(struct acc_manual_launch *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t k = 0; k < m->proxies[i].argc; k++)
            free(m->proxies[i].argv[k]);
        free(m->proxies[i].argv);
    }
    free(m->proxies);
    memset(m, 0, sizeof *m);
}

/* Splits one command into words; the proxy's id from --proxy-id. */
static acc_err parse_command(const char *s, size_t len, size_t line, size_t n_hosts,
                             struct acc_manual_proxy *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = -1;
    out->argv = calloc(ACC_MANUAL_MAX_WORDS + 1, sizeof *out->argv);
    if (!out->argv)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < len;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t w = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i == w)
            break;
        if (out->argc == ACC_MANUAL_MAX_WORDS)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "mpiexec's HYDRA_LAUNCH line %zu has more than %d words", line,
                                 ACC_MANUAL_MAX_WORDS);
        if (!(out->argv[out->argc++] = acc_strndup(s + w, i - w)))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k + 1 < out->argc; k++) {
        if (strcmp(out->argv[k], "--proxy-id") == 0) {
            int64_t id;
            struct acc_error why;
            if (out->id >= 0 || acc_parse_i64(out->argv[k + 1], 0, (int64_t)n_hosts - 1, &id, &why))
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "mpiexec's HYDRA_LAUNCH line %zu: --proxy-id '%.32s' is not "
                                     "one of the %zu hosts",
                                     line, out->argv[k + 1], n_hosts);
            out->id = (long)id;
        }
    }
    if (out->argc == 0 || out->argv[0][0] == '-')
        return acc_error_set(err, ACC_ERR_INVALID,
                             "mpiexec's HYDRA_LAUNCH line %zu names no proxy to start", line);
    if (out->argc < 2 || out->id < 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "mpiexec's HYDRA_LAUNCH line %zu names no --proxy-id", line);
    return ACC_OK;
}

acc_err acc_manual_parse(const char *text, size_t len, size_t n_hosts,
                         struct acc_manual_launch *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_hosts == 0 || n_hosts > ACC_MANUAL_MAX_PROXIES)
        return acc_error_set(err, ACC_ERR_INVALID, "a manual launch of %zu hosts (1..%d)", n_hosts,
                             ACC_MANUAL_MAX_PROXIES);
    acc_err rc = ACC_OK;
    size_t line = 0;
    for (size_t i = 0; i < len && !out->complete;) {
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break; /* not ended yet */
        size_t l = (size_t)(nl - (text + i));
        const char *s = text + i;
        line++;
        i += l + 1;
        if (l > 0 && s[l - 1] == '\r')
            l--;
        if (l == strlen(END_MARKER) && memcmp(s, END_MARKER, l) == 0) {
            out->complete = true;
            break;
        }
        if (l < strlen(PREFIX) || memcmp(s, PREFIX, strlen(PREFIX)) != 0)
            continue; /* anything else mpiexec says */
        if (l > ACC_MANUAL_LINE_MAX) {
            rc = acc_error_set(err, ACC_ERR_INVALID,
                               "mpiexec's HYDRA_LAUNCH line %zu is longer than %d bytes", line,
                               ACC_MANUAL_LINE_MAX);
            goto fail;
        }
        if (out->n == n_hosts) {
            rc = acc_error_set(err, ACC_ERR_INVALID,
                               "mpiexec printed more HYDRA_LAUNCH lines than the %zu hosts",
                               n_hosts);
            goto fail;
        }
        if (!out->proxies && !(out->proxies = calloc(n_hosts, sizeof *out->proxies))) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto fail;
        }
        struct acc_manual_proxy *x = &out->proxies[out->n++];
        rc = parse_command(s + strlen(PREFIX), l - strlen(PREFIX), line, n_hosts, x, err);
        if (rc)
            goto fail;
        for (size_t k = 0; k + 1 < out->n; k++) {
            if (out->proxies[k].id == x->id) {
                rc = acc_error_set(err, ACC_ERR_INVALID,
                                   "mpiexec's HYDRA_LAUNCH line %zu repeats --proxy-id %ld", line,
                                   x->id);
                goto fail;
            }
        }
    }
    if (out->complete && out->n != n_hosts) {
        rc = acc_error_set(err, ACC_ERR_INVALID,
                           "mpiexec printed %zu HYDRA_LAUNCH lines for %zu hosts", out->n, n_hosts);
        goto fail;
    }
    return ACC_OK;
fail:
    acc_manual_release(out);
    return rc;
}

bool acc_manual_host(const struct acc_launch_hosts *p, size_t n, size_t *comp, const char **host)
{
    for (size_t i = 0; i < p->n_comps; i++) {
        if (n < p->comps[i].n_hosts) {
            *comp = i;
            *host = p->comps[i].hosts[n];
            return true;
        }
        n -= p->comps[i].n_hosts;
    }
    return false;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits for the complete set of lines in the job's output; ACC_ERR_TIMEOUT
 * past proxy_timeout, ACC_ERR_CANCELLED when the run was terminated meanwhile,
 * ACC_ERR_INTERRUPTED when the launcher stops, ACC_ERR_IO when mpiexec ended
 * first. */
static acc_err wait_lines(struct acc_launcher *l, struct acc_launcher_entry *e, size_t n_hosts,
                          struct acc_manual_launch *m, struct acc_error *err)
{
    int64_t until = acc_mono_us() + l->cfg->launch.proxy_timeout * 1000000;
    for (;;) {
        size_t len = 0;
        char *text =
            acc_launcher_read_file(e->run.directory, "output", l->cfg->launch.output_limit, &len);
        memset(m, 0, sizeof *m); /* no output file yet: nothing read */
        acc_err rc = text ? acc_manual_parse(text, len, n_hosts, m, err) : ACC_OK;
        free(text);
        if (rc || m->complete)
            return rc;
        acc_manual_release(m);
        pthread_mutex_lock(&l->lock);
        bool stop = e->stop, stopping = l->stopping;
        pthread_mutex_unlock(&l->lock);
        if (stop)
            return acc_error_set(err, ACC_ERR_CANCELLED,
                                 "the agreement was terminated while its job started");
        if (stopping)
            return acc_error_set(err, ACC_ERR_INTERRUPTED, "accordd stopped while the job started");
        if (acc_proc_start_time(e->pid) != e->pid_start)
            return acc_error_set(err, ACC_ERR_IO,
                                 "mpiexec ended before it printed its proxies' commands");
        if (acc_mono_us() >= until)
            return acc_error_set(err, ACC_ERR_TIMEOUT,
                                 "mpiexec printed no complete HYDRA_LAUNCH set within %lld s",
                                 (long long)l->cfg->launch.proxy_timeout);
        sleep_ms(50);
    }
}

/* Hands proxy x to the site of its host. */
static acc_err submit_proxy(struct acc_launcher *l, struct acc_launcher_entry *e,
                            const struct acc_launch_hosts *hosts, const struct acc_manual_proxy *x,
                            struct acc_error *err)
{
    size_t ci;
    const char *host;
    if (!acc_manual_host(hosts, (size_t)x->id, &ci, &host))
        return acc_error_set(err, ACC_ERR_INVALID, "proxy %ld has no host", x->id);
    const struct acc_alloc_component *c = hosts->comps[ci].comp;
    struct acc_job job = {
        .key = c->reservation,
        .local_id = c->local_id,
        .nodes = 1,
        .ppn = c->ppn,
        .executable = x->argv[0],
        .args = (const char *const *)x->argv + 1,
        .n_args = x->argc - 1,
        .directory = e->run.directory,
        .end = e->ag.end,
        .host = host,
        /* whom it is for: the site runs the proxy as that
         * user's account there */
        .identity = e->ag.identity.user || e->ag.identity.subject ? &e->ag.identity : NULL};
    struct acc_launcher_part part = {0};
    acc_strlcpy(part.comp, c->name, sizeof part.comp);
    acc_strlcpy(part.site, c->site, sizeof part.site);
    if (!l->hooks.submit)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED, "no site can start proxies here");
    acc_err rc = l->hooks.submit(l->hooks.ctx, c->site, &job, part.job_id, sizeof part.job_id, err);
    if (rc) {
        acc_error_prefix(err, "proxy %ld (component %s, host %s)", x->id, c->name, host);
        return rc;
    }
    struct acc_launcher_part *v = realloc(e->parts, (e->n_parts + 1) * sizeof *v);
    if (!v) {
        struct acc_error ignored;
        l->hooks.job_cancel(l->hooks.ctx, c->site, part.job_id, &ignored);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    e->parts = v;
    e->parts[e->n_parts++] = part;
    acc_log_info("agreement %s: proxy %ld for host %s of component %s is job %s on site %s", e->id,
                 x->id, host, c->name, part.job_id, c->site);
    return ACC_OK;
}

acc_err acc_launcher_manual_proxies(struct acc_launcher *l, struct acc_launcher_entry *e,
                                    const struct acc_launch_hosts *hosts, struct acc_error *err)
{
    size_t n_hosts = 0;
    for (size_t i = 0; i < hosts->n_comps; i++)
        n_hosts += hosts->comps[i].n_hosts;
    struct acc_manual_launch m;
    size_t before = e->n_parts;
    acc_err rc = wait_lines(l, e, n_hosts, &m, err);
    for (size_t i = 0; !rc && i < m.n; i++)
        rc = submit_proxy(l, e, hosts, &m.proxies[i], err);
    acc_manual_release(&m);
    if (!rc)
        return ACC_OK;
    /* nothing of the job stays: its proxies at the sites, then mpiexec */
    for (size_t i = before; i < e->n_parts; i++) {
        struct acc_error why;
        if (l->hooks.job_cancel(l->hooks.ctx, e->parts[i].site, e->parts[i].job_id, &why))
            acc_log_warn("agreement %s: %s", e->id, why.msg);
    }
    e->n_parts = before;
    struct acc_error ignored; /* the unit goes once its processes are gone */
    if (e->unit[0]) {
        acc_launcher_unit_kill(e->unit, "SIGKILL", &ignored);
    } else {
        kill(-e->pid, SIGKILL);
        waitpid(e->pid, NULL, 0);
    }
    e->pid = 0;
    e->run.pid = 0;
    return rc;
}
