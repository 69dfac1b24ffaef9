/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_jwt.c - libFuzzer harness for what lib/jwt reads of a token before
 * and after its signature: any text as a bearer token (acc_jwt_looks_like,
 * the unverified issuer, the header), and as the claims of a verified one
 * (jwt_claims_check).  No key is fetched.  A refusal must say why; the
 * claims taken stay within their bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/jwt/jwt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct acc_jwt_issuer issuer = {
    .url = "https://idp.example.org",
    .audience = "https://accord.example.org",
    .algs = ACC_JWT_RS256 | ACC_JWT_ES256,
    .leeway = 60,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2 * ACC_JWT_MAX_TOKEN)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct acc_error err = {0};
    char iss[256];
    acc_err rc = acc_jwt_peek_issuer(text, iss, sizeof iss, &err);
    if (rc && err.msg[0] == '\0')
        abort();
    if (!rc && !acc_jwt_looks_like(text))
        abort();
    json_t *h = NULL;
    if (jwt_part_json(text, 0, &h, &err) == ACC_OK && json_object_size(h) > ACC_JWT_MAX_CLAIMS)
        abort();
    json_decref(h);
    /* the same bytes as the claims of a token whose signature held */
    json_error_t je;
    json_t *claims = json_loadb(text, size, JSON_REJECT_DUPLICATES, &je);
    if (json_is_object(claims)) {
        struct acc_jwt_claims c = {0};
        err.msg[0] = '\0';
        rc = jwt_claims_check(&issuer, claims, 1800000000, &c, &err);
        if (rc && err.msg[0] == '\0')
            abort();
        if (c.n_groups > ACC_JWT_MAX_GROUPS || c.n_scopes > ACC_JWT_MAX_GROUPS)
            abort();
        acc_jwt_claims_release(&c);
    }
    json_decref(claims);
    free(text);
    return 0;
}
