/* SPDX-License-Identifier: Apache-2.0 */
/* batch_cmd.c - running a batch system's commands for the slurm and sge
 * adapters, their shared settings, and the pieces of a process command.
 *
 * Every command runs with the adapter's own environment (SLURM_CONF, or
 * SGE_ROOT and SGE_CELL), TZ=UTC (both batch systems print local times) and
 * a time limit, its output bounded. */
#define _GNU_SOURCE /* vasprintf */
#include "batch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"

acc_err acc_batch_init(struct acc_batch *b, const char *name, struct acc_error *err)
{
    b->timeout_ms = 15000;
    b->max_output = 4u << 20;
    if (!(b->name = acc_strdup(name)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

void acc_batch_release(struct acc_batch *b)
{
    free(b->name);
    free(b->bin_dir);
    b->name = b->bin_dir = NULL;
}

bool acc_batch_setting(struct acc_batch *b, const char *k, const char *v, acc_err *rc,
                       struct acc_error *err)
{
    *rc = ACC_OK;
    if (strcmp(k, "timeout") == 0) {
        int64_t secs;
        if (acc_duration_parse(v, &secs, err) || secs < 1)
            *rc = acc_error_set(err, ACC_ERR_CONFIG,
                                "timeout: '%s' is not a duration such as PT15S", v);
        else
            b->timeout_ms = secs * 1000;
        return true;
    }
    if (strcmp(k, "bin_dir") != 0)
        return false;
    free(b->bin_dir);
    if (!(b->bin_dir = acc_strdup(v)))
        *rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return true;
}

acc_err acc_batch_check(const struct acc_batch *b, const char **key, struct acc_error *err)
{
    struct stat sb;
    char probe[PATH_MAX];
    *key = "bin_dir";
    if (b->bin_dir && (stat(b->bin_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        return acc_error_set(err, ACC_ERR_CONFIG, "bin_dir %s is not a directory", b->bin_dir);
    if (!acc_batch_path(b, "x", probe, sizeof probe))
        return acc_error_set(err, ACC_ERR_CONFIG, "bin_dir %.64s...: too long", b->bin_dir);
    *key = NULL;
    return ACC_OK;
}

acc_err acc_batch_env(struct acc_batch *b, const char *name, const char *value,
                      struct acc_error *err)
{
    if (b->n_env == ACC_BATCH_ENV_MAX)
        return acc_error_set(err, ACC_ERR_INTERNAL, "too many environment entries");
    char *e = b->env[b->n_env];
    if ((size_t)snprintf(e, sizeof b->env[0], "%s=%s", name, value) >= sizeof b->env[0])
        return acc_error_set(err, ACC_ERR_CONFIG, "%s %.64s...: too long", name, value);
    b->n_env++;
    return ACC_OK;
}

bool acc_batch_path(const struct acc_batch *b, const char *cmd, char *out, size_t len)
{
    if (!b->bin_dir)
        return acc_strlcpy(out, cmd, len) < len;
    return (size_t)snprintf(out, len, "%s/%s", b->bin_dir, cmd) < len;
}

acc_err acc_batch_run(const struct acc_batch *b, const char *cmd, const char *const *args,
                      const char *extra, const char *input, struct acc_proc_result *r,
                      struct acc_error *err)
{
    char path[PATH_MAX];
    memset(r, 0, sizeof *r);
    if (!acc_batch_path(b, cmd, path, sizeof path))
        return acc_error_set(err, ACC_ERR_CONFIG, "site %s: bin_dir too long", b->name);
    const char *argv[24] = {path};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[ACC_BATCH_ENV_MAX + 3] = {"TZ=UTC"};
    size_t e = 1;
    for (size_t i = 0; i < b->n_env; i++)
        env[e++] = b->env[i];
    if (extra)
        env[e++] = extra;
    env[e] = NULL;
    acc_err rc = acc_proc_run(argv, env, input, b->timeout_ms, b->max_output, r, err);
    if (rc == ACC_ERR_TIMEOUT)
        acc_error_set(err, ACC_ERR_TIMEOUT, "site %s: %s did not answer within %lld ms", b->name,
                      cmd, (long long)b->timeout_ms);
    else if (rc)
        acc_error_prefix(err, "site %s", b->name);
    return rc;
}

/* ------------------------------------------------------ process commands */

static bool push(char ***v, size_t *n, char *w)
{
    if (!w)
        return false;
    char **nv = realloc(*v, (*n + 2) * sizeof *nv);
    if (!nv) {
        free(w);
        return false;
    }
    nv[(*n)++] = w;
    nv[*n] = NULL;
    *v = nv;
    return true;
}

bool acc_batch_word(struct acc_command *c, const char *w)
{
    return push(&c->argv, &c->argc, acc_strdup(w));
}

bool acc_batch_wordf(struct acc_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *w = NULL;
    int n = vasprintf(&w, fmt, ap);
    va_end(ap);
    return push(&c->argv, &c->argc, n < 0 ? NULL : w);
}

acc_err acc_batch_command_start(const struct acc_batch *b, const char *cmd, struct acc_command *c,
                                struct acc_error *err)
{
    char path[PATH_MAX];
    if (!acc_batch_path(b, cmd, path, sizeof path))
        return acc_error_set(err, ACC_ERR_CONFIG, "site %s: bin_dir too long", b->name);
    bool ok = acc_batch_word(c, path) && push(&c->env, &c->n_env, acc_strdup("TZ=UTC"));
    for (size_t i = 0; ok && i < b->n_env; i++)
        ok = push(&c->env, &c->n_env, acc_strdup(b->env[i]));
    if (!ok)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

static bool one_line(const char *s)
{
    return s && *s && !strchr(s, '\n');
}

acc_err acc_batch_process_check(const struct acc_batch *b, const struct acc_job *job,
                                struct acc_error *err)
{
    if (!job->host || !acc_name_valid(job->host, 63))
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: '%.63s' is not a host name", b->name,
                             job->host ? job->host : "");
    if (!job->local_id || !acc_name_valid(job->local_id, 127))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "site %s: reservation %.95s has no usable local id", b->name,
                             job->key ? job->key : "");
    if (!job->key || !acc_name_valid(job->key, 95))
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: no usable reservation key", b->name);
    if (!job->executable || job->executable[0] != '/' || !one_line(job->executable))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "site %s: the process's executable must be an absolute path", b->name);
    if (!job->directory || job->directory[0] != '/' || !one_line(job->directory))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "site %s: the process's directory must be an absolute path", b->name);
    for (size_t i = 0; i < job->n_args; i++) {
        if (!job->args[i] || strchr(job->args[i], '\n'))
            return acc_error_set(err, ACC_ERR_INVALID, "site %s: argument %zu holds a newline",
                                 b->name, i + 1);
    }
    if (job->user && !acc_name_valid(job->user, 32))
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: '%.32s' is not an account name",
                             b->name, job->user);
    return ACC_OK;
}
