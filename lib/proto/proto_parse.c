/* proto_parse.c - the guarded parser of protocol documents.
 *
 * The same defences as offers (server/xml/schema.c, which this library may
 * not use):
 *   - one pass over the bytes first: size, NUL bytes, attributes per
 *     element and in all (libxml2 2.9 checks attribute names quadratically);
 *   - SAX hooks stop the parser at the first DOCTYPE, declaration or entity
 *     reference, so nothing is ever declared, expanded or fetched;
 *   - XML_PARSE_NONET and never an option that loads DTDs or substitutes
 *     entities; the document is read as UTF-8 whatever it declares;
 *   - depth and element count checked while parsing.
 * libxml2's messages are collected per call (structured handler on the
 * parser context), never through its global handlers.
 */
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "proto_internal.h"

enum stop_reason { STOP_NONE, STOP_DTD, STOP_DEEP, STOP_MANY };

struct reader {
    char first[400]; /* libxml2's first error */
    int first_line;
    unsigned depth, elements;
    enum stop_reason stop;
    int stop_line;
    char what[128];
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void init(void)
{
    xmlInitParser();
    /* Only for the few paths that report through the generic handler: the
     * default for new threads, as server/xml does. */
    xmlThrDefSetGenericErrorFunc(NULL, silent);
}

/* ---------------------------------------------------------- the pre-pass */

static acc_err prescan(const char *data, size_t len, struct acc_error *err)
{
    enum { TEXT, TAG, QUOTED } state = TEXT;
    char quote = 0;
    unsigned long line = 1, tag_line = 1;
    unsigned on_element = 0, total = 0;

    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\0')
            return acc_error_set(err, ACC_ERR_MALFORMED,
                                 "line %lu: byte %zu is a NUL character, which no XML document "
                                 "holds",
                                 line, i);
        if (c == '\n') {
            line++;
        } else if (c == '<') {
            bool start =
                i + 1 < len && data[i + 1] != '/' && data[i + 1] != '!' && data[i + 1] != '?';
            state = start ? TAG : TEXT;
            tag_line = line;
            on_element = 0;
        } else if (state == QUOTED) {
            if (c == quote)
                state = TAG;
        } else if (state == TAG) {
            if (c == '"' || c == '\'') {
                state = QUOTED;
                quote = c;
            } else if (c == '>') {
                state = TEXT;
            } else if (c == '=') {
                if (++on_element > ACC_PROTO_MAX_ATTRS)
                    return acc_error_set(err, ACC_ERR_TOO_MANY_ATTRS,
                                         "line %lu: an element has more than %u attributes",
                                         tag_line, ACC_PROTO_MAX_ATTRS);
                if (++total > ACC_PROTO_MAX_ALL_ATTRS)
                    return acc_error_set(err, ACC_ERR_TOO_MANY_ATTRS,
                                         "line %lu: the document has more than %u attributes "
                                         "in all",
                                         tag_line, ACC_PROTO_MAX_ALL_ATTRS);
            }
        }
    }
    return ACC_OK;
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

static void refuse(void *ctx, const char *what, const xmlChar *name)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);
    if (r->stop == STOP_NONE)
        snprintf(r->what, sizeof r->what, "%s %.64s", what, name ? (const char *)name : "");
    stop(ctxt, r, STOP_DTD);
}

static void on_error(void *ctx, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt;
    struct reader *r = reader_of(ctx, &ctxt);
    if (!e || e->level == XML_ERR_WARNING || r->first[0])
        return;
    snprintf(r->first, sizeof r->first, "%s", e->message ? e->message : "not well-formed");
    size_t n = strlen(r->first);
    while (n && (r->first[n - 1] == '\n' || r->first[n - 1] == ' '))
        r->first[--n] = '\0';
    r->first_line = e->line;
}

static void on_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id, const xmlChar *sys_id)
{
    (void)ext_id;
    (void)sys_id;
    refuse(ctx, "a DOCTYPE", name);
}

static void on_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                           const xmlChar *system_id, xmlChar *content)
{
    (void)type;
    (void)public_id;
    (void)system_id;
    (void)content;
    refuse(ctx, "the entity declaration", name);
}

