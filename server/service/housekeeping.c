/* SPDX-License-Identifier: Apache-2.0 */
/* housekeeping.c - recovery at start-up and the periodic pass: agreements
 * whose reservation ended become Complete, reservations left open are
 * cancelled, interrupted terminations are finished, link provisionings
 * that failed are retried, and with [database] retain what ended long ago
 * is deleted (part of the service). */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW, openat, fdopendir */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/common/notify.h"
#include "internal.h"

#define HOUSEKEEPING_SECONDS 5
/* Retention deletes this many agreements per write: the writer, which every
 * request's write waits for, is held for one batch at a time. */
#define PRUNE_BATCH 100
/* and this many batches per pass at most, a pause between two */
#define PRUNE_BATCHES  200
#define PRUNE_PAUSE_US 2000

/* ---------------------------------------------------------- housekeeping */

/* Cancels the reservations that negotiations left open (a crash, a time-out,
 * a failed cancel).  The store leaves out the entries of agreements still
 * Pending, so a negotiation running now is never touched. */
static void sweep_open_reservations(struct acc_service *svc)
{
    struct acc_booking *b = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_journal_get(svc->store, NULL, &b, &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    if (n) {
        size_t failed = svc_cancel_bookings(svc, b, n);
        acc_log_info("housekeeping: released %zu reservation(s) left open%s", n - failed,
                     failed ? "; some could not be cancelled yet" : "");
    }
    free(b);
}

static void finish_terminations(struct acc_service *svc)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_agreement_ids(svc->store, ACC_STATE_BIT(ACC_STATE_OBSERVED_AND_TERMINATING), &ids,
                                &n, &err)) {
        acc_log_error("housekeeping: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (svc_release_reservations(svc, ids[i], &err))
            acc_log_warn("housekeeping: agreement %s: %s", ids[i], err.msg);
    }
    free(ids);
}

/* ---------------------------------------------------------------- retention */

/* Removes name in the directory parent, and all it holds, through
 * descriptors: a job's account owns its directory and may still replace a
 * part of it by a link while we work, so no path is followed, only
 * directories opened without following a link (a link is removed as a
 * name).  Depth is bounded. */
static void remove_at(int parent, const char *name, unsigned depth)
{
    int fd =
        depth < 32 ? openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0) {
        if (unlinkat(parent, name, 0) != 0 && errno != ENOENT)
            acc_log_warn("housekeeping: cannot remove %s: %s", name, strerror(errno));
        return;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            remove_at(dirfd(d), e->d_name, depth + 1);
    }
    closedir(d);
    if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        acc_log_warn("housekeeping: cannot remove %s: %s", name, strerror(errno));
}

/* A pruned agreement's job directory (the store only hands over the
 * launcher's own, named by the id, in accordd's own directory of jobs). */
static void remove_tree(const char *dir)
{
    char parent[PATH_MAX];
    const char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) >= sizeof parent)
        return;
    memcpy(parent, dir, (size_t)(slash - dir));
    parent[slash - dir] = '\0';
    int pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return;
    remove_at(pfd, slash + 1, 0);
    close(pfd);
}

/* [database] retain: what ended longer ago goes, batch by batch, until a
 * batch finds less than it could take or the pass has done its share (the
 * next pass goes on). */
static void retention_pass(struct acc_service *svc)
{
    if (svc->cfg->retain <= 0)
        return;
    struct acc_store_prune p = {.before = acc_now() - svc->cfg->retain, .limit = PRUNE_BATCH};
    uint64_t agreements = 0, quotes = 0, dirs = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned b = 0; b < PRUNE_BATCHES && !atomic_load(&svc->stopping); b++) {
        struct acc_error err;
        if (acc_store_prune(svc->store, &p, &err)) {
            acc_log_error("housekeeping: retention: %s", err.msg);
            break;
        }
        for (size_t i = 0; i < p.n_directories; i++)
            remove_tree(p.directories[i]);
        dirs += p.n_directories;
        acc_store_prune_release(&p);
        agreements += p.agreements;
        quotes += p.quotes;
        atomic_fetch_add(&svc->pruned_agreements, p.agreements);
        atomic_fetch_add(&svc->pruned_quotes, p.quotes);
        if (p.agreements < p.limit && p.quotes < p.limit)
            break;
        usleep(PRUNE_PAUSE_US);
    }
    if (!agreements && !quotes)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    char before[ACC_TIME_STRLEN];
    acc_time_format(p.before, before);
    acc_log_info("housekeeping: retention deleted %" PRIu64 " agreement(s), %" PRIu64
                 " quote(s) and %" PRIu64 " job directory(ies) that ended before %s (%.0f ms)",
                 agreements, quotes, dirs, before, ms);
}

