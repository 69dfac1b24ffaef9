/* SPDX-License-Identifier: Apache-2.0 */
/* store_prune.c - retention: agreements and quotes that ended long ago are
 * deleted in small batches, with everything that is theirs; and the
 * store's online backup. */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define ENDED      "('Complete', 'Terminated', 'Rejected')"
#define OPEN_ENTRY "('intent', 'reserved', 'unknown', 'cancel-failed')"

static const struct acc_sql_query
    prune_pick = {S_PRUNE_PICK,
                  "SELECT a.seq, a.id, r.directory FROM agreement a "
                  "LEFT JOIN run r ON r.agreement = a.seq "
                  "WHERE a.state IN " ENDED " AND a.updated < ?1 AND a.modifying = 0 "
                  "AND (r.state IS NULL OR r.state NOT IN ('waiting', 'running')) "
                  "AND NOT EXISTS (SELECT 1 FROM reservation j WHERE j.agreement_id = a.id "
                  "AND j.state IN " OPEN_ENTRY ") "
                  /* no ORDER BY: the index on (state, updated) gives the
                   * first `limit` at once, where an order would sort every
                   * candidate of every batch */
                  "LIMIT ?2"},
    prune_journal = {S_PRUNE_JOURNAL, "DELETE FROM reservation WHERE agreement_id = ?"},
    /* the entries a quote held before they became its agreement's */
    prune_quote_journal = {S_PRUNE_QUOTE_JOURNAL, "DELETE FROM reservation WHERE agreement_id IN "
                                                  "(SELECT id FROM quote WHERE agreement = ?)"},
    prune_quotes_of = {S_PRUNE_QUOTES_OF, "DELETE FROM quote WHERE agreement = ?"},
    /* allocation, trace, versions and run go with it (ON DELETE CASCADE),
     * and so does its idempotency key (a column of the row) */
    prune_agreement = {S_PRUNE_AGREEMENT, "DELETE FROM agreement WHERE seq = ?"},
    prune_quote_pick = {S_PRUNE_QUOTE_PICK,
                        "SELECT q.id FROM quote q WHERE q.state NOT IN ('Advisory', 'Held') "
                        "AND q.updated < ?1 AND (q.agreement IS NULL OR NOT EXISTS "
                        "(SELECT 1 FROM agreement a WHERE a.id = q.agreement)) "
                        "AND NOT EXISTS (SELECT 1 FROM reservation j WHERE j.agreement_id = q.id "
                        "AND j.state IN " OPEN_ENTRY ") "
                        "ORDER BY q.updated LIMIT ?2"},
    prune_quote = {S_PRUNE_QUOTE, "DELETE FROM quote WHERE id = ?"};

struct victim {
    int64_t seq;
    char id[ACC_ID_LEN + 1];
};

static acc_err run_text(struct acc_sql_conn *c, const struct acc_sql_query *q, const char *v,
                        const char *what, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, q, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, v);
    return acc_sql_run(s, what, err);
}

/* A run's directory is the job's own (the launcher's root joined with the
 * id) or it is left alone: a path stored by hand is nobody's to delete. */
