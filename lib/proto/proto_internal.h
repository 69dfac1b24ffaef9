/* SPDX-License-Identifier: Apache-2.0 */
/* proto_internal.h - shared by the files of lib/proto/ (and its unit test);
 * libxml2 types stay in here.
 *
 * proto_parse.c owns the guarded parser and the helpers every reader uses
 * to walk a document strictly: only elements of urn:accord:site:1, only
 * known attributes, no text between elements, each value checked.
 * proto_escape.c writes text and attribute values that are always
 * well-formed XML, whatever bytes they are given.
 */
#ifndef ACC_PROTO_INTERNAL_H
#define ACC_PROTO_INTERNAL_H

#include <libxml/tree.h>

#include "proto.h"

/* Limits of every protocol document besides ACC_PROTO_BODY_MAX. */
#define ACC_PROTO_MAX_DEPTH      8
#define ACC_PROTO_MAX_ELEMENTS   2048
#define ACC_PROTO_MAX_ATTRS      16   /* on one element, namespace declarations included */
#define ACC_PROTO_MAX_ALL_ATTRS  4096 /* in the whole document */
#define ACC_PROTO_MAX_NODES_TEXT 16384

/* Parses body into *doc (xmlFreeDoc() it) and checks that its root is the
 * element `root` (NULL: any) of ACC_PROTO_NS: ACC_ERR_TOO_LARGE, ACC_ERR_MALFORMED,
 * ACC_ERR_DTD, ACC_ERR_TOO_DEEP, ACC_ERR_TOO_MANY_ATTRS, and
 * ACC_ERR_BAD_REQUEST for another root. */
acc_err acc_proto_parse(const char *body, size_t len, const char *root, xmlDocPtr *doc,
                        struct acc_error *err);
/* acc_proto_parse, then the root's attributes checked against allowed
 * (NULL-terminated; NULL: none) as acc_proto_attrs does; *root_out is the
 * document element.  On failure nothing is left to free. */
acc_err acc_proto_open(const char *body, size_t len, const char *root, const char *const *allowed,
                       xmlDocPtr *doc, xmlNode **root_out, struct acc_error *err);

/* The next element child of parent after *cur (NULL: the first) into *cur,
 * NULL after the last.  ACC_ERR_BAD_REQUEST for text that is not blank and
 * for an element of another namespace.  Comments are skipped. */
acc_err acc_proto_next(const xmlNode *parent, const xmlNode **cur, struct acc_error *err);

/* True for the element `name` (in ACC_PROTO_NS). */
bool acc_proto_is(const xmlNode *n, const char *name);

/* Children that appear at most once: each child of parent must be one of
 * names[0..n) (a leading '?' marks an optional one) and lands in found[i];
 * ACC_ERR_BAD_REQUEST for an unknown, a repeated or a missing one. */
acc_err acc_proto_children(const xmlNode *parent, const char *const *names, const xmlNode **found,
                           size_t n, struct acc_error *err);
/* ACC_ERR_BAD_REQUEST when n has a child element (text as acc_proto_next). */
acc_err acc_proto_empty(const xmlNode *n, struct acc_error *err);
/* Printable ASCII without blanks, 1 .. max bytes (local ids, job states). */
bool acc_proto_token_ok(const char *s, size_t max);

/* ACC_ERR_BAD_REQUEST naming the element as unknown where it is. */
acc_err acc_proto_unknown(const xmlNode *n, struct acc_error *err);
/* ACC_ERR_BAD_REQUEST: n has its child `name` twice. */
acc_err acc_proto_twice(const xmlNode *n, struct acc_error *err);
/* ACC_ERR_BAD_REQUEST: parent lacks its child `name`. */
acc_err acc_proto_missing(const xmlNode *parent, const char *name, struct acc_error *err);

/* ACC_ERR_BAD_REQUEST unless every attribute of n is one of allowed
 * (NULL-terminated), without a namespace. */
acc_err acc_proto_attrs(const xmlNode *n, const char *const *allowed, struct acc_error *err);
/* The value of n's attribute `name` (no namespace), or NULL. */
const char *acc_proto_attr(const xmlNode *n, const char *name);
/* As acc_proto_attr, ACC_ERR_BAD_REQUEST when it is missing. */
acc_err acc_proto_attr_req(const xmlNode *n, const char *name, const char **out,
                           struct acc_error *err);

/* The text of an element that has nothing else (ACC_ERR_BAD_REQUEST for a
 * child element, ACC_ERR_INVALID when over max bytes) into a malloc'd
 * string. */
