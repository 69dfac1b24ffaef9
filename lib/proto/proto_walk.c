/* SPDX-License-Identifier: Apache-2.0 */
/* proto_walk.c - walking a parsed protocol document strictly and checking
 * its values; every failure names the element and its line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "proto_internal.h"

acc_err acc_proto_fail(const xmlNode *n, acc_err code, struct acc_error *err, const char *fmt, ...)
{
    char msg[ACC_ERROR_MSG_MAX - 32];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    long line = n ? xmlGetLineNo(n) : -1;
    if (line > 0)
        return acc_error_set(err, code, "line %ld: %s", line, msg);
    return acc_error_set(err, code, "%s", msg);
}

bool acc_proto_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
           strcmp((const char *)n->ns->href, ACC_PROTO_NS) == 0 &&
           strcmp((const char *)n->name, name) == 0;
}

static bool blank(const xmlChar *s)
{
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return false;
    return true;
}

acc_err acc_proto_next(const xmlNode *parent, const xmlNode **cur, struct acc_error *err)
{
    const xmlNode *c = *cur ? (*cur)->next : parent->children;

    for (; c; c = c->next) {
        switch (c->type) {
        case XML_ELEMENT_NODE:
            if (!c->ns || !c->ns->href || strcmp((const char *)c->ns->href, ACC_PROTO_NS) != 0) {
                *cur = NULL;
                return acc_proto_fail(c, ACC_ERR_BAD_REQUEST, err,
                                      "%s: the element %s is not in the namespace " ACC_PROTO_NS,
                                      (const char *)parent->name, (const char *)c->name);
            }
            *cur = c;
            return ACC_OK;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            if (!blank(c->content)) {
                *cur = NULL;
                return acc_proto_fail(c, ACC_ERR_BAD_REQUEST, err,
                                      "%s: text is not allowed between its elements",
                                      (const char *)parent->name);
            }
            break;
        default: /* comments, processing instructions */
            break;
        }
    }
    *cur = NULL;
    return ACC_OK;
}

acc_err acc_proto_unknown(const xmlNode *n, struct acc_error *err)
{
    return acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err,
                          "%s: unknown element %s (protocol version %d)",
                          n->parent ? (const char *)n->parent->name : "document",
                          (const char *)n->name, ACC_PROTO_VERSION);
}

acc_err acc_proto_empty(const xmlNode *n, struct acc_error *err)
{
    return acc_proto_children(n, NULL, NULL, 0, err);
}

acc_err acc_proto_twice(const xmlNode *n, struct acc_error *err)
{
    return acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err, "%s: the element %s appears twice",
                          n->parent ? (const char *)n->parent->name : "document",
                          (const char *)n->name);
}

acc_err acc_proto_missing(const xmlNode *parent, const char *name, struct acc_error *err)
{
    return acc_proto_fail(parent, ACC_ERR_BAD_REQUEST, err, "%s: the element %s is missing",
                          (const char *)parent->name, name);
}

acc_err acc_proto_attrs(const xmlNode *n, const char *const *allowed, struct acc_error *err)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        bool ok = false;
        for (size_t i = 0; !a->ns && allowed && allowed[i]; i++)
            if (strcmp((const char *)a->name, allowed[i]) == 0)
                ok = true;
        if (!ok)
            return acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err, "%s: unknown attribute %s%s%s",
                                  (const char *)n->name,
                                  a->ns && a->ns->prefix ? (const char *)a->ns->prefix : "",
                                  a->ns && a->ns->prefix ? ":" : "", (const char *)a->name);
    }
    return ACC_OK;
}

const char *acc_proto_attr(const xmlNode *n, const char *name)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        if (a->ns || strcmp((const char *)a->name, name) != 0)
            continue;
        /* Entity references are refused while parsing: the value is one
         * text node, or none when it is empty. */
        if (!a->children)
            return "";
        if (a->children->type != XML_TEXT_NODE || a->children->next || !a->children->content)
            return NULL;
        return (const char *)a->children->content;
    }
    return NULL;
}

acc_err acc_proto_attr_req(const xmlNode *n, const char *name, const char **out,
                           struct acc_error *err)
{
    *out = acc_proto_attr(n, name);
    if (!*out)
        return acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err, "%s: the attribute %s is missing",
                              (const char *)n->name, name);
    return ACC_OK;
}

