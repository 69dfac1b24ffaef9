/* store_instance.c - several accordd on one database (PostgreSQL): each
 * instance's row renewed while it lives, leases for the duties that must
 * run once, and the negotiations whose instance died (store.h). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "store_internal.h"

#define NEGOTIATING "('Pending', 'PendingAndTerminating')"

static const struct acc_sql_query
    inst_beat = {S_INST_BEAT,
                 "INSERT INTO instance (id, host, pid, started, seen) "
                 "VALUES (?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET seen = excluded.seen"},
    /* rows of instances dead for a day: gone */
    inst_forget = {S_INST_FORGET, "DELETE FROM instance WHERE seen < ?"},
    /* taken when free or expired, renewed by its holder; both dialects'
     * upsert, whose WHERE sees the row as it is when it runs (a second
     * taker waits for the first one's row lock, then finds it held) */
    lease_take = {S_LEASE_TAKE, "INSERT INTO lease (name, holder, expires) VALUES (?1, ?2, ?3) "
                                "ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, "
                                "expires = excluded.expires "
                                "WHERE lease.holder = excluded.holder OR lease.expires < ?4"},
    lease_holder = {S_LEASE_HOLDER, "SELECT holder FROM lease WHERE name = ?"},
    orphans = {S_ORPHANS, "SELECT id FROM agreement WHERE state IN " NEGOTIATING
                          " AND (instance IS NULL OR instance NOT IN "
                          "(SELECT id FROM instance WHERE seen >= ?))"},
    mine_stopped = {S_MINE_STOPPED, "SELECT id FROM agreement WHERE state = "
                                    "'PendingAndTerminating' AND instance = ?"},
    /* modifications marked by an instance not seen since ?: a dead one's */
    dead_marks = {S_DEAD_MARKS, "UPDATE agreement SET modifying = 0 WHERE modifying != 0 AND "
                                "(instance IS NULL OR instance NOT IN "
                                "(SELECT id FROM instance WHERE seen >= ?))"},
    /* an instance that stops: seen long ago, as a dead one (forgotten at
     * the next beat that forgets), its leases free */
    inst_leave = {S_INST_LEAVE, "UPDATE instance SET seen = 0 WHERE id = ?"},
    lease_free = {S_LEASE_FREE, "UPDATE lease SET expires = 0 WHERE holder = ?"},
    /* whether agreement (quote) ?1's instance is dead: not seen since ?2 */
    orphan_of = {S_ORPHAN_OF, "SELECT 1 FROM agreement WHERE id = ?1 AND (instance IS NULL OR "
                              "instance NOT IN (SELECT id FROM instance WHERE seen >= ?2))"},
    quote_orphan_of = {S_QUOTE_ORPHAN_OF,
                       "SELECT 1 FROM quote WHERE id = ?1 AND (instance IS NULL OR instance NOT IN "
                       "(SELECT id FROM instance WHERE seen >= ?2))"};

bool acc_store_shared(const struct acc_store *st)
{
    return acc_sql_is_pg(st->db);
}

void acc_store_set_instance(struct acc_store *st, const char *id)
{
    acc_strlcpy(st->instance, id ? id : "", sizeof st->instance);
}

const char *acc_store_instance(const struct acc_store *st)
{
    return st->instance[0] ? st->instance : NULL;
}

/* ------------------------------------------------------------------- beat */

struct beat_arg {
    const char *id, *host;
    int64_t pid;
    acc_time started, now, forget_before;
};

static acc_err beat_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    const struct beat_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &inst_beat, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->id);
    acc_sql_bind_text(s, x->host);
    acc_sql_bind_i64(s, x->pid);
    acc_sql_bind_i64(s, x->started);
    acc_sql_bind_i64(s, x->now);
    acc_err rc = acc_sql_run(s, "instance", err);
    if (rc || !x->forget_before)
        return rc;
    if (!(s = acc_sql_prepare(c, &inst_forget, err)))
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, x->forget_before);
    return acc_sql_run(s, "instance", err);
}

/* Runs job on the beat's connection (made at its first use, made again by
 * the SQL layer after a loss), outside any transaction. */
static acc_err on_beat_conn(struct acc_store *st,
                            acc_err (*job)(struct acc_sql_conn *, void *, struct acc_error *),
                            void *arg, struct acc_error *err)
{
    pthread_mutex_lock(&st->beat_lock);
    acc_err rc = st->beat ? ACC_OK : acc_sql_connect(st->db, &st->beat, err);
    if (!rc)
        rc = job(st->beat, arg, err);
    /* A connection the server closed while it sat idle (a restart, a
     * failover) is found gone by its first statement: once more, on a
     * connection made again, so that the beat after an outage renews at
     * once rather than a beat later (its statements may run twice). */
    if (rc == ACC_ERR_STORAGE_AWAY)
        rc = job(st->beat, arg, err);
    pthread_mutex_unlock(&st->beat_lock);
    return rc;
}

acc_err acc_store_instance_beat(struct acc_store *st, const char *host, int64_t pid,
                                acc_time started, acc_time now, acc_time forget_before,
                                struct acc_error *err)
{
    struct beat_arg x = {st->instance, host, pid, started, now, forget_before};
    return on_beat_conn(st, beat_job, &x, err);
}

