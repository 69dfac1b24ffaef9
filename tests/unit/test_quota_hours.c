/* SPDX-License-Identifier: Apache-2.0 */
/* test_quota_hours.c - what one user, or one client address, may hold
 * through the service (no HTTP): node-hours per site and Mbit-hours per
 * link over time ([quota] max_node_hours, max_mbit_hours; the pure rule,
 * then offers, concurrent offers, a placement the planner chooses, a hold
 * and a change), the shares of one address without [auth]
 * (max_agreements_per_address) and the Rejected agreements kept per user
 * ([database] max_rejected_per_user). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "quota.h"
#include "service.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

#include "../../server/service/internal.h"

static const char ini_fmt[] = "%s"
                              "[negotiation]\nlead_time = PT0S\n"
                              "[quota]\nmax_node_hours = 100\nmax_mbit_hours = 1000\n%s"
                              "[site a]\nadapter = sim-batch\nnodes = 64\n"
                              "[site b]\nadapter = sim-batch\nnodes = 64\n"
                              "[network wan]\nadapter = sim-network\n"
                              "[link a_b]\nsites = a b\ncapacity = 10000\nnetwork = wan\n";

struct fx {
    struct acc_config cfg;
    struct acc_service *svc;
};

static const char *tokens_file(void)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/hours-tokens", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("alice alice-token-0123456789\nbob bob-token-0123456789ab\n", f);
        fclose(f);
    }
    chmod(path, 0600);
    return path;
}

/* The service on ini_fmt, with [auth] when auth, extra keys after [quota]
 * (other sections may follow them), on a new database. */
