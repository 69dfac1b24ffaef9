/* SPDX-License-Identifier: Apache-2.0 */
/* store_agreement.c - agreements: create, settle, move between states, and
 * complete those whose reservation ended (reading them: store_agreement_read.c). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/buf.h"
#include "../lib/common/strutil.h"
#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct acc_sql_query
    agr_insert = {S_AGR_INSERT,
                  "INSERT INTO agreement (id, name, initiator, state, created, updated, "
                  "earliest, deadline, duration, strategy, launch, idem_key, offer, terms, "
                  "guarantees, instance, client, identity) "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
    agr_by_idem = {S_AGR_BY_IDEM, "SELECT id FROM agreement WHERE idem_key = ?"},
    /* A key whose negotiation a stop of accordd (or a database out of
     * reach) cut short may be negotiated again: the interrupted agreement
     * lets go of it. */
    agr_free_idem = {S_AGR_FREE_IDEM,
                     "UPDATE agreement SET idem_key = NULL WHERE idem_key = ? AND state = "
                     "'Rejected' AND fault_code IN ('Interrupted', 'StorageUnavailable')"},
    agr_state = {S_AGR_STATE, "SELECT state FROM agreement WHERE id = ?"},
    /* PostgreSQL: the row stays locked to the transaction's end, so that a
     * write checked against this state is not overtaken by another
     * instance's (READ COMMITTED would let the second overwrite the
     * first); FOR NO KEY UPDATE does not wait for the inserts of rows that
     * refer to it */
    agr_state_pg = {S_AGR_STATE, "SELECT state FROM agreement WHERE id = ? FOR NO KEY UPDATE"},
    agr_settle = {S_AGR_SETTLE,
                  "UPDATE agreement SET state = ?, updated = ?, start_time = ?, end_time = ?, "
                  "rounds = ?, rollbacks = ?, fault_code = ?, reason = ?, signature = ? "
                  "WHERE id = ?"},
    agr_keep_signature = {S_AGR_KEEP_SIGNATURE,
                          "UPDATE agreement SET signature = ? WHERE id = ? AND updated = ?"},
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
    const char *instance; /* the store's: the instance that negotiates it, or NULL */
    char *identity;       /* a.identity packed (store_identity.c), owned; NULL: no one */
    bool duplicate;
    char existing[ACC_ID_LEN + 1];
};

