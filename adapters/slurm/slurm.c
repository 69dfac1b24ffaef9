/* SPDX-License-Identifier: Apache-2.0 */
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
 *   process_command  srun --reservation=<local id> --nodelist=HOST -N1 -n1
 *   health   scontrol ping
 *
 * The commands are run, their failures classified and their outputs read in
 * slurm_cmd.c (slurm_internal.h).  See docs/adapters/slurm.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/account.h"
#include "../../lib/common/strutil.h"
#include "slurm_internal.h"

#define DELETE_TRIES 20 /* "in use" while jobs are completing */

static const char *const known_keys[] = {"slurm_conf", "bin_dir", "partition", "users",
                                         "accounts",   "timeout", NULL};

/* ---------------------------------------------------------------- query */

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    (void)local_id; /* the reservation is named by its key */
    return slurm_show_reservation(state, key, out, err);
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
    acc_err rc = slurm_run(s, "scancel", scancel, false, NULL, &r, err);
    acc_proc_result_release(&r);
    if (rc)
        return rc;
    char name[ACC_KEY_MAX + 32];
    snprintf(name, sizeof name, "ReservationName=%s", key);
    const char *del[] = {"delete", name, NULL};
    for (int attempt = 0; attempt < DELETE_TRIES; attempt++) {
        rc = slurm_run(s, "scontrol", del, false, NULL, &r, err);
        if (rc) {
            acc_proc_result_release(&r);
            return rc;
        }
        bool in_use = r.status != 0 && acc_proc_says(&r, "in use");
        if (r.status != 0 && !in_use)
            rc = slurm_classify(s, "scontrol delete reservation", &r, err);
        acc_proc_result_release(&r);
        if (rc == ACC_ERR_NOT_FOUND)
            return ACC_OK; /* gone already: cancel is idempotent */
        if (!in_use)
            return rc;
        usleep(250000); /* its jobs are still completing */
    }
    return acc_error_set(err, ACC_ERR_ADAPTER,
                         "site %s: reservation %s stays in use: its jobs do not end", s->b.name,
                         key);
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
    char name[ACC_KEY_MAX + 32], when[64], dur[32], cnt[32], who[256], acct[256], part[128];
    struct tm tm;
    time_t t = (time_t)start;
    gmtime_r(&t, &tm);
    snprintf(name, sizeof name, "ReservationName=%s", key);
    strftime(when, sizeof when, "StartTime=%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(dur, sizeof dur, "Duration=%" PRId64, minutes(duration));
    snprintf(cnt, sizeof cnt, "NodeCnt=%" PRId64, res->amount);
    /* The user's own account when the reservation names one (it replaces
     * the users setting); Accounts= too when set: a job must then match
     * both. */
    const char *args[12] = {"create", "reservation", name, when, dur, cnt};
    size_t n = 6;
    if (res->account && !acc_name_valid(res->account, 32))
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: '%.32s' is not an account name",
                             s->b.name, res->account);
    if (res->account || !s->accounts) {
        snprintf(who, sizeof who, "Users=%s", res->account ? res->account : s->users);
        args[n++] = who;
    }
    if (s->accounts) {
        snprintf(acct, sizeof acct, "Accounts=%s", s->accounts);
        args[n++] = acct;
    }
    if (s->partition) {
        snprintf(part, sizeof part, "PartitionName=%s", s->partition);
        args[n++] = part;
    }
    args[n] = NULL;
    struct acc_proc_result r;
    acc_err rc = slurm_run(s, "scontrol", args, false, NULL, &r, err);
    if (rc) {
        acc_proc_result_release(&r);
        return rc;
    }
    if (r.status != 0) {
        bool dup = acc_proc_says(&r, "Duplicate reservation name");
        rc = dup ? ACC_OK : slurm_classify(s, "scontrol create reservation", &r, err);
        acc_proc_result_release(&r);
        if (rc)
            return rc;
        /* The same key again: the reservation it already has. */
        return slurm_show_reservation(s, key, out, err);
    }
    acc_proc_result_release(&r);
    rc = slurm_show_reservation(s, key, out, err);
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
                             s->b.name, got, res->amount);
    }
    return ACC_OK;
}

