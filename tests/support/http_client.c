#include "http_client.h"

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct http_reply *r = arg;
    size_t add = size * n;
    char *p = realloc(r->body, r->len + add + 1);
    if (!p)
        return 0;
    memcpy(p + r->len, data, add);
    r->body = p;
    r->len += add;
    r->body[r->len] = '\0';
    return add;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct http_reply *r = arg;
    size_t len = size * n;
    char line[512];
    size_t k = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, data, k);
    line[k] = '\0';
    while (k && (line[k - 1] == '\r' || line[k - 1] == '\n'))
        line[--k] = '\0';
    if (strncasecmp(line, "Location: ", 10) == 0)
        acc_strlcpy(r->location, line + 10, sizeof r->location);
    else if (strncasecmp(line, "Content-Type: ", 14) == 0)
        acc_strlcpy(r->content_type, line + 14, sizeof r->content_type);
    else if (strncasecmp(line, "Idempotent-Replayed: true", 25) == 0)
        r->replayed = true;
    return len;
}

int http_do(const char *method, const char *url, const char *body, size_t len,
            const char *const *headers, struct http_reply *out)
{
    memset(out, 0, sizeof *out);
    out->body = calloc(1, 1);
    CURL *c = curl_easy_init();
    if (!c || !out->body)
        return -1;
    struct curl_slist *h = NULL;
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    if (h)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return rc == CURLE_OK ? 0 : -1;
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
