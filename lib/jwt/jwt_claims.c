/* SPDX-License-Identifier: Apache-2.0 */
/* jwt_claims.c - a token's parts and its claims: the unverified look at
 * "iss" that finds the issuer, and once the signature holds, the checks
 * of iss, aud, exp, nbf and iat and what the caller takes from the claims
 * (sub, the user claim, groups, scopes).  Everything a client sent is
 * bounded: the token's size, the claims' count, the groups' and scopes'
 * count and length. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "jwt_internal.h"

#define MAX_STRING 512 /* bytes of one group, scope or name taken */

void acc_jwt_printable(const char *s, char *out, size_t size, size_t max)
{
    size_t n = 0, i = 0;
    if (!size)
        return;
    for (; s && s[i] && i < max && n + 1 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[n++] = ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\' ? (char)ch : '?';
    }
    if (s && s[i] && n + 4 < size) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

static bool b64url_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

bool acc_jwt_looks_like(const char *token)
{
    if (!token)
        return false;
    int dots = 0;
    size_t part = 0;
    for (const char *p = token; *p; p++) {
        if (*p == '.') {
            if (part == 0 && dots < 2)
                return false; /* header and payload are never empty */
            dots++;
            part = 0;
        } else if (b64url_char(*p)) {
            part++;
        } else {
            return false;
        }
    }
    return dots == 2;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/* base64url without padding into out (at least len * 3 / 4 + 1 bytes);
 * its length, or -1. */
static long b64url_decode(const char *s, size_t len, unsigned char *out)
{
    unsigned acc = 0;
    int bits = 0;
    long n = 0;
    if (len % 4 == 1)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

acc_err jwt_part_json(const char *token, int part, json_t **out, struct acc_error *err)
{
    *out = NULL;
    size_t len = strlen(token);
    if (len > ACC_JWT_MAX_TOKEN)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token is longer than %d bytes",
                             ACC_JWT_MAX_TOKEN);
    if (!acc_jwt_looks_like(token))
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token is not a JWT (three base64url parts)");
    const char *p = token;
    for (int i = 0; i < part; i++)
        p = strchr(p, '.') + 1;
    size_t n = strcspn(p, ".");
    unsigned char *raw = malloc(n * 3 / 4 + 1);
    if (!raw)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    long got = b64url_decode(p, n, raw);
    json_t *doc = NULL;
    if (got >= 0) {
        json_error_t je;
        doc = json_loadb((const char *)raw, (size_t)got, JSON_REJECT_DUPLICATES, &je);
    }
    free(raw);
    const char *what = part == 0 ? "header" : "claims";
    if (!json_is_object(doc)) {
        json_decref(doc);
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token's %s are not a JSON object in base64url", what);
    }
    if (json_object_size(doc) > ACC_JWT_MAX_CLAIMS) {
        json_decref(doc);
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token's %s have more than %d members",
                             what, ACC_JWT_MAX_CLAIMS);
    }
    *out = doc;
    return ACC_OK;
}

acc_err acc_jwt_peek_issuer(const char *token, char *out, size_t size, struct acc_error *err)
{
    json_t *claims;
    acc_err rc = jwt_part_json(token, 1, &claims, err);
    if (rc)
        return rc;
    const char *iss = json_string_value(json_object_get(claims, "iss"));
    if (!iss || !*iss)
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token names no issuer (\"iss\")");
    else if (strlen(iss) >= size)
        rc = acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token's issuer is longer than %zu bytes",
                           size - 1);
    else
        memcpy(out, iss, strlen(iss) + 1);
    json_decref(claims);
    return rc;
}

bool acc_jwt_names_audience(const char *token, const char *audience)
{
    json_t *claims;
    struct acc_error e;
    if (!token || !audience || jwt_part_json(token, 1, &claims, &e))
        return false;
    json_t *aud = json_object_get(claims, "aud");
    bool named = json_is_string(aud) && strcmp(json_string_value(aud), audience) == 0;
    for (size_t i = 0; !named && json_is_array(aud) && i < json_array_size(aud); i++) {
        const char *a = json_string_value(json_array_get(aud, i));
        named = a && strcmp(a, audience) == 0;
    }
    json_decref(claims);
    return named;
}

static acc_err add_string(char ***list, size_t *n, const char *s, const char *what,
                          struct acc_error *err)
{
    if (*n >= ACC_JWT_MAX_GROUPS)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token has more than %d %s",
                             ACC_JWT_MAX_GROUPS, what);
    if (strlen(s) > MAX_STRING)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "one of the token's %s is longer than %d bytes", what, MAX_STRING);
    char **v = realloc(*list, (*n + 1) * sizeof **list);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    *list = v;
    if (!(v[*n] = strdup(s)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    (*n)++;
    return ACC_OK;
}

/* A claim that is a string (split at spaces when split) or an array of
 * strings, into list. */
static acc_err take_strings(json_t *claim, bool split, char ***list, size_t *n, const char *what,
                            struct acc_error *err)
{
    acc_err rc = ACC_OK;
    if (json_is_string(claim) && split) {
        const char *s = json_string_value(claim);
        while (!rc && *s) {
            size_t len = strcspn(s, " ");
            if (len) {
                char one[MAX_STRING + 2];
                if (len > MAX_STRING)
                    return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                                         "one of the token's %s is longer than %d bytes", what,
                                         MAX_STRING);
                memcpy(one, s, len);
                one[len] = '\0';
                rc = add_string(list, n, one, what, err);
            }
            s += len + (s[len] == ' ');
        }
        return rc;
    }
    if (json_is_string(claim))
        return add_string(list, n, json_string_value(claim), what, err);
    if (!json_is_array(claim))
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token's %s are neither a string nor an array", what);
    size_t i;
    json_t *v;
    json_array_foreach(claim, i, v)
    {
        if (!json_is_string(v))
            return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                                 "the token's %s hold something other than strings", what);
        if ((rc = add_string(list, n, json_string_value(v), what, err)))
            return rc;
    }
    return ACC_OK;
}

