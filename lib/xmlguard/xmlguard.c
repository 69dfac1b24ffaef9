/* SPDX-License-Identifier: Apache-2.0 */
/* xmlguard.c - the guarded parser: SAX hooks that refuse every DTD,
 * declaration and entity, count depth and elements, and hand libxml2's
 * messages to the caller (xmlguard.h). */
#include "xmlguard.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

enum stop_reason { STOP_NONE, STOP_DTD, STOP_DEEP, STOP_MANY };

struct reader {
    acc_xmlguard_error_fn on_error;
    void *arg;
    unsigned depth, elements;
    unsigned max_depth, max_elements;
    enum stop_reason stop;
    int stop_line;
    char what[128]; /* for STOP_DTD: what was found */
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* For the few libxml2 paths that report through the generic handler (out
 * of memory): never print to stderr, in any thread. */
static void silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void init(void)
{
    xmlInitParser();
    xmlThrDefSetGenericErrorFunc(NULL, silent);
}

/* ------------------------------------------------------------ SAX hooks */

static struct reader *reader_of(void *ctx, xmlParserCtxtPtr *ctxt)
{
    *ctxt = ctx;
    return (*ctxt)->_private;
}

static void stop(xmlParserCtxtPtr ctxt, struct reader *r, enum stop_reason why)
{
    if (r->stop == STOP_NONE) {
        r->stop = why;
        r->stop_line = xmlSAX2GetLineNumber(ctxt);
    }
    xmlStopParser(ctxt);
}

static void refuse(void *ctx, const char *fmt, const xmlChar *name)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);
    if (r->stop == STOP_NONE)
        snprintf(r->what, sizeof r->what, fmt, name ? (const char *)name : "");
    stop(ctxt, r, STOP_DTD);
}

/* The parser reports with its own context (userData), like the SAX hooks. */
static void on_parse_error(void *ctx, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);
    if (r->on_error)
        r->on_error(r->arg, e);
}

static void on_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id, const xmlChar *sys_id)
{
    (void)ext_id;
    (void)sys_id;
    refuse(ctx, "a DOCTYPE (%.64s)", name);
}

static void on_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                           const xmlChar *system_id, xmlChar *content)
{
    (void)type;
    (void)public_id;
    (void)system_id;
    (void)content;
    refuse(ctx, "the entity declaration %.64s", name);
}

static void on_unparsed_entity_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                                    const xmlChar *system_id, const xmlChar *notation)
{
    (void)public_id;
    (void)system_id;
    (void)notation;
    refuse(ctx, "the entity declaration %.64s", name);
}

static void on_notation_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                             const xmlChar *system_id)
{
    (void)public_id;
    (void)system_id;
    refuse(ctx, "the notation declaration %.64s", name);
}

static void on_element_decl(void *ctx, const xmlChar *name, int type, xmlElementContentPtr content)
{
    (void)type;
    (void)content;
    refuse(ctx, "the element declaration %.64s", name);
}

static void on_attribute_decl(void *ctx, const xmlChar *elem, const xmlChar *fullname, int type,
                              int def, const xmlChar *default_value, xmlEnumerationPtr tree)
{
    (void)fullname;
    (void)type;
    (void)def;
    (void)default_value;
    xmlFreeEnumeration(tree); /* the handler owns it */
    refuse(ctx, "an attribute list declaration for %.64s", elem);
}

static xmlEntityPtr on_get_entity(void *ctx, const xmlChar *name)
{
    refuse(ctx, "the entity reference &%.64s;", name);
    return NULL;
}

static xmlEntityPtr on_get_parameter_entity(void *ctx, const xmlChar *name)
{
    refuse(ctx, "the parameter entity reference %%%.64s;", name);
    return NULL;
}

static void on_reference(void *ctx, const xmlChar *name)
{
    refuse(ctx, "the entity reference &%.64s;", name);
}

