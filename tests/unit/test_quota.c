/* SPDX-License-Identifier: Apache-2.0 */
/* test_quota.c - per-user quotas through the service (no HTTP): the [quota]
 * keys, the limits of one agreement (nodes, bandwidth, duration, how far
 * ahead it starts), open agreements counted race-free under concurrent
 * submissions, a modification that would grow past a quota, users of
 * [auth] with quotas of their own, and the defaults against the issue's
 * offer and the documented examples. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fixture.h"
#include "quota.h"
#include "service.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

static const char ini_fmt[] = "%s"
                              "[negotiation]\nlead_time = PT0S\n"
                              "[quota]\nmax_nodes = 8\nmax_bandwidth = 1000\n"
                              "max_duration = PT2H\nmax_advance = P2D\nmax_agreements = 3\n"
                              "%s"
                              "[site a]\nadapter = sim-batch\nnodes = 64\n"
                              "[site b]\nadapter = sim-batch\nnodes = 64\n"
                              "[network wan]\nadapter = sim-network\n"
                              "[link a_b]\nsites = a b\ncapacity = 10000\nnetwork = wan\n";

struct fx {
    struct acc_config cfg;
    struct acc_service *svc;
    char db[256];
};

/* A tokens file naming alice and bob; its path. */
static const char *tokens_file(void)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/quota-tokens", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("alice alice-token-0123456789\nbob bob-token-0123456789ab\n", f);
        fclose(f);
    }
    chmod(path, 0600);
    return path;
}

/* Opens the service on ini_fmt, with [auth] when auth, and extra keys
 * after [quota]; fresh: a new database. */
