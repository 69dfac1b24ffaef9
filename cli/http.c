/* http.c - accordctl's one way to talk to the server. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct ctl_reply *r = arg;
    size_t add = size * n;
    if (r->len + add > 64u << 20)
        return 0; /* a reply that large is not from accordd */
    char *p = realloc(r->body, r->len + add + 1);
    if (!p)
        return 0;
    memcpy(p + r->len, data, add);
    r->body = p;
    r->len += add;
    r->body[r->len] = '\0';
    return add;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct ctl_reply *r = arg;
    size_t len = size * n;
    if (len > 10 && strncasecmp(data, "Location: ", 10) == 0) {
        size_t k = len - 10;
        while (k && (data[10 + k - 1] == '\r' || data[10 + k - 1] == '\n'))
            k--;
        if (k >= sizeof r->location)
            k = sizeof r->location - 1;
        memcpy(r->location, data + 10, k);
        r->location[k] = '\0';
    }
    return len;
}

int ctl_request(const struct ctl *c, const char *method, const char *path, const char *body,
                size_t len, const char *const *headers, struct ctl_reply *out)
{
    memset(out, 0, sizeof *out);
    out->body = calloc(1, 1);
    char url[2048];
    size_t sl = strlen(c->server);
    snprintf(url, sizeof url, "%.*s%s", (int)(sl && c->server[sl - 1] == '/' ? sl - 1 : sl),
             c->server, path);
    CURL *h = curl_easy_init();
    if (!h || !out->body) {
        fprintf(stderr, "accordctl: out of memory\n");
        curl_easy_cleanup(h);
        return CTL_NETWORK;
    }
    struct curl_slist *hl = NULL;
    hl = curl_slist_append(hl, c->xml ? "Accept: application/xml" : "Accept: application/json");
    char auth[1024];
    if (c->token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
        hl = curl_slist_append(hl, auth);
    }
    for (size_t i = 0; headers && headers[i]; i++)
        hl = curl_slist_append(hl, headers[i]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, c->timeout);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK) {
        fprintf(stderr, "accordctl: %s: %s\n", c->server, curl_easy_strerror(rc));
        return CTL_NETWORK;
    }
    return CTL_OK;
}

void ctl_reply_free(struct ctl_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
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
    default:
        return status >= 500 ? CTL_SERVER : CTL_ERROR;
    }
}

struct jv *ctl_parse(const struct ctl_reply *r)
{
    char err[128];
    struct jv *v = jv_parse(r->body ? r->body : "", err, sizeof err);
    if (!v)
        fprintf(stderr, "accordctl: the server's reply (HTTP %ld) is not JSON: %s\n", r->status,
                err);
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
static bool xml_fault(const struct ctl_reply *r)
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

int ctl_fault(const struct ctl_reply *r)
{
    if (xml_fault(r))
        return ctl_exit_for(r->status);
    struct jv *f = jv_parse(r->body ? r->body : "", NULL, 0);
    const char *code = jv_str(f, "code", NULL);
    if (!code) {
        /* Not one of accordd's faults (a proxy, say): say what came. */
        fprintf(stderr, "accordctl: HTTP %ld from the server%s%.200s\n", r->status,
                r->len ? ": " : "", r->len ? r->body : "");
    } else {
        fprintf(stderr, "accordctl: %s: %s\n", code, jv_str(f, "message", ""));
        const struct jv *d = jv_get(f, "details");
        for (size_t i = 0; i < jv_len(d); i++) {
            const struct jv *line = jv_at(d, i);
            if (line && line->type == JV_STRING)
                fprintf(stderr, "  %s\n", line->str);
        }
        const char *id = jv_str(f, "agreementId", NULL);
        if (id)
            fprintf(stderr, "  agreement %s is kept; see: accordctl trace %s\n", id, id);
    }
    jv_free(f);
    return ctl_exit_for(r->status);
}

int ctl_pass_through(const struct ctl_reply *r)
{
    if (r->len) {
        fwrite(r->body, 1, r->len, stdout);
        if (r->body[r->len - 1] != '\n')
            putchar('\n');
    }
    return ctl_exit_for(r->status);
}

int ctl_run(const struct ctl *c, const char *method, const char *path, const char *body, size_t len,
            const char *const *headers, void (*show)(const struct ctl *c, const struct jv *doc))
{
    struct ctl_reply r;
    int rc = ctl_request(c, method, path, body, len, headers, &r);
    if (rc == CTL_OK) {
        if (c->json || c->xml) {
            rc = ctl_pass_through(&r);
        } else if (r.status >= 300) {
            rc = ctl_fault(&r);
        } else {
            struct jv *doc = ctl_parse(&r);
            if (doc)
                show(c, doc);
            rc = doc ? CTL_OK : CTL_SERVER;
            jv_free(doc);
        }
    }
    ctl_reply_free(&r);
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
