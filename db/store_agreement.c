/* store_agreement.c - agreements: create, settle, move between states, and
 * complete those whose reservation ended (reading them: store_agreement_read.c). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/buf.h"
#include "../lib/common/strutil.h"
#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct stmt_def
    agr_insert = {S_AGR_INSERT,
                  "INSERT INTO agreement (id, name, initiator, state, created, updated, "
                  "earliest, deadline, duration, strategy, launch, idem_key, offer, terms, "
                  "guarantees) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
    agr_by_idem = {S_AGR_BY_IDEM, "SELECT id FROM agreement WHERE idem_key = ?"},
    /* A key whose negotiation a stop of accordd cut short may be negotiated
     * again: the interrupted agreement lets go of it. */
    agr_free_idem = {S_AGR_FREE_IDEM, "UPDATE agreement SET idem_key = NULL WHERE idem_key = ? "
                                      "AND state = 'Rejected' AND fault_code = 'Interrupted'"},
    agr_state = {S_AGR_STATE, "SELECT state FROM agreement WHERE id = ?"},
    agr_settle = {S_AGR_SETTLE,
                  "UPDATE agreement SET state = ?, updated = ?, start_time = ?, end_time = ?, "
                  "rounds = ?, rollbacks = ?, fault_code = ?, reason = ? WHERE id = ?"},
    agr_set_state = {S_AGR_SET_STATE, "UPDATE agreement SET state = ?, updated = ? WHERE id = ?"},
    /* A launched job moves its own agreement (the launcher stops it at the
     * end first and records why). */
    agr_set_state_reason = {S_AGR_SET_STATE_REASON,
                            "UPDATE agreement SET state = ?, updated = ?, reason = ? WHERE id = ?"},
    agr_complete_ended = {S_AGR_COMPLETE_ENDED,
                          "UPDATE agreement SET state = 'Complete', updated = ? "
                          "WHERE state = 'Observed' AND end_time <= ? AND seq NOT IN "
                          "(SELECT agreement FROM run WHERE state IN ('waiting', 'running'))"},
    comp_delete = {S_COMP_DELETE, "DELETE FROM allocation_component WHERE agreement = " BY_ID},
    comp_insert = {S_COMP_INSERT,
                   "INSERT INTO allocation_component (agreement, idx, name, site, nodes, ppn, "
                   "reservation, local_id, node_names, executable, args) "
                   "VALUES (" BY_ID ", ?,?,?,?,?,?,?,?,?,?)"},
    link_delete = {S_LINK_DELETE, "DELETE FROM allocation_link WHERE agreement = " BY_ID},
    link_insert = {S_LINK_INSERT,
                   "INSERT INTO allocation_link (agreement, idx, name, from_comp, to_comp, "
                   "site_a, site_b, link, bandwidth, reservation, local_id) "
                   "VALUES (" BY_ID ", ?,?,?,?,?,?,?,?,?,?)"};

/* ----------------------------------------------------------------- create */

struct create_arg {
    struct acc_agreement a; /* borrowed fields, or the store's own in a copy */
    const char *idem_key;
    bool duplicate;
    char existing[ACC_ID_LEN + 1];
};

static acc_err create_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct create_arg *x = arg;
    const struct acc_agreement *a = &x->a;
    sqlite3_stmt *s;
    acc_err rc;

    if (x->idem_key) {
        if (!(s = store_stmt(c, &agr_free_idem, err)))
            return ACC_ERR_STORAGE;
        struct store_bind fb = STORE_BIND(s);
        store_bind_text(&fb, x->idem_key);
        if ((rc = store_bound(c, &fb, "free an interrupted idempotency key", err)))
            return rc;
        int freed = sqlite3_step(s);
        store_done(s);
        if (freed != SQLITE_DONE)
            return store_db_error(c->db, err, "free an interrupted idempotency key");
        if (!(s = store_stmt(c, &agr_by_idem, err)))
            return ACC_ERR_STORAGE;
        struct store_bind b = STORE_BIND(s);
        store_bind_text(&b, x->idem_key);
        if ((rc = store_bound(c, &b, "read idempotency key", err)))
            return rc;
        int step = sqlite3_step(s);
        if (step == SQLITE_ROW) {
            x->duplicate = true;
            store_col_copy(s, 0, x->existing, sizeof x->existing);
        }
        store_done(s);
        if (step != SQLITE_ROW && step != SQLITE_DONE)
            return store_db_error(c->db, err, "read idempotency key");
        if (x->duplicate)
            return ACC_OK;
    }
    if (!(s = store_stmt(c, &agr_insert, err)))
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, a->id);
    store_bind_text(&b, a->name);
    store_bind_text(&b, a->initiator ? a->initiator : "anonymous");
    store_bind_text(&b, acc_state_name(a->state));
    store_bind_i64(&b, a->created);
    store_bind_i64(&b, a->updated);
    store_bind_time(&b, a->earliest);
    store_bind_time(&b, a->deadline);
    store_bind_i64(&b, a->duration);
    store_bind_text(&b, acc_strategy_name(a->strategy));
    store_bind_text(&b, acc_launch_name(a->launch));
    store_bind_text(&b, x->idem_key);
    store_bind_blob(&b, a->offer_xml, a->offer_len, false);
    store_bind_text(&b, a->terms);
    store_bind_text(&b, a->guarantees);
    return store_bind_step(c, &b, "insert agreement", err);
}

