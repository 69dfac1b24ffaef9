/* SPDX-License-Identifier: Apache-2.0 */
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

static const struct acc_sql_query
    /* one agreement: with its kept signature (a list has no use for it) */
    agr_get = {S_AGR_GET,
               "SELECT " AGR_COLUMNS ", signature, client, identity FROM agreement WHERE id = ?"},
    agr_get_offer = {S_AGR_GET_OFFER, "SELECT offer FROM agreement WHERE id = ?"},
    agr_counts = {S_AGR_COUNTS, "SELECT state, count(*) FROM agreement GROUP BY state"},
    agr_ids = {S_AGR_IDS, "SELECT id, state FROM agreement WHERE state NOT IN "
                          "('Rejected', 'Complete', 'Terminated') OR ? ORDER BY created"},
    comp_get = {S_COMP_GET,
                "SELECT name, site, nodes, ppn, reservation, local_id, node_names, executable, "
                "args FROM allocation_component WHERE agreement = " BY_ID " ORDER BY idx"},
    link_get = {S_LINK_GET,
                "SELECT name, from_comp, to_comp, site_a, site_b, link, bandwidth, reservation, "
                "local_id FROM allocation_link WHERE agreement = " BY_ID " ORDER BY idx"};

/* ------------------------------------------------------------------- read */

/* A component's arguments: a blob of NUL-terminated strings. */
static acc_err args_decode(struct acc_sql_stmt *s, int i, char ***out, size_t *n)
{
    size_t len = 0, count = 0;
    const char *p = acc_sql_col_blob_ref(s, i, &len);
    *out = NULL;
    *n = 0;
    for (size_t k = 0; p && k < len; k++)
        count += p[k] == '\0';
    if (!count)
        return ACC_OK;
    char **v = calloc(count, sizeof *v);
    if (!v)
        return ACC_ERR_NOMEM;
    for (size_t k = 0, j = 0; j < count; j++) {
        v[j] = strdup(p + k);
        if (!v[j]) {
            for (size_t m = 0; m < j; m++)
                free(v[m]);
            free(v);
            return ACC_ERR_NOMEM;
        }
        k += strlen(p + k) + 1;
    }
    *out = v;
    *n = count;
    return ACC_OK;
}

static acc_err read_agreement_row(struct acc_sql_stmt *s, struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    acc_sql_col_copy(s, 0, a->id, sizeof a->id);
    a->name = acc_sql_col_dup(s, 1);
    a->initiator = acc_sql_col_dup(s, 2);
    const char *state = acc_sql_col_text(s, 3);
    if (acc_sql_col_lost(s, 3, state))
        return ACC_ERR_NOMEM;
    if (!state || !acc_state_parse(state, &a->state))
        a->state = ACC_STATE_REJECTED;
    a->created = acc_sql_col_i64(s, 4);
    a->updated = acc_sql_col_i64(s, 5);
    a->start = acc_sql_col_i64(s, 6);
    a->end = acc_sql_col_i64(s, 7);
    a->earliest = acc_sql_col_i64(s, 8);
    a->deadline = acc_sql_col_i64(s, 9);
    a->duration = acc_sql_col_i64(s, 10);
    const char *strategy = acc_sql_col_text(s, 11);
    if (acc_sql_col_lost(s, 11, strategy))
        return ACC_ERR_NOMEM;
    if (!strategy || !acc_strategy_parse(strategy, &a->strategy))
        a->strategy = ACC_STRATEGY_DEFAULT;
    const char *launch = acc_sql_col_text(s, 12);
    if (acc_sql_col_lost(s, 12, launch))
        return ACC_ERR_NOMEM;
    if (!launch || !acc_launch_parse(launch, &a->launch))
        a->launch = ACC_LAUNCH_NONE;
    a->rounds = (unsigned)acc_sql_col_int(s, 13);
    a->rollbacks = (unsigned)acc_sql_col_int(s, 14);
    a->fault_code = acc_sql_col_dup(s, 15);
    a->reason = acc_sql_col_dup(s, 16);
    a->terms = acc_sql_col_dup(s, 17);
    a->guarantees = acc_sql_col_dup(s, 18);
    a->version = (unsigned)acc_sql_col_int(s, 19);
    a->versions = a->version;
    a->change = acc_sql_col_dup(s, 20);
    if (acc_sql_col_lost(s, 20, a->change))
        return ACC_ERR_NOMEM;
    if (acc_sql_col_lost(s, 1, a->name) || !a->initiator ||
        acc_sql_col_lost(s, 15, a->fault_code) || acc_sql_col_lost(s, 16, a->reason) ||
        acc_sql_col_lost(s, 17, a->terms) || acc_sql_col_lost(s, 18, a->guarantees))
        return ACC_ERR_NOMEM;
    return ACC_OK;
}