static int open_fx(struct fx *f, const char *name, bool auth, const char *extra)
{
    char head[512] = "", text[2048], db[512], p[600];
    if (auth)
        snprintf(head, sizeof head, "[auth]\ntokens = %s\n", tokens_file());
    snprintf(text, sizeof text, ini_fmt, head, extra ? extra : "");
    /* on PostgreSQL (ACCORD_TEST_DB_URL) acc_test_db makes it afresh */
    if (!acc_test_db(name, db, sizeof db))
        return -1;
    if (!acc_test_db_is_pg()) {
        unlink(db);
        snprintf(p, sizeof p, "%s-wal", db);
        unlink(p);
    }
    struct acc_error err;
    if (acc_config_load_string(text, name, &f->cfg, &err) || acc_config_set_db(&f->cfg, db, &err) ||
        acc_service_open(&f->cfg, &f->svc, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void close_fx(struct fx *f)
{
    acc_service_close(f->svc);
    acc_config_release(&f->cfg);
}

/* who's offer of `nodes` on site (NULL: Accord chooses), a second
 * component of one node on b with a link of bw Mbit/s to it when bw, for
 * duration, within `within` seconds of now when not 0 (a deadline). */
static char *offer(const char *who, const char *site, int nodes, int bw, const char *duration,
                   int64_t within)
{
    static _Thread_local char buf[4096];
    char s[128] = "", link[768] = "", sched[256] = "";
    if (site)
        snprintf(s, sizeof s, "<co:Site>%s</co:Site>", site);
    if (within) {
        char t[ACC_TIME_STRLEN];
        acc_time_format(acc_now() + within, t);
        snprintf(sched, sizeof sched, "<co:Deadline>%s</co:Deadline>", t);
    }
    if (bw)
        snprintf(link, sizeof link,
                 "<wsag:ServiceDescriptionTerm wsag:Name=\"y\" wsag:ServiceName=\"metajob\">"
                 "<co:Component><co:Site>b</co:Site><co:Nodes>1</co:Nodes></co:Component>"
                 "</wsag:ServiceDescriptionTerm>"
                 "<wsag:ServiceDescriptionTerm wsag:Name=\"xy\" wsag:ServiceName=\"metajob\">"
                 "<co:Link><co:Between>x</co:Between><co:And>y</co:And>"
                 "<co:Bandwidth unit=\"Mbit/s\">%d</co:Bandwidth></co:Link>"
                 "</wsag:ServiceDescriptionTerm>",
                 bw);
    snprintf(buf, sizeof buf,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>h</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>%s</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
             "wsag:ServiceName=\"metajob\"><co:Schedule>%s<co:Duration>%s</co:Duration>"
             "</co:Schedule></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\">"
             "<co:Component>%s<co:Nodes>%d</co:Nodes></co:Component>"
             "</wsag:ServiceDescriptionTerm>%s</wsag:All></wsag:Terms></wsag:AgreementOffer>",
             who, sched, duration, s, nodes, link);
    return buf;
}

/* Submits doc from address (NULL: unknown) with key (NULL: none) and waits:
 * the submission's error or the job's result; *id the agreement stored. */
static acc_err run(struct fx *f, const char *doc, const char *address, const char *key,
                   char id[ACC_ID_LEN + 1], struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    id[0] = '\0';
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    if (rc)
        return rc;
    struct acc_submit s = {.offer = &o,
                           .document = doc,
                           .len = strlen(doc),
                           .idempotency_key = key,
                           .address = address};
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

static void expect_quota(acc_err rc, const struct acc_error *err, const char *key,
                         const char *where)
{
    bool ok = rc == ACC_ERR_QUOTA && strstr(err->msg, key) && (!where || strstr(err->msg, where));
    if (!ok)
        fprintf(stderr, "\n  got %s: %s (want QuotaExceeded naming %s and %s)\n",
                acc_err_symbol(rc), err->msg, key, where ? where : "-");
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_EQUAL(acc_err_http_status(rc), 403);
}

/* Agreements in state (NULL: any) of initiator (NULL: anyone's). */
static size_t count(struct fx *f, const char *state, const char *initiator)
{
    struct acc_list_filter flt = {.state = state, .initiator = initiator, .limit = 1000};
    struct acc_agreement_list l;
    struct acc_error err;
    if (acc_service_list(f->svc, &flt, &l, &err))
        return (size_t)-1;
    size_t n = l.total;
    acc_agreement_list_release(&l);
    return n;
}

/* ------------------------------------------------------------ the rule */

static void test_rule(void)
{
    struct acc_quota q = {.duration = 7 * 86400,
                          .advance = 10 * 86400,
                          .node_hours = 100,
                          .mbit_hours = ACC_QUOTA_UNLIMITED};
    struct svc_quota_who w = {"alice", NULL, q, "quota alice"};
    acc_time now = 1000000;
    /* From now on, no further than max_advance and max_duration ahead. */
    CU_ASSERT_EQUAL(svc_quota_charge(&w, 4, now - 3600, now + 3600, now), 4 * 3600);
    CU_ASSERT_EQUAL(svc_quota_charge(&w, 4, now - 7200, now - 3600, now), 0);
    CU_ASSERT_EQUAL(svc_quota_charge(&w, 1, now, now + 30 * 86400, now), 17 * 86400);
    CU_ASSERT_EQUAL(svc_quota_charge(&w, INT64_MAX / 2, now, now + 3600, now), INT64_MAX);

    struct acc_error err;
    struct svc_quota_use u = {ACC_RES_NODES, "caesar", 60 * 3600, 0, 40 * 3600};
    ACC_ASSERT_OK(svc_quota_hours(&w, &u, 1, &err)); /* 100: at the limit */
    u.asked += 1;
    CU_ASSERT_EQUAL(svc_quota_hours(&w, &u, 1, &err), ACC_ERR_QUOTA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[quota alice] max_node_hours = 100"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site caesar"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "alice would hold 101 node-hours"));
    /* A change keeps or shrinks what is over a limit lowered since. */
    u.held = 200 * 3600;
    u.was = 40 * 3600;
    u.asked = 40 * 3600;
    ACC_ASSERT_OK(svc_quota_hours(&w, &u, 1, &err));
    u.asked = 20 * 3600;
    ACC_ASSERT_OK(svc_quota_hours(&w, &u, 1, &err));
    u.asked = 41 * 3600;
    CU_ASSERT_EQUAL(svc_quota_hours(&w, &u, 1, &err), ACC_ERR_QUOTA);
    /* Links: max_mbit_hours, here unlimited. */
    struct svc_quota_use l = {ACC_RES_BANDWIDTH, "a_b", INT64_MAX, 0, INT64_MAX};
    ACC_ASSERT_OK(svc_quota_hours(&w, &l, 1, &err));
    w.q.mbit_hours = 5;
    CU_ASSERT_EQUAL(svc_quota_hours(&w, &l, 1, &err), ACC_ERR_QUOTA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_mbit_hours = 5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "link a_b"));
}

static void test_config(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_embedded(&c, &err));
    CU_ASSERT_EQUAL(c.quota.node_hours, 100000);
    CU_ASSERT_EQUAL(c.quota.mbit_hours, 10000000);
    CU_ASSERT_EQUAL(c.quota.agreements_per_address, 64);
    CU_ASSERT_EQUAL(c.quota.quotes_per_address, 5);
    CU_ASSERT_EQUAL(c.max_rejected, 1000);
    acc_config_release(&c);
    /* A quarter of a larger shared limit; unlimited stays unlimited. */
    ACC_ASSERT_OK(acc_config_load_string("[quota]\nmax_agreements = 1000\nmax_quotes = unlimited\n"
                                         "max_node_hours = unlimited\n"
                                         "[database]\nmax_rejected_per_user = 7\n"
                                         "[site a]\nadapter = sim-batch\nnodes = 1\n",
                                         "t", &c, &err));
    CU_ASSERT_EQUAL(c.quota.agreements_per_address, 250);
    CU_ASSERT_EQUAL(c.quota.quotes_per_address, ACC_QUOTA_UNLIMITED);
    CU_ASSERT_EQUAL(c.quota.node_hours, ACC_QUOTA_UNLIMITED);
    CU_ASSERT_EQUAL(c.max_rejected, 7);
    acc_config_release(&c);
    /* The shares of an address are [quota]'s alone. */
    char text[1024];
    snprintf(text, sizeof text,
             "[auth]\ntokens = %s\n[quota alice]\nmax_agreements_per_address = 3\n"
             "[site a]\nadapter = sim-batch\nnodes = 1\n",
             tokens_file());
    CU_ASSERT_EQUAL(acc_config_load_string(text, "t", &c, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max_agreements_per_address"));
}

/* ------------------------------------------------------- node-hours */

/* One user over max_node_hours on a site: 403 naming the key and the site,
 * nothing stored; another user and another site are not concerned. */
static void test_node_hours(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "hours-nodes", true, NULL), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 40, 0, "PT2H", 0), NULL, NULL, id, &err));
    expect_quota(run(&f, offer("alice", "a", 40, 0, "PT1H", 0), NULL, NULL, id, &err), &err,
                 "[quota] max_node_hours = 100", "site a");
    CU_ASSERT_STRING_EQUAL(id, ""); /* nothing stored */
    CU_ASSERT_EQUAL(count(&f, NULL, "alice"), 1);
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 20, 0, "PT1H", 0), NULL, NULL, id, &err));
    ACC_ASSERT_OK(run(&f, offer("alice", "b", 40, 0, "PT2H", 0), NULL, NULL, id, &err));
    ACC_ASSERT_OK(run(&f, offer("bob", "a", 40, 0, "PT2H", 0), NULL, NULL, id, &err));
    /* A site the planner chooses is admitted once chosen: Rejected, with
     * nothing booked. */
    acc_err rc = run(&f, offer("alice", NULL, 30, 0, "PT1H", 0), NULL, NULL, id, &err);
    expect_quota(rc, &err, "max_node_hours", NULL);
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_STATE_REJECTED);
    CU_ASSERT_STRING_EQUAL(a.fault_code ? a.fault_code : "", "QuotaExceeded");
    CU_ASSERT_EQUAL(a.start, 0);
    acc_agreement_release(&a);
    close_fx(&f);
}

