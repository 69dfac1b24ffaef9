/* SPDX-License-Identifier: Apache-2.0 */
/* test_sign.c - signed agreements: the documents accordd issues carry an
 * enveloped XML signature that the real xmlsec1 command and the real
 * accordctl verify accept, and refuse once a byte is changed; every version
 * is signed; an operator's RSA key signs with RSA-SHA256; the real accordd
 * refuses a missing key.  (The key pair itself: test_sign_keys.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "dsig.h"
#include "fixture.h"
#include "http_client.h"
#include "sign_util.h"
#include "testutil.h"
#include "xml_internal.h"

/* An agreement document issued by a signed fixture, and its certificate. */
static char *issue(struct fixture *fx, char **cert)
{
    size_t n;
    char *offer = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(offer);
    char url[128];
    snprintf(url, sizeof url, "%s/agreements", fx->base);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url, offer, n, NULL, &r), 0);
    free(offer);
    CU_ASSERT_EQUAL(r.status, 201);
    char *doc = r.body;
    r.body = NULL;
    http_reply_free(&r);
    snprintf(url, sizeof url, "%s/certificate", fx->base);
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url, NULL, 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/x-pem-file");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "-----BEGIN CERTIFICATE-----"));
    *cert = r.body;
    r.body = NULL;
    http_reply_free(&r);
    return doc;
}

/* One byte of the signed content changed: the first node count's digit. */
static void change_one_byte(char *doc)
{
    char *p = strstr(doc, "<co:Nodes>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p += strlen("<co:Nodes>");
    *p = *p == '9' ? '8' : '9';
}

/* The shape: the ds:Signature is the root's last child, the key's
 * SignatureMethod (ECDSA-SHA256 for the self-made pair), one Reference to
 * the whole document, the certificate in KeyInfo; the signed document still
 * validates against the schemas. */
static void check_shape(const char *doc, const char *method)
{
    char alg[128];
    snprintf(alg, sizeof alg, "<ds:SignatureMethod Algorithm=\"%s\"/>", method);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(doc, "<ds:Signature xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, alg));
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, "http://www.w3.org/2001/10/xml-exc-c14n#"));
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, "<ds:Reference URI=\"\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, "<ds:X509Certificate>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, "</ds:Signature></wsag:Agreement>"));
    struct acc_error e;
    CU_ASSERT_EQUAL(acc_xml_validate_mem(doc, strlen(doc), &e), ACC_OK);
}

/* GET /agreements/{id} is signed as well. */
static void check_get_signed(const struct fixture *fx, const char *doc, const char *crt)
{
    char *id = xml_get(doc, "/wsag:Agreement/@wsag:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char url[256];
    snprintf(url, sizeof url, "%s/agreements/%s", fx->base, id);
    struct http_reply g;
    CU_ASSERT_EQUAL_FATAL(http_do("GET", url, NULL, 0, NULL, &g), 0);
    CU_ASSERT_EQUAL(g.status, 200);
    char *got = tmp_path("got.xml");
    write_file(got, g.body, g.len);
    struct run r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, got);
    CU_ASSERT_EQUAL(r.status, 0);
    free(r.out);
    http_reply_free(&g);
    free(id);
}

/* accordctl verify: the same verdicts as xmlsec1, saying which
 * certificate; a document without a signature. */
static void check_accordctl_verify(const char *good, const char *bad, const char *crt,
                                   const char *ocrt)
{
    struct run r = RUN(ACCORDCTL_PATH, "verify", good, "--cert", crt);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "given with --cert"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "valid signature"));
    free(r.out);
    r = RUN(ACCORDCTL_PATH, "verify", bad, "--cert", crt);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "INVALID"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "content was changed"));
    free(r.out);
    r = RUN(ACCORDCTL_PATH, "verify", good, "--cert", ocrt);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "another key"));
    free(r.out);
    r = RUN(ACCORDCTL_PATH, "verify", good, "--trust-embedded");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "inside the document, trusted explicitly"));
    free(r.out);
    r = RUN(ACCORDCTL_PATH, "verify", bad, "--trust-embedded");
    CU_ASSERT_EQUAL(r.status, 1);
    free(r.out);
    r = RUN(ACCORDCTL_PATH, "verify", good);
    CU_ASSERT_EQUAL(r.status, 2);
    free(r.out);
    /* A document without a signature. */
    size_t n;
    char *plain = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &n);
    char *unsigned_doc = tmp_path("unsigned.xml");
    write_file(unsigned_doc, plain, n);
    free(plain);
    r = RUN(ACCORDCTL_PATH, "verify", unsigned_doc, "--trust-embedded");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "no ds:Signature"));
    free(r.out);
}