static int open_fx(struct fx *f, const char *name, bool fresh, bool auth, const char *extra)
{
    char head[512] = "", text[2048];
    if (auth)
        snprintf(head, sizeof head, "[auth]\ntokens = %s\n", tokens_file());
    snprintf(text, sizeof text, ini_fmt, head, extra ? extra : "");
    snprintf(f->db, sizeof f->db, "%s/%s.db", acc_test_tmpdir(), name);
    if (fresh) {
        char p[300];
        unlink(f->db);
        snprintf(p, sizeof p, "%s-wal", f->db);
        unlink(p);
    }
    struct acc_error err;
    if (acc_config_load_string(text, name, &f->cfg, &err) ||
        acc_config_set_db(&f->cfg, f->db, &err) || acc_service_open(&f->cfg, &f->svc, &err)) {
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

/* An offer of `who`: na nodes on a, nb on b (0: no such component), a link
 * of bw Mbit/s between them (0: none), the duration, and the earliest start
 * `ahead` seconds from now (0: none). */
static char *offer(const char *who, int na, int nb, int bw, const char *duration, int64_t ahead)
{
    static _Thread_local char buf[4096];
    char sched[256] = "", comps[1024] = "", link[512] = "";
    if (ahead) {
        char t[ACC_TIME_STRLEN];
        acc_time_format(acc_now() + ahead, t);
        snprintf(sched, sizeof sched, "<co:EarliestStart>%s</co:EarliestStart>", t);
    }
    static const char comp[] =
        "<wsag:ServiceDescriptionTerm wsag:Name=\"%s\" wsag:ServiceName=\"metajob\">"
        "<co:Component><co:Site>%s</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>";
    size_t n = 0;
    if (na)
        n += (size_t)snprintf(comps + n, sizeof comps - n, comp, "x", "a", na);
    if (nb)
        snprintf(comps + n, sizeof comps - n, comp, "y", "b", nb);
    if (bw)
        snprintf(link, sizeof link,
                 "<wsag:ServiceDescriptionTerm wsag:Name=\"xy\" wsag:ServiceName=\"metajob\">"
                 "<co:Link><co:Between>x</co:Between><co:And>y</co:And>"
                 "<co:Bandwidth unit=\"Mbit/s\">%d</co:Bandwidth></co:Link>"
                 "</wsag:ServiceDescriptionTerm>",
                 bw);
    snprintf(buf, sizeof buf,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>q</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>%s</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
             "wsag:ServiceName=\"metajob\"><co:Schedule>%s<co:Duration>%s</co:Duration>"
             "</co:Schedule></wsag:ServiceDescriptionTerm>%s%s</wsag:All></wsag:Terms>"
             "</wsag:AgreementOffer>",
             who, sched, duration, comps, link);
    return buf;
}

/* Submits a document (with an Idempotency-Key if given) and waits for its
 * negotiation: the submission's error or the job's result; *id the
 * agreement stored, if any. */
static acc_err run(struct fx *f, const char *doc, const char *key, char id[ACC_ID_LEN + 1],
                   struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    id[0] = '\0';
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    if (rc)
        return rc;
    struct acc_submit s = {&o, doc, strlen(doc), key, false, NULL, NULL};
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

/* A refusal for a quota: 403 QuotaExceeded whose message names the key. */
static void expect_quota(acc_err rc, const struct acc_error *err, const char *key)
{
    if (strcmp(acc_err_symbol(rc), "QuotaExceeded") != 0 || !strstr(err->msg, key))
        fprintf(stderr, "\n  got %s: %s (want QuotaExceeded naming %s)\n", acc_err_symbol(rc),
                err->msg, key);
    CU_ASSERT_STRING_EQUAL(acc_err_symbol(rc), "QuotaExceeded");
    CU_ASSERT_EQUAL(acc_err_http_status(rc), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->msg, key));
}

/* ---------------------------------------------------------------- config */

static void test_config(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_embedded(&c, &err));
    const char *sec = NULL;
    const struct acc_quota *q = acc_config_quota(&c, NULL, &sec);
    CU_ASSERT_EQUAL(q->nodes, 192);
    CU_ASSERT_EQUAL(q->bandwidth, 20000);
    CU_ASSERT_EQUAL(q->duration, 7 * 86400);
    CU_ASSERT_EQUAL(q->advance, 1826 * 86400);
    CU_ASSERT_EQUAL(q->agreements, 256);
    CU_ASSERT_EQUAL(q->quotes, 20);
    CU_ASSERT_STRING_EQUAL(sec, "quota");
    acc_config_release(&c);

    char text[2048], head[512];
    snprintf(head, sizeof head, "[auth]\ntokens = %s\n", tokens_file());
    snprintf(text, sizeof text, ini_fmt, head,
             "max_quotes = 5\n[quota alice]\nmax_nodes = 20\nmax_agreements = unlimited\n");
    ACC_ASSERT_OK(acc_config_load_string(text, "t", &c, &err));
    q = acc_config_quota(&c, "alice", &sec);
    CU_ASSERT_EQUAL(q->nodes, 20);
    CU_ASSERT_EQUAL(q->duration, 7200); /* from [quota] */
    CU_ASSERT_EQUAL(q->agreements, ACC_QUOTA_UNLIMITED);
    CU_ASSERT_EQUAL(q->quotes, 5);
    CU_ASSERT_STRING_EQUAL(sec, "quota alice");
    q = acc_config_quota(&c, "bob", &sec);
    CU_ASSERT_EQUAL(q->nodes, 8);
    CU_ASSERT_STRING_EQUAL(sec, "quota");
    acc_config_release(&c);

    /* The older key of the per-user quote bound sets [quota] max_quotes. */
    ACC_ASSERT_OK(acc_config_load_string(
        "[negotiation]\nmax_quotes_per_user = 7\n[site a]\nadapter = sim-batch\nnodes = 1\n", "t",
        &c, &err));
    CU_ASSERT_EQUAL(acc_config_quota(&c, NULL, NULL)->quotes, 7);
    acc_config_release(&c);

    static const struct {
        const char *head, *extra, *needle;
    } bad[] = {
        {"", "[quota alice]\nmax_nodes = 2\n", "[auth]"},    /* no users to name */
        {"auth", "[quota carol]\nmax_nodes = 2\n", "carol"}, /* not a user */
        {"", "max_nodes = 0\n", "max_nodes"},                /* at least 1 */
        {"", "max_duration = 7200\n", "max_duration"},       /* a duration */
        {"", "max_cpus = 4\n", "max_cpus"},                  /* unknown */
        {"", "max_agreements = lots\n", "max_agreements"},   /* a number or unlimited */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, ini_fmt, bad[i].head[0] ? head : "", bad[i].extra);
        CU_ASSERT_EQUAL(acc_config_load_string(text, "t", &c, &err), ACC_ERR_CONFIG);
        if (!strstr(err.msg, bad[i].needle))
            fprintf(stderr, "\n  case %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].needle));
    }
}

/* ------------------------------------------------------ one agreement */

/* Each limit of one agreement refuses with 403 naming it; nothing is stored. */
static void test_agreement_limits(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-limits", true, false, NULL), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    acc_err rc = run(&f, offer("alice", 5, 4, 0, "PT1H", 0), NULL, id, &err);
    expect_quota(rc, &err, "[quota] max_nodes");
    CU_ASSERT_STRING_EQUAL(id, ""); /* nothing stored */
    expect_quota(run(&f, offer("alice", 1, 1, 1001, "PT1H", 0), NULL, id, &err), &err,
                 "[quota] max_bandwidth");
    expect_quota(run(&f, offer("alice", 1, 0, 0, "PT3H", 0), NULL, id, &err), &err,
                 "[quota] max_duration");
    expect_quota(run(&f, offer("alice", 1, 0, 0, "PT1H", 3 * 86400), NULL, id, &err), &err,
                 "[quota] max_advance");
    /* At every limit at once: agreed. */
    ACC_ASSERT_OK(run(&f, offer("alice", 4, 4, 1000, "PT2H", 86400), NULL, id, &err));
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_STATE_OBSERVED);
    acc_agreement_release(&a);
    close_fx(&f);
}

