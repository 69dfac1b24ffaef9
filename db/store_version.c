/* SPDX-License-Identifier: Apache-2.0 */
/* store_version.c - versions of an agreement: marking a modification,
 * committing it as a new version (the old one kept as it was), clearing the
 * marks at start-up.  Reading a version: store_agreement_read.c. */
#include "store.h"

#include <string.h>

#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct acc_sql_query
    ver_state = {S_VER_STATE, "SELECT state, version, modifying FROM agreement WHERE id = ?"},
    /* PostgreSQL: locked to the transaction's end (store_agreement.c) */
    ver_state_pg =
        {S_VER_STATE,
         "SELECT state, version, modifying FROM agreement WHERE id = ? FOR NO KEY UPDATE"},
    /* the mark is the modification's own number and names the instance
     * that modifies (several instances: the leader clears the marks of dead
     * ones, acc_store_modify_orphans) */
    ver_flag =
        {S_VER_FLAG,
         "UPDATE agreement SET modifying = ?, instance = coalesce(?, instance) WHERE id = ?"},
    /* a mark cleared by the modification that set it, and only that one */
    ver_unflag = {S_VER_UNFLAG,
                  "UPDATE agreement SET modifying = 0 WHERE id = ? AND modifying = ?"},
    ver_snapshot =
        {S_VER_SNAPSHOT,
         "INSERT INTO agreement_version (agreement, version, created, replaced, "
         "start_time, end_time, rounds, rollbacks, change) "
         "SELECT seq, version, coalesce((SELECT max(v.replaced) FROM agreement_version v "
         "WHERE v.agreement = agreement.seq), created), ?2, start_time, end_time, rounds, "
         "rollbacks, "
         "change FROM agreement WHERE id = ?1"},
    ver_snap_comp = {S_VER_SNAP_COMP,
                     "INSERT INTO version_component (agreement, version, idx, name, site, nodes, "
                     "ppn, reservation, local_id, node_names, executable, args) "
                     "SELECT agreement, ?2, idx, name, site, nodes, ppn, reservation, local_id, "
                     "node_names, executable, args FROM allocation_component "
                     "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?1)"},
    ver_snap_link = {S_VER_SNAP_LINK,
                     "INSERT INTO version_link (agreement, version, idx, name, from_comp, "
                     "to_comp, site_a, site_b, link, bandwidth, reservation, local_id) "
                     "SELECT agreement, ?2, idx, name, from_comp, to_comp, site_a, site_b, link, "
                     "bandwidth, reservation, local_id FROM allocation_link "
                     "WHERE agreement = (SELECT seq FROM agreement WHERE id = ?1)"},
    ver_bump = {S_VER_BUMP, "UPDATE agreement SET version = version + 1, modifying = 0, "
                            "updated = ?, start_time = ?, end_time = ?, rounds = ?, "
                            "rollbacks = ?, change = ?, signature = ? WHERE id = ?"},
    /* ?2: the version a modification would have made */
    ver_outcome = {S_VER_OUTCOME,
                   "SELECT a.version, a.modifying, CASE WHEN a.version = ?2 THEN a.change ELSE "
                   "(SELECT v.change FROM agreement_version v WHERE v.agreement = a.seq AND "
                   "v.version = ?2) END FROM agreement a WHERE a.id = ?1"},
    ver_recover = {S_VER_RECOVER, "UPDATE agreement SET modifying = 0 WHERE modifying != 0"};

/* The state, version and mark of an agreement inside the writer's
 * transaction. */
static acc_err read_mark(struct acc_sql_conn *c, const char *id, enum acc_state *state,
                         unsigned *version, int64_t *modifying, struct acc_error *err)
{
    *version = 0;
    *modifying = 0;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &ver_state, &ver_state_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_err rc = acc_sql_bound(s, "read version", err);
    if (rc)
        return rc;
    bool row;
    rc = acc_sql_step(s, &row, "read version", err);
    if (!rc && row) {
        const char *v = acc_sql_col_text(s, 0);
        if (!v || !acc_state_parse(v, state))
            rc = acc_error_set(err, ACC_ERR_STORAGE, "agreement %s has a bad state", id);
        *version = (unsigned)acc_sql_col_i64(s, 1);
        *modifying = acc_sql_col_i64(s, 2);
    } else if (!rc) {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    }
    acc_sql_done(s);
    return rc;
}

static acc_err set_mark(struct acc_sql_conn *c, const char *id, int64_t mark, const char *instance,
                        struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ver_flag, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, mark);
    acc_sql_bind_text(s, instance);
    acc_sql_bind_text(s, id);
    return acc_sql_run(s, "mark modification", err);
}

struct begin_arg {
    const char *id, *instance;
    int64_t mark;
    unsigned version;
};

static acc_err begin_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct begin_arg *x = arg;
    enum acc_state st;
    int64_t modifying;
    acc_err rc = read_mark(c, x->id, &st, &x->version, &modifying, err);
    if (rc)
        return rc;
    if (st != ACC_STATE_OBSERVED)
        return acc_error_set(err, ACC_ERR_STATE,
                             "agreement %s is %s; only an Observed agreement can be modified",
                             x->id, acc_state_name(st));
    if (modifying)
        return acc_error_set(err, ACC_ERR_STATE,
                             "agreement %s is being modified by another request; try again "
                             "when it is done",
                             x->id);
    return set_mark(c, x->id, x->mark, x->instance, err);
}

