/* SPDX-License-Identifier: Apache-2.0 */
/* jwt_internal.h - what the files of lib/jwt/ share:
 *
 *   jwt_claims.c  the token's parts, its claims (unverified peek, the
 *                 checks of iss, aud, exp, nbf, iat; sub, groups, scopes)
 *   jwt_keys.c    the cache of each issuer's keys: discovery, JWKS, when
 *                 to fetch again
 *   jwt_fetch.c   one bounded HTTPS GET of a JSON document (libcurl)
 *   jwt_verify.c  the header (alg, kid), the key, cjose's signature check
 *
 * Internal names start with jwt_. */
#ifndef ACC_JWT_INTERNAL_H
#define ACC_JWT_INTERNAL_H

#include <cjose/jwk.h>
#include <jansson.h>

#include "jwt.h"

#define JWT_MAX_DOCUMENT (256 * 1024) /* bytes of a discovery document or JWKS */

/* GET url over HTTPS (ca_file NULL: the system's CAs), at most
 * JWT_MAX_DOCUMENT bytes in timeout seconds, parsed as a JSON object
 * (*out, the caller's to json_decref).  ACC_ERR_UNAVAILABLE with the
 * reason otherwise. */
acc_err jwt_fetch_json(const char *url, const char *ca_file, int64_t timeout, json_t **out,
                       struct acc_error *err);

/* The part-th (0-based) base64url part of a compact token, decoded and
 * parsed as a JSON object with at most ACC_JWT_MAX_CLAIMS members. */
acc_err jwt_part_json(const char *token, int part, json_t **out, struct acc_error *err);

/* The checks of verified claims, and what is taken from them. */
acc_err jwt_claims_check(const struct acc_jwt_issuer *is, json_t *claims, int64_t now,
                         struct acc_jwt_claims *out, struct acc_error *err);

/* Calls check(key, ctx) with the issuer's key of kid (NULL: each key of
 * kty in turn until one returns true) while the cache holds it, fetching
 * the keys when they are old or kid is unknown (refresh_min permitting).
 * *found: a key was tried.  ACC_ERR_UNAVAILABLE when no key was found and
 * the issuer could not be asked. */
acc_err jwt_keys_with(struct acc_jwt_cache *cache, const struct acc_jwt_issuer *is, const char *kid,
                      cjose_jwk_kty_t kty, int64_t now,
                      bool (*check)(const cjose_jwk_t *key, void *ctx), void *ctx, bool *found,
                      struct acc_error *err);

#endif
