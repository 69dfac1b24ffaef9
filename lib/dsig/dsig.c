/* SPDX-License-Identifier: Apache-2.0 */
/* dsig.c - xmlsec's start and end, and the signer: the key loaded once,
 * its certificate, and the signatures it made (dsig_sign.c signs). */
#include "dsig.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <xmlsec/crypto.h>
#include <xmlsec/errors.h>
#include <xmlsec/xmlsec.h>

#include "dsig_internal.h"

/* ------------------------------------------------------ start and end */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_refs;
static _Thread_local char g_last[512];

/* xmlsec's errors go here rather than to stderr: the last one of the thread
 * is kept for the message of the failure it causes. */
static void on_error(const char *file, int line, const char *func, const char *object,
                     const char *subject, int reason, const char *msg)
{
    (void)file;
    (void)line;
    (void)reason;
    snprintf(g_last, sizeof g_last, "%s (%s%s%s)", msg && *msg ? msg : "error",
             object ? object : (func ? func : "xmlsec"), subject ? ": " : "",
             subject ? subject : "");
}

const char *dsig_last_error(void)
{
    return g_last;
}

void dsig_last_clear(void)
{
    g_last[0] = '\0';
}

bool dsig_ready(void)
{
    pthread_mutex_lock(&g_lock);
    bool r = g_refs > 0;
    pthread_mutex_unlock(&g_lock);
    return r;
}

acc_err acc_dsig_init(struct acc_error *err)
{
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&g_lock);
    if (g_refs == 0) {
        xmlInitParser();
        if (xmlSecInit() < 0) {
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "xmlsec: initialisation failed");
            goto out;
        }
        if (xmlSecCheckVersion() != 1) {
            xmlSecShutdown();
            rc = acc_error_set(err, ACC_ERR_INTERNAL,
                               "xmlsec: the library loaded is not the one built against");
            goto out;
        }
        if (xmlSecCryptoAppInit(NULL) < 0) {
            xmlSecShutdown();
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "xmlsec: the OpenSSL backend did not start");
            goto out;
        }
        if (xmlSecCryptoInit() < 0) {
            xmlSecCryptoAppShutdown();
            xmlSecShutdown();
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "xmlsec: the OpenSSL backend did not start");
            goto out;
        }
        xmlSecErrorsSetCallback(on_error);
    }
    g_refs++;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void acc_dsig_cleanup(void)
{
    pthread_mutex_lock(&g_lock);
    if (g_refs > 0 && --g_refs == 0) {
        xmlSecCryptoShutdown();
        xmlSecCryptoAppShutdown();
        xmlSecShutdown();
    }
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------ the signer */

X509 *dsig_read_cert(const char *path, struct acc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        acc_error_set(err, ACC_ERR_CONFIG, "certificate %s: %s", path, strerror(errno));
        return NULL;
    }
    X509 *c = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if (!c)
        acc_error_set(err, ACC_ERR_CONFIG, "certificate %s: not a PEM certificate", path);
    return c;
}

static EVP_PKEY *read_key(const char *path, struct acc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        acc_error_set(err, ACC_ERR_CONFIG, "signing key %s: %s", path, strerror(errno));
        return NULL;
    }
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (!k)
        acc_error_set(err, ACC_ERR_CONFIG,
                      "signing key %s: not a PEM private key (or protected by a pass phrase)",
                      path);
    else if (EVP_PKEY_base_id(k) != EVP_PKEY_RSA && EVP_PKEY_base_id(k) != EVP_PKEY_EC) {
        acc_error_set(err, ACC_ERR_CONFIG,
                      "signing key %s: neither an RSA nor an EC key (RSA-SHA256 or ECDSA-SHA256 "
                      "sign)",
                      path);
        EVP_PKEY_free(k);
        k = NULL;
    }
    return k;
}

static char *cert_pem(X509 *c, size_t *len)
{
    char *out = NULL;
    BIO *b = BIO_new(BIO_s_mem());
    if (!b || !PEM_write_bio_X509(b, c))
        goto done;
    char *p;
    long n = BIO_get_mem_data(b, &p);
    if (n <= 0 || !(out = malloc((size_t)n + 1)))
        goto done;
    memcpy(out, p, (size_t)n);
    out[n] = '\0';
    *len = (size_t)n;
done:
    BIO_free(b);
    return out;
}

/* The DER certificate in base64 (ds:X509Certificate's content). */
static char *cert_base64(X509 *c)
{
    unsigned char *der = NULL;
    int n = i2d_X509(c, &der);
    if (n <= 0)
        return NULL;
    char *out = malloc(4 * (((size_t)n + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, der, n);
    OPENSSL_free(der);
    return out;
}

/* The signer's own parts from the key and certificate, read and matched. */
static acc_err signer_fill(struct acc_signer *s, X509 *cert, struct acc_error *err)
{
    s->ec = EVP_PKEY_base_id(s->pkey) == EVP_PKEY_EC;
    s->method = s->ec ? "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
                      : "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
    /* ECDSA: r and s, each as long as the order (the key's bits) */
    int bytes = s->ec ? 2 * ((EVP_PKEY_get_bits(s->pkey) + 7) / 8) : EVP_PKEY_get_size(s->pkey);
    if (bytes <= 0 || bytes > DSIG_MAX_SIG)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "signing key: RSA keys of up to %d bits are taken (this one has %d)",
                             DSIG_MAX_SIG * 8, EVP_PKEY_get_bits(s->pkey));
    s->sig_len = (size_t)bytes;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1 || n < sizeof s->cert_id)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    memcpy(s->cert_id, md, sizeof s->cert_id);
    if (!(s->pem = cert_pem(cert, &s->pem_len)) || !(s->cert_b64 = cert_base64(cert)) ||
        dsig_cache_init(s))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

acc_err acc_signer_open(const char *key_path, const char *cert_path, struct acc_signer **out,
                        struct acc_error *err)
{
    *out = NULL;
    acc_err rc = ACC_OK;
    struct acc_signer *s = NULL;
    X509 *cert = NULL;
    EVP_PKEY *pkey = NULL;
    if (!dsig_ready())
        return acc_error_set(err, ACC_ERR_INTERNAL, "acc_dsig_init() was not called");
    if (!(pkey = read_key(key_path, err)) || !(cert = dsig_read_cert(cert_path, err))) {
        rc = err ? err->code : ACC_ERR_CONFIG;
        goto fail;
    }
    if (X509_check_private_key(cert, pkey) != 1) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "signing key %s is not the key of certificate %s",
                           key_path, cert_path);
        goto fail;
    }
    if (!(s = calloc(1, sizeof *s))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    s->pkey = pkey;
    pkey = NULL;
    if ((rc = signer_fill(s, cert, err)))
        goto fail;
    /* What it signs must verify with xmlsec: tried once, here. */
    if ((rc = dsig_self_test(s, err))) {
        acc_error_prefix(err, "signing key %s", key_path);
        goto fail;
    }
    X509_free(cert);
    *out = s;
    return ACC_OK;
fail:
    X509_free(cert);
    EVP_PKEY_free(pkey);
    acc_signer_close(s);
    return rc;
}

void acc_signer_close(struct acc_signer *s)
{
    if (!s)
        return;
    dsig_cache_release(s);
    EVP_PKEY_free(s->pkey);
    free(s->cert_b64);
    free(s->pem);
    free(s);
}

const char *acc_signer_cert_pem(const struct acc_signer *s, size_t *len)
{
    if (len)
        *len = s->pem_len;
    return s->pem;
}
