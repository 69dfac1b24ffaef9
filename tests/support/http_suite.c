/* SPDX-License-Identifier: Apache-2.0 */
/* http_suite.c - the accordd of test_http's parts and requests to it (see
 * http_suite.h). */
#include "http_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct fixture fx;
char db_path[256];

const char *const XML_HDR[] = {"Content-Type: application/xml", NULL};
const char *const JSON_ACCEPT[] = {"Accept: application/json", NULL};

char *hs_url(const char *path)
{
    static char buf[1024]; /* base (64) + the longest path a test builds (512) */
    snprintf(buf, sizeof buf, "%s%s", fx.base, path);
    return buf;
}

long hs_get(const char *path, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("GET", hs_url(path), NULL, 0, NULL, r), 0);
    return r->status;
}

long hs_post(const char *path, const char *body, struct http_reply *r)
{
    CU_ASSERT_EQUAL_FATAL(http_do("POST", hs_url(path), body, body ? strlen(body) : 0, XML_HDR, r),
                          0);
    return r->status;
}

char *hs_offer(const char *name, const char *schedule, const char *const *comps, size_t n,
               int bandwidth)
{
    static char buf[16384];
    size_t used = (size_t)snprintf(
        buf, sizeof buf,
        "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
        "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>%s</wsag:Name><wsag:Context>"
        "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
        "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
        "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
        "wsag:ServiceName=\"metajob\"><co:Schedule>%s</co:Schedule>"
        "</wsag:ServiceDescriptionTerm>",
        name, schedule);
    for (size_t i = 0; i < n; i++) {
        char site[64];
        int nodes;
        sscanf(comps[i], "%63[^:]:%d", site, &nodes);
        used += (size_t)snprintf(buf + used, sizeof buf - used,
                                 "<wsag:ServiceDescriptionTerm wsag:Name=\"c%zu\" "
                                 "wsag:ServiceName=\"metajob\"><co:Component><co:Site>%s</co:Site>"
                                 "<co:Nodes>%d</co:Nodes><co:Executable>/bin/true</co:Executable>"
                                 "</co:Component></wsag:ServiceDescriptionTerm>",
                                 i, site, nodes);
    }
    for (size_t i = 0; bandwidth && i + 1 < n; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used,
                                 "<wsag:ServiceDescriptionTerm wsag:Name=\"l%zu\" "
                                 "wsag:ServiceName=\"metajob\"><co:Link><co:Between>c%zu"
                                 "</co:Between><co:And>c%zu</co:And><co:Bandwidth>%d"
                                 "</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm>",
                                 i, i, i + 1, bandwidth);
    snprintf(buf + used, sizeof buf - used, "</wsag:All></wsag:Terms></wsag:AgreementOffer>");
    return buf;
}

char *hs_id_of(const struct http_reply *r)
{
    const char *slash = strrchr(r->location, '/');
    return slash ? strdup(slash + 1) : NULL;
}

int hs_count_agreements(void)
{
    struct http_reply r;
    hs_get("/agreements?limit=1000", &r);
    int n = xml_count(r.body, "/co:AgreementList/co:AgreementRef");
    http_reply_free(&r);
    return n;
}

char *hs_bookings(const char *adapter)
{
    char path[128];
    snprintf(path, sizeof path, "/adapters/%s/control/bookings", adapter);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", hs_url(path), "", 0, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    char *b = r.body;
    r.body = NULL;
    http_reply_free(&r);
    return b;
}

int64_t hs_peak(const char *adapter, const char *resource, const char *from, const char *until,
                int64_t *capacity)
{
    char path[512];
    snprintf(path, sizeof path, "/adapters/%s/control/peak?resource=%s&from=%s&until=%s", adapter,
             resource, from, until);
    struct http_reply r;
    CU_ASSERT_EQUAL(http_do("POST", hs_url(path), "", 0, NULL, &r), 0);
    long long p = -1, c = -1;
    char name[64];
    if (r.body)
        sscanf(r.body, "%63s peak %lld capacity %lld", name, &p, &c);
    http_reply_free(&r);
    *capacity = c;
    return p;
}

int http_suite_setup(void)
{
    if (!acc_test_db("http", db_path, sizeof db_path))
        return 1;
    return fixture_start(&fx, NULL, db_path);
}

int http_suite_teardown(void)
{
    fixture_stop(&fx);
    return 0;
}
