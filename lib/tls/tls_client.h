/* SPDX-License-Identifier: Apache-2.0 */
/* tls_client.h - TLS for libcurl clients: the remote adapter, accordctl and
 * the tests (tls_server.h is the server side).
 *
 * acc_tls_curl_setup makes a libcurl handle verify the server against a CA
 * (peer and host name or IP), present a client certificate, and speak TLS
 * 1.2 or later.
 *
 * Files are PEM.  Only libcurl is needed: a client links neither
 * libmicrohttpd nor GnuTLS.
 */
#ifndef ACC_TLS_CLIENT_H
#define ACC_TLS_CLIENT_H

#include <stdbool.h>

#include <curl/curl.h>

#include "../common/error.h"

/* Client side. */
struct acc_tls_client {
    const char *ca;          /* CA file the server must verify against; NULL: the system's */
    const char *certificate; /* client certificate file; NULL: none */
    const char *key;         /* its key (NULL: in the certificate file) */
};

/* Sets CA, client certificate and key, peer and host verification and TLS
 * >= 1.2 on a libcurl handle.  ACC_ERR_CONFIG when a file is unreadable,
 * ACC_ERR_UNSUPPORTED when libcurl refuses an option. */
acc_err acc_tls_curl_setup(CURL *curl, const struct acc_tls_client *cfg);

#endif
