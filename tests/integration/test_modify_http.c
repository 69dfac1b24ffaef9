/* SPDX-License-Identifier: Apache-2.0 */
/* test_modify_http.c - POST /agreements/{id}/modify over HTTP (accordd
 * in-process on port 0): a change and its versions (?version=N on the
 * agreement and its trace, XML and JSON), bad versions, bad modification
 * documents that change nothing, and a change racing a terminate (a
 * simulator fault holds the change's reservation): exactly one wins and no
 * reservation of the agreement is left at any adapter. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

static struct fixture fx;
static char db_path[256];

static const char ini[] = "[server]\nallow_control = yes\n"
                          "[negotiation]\nadapter_timeout = PT30S\nworkers = 2\n"
                          "[launch]\nenabled = no\n"
                          "[site alpha]\nadapter = sim-batch\nnodes = 8\n"
                          "[site beta]\nadapter = sim-batch\nnodes = 8\n"
                          "[network sim]\nadapter = sim-network\n"
                          "[link alpha-beta]\nsites = alpha beta\ncapacity = 200\nnetwork = sim\n";

/* The offer test_modify uses too: components a (alpha) and b (beta), link ab. */
static char *offer;

static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};
static const char *const JSON_ACCEPT[] = {"Accept: application/json", NULL};

static char *url(const char *path)
{
    static __thread char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

static long req(const char *method, const char *path, const char *body, const char *const *headers,
                struct http_reply *r)
{
    if (http_do(method, url(path), body, body ? strlen(body) : 0, headers, r) != 0) {
        memset(r, 0, sizeof *r);
        return -1;
    }
    return r->status;
}

/* A new agreement: its id (free it). */
static char *agree(void)
{
    struct http_reply r;
    CU_ASSERT_EQUAL(req("POST", "/agreements", offer, XML_HDR, &r), 201);
    const char *slash = strrchr(r.location, '/');
    char *id = slash ? strdup(slash + 1) : NULL;
    http_reply_free(&r);
    return id;
}

static char *field(const char *id, const char *query, const char *xpath)
{
    char path[256];
    snprintf(path, sizeof path, "/agreements/%s%s", id, query);
    struct http_reply r;
    CU_ASSERT_EQUAL(req("GET", path, NULL, NULL, &r), 200);
    char *v = r.body ? xml_get(r.body, xpath) : NULL;
    http_reply_free(&r);
    return v;
}

static long modify(const char *id, const char *body, struct http_reply *r)
{
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s/modify", id);
    return req("POST", path, body, XML_HDR, r);
}

/* Whether any adapter still holds a reservation of agreement id. */
static bool held_anywhere(const char *id)
{
    const char *ads[] = {"alpha", "beta", "sim"};
    bool held = false;
    for (size_t i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "/adapters/%s/control/bookings", ads[i]);
        struct http_reply r;
        CU_ASSERT_EQUAL(req("POST", path, "", NULL, &r), 200);
        if (r.body && strstr(r.body, id)) {
            fprintf(stderr, "left at %s:\n%s\n", ads[i], r.body);
            held = true;
        }
        http_reply_free(&r);
    }
    return held;
}

#define ALLOC "/wsag:Agreement/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/co:Allocation/"

/* Version 1 as it was; the current one is 2 of 2. */
static void check_versions_read(const char *id)
{
    char *v = field(id, "?version=1", ALLOC "co:ComponentAllocation[@co:name='a']/co:Nodes");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "2");
    free(v);
    v = field(id, "?version=1", ALLOC "co:Versions");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "2");
    free(v);
    v = field(id, "?version=1", ALLOC "co:Change");
    CU_ASSERT_PTR_NULL(v);
    free(v);
    v = field(id, "?version=2", ALLOC "co:ComponentAllocation[@co:name='a']/co:Nodes");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "7");
    free(v);

    struct http_reply r;
    char path[256];
    snprintf(path, sizeof path, "/agreements/%s?version=2", id);
    CU_ASSERT_EQUAL(req("GET", path, NULL, JSON_ACCEPT, &r), 200);
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, "\"version\":2") : NULL);
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, "\"versions\":2") : NULL);
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, "\"change\":\"") : NULL);
    http_reply_free(&r);
}

/* Each version's trace; the second asked until the new end. */
static void check_traces(const char *id, const char *t)
{
    struct http_reply r;
    char path[256];
    snprintf(path, sizeof path, "/agreements/%s/trace?version=1", id);
    CU_ASSERT_EQUAL(req("GET", path, NULL, JSON_ACCEPT, &r), 200);
    CU_ASSERT_PTR_NULL(r.body ? strstr(r.body, t) : "");
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/trace?version=2", id);
    CU_ASSERT_EQUAL(req("GET", path, NULL, JSON_ACCEPT, &r), 200);
    CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, t) : NULL);
    http_reply_free(&r);
}

