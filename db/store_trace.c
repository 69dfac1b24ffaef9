/* SPDX-License-Identifier: Apache-2.0 */
/* store_trace.c - the negotiation trace: since 0008 the events of one
 * version of an agreement are one row of trace_pack, encoded (below) and
 * compressed (store_pack.c), written once when the negotiation settles;
 * events written before 0008 stay one row each in trace_event and are read
 * before the packed ones.
 *
 * The encoding: 'T', then per event its round (4 bytes), amount, t_from,
 * t_until, t_result and elapsed_us (8 bytes each, little endian), then its
 * kind, status (by name, so that a renumbering cannot change what was
 * stored), target, adapter and detail, each a length of 4 bytes (all ones:
 * none) and the bytes.  Encoded events concatenate: an append to a version
 * that has events is the old encoding with the new events after it. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/common/buf.h"
#include "store_internal.h"

#define TRACE_TAG 'T'
#define NO_TEXT   0xffffffffu

static const struct acc_sql_query
    trace_owner = {S_TRACE_OWNER, "SELECT seq, version FROM agreement WHERE id = ?"},
    trace_pack_get = {S_TRACE_PACK_GET,
                      "SELECT events FROM trace_pack WHERE agreement = ? AND version = ?"},
    trace_pack_put = {S_TRACE_PACK_PUT,
                      "INSERT INTO trace_pack (agreement, version, events) VALUES (?,?,?) "
                      "ON CONFLICT(agreement, version) DO UPDATE SET events = excluded.events"},
    trace_get = {S_TRACE_GET, "SELECT round, kind, target, adapter, amount, t_from, t_until, "
                              "t_result, status, elapsed_us, detail FROM trace_event "
                              "WHERE agreement = ? AND version = ? ORDER BY seq"};

/* --------------------------------------------------------------- encoding */

static void put_u32(struct acc_buf *b, uint32_t v)
{
    unsigned char x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    acc_buf_append(b, x, 4);
}

static void put_i64(struct acc_buf *b, int64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)((uint64_t)v >> (8 * i));
    acc_buf_append(b, x, 8);
}

static void put_str(struct acc_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u32(b, s ? (uint32_t)n : NO_TEXT);
    acc_buf_append(b, s, n);
}

static void encode(struct acc_buf *b, const struct acc_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        put_u32(b, e->round);
        put_i64(b, e->amount);
        put_i64(b, e->t_from);
        put_i64(b, e->t_until);
        put_i64(b, e->t_result);
        put_i64(b, e->elapsed_us);
        put_str(b, acc_trace_kind_name(e->kind));
        put_str(b, acc_err_symbol(e->status));
        put_str(b, e->target);
        put_str(b, e->adapter);
        put_str(b, e->detail);
    }
}

struct reader {
    const unsigned char *p;
    size_t left;
    bool bad;
};

static uint64_t get_n(struct reader *r, int bytes)
{
    uint64_t v = 0;
    if (r->left < (size_t)bytes) {
        r->bad = true;
        return 0;
    }
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += bytes;
    r->left -= (size_t)bytes;
    return v;
}

/* A string of the encoding, as a malloc'd copy (NULL: none, or r->bad). */
static char *get_str(struct reader *r, bool *oom)
{
    uint32_t n = (uint32_t)get_n(r, 4);
    if (r->bad || n == NO_TEXT)
        return NULL;
    if (n > r->left) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        *oom = true;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = '\0';
    r->p += n;
    r->left -= n;
    return s;
}

static acc_err decode_one(struct reader *r, struct acc_trace *out)
{
    struct acc_trace_event e = {0};
    bool oom = false;
    e.round = (unsigned)get_n(r, 4);
    e.amount = (int64_t)get_n(r, 8);
    e.t_from = (acc_time)get_n(r, 8);
    e.t_until = (acc_time)get_n(r, 8);
    e.t_result = (acc_time)get_n(r, 8);
    e.elapsed_us = (int64_t)get_n(r, 8);
    char *kind = get_str(r, &oom), *status = get_str(r, &oom);
    e.target = get_str(r, &oom);
    e.adapter = get_str(r, &oom);
    e.detail = get_str(r, &oom);
    if (!kind || !acc_trace_kind_parse(kind, &e.kind))
        e.kind = ACC_TRACE_FAIL;
    acc_err code = status ? acc_err_from_symbol(status) : ACC_OK;
    e.status = code == ACC_ERR__COUNT ? ACC_OK : code;
    acc_err rc = oom ? ACC_ERR_NOMEM : r->bad ? ACC_ERR_STORAGE : acc_trace_add(out, &e);
    free(kind);
    free(status);
    free(e.target);
    free(e.adapter);
    free(e.detail);
    return rc;
}

static acc_err decode(const char *v, size_t n, struct acc_trace *out)
{
    if (n < 1 || v[0] != TRACE_TAG)
        return ACC_ERR_STORAGE;
    struct reader r = {(const unsigned char *)v + 1, n - 1, false};
    acc_err rc = ACC_OK;
    while (!rc && r.left)
        rc = decode_one(&r, out);
    return rc;
}

/* ------------------------------------------------------------------ write */

/* The agreement's row (seq) and current version. */
static acc_err owner(struct acc_sql_conn *c, const char *id, int64_t *seq, unsigned *version,
                     const char *what, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &trace_owner, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_text(s, id);
    acc_err rc = acc_sql_bound(s, what, err);
    bool row = false;
    if (!rc && !(rc = acc_sql_step(s, &row, what, err)) && row) {
        *seq = acc_sql_col_i64(s, 0);
        *version = (unsigned)acc_sql_col_i64(s, 1);
    }
    acc_sql_done(s);
    if (!rc && !row)
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    return rc;
}

