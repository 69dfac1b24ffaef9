/* SPDX-License-Identifier: Apache-2.0 */
/* h_sites.c - /sites, /sites/{site}, /sites/{site}/preview and the adapters'
 * control operations. */
#include <stdio.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../json/json.h"
#include "http.h"

static void sites(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs,
                  const char *only)
{
    struct acc_service_sites s;
    struct acc_error err;
    if (acc_service_sites(ctx->svc, &s, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    if (rq->json) {
        bool found = !only;
        for (size_t i = 0; only && i < s.n_sites; i++)
            found |= strcmp(s.sites[i].name, only) == 0;
        if (found) {
            acc_json_sites(&s.view, only, &rs->body);
            acc_reply_doc(rq, rs, 200);
        } else {
            char msg[128];
            snprintf(msg, sizeof msg, "no site '%.64s'", only);
            acc_reply_error(rq, rs, ACC_ERR_NOT_FOUND, msg, NULL);
        }
    } else if (acc_xml_sites(&s.view, only, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_service_sites_release(&s);
}

void acc_h_sites(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    sites(ctx, rq, rs, NULL);
}

void acc_h_site(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    sites(ctx, rq, rs, rq->params[0]);
}

void acc_h_site_preview(struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs)
{
    struct acc_error err;
    const char *nodes_s = acc_query(rq, "nodes"), *dur_s = acc_query(rq, "duration");
    const char *from_s = acc_query(rq, "from"), *until_s = acc_query(rq, "until");
    int64_t nodes, duration;
    acc_time from = 0, until = 0;
    if (!nodes_s || !dur_s) {
        acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST,
                        "a preview needs nodes=N and duration= (an ISO 8601 duration such as "
                        "PT2H)",
                        NULL);
        return;
    }
    acc_err rc = acc_parse_i64(nodes_s, 1, 100000000, &nodes, &err);
    if (rc)
        acc_error_prefix(&err, "nodes");
    if (!rc && (rc = acc_duration_parse(dur_s, &duration, &err)))
        acc_error_prefix(&err, "duration");
    if (!rc && from_s && (rc = acc_time_parse(from_s, &from, &err)))
        acc_error_prefix(&err, "from");
    if (!rc && until_s && (rc = acc_time_parse(until_s, &until, &err)))
        acc_error_prefix(&err, "until");
    if (rc) {
        acc_reply_query_err(rq, rs, &err);
        return;
    }
    struct acc_frames frames;
    acc_frames_init(&frames);
    acc_time f_used, u_used;
    if (acc_service_preview(ctx->svc, rq->params[0], nodes, duration, from, until, &frames, &f_used,
                            &u_used, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        acc_frames_release(&frames);
        return;
    }
    struct acc_preview_view v = {rq->params[0], nodes, duration, f_used, u_used, &frames};
    if (rq->json) {
        acc_json_preview(&v, &rs->body);
        acc_reply_doc(rq, rs, 200);
    } else if (acc_xml_preview(&v, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
    } else {
        acc_reply_doc(rq, rs, 200);
    }
    acc_frames_release(&frames);
}

void acc_h_adapter_control(struct acc_http_ctx *ctx, const struct acc_request *rq,
                           struct acc_response *rs)
{
    struct acc_error err;
    if (acc_service_control(ctx->svc, rq->params[0], rq->params[1], rq->query, rq->n_query,
                            &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    acc_reply_text(rs, 200, "text/plain; charset=utf-8");
}
