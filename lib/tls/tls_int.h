/* SPDX-License-Identifier: Apache-2.0 */
/* tls_int.h - what the files of lib/tls share (not public). */
#ifndef ACC_TLS_INT_H
#define ACC_TLS_INT_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "tls_server.h"

/* The subject DN and SHA-256 fingerprint of a certificate. */
acc_err acc_tls_crt_identity(gnutls_x509_crt_t crt, struct acc_tls_peer *out,
                             struct acc_error *err);

/* Verifies the client certificate of a session against ca (chain, dates,
 * key purpose); on success fills *peer.  *why says what failed. */
acc_err acc_tls_verify_client(gnutls_session_t s, gnutls_x509_trust_list_t ca,
                              struct acc_tls_peer *peer, struct acc_error *why);

#endif
