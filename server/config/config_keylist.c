/* SPDX-License-Identifier: Apache-2.0 */
/* config_keylist.c - every key accordd reads, each with a value it refuses,
 * for the test that gives each key a bad value and expects `--check-config`
 * and a start to refuse it alike (tests/integration/test_config_check.c).
 * The keys of the tables of config_keys.c and config_quota.c come from
 * those tables; the keys read by code of their own are listed here, and a
 * key a reader takes that is not listed is refused (cfg_key_listed), so
 * that a new key cannot be missed.
 *
 * Also the warnings of `--check-config` and of a start: combinations that
 * work but are dangerous. */
#include "config_internal.h"

#include <string.h>

/* The keys read by code of their own, with a value each refuses. */
static const struct {
    const char *section, *key, *bad;
} own_keys[] = {
    {"server", "listen", "nowhere"},
    {"server", "certificate", "/nonexistent/server.pem"},
    {"server", "key", "/nonexistent/server.key"},
    {"server", "names", "not a name!"},
    {"server", "log_level", "loud"},
    {"database", "path", ""},
    {"database", "url", "mysql://db.example.org/accord"},
    {"database", "retain", "PT1H"},
    {"signing", "key", ""},
    {"signing", "certificate", ""},
    {"negotiation", "strategy", "greedy"},
    {"negotiation", "policy", "nonsense"},
    {"negotiation", "max_quotes_per_user", "0"},
    {"auth", "tokens", "/nonexistent/tokens"},
    {"auth", "client_ca", ""},
    {"auth", "client_certificates", "/nonexistent/certificates"},
    {"launch", "enabled", "maybe"},
    {"launch", "mpiexec", ""},
    {"launch", "launcher", "fork ssh"},
    {"launch", "launcher_exec", ""},
    {"launch", "localhost", ""},
    {"launch", "control_address", ""},
    {"launch", "control_ports", "50000"},
    {"launch", "proxy_timeout", "0"},
    {"launch", "directory", ""},
    {"launch", "account", ""},
    {"launch", "path", ""},
    {"launch", "env", "NO_VALUE"},
    {"launch", "output_limit", "-1"},
    {"launch", "grace", "soon"},
    {"launch", "router_port", "80"},
    {"ui", "oidc_issuer", "ftp://id.example.org"},
    {"ui", "oidc_client_id", ""},
    {"ui", "oidc_scope", "profile"},
    {"ui", "oidc_redirect", "/ui/"},
    {"policy", "latency", "a"},
    {"policy", "max_clusters", "-1"},
    {"policy", "ca_average", "median"},
    {"policy", "tiebreak", "coin"},
    {"policy", "seed", "-1"},
    /* resources/ reads these (as accord-site does); a site's other keys
     * are its adapter's settings. */
    {"site", "adapter", "no-such-kind"},
    {"site", "nodes", "0"},
    {"site", "hosts", "n["},
    {"site", "addresses", "10.0.0.300"},
    {"site", "launch", "srun"},
    {"site", "contact", ""},
    {"network", "adapter", "no-such-kind"},
    {"link", "sites", "a"},
    {"link", "capacity", "0"},
    {"link", "network", "nowhere"},
};

void acc_config_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                     void *ctx),
                          void *ctx)
{
    cfg_table_keys_each(fn, ctx);
    cfg_quota_keys_each(fn, ctx);
    cfg_issuer_keys_each(fn, ctx);
    for (size_t i = 0; i < sizeof own_keys / sizeof own_keys[0]; i++)
        fn(own_keys[i].section, own_keys[i].key, own_keys[i].bad, ctx);
}

struct lookup {
    const char *section, *key;
    bool found;
};

static void match(const char *section, const char *key, const char *bad, void *ctx)
{
    struct lookup *l = ctx;
    (void)bad;
    l->found |= strcmp(section, l->section) == 0 && strcmp(key, l->key) == 0;
}

bool cfg_key_listed(const char *section, const char *k)
{
    /* [quota USER] takes [quota]'s keys, [issuer NAME] the issuers' */
    const char *as = strncmp(section, "quota ", 6) == 0    ? "quota"
                     : strncmp(section, "issuer ", 7) == 0 ? "issuer"
                                                           : section;
    struct lookup l = {as, k, false};
    acc_config_keys_each(match, &l);
    return l.found;
}

/* ---------------------------------------------------------------- warnings */

static bool loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcmp(host, "localhost") == 0;
}

void acc_config_warn(const struct acc_config *c, bool listen_given, struct acc_conf_report *r)
{
    /* --listen has no line: the warning names the option */
    const char *section = listen_given ? NULL : "server";
    const char *key = listen_given ? "--listen" : "listen";
    if (!loopback(c->listen_host)) {
        if (!c->tls_certificate)
            acc_conf_report_warn(r, section, key,
                                 "%s is not a loopback address and there is no HTTPS ([server] "
                                 "certificate and key): requests, tokens and signed agreements "
                                 "cross the network in clear",
                                 c->listen_host);
        if (!acc_config_auth(c))
            acc_conf_report_warn(r, section, key,
                                 "%s is not a loopback address and there is no [auth]: anyone "
                                 "who reaches it may submit, see and terminate every agreement",
                                 c->listen_host);
    }
    if (c->launch.enabled && !c->launch.account)
        acc_conf_report_warn(r, "launch", "enabled",
                             "jobs are launched with no [launch] account: %s run as accordd's "
                             "own account, which holds the database and the signing key (as "
                             "root, none starts)",
                             c->n_accounts ? "those of users [accounts] does not map" : "they");
    /* With [auth] every request has a user and the key does nothing. */
    if (c->anonymous_backup && !acc_config_auth(c))
        acc_conf_report_warn(r, "server", "anonymous_backup",
                             "POST /admin/backup answers anyone who reaches %s:%u with the "
                             "whole database and the signing key",
                             c->listen_host, c->listen_port);
}