static acc_err keep_directory(struct acc_store_prune *p, const char *dir, const char *id,
                              struct acc_error *err)
{
    size_t n = dir ? strlen(dir) : 0, k = strlen(id);
    if (n <= k + 1 || dir[0] != '/' || dir[n - k - 1] != '/' || strcmp(dir + n - k, id) != 0)
        return ACC_OK;
    char **v = realloc(p->directories, (p->n_directories + 1) * sizeof *v);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    p->directories = v;
    if (!(v[p->n_directories] = strdup(dir)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    p->n_directories++;
    return ACC_OK;
}

/* The batch's agreements, with their directories kept in p. */
static acc_err pick_agreements(struct acc_sql_conn *c, struct acc_store_prune *p, struct victim *v,
                               size_t *n, struct acc_error *err)
{
    *n = 0;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &prune_pick, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_time(s, p->before);
    acc_sql_bind_i64(s, p->limit);
    acc_err rc = acc_sql_bound(s, "retention", err);
    bool row = !rc;
    while (!rc && row && !(rc = acc_sql_step(s, &row, "retention", err)) && row) {
        v[*n].seq = acc_sql_col_i64(s, 0);
        acc_sql_col_copy(s, 1, v[*n].id, sizeof v[*n].id);
        rc = keep_directory(p, acc_sql_col_text(s, 2), v[*n].id, err);
        (*n)++;
    }
    acc_sql_done(s);
    return rc;
}

static acc_err delete_agreement(struct acc_sql_conn *c, const struct victim *v,
                                struct acc_error *err)
{
    acc_err rc = run_text(c, &prune_journal, v->id, "retention: journal", err);
    if (!rc)
        rc = run_text(c, &prune_quote_journal, v->id, "retention: journal", err);
    if (!rc)
        rc = run_text(c, &prune_quotes_of, v->id, "retention: quotes", err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &prune_agreement, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, v->seq);
    return acc_sql_run(s, "retention: agreement", err);
}

static acc_err prune_quotes(struct acc_sql_conn *c, struct acc_store_prune *p,
                            char (*ids)[ACC_ID_LEN + 1], struct acc_error *err)
{
    size_t n = 0;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &prune_quote_pick, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_time(s, p->before);
    acc_sql_bind_i64(s, p->limit);
    acc_err rc = acc_sql_bound(s, "retention: quotes", err);
    bool row = !rc;
    while (!rc && row && !(rc = acc_sql_step(s, &row, "retention: quotes", err)) && row)
        acc_sql_col_copy(s, 0, ids[n++], ACC_ID_LEN + 1);
    acc_sql_done(s);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = run_text(c, &prune_journal, ids[i], "retention: journal", err);
        if (!rc)
            rc = run_text(c, &prune_quote, ids[i], "retention: quote", err);
    }
    if (!rc)
        p->quotes = (unsigned)n;
    return rc;
}

void acc_store_prune_release(struct acc_store_prune *p)
{
    for (size_t i = 0; i < p->n_directories; i++)
        free(p->directories[i]);
    free(p->directories);
    p->directories = NULL;
    p->n_directories = 0;
}

static acc_err prune_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct acc_store_prune *p = arg;
    /* a run again (sql_writer.h) lists the directories anew */
    acc_store_prune_release(p);
    p->agreements = p->quotes = 0;
    struct victim *v = calloc(p->limit, sizeof *v);
    char(*ids)[ACC_ID_LEN + 1] = calloc(p->limit, sizeof *ids);
    acc_err rc = v && ids ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    size_t n = 0;
    if (!rc)
        rc = pick_agreements(c, p, v, &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = delete_agreement(c, &v[i], err);
    if (!rc) {
        p->agreements = (unsigned)n;
        rc = prune_quotes(c, p, ids, err);
    }
    free(v);
    free(ids);
    return rc;
}

acc_err acc_store_prune(struct acc_store *st, struct acc_store_prune *p, struct acc_error *err)
{
    static const struct store_op op = {{prune_job, NULL}, NULL};
    p->agreements = p->quotes = 0;
    p->directories = NULL;
    p->n_directories = 0;
    if (p->limit == 0 || p->limit > 10000)
        return acc_error_set(err, ACC_ERR_INVALID, "retention: a batch of 1 to 10000 rows");
    acc_err rc = store_write(st, &op, p, 0, err);
    if (rc) {
        /* Nothing was deleted: no directory may go. */
        acc_store_prune_release(p);
        p->agreements = p->quotes = 0;
    }
    return rc;
}

/* ------------------------------------------- Rejected agreements per user */

/* At most this many go in one call: a burst of rejections is cut back at
 * the next one. */
#define REJECTED_BATCH 256

struct rejected_arg {
    const struct acc_store_owner *o;
    unsigned keep;
    unsigned deleted;
};

static acc_err rejected_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct rejected_arg *x = arg;
    const struct acc_store_owner *o = x->o;
    x->deleted = 0;
    /* The newest `keep` are skipped by the index on (owner, state,
     * updated); only the batch past them is checked for open entries. */
    char q[768];
    snprintf(q, sizeof q,
             "SELECT v.seq, v.id FROM (SELECT seq, id, modifying FROM agreement "
             "WHERE state = 'Rejected'%s ORDER BY updated DESC, seq DESC LIMIT ?1 OFFSET ?2) v "
             "WHERE v.modifying = 0 AND NOT EXISTS (SELECT 1 FROM reservation j "
             "WHERE j.agreement_id = v.id AND j.state IN " OPEN_ENTRY ")",
             o->initiator ? " AND initiator = ?3"
             : o->client  ? " AND client = ?3"
                          : "");
    struct victim *v = calloc(REJECTED_BATCH, sizeof *v);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_sql_stmt *s = NULL;
    size_t n = 0;
    acc_err rc = acc_sql_prepare_once(c, q, &s, err);
    if (!rc) {
        acc_sql_bind_i64(s, REJECTED_BATCH);
        acc_sql_bind_i64(s, x->keep);
        if (o->initiator || o->client)
            acc_sql_bind_text(s, o->initiator ? o->initiator : o->client);
        rc = acc_sql_bound(s, "rejected agreements", err);
    }
    bool row = !rc;
    while (!rc && row && n < REJECTED_BATCH &&
           !(rc = acc_sql_step(s, &row, "rejected agreements", err)) && row) {
        v[n].seq = acc_sql_col_i64(s, 0);
        acc_sql_col_copy(s, 1, v[n].id, sizeof v[n].id);
        n++;
    }
    acc_sql_finalize(s);
    for (size_t i = 0; !rc && i < n; i++)
        rc = delete_agreement(c, &v[i], err);
    if (!rc)
        x->deleted = (unsigned)n;
    free(v);
    return rc;
}

acc_err acc_store_prune_rejected(struct acc_store *st, const struct acc_store_owner *o,
                                 unsigned keep, unsigned *deleted, struct acc_error *err)
{
    static const struct store_op op = {{rejected_job, NULL}, NULL};
    struct rejected_arg x = {o, keep, 0};
    acc_err rc = store_write(st, &op, &x, 0, err);
    if (deleted)
        *deleted = rc ? 0 : x.deleted;
    return rc;
}

acc_err acc_store_backup(struct acc_store *st, const char *dest, int64_t *agreements,
                         struct acc_error *err)
{
    *agreements = 0;
    static const char count[] = "SELECT count(*) FROM agreement";
    if (acc_sql_can(st->db, ACC_SQL_CAP_DUMP))
        return acc_sql_dump(st->db, dest, count, agreements, err);
    return acc_sql_backup(st->db, dest, count, agreements, err);
}
