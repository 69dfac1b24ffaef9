/* config_internal.h - what the files of server/config/ share and nothing
 * outside sees:
 *
 *   config.c        loading (defaults, inih, sections to their readers, the
 *                   fixed defaults after reading), the embedded testbed,
 *                   command-line overrides, release
 *   config_keys.c   the keys of [server], [database], [negotiation], [auth]
 *                   (and the users' tokens) and [launch]
 *   config_sites.c  [site NAME], [network NAME] and [link NAME], the checks
 *                   across them, and looking sites and links up
 *   config_auth.c   HTTPS and client certificates: [server] certificate and
 *                   key, [auth] client_ca and client_certificates
 *   config_policy.c [policy] (latency matrix, policy options) and which
 *                   placement policies accordd runs
 *
 * Internal names start with cfg_.  The key readers follow inih's handler
 * convention: 1 to go on, 0 to stop (the first error is kept in struct
 * cfg_parse, or it was out of memory). */
#ifndef ACC_CONFIG_INTERNAL_H
#define ACC_CONFIG_INTERNAL_H

#include "config.h"

struct cfg_parse {
    struct acc_config *c;
    struct acc_config_first first;
};

/* Records "[section] message" unless an error is recorded already; 0. */
#define cfg_bad(p, ...) acc_config_bad(&(p)->first, __VA_ARGS__)

/* Replaces *dst with a copy of v; 0 when out of memory. */
int cfg_set_str(char **dst, const char *v);

/* Appends a copy of k = v; 0 when out of memory. */
int cfg_add_setting(struct acc_kv **kv, size_t *n, const char *k, const char *v);

/* HOST:PORT or [HOST]:PORT into *host and *port. */
acc_err cfg_parse_hostport(const char *v, char **host, unsigned *port, struct acc_error *err);

/* config_keys.c */
int cfg_server_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_database_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_signing_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_negotiation_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_auth_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_launch_key(struct cfg_parse *p, const char *k, const char *v);

/* config_auth.c */
int cfg_tls_server_key(struct cfg_parse *p, const char *k, const char *v);
int cfg_auth_cert_key(struct cfg_parse *p, const char *k, const char *v);
/* After reading: certificate with key, client_ca with HTTPS, certificate users with a CA. */
acc_err cfg_auth_check(const struct acc_config *c, struct acc_error *err);

/* config_sites.c: a key of [site NAME], [network NAME] or [link NAME]
 * (*matched false, 0, for any other section). */
int cfg_resource_key(struct cfg_parse *p, const char *section, const char *k, const char *v,
                     bool *matched);
/* name is the section's NAME, already checked. */
int cfg_site_key(struct cfg_parse *p, const char *section, const char *name, const char *k,
                 const char *v);
int cfg_network_key(struct cfg_parse *p, const char *name, const char *k, const char *v);
int cfg_link_key(struct cfg_parse *p, const char *section, const char *name, const char *k,
                 const char *v);

/* config_policy.c */
int cfg_policy_key(struct cfg_parse *p, const char *k, const char *v);
/* After cfg_check: builds the latency matrix from [policy] latency and
 * checks that accordd can run the configured policy. */
acc_err cfg_policy_finish(struct acc_config *c, struct acc_error *err);
void cfg_policy_release(struct acc_config *c);

/* Every site, network and link complete, and they fit together. */
acc_err cfg_check(const struct acc_config *c, struct acc_error *err);

#endif
