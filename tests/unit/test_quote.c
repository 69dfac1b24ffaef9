/* SPDX-License-Identifier: Apache-2.0 */
/* test_quote.c - quotes through the service (no HTTP): counter-offers that
 * book nothing, holds visible at the adapter, two clients and the same
 * nodes, release, expiry, a restart during a hold, bounds. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "service.h"
#include "store.h"
#include "testutil.h"
#include "xml.h"
#include "xml_internal.h"

static const char ini[] = "[negotiation]\n"
                          "lead_time = PT0S\n"
                          "max_hold = PT10M\n"
                          "quote_options = 3\n"
                          "max_quotes = 5\n"
                          "max_quotes_per_user = 4\n"
                          "[site a]\nadapter = sim-batch\nnodes = 4\n";

static const char doc_fmt[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>q</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>%s</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
    "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
    "</wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name=\"x\" "
    "wsag:ServiceName=\"metajob\"><co:Component><co:Site>a</co:Site><co:Nodes>4</co:Nodes>"
    "</co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
    "</wsag:AgreementOffer>";

struct fx {
    struct acc_config cfg;
    struct acc_service *svc;
    char db[512];
};

static int open_ini(struct fx *f, const char *name, bool fresh, const char *text)
{
    struct acc_error err;
    /* fresh: a new database (on PostgreSQL acc_test_db makes it afresh);
     * else the one f was last opened on (a restart) */
    if (fresh && !acc_test_db(name, f->db, sizeof f->db))
        return -1;
    if (fresh && !acc_test_db_is_pg()) {
        char p[600];
        unlink(f->db);
        snprintf(p, sizeof p, "%s-wal", f->db);
        unlink(p);
    }
    if (acc_config_load_string(text, name, &f->cfg, &err) ||
        acc_config_set_db(&f->cfg, f->db, &err) || acc_service_open(&f->cfg, &f->svc, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int open_fx(struct fx *f, const char *name, bool fresh)
{
    return open_ini(f, name, fresh, ini);
}

static void close_fx(struct fx *f)
{
    acc_service_close(f->svc);
    acc_config_release(&f->cfg);
}

static acc_err quote_doc(struct fx *f, const char *doc, int64_t hold, int option,
                         struct acc_quote *q, struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    if (rc)
        return rc;
    struct acc_quote_request rq = {&o, doc, strlen(doc), hold, option, NULL};
    rc = acc_service_quote(f->svc, &rq, q, err);
    acc_offer_release(&o);
    return rc;
}

static acc_err quote(struct fx *f, const char *who, int64_t hold, int option, struct acc_quote *q,
                     struct acc_error *err)
{
    char doc[2048];
    snprintf(doc, sizeof doc, doc_fmt, who);
    return quote_doc(f, doc, hold, option, q, err);
}

/* Whether site a's 4 nodes are free for half an hour from t (at the adapter). */
static bool free_at(struct fx *f, acc_time t)
{
    struct acc_frames fr;
    acc_frames_init(&fr);
    acc_time from, until;
    struct acc_error err;
    bool ok = false;
    if (acc_service_preview(f->svc, "a", 4, 1800, t, t + 7200, &fr, &from, &until, &err) == 0)
        ok = fr.n > 0 && fr.v[0].start <= t && fr.v[0].end >= t + 1800;
    acc_frames_release(&fr);
    return ok;
}

static void test_advisory_books_nothing(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-adv", true), 0);
    struct acc_quote q;
    struct acc_error err;
    acc_time before = acc_now();
    ACC_ASSERT_OK(quote(&f, "alice", 0, -1, &q, &err));
    CU_ASSERT_EQUAL(q.state, ACC_QUOTE_ADVISORY);
    CU_ASSERT_EQUAL(q.n_options, 3);
    CU_ASSERT_TRUE(q.options[0].start >= before && q.options[0].start <= before + 2);
    CU_ASSERT_EQUAL(q.options[1].start, q.options[0].end); /* later starts, back to back */
    CU_ASSERT_STRING_EQUAL(q.comps[0].site, "a");
    CU_ASSERT_PTR_NULL(q.comps[0].reservation);
    CU_ASSERT_TRUE(free_at(&f, q.options[0].start + 1));
    /* Stored: read back the same. */
    struct acc_quote r;
    ACC_ASSERT_OK(acc_service_quote_get(f.svc, q.id, &r, &err));
    CU_ASSERT_EQUAL(r.state, ACC_QUOTE_ADVISORY);
    CU_ASSERT_EQUAL(r.n_options, 3);
    CU_ASSERT_EQUAL(r.options[2].start, q.options[2].start);
    CU_ASSERT_STRING_EQUAL(r.options[1].why, q.options[1].why);
    CU_ASSERT_EQUAL(r.offer_len, q.offer_len);
    acc_quote_release(&r);
    acc_quote_release(&q);
    close_fx(&f);
}

static void test_hold_two_clients_release(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-hold", true), 0);
    struct acc_quote a, b, adv;
    struct acc_error err;
    ACC_ASSERT_OK(quote(&f, "alice", 120, -1, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_QUOTE_HELD);
    CU_ASSERT_EQUAL(a.held_option, 0);
    CU_ASSERT_PTR_NOT_NULL(a.comps[0].reservation);
    CU_ASSERT_FALSE(free_at(&f, a.options[0].start + 1)); /* held at the adapter */
    /* Bob quotes the same nodes: his first option is after Alice's hold,
     * and so is his hold. */
    ACC_ASSERT_OK(quote(&f, "bob", 0, -1, &adv, &err));
    CU_ASSERT_TRUE(adv.options[0].start >= a.options[0].end);
    CU_ASSERT_TRUE(strstr(adv.options[0].why, "busy until") != NULL);
    ACC_ASSERT_OK(quote(&f, "bob", 120, -1, &b, &err));
    CU_ASSERT_EQUAL(b.state, ACC_QUOTE_HELD);
    CU_ASSERT_TRUE(b.options[0].start >= a.options[0].end);
    /* Alice gives hers back: free again, and the quote says Released. */
    struct acc_quote r;
    ACC_ASSERT_OK(acc_service_quote_release(f.svc, a.id, &r, &err));
    CU_ASSERT_EQUAL(r.state, ACC_QUOTE_RELEASED);
    acc_quote_release(&r);
    CU_ASSERT_TRUE(free_at(&f, a.options[0].start + 1));
    CU_ASSERT_EQUAL(acc_service_quote_release(f.svc, a.id, &r, &err), ACC_ERR_STATE);
    ACC_ASSERT_OK(acc_service_quote_get(f.svc, a.id, &r, &err));
    CU_ASSERT_EQUAL(r.state, ACC_QUOTE_RELEASED);
    acc_quote_release(&r);
    acc_quote_release(&a);
    acc_quote_release(&b);
    acc_quote_release(&adv);
    close_fx(&f);
}

/* A short hold expires (housekeeping runs every 5 s), across a restart. */
static void test_expiry_across_restart(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-exp", true), 0);
    struct acc_quote q, r;
    struct acc_error err;
    ACC_ASSERT_OK(quote(&f, "alice", 3, -1, &q, &err));
    CU_ASSERT_EQUAL_FATAL(q.state, ACC_QUOTE_HELD);
    acc_time t = q.options[0].start + 1;
    CU_ASSERT_FALSE(free_at(&f, t));
    close_fx(&f); /* a restart during the hold */
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-exp", false), 0);
    ACC_ASSERT_OK(acc_service_quote_get(f.svc, q.id, &r, &err));
    CU_ASSERT_EQUAL(r.state, ACC_QUOTE_HELD); /* recovery kept it */
    acc_quote_release(&r);
    CU_ASSERT_FALSE(free_at(&f, t));
    int waited = 0;
    for (; waited < 150; waited++) {
        ACC_ASSERT_OK(acc_service_quote_get(f.svc, q.id, &r, &err));
        bool done = r.state == ACC_QUOTE_EXPIRED;
        acc_quote_release(&r);
        if (done)
            break;
        usleep(100000);
    }
    CU_ASSERT_TRUE(waited < 150);
    /* Expired is written first (nothing can commit it from then on), the
     * cancels at the adapters come right after: within 5 s. */
    bool freed = false;
    for (int i = 0; i < 50 && !(freed = free_at(&f, t)); i++)
        usleep(100000);
    CU_ASSERT_TRUE(freed); /* everything released */
    acc_quote_release(&q);
    close_fx(&f);
}

/* The ini with [auth] naming alice, bob and carol: each a user of their own
 * (without [auth] every request is one user's). */
static int open_users(struct fx *f, const char *name, const char *text)
{
    char path[256], all[2048];
    snprintf(path, sizeof path, "%s/q-tokens", acc_test_tmpdir());
    FILE *t = fopen(path, "w");
    if (!t)
        return -1;
    fputs("alice alice-token-01234567\nbob bob-token-0123456789\ncarol carol-token-01234567\n", t);
    fclose(t);
    chmod(path, 0600);
    snprintf(all, sizeof all, "[auth]\ntokens = %s\n%s", path, text);
    return open_ini(f, name, true, all);
}

static void test_bounds(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_users(&f, "q-bounds", ini), 0);
    struct acc_quote q;
    struct acc_error err;
    CU_ASSERT_EQUAL(quote(&f, "alice", 601, -1, &q, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(quote(&f, "alice", 0, 1, &q, &err), ACC_ERR_INVALID); /* option w/o hold */
    CU_ASSERT_EQUAL(quote(&f, "alice", 60, 3, &q, &err), ACC_ERR_INVALID);
    for (int i = 0; i < 4; i++) {
        ACC_ASSERT_OK(quote(&f, "alice", 0, -1, &q, &err));
        acc_quote_release(&q);
    }
    acc_err rc = quote(&f, "alice", 0, -1, &q, &err);
    CU_ASSERT_STRING_EQUAL(acc_err_symbol(rc), "QuotaExceeded"); /* 403 */
    CU_ASSERT_TRUE(strstr(err.msg, "[quota] max_quotes") != NULL);
    ACC_ASSERT_OK(quote(&f, "bob", 0, -1, &q, &err));
    acc_quote_release(&q);
    CU_ASSERT_EQUAL(quote(&f, "carol", 0, -1, &q, &err), ACC_ERR_OVERLOADED);
    close_fx(&f);
}

/* One user's concurrent holds: the bound is checked and the quote stored in
 * one step, so exactly max_quotes_per_user of 40 are taken. */
static const char ini_many[] = "[negotiation]\n"
                               "lead_time = PT0S\n"
                               "max_quotes = 1000\n"
                               "max_quotes_per_user = 20\n"
                               "[site a]\nadapter = sim-batch\nnodes = 1000\n";

struct holder {
    struct fx *f;
    atomic_int *ok, *quota;
};

static void *hold_one(void *arg)
{
    struct holder *h = arg;
    struct acc_quote q;
    struct acc_error err;
    acc_err rc = quote(h->f, "alice", 60, -1, &q, &err);
    if (!rc) {
        atomic_fetch_add(h->ok, 1);
        acc_quote_release(&q);
    } else if (strcmp(acc_err_symbol(rc), "QuotaExceeded") == 0) {
        atomic_fetch_add(h->quota, 1);
    } else {
        fprintf(stderr, "\n  hold: %s: %s\n", acc_err_symbol(rc), err.msg);
    }
    return NULL;
}

static void test_concurrent_holds(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_ini(&f, "q-many", true, ini_many), 0);
    atomic_int ok = 0, quota = 0;
    struct holder h = {&f, &ok, &quota};
    pthread_t t[40];
    for (int i = 0; i < 40; i++)
        pthread_create(&t[i], NULL, hold_one, &h);
    for (int i = 0; i < 40; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&ok) != 20)
        fprintf(stderr, "\n  %d of 40 holds taken, %d refused\n", atomic_load(&ok),
                atomic_load(&quota));
    CU_ASSERT_EQUAL(atomic_load(&ok), 20);
    CU_ASSERT_EQUAL(atomic_load(&quota), 20);
    close_fx(&f);
}

static bool schema_valid(const struct acc_quote *q)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error err;
    bool ok = acc_xml_quote(q, &b, &err) == ACC_OK &&
              acc_xml_validate_mem(acc_buf_str(&b), b.len, &err) == ACC_OK;
    if (!ok)
        fprintf(stderr, "co:Quote not valid: %s\n%s\n", err.msg, acc_buf_str(&b));
    acc_buf_release(&b);
    return ok;
}

/* Commits a held quote through the service (as POST /agreements?quote=). */
static acc_err commit_doc(struct fx *f, const char *qid, const char *doc, char id[ACC_ID_LEN + 1],
                          struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    if (rc)
        return rc;
    struct acc_submit s = {&o, doc, strlen(doc), NULL, false, qid, NULL};
    struct acc_submission sub;
    rc = acc_service_submit(f->svc, &s, &sub, err);
    if (!rc) {
        memcpy(id, sub.id, ACC_ID_LEN + 1);
        acc_nego_wait(sub.job);
        rc = acc_nego_result(sub.job, err);
        acc_nego_release(sub.job);
    }
    acc_offer_release(&o);
    return rc;
}

static acc_err commit(struct fx *f, const char *qid, const char *who, char id[ACC_ID_LEN + 1],
                      struct acc_error *err)
{
    char doc[2048];
    snprintf(doc, sizeof doc, doc_fmt, who);
    return commit_doc(f, qid, doc, id, err);
}

/* Every state's document is schema-valid; a commit keeps the reservation
 * and negotiates nothing; only Held quotes of their initiator commit. */
static void test_commit_and_schema(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-commit", true), 0);
    struct acc_quote q, adv, r;
    struct acc_error err;
    char id[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(quote(&f, "alice", 0, -1, &adv, &err));
    CU_ASSERT_TRUE(schema_valid(&adv));
    CU_ASSERT_EQUAL(commit(&f, adv.id, "alice", id, &err), ACC_ERR_STATE); /* Advisory */
    ACC_ASSERT_OK(quote(&f, "alice", 120, 1, &q, &err));
    CU_ASSERT_EQUAL(q.held_option, 1);
    CU_ASSERT_TRUE(schema_valid(&q));
    CU_ASSERT_EQUAL(commit(&f, q.id, "bob", id, &err), ACC_ERR_NOT_FOUND); /* not his */
    ACC_ASSERT_OK(commit(&f, q.id, "alice", id, &err));
    char q_id[ACC_ID_LEN + 1];
    memcpy(q_id, q.id, sizeof q_id);
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL(a.rounds, 0);
    CU_ASSERT_EQUAL(a.start, q.options[1].start);
    CU_ASSERT_STRING_EQUAL(a.comps[0].reservation, q.comps[0].reservation);
    acc_agreement_release(&a);
    ACC_ASSERT_OK(acc_service_quote_get(f.svc, q.id, &r, &err));
    CU_ASSERT_EQUAL(r.state, ACC_QUOTE_COMMITTED);
    CU_ASSERT_STRING_EQUAL(r.agreement, id);
    CU_ASSERT_TRUE(schema_valid(&r));
    acc_quote_release(&r);
    CU_ASSERT_EQUAL(commit(&f, q.id, "alice", id, &err), ACC_ERR_STATE); /* twice */
    CU_ASSERT_FALSE(free_at(&f, q.options[1].start + 1));
    ACC_ASSERT_OK(acc_service_quote_release(f.svc, adv.id, &r, &err));
    CU_ASSERT_TRUE(schema_valid(&r)); /* Released */
    acc_quote_release(&r);
    acc_quote_release(&q);
    acc_quote_release(&adv);
    close_fx(&f);
    /* The journal: the held entry became the agreement's committed one;
     * none is left under the quote. */
    struct acc_store_options so = {f.db, false, 1, 0};
    struct acc_store *st;
    ACC_ASSERT_OK(acc_store_open(&so, &st, &err));
    struct acc_booking *b = NULL;
    size_t n = 0;
    ACC_ASSERT_OK(acc_store_journal_get(st, id, &b, &n, &err));
    CU_ASSERT_EQUAL(n, 1);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(b[i].state, ACC_BOOKING_COMMITTED);
    free(b);
    ACC_ASSERT_OK(acc_store_journal_get(st, q_id, &b, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
    free(b);
    acc_store_close(st);
}

/* A hold whose time is up is not committed, whether or not housekeeping
 * has released it yet, and right after a restart too. */
static void test_expired_hold_not_committed(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-late", true), 0);
    struct acc_quote q;
    struct acc_error err;
    char id[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(quote(&f, "alice", 1, -1, &q, &err));
    CU_ASSERT_EQUAL(q.state, ACC_QUOTE_HELD);
    usleep(1300000);
    CU_ASSERT_EQUAL(commit(&f, q.id, "alice", id, &err), ACC_ERR_STATE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "expired"));
    acc_quote_release(&q);
    ACC_ASSERT_OK(quote(&f, "alice", 2, -1, &q, &err));
    close_fx(&f);
    usleep(2300000); /* the hold ends while accordd is down */
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "q-late", false), 0);
    CU_ASSERT_EQUAL(commit(&f, q.id, "alice", id, &err), ACC_ERR_STATE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "expired"));
    acc_quote_release(&q);
    close_fx(&f);
}

/* Two sites that fit a component without a site. */
static const char ini_two[] = "[negotiation]\n"
                              "lead_time = PT0S\n"
                              "quote_options = 3\n"
                              "[site a]\nadapter = sim-batch\nnodes = 4\n"
                              "[site b]\nadapter = sim-batch\nnodes = 4\n";

static const char doc_free[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>q</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>alice</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
    "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
    "</wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name=\"x\" "
    "wsag:ServiceName=\"metajob\"><co:Component><co:Nodes>3</co:Nodes>"
    "</co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
    "</wsag:AgreementOffer>";

/* Whether `nodes` of `site` are free for half an hour from t. */
static bool free_on(struct fx *f, const char *site, int64_t nodes, acc_time t)
{
    struct acc_frames fr;
    acc_frames_init(&fr);
    acc_time from, until;
    struct acc_error err;
    bool ok = false;
    if (acc_service_preview(f->svc, site, nodes, 1800, t, t + 7200, &fr, &from, &until, &err) == 0)
        ok = fr.n > 0 && fr.v[0].start <= t && fr.v[0].end >= t + 1800;
    acc_frames_release(&fr);
    return ok;
}

/* A component without a site on two sites that fit: an option on each;
 * holding the second books at its site, and the commit keeps that site. */
static void test_site_choices(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_ini(&f, "q-sites", true, ini_two), 0);
    struct acc_quote q, h, r;
    struct acc_error err;
    ACC_ASSERT_OK(quote_doc(&f, doc_free, 0, -1, &q, &err));
    CU_ASSERT_EQUAL_FATAL(q.n_options, 3);
    CU_ASSERT_EQUAL_FATAL(q.options[0].n_comps, 1);
    CU_ASSERT_EQUAL_FATAL(q.options[1].n_comps, 1);
    CU_ASSERT_STRING_EQUAL(q.options[0].comps[0].site, "a");
    CU_ASSERT_STRING_EQUAL(q.options[1].comps[0].site, "b");
    CU_ASSERT_EQUAL(q.options[1].comps[0].nodes, 3);
    CU_ASSERT_EQUAL(q.options[1].start, q.options[0].start); /* both free now */
    CU_ASSERT_PTR_NOT_NULL(strstr(q.options[1].why, "placement 2 of 2 by earliest: x 3 on b"));
    CU_ASSERT_PTR_NOT_NULL(strstr(q.options[0].why, "(the planner's choice)"));
    /* option 2: a later start of the chosen placement */
    CU_ASSERT_STRING_EQUAL(q.options[2].comps[0].site, "a");
    CU_ASSERT_EQUAL(q.options[2].start, q.options[0].end);
    CU_ASSERT_TRUE(schema_valid(&q));
    /* Stored: each option's sites read back. */
    ACC_ASSERT_OK(acc_service_quote_get(f.svc, q.id, &r, &err));
    CU_ASSERT_EQUAL_FATAL(r.options[1].n_comps, 1);
    CU_ASSERT_STRING_EQUAL(r.options[1].comps[0].site, "b");
    CU_ASSERT_STRING_EQUAL(r.options[1].comps[0].name, "x");
    CU_ASSERT_STRING_EQUAL(r.options[0].comps[0].site, "a");
    acc_quote_release(&r);
    ACC_ASSERT_OK(acc_service_quote_release(f.svc, q.id, &r, &err));
    acc_quote_release(&r);
    acc_quote_release(&q);

    ACC_ASSERT_OK(quote_doc(&f, doc_free, 120, 1, &h, &err));
    CU_ASSERT_EQUAL(h.state, ACC_QUOTE_HELD);
    CU_ASSERT_EQUAL(h.held_option, 1);
    CU_ASSERT_EQUAL_FATAL(h.n_comps, 1);
    CU_ASSERT_STRING_EQUAL(h.comps[0].site, "b");
    CU_ASSERT_PTR_NOT_NULL(h.comps[0].reservation);
    acc_time t = h.options[1].start + 1;
    CU_ASSERT_FALSE(free_on(&f, "b", 2, t)); /* held at b's adapter */
    CU_ASSERT_TRUE(free_on(&f, "a", 4, t));  /* nothing at a */
    CU_ASSERT_TRUE(schema_valid(&h));
    char id[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(commit_doc(&f, h.id, doc_free, id, &err));
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL(a.rounds, 0);
    CU_ASSERT_EQUAL_FATAL(a.n_comps, 1);
    CU_ASSERT_STRING_EQUAL(a.comps[0].site, "b");
    CU_ASSERT_STRING_EQUAL(a.comps[0].reservation, h.comps[0].reservation);
    acc_agreement_release(&a);
    CU_ASSERT_FALSE(free_on(&f, "b", 2, t));
    CU_ASSERT_TRUE(free_on(&f, "a", 4, t));
    acc_quote_release(&h);
    close_fx(&f);
}

/* A fixed offer: later starts of its one placement, no own sites. */
static void test_fixed_later_starts(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_ini(&f, "q-fixed", true, ini_two), 0);
    struct acc_quote q;
    struct acc_error err;
    ACC_ASSERT_OK(quote(&f, "alice", 0, -1, &q, &err));
    CU_ASSERT_EQUAL_FATAL(q.n_options, 3);
    for (size_t i = 0; i < q.n_options; i++) {
        CU_ASSERT_EQUAL(q.options[i].n_comps, 0);
        CU_ASSERT_PTR_NULL(strstr(q.options[i].why, "placement"));
    }
    CU_ASSERT_EQUAL(q.options[1].start, q.options[0].end);
    CU_ASSERT_EQUAL(q.options[2].start, q.options[1].end);
    CU_ASSERT_STRING_EQUAL(q.comps[0].site, "a");
    acc_quote_release(&q);
    close_fx(&f);
}

static int setup(void)
{
    struct acc_error err;
    return acc_xml_init(&err) ? 1 : 0;
}

static int teardown(void)
{
    acc_xml_cleanup();
    return 0;
}

static const struct acc_test_case tests[] = {
    {"advisory quote books nothing", test_advisory_books_nothing},
    {"hold, two clients, release", test_hold_two_clients_release},
    {"expiry across a restart", test_expiry_across_restart},
    {"bounds", test_bounds},
    {"40 concurrent holds of one user", test_concurrent_holds},
    {"an expired hold is not committed", test_expired_hold_not_committed},
    {"commit, schema", test_commit_and_schema},
    {"site choices", test_site_choices},
    {"fixed offer: later starts", test_fixed_later_starts},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"quote", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
