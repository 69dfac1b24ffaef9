/* SPDX-License-Identifier: Apache-2.0 */
/* dsig_verify.c - checking an enveloped signature offline: with a given
 * certificate, or with the one the document carries (trusted explicitly).
 * The document is parsed without DTD or network; only a signature that is
 * a child of the root element and covers the whole document counts. */
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <xmlsec/base64.h>
#include <xmlsec/crypto.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>

#include "dsig_internal.h"

void dsig_describe_cert(X509 *cert, struct acc_dsig_verdict *v)
{
    X509_NAME_oneline(X509_get_subject_name(cert), v->subject, (int)sizeof v->subject);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    v->sha256[0] = '\0';
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1)
        return;
    size_t at = 0;
    for (unsigned i = 0; i < n && at + 4 <= sizeof v->sha256; i++)
        at += (size_t)snprintf(v->sha256 + at, sizeof v->sha256 - at, i ? ":%02X" : "%02X", md[i]);
}

static void invalid(struct acc_dsig_verdict *v, const char *fmt, const char *arg)
{
    v->valid = false;
    snprintf(v->reason, sizeof v->reason, fmt, arg ? arg : "");
}

/* The ds:Signature child of the root element (the only one), or NULL. */
static xmlNodePtr find_signature(xmlDocPtr doc, struct acc_dsig_verdict *v)
{
    xmlNodePtr root = xmlDocGetRootElement(doc), found = NULL;
    for (xmlNodePtr c = root ? root->children : NULL; c; c = c->next) {
        if (xmlSecCheckNodeName(c, xmlSecNodeSignature, xmlSecDSigNs)) {
            if (found) {
                invalid(v, "the document carries two signatures", NULL);
                return NULL;
            }
            found = c;
        }
    }
    if (!found)
        invalid(v, "the document carries no ds:Signature as a child of its root element", NULL);
    return found;
}

/* The certificate of the signature's KeyInfo/X509Data/X509Certificate. */
static X509 *embedded_cert(xmlNodePtr sig, struct acc_dsig_verdict *v)
{
    xmlNodePtr ki = xmlSecFindChild(sig, xmlSecNodeKeyInfo, xmlSecDSigNs);
    xmlNodePtr xd = ki ? xmlSecFindChild(ki, xmlSecNodeX509Data, xmlSecDSigNs) : NULL;
    xmlNodePtr xc = xd ? xmlSecFindChild(xd, xmlSecNodeX509Certificate, xmlSecDSigNs) : NULL;
    xmlChar *b64 = xc ? xmlNodeGetContent(xc) : NULL;
    if (!b64) {
        invalid(v, "the signature carries no certificate (KeyInfo/X509Data/X509Certificate)", NULL);
        return NULL;
    }
    X509 *cert = NULL;
    xmlSecSize n = 0;
    const unsigned char *p = b64;
    if (xmlSecBase64DecodeInPlace(b64, &n) == 0 && n > 0 && n < (xmlSecSize)INT32_MAX)
        cert = d2i_X509(NULL, &p, (long)n);
    xmlFree(b64);
    if (!cert)
        invalid(v, "the certificate in the signature does not decode", NULL);
    return cert;
}

/* An xmlsec key holding cert's public key. */
static xmlSecKeyPtr key_of(X509 *cert)
{
    unsigned char *der = NULL;
    int n = i2d_X509(cert, &der);
    if (n <= 0)
        return NULL;
    xmlSecKeyPtr k = xmlSecCryptoAppKeyLoadMemory(der, (xmlSecSize)n, xmlSecKeyDataFormatCertDer,
                                                  NULL, NULL, NULL);
    OPENSSL_free(der);
    return k;
}

/* Why a verification said invalid: a reference whose digest differs means
 * the signed content was changed. */
static void explain(xmlSecDSigCtxPtr ctx, struct acc_dsig_verdict *v)
{
    xmlSecSize n = xmlSecPtrListGetSize(&ctx->signedInfoReferences);
    if (n != 1) {
        invalid(v, "the signature must have exactly one Reference (to the whole document)", NULL);
        return;
    }
    xmlSecDSigReferenceCtxPtr r = xmlSecPtrListGetItem(&ctx->signedInfoReferences, 0);
    if (r && r->status != xmlSecDSigStatusSucceeded)
        invalid(v,
                "the digest of the document does not match its Reference: the signed "
                "content was changed%s",
                NULL);
    else
        invalid(v,
                "the SignatureValue does not match the SignedInfo with this key: signed by "
                "another key, or the signature was changed%s",
                NULL);
}

acc_err acc_dsig_verify(const char *xml, size_t len, const char *cert_path,
                        struct acc_dsig_verdict *v, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    xmlDocPtr doc = NULL;
    xmlSecDSigCtxPtr ctx = NULL;
    X509 *cert = NULL;
    memset(v, 0, sizeof *v);
    if (!dsig_ready())
        return acc_error_set(err, ACC_ERR_INTERNAL, "acc_dsig_init() was not called");
    if (cert_path && !(cert = dsig_read_cert(cert_path, err)))
        return err ? err->code : ACC_ERR_CONFIG;
    if (len > (size_t)INT32_MAX) {
        invalid(v, "the document is too large", NULL);
        goto out;
    }
    dsig_last_clear();
    doc = xmlReadMemory(xml, (int)len, "document.xml", NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        invalid(v, "the document is not well-formed XML", NULL);
        goto out;
    }
    if (doc->intSubset || doc->extSubset) {
        invalid(v, "the document carries a DOCTYPE (never in a document Accord signs)", NULL);
        goto out;
    }
    xmlNodePtr sig = find_signature(doc, v);
    if (!sig)
        goto out;
    if (!cert && !(cert = embedded_cert(sig, v)))
        goto out;
    dsig_describe_cert(cert, v);
    if (!(ctx = xmlSecDSigCtxCreate(NULL)) || !(ctx->signKey = key_of(cert))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* The whole document only: nothing is fetched, no other node selected. */
    ctx->enabledReferenceUris = xmlSecTransformUriTypeEmpty;
    if (xmlSecDSigCtxVerify(ctx, sig) < 0) {
        invalid(v, "the signature cannot be processed: %s", dsig_last_error());
        goto out;
    }
    if (ctx->status != xmlSecDSigStatusSucceeded) {
        explain(ctx, v);
        goto out;
    }
    if (xmlSecPtrListGetSize(&ctx->signedInfoReferences) != 1) {
        explain(ctx, v);
        goto out;
    }
    v->valid = true;
    snprintf(v->reason, sizeof v->reason, "signature valid");
out:
    if (ctx)
        xmlSecDSigCtxDestroy(ctx);
    xmlFreeDoc(doc);
    X509_free(cert);
    return rc;
}
