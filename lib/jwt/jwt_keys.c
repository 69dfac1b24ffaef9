/* SPDX-License-Identifier: Apache-2.0 */
/* jwt_keys.c - the cache of each issuer's keys (by issuer URL): its
 * discovery document's jwks_uri and the signing keys of its JWKS, with
 * when they were fetched.  Keys are fetched when none are held, when
 * they are older than max_age, or for a kid they do not hold, but never
 * sooner than refresh_min after the last try, so that a client sending
 * made-up kids cannot make accordd hammer the provider.  A failed fetch
 * keeps what is held.  Only RSA keys and EC keys on P-256 for signing
 * are kept: a symmetric ("oct") key is never used, so that no HMAC can be
 * checked with a key anyone may read. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/header.h>
#include <curl/curl.h>

#include "../common/log.h"
#include "jwt_internal.h"

struct key {
    cjose_jwk_t *jwk;
    char *kid; /* NULL: the JWKS gave none */
    cjose_jwk_kty_t kty;
};

struct issuer_keys {
    char *url;
    pthread_mutex_t lock;
    char *jwks_uri;
    struct key *keys;
    size_t n_keys;
    int64_t fetched; /* the last fetch that succeeded (0: never) */
    int64_t tried;   /* the last try (0: never) */
    char last_error[300];
    struct issuer_keys *next;
};

struct acc_jwt_cache {
    pthread_mutex_t lock; /* the list */
    struct issuer_keys *head;
};

struct acc_jwt_cache *acc_jwt_cache_new(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return NULL;
    struct acc_jwt_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void keys_clear(struct issuer_keys *ik)
{
    for (size_t i = 0; i < ik->n_keys; i++) {
        cjose_jwk_release(ik->keys[i].jwk);
        free(ik->keys[i].kid);
    }
    free(ik->keys);
    ik->keys = NULL;
    ik->n_keys = 0;
}

void acc_jwt_cache_free(struct acc_jwt_cache *cache)
{
    if (!cache)
        return;
    for (struct issuer_keys *ik = cache->head, *next; ik; ik = next) {
        next = ik->next;
        keys_clear(ik);
        free(ik->jwks_uri);
        free(ik->url);
        pthread_mutex_destroy(&ik->lock);
        free(ik);
    }
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

static struct issuer_keys *entry_of(struct acc_jwt_cache *cache, const char *url)
{
    pthread_mutex_lock(&cache->lock);
    struct issuer_keys *ik = cache->head;
    while (ik && strcmp(ik->url, url) != 0)
        ik = ik->next;
    if (!ik && (ik = calloc(1, sizeof *ik))) {
        if ((ik->url = strdup(url))) {
            pthread_mutex_init(&ik->lock, NULL);
            ik->next = cache->head;
            cache->head = ik;
        } else {
            free(ik);
            ik = NULL;
        }
    }
    pthread_mutex_unlock(&cache->lock);
    return ik;
}

/* One key of a JWKS, if it is one to keep. */
static bool keep_key(json_t *k, cjose_jwk_kty_t *kty)
{
    const char *t = json_string_value(json_object_get(k, "kty"));
    const char *use = json_string_value(json_object_get(k, "use"));
    const char *alg = json_string_value(json_object_get(k, "alg"));
    if (!t || (use && strcmp(use, "sig") != 0))
        return false;
    if (strcmp(t, "RSA") == 0 && (!alg || strcmp(alg, "RS256") == 0)) {
        *kty = CJOSE_JWK_KTY_RSA;
        return true;
    }
    const char *crv = json_string_value(json_object_get(k, "crv"));
    if (strcmp(t, "EC") == 0 && crv && strcmp(crv, "P-256") == 0 &&
        (!alg || strcmp(alg, "ES256") == 0)) {
        *kty = CJOSE_JWK_KTY_EC;
        return true;
    }
    return false; /* "oct" among them: never an HMAC key */
}

static acc_err read_jwks(struct issuer_keys *ik, json_t *jwks, struct acc_error *err)
{
    json_t *keys = json_object_get(jwks, "keys");
    if (!json_is_array(keys))
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "the JWKS of %.200s has no \"keys\" array",
                             ik->url);
    struct key *fresh = calloc(ACC_JWT_MAX_KEYS, sizeof *fresh);
    if (!fresh)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    size_t n = 0, i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        cjose_jwk_kty_t kty;
        if (n >= ACC_JWT_MAX_KEYS || !json_is_object(k) || !keep_key(k, &kty))
            continue;
        cjose_err ce;
        cjose_jwk_t *jwk = cjose_jwk_import_json((cjose_header_t *)k, &ce);
        if (!jwk) {
            acc_log_warn("issuer %s: a key of its JWKS is not usable: %s", ik->url, ce.message);
            continue;
        }
        const char *kid = json_string_value(json_object_get(k, "kid"));
        fresh[n] = (struct key){jwk, kid ? strdup(kid) : NULL, kty};
        n++;
    }
    if (n == 0) {
        free(fresh);
        return acc_error_set(err, ACC_ERR_UNAVAILABLE,
                             "the JWKS of %.200s holds no RS256 or ES256 signing key", ik->url);
    }
    keys_clear(ik);
    ik->keys = fresh;
    ik->n_keys = n;
    return ACC_OK;
}

