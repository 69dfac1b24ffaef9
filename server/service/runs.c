/* SPDX-License-Identifier: Apache-2.0 */
/* runs.c - reading an agreement's launch, and opening the launcher with
 * its hooks (jobs.c) (part of the service).
 *
 * Several instances on one database: each run is held by one instance
 * (store_run_hold.c), from the commit by the one that negotiated it.  It
 * keeps the timer, starts the job if it still holds the run then, and
 * watches the job.  At every beat an instance makes the runs it holds
 * follow their agreements as stored (a terminate or a modification may
 * have reached another instance), and the leader takes the runs of dead
 * instances: a waiting one gets its timer here, a running one is watched
 * again by process id when it runs on this host; on another host nothing
 * here can see it, and it is recorded as lost once its reservation ended. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "internal.h"
#include "jobs.h"

acc_err acc_service_run(struct acc_service *svc, const char *id, bool with_output,
                        struct acc_agreement *a, struct acc_run *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = acc_service_get(svc, id, false, a, err);
    if (rc)
        return rc;
    rc = acc_store_run_get(svc->store, id, with_output, out, err);
    if (rc == ACC_OK && with_output && out->state == ACC_RUN_RUNNING && !out->output)
        out->output = acc_launcher_output_so_far(svc->launcher, out, &out->output_len);
    if (rc == ACC_ERR_NOT_FOUND)
        acc_error_set(err, rc,
                      "agreement %s is %s and has no launch (only committed "
                      "agreements have one)",
                      id, acc_state_name(a->state));
    if (rc)
        acc_agreement_release(a);
    return rc;
}

static acc_err jobs_release(void *ctx, const char *id, struct acc_error *err)
{
    return svc_cancel_committed(ctx, id, err);
}

acc_err svc_launcher_open(struct acc_service *svc, struct acc_error *err)
{
    svc->jobs = (struct acc_jobs){svc->store, svc_site_adapter, jobs_release, svc,
                                  svc->shared ? svc_instance_dead_after(svc) : 0};
    struct acc_launcher_hooks lh;
    acc_jobs_hooks(&svc->jobs, &lh);
    acc_err rc = acc_launcher_new(svc->cfg, &lh, &svc->launcher, err);
    if (!rc && !svc->shared)
        rc = acc_jobs_resume(&svc->jobs, svc->launcher, err);
    return rc;
}

enum acc_launcher_held svc_run_held(struct acc_service *svc, const char *id)
{
    enum acc_launcher_held held = acc_launcher_held(svc->launcher, id);
    if (held != ACC_LAUNCHER_NONE || !svc->shared)
        return held;
    struct acc_run r;
    struct acc_error err;
    if (acc_store_run_get(svc->store, id, false, &r, &err))
        return ACC_LAUNCHER_NONE;
    held = r.state == ACC_RUN_WAITING   ? ACC_LAUNCHER_HELD_WAITING
           : r.state == ACC_RUN_RUNNING ? ACC_LAUNCHER_HELD_RUNNING
                                        : ACC_LAUNCHER_NONE;
    acc_run_release(&r);
    return held;
}

/* A run this instance's launcher has: it follows its agreement. */
static void follow(struct acc_service *svc, const struct acc_store_run_hold *h)
{
    if (h->state == ACC_STATE_OBSERVED) {
        acc_launcher_retime(svc->launcher, h->id, h->start, h->end);
    } else {
        acc_log_info("agreement %s is %s (through another instance): its job stops", h->id,
                     acc_state_name(h->state));
        acc_launcher_stop(svc->launcher, h->id);
    }
}

/* The job of a dead instance on another host: nothing here can watch or
 * stop it.  Once its reservation ended it is recorded as lost. */
static void elsewhere(struct acc_service *svc, const struct acc_store_run_hold *h)
{
    if (acc_now() < h->end)
        return;
    char why[400];
    snprintf(why, sizeof why,
             "the accordd instance that watched the job (on host %s) stopped while it ran; its "
             "exit status is in the job's directory on that host",
             h->host[0] ? h->host : "unknown");
    bool taken;
    struct acc_error err;
    if (acc_store_run_take(svc->store, h->id, acc_now() - svc_instance_dead_after(svc), &taken,
                           &err) == ACC_OK &&
        taken)
        acc_jobs_lost(&svc->jobs, h->id, why);
}

/* One run of the beat's list. */
static void beat_one(struct acc_service *svc, const struct acc_store_run_hold *h, const char *host)
{
    if (acc_launcher_held(svc->launcher, h->id) != ACC_LAUNCHER_NONE) {
        if (h->mine)
            follow(svc, h);
        return;
    }
    if (!h->mine && !svc_instance_may_judge(svc))
        return; /* a dead instance's: the leader's to take */
    if (!h->mine && h->run == ACC_RUN_RUNNING && strcmp(h->host, host) != 0) {
        elsewhere(svc, h);
        return;
    }
    bool taken = h->mine;
    struct acc_error err;
    if (!taken && acc_store_run_take(svc->store, h->id, acc_now() - svc_instance_dead_after(svc),
                                     &taken, &err)) {
        acc_log_warn("launch %s: %s", h->id, err.msg);
        return;
    }
    if (!taken)
        return;
    if (!h->mine)
        acc_log_info("agreement %s: its %s job is taken over from an instance that stopped", h->id,
                     acc_run_state_name(h->run));
    if (acc_jobs_resume_one(&svc->jobs, svc->launcher, h->id, &err))
        acc_log_error("launch %s: %s", h->id, err.msg);
}

void svc_runs_beat(struct acc_service *svc)
{
    if (!svc->shared || !svc->launcher)
        return;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    struct acc_store_run_hold *h = NULL;
    size_t n = 0;
    struct acc_error err;
    if (acc_store_run_holds(svc->store, acc_now() - svc_instance_dead_after(svc), &h, &n, &err)) {
        acc_log_warn("instances: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n && !atomic_load(&svc->stopping); i++)
        beat_one(svc, &h[i], host);
    free(h);
}
