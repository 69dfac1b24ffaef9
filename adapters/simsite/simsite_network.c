/* SPDX-License-Identifier: Apache-2.0 */
/* simsite_network.c - sim-network: bandwidth on simulated links.
 *
 * One calendar per link it serves, of the link's capacity in Mbit/s; the
 * settings are those of simsite.h. */
#include "simsite.h"

static acc_err open_(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct simsite *s = state;
    acc_err rc = simsite_open(state, "sim-network", env, err);
    for (size_t i = 0; !rc && i < env->n_links; i++)
        rc = acc_ledger_add_resource(s->ledger, env->links[i].name, env->links[i].capacity, err);
    if (!rc)
        rc = simsite_start(state, err);
    return rc;
}

const struct acc_adapter_ops acc_sim_network_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "sim-network",
    .caps = ACC_CAP_BANDWIDTH | ACC_CAP_THREADSAFE | ACC_CAP_FAULTS | ACC_CAP_REPLACE,
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
