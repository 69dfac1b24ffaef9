#include "service.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../adapters/adapter.h"
#include "../../db/store.h"
#include "../common/id.h"
#include "../common/log.h"
#include "../common/strutil.h"
#include "../engine/engine.h"
#include "launcher.h"
#include "plan.h"

#define HOUSEKEEPING_SECONDS 5
#define REPLAY_WAIT_SECONDS  120

/* A negotiation running in this process, so terminate can stop it and
 * housekeeping leaves its reservations alone. */
struct active {
    char id[ACC_ID_LEN + 1];
    atomic_bool stop;
    struct active *next;
};

enum { OUT_AGREED, OUT_NO_SLOT, OUT_FAILED, OUT_STOPPED, OUT__COUNT };

struct acc_service {
    const struct acc_config *cfg;
    struct acc_store *store;
    struct acc_engine *engine;
    struct acc_adapter **site_ad; /* by config index */
    struct acc_adapter **net_ad;
    struct acc_launcher *launcher;
    pthread_mutex_t lock;
    struct active *active;
    pthread_cond_t wake; /* housekeeping and close */
    atomic_bool stopping;
    unsigned background; /* pending-mode negotiations running */
    pthread_t housekeeper;
    bool housekeeper_started;

    /* metrics */
    atomic_uint_least64_t outcomes[OUT__COUNT];
    atomic_uint_least64_t rounds, rollbacks, negotiation_us;
    atomic_uint_least64_t submitted, rejected_input;
};

const struct acc_config *acc_service_config(const struct acc_service *svc)
{
    return svc->cfg;
}

/* ------------------------------------------------------------- adapters */

static struct acc_adapter *site_adapter(void *ctx, const char *site)
{
    struct acc_service *svc = ctx;
    for (size_t i = 0; i < svc->cfg->n_sites; i++) {
        if (strcmp(svc->cfg->sites[i].name, site) == 0)
            return svc->site_ad[i];
    }
    return NULL;
}

static struct acc_adapter *network_adapter(void *ctx, const char *network)
{
    struct acc_service *svc = ctx;
    for (size_t i = 0; i < svc->cfg->n_networks; i++) {
        if (strcmp(svc->cfg->networks[i].name, network) == 0)
            return svc->net_ad[i];
    }
    return NULL;
}

/* The adapter instance of that name (sites and networks share names). */
static struct acc_adapter *adapter_named(struct acc_service *svc, const char *name)
{
    struct acc_adapter *ad = site_adapter(svc, name);
    return ad ? ad : network_adapter(svc, name);
}

static acc_err open_adapters(struct acc_service *svc, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    svc->site_ad = calloc(cfg->n_sites, sizeof *svc->site_ad);
    svc->net_ad = calloc(cfg->n_networks ? cfg->n_networks : 1, sizeof *svc->net_ad);
    if (!svc->site_ad || !svc->net_ad)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    char known[256] = "";
    for (size_t i = 0; acc_adapter_kinds[i]; i++) {
        size_t n = strlen(known);
        snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", acc_adapter_kinds[i]->kind);
    }
    for (size_t i = 0; i < cfg->n_sites; i++) {
        const struct acc_site_cfg *s = &cfg->sites[i];
        char section[128];
        snprintf(section, sizeof section, "[site %s]", s->name);
        const struct acc_adapter_ops *ops = acc_adapter_kind_find(s->adapter);
        if (!ops)
            return acc_error_set(err, ACC_ERR_CONFIG, "%s: unknown adapter '%s' (known: %s)",
                                 section, s->adapter, known);
        if (!(ops->caps & ACC_CAP_NODES))
            return acc_error_set(err, ACC_ERR_CONFIG, "%s: adapter %s does not reserve nodes",
                                 section, s->adapter);
        if (s->sbatch && !(ops->caps & ACC_CAP_SUBMIT))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "%s: launch = sbatch needs an adapter that submits jobs into "
                                 "reservations (slurm); %s does not",
                                 section, s->adapter);
        struct acc_adapter_env env = {
            .name = s->name,
            .section = section,
            .db_path = svc->cfg->db_path,
            .durable = svc->cfg->durable,
            .settings = s->settings,
            .n_settings = s->n_settings,
            .nodes = s->nodes,
        };
        acc_err rc = acc_adapter_open(ops, &env, &svc->site_ad[i], err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < cfg->n_networks; i++) {
        const struct acc_network_cfg *n = &cfg->networks[i];
        char section[128];
        snprintf(section, sizeof section, "[network %s]", n->name);
        const struct acc_adapter_ops *ops = acc_adapter_kind_find(n->adapter);
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
    }
    return ACC_OK;
}

/* ------------------------------------------------------ active negotiations */

static struct active *active_add(struct acc_service *svc, const char *id)
{
    struct active *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    acc_strlcpy(a->id, id, sizeof a->id);
    atomic_init(&a->stop, false);
    pthread_mutex_lock(&svc->lock);
    a->next = svc->active;
    svc->active = a;
    pthread_mutex_unlock(&svc->lock);
    return a;
}

