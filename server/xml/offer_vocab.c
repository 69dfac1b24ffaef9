/* SPDX-License-Identifier: Apache-2.0 */
/* offer_vocab.c - what vocabulary a wsag:ServiceDescriptionTerm may hold,
 * checked before the schemas.
 *
 * ws-agreement.xsd lets a ServiceDescriptionTerm hold one element of any
 * other namespace, declared (a strict wildcard).  For anything else
 * libxml2 only says "No matching global element declaration available, but
 * demanded by the strict wildcard", which tells a WS-Agreement client
 * neither what was wrong nor what to write instead.  So before validation
 * every term's element, and inside the WSAG4J vocabulary every element
 * below it, is looked up here by namespace and name: one that Accord does
 * not accept gets a fault naming it, its namespace, where it stands and
 * what Accord expects there.  Order, counts and types are left to the
 * schemas (coalloc.xsd, jsdl.xsd, jsdl-posix.xsd, wsag4j-scheduling.xsd),
 * meaning to offer_terms.c and offer_wsag4j.c.
 */
#include <stdio.h>
#include <string.h>

#include "offer_internal.h"

static const struct {
    const char *ns, *prefix;
} known_ns[] = {
    {ACC_NS_CO, "co"},         {ACC_NS_WSAG, "wsag"},
    {ACC_NS_JSDL, "jsdl"},     {ACC_NS_JSDL_POSIX, "jsdl-posix"},
    {ACC_NS_WSAG4J, "wsag4j"},
};

/* What a term may be: Accord's terms and WSAG4J's two. */
static const char *const term_elements[] = {
    "co:Schedule",
    "co:Component",
    "co:Flexible",
    "co:Total",
    "co:Link",
    "co:Launch",
    "co:Negotiation",
    "jsdl:JobDefinition",
    "wsag4j:TimeConstraint",
};

/* Accord's own elements that are not offer terms: declared, so they pass
 * the schema, and offer_terms.c says they do not belong in an offer. */
static const char *const accord_documents[] = {
    "co:Allocation",       "co:AgreementStatus", "co:Job",  "co:AgreementList",
    "co:NegotiationTrace", "co:Sites",           "co:Site", "co:Preview",
    "co:Templates",        "co:Fault",
};

#define EXPECTED_TERMS                                                           \
    "a wsag:ServiceDescriptionTerm holds one Accord term (namespace " ACC_NS_CO  \
    ": co:Schedule, co:Component, co:Flexible, co:Total, co:Link, co:Launch or " \
    "co:Negotiation) or, for a single-site reservation in WSAG4J's vocabulary, " \
    "jsdl:JobDefinition (namespace " ACC_NS_JSDL                                 \
    ") or wsag4j:TimeConstraint (namespace " ACC_NS_WSAG4J "); GET /templates shows both"

/* Below a WSAG4J element, the children Accord maps (a leaf has none). */
static const struct {
    const char *parent;
    const char *children[5];
    const char *why; /* appended to the fault; NULL: nothing to add */
} tree[] = {
    {"jsdl:JobDefinition", {"jsdl:JobDescription"}, NULL},
    {"jsdl:JobDescription",
     {"jsdl:JobIdentification", "jsdl:Application", "jsdl:Resources"},
     "data staging and the other parts of a JSDL job have no counterpart in a reservation"},
    {"jsdl:JobIdentification", {"jsdl:JobName", "jsdl:Description", "jsdl:JobProject"}, NULL},
    {"jsdl:Application",
     {"jsdl:ApplicationName", "jsdl:ApplicationVersion", "jsdl:Description",
      "jsdl-posix:POSIXApplication"},
     NULL},
    {"jsdl-posix:POSIXApplication",
     {"jsdl-posix:Executable", "jsdl-posix:Argument"},
     "the executable and its arguments become co:Executable and co:Argument; Accord starts "
     "no job with files, limits or an environment of its own"},
    {"jsdl:Resources",
     {"jsdl:CandidateHosts", "jsdl:IndividualCPUCount", "jsdl:TotalCPUCount",
      "jsdl:TotalResourceCount"},
     "Accord reserves whole nodes of a site for a time: the site, the node count and the "
     "processes per node are all that map"},
    {"jsdl:CandidateHosts", {"jsdl:HostName"}, NULL},
    {"jsdl:IndividualCPUCount", {"jsdl:Exact"}, "a reservation has one size, not a range"},
    {"jsdl:TotalCPUCount", {"jsdl:Exact"}, "a reservation has one size, not a range"},
    {"jsdl:TotalResourceCount", {"jsdl:Exact"}, "a reservation has one size, not a range"},
    {"wsag4j:TimeConstraint", {"wsag4j:StartTime", "wsag4j:EndTime", "wsag4j:Duration"}, NULL},
};

