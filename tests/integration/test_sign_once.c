/* SPDX-License-Identifier: Apache-2.0 */
/* test_sign_once.c - each agreement document is signed once: the reply to
 * POST, and every GET of the same document after it, carry the signature
 * made before the commit, which the real xmlsec1 verifies; a state change
 * (terminate) is a new document, signed once more, whose signature covers
 * the new state.  The evidence is accordd's own count of RSA signatures
 * (/metrics), not time. */
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dsig.h"
#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml_internal.h"

extern char **environ;

static char crt[512];

/* xmlsec1's exit status on doc, with the service's certificate. */
static int xmlsec1_verdict(const char *doc, size_t len)
{
    char path[512], log[512];
    snprintf(path, sizeof path, "%s/doc.xml", acc_test_tmpdir());
    snprintf(log, sizeof log, "%s/xmlsec1.out", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    if (!f || fwrite(doc, 1, len, f) != len) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    const char *argv[] = {"xmlsec1", "--verify", "--pubkey-cert-pem", crt, path, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int st, status = -1;
    if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        status = WEXITSTATUS(st);
    posix_spawn_file_actions_destroy(&fa);
    return status;
}

/* A counter of /metrics (-1 when it is missing). */
static long long metric(const struct fixture *fx, const char *name)
{
    char url[256], key[128];
    snprintf(url, sizeof url, "%s/metrics", fx->base);
    snprintf(key, sizeof key, "\n%s ", name);
    struct http_reply r;
    long long v = -1;
    if (http_do("GET", url, NULL, 0, NULL, &r) == 0 && r.status == 200 && r.body) {
        const char *p = strstr(r.body, key);
        if (p)
            v = strtoll(p + strlen(key), NULL, 10);
    }
    http_reply_free(&r);
    return v;
}

/* A request whose reply must be 200 or 201: its body. */
static char *fetch(const char *method, const char *url, const char *body, size_t *len)
{
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do(method, url, body, body ? strlen(body) : 0, NULL, &r), 0);
    if (r.status != 200 && r.status != 201)
        fprintf(stderr, "%s %s: %ld %s\n", method, url, r.status, r.body ? r.body : "");
    CU_ASSERT(r.status == 200 || r.status == 201);
    char *b = r.body;
    *len = r.len;
    r.body = NULL;
    http_reply_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    return b;
}

/* Modify: the new version is signed once, before its commit, and the
 * reply is that document (url: the agreement's). */
static void check_modify_signed_once(const struct fixture *fx, const char *posted, const char *url)
{
    size_t len;
    char murl[300], body[300], t[40];
    char *end = xml_get(posted, "/wsag:Agreement/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"
                                "co:Allocation/co:End");
    acc_time e = 0;
    CU_ASSERT_EQUAL(acc_time_parse(end ? end : "", &e, NULL), ACC_OK);
    free(end);
    acc_time_format(e + 3600, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "</co:Modification>",
             t);
    snprintf(murl, sizeof murl, "%s/modify", url);
    char *mod = fetch("POST", murl, body, &len);
    CU_ASSERT_EQUAL(xmlsec1_verdict(mod, len), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(mod, "<co:Version>2</co:Version>"));
    CU_ASSERT_EQUAL(metric(fx, "accord_signatures_total"), 2);
    CU_ASSERT_EQUAL(metric(fx, "accord_signatures_reused_total"), 5);
    char *again = fetch("GET", url, NULL, &len);
    CU_ASSERT(len == strlen(mod) && memcmp(again, mod, len) == 0);
    CU_ASSERT_EQUAL(metric(fx, "accord_signatures_total"), 2);
    free(again);
    free(mod);
}

static void test_signed_once(void)
{
    struct fixture fx;
    char db[512], url[256];
    snprintf(db, sizeof db, "%s/once.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    size_t n;
    snprintf(url, sizeof url, "%s/certificate", fx.base);
    char *pem = fetch("GET", url, NULL, &n);
    snprintf(crt, sizeof crt, "%s/svc.crt", acc_test_tmpdir());
    FILE *f = fopen(crt, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(pem, 1, n, f);
    fclose(f);
    free(pem);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_total"), 0);

    /* POST: signed before the commit; the reply is that document. */
    char *offer = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(offer);
    snprintf(url, sizeof url, "%s/agreements", fx.base);
    size_t len;
    char *posted = fetch("POST", url, offer, &len);
    free(offer);
    CU_ASSERT_EQUAL(xmlsec1_verdict(posted, len), 0);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_total"), 1);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_reused_total"), 1);

    /* GET, three times: the same bytes, no new signature. */
    char *id = xml_get(posted, "/wsag:Agreement/@wsag:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    snprintf(url, sizeof url, "%s/agreements/%s", fx.base, id);
    for (int i = 0; i < 3; i++) {
        char *got = fetch("GET", url, NULL, &len);
        CU_ASSERT_EQUAL(xmlsec1_verdict(got, len), 0);
        CU_ASSERT(len == strlen(posted) && memcmp(got, posted, len) == 0);
        free(got);
    }
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_total"), 1);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_reused_total"), 4);

    check_modify_signed_once(&fx, posted, url);

    /* Terminate: a new state, a new signature that covers it. */
    char turl[300];
    snprintf(turl, sizeof turl, "%s/terminate", url);
    char *term = fetch("POST", turl, "", &len);
    CU_ASSERT_EQUAL(xmlsec1_verdict(term, len), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(term, "<co:State>Terminated</co:State>"));
    long long made = metric(&fx, "accord_signatures_total");
    CU_ASSERT_EQUAL(made, 3);
    char *got = fetch("GET", url, NULL, &len);
    CU_ASSERT_EQUAL(xmlsec1_verdict(got, len), 0);
    char *state = xml_get(got, "/wsag:Agreement/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"
                               "co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(state ? state : "", "Terminated");
    free(state);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_total"), made);
    /* The old document's signature does not cover the new state: the
     * Observed one with Terminated put in is refused. */
    char *p = strstr(posted, "<co:State>Observed</co:State>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(p + strlen("<co:State>"), "Rejected", 8); /* same length as Observed */
    CU_ASSERT_NOT_EQUAL(xmlsec1_verdict(posted, strlen(posted)), 0);
    free(got);
    free(term);
    free(id);
    free(posted);
    fixture_stop(&fx);
}

/* acc_dsig_sign on its own: documents with what canonicalisation changes
 * (a default namespace, attributes out of order, an empty element, a
 * comment, character references, CR LF line ends) verify with xmlsec1;
 * the same bytes are signed once; what cannot be signed is refused with
 * nothing written. */
static void test_sign_documents(void)
{
    static const char *const docs[] = {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a xmlns=\"urn:x\" xmlns:u=\"urn:u\" "
        "u:z=\"1\" b=\"&#x9;&lt;\" a=\"2\">\r\n  <e/><!-- note -->\n  <t>x &amp; &#233; "
        "&gt;</t>\n<u:n u:k=\"v\"/></a>\n",
        "<r:Root xmlns:r=\"urn:r\"><r:x>1</r:x></r:Root>",
        "<?xml version=\"1.0\"?>\n<Root>text</Root >\n\n",
    };
    char key[512], cert[512];
    snprintf(key, sizeof key, "%s/k.key", acc_test_tmpdir());
    snprintf(cert, sizeof cert, "%s/k.crt", acc_test_tmpdir());
    bool created;
    struct acc_error e;
    struct acc_signer *s = NULL;
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, cert, "test", &created, &e));
    ACC_ASSERT_OK(acc_signer_open(key, cert, &s, &e));
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(crt, sizeof crt, "%s", cert);
    struct acc_signer_stats st;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        for (int again = 0; again < 2; again++) {
            struct acc_buf b = ACC_BUF_INIT;
            ACC_ASSERT_OK(acc_dsig_sign(s, docs[i], strlen(docs[i]), &b, &e));
            CU_ASSERT_EQUAL(xmlsec1_verdict(b.data, b.len), 0);
            acc_buf_release(&b);
        }
        acc_signer_stats(s, &st);
        CU_ASSERT_EQUAL(st.made, i + 1);
        CU_ASSERT_EQUAL(st.reused, i + 1);
    }
    static const struct {
        const char *doc;
        acc_err code;
    } bad[] = {
        {"<a>unclosed", ACC_ERR_MALFORMED},
        {"<a/>", ACC_ERR_INVALID},
        {"<a>x</a><!-- </a> -->", ACC_ERR_INVALID},
        {"<a xmlns:y=\"relative\"><y:b/></a>", ACC_ERR_INVALID},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct acc_buf b = ACC_BUF_INIT;
        CU_ASSERT_EQUAL(acc_dsig_sign(s, bad[i].doc, strlen(bad[i].doc), &b, &e), bad[i].code);
        CU_ASSERT_EQUAL(b.len, 0);
        acc_buf_release(&b);
    }
    acc_signer_stats(s, &st);
    CU_ASSERT_EQUAL(st.made, 3);
    acc_signer_close(s);
}

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

