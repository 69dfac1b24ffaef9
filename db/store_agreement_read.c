/* store_agreement_read.c - agreements read back: one with its allocation
 * (and offer), lists with filters, ids by state, counts per state. */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define AGR_COLUMNS                                                                            \
    "id, name, initiator, state, created, updated, start_time, end_time, earliest, deadline, " \
    "duration, strategy, launch, rounds, rollbacks, fault_code, reason, terms, guarantees, "   \
    "version, change"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct stmt_def
    agr_get = {S_AGR_GET, "SELECT " AGR_COLUMNS " FROM agreement WHERE id = ?"},
    agr_get_offer = {S_AGR_GET_OFFER, "SELECT offer FROM agreement WHERE id = ?"},
    agr_counts = {S_AGR_COUNTS, "SELECT state, count(*) FROM agreement GROUP BY state"},
    comp_get = {S_COMP_GET,
                "SELECT name, site, nodes, ppn, reservation, local_id, node_names, executable, "
                "args FROM allocation_component WHERE agreement = " BY_ID " ORDER BY idx"},
    link_get = {S_LINK_GET,
                "SELECT name, from_comp, to_comp, site_a, site_b, link, bandwidth, reservation, "
                "local_id FROM allocation_link WHERE agreement = " BY_ID " ORDER BY idx"};

/* ------------------------------------------------------------------- read */

static acc_err read_agreement_row(sqlite3_stmt *s, struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    store_col_copy(s, 0, a->id, sizeof a->id);
    a->name = store_col_dup(s, 1);
    a->initiator = store_col_dup(s, 2);
    const char *state = (const char *)sqlite3_column_text(s, 3);
    if (store_col_lost(s, 3, state))
        return ACC_ERR_NOMEM;
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
    if (store_col_lost(s, 11, strategy))
        return ACC_ERR_NOMEM;
    if (!strategy || !acc_strategy_parse(strategy, &a->strategy))
        a->strategy = ACC_STRATEGY_DEFAULT;
    const char *launch = (const char *)sqlite3_column_text(s, 12);
    if (store_col_lost(s, 12, launch))
        return ACC_ERR_NOMEM;
    if (!launch || !acc_launch_parse(launch, &a->launch))
        a->launch = ACC_LAUNCH_NONE;
    a->rounds = (unsigned)sqlite3_column_int(s, 13);
    a->rollbacks = (unsigned)sqlite3_column_int(s, 14);
    a->fault_code = store_col_dup(s, 15);
    a->reason = store_col_dup(s, 16);
    a->terms = store_col_dup(s, 17);
    a->guarantees = store_col_dup(s, 18);
    a->version = (unsigned)sqlite3_column_int(s, 19);
    a->versions = a->version;
    a->change = store_col_dup(s, 20);
    if (store_col_lost(s, 20, a->change))
        return ACC_ERR_NOMEM;
    if (store_col_lost(s, 1, a->name) || !a->initiator || store_col_lost(s, 15, a->fault_code) ||
        store_col_lost(s, 16, a->reason) || store_col_lost(s, 17, a->terms) ||
        store_col_lost(s, 18, a->guarantees))
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
    if (store_col_lost(s, 0, x->name) || store_col_lost(s, 1, x->site) ||
        store_col_lost(s, 4, x->reservation) || store_col_lost(s, 5, x->local_id) ||
        store_col_lost(s, 6, x->node_names) || store_col_lost(s, 7, x->executable))
        return ACC_ERR_NOMEM;
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
    if (store_col_lost(s, 0, x->name) || store_col_lost(s, 1, x->from) ||
        store_col_lost(s, 2, x->to) || store_col_lost(s, 3, x->site_a) ||
        store_col_lost(s, 4, x->site_b) || store_col_lost(s, 5, x->link) ||
        store_col_lost(s, 7, x->reservation) || store_col_lost(s, 8, x->local_id))
        return ACC_ERR_NOMEM;
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

/* ---------------------------------------------------------------- versions */

static const struct stmt_def
    ver_get = {S_VER_GET, "SELECT start_time, end_time, rounds, rollbacks, change, replaced FROM "
                          "agreement_version WHERE agreement = " BY_ID " AND version = ?"},
    ver_comp_get = {S_VER_COMP_GET,
                    "SELECT name, site, nodes, ppn, reservation, local_id, node_names, executable, "
                    "args FROM version_component WHERE agreement = " BY_ID
                    " AND version = ?2 ORDER BY idx"},
    ver_link_get = {S_VER_LINK_GET,
                    "SELECT name, from_comp, to_comp, site_a, site_b, link, bandwidth, "
                    "reservation, local_id FROM version_link WHERE agreement = " BY_ID
                    " AND version = ?2 ORDER BY idx"};

/* Like each_row with the version as the second parameter. */
static acc_err each_version_row(struct conn *c, const struct stmt_def *d, const char *id,
                                unsigned version, acc_err (*row)(sqlite3_stmt *s, void *ctx),
                                void *ctx, struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, d, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    store_bind_i64(&b, version);
    acc_err rc = store_bound(c, &b, "read version", err);
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
    return step == SQLITE_DONE ? ACC_OK : store_db_error(c->db, err, "read version");
}

static acc_err version_row(sqlite3_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    a->start = sqlite3_column_int64(s, 0);
    a->end = sqlite3_column_int64(s, 1);
    a->rounds = (unsigned)sqlite3_column_int(s, 2);
    a->rollbacks = (unsigned)sqlite3_column_int(s, 3);
    a->updated = sqlite3_column_int64(s, 5);
    free(a->change);
    a->change = store_col_dup(s, 4);
    if (store_col_lost(s, 4, a->change))
        return ACC_ERR_NOMEM;
    a->version = 0; /* found */
    return ACC_OK;
}

static void drop_allocation(struct acc_agreement *a)
{
    struct acc_agreement tmp = {0};
    tmp.comps = a->comps;
    tmp.n_comps = a->n_comps;
    tmp.links = a->links;
    tmp.n_links = a->n_links;
    acc_agreement_release(&tmp);
    a->comps = NULL;
    a->links = NULL;
    a->n_comps = a->n_links = 0;
}

acc_err acc_store_agreement_get_version(struct acc_store *st, const char *id, unsigned version,
                                        bool with_offer, struct acc_agreement *out,
                                        struct acc_error *err)
{
    struct conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = store_read_begin(st, &c, err);
    if (rc)
        return rc;
    rc = get_one(c, id, with_offer, out, err);
    unsigned current = out->version;
    if (!rc && version && version != current) {
        out->version = version;
        rc = each_version_row(c, &ver_get, id, version, version_row, out, err);
        if (!rc && out->version == version)
            rc = acc_error_set(err, ACC_ERR_NOT_FOUND,
                               "agreement %s has no version %u; its versions are 1 to %u", id,
                               version, current);
        if (!rc) {
            out->version = version;
            out->versions = current;
            drop_allocation(out);
            rc = each_version_row(c, &ver_comp_get, id, version, comp_row, out, err);
        }
        if (!rc)
            rc = each_version_row(c, &ver_link_get, id, version, link_row, out, err);
    }
    store_read_end(st, c);
    if (rc)
        acc_agreement_release(out);
    return rc;
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
