/* slurm.c - slurm: nodes on a real Slurm cluster, through its commands.
 *
 *   preview  sinfo (node states), squeue (running jobs), scontrol show res
 *            (reservations): the free frames are computed here (avail.c),
 *            never asked of sbatch --test-only
 *   reserve  scontrol create reservation ReservationName=<key> ..., then read
 *            back; a reservation Slurm silently shrank is deleted and refused
 *   query    scontrol show reservation <key> -o
 *   cancel   scancel --reservation=<key>, scontrol delete ReservationName=<key>
 *   submit   sbatch --reservation=<key> (the script on standard input)
 *   health   scontrol ping
 *
 * Every command runs with SLURM_CONF of the site, TZ=UTC, and a time limit;
 * reads ask for epoch seconds (SLURM_TIME_FORMAT=%s).  Errors are classified
 * by Slurm's own messages and reported with them.  See docs/adapters/slurm.md.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/proc.h"
#include "../../lib/common/strutil.h"
#include "../adapter.h"
#include "avail.h"
#include "../../lib/common/hostlist.h"

#define MAX_OUTPUT   (4u << 20)
#define FOREVER      ((acc_time)1 << 40) /* a job without a time limit */
#define DELETE_TRIES 20                  /* "in use" while jobs are completing */

struct slurm {
    char *name;
    char *conf;      /* SLURM_CONF, or NULL for Slurm's default */
    char *bin_dir;   /* where the commands are, or NULL for PATH */
    char *partition; /* or NULL: the cluster's default */
    char *users;     /* Users= of the reservations */
    char *accounts;  /* Accounts= instead, when set */
    int64_t timeout_ms;
    char env_conf[PATH_MAX + 16];
};

static const char *const known_keys[] = {"slurm_conf", "bin_dir", "partition", "users",
                                         "accounts",   "timeout", NULL};

/* ------------------------------------------------------------- commands */

/* Runs a Slurm command; *r holds its output whatever its exit code.  Fails
 * only when it could not run or timed out. */
static acc_err run(struct slurm *s, const char *cmd, const char *const *args, bool epoch,
                   const char *input, struct acc_proc_result *r, struct acc_error *err)
{
    char path[PATH_MAX];
    if (s->bin_dir)
        snprintf(path, sizeof path, "%s/%s", s->bin_dir, cmd);
    else
        acc_strlcpy(path, cmd, sizeof path);
    const char *argv[24] = {path};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[4] = {"TZ=UTC", NULL, NULL, NULL};
    size_t e = 1;
    if (s->conf)
        env[e++] = s->env_conf;
    if (epoch)
        env[e++] = "SLURM_TIME_FORMAT=%s";
    acc_err rc = acc_proc_run(argv, env, input, s->timeout_ms, MAX_OUTPUT, r, err);
    if (rc == ACC_ERR_TIMEOUT)
        acc_error_set(err, ACC_ERR_TIMEOUT, "site %s: %s did not answer within %lld ms", s->name,
                      cmd, (long long)s->timeout_ms);
    else if (rc)
        acc_error_prefix(err, "site %s", s->name);
    return rc;
}

/* Slurm's words for what went wrong: the error output, or the output. */
static const char *said(const struct acc_proc_result *r)
{
    const char *t = r->err_len ? r->err : r->out;
    while (*t == ' ' || *t == '\n')
        t++;
    return *t ? t : "no message";
}

static bool says(const struct acc_proc_result *r, const char *what)
{
    return strstr(r->err, what) || strstr(r->out, what);
}

