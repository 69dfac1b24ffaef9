/* negotiate.c - one negotiation of a stored Pending agreement, from the plan
 * to the recorded outcome (part of the service).  The engine does the
 * negotiating; this file gives it its hooks (journal, trace, stop) and
 * records what came of it in one settling write. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "internal.h"
#include "plan.h"

/* ---------------------------------------------------------------- hooks */

struct nego_ctx {
    struct acc_service *svc;
    struct acc_nego *job;
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
    return atomic_load(&c->job->stop) || atomic_load(&c->svc->stopping);
}

/* A reservation whose answer came after the engine gave up on it. */
void svc_hook_orphan(void *ctx, struct acc_adapter *ad, const struct acc_booking *b)
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

/* Fills the allocation of *a from the plan's components and links (a
 * flexible request's generated parts and links among them; reservations
 * only when the items were booked). */
acc_err svc_fill_allocation(struct acc_agreement *a, const struct acc_plan *p, bool booked)
{
    a->comps = calloc(p->n_comps, sizeof *a->comps);
    a->links = calloc(p->n_links ? p->n_links : 1, sizeof *a->links);
    if (!a->comps || !a->links)
        return ACC_ERR_NOMEM;
    a->n_comps = p->n_comps;
    a->n_links = p->n_links;
    bool oom = false;
    for (size_t i = 0; i < p->n_comps; i++) {
        struct acc_alloc_component *c = &a->comps[i];
        const struct acc_engine_item *it = &p->items[p->item_of_comp[i]];
        c->name = acc_strdup(p->comps[i].name);
        c->site = acc_strdup(p->site_of[i]);
        c->nodes = p->comps[i].nodes;
        c->ppn = p->comps[i].ppn;
        if (p->comps[i].executable) {
            c->executable = acc_strdup(p->comps[i].executable);
            oom |= !c->executable;
        }
        if (p->comps[i].n_args) {
            c->args = calloc(p->comps[i].n_args, sizeof *c->args);
            oom |= !c->args;
            for (size_t k = 0; c->args && k < p->comps[i].n_args; k++) {
                c->args[c->n_args] = acc_strdup(p->comps[i].args[k]);
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
    for (size_t i = 0; i < p->n_links; i++) {
        struct acc_alloc_link *l = &a->links[i];
        const struct acc_link_req *rq = &p->links[i];
        l->name = acc_strdup(rq->name);
        l->from = acc_strdup(p->comps[rq->a].name);
        l->to = acc_strdup(p->comps[rq->b].name);
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

/* Cancels booked items after the agreement could not be recorded. */
static void undo_items(struct acc_service *svc, struct acc_plan *p)
{
    struct acc_booking *b = plan_bookings(p, ACC_BOOKING_RESERVED);
    if (!b)
        return; /* the journal still says reserved: housekeeping cancels them */
    svc_cancel_bookings(svc, b, p->n_items);
    for (size_t i = 0; i < p->n_items; i++)
        p->items[i].booking = b[i];
    free(b);
}

/* Sets the agreement's end as Rejected with a fault code and reason. */
static void set_rejected(struct acc_agreement *a, acc_err code, const char *reason)
{
    a->state = ACC_STATE_REJECTED;
    free(a->fault_code);
    free(a->reason);
    a->fault_code = acc_strdup(acc_err_symbol(code));
    a->reason = acc_strdup(reason);
}

static void drop_run(struct acc_agreement *a)
{
    if (a->run) {
        acc_run_release(a->run);
        free(a->run);
        a->run = NULL;
    }
}

#define INTERRUPTED_REASON                                                                     \
    "accordd was stopped during the negotiation; every reservation it had made was released; " \
    "submit the offer again"

acc_err svc_settle_unstarted(struct acc_service *svc, struct acc_agreement *a, bool terminated,
                             struct acc_error *err)
{
    a->updated = acc_now();
    if (terminated) {
        a->state = ACC_STATE_TERMINATED;
        free(a->reason);
        a->reason = acc_strdup("terminated before its negotiation began");
    } else {
        set_rejected(a, ACC_ERR_INTERRUPTED,
                     "accordd was stopped before the negotiation began; nothing was booked; "
                     "submit the offer again");
    }
    return acc_store_agreement_settle(svc->store, a,
                                      ACC_STATE_BIT(ACC_STATE_PENDING) |
                                          ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                      NULL, NULL, 0, err);
}

void svc_after_commit(struct acc_service *svc, const struct acc_agreement *a)
{
    /* The network adapters that install reservations on the wire get their
     * flows (a failure is retried by housekeeping). */
    svc_provision_committed(svc, a);
    if (a->run && a->run->state == ACC_RUN_WAITING)
        acc_launcher_schedule(svc->launcher, a, a->run);
}

/* Runs the negotiation of a job's stored Pending agreement and records its
 * end.  Returns the agreement's result code (see acc_service_submit). */
acc_err svc_negotiate(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    if (job->quote[0])
        return svc_quote_commit(svc, job, err);
    const struct acc_config *cfg = svc->cfg;
    const struct acc_offer *o = &job->offer;
    struct acc_agreement *a = &job->a;
    struct nego_ctx ctx = {.svc = svc, .job = job};
    acc_trace_init(&ctx.trace);
    struct acc_plan plan = {0};
    struct acc_plan_env env = {cfg, svc_site_adapter, svc_network_adapter, svc};
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
    /* A shutdown ends the negotiation whatever the engine made of it:
     * nothing is committed after the signal. */
    bool interrupted = atomic_load(&svc->stopping) && !atomic_load(&job->stop);
    if (interrupted && res.outcome == ACC_ENGINE_AGREED) {
        undo_items(svc, &plan);
        res.rollbacks++;
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
    bool agreed = res.outcome == ACC_ENGINE_AGREED && !interrupted;
    if (interrupted) {
        set_rejected(a, ACC_ERR_INTERRUPTED, INTERRUPTED_REASON);
        rc = acc_error_set(&res.err, ACC_ERR_INTERRUPTED, INTERRUPTED_REASON);
    } else if (agreed) {
        a->state = ACC_STATE_OBSERVED;
        a->start = res.start;
        a->end = res.end;
        bookings = plan_bookings(&plan, ACC_BOOKING_COMMITTED);
        n_bookings = bookings ? plan.n_items : 0;
        rc = bookings ? ACC_OK : ACC_ERR_NOMEM;
    } else if (res.outcome == ACC_ENGINE_STOPPED) {
        a->state = ACC_STATE_TERMINATED;
        from |= ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING);
        a->reason = acc_strdup("terminated during the negotiation");
        rc = acc_error_set(&res.err, ACC_ERR_CANCELLED, "terminated during the negotiation");
    } else {
        set_rejected(a, res.err.code, res.err.msg);
        rc = res.err.code;
    }
    acc_err frc = planned ? svc_fill_allocation(a, &plan, agreed) : ACC_OK;
    if (!frc && agreed)
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
    if (src && agreed) {
        /* Terminated meanwhile, or not recorded: the reservations must go. */
        undo_items(svc, &plan);
        free(a->reason);
        a->reason = acc_strdup(src == ACC_ERR_STATE ? "terminated during the negotiation"
                                                    : "the agreement could not be recorded");
        a->state = ACC_STATE_TERMINATED;
        a->start = a->end = 0;
        drop_run(a);
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

    unsigned outcome = interrupted                         ? OUT_INTERRUPTED
                       : agreed                            ? OUT_AGREED
                       : res.outcome == ACC_ENGINE_NO_SLOT ? OUT_NO_SLOT
                       : res.outcome == ACC_ENGINE_STOPPED ? OUT_STOPPED
                                                           : OUT_FAILED;
    atomic_fetch_add(&svc->outcomes[outcome], 1);
    atomic_fetch_add(&svc->rounds, res.rounds);
    atomic_fetch_add(&svc->rollbacks, res.rollbacks);
    atomic_fetch_add(&svc->negotiation_us, (uint64_t)(acc_mono_us() - t0));
    if (rc == ACC_OK)
        svc_after_commit(svc, a);
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
