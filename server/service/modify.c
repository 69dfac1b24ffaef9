/* SPDX-License-Identifier: Apache-2.0 */
/* modify.c - changing a committed agreement (part of the service): the new
 * version is negotiated by the engine while the current one stays booked;
 * on success one store write keeps the old version and makes the new one
 * current, then the old reservations are cancelled.  On any failure the
 * new reservations are cancelled and nothing else changes. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "internal.h"

/* The old version's reservations, to be cancelled once the new one is
 * recorded (journalled as cancel-failed with the new one, so that a crash
 * in between leaves them to housekeeping). */
static acc_err old_bookings(struct acc_service *svc, const char *id, unsigned version,
                            struct acc_booking **out, size_t *n, struct acc_error *err)
{
    acc_err rc = acc_store_journal_get(svc->store, id, out, n, err);
    if (rc)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        struct acc_booking *b = &(*out)[i];
        if (b->state != ACC_BOOKING_COMMITTED && b->state != ACC_BOOKING_CANCEL_FAILED)
            continue;
        b->state = ACC_BOOKING_CANCEL_FAILED;
        snprintf(b->error, sizeof b->error, "replaced by version %u", version + 1);
        (*out)[k++] = *b;
    }
    *n = k;
    return ACC_OK;
}

/* Checks the times; *start and *end receive the new ones, *book_from when
 * the new reservations begin (now, for an agreement that has begun). */
static acc_err check_times(struct acc_service *svc, const struct acc_agreement *a,
                           const struct acc_modification *m, enum acc_launcher_held held,
                           acc_time *start, acc_time *end, acc_time *book_from,
                           struct acc_error *err)
{
    acc_time now = acc_now();
    *start = m->start ? m->start : a->start;
    *end = m->end ? m->end : m->start ? *start + (a->end - a->start) : a->end;
    bool moved = *start != a->start;
    if (moved && (a->start <= now || held == ACC_LAUNCHER_HELD_RUNNING))
        return acc_error_set(err, ACC_ERR_STATE,
                             "agreement %s began at its start; the start can no longer move "
                             "(change the end instead)",
                             a->id);
    if (moved && *start < now + svc->cfg->lead_time)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "the new start must be at least %" PRId64 " s from now (lead_time)",
                             svc->cfg->lead_time);
    if (*end <= *start)
        return acc_error_set(err, ACC_ERR_INVALID, "the new end must come after the start");
    if (*end <= now + 1)
        return acc_error_set(err, ACC_ERR_INVALID, "the new end has passed");
    bool nodes = false;
    for (size_t i = 0; i < a->n_comps; i++)
        nodes |= svc_mod_new_nodes(m, &a->comps[i]) != a->comps[i].nodes;
    if (nodes && held == ACC_LAUNCHER_HELD_RUNNING)
        return acc_error_set(err, ACC_ERR_STATE,
                             "the job of agreement %s runs on the nodes it has; a change of "
                             "nodes is refused while it runs",
                             a->id);
    if (nodes && held == ACC_LAUNCHER_HELD_WAITING)
        return acc_error_set(err, ACC_ERR_STATE,
                             "the job of agreement %s waits with launch descriptions for the "
                             "nodes it has; a change of nodes is refused while it waits",
                             a->id);
    *book_from = *start > now ? *start : now + 1;
    return ACC_OK;
}

/* The user's quota: the change may grow nothing past a limit. */
static acc_err check_quota(struct acc_service *svc, const struct acc_agreement *a,
                           const struct acc_modification *m, acc_time start, acc_time end,
                           struct acc_error *err)
{
    struct svc_quota_shape was = {0, 0, a->start, a->end}, to = {0, 0, start, end};
    for (size_t i = 0; i < a->n_comps; i++) {
        was.nodes += a->comps[i].nodes;
        to.nodes += svc_mod_new_nodes(m, &a->comps[i]);
    }
    for (size_t i = 0; i < a->n_links; i++) {
        was.bandwidth += a->links[i].bandwidth;
        to.bandwidth += svc_mod_new_bandwidth(m, &a->links[i]);
    }
    struct svc_quota_who w = svc_quota_who(svc->cfg, a->initiator, a->client);
    return svc_quota_change(&w, &was, &to, acc_now(), err);
}

