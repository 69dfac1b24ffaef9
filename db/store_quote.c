/* SPDX-License-Identifier: Apache-2.0 */
/* store_quote.c - quotes (POST /negotiations) and their held reservations.
 *
 * A quote is one row; its options and its allocation are lines of tab-
 * separated fields in two text columns (no field holds a tab or a line
 * break: they are replaced by spaces).  Held reservations are journal
 * entries in state 'held' under the quote's id, written in the same
 * transaction as the quote's state. */
#include "store.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/buf.h"
#include "../lib/common/strutil.h"
#include "store_internal.h"

#define QUOTE_COLUMNS                                                                      \
    "id, initiator, state, created, updated, hold_until, held_option, agreement, reason, " \
    "duration, options, allocation, offer"

/* An Advisory quote has journal entries only while its hold books (a held
 * one is Held, one whose hold failed Rejected); its instance (none on a
 * file) is the one booking it: dead when not seen within age ? by the
 * database's clock NOW (store_internal.h). */
#define QUOTE_INTERRUPTED(NOW)                                        \
    "SELECT q.id FROM quote q WHERE q.state = 'Advisory' AND EXISTS " \
    "(SELECT 1 FROM reservation r WHERE r.agreement_id = q.id) AND "  \
    "(q.instance IS NULL OR q.instance NOT IN "                       \
    "(SELECT id FROM instance WHERE seen >= " NOW " - ?)) ORDER BY q.created LIMIT 1000"

static const struct acc_sql_query
    quote_state = {S_QUOTE_STATE, "SELECT state, agreement FROM quote WHERE id = ?"},
    /* PostgreSQL: locked to the transaction's end (store_agreement.c) */
    quote_state_pg = {S_QUOTE_STATE,
                      "SELECT state, agreement FROM quote WHERE id = ? FOR NO KEY UPDATE"},
    /* client is written once, with the new quote: a quote read back (and
     * put again) does not carry it */
    quote_put = {S_QUOTE_PUT, "INSERT INTO quote (" QUOTE_COLUMNS ", instance, client) "
                              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                              "ON CONFLICT(id) DO UPDATE SET initiator = excluded.initiator, "
                              "state = excluded.state, created = excluded.created, "
                              "updated = excluded.updated, hold_until = excluded.hold_until, "
                              "held_option = excluded.held_option, agreement = excluded.agreement, "
                              "reason = excluded.reason, duration = excluded.duration, "
                              "options = excluded.options, allocation = excluded.allocation, "
                              "offer = excluded.offer, instance = excluded.instance"},
    /* A claim by an agreement that is no longer Pending (its commit was cut
     * short by a crash: recovery ended it) is stale.  One whose agreement
     * is not written yet is not. */
    quote_claim = {S_QUOTE_CLAIM,
                   "UPDATE quote SET agreement = ?1 WHERE id = ?2 AND state = 'Held' AND "
                   "(agreement IS NULL OR agreement IN (SELECT id FROM agreement WHERE state NOT "
                   "IN ('Pending', 'PendingAndTerminating')))"},
    quote_unclaim = {S_QUOTE_UNCLAIM, "UPDATE quote SET agreement = NULL WHERE id = ?2 AND "
                                      "agreement = ?1 AND state = 'Held'"},
    quote_get = {S_QUOTE_GET, "SELECT " QUOTE_COLUMNS " FROM quote WHERE id = ?"},
    quote_due = {S_QUOTE_DUE, "SELECT id FROM quote WHERE state IN ('Advisory', 'Held') AND "
                              "hold_until <= ? ORDER BY hold_until LIMIT 1000"},
    /* PostgreSQL has no sum of booleans: a CASE counts them in both. */
    quote_count = {S_QUOTE_COUNT, "SELECT count(*), coalesce(sum(CASE WHEN initiator = ? THEN 1 "
                                  "ELSE 0 END), 0), coalesce(sum(CASE WHEN client = ? THEN 1 "
                                  "ELSE 0 END), 0) FROM quote WHERE state IN ('Advisory', 'Held')"},
    quote_interrupted = {S_QUOTE_INTERRUPTED, QUOTE_INTERRUPTED(DB_NOW_LITE)},
    quote_interrupted_pg = {S_QUOTE_INTERRUPTED, QUOTE_INTERRUPTED(DB_NOW_PG)};

/* ------------------------------------------------------------ the lines */

static void put_field(struct acc_buf *b, const char *s, char end)
{
    for (; s && *s; s++)
        acc_buf_printf(b, "%c", *s == '\t' || *s == '\n' ? ' ' : *s);
    acc_buf_printf(b, "%c", end);
}

