/* SPDX-License-Identifier: Apache-2.0 */
/* test_sign_commit.c - what cannot be signed is never booked (issue 24,
 * item 3).  An offer whose namespace names XML canonicalisation refuses
 * (and so the agreement's signature) is refused with a 400 naming the
 * namespace, before anything is stored or booked, every time it is sent;
 * one with an absolute foreign namespace is agreed and its document
 * verifies.  Behind that, the commit itself checks that the agreement's
 * document can be made and signed: when it cannot, the reservations are
 * released and the agreement is Rejected (a negotiation) or the quote stays
 * Held (the commit of a quote). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsig.h"
#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

static const char sites[] = "[site alpha]\nadapter = sim-batch\nnodes = 16\n"
                            "[site beta]\nadapter = sim-batch\nnodes = 16\n";

/* An offer for all 16 nodes of alpha for an hour, with `extra` in its
 * wsag:Context. */
static char *offer_with(const char *extra)
{
    static const char fmt[] =
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>ns</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>%s</wsag:Context>"
        "<wsag:Terms><wsag:All>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
        "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"metajob\"><co:Component>"
        "<co:Site>alpha</co:Site><co:Nodes>16</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>";
    size_t n = sizeof fmt + strlen(extra);
    char *s = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(s, n, fmt, extra);
    return s;
}

static size_t agreements(struct fixture *fx)
{
    struct acc_list_filter f = {.limit = 100};
    struct acc_agreement_list l;
    struct acc_error e;
    ACC_ASSERT_OK(acc_service_list(fx->svc, &f, &l, &e));
    size_t n = l.n;
    acc_agreement_list_release(&l);
    return n;
}

/* Whether all 16 nodes of alpha are free for an hour from within a minute
 * of now: nothing of the hour the offers ask for stayed booked. */
static bool alpha_free_now(struct fixture *fx)
{
    struct acc_frames fr;
    acc_frames_init(&fr);
    acc_time from, until;
    struct acc_error e;
    ACC_ASSERT_OK(acc_service_preview(fx->svc, "alpha", 16, 3600, 0, 0, &fr, &from, &until, &e));
    bool free_now = fr.n > 0 && fr.v[0].start <= acc_now() + 60;
    acc_frames_release(&fr);
    return free_now;
}

static char ini[1024];

static void start(struct fixture *fx, const char *db)
{
    char path[512];
    snprintf(ini, sizeof ini, "[server]\nallow_control = yes\n%s", sites);
    snprintf(path, sizeof path, "%s/%s", acc_test_tmpdir(), db);
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(fx, ini, path), 0);
}

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};

/* Posts body to path: the reply (free it). */
static struct http_reply post(struct fixture *fx, const char *path, const char *body)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", fx->base, path);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(http_do("POST", url, body, strlen(body), XML_HDR, &r), 0);
    return r;
}

struct bad_ns {
    const char *extra; /* in wsag:Context */
    const char *says;  /* the fault names this */
    const char *code;  /* its code */
};

static const struct bad_ns bad_cases[] = {
    /* the case of the issue */
    {"<y:e xmlns:y=\"relative-uri\"/>", "xmlns:y: the namespace name 'relative-uri' is a relative",
     "InvalidOffer"},
    {"<y:e xmlns:y=\"#frag\"/>", "'#frag' is a relative", "InvalidOffer"},
    {"<y:e xmlns:y=\"../up\"><y:f>1</y:f></y:e>", "'../up' is a relative", "InvalidOffer"},
    /* on an attribute of a foreign element, and declared but unused */
    {"<y:e xmlns:y=\"urn:ok\" xmlns:z=\"rel\" z:a=\"1\"/>", "xmlns:z: the namespace name 'rel'",
     "InvalidOffer"},
    {"<y:e xmlns:y=\"urn:ok\" xmlns:z=\"rel\"/>", "'rel' is a relative", "InvalidOffer"},
    /* a default namespace */
    {"<e xmlns=\"rel/x\"/>", "xmlns: the namespace name 'rel/x'", "InvalidOffer"},
    /* not a URI at all: libxml2's parser refuses it */
    {"<y:e xmlns:y=\"urn:a b\"/>", "'urn:a b' is not a valid URI", "MalformedDocument"},
};

/* Each refused with a 400 naming the namespace, every time it is sent,
 * and nothing is stored or booked; a quote of it is refused the same way. */
