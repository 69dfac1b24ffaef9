/* SPDX-License-Identifier: Apache-2.0 */
/* flows.h - the traffic each network reservation of a committed agreement
 * carries, for network adapters that install reservations on the wire
 * (ACC_CAP_PROVISION) (internal to server/service/).
 *
 * A link of the offer joins two components; the hosts they run on are the
 * launch hosts' (server/launch/launch.h); a host's address is the site's
 * configured `addresses` entry, or else its name looked up (getaddrinfo,
 * IPv4).  Links between the same two sites share one bandwidth reservation
 * (plan.h), so the flow of a reservation is the union of its links'
 * endpoints: side a is every host of those links' components on the
 * configured link's first site, side b on its second.
 */
#ifndef ACC_FLOWS_H
#define ACC_FLOWS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../adapters/adapter.h"
#include "../config/config.h"
#include "../launch/launch.h"
#include "../../lib/model/model.h"

/* The flow of one link reservation. */
struct acc_link_flow {
    const char *key;                 /* the reservation (borrowed from the agreement) */
    const char *local_id;            /* the adapter's id (borrowed), or NULL */
    const struct acc_link_cfg *link; /* the configured link (borrowed from the config) */
    char **addrs_a, **addrs_b;       /* owned, without duplicates */
    struct acc_flow flow;            /* the adapter's view of the two lists above */
};

struct acc_link_flows {
    struct acc_link_flow *v;
    size_t n;
};

/* Which reservations get a flow: those whose configured link `want` accepts
 * (the caller's test: does the link's network adapter provision?); NULL:
 * every one. */
typedef bool (*acc_flow_filter)(void *ctx, const struct acc_link_cfg *link);

/* The flows of a's link reservations (one per reservation key), from its
 * allocation and the launch hosts p of a.  Links without a reservation (both
 * ends on one site) get none.  ACC_ERR_INVALID, naming the host and its
 * site, when a host has no configured address and its name does not
 * resolve; ACC_ERR_INVALID when the allocation does not fit the hosts or the
 * configuration (a link or component it does not know).  On error *out is
 * empty. */
acc_err acc_flows_build(const struct acc_agreement *a, const struct acc_launch_hosts *p,
                        const struct acc_config *cfg, acc_flow_filter want, void *want_ctx,
                        struct acc_link_flows *out, struct acc_error *err);
void acc_flows_release(struct acc_link_flows *f);

#endif
