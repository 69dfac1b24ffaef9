/* SPDX-License-Identifier: Apache-2.0 */
/* remote_jobs.c - the remote adapter's batch jobs at the site (the proxies
 * of a meta-job): submit, status, cancel. */
#include "remote_internal.h"

#include "../../lib/proto/proto.h"

acc_err remote_submit(void *state, const struct acc_job *job, char *job_id, size_t job_id_len,
                      struct acc_error *err)
{
    struct remote *r = state;
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    struct acc_job j = *job;
    struct acc_identity who = remote_identity(r, job->identity);
    j.identity = job->identity ? &who : NULL;
    acc_proto_write_job(&j, &body);
    acc_err rc = acc_buf_ok(&body) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    /* Never tried again: a job whose answer was lost may be running. */
    if (!rc)
        rc = remote_call(r, "POST", "/v1/jobs", body.data, body.len, false, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_job_ref(acc_buf_str(&rep.body), rep.body.len, job_id, job_id_len, &why))
            rc = remote_protocol_error(r, "submit", &why, err);
        else if (!acc_proto_key_ok(job_id))
            rc = acc_error_set(err, ACC_ERR_ADAPTER, "%s: protocol error: submit: bad job id",
                               r->what);
    }
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_job_status(void *state, const char *job_id, struct acc_job_status *out,
                          struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    acc_err rc = remote_key_path(r, "/v1/jobs/", job_id, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "GET", path, NULL, 0, true, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_job_status(acc_buf_str(&rep.body), rep.body.len, out, &why))
            rc = remote_protocol_error(r, "job status", &why, err);
    }
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_job_cancel(void *state, const char *job_id, struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[160];
    acc_err rc = remote_key_path(r, "/v1/jobs/", job_id, "", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "DELETE", path, NULL, 0, true, &rep, err);
    remote_reply_release(&rep);
    return rc;
}
