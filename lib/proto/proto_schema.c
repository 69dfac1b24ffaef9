/* SPDX-License-Identifier: Apache-2.0 */
/* proto_schema.c - schema/adapter-protocol.xsd, compiled in, for checking
 * that documents (the writers' in the unit tests) are what docs/protocol.md
 * says.  The readers do not use it: they check more, and faster.
 *
 * The schema imports nothing, so it is compiled from memory without an
 * entity loader: libxml2's process-wide loader (server/xml's) is left
 * alone. */
#include <libxml/xmlschemas.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../common/embed.h"
#include "proto_internal.h"

extern const struct acc_embedded acc_proto_schemas[];
extern const size_t acc_proto_schemas_count;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static xmlSchemaPtr schema; /* read-only once compiled */
static char compile_error[256];

struct errs {
    char text[ACC_ERROR_MSG_MAX - 64];
    size_t len;
};

static void collect(void *ctx, xmlErrorPtr e)
{
    struct errs *x = ctx;
    if (!e || e->level == XML_ERR_WARNING || x->len + 8 >= sizeof x->text)
        return;
    int n = snprintf(x->text + x->len, sizeof x->text - x->len, "%sline %d: %s", x->len ? "\n" : "",
                     e->line, e->message ? e->message : "invalid");
    if (n > 0)
        x->len += (size_t)n < sizeof x->text - x->len ? (size_t)n : sizeof x->text - x->len - 1;
    while (x->len && x->text[x->len - 1] == '\n')
        x->text[--x->len] = '\0';
}

static void compile(void)
{
    struct errs x = {.len = 0};
    const struct acc_embedded *e = NULL;

    for (size_t i = 0; i < acc_proto_schemas_count; i++)
        if (strcmp(acc_proto_schemas[i].name, "adapter-protocol.xsd") == 0)
            e = &acc_proto_schemas[i];
    if (!e) {
        snprintf(compile_error, sizeof compile_error, "adapter-protocol.xsd is not compiled in");
        return;
    }
    xmlInitParser();
    xmlSchemaParserCtxtPtr p = xmlSchemaNewMemParserCtxt(e->data, (int)e->len);
    if (!p) {
        snprintf(compile_error, sizeof compile_error, "out of memory");
        return;
    }
    xmlSchemaSetParserStructuredErrors(p, collect, &x);
    schema = xmlSchemaParse(p);
    xmlSchemaFreeParserCtxt(p);
    if (!schema)
        snprintf(compile_error, sizeof compile_error, "adapter-protocol.xsd: %.200s",
                 x.len ? x.text : "cannot compile");
}

acc_err acc_proto_validate(const char *body, size_t len, struct acc_error *err)
{
    struct errs x = {.len = 0};
    xmlDocPtr doc = NULL;
    acc_err rc;

    pthread_once(&once, compile);
    if (!schema)
        return acc_error_set(err, ACC_ERR_INTERNAL, "%s", compile_error);
    rc = acc_proto_parse(body, len, NULL, &doc, err);
    if (rc)
        return rc;
    xmlSchemaValidCtxtPtr v = xmlSchemaNewValidCtxt(schema);
    if (!v) {
        xmlFreeDoc(doc);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    xmlSchemaSetValidStructuredErrors(v, collect, &x);
    int r = xmlSchemaValidateDoc(v, doc);
    if (r != 0)
        rc = acc_error_set(err, ACC_ERR_SCHEMA, "%s", x.len ? x.text : "invalid");
    xmlSchemaFreeValidCtxt(v);
    xmlFreeDoc(doc);
    return rc;
}
