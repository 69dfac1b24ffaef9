/* SPDX-License-Identifier: Apache-2.0 */
/* sge.c - sge: whole hosts of a Grid Engine cluster, booked as advance
 * reservations of a parallel environment's slots.
 *
 *   preview  qstat -f -r -xml -q QUEUE (queue instances, running jobs with
 *            their h_rt), qrstat -xml and qrstat -ar IDS -xml (reservations
 *            and their hosts): the free frames are computed here (avail.c),
 *            never asked of Grid Engine
 *   reserve  qrsub -N <key> -a START -e END -pe PE N*slots, then read back;
 *            a reservation that is not N whole hosts at the asked times is
 *            deleted and refused
 *   query    qrstat -ar ID -xml (by the id, or the id found by name)
 *   cancel   qrdel <key>: every reservation of that name, jobs in it too
 *   health   qconf -sss (the scheduler's host: the qmaster answers)
 *   process_command  qsub -sync y -ar ID -l h=HOST -b y (one process on one
 *            host of the reservation, run by the caller as the account)
 *
 * N nodes are N hosts with `slots` slots each of the PE, whose allocation
 * rule must be that fixed number (docs/adapters/sge.md).  See sge_xml.c for
 * the readers and sge_cmd.c for the commands. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "sge_internal.h"

/* ------------------------------------------------------------ reading ARs */

/* Runs qrstat with args and reads its -xml output. */
static acc_err qrstat(struct sge *s, const char *const *args, struct sge_ars *out,
                      struct acc_error *err)
{
    struct acc_proc_result r;
    acc_err rc = sge_run(s, "qrstat", args, &r, err);
    /* An unknown id: exit 1 with <ar_unknown> in the output. */
    if (!rc && r.status != 0 && !strstr(r.out, "<ar_unknown>"))
        rc = sge_classify(s, "qrstat", &r, err);
    if (!rc) {
        rc = sge_read_ars(r.out, r.out_len, out, err);
        if (rc)
            acc_error_prefix(err, "site %s: qrstat -xml", s->b.name);
    }
    acc_proc_result_release(&r);
    return rc;
}

/* The reservation named key (its grants too), or ACC_ERR_NOT_FOUND. */
static acc_err find(struct sge *s, const char *key, const char *local_id, struct sge_ars *out,
                    struct acc_error *err)
{
    char id[32] = "";
    int64_t n;
    if (local_id && acc_parse_i64(local_id, 1, INT64_MAX / 2, &n, NULL) == ACC_OK)
        snprintf(id, sizeof id, "%" PRId64, n);
    if (!*id) { /* by name: the summary of all, then the one */
        const char *all[] = {"-u", "*", "-xml", NULL};
        struct sge_ars ars;
        acc_err rc = qrstat(s, all, &ars, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < ars.n && !*id; i++) {
            if (ars.v[i].name && strcmp(ars.v[i].name, key) == 0)
                snprintf(id, sizeof id, "%" PRId64, ars.v[i].id);
        }
        sge_ars_release(&ars);
        if (!*id)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "site %s: no reservation %s", s->b.name,
                                 key);
    }
    const char *one[] = {"-ar", id, "-xml", NULL};
    acc_err rc = qrstat(s, one, out, err);
    if (rc)
        return rc;
    if (out->n != 1 || !out->v[0].name || strcmp(out->v[0].name, key) != 0) {
        sge_ars_release(out);
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "site %s: no reservation %s", s->b.name, key);
    }
    return ACC_OK;
}

/* What Accord sees of an AR: the hosts granted all `slots` (a host with
 * fewer is no node), none while it is in error (a host of it went away). */
static acc_err to_reservation(struct sge *s, const struct sge_ar *ar, struct acc_reservation *out)
{
    struct acc_buf b = ACC_BUF_INIT;
    out->amount = 0;
    for (size_t i = 0; i < ar->n_grants && !strchr(ar->state, 'E'); i++) {
        if (ar->grants[i].slots < s->slots)
            continue;
        acc_buf_printf(&b, "%s%s", out->amount ? "," : "", ar->grants[i].host);
        out->amount++;
    }
    out->start = ar->start;
    out->end = ar->end;
    snprintf(out->local_id, sizeof out->local_id, "%" PRId64, ar->id);
    if (!acc_buf_ok(&b)) {
        acc_buf_release(&b);
        return ACC_ERR_NOMEM;
    }
    out->nodes = out->amount ? acc_buf_detach(&b, NULL) : NULL;
    acc_buf_release(&b);
    return ACC_OK;
}

