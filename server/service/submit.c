/* SPDX-License-Identifier: Apache-2.0 */
/* submit.c - an offer becomes a stored Pending agreement and a job on the
 * negotiation queue: checks against the configuration, the window,
 * idempotency keys (part of the service). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "internal.h"
#include "plan.h"

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

/* The window an offer asks for, or a 4xx error. */
acc_err svc_window(const struct acc_service *svc, const struct acc_offer *o, acc_time now,
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
        /* Never past the last time a document can carry. */
        *deadline = e < ACC_TIME_MAX - cfg->horizon ? e + cfg->horizon : ACC_TIME_MAX;
        if (*deadline - e < o->duration) {
            acc_time_format(e, t);
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "the duration %s from %s would end after 9999-12-31T23:59:59Z", d,
                                 t);
        }
    }
    *earliest = e;
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

/* How often a repeat polls for an outcome reached on another instance. */
#define WATCH_US 100000

/* A repeat of a key whose first request negotiates on another instance
 * (several instances on one database): waits, as a repeat waits for a job
 * of its own instance, until the stored agreement is no longer Pending.
 * That instance ends it, or the leader within the lease when it died; the
 * wait is bounded all the same (the agreement as it is then: Pending). */
static acc_err watch_run(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    const struct acc_config *c = svc->cfg;
    int64_t limit = (c->lease + 4 * (int64_t)c->max_rounds * c->adapter_timeout) * 1000000;
    for (int64_t waited = 0;; waited += WATCH_US) {
        struct acc_agreement a;
        acc_err rc = acc_store_agreement_get(svc->store, job->id, false, &a, err);
        if (rc)
            return rc;
        bool pending = a.state == ACC_STATE_PENDING || a.state == ACC_STATE_PENDING_AND_TERMINATING;
        if (!pending || waited >= limit || atomic_load(&svc->stopping)) {
            rc = pending ? ACC_OK : result_of(&a, err);
            acc_agreement_release(&a);
            return rc;
        }
        acc_agreement_release(&a);
        usleep(WATCH_US);
    }
}

