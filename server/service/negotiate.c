/* SPDX-License-Identifier: Apache-2.0 */
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

static acc_err hook_journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                            struct acc_error *err)
{
    struct svc_nego_ctx *c = ctx;
    return acc_store_journal_put(c->svc->store, b, n, durable ? 0 : ACC_STORE_NOWAIT, err);
}

static void hook_trace(void *ctx, const struct acc_trace_event *ev)
{
    struct svc_nego_ctx *c = ctx;
    if (acc_trace_add(&c->trace, ev))
        acc_log_warn("trace event dropped: out of memory");
}

static bool hook_stopped(void *ctx)
{
    struct svc_nego_ctx *c = ctx;
    return (c->job && atomic_load(&c->job->stop)) || atomic_load(&c->svc->stopping);
}

struct acc_engine_hooks svc_nego_hooks(struct svc_nego_ctx *ctx)
{
    return (struct acc_engine_hooks){hook_journal, hook_trace, hook_stopped, ctx};
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

#define INTERRUPTED_REASON                                                                     \
    "accordd was stopped during the negotiation; every reservation it had made was released; " \
    "submit the offer again"

/* What a run of the planner and the engine left. */
struct nego_run {
    struct acc_plan plan;
    struct acc_engine_result res;
    bool planned;         /* plan holds the items */
    bool interrupted;     /* accordd is stopping: nothing is committed */
    bool agreed;          /* booked at a common start, and not interrupted */
    bool admitted;        /* holds a place among its owner's node-hours (quota_usage.c) */
    bool outcome_unknown; /* the settling write's answer lost, the database silent since */
};

/* The plan's sites and links are known only now (the planner chose the
 * sites of components that name none): their node-hours and Mbit-hours
 * are admitted before anything is booked. */
static acc_err nego_admit(struct acc_service *svc, const struct svc_quota_who *w,
                          const struct acc_agreement *a, const struct acc_plan *p,
                          struct acc_error *err)
{
    size_t n;
    struct svc_charge *c = svc_plan_charges(p, a->duration, &n);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = svc_usage_admit(svc, w, a->id, c, n, err);
    free(c);
    return rc;
}

/* Run: the plan, then the engine's rounds over its items. */
static void nego_run(struct acc_service *svc, struct acc_nego *job, struct svc_nego_ctx *ctx,
                     struct nego_run *r)
{
    const struct acc_config *cfg = svc->cfg;
    struct acc_agreement *a = &job->a;
    struct acc_plan_env env = {cfg, svc_site_adapter, svc_network_adapter, svc};
    struct acc_engine_request rq = {
        .agreement = a->id,
        .earliest = a->earliest,
        .deadline = a->deadline,
        .duration = a->duration,
        .strategy = a->strategy,
        .max_rounds = cfg->max_rounds,
        .call_timeout_us = cfg->adapter_timeout * 1000000,
        .hooks = svc_nego_hooks(ctx),
    };
    struct svc_quota_who w = svc_quota_who(cfg, job->offer.initiator, a->client);
    if (acc_plan_make(&env, svc->engine, &job->offer, &rq, &r->plan, &r->res.err)) {
        r->res.outcome = ACC_ENGINE_FAILED;
    } else if ((r->planned = true) && svc_quota_plan(&w, &r->plan, &r->res.err)) {
        r->res.outcome = ACC_ENGINE_FAILED; /* a flexible request's links: over the quota */
    } else if (nego_admit(svc, &w, a, &r->plan, &r->res.err)) {
        r->res.outcome = ACC_ENGINE_FAILED; /* the sites' node-hours, the links' Mbit-hours */
    } else {
        r->admitted = true;
        rq.items = r->plan.items;
        rq.n_items = r->plan.n_items;
        acc_engine_negotiate(svc->engine, &rq, &r->res);
    }
    /* A shutdown ends the negotiation whatever the engine made of it:
     * nothing is committed after the signal. */
    r->interrupted = atomic_load(&svc->stopping) && !atomic_load(&job->stop);
    if (r->interrupted && r->res.outcome == ACC_ENGINE_AGREED) {
        svc_undo_items(svc, r->plan.items, r->plan.n_items);
        r->res.rollbacks++;
    }
    r->agreed = r->res.outcome == ACC_ENGINE_AGREED && !r->interrupted;
}

/* Check: the document of an agreed run, as it would be committed, can be
 * made and signed (svc_precommit); when it cannot, the run's reservations
 * go and the run ends as failed with the reason (in the trace too), so
 * that no reply about the agreement can fail once it is booked. */
static void nego_check(struct acc_service *svc, struct acc_agreement *a, struct svc_nego_ctx *ctx,
                       struct nego_run *r)
{
    if (!r->agreed || !svc->precommit)
        return;
    struct acc_agreement t = {
        .state = ACC_STATE_OBSERVED,
        .created = a->created,
        .updated = acc_now(),
        .start = r->res.start,
        .end = r->res.end,
        .strategy = a->strategy,
        .rounds = r->res.rounds,
        .rollbacks = r->res.rollbacks,
        .offer_xml = a->offer_xml, /* borrowed */
        .offer_len = a->offer_len,
    };
    memcpy(t.id, a->id, sizeof t.id);
    struct acc_error e;
    acc_err rc = svc_fill_allocation(&t, &r->plan, true);
    if (rc)
        acc_error_set(&e, rc, "out of memory");
    else
        rc = svc_precommit(svc, &t, &e);
    t.offer_xml = NULL;
    if (!rc) {
        /* the document's signature goes with the commit */
        free(a->signature);
        a->signature = t.signature;
        a->signature_len = t.signature_len;
        t.signature = NULL;
    }
    acc_agreement_release(&t);
    if (!rc)
        return;
    svc_undo_items(svc, r->plan.items, r->plan.n_items);
    r->res.rollbacks++;
    r->res.outcome = ACC_ENGINE_FAILED;
    acc_error_copy(&r->res.err, &e);
    r->agreed = false;
    struct acc_trace_event ev = {
        .round = r->res.rounds, .kind = ACC_TRACE_FAIL, .status = rc, .detail = e.msg};
    hook_trace(ctx, &ev);
}

/* Decide: the agreement's end as the run left it, the states it may be
 * recorded from, and the bookings to commit.  Returns the result code. */
static acc_err nego_decide(struct acc_agreement *a, struct nego_run *r, unsigned *from,
                           struct acc_booking **bookings, size_t *n_bookings)
{
    *from = ACC_STATE_BIT(ACC_STATE_PENDING);
    *bookings = NULL;
    *n_bookings = 0;
    a->updated = acc_now();
    a->rounds = r->res.rounds;
    a->rollbacks = r->res.rollbacks;
    free(a->fault_code);
    free(a->reason);
    a->fault_code = a->reason = NULL;
    if (r->interrupted) {
        svc_reject(a, ACC_ERR_INTERRUPTED, INTERRUPTED_REASON);
        return acc_error_set(&r->res.err, ACC_ERR_INTERRUPTED, INTERRUPTED_REASON);
    }
    if (r->agreed) {
        a->state = ACC_STATE_OBSERVED;
        a->start = r->res.start;
        a->end = r->res.end;
        *bookings = plan_bookings(&r->plan, ACC_BOOKING_COMMITTED);
        *n_bookings = *bookings ? r->plan.n_items : 0;
        return *bookings ? ACC_OK : ACC_ERR_NOMEM;
    }
    if (r->res.outcome == ACC_ENGINE_STOPPED) {
        a->state = ACC_STATE_TERMINATED;
        *from |= ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING);
        a->reason = acc_strdup("terminated during the negotiation");
        return acc_error_set(&r->res.err, ACC_ERR_CANCELLED, "terminated during the negotiation");
    }
    svc_reject(a, r->res.err.code, r->res.err.msg);
    return r->res.err.code;
}