static void active_remove(struct acc_service *svc, struct active *a)
{
    pthread_mutex_lock(&svc->lock);
    for (struct active **pp = &svc->active; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    free(a);
}

/* Asks a running negotiation to stop; false if none runs here. */
static bool active_stop(struct acc_service *svc, const char *id)
{
    bool found = false;
    pthread_mutex_lock(&svc->lock);
    for (struct active *a = svc->active; a; a = a->next) {
        if (strcmp(a->id, id) == 0) {
            atomic_store(&a->stop, true);
            found = true;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    return found;
}

static bool active_has(struct acc_service *svc, const char *id)
{
    bool found = false;
    pthread_mutex_lock(&svc->lock);
    for (struct active *a = svc->active; a && !found; a = a->next)
        found = strcmp(a->id, id) == 0;
    pthread_mutex_unlock(&svc->lock);
    return found;
}

/* ---------------------------------------------------------------- hooks */

struct nego_ctx {
    struct acc_service *svc;
    struct active *active;
    struct acc_trace trace;
};

static acc_err hook_journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                            struct acc_error *err)
{
    struct nego_ctx *c = ctx;
    return acc_store_journal_put(c->svc->store, b, n, durable ? 0 : ACC_STORE_NOWAIT, err);
}

static void hook_trace(void *ctx, const struct acc_trace_event *ev)
{
    struct nego_ctx *c = ctx;
    if (acc_trace_add(&c->trace, ev))
        acc_log_warn("trace event dropped: out of memory");
}

static bool hook_stopped(void *ctx)
{
    struct nego_ctx *c = ctx;
    return (c->active && atomic_load(&c->active->stop)) || atomic_load(&c->svc->stopping);
}

/* A reservation whose answer came after the engine gave up on it. */
static void hook_orphan(void *ctx, struct acc_adapter *ad, const struct acc_booking *b)
{
    struct acc_service *svc = ctx;
    struct acc_booking copy = *b;
    struct acc_error err;
    if (acc_adapter_cancel(ad, b->key, b->local_id[0] ? b->local_id : NULL, &err)) {
        copy.state = ACC_BOOKING_CANCEL_FAILED;
        acc_strlcpy(copy.error, err.msg, sizeof copy.error);
        acc_log_warn("%s: late reservation %s not cancelled yet: %s", b->adapter, b->key, err.msg);
    } else {
        copy.state = ACC_BOOKING_CANCELLED;
    }
    if (acc_store_journal_put(svc->store, &copy, 1, 0, &err))
        acc_log_error("journal: %s", err.msg);
}

/* ------------------------------------------------------------ negotiation */

static char *join_lines(const struct acc_offer *o, bool guarantees)
{
    struct acc_buf b = ACC_BUF_INIT;
    if (guarantees) {
        for (size_t i = 0; i < o->n_guarantees; i++)
            acc_buf_printf(&b, "%s%s", i ? "\n" : "", o->guarantees[i]);
    } else {
        for (size_t i = 0; i < o->n_components; i++)
            acc_buf_printf(&b, "%s%s", b.len ? "\n" : "", o->components[i].name);
        for (size_t i = 0; i < o->n_links; i++)
            acc_buf_printf(&b, "%s%s", b.len ? "\n" : "", o->links[i].name);
    }
    if (b.len == 0) {
        acc_buf_release(&b);
        return NULL;
    }
    return acc_buf_detach(&b, NULL);
}

/* Fills the allocation of *a from the offer and the plan (reservations
 * only when the items were booked). */
static acc_err fill_allocation(struct acc_agreement *a, const struct acc_offer *o,
                               const struct acc_plan *p, bool booked)
{
    a->comps = calloc(o->n_components, sizeof *a->comps);
    a->links = calloc(o->n_links ? o->n_links : 1, sizeof *a->links);
    if (!a->comps || !a->links)
        return ACC_ERR_NOMEM;
    a->n_comps = o->n_components;
    a->n_links = o->n_links;
    bool oom = false;
    for (size_t i = 0; i < o->n_components; i++) {
        struct acc_alloc_component *c = &a->comps[i];
        const struct acc_engine_item *it = &p->items[p->item_of_comp[i]];
        c->name = acc_strdup(o->components[i].name);
        c->site = acc_strdup(p->site_of[i]);
        c->nodes = o->components[i].nodes;
        c->ppn = o->components[i].ppn;
        if (o->components[i].executable) {
            c->executable = acc_strdup(o->components[i].executable);
            oom |= !c->executable;
        }
        if (o->components[i].n_args) {
            c->args = calloc(o->components[i].n_args, sizeof *c->args);
            oom |= !c->args;
            for (size_t k = 0; c->args && k < o->components[i].n_args; k++) {
                c->args[c->n_args] = acc_strdup(o->components[i].args[k]);
                oom |= !c->args[c->n_args];
                c->n_args += c->args[c->n_args] != NULL;
            }
        }
        if (booked) {
            c->reservation = acc_strdup(it->booking.key);
            c->local_id = acc_strdup(it->booking.local_id);
            c->node_names = acc_strdup(it->nodes);
            oom |= !c->reservation || !c->local_id || (it->nodes && !c->node_names);
        }
        oom |= !c->name || !c->site;
    }
    for (size_t i = 0; i < o->n_links; i++) {
        struct acc_alloc_link *l = &a->links[i];
        const struct acc_link_req *rq = &o->links[i];
        l->name = acc_strdup(rq->name);
        l->from = acc_strdup(o->components[rq->a].name);
        l->to = acc_strdup(o->components[rq->b].name);
        l->site_a = acc_strdup(p->site_of[rq->a]);
        l->site_b = acc_strdup(p->site_of[rq->b]);
        l->bandwidth = rq->bandwidth;
        oom |= !l->name || !l->from || !l->to || !l->site_a || !l->site_b;
        if (p->link_of[i]) {
            l->link = acc_strdup(p->link_of[i]->name);
            oom |= !l->link;
        }
        if (booked && p->item_of_link[i] != ACC_PLAN_NO_ITEM) {
            const struct acc_engine_item *it = &p->items[p->item_of_link[i]];
            l->reservation = acc_strdup(it->booking.key);
            l->local_id = acc_strdup(it->booking.local_id);
            oom |= !l->reservation || !l->local_id;
        }
    }
    return oom ? ACC_ERR_NOMEM : ACC_OK;
}

/* The bookings of the plan's items, in the state given. */
static struct acc_booking *plan_bookings(const struct acc_plan *p, enum acc_booking_state st)
{
    struct acc_booking *b = calloc(p->n_items ? p->n_items : 1, sizeof *b);
    for (size_t i = 0; b && i < p->n_items; i++) {
        b[i] = p->items[i].booking;
        b[i].state = st;
    }
    return b;
}

/* Cancels bookings at their adapters (found by name), concurrently, and
 * records each outcome in the journal; afterwards b[i].state says how it
 * went.  A booking whose adapter is no longer configured is left as it is
 * (and logged).  Returns how many were not cancelled, those included. */
static size_t cancel_bookings(struct acc_service *svc, struct acc_booking *b, size_t n)
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
        ads[k] = adapter_named(svc, b[i].adapter);
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

/* Cancels booked items after the agreement could not be recorded. */
static void undo_items(struct acc_service *svc, struct acc_plan *p)
{
    struct acc_booking *b = plan_bookings(p, ACC_BOOKING_RESERVED);
    if (!b)
        return; /* the journal still says reserved: housekeeping cancels them */
    cancel_bookings(svc, b, p->n_items);
    for (size_t i = 0; i < p->n_items; i++)
        p->items[i].booking = b[i];
    free(b);
}

/* Runs the negotiation of a stored Pending agreement and records its end.
 * Returns the agreement's result code (see acc_service_submit). */
static acc_err negotiate(struct acc_service *svc, const struct acc_offer *o,
                         struct acc_agreement *a, struct active *act, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    struct nego_ctx ctx = {.svc = svc, .active = act};
    acc_trace_init(&ctx.trace);
    struct acc_plan plan = {0};
    struct acc_plan_env env = {cfg, site_adapter, network_adapter, svc};
    struct acc_engine_request rq = {
        .agreement = a->id,
        .earliest = a->earliest,
        .deadline = a->deadline,
        .duration = a->duration,
        .strategy = a->strategy,
        .max_rounds = cfg->max_rounds,
        .call_timeout_us = cfg->adapter_timeout * 1000000,
        .hooks = {hook_journal, hook_trace, hook_stopped, &ctx},
    };
    struct acc_engine_result res = {0};
    int64_t t0 = acc_mono_us();
    bool planned = false;

    acc_err rc = acc_plan_make(&env, svc->engine, o, &rq, &plan, &res.err);
    if (rc) {
        res.outcome = ACC_ENGINE_FAILED;
    } else {
        planned = true;
        rq.items = plan.items;
        rq.n_items = plan.n_items;
        acc_engine_negotiate(svc->engine, &rq, &res);
    }

    /* What to record. */
    unsigned from = ACC_STATE_BIT(ACC_STATE_PENDING);
    a->updated = acc_now();
    a->rounds = res.rounds;
    a->rollbacks = res.rollbacks;
    free(a->fault_code);
    free(a->reason);
    a->fault_code = a->reason = NULL;
    struct acc_booking *bookings = NULL;
    size_t n_bookings = 0;
    switch (res.outcome) {
    case ACC_ENGINE_AGREED:
        a->state = ACC_STATE_OBSERVED;
        a->start = res.start;
        a->end = res.end;
        bookings = plan_bookings(&plan, ACC_BOOKING_COMMITTED);
        n_bookings = bookings ? plan.n_items : 0;
        rc = bookings ? ACC_OK : ACC_ERR_NOMEM;
        break;
    case ACC_ENGINE_STOPPED:
        a->state = ACC_STATE_TERMINATED;
        from |= ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING);
        a->reason = strdup("terminated during the negotiation");
        rc = ACC_ERR_CANCELLED;
        break;
    default:
        a->state = ACC_STATE_REJECTED;
        a->fault_code = acc_strdup(acc_err_symbol(res.err.code));
        a->reason = acc_strdup(res.err.msg);
        rc = res.err.code;
        break;
    }
    acc_err frc = planned ? fill_allocation(a, o, &plan, res.outcome == ACC_ENGINE_AGREED) : ACC_OK;
    if (!frc && res.outcome == ACC_ENGINE_AGREED)
        frc = acc_launcher_describe(svc->launcher, a, &res.err);
    if (frc)
        rc = frc;
    struct acc_error serr;
    if (frc)
        acc_error_set(&serr, frc, "the agreement could not be prepared: %s",
                      frc == ACC_ERR_NOMEM ? "out of memory" : acc_err_symbol(frc));
    acc_err src = frc ? frc
                      : acc_store_agreement_settle(svc->store, a, from, &ctx.trace, bookings,
                                                   n_bookings, &serr);
    if (src && res.outcome == ACC_ENGINE_AGREED) {
        /* Terminated meanwhile, or not recorded: the reservations must go. */
        undo_items(svc, &plan);
        free(a->reason);
        a->reason = strdup(src == ACC_ERR_STATE ? "terminated during the negotiation"
                                                : "the agreement could not be recorded");
        a->state = ACC_STATE_TERMINATED;
        a->start = a->end = 0;
        if (a->run) {
            acc_run_release(a->run);
            free(a->run);
            a->run = NULL;
        }
        if (src == ACC_ERR_STATE)
            src = acc_store_agreement_settle(svc->store, a,
                                             ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING), NULL,
                                             NULL, 0, &serr);
        rc = src ? src : ACC_ERR_CANCELLED;
        if (src)
            acc_error_copy(&res.err, &serr);
        else
            acc_error_set(&res.err, ACC_ERR_CANCELLED,
                          "the agreement was terminated during "
                          "its negotiation; its reservations were released");
    } else if (src == ACC_ERR_STATE) {
        /* Terminated while it failed: record the end as Terminated. */
        a->state = ACC_STATE_TERMINATED;
        src = acc_store_agreement_settle(svc->store, a,
                                         ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                         &ctx.trace, NULL, 0, &serr);
        rc = ACC_ERR_CANCELLED;
        acc_error_set(&res.err, ACC_ERR_CANCELLED,
                      "the agreement was terminated during its "
                      "negotiation");
    } else if (src) {
        acc_error_copy(&res.err, &serr);
        rc = src;
    }
    if (src)
        acc_log_error("agreement %s: %s", a->id, serr.msg);

    unsigned outcome = res.outcome == ACC_ENGINE_AGREED    ? OUT_AGREED
                       : res.outcome == ACC_ENGINE_NO_SLOT ? OUT_NO_SLOT
                       : res.outcome == ACC_ENGINE_STOPPED ? OUT_STOPPED
                                                           : OUT_FAILED;
    atomic_fetch_add(&svc->outcomes[outcome], 1);
    atomic_fetch_add(&svc->rounds, res.rounds);
    atomic_fetch_add(&svc->rollbacks, res.rollbacks);
    atomic_fetch_add(&svc->negotiation_us, (uint64_t)(acc_mono_us() - t0));
    if (rc == ACC_OK && a->run && a->run->state == ACC_RUN_WAITING)
        acc_launcher_schedule(svc->launcher, a->id, a->start, a->end);
    if (rc == ACC_OK)
        acc_log_debug("agreement %s: Observed from %" PRId64 " (%u rounds)", a->id, a->start,
                      res.rounds);
    else
        acc_log_info("agreement %s: %s: %s", a->id, acc_state_name(a->state), res.err.msg);

    if (rc)
        acc_error_copy(err, &res.err);
    free(bookings);
    acc_plan_release(&plan);
    acc_trace_release(&ctx.trace);
    return rc;
}