/* Maps a failed command to an error code by Slurm's message. */
static acc_err classify(struct slurm *s, const char *what, const struct acc_proc_result *r,
                        struct acc_error *err)
{
    static const struct {
        const char *text;
        acc_err code;
    } table[] = {
        {"Unable to contact slurm controller", ACC_ERR_UNAVAILABLE},
        {"Connection refused", ACC_ERR_UNAVAILABLE},
        {"Socket timed out", ACC_ERR_UNAVAILABLE},
        {"Zero Bytes were transmitted", ACC_ERR_UNAVAILABLE},
        {"Requested nodes are busy", ACC_ERR_BUSY},
        {"overlaps with another reservation", ACC_ERR_BUSY},
        {"Requested node configuration is not available", ACC_ERR_BUSY},
        {"Node count specification invalid", ACC_ERR_BUSY},
        {"Invalid time specified", ACC_ERR_INVALID},
        {"not found", ACC_ERR_NOT_FOUND},
        {"Requested reservation is invalid", ACC_ERR_NOT_FOUND},
        {"Invalid reservation name", ACC_ERR_NOT_FOUND},
    };
    acc_err code = ACC_ERR_ADAPTER; /* invalid user, account, partition, permission... */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (says(r, table[i].text)) {
            code = table[i].code;
            break;
        }
    }
    char msg[512];
    acc_strlcpy(msg, said(r), sizeof msg);
    acc_strtrim(msg);
    for (char *p = msg; *p; p++) {
        if (*p == '\n')
            *p = ' ';
    }
    return acc_error_set(err, code, "site %s: %s: %s", s->name, what, msg);
}

/* The value of key=value in a one-line Slurm record, copied; NULL if absent. */
static char *field(const char *line, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1, *e = v;
            while (*e && *e != ' ' && *e != '\n')
                e++;
            return acc_strndup(v, (size_t)(e - v));
        }
    }
    return NULL;
}

static bool epoch(const char *v, acc_time *out)
{
    int64_t t;
    if (!v || acc_parse_i64(v, 0, INT64_MAX / 2, &t, NULL))
        return false;
    *out = t;
    return true;
}

/* ---------------------------------------------------------------- query */

/* Reads a reservation back into *out (node names as a comma list). */
static acc_err show_reservation(struct slurm *s, const char *key, struct acc_reservation *out,
                                struct acc_error *err)
{
    const char *args[] = {"show", "reservation", key, "-o", NULL};
    struct acc_proc_result r;
    acc_err rc = run(s, "scontrol", args, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = classify(s, "scontrol show reservation", &r, err);
    char *start = NULL, *end = NULL, *cnt = NULL, *nodes = NULL;
    if (!rc) {
        start = field(r.out, "StartTime");
        end = field(r.out, "EndTime");
        cnt = field(r.out, "NodeCnt");
        nodes = field(r.out, "Nodes");
        int64_t k;
        if (!epoch(start, &out->start) || !epoch(end, &out->end) || !cnt ||
            acc_parse_i64(cnt, 0, INT64_MAX, &k, NULL))
            rc = acc_error_set(err, ACC_ERR_ADAPTER,
                               "site %s: cannot read reservation %s from: %.200s", s->name, key,
                               r.out);
        else
            out->amount = k;
    }
    if (!rc) {
        acc_strlcpy(out->local_id, key, sizeof out->local_id);
        struct acc_hostlist h = {0};
        if (acc_hostlist_expand(nodes, &h) == ACC_OK && h.n) {
            struct acc_buf b = ACC_BUF_INIT;
            for (size_t i = 0; i < h.n; i++)
                acc_buf_printf(&b, "%s%s", i ? "," : "", h.names[i]);
            out->nodes = acc_buf_detach(&b, NULL);
        }
        acc_hostlist_release(&h);
    }
    free(start);
    free(end);
    free(cnt);
    free(nodes);
    acc_proc_result_release(&r);
    return rc;
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    (void)local_id; /* the reservation is named by its key */
    return show_reservation(state, key, out, err);
}

/* ---------------------------------------------------------------- cancel */

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    (void)local_id;
    struct slurm *s = state;
    /* Jobs of ours in it first: a reservation in use cannot be deleted. */
    char opt[ACC_KEY_MAX + 32];
    snprintf(opt, sizeof opt, "--reservation=%s", key);
    const char *scancel[] = {opt, NULL};
    struct acc_proc_result r;
    acc_err rc = run(s, "scancel", scancel, false, NULL, &r, err);
    acc_proc_result_release(&r);
    if (rc)
        return rc;
    char name[ACC_KEY_MAX + 32];
    snprintf(name, sizeof name, "ReservationName=%s", key);
    const char *del[] = {"delete", name, NULL};
    for (int attempt = 0; attempt < DELETE_TRIES; attempt++) {
        rc = run(s, "scontrol", del, false, NULL, &r, err);
        if (rc) {
            acc_proc_result_release(&r);
            return rc;
        }
        bool in_use = r.status != 0 && says(&r, "in use");
        if (r.status != 0 && !in_use)
            rc = classify(s, "scontrol delete reservation", &r, err);
        acc_proc_result_release(&r);
        if (rc == ACC_ERR_NOT_FOUND)
            return ACC_OK; /* gone already: cancel is idempotent */
        if (!in_use)
            return rc;
        usleep(250000); /* its jobs are still completing */
    }
    return acc_error_set(err, ACC_ERR_ADAPTER,
                         "site %s: reservation %s stays in use: its jobs do not end", s->name, key);
}

