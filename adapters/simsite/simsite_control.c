/* SPDX-License-Identifier: Apache-2.0 */
/* simsite_control.c - the simulated sites' controls (simsite_control in
 * simsite.h): fault injection, other users' bookings, and listings of the
 * calendar. */
#include "simsite.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"

/* ---------------------------------------------------------------- controls */

static acc_err arg_time(const struct acc_kv *a, size_t n, const char *key, acc_time dflt,
                        acc_time *out, struct acc_error *err)
{
    const char *v = acc_kv_get(a, n, key);
    if (!v) {
        *out = dflt;
        return ACC_OK;
    }
    acc_err rc = acc_time_parse(v, out, err);
    if (rc)
        acc_error_prefix(err, "%s", key);
    return rc;
}

static acc_err arg_i64(const struct acc_kv *a, size_t n, const char *key, int64_t dflt,
                       int64_t *out, struct acc_error *err)
{
    const char *v = acc_kv_get(a, n, key);
    if (!v) {
        *out = dflt;
        return ACC_OK;
    }
    acc_err rc = acc_parse_i64(v, 0, INT64_MAX / 4, out, err);
    if (rc)
        acc_error_prefix(err, "%s", key);
    return rc;
}

static acc_err control_fault(struct simsite *s, const struct acc_kv *a, size_t n,
                             struct acc_buf *reply, struct acc_error *err)
{
    static const char *const calls[] = {"any", "preview", "reserve", "query", "cancel"};
    static const char *const actions[] = {"fail",    "unavailable", "hang",       "late",
                                          "compete", "shrink",      "slow_write", "stuck"};
    struct simsite_fault f = {.count = 1};
    const char *call = acc_kv_get(a, n, "call"), *action = acc_kv_get(a, n, "action");
    const char *res = acc_kv_get(a, n, "resource");
    bool ok_call = false, ok_action = false;
    for (int i = 0; call && i < 5; i++) {
        if (strcmp(call, calls[i]) == 0) {
            f.call = (enum simsite_call)i;
            ok_call = true;
        }
    }
    for (int i = 0; action && i < (int)(sizeof actions / sizeof actions[0]); i++) {
        if (strcmp(action, actions[i]) == 0) {
            f.action = (enum simsite_action)i;
            ok_action = true;
        }
    }
    if (!ok_call)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "call= must be preview, reserve, query, cancel or any");
    if (!ok_action)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "action= must be fail, unavailable, hang, late, compete, shrink, "
                             "slow_write or stuck");
    int64_t count;
    acc_err rc = arg_i64(a, n, "seconds", 0, &f.seconds, err);
    if (!rc)
        rc = arg_i64(a, n, "amount", 0, &f.amount, err);
    if (!rc)
        rc = arg_i64(a, n, "count", 1, &count, err);
    if (rc)
        return rc;
    f.count = count > 1000000 ? 1000000 : (int)count;
    if (res) {
        if (!acc_ledger_find(s->ledger, res, NULL))
            return acc_error_set(err, ACC_ERR_INVALID, "%s has no resource '%s'", s->name, res);
        acc_strlcpy(f.resource, res, sizeof f.resource);
    }
    acc_ledger_lock(s->ledger);
    if (s->n_faults == SIMSITE_MAX_FAULTS)
        rc = acc_error_set(err, ACC_ERR_INVALID, "too many armed faults; clear them first");
    else
        s->faults[s->n_faults++] = f;
    acc_ledger_unlock(s->ledger);
    if (!rc)
        acc_buf_printf(reply, "armed %s on %s for %d call(s)\n", actions[f.action], calls[f.call],
                       f.count);
    return rc;
}

