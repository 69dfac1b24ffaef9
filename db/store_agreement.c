/* store_agreement.c - agreements: create, read, settle, move between states,
 * list, count, and complete those whose reservation ended. */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/common/buf.h"
#include "../server/common/strutil.h"
#include "store_internal.h"

#define AGR_COLUMNS                                                                            \
    "id, name, initiator, state, created, updated, start_time, end_time, earliest, deadline, " \
    "duration, strategy, launch, rounds, rollbacks, fault_code, reason, terms, guarantees"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct stmt_def
    agr_insert = {S_AGR_INSERT,
                  "INSERT INTO agreement (id, name, initiator, state, created, updated, "
                  "earliest, deadline, duration, strategy, launch, idem_key, offer, terms, "
                  "guarantees) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
    agr_by_idem = {S_AGR_BY_IDEM, "SELECT id FROM agreement WHERE idem_key = ?"},
    agr_get = {S_AGR_GET, "SELECT " AGR_COLUMNS " FROM agreement WHERE id = ?"},
    agr_get_offer = {S_AGR_GET_OFFER, "SELECT offer FROM agreement WHERE id = ?"},
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
    agr_counts = {S_AGR_COUNTS, "SELECT state, count(*) FROM agreement GROUP BY state"},
    comp_delete = {S_COMP_DELETE, "DELETE FROM allocation_component WHERE agreement = " BY_ID},
    comp_insert = {S_COMP_INSERT,
                   "INSERT INTO allocation_component (agreement, idx, name, site, nodes, ppn, "
                   "reservation, local_id, node_names, executable, args) "
                   "VALUES (" BY_ID ", ?,?,?,?,?,?,?,?,?,?)"},
    comp_get = {S_COMP_GET,
                "SELECT name, site, nodes, ppn, reservation, local_id, node_names, executable, "
                "args FROM allocation_component WHERE agreement = " BY_ID " ORDER BY idx"},
    link_delete = {S_LINK_DELETE, "DELETE FROM allocation_link WHERE agreement = " BY_ID},
    link_insert = {S_LINK_INSERT,
                   "INSERT INTO allocation_link (agreement, idx, name, from_comp, to_comp, "
                   "site_a, site_b, link, bandwidth, reservation, local_id) "
                   "VALUES (" BY_ID ", ?,?,?,?,?,?,?,?,?,?)"},
    link_get = {S_LINK_GET,
                "SELECT name, from_comp, to_comp, site_a, site_b, link, bandwidth, reservation, "
                "local_id FROM allocation_link WHERE agreement = " BY_ID " ORDER BY idx"};

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

/* ------------------------------------------------------------------- read */

static acc_err read_agreement_row(sqlite3_stmt *s, struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    store_col_copy(s, 0, a->id, sizeof a->id);
    a->name = store_col_dup(s, 1);
    a->initiator = store_col_dup(s, 2);
    const char *state = (const char *)sqlite3_column_text(s, 3);
    if (!state || !acc_state_parse(state, &a->state))
        a->state = ACC_STATE_REJECTED;
    a->created = sqlite3_column_int64(s, 4);
    a->updated = sqlite3_column_int64(s, 5);
    a->start = sqlite3_column_int64(s, 6);
    a->end = sqlite3_column_int64(s, 7);
    a->earliest = sqlite3_column_int64(s, 8);
    a->deadline = sqlite3_column_int64(s, 9);
    a->duration = sqlite3_column_int64(s, 10);
    const char *strategy = (const char *)sqlite3_column_text(s, 11);
    if (!strategy || !acc_strategy_parse(strategy, &a->strategy))
        a->strategy = ACC_STRATEGY_DEFAULT;
    const char *launch = (const char *)sqlite3_column_text(s, 12);
    if (!launch || !acc_launch_parse(launch, &a->launch))
        a->launch = ACC_LAUNCH_NONE;
    a->rounds = (unsigned)sqlite3_column_int(s, 13);
    a->rollbacks = (unsigned)sqlite3_column_int(s, 14);
    a->fault_code = store_col_dup(s, 15);
    a->reason = store_col_dup(s, 16);
    a->terms = store_col_dup(s, 17);
    a->guarantees = store_col_dup(s, 18);
    if ((sqlite3_column_type(s, 1) != SQLITE_NULL && !a->name) || !a->initiator)
        return ACC_ERR_NOMEM;
    return ACC_OK;
}

/* Runs a statement keyed by an agreement id and calls row() for each row. */
static acc_err each_row(struct conn *c, const struct stmt_def *d, const char *id,
                        acc_err (*row)(sqlite3_stmt *s, void *ctx), void *ctx, const char *what,
                        struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, d, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    acc_err rc = store_bound(c, &b, what, err);
    if (rc)
        return rc;
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        if ((rc = row(s, ctx))) {
            store_done(s);
            return acc_error_set(err, rc, "out of memory");
        }
    }
    store_done(s);
    return step == SQLITE_DONE ? ACC_OK : store_db_error(c->db, err, what);
}

