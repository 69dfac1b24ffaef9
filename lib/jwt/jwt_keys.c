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
    bool fetching;   /* a request is fetching them (without the lock) */
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

/* What one fetch brought, installed under the entry's lock. */
struct batch {
    char *jwks_uri; /* from the discovery document; NULL: the one held was used */
    struct key *keys;
    size_t n_keys;
};

static void batch_release(struct batch *b)
{
    for (size_t i = 0; i < b->n_keys; i++) {
        cjose_jwk_release(b->keys[i].jwk);
        free(b->keys[i].kid);
    }
    free(b->keys);
    free(b->jwks_uri);
    memset(b, 0, sizeof *b);
}

static acc_err read_jwks(const char *url, json_t *jwks, struct batch *b, struct acc_error *err)
{
    json_t *keys = json_object_get(jwks, "keys");
    if (!json_is_array(keys))
        return acc_error_set(err, ACC_ERR_UNAVAILABLE, "the JWKS of %.200s has no \"keys\" array",
                             url);
    if (!(b->keys = calloc(ACC_JWT_MAX_KEYS, sizeof *b->keys)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        cjose_jwk_kty_t kty;
        if (b->n_keys >= ACC_JWT_MAX_KEYS || !json_is_object(k) || !keep_key(k, &kty))
            continue;
        cjose_err ce;
        cjose_jwk_t *jwk = cjose_jwk_import_json((cjose_header_t *)k, &ce);
        if (!jwk) {
            acc_log_warn("issuer %s: a key of its JWKS is not usable: %s", url, ce.message);
            continue;
        }
        const char *kid = json_string_value(json_object_get(k, "kid"));
        b->keys[b->n_keys++] = (struct key){jwk, kid ? strdup(kid) : NULL, kty};
    }
    if (b->n_keys == 0)
        return acc_error_set(err, ACC_ERR_UNAVAILABLE,
                             "the JWKS of %.200s holds no RS256 or ES256 signing key", url);
    return ACC_OK;
}

/* The discovery document (unless jwks_uri is known), then the JWKS; no
 * lock is held meanwhile. */
static acc_err fetch(const char *jwks_uri, const struct acc_jwt_issuer *is, struct batch *b,
                     struct acc_error *err)
{
    acc_err rc;
    json_t *doc = NULL;
    if (!jwks_uri) {
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
        else if (!(b->jwks_uri = strdup(uri)))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        json_decref(doc);
        if (rc)
            return rc;
        jwks_uri = b->jwks_uri;
    }
    if ((rc = jwt_fetch_json(jwks_uri, is->ca_file, is->timeout, &doc, err)))
        return rc;
    rc = read_jwks(is->url, doc, b, err);
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

/* With ik locked: fetches the keys, releasing the lock meanwhile so that
 * requests whose keys are held are not held up by a provider that is
 * slow; one fetch at a time per issuer.  ACC_OK when they came; the
 * failure (kept in last_error) when they did not. */
static acc_err refresh(struct issuer_keys *ik, const struct acc_jwt_issuer *is, int64_t now)
{
    ik->fetching = true;
    ik->tried = now;
    char *uri = ik->jwks_uri ? strdup(ik->jwks_uri) : NULL;
    pthread_mutex_unlock(&ik->lock);
    struct batch b = {0};
    struct acc_error err = {0};
    acc_err rc = fetch(uri, is, &b, &err);
    free(uri);
    pthread_mutex_lock(&ik->lock);
    ik->fetching = false;
    if (rc) {
        /* a discovery document that changed is read again next time */
        free(ik->jwks_uri);
        ik->jwks_uri = NULL;
        snprintf(ik->last_error, sizeof ik->last_error, "%.299s", err.msg);
        acc_log_warn("issuer %s: %s (keys held: %zu)", is->url, err.msg, ik->n_keys);
        batch_release(&b);
        return rc;
    }
    keys_clear(ik);
    ik->keys = b.keys;
    ik->n_keys = b.n_keys;
    if (b.jwks_uri) {
        free(ik->jwks_uri);
        ik->jwks_uri = b.jwks_uri;
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
    acc_err fetched = ACC_ERR_BUSY; /* not tried now */
    bool want = !ik->n_keys || now >= ik->fetched + is->max_age || (kid && !find(ik, kid));
    bool may = !ik->fetching && !(ik->tried && now < ik->tried + is->refresh_min);
    if (want && may)
        fetched = refresh(ik, is, now);
    bool other_type = false; /* the kid names a key, of another type */
    for (size_t i = 0; i < ik->n_keys && !*found; i++) {
        struct key *k = &ik->keys[i];
        if (kid && k->kid && strcmp(k->kid, kid) == 0) {
            /* the key it names, of the algorithm's type (a JWKS may publish
             * an RSA and an EC key under one kid) */
            if (k->kty != kty) {
                other_type = true;
                continue;
            }
            *found = true;
            check(k->jwk, ctx);
        } else if (!kid && k->kty == kty && check(k->jwk, ctx)) {
            *found = true;
        }
    }
    /* only of another type (ES256 on an RSA key, say): it is the key the
     * token names, nothing is tried, and the signature does not verify */
    if (other_type)
        *found = true;
    acc_err rc = ACC_OK;
    bool cannot_ask =
        fetched == ACC_ERR_BUSY ? ik->fetching || ik->last_error[0] != '\0' : fetched != ACC_OK;
    if (!*found && (kid || !ik->n_keys) && cannot_ask) {
        /* The key may be a new one the issuer could not be asked for. */
        int64_t wait = ik->tried + is->refresh_min - now;
        rc = acc_error_set(err, ACC_ERR_UNAVAILABLE,
                           "the token's key is not among the keys held for issuer %.200s, and "
                           "the issuer cannot be asked for it now (%.300s)",
                           is->url, ik->fetching ? "a fetch is under way" : ik->last_error);
        err->retry_after = wait > 1 ? wait : 1;
    }
    pthread_mutex_unlock(&ik->lock);
    return rc;
}
