/* SPDX-License-Identifier: Apache-2.0 */
/* dsig_sign.c - signing, and what signing would refuse.
 *
 * The signature is written, not built with xmlsec: the document is parsed
 * once and its exclusive canonical form goes straight into SHA-256 (the
 * Reference's DigestValue); the canonical form of SignedInfo is a fixed
 * text around that value, signed with the loaded key (EVP, RSA-SHA256);
 * ds:Signature is then put in front of the root element's end tag, so the
 * document keeps its bytes.  acc_signer_open() checks once that xmlsec
 * verifies what this writes.
 *
 * A signer keeps the signatures it made by the SHA-256 of the document's
 * bytes: the same bytes are signed once, and a changed byte (a new state,
 * a new version) is a new document with a signature of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/c14n.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <openssl/ecdsa.h>

#include "../common/strutil.h"
#include "dsig_internal.h"

#define NS_DS            "http://www.w3.org/2000/09/xmldsig#"
#define ALG_EXC_C14N     "http://www.w3.org/2001/10/xml-exc-c14n#"
#define ALG_RSA_SHA256   "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
#define ALG_ECDSA_SHA256 "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
#define ALG_ENVELOPED    "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
#define ALG_SHA256       "http://www.w3.org/2001/04/xmlenc#sha256"

/* SignedInfo as sent (%s: the SignatureMethod, then the DigestValue), and its exclusive canonical
 * form, which is what the SignatureValue signs: the namespace declared on
 * it, empty elements with end tags; the line breaks are text of both.
 * (The same text twice rather than made from one: clang-format cannot keep
 * such a macro still.) */
/* clang-format off */
static const char SIGNED_INFO_SENT[] =
    "<ds:SignedInfo>\n"
    "<ds:CanonicalizationMethod Algorithm=\"" ALG_EXC_C14N "\"/>\n"
    "<ds:SignatureMethod Algorithm=\"%s\"/>\n"
    "<ds:Reference URI=\"\">\n"
    "<ds:Transforms>\n"
    "<ds:Transform Algorithm=\"" ALG_ENVELOPED "\"/>\n"
    "<ds:Transform Algorithm=\"" ALG_EXC_C14N "\"/>\n"
    "</ds:Transforms>\n"
    "<ds:DigestMethod Algorithm=\"" ALG_SHA256 "\"/>\n"
    "<ds:DigestValue>%s</ds:DigestValue>\n"
    "</ds:Reference>\n"
    "</ds:SignedInfo>";
static const char SIGNED_INFO_CANONICAL[] =
    "<ds:SignedInfo xmlns:ds=\"" NS_DS "\">\n"
    "<ds:CanonicalizationMethod Algorithm=\"" ALG_EXC_C14N "\"></ds:CanonicalizationMethod>\n"
    "<ds:SignatureMethod Algorithm=\"%s\"></ds:SignatureMethod>\n"
    "<ds:Reference URI=\"\">\n"
    "<ds:Transforms>\n"
    "<ds:Transform Algorithm=\"" ALG_ENVELOPED "\"></ds:Transform>\n"
    "<ds:Transform Algorithm=\"" ALG_EXC_C14N "\"></ds:Transform>\n"
    "</ds:Transforms>\n"
    "<ds:DigestMethod Algorithm=\"" ALG_SHA256 "\"></ds:DigestMethod>\n"
    "<ds:DigestValue>%s</ds:DigestValue>\n"
    "</ds:Reference>\n"
    "</ds:SignedInfo>";
/* clang-format on */

/* How a document to sign is read (acc_dsig_check reads it the same way). */
#define SIGN_READ (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* -------------------------------------------------- the canonical form */

struct sink {
    EVP_MD_CTX *md; /* NULL: discarded */
    bool failed;
};

static int to_sink(void *ctx, const char *buf, int len)
{
    struct sink *k = ctx;
    if (k->md && EVP_DigestUpdate(k->md, buf, (size_t)len) != 1) {
        k->failed = true;
        return -1;
    }
    return len;
}

/* The first message libxml2 raises while canonicalising (ctx: 160 bytes). */
static void first_error(void *ctx, xmlErrorPtr e)
{
    char *first = ctx;
    if (first[0] || !e || !e->message)
        return;
    acc_strlcpy(first, e->message, 160);
    first[strcspn(first, "\n")] = '\0';
}

/* Reads xml[0..len) and writes its exclusive canonical form (no comments)
 * into md (NULL: nowhere); the root element's qualified name into qname. */