static acc_err control_book(struct simsite *s, const struct acc_kv *a, size_t n,
                            struct acc_buf *reply, struct acc_error *err)
{
    const char *resname = acc_kv_get(a, n, "resource");
    size_t r = 0;
    if (resname ? !acc_ledger_find(s->ledger, resname, &r) : acc_ledger_n_resources(s->ledger) == 0)
        return acc_error_set(err, ACC_ERR_INVALID, "%s has no resource '%s'", s->name,
                             resname ? resname : "");
    acc_time start, end;
    int64_t amount, dur;
    acc_err rc = arg_time(a, n, "start", acc_now(), &start, err);
    if (!rc)
        rc = arg_i64(a, n, "amount", 1, &amount, err);
    const char *d = acc_kv_get(a, n, "duration");
    if (!rc && d) {
        rc = acc_duration_parse(d, &dur, err);
        end = start + dur;
    } else if (!rc) {
        rc = arg_time(a, n, "end", start + 3600, &end, err);
    }
    if (rc)
        return rc;
    if (end <= start || amount < 1)
        return acc_error_set(err, ACC_ERR_INVALID, "a booking needs end > start and amount > 0");
    char key[ACC_KEY_MAX];
    const char *k = acc_kv_get(a, n, "key");
    if (k)
        acc_strlcpy(key, k, sizeof key);
    else
        snprintf(key, sizeof key, "manual-%" PRId64 "-%" PRId64, start, acc_mono_us());
    const char *owner = acc_kv_get(a, n, "owner");
    struct acc_ledger *l = s->ledger;
    const char *keys[] = {key};
    acc_ledger_lock(l);
    rc = acc_ledger_get_locked(l, key)
             ? ACC_ERR_INVALID
             : acc_ledger_book_locked(l, key, r, start, end, amount, owner ? owner : "other-user");
    struct acc_sql_ticket *w = NULL;
    if (!rc && acc_ledger_persist_locked(l, keys, 1, -1, &w, NULL)) {
        acc_ledger_unbook_locked(l, key);
        rc = ACC_ERR_NOMEM;
    }
    acc_ledger_unlock(l);
    if (rc == ACC_ERR_BUSY)
        return acc_error_set(err, ACC_ERR_BUSY, "%s: %" PRId64 " of %s not free then", s->name,
                             amount, acc_ledger_resource_name(l, r));
    if (rc)
        return acc_error_set(err, rc, "%s: cannot book '%s'", s->name, key);
    rc = acc_ledger_wait(l, w, err);
    if (rc) {
        acc_ledger_lock(l);
        acc_ledger_unbook_locked(l, key);
        acc_ledger_unlock(l);
        return rc;
    }
    acc_buf_printf(reply, "booked %s\n", key);
    return rc;
}

struct list_ctx {
    struct simsite *s;
    const char *resource;
    acc_time from, until;
    struct acc_buf *reply;
};

static void list_one(const char *key, const struct acc_ledger_booking *b, void *arg)
{
    struct list_ctx *l = arg;
    const char *res = acc_ledger_resource_name(l->s->ledger, b->res);
    if (l->resource && strcmp(l->resource, res) != 0)
        return;
    if (b->end <= l->from || b->start >= l->until)
        return;
    char s1[ACC_TIME_STRLEN], s2[ACC_TIME_STRLEN];
    acc_time_format(b->start, s1);
    acc_time_format(b->end, s2);
    acc_buf_printf(l->reply, "%s %s %s %s %" PRId64 " %s\n", key, res, s1, s2, b->amount, b->owner);
}

acc_err simsite_control(void *state, const char *op, const struct acc_kv *a, size_t n,
                        struct acc_buf *reply, struct acc_error *err)
{
    struct simsite *s = state;
    if (strcmp(op, "fault") == 0)
        return control_fault(s, a, n, reply, err);
    if (strcmp(op, "clear") == 0) {
        acc_ledger_lock(s->ledger);
        s->n_faults = 0;
        acc_ledger_unlock(s->ledger);
        acc_buf_puts(reply, "cleared\n");
        return ACC_OK;
    }
    if (strcmp(op, "book") == 0)
        return control_book(s, a, n, reply, err);
    if (strcmp(op, "unbook") == 0) {
        const char *k = acc_kv_get(a, n, "key");
        if (!k)
            return acc_error_set(err, ACC_ERR_INVALID, "unbook needs key=");
        acc_err rc = simsite_cancel(s, k, NULL, err);
        if (!rc)
            acc_buf_printf(reply, "removed %s\n", k);
        return rc;
    }
    if (strcmp(op, "bookings") == 0 || strcmp(op, "peak") == 0) {
        struct list_ctx l = {s, acc_kv_get(a, n, "resource"), 0, INT64_MAX, reply};
        acc_err rc = arg_time(a, n, "from", 0, &l.from, err);
        if (!rc)
            rc = arg_time(a, n, "until", INT64_MAX, &l.until, err);
        if (rc)
            return rc;
        acc_ledger_lock(s->ledger);
        if (op[0] == 'b') {
            acc_ledger_each_locked(s->ledger, list_one, &l);
        } else {
            for (size_t i = 0; i < acc_ledger_n_resources(s->ledger); i++) {
                const char *name = acc_ledger_resource_name(s->ledger, i);
                const struct acc_calendar *cal = acc_ledger_calendar_locked(s->ledger, i);
                if (l.resource && strcmp(l.resource, name) != 0)
                    continue;
                acc_buf_printf(reply, "%s peak %" PRId64 " capacity %" PRId64 "\n", name,
                               acc_calendar_peak(cal, l.from, l.until), acc_calendar_capacity(cal));
            }
        }
        acc_ledger_unlock(s->ledger);
        return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                         "%s: unknown control '%s' (fault, clear, book, unbook, bookings, peak)",
                         s->name, op);
}
