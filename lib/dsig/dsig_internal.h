/* SPDX-License-Identifier: Apache-2.0 */
/* dsig_internal.h - shared by the files of lib/dsig. */
#ifndef ACC_DSIG_INTERNAL_H
#define ACC_DSIG_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdint.h>

#include "dsig.h"

/* The largest SignatureValue taken, in bytes (RSA 8192). */
#define DSIG_MAX_SIG 1024

/* The signatures a signer made, by the SHA-256 of the document's bytes
 * (dsig_sign.c): a fixed number of sets of a few entries each, the least
 * recently used entry of a set replaced. */
struct dsig_cache {
    pthread_mutex_t lock;
    unsigned char *slots; /* sets * ways entries of dsig_cache_stride() bytes */
    uint64_t clock;       /* use stamps */
    uint64_t made, reused;
};

struct acc_signer {
    EVP_PKEY *pkey;           /* loaded once; OpenSSL lets threads sign with it at once */
    size_t sig_len;           /* its signatures' length in bytes (ECDSA: r and s, raw) */
    bool ec;                  /* an EC key (ECDSA-SHA256), else RSA (RSA-SHA256) */
    const char *method;       /* the SignatureMethod's Algorithm */
    char *cert_b64;           /* the DER certificate in base64 */
    unsigned char cert_id[8]; /* the first bytes of its SHA-256: whose kept signatures */
    char *pem;
    size_t pem_len;
    struct dsig_cache cache;
};

/* The last error xmlsec reported in this thread ("" if none), cleared by
 * dsig_last_clear(). */
const char *dsig_last_error(void);
void dsig_last_clear(void);
/* Whether acc_dsig_init() has been called (and not undone). */
bool dsig_ready(void);
/* The certificate's subject and SHA-256 fingerprint into v. */
void dsig_describe_cert(X509 *cert, struct acc_dsig_verdict *v);
/* The PEM certificate of a file, or NULL with err set (ACC_ERR_CONFIG). */
X509 *dsig_read_cert(const char *path, struct acc_error *err);

/* The signer's cache (s->sig_len set): made empty, and freed. */
acc_err dsig_cache_init(struct acc_signer *s);
void dsig_cache_release(struct acc_signer *s);
/* Signs a small document and verifies it with xmlsec: what this library
 * writes is what xmlsec reads (ACC_ERR_INTERNAL if not). */
acc_err dsig_self_test(struct acc_signer *s, struct acc_error *err);

#endif
