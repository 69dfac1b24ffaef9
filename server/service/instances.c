/* SPDX-License-Identifier: Apache-2.0 */
/* instances.c - several accordd on one PostgreSQL database (part of the
 * service).  Each instance renews its row every quarter of [database]
 * lease; the one that holds the lease 'leader' does what must happen once
 * (housekeeping: hold expiry, leftovers released, terminations finished,
 * retention), ends the negotiations of instances that died (their
 * agreements Rejected or Terminated, which lets the sweep release what they
 * booked), takes their runs (runs.c), and when it begins to lead queues the
 * links of every agreement ahead for provisioning again (a dead instance's
 * retries; each instance retries its own failures).  A terminate that
 * reached another instance left the agreement PendingAndTerminating: the
 * instance running it finds that at its next beat and stops the
 * negotiation.
 *
 * Times: a lease is taken for three quarters of [database] lease and
 * renewed every quarter, so a dead leader's lease expires within three
 * quarters of the lease after its death and is taken over within a quarter
 * more; an instance not seen for three quarters of the lease is dead.
 * Leases and rows are written and judged by the database's clock (in the
 * store's statements), never by an instance's own: one whose clock is off
 * misjudges nobody.  Each beat also measures this clock against the
 * database's (acc_store_clock): over [database] clock_warn a warning in
 * the log, over clock_refuse this instance neither leads nor negotiates
 * (it would place agreements at the wrong time): new offers get a 503
 * that names the skew, /healthz fails, until the clock is right again.
 *
 * On a database file (SQLite) there is one accordd: it leads. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/id.h"
#include "../../lib/common/log.h"
#include "../../lib/common/timefmt.h"
#include "internal.h"

#define DAY 86400

int64_t svc_instance_period(const struct acc_service *svc)
{
    if (!svc->shared)
        return 5;
    int64_t p = svc->cfg->lease / 4;
    return p > 0 ? p : 1;
}

int64_t svc_instance_dead_after(const struct acc_service *svc)
{
    return svc->cfg->lease * 3 / 4 > 0 ? svc->cfg->lease * 3 / 4 : 1;
}

acc_err svc_instance_open(struct acc_service *svc, struct acc_error *err)
{
    svc->shared = acc_store_shared(svc->store);
    if (!svc->shared) {
        atomic_store(&svc->leader, true);
        return ACC_OK;
    }
    acc_err rc = acc_id_new(svc->instance, err);
    if (rc)
        return rc;
    acc_store_set_instance(svc->store, svc->instance);
    svc->started = acc_now();
    acc_log_info("instance %s on a shared database (lease %llds, clock_warn %llds, "
                 "clock_refuse %llds)",
                 svc->instance, (long long)svc->cfg->lease, (long long)svc->cfg->clock_warn,
                 (long long)svc->cfg->clock_refuse);
    svc_instance_beat(svc);
    return ACC_OK;
}

/* Negotiations of this instance that another was asked to terminate. */
static void stop_asked(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_stopped_here(svc->store, &ids, &n, &err)) {
        acc_log_warn("instances: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct acc_nego *job = svc_queue_find(svc, ids[i]);
        if (!job)
            continue;
        acc_log_info("agreement %s: terminated through another instance", ids[i]);
        svc_queue_stop_job(svc, job);
        acc_nego_release(job);
    }
    free(ids);
}

/* How far this clock is from the database's: kept for /metrics and the
 * refusals, logged when its state changes and every 10 minutes while it
 * is over clock_warn.  A measure that fails, or whose round trip was too
 * long to tell, keeps the last one. */
