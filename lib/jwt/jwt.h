/* SPDX-License-Identifier: Apache-2.0 */
/* jwt.h - JWT access tokens of trusted issuers (OpenID Connect providers:
 * the WLCG common JWT profile, EGI Check-in, SciTokens), verified with
 * cjose: no signature is checked by hand here.
 *
 * An issuer is found by the token's "iss" (acc_jwt_peek_issuer, before
 * anything is trusted); its keys come from its discovery document
 * (ISSUER/.well-known/openid-configuration, whose "issuer" must be the
 * issuer itself) and the JWKS it names, both over HTTPS only (libcurl,
 * the issuer's CA file or the system's).  They are cached per issuer URL
 * (struct acc_jwt_cache, shared by every request and every configuration
 * generation) and fetched again when they are older than max_age, or for
 * a kid they do not hold, but never sooner than refresh_min after the
 * last fetch; a failed fetch keeps the keys already held, so that they
 * still verify while the provider is down.
 *
 * What a token must be to pass: at most ACC_JWT_MAX_TOKEN bytes and
 * ACC_JWT_MAX_CLAIMS claims; compact JWS; "alg" one of the issuer's
 * algorithms (RS256, ES256; never "none" and never an HMAC: the JWKS's
 * symmetric keys are never used), matching the key's type (RSA for
 * RS256, EC P-256 for ES256); signed by a key of the issuer's JWKS (by
 * "kid"); "iss" the issuer's URL; "aud" (a string or an array) naming
 * the audience; "exp" present and not past, "nbf" and "iat" not in the
 * future, each within the leeway.  Every refusal says why in err->msg
 * (expired, wrong audience, bad signature, ...) and never holds the
 * token: ACC_ERR_UNAUTHORIZED; ACC_ERR_UNAVAILABLE (with retry_after)
 * when the token's key is not held and the issuer could not be asked for
 * it.  Thread-safe. */
#ifndef ACC_JWT_H
#define ACC_JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

#define ACC_JWT_MAX_TOKEN  8192 /* bytes of one token */
#define ACC_JWT_MAX_CLAIMS 64   /* members of its claims object */
#define ACC_JWT_MAX_GROUPS 64   /* groups (and scopes) taken from one token */
#define ACC_JWT_MAX_KEYS   32   /* keys taken from one JWKS */

/* The algorithms an issuer may sign with (a mask). */
#define ACC_JWT_RS256 1u
#define ACC_JWT_ES256 2u

/* One trusted issuer, as the verifier needs it (the caller's strings). */
struct acc_jwt_issuer {
    const char *url;          /* its "iss", https:// */
    const char *audience;     /* must be one of the token's "aud" */
    const char *ca_file;      /* CA file its HTTPS must verify against; NULL: the system's */
    unsigned algs;            /* ACC_JWT_RS256 | ACC_JWT_ES256 */
    int64_t leeway;           /* seconds of clock skew allowed on exp, nbf, iat */
    int64_t refresh_min;      /* seconds between two fetches of its keys, at least */
    int64_t max_age;          /* seconds keys are used before they are fetched again */
    int64_t timeout;          /* seconds one fetch may take */
    const char *user_claim;   /* the claim that names the user; NULL: "sub" */
    const char *groups_claim; /* the claim of its groups; NULL: "wlcg.groups" (and
                               * "eduperson_entitlement" too when it is absent) */
};

/* What a verified token says. */
struct acc_jwt_claims {
    char *iss;
    char *sub;     /* NULL when absent */
    char *user;    /* the user_claim's value; NULL when absent or not a string */
    char **groups; /* the groups claim (a string or an array of strings) */
    size_t n_groups;
    char **scopes; /* "scope" (space-separated) or "scp" (an array) */
    size_t n_scopes;
    int64_t exp;
};

struct acc_jwt_cache;

/* An empty cache (also initialises libcurl: call it before threads).
 * NULL when out of memory. */
struct acc_jwt_cache *acc_jwt_cache_new(void);
void acc_jwt_cache_free(struct acc_jwt_cache *cache);

/* Whether the bearer credential looks like a JWT (three base64url parts),
 * so that it is not a static token. */
bool acc_jwt_looks_like(const char *token);

/* The token's "iss", read before anything is verified (to find its
 * issuer), into out (size bytes).  ACC_ERR_UNAUTHORIZED when the token
 * is not a JWT, has no "iss" or is over the bounds. */
acc_err acc_jwt_peek_issuer(const char *token, char *out, size_t size, struct acc_error *err);

/* Verifies token as one of issuer's at time now (seconds since the epoch)
 * and fills *out (released with acc_jwt_claims_release, also on failure). */
acc_err acc_jwt_verify(struct acc_jwt_cache *cache, const struct acc_jwt_issuer *issuer,
                       const char *token, int64_t now, struct acc_jwt_claims *out,
                       struct acc_error *err);

/* Whether the token's "aud" (a string or an array) names audience, read
 * without verifying anything: what accordd decides by whether to forward
 * a user's token to a site (the site verifies it).  false for anything
 * that is not a JWT with such an "aud". */
bool acc_jwt_names_audience(const char *token, const char *audience);

bool acc_jwt_has_scope(const struct acc_jwt_claims *c, const char *scope);
void acc_jwt_claims_release(struct acc_jwt_claims *c);

/* The algorithms a configuration's "algorithms" value names (RS256, ES256,
 * separated by blanks or commas) into *algs (ACC_JWT_RS256 | ...);
 * ACC_ERR_CONFIG naming a word that is neither (none and HMACs never are)
 * or an empty list.  accordd's [issuer NAME] and accord-site's read it
 * alike. */
acc_err acc_jwt_algorithms_parse(const char *v, unsigned *algs, struct acc_error *err);

/* A string a client sent, made fit for a message and a header: at most
 * max characters of printable ASCII, others (and quotes, backslashes) as
 * '?', "..." when cut. */
void acc_jwt_printable(const char *s, char *out, size_t size, size_t max);

#endif
