/* SPDX-License-Identifier: Apache-2.0 */
/* service.c - the service's life (open, shutdown in order, close) and its
 * questions about sites, previews and health.  The other files of the
 * service are listed in internal.h. */
#include "service.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "internal.h"

/* How long running negotiations get to roll back at shutdown before every
 * wait for an adapter is cut short. */
#define SHUTDOWN_GRACE_US 1000000

const struct acc_config *acc_service_config(const struct acc_service *svc)
{
    return svc->cfg;
}

/* ------------------------------------------------------- sites, previews */

static void site_info(struct acc_adapter *ad, const char *name, int64_t nodes,
                      struct acc_site_info *out, char *health, char *endpoint)
{
    struct acc_health h;
    struct acc_adapter_stats st;
    acc_adapter_health(ad, &h);
    acc_adapter_stats(ad, &st);
    acc_strlcpy(health, h.detail, 256);
    acc_strlcpy(endpoint, h.endpoint, 128);
    *out = (struct acc_site_info){name,     acc_adapter_kind(ad), nodes,    h.up,    health,
                                  st.calls, st.failures,          h.rtt_us, endpoint};
}

acc_err acc_service_sites(struct acc_service *svc, struct acc_service_sites *out,
                          struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    memset(out, 0, sizeof *out);
    out->sites = calloc(cfg->res.n_sites, sizeof *out->sites);
    out->networks = calloc(cfg->res.n_networks ? cfg->res.n_networks : 1, sizeof *out->networks);
    out->links = calloc(cfg->res.n_links ? cfg->res.n_links : 1, sizeof *out->links);
    out->health = calloc(cfg->res.n_sites + cfg->res.n_networks + 1, sizeof *out->health);
    out->endpoint = calloc(cfg->res.n_sites + cfg->res.n_networks + 1, sizeof *out->endpoint);
    if (!out->sites || !out->networks || !out->links || !out->health || !out->endpoint) {
        acc_service_sites_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    size_t h = 0;
    for (size_t i = 0; i < cfg->res.n_sites; i++, h++) {
        site_info(acc_resources_at(svc->adapters, i), cfg->res.sites[i].name,
                  cfg->res.sites[i].nodes, &out->sites[i], out->health[h], out->endpoint[h]);
    }
    out->n_sites = cfg->res.n_sites;
    for (size_t i = 0; i < cfg->res.n_networks; i++, h++)
        site_info(acc_resources_at(svc->adapters, cfg->res.n_sites + i), cfg->res.networks[i].name,
                  0, &out->networks[i], out->health[h], out->endpoint[h]);
    out->n_networks = cfg->res.n_networks;
    for (size_t i = 0; i < cfg->res.n_links; i++) {
        const struct acc_link_cfg *l = &cfg->res.links[i];
        bool up = false;
        const char *kind = "";
        for (size_t k = 0; k < cfg->res.n_networks; k++) {
            if (strcmp(cfg->res.networks[k].name, l->network) == 0) {
                up = out->networks[k].up;
                kind = out->networks[k].adapter;
            }
        }
        out->links[i] = (struct acc_link_info){l->name, l->site_a,   l->site_b, l->network,
                                               kind,    l->capacity, up};
    }
    out->n_links = cfg->res.n_links;
    out->view = (struct acc_sites_view){out->sites,      out->n_sites, out->networks,
                                        out->n_networks, out->links,   out->n_links};
    return ACC_OK;
}

void acc_service_sites_release(struct acc_service_sites *s)
{
    if (!s)
        return;
    free(s->sites);
    free(s->networks);
    free(s->links);
    free(s->health);
    free(s->endpoint);
    memset(s, 0, sizeof *s);
}

acc_err acc_service_preview(struct acc_service *svc, const char *site, int64_t nodes,
                            int64_t duration, acc_time from, acc_time until, struct acc_frames *out,
                            acc_time *from_used, acc_time *until_used, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    const struct acc_site_cfg *s = acc_config_site(cfg, site);
    if (!s)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no site '%.64s'", site);
    if (nodes < 1 || nodes > s->nodes)
        return acc_error_set(err, ACC_ERR_CAPACITY,
                             "site %s has %" PRId64 " nodes; ask for 1 to %" PRId64, s->name,
                             s->nodes, s->nodes);
    if (duration <= 0)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "the duration must be positive");
    if (!from)
        from = acc_now();
    if (!until) /* never past the last time a document can carry */
        until = from < ACC_TIME_MAX - cfg->horizon ? from + cfg->horizon : ACC_TIME_MAX;
    if (until <= from)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "until must be later than from");
    if (until - from > 366 * 86400)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "the window may be at most a year long");
    *from_used = from;
    *until_used = until;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = s->name, .amount = nodes};
    return acc_engine_preview(svc->engine, svc_site_adapter(svc, site), &res, from, until, duration,
                              cfg->adapter_timeout * 1000000, out, err);
}

