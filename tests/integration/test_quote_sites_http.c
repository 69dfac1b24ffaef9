/* SPDX-License-Identifier: Apache-2.0 */
/* test_quote_sites_http.c - quotes over HTTP for an offer with a component
 * without a site: an option on each site that fits, holding the second
 * books at its site's adapter, the commit keeps that site; a fixed offer
 * still gets later starts only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

#define ASSERT_STR(a, b) CU_ASSERT_TRUE((a) != NULL && strcmp((a), (b)) == 0)

static struct fixture fx;
static const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};

static const char ini[] = "[negotiation]\n"
                          "lead_time = PT0S\n"
                          "quote_options = 3\n"
                          "[site a]\nadapter = sim-batch\nnodes = 4\n"
                          "[site b]\nadapter = sim-batch\nnodes = 4\n";

/* One component of 3 nodes, at `site` or (NULL) anywhere. */
static char *offer(const char *site)
{
    static char buf[4096];
    char where[64] = "";
    if (site)
        snprintf(where, sizeof where, "<co:Site>%s</co:Site>", site);
    snprintf(
        buf, sizeof buf,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>s</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>alice</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
        "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration>"
        "</co:Schedule></wsag:ServiceDescriptionTerm>"
        "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\">"
        "<co:Component>%s<co:Nodes>3</co:Nodes></co:Component>"
        "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>",
        where);
    return buf;
}

static long req(const char *method, const char *path, const char *body, struct http_reply *r)
{
    char u[1024];
    snprintf(u, sizeof u, "%s%s", fx.base, path);
    CU_ASSERT_EQUAL_FATAL(
        http_do(method, u, body, body ? strlen(body) : 0, body ? XML_HDR : NULL, r), 0);
    return r->status;
}

static void fresh(const char *name)
{
    char db[256], p[300];
    snprintf(db, sizeof db, "%s/%s.db", acc_test_tmpdir(), name);
    unlink(db);
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    CU_ASSERT_EQUAL_FATAL(fixture_start(&fx, ini, db), 0);
}

/* Whether `nodes` of `site` are free for half an hour from t (the
 * adapter's own preview). */
static bool free_on(const char *site, int nodes, acc_time t)
{
    char path[256], from[ACC_TIME_STRLEN], until[ACC_TIME_STRLEN];
    acc_time_format(t, from);
    acc_time_format(t + 7200, until);
    snprintf(path, sizeof path, "/sites/%s/preview?nodes=%d&duration=PT30M&from=%s&until=%s", site,
             nodes, from, until);
    struct http_reply r;
    CU_ASSERT_EQUAL(req("GET", path, NULL, &r), 200);
    char *start = xml_get(r.body, "//co:Frame[1]/@co:start");
    acc_time s = -1;
    struct acc_error err;
    if (start && acc_time_parse(start, &s, &err))
        s = -1;
    free(start);
    http_reply_free(&r);
    return s >= 0 && s <= t;
}

static void test_site_choices(void)
{
    fresh("qs-sites");
    struct http_reply r, h, c, a;
    CU_ASSERT_EQUAL_FATAL(req("POST", "/negotiations", offer(NULL), &r), 201);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:CounterOffer"), 3);
    char *s0 = xml_get(r.body, "//co:CounterOffer[@co:option='0']/co:Component/co:Site");
    char *s1 = xml_get(r.body, "//co:CounterOffer[@co:option='1']/co:Component/co:Site");
    char *w1 = xml_get(r.body, "//co:CounterOffer[@co:option='1']/co:Why");
    ASSERT_STR(s0, "a");
    ASSERT_STR(s1, "b");
    CU_ASSERT_TRUE(w1 && strstr(w1, "placement 2 of 2 by earliest: x 3 on b") != NULL);

    CU_ASSERT_EQUAL_FATAL(req("POST", "/negotiations?hold=PT2M&option=1", offer(NULL), &h), 201);
    char *qid = xml_get(h.body, "/co:Quote/@co:id");
    char *held = xml_get(h.body, "/co:Quote/co:HeldOption");
    char *hs = xml_get(h.body, "//co:CounterOffer[@co:option='1']/co:Component/co:Site");
    char *res = xml_get(h.body, "//co:CounterOffer[@co:option='1']/co:Component/co:Reservation");
    char *start = xml_get(h.body, "//co:CounterOffer[@co:option='1']/co:Start");
    ASSERT_STR(held, "1");
    ASSERT_STR(hs, "b");
    CU_ASSERT_PTR_NOT_NULL(res);
    acc_time t = 0;
    struct acc_error err;
    CU_ASSERT_FATAL(start && acc_time_parse(start, &t, &err) == ACC_OK);
    CU_ASSERT_FALSE(free_on("b", 2, t + 1)); /* held at b's adapter */
    CU_ASSERT_TRUE(free_on("a", 4, t + 1));  /* not at a */

    char path[256];
    snprintf(path, sizeof path, "/agreements?quote=%s", qid ? qid : "none");
    CU_ASSERT_EQUAL_FATAL(req("POST", path, NULL, &c), 201);
    char *ares = xml_get(c.body, "(//co:ComponentAllocation)[1]/co:Reservation");
    ASSERT_STR(ares, res); /* exactly the held reservation */
    free(ares);
    const char *slash = strrchr(c.location, '/');
    char *aid = slash ? strdup(slash + 1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(aid);
    snprintf(path, sizeof path, "/agreements/%s", aid);
    CU_ASSERT_EQUAL(req("GET", path, NULL, &a), 200);
    char *asite = xml_get(a.body, "(//co:ComponentAllocation)[1]/co:Site");
    ASSERT_STR(asite, "b");
    CU_ASSERT_FALSE(free_on("b", 2, t + 1)); /* committed at b */
    CU_ASSERT_TRUE(free_on("a", 4, t + 1));
    free(asite);
    free(aid);
    free(start);
    free(res);
    free(hs);
    free(held);
    free(qid);
    free(w1);
    free(s1);
    free(s0);
    http_reply_free(&a);
    http_reply_free(&c);
    http_reply_free(&h);
    http_reply_free(&r);
    fixture_stop(&fx);
}

static void test_fixed_later_starts(void)
{
    fresh("qs-fixed");
    struct http_reply r;
    CU_ASSERT_EQUAL_FATAL(req("POST", "/negotiations", offer("a"), &r), 201);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:CounterOffer"), 3);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:CounterOffer/co:Component[co:Site='a']"), 3);
    CU_ASSERT_EQUAL(xml_count(r.body, "//co:Why[contains(., 'placement')]"), 0);
    http_reply_free(&r);
    fixture_stop(&fx);
}

static const struct acc_test_case tests[] = {
    {"site choices: options, hold, commit", test_site_choices},
    {"fixed offer: later starts only", test_fixed_later_starts},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"quote_sites_http", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
