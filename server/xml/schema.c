/* schema.c - the safe way into libxml2: the compiled schemas, the entity
 * loader that serves only them, and the guarded parser every document goes
 * through.
 *
 * Defence in depth against hostile documents:
 *   - SAX hooks stop the parser at the first DOCTYPE, declaration or entity
 *     reference, so nothing is ever declared, expanded or fetched (a
 *     billion-laughs document stops at its DOCTYPE);
 *   - no option that substitutes entities or loads DTDs is ever given;
 *   - the process-wide external entity loader serves the embedded
 *     schemas by name and refuses everything else, so even a code path
 *     that tried could reach neither the network nor the file system;
 *   - size, NUL bytes and attribute counts are checked before parsing, in
 *     one pass over the bytes (prescan.c: libxml2's own duplicate check is
 *     quadratic), depth and element count while parsing;
 *   - every document is read as UTF-8: a declared encoding such as UTF-7
 *     would hide markup from that pass.
 * libxml2's messages are collected per call through the structured error
 * handlers of the parser and validation contexts, never through the global
 * ones, so threads never see each other's errors.
 */
#include "xml.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/common/embed.h"
#include "../../lib/common/strutil.h"
#include "xml_internal.h"

/* The .xsd files of schema/, compiled in by cmake/embed.cmake. */
extern const struct acc_embedded acc_schemas[];
extern const size_t acc_schemas_count;

/* The schema compiled first; it imports the other. */
#define ROOT_SCHEMA "coalloc.xsd"

/* Read-only after acc_xml_init(): libxml2 allows many validation contexts to
 * share one compiled schema. */
static xmlSchemaPtr schema;

/* ------------------------------------------------------------- messages */

struct errlog {
    char text[ACC_ERROR_MSG_MAX];
    size_t len;
    unsigned kept, dropped;
};

/* Copies a libxml2 message into dst without its trailing newline and with
 * the namespaces in braces written as the usual prefixes. */
static void tidy_message(const char *msg, char *dst, size_t size)
{
    static const struct {
        const char *from, *to;
    } names[] = {
        {"{" ACC_NS_CO "}", "co:"},         {"{" ACC_NS_WSAG "}", "wsag:"},
        {"{" ACC_NS_JSDL "}", "jsdl:"},     {"{" ACC_NS_JSDL_POSIX "}", "jsdl-posix:"},
        {"{" ACC_NS_WSAG4J "}", "wsag4j:"},
    };
    size_t n = 0;

    while (msg && *msg && n + 1 < size) {
        bool replaced = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            size_t fl = strlen(names[i].from), tl = strlen(names[i].to);
            if (strncmp(msg, names[i].from, fl) == 0 && n + tl + 1 < size) {
                memcpy(dst + n, names[i].to, tl);
                n += tl;
                msg += fl;
                replaced = true;
                break;
            }
        }
        if (!replaced) {
            dst[n++] = *msg == '\n' ? ' ' : *msg;
            msg++;
        }
    }
    dst[n] = '\0';
    acc_strtrim(dst);
}

static void errlog_add(struct errlog *log, int line, const char *msg)
{
    char tidy[400];
    char entry[440];

    if (log->kept >= ACC_XML_MAX_ERRORS) {
        log->dropped++;
        return;
    }
    tidy_message(msg, tidy, sizeof tidy);
    int n = line > 0 ? snprintf(entry, sizeof entry, "line %d: %s", line, tidy)
                     : snprintf(entry, sizeof entry, "%s", tidy);
    if (n < 0)
        return;
    size_t el = strlen(entry);
    /* Keep room for the "n more" line. */
    if (log->len + el + 2 > sizeof log->text - 48) {
        log->dropped++;
        return;
    }
    if (log->len)
        log->text[log->len++] = '\n';
    memcpy(log->text + log->len, entry, el + 1);
    log->len += el;
    log->kept++;
}

static void on_error(void *ctx, xmlErrorPtr e)
{
    struct errlog *log = ctx;
    if (!e || e->level == XML_ERR_WARNING)
        return;
    errlog_add(log, e->line, e->message ? e->message : "unknown error");
}

/* Sets err from the collected messages, or from fallback when none came. */
static acc_err errlog_fail(const struct errlog *log, acc_err code, const char *fallback,
                           struct acc_error *err)
{
    if (log->kept == 0)
        return acc_error_set(err, code, "%s", fallback);
    acc_error_set(err, code, "%s", log->text);
    if (log->dropped)
        acc_error_append(err, "(%u more error%s)", log->dropped, log->dropped == 1 ? "" : "s");
    return code;
}

/* --------------------------------------------------------- entity loader */

static xmlParserInputPtr load_entity(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
    (void)id;
    for (size_t i = 0; url && i < acc_schemas_count; i++)
        if (strcmp(url, acc_schemas[i].name) == 0)
            /* The embedded bytes end with a NUL and live as long as the
             * process: the input stream can point at them directly. */
            return xmlNewStringInputStream(ctxt, BAD_CAST acc_schemas[i].data);
    /* Everything else: no file, no URL, ever. */
    return NULL;
}

/* Safety net for the few libxml2 paths that report through the generic
 * handler (out of memory, the text writer): never print to stderr. */
static void silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* ------------------------------------------------------ init and cleanup */

static acc_err read_doc(const char *data, size_t len, const struct acc_xml_limits *lim,
                        const char *url, xmlDocPtr *out, struct acc_error *err);