/* An agreed run that was not recorded (*src), or terminated meanwhile
 * (ACC_ERR_STATE): the reservations go and the end is Terminated. */
static acc_err undo_agreed(struct acc_service *svc, struct acc_agreement *a, struct nego_run *r,
                           acc_err *src, struct acc_error *serr)
{
    svc_undo_items(svc, r->plan.items, r->plan.n_items);
    free(a->reason);
    a->reason = acc_strdup(*src == ACC_ERR_STATE ? "terminated during the negotiation"
                                                 : "the agreement could not be recorded");
    a->state = ACC_STATE_TERMINATED;
    a->start = a->end = 0;
    svc_drop_run(a);
    if (*src == ACC_ERR_STATE)
        *src = acc_store_agreement_settle(
            svc->store, a, ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING), NULL, NULL, 0, serr);
    if (*src == ACC_ERR_STATE && svc_ended_by_recovery(svc, a->id, serr))
        *src = ACC_ERR_INTERRUPTED; /* ended by the leader, not terminated: retryable */
    if (*src) {
        acc_error_copy(&r->res.err, serr);
        return *src;
    }
    return acc_error_set(&r->res.err, ACC_ERR_CANCELLED,
                         "the agreement was terminated during "
                         "its negotiation; its reservations were released");
}

/* The answer to the settling write of an agreed run was lost: asked again
 * until the database answers.  Made (the agreement Observed, or already
 * past it), the run succeeded: ACC_OK.  Not made (still Pending), it failed
 * as it would have, and undo_agreed releases its reservations.  No answer:
 * unknown, and nothing is undone (they may be the agreement's now): if it
 * was not made, svc_leftovers ends the negotiation once the database is
 * back and the sweep releases them. */