/* The window is cut so that no start lies beyond max_advance. */
static void test_window(void)
{
    struct acc_quota q = {.advance = 86400, .duration = 7200};
    struct svc_quota_who w = {"alice", NULL, q, "quota"};
    acc_time deadline = 1000000;
    svc_quota_window(&w, 1000, 3600, &deadline);
    CU_ASSERT_EQUAL(deadline, 1000 + 86400 + 3600);
    deadline = 5000;
    svc_quota_window(&w, 1000, 3600, &deadline);
    CU_ASSERT_EQUAL(deadline, 5000); /* already earlier */
}

/* A flexible request's generated links count against max_bandwidth: the
 * agreement is refused once the planner has made them. */
static void test_generated_links(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-flex", true, false, NULL), 0);
    static const char doc[] =
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>flex</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>alice</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
        "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration>"
        "</co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"metajob\"><co:Flexible>"
        "<co:TotalNodes>8</co:TotalNodes><co:MaxNodes>4</co:MaxNodes>"
        "<co:PerProcessorBandwidth>1000</co:PerProcessorBandwidth></co:Flexible>"
        "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>";
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    /* Two parts of 4: a link of 4 * 4 * 1000 / 7 = 2286 Mbit/s. */
    expect_quota(run(&f, doc, NULL, id, &err), &err, "[quota] max_bandwidth");
    close_fx(&f);
}

/* -------------------------------------------------------- open agreements */

struct racer {
    struct fx *f;
    atomic_int *ok, *quota, *other;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    acc_err rc = run(r->f, offer("alice", 1, 0, 0, "PT1H", 0), NULL, id, &err);
    atomic_fetch_add(rc == ACC_OK                                       ? r->ok
                     : strcmp(acc_err_symbol(rc), "QuotaExceeded") == 0 ? r->quota
                                                                        : r->other,
                     1);
    return NULL;
}

/* n concurrent submissions: how many were agreed. */
static int race_n(struct fx *f, int n, int *refused)
{
    atomic_int ok = 0, quota = 0, other = 0;
    pthread_t t[16];
    struct racer r = {f, &ok, &quota, &other};
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, race, &r);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&other), 0);
    *refused = atomic_load(&quota);
    return atomic_load(&ok);
}

