/* SPDX-License-Identifier: Apache-2.0 */
/* h_admin.c - /admin/...: the operator's routes (administrators only, the
 * router checks).  POST /admin/backup answers the backup archive
 * (acc_service_backup) as application/x-tar; without [auth] only when
 * [server] anonymous_backup says so. */
#include "http.h"

void acc_h_admin_backup(struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs)
{
    struct acc_error err;
    int64_t agreements = 0;
    /* The archive holds the signing key and the database: without [auth]
     * anyone who reaches the port would take them, so only where the
     * operator asked for it by name. */
    if (!rq->user && !acc_service_config(ctx->svc)->anonymous_backup) {
        acc_reply_error(rq, rs, ACC_ERR_FORBIDDEN,
                        "a backup holds the signing key: it needs an administrator of [auth] "
                        "(or [server] anonymous_backup = yes on a server only its operators "
                        "reach)",
                        NULL);
        return;
    }
    acc_buf_reset(&rs->body);
    if (acc_service_backup(ctx->svc, &rs->body, &agreements, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    acc_reply_text(rs, 200, "application/x-tar");
}