/* Bad versions: 0, junk, negative, beyond 32 bits (400); one that does
 * not exist yet (404); on the trace too. */
static void check_bad_versions(const char *id)
{
    struct http_reply r;
    char path[256];
    const char *bad[] = {"0", "junk", "-1", "2x", "", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "/agreements/%s?version=%s", id, bad[i]);
        CU_ASSERT_EQUAL(req("GET", path, NULL, NULL, &r), 400);
        http_reply_free(&r);
        snprintf(path, sizeof path, "/agreements/%s/trace?version=%s", id, bad[i]);
        CU_ASSERT_EQUAL(req("GET", path, NULL, NULL, &r), 400);
        http_reply_free(&r);
    }
    snprintf(path, sizeof path, "/agreements/%s?version=3", id);
    CU_ASSERT_EQUAL(req("GET", path, NULL, NULL, &r), 404);
    http_reply_free(&r);
    snprintf(path, sizeof path, "/agreements/%s/trace?version=3", id);
    CU_ASSERT_EQUAL(req("GET", path, NULL, NULL, &r), 404);
    http_reply_free(&r);
}

static void test_versions(void)
{
    char *id = agree();
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char *v = field(id, "", ALLOC "co:Version");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
    free(v);
    char *end = field(id, "", ALLOC "co:End");
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    acc_time e = 0;
    CU_ASSERT_EQUAL(acc_time_parse(end, &e, NULL), ACC_OK);
    free(end);
    char t[40], body[512];
    acc_time_format(e + 3600, t);
    snprintf(body, sizeof body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "<co:Nodes component=\"a\">7</co:Nodes></co:Modification>",
             t);
    struct http_reply r;
    CU_ASSERT_EQUAL(modify(id, body, &r), 200);
    char *got = r.body ? xml_get(r.body, ALLOC "co:Version") : NULL;
    CU_ASSERT_STRING_EQUAL(got ? got : "", "2");
    free(got);
    got = r.body ? xml_get(r.body, ALLOC "co:Change") : NULL;
    CU_ASSERT_PTR_NOT_NULL(got ? strstr(got, "nodes a=7") : NULL);
    free(got);
    got = r.body ? xml_get(r.body, ALLOC "co:End") : NULL;
    CU_ASSERT_STRING_EQUAL(got ? got : "", t);
    free(got);
    http_reply_free(&r);

    check_versions_read(id);
    check_traces(id, t);
    check_bad_versions(id);

    char path[256];
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(req("DELETE", path, NULL, NULL, &r), 200);
    http_reply_free(&r);
    CU_ASSERT_FALSE(held_anywhere(id));
    free(id);
}

static void test_bad_documents(void)
{
    char *id = agree();
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    struct {
        const char *body;
        long status;
        const char *says; /* in the fault */
    } bad[] = {
        {"not xml at all", 400, NULL},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"/>", 400, "changes nothing"},
        {"<x:Other xmlns:x=\"urn:x\"/>", 400, "co:Modification"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Colour>red</co:Colour>"
         "</co:Modification>",
         400, "Colour"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"zz\">3"
         "</co:Nodes></co:Modification>",
         404, "zz"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"a\">0"
         "</co:Nodes></co:Modification>",
         400, NULL},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes>3</co:Nodes>"
         "</co:Modification>",
         400, "component"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"a\">3"
         "</co:Nodes><co:Nodes component=\"a\">4</co:Nodes></co:Modification>",
         400, "twice"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>yesterday</co:End>"
         "</co:Modification>",
         400, NULL},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>2001-01-01T00:00:00Z"
         "</co:End></co:Modification>",
         400, NULL},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes component=\"a\">9"
         "</co:Nodes></co:Modification>",
         400, "8 nodes"},
        {"<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Bandwidth link=\"ab\">201"
         "</co:Bandwidth></co:Modification>",
         400, "200"},
        {"<!DOCTYPE x [<!ENTITY e \"3\">]><co:Modification xmlns:co=\"urn:accord:coalloc:1\">"
         "<co:Nodes component=\"a\">&e;</co:Nodes></co:Modification>",
         400, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_reply r;
        long st = modify(id, bad[i].body, &r);
        if (st != bad[i].status)
            fprintf(stderr, "case %zu: %ld %s\n", i, st, r.body ? r.body : "");
        CU_ASSERT_EQUAL(st, bad[i].status);
        if (bad[i].says && !(r.body && strstr(r.body, bad[i].says)))
            fprintf(stderr, "case %zu: no '%s' in %s\n", i, bad[i].says, r.body ? r.body : "");
        if (bad[i].says)
            CU_ASSERT_PTR_NOT_NULL(r.body ? strstr(r.body, bad[i].says) : NULL);
        http_reply_free(&r);
    }
    /* An unknown agreement. */
    struct http_reply r;
    CU_ASSERT_EQUAL(req("POST", "/agreements/aaaaaaaaaaaaaaaa/modify",
                        "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:Nodes "
                        "component=\"a\">3</co:Nodes></co:Modification>",
                        XML_HDR, &r),
                    404);
    http_reply_free(&r);
    /* Nothing changed. */
    char *v = field(id, "", ALLOC "co:Versions");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
    free(v);
    v = field(id, "", ALLOC "co:ComponentAllocation[@co:name='a']/co:Nodes");
    CU_ASSERT_STRING_EQUAL(v ? v : "", "2");
    free(v);
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s", id);
    CU_ASSERT_EQUAL(req("DELETE", path, NULL, NULL, &r), 200);
    http_reply_free(&r);
    free(id);
}

