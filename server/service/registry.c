/* SPDX-License-Identifier: Apache-2.0 */
/* registry.c - the adapters of the configured sites and networks (opened
 * by resources/), found by name, and cancelling bookings at them (part of
 * the service). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "internal.h"

struct acc_adapter *svc_site_adapter(void *ctx, const char *site)
{
    struct acc_service *svc = ctx;
    return acc_resources_site_adapter(svc->adapters, site);
}

struct acc_adapter *svc_network_adapter(void *ctx, const char *network)
{
    struct acc_service *svc = ctx;
    return acc_resources_network_adapter(svc->adapters, network);
}

/* The adapter instance of that name (sites and networks share names). */
struct acc_adapter *svc_adapter_named(struct acc_service *svc, const char *name)
{
    return acc_resources_adapter_named(svc->adapters, name);
}

/* Cancels bookings at their adapters (found by name), concurrently, and
 * records each outcome in the journal; afterwards b[i].state says how it
 * went.  A booking whose adapter is no longer configured is left as it is
 * (and logged).  Returns how many were not cancelled, those included. */
size_t svc_cancel_bookings(struct acc_service *svc, struct acc_booking *b, size_t n)
{
    struct acc_adapter **ads = calloc(n ? n : 1, sizeof *ads);
    struct acc_booking *todo = calloc(n ? n : 1, sizeof *todo);
    size_t *from = calloc(n ? n : 1, sizeof *from);
    if (!ads || !todo || !from) {
        free(ads);
        free(todo);
        free(from);
        return n; /* the journal still says open: housekeeping tries again */
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        ads[k] = svc_adapter_named(svc, b[i].adapter);
        if (!ads[k]) {
            acc_log_warn("reservation %s names adapter %s, which is no longer configured; "
                         "left alone",
                         b[i].key, b[i].adapter);
            continue;
        }
        from[k] = i;
        todo[k++] = b[i];
    }
    size_t failed =
        acc_engine_cancel_all(svc->engine, ads, todo, k, svc->cfg->adapter_timeout * 1000000);
    struct acc_error err;
    if (k && acc_store_journal_put(svc->store, todo, k, 0, &err))
        acc_log_error("journal: %s", err.msg);
    for (size_t j = 0; j < k; j++)
        b[from[j]] = todo[j];
    free(ads);
    free(todo);
    free(from);
    return failed + (n - k);
}
