/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - accordctl's one way to talk to the server: requests through the
 * client library, replies turned into output and exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"

int ctl_request(const struct ctl *c, const char *method, const char *path, const char *body,
                size_t len, const char *const *headers, struct acc_client_reply *out)
{
    memset(out, 0, sizeof *out);
    char url[2048], auth[1024], err[ACC_CLIENT_ERROR_SIZE];
    size_t sl = strlen(c->server);
    int n = snprintf(url, sizeof url, "%.*s%s", (int)(sl && c->server[sl - 1] == '/' ? sl - 1 : sl),
                     c->server, path);
    if (n < 0 || (size_t)n >= sizeof url) {
        fprintf(stderr, "accordctl: the URL is longer than %zu bytes\n", sizeof url - 1);
        return CTL_USAGE;
    }
    /* Accept, Authorization, the caller's, NULL. */
    const char *all[2 + 8 + 1] = {c->xml ? "Accept: application/xml" : "Accept: application/json"};
    size_t k = 1;
    if (c->token) {
        n = snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
        if (n < 0 || (size_t)n >= sizeof auth) {
            fprintf(stderr, "accordctl: the token is longer than %zu bytes\n",
                    sizeof auth - 1 - strlen("Authorization: Bearer "));
            return CTL_USAGE;
        }
        all[k++] = auth;
    }
    for (size_t i = 0; headers && headers[i]; i++) {
        if (k + 1 >= sizeof all / sizeof all[0]) {
            fprintf(stderr, "accordctl: more than 8 extra headers\n");
            return CTL_USAGE;
        }
        all[k++] = headers[i];
    }
    /* A POST without a body still says Content-Length: 0. */
    const char *none = strcmp(method, "POST") == 0 ? "" : NULL;
    struct acc_client_request rq = {.method = method,
                                    .url = url,
                                    .body = body ? body : none,
                                    .len = body ? len : 0,
                                    .headers = all,
                                    .timeout = c->timeout,
                                    .cacert = c->cacert,
                                    .cert = c->cert,
                                    .key = c->key};
    if (acc_client_do(&rq, out, err, sizeof err) != 0) {
        fprintf(stderr, "accordctl: %s: %s\n", c->server, err);
        return CTL_NETWORK;
    }
    return CTL_OK;
}

int ctl_exit_for(long status)
{
    if (status >= 200 && status < 300)
        return CTL_OK;
    switch (status) {
    case 401:
    case 403:
        return CTL_DENIED;
    case 404:
        return CTL_NOT_FOUND;
    case 409:
        return CTL_REJECTED;
    case 429: /* too many connections from this client */
    case 503: /* overloaded, an adapter unreachable, a restart: a retry can succeed */
        return CTL_RETRY;
    default:
        return status >= 500 ? CTL_SERVER : CTL_ERROR;
    }
}

json_t *ctl_parse(const struct acc_client_reply *r)
{
    json_error_t err;
    json_t *v = json_loadb(r->body ? r->body : "", r->len, JSON_DECODE_ANY, &err);
    if (!v)
        fprintf(stderr, "accordctl: the server's reply (HTTP %ld) is not JSON: %s\n", r->status,
                err.text);
    return v;
}

/* The text of the next <co:NAME>...</co:NAME> from *at on (advanced past
 * it), entities undone; NULL when there is none.  Enough for accordd's flat
 * faults. */
static char *xml_text(const char *name, const char **at)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<co:%s>", name);
    snprintf(close, sizeof close, "</co:%s>", name);
    const char *s = strstr(*at, open);
    const char *e = s ? strstr(s, close) : NULL;
    if (!e)
        return NULL;
    s += strlen(open);
    *at = e + strlen(close);
    char *out = malloc((size_t)(e - s) + 1), *o = out;
    if (!out)
        return NULL;
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    while (s < e) {
        bool done = false;
        for (size_t i = 0; i < 5 && !done; i++) {
            size_t n = strlen(ents[i].ent);
            if (strncmp(s, ents[i].ent, n) == 0) {
                *o++ = ents[i].c;
                s += n;
                done = true;
            }
        }
        if (!done)
            *o++ = *s++;
    }
    *o = '\0';
    return out;
}

/* An XML fault (asked for with --xml). */
static bool xml_fault(const struct acc_client_reply *r)
{
    const char *c = r->body ? strstr(r->body, "co:code=\"") : NULL;
    if (!c)
        return false;
    c += 9;
    const char *q = strchr(c, '"');
    const char *at = r->body;
    char *msg = xml_text("Message", &at);
    fprintf(stderr, "accordctl: %.*s: %s\n", q ? (int)(q - c) : 0, c, msg ? msg : "");
    free(msg);
    char *d;
    while ((d = xml_text("Detail", &at))) {
        fprintf(stderr, "  %s\n", d);
        free(d);
    }
    return true;
}

int ctl_fault(const struct acc_client_reply *r)
{
    if (xml_fault(r))
        return ctl_exit_for(r->status);
    json_t *f = r->body ? json_loadb(r->body, r->len, JSON_DECODE_ANY, NULL) : NULL;
    const char *code = ctl_str(f, "code", NULL);
    if (!code) {
        /* Not one of accordd's faults (a proxy, say): say what came. */
        fprintf(stderr, "accordctl: HTTP %ld from the server%s%.200s\n", r->status,
                r->len ? ": " : "", r->len ? r->body : "");
    } else {
        fprintf(stderr, "accordctl: %s: %s\n", code, ctl_str(f, "message", ""));
        const json_t *d = json_object_get(f, "details");
        for (size_t i = 0; i < json_array_size(d); i++) {
            const char *line = ctl_str_at(d, i, NULL);
            if (line)
                fprintf(stderr, "  %s\n", line);
        }
        const char *id = ctl_str(f, "agreementId", NULL);
        if (id)
            fprintf(stderr, "  agreement %s is kept; see: accordctl trace %s\n", id, id);
    }
    json_decref(f);
    return ctl_exit_for(r->status);
}

int ctl_pass_through(const struct acc_client_reply *r)
{
    if (r->len) {
        fwrite(r->body, 1, r->len, stdout);
        if (r->body[r->len - 1] != '\n')
            putchar('\n');
    }
    return ctl_exit_for(r->status);
}

int ctl_run(const struct ctl *c, const char *method, const char *path, const char *body, size_t len,
            const char *const *headers, void (*show)(const struct ctl *c, const json_t *doc))
{
    struct acc_client_reply r;
    int rc = ctl_request(c, method, path, body, len, headers, &r);
    if (rc == CTL_OK) {
        if (c->json || c->xml) {
            rc = ctl_pass_through(&r);
        } else if (r.status >= 300) {
            rc = ctl_fault(&r);
        } else {
            json_t *doc = ctl_parse(&r);
            if (doc)
                show(c, doc);
            rc = doc ? CTL_OK : CTL_SERVER;
            json_decref(doc);
        }
    }
    acc_client_reply_free(&r);
    return rc;
}

void ctl_url_escape(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s && o + 4 < size; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
}
