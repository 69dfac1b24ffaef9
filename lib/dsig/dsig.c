/* dsig.c - xmlsec's start and end, the signer (key and certificate) and
 * signing.  The enveloped signature is built from a template, as xmlsec's
 * own examples do, on a copy of the document parsed from its bytes. */
#include "dsig.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/c14n.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <xmlsec/crypto.h>
#include <xmlsec/errors.h>
#include <xmlsec/templates.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlsec.h>

#include "../common/strutil.h"
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

struct acc_signer {
    pthread_mutex_t lock; /* around xmlSecKeyDuplicate of key */
    xmlSecKeyPtr key;     /* private key with its certificate */
    char *pem;
    size_t pem_len;
};

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
    else if (EVP_PKEY_base_id(k) != EVP_PKEY_RSA) {
        acc_error_set(err, ACC_ERR_CONFIG, "signing key %s: not an RSA key (RSA-SHA256 is used)",
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
    /* OpenSSL first, for clear messages; then the same files for xmlsec. */
    if (!(pkey = read_key(key_path, err)) || !(cert = dsig_read_cert(cert_path, err))) {
        rc = err ? err->code : ACC_ERR_CONFIG;
        goto fail;
    }
    if (X509_check_private_key(cert, pkey) != 1) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "signing key %s is not the key of certificate %s",
                           key_path, cert_path);
        goto fail;
    }
    if (!(s = calloc(1, sizeof *s)) || !(s->pem = cert_pem(cert, &s->pem_len))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    pthread_mutex_init(&s->lock, NULL);
    dsig_last_clear();
    s->key = xmlSecCryptoAppKeyLoad(key_path, xmlSecKeyDataFormatPem, NULL, NULL, NULL);
    if (!s->key || xmlSecCryptoAppKeyCertLoad(s->key, cert_path, xmlSecKeyDataFormatPem) < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "xmlsec cannot load %s and %s: %s", key_path,
                           cert_path, dsig_last_error());
        goto fail;
    }
    X509_free(cert);
    EVP_PKEY_free(pkey);
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
    if (s->key)
        xmlSecKeyDestroy(s->key);
    if (s->pem)
        pthread_mutex_destroy(&s->lock);
    free(s->pem);
    free(s);
}

const char *acc_signer_cert_pem(const struct acc_signer *s, size_t *len)
{
    if (len)
        *len = s->pem_len;
    return s->pem;
}

/* --------------------------------------------------------------- signing */

/* How a document to sign is read (acc_dsig_check reads it the same way). */
#define SIGN_READ (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* The template: ds:Signature with exclusive c14n and RSA-SHA256, one
 * Reference to the whole document (enveloped, then exclusive c14n, SHA-256),
 * KeyInfo/X509Data/X509Certificate; appended to the root element. */
static xmlNodePtr add_template(xmlDocPtr doc)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (!root)
        return NULL;
    xmlNodePtr sig = xmlSecTmplSignatureCreateNsPref(
        doc, xmlSecTransformExclC14NId, xmlSecTransformRsaSha256Id, NULL, BAD_CAST "ds");
    if (!sig)
        return NULL;
    if (!xmlAddChild(root, sig)) {
        xmlFreeNode(sig);
        return NULL;
    }
    xmlNodePtr ref =
        xmlSecTmplSignatureAddReference(sig, xmlSecTransformSha256Id, NULL, BAD_CAST "", NULL);
    if (!ref || !xmlSecTmplReferenceAddTransform(ref, xmlSecTransformEnvelopedId) ||
        !xmlSecTmplReferenceAddTransform(ref, xmlSecTransformExclC14NId))
        return NULL;
    xmlNodePtr ki = xmlSecTmplSignatureEnsureKeyInfo(sig, NULL);
    xmlNodePtr x = ki ? xmlSecTmplKeyInfoAddX509Data(ki) : NULL;
    if (!x || !xmlSecTmplX509DataAddCertificate(x))
        return NULL;
    return sig;
}

acc_err acc_dsig_sign(struct acc_signer *s, const char *xml, size_t len, struct acc_buf *out,
                      struct acc_error *err)
{
    acc_err rc = ACC_OK;
    xmlSecDSigCtxPtr ctx = NULL;
    xmlChar *mem = NULL;
    int n = 0;
    if (len > (size_t)INT32_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE, "document too large to sign");
    dsig_last_clear();
    xmlDocPtr doc = xmlReadMemory(xml, (int)len, "agreement.xml", NULL, SIGN_READ);
    if (!doc) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "cannot sign: the document is not well-formed");
        goto out;
    }
    xmlNodePtr sig = add_template(doc);
    if (!sig) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "cannot sign: the signature template failed");
        goto out;
    }
    if (!(ctx = xmlSecDSigCtxCreate(NULL))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    pthread_mutex_lock(&s->lock);
    ctx->signKey = xmlSecKeyDuplicate(s->key);
    pthread_mutex_unlock(&s->lock);
    if (!ctx->signKey) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (xmlSecDSigCtxSign(ctx, sig) < 0) {
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "signing failed: %s", dsig_last_error());
        goto out;
    }
    xmlDocDumpMemoryEnc(doc, &mem, &n, "UTF-8");
    if (!mem || n <= 0) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    acc_buf_append(out, mem, (size_t)n);
    if (!acc_buf_ok(out))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
out:
    xmlFree(mem);
    if (ctx)
        xmlSecDSigCtxDestroy(ctx);
    xmlFreeDoc(doc);
    return rc;
}

/* ------------------------------------------------------------- checking */

/* The first message libxml2 raises while canonicalising (ctx: 160 bytes). */
static void first_error(void *ctx, xmlErrorPtr e)
{
    char *first = ctx;
    if (first[0] || !e || !e->message)
        return;
    acc_strlcpy(first, e->message, 160);
    first[strcspn(first, "\n")] = '\0';
}

static int discard(void *ctx, const char *buf, int len)
{
    (void)ctx;
    (void)buf;
    return len;
}

acc_err acc_dsig_check(const char *xml, size_t len, struct acc_error *err)
{
    if (len > (size_t)INT32_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE, "document too large to sign");
    xmlDocPtr doc = xmlReadMemory(xml, (int)len, "agreement.xml", NULL, SIGN_READ);
    if (!doc)
        return acc_error_set(err, ACC_ERR_MALFORMED,
                             "cannot sign: the document is not well-formed");
    xmlOutputBufferPtr out = xmlOutputBufferCreateIO(discard, NULL, NULL, NULL);
    if (!out) {
        xmlFreeDoc(doc);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* libxml2 reports through the thread's structured handler here (there
     * is no parser context): borrowed for this one call. */
    char first[160] = "";
    xmlStructuredErrorFunc handler = xmlStructuredError;
    void *handler_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(first, first_error);
    int n = xmlC14NExecute(doc, NULL, NULL, XML_C14N_EXCLUSIVE_1_0, NULL, 0, out);
    xmlSetStructuredErrorFunc(handler_ctx, handler);
    xmlOutputBufferClose(out);
    xmlFreeDoc(doc);
    if (n < 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "cannot sign: exclusive XML canonicalisation refuses the document "
                             "(libxml2: %s)",
                             first[0] ? first : "no reason given");
    return ACC_OK;
}