acc_err acc_proto_text(const xmlNode *n, size_t max, char **out, struct acc_error *err);
/* As acc_proto_text, into buf of size bytes (at most size - 1 taken). */
acc_err acc_proto_text_buf(const xmlNode *n, char *buf, size_t size, struct acc_error *err);

/* Value checks; each fails with ACC_ERR_INVALID naming n (and what, an
 * attribute name, when not NULL). */
acc_err acc_proto_i64(const xmlNode *n, const char *what, const char *s, int64_t min, int64_t max,
                      int64_t *out, struct acc_error *err);
acc_err acc_proto_u64(const xmlNode *n, const char *what, const char *s, uint64_t *out,
                      struct acc_error *err);
acc_err acc_proto_bool(const xmlNode *n, const char *what, const char *s, bool *out,
                       struct acc_error *err);
acc_err acc_proto_time(const xmlNode *n, const char *what, const char *s, acc_time *out,
                       struct acc_error *err);
/* An xs:duration of whole seconds, 1 .. ACC_TIME_MAX. */
acc_err acc_proto_duration(const xmlNode *n, const char *what, const char *s, int64_t *out,
                           struct acc_error *err);
acc_err acc_proto_kind(const xmlNode *n, const char *s, enum acc_resource_kind *out,
                       struct acc_error *err);
/* A resource or site name ([A-Za-z0-9._-], 1 .. size - 1) into buf. */
acc_err acc_proto_name(const xmlNode *n, const char *what, const char *s, char *buf, size_t size,
                       struct acc_error *err);
/* A key (acc_proto_key_ok) into buf of ACC_KEY_MAX bytes. */
acc_err acc_proto_key(const xmlNode *n, const char *what, const char *s, char *buf,
                      struct acc_error *err);
/* The text of an element as a time, a duration. */
acc_err acc_proto_el_time(const xmlNode *n, acc_time *out, struct acc_error *err);
acc_err acc_proto_el_duration(const xmlNode *n, int64_t *out, struct acc_error *err);

/* <Resource kind=".." name=".." amount|capacity=".."/>: amount_attr names
 * the number's attribute. */
acc_err acc_proto_resource(const xmlNode *n, const char *amount_attr, enum acc_resource_kind *kind,
                           char *name, size_t name_size, int64_t *amount, struct acc_error *err);

/* Prefixes err's message with "line N: " for node n. */
acc_err acc_proto_fail(const xmlNode *n, acc_err code, struct acc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------- writing */

/* "<?xml ...?>\n<NAME xmlns=\"urn:accord:site:1\"" (the tag left open). */
void acc_proto_w_root(struct acc_buf *b, const char *name);
/* Text or an attribute value escaped so that the document stays
 * well-formed: markup characters as references, characters XML 1.0 cannot
 * carry and invalid UTF-8 as '?'. */
void acc_proto_w_esc(struct acc_buf *b, const char *s);
/* ` name="value"` (nothing when value is NULL). */
void acc_proto_w_attr(struct acc_buf *b, const char *name, const char *value);
void acc_proto_w_attr_i64(struct acc_buf *b, const char *name, int64_t v);
void acc_proto_w_attr_time(struct acc_buf *b, const char *name, acc_time t);
/* <name>text</name> (nothing when text is NULL). */
void acc_proto_w_el(struct acc_buf *b, const char *name, const char *text);
void acc_proto_w_el_time(struct acc_buf *b, const char *name, acc_time t);
void acc_proto_w_el_duration(struct acc_buf *b, const char *name, int64_t secs);
void acc_proto_w_el_u64(struct acc_buf *b, const char *name, uint64_t v);
const char *acc_proto_kind_name(enum acc_resource_kind k);
/* The ACC_CAP_* of a capability word of <Capabilities> (len bytes), 0 when unknown. */
unsigned acc_proto_cap_of(const char *word, size_t len);

/* ------------------------------------------------------ the identity */

/* Whether id names someone (a user or a subject): only then is it written. */
bool acc_proto_identity_present(const struct acc_identity *id);
/* <Identity user=".." issuer=".." subject=".."><Group/>..<Token/></Identity>,
 * nothing when id names no one (proto_identity.c). */
void acc_proto_w_identity(struct acc_buf *b, const struct acc_identity *id);
/* An <Identity> element into *out (acc_identity_release() it); on failure
 * nothing is left to release. */
acc_err acc_proto_read_identity(const xmlNode *n, struct acc_identity *out, struct acc_error *err);

/* -------------------------------------------------------- the schema */

/* Validates body against schema/adapter-protocol.xsd (compiled in):
 * ACC_ERR_SCHEMA with libxml2's messages.  For tests: the readers do not
 * need it. */
acc_err acc_proto_validate(const char *body, size_t len, struct acc_error *err);

#endif
