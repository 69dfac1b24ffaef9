/* SPDX-License-Identifier: Apache-2.0 */
/* h_ui.c - the web page at /ui/: its files (server/ui/), compiled in by
 * cmake/embed.cmake, served as they are.
 *
 * The page holds no data of its own: it calls the JSON API with the user's
 * token or client certificate, so its files are anyone's.  Every file goes
 * out with an ETag (revalidated on each load: a new accordd serves its new
 * page at once) and the headers that keep the page to its own origin: a
 * Content-Security-Policy without inline script or style, no framing, no
 * referrer (lib/httpd adds nosniff to every answer).
 *
 * /ui/config.json tells the page what to sign in against ([ui]: the OpenID
 * Connect issuer, the page's public client, the scope, the redirect URI);
 * it holds no secret and is anyone's too.  With an issuer, the policy's
 * connect-src names its origin besides the page's own (config_ui.c builds
 * it): the page fetches the provider's discovery document and exchanges the
 * code for tokens there, and may connect nowhere else. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/common/embed.h"
#include "../../lib/common/hash.h"
#include "../config/config.h"
#include "../json/json.h"
#include "http.h"

extern const struct acc_embedded acc_ui[];

/* The policy when the configuration built none (handlers called in tests
 * with a configuration made by hand): the page's origin only. */
static const char csp_self[] = "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static const char *type_of(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
    };
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && strcmp(name + n - e, types[i].ext) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

static void header(struct acc_response *rs, const char *name, const char *value)
{
    if (rs->n_header < sizeof rs->header / sizeof rs->header[0]) {
        rs->header[rs->n_header].name = name;
        rs->header[rs->n_header++].value = value;
    }
}

/* A strong validator of the file's bytes (FNV-1a, 64 bits). */
static void etag_of(const struct acc_embedded *f, char *out, size_t size)
{
    snprintf(out, size, "\"%016" PRIx64 "\"", acc_fnv1a64_bytes(f->data, f->len));
}

/* {"oidc": {"issuer", "client_id", "scope", "redirect_uri"}} or {"oidc": null}:
 * no provider, the page takes a pasted token.  redirect_uri null: the
 * page's own /ui/ URL. */
static void config_json(const struct acc_ui_cfg *u, struct acc_buf *out)
{
    if (!u->oidc_issuer) {
        acc_buf_puts(out, "{\"oidc\":null}\n");
        return;
    }
    acc_buf_puts(out, "{\"oidc\":{\"issuer\":");
    acc_json_string(out, u->oidc_issuer);
    acc_buf_puts(out, ",\"client_id\":");
    acc_json_string(out, u->oidc_client_id);
    acc_buf_puts(out, ",\"scope\":");
    acc_json_string(out, u->oidc_scope ? u->oidc_scope : "openid");
    acc_buf_puts(out, ",\"redirect_uri\":");
    acc_json_string(out, u->oidc_redirect);
    acc_buf_puts(out, "}}\n");
}

void acc_h_ui(struct acc_http_ctx *ctx, const struct acc_request *rq, struct acc_response *rs)
{
    const struct acc_config *cfg = ctx->svc ? acc_service_config(ctx->svc) : NULL;
    const char *csp = cfg && cfg->ui.csp ? cfg->ui.csp : csp_self;
    if (strcmp(rq->path, "/ui") == 0) {
        /* The page's files are named relative to /ui/. */
        snprintf(rs->location, sizeof rs->location, "/ui/");
        acc_reply_text(rs, 301, "text/plain; charset=utf-8");
        acc_buf_puts(&rs->body, "the page is at /ui/\n");
        return;
    }
    const char *name = rq->params[0] ? rq->params[0] : "index.html";
    if (strcmp(name, "config.json") == 0) {
        /* not a file: no ETag, asked again on each load */
        header(rs, "Cache-Control", "no-store");
        header(rs, "Content-Security-Policy", csp);
        header(rs, "Referrer-Policy", "no-referrer");
        if (cfg)
            config_json(&cfg->ui, &rs->body);
        else
            acc_buf_puts(&rs->body, "{\"oidc\":null}\n");
        if (!acc_buf_ok(&rs->body)) {
            rs->n_header = 0;
            acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory while serving the page", NULL);
            return;
        }
        acc_reply_text(rs, 200, "application/json");
        return;
    }
    const struct acc_embedded *f = NULL;
    for (size_t i = 0; acc_ui[i].name && !f; i++) {
        if (strcmp(acc_ui[i].name, name) == 0)
            f = &acc_ui[i];
    }
    if (!f) {
        char msg[128];
        snprintf(msg, sizeof msg, "the page has no file '%.64s'", name);
        acc_reply_error(rq, rs, ACC_ERR_NOT_FOUND, msg, NULL);
        return;
    }
    etag_of(f, rs->etag, sizeof rs->etag);
    header(rs, "ETag", rs->etag);
    header(rs, "Cache-Control", "no-cache");
    header(rs, "Content-Security-Policy", csp);
    header(rs, "Referrer-Policy", "no-referrer");
    if (rq->if_none_match && strstr(rq->if_none_match, rs->etag)) {
        acc_reply_text(rs, 304, NULL);
        return;
    }
    acc_buf_append(&rs->body, f->data, f->len);
    if (!acc_buf_ok(&rs->body)) {
        rs->n_header = 0;
        acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory while serving the page", NULL);
        return;
    }
    acc_reply_text(rs, 200, type_of(name));
}