static acc_err query(void *state, const char *key, const char *local_id,
                     struct acc_reservation *out, struct acc_error *err)
{
    struct sge *s = state;
    struct sge_ars ars;
    acc_err rc = find(s, key, local_id, &ars, err);
    if (rc)
        return rc;
    if (to_reservation(s, &ars.v[0], out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    sge_ars_release(&ars);
    return rc;
}

/* ---------------------------------------------------------------- cancel */

static acc_err cancel(void *state, const char *key, const char *local_id, struct acc_error *err)
{
    (void)local_id; /* by name: a reservation whose id was lost goes too */
    struct sge *s = state;
    const char *args[] = {key, NULL};
    struct acc_proc_result r;
    acc_err rc = sge_run(s, "qrdel", args, &r, err);
    if (!rc && r.status != 0) {
        rc = sge_classify(s, "qrdel", &r, err);
        if (rc == ACC_ERR_NOT_FOUND)
            rc = ACC_OK; /* gone already: cancel is idempotent */
    }
    acc_proc_result_release(&r);
    return rc;
}

/* ---------------------------------------------------------------- reserve */

static acc_err reserve(void *state, const char *key, const struct acc_resource *res, acc_time start,
                       int64_t duration, struct acc_reservation *out, struct acc_error *err)
{
    struct sge *s = state;
    /* The same key again (a retry): the reservation it already has. */
    struct acc_error nf;
    acc_err rc = query(s, key, NULL, out, &nf);
    if (rc != ACC_ERR_NOT_FOUND)
        return rc ? acc_error_copy(err, &nf) : ACC_OK;
    char from[32], until[32], slots[32];
    struct tm tm;
    time_t t = (time_t)start;
    gmtime_r(&t, &tm);
    strftime(from, sizeof from, "%Y%m%d%H%M.%S", &tm);
    t = (time_t)(start + duration);
    gmtime_r(&t, &tm);
    strftime(until, sizeof until, "%Y%m%d%H%M.%S", &tm);
    snprintf(slots, sizeof slots, "%" PRId64, res->amount * s->slots);
    const char *args[16] = {"-N",  key,   "-a",  from, "-e",    until,
                            "-pe", s->pe, slots, "-q", s->queue};
    size_t n = 11;
    /* The user's own account when the reservation names one: it replaces
     * the users setting. */
    if (res->account && !acc_name_valid(res->account, 32))
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: '%.32s' is not an account name",
                             s->b.name, res->account);
    const char *who = res->account ? res->account : s->users;
    if (who) {
        args[n++] = "-u";
        args[n++] = who;
    }
    args[n] = NULL;
    struct acc_proc_result r;
    rc = sge_run(s, "qrsub", args, &r, err);
    if (!rc && r.status != 0)
        rc = sge_classify(s, "qrsub", &r, err);
    char id[32] = "";
    const char *p = rc ? NULL : strstr(r.out, "advance reservation ");
    if (p)
        sscanf(p, "advance reservation %20[0-9] has been granted", id);
    if (!rc && !*id)
        rc = acc_error_set(err, ACC_ERR_ADAPTER, "site %s: qrsub: no id in '%.200s'", s->b.name,
                           acc_proc_said(&r));
    acc_proc_result_release(&r);
    if (rc)
        return rc;
    rc = query(s, key, id, out, err);
    if (rc) {
        struct acc_error ignored;
        cancel(s, key, NULL, &ignored);
        return rc;
    }
    if (out->amount == res->amount && out->start == start && out->end == start + duration)
        return ACC_OK;
    /* Not N whole hosts at the asked times: of no use, so it goes. */
    int64_t got = out->amount;
    acc_reservation_release(out);
    struct acc_error cerr;
    if (cancel(s, key, NULL, &cerr))
        return acc_error_copy(err, &cerr);
    return acc_error_set(err, ACC_ERR_BUSY,
                         "site %s: Grid Engine granted %" PRId64 " of %" PRId64
                         " whole hosts (or other times); deleted it",
                         s->b.name, got, res->amount);
}

/* ---------------------------------------------------------------- preview */

/* Every reservation's hosts are busy over [start, end). */
static acc_err add_reservations(struct sge *s, struct avail *a, struct acc_error *err)
{
    const char *all[] = {"-u", "*", "-xml", NULL};
    struct sge_ars ars;
    acc_err rc = qrstat(s, all, &ars, err);
    if (rc || ars.n == 0) {
        sge_ars_release(&ars);
        return rc;
    }
    struct acc_buf ids = ACC_BUF_INIT;
    for (size_t i = 0; i < ars.n; i++)
        acc_buf_printf(&ids, "%s%" PRId64, i ? "," : "", ars.v[i].id);
    sge_ars_release(&ars);
    if (!acc_buf_ok(&ids)) {
        acc_buf_release(&ids);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    const char *some[] = {"-ar", acc_buf_str(&ids), "-xml", NULL};
    rc = qrstat(s, some, &ars, err);
    acc_buf_release(&ids);
    for (size_t i = 0; !rc && i < ars.n; i++) {
        for (size_t j = 0; !rc && j < ars.v[i].n_grants; j++) {
            if (avail_add_busy(a, ars.v[i].grants[j].host, ars.v[i].start, ars.v[i].end))
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
    }
    sge_ars_release(&ars);
    return rc;
}

static acc_err preview(void *state, const struct acc_resource *res, acc_time from, acc_time until,
                       int64_t duration, struct acc_frames *out, struct acc_error *err)
{
    struct sge *s = state;
    struct avail a;
    avail_init(&a);
    const char *qstat[] = {"-f", "-r", "-xml", "-q", s->queue, "-u", "*", NULL};
    acc_time now = acc_now();
    struct acc_proc_result r;
    acc_err rc = sge_run(s, "qstat", qstat, &r, err);
    if (!rc && r.status != 0)
        rc = sge_classify(s, "qstat", &r, err);
    if (!rc && (rc = sge_read_queues(r.out, r.out_len, s->slots, now, &a, err)))
        acc_error_prefix(err, "site %s: qstat -f -r -xml", s->b.name);
    acc_proc_result_release(&r);
    if (!rc)
        rc = add_reservations(s, &a, err);
    if (!rc && avail_frames(&a, res->amount, from, until, duration, out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    avail_release(&a);
    return rc;
}

/* ------------------------------------------------------- process_command */

/* h_rt: the job must end inside the reservation from when the scheduler
 * starts it (a few seconds on), so it asks for what is left less a margin:
 * 30 s, or half of what is left when that is a minute or less. */
static int64_t h_rt(acc_time now, acc_time end)
{
    int64_t left = end - now;
    int64_t h = left > 60 ? left - 30 : left / 2;
    return h < 1 ? 1 : h;
}

/* qsub -sync y -ar LOCALID -N accord-KEY -l h=HOST [-l h_rt=N] -wd DIR -o
 * OUTPUT -j y -b y EXECUTABLE ARGS...: with -sync y qsub waits for the job
 * and ends with its exit status; the job runs as whoever runs qsub. */
static acc_err process_command(void *state, const struct acc_job *job, struct acc_command *out,
                               struct acc_error *err)
{
    struct sge *s = state;
    acc_err rc = acc_batch_process_check(&s->b, job, err);
    if (rc || (rc = acc_batch_command_start(&s->b, "qsub", out, err)))
        return rc;
    acc_time now = acc_now();
    bool ok = acc_batch_word(out, "-sync") && acc_batch_word(out, "y") &&
              acc_batch_word(out, "-ar") && acc_batch_word(out, job->local_id) &&
              acc_batch_word(out, "-N") && acc_batch_wordf(out, "accord-%s", job->key) &&
              acc_batch_word(out, "-l") && acc_batch_wordf(out, "h=%s", job->host);
    if (ok && job->end > now)
        ok =
            acc_batch_word(out, "-l") && acc_batch_wordf(out, "h_rt=%" PRId64, h_rt(now, job->end));
    ok = ok && acc_batch_word(out, "-wd") && acc_batch_word(out, job->directory) &&
         acc_batch_word(out, "-o");
    if (ok && job->output)
        ok = acc_batch_word(out, job->output);
    else if (ok)
        ok = acc_batch_wordf(out, "%s/proxy.out", job->directory);
    /* -shell n: the binary is executed as it is, its arguments are not
     * split or read again by the job user's shell */
    ok = ok && acc_batch_word(out, "-j") && acc_batch_word(out, "y") && acc_batch_word(out, "-b") &&
         acc_batch_word(out, "y") && acc_batch_word(out, "-shell") && acc_batch_word(out, "n") &&
         acc_batch_word(out, job->executable);
    for (size_t i = 0; ok && i < job->n_args; i++)
        ok = acc_batch_word(out, job->args[i]);
    if (!ok)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

/* ----------------------------------------------------------------- health */

static acc_err health(void *state, struct acc_health *out)
{
    struct sge *s = state;
    const char *args[] = {"-sss", NULL};
    struct acc_proc_result r;
    struct acc_error err;
    if (sge_run(s, "qconf", args, &r, &err)) {
        acc_proc_result_release(&r);
        out->up = false;
        acc_strlcpy(out->detail, err.msg, sizeof out->detail);
        return ACC_OK;
    }
    out->up = r.status == 0;
    snprintf(out->detail, sizeof out->detail, "%s%s", r.status == 0 ? "scheduler on " : "",
             r.status == 0 ? r.out : acc_proc_said(&r));
    acc_strtrim(out->detail);
    acc_proc_result_release(&r);
    return ACC_OK;
}

/* ------------------------------------------------------------ open, close */

static const char *const known_keys[] = {"sge_root", "cell",    "pe",      "queue", "slots",
                                         "users",    "bin_dir", "timeout", NULL};

static acc_err setting(struct sge *s, const char *k, const char *v, struct acc_error *err)
{
    acc_err rc;
    if (acc_batch_setting(&s->b, k, v, &rc, err))
        return rc;
    if (strcmp(k, "slots") == 0) {
        int64_t n;
        if (acc_parse_i64(v, 1, 4096, &n, NULL) != ACC_OK)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "slots: '%s' is not a number of slots per host (1-4096)", v);
        s->slots = n;
        return ACC_OK;
    }
    char **slot = strcmp(k, "sge_root") == 0 ? &s->root
                  : strcmp(k, "cell") == 0   ? &s->cell
                  : strcmp(k, "pe") == 0     ? &s->pe
                  : strcmp(k, "queue") == 0  ? &s->queue
                                             : &s->users;
    free(*slot);
    if (!(*slot = strdup(v)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

/* The settings into s, as open and check read them: nothing is run, the
 * directories named are only looked at.  *key: the setting at fault. */
static acc_err read_settings(struct sge *s, const struct acc_adapter_env *env, const char **key,
                             struct acc_error *err)
{
    s->slots = 1;
    *key = NULL;
    acc_err rc = acc_batch_init(&s->b, env->name, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < env->n_settings; i++) {
        const char *k = env->settings[i].key;
        bool known = false;
        *key = k;
        for (size_t j = 0; known_keys[j]; j++)
            known |= strcmp(known_keys[j], k) == 0;
        if (!known)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "unknown setting '%s' (sge takes sge_root, cell, pe, queue, "
                                 "slots, users, bin_dir, timeout)",
                                 k);
        if ((rc = setting(s, k, env->settings[i].value, err)))
            return rc;
    }
    *key = !s->root ? "sge_root" : "pe";
    if (!s->root)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "sge needs sge_root = (the Grid Engine's SGE_ROOT directory)");
    if (!s->pe)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "sge needs pe = (the parallel environment reservations ask for)");
    *key = NULL;
    if (!s->queue && !(s->queue = strdup("all.q")))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct stat sb;
    char common[PATH_MAX + 160];
    snprintf(common, sizeof common, "%s/%s/common", s->root, s->cell ? s->cell : "default");
    *key = s->cell ? "cell" : "sge_root";
    if (stat(common, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return acc_error_set(err, ACC_ERR_CONFIG, "sge_root and cell: %s is not a directory",
                             common);
    if ((rc = acc_batch_env(&s->b, "SGE_ROOT", s->root, err)) ||
        (s->cell && (rc = acc_batch_env(&s->b, "SGE_CELL", s->cell, err))))
        return rc;
    return acc_batch_check(&s->b, key, err);
}

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    const char *key;
    return read_settings(state, env, &key, err);
}

static void close_(void *state);

/* Opening runs no Grid Engine command: its checks are the settings'. */
static acc_err check(const struct acc_adapter_env *env, const char **key, struct acc_error *err)
{
    struct sge s = {0};
    acc_err rc = read_settings(&s, env, key, err);
    close_(&s);
    return rc;
}

static void close_(void *state)
{
    struct sge *s = state;
    acc_batch_release(&s->b);
    free(s->root);
    free(s->cell);
    free(s->pe);
    free(s->queue);
    free(s->users);
}

const struct acc_adapter_ops acc_sge_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "sge",
    .caps = ACC_CAP_NODES | ACC_CAP_NODE_NAMES | ACC_CAP_THREADSAFE | ACC_CAP_PROCESS,
    .state_size = sizeof(struct sge),
    .open = open_,
    .close = close_,
    .check = check,
    .settings = (const struct acc_adapter_setting[]){{"sge_root", "/nonexistent"},
                                                     {"cell", "no-such-cell"},
                                                     {"pe", NULL},
                                                     {"queue", NULL},
                                                     {"slots", "0"},
                                                     {"users", NULL},
                                                     {"bin_dir", "/nonexistent"},
                                                     {"timeout", "soon"},
                                                     {NULL, NULL}},
    .preview = preview,
    .reserve = reserve,
    .query = query,
    .cancel = cancel,
    .health = health,
    .process_command = process_command,
};
