/* SPDX-License-Identifier: Apache-2.0 */
/* schema.c - the safe way into libxml2: the compiled schemas, the entity
 * loader that serves only them, and the guarded parser every document goes
 * through.
 *
 * Defence in depth against hostile documents:
 *   - the guarded parser of lib/xmlguard (shared with lib/proto) checks
 *     size, NUL bytes and attribute counts in one pass over the bytes, stops
 *     at the first DOCTYPE, declaration or entity reference (a
 *     billion-laughs document stops at its DOCTYPE), never substitutes
 *     entities or loads DTDs, reads every document as UTF-8 and bounds
 *     depth and element count while parsing;
 *   - the process-wide external entity loader serves the embedded
 *     schemas by name and refuses everything else, so even a code path
 *     that tried could reach neither the network nor the file system.
 * libxml2's messages are collected per call through the structured error
 * handlers of the parser and validation contexts, never through the global
 * ones, so threads never see each other's errors.
 */
#include "xml.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/common/embed.h"
#include "../../lib/common/strutil.h"
#include "../../lib/xmlguard/xmlguard.h"
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

static struct acc_xmlguard_limits guard_limits(const struct acc_xml_limits *lim)
{
    return (struct acc_xmlguard_limits){lim->max_bytes, lim->max_depth, lim->max_elements,
                                        lim->max_attributes, lim->max_total_attributes};
}

acc_err acc_xml_prescan(const char *data, size_t len, const struct acc_xml_limits *lim,
                        struct acc_error *err)
{
    struct acc_xmlguard_limits g = guard_limits(lim);
    return acc_xmlguard_prescan(data, len, &g, err);
}

static acc_err read_doc(const char *data, size_t len, const struct acc_xml_limits *lim,
                        const char *url, xmlDocPtr *out, struct acc_error *err)
{
    struct acc_xmlguard_limits g = guard_limits(lim);
    struct errlog log = {.len = 0};
    xmlDocPtr doc = NULL;

    *out = NULL;
    acc_err rc = acc_xmlguard_read(data, len, &g, url, 0, on_error, &log, &doc, err);
    if (rc)
        return rc;
    if (!doc || log.kept) {
        xmlFreeDoc(doc);
        rc = errlog_fail(&log, ACC_ERR_MALFORMED, "the document is not well-formed XML", err);
        if (log.kept > 1) {
            /* Later messages mostly follow from the first: keep that one. */
            char *nl = err ? strchr(err->msg, '\n') : NULL;
            if (nl)
                *nl = '\0';
        }
        return rc;
    }
    *out = doc;
    return ACC_OK;
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
