/* SPDX-License-Identifier: Apache-2.0 */
/* config_ui.c - [ui]: the OpenID Connect provider the web page at /ui/
 * signs in against (authorization code flow with PKCE, as a public client:
 * docs/ui.md), and the page's Content-Security-Policy.
 *
 * Nothing here is secret: the page fetches these values from /ui/config.json
 * before anyone signs in.  What is checked is what would otherwise fail in
 * a browser with no clear message: an issuer that is not an https URL (http
 * only on loopback, for tests), a scope without "openid" (the page checks
 * the ID token's nonce), a redirect that is not an absolute URL.  The
 * issuer's origin goes into the CSP's connect-src, so its characters are
 * kept to those of a URL that cannot end or add a directive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "config_internal.h"

/* The page's policy without the connect-src sources after 'self' (see
 * server/http/h_ui.c for why each directive is there). */
static const char csp_head[] = "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data: blob:; connect-src 'self'";
static const char csp_tail[] =
    "; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/* A character of a URL's host, port or path that cannot end a CSP source
 * or directive (no space, ';', ',', quote) nor start a query or fragment. */
static bool url_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           strchr("-._~/%:@!$&()*+=[]", ch) != NULL;
}

/* localhost, [::1], or an IPv4 address in 127/8 (all of it: 127.0.0.1.example.org
 * is not one). */
static bool loopback_host(const char *host, size_t n)
{
    char a[INET_ADDRSTRLEN];
    struct in_addr in;
    if (n == 9 && strncmp(host, "localhost", 9) == 0)
        return true;
    if (n == 5 && strncmp(host, "[::1]", 5) == 0)
        return true;
    if (n >= sizeof a)
        return false;
    memcpy(a, host, n);
    a[n] = '\0';
    return inet_pton(AF_INET, a, &in) == 1 && (ntohl(in.s_addr) >> 24) == 127;
}

/* The length of url's origin (scheme://host[:port]), or 0 with the reason
 * in why when url is not an absolute https URL (http: on loopback) of the
 * characters above. */
static size_t origin_len(const char *url, const char **why)
{
    size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;
    if (!scheme) {
        *why = "is not an https:// URL";
        return 0;
    }
    for (const char *s = url; *s; s++) {
        if (!url_char(*s)) {
            *why = "has a character a URL of it cannot have (a space, quote, ';', ',', '?' or "
                   "'#')";
            return 0;
        }
    }
    const char *host = url + scheme;
    size_t n = strcspn(host, "/");
    size_t name = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":/");
    if (name == 0 || name > n) {
        *why = "names no host";
        return 0;
    }
    if (scheme == 7 && !loopback_host(host, name)) {
        *why = "is not an https:// URL (http:// only on a loopback address, for tests)";
        return 0;
    }
    return scheme + n;
}

/* Whether the space-separated scope has the value "openid". */
static bool has_openid(const char *scope)
{
    for (const char *s = scope; *s;) {
        s += strspn(s, " ");
        size_t n = strcspn(s, " ");
        if (n == 6 && strncmp(s, "openid", 6) == 0)
            return true;
        s += n;
    }
    return false;
}

int cfg_ui_key(struct cfg_parse *p, const char *k, const char *v)
{
    struct acc_ui_cfg *u = &p->c->ui;
    const char *why = NULL;
    if (strcmp(k, "oidc_issuer") == 0) {
        if (!origin_len(v, &why))
            return cfg_bad(p, "ui", "oidc_issuer: '%s' %s", v, why);
        return acc_conf_set_str(&u->oidc_issuer, v);
    }
    if (strcmp(k, "oidc_client_id") == 0) {
        if (!*v)
            return cfg_bad(p, "ui", "oidc_client_id: names no client");
        for (const char *s = v; *s; s++)
            if ((unsigned char)*s < 0x20 || *s == 0x7f)
                return cfg_bad(p, "ui", "oidc_client_id: has a control character");
        return acc_conf_set_str(&u->oidc_client_id, v);
    }
    if (strcmp(k, "oidc_scope") == 0) {
        for (const char *s = v; *s; s++)
            if ((unsigned char)*s <= 0x20 && *s != ' ')
                return cfg_bad(p, "ui", "oidc_scope: has a control character");
        if (!has_openid(v))
            return cfg_bad(p, "ui",
                           "oidc_scope: '%s' does not ask for openid (the page signs in with "
                           "OpenID Connect and checks the ID token)",
                           v);
        return acc_conf_set_str(&u->oidc_scope, v);
    }
    if (strcmp(k, "oidc_redirect") == 0) {
        if (!origin_len(v, &why))
            return cfg_bad(p, "ui",
                           "oidc_redirect: '%s' %s (the page's absolute URL, such as "
                           "https://accord.example.org/ui/)",
                           v, why);
        return acc_conf_set_str(&u->oidc_redirect, v);
    }
    return cfg_bad(p, "ui", "unknown key '%s'", k);
}

void cfg_ui_finish(struct acc_config *c, struct acc_conf_report *r)
{
    struct acc_ui_cfg *u = &c->ui;
    if (!u->oidc_issuer) {
        static const char *const needs[] = {"oidc_client_id", "oidc_scope", "oidc_redirect"};
        const char *given[] = {u->oidc_client_id, u->oidc_scope, u->oidc_redirect};
        for (size_t i = 0; i < 3; i++)
            if (given[i])
                acc_conf_report_after(r, "ui", needs[i], "%s: needs oidc_issuer", needs[i]);
    } else if (!u->oidc_client_id) {
        acc_conf_report_after(r, "ui", "oidc_issuer",
                              "oidc_issuer: needs oidc_client_id (the page's public client "
                              "at the provider)");
    }
    if (u->oidc_issuer && !u->oidc_scope && !(u->oidc_scope = strdup("openid")))
        goto nomem;
    const char *why;
    size_t n = u->oidc_issuer ? origin_len(u->oidc_issuer, &why) : 0;
    size_t size = sizeof csp_head + 1 + n + sizeof csp_tail;
    free(u->csp);
    if (!(u->csp = malloc(size)))
        goto nomem;
    snprintf(u->csp, size, "%s%s%.*s%s", csp_head, n ? " " : "", (int)n, n ? u->oidc_issuer : "",
             csp_tail);
    return;
nomem:
    r->nomem = true;
}

void cfg_ui_release(struct acc_config *c)
{
    free(c->ui.oidc_issuer);
    free(c->ui.oidc_client_id);
    free(c->ui.oidc_scope);
    free(c->ui.oidc_redirect);
    free(c->ui.csp);
    memset(&c->ui, 0, sizeof c->ui);
}

void cfg_ui_print(const struct acc_config *c, FILE *out)
{
    if (!c->ui.oidc_issuer)
        return;
    fputs("\n[ui]\n", out);
    acc_conf_print_str(out, "oidc_issuer", c->ui.oidc_issuer);
    acc_conf_print_str(out, "oidc_client_id", c->ui.oidc_client_id);
    acc_conf_print_str(out, "oidc_scope", c->ui.oidc_scope);
    acc_conf_print_str(out, "oidc_redirect", c->ui.oidc_redirect);
}