/* The packed events of (seq, version) appended to b (nothing if none). */
static acc_err packed_events(struct acc_sql_conn *c, int64_t seq, unsigned version,
                             struct acc_buf *b, bool *found, const char *what,
                             struct acc_error *err)
{
    *found = false;
    struct acc_sql_stmt *s = acc_sql_prepare(c, &trace_pack_get, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, seq);
    acc_sql_bind_i64(s, version);
    acc_err rc = acc_sql_bound(s, what, err);
    bool row = false;
    if (!rc && !(rc = acc_sql_step(s, &row, what, err)) && row) {
        char *v = NULL;
        size_t n = 0;
        rc = store_col_unpacked(s, 0, false, &v, &n);
        if (!rc && v) {
            acc_buf_append(b, v, n);
            *found = true;
        }
        free(v);
        if (rc)
            rc = acc_error_set(err, rc, "database: %s of seq %lld: %s", what, (long long)seq,
                               rc == ACC_ERR_NOMEM ? "out of memory" : "a damaged value");
    }
    acc_sql_done(s);
    return rc;
}

acc_err store_trace_put(struct acc_sql_conn *c, const char *id, const struct acc_trace *t,
                        unsigned version, struct acc_error *err)
{
    if (!t || t->n == 0)
        return ACC_OK;
    int64_t seq = 0;
    unsigned current = 1;
    acc_err rc = owner(c, id, &seq, &current, "write trace", err);
    if (rc)
        return rc == ACC_ERR_NOT_FOUND
                   ? acc_error_set(err, ACC_ERR_STORAGE,
                                   "database: write trace: no agreement %.40s", id)
                   : rc;
    if (!version)
        version = current ? current : 1;
    struct acc_buf b = ACC_BUF_INIT;
    bool found;
    rc = packed_events(c, seq, version, &b, &found, "write trace", err);
    if (!rc && !found)
        acc_buf_append(&b, (char[]){TRACE_TAG}, 1);
    if (!rc)
        encode(&b, t);
    if (!rc && !acc_buf_ok(&b))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_sql_stmt *s = rc ? NULL : acc_sql_prepare(c, &trace_pack_put, err);
    if (!rc && !s)
        rc = acc_sql_failed(err);
    if (!rc) {
        acc_sql_bind_i64(s, seq);
        acc_sql_bind_i64(s, version);
        store_bind_packed(s, b.data, b.len, false);
        rc = acc_sql_run(s, "write trace", err);
    }
    acc_buf_release(&b);
    return rc;
}

/* ------------------------------------------------------------------- read */

acc_err acc_store_trace_get(struct acc_store *st, const char *id, struct acc_trace *out,
                            struct acc_error *err)
{
    return acc_store_trace_get_version(st, id, 0, out, err);
}

/* The events written before 0008, one row each. */
static acc_err old_events(struct acc_sql_conn *c, int64_t seq, unsigned version,
                          struct acc_trace *out, struct acc_error *err)
{
    struct acc_sql_stmt *s = acc_sql_prepare(c, &trace_get, err);
    if (!s)
        return acc_sql_failed(err);
    acc_sql_bind_i64(s, seq);
    acc_sql_bind_i64(s, version);
    bool row = false;
    acc_err rc = acc_sql_bound(s, "read trace", err);
    while (!rc && !(rc = acc_sql_step(s, &row, "read trace", err)) && row) {
        struct acc_trace_event e = {0};
        e.round = (unsigned)acc_sql_col_int(s, 0);
        const char *kind = acc_sql_col_text(s, 1);
        if (!kind || !acc_trace_kind_parse(kind, &e.kind))
            e.kind = ACC_TRACE_FAIL;
        e.target = (char *)acc_sql_col_text(s, 2);
        e.adapter = (char *)acc_sql_col_text(s, 3);
        e.amount = acc_sql_col_i64(s, 4);
        e.t_from = acc_sql_col_i64(s, 5);
        e.t_until = acc_sql_col_i64(s, 6);
        e.t_result = acc_sql_col_i64(s, 7);
        const char *status = acc_sql_col_text(s, 8);
        acc_err code = status ? acc_err_from_symbol(status) : ACC_OK;
        e.status = code == ACC_ERR__COUNT ? ACC_OK : code;
        e.elapsed_us = acc_sql_col_i64(s, 9);
        e.detail = (char *)acc_sql_col_text(s, 10);
        if (acc_trace_add(out, &e))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    acc_sql_done(s);
    return rc;
}

acc_err acc_store_trace_get_version(struct acc_store *st, const char *id, unsigned version,
                                    struct acc_trace *out, struct acc_error *err)
{
    acc_trace_init(out);
    struct acc_sql_conn *c;
    acc_err rc = acc_sql_read_begin(st->db, &c, err);
    if (rc)
        return rc;
    int64_t seq = 0;
    unsigned current = 1;
    rc = owner(c, id, &seq, &current, "read trace", err);
    if (rc == ACC_ERR_NOT_FOUND) {
        acc_sql_read_end(st->db, c);
        return ACC_OK; /* no agreement: no events, as before */
    }
    if (!version)
        version = current ? current : 1;
    struct acc_buf b = ACC_BUF_INIT;
    bool found = false;
    if (!rc)
        rc = old_events(c, seq, version, out, err);
    if (!rc)
        rc = packed_events(c, seq, version, &b, &found, "read trace", err);
    acc_sql_read_end(st->db, c);
    if (!rc && found && !acc_buf_ok(&b))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc && found && (rc = decode(b.data, b.len, out)))
        acc_error_set(err, rc, "database: read trace of %.40s: %s", id,
                      rc == ACC_ERR_NOMEM ? "out of memory" : "a damaged value");
    acc_buf_release(&b);
    if (rc)
        acc_trace_release(out);
    return rc;
}
