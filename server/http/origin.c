/* SPDX-License-Identifier: Apache-2.0 */
/* origin.c - what a browser could send on behalf of another site.
 *
 * A page of another origin, opened in a browser on a machine that reaches
 * accordd, can make the browser send requests to it: a form posted across
 * sites, a fetch() without CORS (its answer unread, its effect done), or,
 * after pointing a name of its own at accordd's address (DNS rebinding),
 * any request at all, answers read, since the browser then takes accordd
 * for the page's own origin.  A loopback accordd without [auth] would
 * obey.  So:
 *
 *   - the Host a request names must be one of the names the server answers
 *     to ([server] names; lib/common/hostname.h): a rebound name is not;
 *   - a request that may change something (any method but GET, HEAD and
 *     OPTIONS) that carries an Origin must come from the same origin as the
 *     Host it names: browsers send Origin with every such request, scripts
 *     and command-line clients send none;
 *   - and such a request's body must be XML or JSON (router.c): a form or
 *     text body is what a page of another origin can send without asking
 *     first (a CORS preflight), which accordd never grants.
 *
 * Every refusal is 403 Forbidden and says which rule and which names. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http.h"

static bool changes_state(const char *method)
{
    return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
           strcmp(method, "OPTIONS") != 0;
}

static void refuse(const struct acc_request *rq, struct acc_response *rs, const char *msg)
{
    acc_reply_error(rq, rs, ACC_ERR_FORBIDDEN, msg, NULL);
}

/* The Origin's scheme, host and port (its scheme's default when it names
 * none); false when it is not "scheme://host[:port]". */
static bool origin_parts(const char *origin, bool *https, const char **host, size_t *host_len,
                         unsigned *port)
{
    const char *p;
    if (strncasecmp(origin, "https://", 8) == 0)
        p = origin + 8;
    else if (strncasecmp(origin, "http://", 7) == 0)
        p = origin + 7;
    else
        return false;
    *https = p - origin == 8;
    if (!acc_hostport_split(p, strlen(p), host, host_len, port))
        return false;
    if (*port == 0)
        *port = *https ? 443 : 80;
    return true;
}

bool acc_http_origin_ok(const struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs)
{
    char msg[512], names[256];
    const char *host = NULL;
    size_t host_len = 0;
    unsigned host_port = 0;
    if (rq->host && !acc_hostport_split(rq->host, strlen(rq->host), &host, &host_len, &host_port)) {
        snprintf(msg, sizeof msg, "the Host header '%.100s' is not a host and port", rq->host);
        refuse(rq, rs, msg);
        return false;
    }
    if (host && ctx->names_ready && !acc_hostnames_has(&ctx->names, host, host_len)) {
        acc_hostnames_say(&ctx->names, names, sizeof names);
        snprintf(msg, sizeof msg,
                 "this server does not answer to the name '%.*s' (a name that resolves here "
                 "but is not the server's own is how a page of another site reaches it); it "
                 "answers to: %s ([server] names)",
                 (int)(host_len < 100 ? host_len : 100), host, names);
        refuse(rq, rs, msg);
        return false;
    }
    if (!rq->origin || !changes_state(rq->method))
        return true;
    bool https = false;
    const char *o_host = NULL;
    size_t o_len = 0;
    unsigned o_port = 0;
    bool same = origin_parts(rq->origin, &https, &o_host, &o_len, &o_port) && host &&
                o_len == host_len && strncasecmp(o_host, host, host_len) == 0 &&
                o_port == (host_port ? host_port : (https ? 443u : 80u));
    if (same)
        return true;
    snprintf(msg, sizeof msg,
             "a %.10s from a page of origin '%.100s' is refused: requests that change "
             "something are taken from this server's own pages (origin of Host '%.100s') and "
             "from clients that are not browsers, never from another site's page",
             rq->method, rq->origin, rq->host ? rq->host : "");
    refuse(rq, rs, msg);
    return false;
}