static void clock_check(struct acc_service *svc)
{
    int64_t offset = 0, rtt = 0;
    struct acc_error err;
    if (acc_store_clock(svc->store, &offset, &rtt, &err)) {
        acc_log_warn("instances: %s", err.msg);
        return;
    }
    /* the offset is known to half the round trip: one too slow to tell
     * clock_warn apart is no measure */
    if (rtt / 2 > svc->cfg->clock_warn * 1000000)
        return;
    atomic_store(&svc->clock_offset_us, offset);
    int64_t off = offset < 0 ? -offset : offset;
    int state = off > svc->cfg->clock_refuse * 1000000 ? SVC_CLOCK_REFUSE
                : off > svc->cfg->clock_warn * 1000000 ? SVC_CLOCK_WARN
                                                       : SVC_CLOCK_OK;
    int was = atomic_exchange(&svc->clock_state, state);
    int64_t now = acc_mono_us();
    if (state == was && (state == SVC_CLOCK_OK || now - svc->clock_logged_us < 600 * 1000000LL))
        return;
    svc->clock_logged_us = now;
    /* the database's time minus this clock's: positive, this one is behind */
    const char *how = offset > 0 ? "behind" : "ahead of";
    double secs = (double)off / 1e6, trip = (double)rtt / 1e3;
    if (state == SVC_CLOCK_REFUSE)
        acc_log_error("clock: this instance's clock is %.3f s %s the database's (round trip "
                      "%.1f ms), more than [database] clock_refuse (%llds): it neither leads "
                      "nor negotiates (new offers get 503) until its clock is set right (NTP)",
                      secs, how, trip, (long long)svc->cfg->clock_refuse);
    else if (state == SVC_CLOCK_WARN)
        acc_log_warn("clock: this instance's clock is %.3f s %s the database's (round trip "
                     "%.1f ms), more than [database] clock_warn (%llds); set it right (NTP) "
                     "before it reaches clock_refuse (%llds)",
                     secs, how, trip, (long long)svc->cfg->clock_warn,
                     (long long)svc->cfg->clock_refuse);
    else
        acc_log_info("clock: within %.3f s of the database's again", secs);
}

acc_err svc_instance_clock_refuse(struct acc_service *svc, struct acc_error *err)
{
    if (atomic_load(&svc->clock_state) != SVC_CLOCK_REFUSE)
        return ACC_OK;
    int64_t offset = atomic_load(&svc->clock_offset_us);
    acc_error_set(err, ACC_ERR_STORAGE_AWAY,
                  "this instance's clock is %.3f s %s the database's, more than [database] "
                  "clock_refuse (%llds) allows: it negotiates nothing until its clock is set "
                  "right; retry, or send the request to another instance",
                  (double)(offset < 0 ? -offset : offset) / 1e6, offset > 0 ? "behind" : "ahead of",
                  (long long)svc->cfg->clock_refuse);
    err->retry_after = svc_instance_period(svc);
    return ACC_ERR_STORAGE_AWAY;
}

void svc_instance_beat(struct acc_service *svc)
{
    if (!svc->shared)
        return;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    acc_time now = acc_now();
    int64_t t0 = acc_mono_us();
    bool was = atomic_load(&svc->leader), held = false;
    struct acc_error err;
    acc_err rc = acc_store_instance_beat(svc->store, host, (int64_t)getpid(), svc->started,
                                         was ? now - DAY : 0, &err);
    if (!rc)
        clock_check(svc);
    /* a clock too far off leads not: the lease is not taken nor renewed
     * (one held runs out) */
    if (!rc && atomic_load(&svc->clock_state) != SVC_CLOCK_REFUSE)
        rc = acc_store_lease(svc->store, "leader", svc_instance_dead_after(svc), &held, &err);
    if (rc) {
        /* lead no more (another may take over); the database away: judge
         * nobody until every instance could renew its row again */
        acc_log_warn("instances: %s", err.msg);
        held = false;
        if (err.code == ACC_ERR_STORAGE_AWAY)
            atomic_store(&svc->reached_since, 0);
    } else if (acc_mono_us() - t0 > svc_instance_period(svc) * 1000000) {
        /* as good as away: the others' rows may have waited as long */
        acc_log_warn("instances: the beat took %lld ms", (long long)(acc_mono_us() - t0) / 1000);
        atomic_store(&svc->reached_since, 0);
    } else if (!atomic_load(&svc->reached_since)) {
        atomic_store(&svc->reached_since, now);
    }
    /* held from the beat's start for dead_after (on the monotonic clock:
     * the lease ends by the database's, at least that long after its
     * renewal): past that (a later beat stuck), this instance no longer
     * counts itself the leader */
    atomic_store(&svc->lease_until, held ? t0 + svc_instance_dead_after(svc) * 1000000 : 0);
    atomic_store(&svc->leader, held);
    if (held != was)
        acc_log_info("instance %s %s", svc->instance,
                     held ? "leads: housekeeping and recovery run here" : "no longer leads");
    if (held && !was)
        atomic_store(&svc->new_leader, true);
}

