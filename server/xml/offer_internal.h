/* SPDX-License-Identifier: Apache-2.0 */
/* offer_internal.h - what the files that read an offer share; no other file
 * includes it.
 *
 *   offer.c        the entry: the document's root, wsag:Name, wsag:Context
 *                  and wsag:Terms, then the links' ends resolved
 *   offer_terms.c  one term: a wsag:GuaranteeTerm, or a
 *                  wsag:ServiceDescriptionTerm and its co: element
 *                  (Schedule, Component, Link, Launch, Negotiation)
 *   offer_wsag4j.c a term in WSAG4J's vocabulary: jsdl:JobDefinition or
 *                  wsag4j:TimeConstraint, mapped onto a component or the
 *                  schedule
 *   offer_vocab.c  before the schemas: every term's vocabulary is one
 *                  Accord accepts, else a fault that names it
 *   offer_read.c   one value out of the tree (a text, an attribute, a number,
 *                  a time) within the limits, and the messages for errors
 *   offer_ns.c     every namespace name can go into a signed agreement
 *
 * By the time any of them runs the document is well-formed, free of DTDs and
 * valid against the schemas (schema.c), so element order and types are
 * known.  Internal names start with offer_. */
#ifndef ACC_OFFER_INTERNAL_H
#define ACC_OFFER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "xml_internal.h"

/* Bounds of an offer's terms, whichever vocabulary writes them. */
#define MAX_COMPONENTS 64
#define MAX_ARGS       256
#define MAX_NAME       64 /* components, links, sites */
#define MAX_NODES      1000000
#define MAX_PPN        4096

struct offer_term_seen {
    char *name;
    long line;
    bool component;
};

/* A link as written; its ends are resolved once every component is known. */
struct offer_link_ends {
    char *between, *and_;
    long line;
};

struct offer_interp {
    struct acc_offer *o;
    struct acc_error *err;
    struct offer_term_seen *terms;
    size_t n_terms;
    struct offer_link_ends *ends; /* parallel to o->links */
    const char *schedule_term, *launch_term, *negotiation_term;
    const char *job_term; /* the jsdl:JobDefinition's, if any */
};

static inline xmlNode *offer_first_el(const xmlNode *n)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static inline xmlNode *offer_next_el(const xmlNode *n)
{
    for (xmlNode *c = n->next; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static inline bool offer_is_co(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_CO, name);
}

static inline bool offer_is_wsag(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_WSAG, name);
}

/* offer_read.c */

/* ACC_ERR_INVALID with the message, prefixed with n's line when n != NULL. */
acc_err offer_bad(struct offer_interp *in, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
acc_err offer_nomem(struct offer_interp *in);

/* The text content of n, trimmed unless keep_blanks, as a malloc'd string
 * of at most 4096 bytes; term (or NULL) names the term in the message. */
acc_err offer_text(struct offer_interp *in, const xmlNode *n, const char *term, bool keep_blanks,
                   char **out);
/* Like offer_text(), but an empty text counts as absent (*out NULL). */
acc_err offer_optional_text(struct offer_interp *in, const xmlNode *n, char **out);
/* An attribute as a malloc'd string; ns NULL for an unqualified one.
 * *out stays NULL when the attribute is absent. */
acc_err offer_attr(struct offer_interp *in, const xmlNode *n, const char *ns, const char *name,
                   char **out);
/* A whole number within [min, max] in term's co: element n. */
acc_err offer_number(struct offer_interp *in, const xmlNode *n, const char *term, int64_t min,
                     int64_t max, int64_t *out);
/* A decimal number in (0, max] in term's co: element n. */
acc_err offer_decimal(struct offer_interp *in, const xmlNode *n, const char *term, double max,
                      double *out);
/* A time in term's co: element n, or (term NULL) in the wsag: element n. */
acc_err offer_time(struct offer_interp *in, const xmlNode *n, const char *term, acc_time *out);
/* Grows v (of *n elements of size sz) by one zeroed element; NULL when out
 * of memory (v is left as it was). */
void *offer_push(void *v, size_t *n, size_t sz);

/* offer_terms.c */
acc_err offer_service_term(struct offer_interp *in, const xmlNode *n);
/* A component's executable from element e (what: its name in messages, such
 * as "co:Executable"), checked as mpiexec needs it; and one more argument,
 * as written (at most MAX_ARGS). */
acc_err offer_executable(struct offer_interp *in, const xmlNode *e, const char *term,
                         const char *what, struct acc_component *c);
acc_err offer_argument(struct offer_interp *in, const xmlNode *e, const char *term,
                       struct acc_component *c);
acc_err offer_guarantee_term(struct offer_interp *in, const xmlNode *n);
/* The checks of the time window once earliest, deadline and duration are
 * set (a co:Schedule or a wsag4j:TimeConstraint, n, in term). */
acc_err offer_window(struct offer_interp *in, const xmlNode *n, const char *term);

/* offer_wsag4j.c */
/* True for jsdl:JobDefinition and wsag4j:TimeConstraint. */
bool offer_wsag4j_is(const xmlNode *body);
/* The term's one element body, either of those two (its name recorded). */
acc_err offer_wsag4j_term(struct offer_interp *in, const xmlNode *body, const char *term);

/* offer_vocab.c */
/* ACC_ERR_SCHEMA naming the first element of a ServiceDescriptionTerm under
 * root (or below a WSAG4J term) that Accord does not accept, with its
 * namespace and what Accord expects instead. */
acc_err offer_vocab_check(const xmlNode *root, struct acc_error *err);

/* offer_ns.c */
/* ACC_ERR_INVALID naming the first namespace declared in the document that
 * the agreement's signature could not canonicalise (a relative URI
 * reference, or one this libxml2 refuses), with its line; ACC_ERR_SCHEMA
 * naming the first element or attribute that is active content (XHTML,
 * SVG, MathML, XSLT, XLink, XInclude, an event handler attribute) or an
 * XML signature. */
acc_err offer_namespaces(const xmlNode *root, struct acc_error *err);

#endif
