/* sim_network.c - sim-network: bandwidth on simulated links.
 *
 * One calendar per link it serves, of the link's capacity in Mbit/s; the
 * settings are those of sim_core.h. */
#include "sim_core.h"

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    acc_err rc = sim_open(state, "sim-network", env, NULL, err);
    for (size_t i = 0; !rc && i < env->n_links; i++)
        rc = sim_add_resource(state, env->links[i].name, env->links[i].capacity, err);
    if (!rc)
        rc = sim_start(state, err);
    return rc;
}

const struct acc_adapter_ops acc_sim_network_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "sim-network",
    .caps = ACC_CAP_BANDWIDTH | ACC_CAP_THREADSAFE | ACC_CAP_FAULTS | ACC_CAP_REPLACE,
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