/* The window an offer asks for, or a 4xx error. */
static acc_err window(const struct acc_service *svc, const struct acc_offer *o, acc_time now,
                      acc_time *earliest, acc_time *deadline, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    char t[ACC_TIME_STRLEN], d[ACC_DURATION_STRLEN];
    if (o->expiration && o->expiration <= now) {
        acc_time_format(o->expiration, t);
        return acc_error_set(err, ACC_ERR_INVALID, "the offer expired at %s", t);
    }
    acc_time e = o->earliest > now + cfg->lead_time ? o->earliest : now + cfg->lead_time;
    acc_duration_format(o->duration, d);
    if (o->deadline) {
        acc_time_format(o->deadline, t);
        if (o->deadline <= now)
            return acc_error_set(err, ACC_ERR_INVALID, "the deadline %s lies in the past", t);
        if (o->deadline - e < o->duration)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "the duration %s does not fit between now and the deadline %s", d,
                                 t);
        *deadline = o->deadline;
    } else {
        if (o->duration > cfg->horizon) {
            char h[ACC_DURATION_STRLEN];
            acc_duration_format(cfg->horizon, h);
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "the duration %s is longer than the preview horizon %s; give a "
                                 "deadline",
                                 d, h);
        }
        *deadline = e + cfg->horizon;
    }
    *earliest = e;
    return ACC_OK;
}

