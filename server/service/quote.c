/* SPDX-License-Identifier: Apache-2.0 */
/* quote.c - quotes: counter-offers from one preview round of every
 * reservation an offer needs, committing nothing; with a hold the chosen
 * option booked and held (part of the service; see service.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "internal.h"
#include "plan.h"

/* Why option 0 starts no earlier than `start`, from the previews: each
 * item whose own earliest free time is later than the window's start, or
 * that the items are free at different times. */
static char *why_first(const struct acc_plan *p, const struct acc_frames *f, acc_time earliest,
                       acc_time start, int64_t duration)
{
    struct acc_buf b = ACC_BUF_INIT;
    char t[ACC_TIME_STRLEN];
    if (start == earliest) {
        acc_buf_printf(&b, "%s", "the earliest start the offer allows");
        return acc_buf_detach(&b, NULL);
    }
    for (size_t i = 0; i < p->n_items; i++) {
        acc_time own = acc_engine_common_start(&f[i], 1, earliest, duration);
        if (own == earliest)
            continue;
        if (own < 0) {
            acc_buf_printf(&b, "%s%s: no free time in the window", b.len ? "; " : "",
                           p->items[i].label);
            continue;
        }
        acc_time_format(own, t);
        acc_buf_printf(&b, "%s%s: busy until %s", b.len ? "; " : "", p->items[i].label, t);
    }
    if (b.len == 0)
        acc_buf_printf(&b, "%s", "every reservation is free earlier, but never all at once");
    return acc_buf_detach(&b, NULL);
}

/* "placement 2 of 3 by worst-fit: x 2 on caesar, y 2 on fzj-xd1" */
static void describe_placement(struct acc_buf *b, const struct acc_plan_alts *alts, size_t rank,
                               const struct acc_plan *p)
{
    acc_buf_printf(b, "placement %zu of %zu by %s%s:", rank + 1, alts->total, alts->policy,
                   rank == alts->best_rank ? " (the planner's choice)" : "");
    for (size_t i = 0; i < p->n_comps; i++)
        acc_buf_printf(b, "%s %s %" PRId64 " on %s", i ? "," : "", p->comps[i].name,
                       p->comps[i].nodes, p->site_of[i]);
}

/* What the options are built from: the chosen plan and its previews, and
 * the other placements (alts->n of them) a quote offers too. */
struct sources {
    const struct acc_plan *best;
    const struct acc_frames *frames;
    struct acc_plan_alts *alts;      /* policy NULL: every component names its site */
    const struct acc_plan **plan_of; /* out: per option, the plan it books */
};

static acc_err add_option(struct acc_quote *q, const struct sources *src, const struct acc_plan *p,
                          acc_time s, int64_t duration, struct acc_buf *why, struct acc_error *err)
{
    struct acc_quote_option *o = &q->options[q->n_options];
    o->start = s;
    o->end = s + duration;
    o->why = acc_buf_detach(why, NULL);
    if (!o->why)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    src->plan_of[q->n_options++] = p;
    if (!src->alts->policy)
        return ACC_OK; /* the quote's sites and links are every option's */
    struct acc_agreement a = {0};
    acc_err rc = svc_fill_allocation(&a, p, false);
    o->comps = a.comps;
    o->n_comps = a.n_comps;
    o->links = a.links;
    o->n_links = a.n_links;
    return rc ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory") : ACC_OK;
}

/* The earliest slot of each other placement that has one (one preview
 * round of its reservations), while there is room. */
static acc_err alt_options(struct acc_service *svc, const struct acc_engine_request *er,
                           const struct sources *src, unsigned max, struct acc_quote *q,
                           struct acc_error *err)
{
    const struct acc_plan_alts *alts = src->alts;
    struct svc_quota_who who = svc_quota_who(svc->cfg, q->initiator, q->client);
    acc_err rc = ACC_OK;
    for (size_t k = 0; k < alts->n && q->n_options < max && !rc; k++) {
        const struct acc_plan *p = &alts->plans[k];
        struct acc_error qerr;
        if (svc_quota_plan(&who, p, &qerr))
            continue; /* its generated links are over the user's bandwidth */
        struct acc_frames *f = calloc(p->n_items ? p->n_items : 1, sizeof *f);
        if (!f)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        struct acc_engine_request r = *er;
        r.items = p->items;
        r.n_items = p->n_items;
        struct acc_error perr;
        acc_time s = -1;
        if (acc_engine_preview_items(svc->engine, &r, f, &perr) == ACC_OK)
            s = acc_engine_common_start(f, p->n_items, er->earliest, er->duration);
        else
            acc_log_warn("quote %s: placement %zu not offered: %s", q->id, alts->rank[k] + 1,
                         perr.msg);
        if (s >= 0 && s + er->duration <= er->deadline) {
            struct acc_buf b = ACC_BUF_INIT;
            describe_placement(&b, alts, alts->rank[k], p);
            char *w = why_first(p, f, er->earliest, s, er->duration);
            acc_buf_printf(&b, "; %s", w ? w : "");
            free(w);
            rc = add_option(q, src, p, s, er->duration, &b, err);
        }
        for (size_t i = 0; i < p->n_items; i++)
            acc_frames_release(&f[i]);
        free(f);
    }
    return rc;
}