static void create_release(void *arg)
{
    struct create_arg *x = arg;
    acc_agreement_release(&x->a);
    free(x);
}

/* The columns of a new agreement, the store's own (for ACC_STORE_NOWAIT). */
static void *create_copy(const void *arg)
{
    const struct create_arg *from = arg;
    const struct acc_agreement *a = &from->a;
    struct create_arg *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    struct acc_agreement *c = &x->a;
    memcpy(c->id, a->id, sizeof c->id);
    c->state = a->state;
    c->created = a->created;
    c->updated = a->updated;
    c->earliest = a->earliest;
    c->deadline = a->deadline;
    c->duration = a->duration;
    c->strategy = a->strategy;
    c->launch = a->launch;
    c->name = acc_strdup(a->name);
    c->initiator = acc_strdup(a->initiator);
    c->terms = acc_strdup(a->terms);
    c->guarantees = acc_strdup(a->guarantees);
    c->offer_xml = acc_strndup(a->offer_xml, a->offer_len);
    c->offer_len = a->offer_len;
    if ((a->name && !c->name) || (a->initiator && !c->initiator) || (a->terms && !c->terms) ||
        (a->guarantees && !c->guarantees) || !c->offer_xml) {
        create_release(x);
        return NULL;
    }
    return x;
}

acc_err acc_store_agreement_create(struct acc_store *st, const struct acc_agreement *a,
                                   const char *idem_key, unsigned flags, bool *duplicate,
                                   char existing[ACC_ID_LEN + 1], struct acc_error *err)
{
    static const struct store_op op = {create_job, create_copy, create_release};
    if (idem_key && (flags & ACC_STORE_NOWAIT))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "database: an idempotency key needs an awaited create");
    /* The job only reads the agreement; the copy (NOWAIT) owns its fields. */
    struct create_arg x = {.a = *a, .idem_key = idem_key};
    acc_err rc = store_write(st, &op, &x, flags, err);
    if (rc)
        return rc;
    if (duplicate)
        *duplicate = x.duplicate;
    if (existing)
        memcpy(existing, x.existing, sizeof x.existing);
    return ACC_OK;
}

/* ----------------------------------------------------------------- settle */

acc_err store_current_state(struct conn *c, const char *id, enum acc_state *out,
                            struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &agr_state, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    acc_err r = store_bound(c, &b, "read state", err);
    if (r)
        return r;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (!v || !acc_state_parse(v, out))
            r = acc_error_set(err, ACC_ERR_STORAGE, "agreement %s has a bad state", id);
    } else if (rc == SQLITE_DONE) {
        r = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    } else {
        r = store_db_error(c->db, err, "read state");
    }
    store_done(s);
    return r;
}

acc_err store_write_components(struct conn *c, const struct acc_agreement *a, struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &comp_delete, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, a->id);
    acc_err rc = store_bind_step(c, &b, "update allocation", err);
    for (size_t i = 0; !rc && i < a->n_comps; i++) {
        const struct acc_alloc_component *x = &a->comps[i];
        if (!(s = store_stmt(c, &comp_insert, err)))
            return ACC_ERR_STORAGE;
        struct acc_buf args = ACC_BUF_INIT;
        for (size_t j = 0; j < x->n_args; j++)
            acc_buf_append(&args, x->args[j], strlen(x->args[j]) + 1);
        if (!acc_buf_ok(&args))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        b = STORE_BIND(s);
        store_bind_text(&b, a->id);
        store_bind_i64(&b, (int64_t)i);
        store_bind_text(&b, x->name);
        store_bind_text(&b, x->site);
        store_bind_i64(&b, x->nodes);
        store_bind_i64(&b, x->ppn);
        store_bind_text(&b, x->reservation);
        store_bind_text(&b, x->local_id);
        store_bind_text(&b, x->node_names);
        store_bind_text(&b, x->executable);
        if (x->n_args)
            store_bind_blob(&b, args.data, args.len, true);
        else
            store_bind_null(&b);
        acc_buf_release(&args);
        rc = store_bind_step(c, &b, "write allocation", err);
    }
    return rc;
}

acc_err store_write_links(struct conn *c, const struct acc_agreement *a, struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &link_delete, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, a->id);
    acc_err rc = store_bind_step(c, &b, "update allocation", err);
    for (size_t i = 0; !rc && i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        if (!(s = store_stmt(c, &link_insert, err)))
            return ACC_ERR_STORAGE;
        b = STORE_BIND(s);
        store_bind_text(&b, a->id);
        store_bind_i64(&b, (int64_t)i);
        store_bind_text(&b, l->name);
        store_bind_text(&b, l->from);
        store_bind_text(&b, l->to);
        store_bind_text(&b, l->site_a);
        store_bind_text(&b, l->site_b);
        store_bind_text(&b, l->link);
        store_bind_i64(&b, l->bandwidth);
        store_bind_text(&b, l->reservation);
        store_bind_text(&b, l->local_id);
        rc = store_bind_step(c, &b, "write allocation", err);
    }
    return rc;
}