/* Concurrent submissions of one user never exceed max_agreements; a
 * terminated agreement frees its place; a restart forgets nothing. */
static void test_open_agreements_race(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-race", true, false, NULL), 0);
    int refused, agreed = race_n(&f, 12, &refused);
    if (agreed != 3)
        fprintf(stderr, "\n  12 concurrent offers: %d agreed, %d refused\n", agreed, refused);
    CU_ASSERT_EQUAL(agreed, 3);
    CU_ASSERT_EQUAL(refused, 9);
    struct acc_agreement_list l;
    struct acc_list_filter lf = {.state = "Observed"};
    struct acc_error err;
    ACC_ASSERT_OK(acc_service_list(f.svc, &lf, &l, &err));
    CU_ASSERT_EQUAL_FATAL(l.n, 3);
    char first[ACC_ID_LEN + 1];
    memcpy(first, l.v[0].id, sizeof first);
    acc_agreement_list_release(&l);
    ACC_ASSERT_OK(svc_terminate_wait(f.svc, first, &err));
    CU_ASSERT_EQUAL(race_n(&f, 6, &refused), 1);
    close_fx(&f);
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-race", false, false, NULL), 0);
    CU_ASSERT_EQUAL(race_n(&f, 2, &refused), 0);
    close_fx(&f);
}

/* With an Idempotency-Key the refusal is kept (Rejected, QuotaExceeded),
 * so that a retry with the key gets the same answer; an agreed key is
 * replayed even at the limit. */
static void test_keys(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-keys", true, false, NULL), 0);
    char id[ACC_ID_LEN + 1], again[ACC_ID_LEN + 1], agreed[ACC_ID_LEN + 1];
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", 1, 0, 0, "PT1H", 0), "k1", agreed, &err));
    ACC_ASSERT_OK(run(&f, offer("alice", 2, 0, 0, "PT1H", 0), NULL, id, &err));
    ACC_ASSERT_OK(run(&f, offer("alice", 3, 0, 0, "PT1H", 0), NULL, id, &err));
    expect_quota(run(&f, offer("alice", 4, 0, 0, "PT1H", 0), "k2", id, &err), &err,
                 "[quota] max_agreements");
    CU_ASSERT_NOT_EQUAL(id[0], '\0');
    expect_quota(run(&f, offer("alice", 4, 0, 0, "PT1H", 0), "k2", again, &err), &err,
                 "[quota] max_agreements");
    CU_ASSERT_STRING_EQUAL(again, id);
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.state, ACC_STATE_REJECTED);
    CU_ASSERT_STRING_EQUAL(a.fault_code ? a.fault_code : "", "QuotaExceeded");
    acc_agreement_release(&a);
    ACC_ASSERT_OK(run(&f, offer("alice", 1, 0, 0, "PT1H", 0), "k1", again, &err));
    CU_ASSERT_STRING_EQUAL(again, agreed);
    close_fx(&f);
}

/* With [auth] every user counts on their own, with [quota USER] over
 * [quota]; without it everyone is one user, whatever the initiator. */
