/* SPDX-License-Identifier: Apache-2.0 */
/* config_accounts.c - as whom meta-jobs run: [accounts] maps users of
 * [auth] to Unix accounts, [launch] account names the account of everyone
 * else, and acc_config_launch_account resolves one agreement's owner.
 *
 * A job never runs as root: an account whose uid is 0 is a configuration
 * error, and an accordd that runs as root starts no job unless an account
 * is configured for its owner (docs/launch.md, "Accounts"). */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/notify.h"
#include "../../lib/common/strutil.h"
#include "../../lib/identity/mapfile.h"
#include "config_internal.h"

int cfg_accounts_key(struct cfg_parse *p, const char *k, const char *v)
{
    if (!*v)
        return cfg_bad(p, "accounts", "%s: names no account", k);
    if (strcmp(k, "mapfile") == 0) {
        if (p->c->accounts_mapfile)
            return cfg_bad(p, "accounts", "mapfile is given twice");
        return (p->c->accounts_mapfile = strdup(v)) != NULL;
    }
    if (acc_kv_get(p->c->accounts, p->c->n_accounts, k))
        return cfg_bad(p, "accounts", "%s is mapped twice", k);
    return acc_kv_add(&p->c->accounts, &p->c->n_accounts, k, v) == ACC_OK;
}

/* Whether accordd may start a job as another account: it holds what the
 * switch takes, or it is root under systemd, which then starts each job in
 * a unit of its own as its account (server/launch/launcher_unit.c). */
static bool can_start_as_other(void)
{
    return acc_account_can_switch() || (geteuid() == 0 && acc_notify_under_systemd());
}

/* An account a job may run as, from a daemon that runs as me: a problem
 * of key in section when it is not. */
static void check_account(struct acc_conf_report *r, const char *section, const char *key,
                          const char *name, const struct acc_account *me, bool launching)
{
    struct acc_account a;
    struct acc_error e;
    if (acc_account_lookup(name, &a, &e))
        acc_conf_report_after(r, section, key, "%s", e.msg);
    else if (launching && a.uid != me->uid && !can_start_as_other())
        acc_conf_report_after(r, section, key,
                              "accordd runs as %s and cannot start programs as %s (it needs "
                              "CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_DAC_OVERRIDE, or root "
                              "under systemd)",
                              me->name, name);
}

void cfg_accounts_finish(struct acc_config *c, struct acc_conf_report *r)
{
    if (c->accounts_mapfile) {
        struct acc_error me;
        acc_mapfile_free(c->accounts_map);
        c->accounts_map = NULL;
        if (acc_mapfile_load(c->accounts_mapfile, true, &c->accounts_map, &me))
            acc_conf_report_after(r, "accounts", "mapfile", "%s", me.msg);
        else if (!acc_config_auth(c))
            acc_conf_report_after(r, "accounts", "mapfile",
                                  "needs [auth]: without it no user is known to map");
    }
    if (c->n_accounts && !acc_config_auth(c))
        acc_conf_report_after(r, "accounts", NULL,
                              "needs [auth]: without it an offer's initiator is whatever the "
                              "offer says");
    struct acc_account me;
    struct acc_error e;
    if (acc_account_self(&me, &e)) {
        acc_conf_report_after(r, "launch", NULL, "%s", e.msg);
        return;
    }
    for (size_t i = 0; i < c->n_accounts; i++) {
        const char *user = c->accounts[i].key;
        bool known = false;
        for (size_t u = 0; u < c->n_users && !known; u++)
            known = strcmp(c->users[u].name, user) == 0;
        /* A user of an [issuer] is known by its tokens only. */
        if (!known && c->n_users && !c->n_issuers)
            acc_conf_report_after(r, "accounts", user, "not a user of [auth]");
        else
            check_account(r, "accounts", user, c->accounts[i].value, &me, c->launch.enabled);
    }
    if (c->launch.account)
        check_account(r, "launch", "account", c->launch.account, &me, c->launch.enabled);
}

void cfg_accounts_print(const struct acc_config *c, FILE *out)
{
    if (!c->n_accounts && !c->accounts_mapfile)
        return;
    fprintf(out, "\n[accounts]\n");
    if (c->accounts_mapfile)
        fprintf(out, "mapfile = %s\n", c->accounts_mapfile);
    for (size_t i = 0; i < c->n_accounts; i++)
        fprintf(out, "%s = %s\n", c->accounts[i].key, c->accounts[i].value);
}

/* [accounts] for initiator: its own line, else the mapfile's (id, or the
 * initiator's name alone); NULL: none.  The string is c's. */
static const char *mapped(const struct acc_config *c, const char *initiator,
                          const struct acc_identity *id)
{
    if (!acc_config_auth(c) || !initiator)
        return NULL;
    const char *name = acc_kv_get(c->accounts, c->n_accounts, initiator);
    struct acc_identity only = {.user = (char *)initiator};
    if (!name && c->accounts_map)
        name = acc_mapfile_map(c->accounts_map, id && (id->user || id->subject) ? id : &only, NULL);
    return name;
}

bool acc_config_account_of(const struct acc_config *c, const char *initiator,
                           const struct acc_identity *id, char *buf, size_t len)
{
    const struct acc_config *now = acc_config_live(c);
    const char *name = mapped(now, initiator, id);
    bool ok = name && acc_strlcpy(buf, name, len) < len;
    acc_config_unlive(c, now);
    return ok;
}

static acc_err launch_account(const struct acc_config *c, const char *initiator,
                              const struct acc_identity *id, struct acc_account *out, bool *other,
                              struct acc_error *err)
{
    const char *name = mapped(c, initiator, id);
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
    if (*other && !can_start_as_other())
        return acc_error_set(err, ACC_ERR_FORBIDDEN,
                             "the jobs of %s run as %s, and accordd (%s) cannot start programs "
                             "as another account",
                             initiator ? initiator : "anonymous", name, me.name);
    return ACC_OK;
}

/* [accounts] as of now: a SIGHUP may have read it again (config_live.c). */
acc_err acc_config_launch_account(const struct acc_config *c, const char *initiator,
                                  const struct acc_identity *id, struct acc_account *out,
                                  bool *other, struct acc_error *err)
{
    const struct acc_config *now = acc_config_live(c);
    acc_err rc = launch_account(now, initiator, id, out, other, err);
    acc_config_unlive(c, now);
    return rc;
}