static void housekeeping_pass(struct acc_service *svc)
{
    unsigned done = 0;
    struct acc_error err;
    if (acc_store_agreement_complete_ended(svc->store, acc_now(), &done, &err))
        acc_log_error("housekeeping: %s", err.msg);
    else if (done)
        acc_log_debug("housekeeping: %u agreement(s) complete", done);
    svc_quote_expire(svc);
    /* holds a dead instance was booking (dead: not seen for three
     * quarters of the lease, as svc_instance_recover judges) */
    if (svc->shared && svc_instance_may_judge(svc))
        svc_quote_recover(svc, acc_now() - svc_instance_dead_after(svc));
    sweep_open_reservations(svc);
    finish_terminations(svc);
    retention_pass(svc);
}

void svc_end_interrupted(struct acc_service *svc, char (*ids)[ACC_ID_LEN + 1], size_t n,
                         acc_time alive_since)
{
    for (size_t i = 0; i < n; i++) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, ids[i], false, &a, NULL))
            continue;
        bool terminating = a.state == ACC_STATE_PENDING_AND_TERMINATING;
        a.state = terminating ? ACC_STATE_TERMINATED : ACC_STATE_REJECTED;
        a.updated = acc_now();
        free(a.fault_code);
        free(a.reason);
        a.fault_code = terminating ? NULL : strdup(acc_err_symbol(ACC_ERR_INTERRUPTED));
        a.reason = strdup("accordd stopped during the negotiation; every reservation it had "
                          "made was released; submit the offer again");
        struct acc_error serr;
        acc_err rc = acc_store_agreement_end_orphan(svc->store, &a, alive_since, &serr);
        if (rc == ACC_ERR_STATE && alive_since)
            acc_log_info("recovery: %s; left to it", serr.msg);
        else if (rc)
            acc_log_error("recovery: agreement %s: %s", ids[i], serr.msg);
        else
            acc_log_warn("recovery: agreement %s was being negotiated; now %s", ids[i],
                         acc_state_name(a.state));
        acc_agreement_release(&a);
    }
}

/* At start-up nothing negotiates yet: every Pending agreement was cut short,
 * and once they are ended every open reservation is a leftover.  On a
 * shared database other instances negotiate on: the leader ends only what
 * dead ones left (svc_instance_recover), and their leftovers are released
 * by its housekeeping. */
acc_err svc_recover(struct acc_service *svc, struct acc_error *err)
{
    if (svc->shared)
        return ACC_OK;
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc = acc_store_agreement_ids(svc->store,
                                         ACC_STATE_BIT(ACC_STATE_PENDING) |
                                             ACC_STATE_BIT(ACC_STATE_PENDING_AND_TERMINATING),
                                         &ids, &n, err);
    if (rc)
        return rc;
    svc_end_interrupted(svc, ids, n, 0);
    free(ids);
    /* No modification runs yet: what a cut-short one booked is a leftover. */
    struct acc_error merr;
    if (acc_store_modify_recover(svc->store, &merr))
        acc_log_error("recovery: %s", merr.msg);
    /* Nor does a hold: what one cut short booked is a leftover too. */
    svc_quote_recover(svc, acc_now());
    /* Now that none is Pending, every open reservation is a leftover. */
    sweep_open_reservations(svc);
    finish_terminations(svc);
    /* Links of agreements still ahead are provisioned again (idempotent):
     * by housekeeping, at once, not here on the way to serving. */
    struct acc_error perr;
    if (svc_provision_recover(svc, &perr))
        acc_log_error("recovery: %s", perr.msg);
    return ACC_OK;
}

void *svc_housekeeping_main(void *arg)
{
    struct acc_service *svc = arg;
    if (svc_instance_leads(svc))
        svc_provision_retry(svc); /* what recovery queued */
    /* Each pass tells systemd's watchdog (WatchdogSec=) that accordd is
     * alive: passes come at half its time at least, and a pass that hangs
     * longer than WatchdogSec gets accordd restarted. */
    int64_t period = svc->shared ? svc_instance_period(svc) : HOUSEKEEPING_SECONDS;
    int64_t watchdog_us = acc_notify_watchdog_interval_us();
    int64_t watchdog = watchdog_us > 0 && watchdog_us < 1000000 ? 1 : watchdog_us / 1000000;
    if (watchdog > 0 && watchdog < period)
        period = watchdog;
    acc_notify_watchdog();
    pthread_mutex_lock(&svc->lock);
    while (!atomic_load(&svc->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += period > 0 ? period : 1;
        pthread_cond_timedwait(&svc->wake, &svc->lock, &ts);
        if (atomic_load(&svc->stopping))
            break;
        pthread_mutex_unlock(&svc->lock);
        /* shared: the beat first; what must happen once, by the leader */
        svc_instance_duties(svc);
        svc_leftovers(svc);
        svc_instance_recover(svc);
        if (svc_instance_leads(svc))
            housekeeping_pass(svc);
        /* Each instance retries the provisioning that failed on it; the
         * leader took over a dead one's when it began to lead. */
        svc_provision_retry(svc);
        acc_notify_watchdog();
        pthread_mutex_lock(&svc->lock);
    }
    pthread_mutex_unlock(&svc->lock);
    return NULL;
}

/* --------------------------------------------------------- open, close */
