/* SPDX-License-Identifier: Apache-2.0 */
/* router.c - the route table, dispatch, and the shared replies. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../lib/jwt/jwt.h"
#include "../json/json.h"
#include "http.h"

/* Who may call a route when [auth] is configured: USER any user but one
 * of the metrics role, ADMIN administrators, METRICS administrators and the
 * metrics role (a scraper's token reads /metrics and nothing else). */
enum access { USER, ADMIN, METRICS, ANYONE };

/* The route classes of lib/httpd's request-duration histogram, in the
 * order of acc_http_route_classes. */
enum route_class {
    C_AGREEMENTS,
    C_NEGOTIATIONS,
    C_SITES,
    C_TEMPLATES,
    C_ADMIN,
    C_UI,
    C_METRICS,
    C_HEALTH,
    C__COUNT
};

const char *const acc_http_route_classes[C__COUNT + 1] = {
    [C_AGREEMENTS] = "agreements", [C_NEGOTIATIONS] = "negotiations",
    [C_SITES] = "sites",           [C_TEMPLATES] = "templates",
    [C_ADMIN] = "admin",           [C_UI] = "ui",
    [C_METRICS] = "metrics",       [C_HEALTH] = "health", /* then NULL */
};
_Static_assert(C__COUNT <= ACC_HTTPD_MAX_CLASSES, "more route classes than lib/httpd counts");

/* What a route's body is: nothing read (any type), or an XML document. */
enum body { NONE, XML };

struct route {
    struct acc_httpd_route r; /* method, path pattern */
    acc_handler handler;
    enum access access;
    enum body body;
    enum route_class cls;
    /* What a token of an [issuer] needs a scope for: reading, creating
     * (offers, quotes), modifying, cancelling (terminate, release). */
    enum acc_token_op op;
};

static const struct route routes[] = {
    {{"POST", "/agreements"}, acc_h_agreement_create, USER, XML, C_AGREEMENTS, ACC_OP_CREATE},
    {{"POST", "/negotiations"}, acc_h_quote_create, USER, XML, C_NEGOTIATIONS, ACC_OP_CREATE},
    {{"GET", "/negotiations/{}"}, acc_h_quote_get, USER, NONE, C_NEGOTIATIONS, ACC_OP_READ},
    {{"DELETE", "/negotiations/{}"},
     acc_h_quote_release,
     USER,
     NONE,
     C_NEGOTIATIONS,
     ACC_OP_CANCEL},
    {{"GET", "/agreements"}, acc_h_agreement_list, USER, NONE, C_AGREEMENTS, ACC_OP_READ},
    {{"GET", "/agreements/{}"}, acc_h_agreement_get, USER, NONE, C_AGREEMENTS, ACC_OP_READ},
    {{"DELETE", "/agreements/{}"},
     acc_h_agreement_terminate,
     USER,
     NONE,
     C_AGREEMENTS,
     ACC_OP_CANCEL},
    {{"GET", "/agreements/{}/state"}, acc_h_agreement_state, USER, NONE, C_AGREEMENTS, ACC_OP_READ},
    {{"GET", "/agreements/{}/negotiation"},
     acc_h_agreement_trace,
     USER,
     NONE,
     C_AGREEMENTS,
     ACC_OP_READ},
    {{"POST", "/agreements/{}/terminate"},
     acc_h_agreement_terminate,
     USER,
     NONE,
     C_AGREEMENTS,
     ACC_OP_CANCEL},
    {{"POST", "/agreements/{}/modify"},
     acc_h_agreement_modify,
     USER,
     XML,
     C_AGREEMENTS,
     ACC_OP_MODIFY},
    {{"GET", "/agreements/{}/trace"}, acc_h_agreement_trace, USER, NONE, C_AGREEMENTS, ACC_OP_READ},
    {{"GET", "/agreements/{}/launch"},
     acc_h_agreement_launch,
     USER,
     NONE,
     C_AGREEMENTS,
     ACC_OP_READ},
    {{"GET", "/agreements/{}/launch/{}"},
     acc_h_agreement_launch_file,
     USER,
     NONE,
     C_AGREEMENTS,
     ACC_OP_READ},
    {{"GET", "/sites"}, acc_h_sites, USER, NONE, C_SITES, ACC_OP_READ},
    {{"GET", "/sites/{}"}, acc_h_site, USER, NONE, C_SITES, ACC_OP_READ},
    {{"GET", "/sites/{}/preview"}, acc_h_site_preview, USER, NONE, C_SITES, ACC_OP_READ},
    {{"POST", "/adapters/{}/control/{}"},
     acc_h_adapter_control,
     ADMIN,
     NONE,
     C_ADMIN,
     ACC_OP_MODIFY},
    {{"GET", "/templates"}, acc_h_templates, USER, NONE, C_TEMPLATES, ACC_OP_READ},
    {{"GET", "/templates/{}"}, acc_h_template, USER, NONE, C_TEMPLATES, ACC_OP_READ},
    {{"GET", "/healthz"}, acc_h_healthz, ANYONE, NONE, C_HEALTH, ACC_OP_READ},
    {{"GET", "/certificate"}, acc_h_certificate, ANYONE, NONE, C_HEALTH, ACC_OP_READ},
    {{"GET", "/metrics"}, acc_h_metrics, METRICS, NONE, C_METRICS, ACC_OP_READ},
    {{"POST", "/admin/backup"}, acc_h_admin_backup, ADMIN, NONE, C_ADMIN, ACC_OP_READ},
    {{"GET", "/ui"}, acc_h_ui, ANYONE, NONE, C_UI, ACC_OP_READ},
    {{"GET", "/ui/{}"}, acc_h_ui, ANYONE, NONE, C_UI, ACC_OP_READ},
};