static acc_err create_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct create_arg *x = arg;
    const struct acc_agreement *a = &x->a;
    struct acc_sql_stmt *s;
    acc_err rc;
    x->duplicate = false; /* a run again (sql_writer.h) decides anew */
    x->existing[0] = '\0';

    if (x->idem_key) {
        if (!(s = acc_sql_prepare(c, &agr_free_idem, err)))
            return acc_sql_failed(err);
        acc_sql_bind_text(s, x->idem_key);
        if ((rc = acc_sql_run(s, "free an interrupted idempotency key", err)))
            return rc;
        if (!(s = acc_sql_prepare(c, &agr_by_idem, err)))
            return acc_sql_failed(err);
        acc_sql_bind_text(s, x->idem_key);
        if ((rc = acc_sql_bound(s, "read idempotency key", err)))
            return rc;
        bool row;
        rc = acc_sql_step(s, &row, "read idempotency key", err);
        if (!rc && row) {
            x->duplicate = true;
            acc_sql_col_copy(s, 0, x->existing, sizeof x->existing);
        }
        acc_sql_done(s);
        if (rc || x->duplicate)
            return rc;
    }
    /* Another instance may take the key between the read above and the
     * insert (on one database file there is one writer, and this cannot
     * happen): the insert in a savepoint, taken before the statement is
     * bound (a failure leaves nothing bound). */
    if (x->idem_key && (rc = acc_sql_savepoint(c, "idem", err)))
        return rc;
    if (!(s = acc_sql_prepare(c, &agr_insert, err)))
        return acc_sql_failed(err);
    acc_sql_bind_text(s, a->id);
    acc_sql_bind_text(s, a->name);
    acc_sql_bind_text(s, a->initiator ? a->initiator : "anonymous");
    acc_sql_bind_text(s, acc_state_name(a->state));
    acc_sql_bind_i64(s, a->created);
    acc_sql_bind_i64(s, a->updated);
    acc_sql_bind_time(s, a->earliest);
    acc_sql_bind_time(s, a->deadline);
    acc_sql_bind_i64(s, a->duration);
    acc_sql_bind_text(s, acc_strategy_name(a->strategy));
    acc_sql_bind_text(s, acc_launch_name(a->launch));
    acc_sql_bind_text(s, x->idem_key);
    store_bind_packed(s, a->offer_xml, a->offer_len, false);
    acc_sql_bind_text(s, a->terms);
    acc_sql_bind_text(s, a->guarantees);
    acc_sql_bind_text(s, x->instance);
    acc_sql_bind_text(s, a->client);
    acc_sql_bind_text(s, x->identity);
    if (!x->idem_key)
        return acc_sql_run(s, "insert agreement", err);
    /* the key taken meanwhile: that agreement is the answer */
    rc = acc_sql_run(s, "insert agreement", err);
    if (rc != ACC_ERR_KEY_REUSED)
        return rc ? rc : acc_sql_release(c, "idem", err);
    acc_sql_rollback_to(c, "idem");
    acc_sql_release(c, "idem", NULL);
    if (!(s = acc_sql_prepare(c, &agr_by_idem, err)))
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->idem_key);
    bool row = false;
    if (!(rc = acc_sql_bound(s, "read idempotency key", err)) &&
        !(rc = acc_sql_step(s, &row, "read idempotency key", err)) && row) {
        x->duplicate = true;
        acc_sql_col_copy(s, 0, x->existing, sizeof x->existing);
    }
    acc_sql_done(s);
    return rc || row ? rc : acc_error_set(err, ACC_ERR_KEY_REUSED, "database: key reused");
}

static void create_release(void *arg)
{
    struct create_arg *x = arg;
    acc_agreement_release(&x->a);
    free(x->identity);
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
    c->client = acc_strdup(a->client);
    x->instance = from->instance;
    x->identity = acc_strdup(from->identity);
    if ((a->name && !c->name) || (a->initiator && !c->initiator) || (a->terms && !c->terms) ||
        (a->client && !c->client) || (a->guarantees && !c->guarantees) || !c->offer_xml ||
        (from->identity && !x->identity)) {
        create_release(x);
        return NULL;
    }
    return x;
}

acc_err acc_store_agreement_create(struct acc_store *st, const struct acc_agreement *a,
                                   const char *idem_key, unsigned flags, bool *duplicate,
                                   char existing[ACC_ID_LEN + 1], struct acc_error *err)
{
    static const struct store_op op = {{create_job, create_release}, create_copy};
    if (idem_key && (flags & ACC_STORE_NOWAIT))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "database: an idempotency key needs an awaited create");
    /* The job only reads the agreement; the copy (NOWAIT) owns its fields. */
    struct create_arg x = {.a = *a,
                           .idem_key = idem_key,
                           .instance = acc_store_instance(st),
                           .identity = store_identity_pack(&a->identity)};
    if ((a->identity.user || a->identity.subject) && !x.identity)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_err rc = store_write(st, &op, &x, flags, err);
    free(x.identity);
    if (rc)
        return rc;
    if (duplicate)
        *duplicate = x.duplicate;
    if (existing)
        memcpy(existing, x.existing, sizeof x.existing);
    return ACC_OK;
}

/* ----------------------------------------------------------------- settle */