static char *encode_options(const struct acc_quote *q)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_printf(&b, "%s", "");
    for (size_t i = 0; i < q->n_options; i++) {
        acc_buf_printf(&b, "%" PRId64 "\t%" PRId64 "\t", q->options[i].start, q->options[i].end);
        put_field(&b, q->options[i].why, '\n');
    }
    return acc_buf_detach(&b, NULL);
}

static char *encode_allocation(const struct acc_quote *q)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_printf(&b, "%s", "");
    for (size_t i = 0; i < q->n_comps; i++) {
        const struct acc_alloc_component *c = &q->comps[i];
        acc_buf_printf(&b, "C\t%" PRId64 "\t%" PRId64 "\t", c->nodes, c->ppn);
        put_field(&b, c->name, '\t');
        put_field(&b, c->site, '\t');
        put_field(&b, c->reservation, '\t');
        put_field(&b, c->local_id, '\t');
        put_field(&b, c->node_names, '\n');
    }
    for (size_t i = 0; i < q->n_links; i++) {
        const struct acc_alloc_link *l = &q->links[i];
        acc_buf_printf(&b, "L\t%" PRId64 "\t0\t", l->bandwidth);
        put_field(&b, l->name, '\t');
        put_field(&b, l->from, '\t');
        put_field(&b, l->to, '\t');
        put_field(&b, l->site_a, '\t');
        put_field(&b, l->site_b, '\t');
        put_field(&b, l->link, '\t');
        put_field(&b, l->reservation, '\t');
        put_field(&b, l->local_id, '\n');
    }
    /* An option's own sites and links (an offer with components without
     * a site): lines 'c' and 'l' naming the option. */
    for (size_t k = 0; k < q->n_options; k++) {
        const struct acc_quote_option *o = &q->options[k];
        for (size_t i = 0; i < o->n_comps; i++) {
            acc_buf_printf(&b, "c\t%zu\t%" PRId64 "\t", k, o->comps[i].nodes);
            put_field(&b, o->comps[i].name, '\t');
            put_field(&b, o->comps[i].site, '\n');
        }
        for (size_t i = 0; i < o->n_links; i++) {
            acc_buf_printf(&b, "l\t%zu\t%" PRId64 "\t", k, o->links[i].bandwidth);
            put_field(&b, o->links[i].name, '\t');
            put_field(&b, o->links[i].site_a, '\t');
            put_field(&b, o->links[i].site_b, '\t');
            put_field(&b, o->links[i].link, '\n');
        }
    }
    return acc_buf_detach(&b, NULL);
}

/* The next field of a line (up to a tab or the line's end), NULL when
 * empty; *p moves past it. */
static char *next_field(char **p, bool *oom)
{
    char *s = *p;
    size_t n = strcspn(s, "\t\n");
    *p = s + n + (s[n] == '\t');
    if (n == 0)
        return NULL;
    char *r = acc_strndup(s, n);
    *oom |= !r;
    return r;
}

static int64_t next_i64(char **p)
{
    char *end;
    long long v = strtoll(*p, &end, 10);
    *p = end + (*end == '\t');
    return (int64_t)v;
}

/* The options' own sites and links ('c' and 'l' lines, after the
 * quote's); true when out of memory. */
static bool decode_option_allocs(struct acc_quote *q, const char *alloc)
{
    bool oom = false;
    for (int pass = 0; pass < 2 && !oom; pass++) {
        for (const char *s = alloc; *s && !oom; s += strcspn(s, "\n"), s += *s == '\n') {
            if ((*s != 'c' && *s != 'l') || s[1] != '\t')
                continue;
            char *line = acc_strndup(s + 2, strcspn(s + 2, "\n")), *p = line;
            if (!line)
                return true;
            int64_t k = next_i64(&p), v = next_i64(&p);
            if (k < 0 || (size_t)k >= q->n_options) {
                free(line);
                continue;
            }
            struct acc_quote_option *o = &q->options[k];
            if (pass == 0) { /* count */
                o->n_comps += *s == 'c';
                o->n_links += *s == 'l';
            } else if (*s == 'c') {
                struct acc_alloc_component *c = &o->comps[o->n_comps++];
                c->nodes = v;
                c->name = next_field(&p, &oom);
                c->site = next_field(&p, &oom);
            } else {
                struct acc_alloc_link *l = &o->links[o->n_links++];
                l->bandwidth = v;
                l->name = next_field(&p, &oom);
                l->site_a = next_field(&p, &oom);
                l->site_b = next_field(&p, &oom);
                l->link = next_field(&p, &oom);
            }
            free(line);
        }
        for (size_t k = 0; pass == 0 && k < q->n_options; k++) {
            struct acc_quote_option *o = &q->options[k];
            o->comps = o->n_comps ? calloc(o->n_comps, sizeof *o->comps) : NULL;
            o->links = o->n_links ? calloc(o->n_links, sizeof *o->links) : NULL;
            oom |= (o->n_comps && !o->comps) || (o->n_links && !o->links);
            o->n_comps = o->n_links = 0; /* filled in the second pass */
        }
    }
    return oom;
}