struct racer {
    struct fx *f;
    atomic_int *ok, *refused;
};

static void *race(void *arg)
{
    struct racer *x = arg;
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    acc_err rc = run(x->f, offer("alice", "a", 10, 0, "PT1H", 0), NULL, NULL, id, &err);
    if (rc == ACC_OK)
        atomic_fetch_add(x->ok, 1);
    else if (rc == ACC_ERR_QUOTA)
        atomic_fetch_add(x->refused, 1);
    return NULL;
}

/* Concurrent offers of one user never get past max_node_hours. */
static void test_node_hours_race(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "hours-race", true, NULL), 0);
    atomic_int ok = 0, refused = 0;
    struct racer x = {&f, &ok, &refused};
    pthread_t t[16];
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, race, &x);
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&ok), 10); /* 10 x 10 node-hours */
    CU_ASSERT_EQUAL(atomic_load(&refused), 6);
    CU_ASSERT_EQUAL(count(&f, "Observed", "alice"), 10);
    close_fx(&f);
}

/* A link's Mbit-hours, a hold, and a change that would grow past the
 * limit (one that shrinks passes). */
static void test_link_hold_change(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "hours-more", true, NULL), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 1, 600, "PT1H", 0), NULL, NULL, id, &err));
    expect_quota(run(&f, offer("alice", "a", 1, 600, "PT1H", 0), NULL, NULL, id, &err), &err,
                 "[quota] max_mbit_hours = 1000", "link a_b");

    /* A hold of 60 node-hours on a: the next 50 are over. */
    const char *doc = offer("alice", "a", 30, 0, "PT2H", 0);
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    ACC_ASSERT_OK(acc_xml_parse_offer(doc, strlen(doc), &lim, &o, &err));
    struct acc_quote_request qr = {&o, doc, strlen(doc), 300, -1, NULL};
    struct acc_quote q;
    ACC_ASSERT_OK(acc_service_quote(f.svc, &qr, &q, &err));
    CU_ASSERT_EQUAL(q.state, ACC_QUOTE_HELD);
    acc_offer_release(&o);
    expect_quota(run(&f, offer("alice", "a", 25, 0, "PT2H", 0), NULL, NULL, id, &err), &err,
                 "max_node_hours", "site a");
    /* Given back: the hold no longer counts. */
    struct acc_quote rel;
    ACC_ASSERT_OK(acc_service_quote_release(f.svc, q.id, &rel, &err));
    acc_quote_release(&rel);
    acc_quote_release(&q);
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 25, 0, "PT2H", 0), NULL, NULL, id, &err));

    /* 1 + 50 node-hours on a: a change to 5 hours (125) is over, one to
     * an hour (25) is not. */
    struct acc_agreement cur, out;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &cur, &err));
    struct acc_modification m = {.end = cur.start + 5 * 3600};
    expect_quota(acc_service_modify(f.svc, id, &m, &out, &err), &err, "max_node_hours", "site a");
    m.end = cur.start + 3600;
    ACC_ASSERT_OK(acc_service_modify(f.svc, id, &m, &out, &err));
    acc_agreement_release(&out);
    acc_agreement_release(&cur);
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 20, 0, "PT2H", 0), NULL, NULL, id, &err));
    close_fx(&f);
}

