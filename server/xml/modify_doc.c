/* SPDX-License-Identifier: Apache-2.0 */
/* modify_doc.c - the co:Modification document of POST
 * /agreements/{id}/modify (docs/documents.md "Modification"):
 *
 *   <co:Modification xmlns:co="urn:accord:coalloc:1">
 *     <co:Start>2030-01-01T10:00:00Z</co:Start>        at most one
 *     <co:End>2030-01-01T12:00:00Z</co:End>            at most one
 *     <co:Nodes component="A">4</co:Nodes>             any, one per component
 *     <co:Bandwidth link="L">200</co:Bandwidth>        any, one per link
 *   </co:Modification>
 *
 * Read with the offer parser's hardening (acc_xml_read: no DTD, no
 * entities, size, depth and attribute limits); anything else is refused
 * with the element's line. */
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "../../lib/common/strutil.h"
#include "xml_internal.h"

static acc_err read_pair(xmlNode *n, const char *attr, const char *text, char name[64],
                         int64_t *value, struct acc_error *err)
{
    xmlChar *a = xmlGetProp(n, (const xmlChar *)attr);
    acc_err rc = ACC_OK;
    if (!a || !a[0] || strlen((const char *)a) >= 64)
        rc = acc_error_set(err, ACC_ERR_INVALID,
                           "line %ld: co:%s needs a %s attribute (1 to 63 "
                           "characters)",
                           xmlGetLineNo(n), (const char *)n->name, attr);
    else if (!(rc = acc_parse_i64(text, 1, INT64_C(1) << 40, value, err)))
        acc_strlcpy(name, (const char *)a, 64);
    else
        acc_error_prefix(err, "line %ld: co:%s", xmlGetLineNo(n), (const char *)n->name);
    xmlFree(a);
    return rc;
}

static bool seen_name(const char (*names)[64], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

acc_err acc_xml_parse_modification(const char *data, size_t len, const struct acc_xml_limits *lim,
                                   struct acc_modification *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    xmlDocPtr doc = NULL;
    acc_err rc = acc_xml_read(data, len, lim, &doc, err);
    if (rc)
        return rc;
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !acc_xml_is(root, ACC_NS_CO, "Modification")) {
        rc = acc_error_set(err, ACC_ERR_SCHEMA,
                           "line %ld: the document must be a co:Modification (namespace %s)",
                           root ? xmlGetLineNo(root) : 1L, ACC_NS_CO);
        goto out;
    }
    for (xmlNode *n = root->children; n && !rc; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        xmlChar *text = xmlNodeGetContent(n);
        const char *t = text ? (const char *)text : "";
        char(*names)[64] = NULL;
        size_t *count = NULL;
        if (acc_xml_is(n, ACC_NS_CO, "Start") || acc_xml_is(n, ACC_NS_CO, "End")) {
            acc_time *v = acc_xml_is(n, ACC_NS_CO, "Start") ? &out->start : &out->end;
            if (*v)
                rc = acc_error_set(err, ACC_ERR_SCHEMA, "line %ld: co:%s given twice",
                                   xmlGetLineNo(n), (const char *)n->name);
            else if ((rc = acc_time_parse(t, v, err)))
                acc_error_prefix(err, "line %ld: co:%s", xmlGetLineNo(n), (const char *)n->name);
        } else if (acc_xml_is(n, ACC_NS_CO, "Nodes") || acc_xml_is(n, ACC_NS_CO, "Bandwidth")) {
            bool nodes = acc_xml_is(n, ACC_NS_CO, "Nodes");
            count = nodes ? &out->n_nodes : &out->n_bandwidth;
            if (*count == ACC_MODIFY_MAX) {
                rc = acc_error_set(err, ACC_ERR_INVALID, "line %ld: more than %d co:%s",
                                   xmlGetLineNo(n), ACC_MODIFY_MAX, (const char *)n->name);
            } else {
                char name[64];
                int64_t v = 0;
                rc = read_pair(n, nodes ? "component" : "link", t, name, &v, err);
                names = malloc(ACC_MODIFY_MAX * sizeof *names);
                if (!rc && !names)
                    rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                for (size_t i = 0; !rc && i < *count; i++)
                    acc_strlcpy(names[i], nodes ? out->nodes[i].name : out->bandwidth[i].name, 64);
                if (!rc && seen_name((const char(*)[64])names, *count, name))
                    rc = acc_error_set(err, ACC_ERR_INVALID, "line %ld: %s '%s' given twice",
                                       xmlGetLineNo(n), nodes ? "component" : "link", name);
                if (!rc && nodes) {
                    acc_strlcpy(out->nodes[*count].name, name, 64);
                    out->nodes[(*count)++].value = v;
                } else if (!rc) {
                    acc_strlcpy(out->bandwidth[*count].name, name, 64);
                    out->bandwidth[(*count)++].value = v;
                }
                free(names);
            }
        } else {
            rc = acc_error_set(err, ACC_ERR_SCHEMA,
                               "line %ld: co:Modification takes co:Start, co:End, co:Nodes and "
                               "co:Bandwidth, not %s",
                               xmlGetLineNo(n), (const char *)n->name);
        }
        xmlFree(text);
    }
    if (!rc && !out->start && !out->end && !out->n_nodes && !out->n_bandwidth)
        rc = acc_error_set(err, ACC_ERR_INVALID, "the co:Modification changes nothing");
out:
    xmlFreeDoc(doc);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}
