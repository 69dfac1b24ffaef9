/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - accordd's configuration: an INI file (read with inih), or the
 * embedded simulated testbed when none is given.
 *
 *   [server]       listen, max_body, max_depth, max_attributes,
 *                  max_total_attributes, threads, connection_limit,
 *                  client_connections, pending_connections, header_timeout,
 *                  timeout, request_timeout, max_query, max_unsent,
 *                  client_unsent, names, allow_control, log_level,
 *                  certificate, key (HTTPS)
 *   [database]     path or url, durable, wal_limit, retain, lease,
 *                  clock_warn, clock_refuse, max_rejected_per_user
 *   [negotiation]  strategy, policy, policy_candidates, max_rounds, horizon,
 *                  lead_time, adapter_timeout, workers, adapter_max_calls,
 *                  breaker_failures, breaker_cooldown, queue_length, max_pending,
 *                  max_hold, quote_options, max_quotes (max_quotes_per_user: the
 *                  older name of [quota] max_quotes)
 *   [quota]        max_nodes, max_bandwidth, max_duration, max_advance,
 *                  max_agreements, max_quotes, max_node_hours,
 *                  max_mbit_hours: every user's; [quota USER] gives one
 *                  user of [auth] limits of their own; without [auth]
 *                  max_agreements_per_address, max_quotes_per_address
 *   [policy]       latency (A B VALUE, one per pair of sites), max_clusters,
 *                  ca_average, tiebreak, seed
 *   [auth]         tokens (a file of "user token [admin|metrics]" lines),
 *                  client_ca, client_certificates (a file of "user
 *                  SUBJECT-or-SHA256:FP [admin|metrics]" lines)
 *   [issuer NAME]  url, audience, ca_file, algorithms, leeway, jwks_refresh,
 *                  jwks_max_age, timeout, user_claim, groups_claim,
 *                  scope_read, scope_create, scope_modify, scope_cancel,
 *                  map (lines: who its tokens are); a trusted issuer of
 *                  JWT access tokens (config_issuer.c)
 *   [launch]       enabled, mpiexec, launcher, launcher_exec, localhost,
 *                  directory, path, env, output_limit, grace, router_port
 *   [site NAME], [network NAME], [link NAME]: read by resources/ (the
 *                  same sections as accord-site's)
 *
 * docs/configuration.md describes every key. */
#ifndef ACC_CONFIG_H
#define ACC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../lib/common/error.h"
#include "../../lib/common/kv.h"
#include "../../lib/common/log.h"
#include "../../lib/model/model.h"
#include "../../lib/policy/policy.h"
#include "../../lib/common/account.h"

struct acc_mapfile;
#include "../../resources/resources.h"

/* [launch]: how the meta-jobs of agreements are started on this machine
 * (docs/launch.md). */
struct acc_launch_cfg {
    bool enabled;        /* no: agreements get launch descriptions, nothing is started */
    char *mpiexec;       /* the Hydra mpiexec to run (default mpiexec.hydra) */
    char *launcher;      /* Hydra's -launcher: fork (default), ssh, rsh, ... */
    char *launcher_exec; /* -launcher-exec (an ssh agent or stand-in); NULL: none */
    char *localhost;     /* -localhost (control_address): where the ranks and, with
                            launcher = manual, the sites' proxies reach mpiexec; NULL:
                            Hydra's choice */
    char *directory; /* a directory per agreement is made in it; NULL: accord-jobs beside the db */
    char *path;      /* prepended to the job's PATH; NULL: accordd's own directory */
    struct acc_kv *env; /* env = NAME=VALUE lines, given to every rank (-genv) */
    size_t n_env;
    size_t output_limit;  /* bytes of a job's output kept (default 1 MiB) */
    int64_t grace;        /* seconds from SIGTERM to SIGKILL when a job is stopped */
    unsigned router_port; /* MetaMPICH: the first router port */
    /* launcher = manual (proxies started by the sites' daemons): mpiexec's
     * control ports (MPIEXEC_PORT_RANGE; 0: Hydra's choice) and how long
     * its HYDRA_LAUNCH lines may take to come */
    unsigned control_port_min, control_port_max;
    int64_t proxy_timeout; /* seconds, default 30 */
    /* the account jobs run as when [accounts] maps not their owner; NULL:
     * accordd's own, unless that is root (then no job starts) */
    char *account;
};

/* True when [launch] launcher = manual: Hydra prints its proxies' commands
 * and accordd hands them to the sites (docs/launch.md). */
bool acc_launch_cfg_manual(const struct acc_launch_cfg *l);

/* [policy] latency = A B VALUE as given (the matrix is built after reading). */
struct acc_latency_cfg {
    char *a, *b;
    double value;
    int line; /* of the file, for the checks after reading */
};

/* A user who may call the API, from the [auth] tokens file (token set) or
 * the client certificates file (subject or fingerprint set). */
struct acc_user {
    char *name;
    char *token;       /* NULL: a client certificate user */
    bool admin;        /* sees and terminates every agreement, uses adapter controls */
    bool metrics;      /* the metrics role: may GET /metrics and nothing else */
    char *subject;     /* the certificate's subject DN (RFC 4514, "CN=alice"), or NULL */
    char *fingerprint; /* "SHA256:AB:..." (upper case), or NULL */
};

/* [quota] and [quota USER] (docs/configuration.md): what one user may take,
 * in the manner of a Slurm QOS (MaxTRESPerJob, MaxWall, MaxSubmitJobsPerUser).
 * Without [auth] every request counts as one user's.  ACC_QUOTA_UNLIMITED:
 * no limit. */
#define ACC_QUOTA_UNLIMITED INT64_MAX

struct acc_quota {
    int64_t nodes;      /* in one agreement, over all its components */
    int64_t bandwidth;  /* Mbit/s in one agreement, over all its links */
    int64_t duration;   /* seconds: the longest agreement */
    int64_t advance;    /* seconds from now to the latest start */
    int64_t agreements; /* open at once: Pending, terminating, or Observed until it ends */
    int64_t quotes;     /* open quotes at once: Advisory or Held */
    /* Node-hours per site and Mbit-hours per link held at once: the open
     * agreements' and held quotes' reservations from now on (the part
     * within max_advance and max_duration of now). */
    int64_t node_hours, mbit_hours;
    /* Without [auth] (every request one user's), what one client address
     * may hold of max_agreements and max_quotes; only in [quota]. */
    int64_t agreements_per_address, quotes_per_address;
};

/* A [quota USER] section: the keys it gives (bit k: the k-th field of
 * struct acc_quota), the others [quota]'s once the file is read. */
struct acc_user_quota {
    char *user;
    char *section; /* "quota USER", for messages */
    struct acc_quota q;
    unsigned given;
};

/* [ui]: what the web page at /ui/ signs in against (docs/ui.md).  All
 * NULL: no OpenID Connect provider, the page takes a pasted token. */
struct acc_ui_cfg {
    char *oidc_issuer;    /* the provider's issuer URL, as its discovery document names it */
    char *oidc_client_id; /* the page's client at the provider (public: no secret) */
    char *oidc_scope;     /* asked for; "openid" when the issuer is given and it is not */
    char *oidc_redirect;  /* where the provider sends the browser back; NULL: the page's /ui/ */
    /* Built after reading: the page's Content-Security-Policy, whose
     * connect-src names the issuer's origin (the page fetches the
     * discovery document and the tokens there) and nothing else. */
    char *csp;
};

/* What a token's scopes must allow: the operations of the API. */
enum acc_token_op { ACC_OP_READ, ACC_OP_CREATE, ACC_OP_MODIFY, ACC_OP_CANCEL, ACC_OP__COUNT };

/* One "map" line of an [issuer NAME] section: which tokens (any, a
 * subject, a group) are which Accord user. */
struct acc_issuer_map {
    enum { ACC_MAP_ANY, ACC_MAP_SUB, ACC_MAP_GROUP } kind;
    char *match;   /* the subject or group; NULL for any */
    char *user;    /* NULL: the user claim's value ("%u") */
    char *quota;   /* quota=NAME: [quota NAME] is the user's; NULL: their own or [quota] */
    char *account; /* account=NAME: the Unix account of the user's jobs; NULL: [accounts] */
};

/* [issuer NAME] (docs/configuration.md, docs/security.md): a trusted
 * issuer of JWT access tokens. */
struct acc_issuer_cfg {
    char *name;
    char *url;                       /* its "iss", https:// */
    char *audience;                  /* what its tokens' "aud" must name */
    char *ca_file;                   /* NULL: the system's CAs */
    char *user_claim, *groups_claim; /* NULL: sub, wlcg.groups (or eduperson_entitlement) */
    char *scopes[ACC_OP__COUNT];     /* NULL: compute.read, .create, .modify, .cancel */
    unsigned algs;                   /* ACC_JWT_RS256 | ACC_JWT_ES256 (lib/jwt) */
    int64_t leeway, jwks_refresh, jwks_max_age, timeout;
    struct acc_issuer_map *maps;
    size_t n_maps;
};

struct acc_config {
    char *origin; /* file name, or "embedded testbed" */
    bool embedded;

    /* [server] */
    char *listen_host;
    unsigned listen_port;
    size_t max_body;
    unsigned max_depth;
    unsigned max_attributes;       /* on one element of an offer */
    unsigned max_total_attributes; /* in one offer */
    unsigned threads;              /* event threads serving connections */
    unsigned connection_limit;
    unsigned client_connections; /* open connections per client address */
    unsigned timeout;            /* seconds a connection may idle */
    unsigned request_timeout;    /* seconds a whole request may take to arrive */
    unsigned max_query;          /* query parameters per request */
    size_t max_unsent;           /* answer bytes held until read, in all */
    size_t client_unsent;        /* and per client address */
    /* The names (host names, addresses) the server answers to, as written
     * ("a.example.org, 10.0.0.5"; "*": any); NULL: the default, the
     * listen address and loopback, or the host's own names and addresses
     * when it listens on all of them (server/http/origin.c). */
    char *server_names;
    bool allow_control;    /* POST /adapters/{name}/control/{op} (simulators' faults) */
    bool anonymous_backup; /* POST /admin/backup without [auth] (it holds the key) */
    bool access_log;       /* a line per request at info level */

    /* Per client address, connections still in their handshake or first
     * request head; and the seconds a new connection has for that head. */
    unsigned pending_connections;
    unsigned header_timeout;
    enum acc_log_level log_level;
    char *tls_certificate; /* HTTPS: the server's certificate file (PEM); NULL: plain HTTP */
    char *tls_key;         /* and its key; both reread on SIGHUP */

    /* [signing]: the key (PEM, RSA) and certificate (PEM) agreements are
     * signed with; NULL: a self-signed pair beside the database. */
    char *sign_key;
    char *sign_cert;

    /* [database] */
    char *db_path; /* a file, or (url) a PostgreSQL URL shared by several accordd */
    int64_t lease; /* seconds a dead leader's once-only duties wait for another */
    /* seconds this clock may be off the database's before a warning, and
     * before it neither leads nor negotiates (several instances) */
    int64_t clock_warn, clock_refuse;
    bool durable;
    int64_t wal_limit; /* bytes the write-ahead log may reach */
    int64_t retain;    /* seconds ended agreements are kept; 0: for ever */
    /* Rejected agreements kept per user (per client address without
     * [auth]): the oldest beyond go as each new one is rejected. */
    unsigned max_rejected;

    /* [auth]: with no users, every request is served without credentials. */
    struct acc_user *users;
    size_t n_users;
    size_t n_cert_users; /* of them, from client_certificates */
    char *tokens_file;   /* the files they were read from, as given; NULL: none */
    char *client_certificates_file;
    char *client_ca; /* CA file client certificates must verify against; NULL: none asked */

    /* [negotiation] */
    enum acc_strategy strategy;    /* the default when an offer names none */
    struct acc_policy_opts policy; /* placement of components without a site, when an
                                    * offer names no policy (rng unused: lowest index) */
    unsigned policy_candidates;    /* placements a policy offers, best first, to probe */
    /* [policy]: the open points of the policies, for every policy name */
    struct acc_policy_opts policy_options; /* tiebreak, max_clusters, ca_avg (id unused) */
    uint64_t policy_seed;                  /* tiebreak = random: mixed with the agreement id */
    struct acc_latency_cfg *latencies;     /* as given */
    size_t n_latencies;
    double *latency; /* n_sites x n_sites, row-major in sites' order; NULL: none given */
    unsigned max_rounds;
    int64_t horizon;         /* how far previews look without a deadline */
    int64_t lead_time;       /* earliest start no sooner than now + this */
    int64_t adapter_timeout; /* per adapter call, seconds */
    unsigned workers;        /* negotiation worker threads */
    /* each adapter's bulkhead and circuit breaker (server/engine/breaker.c) */
    unsigned adapter_max_calls; /* its calls in flight at once; 0: workers / 2, at least 1 */
    unsigned breaker_failures;  /* time-outs or unreachable in a row that open it; 0: off */
    int64_t breaker_cooldown;   /* seconds it stays open before a probe */
    unsigned queue_length;      /* negotiations queued or running at once */
    unsigned max_pending;       /* of those, ?mode=pending ones */
    int64_t max_hold;           /* longest hold of a quote; an unheld quote is open this long */
    unsigned quote_options;     /* counter-offers in a quote, at most */
    unsigned max_quotes;        /* open quotes (Advisory or Held) in all */

    /* [quota], [quota USER] */
    struct acc_quota quota; /* every user's */
    struct acc_user_quota *user_quotas;
    size_t n_user_quotas;

    struct acc_launch_cfg launch;
    /* [accounts]: user of [auth] = the Unix account their jobs run as
     * (with the account= of [issuer] map lines) */
    struct acc_kv *accounts;
    size_t n_accounts;
    /* [issuer NAME] sections, in the file's order */
    struct acc_issuer_cfg *issuers;
    size_t n_issuers;
    /* user = NAME of the quota= of [issuer] map lines: [quota NAME] is theirs */
    struct acc_kv *quota_of;
    size_t n_quota_of;
    /* [accounts] mapfile: the users' identities to accounts, as a site's
     * (lib/identity/mapfile.h), after the lines above; read with the file */
    char *accounts_mapfile;
    struct acc_mapfile *accounts_map;

    /* [site NAME], [network NAME], [link NAME]: read by the resource
     * module (resources/), as accord-site reads them. */
    struct acc_resources_cfg res;

    /* [ui]: the start's; a reload does not change it */
    struct acc_ui_cfg ui;

    /* What SIGHUP reloaded (config_live.c), or NULL: never reloaded, or
     * not a running daemon's. */
    struct acc_config_live *live;
};

/* Reads a file.  Errors name the file, the line and the key. */
acc_err acc_config_load_file(const char *path, struct acc_config *out, struct acc_error *err);

/* Reads INI text (origin names it in messages). */
acc_err acc_config_load_string(const char *text, const char *origin, struct acc_config *out,
                               struct acc_error *err);

/* The embedded testbed: three simulated sites shaped like VIOLA's (fzj-xd1
 * 64 nodes, caesar 128, fh-brs 32), a full mesh of 10 Gbit/s links, and a
 * deterministic background load. */
acc_err acc_config_embedded(struct acc_config *out, struct acc_error *err);

/* The embedded testbed's INI text, for `accordd --print-config`. */
const char *acc_config_embedded_text(void);

/* `accordd --check-config` and a start alike: reads the file (path NULL:
 * the embedded testbed) into out and every problem into r, each with its
 * line (lib/common/conf_report.h), going on after each; the files HTTPS
 * reads must be readable too, and every [site] and [network] adapter must
 * accept its settings (acc_resources_check_adapters: the compiled-in
 * kinds' own checks, which touch nothing outside).  ACC_OK when r holds no problem.  Either way out
 * and r are the caller's to release; out->origin is NULL when the file
 * could not be opened (nothing was read). */
struct acc_conf_report;
acc_err acc_config_check(const char *path, struct acc_config *out, struct acc_conf_report *r);

/* Every key of accordd's configuration, with a value it refuses: those of
 * [server], [database], [signing], [negotiation], [auth], [launch],
 * [policy] and [quota] (also [quota USER]'s), and the keys resources/
 * reads in [site NAME], [network NAME] and [link NAME] (not the adapters'
 * settings).  A key a reader of accordd's own sections takes is listed. */
void acc_config_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                     void *ctx),
                          void *ctx);

