/* SPDX-License-Identifier: Apache-2.0 */
/* store_identity.c - an agreement's identity as one text column: a line
 * "user:V", "issuer:V", "subject:V" or "group:V" each, with '\\' and a
 * newline in V escaped as "\\\\" and "\\n".  The token is never written. */
#include <stdlib.h>
#include <string.h>

#include "../lib/common/buf.h"
#include "store_internal.h"

static void put(struct acc_buf *b, const char *name, const char *v)
{
    if (!v)
        return;
    acc_buf_puts(b, name);
    acc_buf_putc(b, ':');
    for (; *v; v++) {
        if (*v == '\\')
            acc_buf_puts(b, "\\\\");
        else if (*v == '\n')
            acc_buf_puts(b, "\\n");
        else
            acc_buf_putc(b, *v);
    }
    acc_buf_putc(b, '\n');
}

char *store_identity_pack(const struct acc_identity *id)
{
    if (!id || (!id->user && !id->subject))
        return NULL;
    struct acc_buf b = ACC_BUF_INIT;
    put(&b, "user", id->user);
    put(&b, "issuer", id->issuer);
    put(&b, "subject", id->subject);
    for (size_t i = 0; i < id->n_groups; i++)
        put(&b, "group", id->groups[i]);
    if (!acc_buf_ok(&b)) {
        acc_buf_release(&b);
        return NULL;
    }
    return acc_buf_detach(&b, NULL);
}

/* One value of [p, end) unescaped into a new string. */
static char *unescape(const char *p, const char *end)
{
    char *v = malloc((size_t)(end - p) + 1), *q = v;
    if (!v)
        return NULL;
    for (; p < end; p++) {
        if (*p == '\\' && p + 1 < end) {
            p++;
            *q++ = *p == 'n' ? '\n' : *p;
        } else {
            *q++ = *p;
        }
    }
    *q = '\0';
    return v;
}

acc_err store_identity_unpack(const char *text, struct acc_identity *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon) {
            size_t n = (size_t)(colon - p);
            char *v = unescape(colon + 1, end);
            char **field = n == 4 && !strncmp(p, "user", 4)      ? &out->user
                           : n == 6 && !strncmp(p, "issuer", 6)  ? &out->issuer
                           : n == 7 && !strncmp(p, "subject", 7) ? &out->subject
                                                                 : NULL;
            acc_err rc = v ? ACC_OK : ACC_ERR_NOMEM;
            if (!rc && field) {
                free(*field);
                *field = v;
                v = NULL;
            } else if (!rc && n == 5 && !strncmp(p, "group", 5)) {
                rc = acc_identity_add_group(out, v);
            }
            free(v);
            if (rc == ACC_ERR_NOMEM) {
                acc_identity_release(out);
                return rc;
            }
        }
        p = nl ? nl + 1 : end;
    }
    return ACC_OK;
}