static acc_err leave_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    const struct acc_sql_query *q[] = {&lease_free, &inst_leave};
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        struct acc_sql_stmt *s = acc_sql_prepare(c, q[i], err);
        if (!s)
            return acc_sql_failed(err);
        acc_sql_bind_text(s, arg);
        acc_err rc = acc_sql_run(s, "instance", err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

acc_err acc_store_instance_leave(struct acc_store *st, struct acc_error *err)
{
    return on_beat_conn(st, leave_job, st->instance, err);
}

/* ------------------------------------------------------------------ lease */

struct lease_arg {
    const char *name, *holder;
    acc_time now, until;
    bool held;
};

static acc_err lease_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct lease_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &lease_take, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->name);
    acc_sql_bind_text(s, x->holder);
    acc_sql_bind_i64(s, x->until);
    acc_sql_bind_i64(s, x->now);
    acc_err rc = acc_sql_run(s, "lease", err);
    if (rc)
        return rc;
    if (!(s = acc_sql_prepare(c, &lease_holder, err)))
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->name);
    bool row = false;
    if (!(rc = acc_sql_bound(s, "lease", err)) && !(rc = acc_sql_step(s, &row, "lease", err)))
        x->held = row && acc_sql_col_text(s, 0) && strcmp(acc_sql_col_text(s, 0), x->holder) == 0;
    acc_sql_done(s);
    return rc;
}

acc_err acc_store_lease(struct acc_store *st, const char *name, acc_time now, int64_t seconds,
                        bool *held, struct acc_error *err)
{
    struct lease_arg x = {name, st->instance, now, now + seconds, false};
    acc_err rc = on_beat_conn(st, lease_job, &x, err);
    *held = !rc && x.held;
    return rc;
}

/* ------------------------------------------------------------------ reads */

static acc_err ids_of(struct acc_store *st, const struct acc_sql_query *q, const char *text,
                      acc_time t, char (**ids)[ACC_ID_LEN + 1], size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, q, err);
    size_t cap = 0;
    bool row = false;
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        if (text)
            acc_sql_bind_text(s, text);
        if (!text || t)
            acc_sql_bind_i64(s, t);
        rc = acc_sql_bound(s, "instances", err);
    }
    while (!rc && !(rc = acc_sql_step(s, &row, "instances", err)) && row) {
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            char(*m)[ACC_ID_LEN + 1] = realloc(*ids, nc * sizeof *m);
            if (!m) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            *ids = m;
            cap = nc;
        }
        acc_sql_col_copy(s, 0, (*ids)[(*n)++], ACC_ID_LEN + 1);
    }
    acc_sql_done(s);
    acc_sql_reader_give(st->db, c);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

acc_err acc_store_orphans(struct acc_store *st, acc_time alive_since, char (**ids)[ACC_ID_LEN + 1],
                          size_t *n, struct acc_error *err)
{
    return ids_of(st, &orphans, NULL, alive_since, ids, n, err);
}

acc_err store_still_dead(struct acc_sql_conn *c, bool quote, const char *id, acc_time alive_since,
                         struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, quote ? &quote_orphan_of : &orphan_of, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_sql_bind_i64(s, alive_since);
    bool dead = false;
    acc_err rc = acc_sql_bound(s, "judge its instance", err);
    if (!rc)
        rc = acc_sql_step(s, &dead, "judge its instance", err);
    acc_sql_done(s);
    if (!rc && !dead)
        rc = acc_error_set(err, ACC_ERR_STATE, "%s %s: its instance is alive again",
                           quote ? "quote" : "agreement", id);
    return rc;
}

struct orphan_arg {
    const struct acc_agreement *a;
    acc_time alive_since;
};

static acc_err end_orphan_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct orphan_arg *x = arg;
    acc_err rc = store_agreement_settle_in(c, x->a,
                                           ACC_STATE_BIT(ACC_STATE_PENDING) |
                                               ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                           NULL, NULL, 0, err);
    /* judged with the row taken (on PostgreSQL locked until the commit: its
     * instance cannot settle it meanwhile); alive again, the job fails and
     * the writer rolls back what it wrote */
    if (!rc && x->alive_since)
        rc = store_still_dead(c, false, x->a->id, x->alive_since, err);
    return rc;
}

acc_err acc_store_agreement_end_orphan(struct acc_store *st, const struct acc_agreement *a,
                                       acc_time alive_since, struct acc_error *err)
{
    static const struct store_op op = {{end_orphan_job, NULL}, NULL};
    struct orphan_arg x = {a, alive_since};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_stopped_here(struct acc_store *st, char (**ids)[ACC_ID_LEN + 1], size_t *n,
                               struct acc_error *err)
{
    return ids_of(st, &mine_stopped, st->instance, 0, ids, n, err);
}

/* ------------------------------------------------ dead modifications */

struct marks_arg {
    acc_time alive_since;
    size_t cleared;
};

static acc_err marks_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct marks_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &dead_marks, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, x->alive_since);
    acc_err rc = acc_sql_run(s, "clear modification marks", err);
    x->cleared = rc ? 0 : (size_t)acc_sql_changes(c);
    return rc;
}

acc_err acc_store_modify_orphans(struct acc_store *st, acc_time alive_since, size_t *cleared,
                                 struct acc_error *err)
{
    static const struct store_op op = {{marks_job, NULL}, NULL};
    struct marks_arg x = {alive_since, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    *cleared = x.cleared;
    return rc;
}
