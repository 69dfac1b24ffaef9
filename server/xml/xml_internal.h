/* SPDX-License-Identifier: Apache-2.0 */
/* xml_internal.h - shared by schema.c, offer.c and render_*.c (and the unit
 * tests); no other module includes it, so libxml2 types stay in here.
 *
 * schema.c owns the safe way in: acc_xml_read() parses with no DTD, no
 * entity, no network and under the limits, and acc_xml_validate() checks a
 * document against the compiled schemas.  Both collect libxml2's messages
 * per call, never through libxml2's global error handlers.
 */
#ifndef ACC_XML_INTERNAL_H
#define ACC_XML_INTERNAL_H

#include <libxml/tree.h>

#include "xml.h"

/* At most this many libxml2 messages are kept per document. */
#define ACC_XML_MAX_ERRORS 10

/* Parses data, read as UTF-8 whatever it declares, into *doc (xmlFreeDoc()
 * it) or fails with ACC_ERR_MALFORMED, ACC_ERR_DTD, ACC_ERR_TOO_LARGE,
 * ACC_ERR_TOO_DEEP or ACC_ERR_TOO_MANY_ATTRS.  Every limit in lim applies
 * as given (UINT_MAX for none). */
acc_err acc_xml_read(const char *data, size_t len, const struct acc_xml_limits *lim, xmlDocPtr *doc,
                     struct acc_error *err);

/* One pass over the raw bytes, before libxml2 (acc_xmlguard_prescan() of
 * lib/xmlguard): ACC_ERR_MALFORMED
 * for a NUL byte (naming its offset), ACC_ERR_TOO_MANY_ATTRS for more than
 * lim->max_attributes attributes on one element or lim->max_total_attributes
 * in all (naming the element and its line).  Namespace declarations count
 * as attributes. */
acc_err acc_xml_prescan(const char *data, size_t len, const struct acc_xml_limits *lim,
                        struct acc_error *err);

/* Validates doc, whatever its root, against ws-agreement.xsd and
 * coalloc.xsd: ACC_ERR_SCHEMA with one "line N: ..." per error. */
acc_err acc_xml_validate(xmlDocPtr doc, struct acc_error *err);

/* acc_xml_read() with roomy limits, then acc_xml_validate(): for checking
 * Accord's own documents (tests). */
acc_err acc_xml_validate_mem(const char *data, size_t len, struct acc_error *err);

/* True for an element named name in namespace ns. */
bool acc_xml_is(const xmlNode *n, const char *ns, const char *name);

/* ------------------------------------------------------------ the writer
 * (render_writer.c, used by the render_*.c files).  Every call does
 * nothing once the writer has failed; acc_xml_w_close() then reports it. */

/* An element the writer has open. */
struct acc_xml_open {
    size_t name;         /* offset of its qualified name in names */
    unsigned char state; /* start tag open, or content written */
};

struct acc_xml_writer {
    struct acc_buf out;   /* the document so far */
    struct acc_buf names; /* the open elements' qualified names, NUL-terminated */
    struct acc_xml_open *open;
    size_t depth, cap;
    bool doindent; /* an end tag goes on a line of its own */
    bool failed;
};

/* Starts a document; acc_xml_w_close() ends it and appends it to out. */
void acc_xml_w_open(struct acc_xml_writer *w);
acc_err acc_xml_w_close(struct acc_xml_writer *w, struct acc_buf *out, struct acc_error *err);

void acc_xml_w_start(struct acc_xml_writer *w, const char *prefix, const char *name);
/* The document element, declaring both namespaces. */
void acc_xml_w_start_root(struct acc_xml_writer *w, const char *prefix, const char *name);
void acc_xml_w_end(struct acc_xml_writer *w);
/* An attribute; prefix NULL for an unqualified one; nothing when value is NULL. */
void acc_xml_w_attr(struct acc_xml_writer *w, const char *prefix, const char *name,
                    const char *value);
void acc_xml_w_attr_i64(struct acc_xml_writer *w, const char *prefix, const char *name, int64_t v);
void acc_xml_w_attr_time(struct acc_xml_writer *w, const char *prefix, const char *name,
                         acc_time t);
void acc_xml_w_text(struct acc_xml_writer *w, const char *s);
/* <prefix:name>s</prefix:name>, nothing when s is NULL. */
void acc_xml_w_el(struct acc_xml_writer *w, const char *prefix, const char *name, const char *s);
void acc_xml_w_el_i64(struct acc_xml_writer *w, const char *prefix, const char *name, int64_t v);
void acc_xml_w_el_u64(struct acc_xml_writer *w, const char *prefix, const char *name, uint64_t v);
void acc_xml_w_el_time(struct acc_xml_writer *w, const char *prefix, const char *name, acc_time t);
/* One element per non-empty item of s, the items separated by sep. */
void acc_xml_w_el_split(struct acc_xml_writer *w, const char *prefix, const char *name,
                        const char *s, char sep);

/* wsag:AgreementResponder: Accord (render_agreement.c; templates use it too). */
void acc_xml_responder(struct acc_xml_writer *w);

/* The template of a reservation in WSAG4J's vocabulary (render_wsag4j.c),
 * listed by acc_xml_templates() and served by acc_xml_template(). */
#define ACC_TEMPLATE_WSAG4J "wsag4j-reservation"
acc_err acc_xml_template_wsag4j(const struct acc_sites_view *v, struct acc_buf *out,
                                struct acc_error *err);

#endif