/* ------------------------------------------------- without [auth] */

/* One address takes at most its share of the one user's agreements and
 * node-hours; another address is not concerned. */
static void test_per_address(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(
        open_fx(&f, "hours-address", false, "max_agreements = 8\nmax_agreements_per_address = 2\n"),
        0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    for (int i = 0; i < 2; i++)
        ACC_ASSERT_OK(run(&f, offer("x", "a", 1, 0, "PT1H", 0), "192.0.2.7", NULL, id, &err));
    expect_quota(run(&f, offer("x", "a", 1, 0, "PT1H", 0), "192.0.2.7", NULL, id, &err), &err,
                 "[quota] max_agreements_per_address = 2", "192.0.2.7");
    CU_ASSERT_STRING_EQUAL(id, "");
    ACC_ASSERT_OK(run(&f, offer("x", "a", 1, 0, "PT1H", 0), "192.0.2.8", NULL, id, &err));
    /* node-hours per address: 100 more on a is over for .8, not for .9 */
    expect_quota(run(&f, offer("x", "a", 50, 0, "PT2H", 0), "192.0.2.8", NULL, id, &err), &err,
                 "max_node_hours", "address 192.0.2.8");
    ACC_ASSERT_OK(run(&f, offer("x", "a", 50, 0, "PT2H", 0), "192.0.2.9", NULL, id, &err));
    CU_ASSERT_EQUAL(count(&f, "Observed", NULL), 4);
    /* What is kept per address is bounded: 300 more addresses leave at
     * most 256 idle records of node-hours behind (quota_usage.c). */
    for (int i = 0; i < 300; i++) {
        char from[32];
        snprintf(from, sizeof from, "198.51.%d.%d", 100 + i / 200, 1 + i % 200);
        ACC_ASSERT_OK(run(&f, offer("x", "a", 1, 0, "PT1M", 0), from, NULL, id, &err));
        struct acc_agreement a;
        struct acc_nego *wait = NULL;
        ACC_ASSERT_OK(acc_service_terminate(f.svc, id, &a, &wait, &err));
        acc_nego_release(wait);
        acc_agreement_release(&a);
    }
    CU_ASSERT_TRUE(svc_usage_kept(&f.svc->usage) <= 257);
    close_fx(&f);
}

/* -------------------------------------------------- Rejected kept */

/* Of a user's Rejected agreements the newest max_rejected_per_user stay
 * (those kept for an Idempotency-Key, those that found no slot); another
 * user's are not touched. */
static void test_rejected_kept(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(
        open_fx(&f, "hours-rejected", true,
                "max_agreements = 1\n[quota bob]\nmax_agreements = 5\nmax_node_hours = unlimited\n"
                "[database]\nmax_rejected_per_user = 3\n"),
        0);
    char id[ACC_ID_LEN + 1], first[ACC_ID_LEN + 1] = "", last[ACC_ID_LEN + 1] = "";
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", "a", 1, 0, "PT1H", 0), NULL, NULL, id, &err));
    /* Keyed offers over max_agreements are kept Rejected. */
    for (int i = 0; i < 8; i++) {
        char key[32];
        snprintf(key, sizeof key, "k%d", i);
        expect_quota(run(&f, offer("alice", "a", 1, 0, "PT1H", 0), NULL, key, id, &err), &err,
                     "max_agreements", NULL);
        if (i == 0)
            memcpy(first, id, sizeof first);
        memcpy(last, id, sizeof last);
    }
    CU_ASSERT_EQUAL(count(&f, "Rejected", "alice"), 3);
    struct acc_agreement a;
    CU_ASSERT_EQUAL(acc_service_get(f.svc, first, false, &a, &err), ACC_ERR_NOT_FOUND);
    ACC_ASSERT_OK(acc_service_get(f.svc, last, false, &a, &err));
    acc_agreement_release(&a);
    /* Negotiations that find no slot (b is full for the hour) are Rejected
     * too: bob keeps 3, alice still 3. */
    ACC_ASSERT_OK(run(&f, offer("bob", "b", 64, 0, "PT1H", 0), NULL, NULL, id, &err));
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(run(&f, offer("bob", "b", 64, 0, "PT1H", 5400), NULL, NULL, id, &err),
                        ACC_ERR_NO_SLOT);
    CU_ASSERT_EQUAL(count(&f, "Rejected", "bob"), 3);
    CU_ASSERT_EQUAL(count(&f, "Rejected", "alice"), 3);
    CU_ASSERT_EQUAL(count(&f, "Observed", NULL), 2);
    close_fx(&f);
}

static const struct acc_test_case cases[] = {
    {"the rule", test_rule},
    {"config", test_config},
    {"node-hours", test_node_hours},
    {"node-hours, concurrent offers", test_node_hours_race},
    {"a link, a hold, a change", test_link_hold_change},
    {"per client address", test_per_address},
    {"Rejected kept per user", test_rejected_kept},
    {NULL, NULL},
};

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

const struct acc_test_suite acc_test_suites[] = {
    {"quota hours", setup, teardown, cases},
    {NULL, NULL, NULL, NULL},
};