static acc_err comp_row(sqlite3_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    void *v = realloc(a->comps, (a->n_comps + 1) * sizeof *a->comps);
    if (!v)
        return ACC_ERR_NOMEM;
    a->comps = v;
    struct acc_alloc_component *x = &a->comps[a->n_comps++];
    memset(x, 0, sizeof *x);
    x->name = store_col_dup(s, 0);
    x->site = store_col_dup(s, 1);
    x->nodes = sqlite3_column_int64(s, 2);
    x->ppn = sqlite3_column_int64(s, 3);
    x->reservation = store_col_dup(s, 4);
    x->local_id = store_col_dup(s, 5);
    x->node_names = store_col_dup(s, 6);
    x->executable = store_col_dup(s, 7);
    return store_args_decode(s, 8, &x->args, &x->n_args);
}

static acc_err link_row(sqlite3_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    void *v = realloc(a->links, (a->n_links + 1) * sizeof *a->links);
    if (!v)
        return ACC_ERR_NOMEM;
    a->links = v;
    struct acc_alloc_link *x = &a->links[a->n_links++];
    memset(x, 0, sizeof *x);
    x->name = store_col_dup(s, 0);
    x->from = store_col_dup(s, 1);
    x->to = store_col_dup(s, 2);
    x->site_a = store_col_dup(s, 3);
    x->site_b = store_col_dup(s, 4);
    x->link = store_col_dup(s, 5);
    x->bandwidth = sqlite3_column_int64(s, 6);
    x->reservation = store_col_dup(s, 7);
    x->local_id = store_col_dup(s, 8);
    return ACC_OK;
}

static acc_err offer_row(sqlite3_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    return store_col_blob(s, 0, &a->offer_xml, &a->offer_len);
}

static acc_err read_allocation(struct conn *c, struct acc_agreement *a, struct acc_error *err)
{
    acc_err rc = each_row(c, &comp_get, a->id, comp_row, a, "read allocation", err);
    return rc ? rc : each_row(c, &link_get, a->id, link_row, a, "read allocation", err);
}

static acc_err get_one(struct conn *c, const char *id, bool with_offer, struct acc_agreement *out,
                       struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &agr_get, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    acc_err r = store_bound(c, &b, "read agreement", err);
    if (r)
        return r;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        store_done(s);
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    }
    if (rc != SQLITE_ROW) {
        store_done(s);
        return store_db_error(c->db, err, "read agreement");
    }
    r = read_agreement_row(s, out);
    store_done(s);
    if (r)
        return acc_error_set(err, r, "out of memory");
    r = read_allocation(c, out, err);
    if (r == ACC_OK && with_offer)
        r = each_row(c, &agr_get_offer, id, offer_row, out, "read offer", err);
    return r;
}

acc_err acc_store_agreement_get(struct acc_store *st, const char *id, bool with_offer,
                                struct acc_agreement *out, struct acc_error *err)
{
    struct conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    rc = get_one(c, id, with_offer, out, err);
    store_read_end(st, c);
    if (rc)
        acc_agreement_release(out);
    return rc;
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

static acc_err write_components(struct conn *c, const struct acc_agreement *a,
                                struct acc_error *err)
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

static acc_err write_links(struct conn *c, const struct acc_agreement *a, struct acc_error *err)
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
    const struct acc_agreement *a = x->a;
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
        (rc = write_components(c, a, err)) || (rc = write_links(c, a, err)) ||
        (rc = store_trace_put(c, a->id, x->trace, err)))
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

/* ------------------------------------------------------------------- list */

