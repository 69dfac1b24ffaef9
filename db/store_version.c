/* store_version.c - versions of an agreement: marking a modification,
 * committing it as a new version (the old one kept as it was), clearing the
 * marks at start-up.  Reading a version: store_agreement_read.c. */
#include "store.h"

#include <string.h>

#include "store_internal.h"

#define BY_ID "(SELECT seq FROM agreement WHERE id = ?)"

static const struct stmt_def
    ver_state = {S_VER_STATE, "SELECT state, version, modifying FROM agreement WHERE id = ?"},
    ver_flag = {S_VER_FLAG, "UPDATE agreement SET modifying = ? WHERE id = ?"},
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
                            "rollbacks = ?, change = ? WHERE id = ?"},
    ver_recover = {S_VER_RECOVER, "UPDATE agreement SET modifying = 0 WHERE modifying != 0"};

/* The state, version and mark of an agreement inside the writer's
 * transaction. */
static acc_err read_mark(struct conn *c, const char *id, enum acc_state *state, unsigned *version,
                         bool *modifying, struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &ver_state, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    acc_err rc = store_bound(c, &b, "read version", err);
    if (rc)
        return rc;
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (!v || !acc_state_parse(v, state))
            rc = acc_error_set(err, ACC_ERR_STORAGE, "agreement %s has a bad state", id);
        *version = (unsigned)sqlite3_column_int64(s, 1);
        *modifying = sqlite3_column_int64(s, 2) != 0;
    } else if (step == SQLITE_DONE) {
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    } else {
        rc = store_db_error(c->db, err, "read version");
    }
    store_done(s);
    return rc;
}

static acc_err set_mark(struct conn *c, const char *id, bool on, struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, &ver_flag, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_i64(&b, on);
    store_bind_text(&b, id);
    return store_bind_step(c, &b, "mark modification", err);
}

struct begin_arg {
    const char *id;
    unsigned version;
};

static acc_err begin_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct begin_arg *x = arg;
    enum acc_state st;
    bool modifying;
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
    return set_mark(c, x->id, true, err);
}

acc_err acc_store_modify_begin(struct acc_store *st, const char *id, unsigned *version,
                               struct acc_error *err)
{
    static const struct store_op op = {begin_job, NULL, NULL};
    struct begin_arg x = {id, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (!rc)
        *version = x.version;
    return rc;
}

static acc_err abort_job(struct conn *c, void *arg, struct acc_error *err)
{
    return set_mark(c, arg, false, err);
}

acc_err acc_store_modify_abort(struct acc_store *st, const char *id, struct acc_error *err)
{
    static const struct store_op op = {abort_job, NULL, NULL};
    return store_write(st, &op, (void *)id, 0, err);
}

struct commit_arg {
    const struct acc_agreement *a;
    unsigned version;
    const char *change;
    const struct acc_trace *trace;
    const struct acc_booking *bookings;
    size_t n_bookings;
};

/* Runs a snapshot statement (?1 the id, ?2 the version or time). */
static acc_err snapshot(struct conn *c, const struct stmt_def *d, const char *id, int64_t v,
                        struct acc_error *err)
{
    sqlite3_stmt *s = store_stmt(c, d, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_text(&b, id);
    store_bind_i64(&b, v);
    return store_bind_step(c, &b, "keep the version", err);
}

static acc_err commit_job(struct conn *c, void *arg, struct acc_error *err)
{
    struct commit_arg *x = arg;
    const struct acc_agreement *a = x->a;
    enum acc_state st;
    unsigned version;
    bool modifying;
    acc_err rc = read_mark(c, a->id, &st, &version, &modifying, err);
    if (rc)
        return rc;
    if (st != ACC_STATE_OBSERVED || !modifying || version != x->version)
        return acc_error_set(err, ACC_ERR_STATE, "agreement %s is %s (version %u)", a->id,
                             acc_state_name(st), version);
    if ((rc = snapshot(c, &ver_snapshot, a->id, a->updated, err)) ||
        (rc = snapshot(c, &ver_snap_comp, a->id, version, err)) ||
        (rc = snapshot(c, &ver_snap_link, a->id, version, err)))
        return rc;
    sqlite3_stmt *s = store_stmt(c, &ver_bump, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    store_bind_i64(&b, a->updated);
    store_bind_time(&b, a->start);
    store_bind_time(&b, a->end);
    store_bind_i64(&b, a->rounds);
    store_bind_i64(&b, a->rollbacks);
    store_bind_text(&b, x->change);
    store_bind_text(&b, a->id);
    if ((rc = store_bind_step(c, &b, "write the new version", err)) ||
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
                                unsigned version, const char *change, const struct acc_trace *trace,
                                const struct acc_booking *bookings, size_t n_bookings,
                                struct acc_error *err)
{
    static const struct store_op op = {commit_job, NULL, NULL};
    struct commit_arg x = {a, version, change, trace, bookings, n_bookings};
    return store_write(st, &op, &x, 0, err);
}

static acc_err recover_job(struct conn *c, void *arg, struct acc_error *err)
{
    (void)arg;
    sqlite3_stmt *s = store_stmt(c, &ver_recover, err);
    if (!s)
        return ACC_ERR_STORAGE;
    struct store_bind b = STORE_BIND(s);
    return store_bind_step(c, &b, "clear modification marks", err);
}

acc_err acc_store_modify_recover(struct acc_store *st, struct acc_error *err)
{
    static const struct store_op op = {recover_job, NULL, NULL};
    return store_write(st, &op, NULL, 0, err);
}