/* The discovery document (once: its jwks_uri is kept), then the JWKS. */
static acc_err fetch(struct issuer_keys *ik, const struct acc_jwt_issuer *is, struct acc_error *err)
{
    acc_err rc;
    json_t *doc = NULL;
    if (!ik->jwks_uri) {
        char url[1200];
        size_t n = strlen(is->url);
        snprintf(url, sizeof url, "%.*s/.well-known/openid-configuration",
                 (int)(n && is->url[n - 1] == '/' ? n - 1 : n), is->url);
        if ((rc = jwt_fetch_json(url, is->ca_file, is->timeout, &doc, err)))
            return rc;
        const char *iss = json_string_value(json_object_get(doc, "issuer"));
        const char *uri = json_string_value(json_object_get(doc, "jwks_uri"));
        if (!iss || strcmp(iss, is->url) != 0)
            rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                               "the discovery document of %.200s names another issuer", is->url);
        else if (!uri || strncmp(uri, "https://", 8) != 0)
            rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                               "the discovery document of %.200s names no https:// jwks_uri",
                               is->url);
        else if (!(ik->jwks_uri = strdup(uri)))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        json_decref(doc);
        if (rc)
            return rc;
    }
    if ((rc = jwt_fetch_json(ik->jwks_uri, is->ca_file, is->timeout, &doc, err)))
        return rc;
    rc = read_jwks(ik, doc, err);
    json_decref(doc);
    return rc;
}

static struct key *find(struct issuer_keys *ik, const char *kid)
{
    for (size_t i = 0; kid && i < ik->n_keys; i++) {
        if (ik->keys[i].kid && strcmp(ik->keys[i].kid, kid) == 0)
            return &ik->keys[i];
    }
    return NULL;
}

/* Fetches the keys if refresh_min allows: ACC_OK when it did and they
 * came; the failure (kept in last_error) when they did not; and
 * ACC_ERR_BUSY when it is too soon to try. */
static acc_err maybe_fetch(struct issuer_keys *ik, const struct acc_jwt_issuer *is, int64_t now,
                           struct acc_error *err)
{
    if (ik->tried && now < ik->tried + is->refresh_min)
        return ACC_ERR_BUSY;
    ik->tried = now;
    acc_err rc = fetch(ik, is, err);
    if (rc) {
        /* a discovery document that changed is read again next time */
        free(ik->jwks_uri);
        ik->jwks_uri = NULL;
        snprintf(ik->last_error, sizeof ik->last_error, "%.299s", err->msg);
        acc_log_warn("issuer %s: %s (keys held: %zu)", is->url, err->msg, ik->n_keys);
        return rc;
    }
    ik->fetched = now;
    ik->last_error[0] = '\0';
    acc_log_info("issuer %s: %zu signing keys fetched", is->url, ik->n_keys);
    return ACC_OK;
}

acc_err jwt_keys_with(struct acc_jwt_cache *cache, const struct acc_jwt_issuer *is, const char *kid,
                      cjose_jwk_kty_t kty, int64_t now,
                      bool (*check)(const cjose_jwk_t *key, void *ctx), void *ctx, bool *found,
                      struct acc_error *err)
{
    *found = false;
    struct issuer_keys *ik = entry_of(cache, is->url);
    if (!ik)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_lock(&ik->lock);
    struct acc_error fe = {0};
    acc_err fetched = ACC_ERR_BUSY;
    if (!ik->n_keys || now >= ik->fetched + is->max_age || (kid && !find(ik, kid)))
        fetched = maybe_fetch(ik, is, now, &fe);
    for (size_t i = 0; i < ik->n_keys && !*found; i++) {
        struct key *k = &ik->keys[i];
        if (k->kty != kty || (kid && (!k->kid || strcmp(k->kid, kid) != 0)))
            continue;
        if (kid) {
            *found = true;
            check(k->jwk, ctx);
        } else if (check(k->jwk, ctx)) {
            *found = true;
        }
    }
    acc_err rc = ACC_OK;
    if (!*found && kid &&
        (fetched == ACC_ERR_BUSY ? ik->last_error[0] != '\0' : fetched != ACC_OK)) {
        /* The key may be a new one the issuer could not be asked for. */
        int64_t wait = ik->tried + is->refresh_min - now;
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                           "the token's key is not among the keys held for issuer %.200s, and "
                           "the issuer cannot be asked for it now (%.300s)",
                           is->url, ik->last_error);
        err->retry_after = wait > 1 ? wait : 1;
    } else if (!*found && !kid && !ik->n_keys) {
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                           "no keys of issuer %.200s are held and it cannot be asked for them "
                           "now (%.300s)",
                           is->url, ik->last_error);
        int64_t wait = ik->tried + is->refresh_min - now;
        err->retry_after = wait > 1 ? wait : 1;
    }
    pthread_mutex_unlock(&ik->lock);
    return rc;
}