static void test_users(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(
        open_fx(&f, "quota-users", true, true, "[quota alice]\nmax_agreements = 1\n"), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", 1, 0, 0, "PT1H", 0), NULL, id, &err));
    expect_quota(run(&f, offer("alice", 1, 0, 0, "PT1H", 0), NULL, id, &err), &err,
                 "[quota alice] max_agreements");
    for (int i = 0; i < 3; i++)
        ACC_ASSERT_OK(run(&f, offer("bob", 1, 0, 0, "PT1H", 0), NULL, id, &err));
    expect_quota(run(&f, offer("bob", 1, 0, 0, "PT1H", 0), NULL, id, &err), &err,
                 "[quota] max_agreements");
    close_fx(&f);

    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-anon", true, false, NULL), 0);
    ACC_ASSERT_OK(run(&f, offer("alice", 1, 0, 0, "PT1H", 0), NULL, id, &err));
    ACC_ASSERT_OK(run(&f, offer("bob", 1, 0, 0, "PT1H", 0), NULL, id, &err));
    ACC_ASSERT_OK(run(&f, offer("carol", 1, 0, 0, "PT1H", 0), NULL, id, &err));
    expect_quota(run(&f, offer("dave", 1, 0, 0, "PT1H", 0), NULL, id, &err), &err,
                 "max_agreements");
    close_fx(&f);
}

/* ----------------------------------------------------------- modification */

static acc_err modify(struct fx *f, const char *id, int nodes, acc_time end, struct acc_error *err)
{
    struct acc_modification m = {.end = end};
    if (nodes) {
        snprintf(m.nodes[0].name, sizeof m.nodes[0].name, "x");
        m.nodes[0].value = nodes;
        m.n_nodes = 1;
    }
    struct acc_agreement out;
    acc_err rc = acc_service_modify(f->svc, id, &m, &out, err);
    if (!rc)
        acc_agreement_release(&out);
    return rc;
}

/* A change may not grow nodes, bandwidth, duration or the start past a
 * limit; within them it is made. */
static void test_modify(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-modify", true, false, NULL), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    ACC_ASSERT_OK(run(&f, offer("alice", 2, 2, 0, "PT1H", 600), NULL, id, &err));
    struct acc_agreement a;
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    acc_time start = a.start, end = a.end;
    acc_agreement_release(&a);
    expect_quota(modify(&f, id, 7, 0, &err), &err, "[quota] max_nodes");
    expect_quota(modify(&f, id, 0, start + 3 * 3600, &err), &err, "[quota] max_duration");
    struct acc_modification m = {.start = acc_now() + 3 * 86400};
    struct acc_agreement out;
    expect_quota(acc_service_modify(f.svc, id, &m, &out, &err), &err, "[quota] max_advance");
    ACC_ASSERT_OK(acc_service_get(f.svc, id, false, &a, &err));
    CU_ASSERT_EQUAL(a.end, end); /* unchanged */
    CU_ASSERT_EQUAL(a.comps[0].nodes, 2);
    acc_agreement_release(&a);
    ACC_ASSERT_OK(modify(&f, id, 6, start + 2 * 3600, &err)); /* at the limits */
    close_fx(&f);
    /* The quota lowered since: what is over it may stay or shrink. */
    CU_ASSERT_EQUAL_FATAL(open_fx(&f, "quota-modify", false, false, "max_nodes = 4\n"), 0);
    ACC_ASSERT_OK(modify(&f, id, 0, start + 3600, &err)); /* 8 nodes kept */
    ACC_ASSERT_OK(modify(&f, id, 5, 0, &err));            /* 7: fewer, still over */
    expect_quota(modify(&f, id, 6, 0, &err), &err, "[quota] max_nodes");
    close_fx(&f);
}

/* --------------------------------------------------------------- defaults */

/* The offer: every node of the embedded testbed, 400 days ahead,
 * for 100 years. */
static char *whole_testbed(void)
{
    static char buf[4096];
    char e[ACC_TIME_STRLEN], d[ACC_TIME_STRLEN];
    acc_time start = acc_now() + 400 * 86400;
    acc_time_format(start, e);
    acc_time_format(start + (int64_t)36525 * 86400 + 86400, d);
    static const char comp[] =
        "<wsag:ServiceDescriptionTerm wsag:Name=\"%s\" wsag:ServiceName=\"metajob\">"
        "<co:Component><co:Site>%s</co:Site><co:Nodes>%d</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm>";
    char c1[512], c2[512], c3[512];
    snprintf(c1, sizeof c1, comp, "a", "fzj-xd1", 64);
    snprintf(c2, sizeof c2, comp, "b", "caesar", 128);
    snprintf(c3, sizeof c3, comp, "c", "fh-brs", 32);
    snprintf(buf, sizeof buf,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>all</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>mallory</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
             "wsag:ServiceName=\"metajob\"><co:Schedule><co:EarliestStart>%s</co:EarliestStart>"
             "<co:Deadline>%s</co:Deadline><co:Duration>P36525D</co:Duration></co:Schedule>"
             "</wsag:ServiceDescriptionTerm>%s%s%s</wsag:All></wsag:Terms>"
             "</wsag:AgreementOffer>",
             e, d, c1, c2, c3);
    return buf;
}

/* The embedded testbed, as the quick start runs it (without launches). */
static int open_embedded(struct fx *f, const char *name)
{
    struct acc_error err;
    snprintf(f->db, sizeof f->db, "%s/%s.db", acc_test_tmpdir(), name);
    if (acc_config_embedded(&f->cfg, &err) || acc_config_set_db(&f->cfg, f->db, &err))
        return -1;
    f->cfg.launch.enabled = false;
    return acc_service_open(&f->cfg, &f->svc, &err) ? -1 : 0;
}

/* The embedded testbed's defaults refuse the offer and nothing is
 * stored. */
static void test_defaults_refuse(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_embedded(&f, "quota-embedded"), 0);
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    acc_err rc = run(&f, whole_testbed(), NULL, id, &err);
    expect_quota(rc, &err, "[quota] max_nodes");
    CU_ASSERT_STRING_EQUAL(id, "");
    close_fx(&f);
}