/* The options: the earliest common start of the chosen placement, then
 * the earliest of each other placement, then later starts of the chosen
 * one, each after the previous one of it ends. */
static acc_err make_options(struct acc_service *svc, const struct acc_engine_request *er,
                            const struct sources *src, unsigned max, struct acc_quote *q,
                            struct acc_error *err)
{
    const struct acc_plan *p = src->best;
    acc_time earliest = er->earliest, deadline = er->deadline;
    int64_t duration = er->duration;
    q->options = calloc(max ? max : 1, sizeof *q->options);
    if (!q->options)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_time t = earliest;
    char prev[ACC_TIME_STRLEN];
    size_t last = 0; /* the last option of the chosen placement */
    acc_err rc = ACC_OK;
    while (q->n_options < max && t + duration <= deadline && !rc) {
        acc_time s = acc_engine_common_start(src->frames, p->n_items, t, duration);
        if (s < 0 || s + duration > deadline)
            break;
        struct acc_buf b = ACC_BUF_INIT;
        if (src->alts->policy) {
            describe_placement(&b, src->alts, src->alts->best_rank, p);
            acc_buf_printf(&b, "%s", "; ");
        }
        if (q->n_options == 0) {
            char *w = why_first(p, src->frames, earliest, s, duration);
            acc_buf_printf(&b, "%s", w ? w : "");
            free(w);
        } else {
            acc_time_format(q->options[last].end, prev);
            acc_buf_printf(&b, "the next common slot after option %zu ends at %s", last, prev);
        }
        bool first = q->n_options == 0;
        last = q->n_options;
        rc = add_option(q, src, p, s, duration, &b, err);
        t = s + duration;
        if (!rc && first)
            rc = alt_options(svc, er, src, max, q, err);
    }
    return rc;
}

/* Seconds until the earliest open quote closes (its hold or open period
 * ends), at least 1: when a place among all open quotes frees up. */
static int64_t first_close(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error e;
    int64_t secs = 0;
    if (acc_store_quote_due(svc->store, ACC_TIME_MAX, &ids, &n, &e) == ACC_OK && n) {
        struct acc_quote q;
        if (acc_store_quote_get(svc->store, ids[0], &q, &e) == ACC_OK) {
            secs = q.hold_until - acc_now();
            acc_quote_release(&q);
        }
    }
    free(ids);
    return secs < 1 ? 1 : secs;
}

/* The bounds on open quotes: the user's ([quota] max_quotes; without
 * [auth] every quote is the one user's) and all ([negotiation] max_quotes,
 * with the time until the earliest one closes). */
static acc_err check_bounds(struct acc_service *svc, const struct svc_quota_who *w,
                            struct acc_error *err)
{
    struct acc_quote_count n;
    acc_err rc = acc_store_quote_count(svc->store, w->user ? w->user : "", w->address, &n, err);
    if (rc)
        return rc;
    uint64_t mine = w->user ? n.mine : n.all, all = n.all;
    if (w->q.quotes != ACC_QUOTA_UNLIMITED && mine >= (uint64_t)w->q.quotes)
        return acc_error_set(err, ACC_ERR_QUOTA,
                             "%s has %" PRIu64 " open quotes, the most allowed ([%s] "
                             "max_quotes = %" PRId64 "); release one or wait for one to expire",
                             w->user ? w->user : "everyone (without [auth] one user)", mine,
                             w->section, w->q.quotes);
    /* Without [auth] one address may take its share of the one user's. */
    int64_t share = w->q.quotes_per_address;
    if (w->address && share != ACC_QUOTA_UNLIMITED && n.client >= (uint64_t)share)
        return acc_error_set(err, ACC_ERR_QUOTA,
                             "address %s has %" PRIu64 " open quotes, the most one client address "
                             "may have without [auth] ([%s] max_quotes_per_address = %" PRId64
                             "); release one or wait for one to expire",
                             w->address, n.client, w->section, share);
    if (all >= svc->cfg->max_quotes) {
        int64_t secs = first_close(svc);
        acc_error_set(err, ACC_ERR_OVERLOADED,
                      "%" PRIu64 " quotes are open, the most allowed ([negotiation] max_quotes); "
                      "the first of them closes in %" PRId64 " s",
                      all, secs);
        err->retry_after = secs;
        return ACC_ERR_OVERLOADED;
    }
    return ACC_OK;
}

