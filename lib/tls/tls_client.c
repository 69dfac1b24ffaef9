/* SPDX-License-Identifier: Apache-2.0 */
/* tls_client.c - the client side: a libcurl handle that verifies its server
 * against a CA and presents a client certificate. */
#include "tls_client.h"

#include <unistd.h>

static bool readable(const char *path)
{
    return !path || access(path, R_OK) == 0;
}

acc_err acc_tls_curl_setup(CURL *curl, const struct acc_tls_client *cfg)
{
    if (!readable(cfg->ca) || !readable(cfg->certificate) || !readable(cfg->key))
        return ACC_ERR_CONFIG;
    if (cfg->key && !cfg->certificate)
        return ACC_ERR_CONFIG;
    CURLcode c = curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    if (!c)
        c = curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!c)
        c = curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (!c && cfg->ca)
        c = curl_easy_setopt(curl, CURLOPT_CAINFO, cfg->ca);
    if (!c && cfg->certificate)
        c = curl_easy_setopt(curl, CURLOPT_SSLCERT, cfg->certificate);
    if (!c && cfg->certificate)
        c = curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    if (!c && cfg->key)
        c = curl_easy_setopt(curl, CURLOPT_SSLKEY, cfg->key);
    if (!c && cfg->key)
        c = curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    return c ? ACC_ERR_UNSUPPORTED : ACC_OK;
}
