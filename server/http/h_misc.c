/* SPDX-License-Identifier: Apache-2.0 */
/* h_misc.c - /templates, /healthz and /metrics. */
#include <inttypes.h>
#include <stdio.h>

#include "../../lib/common/procstat.h"
#include "../../lib/dsig/dsig.h"
#include "http.h"

static void templates(struct acc_http_ctx *ctx, const struct acc_request *rq,
                      struct acc_response *rs, const char *name)
{
    struct acc_service_sites s;
    struct acc_error err;
    if (acc_service_sites(ctx->svc, &s, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    acc_err rc = name ? acc_xml_template(name, &s.view, &rs->body, &err)
                      : acc_xml_templates(&s.view, &rs->body, &err);
    acc_service_sites_release(&s);
    if (rc) {
        acc_reply_err(rq, rs, &err, NULL);
        return;
    }
    /* Templates are WS-Agreement documents: XML whatever was accepted. */
    acc_reply_text(rs, 200, "application/xml");
}

void acc_h_templates(struct acc_http_ctx *ctx, const struct acc_request *rq,
                     struct acc_response *rs)
{
    templates(ctx, rq, rs, NULL);
}

void acc_h_template(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    templates(ctx, rq, rs, rq->params[0]);
}

void acc_h_healthz(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    struct acc_error err;
    if (acc_service_health(ctx->svc, &rs->body, &err)) {
        acc_reply_err(rq, rs, &err, NULL);
        rs->status = 503;
        return;
    }
    acc_reply_text(rs, 200, "text/plain; charset=utf-8");
}

void acc_h_metrics(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    (void)rq;
    acc_service_metrics(ctx->svc, &rs->body);
    acc_buf_puts(&rs->body, "# HELP accord_http_responses_total HTTP responses by status "
                            "class.\n# TYPE accord_http_responses_total counter\n");
    for (int i = 1; i < 6; i++)
        acc_buf_printf(&rs->body, "accord_http_responses_total{code=\"%dxx\"} %" PRIu64 "\n", i,
                       (uint64_t)atomic_load(&ctx->status_class[i]));
    if (ctx->signer) {
        struct acc_signer_stats st;
        acc_signer_stats(ctx->signer, &st);
        acc_buf_printf(&rs->body,
                       "# HELP accord_signatures_total Agreement documents signed (one RSA or "
                       "ECDSA signature each).\n"
                       "# TYPE accord_signatures_total counter\naccord_signatures_total %" PRIu64
                       "\n# HELP accord_signatures_reused_total Agreement documents sent with "
                       "the signature kept for the same bytes.\n"
                       "# TYPE accord_signatures_reused_total counter\n"
                       "accord_signatures_reused_total %" PRIu64 "\n",
                       st.made, st.reused);
    }
    /* What the front end counts (by status code, connections), once it
     * serves; handlers called directly in tests have none. */
    struct acc_httpd *httpd = atomic_load(&ctx->httpd);
    if (httpd)
        acc_httpd_metrics(httpd, &rs->body);
    acc_procstat_metrics(&rs->body);
    acc_reply_text(rs, 200, "text/plain; version=0.0.4; charset=utf-8");
}