/* The dangerous combinations of c as warnings in r (lib/common/conf_report.h):
 * a listen address that is not loopback without HTTPS or without [auth];
 * launching with no [launch] account; anonymous_backup without [auth].
 * Called once the command line's overrides are in (listen_given: the
 * listen address is --listen's, named instead of a line). */
void acc_config_warn(const struct acc_config *c, bool listen_given, struct acc_conf_report *r);

/* The effective configuration (every key with its value, defaults
 * included) as INI text that reads back to the same configuration. */
void acc_config_print(const struct acc_config *c, FILE *out);

/* Overrides from the command line. */
acc_err acc_config_set_listen(struct acc_config *c, const char *hostport, struct acc_error *err);
acc_err acc_config_set_db(struct acc_config *c, const char *path, struct acc_error *err);

void acc_config_release(struct acc_config *c);

/* Reload without a restart (config_live.c).  What SIGHUP may change while
 * accordd runs is who may call it and what they may do: the users of
 * [auth] (its tokens and client_certificates files read again), [accounts]
 * and [quota].  Each reload is a new generation, a whole configuration
 * read from the file as it is now; the one at start stays the rest of the
 * daemon's (listen address, sites, database).  Those who read the users,
 * accounts or quotas take the current generation with acc_config_live and
 * give it back with acc_config_unlive once nothing they hold points into
 * it; a generation is freed when the last taker gives it back, so a reload
 * never changes what a request in flight sees.  Without a reload,
 * acc_config_live(c) is c and costs an atomic load; after one, a lock.
 * Reloads come from one thread (accordd's signal loop). */