/* The new version's node-hours and Mbit-hours, each reservation from the
 * booking's start to the new end, in place of the current version's: a
 * change may keep or shrink what is over the limit, not grow it. */
static acc_err admit_usage(struct acc_service *svc, const struct acc_agreement *a,
                           const struct svc_mod_plan *p, acc_time from, acc_time end,
                           struct acc_error *err)
{
    struct svc_charge c[sizeof p->items / sizeof p->items[0]];
    for (size_t i = 0; i < p->n; i++)
        c[i] = (struct svc_charge){p->items[i].res.kind, p->items[i].res.name,
                                   p->items[i].res.amount, from, end};
    struct svc_quota_who w = svc_quota_who(svc->cfg, a->initiator, a->client);
    return svc_usage_admit(svc, &w, a->id, c, p->n, err);
}

/* One modification in progress. */
struct mod_run {
    struct acc_agreement a; /* the current version, then the new one */
    struct svc_mod_plan *p;
    struct svc_nego_ctx ctx;
    struct acc_booking *old; /* the old version's reservations */
    size_t n_old;
    char *change;
    bool marked;   /* the store knows a change is under way */
    bool booked;   /* the new reservations exist */
    bool admitted; /* holds a place among its owner's node-hours */
    int64_t mark;  /* its number in the store's mark */
    unsigned version;
    acc_time start, end, from;
    unsigned rounds, rollbacks;
};

/* A modification's own number for the store's mark, in [1, INT32_MAX]:
 * its mark is cleared only by it (leftovers.c clears a failed one's later,
 * and must not clear a newer one's). */
static int64_t next_mark(void)
{
    static atomic_uint_fast32_t counter;
    uint_fast32_t v = atomic_fetch_add(&counter, 1);
    if (v == 0) { /* the first: from somewhere else than another process's */
        v = (uint_fast32_t)(acc_mono_us() ^ ((int64_t)getpid() << 12));
        atomic_fetch_add(&counter, v);
    }
    return (int64_t)(v % 0x7ffffffeu) + 1;
}

/* The agreement, the checks, the items, and the store's mark. */
static acc_err mod_prepare(struct acc_service *svc, const char *id,
                           const struct acc_modification *m, struct mod_run *r,
                           struct acc_error *err)
{
    /* With its offer: the new version's document is checked before its
     * commit (svc_precommit). */
    acc_err rc = acc_store_agreement_get(svc->store, id, true, &r->a, err);
    if (rc)
        return rc;
    if (r->a.state != ACC_STATE_OBSERVED)
        return acc_error_set(err, ACC_ERR_STATE,
                             "agreement %s is %s; only an Observed agreement can be modified", id,
                             acc_state_name(r->a.state));
    enum acc_launcher_held held = svc_run_held(svc, id);
    if ((rc = check_times(svc, &r->a, m, held, &r->start, &r->end, &r->from, err)) ||
        (rc = svc_mod_make_plan(svc, &r->a, m, r->p, err)) ||
        (rc = check_quota(svc, &r->a, m, r->start, r->end, err)) ||
        (rc = admit_usage(svc, &r->a, r->p, r->from, r->end, err)))
        return rc;
    r->admitted = true;
    if (!(r->change = svc_mod_describe(&r->a, m, r->start, r->end)))
        return acc_error_set(err, ACC_ERR_INVALID, "the modification changes nothing");
    r->mark = next_mark();
    if ((rc = acc_store_modify_begin(svc->store, id, r->mark, &r->version, err)))
        return rc;
    r->marked = true;
    /* Another modification (through another instance) may have committed
     * between the read and the mark: this one was planned on what that one
     * replaced. */
    if (r->a.version && r->version != r->a.version)
        return acc_error_set(err, ACC_ERR_STATE,
                             "agreement %s changed to version %u while this modification was "
                             "prepared; read it again and retry",
                             id, r->version);
    return ACC_OK;
}