static acc_err canonicalise(const char *xml, size_t len, EVP_MD_CTX *md, char *qname, size_t qsize,
                            struct acc_error *err)
{
    if (len > (size_t)INT32_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE, "document too large to sign");
    xmlDocPtr doc = xmlReadMemory(xml, (int)len, "agreement.xml", NULL, SIGN_READ);
    xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!root) {
        xmlFreeDoc(doc);
        return acc_error_set(err, ACC_ERR_MALFORMED,
                             "cannot sign: the document is not well-formed");
    }
    if (qname)
        snprintf(qname, qsize, "%s%s%s",
                 root->ns && root->ns->prefix ? (char *)root->ns->prefix : "",
                 root->ns && root->ns->prefix ? ":" : "", (const char *)root->name);
    struct sink k = {.md = md};
    xmlOutputBufferPtr out = xmlOutputBufferCreateIO(to_sink, NULL, &k, NULL);
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
    if (xmlOutputBufferClose(out) < 0 && n >= 0)
        n = -1;
    xmlFreeDoc(doc);
    if (k.failed)
        return acc_error_set(err, ACC_ERR_INTERNAL, "cannot sign: SHA-256 failed");
    if (n < 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "cannot sign: exclusive XML canonicalisation refuses the document "
                             "(libxml2: %s)",
                             first[0] ? first : "no reason given");
    return ACC_OK;
}

acc_err acc_dsig_check(const char *xml, size_t len, struct acc_error *err)
{
    return canonicalise(xml, len, NULL, NULL, 0, err);
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Where the root element's end tag starts: the last tag of the document,
 * with only blanks after it (and, with qname, that name).  False when the
 * document does not end so (an empty root element <a/>, a comment after
 * it). */
static bool end_tag(const char *xml, size_t len, const char *qname, size_t *at)
{
    size_t i = len;
    while (i > 0 && blank(xml[i - 1]))
        i--;
    if (i < 4 || xml[i - 1] != '>')
        return false;
    size_t gt = --i;
    while (i > 0 && blank(xml[i - 1]))
        i--;
    size_t name_end = i;
    while (i > 0 && xml[i - 1] != '<' && xml[i - 1] != '>' && xml[i - 1] != '/' &&
           !blank(xml[i - 1]))
        i--;
    if (i < 2 || xml[i - 1] != '/' || xml[i - 2] != '<' || name_end == i || gt < name_end)
        return false;
    if (qname && (strlen(qname) != name_end - i || memcmp(xml + i, qname, name_end - i) != 0))
        return false;
    *at = i - 2;
    return true;
}

/* ---------------------------------------------------------- the cache */

enum { CACHE_SETS = 2048, CACHE_WAYS = 4 };

/* An entry: the document's SHA-256, its DigestValue, the use stamp (0:
 * empty), the SignatureValue. */
enum { E_KEY = 0, E_DIGEST = 32, E_STAMP = 64, E_SIG = 72 };

static size_t stride(const struct acc_signer *s)
{
    return (E_SIG + s->sig_len + 7) & ~(size_t)7;
}

acc_err dsig_cache_init(struct acc_signer *s)
{
    /* calloc: pages are only resident once entries are written. */
    s->cache.slots = calloc((size_t)CACHE_SETS * CACHE_WAYS, stride(s));
    if (!s->cache.slots)
        return ACC_ERR_NOMEM;
    pthread_mutex_init(&s->cache.lock, NULL);
    return ACC_OK;
}

void dsig_cache_release(struct acc_signer *s)
{
    if (!s->cache.slots)
        return;
    pthread_mutex_destroy(&s->cache.lock);
    free(s->cache.slots);
    s->cache.slots = NULL;
}

static unsigned char *set_of(struct acc_signer *s, const unsigned char *key)
{
    unsigned set = ((unsigned)key[0] | (unsigned)key[1] << 8) % CACHE_SETS;
    return s->cache.slots + (size_t)set * CACHE_WAYS * stride(s);
}

static uint64_t stamp_of(const unsigned char *e)
{
    uint64_t v;
    memcpy(&v, e + E_STAMP, sizeof v);
    return v;
}

/* The digest and signature kept for key, if any. */
static bool cache_get(struct acc_signer *s, const unsigned char *key, unsigned char *digest,
                      unsigned char *sig)
{
    bool found = false;
    pthread_mutex_lock(&s->cache.lock);
    unsigned char *e = set_of(s, key);
    for (int w = 0; w < CACHE_WAYS && !found; w++, e += stride(s)) {
        if (stamp_of(e) && memcmp(e + E_KEY, key, 32) == 0) {
            memcpy(digest, e + E_DIGEST, 32);
            memcpy(sig, e + E_SIG, s->sig_len);
            uint64_t now = ++s->cache.clock;
            memcpy(e + E_STAMP, &now, sizeof now);
            s->cache.reused++;
            found = true;
        }
    }
    pthread_mutex_unlock(&s->cache.lock);
    return found;
}

/* Keeps a signature in place of the set's least recently used one. */
static void cache_put(struct acc_signer *s, const unsigned char *key, const unsigned char *digest,
                      const unsigned char *sig)
{
    pthread_mutex_lock(&s->cache.lock);
    unsigned char *e = set_of(s, key), *victim = e;
    for (int w = 0; w < CACHE_WAYS; w++, e += stride(s))
        if (stamp_of(e) < stamp_of(victim))
            victim = e;
    memcpy(victim + E_KEY, key, 32);
    memcpy(victim + E_DIGEST, digest, 32);
    memcpy(victim + E_SIG, sig, s->sig_len);
    uint64_t now = ++s->cache.clock;
    memcpy(victim + E_STAMP, &now, sizeof now);
    s->cache.made++;
    pthread_mutex_unlock(&s->cache.lock);
}

void acc_signer_stats(struct acc_signer *s, struct acc_signer_stats *out)
{
    pthread_mutex_lock(&s->cache.lock);
    out->made = s->cache.made;
    out->reused = s->cache.reused;
    pthread_mutex_unlock(&s->cache.lock);
}

/* ------------------------------------------------------------ signing */

/* The DigestValue of xml[0..len) and where ds:Signature goes. */
static acc_err digest_of(const char *xml, size_t len, unsigned char *digest, size_t *at,
                         struct acc_error *err)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    char qname[256];
    unsigned n = 0;
    acc_err rc;
    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = canonicalise(xml, len, md, qname, sizeof qname, err)))
        goto out;
    if (!end_tag(xml, len, qname, at)) {
        rc = acc_error_set(err, ACC_ERR_INVALID,
                           "cannot sign: the document does not end with its root element's end "
                           "tag </%s>",
                           qname);
        goto out;
    }
    if (EVP_DigestFinal_ex(md, digest, &n) != 1 || n != 32)
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "cannot sign: SHA-256 failed");
out:
    EVP_MD_CTX_free(md);
    return rc;
}

