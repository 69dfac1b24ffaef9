/* runs.c - the service's side of the launcher: the batch systems of sites
 * with launch = sbatch, recording a job's end, and reading a run (part of
 * the service). */
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "internal.h"
#include "launcher.h"

/* The launcher's way to a site's batch system (launch = sbatch). */
static struct acc_adapter *batch_site(void *ctx, const char *site, struct acc_error *err)
{
    struct acc_adapter *ad = svc_site_adapter(ctx, site);
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

/* The launcher's word that a job ended: the run is recorded, and an
 * Observed agreement is Complete; what is left of its reservations goes
 * back at once. */
static void hook_run_ended(void *ctx, const struct acc_run *run, const char *reason)
{
    struct acc_service *svc = ctx;
    struct acc_error err;
    enum acc_state was;
    acc_err rc = acc_store_run_finish(svc->store, run, ACC_STATE_BIT(ACC_STATE_OBSERVED),
                                      ACC_STATE_COMPLETE, reason, &was, &err);
    if (rc == ACC_ERR_STATE) {
        rc = acc_store_run_update(svc->store, run, &err); /* terminated meanwhile */
    } else if (rc == ACC_OK) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, run->agreement, false, &a, &err) == ACC_OK) {
            if (acc_now() < a.end && svc_cancel_committed(svc, run->agreement, &err))
                acc_log_warn("agreement %s: %s", run->agreement, err.msg);
            acc_agreement_release(&a);
        }
    }
    if (rc)
        acc_log_error("agreement %s: recording its job: %s", run->agreement, err.msg);
}

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

acc_err svc_launcher_open(struct acc_service *svc, struct acc_error *err)
{
    struct acc_launcher_hooks lh = {svc, hook_run_ended, hook_submit, hook_job_status,
                                    hook_job_cancel};
    acc_err rc = acc_launcher_new(svc->cfg, svc->store, &lh, &svc->launcher, err);
    if (!rc)
        rc = acc_launcher_resume(svc->launcher, err);
    return rc;
}