/* "prefix:name" for a known namespace, else the document's own prefix (or
 * the bare name); *foreign_ns is NULL for a known namespace. */
static void qname(const xmlNode *n, char *out, size_t size, const char **foreign_ns)
{
    const char *ns = n->ns ? (const char *)n->ns->href : NULL;
    *foreign_ns = ns ? ns : "";
    for (size_t i = 0; ns && i < sizeof known_ns / sizeof known_ns[0]; i++)
        if (strcmp(ns, known_ns[i].ns) == 0) {
            snprintf(out, size, "%s:%.64s", known_ns[i].prefix, n->name);
            *foreign_ns = NULL;
            return;
        }
    if (n->ns && n->ns->prefix)
        snprintf(out, size, "%.32s:%.64s", n->ns->prefix, n->name);
    else
        snprintf(out, size, "%.64s", n->name);
}

static bool listed(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n && list[i]; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

/* The fault: the element, its namespace, and rest (what Accord expects). */
static acc_err refuse(const xmlNode *n, const char *term, const char *what, const char *rest,
                      struct acc_error *err)
{
    const char *ns = n->ns && n->ns->href ? (const char *)n->ns->href : "none";
    return acc_error_set(err, ACC_ERR_SCHEMA,
                         "line %ld: term '%.64s': unsupported vocabulary: %s (namespace %.160s) %s",
                         xmlGetLineNo(n), term, what, ns, rest);
}

/* Every element below the WSAG4J element n (named name) is one Accord maps. */
static acc_err check_tree(const xmlNode *n, const char *name, const char *term,
                          struct acc_error *err)
{
    size_t row = 0;
    while (row < sizeof tree / sizeof tree[0] && strcmp(tree[row].parent, name) != 0)
        row++;
    for (xmlNode *c = offer_first_el(n); c; c = offer_next_el(c)) {
        char child[200], rest[700];
        const char *foreign_ns; /* the message names the namespace either way */
        qname(c, child, sizeof child, &foreign_ns);
        if (row < sizeof tree / sizeof tree[0] && listed(child, tree[row].children, 5)) {
            acc_err rc = check_tree(c, child, term, err);
            if (rc)
                return rc;
            continue;
        }
        if (row == sizeof tree / sizeof tree[0]) {
            snprintf(rest, sizeof rest, "is not supported inside %s, which holds only a value",
                     name);
        } else {
            size_t k = 0;
            int len = snprintf(rest, sizeof rest, "is not supported inside %s: Accord maps ", name);
            for (; k < 5 && tree[row].children[k] && len > 0 && (size_t)len < sizeof rest; k++)
                len += snprintf(rest + len, sizeof rest - (size_t)len, "%s%s",
                                k == 0                                   ? ""
                                : k + 1 < 5 && tree[row].children[k + 1] ? ", "
                                                                         : " and ",
                                tree[row].children[k]);
            if (len > 0 && (size_t)len < sizeof rest)
                snprintf(rest + len, sizeof rest - (size_t)len, " there%s%s (docs/documents.md)",
                         tree[row].why ? ": " : "", tree[row].why ? tree[row].why : "");
        }
        return refuse(c, term, child, rest, err);
    }
    return ACC_OK;
}

static acc_err check_term(const xmlNode *sdt, struct acc_error *err)
{
    xmlChar *name = xmlGetNsProp(sdt, BAD_CAST "Name", BAD_CAST ACC_NS_WSAG);
    const char *term = name ? (const char *)name : "(unnamed)";
    acc_err rc = ACC_OK;

    for (xmlNode *c = offer_first_el(sdt); c && !rc; c = offer_next_el(c)) {
        char el[200];
        const char *foreign_ns;
        qname(c, el, sizeof el, &foreign_ns);
        if (listed(el, accord_documents, sizeof accord_documents / sizeof accord_documents[0]))
            continue;
        if (!listed(el, term_elements, sizeof term_elements / sizeof term_elements[0])) {
            rc = refuse(c, term, el,
                        foreign_ns ? "is not a term Accord understands: " EXPECTED_TERMS
                                   : "is not an offer term: " EXPECTED_TERMS,
                        err);
            break;
        }
        if (!offer_is_co(c, (const char *)c->name))
            rc = check_tree(c, el, term, err);
    }
    xmlFree(name);
    return rc;
}

acc_err offer_vocab_check(const xmlNode *root, struct acc_error *err)
{
    for (xmlNode *c = offer_first_el(root); c; c = offer_next_el(c)) {
        /* Terms sit in wsag: elements only (wsag:All, wsag:ExactlyOne, ...). */
        if (!c->ns || strcmp((const char *)c->ns->href, ACC_NS_WSAG) != 0)
            continue;
        acc_err rc = offer_is_wsag(c, "ServiceDescriptionTerm") ? check_term(c, err)
                                                                : offer_vocab_check(c, err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}
