/* SPDX-License-Identifier: Apache-2.0 */
/* resources.h - the resources a daemon serves, for accordd (server/) and
 * accord-site (site/) alike: the [site NAME], [network NAME] and [link NAME]
 * sections of their configuration files, and the adapters opened from them.
 *
 *   [site NAME]    adapter, nodes, hosts, addresses, contact, launch, then the
 *                  adapter's own settings
 *   [network NAME] adapter, then the adapter's own settings
 *   [link NAME]    sites = A B, capacity (Mbit/s), network
 *
 * Both daemons read these sections with the same code and make the same
 * checks, and open the same adapters with the same capability checks: a
 * section that accordd refuses, accord-site refuses with the same message.
 * docs/configuration.md describes every key.
 *
 * Files: resources.c (the sections: keys, checks, look-ups, release) and
 * resources_open.c (the adapters). */
#ifndef ACC_RESOURCES_H
#define ACC_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../adapters/adapter.h"
#include "../lib/common/error.h"
#include "../lib/common/kv.h"

struct acc_site_cfg {
    char *name;
    char *adapter; /* kind */
    int64_t nodes;
    char *hosts;       /* launch hosts as a host list ("c-n[1-64]"); NULL: NAME-n[1-nodes] */
    char **host_names; /* hosts expanded (at least `nodes` names), NULL without hosts */
    size_t n_host_names;
    /* addresses = an IPv4 host list aligned with the hosts (hosts, or the
     * default NAME-n[1-nodes]): host i has address i; NULL without it
     * (addresses are then looked up by name) */
    char **addresses;
    size_t n_addresses;
    char *contact;           /* MPICH-G2 resourceManagerContact; NULL: the site's name */
    bool sbatch;             /* launch = sbatch: its components go into the reservation through the
                              * adapter's batch system, not mpiexec */
    bool batch;              /* launch = batch: its hosts' Hydra proxies of the one mpiexec start
                              * through the adapter's process command (srun, qsub -sync y) */
    struct acc_kv *settings; /* everything else in the section, for the adapter */
    size_t n_settings;
};

struct acc_network_cfg {
    char *name;
    char *adapter;
    struct acc_kv *settings;
    size_t n_settings;
};

struct acc_link_cfg {
    char *name;
    char *site_a, *site_b;
    char *network;
    int64_t capacity; /* Mbit/s */
};

/* The sections in the order of the file (a section seen again adds keys to
 * its first entry).  Starts zeroed; acc_resources_cfg_release frees it. */
struct acc_resources_cfg {
    struct acc_site_cfg *sites;
    size_t n_sites;
    struct acc_network_cfg *networks;
    size_t n_networks;
    struct acc_link_cfg *links;
    size_t n_links;
};

/* ------------------------------------------------------------- sections */

/* One key of a section (section is the whole name, "site alpha") into c.
 * ACC_ERR_NOT_FOUND when section is none of the three (nothing changed);
 * ACC_ERR_CONFIG "[section] ..." naming the key when the value or the
 * section's name is bad; ACC_ERR_NOMEM. */
acc_err acc_resources_cfg_key(struct acc_resources_cfg *c, const char *section, const char *k,
                              const char *v, struct acc_error *err);

/* The checks once the file is read: every site, network and link
 * complete, and they fit together (names differ, links join two sites
 * once, over a configured network).  With foreign_sites a link may join
 * sites that are not configured here (a network's site daemon serves links
 * between sites it does not host).  "At least one site" is the caller's. */
acc_err acc_resources_cfg_check(const struct acc_resources_cfg *c, bool foreign_sites,
                                struct acc_error *err);

/* The same checks, each problem recorded in r at the line of its key
 * (lib/common/conf_report.h): a problem of one section does not hide the
 * next section's.  ACC_ERR_CONFIG when r holds any problem. */
struct acc_conf_report;
acc_err acc_resources_cfg_check_all(const struct acc_resources_cfg *c, bool foreign_sites,
                                    struct acc_conf_report *r);

/* The sections as INI text that reads back to the same sections: sites,
 * then networks, then links, each key with its value (a site's settings
 * in their order). */
void acc_resources_cfg_print(const struct acc_resources_cfg *c, FILE *out);

void acc_resources_cfg_release(struct acc_resources_cfg *c);

const struct acc_site_cfg *acc_resources_site(const struct acc_resources_cfg *c, const char *name);
/* The link between two sites (either order), or NULL. */
const struct acc_link_cfg *acc_resources_link_between(const struct acc_resources_cfg *c,
                                                      const char *a, const char *b);
/* The configured IPv4 address of a site's host (`addresses`, aligned with
 * the hosts), or NULL when the site configures none or host is not one of
 * its hosts. */
const char *acc_resources_host_address(const struct acc_site_cfg *s, const char *host);

/* ------------------------------------------------------------- adapters */

/* Where the adapters keep state of their own (struct acc_adapter_env), and
 * the kinds looked up before the compiled-in ones (tests; NULL: none). */
struct acc_resources_env {
    const char *db_path;
    bool durable;
    const struct acc_adapter_ops *const *kinds;
    bool snapshot; /* the adapters only look (struct acc_adapter_env) */
};

/* The adapter of site i of c, open: its kind must reserve nodes (and
 * submit jobs, with launch = sbatch), as a kind and as this instance.
 * ACC_ERR_CONFIG naming the section otherwise. */
acc_err acc_resources_open_site(const struct acc_resources_cfg *c, size_t i,
                                const struct acc_resources_env *env, struct acc_adapter **out,
                                struct acc_error *err);

/* What opening the adapters would refuse, found without opening them
 * (`--check-config` and the start alike): each section's kind exists and
 * can do what the section needs, and each adapter's own check
 * (struct acc_adapter_ops check) passes its settings.  Nothing outside is
 * touched.  Every problem is recorded in r at the line of the setting at
 * fault (a missing one: at the section's adapter = line).  ACC_ERR_CONFIG
 * when r holds any problem. */
acc_err acc_resources_check_adapters(const struct acc_resources_cfg *c,
                                     const struct acc_resources_env *env,
                                     struct acc_conf_report *r);

struct acc_resources;

/* An adapter per [site] and [network] section of c, open (a network's
 * with its links); c must outlive them.  A network's kind must reserve
 * bandwidth.  On failure nothing stays open. */
acc_err acc_resources_open(const struct acc_resources_cfg *c, const struct acc_resources_env *env,
                           struct acc_resources **out, struct acc_error *err);

/* Makes blocked calls return promptly (shutdown); NULL does nothing. */
void acc_resources_interrupt(struct acc_resources *r);

/* Closes every adapter (once their calls have returned); NULL does nothing. */
void acc_resources_close(struct acc_resources *r);

/* The adapter of that site, network or either (sites first), or NULL. */
struct acc_adapter *acc_resources_site_adapter(const struct acc_resources *r, const char *site);
struct acc_adapter *acc_resources_network_adapter(const struct acc_resources *r,
                                                  const char *network);
struct acc_adapter *acc_resources_adapter_named(const struct acc_resources *r, const char *name);

/* Every adapter by index: the sites' in the order of c->sites, then the
 * networks' in the order of c->networks. */
size_t acc_resources_count(const struct acc_resources *r);
struct acc_adapter *acc_resources_at(const struct acc_resources *r, size_t i);

#endif
