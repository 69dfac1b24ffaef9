/* registry.c - the adapters of the configured sites and networks, found by
 * name, and cancelling bookings at them (part of the service). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "internal.h"

struct acc_adapter *svc_site_adapter(void *ctx, const char *site)
{
    struct acc_service *svc = ctx;
    for (size_t i = 0; i < svc->cfg->n_sites; i++) {
        if (strcmp(svc->cfg->sites[i].name, site) == 0)
            return svc->site_ad[i];
    }
    return NULL;
}

struct acc_adapter *svc_network_adapter(void *ctx, const char *network)
{
    struct acc_service *svc = ctx;
    for (size_t i = 0; i < svc->cfg->n_networks; i++) {
        if (strcmp(svc->cfg->networks[i].name, network) == 0)
            return svc->net_ad[i];
    }
    return NULL;
}

/* The adapter instance of that name (sites and networks share names). */
struct acc_adapter *svc_adapter_named(struct acc_service *svc, const char *name)
{
    struct acc_adapter *ad = svc_site_adapter(svc, name);
    return ad ? ad : svc_network_adapter(svc, name);
}

/* The kind: the given ones (tests) first, then the compiled-in ones. */
static const struct acc_adapter_ops *kind_find(const struct acc_adapter_ops *const *kinds,
                                               const char *kind)
{
    for (size_t i = 0; kinds && kinds[i]; i++) {
        if (strcmp(kinds[i]->kind, kind) == 0)
            return kinds[i];
    }
    return acc_adapter_kind_find(kind);
}

static void known_kinds(char *known, size_t len)
{
    known[0] = '\0';
    for (size_t i = 0; acc_adapter_kinds[i]; i++) {
        size_t n = strlen(known);
        snprintf(known + n, len - n, "%s%s", i ? ", " : "", acc_adapter_kinds[i]->kind);
    }
}

acc_err acc_service_open_site(const struct acc_config *cfg, size_t i,
                              const struct acc_adapter_ops *const *kinds, struct acc_adapter **out,
                              struct acc_error *err)
{
    *out = NULL;
    if (i >= cfg->n_sites)
        return acc_error_set(err, ACC_ERR_INVALID, "no site %zu in the configuration", i);
    const struct acc_site_cfg *s = &cfg->sites[i];
    char section[128], known[256];
    snprintf(section, sizeof section, "[site %s]", s->name);
    const struct acc_adapter_ops *ops = kind_find(kinds, s->adapter);
    if (!ops) {
        known_kinds(known, sizeof known);
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: unknown adapter '%s' (known: %s)", section,
                             s->adapter, known);
    }
    if (!(ops->caps & ACC_CAP_NODES))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: adapter %s does not reserve nodes", section,
                             s->adapter);
    if (s->sbatch && !(ops->caps & ACC_CAP_SUBMIT))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: launch = sbatch needs an adapter that submits jobs into "
                             "reservations (slurm); %s does not",
                             section, s->adapter);
    struct acc_adapter_env env = {
        .name = s->name,
        .section = section,
        .db_path = cfg->db_path,
        .durable = cfg->durable,
        .settings = s->settings,
        .n_settings = s->n_settings,
        .nodes = s->nodes,
    };
    acc_err rc = acc_adapter_open(ops, &env, out, err);
    /* An instance narrows its kind's capabilities (remote: by its section);
     * what the section needs must be left. */
    if (!rc && (!acc_adapter_has(*out, ACC_CAP_NODES) ||
                (s->sbatch && !acc_adapter_has(*out, ACC_CAP_SUBMIT)))) {
        acc_adapter_close(*out);
        *out = NULL;
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: this %s instance does not %s", section,
                             s->adapter,
                             s->sbatch ? "reserve nodes and submit jobs" : "reserve nodes");
    }
    return rc;
}

acc_err svc_open_adapters(struct acc_service *svc, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    svc->site_ad = calloc(cfg->n_sites, sizeof *svc->site_ad);
    svc->net_ad = calloc(cfg->n_networks ? cfg->n_networks : 1, sizeof *svc->net_ad);
    if (!svc->site_ad || !svc->net_ad)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    char known[256];
    known_kinds(known, sizeof known);
    for (size_t i = 0; i < cfg->n_sites; i++) {
        acc_err rc = acc_service_open_site(cfg, i, svc->kinds, &svc->site_ad[i], err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < cfg->n_networks; i++) {
        const struct acc_network_cfg *n = &cfg->networks[i];
        char section[128];
        snprintf(section, sizeof section, "[network %s]", n->name);
        const struct acc_adapter_ops *ops = kind_find(svc->kinds, n->adapter);
        if (!ops)
            return acc_error_set(err, ACC_ERR_CONFIG, "%s: unknown adapter '%s' (known: %s)",
                                 section, n->adapter, known);
        if (!(ops->caps & ACC_CAP_BANDWIDTH))
            return acc_error_set(err, ACC_ERR_CONFIG, "%s: adapter %s does not reserve bandwidth",
                                 section, n->adapter);
        struct acc_link_def *links = calloc(cfg->n_links ? cfg->n_links : 1, sizeof *links);
        if (!links)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        size_t nl = 0;
        for (size_t k = 0; k < cfg->n_links; k++) {
            const struct acc_link_cfg *l = &cfg->links[k];
            if (strcmp(l->network, n->name) == 0)
                links[nl++] = (struct acc_link_def){l->name, l->site_a, l->site_b, l->capacity};
        }
        struct acc_adapter_env env = {
            .name = n->name,
            .section = section,
            .db_path = svc->cfg->db_path,
            .durable = svc->cfg->durable,
            .settings = n->settings,
            .n_settings = n->n_settings,
            .links = links,
            .n_links = nl,
        };
        acc_err rc = acc_adapter_open(ops, &env, &svc->net_ad[i], err);
        free(links);
        if (rc)
            return rc;
        if (!acc_adapter_has(svc->net_ad[i], ACC_CAP_BANDWIDTH))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "%s: this %s instance does not reserve bandwidth", section,
                                 n->adapter);
    }
    return ACC_OK;
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

void svc_interrupt_adapters(struct acc_service *svc)
{
    for (size_t i = 0; svc->site_ad && i < svc->cfg->n_sites; i++) {
        if (svc->site_ad[i])
            acc_adapter_interrupt(svc->site_ad[i]);
    }
    for (size_t i = 0; svc->net_ad && i < svc->cfg->n_networks; i++) {
        if (svc->net_ad[i])
            acc_adapter_interrupt(svc->net_ad[i]);
    }
}

void svc_close_adapters(struct acc_service *svc)
{
    for (size_t i = 0; svc->site_ad && i < svc->cfg->n_sites; i++)
        acc_adapter_close(svc->site_ad[i]);
    for (size_t i = 0; svc->net_ad && i < svc->cfg->n_networks; i++)
        acc_adapter_close(svc->net_ad[i]);
    free(svc->site_ad);
    free(svc->net_ad);
    svc->site_ad = svc->net_ad = NULL;
}
