/* SPDX-License-Identifier: Apache-2.0 */
/* h_agreements.c - /agreements: create, list, read, state, trace, terminate. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../lib/common/id.h"
#include "../../lib/common/strutil.h"
#include "../json/json.h"
#include "http.h"

static void render_agreement(struct acc_http_ctx *ctx, const struct acc_request *rq,
                             struct acc_response *rs, const struct acc_agreement *a, int status)
{
    struct acc_error err;
    acc_buf_reset(&rs->body);
    if (rq->json) {
        acc_json_agreement(a, &rs->body);
    } else if (acc_http_agreement_xml(ctx, a, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, a->id);
        return;
    }
    acc_reply_doc(rq, rs, status);
}

static bool idempotency_key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 200)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (k[i] < 0x21 || k[i] > 0x7e)
            return false;
    }
    return true;
}

/* The answer to a submission once its negotiation is done (or at once in
 * pending mode): the agreement as it stands, or the fault with its id. */
static void create_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                          struct acc_response *rs)
{
    struct acc_error err;
    acc_err rc = rs->wait ? acc_nego_result(rs->wait, &err) : ACC_OK;
    snprintf(rs->location, sizeof rs->location, "/agreements/%s", rs->id);
    if (rc) {
        acc_reply_err(rq, rs, &err, rs->id);
        return;
    }
    /* The agreement document carries the offer it answers. */
    struct acc_agreement full;
    if (acc_service_get(ctx->svc, rs->id, true, &full, &err)) {
        acc_reply_err(rq, rs, &err, rs->id);
        return;
    }
    render_agreement(ctx, rq, rs, &full, full.state == ACC_STATE_PENDING ? 202 : 201);
    acc_agreement_release(&full);
}

/* The submission's own checks: ?mode, the Idempotency-Key (the media type
 * is the router's); false after the fault. */
static bool create_request_ok(const struct acc_request *rq, struct acc_response *rs,
                              const char *mode)
{
    if (mode && strcmp(mode, "pending") != 0 && strcmp(mode, "sync") != 0) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST, "mode is pending or sync", NULL);
        return false;
    }
    if (rq->idempotency_key && !idempotency_key_ok(rq->idempotency_key)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "Idempotency-Key must be 1 to 200 visible ASCII characters", NULL);
        return false;
    }
    return true;
}

/* ?quote=ID commits a held quote: its offer (in q, released by the caller)
 * is the offer, and the body is empty or that offer.  False after the
 * fault. */
static bool create_from_quote(struct acc_http_ctx *ctx, const struct acc_request *rq,
                              struct acc_response *rs, const char *quote, struct acc_quote *q)
{
    struct acc_error err;
    if (!acc_id_valid(quote)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "quote is the id of a quote (POST /negotiations)", NULL);
        return false;
    }
    if (acc_service_quote_get(ctx->svc, quote, q, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return false;
    }
    if (!acc_http_owner_ok(rq, rs, q->initiator, q->id))
        return false;
    if (rq->body_len &&
        (rq->body_len != q->offer_len || memcmp(rq->body, q->offer_xml, rq->body_len) != 0)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "a commit of a quote sends no body or exactly the quote's offer", NULL);
        return false;
    }
    return true;
}

/* Hands the offer to the service; the answer waits for the negotiation
 * unless sub->pending. */
static void create_submit(struct acc_http_ctx *ctx, const struct acc_request *rq,
                          struct acc_response *rs, const struct acc_submit *sub)
{
    struct acc_error err;
    struct acc_submission out;
    acc_err rc = acc_service_submit(ctx->svc, sub, &out, &err);
    if (rc) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    rs->replayed = out.replayed;
    memcpy(rs->id, out.id, sizeof rs->id);
    rs->wait = out.job;
    rs->finish = create_finish;
    /* Pending mode answers at once with the agreement as it stands, and so
     * does a replay whose negotiation is over; otherwise the server parks
     * the request until the job is done. */
    if (sub->pending || acc_nego_is_done(out.job)) {
        if (!acc_nego_is_done(out.job)) {
            acc_nego_release(rs->wait);
            rs->wait = NULL;
        }
        acc_http_finish(ctx, rq, rs);
    }
}

