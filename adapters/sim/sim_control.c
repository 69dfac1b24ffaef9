/* sim_control.c - the simulators' controls (sim_control in sim_core.h):
 * fault injection, other users' bookings, and listings of the calendar. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "sim_core.h"

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

static acc_err control_fault(struct sim *s, const struct acc_kv *a, size_t n, struct acc_buf *reply,
                             struct acc_error *err)
{
    static const char *const calls[] = {"any", "preview", "reserve", "query", "cancel"};
    static const char *const actions[] = {"fail",    "unavailable", "hang",       "late",
                                          "compete", "shrink",      "slow_write", "stuck"};
    struct sim_fault f = {.count = 1};
    const char *call = acc_kv_get(a, n, "call"), *action = acc_kv_get(a, n, "action");
    const char *res = acc_kv_get(a, n, "resource");
    bool ok_call = false, ok_action = false;
    for (int i = 0; call && i < 5; i++) {
        if (strcmp(call, calls[i]) == 0) {
            f.call = (enum sim_call)i;
            ok_call = true;
        }
    }
    for (int i = 0; action && i < (int)(sizeof actions / sizeof actions[0]); i++) {
        if (strcmp(action, actions[i]) == 0) {
            f.action = (enum sim_action)i;
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
        if (!sim_find_res(s, res, NULL))
            return acc_error_set(err, ACC_ERR_INVALID, "%s has no resource '%s'", s->name, res);
        acc_strlcpy(f.resource, res, sizeof f.resource);
    }
    pthread_mutex_lock(&s->lock);
    if (s->n_faults == SIM_MAX_FAULTS)
        rc = acc_error_set(err, ACC_ERR_INVALID, "too many armed faults; clear them first");
    else
        s->faults[s->n_faults++] = f;
    pthread_mutex_unlock(&s->lock);
    if (!rc)
        acc_buf_printf(reply, "armed %s on %s for %d call(s)\n", actions[f.action], calls[f.call],
                       f.count);
    return rc;
}

static acc_err control_book(struct sim *s, const struct acc_kv *a, size_t n, struct acc_buf *reply,
                            struct acc_error *err)
{
    const char *resname = acc_kv_get(a, n, "resource");
    size_t r = 0;
    if (resname ? !sim_find_res(s, resname, &r) : s->n_res == 0)
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
    pthread_mutex_lock(&s->lock);
    rc = acc_map_get(&s->bookings, key)
             ? ACC_ERR_INVALID
             : sim_book_locked(s, key, r, start, end, amount, owner ? owner : "other-user");
    struct sim_store_write *w = NULL;
    if (!rc && sim_persist_locked(s, key, &w, NULL)) {
        sim_unbook_locked(s, key);
        rc = ACC_ERR_NOMEM;
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == ACC_ERR_BUSY)
        return acc_error_set(err, ACC_ERR_BUSY, "%s: %" PRId64 " of %s not free then", s->name,
                             amount, s->res[r].name);
    if (rc)
        return acc_error_set(err, rc, "%s: cannot book '%s'", s->name, key);
    rc = sim_store_wait(s->store, w, err);
    if (rc) {
        pthread_mutex_lock(&s->lock);
        sim_unbook_locked(s, key);
        pthread_mutex_unlock(&s->lock);
        return rc;
    }
    acc_buf_printf(reply, "booked %s\n", key);
    return rc;
}

struct list_ctx {
    struct sim *s;
    const char *resource;
    acc_time from, until;
    struct acc_buf *reply;
};

static void list_one(const char *key, void *value, void *arg)
{
    struct list_ctx *l = arg;
    struct sim_booking *b = value;
    const char *res = l->s->res[b->res].name;
    if (l->resource && strcmp(l->resource, res) != 0)
        return;
    if (b->end <= l->from || b->start >= l->until)
        return;
    char s1[ACC_TIME_STRLEN], s2[ACC_TIME_STRLEN];
    acc_time_format(b->start, s1);
    acc_time_format(b->end, s2);
    acc_buf_printf(l->reply, "%s %s %s %s %" PRId64 " %s\n", key, res, s1, s2, b->amount, b->owner);
}

acc_err sim_control(void *state, const char *op, const struct acc_kv *a, size_t n,
                    struct acc_buf *reply, struct acc_error *err)
{
    struct sim *s = state;
    if (strcmp(op, "fault") == 0)
        return control_fault(s, a, n, reply, err);
    if (strcmp(op, "clear") == 0) {
        pthread_mutex_lock(&s->lock);
        s->n_faults = 0;
        pthread_mutex_unlock(&s->lock);
        acc_buf_puts(reply, "cleared\n");
        return ACC_OK;
    }
    if (strcmp(op, "book") == 0)
        return control_book(s, a, n, reply, err);
    if (strcmp(op, "unbook") == 0) {
        const char *k = acc_kv_get(a, n, "key");
        if (!k)
            return acc_error_set(err, ACC_ERR_INVALID, "unbook needs key=");
        acc_err rc = sim_cancel(s, k, NULL, err);
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
        pthread_mutex_lock(&s->lock);
        if (op[0] == 'b') {
            acc_map_each(&s->bookings, list_one, &l);
        } else {
            for (size_t i = 0; i < s->n_res; i++) {
                if (l.resource && strcmp(l.resource, s->res[i].name) != 0)
                    continue;
                acc_buf_printf(reply, "%s peak %" PRId64 " capacity %" PRId64 "\n", s->res[i].name,
                               acc_calendar_peak(&s->res[i].cal, l.from, l.until),
                               s->res[i].cal.capacity);
            }
        }
        pthread_mutex_unlock(&s->lock);
        return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                         "%s: unknown control '%s' (fault, clear, book, unbook, bookings, peak)",
                         s->name, op);
}
