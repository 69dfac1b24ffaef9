/* SPDX-License-Identifier: Apache-2.0 */
/* quote_commit.c - committing a held quote (POST /agreements?quote=ID):
 * the quote's held reservations become the new agreement's committed
 * bookings in one store transaction, with no new negotiation (part of the
 * service; see service.h).
 *
 * Submission claims the Held quote for the new Pending agreement (exactly
 * one request wins); the job on the negotiation queue then moves the quote
 * Held -> Committed and settles the agreement Observed with the stored
 * allocation, and runs the same post-commit steps as a negotiation. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../launch/launcher.h"
#include "internal.h"

/* A hold is over at its time, whether or not housekeeping has released
 * it yet (it runs every few seconds, and only some time after a start). */
static acc_err hold_over(const struct acc_quote *q, struct acc_error *err)
{
    char t[ACC_TIME_STRLEN];
    acc_time_format(q->hold_until, t);
    return acc_error_set(err, ACC_ERR_STATE,
                         "the hold of quote %s expired at %s: nothing was committed; quote again",
                         q->id, t);
}

acc_err svc_quote_claim(struct acc_service *svc, const char *quote, const char *initiator,
                        const char *agreement, struct acc_error *err)
{
    struct acc_quote q;
    acc_err rc = acc_store_quote_get(svc->store, quote, &q, err);
    if (rc)
        return rc;
    if (strcmp(q.initiator, initiator) != 0) {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no quote %s", quote);
    } else if (q.state == ACC_QUOTE_COMMITTED) {
        rc = acc_error_set(err, ACC_ERR_STATE, "quote %s is already committed as agreement %s",
                           quote, q.agreement);
    } else if (q.state != ACC_QUOTE_HELD) {
        rc = acc_error_set(err, ACC_ERR_STATE,
                           "quote %s is %s%s%s: only a Held quote can be committed; quote again",
                           quote, acc_quote_state_name(q.state), q.reason ? ": " : "",
                           q.reason ? q.reason : "");
    } else if (q.hold_until <= acc_now()) {
        rc = hold_over(&q, err);
    } else {
        rc = acc_store_quote_claim(svc->store, quote, agreement, true, err);
        if (rc == ACC_ERR_STATE && q.agreement[0])
            acc_error_set(err, rc, "quote %s is already being committed as agreement %s", quote,
                          q.agreement);
    }
    acc_quote_release(&q);
    return rc;
}

void svc_quote_unclaim(struct acc_service *svc, const char *quote, const char *agreement)
{
    struct acc_error err;
    if (acc_store_quote_claim(svc->store, quote, agreement, false, &err))
        acc_log_error("quote %s: %s", quote, err.msg);
}

/* The executable and arguments of an allocated component from the offer:
 * the component of that name, or for a flexible request's generated part
 * the component whose name it starts with. */
static acc_err take_program(struct acc_alloc_component *c, const struct acc_offer *o)
{
    const struct acc_component *best = NULL;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *x = &o->components[i];
        size_t n = strlen(x->name);
        if (strcmp(x->name, c->name) == 0) {
            best = x;
            break;
        }
        if (strncmp(x->name, c->name, n) == 0 && (!best || n > strlen(best->name)))
            best = x;
    }
    if (!best || !best->executable)
        return ACC_OK;
    c->executable = acc_strdup(best->executable);
    c->args = calloc(best->n_args ? best->n_args : 1, sizeof *c->args);
    if (!c->executable || !c->args)
        return ACC_ERR_NOMEM;
    for (size_t k = 0; k < best->n_args; k++) {
        if (!(c->args[c->n_args] = acc_strdup(best->args[k])))
            return ACC_ERR_NOMEM;
        c->n_args++;
    }
    return ACC_OK;
}

/* The held journal entries of the quote, as the agreement's committed ones. */
static acc_err held_bookings(struct acc_service *svc, const struct acc_quote *q, const char *id,
                             struct acc_booking **out, size_t *n, struct acc_error *err)
{
    struct acc_booking *b = NULL;
    size_t all = 0;
    *n = 0;
    acc_err rc = acc_store_journal_get(svc->store, q->id, &b, &all, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < all; i++) {
        if (b[i].state != ACC_BOOKING_HELD)
            continue;
        b[*n] = b[i];
        acc_strlcpy(b[*n].agreement, id, sizeof b[*n].agreement);
        b[(*n)++].state = ACC_BOOKING_COMMITTED;
    }
    *out = b;
    return ACC_OK;
}

/* The agreement's allocation and times from the held quote (taken from q). */
static acc_err fill_from_quote(struct acc_agreement *a, struct acc_quote *q,
                               const struct acc_offer *o)
{
    a->state = ACC_STATE_OBSERVED;
    a->start = q->options[q->held_option].start;
    a->end = q->options[q->held_option].end;
    a->rounds = a->rollbacks = 0;
    a->comps = q->comps;
    a->n_comps = q->n_comps;
    a->links = q->links;
    a->n_links = q->n_links;
    q->comps = NULL;
    q->links = NULL;
    q->n_comps = q->n_links = 0;
    for (size_t i = 0; i < a->n_comps; i++) {
        if (take_program(&a->comps[i], o))
            return ACC_ERR_NOMEM;
    }
    return ACC_OK;
}