/* The length of n's text, or (size_t)-1 after failing for a child element. */
static acc_err text_len(const xmlNode *n, size_t *len, struct acc_error *err)
{
    *len = 0;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE)
            *len += c->content ? strlen((const char *)c->content) : 0;
        else if (c->type == XML_ELEMENT_NODE)
            return acc_proto_fail(c, ACC_ERR_BAD_REQUEST, err, "%s: holds text, not the element %s",
                                  (const char *)n->name, (const char *)c->name);
    }
    return ACC_OK;
}

static void text_copy(const xmlNode *n, char *dst)
{
    size_t at = 0;
    for (const xmlNode *c = n->children; c; c = c->next)
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content) {
            size_t l = strlen((const char *)c->content);
            memcpy(dst + at, c->content, l);
            at += l;
        }
    dst[at] = '\0';
}

acc_err acc_proto_text(const xmlNode *n, size_t max, char **out, struct acc_error *err)
{
    size_t len;
    acc_err rc = text_len(n, &len, err);

    *out = NULL;
    if (rc)
        return rc;
    if (len > max)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: longer than %zu bytes",
                              (const char *)n->name, max);
    *out = malloc(len + 1);
    if (!*out)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    text_copy(n, *out);
    return ACC_OK;
}

acc_err acc_proto_text_buf(const xmlNode *n, char *buf, size_t size, struct acc_error *err)
{
    size_t len;
    acc_err rc = text_len(n, &len, err);

    if (rc)
        return rc;
    if (len + 1 > size)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: longer than %zu bytes",
                              (const char *)n->name, size - 1);
    text_copy(n, buf);
    return ACC_OK;
}

/* "Preview: amount" or "Start". */
static void where(const xmlNode *n, const char *what, char *out, size_t size)
{
    snprintf(out, size, "%s%s%s", (const char *)n->name, what ? ": " : "", what ? what : "");
}

acc_err acc_proto_i64(const xmlNode *n, const char *what, const char *s, int64_t min, int64_t max,
                      int64_t *out, struct acc_error *err)
{
    char w[160];
    where(n, what, w, sizeof w);
    /* Digits only (a leading '-' where min allows): no blanks, no '+'. */
    size_t i = s[0] == '-' && min < 0 ? 1 : 0;
    bool digits = s[i] != '\0' && strlen(s) <= 20;
    for (; s[i]; i++)
        if (s[i] < '0' || s[i] > '9')
            digits = false;
    if (!digits || acc_parse_i64(s, min, max, out, NULL) != ACC_OK)
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: '%.40s' is not a whole number from %lld to %lld", w, s,
                              (long long)min, (long long)max);
    return ACC_OK;
}

acc_err acc_proto_u64(const xmlNode *n, const char *what, const char *s, uint64_t *out,
                      struct acc_error *err)
{
    char w[160];
    where(n, what, w, sizeof w);
    uint64_t v = 0;
    bool ok = s[0] != '\0' && strlen(s) <= 20;
    for (size_t i = 0; ok && s[i]; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
            ok = false;
        else
            v = v * 10 + d;
    }
    if (!ok)
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: '%.40s' is not a whole number from 0 to %llu", w, s,
                              (unsigned long long)UINT64_MAX);
    *out = v;
    return ACC_OK;
}

acc_err acc_proto_bool(const xmlNode *n, const char *what, const char *s, bool *out,
                       struct acc_error *err)
{
    char w[160];
    where(n, what, w, sizeof w);
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *out = false;
    else
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: '%.40s' is not true or false", w, s);
    return ACC_OK;
}

acc_err acc_proto_time(const xmlNode *n, const char *what, const char *s, acc_time *out,
                       struct acc_error *err)
{
    char w[160];
    struct acc_error e;
    where(n, what, w, sizeof w);
    if (acc_time_parse(s, out, &e) != ACC_OK)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: %s", w, e.msg);
    return ACC_OK;
}

acc_err acc_proto_duration(const xmlNode *n, const char *what, const char *s, int64_t *out,
                           struct acc_error *err)
{
    char w[160];
    struct acc_error e;
    where(n, what, w, sizeof w);
    if (acc_duration_parse(s, out, &e) != ACC_OK)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: %s", w, e.msg);
    if (*out <= 0 || *out > ACC_TIME_MAX)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: the duration '%.40s' must be positive",
                              w, s);
    return ACC_OK;
}

acc_err acc_proto_el_time(const xmlNode *n, acc_time *out, struct acc_error *err)
{
    char text[64];
    acc_err rc = acc_proto_attrs(n, NULL, err);
    if (!rc)
        rc = acc_proto_text_buf(n, text, sizeof text, err);
    if (!rc)
        rc = acc_proto_time(n, NULL, acc_strtrim(text), out, err);
    return rc;
}

