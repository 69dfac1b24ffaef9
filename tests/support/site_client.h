/* SPDX-License-Identifier: Apache-2.0 */
/* site_client.h - a libcurl client of accord-site for the tests: requests
 * over mutual TLS with the certificates of tests/support/mkcerts.sh. */
#ifndef ACC_SITE_CLIENT_H
#define ACC_SITE_CLIENT_H

#include <curl/curl.h>
#include <stddef.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"

/* Where the certificates are (mkcerts.sh's DIR) and the daemon's port
 * (again after each restart). */
void site_client_set(const char *certs, unsigned port);

/* One request on a connection of its own, as the client whose certificate
 * is NAME (NAME.crt, NAME.key; NULL: none), body (NULL: none) of len bytes
 * sent as application/xml; the answer's body into out.  Returns the HTTP
 * status, or -1 when the exchange failed (a refused handshake). */
long site_request(const char *name, const char *method, const char *path, const char *body,
                  size_t len, struct acc_buf *out);

/* A handle of its own (its own kept-alive connection) for GET /v1/health
 * as NAME, answers into out; site_perform runs it again. */
CURL *site_handle(const char *name, struct acc_buf *out);
long site_perform(CURL *c, struct acc_buf *out);

/* The fault's code in an answer (ACC_ERR_ADAPTER when it is none). */
acc_err site_fault_of(const struct acc_buf *b);

/* A socket listening on 127.0.0.1 that never answers (its port into
 * *port_out), or -1. */
int site_silent_listener(unsigned *port_out);

#endif
