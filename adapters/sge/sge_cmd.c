/* SPDX-License-Identifier: Apache-2.0 */
/* sge_cmd.c - running Grid Engine's commands and classifying what they say.
 *
 * Every command runs through adapters/batch with the site's SGE_ROOT and
 * SGE_CELL, TZ=UTC (the -xml times are local times without a zone) and a
 * time limit, its output bounded.  Errors are classified by Grid Engine's own messages and
 * reported with them. */
#include "sge_internal.h"

acc_err sge_run(struct sge *s, const char *cmd, const char *const *args, struct acc_proc_result *r,
                struct acc_error *err)
{
    return acc_batch_run(&s->b, cmd, args, NULL, NULL, r, err);
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
    return acc_proc_fail(r, table, sizeof table / sizeof table[0], ACC_ERR_ADAPTER, s->b.name, what,
                         err);
}