acc_err acc_proto_el_duration(const xmlNode *n, int64_t *out, struct acc_error *err)
{
    char text[64];
    acc_err rc = acc_proto_attrs(n, NULL, err);
    if (!rc)
        rc = acc_proto_text_buf(n, text, sizeof text, err);
    if (!rc)
        rc = acc_proto_duration(n, NULL, acc_strtrim(text), out, err);
    return rc;
}

acc_err acc_proto_kind(const xmlNode *n, const char *s, enum acc_resource_kind *out,
                       struct acc_error *err)
{
    if (strcmp(s, "nodes") == 0)
        *out = ACC_RES_NODES;
    else if (strcmp(s, "bandwidth") == 0)
        *out = ACC_RES_BANDWIDTH;
    else
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: kind '%.40s' is neither nodes nor bandwidth",
                              (const char *)n->name, s);
    return ACC_OK;
}

acc_err acc_proto_name(const xmlNode *n, const char *what, const char *s, char *buf, size_t size,
                       struct acc_error *err)
{
    char w[160];
    where(n, what, w, sizeof w);
    if (!acc_name_valid(s, size - 1))
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: '%.64s' is not a name of 1 to %zu characters A-Z a-z 0-9 . _ -",
                              w, s, size - 1);
    acc_strlcpy(buf, s, size);
    return ACC_OK;
}

bool acc_proto_key_ok(const char *key)
{
    size_t n = 0;
    if (!key)
        return false;
    for (; key[n]; n++) {
        char c = key[n];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == ':' || c == '-';
        if (!ok || n >= ACC_KEY_MAX - 1)
            return false;
    }
    /* "." and ".." would be path segments of their own. */
    return n > 0 && strcmp(key, ".") != 0 && strcmp(key, "..") != 0;
}

acc_err acc_proto_key(const xmlNode *n, const char *what, const char *s, char *buf,
                      struct acc_error *err)
{
    char w[160];
    where(n, what, w, sizeof w);
    if (!acc_proto_key_ok(s))
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: '%.100s' is not a key of 1 to %d characters A-Z a-z 0-9 . _ : -",
                              w, s, ACC_KEY_MAX - 1);
    acc_strlcpy(buf, s, ACC_KEY_MAX);
    return ACC_OK;
}

acc_err acc_proto_resource(const xmlNode *n, const char *amount_attr, enum acc_resource_kind *kind,
                           char *name, size_t name_size, int64_t *amount, struct acc_error *err)
{
    const char *allowed[] = {"kind", "name", amount_attr, NULL};
    const char *k, *nm, *a;
    acc_err rc = acc_proto_attrs(n, allowed, err);

    if (!rc && n->children)
        rc =
            acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err, "%s: must be empty", (const char *)n->name);
    if (!rc)
        rc = acc_proto_attr_req(n, "kind", &k, err);
    if (!rc)
        rc = acc_proto_attr_req(n, "name", &nm, err);
    if (!rc)
        rc = acc_proto_attr_req(n, amount_attr, &a, err);
    if (!rc)
        rc = acc_proto_kind(n, k, kind, err);
    if (!rc)
        rc = acc_proto_name(n, "name", nm, name, name_size, err);
    if (!rc)
        rc = acc_proto_i64(n, amount_attr, a, 1, INT64_MAX, amount, err);
    return rc;
}

acc_err acc_proto_children(const xmlNode *parent, const char *const *names, const xmlNode **found,
                           size_t n, struct acc_error *err)
{
    const xmlNode *c = NULL;
    acc_err rc;

    for (size_t i = 0; i < n; i++)
        found[i] = NULL;
    while (!(rc = acc_proto_next(parent, &c, err)) && c) {
        size_t i = 0;
        while (i < n && strcmp((const char *)c->name, names[i] + (names[i][0] == '?')) != 0)
            i++;
        if (i == n)
            return acc_proto_unknown(c, err);
        if (found[i])
            return acc_proto_twice(c, err);
        found[i] = c;
    }
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (!found[i] && names[i][0] != '?')
            return acc_proto_missing(parent, names[i], err);
    return ACC_OK;
}

/* Printable ASCII without blanks, 1 .. max bytes. */
bool acc_proto_token_ok(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f || n >= max)
            return false;
    return n > 0;
}