/* The signature of each agreement's current document is kept in the
 * database: after a restart (the signer's own keeping empty) a GET signs
 * nothing, for a new agreement (kept with its commit) and for a terminated
 * one (kept after its first GET); the bytes are the same and verify. */
static void test_kept_across_restart(void)
{
    struct fixture fx;
    char db[512], url[256], aurl[300];
    snprintf(db, sizeof db, "%s/kept.db", acc_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    size_t n, len, len2;
    char *offer = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(offer);
    snprintf(url, sizeof url, "%s/agreements", fx.base);
    char *posted = fetch("POST", url, offer, &len);
    char *id = xml_get(posted, "/wsag:Agreement/@wsag:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char *other = fetch("POST", url, offer, &len2);
    char *id2 = xml_get(other, "/wsag:Agreement/@wsag:AgreementId");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id2);
    free(offer);
    snprintf(aurl, sizeof aurl, "%s/agreements/%s/terminate", fx.base, id2);
    free(fetch("POST", aurl, "", &len2));
    fixture_stop(&fx);

    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    snprintf(aurl, sizeof aurl, "%s/certificate", fx.base);
    char *pem = fetch("GET", aurl, NULL, &n);
    snprintf(crt, sizeof crt, "%s/kept.crt", acc_test_tmpdir());
    FILE *f = fopen(crt, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(pem, 1, n, f);
    fclose(f);
    free(pem);
    snprintf(aurl, sizeof aurl, "%s/agreements/%s", fx.base, id);
    char *got = fetch("GET", aurl, NULL, &n);
    CU_ASSERT(n == len && memcmp(got, posted, len) == 0);
    CU_ASSERT_EQUAL(xmlsec1_verdict(got, n), 0);
    snprintf(aurl, sizeof aurl, "%s/agreements/%s", fx.base, id2);
    char *term = fetch("GET", aurl, NULL, &n);
    CU_ASSERT_EQUAL(xmlsec1_verdict(term, n), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(term, "<co:State>Terminated</co:State>"));
    /* the terminated document was signed when the terminate answered and
     * kept then: nothing signed in this process */
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_total"), 0);
    CU_ASSERT_EQUAL(metric(&fx, "accord_signatures_reused_total"), 2);
    fixture_stop(&fx);
    free(term);
    free(got);
    free(id);
    free(id2);
    free(other);
    free(posted);
}

static const struct acc_test_case tests[] = {
    {"each document is signed once; a new state is signed anew", test_signed_once},
    {"signed documents verify; what cannot be signed is refused", test_sign_documents},
    {"the current document's signature is kept across a restart", test_kept_across_restart},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sign_once", init, fini, tests},
    {NULL, NULL, NULL, NULL},
};
