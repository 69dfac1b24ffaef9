/* SPDX-License-Identifier: Apache-2.0 */
/* tokens.c - the user of a bearer token that is a JWT of an [issuer]:
 * the token verified by lib/jwt against the issuer its "iss" names, its
 * claims mapped to an Accord user by the issuer's map lines
 * (config_issuer.c), the operations its scopes allow; and the identity
 * (lib/model/identity.h) of every authenticated request.  Each refusal
 * says why, in the body and in WWW-Authenticate (RFC 6750), and never
 * holds the token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/jwt/jwt.h"
#include "http.h"

void acc_http_refuse(const struct acc_request *rq, struct acc_response *rs, acc_err code,
                     const char *error, const char *scope, const char *msg)
{
    acc_reply_error(rq, rs, code, msg, NULL);
    rs->challenge = true;
    char d[260];
    acc_jwt_printable(msg, d, sizeof d, 240);
    snprintf(rs->www_authenticate, sizeof rs->www_authenticate,
             "Bearer realm=\"accord\", error=\"%s\"%s%.60s%s, error_description=\"%s\"", error,
             scope ? ", scope=\"" : "", scope ? scope : "", scope ? "\"" : "", d);
}

static bool out_of_memory(const struct acc_request *rq, struct acc_response *rs)
{
    acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory", NULL);
    return false;
}

bool acc_http_identity_of(struct acc_request *rq, struct acc_response *rs)
{
    struct acc_identity *id = &rq->identity;
    if (!rq->user || id->user)
        return true;
    if (!(id->user = strdup(rq->user->name)))
        return out_of_memory(rq, rs);
    /* a certificate user: the subject DN it came with, if any */
    if (!rq->user->token && rq->peer_subject && !(id->subject = strdup(rq->peer_subject)))
        return out_of_memory(rq, rs);
    return true;
}

static struct acc_jwt_issuer verifier_of(const struct acc_issuer_cfg *is)
{
    return (struct acc_jwt_issuer){
        .url = is->url,
        .audience = is->audience,
        .ca_file = is->ca_file,
        .algs = is->algs,
        .leeway = is->leeway,
        .refresh_min = is->jwks_refresh,
        .max_age = is->jwks_max_age,
        .timeout = is->timeout,
        .user_claim = is->user_claim,
        .groups_claim = is->groups_claim,
    };
}

/* The identity of a token user: its issuer, subject, groups, the token. */
static acc_err fill_identity(struct acc_identity *id, const char *user,
                             const struct acc_jwt_claims *cl, const char *token)
{
    if (!(id->user = strdup(user)) || !(id->issuer = strdup(cl->iss)) ||
        (cl->sub && !(id->subject = strdup(cl->sub))) || !(id->token = strdup(token)))
        return ACC_ERR_NOMEM;
    for (size_t i = 0; i < cl->n_groups && i < ACC_IDENTITY_MAX_GROUPS; i++) {
        acc_err rc = acc_identity_add_group(id, cl->groups[i]);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

bool acc_http_token_user(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs,
                         const char *token)
{
    const struct acc_config *cfg = rq->users;
    struct acc_error e = {0};
    char iss[512], msg[700];
    if (acc_jwt_peek_issuer(token, iss, sizeof iss, &e)) {
        acc_http_refuse(rq, rs, ACC_ERR_UNAUTHORIZED, "invalid_token", NULL, e.msg);
        return false;
    }
    const struct acc_issuer_cfg *is = acc_config_issuer(cfg, iss);
    if (!is || !ctx->jwt) {
        char shown[160];
        acc_jwt_printable(iss, shown, sizeof shown, 120);
        snprintf(msg, sizeof msg,
                 "unknown issuer: tokens of %s are not accepted here (no [issuer] names it)",
                 shown);
        acc_http_refuse(rq, rs, ACC_ERR_UNAUTHORIZED, "invalid_token", NULL, msg);
        return false;
    }
    struct acc_jwt_issuer ji = verifier_of(is);
    struct acc_jwt_claims cl;
    acc_err rc = acc_jwt_verify(ctx->jwt, &ji, token, (int64_t)time(NULL), &cl, &e);
    if (rc == ACC_ERR_UNAUTHORIZED) {
        acc_http_refuse(rq, rs, rc, "invalid_token", NULL, e.msg);
        return false;
    }
    if (rc) { /* the issuer's keys cannot be had now (503), or memory */
        acc_reply_err(rq, rs, &e, NULL);
        return false;
    }
    char name[128];
    const struct acc_issuer_map *map;
    if (acc_issuer_user(is, cl.sub, cl.user, cl.groups, cl.n_groups, name, sizeof name, &map, &e)) {
        acc_jwt_claims_release(&cl);
        acc_http_refuse(rq, rs, ACC_ERR_FORBIDDEN, "access_denied", NULL, e.msg);
        return false;
    }
    unsigned ops = 0;
    for (int op = 0; op < ACC_OP__COUNT; op++) {
        if (acc_jwt_has_scope(&cl, acc_issuer_scope(is, (enum acc_token_op)op)))
            ops |= 1u << op;
    }
    rq->token_user = (struct acc_user){.name = strdup(name)};
    rc = rq->token_user.name ? fill_identity(&rq->identity, name, &cl, token) : ACC_ERR_NOMEM;
    acc_jwt_claims_release(&cl);
    if (rc)
        return out_of_memory(rq, rs);
    rq->user = &rq->token_user;
    rq->by_token = true;
    rq->token_ops = ops;
    return true;
}

void acc_http_token_release(struct acc_request *rq)
{
    acc_identity_release(&rq->identity);
    free(rq->token_user.name);
    rq->token_user = (struct acc_user){0};
    rq->by_token = false;
    rq->token_ops = 0;
}