static acc_err decode(struct acc_quote *q, const char *options, const char *alloc,
                      struct acc_error *err)
{
    size_t no = 0, nc = 0, nl = 0;
    for (const char *s = options; *s; s++)
        no += *s == '\n';
    for (const char *s = alloc; *s; s = strchr(s, '\n') + 1) {
        nc += *s == 'C';
        nl += *s == 'L';
        if (!strchr(s, '\n'))
            break;
    }
    q->options = calloc(no ? no : 1, sizeof *q->options);
    q->comps = calloc(nc ? nc : 1, sizeof *q->comps);
    q->links = calloc(nl ? nl : 1, sizeof *q->links);
    char *o = acc_strdup(options), *a = acc_strdup(alloc);
    bool oom = !q->options || !q->comps || !q->links || !o || !a;
    for (char *p = o; !oom && *p && q->n_options < no; p += *p == '\n') {
        struct acc_quote_option *x = &q->options[q->n_options++];
        x->start = next_i64(&p);
        x->end = next_i64(&p);
        x->why = next_field(&p, &oom);
    }
    for (char *p = a; !oom && *p; p += *p == '\n') {
        char kind = *p;
        p += 2;
        int64_t v = next_i64(&p), v2 = next_i64(&p);
        if (kind == 'C' && q->n_comps < nc) {
            struct acc_alloc_component *c = &q->comps[q->n_comps++];
            c->nodes = v;
            c->ppn = v2;
            c->name = next_field(&p, &oom);
            c->site = next_field(&p, &oom);
            c->reservation = next_field(&p, &oom);
            c->local_id = next_field(&p, &oom);
            c->node_names = next_field(&p, &oom);
        } else if (kind == 'L' && q->n_links < nl) {
            struct acc_alloc_link *l = &q->links[q->n_links++];
            l->bandwidth = v;
            l->name = next_field(&p, &oom);
            l->from = next_field(&p, &oom);
            l->to = next_field(&p, &oom);
            l->site_a = next_field(&p, &oom);
            l->site_b = next_field(&p, &oom);
            l->link = next_field(&p, &oom);
            l->reservation = next_field(&p, &oom);
            l->local_id = next_field(&p, &oom);
        } else {
            p += strcspn(p, "\n");
        }
    }
    if (!oom)
        oom = decode_option_allocs(q, alloc);
    free(o);
    free(a);
    return oom ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory") : ACC_OK;
}

/* ---------------------------------------------------------------- write */

struct put_arg {
    const char *instance; /* the store's (NULL on a file) */
    const struct acc_quote *q;
    unsigned from;
    const struct acc_booking *bookings;
    size_t n_bookings;
    /* A commit: the agreement that claimed the quote, and the agreement
     * settled in the same transaction. */
    const struct acc_agreement *a;
    const struct acc_trace *trace;
    /* not 0: the quote is a dead instance's, and is written only if that
     * instance is still not seen since then (judged after the state is read
     * and, on PostgreSQL, its row locked) */
    acc_time alive_since;
};