acc_err acc_xml_init(struct acc_error *err)
{
    struct errlog log = {.len = 0};
    xmlSchemaParserCtxtPtr pctxt = NULL;
    xmlDocPtr doc = NULL;
    const struct acc_embedded *root = NULL;
    acc_err rc = ACC_OK;

    if (schema)
        return ACC_OK;
    xmlInitParser();
    xmlSetExternalEntityLoader(load_entity);
    xmlSetGenericErrorFunc(NULL, silent);
    xmlThrDefSetGenericErrorFunc(NULL, silent);

    for (size_t i = 0; i < acc_schemas_count; i++)
        if (strcmp(acc_schemas[i].name, ROOT_SCHEMA) == 0)
            root = &acc_schemas[i];
    if (!root)
        return acc_error_set(err, ACC_ERR_INTERNAL, "schema %s is not compiled in", ROOT_SCHEMA);

    /* Read with its name as URL, so that its import of ws-agreement.xsd
     * reaches load_entity() under that name. */
    struct acc_xml_limits lim = {root->len, 256, UINT_MAX, UINT_MAX, UINT_MAX};
    rc = read_doc(root->data, root->len, &lim, root->name, &doc, err);
    if (rc)
        goto out;
    pctxt = xmlSchemaNewDocParserCtxt(doc);
    if (!pctxt) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    xmlSchemaSetParserStructuredErrors(pctxt, on_error, &log);
    schema = xmlSchemaParse(pctxt);
    if (!schema)
        rc = errlog_fail(&log, ACC_ERR_INTERNAL, "cannot compile", err);
out:
    if (rc)
        acc_error_prefix(err, "schema %s", ROOT_SCHEMA);
    xmlSchemaFreeParserCtxt(pctxt);
    xmlFreeDoc(doc);
    return rc;
}

void acc_xml_cleanup(void)
{
    /* The refusing entity loader stays: it is the only safe one. */
    xmlSchemaFree(schema);
    schema = NULL;
}

/* ----------------------------------------------------- the guarded parser */

enum stop_reason { STOP_NONE, STOP_DTD, STOP_DEEP, STOP_MANY };

struct reader {
    struct errlog log;
    unsigned depth, elements;
    unsigned max_depth, max_elements;
    enum stop_reason stop;
    int stop_line;
    char what[128]; /* for STOP_DTD: what was found */
};

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
    on_error(&r->log, e);
}

static void on_internal_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id,
                               const xmlChar *sys_id)
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

/* Never: XML_PARSE_NOENT (substitutes entities), XML_PARSE_DTDLOAD,
 * XML_PARSE_DTDATTR, XML_PARSE_DTDVALID, XML_PARSE_XINCLUDE, XML_PARSE_HUGE. */
#define READ_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOWARNING)

static acc_err read_doc(const char *data, size_t len, const struct acc_xml_limits *lim,
                        const char *url, xmlDocPtr *out, struct acc_error *err)
{
    struct reader r = {.max_depth = lim->max_depth, .max_elements = lim->max_elements};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    acc_err rc = ACC_OK;

    *out = NULL;
    if (len > lim->max_bytes || len > INT_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE,
                             "the document is %zu bytes; at most %zu are "
                             "accepted",
                             len, lim->max_bytes);
    if (len == 0)
        return acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document is empty");
    rc = acc_xml_prescan(data, len, lim, err);
    if (rc)
        return rc;

    ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    xmlSAXHandlerPtr sax = ctxt->sax;
    sax->internalSubset = on_internal_subset;
    sax->externalSubset = on_internal_subset;
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

    doc = xmlCtxtReadMemory(ctxt, data, (int)len, url, "UTF-8", READ_OPTIONS);
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
    if (!doc || !ctxt->wellFormed || r.log.kept) {
        rc = errlog_fail(&r.log, ACC_ERR_MALFORMED, "the document is not well-formed XML", err);
        goto out;
    }
    if (!xmlDocGetRootElement(doc)) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document has no root element");
        goto out;
    }
    *out = doc;
    doc = NULL;
out:
    if (rc == ACC_ERR_MALFORMED && r.log.kept > 1) {
        /* Later messages mostly follow from the first: keep that one. */
        char *nl = err ? strchr(err->msg, '\n') : NULL;
        if (nl)
            *nl = '\0';
    }
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return rc;
}

acc_err acc_xml_read(const char *data, size_t len, const struct acc_xml_limits *lim, xmlDocPtr *out,
                     struct acc_error *err)
{
    return read_doc(data, len, lim, NULL, out, err);
}

/* --------------------------------------------------------------- validate */

acc_err acc_xml_validate(xmlDocPtr doc, struct acc_error *err)
{
    struct errlog log = {.len = 0};

    if (!schema)
        return acc_error_set(err, ACC_ERR_INTERNAL, "acc_xml_init() was not called");
    xmlSchemaValidCtxtPtr v = xmlSchemaNewValidCtxt(schema);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    xmlSchemaSetValidStructuredErrors(v, on_error, &log);
    int res = xmlSchemaValidateDoc(v, doc);
    xmlSchemaFreeValidCtxt(v);
    if (res == 0 && log.kept == 0)
        return ACC_OK;
    if (res < 0 && log.kept == 0)
        return acc_error_set(err, ACC_ERR_INTERNAL, "schema validation failed (%d)", res);
    return errlog_fail(&log, ACC_ERR_SCHEMA, "the document does not match the schema", err);
}

acc_err acc_xml_validate_mem(const char *data, size_t len, struct acc_error *err)
{
    struct acc_xml_limits lim = {SIZE_MAX, 256, UINT_MAX, UINT_MAX, UINT_MAX};
    xmlDocPtr doc = NULL;

    acc_err rc = acc_xml_read(data, len, &lim, &doc, err);
    if (rc)
        return rc;
    rc = acc_xml_validate(doc, err);
    xmlFreeDoc(doc);
    return rc;
}

bool acc_xml_is(const xmlNode *n, const char *ns, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
           strcmp((const char *)n->ns->href, ns) == 0 && strcmp((const char *)n->name, name) == 0;
}