/* An offer file submitted (pending): never refused for a quota; the
 * examples and good offers are taken. */
static void check_example(struct fx *f, const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *doc = acc_test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    struct acc_error err;
    if (acc_xml_parse_offer(doc, len, &lim, &o, &err) == ACC_OK) {
        struct acc_submit s = {&o, doc, len, NULL, true, NULL, NULL};
        struct acc_submission sub;
        acc_err rc = acc_service_submit(f->svc, &s, &sub, &err);
        bool good = strncmp(name, "good-", 5) == 0 || strncmp(name, "offer", 5) == 0;
        if (strcmp(acc_err_symbol(rc), "QuotaExceeded") == 0 || (good && rc))
            fprintf(stderr, "\n  %s: %s: %s\n", name, acc_err_symbol(rc), err.msg);
        CU_ASSERT_STRING_NOT_EQUAL(acc_err_symbol(rc), "QuotaExceeded");
        if (good)
            CU_ASSERT_EQUAL(rc, ACC_OK);
        if (!rc)
            acc_nego_release(sub.job);
        acc_offer_release(&o);
    }
    free(doc);
}

/* The documented examples and the test offers are within the defaults. */
static void test_defaults_allow_examples(void)
{
    struct fx f;
    CU_ASSERT_EQUAL_FATAL(open_embedded(&f, "quota-examples"), 0);
    const char *dirs[] = {ACC_SOURCE_DIR "/docs/examples", ACC_SOURCE_DIR "/tests/data/offers"};
    int checked = 0;
    for (size_t d = 0; d < 2; d++) {
        DIR *dp = opendir(dirs[d]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
        for (struct dirent *e; (e = readdir(dp));) {
            size_t n = strlen(e->d_name);
            if (n > 4 && strcmp(e->d_name + n - 4, ".xml") == 0) {
                check_example(&f, dirs[d], e->d_name);
                checked++;
            }
        }
        closedir(dp);
    }
    CU_ASSERT_TRUE(checked > 20);
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
    {"[quota] keys", test_config},
    {"the limits of one agreement", test_agreement_limits},
    {"the window ends at max_advance", test_window},
    {"generated links count", test_generated_links},
    {"open agreements under concurrent submissions", test_open_agreements_race},
    {"idempotency keys at the limit", test_keys},
    {"users of [auth], and one user without", test_users},
    {"a modification within the quota", test_modify},
    {"the defaults refuse the whole testbed for 100 years", test_defaults_refuse},
    {"the defaults allow the examples", test_defaults_allow_examples},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"quota", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
