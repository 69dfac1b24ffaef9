/* SPDX-License-Identifier: Apache-2.0 */
/* offer_ns.c - every namespace name of an offer can be signed, and nothing
 * in it is active content.
 *
 * The agreement copies the offer, foreign elements and attributes with
 * their namespaces included, and is signed over its exclusive XML
 * canonical form.  Canonicalisation refuses relative namespace names
 * (deprecated by Namespaces in XML since 1999); newer libxml2 also refuses
 * absolute ones without a host, other than URNs.  An offer that holds such
 * a name anywhere is refused here, with the name, before anything is
 * stored or booked: accepted, it would have been booked and then its
 * agreement could not have been issued.
 *
 * The copy is served as an XML document, which a browser that opens it
 * (an agreement's link, shared) renders: an XHTML script or img with
 * onerror, an SVG script, run in accordd's origin with the rights of
 * whoever opened it.  Every answer carries a Content-Security-Policy that
 * runs nothing (lib/httpd), and besides, no offer may carry what a browser
 * or a signature checker acts on: elements or attributes in the XHTML,
 * SVG, MathML, XSLT, XLink or XInclude namespaces, event handler
 * attributes (on...), or an XML signature (the agreement's own enveloped
 * signature is the only one; a decoy would be what `xmlsec1 --verify`
 * checks).  XSD 1.0 cannot say "any namespace but these", so the check is
 * here, and ws-agreement.xsd says so beside its wildcards. */
#include "offer_internal.h"

#include <libxml/c14n.h>
#include <libxml/uri.h>
#include <stdio.h>
#include <string.h>

/* Accord's own vocabularies: absolute, nothing to ask. */
static bool known(const char *href)
{
    static const char *const ns[] = {ACC_NS_WSAG, ACC_NS_CO, ACC_NS_JSDL, ACC_NS_JSDL_POSIX,
                                     ACC_NS_WSAG4J};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        if (strcmp(href, ns[i]) == 0)
            return true;
    return false;
}

/* Whether the canonicalisation of this libxml2 takes an element in
 * namespace href (on a document of that one element): 1 yes, 0 no, -1 out
 * of memory.  Its rules differ between versions; this asks the one that
 * will sign. */
static int c14n_takes(const xmlChar *href)
{
    int ok = -1;
    xmlChar *out = NULL;
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr el = doc ? xmlNewDocNode(doc, NULL, BAD_CAST "e", NULL) : NULL;
    if (el) {
        xmlDocSetRootElement(doc, el);
        xmlNsPtr ns = xmlNewNs(el, href, BAD_CAST "p");
        if (ns) {
            xmlSetNs(el, ns);
            ok = xmlC14NDocDumpMemory(doc, NULL, XML_C14N_EXCLUSIVE_1_0, NULL, 0, &out) >= 0;
        }
    }
    xmlFree(out);
    xmlFreeDoc(doc);
    return ok;
}

/* One declaration on element n: ACC_OK, or the fault naming it. */
static acc_err check_ns(const xmlNode *n, const xmlNs *ns, struct acc_error *err)
{
    const char *href = (const char *)ns->href;
    /* xmlns="" undeclares the default namespace: there is no name. */
    if (!href || !*href || known(href))
        return ACC_OK;
    char decl[80];
    snprintf(decl, sizeof decl, "xmlns%s%.64s", ns->prefix ? ":" : "",
             ns->prefix ? (const char *)ns->prefix : "");
    const char *why = NULL;
    xmlURIPtr uri = xmlParseURI(href);
    if (!uri)
        why = "is not a URI";
    else if (!uri->scheme || !*uri->scheme)
        why = "is a relative URI reference (relative namespace names are deprecated)";
    xmlFreeURI(uri);
    if (!why) {
        int takes = c14n_takes(ns->href);
        if (takes < 0)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (!takes)
            why = "is refused by this libxml2's canonicalisation (it takes URNs and URIs "
                  "with a host)";
    }
    if (!why)
        return ACC_OK;
    return acc_error_set(err, ACC_ERR_INVALID,
                         "line %ld: %s: the namespace name '%.200s' %s; the agreement is signed "
                         "over its exclusive XML canonical form, which refuses it: use an "
                         "absolute URI such as urn:example:%s",
                         xmlGetLineNo(n), decl, href, why,
                         ns->prefix ? (const char *)ns->prefix : "ns");
}