static acc_err put_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct put_arg *x = arg;
    const struct acc_quote *q = x->q;
    acc_err rc = ACC_OK;
    struct acc_sql_stmt *s = NULL;
    char *opts = NULL, *alloc = NULL;
    if (x->from) {
        if (!(s = acc_sql_prepare(c, acc_sql_pick(c, &quote_state, &quote_state_pg), err)))
            return acc_sql_failed(err);
        acc_sql_bind_text(s, q->id);
        enum acc_quote_state cur = ACC_QUOTE__COUNT;
        char claim[ACC_ID_LEN + 1] = "";
        bool row = false;
        if (!(rc = acc_sql_bound(s, "read quote", err)))
            rc = acc_sql_step(s, &row, "read quote", err);
        if (row) {
            acc_quote_state_parse(acc_sql_col_text(s, 0), &cur);
            acc_sql_col_copy(s, 1, claim, sizeof claim);
        }
        acc_sql_done(s);
        s = NULL;
        if (rc)
            return rc;
        if (cur == ACC_QUOTE__COUNT)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "no quote %s", q->id);
        if (!(x->from & (1u << cur)))
            return acc_error_set(err, ACC_ERR_STATE, "quote %s is %s", q->id,
                                 acc_quote_state_name(cur));
        if (x->a && strcmp(claim, x->a->id) != 0)
            return acc_error_set(err, ACC_ERR_STATE, "quote %s is not being committed as %s", q->id,
                                 x->a->id);
        if (x->alive_since && (rc = store_still_dead(c, true, q->id, x->alive_since, err)))
            return rc;
    }
    opts = encode_options(q);
    alloc = encode_allocation(q);
    if (!opts || !alloc) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (!(s = acc_sql_prepare(c, &quote_put, err))) {
        rc = acc_sql_failed(err);
        goto out;
    }
    acc_sql_bind_text(s, q->id);
    acc_sql_bind_text(s, q->initiator);
    acc_sql_bind_text(s, acc_quote_state_name(q->state));
    acc_sql_bind_i64(s, q->created);
    acc_sql_bind_i64(s, q->updated);
    acc_sql_bind_time(s, q->hold_until);
    acc_sql_bind_i64(s, q->held_option);
    acc_sql_bind_text(s, q->agreement[0] ? q->agreement : NULL);
    acc_sql_bind_text(s, q->reason);
    acc_sql_bind_i64(s, q->duration);
    acc_sql_bind_text(s, opts);
    acc_sql_bind_text(s, alloc);
    acc_sql_bind_blob(s, q->offer_xml ? q->offer_xml : "", q->offer_len, false);
    acc_sql_bind_text(s, x->instance);
    acc_sql_bind_text(s, q->client);
    rc = acc_sql_run(s, "write quote", err);
    for (size_t i = 0; !rc && i < x->n_bookings; i++)
        rc = store_journal_put_one(c, &x->bookings[i], q->updated, err);
    if (!rc && x->a)
        rc = store_agreement_settle_in(c, x->a, ACC_STATE_BIT(ACC_STATE_PENDING), x->trace, NULL, 0,
                                       err);
out:
    free(opts);
    free(alloc);
    return rc;
}

acc_err acc_store_quote_put(struct acc_store *st, const struct acc_quote *q, unsigned from,
                            const struct acc_booking *bookings, size_t n_bookings,
                            struct acc_error *err)
{
    static const struct store_op op = {{put_job, NULL}, NULL};
    struct put_arg x = {acc_store_instance(st), q, from, bookings, n_bookings, NULL, NULL, 0};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_quote_end_orphan(struct acc_store *st, const struct acc_quote *q,
                                   acc_time alive_since, struct acc_error *err)
{
    static const struct store_op op = {{put_job, NULL}, NULL};
    struct put_arg x = {
        acc_store_instance(st), q, 1u << ACC_QUOTE_ADVISORY, NULL, 0, NULL, NULL, alive_since};
    return store_write(st, &op, &x, 0, err);
}

acc_err acc_store_quote_commit(struct acc_store *st, const struct acc_quote *q,
                               const struct acc_agreement *a, const struct acc_trace *trace,
                               const struct acc_booking *bookings, size_t n_bookings,
                               struct acc_error *err)
{
    static const struct store_op op = {{put_job, NULL}, NULL};
    struct put_arg x = {
        acc_store_instance(st), q, 1u << ACC_QUOTE_HELD, bookings, n_bookings, a, trace, 0};
    return store_write(st, &op, &x, 0, err);
}

struct claim_arg {
    const char *id, *agreement;
    bool claim;
};

static acc_err claim_job(struct acc_sql_conn *c, void *arg, struct acc_error *err)
{
    struct claim_arg *x = arg;
    struct acc_sql_stmt *s = acc_sql_prepare(c, x->claim ? &quote_claim : &quote_unclaim, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, x->agreement);
    acc_sql_bind_text(s, x->id);
    acc_err rc = acc_sql_run(s, "claim quote", err);
    if (!rc && x->claim && acc_sql_changes(c) != 1)
        rc =
            acc_error_set(err, ACC_ERR_STATE,
                          "quote %s is no longer Held, or another request is committing it", x->id);
    return rc;
}

acc_err acc_store_quote_claim(struct acc_store *st, const char *id, const char *agreement,
                              bool claim, struct acc_error *err)
{
    static const struct store_op op = {{claim_job, NULL}, NULL};
    struct claim_arg x = {id, agreement, claim};
    return store_write(st, &op, &x, 0, err);
}

/* ----------------------------------------------------------------- read */

acc_err acc_store_quote_get(struct acc_store *st, const char *id, struct acc_quote *out,
                            struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    out->held_option = -1;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &quote_get, err);
    if (!s) {
        rc = acc_sql_failed(err);
        goto out;
    }
    acc_sql_bind_text(s, id);
    bool row = false;
    if (!(rc = acc_sql_bound(s, "read quote", err)))
        rc = acc_sql_step(s, &row, "read quote", err);
    if (rc || !row) {
        if (!rc)
            rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no quote %s", id);
        goto out;
    }
    acc_sql_col_copy(s, 0, out->id, sizeof out->id);
    out->initiator = acc_sql_col_dup(s, 1);
    if (!acc_quote_state_parse(acc_sql_col_text(s, 2), &out->state)) {
        rc = acc_error_set(err, ACC_ERR_STORAGE, "quote %s has an unknown state", id);
        goto out;
    }
    out->created = acc_sql_col_i64(s, 3);
    out->updated = acc_sql_col_i64(s, 4);
    out->hold_until = acc_sql_col_i64(s, 5);
    out->held_option = (int)acc_sql_col_i64(s, 6);
    acc_sql_col_copy(s, 7, out->agreement, sizeof out->agreement);
    out->reason = acc_sql_col_dup(s, 8);
    out->duration = acc_sql_col_i64(s, 9);
    const char *opts = acc_sql_col_text(s, 10);
    const char *alloc = acc_sql_col_text(s, 11);
    rc = decode(out, opts ? opts : "", alloc ? alloc : "", err);
    if (!rc)
        rc = acc_sql_col_blob(s, 12, &out->offer_xml, &out->offer_len);
    if (rc && rc != ACC_ERR_NOMEM)
        rc = acc_error_set(err, rc, "quote %s could not be read", id);
out:
    acc_sql_done(s);
    acc_sql_read_end(st->db, c);
    if (rc)
        acc_quote_release(out);
    return rc;
}