const struct acc_config *acc_config_live(const struct acc_config *c);
void acc_config_unlive(const struct acc_config *c, const struct acc_config *gen);

/* Makes fresh (read by the caller from the file as it is now, its checks
 * passed; moved, fresh is empty afterwards) the generation of c that
 * acc_config_live answers from now on.  ACC_ERR_NOMEM leaves c's as it
 * was. */
acc_err acc_config_reload(struct acc_config *c, struct acc_config *fresh, struct acc_error *err);

/* The account the jobs of initiator's agreements run as: its [accounts]
 * entry (with [auth]), else the account [accounts] mapfile maps id to
 * (NULL id: the initiator's name only), else [launch] account, else
 * accordd's own unless accordd runs as root.  *other: it is not accordd's
 * own.  ACC_ERR_FORBIDDEN with the reason when no job of theirs may start. */
acc_err acc_config_launch_account(const struct acc_config *c, const char *initiator,
                                  const struct acc_identity *id, struct acc_account *out,
                                  bool *other, struct acc_error *err);
/* The account [accounts] maps initiator (or id, by the mapfile) to, into
 * buf (len bytes); false when it maps none (no [launch] account here): the
 * account a reservation at one of accordd's own sites is booked for. */
bool acc_config_account_of(const struct acc_config *c, const char *initiator,
                           const struct acc_identity *id, char *buf, size_t len);