/* Stores a new quote.  An open one is counted and stored in one step (the
 * service's quote lock), so that concurrent quotes cannot all pass the
 * count; a Rejected one counts against nothing. */
static acc_err quote_store(struct acc_service *svc, const struct acc_quote *q,
                           struct acc_error *err)
{
    if (q->state != ACC_QUOTE_ADVISORY)
        return acc_store_quote_put(svc->store, q, 0, NULL, 0, err);
    struct svc_quota_who w = svc_quota_who(svc->cfg, q->initiator, q->client);
    pthread_mutex_lock(&svc->quote_lock);
    acc_err rc = check_bounds(svc, &w, err);
    if (!rc)
        rc = acc_store_quote_put(svc->store, q, 0, NULL, 0, err);
    pthread_mutex_unlock(&svc->quote_lock);
    return rc;
}

/* Sites and links of the plan into the quote (reservations when booked). */
static acc_err take_allocation(const struct acc_plan *p, bool booked, struct acc_quote *q)
{
    struct acc_agreement a = {0};
    acc_err rc = svc_fill_allocation(&a, p, booked);
    q->comps = a.comps;
    q->n_comps = a.n_comps;
    q->links = a.links;
    q->n_links = a.n_links;
    return rc;
}

/* The node-hours and Mbit-hours of a plan: checked for the counter-offers
 * (nothing is booked), admitted for a hold (forget it once recorded). */
static acc_err quote_usage(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                           const struct acc_plan *p, int64_t duration, bool hold,
                           struct acc_error *err)
{
    size_t n;
    struct svc_charge *c = svc_plan_charges(p, duration, &n);
    if (!c)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc =
        hold ? svc_usage_admit(svc, w, id, c, n, err) : svc_usage_check(svc, w, id, c, n, err);
    free(c);
    return rc;
}

/* The checks of a quote request before anything is stored or booked; the
 * offer's window.  4xx errors, and the bounds on open quotes. */
acc_err svc_quote_check(struct acc_service *svc, const struct acc_quote_request *rq, acc_time now,
                        acc_time *earliest, acc_time *deadline, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    const struct acc_offer *o = rq->offer;
    if (atomic_load(&svc->stopping))
        return acc_error_set(err, ACC_ERR_INTERRUPTED, "accordd is stopping");
    acc_err refused = svc_instance_clock_refuse(svc, err);
    if (refused)
        return refused;
    if (rq->hold < 0 || rq->hold > cfg->max_hold) {
        char d[ACC_DURATION_STRLEN];
        acc_duration_format(cfg->max_hold, d);
        return acc_error_set(err, ACC_ERR_INVALID,
                             "a hold lasts from PT1S to %s ([negotiation] max_hold)", d);
    }
    if (rq->option < -1 || (rq->hold == 0 && rq->option >= 0) ||
        rq->option >= (int)cfg->quote_options)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "option names one of the quote's %u options (0 is the first), "
                             "and only with a hold",
                             cfg->quote_options);
    struct acc_plan_env env = {cfg, svc_site_adapter, svc_network_adapter, svc};
    acc_err rc = acc_plan_check(&env, o, err);
    if (rc)
        return rc;
    if ((rc = svc_window(svc, o, now, earliest, deadline, err)) ||
        (rc = svc_offer_quota(svc, o, now, deadline, err)))
        return rc;
    /* Early, to refuse before any preview; quote_store counts again. */
    struct svc_quota_who w =
        svc_quota_who(cfg, o->initiator ? o->initiator : "anonymous", rq->address);
    return check_bounds(svc, &w, err);
}

/* The new quote's own fields: its id, initiator, the offer's document and
 * its times. */
static acc_err quote_new(const struct acc_config *cfg, const struct acc_quote_request *rq,
                         acc_time now, struct acc_quote *out, struct acc_error *err)
{
    const struct acc_offer *o = rq->offer;
    acc_err rc = acc_id_new(out->id, err);
    if (rc)
        return rc;
    out->initiator = acc_strdup(o->initiator ? o->initiator : "anonymous");
    out->client = acc_strdup(rq->address);
    out->offer_xml = malloc(rq->len + 1);
    if (!out->initiator || !out->offer_xml || (rq->address && !out->client))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    memcpy(out->offer_xml, rq->document, rq->len);
    out->offer_xml[rq->len] = '\0';
    out->offer_len = rq->len;
    out->created = out->updated = now;
    out->duration = o->duration;
    out->hold_until = now + cfg->max_hold; /* an Advisory quote is open this long */
    return ACC_OK;
}