/* Namespaces whose elements and attributes a browser, an XSLT processor
 * or a signature checker acts on. */
static const struct {
    const char *href, *what;
} active[] = {
    {"http://www.w3.org/1999/xhtml", "XHTML"},
    {"http://www.w3.org/2000/svg", "SVG"},
    {"http://www.w3.org/1998/Math/MathML", "MathML"},
    {"http://www.w3.org/1999/XSL/Transform", "XSLT"},
    {"http://www.w3.org/1999/xlink", "XLink"},
    {"http://www.w3.org/2001/XInclude", "XInclude"},
    {"http://www.w3.org/2000/09/xmldsig#", "XML-DSig"},
    {"http://www.w3.org/2009/xmldsig11#", "XML-DSig"},
};

/* Whether namespace ns is one of active[]: its name, or NULL. */
static const char *active_ns(const xmlNs *ns)
{
    if (!ns || !ns->href)
        return NULL;
    for (size_t i = 0; i < sizeof active / sizeof active[0]; i++)
        if (strcmp((const char *)ns->href, active[i].href) == 0)
            return active[i].what;
    return NULL;
}

/* An event handler's form: "on" and letters (onload, onerror, onclick). */
static bool event_handler(const xmlChar *name)
{
    if ((name[0] | 0x20) != 'o' || (name[1] | 0x20) != 'n' || !name[2])
        return false;
    for (const xmlChar *p = name + 2; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return false;
    return true;
}

static acc_err refuse_active(const xmlNode *n, const char *kind, const xmlNs *ns,
                             const xmlChar *name, const char *what, struct acc_error *err)
{
    const char *p = ns && ns->prefix ? (const char *)ns->prefix : "";
    if (!what)
        return acc_error_set(err, ACC_ERR_SCHEMA,
                             "line %ld: the attribute %.64s is an event handler's: an offer "
                             "carries no attribute named on... (a browser that opens the "
                             "agreement would run it)",
                             xmlGetLineNo(n), (const char *)name);
    if (strcmp(what, "XML-DSig") == 0)
        return acc_error_set(err, ACC_ERR_SCHEMA,
                             "line %ld: %s %s%s%.64s (namespace %s): an offer carries no XML "
                             "signature; the agreement Accord issues is signed by Accord, and its "
                             "one signature is the one to verify",
                             xmlGetLineNo(n), kind, p, *p ? ":" : "", (const char *)name,
                             (const char *)ns->href);
    return acc_error_set(err, ACC_ERR_SCHEMA,
                         "line %ld: %s %s%s%.64s is in the %s namespace (%s): an offer carries "
                         "no %s, which a browser that opens the agreement would act on; foreign "
                         "elements must be of another vocabulary",
                         xmlGetLineNo(n), kind, p, *p ? ":" : "", (const char *)name, what,
                         (const char *)ns->href, what);
}

/* Element n or one of its attributes is active content: the fault. */
static acc_err check_active(const xmlNode *n, struct acc_error *err)
{
    const char *what = active_ns(n->ns);
    if (what)
        return refuse_active(n, "the element", n->ns, n->name, what, err);
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        if ((what = active_ns(a->ns)) != NULL)
            return refuse_active(n, "the attribute", a->ns, a->name, what, err);
        if (event_handler(a->name))
            return refuse_active(n, "the attribute", a->ns, a->name, NULL, err);
    }
    return ACC_OK;
}

acc_err offer_namespaces(const xmlNode *root, struct acc_error *err)
{
    /* Depth first without recursion: the depth is bounded, the stack need
     * not be. */
    const xmlNode *n = root;
    while (n) {
        if (n->type == XML_ELEMENT_NODE) {
            for (const xmlNs *ns = n->nsDef; ns; ns = ns->next) {
                acc_err rc = check_ns(n, ns, err);
                if (rc)
                    return rc;
            }
            acc_err rc = check_active(n, err);
            if (rc)
                return rc;
        }
        if (n->type == XML_ELEMENT_NODE && n->children) {
            n = n->children;
            continue;
        }
        while (n != root && !n->next)
            n = n->parent;
        n = n == root ? NULL : n->next;
    }
    return ACC_OK;
}