/* The ids a query of quotes returns (now bound first unless NULL). */
static acc_err quote_ids(struct acc_store *st, const struct acc_sql_query *q,
                         const struct acc_sql_query *q_pg, const acc_time *now,
                         char (**ids)[ACC_ID_LEN + 1], size_t *n, struct acc_error *err)
{
    *ids = NULL;
    *n = 0;
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, acc_sql_pick(c, q, q_pg ? q_pg : q), err);
    size_t cap = 0;
    if (!s) {
        rc = acc_sql_failed(err);
        goto out;
    }
    if (now)
        acc_sql_bind_i64(s, *now);
    bool row = false;
    rc = acc_sql_bound(s, "read quotes", err);
    while (!rc && !(rc = acc_sql_step(s, &row, "read quotes", err)) && row) {
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            void *p = realloc(*ids, nc * sizeof **ids);
            if (!p) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            *ids = p;
            cap = nc;
        }
        acc_sql_col_copy(s, 0, (*ids)[(*n)++], ACC_ID_LEN + 1);
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

acc_err acc_store_quote_due(struct acc_store *st, acc_time now, char (**ids)[ACC_ID_LEN + 1],
                            size_t *n, struct acc_error *err)
{
    return quote_ids(st, &quote_due, NULL, &now, ids, n, err);
}

acc_err acc_store_quote_interrupted(struct acc_store *st, acc_time alive_since,
                                    char (**ids)[ACC_ID_LEN + 1], size_t *n, struct acc_error *err)
{
    acc_time age = store_age(alive_since);
    return quote_ids(st, &quote_interrupted, &quote_interrupted_pg, &age, ids, n, err);
}

acc_err acc_store_quote_count(struct acc_store *st, const char *initiator, const char *client,
                              struct acc_quote_count *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &quote_count, err);
    bool row = false;
    if (!s) {
        rc = acc_sql_failed(err);
    } else {
        acc_sql_bind_text(s, initiator);
        acc_sql_bind_text(s, client ? client : "");
        if (!(rc = acc_sql_bound(s, "count quotes", err)))
            rc = acc_sql_step(s, &row, "count quotes", err);
        if (row) {
            out->all = (uint64_t)acc_sql_col_i64(s, 0);
            out->mine = (uint64_t)acc_sql_col_i64(s, 1);
            out->client = (uint64_t)acc_sql_col_i64(s, 2);
        }
    }
    acc_sql_done(s);
    acc_sql_read_end(st->db, c);
    return rc;
}
