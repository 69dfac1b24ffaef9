/* SPDX-License-Identifier: Apache-2.0 */
/* quota.c - the limits of one agreement under a user's quota (part of the
 * service; see quota.h).  Pure: the offer, plan or change and the limits. */
#include "quota.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "../../lib/common/timefmt.h"
#include "plan.h"

struct svc_quota_who svc_quota_who(const struct acc_config *cfg, const char *initiator,
                                   const char *address)
{
    const struct acc_config *now = acc_config_live(cfg);
    struct svc_quota_who w = {.user = acc_config_auth(now) ? initiator : NULL,
                              .address = acc_config_auth(now) ? NULL : address};
    const char *section = NULL;
    w.q = *acc_config_quota(now, w.user, &section);
    snprintf(w.section, sizeof w.section, "%s", section ? section : "quota");
    acc_config_unlive(cfg, now);
    return w;
}

/* "the quota of alice" or "the quota" (everyone's, without [auth]). */
static void whose(const struct svc_quota_who *w, char *out, size_t size)
{
    if (w->user)
        snprintf(out, size, "the quota of %.100s", w->user);
    else
        snprintf(out, size, "the quota (without [auth] every request counts as one user's)");
}

/* The holder of what is counted per site and link: "alice", or without
 * [auth] "address 192.0.2.7" or "everyone". */
static void holder(const struct svc_quota_who *w, char *out, size_t size)
{
    if (w->user)
        snprintf(out, size, "%.100s", w->user);
    else if (w->address)
        snprintf(out, size, "address %.60s (without [auth] a client counts by its address)",
                 w->address);
    else
        snprintf(out, size, "everyone (without [auth] one user)");
}

static acc_err over(const struct svc_quota_who *w, const char *what, int64_t asked, const char *key,
                    int64_t limit, struct acc_error *err)
{
    char who[160];
    whose(w, who, sizeof who);
    return acc_error_set(err, ACC_ERR_QUOTA,
                         "%" PRId64 " %s in one agreement is over %s ([%s] %s = %" PRId64 ")",
                         asked, what, who, w->section, key, limit);
}

static acc_err over_duration(const struct svc_quota_who *w, int64_t asked, struct acc_error *err)
{
    char who[160], d[ACC_DURATION_STRLEN], most[ACC_DURATION_STRLEN];
    whose(w, who, sizeof who);
    acc_duration_format(asked, d);
    acc_duration_format(w->q.duration, most);
    return acc_error_set(err, ACC_ERR_QUOTA,
                         "an agreement of %s is over %s ([%s] max_duration = %s)", d, who,
                         w->section, most);
}

/* now + advance, without overflow; ACC_TIME_MAX for no limit. */
static acc_time latest_start(const struct svc_quota_who *w, acc_time now)
{
    int64_t a = w->q.advance;
    return a >= ACC_TIME_MAX - now ? ACC_TIME_MAX : now + a;
}

static acc_err over_advance(const struct svc_quota_who *w, acc_time start, acc_time now,
                            struct acc_error *err)
{
    char who[160], t[ACC_TIME_STRLEN], last[ACC_TIME_STRLEN], most[ACC_DURATION_STRLEN];
    whose(w, who, sizeof who);
    acc_time_format(start, t);
    acc_time_format(latest_start(w, now), last);
    acc_duration_format(w->q.advance, most);
    return acc_error_set(err, ACC_ERR_QUOTA,
                         "a start at %s is further ahead than %s allows: no later than %s "
                         "([%s] max_advance = %s)",
                         t, who, last, w->section, most);
}

acc_err svc_quota_offer(const struct svc_quota_who *w, const struct acc_offer *o, acc_time now,
                        struct acc_error *err)
{
    const struct acc_quota *q = &w->q;
    int64_t nodes = 0, bandwidth = 0;
    for (size_t i = 0; i < o->n_components; i++)
        nodes += o->components[i].nodes;
    for (size_t i = 0; i < o->n_links; i++)
        bandwidth += o->links[i].bandwidth;
    if (nodes > q->nodes)
        return over(w, "nodes", nodes, "max_nodes", q->nodes, err);
    if (bandwidth > q->bandwidth)
        return over(w, "Mbit/s", bandwidth, "max_bandwidth", q->bandwidth, err);
    if (o->duration > q->duration)
        return over_duration(w, o->duration, err);
    if (o->earliest > latest_start(w, now))
        return over_advance(w, o->earliest, now, err);
    return ACC_OK;
}