struct racer {
    const char *id;
    char body[512];
    long status;
    char *reply;
};

static void *modify_thread(void *arg)
{
    struct racer *x = arg;
    struct http_reply r;
    x->status = modify(x->id, x->body, &r);
    x->reply = r.body;
    r.body = NULL;
    http_reply_free(&r);
    return NULL;
}

/* One race: the change's reservation at alpha hangs for hang_s while the
 * terminate comes after delay_us; expect_terminate_first 1 or 0, or -1
 * when either may win. */
static void race(int64_t hang_s, useconds_t delay_us, int expect_terminate_first)
{
    char *id = agree();
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char *end = field(id, "", ALLOC "co:End");
    acc_time e = 0;
    CU_ASSERT_EQUAL(acc_time_parse(end ? end : "", &e, NULL), ACC_OK);
    free(end);
    struct http_reply r;
    char path[256], t[40];
    if (hang_s) {
        snprintf(path, sizeof path,
                 "/adapters/alpha/control/fault?call=reserve&action=hang&seconds=%lld&count=1",
                 (long long)hang_s);
        CU_ASSERT_EQUAL(req("POST", path, "", NULL, &r), 200);
        http_reply_free(&r);
    }
    struct racer x = {.id = id};
    acc_time_format(e + 1800, t);
    snprintf(x.body, sizeof x.body,
             "<co:Modification xmlns:co=\"urn:accord:coalloc:1\"><co:End>%s</co:End>"
             "<co:Nodes component=\"a\">5</co:Nodes><co:Bandwidth link=\"ab\">150</co:Bandwidth>"
             "</co:Modification>",
             t);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, modify_thread, &x), 0);
    usleep(delay_us);
    snprintf(path, sizeof path, "/agreements/%s", id);
    long term = req("DELETE", path, NULL, NULL, &r);
    http_reply_free(&r);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(term, 200);
    char *state = field(id, "", ALLOC "co:State");
    char *versions = field(id, "", ALLOC "co:Versions");
    CU_ASSERT_STRING_EQUAL(state ? state : "", "Terminated");
    /* Exactly one wins: a change that answered 200 made version 2 before
     * the terminate; one that lost says why and made nothing. */
    if (x.status == 200) {
        CU_ASSERT_STRING_EQUAL(versions ? versions : "", "2");
    } else {
        CU_ASSERT_EQUAL(x.status, 409);
        /* "terminated (or changed) while the change was negotiated", or
         * "is Terminated" / "is ObservedAndTerminating" when the terminate
         * came before the job began */
        bool says = x.reply && (strstr(x.reply, "terminated") || strstr(x.reply, "Terminat"));
        if (!says)
            fprintf(stderr, "the change answered %ld: %s\n", x.status, x.reply ? x.reply : "");
        CU_ASSERT_TRUE(says);
        CU_ASSERT_STRING_EQUAL(versions ? versions : "", "1");
    }
    if (expect_terminate_first >= 0)
        CU_ASSERT_EQUAL(x.status != 200, expect_terminate_first);
    CU_ASSERT_FALSE(held_anywhere(id));
    free(state);
    free(versions);
    free(x.reply);
    free(id);
}

static void test_race_terminate(void)
{
    race(2, 500000, 1); /* the terminate comes while the change books */
    for (int i = 0; i < 5; i++)
        race(0, (useconds_t)i * 20000, -1); /* either may win; nothing leaks */
}

static int setup(void)
{
    offer = acc_test_slurp(ACC_SOURCE_DIR "/tests/data/modify/offer-ab.xml", NULL);
    if (!offer)
        return 1;
    if (!acc_test_db("modify_http", db_path, sizeof db_path))
        return 1;
    return fixture_start(&fx, ini, db_path);
}

static int teardown(void)
{
    fixture_stop(&fx);
    free(offer);
    return 0;
}

static const struct acc_test_case tests[] = {
    {"a change, its versions and their traces", test_versions},
    {"bad modification documents change nothing", test_bad_documents},
    {"a change racing a terminate: one wins, nothing leaks", test_race_terminate},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"modify_http", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
