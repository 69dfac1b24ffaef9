/* h_admin.c - /admin/...: the operator's routes (administrators only, the
 * router checks).  POST /admin/backup answers the backup archive
 * (acc_service_backup) as application/x-tar. */
#include "http.h"

void acc_h_admin_backup(struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs)
{
    struct acc_error err;
    int64_t agreements = 0;
    acc_buf_reset(&rs->body);
    if (acc_service_backup(ctx->svc, &rs->body, &agreements, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    acc_reply_text(rs, 200, "application/x-tar");
}
