/* SPDX-License-Identifier: Apache-2.0 */
/* jwt_verify.c - one token against one issuer: the header's algorithm on
 * the allow-list and matching the key's type, the key by kid from the
 * cache (jwt_keys.c), the signature checked by cjose, then the claims
 * (jwt_claims.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/header.h>
#include <cjose/jws.h>

#include "jwt_internal.h"

acc_err acc_jwt_algorithms_parse(const char *v, unsigned *algs, struct acc_error *err)
{
    unsigned got = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, " ,\t", &save); t;
         t = strtok_r(NULL, " ,\t", &save)) {
        if (strcmp(t, "RS256") == 0)
            got |= ACC_JWT_RS256;
        else if (strcmp(t, "ES256") == 0)
            got |= ACC_JWT_ES256;
        else
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "algorithms: '%s' is not allowed (RS256 and ES256 only: never "
                                 "none, never an HMAC)",
                                 t);
    }
    if (!got)
        return acc_error_set(err, ACC_ERR_CONFIG, "algorithms names none (RS256, ES256)");
    *algs = got;
    return ACC_OK;
}

struct attempt {
    cjose_jws_t *jws;
    bool verified;
};

static bool try_key(const cjose_jwk_t *key, void *ctx)
{
    struct attempt *a = ctx;
    cjose_err ce;
    a->verified = cjose_jws_verify(a->jws, key, &ce);
    return a->verified;
}

/* The header: the algorithm (its key type into *kty) and the kid (NULL:
 * none; a copy in kid_buf). */
static acc_err read_header(const struct acc_jwt_issuer *is, const char *token, cjose_jwk_kty_t *kty,
                           char *kid_buf, size_t kid_size, bool *has_kid, struct acc_error *err)
{
    json_t *h;
    acc_err rc = jwt_part_json(token, 0, &h, err);
    if (rc)
        return rc;
    const char *alg = json_string_value(json_object_get(h, "alg"));
    json_t *kid = json_object_get(h, "kid");
    char shown[40];
    acc_jwt_printable(alg ? alg : "", shown, sizeof shown, 20);
    if (!alg)
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token's header names no algorithm");
    else if (strcmp(alg, "none") == 0 || strcmp(alg, "NONE") == 0 || strcmp(alg, "None") == 0)
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                           "the token is not signed (alg none): never accepted");
    else if (strcmp(alg, "RS256") == 0 && (is->algs & ACC_JWT_RS256))
        *kty = CJOSE_JWK_KTY_RSA;
    else if (strcmp(alg, "ES256") == 0 && (is->algs & ACC_JWT_ES256))
        *kty = CJOSE_JWK_KTY_EC;
    else
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                           "the token's algorithm %s is not one this issuer may use (%s%s%s)",
                           shown, is->algs & ACC_JWT_RS256 ? "RS256" : "",
                           is->algs == (ACC_JWT_RS256 | ACC_JWT_ES256) ? ", " : "",
                           is->algs & ACC_JWT_ES256 ? "ES256" : "");
    *has_kid = false;
    if (!rc && kid) {
        const char *k = json_string_value(kid);
        if (!k || !*k || strlen(k) >= kid_size)
            rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                               "the token's key id (\"kid\") is not a string of at most %zu bytes",
                               kid_size - 1);
        else {
            memcpy(kid_buf, k, strlen(k) + 1);
            *has_kid = true;
        }
    }
    json_decref(h);
    return rc;
}

acc_err acc_jwt_verify(struct acc_jwt_cache *cache, const struct acc_jwt_issuer *is,
                       const char *token, int64_t now, struct acc_jwt_claims *out,
                       struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    cjose_jwk_kty_t kty = CJOSE_JWK_KTY_RSA;
    char kid[256] = "";
    bool has_kid;
    acc_err rc = read_header(is, token, &kty, kid, sizeof kid, &has_kid, err);
    if (rc)
        return rc;
    cjose_err ce;
    struct attempt a = {cjose_jws_import(token, strlen(token), &ce), false};
    if (!a.jws)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token is not a compact JWS: %s",
                             ce.message);
    bool found;
    rc = jwt_keys_with(cache, is, has_kid ? kid : NULL, kty, now, try_key, &a, &found, err);
    if (!rc && !found) {
        char shown[80];
        acc_jwt_printable(kid, shown, sizeof shown, 60);
        rc = has_kid ? acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                                     "the token is signed by a key (kid %s) that issuer %.200s "
                                     "does not publish",
                                     shown, is->url)
                     : acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                                     "bad signature: no key of issuer %.200s verifies the token",
                                     is->url);
    } else if (!rc && !a.verified) {
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                           "bad signature: the token does not verify with the key of issuer "
                           "%.200s it names (RS256 needs an RSA key, ES256 an EC P-256 one)",
                           is->url);
    }
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    if (!rc && !cjose_jws_get_plaintext(a.jws, &plain, &plain_len, &ce))
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token's claims cannot be read");
    json_t *claims = NULL;
    if (!rc) {
        json_error_t je;
        claims = json_loadb((const char *)plain, plain_len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(claims) || json_object_size(claims) > ACC_JWT_MAX_CLAIMS)
            rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                               "the token's claims are not a JSON object of at most %d members",
                               ACC_JWT_MAX_CLAIMS);
    }
    if (!rc)
        rc = jwt_claims_check(is, claims, now, out, err);
    json_decref(claims);
    cjose_jws_release(a.jws); /* the plaintext is the JWS's */
    if (rc)
        acc_jwt_claims_release(out);
    return rc;
}