/* Whether requests need credentials: [auth] names users, or an [issuer]
 * is configured. */
bool acc_config_auth(const struct acc_config *c);
/* The [issuer] whose url is iss, or NULL. */
const struct acc_issuer_cfg *acc_config_issuer(const struct acc_config *c, const char *iss);
/* The scope a token of is needs for op (its scope_* key or the WLCG name). */
const char *acc_issuer_scope(const struct acc_issuer_cfg *is, enum acc_token_op op);
/* The Accord user (name, size bytes) a verified token of is stands for:
 * the first map line that takes its subject or one of its groups (none:
 * the user claim's value); *map receives that line (NULL: none given).
 * ACC_ERR_FORBIDDEN with the reason when no line takes it or the name is
 * not a usable user name. */
acc_err acc_issuer_user(const struct acc_issuer_cfg *is, const char *sub, const char *user_claim,
                        char *const *groups, size_t n_groups, char *name, size_t size,
                        const struct acc_issuer_map **map, struct acc_error *err);
/* The user whose token this is, or NULL (compared in constant time). */
const struct acc_user *acc_config_user_by_token(const struct acc_config *c, const char *token);

/* The client certificate user with this fingerprint or subject, or NULL. */
const struct acc_user *acc_config_user_by_cert(const struct acc_config *c, const char *subject,
                                               const char *fingerprint);

/* The options of placement policy `name` (NULL: the configured [negotiation]
 * policy) with the [policy] section's open points: an "fcm-K" name sets
 * max_clusters, other names take [policy] max_clusters.  ACC_ERR_INVALID
 * with the reason when the name is unknown or accordd cannot run the
 * policy: la and migration need the job's home site, a1 and b1-b4 Jones
 * et al.'s star network of per-site links and their loads, ca a latency
 * for every pair of sites. */
acc_err acc_config_policy(const struct acc_config *c, const char *name, struct acc_policy_opts *out,
                          struct acc_error *err);

/* The quota of a user: its [quota USER] section over [quota], or [quota]
 * (user NULL: every request, as without [auth]).  *section, if given,
 * receives the section's name for messages ("quota" or "quota alice"). */
const struct acc_quota *acc_config_quota(const struct acc_config *c, const char *user,
                                         const char **section);

/* The resource module's look-ups (resources.h) on accordd's configuration. */
const struct acc_site_cfg *acc_config_site(const struct acc_config *c, const char *name);
const char *acc_config_host_address(const struct acc_site_cfg *s, const char *host);
const struct acc_link_cfg *acc_config_link_between(const struct acc_config *c, const char *a,
                                                   const char *b);

#endif
