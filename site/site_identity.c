/* SPDX-License-Identifier: Apache-2.0 */
/* site_identity.c - whose account a peer's request is booked for: the
 * identity the peer sent, mapped with [daemon] mapfile (lib/identity), as
 * [daemon] identity says to take it (docs/site.md, "Each user's own
 * account"): the peer's word (broker), or the user's own token checked
 * here against its issuer (token).  Without a mapfile nothing is mapped:
 * the reservation names no user and jobs run as job_user, as before. */
#include <string.h>

#include "../lib/common/strutil.h"
#include "../lib/common/timefmt.h"
#include "../lib/identity/mapfile.h"
#include "../lib/jwt/jwt.h"
#include "site_internal.h"

/* identity = token: the user's own token, forwarded by the broker, checked
 * against the issuer it names (one of [issuer NAME]): signature, iss, aud
 * naming this site, exp/nbf.  *out is then the token's issuer, subject
 * and groups (claims' strings, released by the caller): the broker's word
 * for whom the request is for counts for nothing, not even its user name.
 * Messages name the site and why, never the token. */
static acc_err token_identity(const struct acc_site *s, const struct acc_identity *id,
                              struct acc_jwt_claims *claims, struct acc_identity *out,
                              struct acc_error *err)
{
    if (!id || !id->token)
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "site %s: identity = token: this site wants the user's own "
                             "token, and the request carries none (the broker forwards it "
                             "only when its audience names this site: forward_token = the "
                             "site's audience in the broker's [site] section)",
                             s->cfg.name);
    char iss[1024], shown[160];
    struct acc_error e = {0};
    if (acc_jwt_peek_issuer(id->token, iss, sizeof iss, &e))
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "site %s: the user's token is refused: %s",
                             s->cfg.name, e.msg);
    const struct acc_site_issuer_cfg *is = site_issuer_find(s->issuers, s->n_issuers, iss);
    if (!is) {
        acc_jwt_printable(iss, shown, sizeof shown, 120);
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "site %s: the user's token is refused: its issuer %s is not one "
                             "this site trusts (no [issuer] section has that url)",
                             s->cfg.name, shown);
    }
    struct acc_jwt_issuer v;
    site_issuer_verifier(is, &v);
    acc_err rc = acc_jwt_verify(s->jwt, &v, id->token, (int64_t)acc_now(), claims, &e);
    if (rc == ACC_ERR_UNAVAILABLE) {
        int64_t retry = e.retry_after;
        acc_error_set(err, ACC_ERR_UNAVAILABLE, "site %s: %s", s->cfg.name, e.msg);
        err->retry_after = retry > 0 ? retry : 1;
        return err->code;
    }
    if (rc)
        return acc_error_set(err, rc == ACC_ERR_NOMEM ? rc : ACC_ERR_FORBIDDEN,
                             "site %s: the user's token is refused: %s", s->cfg.name, e.msg);
    if (!claims->sub)
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "site %s: the user's token is refused: it names no subject "
                             "(\"sub\")",
                             s->cfg.name);
    *out = (struct acc_identity){.issuer = claims->iss,
                                 .subject = claims->sub,
                                 .groups = claims->groups,
                                 .n_groups = claims->n_groups};
    return ACC_OK;
}

static acc_err map_locked(const struct acc_site *s, const struct acc_identity *id, char *account,
                          size_t len, struct acc_error *err)
{
    if (!s->mapfile)
        return ACC_OK;
    struct acc_jwt_claims claims = {0};
    struct acc_identity from_token;
    if (s->identity_token) {
        acc_err rc = token_identity(s, id, &claims, &from_token, err);
        if (rc) {
            acc_jwt_claims_release(&claims);
            return rc;
        }
        id = &from_token;
    } else if (!id || (!id->user && !id->subject)) {
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "site %s: the request names no user, and this site books only for "
                             "the accounts its mapfile maps users to (an Accord too old to send "
                             "<Identity>?)",
                             s->cfg.name);
    }
    acc_err rc = ACC_OK;
    const char *a = acc_mapfile_map(s->mapfile, id, NULL);
    if (!a) {
        char who[700];
        acc_identity_describe(id, who, sizeof who);
        rc = acc_error_set(err, ACC_ERR_FORBIDDEN, "site %s: no account for %s", s->cfg.name, who);
    } else if (acc_strlcpy(account, a, len) >= len) {
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "site %s: account name too long", s->cfg.name);
    }
    acc_jwt_claims_release(&claims);
    return rc;
}

acc_err site_map_identity(struct acc_site *s, const struct acc_identity *id, char *account,
                          size_t len, struct acc_error *err)
{
    account[0] = '\0';
    pthread_rwlock_rdlock(&s->map_lock);
    acc_err rc = map_locked(s, id, account, len, err);
    pthread_rwlock_unlock(&s->map_lock);
    return rc;
}

acc_err site_identity_read(const struct acc_site_config *c, struct acc_mapfile **out,
                           struct acc_error *err)
{
    *out = NULL;
    if (c->mapfile && acc_mapfile_load(c->mapfile, true, out, err))
        return err->code;
    return ACC_OK;
}

void site_identity_set(struct acc_site *s, struct acc_mapfile *m, struct acc_site_config *c)
{
    pthread_rwlock_wrlock(&s->map_lock);
    struct acc_mapfile *old = s->mapfile;
    struct acc_site_issuer_cfg *old_issuers = s->issuers;
    size_t old_n = s->n_issuers;
    s->mapfile = m;
    s->identity_token = c->identity_token;
    s->issuers = c->issuers;
    s->n_issuers = c->n_issuers;
    c->issuers = NULL;
    c->n_issuers = 0;
    pthread_rwlock_unlock(&s->map_lock);
    acc_mapfile_free(old);
    site_issuers_free(old_issuers, old_n);
}