/* The counter-offers: the plan's items previewed over the window, the
 * options from the previews and the other placements; Rejected without
 * any. */
static acc_err quote_options(struct acc_service *svc, const struct acc_engine_request *er,
                             const struct acc_plan *plan, struct acc_plan_alts *alts,
                             const struct acc_plan **plan_of, struct acc_quote *out,
                             struct acc_error *err)
{
    struct acc_frames *frames = calloc(plan->n_items ? plan->n_items : 1, sizeof *frames);
    if (!frames)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = acc_engine_preview_items(svc->engine, er, frames, err);
    struct sources src = {plan, frames, alts, plan_of};
    if (!rc)
        rc = make_options(svc, er, &src, svc->cfg->quote_options, out, err);
    for (size_t i = 0; i < plan->n_items; i++)
        acc_frames_release(&frames[i]);
    free(frames);
    if (rc)
        return rc;
    out->state = out->n_options ? ACC_QUOTE_ADVISORY : ACC_QUOTE_REJECTED;
    if (!out->n_options) {
        out->reason = acc_strdup("no common slot in the window: every reservation the offer "
                                 "needs is never free at once for its duration");
        out->hold_until = 0;
    }
    return ACC_OK;
}

acc_err acc_service_quote(struct acc_service *svc, const struct acc_quote_request *rq,
                          struct acc_quote *out, struct acc_error *err)
{
    const struct acc_config *cfg = svc->cfg;
    const struct acc_offer *o = rq->offer;
    memset(out, 0, sizeof *out);
    out->held_option = -1;
    struct acc_plan_env env = {cfg, svc_site_adapter, svc_network_adapter, svc};
    acc_time now = acc_now(), earliest, deadline;
    acc_err rc = svc_quote_check(svc, rq, now, &earliest, &deadline, err);
    if (rc)
        return rc;

    struct acc_plan plan = {0};
    struct acc_plan_alts alts = {.max = cfg->quote_options - 1};
    const struct acc_plan **plan_of = calloc(cfg->quote_options, sizeof *plan_of);
    if (!plan_of)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if ((rc = quote_new(cfg, rq, now, out, err)))
        goto out;
    struct acc_engine_request er = {
        .agreement = out->id,
        .earliest = earliest,
        .deadline = deadline,
        .duration = o->duration,
        .strategy = o->strategy ? o->strategy : cfg->strategy,
        .max_rounds = cfg->max_rounds,
        .call_timeout_us = cfg->adapter_timeout * 1000000,
    };
    struct svc_quota_who w = svc_quota_who(cfg, out->initiator, out->client);
    if ((rc = acc_plan_make_alts(&env, svc->engine, o, &er, &plan, &alts, err)) ||
        (rc = svc_quota_plan(&w, &plan, err)) ||
        (rc = quote_usage(svc, &w, out->id, &plan, o->duration, false, err)))
        goto out;
    er.items = plan.items;
    er.n_items = plan.n_items;
    if ((rc = quote_options(svc, &er, &plan, &alts, plan_of, out, err)) ||
        (rc = take_allocation(&plan, false, out)))
        goto out;
    if (rq->option >= (int)out->n_options && out->n_options) {
        rc =
            acc_error_set(err, ACC_ERR_INVALID, "the quote has only %zu option(s)", out->n_options);
        goto out;
    }
    /* The chosen option's placement is booked (not always the planner's);
     * what it books counts against the quota from before the quote is
     * stored until the hold is recorded (or refused). */
    bool hold = rq->hold && out->n_options;
    int k = rq->option < 0 ? 0 : rq->option;
    struct acc_plan *chosen = hold ? (struct acc_plan *)plan_of[k] : NULL;
    if (hold && (rc = quote_usage(svc, &w, out->id, chosen, o->duration, true, err)))
        goto out;
    /* Stored before a hold books anything: its journal entries then belong
     * to a known quote (an Advisory one's are not swept while it holds). */
    if (!(rc = quote_store(svc, out, err)) && hold) {
        out->hold_until = now + rq->hold;
        er.items = chosen->items;
        er.n_items = chosen->n_items;
        rc = svc_quote_hold(svc, out, chosen, &er, k, err);
    }
    if (hold)
        svc_usage_forget(svc, &w, out->id);
out:
    free(plan_of);
    acc_plan_alts_release(&alts);
    acc_plan_release(&plan);
    if (rc)
        acc_quote_release(out);
    return rc;
}

acc_err acc_service_quote_get(struct acc_service *svc, const char *id, struct acc_quote *out,
                              struct acc_error *err)
{
    return acc_store_quote_get(svc->store, id, out, err);
}