struct background {
    struct acc_service *svc;
    struct acc_offer offer; /* copied: the request's copy is gone */
    struct acc_agreement a;
    struct active *act;
};

static acc_err offer_copy(struct acc_offer *dst, const struct acc_offer *src)
{
    memset(dst, 0, sizeof *dst);
    dst->components = calloc(src->n_components, sizeof *dst->components);
    dst->links = calloc(src->n_links ? src->n_links : 1, sizeof *dst->links);
    if (!dst->components || !dst->links)
        goto oom;
    dst->duration = src->duration;
    dst->strategy = src->strategy;
    dst->launch = src->launch;
    dst->n_components = src->n_components;
    dst->n_links = src->n_links;
    for (size_t i = 0; i < src->n_components; i++) {
        const struct acc_component *s = &src->components[i];
        struct acc_component *c = &dst->components[i];
        c->name = acc_strdup(s->name);
        c->site = acc_strdup(s->site);
        c->nodes = s->nodes;
        c->ppn = s->ppn;
        if (!c->name || (s->site && !c->site))
            goto oom;
    }
    for (size_t i = 0; i < src->n_links; i++) {
        dst->links[i] = src->links[i];
        dst->links[i].name = acc_strdup(src->links[i].name);
        if (!dst->links[i].name)
            goto oom;
    }
    return ACC_OK;
oom:
    acc_offer_release(dst);
    return ACC_ERR_NOMEM;
}

static void *background_main(void *arg)
{
    struct background *bg = arg;
    struct acc_service *svc = bg->svc;
    struct acc_error err;
    negotiate(svc, &bg->offer, &bg->a, bg->act, &err);
    active_remove(svc, bg->act);
    acc_offer_release(&bg->offer);
    acc_agreement_release(&bg->a);
    free(bg);
    pthread_mutex_lock(&svc->lock);
    svc->background--;
    pthread_cond_broadcast(&svc->wake);
    pthread_mutex_unlock(&svc->lock);
    return NULL;
}

/* Starts the negotiation of a stored agreement in the background. */
static acc_err start_background(struct acc_service *svc, const struct acc_offer *o,
                                const struct acc_agreement *a, struct active *act,
                                struct acc_error *err)
{
    struct background *bg = calloc(1, sizeof *bg);
    if (!bg || offer_copy(&bg->offer, o)) {
        free(bg);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    bg->svc = svc;
    bg->act = act;
    bg->a = *a;
    bg->a.name = bg->a.initiator = bg->a.offer_xml = bg->a.fault_code = bg->a.reason = NULL;
    bg->a.terms = bg->a.guarantees = NULL;
    bg->a.comps = NULL;
    bg->a.links = NULL;
    bg->a.n_comps = bg->a.n_links = 0;
    pthread_mutex_lock(&svc->lock);
    svc->background++;
    pthread_mutex_unlock(&svc->lock);
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int prc = pthread_create(&tid, &attr, background_main, bg);
    pthread_attr_destroy(&attr);
    if (prc != 0) {
        pthread_mutex_lock(&svc->lock);
        svc->background--;
        pthread_mutex_unlock(&svc->lock);
        acc_offer_release(&bg->offer);
        free(bg);
        return acc_error_set(err, ACC_ERR_INTERNAL, "cannot start the negotiation thread");
    }
    return ACC_OK;
}

/* The result code a stored agreement stands for, when a request is replayed. */
static acc_err result_of(const struct acc_agreement *a, struct acc_error *err)
{
    if (a->state != ACC_STATE_REJECTED)
        return ACC_OK;
    acc_err code = ACC_ERR_NO_SLOT;
    for (int k = 0; a->fault_code && k < ACC_ERR__COUNT; k++) {
        if (strcmp(a->fault_code, acc_err_symbol((acc_err)k)) == 0)
            code = (acc_err)k;
    }
    return acc_error_set(err, code, "%s", a->reason ? a->reason : acc_err_text(code));
}

static acc_err replay(struct acc_service *svc, const char *id, bool pending,
                      struct acc_agreement *out, struct acc_error *err)
{
    /* The first request may still be negotiating: wait for its outcome. */
    for (int i = 0; i < REPLAY_WAIT_SECONDS * 20; i++) {
        acc_err rc = acc_store_agreement_get(svc->store, id, false, out, err);
        if (rc)
            return rc;
        if (pending || out->state != ACC_STATE_PENDING)
            return result_of(out, err);
        acc_agreement_release(out);
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    return acc_store_agreement_get(svc->store, id, false, out, err);
}

acc_err acc_service_submit(struct acc_service *svc, const struct acc_submit *rq,
                           struct acc_agreement *out, bool *stored, bool *replayed,
                           struct acc_error *err)
{
    const struct acc_offer *o = rq->offer;
    struct acc_plan_env env = {svc->cfg, site_adapter, network_adapter, svc};
    *stored = false;
    *replayed = false;
    memset(out, 0, sizeof *out);
    atomic_fetch_add(&svc->submitted, 1);

    acc_time now = acc_now(), earliest = 0, deadline = 0;
    acc_err rc = acc_plan_check(&env, o, err);
    if (!rc)
        rc = window(svc, o, now, &earliest, &deadline, err);
    if (rc) {
        atomic_fetch_add(&svc->rejected_input, 1);
        return rc;
    }

    struct acc_agreement *a = out;
    rc = acc_id_new(a->id, err);
    if (rc)
        return rc;
    a->name = acc_strdup(o->name);
    a->initiator = acc_strdup(o->initiator ? o->initiator : "anonymous");
    a->state = ACC_STATE_PENDING;
    a->created = a->updated = now;
    a->earliest = earliest;
    a->deadline = deadline;
    a->duration = o->duration;
    a->strategy = o->strategy != ACC_STRATEGY_DEFAULT ? o->strategy : svc->cfg->strategy;
    a->launch = o->launch;
    a->offer_xml = acc_strndup(rq->document, rq->len);
    a->offer_len = rq->len;
    a->terms = join_lines(o, false);
    a->guarantees = join_lines(o, true);
    if ((o->name && !a->name) || !a->initiator || !a->offer_xml)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");

