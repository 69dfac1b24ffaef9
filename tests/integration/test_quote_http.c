/* SPDX-License-Identifier: Apache-2.0 */
/* test_quote_http.c - quotes over HTTP (accordd in-process on port 0):
 * quote, hold, commit with POST /agreements?quote= (no new round), expiry
 * of a short hold, DELETE, two clients, a double commit, bad input; and a
 * restart of the real accordd binary during a hold. */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "daemon.h"
#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

/* NULL-safe: a missing node fails the test instead of crashing it. */
#define ASSERT_STR(a, b) CU_ASSERT_TRUE((a) != NULL && strcmp((a), (b)) == 0)

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};

static const char ini[] = "[negotiation]\n"
                          "lead_time = PT0S\n"
                          "max_hold = PT10M\n"
                          "quote_options = 3\n"
                          "max_quotes = 6\n"
                          "max_quotes_per_user = 4\n"
                          "[site a]\nadapter = sim-batch\nnodes = 4\n"
                          "[site b]\nadapter = sim-batch\nnodes = 4\n";

static char *offer(const char *who, const char *name)
{
    static _Thread_local char buf[4096]; /* threads post too */
    snprintf(
        buf, sizeof buf,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>%s</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>%s</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
        "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration>"
        "</co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\">"
        "<co:Component><co:Site>a</co:Site><co:Nodes>4</co:Nodes>"
        "<co:Executable>/bin/true</co:Executable></co:Component>"
        "</wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"y\" wsag:ServiceName=\"metajob\">"
        "<co:Component><co:Site>b</co:Site><co:Nodes>2</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>",
        name, who);
    return buf;
}

static char *url(const char *path)
{
    static _Thread_local char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

static long req(const char *method, const char *path, const char *body, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(
        http_do(method, url(path), body, body ? strlen(body) : 0, body ? XML_HDR : NULL, r), 0);
    return r->status;
}

static void fresh(const char *name)
{
    char db[512], p[600];
    /* on PostgreSQL acc_test_db makes the database afresh */
    CU_ASSERT_FATAL(acc_test_db(name, db, sizeof db));
    if (!acc_test_db_is_pg()) {
        unlink(db);
        snprintf(p, sizeof p, "%s-wal", db);
        unlink(p);
    }
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, ini, db), 0);
}

/* A quote: the reply's status, its id (free it) and the document. */
static long quote(const char *who, const char *query, char **id, struct http_reply *r)
{
    char path[256];
    snprintf(path, sizeof path, "/negotiations%s", query);
    long st = req("POST", path, offer(who, "q"), r);
    *id = st == 201 ? xml_get(r->body, "/co:Quote/@co:id") : NULL;
    return st;
}

static char *state_of(const char *qid)
{
    char path[128];
    struct http_reply r;
    snprintf(path, sizeof path, "/negotiations/%s", qid);
    req("GET", path, NULL, &r);
    char *s = xml_get(r.body, "/co:Quote/co:State");
    http_reply_free(&r);
    return s;
}

/* Whether site a's 4 nodes are free for half an hour from t, asked of the
 * accordd at base (the adapter's own preview over HTTP). */
static bool free_at_on(const char *base, acc_time t)
{
    char path[256], from[ACC_TIME_STRLEN], until[ACC_TIME_STRLEN];
    acc_time_format(t, from);
    acc_time_format(t + 7200, until);
    snprintf(path, sizeof path, "/sites/a/preview?nodes=4&duration=PT30M&from=%s&until=%s", from,
             until);
    long st;
    char *body = daemon_call(base, "GET", path, NULL, &st);
    CU_ASSERT_EQUAL(st, 200);
    char *start = body ? xml_get(body, "//co:Frame[1]/@co:start") : NULL;
    acc_time s = -1;
    struct acc_error err;
    if (start && acc_time_parse(start, &s, &err))
        s = -1;
    free(start);
    free(body);
    return s >= 0 && s <= t;
}