/* ---------------------------------------------------------------- reserve */

static int64_t minutes(int64_t seconds)
{
    return (seconds + 59) / 60;
}

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct slurm *s = state;
    char name[ACC_KEY_MAX + 32], when[64], dur[32], cnt[32], who[256], part[128];
    struct tm tm;
    time_t t = (time_t)start;
    gmtime_r(&t, &tm);
    snprintf(name, sizeof name, "ReservationName=%s", key);
    strftime(when, sizeof when, "StartTime=%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(dur, sizeof dur, "Duration=%" PRId64, minutes(duration));
    snprintf(cnt, sizeof cnt, "NodeCnt=%" PRId64, res->amount);
    if (s->accounts)
        snprintf(who, sizeof who, "Accounts=%s", s->accounts);
    else
        snprintf(who, sizeof who, "Users=%s", s->users);
    const char *args[10] = {"create", "reservation", name, when, dur, cnt, who, NULL, NULL};
    if (s->partition) {
        snprintf(part, sizeof part, "PartitionName=%s", s->partition);
        args[7] = part;
    }
    struct acc_proc_result r;
    acc_err rc = run(s, "scontrol", args, false, NULL, &r, err);
    if (rc) {
        acc_proc_result_release(&r);
        return rc;
    }
    if (r.status != 0) {
        bool dup = says(&r, "Duplicate reservation name");
        rc = dup ? ACC_OK : classify(s, "scontrol create reservation", &r, err);
        acc_proc_result_release(&r);
        if (rc)
            return rc;
        /* The same key again: the reservation it already has. */
        return show_reservation(s, key, out, err);
    }
    acc_proc_result_release(&r);
    rc = show_reservation(s, key, out, err);
    if (rc) {
        struct acc_error ignored;
        cancel(s, key, NULL, &ignored);
        return rc;
    }
    /* Slurm shrinks a reservation silently when other reservations leave
     * too few nodes: such a one is of no use, so it goes. */
    if (out->amount != res->amount) {
        int64_t got = out->amount;
        acc_reservation_release(out);
        struct acc_error cerr;
        if (cancel(s, key, NULL, &cerr))
            return acc_error_copy(err, &cerr);
        return acc_error_set(err, ACC_ERR_BUSY,
                             "site %s: Slurm granted %" PRId64 " of %" PRId64
                             " nodes (other reservations); deleted it",
                             s->name, got, res->amount);
    }
    return ACC_OK;
}

/* ---------------------------------------------------------------- preview */

/* Whether sinfo's short state (%t) lets the node take work.  Allocated,
 * mixed and reserved nodes do: their jobs and reservations say when. */
static bool usable_state(const char *st)
{
    static const char *const bad[] = {"drain", "drng", "down", "fail", "maint",
                                      "unk",   "boot", "futr", "plnd"};
    size_t n = strlen(st);
    if (n == 0 || st[n - 1] == '*' || st[n - 1] == '~' || st[n - 1] == '#')
        return false; /* not responding, powered down, powering up */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (strstr(st, bad[i]))
            return false;
    }
    return true;
}

/* Calls fn for each line of text. */
static acc_err each_line(char *text, acc_err (*fn)(char *line, void *ctx), void *ctx)
{
    for (char *p = text; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        acc_err rc = *p ? fn(p, ctx) : ACC_OK;
        if (rc)
            return rc;
        p = nl ? nl + 1 : NULL;
    }
    return ACC_OK;
}

static acc_err node_line(char *line, void *ctx)
{
    char *bar = strchr(line, '|');
    if (!bar)
        return ACC_OK;
    *bar = '\0';
    return avail_add_node(ctx, line, usable_state(bar + 1));
}