static acc_err watch_queue(struct acc_service *svc, const char *id, struct acc_nego **out,
                           struct acc_error *err)
{
    acc_err rc = svc_queue_reserve(svc, false, err);
    if (rc)
        return rc;
    if (!(*out = svc_nego_new_run(svc, id, watch_run, NULL, free))) {
        svc_queue_unreserve(svc, false);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    svc_queue_push(svc, *out);
    return ACC_OK;
}

/* The answer to a repeated idempotency key: the running job of the first
 * request, or the outcome it already had.  The same key with another offer
 * is refused. */
static acc_err replay(struct acc_service *svc, const struct acc_submit *rq, const char *first,
                      struct acc_submission *out, struct acc_error *err)
{
    /* The job first: once it is gone, the row holds its outcome. */
    struct acc_nego *running = svc_queue_find(svc, first);
    struct acc_agreement a;
    acc_err rc = acc_store_agreement_get(svc->store, first, true, &a, err);
    if (rc) {
        acc_nego_release(running);
        return rc;
    }
    if (a.offer_len != rq->len || memcmp(a.offer_xml, rq->document, rq->len) != 0) {
        acc_agreement_release(&a);
        acc_nego_release(running);
        return acc_error_set(err, ACC_ERR_KEY_REUSED,
                             "the Idempotency-Key was first sent with another offer (agreement "
                             "%s); use a new key for a new offer",
                             first);
    }
    memcpy(out->id, first, sizeof out->id);
    out->replayed = true;
    out->job = running;
    bool elsewhere = a.state == ACC_STATE_PENDING || a.state == ACC_STATE_PENDING_AND_TERMINATING;
    if (!out->job && svc->shared && elsewhere && !rq->pending) {
        acc_agreement_release(&a);
        return watch_queue(svc, first, &out->job, err);
    }
    if (!out->job) {
        struct acc_error res;
        acc_err code = a.state == ACC_STATE_PENDING && rq->pending ? ACC_OK : result_of(&a, &res);
        out->job = svc_nego_done(svc, first, code, &res);
    }
    acc_agreement_release(&a);
    return out->job ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

/* Fills a new Pending agreement from the offer. */
static acc_err pending_agreement(struct acc_service *svc, const struct acc_submit *rq, acc_time now,
                                 acc_time earliest, acc_time deadline, struct acc_agreement *a,
                                 struct acc_error *err)
{
    const struct acc_offer *o = rq->offer;
    memset(a, 0, sizeof *a);
    acc_err rc = acc_id_new(a->id, err);
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
    a->client = acc_strdup(rq->address);
    if ((o->name && !a->name) || !a->initiator || !a->offer_xml || (rq->address && !a->client) ||
        svc_identity_keep(&a->identity, &o->identity))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

int svc_identity_keep(struct acc_identity *dst, const struct acc_identity *src)
{
    if (acc_identity_copy(dst, src))
        return -1;
    /* the user's token serves the request it came with, never later */
    struct acc_identity tok = {.token = dst->token};
    dst->token = NULL;
    acc_identity_release(&tok);
    return 0;
}

acc_err svc_offer_quota(struct acc_service *svc, const struct acc_offer *o, acc_time now,
                        acc_time *deadline, struct acc_error *err)
{
    struct svc_quota_who w =
        svc_quota_who(svc->cfg, o->initiator ? o->initiator : "anonymous", NULL);
    acc_err rc = svc_quota_offer(&w, o, now, err);
    if (rc) {
        atomic_fetch_add(&svc->refused_quota, 1);
        return rc;
    }
    svc_quota_window(&w, now, o->duration, deadline);
    return ACC_OK;
}

/* The checks before anything is stored: the configuration, the window, the
 * user's quota for one agreement, and a first look at the node-hours it
 * would hold where it names its sites (a commit of a held quote holds
 * what the hold held). */
static acc_err submit_check(struct acc_service *svc, const struct acc_submit *rq, acc_time now,
                            acc_time *earliest, acc_time *deadline, struct acc_error *err)
{
    const struct acc_offer *o = rq->offer;
    struct acc_plan_env env = {svc->cfg, svc_site_adapter, svc_network_adapter, svc};
    acc_err rc = acc_plan_check(&env, o, err);
    if (!rc)
        rc = svc_window(svc, o, now, earliest, deadline, err);
    if (rc) {
        atomic_fetch_add(&svc->rejected_input, 1);
        return rc;
    }
    if ((rc = svc_offer_quota(svc, o, now, deadline, err)) || rq->quote)
        return rc;
    struct svc_quota_who w =
        svc_quota_who(svc->cfg, o->initiator ? o->initiator : "anonymous", rq->address);
    return svc_offer_usage(svc, &w, o, *earliest, err);
}

/* Idempotency keys are the initiator's own: scope them by initiator. */
static acc_err scoped_key(const struct acc_agreement *a, const char *key, char **out,
                          struct acc_error *err)
{
    size_t n = strlen(a->initiator) + strlen(key) + 2;
    if (!(*out = malloc(n)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    snprintf(*out, n, "%s\n%s", a->initiator, key);
    return ACC_OK;
}

/* A keyed submission that could not be admitted once stored (over
 * max_agreements, or the count could not be read: why's code says which)
 * is kept Rejected with that fault, so that a retry with the key is
 * answered the same, as for any negotiation that failed, and its job ends
 * at once with it (out, as for a replay). */
static void refuse_kept(struct acc_service *svc, const struct svc_quota_who *w,
                        struct acc_agreement *a, struct acc_nego *job, const char *quote,
                        struct acc_submission *out, const struct acc_error *why)
{
    svc_reject(a, why->code, why->msg);
    a->updated = acc_now();
    struct acc_error serr;
    if (acc_store_agreement_settle(svc->store, a, ACC_STATE_BIT(ACC_STATE_PENDING), NULL, NULL, 0,
                                   &serr))
        acc_log_error("agreement %s: %s", a->id, serr.msg);
    svc_ledger_forget(svc, w, a->id); /* no longer a candidate, now that it is Rejected */
    svc_prune_rejected(svc, a);
    if (quote)
        svc_quote_unclaim(svc, quote, a->id);
    if (why->code == ACC_ERR_QUOTA)
        atomic_fetch_add(&svc->refused_quota, 1);
    svc_nego_abort(job, why->code, why);
    memcpy(out->id, a->id, sizeof out->id);
    out->job = job;
}

/* Stores the agreement, which holds a place among its user's open ones
 * (admitted, or a candidate when keyed: admitted here), and queues its
 * job; a repeated key is replayed. */
static acc_err submit_store(struct acc_service *svc, const struct acc_submit *rq,
                            struct acc_agreement *a, const char *key, struct acc_nego *job,
                            bool claimed, struct acc_submission *out, struct acc_error *err)
{
    struct svc_quota_who w = svc_quota_who(svc->cfg, a->initiator, a->client);
    bool dup = false;
    char first[ACC_ID_LEN + 1];
    /* A synchronous negotiation without a key need not wait for the row: its
     * first journal write, which is awaited, commits it too.  A key must be
     * checked, and a pending agreement's id must be durable before the reply. */
    acc_err rc = acc_store_agreement_create(
        svc->store, a, key, !key && !rq->pending ? ACC_STORE_NOWAIT : 0, &dup, first, err);
    if (rc || dup) {
        if (claimed)
            svc_quote_unclaim(svc, rq->quote, a->id);
        svc_ledger_forget(svc, &w, a->id);
        /* Never queued: nobody reads its result (a duplicate has none). */
        svc_nego_abort(job, rc ? rc : ACC_ERR_CANCELLED, rc ? err : NULL);
        acc_nego_release(job);
        return rc ? rc : replay(svc, rq, first, out, err);
    }
    struct acc_error why;
    if (key && svc_ledger_admit(svc, &w, a->id, &why)) {
        refuse_kept(svc, &w, a, job, claimed ? rq->quote : NULL, out, &why);
        return ACC_OK;
    }
    memcpy(out->id, a->id, sizeof out->id);
    out->job = job;
    /* The document goes with the job, for the check before its commit
     * (svc_precommit); the job is not running yet. */
    job->a.offer_xml = a->offer_xml;
    job->a.offer_len = a->offer_len;
    a->offer_xml = NULL;
    svc_queue_push(svc, job);
    return ACC_OK;
}

/* An offer for a site whose circuit breaker is open is refused at once, as
 * a full queue refuses it: nothing stored, nothing queued.  Its negotiation
 * would fail at its first call anyway, after the cost of one (the parse is
 * paid already; the row, the queue and the worker are not). */
static acc_err breaker_open(struct acc_service *svc, const struct acc_offer *o,
                            struct acc_error *err)
{
    for (size_t i = 0; i < o->n_components; i++) {
        const char *site = o->components[i].site;
        struct acc_adapter *ad = site ? svc_site_adapter(svc, site) : NULL;
        if (ad && acc_engine_check(svc->engine, ad, err)) {
            acc_error_prefix(err, "site %s", site);
            atomic_fetch_add(&svc->refused_breaker, 1);
            return err->code;
        }
    }
    return ACC_OK;
}

acc_err acc_service_submit(struct acc_service *svc, const struct acc_submit *rq,
                           struct acc_submission *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    atomic_fetch_add(&svc->submitted, 1);
    acc_time now = acc_now(), earliest = 0, deadline = 0;
    acc_err rc = submit_check(svc, rq, now, &earliest, &deadline, err);
    if (!rc && !rq->quote)
        rc = breaker_open(svc, rq->offer, err);
    if (rc || (rc = svc_queue_reserve(svc, rq->pending, err)))
        return rc;

    struct acc_agreement a;
    char *key = NULL;
    struct acc_nego *job = NULL;
    bool placed = false, claimed = false;
    rc = pending_agreement(svc, rq, now, earliest, deadline, &a, err);
    if (!rc && rq->idempotency_key)
        rc = scoped_key(&a, rq->idempotency_key, &key, err);
    struct svc_quota_who w = svc_quota_who(svc->cfg, a.initiator, a.client);
    /* Without a key the place is taken before the row exists; with one the
     * row is stored first (a repeat is replayed, whatever the count). */
    if (!rc)
        placed = !(rc = key ? svc_ledger_candidate(svc, &w, a.id, err)
                            : svc_ledger_admit(svc, &w, a.id, err));
    if (rc == ACC_ERR_QUOTA)
        atomic_fetch_add(&svc->refused_quota, 1);
    /* A commit of a quote claims it first: of two requests, one wins. */
    if (!rc && rq->quote)
        claimed = !(rc = svc_quote_claim(svc, rq->quote, a.initiator, a.id, err));
    /* Registered before the row exists, so that terminate can always reach
     * the negotiation. */
    if (!rc && !(job = svc_nego_new(svc, &a, rq->offer, rq->pending)))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (rc) {
        if (claimed)
            svc_quote_unclaim(svc, rq->quote, a.id);
        if (placed)
            svc_ledger_forget(svc, &w, a.id);
        svc_queue_unreserve(svc, rq->pending);
    } else {
        if (rq->quote)
            acc_strlcpy(job->quote, rq->quote, sizeof job->quote);
        rc = submit_store(svc, rq, &a, key, job, claimed, out, err);
    }
    free(key);
    acc_agreement_release(&a);
    return rc;
}
