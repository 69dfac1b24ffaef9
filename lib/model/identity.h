/* SPDX-License-Identifier: Apache-2.0 */
/* identity.h - whom an agreement is for, as far as the sites must know.
 *
 * accordd learns a user from a client certificate, a static token or a
 * token of a trusted issuer (docs/security.md).  The identity is what it
 * knows of that user beyond the name: the token's issuer and subject (or
 * the certificate's subject DN) and the groups the token names.  It is
 * kept with the agreement and sent with every reservation and job request,
 * so that a site maps it to a local account of its own (its mapfile) and
 * books and runs for that account only. */
#ifndef ACC_IDENTITY_H
#define ACC_IDENTITY_H

#include <stddef.h>

#include "../common/error.h"

#define ACC_IDENTITY_MAX_GROUPS 64

struct acc_identity {
    char *user;    /* the Accord user (the agreement's initiator) */
    char *issuer;  /* a token's "iss"; NULL for certificates and static tokens */
    char *subject; /* a token's "sub", or a certificate's subject DN; NULL for static tokens */
    char **groups; /* a token's groups ("/cms/production", entitlements...) */
    size_t n_groups;
    /* The user's own access token, kept only while a request is being
     * served, for sites that want it (forwarded when its audience names
     * them); never stored.  NULL: none. */
    char *token;
};

/* *dst becomes a deep copy of src (NULL src: an empty identity). */
acc_err acc_identity_copy(struct acc_identity *dst, const struct acc_identity *src);
/* Appends a group (copied); ACC_ERR_TOO_LARGE past ACC_IDENTITY_MAX_GROUPS. */
acc_err acc_identity_add_group(struct acc_identity *id, const char *group);
/* Frees what the identity owns and zeroes it. */
void acc_identity_release(struct acc_identity *id);

#endif