struct settle_arg {
    const struct acc_agreement *a;
    unsigned from;
    const struct acc_trace *trace;
    const struct acc_booking *bookings;
    size_t n_bookings;
};

static acc_err settle_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct settle_arg *x = arg;
    return store_agreement_settle_in(c, x->a, x->from, x->trace, x->bookings, x->n_bookings, err);
}

acc_err store_agreement_settle_in(struct conn *c, const struct acc_agreement *a, unsigned from,
                                  const struct acc_trace *trace, const struct acc_booking *bookings,
                                  size_t n_bookings, struct acc_error *err)
{
    struct settle_arg xs = {a, from, trace, bookings, n_bookings}, *x = &xs;
    enum acc_state cur;
    acc_err rc = store_current_state(c, a->id, &cur, err);
    if (rc)
        return rc;
    if (!(x->from & ACC_STATE_BIT(cur)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", a->id, acc_state_name(cur));

    sqlite3_stmt *s = store_stmt(c, &agr_settle, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, acc_state_name(a->state));
    store_bind_i64(&b, a->updated);
    store_bind_time(&b, a->start);
    store_bind_time(&b, a->end);
    store_bind_i64(&b, a->rounds);
    store_bind_i64(&b, a->rollbacks);
    store_bind_text(&b, a->fault_code);
    store_bind_text(&b, a->reason);
    store_bind_text(&b, a->id);
    if ((rc = store_bind_step(c, &b, "update agreement", err)) ||
        (rc = store_write_components(c, a, err)) || (rc = store_write_links(c, a, err)) ||
        (rc = store_trace_put(c, a->id, x->trace, 0, err)))
        return rc;
    if (a->run && (rc = store_run_insert(c, a->id, a->run, err)))
        return rc;
    for (size_t i = 0; i < x->n_bookings; i++) {
        if ((rc = store_journal_put_one(c, &x->bookings[i], a->updated, err)))
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_agreement_settle(struct acc_store *st, const struct acc_agreement *a,
                                   unsigned from, const struct acc_trace *trace,
                                   const struct acc_booking *bookings, size_t n_bookings,
                                   struct acc_error *err)
{
    static const struct store_op op = {settle_job, NULL, NULL};
    struct settle_arg x = {a, from, trace, bookings, n_bookings};
    return store_write(st, &op, &x, 0, err);
}

/* ------------------------------------------------------------- transition */

acc_err store_transition(struct conn *c, const char *id, unsigned from, enum acc_state to,
                         const char *reason, enum acc_state *was, struct acc_error *err)
{
    acc_err rc = store_current_state(c, id, was, err);
    if (rc)
        return rc;
    if (!(from & ACC_STATE_BIT(*was)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", id, acc_state_name(*was));
    sqlite3_stmt *s = store_stmt(c, reason ? &agr_set_state_reason : &agr_set_state, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, acc_state_name(to));
    store_bind_i64(&b, acc_now());
    if (reason)
        store_bind_text(&b, reason);
    store_bind_text(&b, id);
    return store_bind_step(c, &b, "update state", err);
}

struct transition_arg {
    const char *id;
    unsigned from;
    enum acc_state to;
    const char *reason;
    enum acc_state was;
};

static acc_err transition_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct transition_arg *x = arg;
    return store_transition(c, x->id, x->from, x->to, x->reason, &x->was, err);
}

acc_err acc_store_agreement_transition(struct acc_store *st, const char *id, unsigned from,
                                       enum acc_state to, const char *reason, enum acc_state *was,
                                       struct acc_error *err)
{
    static const struct store_op op = {transition_job, NULL, NULL};
    struct transition_arg x = {id, from, to, reason, ACC_STATE_PENDING};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (was && (rc == ACC_OK || rc == ACC_ERR_STATE))
        *was = x.was;
    return rc;
}

struct complete_arg {
    acc_time now;
    unsigned count;
};

static acc_err complete_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct complete_arg *x = arg;
    sqlite3_stmt *s = store_stmt(c, &agr_complete_ended, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_i64(&b, x->now);
    store_bind_i64(&b, x->now);
    acc_err rc = store_bind_step(c, &b, "complete agreements", err);
    x->count = rc ? 0 : (unsigned)sqlite3_changes(c->db);
    return rc;
}

acc_err acc_store_agreement_complete_ended(struct acc_store *st, acc_time now, unsigned *count,
                                           struct acc_error *err)
{
    static const struct store_op op = {complete_job, NULL, NULL};
    struct complete_arg x = {now, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (count)
        *count = rc ? 0 : x.count;
    return rc;
}