static void on_unparsed_entity_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                                    const xmlChar *system_id, const xmlChar *notation)
{
    (void)public_id;
    (void)system_id;
    (void)notation;
    refuse(ctx, "the entity declaration", name);
}

static void on_notation_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                             const xmlChar *system_id)
{
    (void)public_id;
    (void)system_id;
    refuse(ctx, "the notation declaration", name);
}

static void on_element_decl(void *ctx, const xmlChar *name, int type, xmlElementContentPtr content)
{
    (void)type;
    (void)content;
    refuse(ctx, "the element declaration", name);
}

static void on_attribute_decl(void *ctx, const xmlChar *elem, const xmlChar *fullname, int type,
                              int def, const xmlChar *default_value, xmlEnumerationPtr tree)
{
    (void)fullname;
    (void)type;
    (void)def;
    (void)default_value;
    xmlFreeEnumeration(tree); /* the handler owns it */
    refuse(ctx, "an attribute list declaration for", elem);
}

static xmlEntityPtr on_get_entity(void *ctx, const xmlChar *name)
{
    refuse(ctx, "the entity reference", name);
    return NULL;
}

static void on_reference(void *ctx, const xmlChar *name)
{
    refuse(ctx, "the entity reference", name);
}

static xmlParserInputPtr on_resolve_entity(void *ctx, const xmlChar *public_id,
                                           const xmlChar *system_id)
{
    (void)public_id;
    refuse(ctx, "the external entity", system_id);
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
    if (++r->depth > ACC_PROTO_MAX_DEPTH) {
        stop(ctxt, r, STOP_DEEP);
        return;
    }
    if (++r->elements > ACC_PROTO_MAX_ELEMENTS) {
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

/* Never: XML_PARSE_NOENT, XML_PARSE_DTDLOAD, XML_PARSE_DTDATTR,
 * XML_PARSE_DTDVALID, XML_PARSE_XINCLUDE, XML_PARSE_HUGE. */
#define READ_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOWARNING | XML_PARSE_NOERROR)

acc_err acc_proto_parse(const char *body, size_t len, const char *root, xmlDocPtr *doc,
                        struct acc_error *err)
{
    struct reader r = {.stop = STOP_NONE};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr d = NULL;
    acc_err rc = ACC_OK;

    *doc = NULL;
    if (!body && len)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "no document");
    if (len > ACC_PROTO_BODY_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE,
                             "the document is %zu bytes; at most %d are accepted", len,
                             ACC_PROTO_BODY_MAX);
    if (len == 0)
        return acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document is empty");
    rc = prescan(body, len, err);
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
    sax->getParameterEntity = on_get_entity;
    sax->reference = on_reference;
    sax->resolveEntity = on_resolve_entity;
    sax->startElementNs = on_start;
    sax->endElementNs = on_end;
    sax->serror = on_error;
    ctxt->_private = &r;

    d = xmlCtxtReadMemory(ctxt, body, (int)len, NULL, "UTF-8", READ_OPTIONS);
    switch (r.stop) {
    case STOP_DTD:
        rc = acc_error_set(err, ACC_ERR_DTD,
                           "line %d: %s: documents must not carry a DTD, entity declarations or "
                           "entity references",
                           r.stop_line, r.what);
        goto out;
    case STOP_DEEP:
        rc = acc_error_set(err, ACC_ERR_TOO_DEEP, "line %d: elements nest deeper than %d",
                           r.stop_line, ACC_PROTO_MAX_DEPTH);
        goto out;
    case STOP_MANY:
        rc = acc_error_set(err, ACC_ERR_TOO_LARGE, "line %d: more than %d elements", r.stop_line,
                           ACC_PROTO_MAX_ELEMENTS);
        goto out;
    case STOP_NONE:
        break;
    }
    if (!d || !ctxt->wellFormed) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "line %d: %s", r.first_line,
                           r.first[0] ? r.first : "the document is not well-formed XML");
        goto out;
    }
    xmlNodePtr top = xmlDocGetRootElement(d);
    if (!top) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document has no element");
        goto out;
    }
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
    xmlFreeParserCtxt(ctxt);
    return rc;
}