/* ---------------------------------------------------------------- preview */

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
    acc_time now = acc_now();

    acc_err rc = slurm_run(s, "sinfo", sinfo, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = slurm_classify(s, "sinfo", &r, err);
    if (!rc && slurm_read_nodes(&a, r.out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_proc_result_release(&r);

    if (!rc)
        rc = slurm_run(s, "squeue", squeue, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = slurm_classify(s, "squeue", &r, err);
    if (!rc && slurm_read_jobs(&a, now, r.out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_proc_result_release(&r);

    if (!rc)
        rc = slurm_run(s, "scontrol", resv, true, NULL, &r, err);
    /* "No reservations in the system" is not a failure. */
    if (!rc && r.status != 0 && !acc_proc_says(&r, "No reservations"))
        rc = slurm_classify(s, "scontrol show reservation", &r, err);
    if (!rc && r.status == 0 && slurm_read_reservations(&a, r.out))
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
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: the job has no executable", s->b.name);
    char resv[ACC_KEY_MAX + 32], nodes[32], ppn[48], limit[32], part[128], dir[PATH_MAX + 16],
        output[PATH_MAX + 16], host[96];
    snprintf(resv, sizeof resv, "--reservation=%s", job->key);
    snprintf(nodes, sizeof nodes, "--nodes=%" PRId64, job->nodes);
    snprintf(ppn, sizeof ppn, "--ntasks-per-node=%" PRId64, job->ppn > 0 ? job->ppn : 1);
    acc_time now = acc_now();
    int64_t left = job->end > now ? job->end - now : 60;
    snprintf(limit, sizeof limit, "--time=%" PRId64, minutes(left));
    const char *args[14] = {"--parsable", resv, nodes, ppn, limit};
    size_t n = 5;
    if (job->host) { /* one process on that host (a Hydra proxy of accordd's mpiexec) */
        if (!acc_name_valid(job->host, 63))
            return acc_error_set(err, ACC_ERR_INVALID, "site %s: '%.63s' is not a host name",
                                 s->b.name, job->host);
        snprintf(host, sizeof host, "--nodelist=%s", job->host);
        args[n++] = host;
    }
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
    char uid[ACC_ACCOUNT_NAME_MAX + 8], gid[ACC_ACCOUNT_NAME_MAX + 8];
    if (job->user) { /* accordd may switch: the job runs as its owner's account */
        struct acc_account a;
        acc_err rc = acc_account_lookup(job->user, &a, err);
        if (rc)
            return rc;
        snprintf(uid, sizeof uid, "--uid=%ld", (long)a.uid);
        snprintf(gid, sizeof gid, "--gid=%ld", (long)a.gid);
        args[n++] = uid;
        args[n++] = gid;
    }
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
    acc_err rc = slurm_run(s, "sbatch", args, false, acc_buf_str(&script), &r, err);
    acc_buf_release(&script);
    if (!rc && r.status != 0)
        rc = slurm_classify(s, "sbatch", &r, err);
    if (!rc) {
        /* --parsable: "jobid" or "jobid;cluster" */
        acc_strlcpy(job_id, r.out, job_id_len);
        job_id[strcspn(job_id, ";\n")] = '\0';
        if (!*job_id)
            rc = acc_error_set(err, ACC_ERR_ADAPTER, "site %s: sbatch gave no job id", s->b.name);
    }
    acc_proc_result_release(&r);
    return rc;
}

static acc_err job_status(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err)
{
    struct slurm *s = state;
    const char *args[] = {"show", "job", "-o", job_id, NULL};
    struct acc_proc_result r;
    acc_err rc = slurm_run(s, "scontrol", args, false, NULL, &r, err);
    if (rc) {
        acc_proc_result_release(&r);
        return rc;
    }
    if (r.status != 0) {
        if (strstr(acc_proc_said(&r), "Invalid job id")) {
            /* Slurm forgets finished jobs after MinJobAge. */
            out->done = true;
            acc_strlcpy(out->state, "PURGED", sizeof out->state);
        } else {
            rc = slurm_classify(s, "scontrol show job", &r, err);
        }
        acc_proc_result_release(&r);
        return rc;
    }
    char *word = slurm_field(r.out, "JobState"), *code = slurm_field(r.out, "ExitCode");
    if (word)
        acc_strlcpy(out->state, word, sizeof out->state);
    else
        rc = acc_error_set(err, ACC_ERR_ADAPTER, "site %s: scontrol show job %s: no JobState",
                           s->b.name, job_id);
    static const char *const running[] = {"PENDING",    "CONFIGURING", "RUNNING",     "SUSPENDED",
                                          "COMPLETING", "REQUEUED",    "RESIZING",    "SIGNALING",
                                          "STAGE_OUT",  "REQUEUE_FED", "REQUEUE_HOLD"};
    out->done = !rc;
    for (size_t i = 0; i < sizeof running / sizeof *running && out->done; i++)
        out->done = strcmp(out->state, running[i]) != 0;
    if (out->done && code && !slurm_exit_code(code, &out->exit_status, &out->signal)) {
        /* Asked again later; once Slurm forgets the job it ends unknown. */
        out->done = false;
        rc = acc_error_set(err, ACC_ERR_ADAPTER,
                           "site %s: scontrol show job %s: ExitCode '%.40s' is not status:signal",
                           s->b.name, job_id, code);
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
    acc_err rc = slurm_run(s, "scancel", args, false, NULL, &r, err);
    if (!rc && r.status != 0 && !strstr(acc_proc_said(&r), "Invalid job id") &&
        !strstr(acc_proc_said(&r), "already completing or completed"))
        rc = slurm_classify(s, "scancel", &r, err);
    acc_proc_result_release(&r);
    return rc;
}

/* ------------------------------------------------------- process_command */

/* srun --reservation=LOCALID --nodelist=HOST -N1 -n1 --job-name=accord-KEY
 * --chdir=DIR [--time=MIN] [--partition=P] EXECUTABLE ARGS...: srun stays in
 * the foreground until the process ends, ends with its status, and passes
 * SIGTERM on to the process (a second signal within a second kills it).  Slurm
 * 22.05's srun has no --uid: the caller runs it as the account. */
static acc_err process_command(void *state, const struct acc_job *job, struct acc_command *out,
                               struct acc_error *err)
{
    struct slurm *s = state;
    acc_err rc = acc_batch_process_check(&s->b, job, err);
    if (rc || (rc = acc_batch_command_start(&s->b, "srun", out, err)))
        return rc;
    acc_time now = acc_now();
    bool ok = acc_batch_wordf(out, "--reservation=%s", job->local_id) &&
              acc_batch_wordf(out, "--nodelist=%s", job->host) && acc_batch_word(out, "-N1") &&
              acc_batch_word(out, "-n1") &&
              acc_batch_wordf(out, "--job-name=accord-%s", job->key) &&
              acc_batch_wordf(out, "--chdir=%s", job->directory);
    /* no end given: the reservation's own end stops it */
    if (ok && job->end > now)
        ok = acc_batch_wordf(out, "--time=%" PRId64, minutes(job->end - now));
    if (ok && s->partition)
        ok = acc_batch_wordf(out, "--partition=%s", s->partition);
    ok = ok && acc_batch_word(out, job->executable);
    for (size_t i = 0; ok && i < job->n_args; i++)
        ok = acc_batch_word(out, job->args[i]);
    if (!ok)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

/* ----------------------------------------------------------------- health */

static acc_err health(void *state, struct acc_health *out)
{
    struct slurm *s = state;
    const char *args[] = {"ping", NULL};
    struct acc_proc_result r;
    struct acc_error err;
    if (slurm_run(s, "scontrol", args, false, NULL, &r, &err)) {
        acc_proc_result_release(&r);
        out->up = false;
        acc_strlcpy(out->detail, err.msg, sizeof out->detail);
        return ACC_OK;
    }
    out->up = r.status == 0 && strstr(r.out, "is UP") != NULL;
    acc_strlcpy(out->detail, r.status == 0 ? r.out : acc_proc_said(&r), sizeof out->detail);
    acc_strtrim(out->detail);
    acc_proc_result_release(&r);
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

/* The settings into s, as open and check read them: nothing is run, the
 * files named are only looked at.  *key: the setting at fault. */
static acc_err read_settings(struct slurm *s, const struct acc_adapter_env *env, const char **key,
                             struct acc_error *err)
{
    *key = NULL;
    acc_err rc = acc_batch_init(&s->b, env->name, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        char **slot = NULL;
        bool known = false;
        *key = k;
        for (size_t j = 0; known_keys[j]; j++)
            known |= strcmp(known_keys[j], k) == 0;
        if (!known)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "unknown setting '%s' (slurm takes slurm_conf, bin_dir, "
                                 "partition, users, accounts, timeout)",
                                 k);
        if (acc_batch_setting(&s->b, k, v, &rc, err)) {
            if (rc)
                return rc;
            continue;
        }
        slot = strcmp(k, "slurm_conf") == 0  ? &s->conf
               : strcmp(k, "partition") == 0 ? &s->partition
               : strcmp(k, "users") == 0     ? &s->users
                                             : &s->accounts;
        free(*slot);
        if (!(*slot = strdup(v)))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    *key = NULL;
    if (!s->users && !(s->users = strdup("root")))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct stat sb;
    *key = "slurm_conf";
    if (s->conf && stat(s->conf, &sb) != 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "slurm_conf %s does not exist", s->conf);
    if (s->conf && (rc = acc_batch_env(&s->b, "SLURM_CONF", s->conf, err)))
        return rc;
    return acc_batch_check(&s->b, key, err);
}

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    const char *key;
    return read_settings(state, env, &key, err);
}

static void close_(void *state);

/* Opening runs no Slurm command: its checks are the settings'. */
static acc_err check(const struct acc_adapter_env *env, const char **key, struct acc_error *err)
{
    struct slurm s = {0};
    acc_err rc = read_settings(&s, env, key, err);
    close_(&s);
    return rc;
}

static void close_(void *state)
{
    struct slurm *s = state;
    acc_batch_release(&s->b);
    free(s->conf);
    free(s->partition);
    free(s->users);
    free(s->accounts);
}

const struct acc_adapter_ops acc_slurm_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "slurm",
    .caps =
        ACC_CAP_NODES | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES | ACC_CAP_THREADSAFE | ACC_CAP_PROCESS,
    .state_size = sizeof(struct slurm),
    .open = open_,
    .close = close_,
    .check = check,
    .settings = (const struct acc_adapter_setting[]){{"slurm_conf", "/nonexistent/slurm.conf"},
                                                     {"bin_dir", "/nonexistent"},
                                                     {"partition", NULL},
                                                     {"users", NULL},
                                                     {"accounts", NULL},
                                                     {"timeout", "soon"},
                                                     {NULL, NULL}},
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .submit = submit,
    .job_status = job_status,
    .job_cancel = job_cancel,
    .health = health,
    .process_command = process_command,
};