static bool free_at(acc_time t)
{
    return free_at_on(fx.base, t);
}

/* An expired hold says Expired first (from then on nothing can commit it)
 * and is then cancelled at each adapter: free_at_on(base, t) within 5 s. */
static bool freed_soon(const char *base, acc_time t)
{
    for (int i = 0; i < 50; i++) {
        if (free_at_on(base, t))
            return true;
        usleep(100000);
    }
    return false;
}

static acc_time held_start(const char *doc)
{
    char *s = xml_get(doc, "//co:CounterOffer[@co:option = ../co:HeldOption]/co:Start");
    acc_time t = 0;
    struct acc_error err;
    if (!s || acc_time_parse(s, &t, &err))
        t = 0;
    free(s);
    return t;
}

static int count_agreements(void)
{
    struct http_reply r;
    req("GET", "/agreements", NULL, &r);
    char *n = xml_get(r.body, "/co:AgreementList/@co:count");
    int c = n ? (int)strtol(n, NULL, 10) : -1;
    free(n);
    http_reply_free(&r);
    return c;
}

static void test_hold_commit_no_new_round(void)
{
    fresh("qh-commit");
    struct http_reply r, c, t;
    char *qid, path[256];
    CU_ASSERT_EQUAL_FATAL(quote("alice", "?hold=PT2M", &qid, &r), 201);
    char *st = xml_get(r.body, "/co:Quote/co:State");
    ASSERT_STR(st, "Held");
    free(st);
    char *res = xml_get(r.body, "//co:CounterOffer[@co:option='0']/co:Component[1]/co:Reservation");
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    acc_time t0 = held_start(r.body);
    CU_ASSERT_TRUE(t0 > 0);
    CU_ASSERT_FALSE(free_at(t0 + 1)); /* held at the adapter */
    int before = count_agreements();

    snprintf(path, sizeof path, "/agreements?quote=%s", qid);
    CU_ASSERT_EQUAL_FATAL(req("POST", path, NULL, &c), 201);
    char *ast = xml_get(c.body, "//co:State");
    ASSERT_STR(ast, "Observed");
    char *ares = xml_get(c.body, "(//co:Reservation)[1]");
    ASSERT_STR(ares, res); /* exactly the held reservation */
    char *aid = NULL;
    const char *slash = strrchr(c.location, '/');
    aid = slash ? strdup(slash + 1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(aid);
    CU_ASSERT_EQUAL(count_agreements(), before + 1);
    CU_ASSERT_FALSE(free_at(t0 + 1)); /* still booked, now committed */

    /* The trace: no round, only the commit. */
    snprintf(path, sizeof path, "/agreements/%s/negotiation", aid);
    CU_ASSERT_EQUAL(req("GET", path, NULL, &t), 200);
    char *rounds = xml_get(t.body, "/co:NegotiationTrace/@co:rounds");
    ASSERT_STR(rounds, "0");
    CU_ASSERT_EQUAL(xml_count(t.body, "//co:Event"), 1);
    char *detail = xml_get(t.body, "//co:Event/co:Detail");
    char want[128];
    snprintf(want, sizeof want, "commit of quote %s", qid);
    ASSERT_STR(detail, want);

    /* The quote says Committed and names the agreement; a second commit is
     * refused and stores nothing. */
    char *qs = state_of(qid);
    ASSERT_STR(qs, "Committed");
    http_reply_free(&r);
    snprintf(path, sizeof path, "/negotiations/%s", qid);
    req("GET", path, NULL, &r);
    char *qa = xml_get(r.body, "/co:Quote/co:Agreement");
    ASSERT_STR(qa, aid);
    struct http_reply d;
    snprintf(path, sizeof path, "/agreements?quote=%s", qid);
    CU_ASSERT_EQUAL(req("POST", path, NULL, &d), 409);
    CU_ASSERT_EQUAL(count_agreements(), before + 1);
    http_reply_free(&d);
    /* Nothing to release any more. */
    snprintf(path, sizeof path, "/negotiations/%s", qid);
    CU_ASSERT_EQUAL(req("DELETE", path, NULL, &d), 409);
    http_reply_free(&d);
    CU_ASSERT_FALSE(free_at(t0 + 1));

    free(qa);
    free(qs);
    free(detail);
    free(rounds);
    free(aid);
    free(ares);
    free(ast);
    free(res);
    free(qid);
    http_reply_free(&r);
    http_reply_free(&c);
    http_reply_free(&t);
    fixture_stop(&fx);
}

static void test_commit_body_and_bad_refs(void)
{
    fresh("qh-body");
    struct http_reply r, c;
    char *qid, *adv, path[256];
    CU_ASSERT_EQUAL_FATAL(quote("alice", "?hold=PT2M", &qid, &r), 201);
    http_reply_free(&r);
    CU_ASSERT_EQUAL_FATAL(quote("alice", "", &adv, &r), 201); /* Advisory */
    http_reply_free(&r);
    int before = count_agreements();
    /* Another offer in the body: refused. */
    snprintf(path, sizeof path, "/agreements?quote=%s", qid);
    CU_ASSERT_EQUAL(req("POST", path, offer("alice", "other"), &c), 400);
    http_reply_free(&c);
    /* Advisory, unknown, malformed: 409, 404, 400. */
    snprintf(path, sizeof path, "/agreements?quote=%s", adv);
    CU_ASSERT_EQUAL(req("POST", path, NULL, &c), 409);
    CU_ASSERT_TRUE(strstr(c.body, "Advisory") != NULL);
    http_reply_free(&c);
    CU_ASSERT_EQUAL(req("POST", "/agreements?quote=mz73hm4s4ndsuu2a", NULL, &c), 404);
    http_reply_free(&c);
    CU_ASSERT_EQUAL(req("POST", "/agreements?quote=..%2Fx", NULL, &c), 400);
    http_reply_free(&c);
    CU_ASSERT_EQUAL(count_agreements(), before);
    CU_ASSERT_EQUAL(req("GET", "/negotiations/mz73hm4s4ndsuu2a", NULL, &c), 404);
    http_reply_free(&c);
    /* The quote's own offer in the body: committed. */
    snprintf(path, sizeof path, "/agreements?quote=%s", qid);
    CU_ASSERT_EQUAL(req("POST", path, offer("alice", "q"), &c), 201);
    http_reply_free(&c);
    CU_ASSERT_EQUAL(count_agreements(), before + 1);
    free(qid);
    free(adv);
    fixture_stop(&fx);
}

struct racer {
    char path[256];
    long status;
};

static void *race(void *arg)
{
    struct racer *x = arg;
    struct http_reply r;
    x->status = http_do("POST", url(x->path), NULL, 0, NULL, &r) ? -1 : r.status;
    http_reply_free(&r);
    return NULL;
}

static void test_double_commit_race(void)
{
    fresh("qh-race");
    for (int round = 0; round < 5; round++) {
        struct http_reply r;
        char *qid;
        CU_ASSERT_EQUAL_FATAL(quote("alice", "?hold=PT2M", &qid, &r), 201);
        http_reply_free(&r);
        int before = count_agreements();
        struct racer x[2];
        pthread_t th[2];
        for (int i = 0; i < 2; i++) {
            snprintf(x[i].path, sizeof x[i].path, "/agreements?quote=%s", qid);
            pthread_create(&th[i], NULL, race, &x[i]);
        }
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        CU_ASSERT_TRUE((x[0].status == 201 && x[1].status == 409) ||
                       (x[0].status == 409 && x[1].status == 201));
        CU_ASSERT_EQUAL(count_agreements(), before + 1);
        char *s = state_of(qid);
        ASSERT_STR(s, "Committed");
        free(s);
        free(qid);
    }
    fixture_stop(&fx);
}

static void test_two_clients_release(void)
{
    fresh("qh-two");
    struct http_reply a, b, d;
    char *qa, *qb, path[256];
    CU_ASSERT_EQUAL_FATAL(quote("alice", "?hold=PT2M", &qa, &a), 201);
    CU_ASSERT_EQUAL_FATAL(quote("bob", "?hold=PT2M", &qb, &b), 201);
    acc_time ta = held_start(a.body), tb = held_start(b.body);
    CU_ASSERT_TRUE(ta > 0 && tb >= ta + 3600); /* never the same nodes at once */
    snprintf(path, sizeof path, "/negotiations/%s", qa);
    CU_ASSERT_EQUAL(req("DELETE", path, NULL, &d), 200);
    char *s = xml_get(d.body, "/co:Quote/co:State");
    ASSERT_STR(s, "Released");
    free(s);
    http_reply_free(&d);
    CU_ASSERT_TRUE(free_at(ta + 1)); /* given back at the adapter */
    CU_ASSERT_EQUAL(req("DELETE", path, NULL, &d), 409);
    http_reply_free(&d);
    snprintf(path, sizeof path, "/agreements?quote=%s", qa);
    CU_ASSERT_EQUAL(req("POST", path, NULL, &d), 409);
    http_reply_free(&d);
    free(qa);
    free(qb);
    http_reply_free(&a);
    http_reply_free(&b);
    fixture_stop(&fx);
}

static void test_short_hold_expires(void)
{
    fresh("qh-exp");
    struct http_reply r, d;
    char *qid, path[256];
    CU_ASSERT_EQUAL_FATAL(quote("alice", "?hold=PT2S", &qid, &r), 201);
    acc_time t = held_start(r.body);
    CU_ASSERT_FALSE(free_at(t + 1));
    char *s = NULL;
    for (int i = 0; i < 150; i++) {
        free(s);
        s = state_of(qid);
        if (s && strcmp(s, "Expired") == 0)
            break;
        usleep(100000);
    }
    ASSERT_STR(s, "Expired");
    CU_ASSERT_TRUE(freed_soon(fx.base, t + 1)); /* every held reservation released */
    snprintf(path, sizeof path, "/agreements?quote=%s", qid);
    CU_ASSERT_EQUAL(req("POST", path, NULL, &d), 409);
    CU_ASSERT_TRUE(strstr(d.body, "Expired") != NULL);
    http_reply_free(&d);
    free(s);
    free(qid);
    http_reply_free(&r);
    fixture_stop(&fx);
}

/* Bad holds, options and bodies (the bounds on open quotes are in
 * test_quota_http.c, with users of their own). */
static void test_params(void)
{
    fresh("qh-params");
    struct http_reply r;
    char *id;
    CU_ASSERT_EQUAL(quote("alice", "?hold=PT11M", &id, &r), 400); /* > max_hold */
    http_reply_free(&r);
    CU_ASSERT_EQUAL(quote("alice", "?hold=soon", &id, &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(quote("alice", "?option=1", &id, &r), 400); /* option without a hold */
    http_reply_free(&r);
    CU_ASSERT_EQUAL(quote("alice", "?hold=PT1M&option=x", &id, &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(quote("alice", "?hold=PT1M&option=3", &id, &r), 400);
    http_reply_free(&r);
    CU_ASSERT_EQUAL(req("POST", "/negotiations", NULL, &r), 400); /* no offer */
    http_reply_free(&r);
    CU_ASSERT_EQUAL(req("POST", "/negotiations", "<x/>", &r), 400);
    http_reply_free(&r);
    fixture_stop(&fx);
}

static void *quote_thread(void *arg)
{
    long *status = arg;
    struct http_reply r;
    const char *o = offer("dave", "slow");
    *status = http_do("POST", url("/negotiations"), o, strlen(o), XML_HDR, &r) ? -1 : r.status;
    http_reply_free(&r);
    return NULL;
}

/* A quote is a job on the negotiation queue: while one waits for a slow
 * adapter, the server answers other requests, and a full queue refuses the
 * next quote with 503 before anything is stored. */
static void test_quote_is_a_queue_job(void)
{
    static const char slow_ini[] = "[server]\nallow_control = yes\n"
                                   "[negotiation]\nlead_time = PT0S\nworkers = 1\n"
                                   "queue_length = 1\n"
                                   "[site a]\nadapter = sim-batch\nnodes = 4\n"
                                   "[site b]\nadapter = sim-batch\nnodes = 4\n";
    char db[512];
    CU_ASSERT_FATAL(acc_test_db("qh-queue", db, sizeof db));
    if (!acc_test_db_is_pg())
        unlink(db);
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, slow_ini, db), 0);
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(
        req("POST", "/adapters/a/control/fault?call=preview&action=hang&seconds=3", NULL, &r), 200);
    http_reply_free(&r);
    long first = 0;
    pthread_t th;
    pthread_create(&th, NULL, quote_thread, &first);
    /* The first quote takes the queue's one place (on the worker, in the
     * slow preview): within 5 s. */
    bool taken = false;
    for (int i = 0; i < 50 && !taken; i++) {
        CU_ASSERT_EQUAL(req("GET", "/metrics", NULL, &r), 200);
        taken = r.body && strstr(r.body, "\naccord_negotiation_queue 1\n") != NULL;
        http_reply_free(&r);
        if (!taken)
            usleep(100000);
    }
    CU_ASSERT_TRUE(taken);
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(req("GET", "/healthz", NULL, &r), 200);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 1000000); /* not blocked by the quote */
    http_reply_free(&r);
    char *id = NULL;
    CU_ASSERT_EQUAL(quote("erin", "", &id, &r), 503);
    CU_ASSERT_TRUE(r.body && strstr(r.body, "queue_length") != NULL);
    http_reply_free(&r);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(first, 201);
    CU_ASSERT_EQUAL(quote("erin", "", &id, &r), 201); /* room again */
    free(id);
    http_reply_free(&r);
    fixture_stop(&fx);
}

/* The JSON form of the quote, through accordctl quote/commit/release (the
 * real binary: ctl of cli_run.h). */
static void test_cli_and_json(void)
{
    fresh("qh-cli");
    char file[300];
    snprintf(file, sizeof file, "%s/qh-cli-offer.xml", acc_test_tmpdir());
    FILE *f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(offer("alice", "q"), f);
    fclose(f);
    struct run r =
        ctl(fx.base, NULL, "quote", file, "--hold", "PT2M", "--option", "1", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_error_t jerr;
    json_t *q = json_loads(r.out, 0, &jerr);
    run_free(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    ASSERT_STR(json_string_value(json_object_get(q, "state")), "Held");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(q, "heldOption")), 1);
    json_t *opts = json_object_get(q, "counterOffers");
    CU_ASSERT_EQUAL(json_array_size(opts), 3);
    json_t *held = json_array_get(opts, 1);
    json_t *comp = json_array_get(json_object_get(held, "components"), 0);
    CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(comp, "reservation")));
    CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(held, "why")));
    char qid[64];
    snprintf(qid, sizeof qid, "%s", json_string_value(json_object_get(q, "id")));
    json_decref(q);

    r = ctl(fx.base, NULL, "commit", qid, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *a = json_loads(r.out, 0, &jerr);
    run_free(&r);
    ASSERT_STR(json_string_value(json_object_get(a, "state")), "Observed");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(a, "rounds")), 0);
    json_decref(a);
    r = ctl(fx.base, NULL, "commit", qid, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 4); /* no longer Held */
    run_free(&r);
    r = ctl(fx.base, NULL, "release", qid, NULL);
    CU_ASSERT_EQUAL(r.status, 4);
    run_free(&r);
    r = ctl(fx.base, NULL, "quote", file, NULL);
    CU_ASSERT_EQUAL(r.status, 0); /* the table */
    CU_ASSERT_TRUE(strstr(r.out, "Advisory") != NULL && strstr(r.out, "option 2") != NULL);
    run_free(&r);
    r = ctl(fx.base, NULL, "quote", file, "--option", "1", NULL);
    CU_ASSERT_EQUAL(r.status, 2); /* usage: an option needs a hold */
    run_free(&r);
    r = ctl(fx.base, NULL, "commit", "mz73hm4s4ndsuu2a", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    run_free(&r);
    unlink(file);
    fixture_stop(&fx);
}