static const struct acc_httpd_table table = ACC_HTTPD_TABLE(routes, NULL);

/* Whether the request names a route open to anyone (its access in the
 * table): only then does it pass without credentials.  A path of no route,
 * or a method the route does not take, still needs them, so that what is
 * there shows to none but users. */
static bool open_to_anyone(const struct acc_request *rq)
{
    struct acc_httpd_match m;
    struct acc_error err;
    char params[sizeof rq->param_buf];
    const struct route *r =
        acc_httpd_match(&table, rq->method, rq->path, params, sizeof params, &m, &err);
    return r && r->access == ANYONE;
}

/* Who asks: checked before routing, so that nothing about the server's
 * resources (which paths exist, which methods) shows without credentials.
 * False with the reply set. */
bool acc_http_authenticate(struct acc_http_ctx *ctx, struct acc_request *rq,
                           struct acc_response *rs)
{
    const struct acc_config *cfg = acc_service_config(ctx->svc);
    if (!rq->users)
        rq->users = acc_config_live(cfg);
    cfg = rq->users; /* the users as of now, for the whole request */
    if (!acc_config_auth(cfg) || open_to_anyone(rq))
        return true;
    /* A client certificate (verified in the handshake) that names a user is
     * that user; a bearer token is needed only without one. */
    if (rq->peer_fingerprint || rq->peer_subject) {
        rq->user = acc_config_user_by_cert(cfg, rq->peer_subject, rq->peer_fingerprint);
        if (rq->user)
            return acc_http_identity_of(rq, rs);
    }
    const char *h = rq->authorization;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        acc_reply_error(rq, rs, ACC_ERR_UNAUTHORIZED,
                        "this server needs a token: Authorization: Bearer TOKEN", NULL);
        rs->challenge = true;
        return false;
    }
    h += 7;
    while (*h == ' ')
        h++;
    rq->user = acc_config_user_by_token(cfg, h);
    if (rq->user)
        return acc_http_identity_of(rq, rs);
    /* Not a token of [auth]: a JWT of an [issuer]? */
    if (cfg->n_issuers && acc_jwt_looks_like(h))
        return acc_http_token_user(ctx, rq, rs, h);
    acc_http_refuse(rq, rs, ACC_ERR_UNAUTHORIZED, "invalid_token", NULL,
                    cfg->n_issuers ? "the token is not valid: neither a token of [auth] nor a JWT"
                    : acc_jwt_looks_like(h)
                        ? "the token is not valid: this server trusts no issuer of JWTs"
                        : "the token is not valid");
    return false;
}

bool acc_http_admit(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs)
{
    return acc_http_origin_ok(ctx, rq, rs) && acc_http_authenticate(ctx, rq, rs);
}

void acc_http_request_done(struct acc_http_ctx *ctx, struct acc_request *rq)
{
    acc_http_token_release(rq);
    acc_config_unlive(acc_service_config(ctx->svc), rq->users);
    rq->users = NULL;
    rq->user = NULL;
    acc_identity_release(&rq->identity);
}

/* A token of an [issuer] whose scopes do not allow the route's operation:
 * 403 naming the scope (RFC 6750 insufficient_scope). */
static bool scope_ok(const struct acc_request *rq, struct acc_response *rs, enum acc_token_op op)
{
    if (!rq->by_token || (rq->token_ops & (1u << op)))
        return true;
    const struct acc_issuer_cfg *is = acc_config_issuer(rq->users, rq->identity.issuer);
    const char *scope = is ? acc_issuer_scope(is, op) : "?";
    char msg[300];
    snprintf(msg, sizeof msg, "missing scope %.60s: %.10s %.60s needs it, and the token has it not",
             scope, rq->method, rq->path);
    acc_http_refuse(rq, rs, ACC_ERR_FORBIDDEN, "insufficient_scope", scope, msg);
    return false;
}

