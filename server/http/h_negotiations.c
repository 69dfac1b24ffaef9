/* SPDX-License-Identifier: Apache-2.0 */
/* h_negotiations.c - /negotiations: quotes (counter-offers, holds).  Thin:
 * parse, call the service, render the co:Quote document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../json/json.h"
#include "http.h"

static void render_quote(const struct acc_request *rq, struct acc_response *rs,
                         const struct acc_quote *q, int status)
{
    struct acc_error err;
    acc_buf_reset(&rs->body);
    if (rq->json) {
        acc_json_quote(q, &rs->body);
    } else if (acc_xml_quote(q, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, q->id);
        return;
    }
    snprintf(rs->location, sizeof rs->location, "/negotiations/%s", q->id);
    acc_reply_doc(rq, rs, status);
}

/* The answer once the job is done: the quote, or the fault. */
static void quote_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                         struct acc_response *rs)
{
    (void)ctx;
    struct acc_error err;
    acc_err rc = acc_nego_result(rs->wait, &err);
    const struct acc_quote *q = rc ? NULL : acc_nego_quote(rs->wait);
    if (rc)
        acc_reply_err(rq, rs, &err, NULL);
    else if (!q)
        acc_reply_error(rq, rs, ACC_ERR_INTERNAL, "the quote job left no quote", NULL);
    else
        render_quote(rq, rs, q, strcmp(rq->method, "POST") == 0 ? 201 : 200);
}

/* Parks the request until the job on the negotiation queue is done. */
static void wait_for(struct acc_http_ctx *ctx, const struct acc_request *rq,
                     struct acc_response *rs, struct acc_nego *job)
{
    rs->wait = job;
    rs->finish = quote_finish;
    if (acc_nego_is_done(job))
        acc_http_finish(ctx, rq, rs);
}

void acc_h_quote_create(struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs)
{
    struct acc_error err;
    int64_t hold = 0;
    int option = -1;
    const char *h = acc_query(rq, "hold"), *opt = acc_query(rq, "option");
    if (h && acc_duration_parse(h, &hold, &err)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST, "hold is a duration such as PT2M", NULL);
        return;
    }
    if (opt) {
        char *end;
        long v = strtol(opt, &end, 10);
        if (*end || end == opt || v < 0 || v > 1000) {
            acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST, "option is a number such as 0", NULL);
            return;
        }
        option = (int)v;
    }
    if (rq->body_len == 0) {
        acc_reply_error(rq, rs, ACC_ERR_MALFORMED, "the request has no body: send an offer", NULL);
        return;
    }
    struct acc_offer offer;
    if (acc_xml_parse_offer(rq->body, rq->body_len, &ctx->limits, &offer, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_acts_for(rq, rs, offer.initiator) || !acc_http_offer_identity(rq, rs, &offer)) {
        acc_offer_release(&offer);
        return;
    }
    struct acc_nego *job;
    acc_err rc = acc_service_quote_submit(ctx->svc, &offer, rq->body, rq->body_len, hold, option,
                                          rq->address, &job, &err);
    acc_offer_release(&offer); /* what the service did not take */
    if (rc) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    wait_for(ctx, rq, rs, job);
}

void acc_h_quote_get(struct acc_http_ctx *ctx, const struct acc_request *rq,
                     struct acc_response *rs)
{
    struct acc_error err;
    struct acc_quote q;
    if (acc_service_quote_get(ctx->svc, rq->params[0], &q, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (acc_http_owner_ok(rq, rs, q.initiator, q.id))
        render_quote(rq, rs, &q, 200);
    acc_quote_release(&q);
}

void acc_h_quote_release(struct acc_http_ctx *ctx, const struct acc_request *rq,
                         struct acc_response *rs)
{
    struct acc_error err;
    struct acc_quote q;
    if (acc_service_quote_get(ctx->svc, rq->params[0], &q, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    bool ok = acc_http_owner_ok(rq, rs, q.initiator, q.id);
    acc_quote_release(&q);
    if (!ok)
        return;
    struct acc_nego *job;
    if (acc_service_quote_release_submit(ctx->svc, rq->params[0], &job, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    wait_for(ctx, rq, rs, job);
}