acc_err acc_service_control(struct acc_service *svc, const char *adapter, const char *op,
                            const struct acc_kv *args, size_t n_args, struct acc_buf *reply,
                            struct acc_error *err)
{
    if (!svc->cfg->allow_control)
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "adapter controls are disabled (set [server] allow_control = yes)");
    struct acc_adapter *ad = svc_adapter_named(svc, adapter);
    if (!ad)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no site or network '%.64s'", adapter);
    return acc_adapter_control(ad, op, args, n_args, reply, err);
}

acc_err acc_service_health(struct acc_service *svc, struct acc_buf *text, struct acc_error *err)
{
    acc_err rc = svc_instance_clock_refuse(svc, err);
    if (!rc)
        rc = acc_store_ping(svc->store, err);
    if (rc)
        return rc;
    /* reads answer, writes fail (a full disk, a standby): nothing can be
     * agreed here */
    char failing[256];
    int64_t for_us = 0;
    if (acc_store_writes_failing(svc->store, &for_us, failing, sizeof failing))
        return acc_error_set(err, ACC_ERR_STORAGE,
                             "degraded: database writes fail (for %lld s): %s",
                             (long long)(for_us / 1000000), failing);
    size_t up = 0, open = 0, all = acc_resources_count(svc->adapters);
    struct acc_buf why;
    acc_buf_init(&why);
    for (size_t i = 0; i < all; i++) {
        struct acc_adapter *ad = acc_resources_at(svc->adapters, i);
        struct acc_engine_guard_state g;
        acc_engine_guard(svc->engine, acc_adapter_name(ad), &g);
        if (g.state != ACC_BREAKER_CLOSED) { /* not asked: it would hang here too */
            if (g.state == ACC_BREAKER_OPEN)
                acc_buf_printf(&why, "%s%s (tried again in %" PRId64 " s)", open ? ", " : "",
                               g.name, g.retry_in_s);
            else
                acc_buf_printf(&why, "%s%s (a probe call is under way)", open ? ", " : "", g.name);
            open++;
            continue;
        }
        struct acc_health h;
        up += acc_adapter_health(ad, &h) == ACC_OK && h.up;
    }
    if (open)
        acc_buf_printf(text,
                       "degraded: database answers; %zu of %zu adapters up; circuit breaker "
                       "open for %s\n",
                       up, all, acc_buf_str(&why) ? acc_buf_str(&why) : "");
    else
        acc_buf_printf(text, "ok: database answers; %zu of %zu adapters up\n", up, all);
    acc_buf_release(&why);
    return ACC_OK;
}

acc_err acc_service_open(const struct acc_config *cfg, struct acc_service **out,
                         struct acc_error *err)
{
    return acc_service_open_with(cfg, NULL, out, err);
}

acc_err acc_service_open_with(const struct acc_config *cfg, const struct acc_service_options *opt,
                              struct acc_service **out, struct acc_error *err)
{
    struct acc_service *svc = calloc(1, sizeof *svc);
    if (!svc)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    svc->cfg = cfg;
    svc->kinds = opt ? opt->kinds : NULL;
    svc->precommit = opt ? opt->precommit : NULL;
    svc->precommit_arg = opt ? opt->precommit_arg : NULL;
    svc_provision_init(&svc->provision);
    pthread_mutex_init(&svc->lock, NULL);
    pthread_cond_init(&svc->wake, NULL);
    svc_queue_init(&svc->queue);
    svc_ledger_init(&svc->ledger);
    svc_usage_init(&svc->usage);
    pthread_mutex_init(&svc->quote_lock, NULL);
    pthread_mutex_init(&svc->busy_lock, NULL);

