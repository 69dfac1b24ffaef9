/* SPDX-License-Identifier: Apache-2.0 */
/* site_identity.c - whose account a peer's request is booked for: the
 * identity the peer sent, mapped with [daemon] mapfile (lib/identity), as
 * [daemon] identity says to take it (docs/site.md, "Each user's own
 * account").  Without a mapfile nothing is mapped: the reservation names
 * no user and jobs run as job_user, as before. */
#include <string.h>

#include "../lib/common/strutil.h"
#include "../lib/identity/mapfile.h"
#include "site_internal.h"

static acc_err map_locked(const struct acc_site *s, const struct acc_identity *id, char *account,
                          size_t len, struct acc_error *err)
{
    if (!s->mapfile)
        return ACC_OK;
    if (!id || (!id->user && !id->subject))
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "site %s: the request names no user, and this site books only for "
                             "the accounts its mapfile maps users to (an Accord too old to send "
                             "<Identity>?)",
                             s->cfg.name);
    if (s->identity_token) {
        /* The user's own token, checked against its issuer: lib/jwt's work,
         * which this build does not have yet.  Refused, never taken on the
         * broker's word. */
        if (!id->token)
            return acc_error_set(err, ACC_ERR_FORBIDDEN,
                                 "site %s: identity = token: this site wants the user's own "
                                 "token, and the request carries none (forward_token = yes in "
                                 "the broker's [site] section, and a token whose audience names "
                                 "this site)",
                                 s->cfg.name);
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "site %s: identity = token: this build cannot check tokens yet",
                             s->cfg.name);
    }
    const char *a = acc_mapfile_map(s->mapfile, id, NULL);
    if (!a) {
        char who[700];
        acc_identity_describe(id, who, sizeof who);
        return acc_error_set(err, ACC_ERR_FORBIDDEN, "site %s: no account for %s", s->cfg.name,
                             who);
    }
    if (acc_strlcpy(account, a, len) >= len)
        return acc_error_set(err, ACC_ERR_INTERNAL, "site %s: account name too long", s->cfg.name);
    return ACC_OK;
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

void site_identity_set(struct acc_site *s, struct acc_mapfile *m, bool token)
{
    pthread_rwlock_wrlock(&s->map_lock);
    struct acc_mapfile *old = s->mapfile;
    s->mapfile = m;
    s->identity_token = token;
    pthread_rwlock_unlock(&s->map_lock);
    acc_mapfile_free(old);
}
