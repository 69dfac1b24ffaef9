/* SPDX-License-Identifier: Apache-2.0 */
/* xml.h - Accord's documents: the offer in, agreements and the rest out.
 *
 * Offers are parsed with libxml2 under strict limits: no DTD, no entity, no
 * network or file access ever (an external entity loader refuses everything
 * but the embedded schemas), bounded size, depth and element count.  A
 * well-formed offer is validated against schema/ws-agreement.xsd and
 * schema/coalloc.xsd (compiled in), then checked for meaning, and turned
 * into a struct acc_offer.  An xmlDoc never leaves this module.
 *
 * Output documents are written with libxml2's text writer (escaping is never
 * hand-made).  Every renderer appends one whole document to `out`.  The
 * shapes are documented in docs/documents.md and validate against the schemas.
 *
 * Namespaces: wsag = http://schemas.ggf.org/graap/2007/03/ws-agreement,
 *             co   = urn:accord:coalloc:1.
 */
#ifndef ACC_XML_H
#define ACC_XML_H

#include <stddef.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"
#include "../../lib/model/model.h"
#include "../view/view.h"

#define ACC_NS_WSAG "http://schemas.ggf.org/graap/2007/03/ws-agreement"
#define ACC_NS_CO   "urn:accord:coalloc:1"
/* WSAG4J's reservation vocabulary, accepted inside a ServiceDescriptionTerm
 * (offer_wsag4j.c; docs/documents.md). */
#define ACC_NS_JSDL       "http://schemas.ggf.org/jsdl/2005/11/jsdl"
#define ACC_NS_JSDL_POSIX "http://schemas.ggf.org/jsdl/2005/11/jsdl-posix"
#define ACC_NS_WSAG4J     "http://schemas.wsag4j.org/2009/07/wsag4j-scheduling-extensions"

/* Compiles the embedded schemas and installs the refusing entity loader.
 * Call once before any other function here, from one thread. */
acc_err acc_xml_init(struct acc_error *err);
void acc_xml_cleanup(void);

struct acc_xml_limits {
    size_t max_bytes;              /* larger documents: ACC_ERR_TOO_LARGE */
    unsigned max_depth;            /* deeper nesting: ACC_ERR_TOO_DEEP */
    unsigned max_elements;         /* more elements: ACC_ERR_TOO_LARGE */
    unsigned max_attributes;       /* more on one element: ACC_ERR_TOO_MANY_ATTRS */
    unsigned max_total_attributes; /* more in the document: ACC_ERR_TOO_MANY_ATTRS */
};

#define ACC_XML_LIMITS_DEFAULT            \
    {                                     \
        1024 * 1024, 32, 20000, 64, 20000 \
    }

/* Parses, validates and interprets an offer (UTF-8, whatever it declares).
 * A limit left at 0 in lim (or lim NULL) takes its default.
 *   ACC_ERR_MALFORMED  not well-formed ("line 3: ..."), or a NUL byte
 *   ACC_ERR_DTD        a DOCTYPE, entity declaration or entity reference
 *   ACC_ERR_TOO_LARGE / ACC_ERR_TOO_DEEP / ACC_ERR_TOO_MANY_ATTRS  over the
 *                      limits (attributes are counted before libxml2 reads
 *                      them: its duplicate check is quadratic)
 *   ACC_ERR_SCHEMA     schema violations, one line each with its line number
 *   ACC_ERR_INVALID    valid but meaningless: no or two Schedules, duplicate
 *                      or unknown component names, a link to itself, a
 *                      deadline before the earliest start, a duration longer
 *                      than the window, zero or negative values, a time
 *                      after 9999-12-31T23:59:59Z, an executable that is
 *                      neither an absolute path nor a plain program name...
 * Sites are not checked against the configuration here (the service does). */
acc_err acc_xml_parse_offer(const char *data, size_t len, const struct acc_xml_limits *lim,
                            struct acc_offer *out, struct acc_error *err);

/* wsag:Agreement: the offer's Name, Context and Terms (taken from
 * a->offer_xml) plus a ServiceDescriptionTerm "allocation" holding
 * co:Allocation (state, common start and end, per component the site,
 * nodes, reservation and local id, node names; per link the bandwidth and
 * reservation; the reasons of a rejection). */
/* A co:Modification document (docs/documents.md "Modification") into *out;
 * ACC_ERR_MALFORMED / ACC_ERR_SCHEMA / ACC_ERR_INVALID with the reason. */
acc_err acc_xml_parse_modification(const char *data, size_t len, const struct acc_xml_limits *lim,
                                   struct acc_modification *out, struct acc_error *err);

acc_err acc_xml_agreement(const struct acc_agreement *a, struct acc_buf *out,
                          struct acc_error *err);

/* co:AgreementStatus: wsag:AgreementState, one wsag:ServiceTermState per
 * term, one wsag:GuaranteeTermState per guarantee term. */
acc_err acc_xml_state(const struct acc_state_view *v, struct acc_buf *out, struct acc_error *err);

/* co:Job: the launch of an agreement and what became of its job. */
/* The quote document (co:Quote), POST /negotiations. */
acc_err acc_xml_quote(const struct acc_quote *q, struct acc_buf *out, struct acc_error *err);

acc_err acc_xml_run(const struct acc_run *r, struct acc_buf *out, struct acc_error *err);

/* co:AgreementList: one co:AgreementRef per agreement (no offers). */
acc_err acc_xml_list(const struct acc_agreement_list *l, struct acc_buf *out,
                     struct acc_error *err);

/* co:NegotiationTrace: every event in order. */
acc_err acc_xml_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out,
                      struct acc_error *err);

/* co:Sites (all), or co:Site for one site with the links that touch it
 * (only_site != NULL). */
acc_err acc_xml_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out,
                      struct acc_error *err);

/* co:Preview: the free frames. */
acc_err acc_xml_preview(const struct acc_preview_view *v, struct acc_buf *out,
                        struct acc_error *err);

/* co:Templates (names), or one wsag:Template with CreationConstraints that
 * list the configured sites and their sizes.  ACC_ERR_NOT_FOUND for an
 * unknown template name. */
acc_err acc_xml_templates(const struct acc_sites_view *v, struct acc_buf *out,
                          struct acc_error *err);
acc_err acc_xml_template(const char *name, const struct acc_sites_view *v, struct acc_buf *out,
                         struct acc_error *err);

/* co:Fault code="Symbol" status="409": the first line of msg as
 * co:Message, the others as co:Detail; co:AgreementId when id != NULL. */
void acc_xml_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out);

#endif