static void test_unsignable_namespace_refused(void)
{
    struct fixture fx;
    start(&fx, "refused.db");
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        char *doc = offer_with(bad_cases[i].extra);
        for (int attempt = 0; attempt < 2; attempt++) {
            struct http_reply r = post(&fx, "/agreements", doc);
            if (r.status != 400 || !r.body || !strstr(r.body, bad_cases[i].says))
                fprintf(stderr, "\n  case %zu: %ld %.400s\n", i, r.status, r.body);
            CU_ASSERT_EQUAL(r.status, 400);
            CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, bad_cases[i].says) : NULL);
            CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, bad_cases[i].code) : NULL);
            http_reply_free(&r);
        }
        struct http_reply q = post(&fx, "/negotiations?hold=PT1M", doc);
        CU_ASSERT_EQUAL(q.status, 400);
        CU_ASSERT_PTR_NOT_NULL(q.body ? strstr(q.body, bad_cases[i].says) : NULL);
        http_reply_free(&q);
        free(doc);
        CU_ASSERT_EQUAL(agreements(&fx), 0);
        CU_ASSERT_TRUE(alpha_free_now(&fx));
    }
    fixture_stop(&fx);
}

/* Absolute namespace names are taken, whatever their scheme: the agreement
 * is issued, carries the foreign element and its signature verifies. */
static void test_absolute_namespaces_agreed(void)
{
    static const char *const good[] = {
        "<y:e xmlns:y=\"urn:example:y\" y:a=\"1\">text</y:e>",
        "<y:e xmlns:y=\"http://example.org/ns#\"/>",
        "<e xmlns=\"http://example.org/default\"><f xmlns=\"\"/></e>",
    };
    struct fixture fx;
    start(&fx, "agreed.db");
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *doc = offer_with(good[i]);
        struct http_reply r = post(&fx, "/agreements", doc);
        if (r.status != 201)
            fprintf(stderr, "\n  case %zu: %ld %.400s\n", i, r.status, r.body);
        CU_ASSERT_EQUAL(r.status, 201);
        struct acc_dsig_verdict v = {0};
        if (r.body)
            ACC_ASSERT_OK(acc_dsig_verify(r.body, r.len, NULL, &v, NULL));
        CU_ASSERT_TRUE(v.valid);
        CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, ":e") : NULL);
        http_reply_free(&r);
        free(doc);
        /* Terminated, so that the next one finds alpha free. */
        char id[ACC_ID_LEN + 1];
        struct acc_list_filter f = {.state = "Observed", .limit = 1};
        struct acc_agreement_list l;
        struct acc_error e;
        ACC_ASSERT_OK(acc_service_list(fx.svc, &f, &l, &e));
        CU_ASSERT_EQUAL_FATAL(l.n, 1);
        snprintf(id, sizeof id, "%s", l.v[0].id);
        acc_agreement_list_release(&l);
        ACC_ASSERT_OK(svc_terminate_wait(fx.svc, id, &e));
    }
    fixture_stop(&fx);
}

/* acc_dsig_check: what signing would refuse, without signing. */
static void test_dsig_check(void)
{
    struct acc_error e;
    const char *ok = "<r xmlns:p=\"urn:x\"><p:a p:b=\"1\">t</p:a></r>";
    ACC_ASSERT_OK(acc_dsig_check(ok, strlen(ok), &e));
    const char *rel = "<r><p:a xmlns:p=\"relative-uri\"/></r>";
    CU_ASSERT_EQUAL(acc_dsig_check(rel, strlen(rel), &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "canonicalisation"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "libxml2: "));
    const char *broken = "<r><a></r>";
    CU_ASSERT_EQUAL(acc_dsig_check(broken, strlen(broken), &e), ACC_ERR_MALFORMED);
}

/* Submits the offer parsed from `parsed` with `document` as the one kept
 * (the commit of `quote` when not NULL) and waits: the result; *id the
 * agreement's. */
static acc_err submit_as(struct fixture *fx, const char *parsed, const char *document,
                         const char *quote, char id[ACC_ID_LEN + 1], struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    ACC_ASSERT_OK(acc_xml_parse_offer(parsed, strlen(parsed), &lim, &o, err));
    struct acc_submit s = {&o, document, strlen(document), NULL, false, quote, NULL};
    struct acc_submission out;
    acc_err rc = acc_service_submit(fx->svc, &s, &out, err);
    acc_offer_release(&o);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    snprintf(id, ACC_ID_LEN + 1, "%s", out.id);
    acc_nego_wait(out.job);
    rc = acc_nego_result(out.job, err);
    acc_nego_release(out.job);
    return rc;
}

