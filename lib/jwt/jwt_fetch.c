/* SPDX-License-Identifier: Apache-2.0 */
/* jwt_fetch.c - one bounded HTTPS GET of a JSON document: an issuer's
 * discovery document or its JWKS.  HTTPS only (no redirect, no other
 * protocol), the server verified against the issuer's CA file or the
 * system's (lib/tls), a time limit and a size limit. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../tls/tls_client.h"
#include "jwt_internal.h"

struct sink {
    struct acc_buf buf;
    bool over;
};

static size_t take(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t len = size * n;
    if (s->buf.len + len > JWT_MAX_DOCUMENT) {
        s->over = true;
        return 0; /* stops the transfer */
    }
    acc_buf_append(&s->buf, data, len);
    return len;
}

acc_err jwt_fetch_json(const char *url, const char *ca_file, int64_t timeout, json_t **out,
                       struct acc_error *err)
{
    *out = NULL;
    if (strncmp(url, "https://", 8) != 0)
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "%.200s is not an https:// URL", url);
    CURL *curl = curl_easy_init();
    if (!curl)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct sink s = {.over = false};
    acc_buf_init(&s.buf);
    struct acc_tls_client tls = {.ca = ca_file};
    acc_err rc = acc_tls_curl_setup(curl, &tls);
    if (rc) {
        curl_easy_cleanup(curl);
        acc_buf_release(&s.buf);
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "cannot set up HTTPS for %.200s (CA %s)",
                             url, ca_file ? ca_file : "of the system");
    }
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)(timeout > 0 ? timeout : 5));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)(timeout > 0 ? timeout : 5));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    CURLcode cc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    if (s.over)
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE, "%.200s is larger than %d bytes", url,
                           JWT_MAX_DOCUMENT);
    else if (cc != CURLE_OK)
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE, "cannot fetch %.200s: %.200s", url,
                           curl_err[0] ? curl_err : curl_easy_strerror(cc));
    else if (status != 200)
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE, "%.200s answered HTTP %ld", url, status);
    else if (!acc_buf_ok(&s.buf))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc) {
        json_error_t je;
        json_t *doc =
            json_loadb(s.buf.data ? s.buf.data : "", s.buf.len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(doc)) {
            json_decref(doc);
            rc = acc_error_set(err, ACC_ERR_UNAVAILABLE, "%.200s is not a JSON object", url);
        } else {
            *out = doc;
        }
    }
    acc_buf_release(&s.buf);
    return rc;
}