/* Runs a statement keyed by an agreement id and calls row() for each row. */
static acc_err each_row(struct acc_sql_conn *c, const struct acc_sql_query *d, const char *id,
                        acc_err (*row)(struct acc_sql_stmt *s, void *ctx), void *ctx,
                        const char *what, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, d, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_err rc = acc_sql_bound(s, what, err);
    if (rc)
        return rc;
    bool more;
    while (!(rc = acc_sql_step(s, &more, what, err)) && more) {
        if ((rc = row(s, ctx))) {
            acc_sql_done(s);
            if (rc == ACC_ERR_NOMEM)
                return acc_error_set(err, rc, "out of memory");
            return acc_error_set(err, rc, "database: %s of %.40s: a damaged value", what, id);
        }
    }
    acc_sql_done(s);
    return rc;
}

static acc_err comp_row(struct acc_sql_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    void *v = realloc(a->comps, (a->n_comps + 1) * sizeof *a->comps);
    if (!v)
        return ACC_ERR_NOMEM;
    a->comps = v;
    struct acc_alloc_component *x = &a->comps[a->n_comps++];
    memset(x, 0, sizeof *x);
    x->name = acc_sql_col_dup(s, 0);
    x->site = acc_sql_col_dup(s, 1);
    x->nodes = acc_sql_col_i64(s, 2);
    x->ppn = acc_sql_col_i64(s, 3);
    x->reservation = acc_sql_col_dup(s, 4);
    x->local_id = acc_sql_col_dup(s, 5);
    x->node_names = acc_sql_col_dup(s, 6);
    x->executable = acc_sql_col_dup(s, 7);
    if (acc_sql_col_lost(s, 0, x->name) || acc_sql_col_lost(s, 1, x->site) ||
        acc_sql_col_lost(s, 4, x->reservation) || acc_sql_col_lost(s, 5, x->local_id) ||
        acc_sql_col_lost(s, 6, x->node_names) || acc_sql_col_lost(s, 7, x->executable))
        return ACC_ERR_NOMEM;
    return args_decode(s, 8, &x->args, &x->n_args);
}

static acc_err link_row(struct acc_sql_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    void *v = realloc(a->links, (a->n_links + 1) * sizeof *a->links);
    if (!v)
        return ACC_ERR_NOMEM;
    a->links = v;
    struct acc_alloc_link *x = &a->links[a->n_links++];
    memset(x, 0, sizeof *x);
    x->name = acc_sql_col_dup(s, 0);
    x->from = acc_sql_col_dup(s, 1);
    x->to = acc_sql_col_dup(s, 2);
    x->site_a = acc_sql_col_dup(s, 3);
    x->site_b = acc_sql_col_dup(s, 4);
    x->link = acc_sql_col_dup(s, 5);
    x->bandwidth = acc_sql_col_i64(s, 6);
    x->reservation = acc_sql_col_dup(s, 7);
    x->local_id = acc_sql_col_dup(s, 8);
    if (acc_sql_col_lost(s, 0, x->name) || acc_sql_col_lost(s, 1, x->from) ||
        acc_sql_col_lost(s, 2, x->to) || acc_sql_col_lost(s, 3, x->site_a) ||
        acc_sql_col_lost(s, 4, x->site_b) || acc_sql_col_lost(s, 5, x->link) ||
        acc_sql_col_lost(s, 7, x->reservation) || acc_sql_col_lost(s, 8, x->local_id))
        return ACC_ERR_NOMEM;
    return ACC_OK;
}

static acc_err offer_row(struct acc_sql_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    return store_col_unpacked(s, 0, false, &a->offer_xml, &a->offer_len);
}

static acc_err read_allocation(struct acc_sql_conn *c, struct acc_agreement *a,
                               struct acc_error *err)
{
    acc_err rc = each_row(c, &comp_get, a->id, comp_row, a, "read allocation", err);
    return rc ? rc : each_row(c, &link_get, a->id, link_row, a, "read allocation", err);
}

