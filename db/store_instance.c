/* SPDX-License-Identifier: Apache-2.0 */
/* store_instance.c - several accordd on one database (PostgreSQL): each
 * instance's row renewed while it lives, leases for the duties that must
 * run once, and the negotiations whose instance died (store.h).  Rows and
 * leases are written and judged by the database's clock, in the statements
 * themselves (store_internal.h's DB_NOW); acc_store_clock measures how far
 * this process's clock is from it. */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/common/strutil.h"
#include "store_internal.h"

#define NEGOTIATING "('Pending', 'PendingAndTerminating')"

/* The statements that compare with the database's clock (NOW), one text
 * per dialect (store_internal.h); ? after NOW - is an age (store_age). */
#define INST_BEAT(NOW)                                                              \
    "INSERT INTO instance (id, host, pid, started, seen) VALUES (?,?,?,?," NOW ") " \
    "ON CONFLICT(id) DO UPDATE SET seen = excluded.seen"
/* rows of instances dead for a day: gone */
#define INST_FORGET(NOW) "DELETE FROM instance WHERE seen < " NOW " - ?"
/* taken when free or expired, renewed by its holder, for ?3 seconds; both
 * dialects' upsert, whose WHERE sees the row as it is when it runs (a
 * second taker waits for the first one's row lock, then finds it held) */
#define LEASE_TAKE(NOW)                                                        \
    "INSERT INTO lease (name, holder, expires) VALUES (?1, ?2, " NOW " + ?3) " \
    "ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, "               \
    "expires = excluded.expires WHERE lease.holder = excluded.holder OR lease.expires < " NOW
/* instances seen within the age bound last */
#define LIVE(NOW, AGE) "(SELECT id FROM instance WHERE seen >= " NOW " - " AGE ")"
#define ORPHANS(NOW)                                       \
    "SELECT id FROM agreement WHERE state IN " NEGOTIATING \
    " AND (instance IS NULL OR instance NOT IN " LIVE(NOW, "?") ")"
/* modifications marked by an instance not seen since ?: a dead one's */
#define DEAD_MARKS(NOW)                                            \
    "UPDATE agreement SET modifying = 0 WHERE modifying != 0 AND " \
    "(instance IS NULL OR instance NOT IN " LIVE(NOW, "?") ")"
/* whether agreement (quote) ?1's instance is dead: not seen within age ?2 */
#define ORPHAN_OF(TABLE, NOW)                                         \
    "SELECT 1 FROM " TABLE " WHERE id = ?1 AND (instance IS NULL OR " \
    "instance NOT IN " LIVE(NOW, "?2") ")"

static const struct acc_sql_query
    inst_beat = {S_INST_BEAT, INST_BEAT(DB_NOW_LITE)},
    inst_beat_pg = {S_INST_BEAT, INST_BEAT(DB_NOW_PG)},
    inst_forget = {S_INST_FORGET, INST_FORGET(DB_NOW_LITE)},
    inst_forget_pg = {S_INST_FORGET, INST_FORGET(DB_NOW_PG)},
    lease_take = {S_LEASE_TAKE, LEASE_TAKE(DB_NOW_LITE)},
    lease_take_pg = {S_LEASE_TAKE, LEASE_TAKE(DB_NOW_PG)},
    lease_holder = {S_LEASE_HOLDER, "SELECT holder FROM lease WHERE name = ?"},
    orphans = {S_ORPHANS, ORPHANS(DB_NOW_LITE)}, orphans_pg = {S_ORPHANS, ORPHANS(DB_NOW_PG)},
    mine_stopped = {S_MINE_STOPPED, "SELECT id FROM agreement WHERE state = "
                                    "'PendingAndTerminating' AND instance = ?"},
    /* modifications marked by an instance not seen since ?: a dead one's */
    dead_marks = {S_DEAD_MARKS, DEAD_MARKS(DB_NOW_LITE)},
    dead_marks_pg = {S_DEAD_MARKS, DEAD_MARKS(DB_NOW_PG)},
    /* an instance that stops: seen long ago, as a dead one (forgotten at
     * the next beat that forgets), its leases free */
    inst_leave = {S_INST_LEAVE, "UPDATE instance SET seen = 0 WHERE id = ?"},
    lease_free = {S_LEASE_FREE, "UPDATE lease SET expires = 0 WHERE holder = ?"},
    orphan_of = {S_ORPHAN_OF, ORPHAN_OF("agreement", DB_NOW_LITE)},
    orphan_of_pg = {S_ORPHAN_OF, ORPHAN_OF("agreement", DB_NOW_PG)},
    quote_orphan_of = {S_QUOTE_ORPHAN_OF, ORPHAN_OF("quote", DB_NOW_LITE)},
    quote_orphan_of_pg = {S_QUOTE_ORPHAN_OF, ORPHAN_OF("quote", DB_NOW_PG)};

