/* sim_batch.c - sim-batch: nodes on a simulated cluster.
 *
 * One calendar of the site's node count (the site's `nodes`); the other
 * settings are those of sim_core.h. */
#include "sim_core.h"

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    acc_err rc = sim_open(state, "sim-batch", env, NULL, err);
    if (!rc && env->nodes <= 0)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "nodes must be set to a positive count");
    if (!rc)
        rc = sim_add_resource(state, env->name, env->nodes, err);
    if (!rc)
        rc = sim_start(state, err);
    return rc;
}

const struct acc_adapter_ops acc_sim_batch_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "sim-batch",
    .caps = ACC_CAP_NODES | ACC_CAP_THREADSAFE | ACC_CAP_FAULTS | ACC_CAP_REPLACE,
    .state_size = sizeof(struct sim),
    .open = open_,
    .close = sim_close,
    .preview = sim_preview,
    .reserve = sim_reserve,
    .query = sim_query,
    .cancel = sim_cancel,
    .health = sim_health,
    .control = sim_control,
    .interrupt = sim_interrupt,
    .preview_replacing = sim_preview_replacing,
    .reserve_replacing = sim_reserve_replacing,
};