static acc_err get_one(struct acc_sql_conn *c, const char *id, bool with_offer,
                       struct acc_agreement *out, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_get, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_err r = acc_sql_bound(s, "read agreement", err);
    if (r)
        return r;
    bool row;
    if ((r = acc_sql_step(s, &row, "read agreement", err)) || !row) {
        acc_sql_done(s);
        return r ? r : acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    }
    r = read_agreement_row(s, out);
    if (!r) {
        char *sig = NULL;
        r = acc_sql_col_blob(s, 21, &sig, &out->signature_len);
        out->signature = (unsigned char *)sig;
        out->client = acc_sql_col_dup(s, 22);
        if (!r && acc_sql_col_lost(s, 22, out->client))
            r = ACC_ERR_NOMEM;
        if (!r)
            r = store_identity_unpack(acc_sql_col_text(s, 23), &out->identity);
    }
    acc_sql_done(s);
    if (r)
        return acc_error_set(err, r, "out of memory");
    r = read_allocation(c, out, err);
    if (r == ACC_OK && with_offer)
        r = each_row(c, &agr_get_offer, id, offer_row, out, "read offer", err);
    return r;
}

/* ---------------------------------------------------------------- versions */

static const struct acc_sql_query
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
static acc_err each_version_row(struct acc_sql_conn *c, const struct acc_sql_query *d,
                                const char *id, unsigned version,
                                acc_err (*row)(struct acc_sql_stmt *s, void *ctx), void *ctx,
                                struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, d, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_sql_bind_i64(s, version);
    acc_err rc = acc_sql_bound(s, "read version", err);
    if (rc)
        return rc;
    bool more;
    while (!(rc = acc_sql_step(s, &more, "read version", err)) && more) {
        if ((rc = row(s, ctx))) {
            acc_sql_done(s);
            return acc_error_set(err, rc, "out of memory");
        }
    }
    acc_sql_done(s);
    return rc;
}

static acc_err version_row(struct acc_sql_stmt *s, void *ctx)
{
    struct acc_agreement *a = ctx;
    a->start = acc_sql_col_i64(s, 0);
    a->end = acc_sql_col_i64(s, 1);
    a->rounds = (unsigned)acc_sql_col_int(s, 2);
    a->rollbacks = (unsigned)acc_sql_col_int(s, 3);
    a->updated = acc_sql_col_i64(s, 5);
    free(a->change);
    a->change = acc_sql_col_dup(s, 4);
    if (acc_sql_col_lost(s, 4, a->change))
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
    struct acc_sql_conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
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
    acc_sql_read_end(st->db, c);
    if (rc)
        acc_agreement_release(out);
    return rc;
}

acc_err acc_store_agreement_get(struct acc_store *st, const char *id, bool with_offer,
                                struct acc_agreement *out, struct acc_error *err)
{
    struct acc_sql_conn *c;
    memset(out, 0, sizeof *out);
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    rc = get_one(c, id, with_offer, out, err);
    acc_sql_read_end(st->db, c);
    if (rc)
        acc_agreement_release(out);
    return rc;
}

/* ------------------------------------------------------------------- list */

/* The filters a list asks for, as conditions with positional parameters
 * bound in the same order by bind_filter. */
static acc_err list_query(const struct acc_list_filter *f, bool count, char *q, size_t size,
                          struct acc_error *err)
{
    int n = snprintf(
        q, size, "SELECT %s FROM agreement WHERE 1=1%s%s%s%s%s%s %s",
        count ? "COUNT(*)" : AGR_COLUMNS, f->state ? " AND state = ?" : "",
        f->initiator ? " AND initiator = ?" : "", f->client ? " AND client = ?" : "",
        f->site ? " AND seq IN (SELECT agreement FROM allocation_component WHERE site = ?)" : "",
        f->from ? " AND end_time > ?" : "", f->until ? " AND start_time < ?" : "",
        count ? "" : "ORDER BY created DESC, seq DESC LIMIT ? OFFSET ?");
    if (n < 0 || (size_t)n >= size)
        return acc_error_set(err, ACC_ERR_INTERNAL, "list query too long");
    return ACC_OK;
}