static void test_issued_agreement_verifies_with_xmlsec1(void)
{
    struct fixture fx;
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, tmp_path("a.db")), 0);
    char *cert;
    char *doc = issue(&fx, &cert);
    check_shape(doc, "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256");

    char *good = tmp_path("good.xml"), *bad = tmp_path("bad.xml"), *crt = tmp_path("svc.crt");
    write_file(good, doc, strlen(doc));
    write_file(crt, cert, strlen(cert));
    struct run r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, good);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SignedInfo References (ok/all): 1/1"));
    free(r.out);

    check_get_signed(&fx, doc, crt);

    /* One changed byte: refused. */
    change_one_byte(doc);
    write_file(bad, doc, strlen(doc));
    r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, bad);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SignedInfo References (ok/all): 0/1"));
    free(r.out);

    /* Another key's certificate: refused (the document's own is not taken
     * instead of the one given). */
    bool created;
    char *okey = tmp_path("other.key"), *ocrt = tmp_path("other.crt");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(okey, ocrt, "other", &created, NULL));
    r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", ocrt, good);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    free(r.out);

    check_accordctl_verify(good, bad, crt, ocrt);

    free(doc);
    free(cert);
    fixture_stop(&fx);
}

/* A signature over part of the document only (a Reference to an element)
 * is not accepted, even when it is itself correct. */
static void test_verify_refuses_partial_references(void)
{
    struct acc_dsig_verdict v;
    const char *doc = "<r xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\"><a/></r>";
    ACC_ASSERT_OK(acc_dsig_verify(doc, strlen(doc), NULL, &v, NULL));
    CU_ASSERT_FALSE(v.valid);
    const char *dtd = "<!DOCTYPE r [<!ENTITY e 'x'>]><r>&e;</r>";
    ACC_ASSERT_OK(acc_dsig_verify(dtd, strlen(dtd), NULL, &v, NULL));
    CU_ASSERT_FALSE(v.valid);
    CU_ASSERT_PTR_NOT_NULL(strstr(v.reason, "DOCTYPE"));
}

/* The real accordd: signs with the configured pair; refuses to start with
 * a missing key, saying so, and creates no database. */
static void test_accordd_signing(void)
{
    bool created;
    char *key = tmp_path("d.key"), *crt = tmp_path("d.crt"), *ini = tmp_path("d.ini");
    char *db = tmp_path("d.db");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, crt, "daemon", &created, NULL));
    char text[4096];
    int n =
        snprintf(text, sizeof text, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    write_file(ini, text, (size_t)n);
    char base[128];
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_FATAL(pid > 0);
    long st;
    char *doc = daemon_call(base, "POST", "/agreements", daemon_offer, &st);
    CU_ASSERT_EQUAL(st, 201);
    if (doc) {
        char *f = tmp_path("d.xml");
        write_file(f, doc, strlen(doc));
        struct run r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, f);
        CU_ASSERT_EQUAL(r.status, 0);
        free(r.out);
        r = RUN(ACCORDCTL_PATH, "verify", f, "--cert", crt);
        CU_ASSERT_EQUAL(r.status, 0);
        free(r.out);
    }
    free(doc);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);

    /* A missing key: exit 1, the reason, nothing created. */
    char *db2 = tmp_path("never.db");
    n = snprintf(text, sizeof text, "[signing]\nkey = %s.missing\ncertificate = %s\n%s", key, crt,
                 sites);
    write_file(ini, text, (size_t)n);
    struct run r = RUN(ACCORDD_PATH, "--config", ini, "--db", db2, "--listen", "127.0.0.1:0");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "[signing]: signing key"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ".missing"));
    struct stat sb;
    CU_ASSERT_NOT_EQUAL(stat(db2, &sb), 0);
    free(r.out);
}

/* An operator's RSA key (made with openssl) in the real accordd:
 * RSA-SHA256, verified by xmlsec1 and accordctl; one changed byte refused. */