static bool permitted(const struct acc_request *rq, struct acc_response *rs, enum access access)
{
    if (access == ANYONE || !rq->user || rq->user->admin ||
        (access == METRICS && rq->user->metrics) || (access == USER && !rq->user->metrics))
        return true;
    char msg[200];
    if (rq->user->metrics)
        snprintf(msg, sizeof msg,
                 "%.100s has the metrics role: it may GET /metrics and nothing else",
                 rq->user->name);
    else
        snprintf(msg, sizeof msg, "%.100s is not an administrator of this server", rq->user->name);
    acc_reply_error(rq, rs, ACC_ERR_FORBIDDEN, msg, NULL);
    return false;
}

bool acc_http_owner_ok(const struct acc_request *rq, struct acc_response *rs, const char *initiator,
                       const char *id)
{
    if (!rq->user || rq->user->admin || (initiator && strcmp(initiator, rq->user->name) == 0))
        return true;
    char msg[160];
    snprintf(msg, sizeof msg, "no agreement with id '%.40s'", id ? id : "");
    acc_reply_error(rq, rs, ACC_ERR_NOT_FOUND, msg, NULL);
    return false;
}

bool acc_http_acts_for(const struct acc_request *rq, struct acc_response *rs, const char *initiator)
{
    if (!rq->user || rq->user->admin || !initiator || strcmp(initiator, rq->user->name) == 0)
        return true;
    char msg[256];
    snprintf(msg, sizeof msg, "%.100s may not act in the name of %.100s", rq->user->name,
             initiator);
    acc_reply_error(rq, rs, ACC_ERR_FORBIDDEN, msg, NULL);
    return false;
}

bool acc_http_offer_identity(const struct acc_request *rq, struct acc_response *rs,
                             struct acc_offer *offer)
{
    acc_identity_release(&offer->identity);
    const struct acc_identity *id = &rq->identity;
    struct acc_identity other = {.user = offer->initiator};
    if (!id->user)
        return true; /* no [auth]: the initiator is only what the offer says */
    if (offer->initiator && strcmp(offer->initiator, id->user) != 0)
        id = &other;
    if (acc_identity_copy(&offer->identity, id) == ACC_OK)
        return true;
    acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory", NULL);
    return false;
}

/* Whether Content-Type ct names one of the media types of types (its type
 * before any parameters, in any case), or one that ends in one of the
 * suffixes (+xml). */
static bool content_type_is(const char *ct, const char *const *types, const char *suffix)
{
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (size_t i = 0; types[i]; i++) {
        if (n == strlen(types[i]) && strncasecmp(ct, types[i], n) == 0)
            return true;
    }
    size_t s = suffix ? strlen(suffix) : 0;
    return s && n > s && strncasecmp(ct + n - s, suffix, s) == 0;
}

/* A request that changes something with a body says what it is, and it
 * is the route's: an XML document, or (a route that reads none) XML or
 * JSON.  A form or text body, or one without a type, is what a page of
 * another site can make a browser send without asking first (origin.c):
 * 415. */
static bool media_ok(const struct acc_request *rq, struct acc_response *rs, enum body body)
{
    static const char *const xml[] = {"application/xml", "text/xml", NULL};
    static const char *const json[] = {"application/json", NULL};
    const char *ct = rq->content_type && *rq->content_type ? rq->content_type : NULL;
    if (strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0)
        return true;
    /* No body, whatever type is named (libcurl names a form for an empty
     * one): a page of another site could send that too, but its browser
     * says where it comes from (origin.c). */
    if (rq->body_len == 0)
        return true;
    if (ct &&
        (content_type_is(ct, xml, "+xml") || (body == NONE && content_type_is(ct, json, "+json"))))
        return true;
    char msg[256];
    if (body == XML)
        snprintf(msg, sizeof msg,
                 "%.10s %.60s takes an XML document (Content-Type: application/xml), not %.80s",
                 rq->method, rq->path, ct ? ct : "a body without a Content-Type");
    else
        snprintf(msg, sizeof msg,
                 "%.10s %.60s reads no body; one sent must be XML or JSON, with its "
                 "Content-Type, not %.80s",
                 rq->method, rq->path, ct ? ct : "a body without a Content-Type");
    acc_reply_error(rq, rs, ACC_ERR_UNSUPPORTED_MEDIA, msg, NULL);
    return false;
}