/* The real accordd: a hold outlives a restart and then expires. */
static void test_restart_keeps_hold(void)
{
    char dir[256], cfg[300], db[512], base[128];
    snprintf(dir, sizeof dir, "%s", acc_test_tmpdir());
    snprintf(cfg, sizeof cfg, "%s/qh-restart.ini", dir);
    CU_ASSERT_FATAL(acc_test_db("qh-restart", db, sizeof db));
    if (!acc_test_db_is_pg())
        unlink(db);
    const char *signing = acc_test_db_signing();
    CU_ASSERT_PTR_NOT_NULL_FATAL(signing);
    FILE *fp = fopen(cfg, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(ini, fp);
    fputs(signing, fp);
    fclose(fp);
    pid_t pid = daemon_start(ACCORDD_PATH, cfg, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    long st;
    char *body = daemon_call(base, "POST", "/negotiations?hold=PT8S", offer("alice", "q"), &st);
    CU_ASSERT_EQUAL(st, 201);
    char *qid = body ? xml_get(body, "/co:Quote/@co:id") : NULL;
    acc_time held = body ? held_start(body) : 0;
    free(body);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!qid) {
        unlink(cfg);
        return;
    }
    pid = daemon_start(ACCORDD_PATH, cfg, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    char path[128], *s = NULL;
    snprintf(path, sizeof path, "/negotiations/%s", qid);
    body = daemon_call(base, "GET", path, NULL, &st);
    s = body ? xml_get(body, "/co:Quote/co:State") : NULL;
    ASSERT_STR(s, "Held"); /* kept across the restart */
    free(s);
    s = NULL;
    free(body);
    for (int i = 0; i < 200; i++) {
        body = daemon_call(base, "GET", path, NULL, &st);
        free(s);
        s = body ? xml_get(body, "/co:Quote/co:State") : NULL;
        free(body);
        if (s && strcmp(s, "Expired") == 0)
            break;
        usleep(100000);
    }
    ASSERT_STR(s, "Expired"); /* its timer ran on after the restart */
    free(s);
    CU_ASSERT_TRUE(freed_soon(base, held + 1));
    /* Released at the adapter: the same nodes can be held again at once. */
    body = daemon_call(base, "POST", "/negotiations?hold=PT1M", offer("alice", "q"), &st);
    CU_ASSERT_EQUAL(st, 201);
    CU_ASSERT_TRUE(body && held_start(body) <= held + 20);
    free(body);
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    free(qid);
    unlink(cfg);
}

static const struct acc_test_case tests[] = {
    {"hold, commit, no new round", test_hold_commit_no_new_round},
    {"commit body and bad references", test_commit_body_and_bad_refs},
    {"double commit race", test_double_commit_race},
    {"two clients, release", test_two_clients_release},
    {"short hold expires", test_short_hold_expires},
    {"parameters", test_params},
    {"a quote is a queue job (503 when full)", test_quote_is_a_queue_job},
    {"accordctl quote, commit, release; JSON", test_cli_and_json},
    {"restart keeps a hold", test_restart_keeps_hold},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"quote_http", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
