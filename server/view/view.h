/* SPDX-License-Identifier: Apache-2.0 */
/* view.h - what accordd's API shows beyond the model (lib/model/model.h):
 * an agreement's state with its terms, guarantees and launch, the sites and
 * links with their health, and a site's preview.
 *
 * The service fills these from the store, the configuration and the
 * adapters; the renderers (server/xml, server/json) write them out.  Plain
 * data, borrowed: every pointer lives as long as whoever filled the view.
 * Nothing outside server/ sees them.
 */
#ifndef ACC_VIEW_H
#define ACC_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/common/timefmt.h"
#include "../../lib/model/model.h"

/* ------------------------------------------------------------------ state */

/* What GET /agreements/{id}/state shows. */
struct acc_term_view {
    const char *name; /* the term's wsag:Name */
    enum acc_term_state state;
};

struct acc_guarantee_view {
    const char *name;
    const char *state; /* "Fulfilled", "Violated" or "NotDetermined" */
    /* A reserved link's guarantee term: the configured link it runs on;
     * NULL for the offer's own guarantee terms (nothing below is set). */
    const char *link;
    bool measured;        /* its network adapter observes the wire: the fields below are set */
    bool provisioned;     /* its endpoints were handed to the adapter */
    bool active;          /* what guarantees it is in place now */
    acc_time activated;   /* first in place; 0: never */
    acc_time violated_at; /* first violation; 0: none */
    const char *reason;   /* why it is Violated (or why nothing is known); NULL: none */
    uint64_t bytes, packets, drops; /* carried on the wire */
};

struct acc_state_view {
    const struct acc_agreement *agreement;
    const struct acc_term_view *terms;
    size_t n_terms;
    const struct acc_guarantee_view *guarantees;
    size_t n_guarantees;
    const struct acc_run *run; /* the launch, NULL when there is none */
};

/* ------------------------------------------------------- sites and links */

/* What GET /sites shows of a site (batch adapter) or network. */
struct acc_site_info {
    const char *name;
    const char *adapter; /* kind: "sim-batch", "slurm", ... */
    int64_t nodes;       /* 0 for networks */
    bool up;
    const char *health; /* the adapter's words */
    uint64_t calls, failures;
    /* the round trip of the health call to a remote site daemon, in
     * microseconds (0: not measured: an in-process adapter), and where that
     * daemon is (NULL or "": in-process) */
    int64_t rtt_us;
    const char *endpoint;
};

struct acc_link_info {
    const char *name;
    const char *site_a, *site_b;
    const char *network; /* the network adapter instance */
    const char *adapter; /* its kind */
    int64_t capacity;    /* Mbit/s */
    bool up;
};

struct acc_sites_view {
    const struct acc_site_info *sites;
    size_t n_sites;
    const struct acc_site_info *networks;
    size_t n_networks;
    const struct acc_link_info *links;
    size_t n_links;
};

/* A site's preview as asked over GET /sites/{site}/preview. */
struct acc_preview_view {
    const char *site;
    int64_t nodes;
    int64_t duration;
    acc_time from, until;
    const struct acc_frames *frames;
};

#endif