/* XML-DSig's ECDSA SignatureValue is r and s, each as long as the curve's
 * order, one after the other; OpenSSL writes them as DER (ASN.1). */
static bool ecdsa_raw(const unsigned char *der, size_t der_len, unsigned char *sig, size_t len)
{
    const unsigned char *p = der;
    ECDSA_SIG *e = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
    const BIGNUM *r = NULL, *s = NULL;
    if (e)
        ECDSA_SIG_get0(e, &r, &s);
    bool ok = e && BN_bn2binpad(r, sig, (int)(len / 2)) == (int)(len / 2) &&
              BN_bn2binpad(s, sig + len / 2, (int)(len / 2)) == (int)(len / 2);
    ECDSA_SIG_free(e);
    return ok;
}

/* The SignatureValue (RSA-SHA256 or ECDSA-SHA256, as the key is) of the
 * canonical SignedInfo around digest. */
static acc_err key_sign(struct acc_signer *s, const unsigned char *digest, unsigned char *sig,
                        struct acc_error *err)
{
    char b64[48], si[1024];
    unsigned char der[DSIG_MAX_SIG + 16];
    EVP_EncodeBlock((unsigned char *)b64, digest, 32);
    int n = snprintf(si, sizeof si, SIGNED_INFO_CANONICAL, s->method, b64);
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    size_t len = s->ec ? sizeof der : s->sig_len;
    bool ok =
        n > 0 && (size_t)n < sizeof si && m &&
        EVP_DigestSignInit(m, NULL, EVP_sha256(), NULL, s->pkey) == 1 &&
        EVP_DigestSign(m, s->ec ? der : sig, &len, (const unsigned char *)si, (size_t)n) == 1 &&
        (s->ec ? ecdsa_raw(der, len, sig, s->sig_len) : len == s->sig_len);
    EVP_MD_CTX_free(m);
    return ok ? ACC_OK
              : acc_error_set(err, ACC_ERR_INTERNAL, "signing failed: %s-SHA256",
                              s->ec ? "ECDSA" : "RSA");
}

