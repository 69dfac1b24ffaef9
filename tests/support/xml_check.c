/* SPDX-License-Identifier: Apache-2.0 */
/* xml_check.c - the helpers of test_xml's parts (see xml_check.h). */
#include "xml_check.h"

#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "xml_internal.h"

char *slurp_case(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", OFFERS, name);
    char *s = acc_test_slurp(path, len);
    if (!s)
        fprintf(stderr, "cannot read %s\n", path);
    return s;
}

acc_err parse_case(const char *name, struct acc_offer *o, struct acc_error *err)
{
    size_t len;
    char *data = slurp_case(name, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    acc_err rc = acc_xml_parse_offer(data, len, NULL, o, err);
    free(data);
    return rc;
}

bool is_empty_offer(const struct acc_offer *o)
{
    static const struct acc_offer zero;
    return memcmp(o, &zero, sizeof zero) == 0;
}

bool valid(const struct acc_buf *b)
{
    struct acc_error e = {0};
    const char *s = acc_buf_str(b);
    if (!s)
        return false;
    if (strncmp(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 38) != 0) {
        fprintf(stderr, "no XML declaration:\n%s\n", s);
        return false;
    }
    if (getenv("ACC_TEST_DUMP")) /* to look at the documents */
        printf("\n%s", s);
    if (acc_xml_validate_mem(s, b->len, &e) != ACC_OK) {
        fprintf(stderr, "not valid: %s\n%s\n", e.msg, s);
        return false;
    }
    return true;
}

xmlDocPtr read_doc(const struct acc_buf *b)
{
    return xmlReadMemory(b->data, (int)b->len, NULL, NULL, XML_PARSE_NONET);
}

xmlNode *find(xmlNode *n, const char *ns, const char *name)
{
    for (; n; n = n->next) {
        if (acc_xml_is(n, ns, name))
            return n;
        xmlNode *f = find(n->children, ns, name);
        if (f)
            return f;
    }
    return NULL;
}

bool content_is(xmlNode *n, const char *want)
{
    if (!n)
        return false;
    xmlChar *c = xmlNodeGetContent(n);
    bool eq = c && strcmp((const char *)c, want) == 0;
    if (!eq)
        fprintf(stderr, "content '%s', expected '%s'\n", c ? (const char *)c : "(null)", want);
    xmlFree(c);
    return eq;
}

bool prop_is(xmlNode *n, const char *ns, const char *name, const char *want)
{
    if (!n)
        return false;
    xmlChar *c = xmlGetNsProp(n, BAD_CAST name, BAD_CAST ns);
    bool eq = c && strcmp((const char *)c, want) == 0;
    if (!eq)
        fprintf(stderr, "%s='%s', expected '%s'\n", name, c ? (const char *)c : "(null)", want);
    xmlFree(c);
    return eq;
}

int count_lines(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}
