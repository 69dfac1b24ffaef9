/* SPDX-License-Identifier: Apache-2.0 */
/* simsite_batch.c - sim-batch: nodes on a simulated cluster.
 *
 * One calendar of the site's node count (the site's `nodes`); the other
 * settings are those of simsite.h. */
#include "simsite.h"

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct simsite *s = state;
    acc_err rc = simsite_open(state, "sim-batch", env, err);
    if (!rc && env->nodes <= 0)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "nodes must be set to a positive count");
    if (!rc)
        rc = acc_ledger_add_resource(s->ledger, env->name, env->nodes, err);
    if (!rc)
        rc = simsite_start(state, err);
    return rc;
}

const struct acc_adapter_ops acc_sim_batch_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "sim-batch",
    .caps = ACC_CAP_NODES | ACC_CAP_THREADSAFE | ACC_CAP_FAULTS | ACC_CAP_REPLACE,
    .state_size = sizeof(struct simsite),
    .open = open_,
    .close = simsite_close,
    .check = simsite_check,
    .settings = simsite_settings,
    .preview = simsite_preview,
    .reserve = simsite_reserve,
    .query = simsite_query,
    .cancel = simsite_cancel,
    .health = simsite_health,
    .control = simsite_control,
    .interrupt = simsite_interrupt,
    .preview_replacing = simsite_preview_replacing,
    .reserve_replacing = simsite_reserve_replacing,
    .may_block = simsite_may_block,
};
