/* quota.c - the limits of one agreement under a user's quota (part of the
 * service; see quota.h).  Pure: the offer, plan or change and the limits. */
#include "quota.h"

#include <inttypes.h>
#include <stdio.h>

#include "../../lib/common/timefmt.h"
#include "plan.h"

struct svc_quota_who svc_quota_who(const struct acc_config *cfg, const char *initiator)
{
    struct svc_quota_who w = {cfg->n_users ? initiator : NULL, NULL, NULL};
    w.q = acc_config_quota(cfg, w.user, &w.section);
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
    acc_duration_format(w->q->duration, most);
    return acc_error_set(err, ACC_ERR_QUOTA,
                         "an agreement of %s is over %s ([%s] max_duration = %s)", d, who,
                         w->section, most);
}

/* now + advance, without overflow; ACC_TIME_MAX for no limit. */
static acc_time latest_start(const struct svc_quota_who *w, acc_time now)
{
    int64_t a = w->q->advance;
    return a >= ACC_TIME_MAX - now ? ACC_TIME_MAX : now + a;
}

static acc_err over_advance(const struct svc_quota_who *w, acc_time start, acc_time now,
                            struct acc_error *err)
{
    char who[160], t[ACC_TIME_STRLEN], last[ACC_TIME_STRLEN], most[ACC_DURATION_STRLEN];
    whose(w, who, sizeof who);
    acc_time_format(start, t);
    acc_time_format(latest_start(w, now), last);
    acc_duration_format(w->q->advance, most);
    return acc_error_set(err, ACC_ERR_QUOTA,
                         "a start at %s is further ahead than %s allows: no later than %s "
                         "([%s] max_advance = %s)",
                         t, who, last, w->section, most);
}

acc_err svc_quota_offer(const struct svc_quota_who *w, const struct acc_offer *o, acc_time now,
                        struct acc_error *err)
{
    const struct acc_quota *q = w->q;
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
    if (bandwidth > w->q->bandwidth)
        return over(w, "Mbit/s (with the links of its flexible parts)", bandwidth, "max_bandwidth",
                    w->q->bandwidth, err);
    return ACC_OK;
}

acc_err svc_quota_change(const struct svc_quota_who *w, const struct svc_quota_shape *was,
                         const struct svc_quota_shape *to, acc_time now, struct acc_error *err)
{
    const struct acc_quota *q = w->q;
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