static void test_rsa_key_signs(void)
{
    char *key = tmp_path("rsa.key"), *crt = tmp_path("rsa.crt"), *ini = tmp_path("rsa.ini");
    struct run r = RUN("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                       "-out", crt, "-days", "2", "-subj", "/CN=rsa");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    free(r.out);
    char text[4096];
    int n =
        snprintf(text, sizeof text, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    write_file(ini, text, (size_t)n);
    char base[128];
    pid_t pid = daemon_start(ACCORDD_PATH, ini, tmp_path("rsa.db"), base, sizeof base);
    CU_ASSERT_FATAL(pid > 0);
    long st;
    char *doc = daemon_call(base, "POST", "/agreements", daemon_offer, &st);
    CU_ASSERT_EQUAL(st, 201);
    if (doc) {
        check_shape(doc, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
        char *good = tmp_path("rsa-good.xml"), *bad = tmp_path("rsa-bad.xml");
        write_file(good, doc, strlen(doc));
        r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, good);
        CU_ASSERT_EQUAL(r.status, 0);
        free(r.out);
        r = RUN(ACCORDCTL_PATH, "verify", good, "--cert", crt);
        CU_ASSERT_EQUAL(r.status, 0);
        free(r.out);
        char *p = strstr(doc, "<wsag:Name>");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        p[strlen("<wsag:Name>")] ^= 1; /* one byte of the signed content */
        write_file(bad, doc, strlen(doc));
        r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", crt, bad);
        CU_ASSERT_NOT_EQUAL(r.status, 0);
        free(r.out);
    }
    free(doc);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* xmlsec1's verdict on doc with the service's certificate cert_file. */
static int xmlsec1_verdict(const char *doc, size_t len, const char *cert_file)
{
    char *f = tmp_path("version.xml");
    write_file(f, doc, len);
    struct run r = RUN("xmlsec1", "--verify", "--pubkey-cert-pem", cert_file, f);
    free(r.out);
    return r.status;
}

/* Every version is signed: the reply to a modify (version 2) and both
 * versions read back with ?version=N. */
static void test_every_version_signed(void)
{
    /* a directory of its own: the pair is made beside the database */
    char *dir = tmp_path("versions");
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    char db[512];
    snprintf(db, sizeof db, "%s/v.db", dir);
    struct fixture fx;
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    char *cert;
    char *doc = issue(&fx, &cert);
    char crt[512]; /* kept: tmp_path's buffers are reused */
    snprintf(crt, sizeof crt, "%s", tmp_path("v.crt"));
    write_file(crt, cert, strlen(cert));
    char *id = xml_get(doc, "/wsag:Agreement/@wsag:AgreementId");
    char *end = xml_get(doc, "/wsag:Agreement/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"
                             "co:Allocation/co:End");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    acc_time e = 0;
    CU_ASSERT_EQUAL(acc_time_parse(end, &e, NULL), ACC_OK);
    char t[40], body[256], url[256];
    /* shortened: the new booking lies within the old one, which counts as
     * free for it, so the change fits whatever else the calendars hold
     * (the embedded testbed has background load: extending could meet it) */
    acc_time_format(e - 600, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "</co:Modification>",
             t);
    snprintf(url, sizeof url, "%s/agreements/%s/modify", fx.base, id);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url, body, strlen(body), NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    if (r.status != 200)
        fprintf(stderr, "modify answered %ld: %s\n", (long)r.status, r.body ? r.body : "");
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, "<ds:Signature") : NULL);
    CU_ASSERT_EQUAL(r.body ? xmlsec1_verdict(r.body, r.len, crt) : -1, 0);
    http_reply_free(&r);
    for (int v = 1; v <= 2; v++) {
        snprintf(url, sizeof url, "%s/agreements/%s?version=%d", fx.base, id, v);
        CU_ASSERT_EQUAL_FATAL(http_do("GET", url, NULL, 0, NULL, &r), 0);
        CU_ASSERT_EQUAL(r.status, 200);
        CU_ASSERT_EQUAL(r.body ? xmlsec1_verdict(r.body, r.len, crt) : -1, 0);
        http_reply_free(&r);
    }
    free(end);
    free(id);
    free(doc);
    free(cert);
    fixture_stop(&fx);
}

static const struct acc_test_case tests[] = {
    {"an issued agreement verifies (xmlsec1, accordctl verify)",
     test_issued_agreement_verifies_with_xmlsec1},
    {"verification refuses documents that are not Accord's shape",
     test_verify_refuses_partial_references},
    {"the real accordd signs, and refuses a missing key", test_accordd_signing},
    {"every version is signed (modify, ?version=N)", test_every_version_signed},
    {"an operator's RSA key signs with RSA-SHA256", test_rsa_key_signs},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sign", sign_init, sign_fini, tests},
    {NULL, NULL, NULL, NULL},
};
