/* SPDX-License-Identifier: Apache-2.0 */
/* tls_peer.c - who is at the other end: a certificate's subject and
 * fingerprint, the verification of a client's chain, file identities. */
#include "tls_server.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tls_int.h"

#define MAX_CHAIN 8

acc_err acc_tls_crt_identity(gnutls_x509_crt_t crt, struct acc_tls_peer *out, struct acc_error *err)
{
    gnutls_datum_t dn = {NULL, 0};
    unsigned char md[32];
    size_t md_len = sizeof md;
    acc_err rc = ACC_OK;
    memset(out, 0, sizeof *out);
    int g = gnutls_x509_crt_get_dn3(crt, &dn, 0);
    if (g < 0 && g != GNUTLS_E_ASN1_ELEMENT_NOT_FOUND) {
        rc = acc_error_set(err, ACC_ERR_INVALID, "the certificate's subject is unreadable: %s",
                           gnutls_strerror(g));
        goto out;
    }
    if (g >= 0 && dn.size >= sizeof out->subject) {
        rc = acc_error_set(err, ACC_ERR_INVALID,
                           "the certificate's subject is longer than %zu bytes",
                           sizeof out->subject - 1);
        goto out;
    }
    if (g >= 0)
        memcpy(out->subject, dn.data, dn.size);
    g = gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA256, md, &md_len);
    if (g < 0 || md_len != sizeof md) {
        rc = acc_error_set(err, ACC_ERR_INVALID, "the certificate's fingerprint failed: %s",
                           gnutls_strerror(g));
        goto out;
    }
    memcpy(out->fingerprint, "SHA256", 6);
    for (size_t i = 0; i < md_len; i++)
        snprintf(out->fingerprint + 6 + 3 * i, 4, ":%02X", md[i]);
out:
    gnutls_free(dn.data);
    return rc;
}

acc_err acc_tls_verify_client(gnutls_session_t s, gnutls_x509_trust_list_t ca,
                              struct acc_tls_peer *peer, struct acc_error *why)
{
    gnutls_x509_crt_t crt[MAX_CHAIN] = {0};
    unsigned n = 0, imported = 0, status = 0;
    acc_err rc = ACC_OK;
    const gnutls_datum_t *raw = gnutls_certificate_get_peers(s, &n);
    if (!raw || n == 0) {
        rc = acc_error_set(why, ACC_ERR_UNAUTHORIZED, "no client certificate");
        goto out;
    }
    if (n > MAX_CHAIN) {
        rc = acc_error_set(why, ACC_ERR_UNAUTHORIZED, "a chain of %u certificates (at most %d)", n,
                           MAX_CHAIN);
        goto out;
    }
    for (; imported < n; imported++) {
        int g = gnutls_x509_crt_init(&crt[imported]);
        if (g >= 0)
            g = gnutls_x509_crt_import(crt[imported], &raw[imported], GNUTLS_X509_FMT_DER);
        if (g < 0) {
            imported++; /* initialised (or NULL): freed below */
            rc = acc_error_set(why, ACC_ERR_UNAUTHORIZED, "an unreadable certificate: %s",
                               gnutls_strerror(g));
            goto out;
        }
    }
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    int g = gnutls_x509_trust_list_verify_crt2(ca, crt, n, &purpose, 1, 0, &status, NULL);
    if (g < 0) {
        rc =
            acc_error_set(why, ACC_ERR_UNAUTHORIZED, "verification failed: %s", gnutls_strerror(g));
        goto out;
    }
    rc = acc_tls_crt_identity(crt[0], peer, why);
    if (rc)
        goto out;
    if (status) {
        gnutls_datum_t text = {NULL, 0};
        gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0);
        rc = acc_error_set(why, ACC_ERR_UNAUTHORIZED, "%s (%s): %s", peer->subject,
                           peer->fingerprint, text.data ? (const char *)text.data : "not trusted");
        gnutls_free(text.data);
    }
out:
    for (unsigned i = 0; i < imported; i++) {
        if (crt[i])
            gnutls_x509_crt_deinit(crt[i]);
    }
    return rc;
}

acc_err acc_tls_peer(struct MHD_Connection *con, struct acc_tls_peer *out, struct acc_error *err)
{
    gnutls_x509_crt_t crt = NULL;
    acc_err rc = ACC_OK;
    memset(out, 0, sizeof *out);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the connection is not TLS");
    unsigned n = 0;
    const gnutls_datum_t *raw = gnutls_certificate_get_peers(ci->tls_session, &n);
    if (!raw || n == 0)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the client sent no certificate");
    int g = gnutls_x509_crt_init(&crt);
    if (g >= 0)
        g = gnutls_x509_crt_import(crt, &raw[0], GNUTLS_X509_FMT_DER);
    if (g < 0) {
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the client's certificate is unreadable: %s",
                           gnutls_strerror(g));
        goto out;
    }
    rc = acc_tls_crt_identity(crt, out, err);
out:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    return rc;
}

acc_err acc_tls_file_identity(const char *path, struct acc_tls_peer *out, struct acc_error *err)
{
    gnutls_datum_t data = {NULL, 0};
    gnutls_x509_crt_t crt = NULL;
    acc_err rc = ACC_OK;
    int g = gnutls_load_file(path, &data);
    if (g < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot read it: %s", path, gnutls_strerror(g));
        goto out;
    }
    g = gnutls_x509_crt_init(&crt);
    if (g >= 0)
        g = gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM);
    if (g < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: not a PEM certificate: %s", path,
                           gnutls_strerror(g));
        goto out;
    }
    rc = acc_tls_crt_identity(crt, out, err);
    if (rc)
        acc_error_prefix(err, "%s", path);
out:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    gnutls_free(data.data);
    return rc;
}

bool acc_tls_fingerprint_ok(const char *s, char *norm)
{
    if (!s || strncasecmp(s, "SHA256:", 7) != 0 || strlen(s) != ACC_TLS_FP_LEN - 1)
        return false;
    for (size_t i = 7; s[i]; i++) {
        bool colon = (i - 7) % 3 == 2;
        if (colon ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    if (norm) {
        memcpy(norm, "SHA256", 6);
        for (size_t i = 6; i < ACC_TLS_FP_LEN; i++)
            norm[i] = (char)toupper((unsigned char)s[i]);
    }
    return true;
}