void svc_quota_window(const struct svc_quota_who *w, acc_time now, int64_t duration,
                      acc_time *deadline)
{
    acc_time last = latest_start(w, now);
    if (last<ACC_TIME_MAX - duration && * deadline> last + duration)
        *deadline = last + duration;
}

acc_err svc_quota_plan(const struct svc_quota_who *w, const struct acc_plan *p,
                       struct acc_error *err)
{
    int64_t bandwidth = 0;
    for (size_t i = 0; i < p->n_links; i++)
        bandwidth += p->links[i].bandwidth;
    if (bandwidth > w->q.bandwidth)
        return over(w, "Mbit/s (with the links of its flexible parts)", bandwidth, "max_bandwidth",
                    w->q.bandwidth, err);
    return ACC_OK;
}

acc_err svc_quota_change(const struct svc_quota_who *w, const struct svc_quota_shape *was,
                         const struct svc_quota_shape *to, acc_time now, struct acc_error *err)
{
    const struct acc_quota *q = &w->q;
    if (to->nodes > q->nodes && to->nodes > was->nodes)
        return over(w, "nodes", to->nodes, "max_nodes", q->nodes, err);
    if (to->bandwidth > q->bandwidth && to->bandwidth > was->bandwidth)
        return over(w, "Mbit/s", to->bandwidth, "max_bandwidth", q->bandwidth, err);
    int64_t d = to->end - to->start;
    if (d > q->duration && d > was->end - was->start)
        return over_duration(w, d, err);
    if (to->start > was->start && to->start > latest_start(w, now))
        return over_advance(w, to->start, now, err);
    return ACC_OK;
}

int64_t svc_quota_charge(const struct svc_quota_who *w, int64_t amount, acc_time start,
                         acc_time end, acc_time now)
{
    acc_time last = latest_start(w, now);
    acc_time until = last >= ACC_TIME_MAX - w->q.duration ? ACC_TIME_MAX : last + w->q.duration;
    if (start < now)
        start = now;
    if (end > until)
        end = until;
    if (end <= start || amount <= 0)
        return 0;
    int64_t secs = end - start;
    return secs > INT64_MAX / amount ? INT64_MAX : amount * secs;
}

acc_err svc_quota_hours(const struct svc_quota_who *w, const struct svc_quota_use *u, size_t n,
                        struct acc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        bool nodes = u[i].kind == ACC_RES_NODES;
        int64_t limit = nodes ? w->q.node_hours : w->q.mbit_hours;
        if (limit == ACC_QUOTA_UNLIMITED || u[i].asked <= u[i].was)
            continue;
        int64_t total = u[i].held > INT64_MAX - u[i].asked ? INT64_MAX : u[i].held + u[i].asked;
        if (total <= limit * 3600)
            continue;
        char who[200];
        holder(w, who, sizeof who);
        /* whole hours, rounded up: never shown as within the limit */
        int64_t hours = total / 3600 + (total % 3600 != 0);
        int64_t held = u[i].held / 3600 + (u[i].held % 3600 != 0);
        return acc_error_set(err, ACC_ERR_QUOTA,
                             "%s would hold %" PRId64 " %s on %s %s (%" PRId64
                             " of them already), over the most allowed ([%s] %s = %" PRId64
                             "); terminate or shorten an agreement there, or wait for one to end",
                             who, hours, nodes ? "node-hours" : "Mbit-hours",
                             nodes ? "site" : "link", u[i].name, held, w->section,
                             nodes ? "max_node_hours" : "max_mbit_hours", limit);
    }
    return ACC_OK;
}
