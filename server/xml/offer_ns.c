/* offer_ns.c - every namespace name of an offer can be signed.
 *
 * The agreement copies the offer, foreign elements and attributes with
 * their namespaces included, and is signed over its exclusive XML
 * canonical form.  Canonicalisation refuses relative namespace names
 * (deprecated by Namespaces in XML since 1999); newer libxml2 also refuses
 * absolute ones without a host, other than URNs.  An offer that holds such
 * a name anywhere is refused here, with the name, before anything is
 * stored or booked: accepted, it would have been booked and then its
 * agreement could not have been issued. */
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