/* The engine books the new version while the current one stays booked. */
static acc_err mod_negotiate(struct acc_service *svc, const char *id, struct mod_run *r,
                             struct acc_error *err)
{
    struct acc_engine_request rq = {
        .agreement = r->a.id,
        .earliest = r->from,
        .deadline = r->end,
        .duration = r->end - r->from,
        .strategy = r->a.strategy,
        .max_rounds = svc->cfg->max_rounds,
        .call_timeout_us = svc->cfg->adapter_timeout * 1000000,
        .items = r->p->items,
        .n_items = r->p->n,
        .hooks = svc_nego_hooks(&r->ctx),
    };
    struct acc_engine_result res = {0};
    acc_engine_negotiate(svc->engine, &rq, &res);
    if (res.outcome != ACC_ENGINE_AGREED)
        return acc_error_set(err, res.err.code ? res.err.code : ACC_ERR_NO_SLOT,
                             "the change was refused and agreement %s is as it was: %s", id,
                             res.err.msg);
    r->booked = true;
    r->rounds = res.rounds;
    r->rollbacks = res.rollbacks;
    if (atomic_load(&svc->stopping))
        return acc_error_set(err, ACC_ERR_INTERRUPTED,
                             "accordd is stopping; agreement %s is as it was", id);
    return ACC_OK;
}

/* The commit's answer was lost (the connection went in the middle): it may
 * have been made.  Asked again until the database answers (as long as
 * svc_lost_wait allows): made, the modification succeeded (its answer says
 * so, and a retry is not made twice); not made, it failed as it would have (err as it was, and
 * mod_release undoes it).  No answer in time: unknown, and nothing is
 * undone here (the new reservations may be the agreement's now): if it
 * was not made, leftovers.c clears the mark once the database is back and
 * the sweep releases them. */
static acc_err commit_outcome(struct acc_service *svc, const char *id, struct mod_run *r,
                              struct acc_error *err)
{
    struct acc_error lost = *err, aerr;
    int waited = 0;
    do {
        bool made = false;
        acc_err rc =
            acc_store_modify_outcome(svc->store, id, r->version, r->mark, r->change, &made, &aerr);
        if (!rc) {
            acc_log_warn("agreement %s: the answer to the commit of version %u was lost; it %s", id,
                         r->version + 1, made ? "was made" : "was not made");
            if (!made) {
                *err = lost;
                return ACC_ERR_STORAGE_AWAY;
            }
            r->marked = r->booked = false;
            return ACC_OK;
        }
    } while (svc_lost_wait(svc, &waited));
    r->booked = false; /* perhaps the agreement's: left to the sweep */
    return acc_error_set(err, ACC_ERR_STORAGE_AWAY,
                         "the database went away while the change of agreement %s was committed, "
                         "and has not said since whether it was made: read the agreement (its "
                         "version %u is the change) before trying again",
                         id, r->version + 1);
}

/* One store write keeps the old version and makes the new one current,
 * its reservations committed and the old ones marked to cancel. */
static acc_err mod_record(struct acc_service *svc, const char *id, const struct acc_modification *m,
                          struct mod_run *r, struct acc_error *err)
{
    struct svc_mod_plan *p = r->p;
    acc_err rc;
    if ((rc = svc_mod_apply(&r->a, m, p, m->start ? r->start : r->a.start, r->end)) ||
        (rc = old_bookings(svc, id, r->version, &r->old, &r->n_old, err))) {
        if (rc == ACC_ERR_NOMEM)
            acc_error_set(err, rc, "out of memory");
        return rc;
    }
    r->a.updated = acc_now();
    r->a.rounds = r->rounds;
    r->a.rollbacks = r->rollbacks;
    /* As it will be read back, so that the reply is the document signed
     * here (the signature is kept by the document's bytes). */
    char *change = acc_strdup(r->change);
    if (!change)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    free(r->a.change);
    r->a.change = change;
    r->a.version = r->a.versions = r->version + 1;
    if ((rc = svc_precommit(svc, &r->a, err)))
        return rc;
    size_t nb = p->n + r->n_old;
    struct acc_booking *b = calloc(nb ? nb : 1, sizeof *b);
    if (!b)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++) {
        b[i] = p->items[i].booking;
        b[i].state = ACC_BOOKING_COMMITTED;
    }
    if (r->n_old)
        memcpy(b + p->n, r->old, r->n_old * sizeof *r->old);
    rc = acc_store_modify_commit(svc->store, &r->a, r->version, r->mark, r->change, &r->ctx.trace,
                                 b, nb, err);
    free(b);
    if (rc == ACC_ERR_STORAGE_AWAY)
        rc = commit_outcome(svc, id, r, err);
    if (rc == ACC_ERR_STATE)
        acc_error_set(err, ACC_ERR_STATE,
                      "agreement %s was terminated (or changed) while the change was "
                      "negotiated; the change was not made",
                      id);
    if (!rc)
        r->marked = r->booked = false;
    return rc;
}

