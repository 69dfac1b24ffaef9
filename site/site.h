/* SPDX-License-Identifier: Apache-2.0 */
/* site.h - accord-site: one site's adapters served over the adapter
 * protocol (docs/protocol.md) to the Accord instances the site admits.
 *
 * The daemon hosts the adapters of its [site NAME], [network NAME] and
 * [link NAME] sections (read and opened by resources/, as accordd's are), keeps its own SQLite
 * (the adapters' state beside it, its journal of bookings and jobs in it),
 * and serves HTTPS with a client certificate required of every peer.  Each
 * admitted peer ([peer NAME]) has limits the site enforces itself.  See
 * docs/site.md.
 *
 * This header is for site/main.c and in-process tests; the files of site/
 * share site_internal.h. */
#ifndef ACC_SITE_H
#define ACC_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/common/error.h"
#include "../lib/common/log.h"
#include "../resources/resources.h"

/* A [peer NAME] section: an Accord instance the site admits, and its limits. */
struct acc_site_peer_cfg {
    char *name;
    char *subject;            /* the certificate's subject DN ("CN=accord-main"), or NULL */
    char *fingerprint;        /* "SHA256:AB:CD:..." (upper case), or NULL */
    int64_t max_nodes;        /* largest reservation of nodes */
    int64_t max_bandwidth;    /* largest reservation of bandwidth, Mbit/s */
    int64_t max_duration;     /* seconds */
    int64_t max_advance;      /* furthest start from now, seconds */
    int64_t max_reservations; /* open reservations held at once */
    unsigned connections;     /* concurrent connections */
    bool admin;               /* may read /metrics */
    bool metrics_only;        /* may read /metrics and nothing else (a monitoring's) */
};

/* [issuer NAME]: an issuer whose tokens the site checks (lib/jwt), as
 * accordd's [issuer NAME] without the map lines and scopes (the site maps
 * with its mapfile, and a forwarded token books; it does not call the API). */
struct acc_site_issuer_cfg {
    char *name;
    char *url;      /* its "iss", https:// */
    char *audience; /* this site's name in the tokens' "aud" */
    char *ca_file;  /* NULL: the system's CAs */
    char *groups_claim;
    unsigned algs; /* ACC_JWT_RS256 | ACC_JWT_ES256 */
    int64_t leeway, jwks_refresh, jwks_max_age, timeout;
};

struct acc_site_config {
    char *origin; /* the file read */
    /* [daemon] */
    char *name;
    char *listen_host;
    unsigned listen_port;
    char *db_path; /* database; the adapters keep their state beside it */
    bool durable;
    char *certificate, *key, *client_ca;
    char *job_user;
    /* Each user's own account (docs/site.md): the mapfile that maps the
     * peers' users to local accounts (NULL: none, every job as job_user),
     * and whether the site wants the user's own token (identity = token)
     * rather than its peer's word (broker, the default). */
    char *mapfile;
    bool identity_token;
    /* identity = token: the issuers whose tokens the site checks itself
     * ([issuer NAME] sections, site_issuer.c); read at the start only. */
    struct acc_site_issuer_cfg *issuers;
    size_t n_issuers;
    char *hydra_pmi_proxy;
    char *control_networks;
    unsigned threads;
    unsigned max_connections;
    unsigned pending_connections; /* per address, before a whole request head */
    unsigned header_timeout;      /* seconds a new connection has for its head */
    unsigned timeout;             /* seconds a connection may idle */
    unsigned request_timeout;     /* seconds for a whole request, from its head */
    enum acc_log_level log_level;
    bool access_log; /* a line per request at info level */
    /* [site NAME], [network NAME], [link NAME] as accordd reads them */
    struct acc_resources_cfg res;
    struct acc_site_peer_cfg *peers;
    size_t n_peers;
};

acc_err acc_site_config_load_file(const char *path, struct acc_site_config *out,
                                  struct acc_error *err);
acc_err acc_site_config_load_string(const char *text, const char *origin,
                                    struct acc_site_config *out, struct acc_error *err);
/* Command-line overrides (--listen, --db). */
acc_err acc_site_config_set_listen(struct acc_site_config *c, const char *hostport,
                                   struct acc_error *err);
acc_err acc_site_config_set_db(struct acc_site_config *c, const char *path, struct acc_error *err);
void acc_site_config_release(struct acc_site_config *c);

/* `accord-site --check-config`: reads the file into out and every problem
 * into r, each with its line (lib/common/conf_report.h); the certificate,
 * key and client CA files must be readable too.  ACC_OK when r holds no
 * problem; either way out and r are the caller's to release (out->origin
 * is NULL when the file could not be opened). */
struct acc_conf_report;
acc_err acc_site_config_check(const char *path, struct acc_site_config *out,
                              struct acc_conf_report *r);

/* The effective configuration as INI text that reads back to the same. */
void acc_site_config_print(const struct acc_site_config *c, FILE *out);

struct acc_site;

/* Opens the database (migrations, then the recovery of intent rows), the
 * adapters and the HTTPS listener.  The daemon takes cfg (emptied here,
 * released by acc_site_stop), also on failure. */
acc_err acc_site_start(struct acc_site_config *cfg, struct acc_site **out, struct acc_error *err);

/* The port it listens on (useful with port 0). */
unsigned acc_site_port(const struct acc_site *s);

/* SIGHUP: the certificate files and the [peer] sections of fresh (read from
 * the same file again) replace the running ones; the rest of fresh is
 * ignored.  On failure nothing changes and err says why.  fresh is released
 * either way. */
acc_err acc_site_reload(struct acc_site *s, struct acc_site_config *fresh, struct acc_error *err);

/* Stops serving, closes the adapters and the database; NULL does nothing. */
void acc_site_stop(struct acc_site *s);

#endif
