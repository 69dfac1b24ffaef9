/* SPDX-License-Identifier: Apache-2.0 */
/* site_http.c - accord-site on lib/httpd: HTTPS (lib/tls) with a client
 * certificate required of every peer, a pool of epoll threads.
 *
 * The handshake itself refuses a certificate that does not verify against
 * client_ca or whose subject or fingerprint no [peer] names (the admission
 * callback below), so every request read here comes from an admitted peer.
 * Which [peer] that is, is looked up again on every request (SIGHUP may have
 * removed it: its kept-alive connections get 403); lib/httpd holds each peer
 * to its `connections`, counted as soon as a request head is whole (a peer
 * that sends heads and then trickles bodies is held to it as well), and
 * every body to request_timeout.  A body is at most ACC_PROTO_BODY_MAX bytes; one
 * declared up to SITE_DRAIN_MAX is read and dropped before the TooLarge
 * answer, so that a client still sending over TLS reads it.  Requests are
 * then handed whole to site_route (site_routes.c). */
#include "site_internal.h"

#include <stdlib.h>

#include "../lib/common/log.h"
#include "../lib/common/strutil.h"
#include "../lib/proto/proto.h"
#include "../lib/tls/tls_server.h"

/* Bodies up to this size are read (and dropped) before a TooLarge answer. */
#define SITE_DRAIN_MAX (1024 * 1024)
/* Answer bytes held until the peers read them, in all: far above what
 * admitted peers hold (a few answers of a few KiB each per connection). */
#define SITE_MAX_UNSENT ((size_t)64 << 20)

struct site_http {
    struct acc_httpd *httpd;
    struct acc_site *site;
};

/* The admission callback of lib/tls: during the handshake, a certificate
 * that verified against client_ca is admitted when a [peer] names it. */
static bool admit(void *arg, const struct acc_tls_peer *peer)
{
    struct acc_site *s = arg;
    bool ok = site_peers_find(s->peers, peer->subject, peer->fingerprint, NULL);
    if (!ok)
        acc_log_warn("site %s: refused a client certificate no [peer] names: %s (%s)", s->cfg.name,
                     peer->subject, peer->fingerprint);
    return ok;
}

static void fault(void *app, const struct acc_httpd_request *rq, const struct acc_error *err,
                  struct acc_httpd_reply *rs)
{
    (void)rq;
    site_fault(app, err, rs);
}

/* The [peer] of the request's certificate, held to its connections. */
static bool auth(void *app, const struct acc_httpd_request *rq, void *state,
                 struct acc_httpd_who *who, struct acc_httpd_reply *rs)
{
    struct acc_site *s = app;
    struct site_peer *peer = state;
    struct acc_error err;
    if (!rq->peer)
        acc_error_set(&err, ACC_ERR_UNAUTHORIZED, "no client certificate");
    else if (!site_peers_find(s->peers, rq->peer->subject, rq->peer->fingerprint, peer))
        acc_error_set(&err, ACC_ERR_FORBIDDEN, "site %s does not admit %s", s->cfg.name,
                      rq->peer->subject);
    else {
        acc_strlcpy(who->name, peer->name, sizeof who->name);
        who->connections = peer->connections;
        acc_httpd_set_user(state, peer->name);
        return true;
    }
    site_fault(s, &err, rs);
    rs->close = true;
    return false;
}

static void handle(void *app, const struct acc_httpd_request *rq, void *state,
                   struct acc_httpd_reply *rs)
{
    struct site_request srq = {
        .method = rq->method,
        .path = rq->path,
        .body = rq->body,
        .body_len = rq->body_len,
        .peer = state,
        .httpd = acc_httpd_of(rq),
    };
    site_route(app, &srq, rs);
    if (srq.route_class)
        acc_httpd_set_route_class(state, (unsigned)srq.route_class - 1);
}

static const struct acc_httpd_ops ops = {
    .state_size = sizeof(struct site_peer),
    .auth = auth,
    .handle = handle,
    .fault = fault,
};

static const char *const body_types[] = {"application/xml", "text/xml", NULL};

static struct acc_tls_server_cfg tls_cfg(struct acc_site *s, const char *certificate,
                                         const char *key, const char *client_ca)
{
    return (struct acc_tls_server_cfg){
        .certificate = certificate,
        .key = key,
        .client_ca = client_ca,
        .admit = admit,
        .admit_arg = s,
    };
}

acc_err site_http_start(struct acc_site *s, struct site_http **out, struct acc_error *err)
{
    *out = NULL;
    struct site_http *h = calloc(1, sizeof *h);
    if (!h)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    h->site = s;
    struct acc_tls_server_cfg tc = tls_cfg(s, s->cfg.certificate, s->cfg.key, s->cfg.client_ca);
    struct acc_httpd_options o = {
        .host = s->cfg.listen_host,
        .port = s->cfg.listen_port,
        .threads = s->cfg.threads,
        .connection_limit = s->cfg.max_connections,
        .pending_connections = s->cfg.pending_connections,
        .header_timeout = s->cfg.header_timeout,
        .timeout = s->cfg.timeout,
        .request_timeout = s->cfg.request_timeout,
        .max_unsent = SITE_MAX_UNSENT,
        .max_body = ACC_PROTO_BODY_MAX,
        .drain_max = SITE_DRAIN_MAX,
        .body_types = body_types,
        .tls = &tc,
        .quiet = true,
        .access_log = s->cfg.access_log,
        .route_classes = site_route_classes,
    };
    acc_err rc = acc_httpd_start(&o, &ops, s, &h->httpd, err);
    if (rc) {
        free(h);
        return rc;
    }
    *out = h;
    return ACC_OK;
}

unsigned site_http_port(const struct site_http *h)
{
    return acc_httpd_port(h->httpd);
}

acc_err site_http_reload(struct site_http *h, const char *certificate, const char *key,
                         const char *client_ca, struct acc_error *err)
{
    struct acc_tls_server_cfg tc = tls_cfg(h->site, certificate, key, client_ca);
    return acc_httpd_reload_tls(h->httpd, &tc, err);
}

void site_http_stop(struct site_http *h)
{
    if (!h)
        return;
    acc_httpd_stop(h->httpd);
    free(h);
}