/* The document with ds:Signature in front of the end tag at `at`. */
static acc_err write_signed(const struct acc_signer *s, const char *xml, size_t len, size_t at,
                            const unsigned char *digest, const unsigned char *sig,
                            struct acc_buf *out, struct acc_error *err)
{
    char d64[48], s64[4 * DSIG_MAX_SIG / 3 + 8];
    EVP_EncodeBlock((unsigned char *)d64, digest, 32);
    EVP_EncodeBlock((unsigned char *)s64, sig, (int)s->sig_len);
    acc_buf_append(out, xml, at);
    acc_buf_puts(out, "<ds:Signature xmlns:ds=\"" NS_DS "\">\n");
    acc_buf_printf(out, SIGNED_INFO_SENT, s->method, d64);
    acc_buf_puts(out, "\n<ds:SignatureValue>");
    acc_buf_puts(out, s64);
    acc_buf_puts(out, "</ds:SignatureValue>\n<ds:KeyInfo><ds:X509Data><ds:X509Certificate>");
    acc_buf_puts(out, s->cert_b64);
    acc_buf_puts(out, "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>\n</ds:Signature>");
    acc_buf_append(out, xml + at, len - at);
    return acc_buf_ok(out) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

/* Signs without asking the cache (keep: whether to keep the signature). */
static acc_err sign_fresh(struct acc_signer *s, const char *xml, size_t len,
                          const unsigned char *key, struct acc_buf *out, struct acc_error *err)
{
    unsigned char digest[32], sig[DSIG_MAX_SIG];
    size_t at = 0;
    acc_err rc = digest_of(xml, len, digest, &at, err);
    if (!rc)
        rc = key_sign(s, digest, sig, err);
    if (!rc && key)
        cache_put(s, key, digest, sig);
    if (!rc)
        rc = write_signed(s, xml, len, at, digest, sig, out, err);
    return rc;
}

/* A kept signature: the certificate's id, the document's SHA-256, its
 * DigestValue, the SignatureValue. */
enum { K_CERT = 0, K_KEY = 8, K_DIGEST = 40, K_SIG = 72 };

acc_err acc_dsig_sign_kept(struct acc_signer *s, const char *xml, size_t len, const void *kept,
                           size_t kept_len, struct acc_buf *out, bool *fresh,
                           unsigned char *kept_out, size_t *kept_out_len, struct acc_error *err)
{
    unsigned char key[32], digest[32], sig[DSIG_MAX_SIG];
    const unsigned char *k = kept;
    size_t at = 0;
    *fresh = false;
    if (len > (size_t)INT32_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE, "document too large to sign");
    if (EVP_Digest(xml, len, key, NULL, EVP_sha256(), NULL) != 1)
        return acc_error_set(err, ACC_ERR_INTERNAL, "cannot sign: SHA-256 failed");
    /* The same bytes passed digest_of() when they were signed. */
    if (k && kept_len == K_SIG + s->sig_len && memcmp(k + K_CERT, s->cert_id, 8) == 0 &&
        memcmp(k + K_KEY, key, 32) == 0 && end_tag(xml, len, NULL, &at)) {
        pthread_mutex_lock(&s->cache.lock);
        s->cache.reused++;
        pthread_mutex_unlock(&s->cache.lock);
        return write_signed(s, xml, len, at, k + K_DIGEST, k + K_SIG, out, err);
    }
    acc_err rc = ACC_OK;
    if (!cache_get(s, key, digest, sig) || !end_tag(xml, len, NULL, &at)) {
        if ((rc = digest_of(xml, len, digest, &at, err)) || (rc = key_sign(s, digest, sig, err)))
            return rc;
        cache_put(s, key, digest, sig);
    }
    *fresh = true;
    if (kept_out) {
        memcpy(kept_out + K_CERT, s->cert_id, 8);
        memcpy(kept_out + K_KEY, key, 32);
        memcpy(kept_out + K_DIGEST, digest, 32);
        memcpy(kept_out + K_SIG, sig, s->sig_len);
        *kept_out_len = K_SIG + s->sig_len;
    }
    return write_signed(s, xml, len, at, digest, sig, out, err);
}

acc_err acc_dsig_sign(struct acc_signer *s, const char *xml, size_t len, struct acc_buf *out,
                      struct acc_error *err)
{
    bool fresh;
    return acc_dsig_sign_kept(s, xml, len, NULL, 0, out, &fresh, NULL, NULL, err);
}

acc_err dsig_self_test(struct acc_signer *s, struct acc_error *err)
{
    static const char doc[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<t:Test xmlns:t=\"urn:accord:self-test\" xmlns:u=\"urn:u\" t:b=\"2\" "
        "t:a=\"&lt;1&quot;\">\n  <t:Empty/>\n  <t:Text>a &amp; b &gt; "
        "\xc3\xa9</t:Text>\n</t:Test>\n";
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_dsig_verdict v = {0};
    acc_err rc = sign_fresh(s, doc, sizeof doc - 1, NULL, &b, err);
    if (!rc)
        rc = acc_dsig_verify(b.data, b.len, NULL, &v, err);
    if (!rc && !v.valid)
        rc = acc_error_set(err, ACC_ERR_INTERNAL,
                           "a signature made with it does not verify with xmlsec (%s)", v.reason);
    acc_buf_release(&b);
    return rc;
}
