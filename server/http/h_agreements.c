/* h_agreements.c - /agreements: create, list, read, state, trace, terminate. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common/strutil.h"
#include "../json/json.h"
#include "http.h"

static void render_agreement(const struct acc_request *rq, struct acc_response *rs,
                             const struct acc_agreement *a, int status)
{
    struct acc_error err;
    acc_buf_reset(&rs->body);
    if (rq->json) {
        acc_json_agreement(a, &rs->body);
    } else if (acc_xml_agreement(a, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, a->id);
        return;
    }
    acc_reply_doc(rq, rs, status);
}

static bool xml_content_type(const char *ct)
{
    if (!ct || !*ct)
        return true;
    /* curl -d sends form encoding by default; the body is the document all the same. */
    static const char *const ok[] = {"application/xml", "text/xml",
                                     "application/x-www-form-urlencoded"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (strncasecmp(ct, ok[i], strlen(ok[i])) == 0)
            return true;
    }
    const char *semi = strchr(ct, ';');
    size_t n = semi ? (size_t)(semi - ct) : strlen(ct);
    return n > 4 && strncasecmp(ct + n - 4, "+xml", 4) == 0;
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

void acc_h_agreement_create(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs)
{
    struct acc_error err;
    if (!xml_content_type(rq->content_type)) {
        char msg[160];
        snprintf(msg, sizeof msg, "the offer must be sent as application/xml, not %.80s",
                 rq->content_type);
        acc_reply_error(rq, rs, ACC_ERR_UNSUPPORTED_MEDIA, msg, NULL);
        return;
    }
    const char *mode = acc_query(rq, "mode");
    if (mode && strcmp(mode, "pending") != 0 && strcmp(mode, "sync") != 0) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST, "mode is pending or sync", NULL);
        return;
    }
    if (rq->idempotency_key && !idempotency_key_ok(rq->idempotency_key)) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "Idempotency-Key must be 1 to 200 visible ASCII characters", NULL);
        return;
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
    /* One may only ask in one's own name (an admin in anyone's). */
    if (!acc_http_owner_ok(rq, rs, offer.initiator)) {
        acc_offer_release(&offer);
        return;
    }
    struct acc_submit sub = {
        .offer = &offer,
        .document = rq->body,
        .len = rq->body_len,
        .idempotency_key = rq->idempotency_key,
        .pending = mode && strcmp(mode, "pending") == 0,
    };
    struct acc_agreement a;
    bool stored = false, replayed = false;
    acc_err rc = acc_service_submit(ctx->svc, &sub, &a, &stored, &replayed, &err);
    acc_offer_release(&offer);
    rs->replayed = replayed;
    if (stored)
        snprintf(rs->location, sizeof rs->location, "/agreements/%s", a.id);
    if (rc) {
        acc_reply_err(rq, rs, &err, stored ? a.id : NULL);
    } else if (a.state == ACC_STATE_PENDING) {
        render_agreement(rq, rs, &a, 202);
    } else {
        /* The agreement document carries the offer it answers. */
        struct acc_agreement full;
        if (acc_service_get(ctx->svc, a.id, true, &full, &err) == ACC_OK) {
            render_agreement(rq, rs, &full, 201);
            acc_agreement_release(&full);
        } else {
            acc_reply_err(rq, rs, &err, a.id);
        }
    }
    acc_agreement_release(&a);
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
        err.code = ACC_ERR_BAD_REQUEST;
        acc_reply_err(rq, rs, &err, NULL);
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
        if (!acc_http_owner_ok(rq, rs, f.initiator ? f.initiator : rq->user->name))
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
            err.code = ACC_ERR_BAD_REQUEST;
            acc_reply_err(rq, rs, &err, NULL);
            return;
        }
        f.limit = (unsigned)n;
    }
    if (offset) {
        if (acc_parse_i64(offset, 0, 1000000000, &n, &err)) {
            acc_error_prefix(&err, "offset");
            err.code = ACC_ERR_BAD_REQUEST;
            acc_reply_err(rq, rs, &err, NULL);
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
    if (acc_service_get(ctx->svc, rq->params[0], true, &a, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (acc_http_owner_ok(rq, rs, a.initiator))
        render_agreement(rq, rs, &a, 200);
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
    if (!acc_http_owner_ok(rq, rs, s.agreement.initiator)) {
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
    if (acc_service_trace(ctx->svc, rq->params[0], &a, &t, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_owner_ok(rq, rs, a.initiator)) {
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
        bool mine = acc_http_owner_ok(rq, rs, a.initiator);
        acc_agreement_release(&a);
        if (!mine)
            return;
    }
    acc_err rc = acc_service_terminate(ctx->svc, rq->params[0], &a, &err);
    if (rc) {
        acc_reply_err(rq, rs, &err, a.id[0] ? a.id : NULL);
    } else {
        struct acc_agreement full;
        if (acc_service_get(ctx->svc, a.id, true, &full, &err) == ACC_OK) {
            render_agreement(rq, rs, &full, full.state == ACC_STATE_TERMINATED ? 200 : 202);
            acc_agreement_release(&full);
        } else {
            acc_reply_err(rq, rs, &err, a.id);
        }
    }
    acc_agreement_release(&a);
}

void acc_h_agreement_launch(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs)
{
    struct acc_agreement a;
    struct acc_run r;
    struct acc_error err;
    if (acc_service_run(ctx->svc, rq->params[0], false, &a, &r, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (!acc_http_owner_ok(rq, rs, a.initiator)) {
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
    if (acc_service_run(ctx->svc, rq->params[0], output, &a, &r, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (acc_http_owner_ok(rq, rs, a.initiator)) {
        if (output)
            acc_buf_append(&rs->body, r.output ? r.output : "", r.output ? r.output_len : 0);
        else
            acc_buf_puts(&rs->body, strcmp(what, "rsl") == 0 ? r.rsl : r.metampich);
        acc_reply_text(rs, 200, "text/plain; charset=utf-8");
    }
    acc_run_release(&r);
    acc_agreement_release(&a);
}
