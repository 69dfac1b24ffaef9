/* SPDX-License-Identifier: Apache-2.0 */
/* proto_identity.c - <Identity>: whom a preview, a reservation or a job is
 * for (docs/protocol.md, "Identity").  Optional everywhere: a document from
 * an older peer has none, and the site then does what it did before. */
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "proto_internal.h"

bool acc_proto_identity_present(const struct acc_identity *id)
{
    return id && (id->user || id->subject);
}

void acc_proto_w_identity(struct acc_buf *b, const struct acc_identity *id)
{
    if (!acc_proto_identity_present(id))
        return;
    acc_buf_puts(b, "<Identity");
    acc_proto_w_attr(b, "user", id->user);
    acc_proto_w_attr(b, "issuer", id->issuer);
    acc_proto_w_attr(b, "subject", id->subject);
    acc_buf_puts(b, ">");
    for (size_t i = 0; i < id->n_groups; i++)
        acc_proto_w_el(b, "Group", id->groups[i] ? id->groups[i] : "");
    acc_proto_w_el(b, "Token", id->token);
    acc_buf_puts(b, "</Identity>");
}

/* Attribute `name` of n, when present, into *dst: 1 .. max bytes of
 * printable text (no control character). */
static acc_err attr_text(const xmlNode *n, const char *name, size_t max, char **dst,
                         struct acc_error *err)
{
    const char *v = acc_proto_attr(n, name);
    if (!v)
        return ACC_OK;
    size_t len = strlen(v);
    if (len == 0 || len > max)
        return acc_proto_fail(n, ACC_ERR_INVALID, err, "Identity: %s must be 1 to %zu bytes", name,
                              max);
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return acc_proto_fail(n, ACC_ERR_INVALID, err, "Identity: %s holds a control character",
                                  name);
    }
    if (!(*dst = acc_strdup(v)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

acc_err acc_proto_read_identity(const xmlNode *n, struct acc_identity *out, struct acc_error *err)
{
    static const char *const attrs[] = {"user", "issuer", "subject", NULL};
    struct acc_identity id = {.user = NULL};
    const xmlNode *c = NULL;
    acc_err rc = acc_proto_attrs(n, attrs, err);
    if (!rc)
        rc = attr_text(n, "user", ACC_PROTO_MAX_USER, &id.user, err);
    if (!rc)
        rc = attr_text(n, "issuer", ACC_PROTO_MAX_ISSUER, &id.issuer, err);
    if (!rc)
        rc = attr_text(n, "subject", ACC_PROTO_MAX_SUBJECT, &id.subject, err);
    if (!rc && !id.user && !id.subject)
        rc = acc_proto_fail(n, ACC_ERR_INVALID, err, "Identity: names neither user nor subject");
    if (!rc && id.issuer && !id.subject)
        rc = acc_proto_fail(n, ACC_ERR_INVALID, err, "Identity: an issuer without a subject");
    while (!rc && !(rc = acc_proto_next(n, &c, err)) && c) {
        char *text = NULL;
        if (acc_proto_is(c, "Group")) {
            if (id.n_groups == ACC_IDENTITY_MAX_GROUPS)
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Identity: more than %d groups",
                                    ACC_IDENTITY_MAX_GROUPS);
            if (!rc)
                rc = acc_proto_attrs(c, NULL, err);
            if (!rc)
                rc = acc_proto_text(c, ACC_PROTO_MAX_GROUP, &text, err);
            if (!rc && !text[0])
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Group: must not be empty");
            if (!rc && acc_identity_add_group(&id, text))
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            free(text);
        } else if (acc_proto_is(c, "Token")) {
            rc = id.token ? acc_proto_twice(c, err) : acc_proto_attrs(c, NULL, err);
            if (!rc)
                rc = acc_proto_text(c, ACC_PROTO_MAX_TOKEN, &id.token, err);
            if (!rc && !acc_proto_token_ok(id.token, ACC_PROTO_MAX_TOKEN))
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err,
                                    "Token: must be printable characters without blanks");
        } else {
            rc = acc_proto_unknown(c, err);
        }
    }
    if (rc)
        acc_identity_release(&id);
    else
        *out = id;
    return rc;
}