    /* Idempotency keys are the initiator's own: scope them by initiator. */
    char *key = NULL;
    if (rq->idempotency_key) {
        size_t n = strlen(a->initiator) + strlen(rq->idempotency_key) + 2;
        key = malloc(n);
        if (!key)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        snprintf(key, n, "%s\n%s", a->initiator, rq->idempotency_key);
    }
    /* Registered before the row exists, so that terminate can always reach
     * the negotiation. */
    struct active *act = active_add(svc, a->id);
    if (!act) {
        free(key);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    bool dup = false;
    char first[ACC_ID_LEN + 1];
    /* A synchronous negotiation without a key need not wait for the row: its
     * first journal write, which is awaited, commits it too.  A key must be
     * checked, and a pending agreement's id must be durable before the reply. */
    rc = acc_store_agreement_create(svc->store, a, key, !key && !rq->pending ? ACC_STORE_NOWAIT : 0,
                                    &dup, first, err);
    free(key);
    if (rc || dup) {
        active_remove(svc, act);
        if (rc)
            return rc;
        acc_agreement_release(out);
        *replayed = true;
        *stored = true;
        return replay(svc, first, rq->pending, out, err);
    }
    *stored = true;

    if (rq->pending) {
        rc = start_background(svc, o, a, act, err);
        if (rc) {
            active_remove(svc, act);
            acc_store_agreement_transition(svc->store, a->id, ACC_STATE_BIT(ACC_STATE_PENDING),
                                           ACC_STATE_REJECTED, err->msg, NULL, NULL);
            a->state = ACC_STATE_REJECTED;
        }
        return rc;
    }
    rc = negotiate(svc, o, a, act, err);
    active_remove(svc, act);
    return rc;
}

/* -------------------------------------------------------------- queries */

acc_err acc_service_get(struct acc_service *svc, const char *id, bool with_offer,
                        struct acc_agreement *out, struct acc_error *err)
{
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    return acc_store_agreement_get(svc->store, id, with_offer, out, err);
}

acc_err acc_service_list(struct acc_service *svc, const struct acc_list_filter *f,
                         struct acc_agreement_list *out, struct acc_error *err)
{
    return acc_store_agreement_list(svc->store, f, out, err);
}

acc_err acc_service_trace(struct acc_service *svc, const char *id, struct acc_agreement *a,
                          struct acc_trace *out, struct acc_error *err)
{
    acc_err rc = acc_service_get(svc, id, false, a, err);
    if (!rc) {
        rc = acc_store_trace_get(svc->store, id, out, err);
        if (rc)
            acc_agreement_release(a);
    }
    return rc;
}

static enum acc_term_state term_state(const struct acc_agreement *a, const struct acc_run *run,
                                      acc_time now)
{
    /* A launched job decides: Processing while it runs, Completed after. */
    if (run && run->state == ACC_RUN_RUNNING)
        return ACC_TERM_PROCESSING;
    if (run && run->state != ACC_RUN_DESCRIBED && acc_run_state_is_final(run->state) &&
        run->started)
        return ACC_TERM_COMPLETED;
    switch (a->state) {
    case ACC_STATE_OBSERVED:
    case ACC_STATE_OBSERVED_AND_TERMINATING:
        return now >= a->end ? ACC_TERM_COMPLETED : ACC_TERM_READY;
    case ACC_STATE_COMPLETE:
        return ACC_TERM_COMPLETED;
    case ACC_STATE_TERMINATED:
        return a->start && now >= a->start ? ACC_TERM_COMPLETED : ACC_TERM_NOT_READY;
    default:
        return ACC_TERM_NOT_READY;
    }
}

static size_t count_lines(const char *s)
{
    size_t n = s && *s ? 1 : 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

acc_err acc_service_state(struct acc_service *svc, const char *id, struct acc_service_state *out,
                          struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = acc_service_get(svc, id, false, &out->agreement, err);
    if (rc)
        return rc;
    struct acc_agreement *a = &out->agreement;
    size_t nt = count_lines(a->terms), ng = count_lines(a->guarantees);
    out->terms = calloc(nt ? nt : 1, sizeof *out->terms);
    out->guarantees = calloc(ng ? ng : 1, sizeof *out->guarantees);
    if (!out->terms || !out->guarantees) {
        acc_service_state_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* The term names are lines of a->terms: cut them in place. */
    out->has_run = acc_store_run_get(svc->store, id, false, &out->run, NULL) == ACC_OK;
    enum acc_term_state ts = term_state(a, out->has_run ? &out->run : NULL, acc_now());
    for (char *p = a->terms; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        out->terms[out->n_terms++] = (struct acc_term_view){p, ts};
        p = nl ? nl + 1 : p + strlen(p);
    }
    const char *gs = a->state == ACC_STATE_COMPLETE ? "Fulfilled" : "NotDetermined";
    for (char *p = a->guarantees; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        out->guarantees[out->n_guarantees++] = (struct acc_guarantee_view){p, gs};
        p = nl ? nl + 1 : p + strlen(p);
    }
    out->view = (struct acc_state_view){a,
                                        out->terms,
                                        out->n_terms,
                                        out->guarantees,
                                        out->n_guarantees,
                                        out->has_run ? &out->run : NULL};
    return ACC_OK;
}

void acc_service_state_release(struct acc_service_state *s)
{
    if (!s)
        return;
    acc_agreement_release(&s->agreement);
    if (s->has_run)
        acc_run_release(&s->run);
    free(s->terms);
    free(s->guarantees);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------- terminate */

/* Cancels the committed reservations of an agreement (and those whose
 * cancel failed before); ACC_ERR_UNAVAILABLE when some are still there
 * (the journal keeps them for housekeeping to retry). */
static acc_err cancel_committed(struct acc_service *svc, const char *id, struct acc_error *err)
{
    struct acc_booking *b = NULL;
    size_t n = 0, k = 0;
    acc_err rc = acc_store_journal_get(svc->store, id, &b, &n, err);
    if (rc)
        return rc;
    /* Its reservations: those committed, and those a cancel already failed on. */
    for (size_t i = 0; i < n; i++) {
        if (b[i].state == ACC_BOOKING_COMMITTED || b[i].state == ACC_BOOKING_CANCEL_FAILED)
            b[k++] = b[i];
    }
    size_t failed = cancel_bookings(svc, b, k);
    for (size_t i = 0; failed && i < k; i++) {
        if (b[i].state != ACC_BOOKING_CANCELLED) {
            rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                               "%zu of %zu reservations could not be cancelled yet (%s: %s); "
                               "accordd keeps retrying",
                               failed, k, b[i].adapter, b[i].error[0] ? b[i].error : "unknown");
            break;
        }
    }
    free(b);
    return rc;
}

/* Ends an agreement that is ObservedAndTerminating: its job is stopped, its
 * reservations cancelled; Terminated when all are gone. */
static acc_err release_reservations(struct acc_service *svc, const char *id, struct acc_error *err)
{
    acc_launcher_stop(svc->launcher, id);
    acc_err rc = cancel_committed(svc, id, err);
    if (!rc) {
        enum acc_state was;
        rc = acc_store_agreement_transition(svc->store, id,
                                            ACC_STATE_BIT(ACC_STATE_OBSERVED_AND_TERMINATING),
                                            ACC_STATE_TERMINATED, NULL, &was, err);
        if (rc == ACC_ERR_STATE && was == ACC_STATE_TERMINATED)
            rc = ACC_OK; /* housekeeping (or another request) finished it first */
    }
    return rc;
}

/* The launcher's way to a site's batch system (launch = sbatch). */
static struct acc_adapter *batch_site(void *ctx, const char *site, struct acc_error *err)
{
    struct acc_adapter *ad = site_adapter(ctx, site);
    if (!ad)
        acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "site %s is no longer configured", site);
    return ad;
}

static acc_err hook_submit(void *ctx, const char *site, const struct acc_job *job, char *job_id,
                           size_t job_id_len, struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_submit(ad, job, job_id, job_id_len, err);
}

static acc_err hook_job_status(void *ctx, const char *site, const char *job_id,
                               struct acc_job_status *out, struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_job_status(ad, job_id, out, err);
}

static acc_err hook_job_cancel(void *ctx, const char *site, const char *job_id,
                               struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_job_cancel(ad, job_id, err);
}

/* The launcher's word that a job ended: the run is recorded, and an
 * Observed agreement is Complete; what is left of its reservations goes
 * back at once. */
static void hook_run_ended(void *ctx, const struct acc_run *run, const char *reason)
{
    struct acc_service *svc = ctx;
    struct acc_error err;
    enum acc_state was;
    acc_err rc = acc_store_run_finish(svc->store, run, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                      ACC_STATE_COMPLETE, reason, &was, &err);
    if (rc == ACC_ERR_STATE) {
        rc = acc_store_run_update(svc->store, run, &err); /* terminated meanwhile */
    } else if (rc == ACC_OK) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, run->agreement, false, &a, &err) == ACC_OK) {
            if (acc_now() < a.end && cancel_committed(svc, run->agreement, &err))
                acc_log_warn("agreement %s: %s", run->agreement, err.msg);
            acc_agreement_release(&a);
        }
    }
    if (rc)
        acc_log_error("agreement %s: recording its job: %s", run->agreement, err.msg);
}

acc_err acc_service_run(struct acc_service *svc, const char *id, bool with_output,
                        struct acc_agreement *a, struct acc_run *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = acc_service_get(svc, id, false, a, err);
    if (rc)
        return rc;
    rc = acc_store_run_get(svc->store, id, with_output, out, err);
    if (rc == ACC_OK && with_output && out->state == ACC_RUN_RUNNING && !out->output)
        out->output = acc_launcher_output_so_far(svc->launcher, out, &out->output_len);
    if (rc == ACC_ERR_NOT_FOUND)
        acc_error_set(err, rc,
                      "agreement %s is %s and has no launch (only committed "
                      "agreements have one)",
                      id, acc_state_name(a->state));
    if (rc)
        acc_agreement_release(a);
    return rc;
}

acc_err acc_service_terminate(struct acc_service *svc, const char *id, struct acc_agreement *out,
                              struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    enum acc_state was;
    acc_err rc = ACC_OK;
    acc_err t = acc_store_agreement_transition(svc->store, id, ACC_STATE_BIT(ACC_STATE_PENDING),
                                               ACC_STATE_PENDING_AND_TERMINATING, NULL, &was, err);
    if (t == ACC_ERR_STATE)
        t = acc_store_agreement_transition(svc->store, id, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                           ACC_STATE_OBSERVED_AND_TERMINATING, NULL, &was, err);
    if (t && t != ACC_ERR_STATE)
        return t;
    switch (was) {
    case ACC_STATE_PENDING:
    case ACC_STATE_PENDING_AND_TERMINATING:
        if (!active_stop(svc, id)) {
            /* Nobody negotiates it here (recovery ends such ones). */
            acc_store_agreement_transition(svc->store, id,
                                           ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                           ACC_STATE_TERMINATED, NULL, NULL, NULL);
        }
        /* Give the negotiation a moment to roll back, so the answer is final. */
        for (int i = 0; i < 200 && active_has(svc, id); i++) {
            struct timespec ts = {0, 25 * 1000000};
            nanosleep(&ts, NULL);
        }
        break;
    case ACC_STATE_OBSERVED:
    case ACC_STATE_OBSERVED_AND_TERMINATING:
        rc = release_reservations(svc, id, err);
        break;
    case ACC_STATE_TERMINATED:
        break; /* already: terminate is idempotent */
    default:
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s and cannot be terminated", id,
                             acc_state_name(was));
    }
    struct acc_error gerr;
    acc_err g = acc_store_agreement_get(svc->store, id, false, out, &gerr);
    if (g && !rc)
        return acc_error_copy(err, &gerr);
    return rc;
}

