/* runs.c - reading an agreement's launch, and opening the launcher with
 * its hooks (jobs.c) (part of the service). */
#include <stdlib.h>
#include <string.h>

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
    svc->jobs = (struct acc_jobs){svc->store, svc_site_adapter, jobs_release, svc};
    struct acc_launcher_hooks lh;
    acc_jobs_hooks(&svc->jobs, &lh);
    acc_err rc = acc_launcher_new(svc->cfg, &lh, &svc->launcher, err);
    if (!rc)
        rc = acc_jobs_resume(&svc->jobs, svc->launcher, err);
    return rc;
}
