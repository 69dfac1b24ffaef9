/* SPDX-License-Identifier: Apache-2.0 */
/* xmlguard.h - the one guarded way into libxml2's parser, shared by offers
 * (server/xml) and the adapter protocol (lib/proto).
 *
 * Defences against hostile documents:
 *   - size, NUL bytes and attribute counts are checked before parsing, in
 *     one pass over the bytes (xmlguard_prescan.c: libxml2 2.9 checks
 *     attribute names quadratically);
 *   - SAX hooks stop the parser at the first DOCTYPE, declaration or entity
 *     reference, so nothing is ever declared, expanded or fetched;
 *   - XML_PARSE_NONET and never an option that loads DTDs or substitutes
 *     entities; every document is read as UTF-8 whatever it declares (a
 *     declared UTF-7 would hide markup from the pre-pass);
 *   - depth and element count checked while parsing.
 * libxml2's messages go to the caller's handler for this one parse (the
 * structured handler of the parser context), never through the global
 * handlers, so threads never see each other's errors.
 */
#ifndef ACC_XMLGUARD_H
#define ACC_XMLGUARD_H

#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stddef.h>

#include "../common/error.h"

struct acc_xmlguard_limits {
    size_t max_bytes;              /* larger documents: ACC_ERR_TOO_LARGE */
    unsigned max_depth;            /* deeper nesting: ACC_ERR_TOO_DEEP */
    unsigned max_elements;         /* more elements: ACC_ERR_TOO_LARGE */
    unsigned max_attributes;       /* more on one element: ACC_ERR_TOO_MANY_ATTRS */
    unsigned max_total_attributes; /* more in the document: ACC_ERR_TOO_MANY_ATTRS */
};

/* Receives each message libxml2 raises while parsing (warnings too). */
typedef void (*acc_xmlguard_error_fn)(void *arg, xmlErrorPtr e);

/* One pass over the raw bytes, before libxml2: ACC_ERR_MALFORMED for a NUL
 * byte (naming its offset), ACC_ERR_TOO_MANY_ATTRS for more than
 * lim->max_attributes attributes on one element or lim->max_total_attributes
 * in all (naming the element and its line).  Namespace declarations count
 * as attributes.  lim->max_bytes, max_depth and max_elements are not used. */
acc_err acc_xmlguard_prescan(const char *data, size_t len, const struct acc_xmlguard_limits *lim,
                             struct acc_error *err);

/* Checks the size (ACC_ERR_TOO_LARGE), emptiness (ACC_ERR_MALFORMED) and
 * acc_xmlguard_prescan(), then parses data as UTF-8 with `options` added to
 * XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOWARNING (the caller
 * must never add one that loads DTDs or substitutes entities), url as the
 * document's base (NULL: none).  Fails with ACC_ERR_DTD, ACC_ERR_TOO_DEEP or
 * ACC_ERR_TOO_LARGE when a hook stopped the parse, and ACC_ERR_MALFORMED
 * for a document without a root element.  A document libxml2 finds not
 * well-formed gives ACC_OK with *doc NULL: on_error (may be NULL) got
 * libxml2's messages, and the caller words the error.  Otherwise *doc is
 * the document (xmlFreeDoc() it). */
acc_err acc_xmlguard_read(const char *data, size_t len, const struct acc_xmlguard_limits *lim,
                          const char *url, int options, acc_xmlguard_error_fn on_error, void *arg,
                          xmlDocPtr *doc, struct acc_error *err);

#endif
