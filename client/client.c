/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - one HTTP exchange with accordd (libcurl). */
#include "client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../lib/tls/tls_client.h"

/* What the callbacks fill while the exchange runs. */
struct exchange {
    struct acc_client_reply *reply;
    bool too_large, no_memory;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct exchange *x = arg;
    struct acc_client_reply *r = x->reply;
    size_t add = size * n;
    if (add > ACC_CLIENT_MAX_REPLY - r->len) {
        x->too_large = true;
        return 0;
    }
    char *p = realloc(r->body, r->len + add + 1);
    if (!p) {
        x->no_memory = true;
        return 0;
    }
    memcpy(p + r->len, data, add);
    r->body = p;
    r->len += add;
    r->body[r->len] = '\0';
    return add;
}

/* Copies the value of the header line (data, len bytes) into out when the
 * line is "name: value"; returns whether it was. */
static bool header_value(const char *data, size_t len, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);
    if (len <= nl || data[nl] != ':' || strncasecmp(data, name, nl) != 0)
        return false;
    const char *v = data + nl + 1, *end = data + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t k = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
    memcpy(out, v, k);
    out[k] = '\0';
    return true;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct acc_client_reply *r = ((struct exchange *)arg)->reply;
    size_t len = size * n;
    char flag[8];
    if (header_value(data, len, "Idempotent-Replayed", flag, sizeof flag))
        r->replayed = strcasecmp(flag, "true") == 0;
    else if (!header_value(data, len, "Location", r->location, sizeof r->location))
        header_value(data, len, "Content-Type", r->content_type, sizeof r->content_type);
    return len;
}

int acc_client_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void acc_client_cleanup(void)
{
    curl_global_cleanup();
}

static int fail(char *err, size_t err_size, const char *msg)
{
    if (err && err_size)
        snprintf(err, err_size, "%s", msg);
    return -1;
}

int acc_client_do(const struct acc_client_request *rq, struct acc_client_reply *out, char *err,
                  size_t err_size)
{
    memset(out, 0, sizeof *out);
    struct exchange x = {out, false, false};
    struct curl_slist *headers = NULL;
    CURL *h = NULL;
    int rc = -1;
    out->body = calloc(1, 1);
    h = curl_easy_init();
    if (!out->body || !h) {
        rc = fail(err, err_size, "out of memory");
        goto out;
    }
    for (size_t i = 0; rq->headers && rq->headers[i]; i++) {
        struct curl_slist *more = curl_slist_append(headers, rq->headers[i]);
        if (!more) {
            rc = fail(err, err_size, "out of memory");
            goto out;
        }
        headers = more;
    }
    if (rq->cacert || rq->cert || rq->key) {
        struct acc_tls_client tc = {rq->cacert, rq->cert, rq->key};
        if (acc_tls_curl_setup(h, &tc) != ACC_OK) {
            char msg[ACC_CLIENT_ERROR_SIZE + 128];
            snprintf(msg, sizeof msg,
                     "cannot use the TLS files (CA %.60s, certificate %.60s, key %.60s): "
                     "unreadable, or a key without its certificate",
                     rq->cacert ? rq->cacert : "-", rq->cert ? rq->cert : "-",
                     rq->key ? rq->key : "-");
            rc = fail(err, err_size, msg);
            goto out;
        }
    }
    curl_easy_setopt(h, CURLOPT_URL, rq->url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    if (strcmp(rq->method, "HEAD") == 0)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L); /* else libcurl waits for a body */
    if (rq->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
    }
    if (headers)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, rq->timeout > 0 ? rq->timeout : 60L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode cc = curl_easy_perform(h);
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
        rc = 0;
    } else if (x.too_large) {
        rc = fail(err, err_size, "the reply is larger than 64 MiB");
    } else if (x.no_memory) {
        rc = fail(err, err_size, "out of memory");
    } else {
        rc = fail(err, err_size, curl_easy_strerror(cc));
    }
out:
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    return rc;
}

void acc_client_reply_free(struct acc_client_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}
