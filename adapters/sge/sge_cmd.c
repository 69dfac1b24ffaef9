/* SPDX-License-Identifier: Apache-2.0 */
/* sge_cmd.c - running Grid Engine's commands and classifying what they say.
 *
 * Every command runs with the site's SGE_ROOT and SGE_CELL, TZ=UTC (the
 * -xml times are local times without a zone) and a time limit, its output
 * bounded.  Errors are classified by Grid Engine's own messages and
 * reported with them. */
#include "sge_internal.h"

#include <stdio.h>
#include <string.h>

#include "../../lib/common/strutil.h"

acc_err sge_run(struct sge *s, const char *cmd, const char *const *args, struct acc_proc_result *r,
                struct acc_error *err)
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
    const char *env[4] = {"TZ=UTC", s->env_root, s->cell ? s->env_cell : NULL, NULL};
    acc_err rc = acc_proc_run(argv, env, NULL, s->timeout_ms, SGE_XML_MAX, r, err);
    if (rc == ACC_ERR_TIMEOUT)
        acc_error_set(err, ACC_ERR_TIMEOUT, "site %s: %s did not answer within %lld ms", s->name,
                      cmd, (long long)s->timeout_ms);
    else if (rc)
        acc_error_prefix(err, "site %s", s->name);
    return rc;
}

acc_err sge_classify(struct sge *s, const char *what, const struct acc_proc_result *r,
                     struct acc_error *err)
{
    static const struct acc_proc_verdict table[] = {
        {"unable to contact qmaster", ACC_ERR_UNAVAILABLE},
        {"unable to send message to qmaster", ACC_ERR_UNAVAILABLE},
        {"commlib error", ACC_ERR_UNAVAILABLE},
        {"can't resolve host name", ACC_ERR_UNAVAILABLE},
        {"no suitable queues", ACC_ERR_BUSY},
        {"start time is in the past", ACC_ERR_INVALID},
        {"parallel environment", ACC_ERR_ADAPTER}, /* "... does not exist": config */
        {"does not exist", ACC_ERR_NOT_FOUND},
    };
    /* permission ("denied:"), bad queue, ... */
    return acc_proc_fail(r, table, sizeof table / sizeof table[0], ACC_ERR_ADAPTER, s->name, what,
                         err);
}