    struct acc_store_options so = {
        .path = cfg->db_path, .durable = cfg->durable, .wal_limit = cfg->wal_limit};
    acc_err rc = acc_store_open(&so, &svc->store, err);
    if (!rc) {
        unsigned bound = cfg->adapter_max_calls ? cfg->adapter_max_calls : cfg->workers / 2;
        struct acc_engine_options eo = {.max_calls_per_adapter = bound ? bound : 1,
                                        .breaker_failures = cfg->breaker_failures,
                                        .breaker_cooldown_us = cfg->breaker_cooldown * 1000000,
                                        .orphan = svc_hook_orphan,
                                        .orphan_ctx = svc};
        rc = acc_engine_new(&eo, &svc->engine, err);
    }
    if (!rc) {
        struct acc_resources_env re = {
            .db_path = cfg->db_path, .durable = cfg->durable, .kinds = svc->kinds};
        rc = acc_resources_open(&cfg->res, &re, &svc->adapters, err);
    }
    if (!rc)
        rc = svc_instance_open(svc, err);
    if (!rc)
        rc = svc_launcher_open(svc, err);
    if (!rc)
        rc = svc_recover(svc, err);
    if (!rc)
        rc = svc_queue_start(svc, err);
    if (!rc) {
        if (pthread_create(&svc->housekeeper, NULL, svc_housekeeping_main, svc) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start housekeeping");
        else
            svc->housekeeper_started = true;
    }
    if (!rc && svc->shared) {
        if (pthread_create(&svc->beater, NULL, svc_instance_main, svc) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the instance's beat");
        else
            svc->beater_started = true;
    }
    if (rc) {
        acc_service_close(svc);
        return rc;
    }
    *out = svc;
    return ACC_OK;
}

void acc_service_shutdown(struct acc_service *svc)
{
    if (!svc || atomic_exchange(&svc->stopping, true))
        return;
    pthread_mutex_lock(&svc->lock);
    pthread_cond_broadcast(&svc->wake);
    pthread_mutex_unlock(&svc->lock);
    /* Hung adapter calls fail now; negotiations see `stopping` at their next
     * step and roll back; waiting ones end at once. */
    acc_resources_interrupt(svc->adapters);
    svc_queue_stop(svc);
    if (!svc_queue_wait_idle(svc, SHUTDOWN_GRACE_US)) {
        /* Calls that ignore the interruption: stop waiting for them.  What
         * they booked stays in the journal, cancelled at the next start. */
        acc_log_warn("shutdown: negotiations still wait for adapters; giving up on them");
        acc_engine_interrupt(svc->engine);
    }
    svc_queue_join(svc);
    if (svc->housekeeper_started) {
        pthread_join(svc->housekeeper, NULL);
        svc->housekeeper_started = false;
    }
    if (svc->beater_started) {
        pthread_join(svc->beater, NULL);
        svc->beater_started = false;
    }
}

void acc_service_close(struct acc_service *svc)
{
    if (!svc)
        return;
    acc_service_shutdown(svc);
    acc_launcher_free(svc->launcher); /* jobs keep running; the next start watches them */
    svc->launcher = NULL;
    /* Only calls abandoned at their time limit can be left: wait a moment
     * for them, not for ever. */
    if (svc->engine)
        acc_engine_interrupt(svc->engine);
    if (!acc_engine_free(svc->engine)) {
        /* Adapter calls deaf to the interruption still run: they use their
         * adapters, and a late reservation is cancelled and journaled
         * through this service.  Leave all of it to the end of the process;
         * the journal has every reservation for the next start. */
        acc_log_warn("shutdown: adapters and database left open for calls that did not end");
        return;
    }
    acc_resources_close(svc->adapters);
    svc->adapters = NULL;
    /* Nothing of this instance negotiates, starts or watches a job any
     * more: the others need not wait for its lease to run out (calls still
     * hung, above: they do, as after a crash). */
    svc_instance_leave(svc);
    acc_store_close(svc->store);
    svc_queue_release(&svc->queue);
    svc_provision_release(&svc->provision);
    svc_ledger_release(&svc->ledger);
    svc_usage_release(&svc->usage);
    pthread_mutex_destroy(&svc->quote_lock);
    pthread_mutex_destroy(&svc->busy_lock);
    pthread_mutex_destroy(&svc->lock);
    pthread_cond_destroy(&svc->wake);
    free(svc);
}
