/* SPDX-License-Identifier: Apache-2.0 */
/* identity.c - copying and releasing an identity (identity.h). */
#include "identity.h"

#include <stdlib.h>
#include <string.h>

static acc_err dup_field(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return ACC_OK;
    *dst = strdup(src);
    return *dst ? ACC_OK : ACC_ERR_NOMEM;
}

acc_err acc_identity_add_group(struct acc_identity *id, const char *group)
{
    if (id->n_groups >= ACC_IDENTITY_MAX_GROUPS)
        return ACC_ERR_TOO_LARGE;
    char **v = realloc(id->groups, (id->n_groups + 1) * sizeof *v);
    if (!v)
        return ACC_ERR_NOMEM;
    id->groups = v;
    if (!(v[id->n_groups] = strdup(group)))
        return ACC_ERR_NOMEM;
    id->n_groups++;
    return ACC_OK;
}

acc_err acc_identity_copy(struct acc_identity *dst, const struct acc_identity *src)
{
    memset(dst, 0, sizeof *dst);
    if (!src)
        return ACC_OK;
    acc_err rc = dup_field(&dst->user, src->user);
    if (!rc)
        rc = dup_field(&dst->issuer, src->issuer);
    if (!rc)
        rc = dup_field(&dst->subject, src->subject);
    if (!rc)
        rc = dup_field(&dst->token, src->token);
    for (size_t i = 0; !rc && i < src->n_groups; i++)
        rc = acc_identity_add_group(dst, src->groups[i]);
    if (rc)
        acc_identity_release(dst);
    return rc;
}

void acc_identity_release(struct acc_identity *id)
{
    if (!id)
        return;
    free(id->user);
    free(id->issuer);
    free(id->subject);
    if (id->token) {
        /* the bearer token is a credential: wipe it before it goes back */
        volatile char *t = id->token;
        while (*t)
            *t++ = '\0';
        free(id->token);
    }
    for (size_t i = 0; i < id->n_groups; i++)
        free(id->groups[i]);
    free(id->groups);
    memset(id, 0, sizeof *id);
}
