/* SPDX-License-Identifier: Apache-2.0 */
/* proto_parse.c - the guarded parser of protocol documents: the one of
 * lib/xmlguard (the same defences as offers: size, NUL bytes and attribute
 * counts before parsing, no DTD, declaration or entity, no network, UTF-8
 * whatever is declared, depth and element count bounded) under the
 * protocol's limits, then the document element checked.  libxml2's first
 * message is kept per call, never through its global handlers.
 */
#include <libxml/parser.h>
#include <stdio.h>
#include <string.h>

#include "../xmlguard/xmlguard.h"
#include "proto_internal.h"

struct first_error {
    char text[400];
    int line;
};

static void on_error(void *arg, xmlErrorPtr e)
{
    struct first_error *f = arg;
    if (!e || e->level == XML_ERR_WARNING || f->text[0])
        return;
    snprintf(f->text, sizeof f->text, "%s", e->message ? e->message : "not well-formed");
    size_t n = strlen(f->text);
    while (n && (f->text[n - 1] == '\n' || f->text[n - 1] == ' '))
        f->text[--n] = '\0';
    f->line = e->line;
}

static const struct acc_xmlguard_limits limits = {
    ACC_PROTO_BODY_MAX,  ACC_PROTO_MAX_DEPTH,     ACC_PROTO_MAX_ELEMENTS,
    ACC_PROTO_MAX_ATTRS, ACC_PROTO_MAX_ALL_ATTRS,
};

acc_err acc_proto_parse(const char *body, size_t len, const char *root, xmlDocPtr *doc,
                        struct acc_error *err)
{
    struct first_error first = {.line = 0};
    xmlDocPtr d = NULL;
    acc_err rc = ACC_OK;

    *doc = NULL;
    if (!body && len)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "no document");
    rc = acc_xmlguard_read(body, len, &limits, NULL, XML_PARSE_NOERROR, on_error, &first, &d, err);
    if (rc)
        return rc;
    if (!d)
        return acc_error_set(err, ACC_ERR_MALFORMED, "line %d: %s", first.line,
                             first.text[0] ? first.text : "the document is not well-formed XML");
    xmlNodePtr top = xmlDocGetRootElement(d);
    if (!top->ns || !top->ns->href || strcmp((const char *)top->ns->href, ACC_PROTO_NS) != 0) {
        rc = acc_proto_fail(top, ACC_ERR_BAD_REQUEST, err,
                            "the document element %s is not in the namespace " ACC_PROTO_NS,
                            (const char *)top->name);
        goto out;
    }
    if (root && strcmp((const char *)top->name, root) != 0) {
        rc = acc_proto_fail(top, ACC_ERR_BAD_REQUEST, err, "expected a %s document, not %s", root,
                            (const char *)top->name);
        goto out;
    }
    *doc = d;
    d = NULL;
out:
    xmlFreeDoc(d);
    return rc;
}

acc_err acc_proto_open(const char *body, size_t len, const char *root, const char *const *allowed,
                       xmlDocPtr *doc, xmlNode **root_out, struct acc_error *err)
{
    *root_out = NULL;
    acc_err rc = acc_proto_parse(body, len, root, doc, err);
    if (rc)
        return rc;
    xmlNode *top = xmlDocGetRootElement(*doc);
    rc = acc_proto_attrs(top, allowed, err);
    if (rc) {
        xmlFreeDoc(*doc);
        *doc = NULL;
        return rc;
    }
    *root_out = top;
    return ACC_OK;
}