void acc_http_route(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs)
{
    struct acc_httpd_match m;
    struct acc_error err;
    const struct route *r = acc_httpd_match(&table, rq->method, rq->path, rq->param_buf,
                                            sizeof rq->param_buf, &m, &err);
    if (!r) {
        acc_reply_err(rq, rs, &err, NULL);
        memcpy(rs->allow, m.allow, sizeof rs->allow);
        return;
    }
    memcpy(rq->params, m.params, sizeof rq->params);
    rq->route_class = (int)r->cls + 1;
    if (permitted(rq, rs, r->access) && scope_ok(rq, rs, r->op) && media_ok(rq, rs, r->body))
        r->handler(ctx, rq, rs);
}

void acc_http_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                     struct acc_response *rs)
{
    acc_handler finish = rs->finish;
    rs->finish = NULL;
    if (finish)
        finish(ctx, rq, rs);
    acc_nego_release(rs->wait);
    rs->wait = NULL;
}

void acc_http_dispatch(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs)
{
    if (acc_http_admit(ctx, rq, rs)) {
        acc_http_route(ctx, rq, rs);
        if (rs->wait) {
            acc_nego_wait(rs->wait);
            acc_http_finish(ctx, rq, rs);
        }
    }
    acc_http_request_done(ctx, rq);
}

struct acc_xml_limits acc_http_limits_of(const struct acc_config *cfg)
{
    return (struct acc_xml_limits){
        .max_bytes = cfg->max_body,
        .max_depth = cfg->max_depth,
        .max_elements = 20000,
        .max_attributes = cfg->max_attributes,
        .max_total_attributes = cfg->max_total_attributes,
    };
}

struct acc_http_options acc_http_options_of(const struct acc_config *cfg)
{
    return (struct acc_http_options){
        .host = cfg->listen_host,
        .port = cfg->listen_port,
        .threads = cfg->threads,
        .connection_limit = cfg->connection_limit,
        .client_connections = cfg->client_connections,
        .pending_connections = cfg->pending_connections,
        .header_timeout = cfg->header_timeout,
        .timeout = cfg->timeout,
        .request_timeout = cfg->request_timeout,
        .max_query = cfg->max_query,
        .max_body = cfg->max_body,
        .max_unsent = cfg->max_unsent,
        .client_unsent = cfg->client_unsent,
        .names = cfg->server_names,
        .access_log = cfg->access_log,
        .certificate = cfg->tls_certificate,
        .key = cfg->tls_key,
        .client_ca = cfg->client_ca,
    };
}

void acc_response_init(struct acc_response *rs)
{
    memset(rs, 0, sizeof *rs);
    acc_buf_init(&rs->body);
    rs->status = 500;
}

void acc_response_release(struct acc_response *rs)
{
    acc_buf_release(&rs->body);
    acc_nego_release(rs->wait);
    rs->wait = NULL;
}

void acc_reply_error(const struct acc_request *rq, struct acc_response *rs, acc_err code,
                     const char *msg, const char *agreement_id)
{
    acc_buf_reset(&rs->body);
    rs->status = acc_err_http_status(code);
    if (rq->json) {
        acc_json_fault(code, msg, agreement_id, &rs->body);
        rs->content_type = "application/json";
    } else {
        acc_xml_fault(code, msg, agreement_id, &rs->body);
        rs->content_type = "application/xml";
    }
}

void acc_reply_err(const struct acc_request *rq, struct acc_response *rs,
                   const struct acc_error *err, const char *agreement_id)
{
    acc_reply_error(rq, rs, err->code, err->msg[0] ? err->msg : acc_err_text(err->code),
                    agreement_id);
    /* When a retry can succeed, if the failure knows (a 503 or 429 only). */
    rs->retry_after[0] = '\0';
    if ((rs->status == 503 || rs->status == 429) && err->retry_after > 0)
        snprintf(rs->retry_after, sizeof rs->retry_after, "%lld",
                 (long long)(err->retry_after < 86400 ? err->retry_after : 86400));
}

void acc_reply_query_err(const struct acc_request *rq, struct acc_response *rs,
                         const struct acc_error *err)
{
    acc_reply_error(rq, rs, ACC_ERR_BAD_REQUEST, err->msg[0] ? err->msg : "bad query parameter",
                    NULL);
}

void acc_reply_doc(const struct acc_request *rq, struct acc_response *rs, int status)
{
    if (!acc_buf_ok(&rs->body)) {
        acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory while rendering the reply", NULL);
        return;
    }
    rs->status = status;
    rs->content_type = rq->json ? "application/json" : "application/xml";
}

void acc_reply_text(struct acc_response *rs, int status, const char *content_type)
{
    rs->status = status;
    rs->content_type = content_type;
}

const char *acc_query(const struct acc_request *rq, const char *key)
{
    return acc_kv_get(rq->query, rq->n_query, key);
}
