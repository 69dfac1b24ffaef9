/* SPDX-License-Identifier: Apache-2.0 */
/* jobs.c - the launcher's hooks on the service's side, and the hand-over of
 * the open runs after a restart. */
#include "jobs.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"

/* Several instances: the job starts here only when this instance holds
 * its run at this moment (another one may have taken it over, thinking this
 * one dead, and run it already), and at its start as stored (a
 * modification through another instance may have moved it; this
 * instance's beat hands it over again with the new times).  ACC_ERR_BUSY:
 * not here, not now; the run is left as it is. */
static acc_err take_run(struct acc_jobs *j, const char *id, struct acc_error *err)
{
    bool taken;
    acc_err rc = acc_store_run_take(j->store, id, acc_now() - j->dead_after, &taken, err);
    if (!rc && !taken)
        rc = acc_error_set(err, ACC_ERR_BUSY, "another accordd instance holds its run");
    return rc;
}

/* Asked before a job starts: it starts only while its agreement is
 * Observed (a terminate may have come between the commit and the timer). */
static acc_err hook_may_start(void *ctx, const char *id, struct acc_error *err)
{
    struct acc_jobs *j = ctx;
    acc_err rc = j->dead_after ? take_run(j, id, err) : ACC_OK;
    struct acc_agreement a;
    if (rc || (rc = acc_store_agreement_get(j->store, id, false, &a, err)))
        return rc;
    if (a.state != ACC_STATE_OBSERVED)
        rc = acc_error_set(err, ACC_ERR_STATE, "the agreement is %s; the job was not started",
                           acc_state_name(a.state));
    else if (j->dead_after && a.start > acc_now())
        rc = acc_error_set(err, ACC_ERR_BUSY, "its start moved to %lld; it waits for it",
                           (long long)a.start);
    acc_agreement_release(&a);
    return rc;
}

static void hook_started(void *ctx, const struct acc_run *run)
{
    struct acc_jobs *j = ctx;
    struct acc_error err;
    if (acc_store_run_update(j->store, run, &err))
        acc_log_error("agreement %s: recording its job's start: %s", run->agreement, err.msg);
}

/* A job ended: the run is recorded, and an Observed agreement is Complete;
 * what is left of its reservations goes back at once. */
static void hook_ended(void *ctx, const struct acc_run *run, const char *reason)
{
    struct acc_jobs *j = ctx;
    struct acc_error err;
    enum acc_state was;
    acc_err rc = acc_store_run_finish(j->store, run, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                      ACC_STATE_COMPLETE, reason, &was, &err);
    if (rc == ACC_ERR_STATE) {
        rc = acc_store_run_update(j->store, run, &err); /* terminated meanwhile */
    } else if (rc == ACC_OK) {
        struct acc_agreement a;
        if (acc_store_agreement_get(j->store, run->agreement, false, &a, &err) == ACC_OK) {
            if (acc_now() < a.end && j->release(j->ctx, run->agreement, &err))
                acc_log_warn("agreement %s: %s", run->agreement, err.msg);
            acc_agreement_release(&a);
        }
    }
    if (rc)
        acc_log_error("agreement %s: recording its job: %s", run->agreement, err.msg);
}

/* The launcher's way to a site's batch system (launch = sbatch). */
static struct acc_adapter *batch_site(struct acc_jobs *j, const char *site, struct acc_error *err)
{
    struct acc_adapter *ad = j->site_adapter(j->ctx, site);
    if (!ad)
        acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "site %s is no longer configured", site);
    return ad;
}

static acc_err hook_submit(void *ctx, const char *site, const struct acc_job *job, char *job_id,
                           size_t job_id_len, struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_submit(ad, job, job_id, job_id_len, err);
}

static acc_err hook_job_status(void *ctx, const char *site, const char *job_id,
                               struct acc_job_status *out, struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_job_status(ad, job_id, out, err);
}

static acc_err hook_job_cancel(void *ctx, const char *site, const char *job_id,
                               struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_job_cancel(ad, job_id, err);
}

static acc_err hook_process_command(void *ctx, const char *site, const struct acc_job *job,
                                    struct acc_command *out, struct acc_error *err)
{
    struct acc_adapter *ad = batch_site(ctx, site, err);
    if (!ad)
        return ACC_ERR_UNKNOWN_SITE;
    return acc_adapter_process_command(ad, job, out, err);
}

void acc_jobs_hooks(struct acc_jobs *j, struct acc_launcher_hooks *out)
{
    *out = (struct acc_launcher_hooks){.ctx = j,
                                       .may_start = hook_may_start,
                                       .started = hook_started,
                                       .ended = hook_ended,
                                       .submit = hook_submit,
                                       .job_status = hook_job_status,
                                       .job_cancel = hook_job_cancel,
                                       .process_command = hook_process_command};
}

acc_err acc_jobs_resume_one(struct acc_jobs *j, struct acc_launcher *l, const char *id,
                            struct acc_error *err)
{
    struct acc_agreement a;
    struct acc_run r;
    acc_err rc = acc_store_agreement_get(j->store, id, false, &a, err);
    if (rc)
        return rc;
    if (!(rc = acc_store_run_get(j->store, id, false, &r, err))) {
        acc_launcher_resume_run(l, &a, &r);
        acc_run_release(&r);
    }
    acc_agreement_release(&a);
    return rc;
}

acc_err acc_jobs_resume(struct acc_jobs *j, struct acc_launcher *l, struct acc_error *err)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc = acc_store_run_open(j->store, &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct acc_error e;
        if (acc_jobs_resume_one(j, l, ids[i], &e))
            acc_log_error("launch %s: %s", ids[i], e.msg);
    }
    free(ids);
    return ACC_OK;
}

void acc_jobs_lost(struct acc_jobs *j, const char *id, const char *reason)
{
    struct acc_run r;
    struct acc_error err;
    if (acc_store_run_get(j->store, id, false, &r, &err)) {
        acc_log_error("launch %s: %s", id, err.msg);
        return;
    }
    r.state = ACC_RUN_LOST;
    r.ended = acc_now();
    free(r.reason);
    r.reason = strdup(reason);
    hook_ended(j, &r, reason);
    acc_run_release(&r);
}
