/* SPDX-License-Identifier: Apache-2.0 */
/* dsig.h - enveloped XML digital signatures (XML-DSig) of Accord's
 * documents, with libxmlsec1 and its OpenSSL backend.
 *
 * A signature is RSA-SHA256 over the whole document (one Reference, URI "",
 * the enveloped-signature transform and exclusive c14n), with the signer's
 * certificate in KeyInfo/X509Data; it is the last child of the root
 * element, prefix ds.  `xmlsec1 --verify --pubkey-cert-pem CERT FILE`
 * checks it.  Signing is OpenSSL and libxml2's canonicalisation (the key is
 * loaded once); verifying is libxmlsec1.  No xmlDoc crosses this
 * interface: documents go in and out as bytes.
 *
 * acc_dsig_init() once before anything else (it is reference counted and
 * thread-safe: every call is matched by one acc_dsig_cleanup()).  A signer
 * may be used by many threads at once.
 */
#ifndef ACC_DSIG_H
#define ACC_DSIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/error.h"

acc_err acc_dsig_init(struct acc_error *err);
void acc_dsig_cleanup(void);

struct acc_signer;

/* Loads a PEM private key (RSA, up to 8192 bits) and its PEM certificate,
 * and signs a small document to check that xmlsec verifies it.
 * ACC_ERR_CONFIG when a file is missing or unreadable, not PEM, or the key
 * is not the certificate's. */
acc_err acc_signer_open(const char *key_path, const char *cert_path, struct acc_signer **out,
                        struct acc_error *err);
void acc_signer_close(struct acc_signer *s);

/* The certificate in PEM (NUL-terminated, owned by the signer). */
const char *acc_signer_cert_pem(const struct acc_signer *s, size_t *len);

/* Signs the document xml[0..len) and appends the signed document to out:
 * its bytes with ds:Signature put in front of the root element's end tag
 * (ACC_ERR_INVALID when the document does not end with one).  The signer
 * keeps the signatures it made (a fixed number, the least recently used
 * given up first) by the SHA-256 of the bytes: the same bytes again get
 * the same signature without the RSA or a parse. */
acc_err acc_dsig_sign(struct acc_signer *s, const char *xml, size_t len, struct acc_buf *out,
                      struct acc_error *err);

/* A signature kept outside the signer (accordd's store keeps the one of
 * each agreement's current document, so that a GET after a restart, or of
 * one of more agreements than the signer keeps, does not sign again): the
 * signer's certificate, the SHA-256 of the document's bytes, their
 * DigestValue and the SignatureValue.  Opaque bytes, at most
 * ACC_DSIG_KEPT_MAX. */
#define ACC_DSIG_KEPT_MAX (72 + 1024)

/* As acc_dsig_sign, with a kept signature: when kept[0..kept_len) is this
 * signer's signature of these very bytes it is used (no RSA, no parse);
 * otherwise the document is signed (or the signer's own keeping is used)
 * and *fresh is set, with the signature to keep in kept_out (room for
 * ACC_DSIG_KEPT_MAX bytes) and its length in *kept_out_len.  kept may be
 * NULL; kept_out may be NULL when nothing is to be kept. */
acc_err acc_dsig_sign_kept(struct acc_signer *s, const char *xml, size_t len, const void *kept,
                           size_t kept_len, struct acc_buf *out, bool *fresh,
                           unsigned char *kept_out, size_t *kept_out_len, struct acc_error *err);

/* How many signatures a signer made, and how many documents got one it
 * had kept. */
struct acc_signer_stats {
    uint64_t made, reused;
};
void acc_signer_stats(struct acc_signer *s, struct acc_signer_stats *out);

/* What signing would refuse in the document xml[0..len), short of the key:
 * it is read as acc_dsig_sign reads it and put through the exclusive XML
 * canonicalisation that the signature covers, which refuses, among others,
 * relative namespace names.  ACC_ERR_MALFORMED when the document does not
 * read, ACC_ERR_INVALID with libxml2's reason when it does not canonicalise;
 * a document that passes can be signed with any key.  No RSA: a parse and
 * a canonicalisation, a small part of a signature's cost.  Needs no
 * acc_dsig_init(). */
acc_err acc_dsig_check(const char *xml, size_t len, struct acc_error *err);

/* Creates a self-signed RSA 2048 key pair (key_path mode 0600, cert_path
 * 0644; valid for ten years; subject CN=cn) unless both files exist; then
 * *created is false and nothing is touched.  ACC_ERR_CONFIG when only one
 * of them exists. */
acc_err acc_dsig_keypair_ensure(const char *key_path, const char *cert_path, const char *cn,
                                bool *created, struct acc_error *err);

/* What a verification found. */
struct acc_dsig_verdict {
    bool valid;
    char reason[512];  /* why not (or "signature valid") */
    char subject[256]; /* the certificate whose key was used */
    char sha256[100];  /* its SHA-256 fingerprint, AA:BB:... */
};

/* Verifies the enveloped signature of xml[0..len): with the public key of
 * the PEM certificate cert_path, or (cert_path NULL) with the certificate
 * the document carries in its KeyInfo, which the caller trusts explicitly.
 * Only a signature that is a child of the root element and covers the
 * whole document (one Reference, URI "") is accepted; references to other
 * documents are never fetched.  An invalid signature is ACC_OK with
 * v->valid false; errors are for a certificate file that cannot be read. */
acc_err acc_dsig_verify(const char *xml, size_t len, const char *cert_path,
                        struct acc_dsig_verdict *v, struct acc_error *err);

#endif