bool acc_store_shared(const struct acc_store *st)
{
    return acc_sql_can(st->db, ACC_SQL_CAP_SERVER_LOCKS);
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
    acc_time started, forget_before;
};

static acc_err beat_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    const struct beat_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &inst_beat, &inst_beat_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->id);
    acc_sql_bind_text(s, x->host);
    acc_sql_bind_i64(s, x->pid);
    acc_sql_bind_i64(s, x->started);
    acc_err rc = acc_sql_run(s, "instance", err);
    if (rc || !x->forget_before)
        return rc;
    if (!(s = acc_sql_prepare(c, acc_sql_pick(c, &inst_forget, &inst_forget_pg), err)))
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, store_age(x->forget_before));
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
                                acc_time started, acc_time forget_before, struct acc_error *err)
{
    struct beat_arg x = {st->instance, host, pid, started, forget_before};
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
    int64_t seconds;
    bool held;
};

static acc_err lease_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct lease_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &lease_take, &lease_take_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->name);
    acc_sql_bind_text(s, x->holder);
    acc_sql_bind_i64(s, x->seconds);
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

acc_err acc_store_lease(struct acc_store *st, const char *name, int64_t seconds, bool *held,
                        struct acc_error *err)
{
    struct lease_arg x = {name, st->instance, seconds, false};
    acc_err rc = on_beat_conn(st, lease_job, &x, err);
    *held = !rc && x.held;
    return rc;
}

/* ------------------------------------------------------------------ reads */

static acc_err ids_of(struct acc_store *st, const struct acc_sql_query *q,
                      const struct acc_sql_query *q_pg, const char *text, acc_time t,
                      char (**ids)[ACC_ID_LEN + 1], size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_reader_take(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, q, q_pg ? q_pg : q), err);
    size_t cap = 0;
    bool row = false;
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        if (text)
            acc_sql_bind_text(s, text);
        if (!text || t) /* with q_pg: a time of this process, bound as its age */
            acc_sql_bind_i64(s, q_pg ? store_age(t) : t);
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
    return ids_of(st, &orphans, &orphans_pg, NULL, alive_since, ids, n, err);
}

acc_err store_still_dead(struct acc_sql_conn *c, bool quote, const char *id, acc_time alive_since,
                         struct acc_error *err)
{
    struct acc_sql_stmt *s =
        acc_sql_prepare(c,
                        quote ? acc_sql_pick(c, &quote_orphan_of, &quote_orphan_of_pg)
                              : acc_sql_pick(c, &orphan_of, &orphan_of_pg),
                        err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_sql_bind_i64(s, store_age(alive_since));
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
    return ids_of(st, &mine_stopped, NULL, st->instance, 0, ids, n, err);
}

/* ------------------------------------------------ dead modifications */

struct marks_arg {
    acc_time alive_since;
    size_t cleared;
};

static acc_err marks_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct marks_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, &dead_marks, &dead_marks_pg), err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, store_age(x->alive_since));
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

/* ------------------------------------------------------------------ clock */

static int64_t real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct clock_arg {
    int64_t offset_us, rtt_us;
};

static acc_err clock_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct clock_arg *x = arg;
    struct acc_sql_stmt *s = NULL;
    acc_err rc = acc_sql_prepare_once(
        c, "SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000000 AS BIGINT)", &s, err);
    if (rc)
        return rc;
    bool row = false;
    int64_t m0 = acc_mono_us(), t0 = real_us();
    rc = acc_sql_step(s, &row, "the database's clock", err);
    int64_t t1 = real_us(), m1 = acc_mono_us();
    if (!rc && !row)
        rc = acc_error_set(err, ACC_ERR_STORAGE, "the database's clock: no answer");
    if (!rc) {
        /* the server read its clock about halfway through the round trip */
        x->offset_us = acc_sql_col_i64(s, 0) - (t0 + (t1 - t0) / 2);
        x->rtt_us = m1 - m0;
    }
    acc_sql_finalize(s);
    return rc;
}

acc_err acc_store_clock(struct acc_store *st, int64_t *offset_us, int64_t *rtt_us,
                        struct acc_error *err)
{
    struct clock_arg x = {0, 0};
    acc_err rc = acc_store_shared(st) ? on_beat_conn(st, clock_job, &x, err) : ACC_OK;
    *offset_us = x.offset_us;
    *rtt_us = x.rtt_us;
    return rc;
}