acc_err acc_store_agreement_list(struct acc_store *st, const struct acc_list_filter *f,
                                 struct acc_agreement_list *out, struct acc_error *err)
{
    char q[1024];
    int n = snprintf(
        q, sizeof q,
        "SELECT " AGR_COLUMNS " FROM agreement WHERE 1=1%s%s%s%s%s "
        "ORDER BY created DESC, rowid DESC LIMIT :limit OFFSET :offset",
        f->state ? " AND state = :state" : "", f->initiator ? " AND initiator = :initiator" : "",
        f->site ? " AND seq IN (SELECT agreement FROM allocation_component "
                  "WHERE site = :site)"
                : "",
        f->from ? " AND end_time > :from" : "", f->until ? " AND start_time < :until" : "");
    if (n < 0 || (size_t)n >= sizeof q)
        return acc_error_set(err, ACC_ERR_INTERNAL, "list query too long");
    memset(out, 0, sizeof *out);

    struct conn *c;
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c->db, q, -1, &s, NULL) != SQLITE_OK) {
        rc = store_db_error(c->db, err, "list agreements");
        goto out;
    }
    struct store_bind b = STORE_BIND(s);
    if (f->state)
        store_bind_named_text(&b, ":state", f->state);
    if (f->initiator)
        store_bind_named_text(&b, ":initiator", f->initiator);
    if (f->site)
        store_bind_named_text(&b, ":site", f->site);
    if (f->from)
        store_bind_named_i64(&b, ":from", f->from);
    if (f->until)
        store_bind_named_i64(&b, ":until", f->until);
    store_bind_named_i64(&b, ":limit", f->limit ? f->limit : 100);
    store_bind_named_i64(&b, ":offset", f->offset);
    if ((rc = store_bound(c, &b, "list agreements", err)))
        goto out;

    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        void *v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        out->v = v;
        struct acc_agreement *a = &out->v[out->n++];
        if (read_agreement_row(s, a)) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = read_allocation(c, a, err)))
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = store_db_error(c->db, err, "list agreements");
out:
    sqlite3_finalize(s);
    store_read_end(st, c);
    if (rc)
        acc_agreement_list_release(out);
    return rc;
}

acc_err acc_store_agreement_ids(struct acc_store *st, unsigned states, char (**ids)[ACC_ID_LEN + 1],
                                size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct conn *c;
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT id, state FROM agreement WHERE state NOT IN "
                           "('Rejected', 'Complete', 'Terminated') OR ? ORDER BY created",
                           -1, &s, NULL) != SQLITE_OK) {
        rc = store_db_error(c->db, err, "list ids");
        goto out;
    }
    /* Final states are many and rarely wanted: scan them only when asked. */
    unsigned finals = ACC_STATE_BIT(ACC_STATE_REJECTED) | ACC_STATE_BIT(ACC_STATE_COMPLETE) |
                      ACC_STATE_BIT(ACC_STATE_TERMINATED);
    struct store_bind b = STORE_BIND(s);
    store_bind_i64(&b, (states & finals) != 0);
    if ((rc = store_bound(c, &b, "list ids", err)))
        goto out;
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        enum acc_state st_;
        const char *v = (const char *)sqlite3_column_text(s, 1);
        if (!v || !acc_state_parse(v, &st_) || !(states & ACC_STATE_BIT(st_)))
            continue;
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        *ids = p;
        store_col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
    if (step != SQLITE_DONE)
        rc = store_db_error(c->db, err, "list ids");
out:
    sqlite3_finalize(s);
    store_read_end(st, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
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

acc_err acc_store_agreement_counts(struct acc_store *st, uint64_t *counts, struct acc_error *err)
{
    memset(counts, 0, ACC_STATE__COUNT * sizeof *counts);
    struct conn *c;
    acc_err rc = store_reader_take(st, &c, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store_stmt(c, &agr_counts, err);
    if (!s) {
        store_reader_give(st, c);
        return ACC_ERR_STORAGE;
    }
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        enum acc_state x;
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (v && acc_state_parse(v, &x))
            counts[x] = (uint64_t)sqlite3_column_int64(s, 1);
    }
    if (step != SQLITE_DONE)
        rc = store_db_error(c->db, err, "count agreements");
    store_done(s);
    store_reader_give(st, c);
    return rc;
}