static void bind_filter(struct acc_sql_stmt *s, const struct acc_list_filter *f, bool count)
{
    if (f->state)
        acc_sql_bind_text(s, f->state);
    if (f->initiator)
        acc_sql_bind_text(s, f->initiator);
    if (f->client)
        acc_sql_bind_text(s, f->client);
    if (f->site)
        acc_sql_bind_text(s, f->site);
    if (f->from)
        acc_sql_bind_i64(s, f->from);
    if (f->until)
        acc_sql_bind_i64(s, f->until);
    if (count)
        return;
    acc_sql_bind_i64(s, f->limit ? f->limit : 100);
    acc_sql_bind_i64(s, f->offset);
}

/* How many agreements match the filter, on every page together: read in
 * the transaction of the page, so that the two agree. */
static acc_err list_total(struct acc_sql_conn *c, const struct acc_list_filter *f, size_t *total,
                          struct acc_error *err)
{
    char q[1024];
    struct acc_sql_stmt *s = NULL;
    bool row = false;
    acc_err rc = list_query(f, true, q, sizeof q, err);
    if (!rc)
        rc = acc_sql_prepare_once(c, q, &s, err);
    if (!rc) {
        bind_filter(s, f, true);
        rc = acc_sql_bound(s, "count agreements", err);
    }
    if (!rc)
        rc = acc_sql_step(s, &row, "count agreements", err);
    if (!rc && row)
        *total = (size_t)acc_sql_col_i64(s, 0);
    acc_sql_finalize(s);
    return rc;
}

acc_err acc_store_agreement_list(struct acc_store *st, const struct acc_list_filter *f,
                                 struct acc_agreement_list *out, struct acc_error *err)
{
    char q[1024];
    acc_err rc = list_query(f, false, q, sizeof q, err);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    struct acc_sql_conn *c;
    if ((rc = acc_sql_read_begin(st->db, &c, err)))
        return rc;
    struct acc_sql_stmt *s = NULL;
    if ((rc = list_total(c, f, &out->total, err)))
        goto out;
    if ((rc = acc_sql_prepare_once(c, q, &s, err)))
        goto out;
    bind_filter(s, f, false);
    if ((rc = acc_sql_bound(s, "list agreements", err)))
        goto out;
    bool row;
    while (!(rc = acc_sql_step(s, &row, "list agreements", err)) && row) {
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
out:
    acc_sql_finalize(s);
    acc_sql_read_end(st->db, c);
    if (rc)
        acc_agreement_list_release(out);
    return rc;
}

acc_err acc_store_agreement_ids(struct acc_store *st, unsigned states, char (**ids)[ACC_ID_LEN + 1],
                                size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_ids, err);
    if (!s) {
        rc = acc_sql_failed(err);
        goto out;
    }
    /* Final states are many and rarely wanted: scan them only when asked. */
    unsigned finals = ACC_STATE_BIT(ACC_STATE_REJECTED) | ACC_STATE_BIT(ACC_STATE_COMPLETE) |
                      ACC_STATE_BIT(ACC_STATE_TERMINATED);
    acc_sql_bind_i64(s, (states & finals) != 0);
    if ((rc = acc_sql_bound(s, "list ids", err)))
        goto out;
    bool row;
    while (!(rc = acc_sql_step(s, &row, "list ids", err)) && row) {
        enum acc_state st_;
        const char *v = acc_sql_col_text(s, 1);
        if (!v || !acc_state_parse(v, &st_) || !(states & ACC_STATE_BIT(st_)))
            continue;
        void *p = realloc(*ids, (*n + 1) * sizeof **ids);
        if (!p) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        *ids = p;
        acc_sql_col_copy(s, 0, (*ids)[*n], ACC_ID_LEN + 1);
        (*n)++;
    }
out:
    acc_sql_done(s);
    acc_sql_read_end(st->db, c);
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
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &agr_counts, err);
    if (!s) {
        acc_sql_reader_give(st->db, c);
        return acc_sql_failed(err);
    }
    bool row;
    while (!(rc = acc_sql_step(s, &row, "count agreements", err)) && row) {
        enum acc_state x;
        const char *v = acc_sql_col_text(s, 0);
        if (v && acc_state_parse(v, &x))
            counts[x] = (uint64_t)acc_sql_col_i64(s, 1);
    }
    acc_sql_done(s);
    acc_sql_reader_give(st->db, c);
    return rc;
}