acc_err store_current_state(struct acc_sql_conn *c, const char *id, enum acc_state *out,
                            struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &agr_state, &agr_state_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_err r = acc_sql_bound(s, "read state", err);
    if (r)
        return r;
    bool row;
    r = acc_sql_step(s, &row, "read state", err);
    if (!r && row) {
        const char *v = acc_sql_col_text(s, 0);
        if (!v || !acc_state_parse(v, out))
            r = acc_error_set(err, ACC_ERR_STORAGE, "agreement %s has a bad state", id);
    } else if (!r) {
        r = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    }
    acc_sql_done(s);
    return r;
}

acc_err store_write_components(struct acc_sql_conn *c, const struct acc_agreement *a,
                               struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &comp_delete, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, a->id);
    acc_err rc = acc_sql_run(s, "update allocation", err);
    for (size_t i = 0; !rc && i < a->n_comps; i++) {
        const struct acc_alloc_component *x = &a->comps[i];
        if (!(s = acc_sql_prepare(c, &comp_insert, err)))
            return acc_sql_failed(err);
        struct acc_buf args = ACC_BUF_INIT;
        for (size_t j = 0; j < x->n_args; j++)
            acc_buf_append(&args, x->args[j], strlen(x->args[j]) + 1);
        if (!acc_buf_ok(&args))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        acc_sql_bind_text(s, a->id);
        acc_sql_bind_i64(s, (int64_t)i);
        acc_sql_bind_text(s, x->name);
        acc_sql_bind_text(s, x->site);
        acc_sql_bind_i64(s, x->nodes);
        acc_sql_bind_i64(s, x->ppn);
        acc_sql_bind_text(s, x->reservation);
        acc_sql_bind_text(s, x->local_id);
        acc_sql_bind_text(s, x->node_names);
        acc_sql_bind_text(s, x->executable);
        if (x->n_args)
            acc_sql_bind_blob(s, args.data, args.len, true);
        else
            acc_sql_bind_null(s);
        acc_buf_release(&args);
        rc = acc_sql_run(s, "write allocation", err);
    }
    return rc;
}

acc_err store_write_links(struct acc_sql_conn *c, const struct acc_agreement *a,
                          struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &link_delete, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, a->id);
    acc_err rc = acc_sql_run(s, "update allocation", err);
    for (size_t i = 0; !rc && i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        if (!(s = acc_sql_prepare(c, &link_insert, err)))
            return acc_sql_failed(err);
        acc_sql_bind_text(s, a->id);
        acc_sql_bind_i64(s, (int64_t)i);
        acc_sql_bind_text(s, l->name);
        acc_sql_bind_text(s, l->from);
        acc_sql_bind_text(s, l->to);
        acc_sql_bind_text(s, l->site_a);
        acc_sql_bind_text(s, l->site_b);
        acc_sql_bind_text(s, l->link);
        acc_sql_bind_i64(s, l->bandwidth);
        acc_sql_bind_text(s, l->reservation);
        acc_sql_bind_text(s, l->local_id);
        rc = acc_sql_run(s, "write allocation", err);
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

static acc_err settle_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct settle_arg *x = arg;
    return store_agreement_settle_in(c, x->a, x->from, x->trace, x->bookings, x->n_bookings, err);
}