static acc_err settle_lost(struct acc_service *svc, const struct acc_agreement *a,
                           struct nego_run *r, struct acc_error *serr)
{
    enum acc_state st;
    bool made = false;
    if (svc_made_after_lost(svc, a->id, &made, &st)) {
        r->outcome_unknown = true;
        return acc_error_set(serr, ACC_ERR_STORAGE_AWAY,
                             "the database went away while agreement %s was recorded, and has "
                             "not said since whether it was: read the agreement before "
                             "submitting again (or submit again with the same Idempotency-Key)",
                             a->id);
    }
    acc_log_warn("agreement %s: the answer to its recording was lost; it %s (%s)", a->id,
                 made ? "was made" : "was not made", acc_state_name(st));
    return made ? ACC_OK : ACC_ERR_STORAGE_AWAY;
}

/* Record: the decided end (rc) in one settling write with the allocation
 * and, when agreed, the launch descriptions.  Returns the result code. */
static acc_err nego_record(struct acc_service *svc, struct acc_agreement *a,
                           const struct svc_nego_ctx *ctx, struct nego_run *r, unsigned from,
                           const struct acc_booking *bookings, size_t n_bookings, acc_err rc)
{
    acc_err frc = r->planned ? svc_fill_allocation(a, &r->plan, r->agreed) : ACC_OK;
    if (!frc && r->agreed)
        frc = acc_launcher_describe(svc->launcher, a, &r->res.err);
    struct acc_error serr;
    if (frc) {
        rc = frc;
        acc_error_set(&serr, frc, "the agreement could not be prepared: %s",
                      frc == ACC_ERR_NOMEM ? "out of memory" : acc_err_symbol(frc));
    }
    acc_err src = frc;
    bool terminated = false;
    if (r->agreed) {
        if (!src)
            src = acc_store_agreement_settle(svc->store, a, from, &ctx->trace, bookings, n_bookings,
                                             &serr);
        if (src == ACC_ERR_STORAGE_AWAY)
            src = settle_lost(svc, a, r, &serr);
        if (src == ACC_ERR_STORAGE_AWAY && r->outcome_unknown)
            rc = acc_error_copy(&r->res.err, &serr);
        else if (src)
            rc = undo_agreed(svc, a, r, &src, &serr);
    } else {
        if (!src)
            src = svc_settle_rejected(svc, a, from, &ctx->trace, NULL, &terminated, &serr);
        if (terminated) {
            rc = acc_error_set(&r->res.err, ACC_ERR_CANCELLED,
                               "the agreement was terminated during its "
                               "negotiation");
        } else if (src) {
            acc_error_copy(&r->res.err, &serr);
            rc = src;
        }
    }
    if (src)
        acc_log_error("agreement %s: %s", a->id, serr.msg);
    return rc;
}

static void nego_count(struct acc_service *svc, const struct nego_run *r, int64_t t0)
{
    unsigned outcome = r->interrupted                         ? OUT_INTERRUPTED
                       : r->agreed                            ? OUT_AGREED
                       : r->res.outcome == ACC_ENGINE_NO_SLOT ? OUT_NO_SLOT
                       : r->res.outcome == ACC_ENGINE_STOPPED ? OUT_STOPPED
                                                              : OUT_FAILED;
    atomic_fetch_add(&svc->outcomes[outcome], 1);
    atomic_fetch_add(&svc->rounds, r->res.rounds);
    atomic_fetch_add(&svc->rollbacks, r->res.rollbacks);
    svc_observe_negotiation(svc, acc_mono_us() - t0);
}

/* Runs the negotiation of a job's stored Pending agreement and records its
 * end.  Returns the agreement's result code (see acc_service_submit). */
acc_err svc_negotiate(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    if (job->quote[0])
        return svc_quote_commit(svc, job, err);
    struct acc_agreement *a = &job->a;
    struct svc_nego_ctx ctx = {.svc = svc, .job = job};
    acc_trace_init(&ctx.trace);
    struct nego_run r = {.plan = {0}};
    int64_t t0 = acc_mono_us();
    unsigned from;
    struct acc_booking *bookings;
    size_t n_bookings;

    nego_run(svc, job, &ctx, &r);
    nego_check(svc, a, &ctx, &r);
    acc_err rc = nego_decide(a, &r, &from, &bookings, &n_bookings);
    rc = nego_record(svc, a, &ctx, &r, from, bookings, n_bookings, rc);
    if (r.admitted) { /* recorded: the store counts what it holds now */
        struct svc_quota_who w = svc_quota_who(svc->cfg, job->offer.initiator, a->client);
        svc_usage_forget(svc, &w, a->id);
    }
    nego_count(svc, &r, t0);
    if (rc == ACC_OK)
        svc_after_commit(svc, a);
    if (rc == ACC_OK)
        acc_log_debug("agreement %s: Observed from %" PRId64 " (%u rounds)", a->id, a->start,
                      r.res.rounds);
    else
        acc_log_info("agreement %s: %s: %s", a->id, acc_state_name(a->state), r.res.err.msg);

    if (rc)
        acc_error_copy(err, &r.res.err);
    free(bookings);
    acc_plan_release(&r.plan);
    acc_trace_release(&ctx.trace);
    return rc;
}