void svc_instance_leave(struct acc_service *svc)
{
    if (!svc->shared)
        return;
    struct acc_error err;
    if (acc_store_instance_leave(svc->store, &err)) {
        acc_log_warn("instances: %s; the others take over once its lease has run out", err.msg);
        return;
    }
    atomic_store(&svc->leader, false);
    acc_log_info("instance %s stops: its lease and its runs go to the other instances",
                 svc->instance);
}

bool svc_instance_leads(struct acc_service *svc)
{
    if (!svc->shared)
        return true;
    return atomic_load(&svc->leader) && acc_mono_us() < atomic_load(&svc->lease_until);
}

bool svc_instance_may_judge(struct acc_service *svc)
{
    if (!svc->shared)
        return true;
    acc_time since = atomic_load(&svc->reached_since);
    return svc_instance_leads(svc) && since &&
           acc_now() - since >= svc_instance_dead_after(svc) + svc_instance_period(svc);
}

void svc_instance_duties(struct acc_service *svc)
{
    if (!svc->shared)
        return;
    /* A new leader provisions again (idempotent) the links of agreements
     * still ahead: what the retry list of an instance that died held. */
    struct acc_error err;
    if (atomic_exchange(&svc->new_leader, false) && svc_provision_recover(svc, &err))
        acc_log_error("instances: %s", err.msg);
    stop_asked(svc);
    svc_runs_beat(svc);
}

void *svc_instance_main(void *arg)
{
    struct acc_service *svc = arg;
    pthread_mutex_lock(&svc->lock);
    while (!atomic_load(&svc->stopping)) {
        pthread_mutex_unlock(&svc->lock);
        svc_instance_beat(svc);
        pthread_mutex_lock(&svc->lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += svc_instance_period(svc);
        if (!atomic_load(&svc->stopping))
            pthread_cond_timedwait(&svc->wake, &svc->lock, &ts);
    }
    pthread_mutex_unlock(&svc->lock);
    return NULL;
}

/* Modifications of instances that stopped: their marks cleared, so that
 * the sweep releases the new reservations they made (the old ones, still
 * committed, stay: the agreement keeps its version). */
static void end_dead_modifications(struct acc_service *svc)
{
    size_t n = 0;
    struct acc_error err;
    if (acc_store_modify_orphans(svc->store, acc_now() - svc_instance_dead_after(svc), &n, &err))
        acc_log_error("recovery: %s", err.msg);
    else if (n)
        acc_log_warn("recovery: %zu modification(s) of instances that stopped ended; the "
                     "agreements keep their version",
                     n);
}

void svc_instance_recover(struct acc_service *svc)
{
    if (!svc->shared || !svc_instance_may_judge(svc))
        return;
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    acc_time alive_since = acc_now() - svc_instance_dead_after(svc);
    if (acc_store_orphans(svc->store, alive_since, &ids, &n, &err)) {
        acc_log_error("recovery: %s", err.msg);
        return;
    }
    if (n)
        acc_log_warn("recovery: %zu negotiation(s) of instances that stopped", n);
    /* each judged again as it is ended: an instance may beat again meanwhile */
    svc_end_interrupted(svc, ids, n, alive_since);
    free(ids);
    end_dead_modifications(svc);
}
