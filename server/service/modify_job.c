/* SPDX-License-Identifier: Apache-2.0 */
/* modify_job.c - a change of a committed agreement as a job on the
 * negotiation queue (part of the service): the HTTP thread hands it over
 * and is resumed by its completion, as for a negotiation; a worker runs
 * svc_modify_run (modify.c). */
#include <string.h>

#include "internal.h"

acc_err acc_service_modify_submit(struct acc_service *svc, const char *id,
                                  const struct acc_modification *m, struct acc_nego **job,
                                  struct acc_error *err)
{
    *job = NULL;
    acc_err rc = svc_modify_check(id, m, err);
    if (!rc)
        rc = svc_queue_reserve(svc, false, err);
    if (rc)
        return rc;
    struct acc_nego *j = svc_nego_modify_new(svc, id, m);
    if (!j) {
        svc_queue_unreserve(svc, false);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    svc_queue_push(svc, j);
    *job = j;
    return ACC_OK;
}

acc_err acc_nego_modified(struct acc_nego *job, struct acc_agreement *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&job->lock);
    acc_err rc = ACC_OK;
    if (!job->mod || !job->done || job->result || !job->changed.id[0])
        rc = acc_error_set(err, ACC_ERR_STATE, "the change of agreement %s has no new version",
                           job->id);
    else {
        *out = job->changed;
        memset(&job->changed, 0, sizeof job->changed);
    }
    pthread_mutex_unlock(&job->lock);
    return rc;
}

acc_err acc_service_modify(struct acc_service *svc, const char *id,
                           const struct acc_modification *m, struct acc_agreement *out,
                           struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    struct acc_nego *job = NULL;
    acc_err rc = acc_service_modify_submit(svc, id, m, &job, err);
    if (rc)
        return rc;
    acc_nego_wait(job);
    rc = acc_nego_result(job, err);
    if (!rc)
        rc = acc_nego_modified(job, out, err);
    acc_nego_release(job);
    return rc;
}
