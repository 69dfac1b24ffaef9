/* SPDX-License-Identifier: Apache-2.0 */
/* config_internal.h - what the files of server/config/ share and nothing
 * outside sees:
 *
 *   config.c        loading (defaults, inih, sections to their readers, the
 *                   fixed defaults after reading), the embedded testbed,
 *                   command-line overrides, release; the [site NAME],
 *                   [network NAME] and [link NAME] sections go to resources/
 *   config_keys.c   the keys of [server], [database], [negotiation], [auth]
 *                   (and the users' tokens) and [launch]
 *   config_auth.c   HTTPS and client certificates: [server] certificate and
 *                   key, [auth] client_ca and client_certificates
 *   config_policy.c [policy] (latency matrix, policy options) and which
 *                   placement policies accordd runs
 *   config_quota.c  [quota] and [quota USER]: per-user limits
 *   config_accounts.c [accounts] and [launch] account: as whom jobs run
 *   config_ui.c     [ui]: the OpenID Connect provider the web page signs
 *                   in against, and the page's Content-Security-Policy
 *   config_issuer.c [issuer NAME]: trusted issuers of JWT access tokens and
 *                   their map lines (who a token is)
 *   config_print.c  the effective configuration as INI text
 *   config_keylist.c every key accordd reads, with a value it refuses (the
 *                   tables' and the others'); the warnings of --check-config
 *
 * Internal names start with cfg_.  The key readers follow inih's handler
 * convention: 1 to go on, 0 to stop (a problem is recorded in struct
 * cfg_parse, or it was out of memory; lib/common/conf_report.h); the
 * checks after reading record every problem they find there too. */
#ifndef ACC_CONFIG_INTERNAL_H
#define ACC_CONFIG_INTERNAL_H

#include "config.h"

#include "../../lib/common/conf.h"
#include "../../lib/common/conf_report.h"

struct cfg_parse {
    struct acc_config *c;
    struct acc_conf_report rep;
};

/* Records a problem of the key being read ("[section] message"); 0. */
#define cfg_bad(p, ...) acc_conf_report_bad(&(p)->rep, __VA_ARGS__)

/* config_keys.c */
int cfg_server_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_database_key(struct cfg_parse *p, const char *k, const char *v);
/* Why a database of ':memory:' is refused ([database] path and --db). */
extern const char cfg_no_memory[];
int cfg_signing_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_negotiation_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_auth_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_launch_key(struct cfg_parse *p, const char *k, const char *v);
/* Calls fn for each key of the tables of [server], [database] and
 * [negotiation] with a value it refuses (config_keylist.c). */
void cfg_table_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                    void *ctx),
                         void *ctx);
/* The keys of the table of [server], [database] or [negotiation]. */
void cfg_keys_print(const struct acc_config *c, const char *section, FILE *out);

/* config_auth.c */
int cfg_tls_server_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_auth_cert_key(struct cfg_parse *p, const char *k, const char *v);
/* After reading: certificate with key, client_ca with HTTPS, certificate
 * users with a CA. */
acc_err cfg_auth_check(const struct acc_config *c, struct acc_conf_report *r);
/* --check-config: the files HTTPS reads when accordd starts can be read. */
acc_err cfg_auth_files(const struct acc_config *c, struct acc_conf_report *r);

/* config_policy.c */
int cfg_policy_key(struct cfg_parse *p, const char *k, const char *v);
/* After cfg_check: builds the latency matrix from [policy] latency and
 * checks that accordd can run the configured policy. */
acc_err cfg_policy_finish(struct acc_config *c, struct acc_conf_report *r);
void cfg_policy_release(struct acc_config *c);

/* config_live.c: the reloaded generation goes with the configuration. */
void cfg_live_release(struct acc_config *c);

/* config_quota.c */
void cfg_quota_defaults(struct acc_quota *q);
/* Calls fn for each key of [quota] with a value it refuses. */
void cfg_quota_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                    void *ctx),
                         void *ctx);
/* A key of [quota] (user NULL) or [quota USER]. */
int cfg_quota_key(struct cfg_parse *p, const char *user, const char *k, const char *v);
/* After reading: every [quota USER] names a user of [auth]; the keys it
 * does not give are [quota]'s. */
acc_err cfg_quota_finish(struct acc_config *c, struct acc_conf_report *r);
void cfg_quota_release(struct acc_config *c);
/* [quota], every key; each [quota USER], the keys it gives. */
void cfg_quota_print(const struct acc_config *c, FILE *out);

/* config_accounts.c */
int cfg_accounts_key(struct cfg_parse *p, const char *k, const char *v);
/* After reading: every [accounts] user is one of [auth], every account
 * exists, is not root, and accordd may switch to it when it launches. */
void cfg_accounts_finish(struct acc_config *c, struct acc_conf_report *r);
/* [accounts] and [launch] account, as INI text. */
void cfg_accounts_print(const struct acc_config *c, FILE *out);

/* config_ui.c */
int cfg_ui_key(struct cfg_parse *p, const char *k, const char *v);
/* After reading: the issuer with a client id, the other keys only with
 * them; builds ui.csp (also without [ui]). */
void cfg_ui_finish(struct acc_config *c, struct acc_conf_report *r);
void cfg_ui_release(struct acc_config *c);
/* [ui], when an issuer is set. */
void cfg_ui_print(const struct acc_config *c, FILE *out);

/* config_issuer.c */
/* A key of [issuer NAME]. */
int cfg_issuer_key(struct cfg_parse *p, const char *name, const char *k, const char *v);
/* After reading (before cfg_quota_finish and cfg_accounts_finish): each
 * issuer has url and audience; map lines' quota= name a [quota NAME],
 * their account= go into [accounts]. */
void cfg_issuer_finish(struct acc_config *c, struct acc_conf_report *r);
void cfg_issuer_print(const struct acc_config *c, FILE *out);
void cfg_issuer_release(struct acc_config *c);
/* Calls fn for each key of [issuer NAME] with a value it refuses. */
void cfg_issuer_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                     void *ctx),
                          void *ctx);

/* config_keylist.c */
/* Whether k is a key of section (one of accordd's own, not [accounts],
 * [site], [network] or [link]) that acc_config_keys_each lists; a reader
 * that takes a key it does not list is refused, so that the list (and
 * the test walking it) cannot miss a key. */
bool cfg_key_listed(const char *section, const char *k);

#endif
