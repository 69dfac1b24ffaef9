/* config_accounts.c - as whom meta-jobs run: [accounts] maps users of
 * [auth] to Unix accounts, [launch] account names the account of everyone
 * else, and acc_config_launch_account resolves one agreement's owner.
 *
 * A job never runs as root: an account whose uid is 0 is a configuration
 * error, and an accordd that runs as root starts no job unless an account
 * is configured for its owner (docs/launch.md, "Accounts"). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"

int cfg_accounts_key(struct cfg_parse *p, const char *k, const char *v)
{
    if (!*v)
        return cfg_bad(p, "accounts", "%s: names no account", k);
    if (acc_kv_get(p->c->accounts, p->c->n_accounts, k))
        return cfg_bad(p, "accounts", "%s is mapped twice", k);
    return acc_kv_add(&p->c->accounts, &p->c->n_accounts, k, v) == ACC_OK;
}

/* An account a job may run as, from a daemon that runs as me. */
static acc_err check_account(const char *what, const char *name, const struct acc_account *me,
                             bool launching, struct acc_error *err)
{
    struct acc_account a;
    if (acc_account_lookup(name, &a, err)) {
        acc_error_prefix(err, "%s", what);
        return ACC_ERR_CONFIG;
    }
    if (launching && a.uid != me->uid && !acc_account_can_switch())
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: accordd runs as %s and cannot start programs as %s (it needs "
                             "CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_DAC_OVERRIDE, or root)",
                             what, me->name, name);
    return ACC_OK;
}

acc_err cfg_accounts_finish(const struct acc_config *c, struct acc_error *err)
{
    if (c->n_accounts && !c->n_users)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[accounts] needs [auth]: without it an offer's initiator is "
                             "whatever the offer says");
    struct acc_account me;
    if (acc_account_self(&me, err))
        return ACC_ERR_CONFIG;
    char what[160];
    for (size_t i = 0; i < c->n_accounts; i++) {
        const char *user = c->accounts[i].key;
        bool known = false;
        for (size_t u = 0; u < c->n_users && !known; u++)
            known = strcmp(c->users[u].name, user) == 0;
        if (!known)
            return acc_error_set(err, ACC_ERR_CONFIG, "[accounts] %s: not a user of [auth]", user);
        snprintf(what, sizeof what, "[accounts] %s", user);
        if (check_account(what, c->accounts[i].value, &me, c->launch.enabled, err))
            return ACC_ERR_CONFIG;
    }
    if (c->launch.account &&
        check_account("[launch] account", c->launch.account, &me, c->launch.enabled, err))
        return ACC_ERR_CONFIG;
    return ACC_OK;
}

acc_err acc_config_launch_account(const struct acc_config *c, const char *initiator,
                                  struct acc_account *out, bool *other, struct acc_error *err)
{
    const char *name =
        c->n_users && initiator ? acc_kv_get(c->accounts, c->n_accounts, initiator) : NULL;
    if (!name)
        name = c->launch.account;
    struct acc_account me;
    if (acc_account_self(&me, err))
        return ACC_ERR_FORBIDDEN;
    if (!name) {
        if (me.uid == 0)
            return acc_error_set(err, ACC_ERR_FORBIDDEN,
                                 "accordd runs as root and no account is configured for the "
                                 "jobs of %s ([accounts] or [launch] account): a job never runs "
                                 "as root, so this one cannot be started",
                                 initiator ? initiator : "anonymous");
        *out = me;
        *other = false;
        return ACC_OK;
    }
    if (acc_account_lookup(name, out, err)) {
        acc_error_prefix(err, "the jobs of %s", initiator ? initiator : "anonymous");
        return ACC_ERR_FORBIDDEN;
    }
    *other = out->uid != me.uid;
    if (*other && !acc_account_can_switch())
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "the jobs of %s run as %s, and accordd (%s) cannot start programs "
                             "as another account",
                             initiator ? initiator : "anonymous", name, me.name);
    return ACC_OK;
}
