/* test_sign.c - signed agreements: the documents accordd issues carry an
 * enveloped XML signature that the real xmlsec1 command and the real
 * accordctl verify accept, and refuse once a byte is changed; the
 * self-made key pair is made once and reused, and refused once others can
 * read it; a configured key others can read draws a warning; a bad
 * [signing] is a clear start-up error, of accordd itself too, that changes
 * nothing. */
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
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
#include "testutil.h"
#include "xml_internal.h"

extern char **environ;

static const char sites[] = "[site alpha]\nadapter = sim-batch\nnodes = 16\n"
                            "[site beta]\nadapter = sim-batch\nnodes = 16\n"
                            "[network net]\nadapter = sim-network\n"
                            "[link alpha_beta]\nsites = alpha beta\ncapacity = 1000\n"
                            "network = net\n";

struct run {
    int status; /* exit status, or -1 */
    char *out;  /* standard output and error */
};

/* Runs argv (NULL-terminated) with its output in a file, and waits. */
static struct run run_v(const char *const *argv)
{
    struct run r = {-1, NULL};
    char path[256];
    snprintf(path, sizeof path, "%s/run.out", acc_test_tmpdir());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int st;
    if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        r.status = WEXITSTATUS(st);
    posix_spawn_file_actions_destroy(&fa);
    size_t n;
    r.out = read_file(path, &n);
    if (!r.out)
        r.out = strdup("");
    return r;
}

#define RUN(...) run_v((const char *const[]){__VA_ARGS__, NULL})

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
    fclose(f);
}

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
}

static char *tmp_path(const char *name)
{
    static char p[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(p[i], sizeof p[i], "%s/%s", acc_test_tmpdir(), name);
    return p[i];
}

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

static void test_embedded_pair_made_once_and_reused(void)
{
    char *db = tmp_path("reuse.db"), *key = tmp_path("accord-signing.key");
    struct fixture fx;
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    struct stat k1, k2;
    CU_ASSERT_EQUAL_FATAL(stat(key, &k1), 0);
    CU_ASSERT_EQUAL(k1.st_mode & 0777, 0600);
    char *pem1 = strdup(acc_signer_cert_pem(fx.ctx.signer, NULL));
    fixture_stop(&fx);

    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    CU_ASSERT_EQUAL_FATAL(stat(key, &k2), 0);
    CU_ASSERT_EQUAL(k1.st_ino, k2.st_ino);
    CU_ASSERT_EQUAL(k1.st_mtim.tv_sec, k2.st_mtim.tv_sec);
    CU_ASSERT_EQUAL(k1.st_mtim.tv_nsec, k2.st_mtim.tv_nsec);
    CU_ASSERT_STRING_EQUAL(acc_signer_cert_pem(fx.ctx.signer, NULL), pem1);
    free(pem1);
    fixture_stop(&fx);

    /* Half a pair is not silently replaced. */
    CU_ASSERT_EQUAL(unlink(tmp_path("accord-signing.crt")), 0);
    CU_ASSERT_NOT_EQUAL(fixture_start_signed(&fx, NULL, db), 0);
    CU_ASSERT_EQUAL(stat(key, &k2), 0);
    CU_ASSERT_EQUAL(k1.st_ino, k2.st_ino);
}

/* The signer of a configuration text, or its error. */
static acc_err signer_of(const char *ini, struct acc_error *err)
{
    struct acc_config cfg;
    acc_err rc = acc_config_load_string(ini, "test", &cfg, err);
    if (rc)
        return rc;
    struct acc_signer *s = NULL;
    rc = acc_http_signer_open(&cfg, &s, err);
    acc_signer_close(s);
    acc_config_release(&cfg);
    return rc;
}

static acc_err self_made_signer(const char *db, struct acc_error *err);

static void test_bad_signing_configuration(void)
{
    char ini[4096];
    struct acc_error e;
    bool created;
    char *key = tmp_path("cfg.key"), *crt = tmp_path("cfg.crt");
    char *okey = tmp_path("cfg2.key"), *ocrt = tmp_path("cfg2.crt");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, crt, "cfg", &created, NULL));
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(okey, ocrt, "cfg2", &created, NULL));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    ACC_ASSERT_OK(signer_of(ini, &e));

    snprintf(ini, sizeof ini, "[signing]\nkey = /nonexistent/k.pem\ncertificate = %s\n%s", crt,
             sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "/nonexistent/k.pem"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "No such file"));

    /* A certificate where the key should be. */
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", crt, crt, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "not a PEM private key"));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", okey, crt, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "is not the key of certificate"));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\n%s", key, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "needs both key and certificate"));

    snprintf(ini, sizeof ini, "[signing]\npassword = x\n%s", sites);
    struct acc_config cfg;
    CU_ASSERT_EQUAL(acc_config_load_string(ini, "test", &cfg, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unknown key 'password'"));

    /* An unreadable key (root reads every mode: a directory instead). */
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", acc_test_tmpdir(), crt,
             sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "signing key"));

    /* A PostgreSQL URL given over the file (accordd --db URL): no pair is
     * made beside it (there is no directory), and it says what is missing. */
    CU_ASSERT_EQUAL(self_made_signer("postgresql:///accord?host=/tmp", &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "needs [signing] key and certificate"));
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

