/* SPDX-License-Identifier: Apache-2.0 */
/* http_client.c - the tests' requests go through the client library
 * (client/client.h), as accordctl's do; the XML helpers are the tests' own. */
#include "http_client.h"

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "strutil.h"

int http_do(const char *method, const char *url, const char *body, size_t len,
            const char *const *headers, struct http_reply *out)
{
    /* A body says what it is, as accordctl's do (accordd refuses an untyped
     * one that would change something); a test that sends another type or
     * none names its own headers. */
    static const char *const xml[] = {"Content-Type: application/xml", NULL};
    if (body && len && !headers)
        headers = xml;
    struct acc_client_request rq = {
        .method = method, .url = url, .body = body, .len = len, .headers = headers, .timeout = 60};
    struct acc_client_reply r;
    char why[256] = "";
    int rc = acc_client_do(&rq, &r, why, sizeof why);
    if (rc) /* a test that fails on it says why */
        fprintf(stderr, "http_do: %s %s: %s\n", method, url, why);
    *out = (struct http_reply){
        .status = r.status, .body = r.body, .len = r.len, .replayed = r.replayed};
    acc_strlcpy(out->location, r.location, sizeof out->location);
    acc_strlcpy(out->content_type, r.content_type, sizeof out->content_type);
    return rc;
}

void http_reply_free(struct http_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

static xmlXPathObjectPtr eval(const char *doc, const char *xpath, xmlDocPtr *d)
{
    *d = xmlReadMemory(doc, (int)strlen(doc), "reply.xml", NULL, XML_PARSE_NONET);
    if (!*d)
        return NULL;
    xmlXPathContextPtr x = xmlXPathNewContext(*d);
    xmlXPathRegisterNs(x, BAD_CAST "wsag",
                       BAD_CAST "http://schemas.ggf.org/graap/2007/03/ws-agreement");
    xmlXPathRegisterNs(x, BAD_CAST "co", BAD_CAST "urn:accord:coalloc:1");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, x);
    xmlXPathFreeContext(x);
    return o;
}

char *xml_get(const char *doc, const char *xpath)
{
    xmlDocPtr d;
    xmlXPathObjectPtr o = eval(doc, xpath, &d);
    char *s = NULL;
    if (o && o->nodesetval && o->nodesetval->nodeNr > 0) {
        xmlChar *v = xmlNodeGetContent(o->nodesetval->nodeTab[0]);
        s = strdup((const char *)v);
        xmlFree(v);
    }
    xmlXPathFreeObject(o);
    xmlFreeDoc(d);
    return s;
}

int xml_count(const char *doc, const char *xpath)
{
    xmlDocPtr d;
    xmlXPathObjectPtr o = eval(doc, xpath, &d);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlFreeDoc(d);
    return n;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return p;
}