void acc_h_agreement_create(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs)
{
    struct acc_error err;
    const char *mode = acc_query(rq, "mode");
    if (!create_request_ok(rq, rs, mode))
        return;
    const char *quote = acc_query(rq, "quote");
    struct acc_quote q = {0};
    const char *doc = rq->body;
    size_t len = rq->body_len;
    struct acc_offer offer;
    bool parsed = false;
    if (quote) {
        if (!create_from_quote(ctx, rq, rs, quote, &q))
            goto out;
        doc = q.offer_xml;
        len = q.offer_len;
    }
    if (len == 0) {
        acc_reply_error(rq, rs, ACC_ERR_MALFORMED, "the request has no body: send an offer", NULL);
        goto out;
    }
    if (acc_xml_parse_offer(doc, len, &ctx->limits, &offer, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        goto out;
    }
    parsed = true;
    /* One may only ask in one's own name (an admin in anyone's). */
    if (acc_http_acts_for(rq, rs, offer.initiator) && acc_http_offer_identity(rq, rs, &offer)) {
        struct acc_submit sub = {
            .offer = &offer,
            .document = doc,
            .len = len,
            .idempotency_key = rq->idempotency_key,
            .pending = mode && strcmp(mode, "pending") == 0,
            .quote = quote,
            .address = rq->address,
        };
        create_submit(ctx, rq, rs, &sub);
    }
out:
    if (parsed)
        acc_offer_release(&offer); /* what the service did not take */
    acc_quote_release(&q);
}

static bool query_time(const struct acc_request *rq, struct acc_response *rs, const char *key,
                       acc_time *out)
{
    const char *v = acc_query(rq, key);
    *out = 0;
    if (!v)
        return true;
    struct acc_error err;
    if (acc_time_parse(v, out, &err)) {
        acc_error_prefix(&err, "%s", key);
        acc_reply_query_err(rq, rs, &err);
        return false;
    }
    return true;
}

void acc_h_agreement_list(struct acc_http_ctx *ctx, const struct acc_request *rq,
                          struct acc_response *rs)
{
    struct acc_list_filter f = {
        .state = acc_query(rq, "state"),
        .initiator = acc_query(rq, "initiator"),
        .site = acc_query(rq, "site"),
        .limit = 100,
    };
    if (rq->user && !rq->user->admin) {
        /* Users see their own agreements. */
        if (!acc_http_acts_for(rq, rs, f.initiator))
            return;
        f.initiator = rq->user->name;
    }
    enum acc_state st;
    if (f.state && !acc_state_parse(f.state, &st)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "state must be one of Pending, Observed, Rejected, Complete, Terminated, "
                        "PendingAndTerminating, ObservedAndTerminating",
                        NULL);
        return;
    }
    if (!query_time(rq, rs, "from", &f.from) || !query_time(rq, rs, "until", &f.until))
        return;
    struct acc_error err;
    int64_t n;
    const char *limit = acc_query(rq, "limit"), *offset = acc_query(rq, "offset");
    if (limit) {
        if (acc_parse_i64(limit, 1, 1000, &n, &err)) {
            acc_error_prefix(&err, "limit");
            acc_reply_query_err(rq, rs, &err);
            return;
        }
        f.limit = (unsigned)n;
    }
    if (offset) {
        if (acc_parse_i64(offset, 0, 1000000000, &n, &err)) {
            acc_error_prefix(&err, "offset");
            acc_reply_query_err(rq, rs, &err);
            return;
        }
        f.offset = (unsigned)n;
    }
    struct acc_agreement_list l;
    if (acc_service_list(ctx->svc, &f, &l, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (rq->json) {
        acc_json_list(&l, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_xml_list(&l, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_agreement_list_release(&l);
}

void acc_h_agreement_get(struct acc_http_ctx *ctx, const struct acc_request *rq,
                         struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_error err;
    unsigned version;
    if (!acc_http_version_param(rq, rs, &version))
        return;
    /* the offer only for the XML document, which copies it (reading it
     * means inflating it: a fifth of a JSON GET's time) */
    if (acc_service_get_version(ctx->svc, rq->params[0], version, !rq->json, &a, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (acc_http_owner_ok(rq, rs, a.initiator, rq->params[0]))
        render_agreement(ctx, rq, rs, &a, 200);
    acc_agreement_release(&a);
}

void acc_h_agreement_state(struct acc_http_ctx *ctx, const struct acc_request *rq,
                           struct acc_response *rs)
{
    struct acc_service_state s;
    struct acc_error err;
    if (acc_service_state(ctx->svc, rq->params[0], &s, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_owner_ok(rq, rs, s.agreement.initiator, rq->params[0])) {
        /* the reply says why */
    } else if (rq->json) {
        acc_json_state(&s.view, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_xml_state(&s.view, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_service_state_release(&s);
}

void acc_h_agreement_trace(struct acc_http_ctx *ctx, const struct acc_request *rq,
                           struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_trace t;
    struct acc_error err;
    unsigned version;
    if (!acc_http_version_param(rq, rs, &version))
        return;
    if (acc_service_trace_version(ctx->svc, rq->params[0], version, &a, &t, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_owner_ok(rq, rs, a.initiator, rq->params[0])) {
        /* the reply says why */
    } else if (rq->json) {
        acc_json_trace(&a, &t, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_xml_trace(&a, &t, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_trace_release(&t);
    acc_agreement_release(&a);
}

static void terminate_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                             struct acc_response *rs)
{
    struct acc_agreement full;
    struct acc_error err;
    if (acc_service_get(ctx->svc, rs->id, true, &full, &err) == ACC_OK) {
        render_agreement(ctx, rq, rs, &full, full.state == ACC_STATE_TERMINATED ? 200 : 202);
        acc_agreement_release(&full);
    } else {
        acc_reply_err(rq, rs, &err, rs->id);
    }
}

void acc_h_agreement_terminate(struct acc_http_ctx *ctx, const struct acc_request *rq,
                               struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_error err;
    if (rq->user && !rq->user->admin) {
        if (acc_service_get(ctx->svc, rq->params[0], false, &a, &err)) {
            acc_reply_err(rq, rs, &err, NULL);
            return;
        }
        bool mine = acc_http_owner_ok(rq, rs, a.initiator, rq->params[0]);
        acc_agreement_release(&a);
        if (!mine)
            return;
    }
    struct acc_nego *wait = NULL;
    acc_err rc = acc_service_terminate(ctx->svc, rq->params[0], &a, &wait, &err);
    if (rc) {
        acc_reply_err(rq, rs, &err, a.id[0] ? a.id : NULL);
    } else {
        memcpy(rs->id, a.id, sizeof rs->id);
        /* A negotiation under way rolls back first; the answer waits for it. */
        rs->wait = wait;
        if (wait)
            rs->finish = terminate_finish;
        else
            terminate_finish(ctx, rq, rs);
    }
    acc_agreement_release(&a);
}

/* Whether the agreement of the path exists and is the requester's; the
 * reply says why not (404 either way). */
static bool owned(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    if (!rq->user || rq->user->admin)
        return true;
    struct acc_agreement a;
    struct acc_error err;
    if (acc_service_get(ctx->svc, rq->params[0], false, &a, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return false;
    }
    bool mine = acc_http_owner_ok(rq, rs, a.initiator, rq->params[0]);
    acc_agreement_release(&a);
    return mine;
}

void acc_h_agreement_launch(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_run r;
    struct acc_error err;
    if (!owned(ctx, rq, rs))
        return;
    if (acc_service_run(ctx->svc, rq->params[0], false, &a, &r, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_owner_ok(rq, rs, a.initiator, rq->params[0])) {
        /* the reply says why */
    } else if (rq->json) {
        acc_json_run(&r, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_xml_run(&r, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_run_release(&r);
    acc_agreement_release(&a);
}

/* The launch descriptions and the job's output, as plain text. */
void acc_h_agreement_launch_file(struct acc_http_ctx *ctx, const struct acc_request *rq,
                                 struct acc_response *rs)
{
    const char *what = rq->params[1];
    bool output = strcmp(what, "output") == 0;
    if (!output && strcmp(what, "metampich") != 0 && strcmp(what, "rsl") != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "no launch file '%.40s' (there are metampich, rsl and output)",
                 what);
        acc_reply_error(rq, rs, ACC_ERR_NOT_FOUND, msg, NULL);
        return;
    }
    struct acc_agreement a;
    struct acc_run r;
    struct acc_error err;
    if (!owned(ctx, rq, rs))
        return;
    if (acc_service_run(ctx->svc, rq->params[0], output, &a, &r, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (acc_http_owner_ok(rq, rs, a.initiator, rq->params[0])) {
        if (output)
            acc_buf_append(&rs->body, r.output ? r.output : "", r.output ? r.output_len : 0);
        else
            acc_buf_puts(&rs->body, strcmp(what, "rsl") == 0 ? r.rsl : r.metampich);
        acc_reply_text(rs, 200, "text/plain; charset=utf-8");
    }
    acc_run_release(&r);
    acc_agreement_release(&a);
}
