/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_cmd.c - running Slurm's commands and reading what they say.
 *
 * Every command runs through adapters/batch (SLURM_CONF of the site, TZ=UTC,
 * a time limit); reads ask for epoch seconds (SLURM_TIME_FORMAT=%s).  Errors are classified
 * by Slurm's own messages and reported with them. */
#include "slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/hostlist.h"
#include "../../lib/common/strutil.h"

#define FOREVER ((acc_time)1 << 40) /* a job without a time limit */

acc_err slurm_run(struct slurm *s, const char *cmd, const char *const *args, bool epoch,
                  const char *input, struct acc_proc_result *r, struct acc_error *err)
{
    return acc_batch_run(&s->b, cmd, args, epoch ? "SLURM_TIME_FORMAT=%s" : NULL, input, r, err);
}

acc_err slurm_classify(struct slurm *s, const char *what, const struct acc_proc_result *r,
                       struct acc_error *err)
{
    static const struct acc_proc_verdict table[] = {
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
    /* invalid user, account, partition, permission... */
    return acc_proc_fail(r, table, sizeof table / sizeof table[0], ACC_ERR_ADAPTER, s->b.name, what,
                         err);
}

char *slurm_field(const char *line, const char *key)
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

/* ------------------------------------------------------------ reservation */

acc_err slurm_show_reservation(struct slurm *s, const char *key, struct acc_reservation *out,
                               struct acc_error *err)
{
    const char *args[] = {"show", "reservation", key, "-o", NULL};
    struct acc_proc_result r;
    acc_err rc = slurm_run(s, "scontrol", args, true, NULL, &r, err);
    if (!rc && r.status != 0)
        rc = slurm_classify(s, "scontrol show reservation", &r, err);
    char *start = NULL, *end = NULL, *cnt = NULL, *nodes = NULL;
    if (!rc) {
        start = slurm_field(r.out, "StartTime");
        end = slurm_field(r.out, "EndTime");
        cnt = slurm_field(r.out, "NodeCnt");
        nodes = slurm_field(r.out, "Nodes");
        int64_t k;
        if (!epoch(start, &out->start) || !epoch(end, &out->end) || !cnt ||
            acc_parse_i64(cnt, 0, INT64_MAX, &k, NULL))
            rc = acc_error_set(err, ACC_ERR_ADAPTER,
                               "site %s: cannot read reservation %s from: %.200s", s->b.name, key,
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

/* ------------------------------------------------------- preview's reads */

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
    char *start = slurm_field(line, "StartTime"), *end = slurm_field(line, "EndTime");
    char *nodes = slurm_field(line, "Nodes");
    acc_time s = 0, e = 0;
    acc_err rc = ACC_OK;
    if (epoch(start, &s) && epoch(end, &e))
        rc = add_busy_list(ctx, nodes, s, e);
    free(start);
    free(end);
    free(nodes);
    return rc;
}

acc_err slurm_read_nodes(struct avail *a, char *out)
{
    return each_line(out, node_line, a);
}

acc_err slurm_read_jobs(struct avail *a, acc_time now, char *out)
{
    struct job_ctx jc = {a, now};
    return each_line(out, job_line, &jc);
}

acc_err slurm_read_reservations(struct avail *a, char *out)
{
    return each_line(out, resv_line, a);
}

/* ----------------------------------------------------------------- jobs */

bool slurm_exit_code(const char *v, int *status, int *sig)
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