static acc_err add_busy_list(struct avail *a, const char *nodes, acc_time start, acc_time end)
{
    struct acc_hostlist h = {0};
    acc_err rc = acc_hostlist_expand(nodes, &h);
    for (size_t i = 0; !rc && i < h.n; i++)
        rc = avail_add_busy(a, h.names[i], start, end);
    acc_hostlist_release(&h);
    return rc;
}

struct job_ctx {
    struct avail *a;
    acc_time now;
};

static acc_err job_line(char *line, void *arg)
{
    struct job_ctx *j = arg;
    /* id|start|end|nodes */
    char *f[4] = {line, NULL, NULL, NULL};
    for (int i = 1; i < 4; i++) {
        f[i] = f[i - 1] ? strchr(f[i - 1], '|') : NULL;
        if (f[i])
            *f[i]++ = '\0';
    }
    if (!f[3])
        return ACC_OK;
    acc_time start = j->now, end = FOREVER;
    epoch(f[1], &start);
    if (!epoch(f[2], &end))
        end = FOREVER; /* no time limit: busy for good */
    if (end < j->now)
        end = j->now; /* completing past its end */
    /* A job's nodes are busy until one second after its end. */
    return add_busy_list(j->a, f[3], start, end + 1);
}

static acc_err resv_line(char *line, void *ctx)
{
    char *start = field(line, "StartTime"), *end = field(line, "EndTime");
    char *nodes = field(line, "Nodes");
    acc_time s = 0, e = 0;
    acc_err rc = ACC_OK;
    if (epoch(start, &s) && epoch(end, &e))
        rc = add_busy_list(ctx, nodes, s, e);
    free(start);
    free(end);
    free(nodes);
    return rc;
}

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    struct slurm *s = state;
    struct avail a;
    avail_init(&a);
    struct acc_proc_result r = {0};
    char part[128];
    snprintf(part, sizeof part, "--partition=%s", s->partition ? s->partition : "");
    const char *sinfo[] = {"-h", "-N", "-o", "%N|%t", s->partition ? part : NULL, NULL};
    const char *squeue[] = {"-h", "-t", "R,S,CG", "-o", "%i|%S|%e|%N", NULL};
    const char *resv[] = {"show", "reservation", "-o", NULL};
    struct job_ctx jc = {&a, acc_now()};

    acc_err rc = run(s, "sinfo", sinfo, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = classify(s, "sinfo", &r, err);
    if (!rc && each_line(r.out, node_line, &a))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_proc_result_release(&r);

    if (!rc)
        rc = run(s, "squeue", squeue, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = classify(s, "squeue", &r, err);
    if (!rc && each_line(r.out, job_line, &jc))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_proc_result_release(&r);

    if (!rc)
        rc = run(s, "scontrol", resv, true, NULL, &r, err);
    /* "No reservations in the system" is not a failure. */
    if (!rc && r.status != 0 && !says(&r, "No reservations"))
        rc = classify(s, "scontrol show reservation", &r, err);
    if (!rc && r.status == 0 && each_line(r.out, resv_line, &a))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_proc_result_release(&r);

    /* What a reservation takes: whole minutes. */
    if (!rc && avail_frames(&a, res->amount, from, until, minutes(duration) * 60, out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    avail_release(&a);
    return rc;
}

/* ----------------------------------------------------------------- submit */

static acc_err submit(void *state, const struct acc_job *job, char *job_id, size_t job_id_len,
                      struct acc_error *err)
{
    struct slurm *s = state;
    if (!job->executable)
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: the job has no executable", s->name);
    char resv[ACC_KEY_MAX + 32], nodes[32], ppn[48], limit[32], part[128], dir[PATH_MAX + 16],
        output[PATH_MAX + 16];
    snprintf(resv, sizeof resv, "--reservation=%s", job->key);
    snprintf(nodes, sizeof nodes, "--nodes=%" PRId64, job->nodes);
    snprintf(ppn, sizeof ppn, "--ntasks-per-node=%" PRId64, job->ppn > 0 ? job->ppn : 1);
    acc_time now = acc_now();
    int64_t left = job->end > now ? job->end - now : 60;
    snprintf(limit, sizeof limit, "--time=%" PRId64, minutes(left));
    const char *args[12] = {"--parsable", resv, nodes, ppn, limit};
    size_t n = 5;
    if (s->partition) {
        snprintf(part, sizeof part, "--partition=%s", s->partition);
        args[n++] = part;
    }
    if (job->directory) {
        snprintf(dir, sizeof dir, "--chdir=%s", job->directory);
        args[n++] = dir;
    }
    snprintf(output, sizeof output, "--output=%s", job->output ? job->output : "/dev/null");
    args[n++] = output;
    args[n] = NULL;
    /* The script comes on standard input: no file to leave behind. */
    struct acc_buf script = ACC_BUF_INIT;
    acc_buf_puts(&script, "#!/bin/sh\n# submitted by accord for reservation ");
    acc_buf_puts(&script, job->key);
    acc_buf_putc(&script, '\n');
    for (size_t i = 0; job->env && job->env[i]; i++) {
        const char *eq = strchr(job->env[i], '=');
        if (!eq || eq == job->env[i])
            continue;
        acc_buf_printf(&script, "export %.*s=", (int)(eq - job->env[i]), job->env[i]);
        acc_buf_shell_quote(&script, eq + 1);
        acc_buf_putc(&script, '\n');
    }
    acc_buf_puts(&script, "exec ");
    acc_buf_shell_quote(&script, job->executable);
    for (size_t i = 0; i < job->n_args; i++) {
        acc_buf_putc(&script, ' ');
        acc_buf_shell_quote(&script, job->args[i]);
    }
    acc_buf_putc(&script, '\n');
    if (!acc_buf_ok(&script)) {
        acc_buf_release(&script);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    struct acc_proc_result r;
    acc_err rc = run(s, "sbatch", args, false, acc_buf_str(&script), &r, err);
    acc_buf_release(&script);
    if (!rc && r.status != 0)
        rc = classify(s, "sbatch", &r, err);
    if (!rc) {
        /* --parsable: "jobid" or "jobid;cluster" */
        acc_strlcpy(job_id, r.out, job_id_len);
        job_id[strcspn(job_id, ";\n")] = '\0';
        if (!*job_id)
            rc = acc_error_set(err, ACC_ERR_ADAPTER, "site %s: sbatch gave no job id", s->name);
    }
    acc_proc_result_release(&r);
    return rc;
}

/* Slurm's ExitCode "status:signal", both small decimal numbers.  Anything
 * else is not read as 0, which would pass for success. */
static bool exit_code(const char *v, int *status, int *sig)
{
    int n[2] = {0, 0};
    const char *p = v;
    for (int k = 0; k < 2; k++) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 0 || digits > 3)
            return false;
        for (size_t i = 0; i < digits; i++)
            n[k] = n[k] * 10 + (p[i] - '0');
        p += digits;
        if (*p != (k == 0 ? ':' : '\0'))
            return false;
        if (k == 0)
            p++;
    }
    if (n[0] > 255 || n[1] > 127)
        return false;
    *status = n[0];
    *sig = n[1];
    return true;
}

static acc_err job_status(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err)
{
    struct slurm *s = state;
    const char *args[] = {"show", "job", "-o", job_id, NULL};
    struct acc_proc_result r;
    acc_err rc = run(s, "scontrol", args, false, NULL, &r, err);
    if (rc) {
        acc_proc_result_release(&r);
        return rc;
    }
    if (r.status != 0) {
        if (strstr(said(&r), "Invalid job id")) {
            /* Slurm forgets finished jobs after MinJobAge. */
            out->done = true;
            acc_strlcpy(out->state, "PURGED", sizeof out->state);
        } else {
            rc = classify(s, "scontrol show job", &r, err);
        }
        acc_proc_result_release(&r);
        return rc;
    }
    char *word = field(r.out, "JobState"), *code = field(r.out, "ExitCode");
    if (word)
        acc_strlcpy(out->state, word, sizeof out->state);
    else
        rc = acc_error_set(err, ACC_ERR_ADAPTER, "site %s: scontrol show job %s: no JobState",
                           s->name, job_id);
    static const char *const running[] = {"PENDING",    "CONFIGURING", "RUNNING",     "SUSPENDED",
                                          "COMPLETING", "REQUEUED",    "RESIZING",    "SIGNALING",
                                          "STAGE_OUT",  "REQUEUE_FED", "REQUEUE_HOLD"};
    out->done = !rc;
    for (size_t i = 0; i < sizeof running / sizeof *running && out->done; i++)
        out->done = strcmp(out->state, running[i]) != 0;
    if (out->done && code && !exit_code(code, &out->exit_status, &out->signal)) {
        /* Asked again later; once Slurm forgets the job it ends unknown. */
        out->done = false;
        rc = acc_error_set(err, ACC_ERR_ADAPTER,
                           "site %s: scontrol show job %s: ExitCode '%.40s' is not status:signal",
                           s->name, job_id, code);
    }
    free(word);
    free(code);
    acc_proc_result_release(&r);
    return rc;
}

static acc_err job_cancel(void *state, const char *job_id, struct acc_error *err)
{
    struct slurm *s = state;
    const char *args[] = {job_id, NULL};
    struct acc_proc_result r;
    acc_err rc = run(s, "scancel", args, false, NULL, &r, err);
    if (!rc && r.status != 0 && !strstr(said(&r), "Invalid job id") &&
        !strstr(said(&r), "already completing or completed"))
        rc = classify(s, "scancel", &r, err);
    acc_proc_result_release(&r);
    return rc;
}

/* ----------------------------------------------------------------- health */

static acc_err health(void *state, struct acc_health *out)
{
    struct slurm *s = state;
    const char *args[] = {"ping", NULL};
    struct acc_proc_result r;
    struct acc_error err;
    if (run(s, "scontrol", args, false, NULL, &r, &err)) {
        acc_proc_result_release(&r);
        out->up = false;
        acc_strlcpy(out->detail, err.msg, sizeof out->detail);
        return ACC_OK;
    }
    out->up = r.status == 0 && strstr(r.out, "is UP") != NULL;
    acc_strlcpy(out->detail, r.status == 0 ? r.out : said(&r), sizeof out->detail);
    acc_strtrim(out->detail);
    acc_proc_result_release(&r);
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct slurm *s = state;
    s->timeout_ms = 15000;
    s->name = acc_strdup(env->name);
    if (!s->name)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        char **slot = NULL;
        bool known = false;
        for (size_t j = 0; known_keys[j]; j++)
            known |= strcmp(known_keys[j], k) == 0;
        if (!known)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "unknown setting '%s' (slurm takes slurm_conf, bin_dir, "
                                 "partition, users, accounts, timeout)",
                                 k);
        if (strcmp(k, "timeout") == 0) {
            int64_t secs;
            if (acc_duration_parse(v, &secs, err) || secs < 1)
                return acc_error_set(err, ACC_ERR_CONFIG,
                                     "timeout: '%s' is not a duration "
                                     "such as PT15S",
                                     v);
            s->timeout_ms = secs * 1000;
            continue;
        }
        slot = strcmp(k, "slurm_conf") == 0  ? &s->conf
               : strcmp(k, "bin_dir") == 0   ? &s->bin_dir
               : strcmp(k, "partition") == 0 ? &s->partition
               : strcmp(k, "users") == 0     ? &s->users
                                             : &s->accounts;
        free(*slot);
        if (!(*slot = strdup(v)))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!s->users && !(s->users = strdup("root")))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct stat sb;
    if (s->conf && stat(s->conf, &sb) != 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "slurm_conf %s does not exist", s->conf);
    if (s->bin_dir && (stat(s->bin_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        return acc_error_set(err, ACC_ERR_CONFIG, "bin_dir %s is not a directory", s->bin_dir);
    if (s->conf)
        snprintf(s->env_conf, sizeof s->env_conf, "SLURM_CONF=%s", s->conf);
    return ACC_OK;
}

static void close_(void *state)
{
    struct slurm *s = state;
    free(s->name);
    free(s->conf);
    free(s->bin_dir);
    free(s->partition);
    free(s->users);
    free(s->accounts);
}

const struct acc_adapter_ops acc_slurm_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "slurm",
    .caps = ACC_CAP_NODES | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES | ACC_CAP_THREADSAFE,
    .state_size = sizeof(struct slurm),
    .open = open_,
    .close = close_,
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .submit = submit,
    .job_status = job_status,
    .job_cancel = job_cancel,
    .health = health,
};