/* Records the agreement's end when the commit did not happen, and lets go
 * of the quote (still Held, it can be committed again or released). */
static acc_err commit_failed(struct acc_service *svc, struct acc_nego *job, acc_err code,
                             const char *reason, struct acc_error *err)
{
    struct acc_agreement *a = &job->a;
    svc_drop_run(a);
    a->start = a->end = 0;
    a->updated = acc_now();
    svc_reject(a, code, reason);
    /* Recorded without an allocation: nothing was committed. */
    struct acc_agreement r = *a;
    r.comps = NULL;
    r.links = NULL;
    r.n_comps = r.n_links = 0;
    struct acc_error serr;
    bool terminated;
    acc_err rc =
        svc_settle_rejected(svc, &r, ACC_STATE_BIT(ACC_STATE_PENDING), NULL,
                            "terminated before the quote was committed", &terminated, &serr);
    a->state = r.state;
    a->reason = r.reason;
    if (terminated) {
        code = ACC_ERR_CANCELLED;
        reason = "the agreement was terminated before the quote was committed";
    }
    if (rc)
        acc_log_error("agreement %s: %s", a->id, serr.msg);
    svc_quote_unclaim(svc, job->quote, a->id);
    atomic_fetch_add(&svc->outcomes[OUT_FAILED], 1);
    acc_log_info("agreement %s: commit of quote %s failed: %s", a->id, job->quote, reason);
    return acc_error_set(err, code, "%s", reason);
}

acc_err svc_quote_commit(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    struct acc_agreement *a = &job->a;
    struct acc_quote q;
    struct acc_booking *b = NULL;
    size_t n = 0;
    struct acc_trace trace;
    struct acc_error e;
    acc_trace_init(&trace);
    acc_err rc = acc_store_quote_get(svc->store, job->quote, &q, &e);
    if (rc)
        return commit_failed(svc, job, rc, e.msg, err);
    if (q.state != ACC_QUOTE_HELD || strcmp(q.agreement, a->id) != 0 || q.held_option < 0 ||
        (size_t)q.held_option >= q.n_options) {
        acc_error_set(&e, ACC_ERR_STATE, "quote %s is %s%s%s; nothing was committed", q.id,
                      acc_quote_state_name(q.state), q.reason ? ": " : "",
                      q.reason ? q.reason : "");
        rc = ACC_ERR_STATE;
        goto failed;
    }
    if (q.hold_until <= acc_now()) {
        rc = hold_over(&q, &e);
        goto failed;
    }
    if (atomic_load(&job->stop) || atomic_load(&svc->stopping)) {
        acc_error_set(&e, ACC_ERR_INTERRUPTED, "the commit was stopped; the quote is still Held");
        rc = ACC_ERR_INTERRUPTED;
        goto failed;
    }
    char detail[128];
    snprintf(detail, sizeof detail, "commit of quote %s", q.id);
    struct acc_trace_event ev = {.kind = ACC_TRACE_AGREE,
                                 .t_from = q.options[q.held_option].start,
                                 .t_until = q.options[q.held_option].end,
                                 .t_result = q.options[q.held_option].start,
                                 .detail = detail};
    if (acc_trace_add(&trace, &ev) || fill_from_quote(a, &q, &job->offer)) {
        acc_error_set(&e, ACC_ERR_NOMEM, "out of memory");
        rc = ACC_ERR_NOMEM;
        goto failed;
    }
    a->updated = q.updated = acc_now();
    if ((rc = acc_launcher_describe(svc->launcher, a, &e)) || (rc = svc_precommit(svc, a, &e)) ||
        (rc = held_bookings(svc, &q, a->id, &b, &n, &e)))
        goto failed;
    q.state = ACC_QUOTE_COMMITTED;
    free(q.reason);
    q.reason = NULL;
    /* The quote keeps its allocation for GET /negotiations/{id}. */
    q.comps = a->comps;
    q.n_comps = a->n_comps;
    q.links = a->links;
    q.n_links = a->n_links;
    rc = acc_store_quote_commit(svc->store, &q, a, &trace, b, n, &e);
    q.comps = NULL;
    q.links = NULL;
    q.n_comps = q.n_links = 0;
    enum acc_state now;
    bool made = false;
    if (rc == ACC_ERR_STORAGE_AWAY && !svc_made_after_lost(svc, a->id, &made, &now)) {
        acc_log_warn("agreement %s: the answer to the commit of quote %s was lost; it %s", a->id,
                     q.id, made ? "was made" : "was not made");
        rc = made ? ACC_OK : rc;
    }
    if (rc)
        goto failed;
    atomic_fetch_add(&svc->outcomes[OUT_AGREED], 1);
    acc_log_info("agreement %s: Observed from %" PRId64 " by the commit of quote %s", a->id,
                 a->start, q.id);
    svc_after_commit(svc, a);
    goto out;
failed:
    rc = commit_failed(svc, job, rc, e.msg, err);
out:
    free(b);
    acc_trace_release(&trace);
    acc_quote_release(&q);
    return rc;
}