static enum acc_state state_of(struct fixture *fx, const char *id, char **reason)
{
    struct acc_agreement a;
    struct acc_error e;
    ACC_ASSERT_OK(acc_service_get(fx->svc, id, false, &a, &e));
    enum acc_state st = a.state;
    *reason = a.reason;
    a.reason = NULL;
    acc_agreement_release(&a);
    return st;
}

/* Past the offer's check (a document kept other than the one parsed), the
 * commit's own check refuses: the reservations are released, the
 * agreement is Rejected saying why, and nothing stays booked. */
static void test_commit_checks_the_document(void)
{
    struct fixture fx;
    start(&fx, "commit.db");
    char *good = offer_with(""), *bad = offer_with("<y:e xmlns:y=\"relative-uri\"/>");
    char id[ACC_ID_LEN + 1], *reason = NULL;
    struct acc_error e;
    CU_ASSERT_EQUAL(submit_as(&fx, good, bad, NULL, id, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "nothing was committed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "canonicalisation"));
    CU_ASSERT_EQUAL(state_of(&fx, id, &reason), ACC_STATE_REJECTED);
    CU_ASSERT_PTR_NOT_NULL(reason ? strstr(reason, "nothing was committed") : NULL);
    free(reason);
    CU_ASSERT_TRUE(alpha_free_now(&fx));
    /* The good document is agreed (the check passes what can be signed). */
    CU_ASSERT_EQUAL(submit_as(&fx, good, good, NULL, id, &e), ACC_OK);
    CU_ASSERT_FALSE(alpha_free_now(&fx));
    ACC_ASSERT_OK(svc_terminate_wait(fx.svc, id, &e));
    free(good);
    free(bad);
    fixture_stop(&fx);
}

/* A held quote whose commit cannot be signed is not committed: it stays
 * Held with its reservations, and can be released. */
static void test_quote_commit_checks_the_document(void)
{
    struct fixture fx;
    start(&fx, "quote.db");
    char *good = offer_with(""), *bad = offer_with("<y:e xmlns:y=\"relative-uri\"/>");
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    struct acc_error e;
    ACC_ASSERT_OK(acc_xml_parse_offer(good, strlen(good), &lim, &o, &e));
    struct acc_nego *job;
    ACC_ASSERT_OK(
        acc_service_quote_submit(fx.svc, &o, good, strlen(good), 600, -1, NULL, &job, &e));
    acc_offer_release(&o);
    acc_nego_wait(job);
    ACC_ASSERT_OK(acc_nego_result(job, &e));
    char quote[ACC_ID_LEN + 1];
    snprintf(quote, sizeof quote, "%s", acc_nego_quote(job)->id);
    CU_ASSERT_EQUAL(acc_nego_quote(job)->state, ACC_QUOTE_HELD);
    acc_nego_release(job);

    char id[ACC_ID_LEN + 1], *reason = NULL;
    CU_ASSERT_EQUAL(submit_as(&fx, good, bad, quote, id, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "nothing was committed"));
    CU_ASSERT_EQUAL(state_of(&fx, id, &reason), ACC_STATE_REJECTED);
    free(reason);
    struct acc_quote q;
    ACC_ASSERT_OK(acc_service_quote_get(fx.svc, quote, &q, &e));
    CU_ASSERT_EQUAL(q.state, ACC_QUOTE_HELD);
    CU_ASSERT_STRING_EQUAL(q.agreement, "");
    acc_quote_release(&q);
    CU_ASSERT_FALSE(alpha_free_now(&fx)); /* still held */
    ACC_ASSERT_OK(acc_service_quote_release(fx.svc, quote, &q, &e));
    acc_quote_release(&q);
    CU_ASSERT_TRUE(alpha_free_now(&fx));
    free(good);
    free(bad);
    fixture_stop(&fx);
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

static const struct acc_test_case tests[] = {
    {"an offer that could not be signed is refused, nothing booked",
     test_unsignable_namespace_refused},
    {"absolute foreign namespaces are agreed and verify", test_absolute_namespaces_agreed},
    {"acc_dsig_check refuses what signing would", test_dsig_check},
    {"the commit checks the agreement's document", test_commit_checks_the_document},
    {"the commit of a quote checks the agreement's document",
     test_quote_commit_checks_the_document},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sign_commit", init, fini, tests},
    {NULL, NULL, NULL, NULL},
};
