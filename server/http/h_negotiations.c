/* h_negotiations.c - /negotiations: quotes (counter-offers, holds).  Thin:
 * parse, call the service, render the co:Quote document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "http.h"

static void render_quote(const struct acc_request *rq, struct acc_response *rs,
                         const struct acc_quote *q, int status)
{
    struct acc_error err;
    acc_buf_reset(&rs->body);
    if (acc_xml_quote(q, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, q->id);
        return;
    }
    snprintf(rs->location, sizeof rs->location, "/negotiations/%s", q->id);
    acc_reply_text(rs, status, "application/xml");
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
    if (!acc_http_acts_for(rq, rs, offer.initiator)) {
        acc_offer_release(&offer);
        return;
    }
    struct acc_quote_request qr = {&offer, rq->body, rq->body_len, hold, option};
    struct acc_quote q;
    acc_err rc = acc_service_quote(ctx->svc, &qr, &q, &err);
    acc_offer_release(&offer);
    if (rc) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    render_quote(rq, rs, &q, 201);
    acc_quote_release(&q);
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
    if (acc_service_quote_release(ctx->svc, rq->params[0], &q, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    render_quote(rq, rs, &q, 200);
    acc_quote_release(&q);
}