/* The self-made pair's signer for database db, or its error. */
static acc_err self_made_signer(const char *db, struct acc_error *err)
{
    struct acc_config cfg;
    acc_err rc = acc_config_load_string(sites, "test", &cfg, err);
    if (!rc)
        rc = acc_config_set_db(&cfg, db, err);
    struct acc_signer *s = NULL;
    if (!rc)
        rc = acc_http_signer_open(&cfg, &s, err);
    acc_signer_close(s);
    acc_config_release(&cfg);
    return rc;
}

/* The key accordd made for itself, later opened to its group or others:
 * refused, saying the mode and the fix, by the real accordd too; closed
 * again, taken. */
static void test_self_made_key_opened_is_refused(void)
{
    char *dir = tmp_path("opened");
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    char db[512], key[512];
    snprintf(db, sizeof db, "%s/o.db", dir);
    snprintf(key, sizeof key, "%s/accord-signing.key", dir);
    struct acc_error e;
    ACC_ASSERT_OK(self_made_signer(db, &e)); /* made */
    static const mode_t modes[] = {0644, 0640, 0604, 0660};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(chmod(key, modes[i]), 0);
        char want[16];
        snprintf(want, sizeof want, "mode %04o", (unsigned)modes[i]);
        CU_ASSERT_EQUAL(self_made_signer(db, &e), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "chmod 600"));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, key));
    }
    char *ini = tmp_path("opened.ini");
    write_file(ini, sites, strlen(sites));
    /* (timeout: an accordd that took the key would serve until killed) */
    struct run r =
        RUN("timeout", "20", ACCORDD_PATH, "--config", ini, "--db", db, "--listen", "127.0.0.1:0");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mode 0660"));
    free(r.out);
    CU_ASSERT_EQUAL_FATAL(chmod(key, 0600), 0);
    ACC_ASSERT_OK(self_made_signer(db, &e));
    CU_ASSERT_EQUAL_FATAL(chmod(key, 0400), 0); /* read-only for its owner is fine */
    ACC_ASSERT_OK(self_made_signer(db, &e));
}

/* A configured key others can read draws a warning that says so (it is the
 * operator's file: not refused). */
static void test_configured_key_opened_warns(void)
{
    bool created;
    char *key = tmp_path("w.key"), *crt = tmp_path("w.crt"), *log = tmp_path("w.log");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, crt, "w", &created, NULL));
    char ini[4096];
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    for (int opened = 0; opened < 2; opened++) {
        CU_ASSERT_EQUAL_FATAL(chmod(key, opened ? 0644 : 0600), 0);
        fflush(stderr);
        int saved = dup(2), fd = open_log(log);
        CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        close(fd);
        struct acc_error e;
        acc_err rc = signer_of(ini, &e);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        ACC_ASSERT_OK(rc);
        size_t n;
        char *text = read_file(log, &n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        if (opened) {
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "warn"));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "mode 0644"));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "chmod 600"));
        } else {
            CU_ASSERT_PTR_NULL(strstr(text, "signing key"));
        }
        free(text);
    }
}

/* xmlsec for the tests' own checks; the fixture starts libxml2's side. */
static int init(void)
{
    struct acc_error e;
    if (acc_dsig_init(&e)) {
        fprintf(stderr, "init: %s\n", e.msg);
        return 1;
    }
    return 0;
}

static int fini(void)
{
    acc_dsig_cleanup();
    acc_xml_cleanup();
    return 0;
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
    {"the embedded pair is made once and reused", test_embedded_pair_made_once_and_reused},
    {"bad [signing] configuration", test_bad_signing_configuration},
    {"the real accordd signs, and refuses a missing key", test_accordd_signing},
    {"every version is signed (modify, ?version=N)", test_every_version_signed},
    {"a self-made key opened to others is refused", test_self_made_key_opened_is_refused},
    {"a configured key opened to others draws a warning", test_configured_key_opened_warns},
    {"an operator's RSA key signs with RSA-SHA256", test_rsa_key_signs},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sign", init, fini, tests},
    {NULL, NULL, NULL, NULL},
};