static bool aud_names(json_t *aud, const char *audience)
{
    if (json_is_string(aud))
        return strcmp(json_string_value(aud), audience) == 0;
    size_t i;
    json_t *v;
    json_array_foreach(aud, i, v)
    {
        if (i >= ACC_JWT_MAX_GROUPS)
            break;
        if (json_is_string(v) && strcmp(json_string_value(v), audience) == 0)
            return true;
    }
    return false;
}

/* A NumericDate claim: *present, and its value (seconds). */
static acc_err date_of(json_t *claims, const char *name, bool *present, int64_t *out,
                       struct acc_error *err)
{
    json_t *v = json_object_get(claims, name);
    *present = v != NULL;
    if (!v)
        return ACC_OK;
    if (json_is_integer(v))
        *out = (int64_t)json_integer_value(v);
    else if (json_is_real(v) && json_real_value(v) > -1e15 && json_real_value(v) < 1e15)
        *out = (int64_t)json_real_value(v);
    else
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token's \"%s\" is not a number", name);
    return ACC_OK;
}

static acc_err check_times(const struct acc_jwt_issuer *is, json_t *claims, int64_t now,
                           int64_t *exp, struct acc_error *err)
{
    bool has;
    int64_t t = 0;
    acc_err rc = date_of(claims, "exp", &has, &t, err);
    if (rc)
        return rc;
    if (!has)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token has no expiry (\"exp\")");
    if (now - is->leeway > t)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token has expired (%lld s ago; leeway %lld s)",
                             (long long)(now - t), (long long)is->leeway);
    *exp = t;
    if ((rc = date_of(claims, "nbf", &has, &t, err)))
        return rc;
    if (has && now + is->leeway < t)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token is not valid yet (\"nbf\" is %lld s ahead)",
                             (long long)(t - now));
    if ((rc = date_of(claims, "iat", &has, &t, err)))
        return rc;
    if (has && now + is->leeway < t)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token was issued in the future (\"iat\" is %lld s ahead)",
                             (long long)(t - now));
    return ACC_OK;
}

static acc_err copy_claim(json_t *claims, const char *name, char **out, struct acc_error *err)
{
    const char *s = json_string_value(json_object_get(claims, name));
    if (!s)
        return ACC_OK;
    if (strlen(s) > MAX_STRING)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token's \"%.60s\" is longer than %d bytes", name, MAX_STRING);
    if (!(*out = strdup(s)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

acc_err jwt_claims_check(const struct acc_jwt_issuer *is, json_t *claims, int64_t now,
                         struct acc_jwt_claims *out, struct acc_error *err)
{
    const char *iss = json_string_value(json_object_get(claims, "iss"));
    if (!iss || strcmp(iss, is->url) != 0)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "the token's issuer (\"iss\") is not %.200s", is->url);
    json_t *aud = json_object_get(claims, "aud");
    if (!aud)
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED, "the token names no audience (\"aud\")");
    if (!aud_names(aud, is->audience)) {
        char shown[100];
        acc_jwt_printable(json_is_string(aud) ? json_string_value(aud) : "an array", shown,
                          sizeof shown, 80);
        return acc_error_set(err, ACC_ERR_UNAUTHORIZED,
                             "wrong audience: the token is for %s, not for %.200s", shown,
                             is->audience);
    }
    acc_err rc = check_times(is, claims, now, &out->exp, err);
    if (rc)
        return rc;
    if ((rc = copy_claim(claims, "iss", &out->iss, err)) ||
        (rc = copy_claim(claims, "sub", &out->sub, err)) ||
        (rc = copy_claim(claims, is->user_claim ? is->user_claim : "sub", &out->user, err)))
        return rc;
    json_t *g = json_object_get(claims, is->groups_claim ? is->groups_claim : "wlcg.groups");
    if (!g && !is->groups_claim)
        g = json_object_get(claims, "eduperson_entitlement");
    if (g && (rc = take_strings(g, false, &out->groups, &out->n_groups, "groups", err)))
        return rc;
    json_t *scope = json_object_get(claims, "scope");
    if (!scope)
        scope = json_object_get(claims, "scp");
    if (scope && (rc = take_strings(scope, true, &out->scopes, &out->n_scopes, "scopes", err)))
        return rc;
    return ACC_OK;
}

bool acc_jwt_has_scope(const struct acc_jwt_claims *c, const char *scope)
{
    for (size_t i = 0; i < c->n_scopes; i++) {
        if (strcmp(c->scopes[i], scope) == 0)
            return true;
    }
    return false;
}

void acc_jwt_claims_release(struct acc_jwt_claims *c)
{
    free(c->iss);
    free(c->sub);
    free(c->user);
    for (size_t i = 0; i < c->n_groups; i++)
        free(c->groups[i]);
    free(c->groups);
    for (size_t i = 0; i < c->n_scopes; i++)
        free(c->scopes[i]);
    free(c->scopes);
    memset(c, 0, sizeof *c);
}