acc_err acc_store_modify_begin(struct acc_store *st, const char *id, int64_t mark,
                               unsigned *version, struct acc_error *err)
{
    static const struct store_op op = {{begin_job, NULL}, NULL};
    if (mark <= 0 || mark > INT32_MAX)
        return acc_error_set(err, ACC_ERR_INTERNAL, "modification mark %lld out of range",
                             (long long)mark);
    struct begin_arg x = {id, acc_store_instance(st), mark, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (!rc)
        *version = x.version;
    return rc;
}

struct unmark_arg {
    const char *id;
    int64_t mark;
    bool cleared;
};

static acc_err unmark_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct unmark_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ver_unflag, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->id);
    acc_sql_bind_i64(s, x->mark);
    acc_err rc = acc_sql_run(s, "clear modification mark", err);
    x->cleared = !rc && acc_sql_changes(c) > 0;
    return rc;
}

acc_err acc_store_modify_abort(struct acc_store *st, const char *id, int64_t mark, bool *cleared,
                               struct acc_error *err)
{
    static const struct store_op op = {{unmark_job, NULL}, NULL};
    struct unmark_arg x = {id, mark, false};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (cleared)
        *cleared = x.cleared;
    return rc;
}

struct commit_arg {
    const struct acc_agreement *a;
    unsigned version;
    int64_t mark;
    const char *change;
    const struct acc_trace *trace;
    const struct acc_booking *bookings;
    size_t n_bookings;
};

/* Runs a snapshot statement (?1 the id, ?2 the version or time). */
static acc_err snapshot(struct acc_sql_conn *c, const struct acc_sql_query *d, const char *id,
                        int64_t v, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, d, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_sql_bind_i64(s, v);
    return acc_sql_run(s, "keep the version", err);
}

static acc_err commit_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct commit_arg *x = arg;
    const struct acc_agreement *a = x->a;
    enum acc_state st;
    unsigned version;
    int64_t modifying;
    acc_err rc = read_mark(c, a->id, &st, &version, &modifying, err);
    if (rc)
        return rc;
    if (st != ACC_STATE_OBSERVED || modifying != x->mark || version != x->version)
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s (version %u)", a->id,
                             acc_state_name(st), version);
    if ((rc = snapshot(c, &ver_snapshot, a->id, a->updated, err)) ||
        (rc = snapshot(c, &ver_snap_comp, a->id, version, err)) ||
        (rc = snapshot(c, &ver_snap_link, a->id, version, err)))
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ver_bump, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, a->updated);
    acc_sql_bind_time(s, a->start);
    acc_sql_bind_time(s, a->end);
    acc_sql_bind_i64(s, a->rounds);
    acc_sql_bind_i64(s, a->rollbacks);
    acc_sql_bind_text(s, x->change);
    if (a->signature)
        acc_sql_bind_blob(s, a->signature, a->signature_len, false);
    else
        acc_sql_bind_null(s);
    acc_sql_bind_text(s, a->id);
    if ((rc = acc_sql_run(s, "write the new version", err)) ||
        (rc = store_write_components(c, a, err)) || (rc = store_write_links(c, a, err)) ||
        (rc = store_trace_put(c, a->id, x->trace, version + 1, err)))
        return rc;
    for (size_t i = 0; i < x->n_bookings; i++) {
        if ((rc = store_journal_put_one(c, &x->bookings[i], a->updated, err)))
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_modify_commit(struct acc_store *st, const struct acc_agreement *a,
                                unsigned version, int64_t mark, const char *change,
                                const struct acc_trace *trace, const struct acc_booking *bookings,
                                size_t n_bookings, struct acc_error *err)
{
    static const struct store_op op = {{commit_job, NULL}, NULL};
    struct commit_arg x = {a, version, mark, change, trace, bookings, n_bookings};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_modify_outcome(struct acc_store *st, const char *id, unsigned version,
                                 int64_t mark, const char *change, bool *committed,
                                 struct acc_error *err)
{
    *committed = false;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ver_outcome, err);
    bool row = false;
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        acc_sql_bind_text(s, id);
        acc_sql_bind_i64(s, (int64_t)version + 1);
        if (!(rc = acc_sql_bound(s, "read the outcome of a modification", err)))
            rc = acc_sql_step(s, &row, "read the outcome of a modification", err);
    }
    if (!rc && !row) {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    } else if (!rc) {
        /* still marked by it: not made; made: that version, its change */
        const char *made = acc_sql_col_text(s, 2);
        *committed = acc_sql_col_i64(s, 1) != mark && acc_sql_col_i64(s, 0) > (int64_t)version &&
                     made && change && strcmp(made, change) == 0;
    }
    if (s)
        acc_sql_done(s);
    acc_sql_read_end(st->db, c);
    return rc;
}

static acc_err recover_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    (void)arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &ver_recover, err);
    if (!s)
        return acc_sql_failed(err);
    return acc_sql_run(s, "clear modification marks", err);
}

acc_err acc_store_modify_recover(struct acc_store *st, struct acc_error *err)
{
    static const struct store_op op = {{recover_job, NULL}, NULL};
    return store_write(st, &op, NULL, 0, err);
}