/* ------------------------------------------------------- sites, previews */

static void site_info(struct acc_adapter *ad, const char *name, int64_t nodes,
                      struct acc_site_info *out, char *health)
{
    struct acc_health h;
    struct acc_adapter_stats st;
    acc_adapter_health(ad, &h);
    acc_adapter_stats(ad, &st);
    acc_strlcpy(health, h.detail, 256);
    *out = (struct acc_site_info){name,     acc_adapter_kind(ad), nodes, h.up, health,
                                  st.calls, st.failures};
}

acc_err acc_service_sites(struct acc_service *svc, struct acc_service_sites *out,
                          struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    memset(out, 0, sizeof *out);
    out->sites = calloc(cfg->n_sites, sizeof *out->sites);
    out->networks = calloc(cfg->n_networks ? cfg->n_networks : 1, sizeof *out->networks);
    out->links = calloc(cfg->n_links ? cfg->n_links : 1, sizeof *out->links);
    out->health = calloc(cfg->n_sites + cfg->n_networks + 1, sizeof *out->health);
    if (!out->sites || !out->networks || !out->links || !out->health) {
        acc_service_sites_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    size_t h = 0;
    for (size_t i = 0; i < cfg->n_sites; i++)
        site_info(svc->site_ad[i], cfg->sites[i].name, cfg->sites[i].nodes, &out->sites[i],
                  out->health[h++]);
    out->n_sites = cfg->n_sites;
    for (size_t i = 0; i < cfg->n_networks; i++)
        site_info(svc->net_ad[i], cfg->networks[i].name, 0, &out->networks[i], out->health[h++]);
    out->n_networks = cfg->n_networks;
    for (size_t i = 0; i < cfg->n_links; i++) {
        const struct acc_link_cfg *l = &cfg->links[i];
        bool up = false;
        const char *kind = "";
        for (size_t k = 0; k < cfg->n_networks; k++) {
            if (strcmp(cfg->networks[k].name, l->network) == 0) {
                up = out->networks[k].up;
                kind = out->networks[k].adapter;
            }
        }
        out->links[i] = (struct acc_link_info){l->name, l->site_a,   l->site_b, l->network,
                                               kind,    l->capacity, up};
    }
    out->n_links = cfg->n_links;
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
        return acc_error_set(err, ACC_ERR_INVALID, "the duration must be positive");
    if (!from)
        from = acc_now();
    if (!until)
        until = from + cfg->horizon;
    if (until <= from)
        return acc_error_set(err, ACC_ERR_INVALID, "until must be later than from");
    if (until - from > 366 * 86400)
        return acc_error_set(err, ACC_ERR_INVALID, "the window may be at most a year long");
    *from_used = from;
    *until_used = until;
    struct acc_resource res = {ACC_RES_NODES, s->name, nodes};
    return acc_engine_preview(svc->engine, site_adapter(svc, site), &res, from, until, duration,
                              cfg->adapter_timeout * 1000000, out, err);
}

acc_err acc_service_control(struct acc_service *svc, const char *adapter, const char *op,
                            const struct acc_kv *args, size_t n_args, struct acc_buf *reply,
                            struct acc_error *err)
{
    if (!svc->cfg->allow_control)
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "adapter controls are disabled (set [server] allow_control = yes)");
    struct acc_adapter *ad = adapter_named(svc, adapter);
    if (!ad)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no site or network '%.64s'", adapter);
    return acc_adapter_control(ad, op, args, n_args, reply, err);
}

