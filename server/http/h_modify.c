/* SPDX-License-Identifier: Apache-2.0 */
/* h_modify.c - POST /agreements/{id}/modify (a co:Modification) and the
 * ?version=N parameter of GET /agreements/{id} and its trace. */
#include <stdint.h>
#include <string.h>

#include "../../lib/common/strutil.h"

#include "../json/json.h"
#include "http.h"

bool acc_http_version_param(const struct acc_request *rq, struct acc_response *rs,
                            unsigned *version)
{
    const char *v = acc_query(rq, "version");
    int64_t n = 0;
    struct acc_error err;
    *version = 0;
    if (!v)
        return true;
    if (acc_parse_i64(v, 1, UINT32_MAX, &n, &err)) {
        acc_error_prefix(&err, "version");
        acc_reply_query_err(rq, rs, &err);
        return false;
    }
    *version = (unsigned)n;
    return true;
}

/* The answer once the change's job is done: the new version, or why not. */
static void modify_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                          struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_error err;
    if (acc_nego_result(rs->wait, &err) || acc_nego_modified(rs->wait, &a, &err)) {
        acc_reply_err(rq, rs, &err, rs->id);
        return;
    }
    acc_buf_reset(&rs->body);
    if (rq->json) {
        acc_json_agreement(&a, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_http_agreement_xml(ctx, &a, &rs->body, &err)) { /* signed, as every version */
        acc_reply_err(rq, rs, &err, a.id);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_agreement_release(&a);
}

void acc_h_agreement_modify(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs)
{
    struct acc_agreement a = {0};
    struct acc_modification m;
    struct acc_error err;
    if (acc_service_get(ctx->svc, rq->params[0], false, &a, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    bool mine = acc_http_owner_ok(rq, rs, a.initiator, rq->params[0]);
    acc_agreement_release(&a);
    if (!mine)
        return;
    if (acc_xml_parse_modification(rq->body, rq->body_len, &ctx->limits, &m, &err)) {
        acc_reply_err(rq, rs, &err, rq->params[0]);
        return;
    }
    /* A job on the negotiation queue: the server parks the request, holding
     * no thread, and calls modify_finish once it is done. */
    struct acc_nego *job = NULL;
    if (acc_service_modify_submit(ctx->svc, rq->params[0], &m, &job, &err)) {
        acc_reply_err(rq, rs, &err, rq->params[0]);
        return;
    }
    acc_strlcpy(rs->id, rq->params[0], sizeof rs->id);
    rs->wait = job;
    rs->finish = modify_finish;
    if (acc_nego_is_done(job))
        acc_http_finish(ctx, rq, rs);
}