acc_err store_agreement_settle_in(struct acc_sql_conn *c, const struct acc_agreement *a,
                                  unsigned from, const struct acc_trace *trace,
                                  const struct acc_booking *bookings, size_t n_bookings,
                                  struct acc_error *err)
{
    struct settle_arg xs = {a, from, trace, bookings, n_bookings}, *x = &xs;
    enum acc_state cur;
    acc_err rc = store_current_state(c, a->id, &cur, err);
    if (rc)
        return rc;
    if (!(x->from & ACC_STATE_BIT(cur)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", a->id, acc_state_name(cur));

    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_settle, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, acc_state_name(a->state));
    acc_sql_bind_i64(s, a->updated);
    acc_sql_bind_time(s, a->start);
    acc_sql_bind_time(s, a->end);
    acc_sql_bind_i64(s, a->rounds);
    acc_sql_bind_i64(s, a->rollbacks);
    acc_sql_bind_text(s, a->fault_code);
    acc_sql_bind_text(s, a->reason);
    if (a->signature)
        acc_sql_bind_blob(s, a->signature, a->signature_len, false);
    else
        acc_sql_bind_null(s);
    acc_sql_bind_text(s, a->id);
    if ((rc = acc_sql_run(s, "update agreement", err)) ||
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
    static const struct store_op op = {{settle_job, NULL}, NULL};
    struct settle_arg x = {a, from, trace, bookings, n_bookings};
    return store_write(st, &op, &x, 0, err);
}

/* -------------------------------------------------------- keep signature */

struct keep_arg {
    char id[ACC_ID_LEN + 1];
    acc_time updated;
    size_t len;
    unsigned char sig[];
};

static acc_err keep_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct keep_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_keep_signature, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_blob(s, x->sig, x->len, false);
    acc_sql_bind_text(s, x->id);
    acc_sql_bind_i64(s, x->updated);
    return acc_sql_run(s, "keep the signature", err);
}

static void *keep_copy(const void *arg)
{
    const struct keep_arg *from = arg;
    struct keep_arg *x = malloc(sizeof *x + from->len);
    if (x)
        memcpy(x, from, sizeof *x + from->len);
    return x;
}

acc_err acc_store_agreement_keep_signature(struct acc_store *st, const char *id, acc_time updated,
                                           const void *sig, size_t len, struct acc_error *err)
{
    static const struct store_op op = {{keep_job, free}, keep_copy};
    struct keep_arg *x = malloc(sizeof *x + len);
    if (!x)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_strlcpy(x->id, id, sizeof x->id);
    x->updated = updated;
    x->len = len;
    memcpy(x->sig, sig, len);
    acc_err rc = store_write(st, &op, x, ACC_STORE_NOWAIT, err);
    free(x);
    return rc;
}

/* ------------------------------------------------------------- transition */

acc_err store_transition(struct acc_sql_conn *c, const char *id, unsigned from, enum acc_state to,
                         const char *reason, enum acc_state *was, struct acc_error *err)
{
    acc_err rc = store_current_state(c, id, was, err);
    if (rc)
        return rc;
    if (!(from & ACC_STATE_BIT(*was)))
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s", id, acc_state_name(*was));
    struct acc_sql_stmt *s =
        acc_sql_prepare(c, reason ? &agr_set_state_reason : &agr_set_state, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, acc_state_name(to));
    acc_sql_bind_i64(s, acc_now());
    if (reason)
        acc_sql_bind_text(s, reason);
    acc_sql_bind_text(s, id);
    return acc_sql_run(s, "update state", err);
}

struct transition_arg {
    const char *id;
    unsigned from;
    enum acc_state to;
    const char *reason;
    enum acc_state was;
};

static acc_err transition_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct transition_arg *x = arg;
    return store_transition(c, x->id, x->from, x->to, x->reason, &x->was, err);
}

acc_err acc_store_agreement_transition(struct acc_store *st, const char *id, unsigned from,
                                       enum acc_state to, const char *reason, enum acc_state *was,
                                       struct acc_error *err)
{
    static const struct store_op op = {{transition_job, NULL}, NULL};
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

static acc_err complete_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct complete_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_complete_ended, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, x->now);
    acc_sql_bind_i64(s, x->now);
    acc_err rc = acc_sql_run(s, "complete agreements", err);
    x->count = rc ? 0 : (unsigned)acc_sql_changes(c);
    return rc;
}

acc_err acc_store_agreement_complete_ended(struct acc_store *st, acc_time now, unsigned *count,
                                           struct acc_error *err)
{
    static const struct store_op op = {{complete_job, NULL}, NULL};
    struct complete_arg x = {now, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (count)
        *count = rc ? 0 : x.count;
    return rc;
}