/* Recorded: the old reservations go, the job and the wire follow. */
static void mod_follow(struct acc_service *svc, const char *id, struct mod_run *r)
{
    size_t failed = svc_cancel_bookings(svc, r->old, r->n_old);
    if (failed)
        acc_log_warn("agreement %s: %zu replaced reservation(s) not cancelled yet; housekeeping "
                     "retries",
                     id, failed);
    acc_launcher_retime(svc->launcher, id, r->a.start, r->a.end);
    svc_provision_committed(svc, &r->a);
    acc_log_info("agreement %s: version %u: %s", id, r->version + 1, r->change);
}

/* Undoes what a failed modification left: its new reservations and the
 * store's mark. */
static void mod_release(struct acc_service *svc, const char *id, struct mod_run *r)
{
    if (r->booked)
        svc_undo_items(svc, r->p->items, r->p->n);
    if (r->marked) {
        struct acc_error aerr;
        if (acc_store_modify_abort(svc->store, id, r->mark, NULL, &aerr))
            acc_log_error("agreement %s: %s; cleared once the database answers again", id,
                          aerr.msg);
    }
    if (r->admitted) { /* recorded or undone: the store says what it holds */
        struct svc_quota_who w = svc_quota_who(svc->cfg, r->a.initiator, r->a.client);
        svc_usage_forget(svc, &w, id);
    }
    if (r->p) {
        acc_engine_items_release(r->p->items, r->p->n);
        free(r->p->item_of_comp);
        free(r->p->item_of_link);
    }
    free(r->p);
    free(r->old);
    free(r->change);
    acc_trace_release(&r->ctx.trace);
    acc_agreement_release(&r->a);
}

acc_err svc_modify_check(const char *id, const struct acc_modification *m, struct acc_error *err)
{
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    if (!m->start && !m->end && !m->n_nodes && !m->n_bandwidth)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "the modification changes nothing: give a start, an end, nodes "
                             "or a bandwidth");
    return ACC_OK;
}

acc_err svc_modify_run(struct acc_service *svc, const char *id, const struct acc_modification *m,
                       struct acc_agreement *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = svc_modify_check(id, m, err);
    if (rc)
        return rc;
    struct mod_run r = {.p = calloc(1, sizeof *r.p), .ctx = {.svc = svc}};
    acc_trace_init(&r.ctx.trace);
    struct svc_busy self; /* its mark is not a leftover */
    svc_busy_enter(svc, &self, id);
    rc =
        r.p ? mod_prepare(svc, id, m, &r, err) : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = mod_negotiate(svc, id, &r, err);
    if (!rc)
        rc = mod_record(svc, id, m, &r, err);
    if (!rc) {
        mod_follow(svc, id, &r);
        /* the new version as GET ?version= shows it, offer and all: the
         * document signed before the commit (by now another modification,
         * through another instance, may have made a newer one) */
        rc = acc_store_agreement_get_version(svc->store, id, r.version + 1, true, out, err);
    }
    mod_release(svc, id, &r);
    svc_busy_leave(svc, &self);
    return rc;
}

acc_err acc_service_get_version(struct acc_service *svc, const char *id, unsigned version,
                                bool with_offer, struct acc_agreement *out, struct acc_error *err)
{
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    return acc_store_agreement_get_version(svc->store, id, version, with_offer, out, err);
}

acc_err acc_service_trace_version(struct acc_service *svc, const char *id, unsigned version,
                                  struct acc_agreement *a, struct acc_trace *out,
                                  struct acc_error *err)
{
    acc_err rc = acc_service_get_version(svc, id, version, false, a, err);
    if (!rc) {
        rc = acc_store_trace_get_version(svc->store, id, version, out, err);
        if (rc)
            acc_agreement_release(a);
    }
    return rc;
}