static xmlParserInputPtr on_resolve_entity(void *ctx, const xmlChar *public_id,
                                           const xmlChar *system_id)
{
    (void)public_id;
    refuse(ctx, "the external entity %.64s", system_id);
    return NULL;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes,
                     int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);

    if (r->stop != STOP_NONE)
        return;
    if (++r->depth > r->max_depth) {
        stop(ctxt, r, STOP_DEEP);
        return;
    }
    if (++r->elements > r->max_elements) {
        stop(ctxt, r, STOP_MANY);
        return;
    }
    xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                          nb_defaulted, attributes);
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);

    if (r->stop != STOP_NONE)
        return;
    r->depth--;
    xmlSAX2EndElementNs(ctx, localname, prefix, uri);
}

/* ------------------------------------------------------------ the parse */

/* Never: XML_PARSE_NOENT (substitutes entities), XML_PARSE_DTDLOAD,
 * XML_PARSE_DTDATTR, XML_PARSE_DTDVALID, XML_PARSE_XINCLUDE, XML_PARSE_HUGE. */
#define READ_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOWARNING)
#define UNSAFE_OPTIONS                                                              \
    (XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_DTDATTR | XML_PARSE_DTDVALID | \
     XML_PARSE_XINCLUDE | XML_PARSE_HUGE)

acc_err acc_xmlguard_read(const char *data, size_t len, const struct acc_xmlguard_limits *lim,
                          const char *url, int options, acc_xmlguard_error_fn on_error, void *arg,
                          xmlDocPtr *out, struct acc_error *err)
{
    struct reader r = {.on_error = on_error,
                       .arg = arg,
                       .max_depth = lim->max_depth,
                       .max_elements = lim->max_elements};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    acc_err rc = ACC_OK;

    *out = NULL;
    if (options & UNSAFE_OPTIONS)
        return acc_error_set(err, ACC_ERR_INTERNAL, "unsafe libxml2 options 0x%x",
                             (unsigned)(options & UNSAFE_OPTIONS));
    if (len > lim->max_bytes || len > INT_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE,
                             "the document is %zu bytes; at most %zu are "
                             "accepted",
                             len, lim->max_bytes);
    if (len == 0)
        return acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document is empty");
    rc = acc_xmlguard_prescan(data, len, lim, err);
    if (rc)
        return rc;
    pthread_once(&init_once, init);

    ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    xmlSAXHandlerPtr sax = ctxt->sax;
    sax->internalSubset = on_subset;
    sax->externalSubset = on_subset;
    sax->entityDecl = on_entity_decl;
    sax->unparsedEntityDecl = on_unparsed_entity_decl;
    sax->notationDecl = on_notation_decl;
    sax->elementDecl = on_element_decl;
    sax->attributeDecl = on_attribute_decl;
    sax->getEntity = on_get_entity;
    sax->getParameterEntity = on_get_parameter_entity;
    sax->reference = on_reference;
    sax->resolveEntity = on_resolve_entity;
    sax->startElementNs = on_start;
    sax->endElementNs = on_end;
    sax->serror = on_parse_error;
    ctxt->_private = &r;

    doc = xmlCtxtReadMemory(ctxt, data, (int)len, url, "UTF-8", READ_OPTIONS | options);
    switch (r.stop) {
    case STOP_DTD:
        rc = acc_error_set(err, ACC_ERR_DTD,
                           "line %d: %s: documents must not carry a DTD, entity declarations "
                           "or entity references",
                           r.stop_line, r.what);
        goto out;
    case STOP_DEEP:
        rc = acc_error_set(err, ACC_ERR_TOO_DEEP, "line %d: elements nest deeper than %u levels",
                           r.stop_line, r.max_depth);
        goto out;
    case STOP_MANY:
        rc =
            acc_error_set(err, ACC_ERR_TOO_LARGE, "line %d: the document has more than %u elements",
                          r.stop_line, r.max_elements);
        goto out;
    case STOP_NONE:
        break;
    }
    if (!doc || !ctxt->wellFormed)
        goto out; /* ACC_OK, *out NULL: the caller words it */
    if (!xmlDocGetRootElement(doc)) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document has no root element");
        goto out;
    }
    *out = doc;
    doc = NULL;
out:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return rc;
}