acc_err acc_service_health(struct acc_service *svc, struct acc_buf *text, struct acc_error *err)
{
    acc_err rc = acc_store_ping(svc->store, err);
    if (rc)
        return rc;
    size_t up = 0, all = svc->cfg->n_sites + svc->cfg->n_networks;
    for (size_t i = 0; i < svc->cfg->n_sites; i++) {
        struct acc_health h;
        up += acc_adapter_health(svc->site_ad[i], &h) == ACC_OK && h.up;
    }
    for (size_t i = 0; i < svc->cfg->n_networks; i++) {
        struct acc_health h;
        up += acc_adapter_health(svc->net_ad[i], &h) == ACC_OK && h.up;
    }
    acc_buf_printf(text, "ok: database answers; %zu of %zu adapters up\n", up, all);
    return ACC_OK;
}

static void metric(struct acc_buf *out, const char *name, const char *type, const char *help)
{
    acc_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void acc_service_metrics(struct acc_service *svc, struct acc_buf *out)
{
    static const char *const outcome_names[OUT__COUNT] = {"agreed", "no_slot", "failed", "stopped"};
    metric(out, "accord_negotiations_total", "counter", "Negotiations by outcome.");
    for (int i = 0; i < OUT__COUNT; i++)
        acc_buf_printf(out, "accord_negotiations_total{outcome=\"%s\"} %" PRIu64 "\n",
                       outcome_names[i], (uint64_t)atomic_load(&svc->outcomes[i]));
    metric(out, "accord_negotiation_rounds_total", "counter",
           "Preview rounds of all negotiations.");
    acc_buf_printf(out, "accord_negotiation_rounds_total %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rounds));
    metric(out, "accord_negotiation_rollbacks_total", "counter", "Reservation rounds undone.");
    acc_buf_printf(out, "accord_negotiation_rollbacks_total %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rollbacks));
    metric(out, "accord_negotiation_seconds_total", "counter", "Time spent negotiating.");
    acc_buf_printf(out, "accord_negotiation_seconds_total %.6f\n",
                   (double)atomic_load(&svc->negotiation_us) / 1e6);
    metric(out, "accord_offers_total", "counter", "Offers submitted, and refused as bad input.");
    acc_buf_printf(out, "accord_offers_total{result=\"submitted\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->submitted));
    acc_buf_printf(out, "accord_offers_total{result=\"bad_input\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rejected_input));

    uint64_t counts[ACC_STATE__COUNT];
    if (acc_store_agreement_counts(svc->store, counts, NULL) == ACC_OK) {
        metric(out, "accord_agreements", "gauge", "Agreements in the database by state.");
        for (int i = 0; i < ACC_STATE__COUNT; i++)
            acc_buf_printf(out, "accord_agreements{state=\"%s\"} %" PRIu64 "\n",
                           acc_state_name((enum acc_state)i), counts[i]);
    }
    unsigned waiting = 0, running = 0;
    acc_launcher_counts(svc->launcher, &waiting, &running);
    metric(out, "accord_jobs", "gauge", "Meta-jobs waiting for their start, and running.");
    acc_buf_printf(out, "accord_jobs{state=\"waiting\"} %u\naccord_jobs{state=\"running\"} %u\n",
                   waiting, running);
    metric(out, "accord_adapter_calls_total", "counter", "Calls into each adapter.");
    metric(out, "accord_adapter_failures_total", "counter", "Failed calls into each adapter.");
    metric(out, "accord_adapter_seconds_total", "counter", "Time spent inside each adapter.");
    for (size_t i = 0; i < svc->cfg->n_sites + svc->cfg->n_networks; i++) {
        struct acc_adapter *ad =
            i < svc->cfg->n_sites ? svc->site_ad[i] : svc->net_ad[i - svc->cfg->n_sites];
        struct acc_adapter_stats st;
        acc_adapter_stats(ad, &st);
        acc_buf_printf(out,
                       "accord_adapter_calls_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_failures_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_seconds_total{adapter=\"%s\",kind=\"%s\"} %.6f\n",
                       acc_adapter_name(ad), acc_adapter_kind(ad), st.calls, acc_adapter_name(ad),
                       acc_adapter_kind(ad), st.failures, acc_adapter_name(ad),
                       acc_adapter_kind(ad), (double)st.busy_us / 1e6);
    }
}

/* ---------------------------------------------------------- housekeeping */

/* Cancels the reservations that negotiations left open (a crash, a time-out,
 * a failed cancel).  The store leaves out the entries of agreements still
 * Pending, so a negotiation running now is never touched. */
static void sweep_open_reservations(struct acc_service *svc)
{
    struct acc_booking *b = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_journal_get(svc->store, NULL, &b, &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    if (n) {
        size_t failed = cancel_bookings(svc, b, n);
        acc_log_info("housekeeping: released %zu reservation(s) left open%s", n - failed,
                     failed ? "; some could not be cancelled yet" : "");
    }
    free(b);
}

static void finish_terminations(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_agreement_ids(svc->store, ACC_STATE_BIT(ACC_STATE_OBSERVED_AND_TERMINATING), &ids,
                                &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (release_reservations(svc, ids[i], &err))
            acc_log_warn("housekeeping: agreement %s: %s", ids[i], err.msg);
    }
    free(ids);
}

static void housekeeping_pass(struct acc_service *svc)
{
    unsigned done = 0;
    struct acc_error err;
    if (acc_store_agreement_complete_ended(svc->store, acc_now(), &done, &err))
        acc_log_error("housekeeping: %s", err.msg);
    else if (done)
        acc_log_debug("housekeeping: %u agreement(s) complete", done);
    sweep_open_reservations(svc);
    finish_terminations(svc);
}

/* At start-up nothing negotiates yet: every Pending agreement was cut short,
 * and once they are ended every open reservation is a leftover. */
static acc_err recover(struct acc_service *svc, struct acc_error *err)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc = acc_store_agreement_ids(svc->store,
                                         ACC_STATE_BIT(ACC_STATE_PENDING) |
                                             ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                         &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, ids[i], false, &a, NULL))
            continue;
        bool terminating = a.state == ACC_STATE_PENDING_AND_TERMINATING;
        a.state = terminating ? ACC_STATE_TERMINATED : ACC_STATE_REJECTED;
        a.updated = acc_now();
        free(a.fault_code);
        free(a.reason);
        a.fault_code = terminating ? NULL : strdup(acc_err_symbol(ACC_ERR_INTERRUPTED));
        a.reason = strdup("accordd stopped during the negotiation; every reservation it had "
                          "made was released; submit the offer again");
        struct acc_error serr;
        if (acc_store_agreement_settle(svc->store, &a,
                                       ACC_STATE_BIT(ACC_STATE_PENDING) |
                                           ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                       NULL, NULL, 0, &serr))
            acc_log_error("recovery: agreement %s: %s", ids[i], serr.msg);
        else
            acc_log_warn("recovery: agreement %s was being negotiated; now %s", ids[i],
                         acc_state_name(a.state));
        acc_agreement_release(&a);
    }
    free(ids);
    /* Now that none is Pending, every open reservation is a leftover. */
    sweep_open_reservations(svc);
    finish_terminations(svc);
    return ACC_OK;
}

static void *housekeeping_main(void *arg)
{
    struct acc_service *svc = arg;
    pthread_mutex_lock(&svc->lock);
    while (!atomic_load(&svc->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += HOUSEKEEPING_SECONDS;
        pthread_cond_timedwait(&svc->wake, &svc->lock, &ts);
        if (atomic_load(&svc->stopping))
            break;
        pthread_mutex_unlock(&svc->lock);
        housekeeping_pass(svc);
        pthread_mutex_lock(&svc->lock);
    }
    pthread_mutex_unlock(&svc->lock);
    return NULL;
}

/* --------------------------------------------------------- open, close */

acc_err acc_service_open(const struct acc_config *cfg, struct acc_service **out,
                         struct acc_error *err)
{
    struct acc_service *svc = calloc(1, sizeof *svc);
    if (!svc)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    svc->cfg = cfg;
    pthread_mutex_init(&svc->lock, NULL);
    pthread_cond_init(&svc->wake, NULL);

    struct acc_store_options so = {
        .path = cfg->db_path, .durable = cfg->durable, .wal_limit = cfg->wal_limit};
    acc_err rc = acc_store_open(&so, &svc->store, err);
    if (!rc) {
        struct acc_engine_options eo = {.orphan = hook_orphan, .orphan_ctx = svc};
        rc = acc_engine_new(&eo, &svc->engine, err);
    }
    if (!rc)
        rc = open_adapters(svc, err);
    if (!rc) {
        struct acc_launcher_hooks lh = {svc, hook_run_ended, hook_submit, hook_job_status,
                                        hook_job_cancel};
        rc = acc_launcher_new(cfg, svc->store, &lh, &svc->launcher, err);
    }
    if (!rc)
        rc = acc_launcher_resume(svc->launcher, err);
    if (!rc)
        rc = recover(svc, err);
    if (!rc) {
        if (pthread_create(&svc->housekeeper, NULL, housekeeping_main, svc) != 0)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot start housekeeping");
        else
            svc->housekeeper_started = true;
    }
    if (rc) {
        acc_service_close(svc);
        return rc;
    }
    *out = svc;
    return ACC_OK;
}

void acc_service_close(struct acc_service *svc)
{
    if (!svc)
        return;
    pthread_mutex_lock(&svc->lock);
    atomic_store(&svc->stopping, true);
    pthread_cond_broadcast(&svc->wake);
    pthread_mutex_unlock(&svc->lock);
    if (svc->housekeeper_started)
        pthread_join(svc->housekeeper, NULL);
    acc_launcher_free(svc->launcher); /* jobs keep running; the next start watches them */
    svc->launcher = NULL;
    /* Unblock adapter calls, then wait for background negotiations (they
     * see `stopping` and roll back) and for every adapter call. */
    for (size_t i = 0; svc->site_ad && i < svc->cfg->n_sites; i++) {
        if (svc->site_ad[i])
            acc_adapter_interrupt(svc->site_ad[i]);
    }
    for (size_t i = 0; svc->net_ad && i < svc->cfg->n_networks; i++) {
        if (svc->net_ad[i])
            acc_adapter_interrupt(svc->net_ad[i]);
    }
    pthread_mutex_lock(&svc->lock);
    while (svc->background > 0)
        pthread_cond_wait(&svc->wake, &svc->lock);
    pthread_mutex_unlock(&svc->lock);
    acc_engine_free(svc->engine);
    for (size_t i = 0; svc->site_ad && i < svc->cfg->n_sites; i++)
        acc_adapter_close(svc->site_ad[i]);
    for (size_t i = 0; svc->net_ad && i < svc->cfg->n_networks; i++)
        acc_adapter_close(svc->net_ad[i]);
    free(svc->site_ad);
    free(svc->net_ad);
    acc_store_close(svc->store);
    pthread_mutex_destroy(&svc->lock);
    pthread_cond_destroy(&svc->wake);
    free(svc);
}
