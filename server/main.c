/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - accordd: the co-allocation service.
 *
 *   accordd [--config FILE] [--listen HOST:PORT] [--db PATH] [--log-level L]
 *   accordd --config FILE --replay WORKLOAD [--policy NAME] [--from TIME]
 *           [--jobs N] [--csv]
 *   accordd [--config FILE] [--listen HOST:PORT] [--db PATH]
 *           --check-config | --print-config
 *   accordd [--config FILE] [--db URL] --restore DUMP
 *   accordd --help | --version
 *
 * Without --config it serves the embedded simulated testbed. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/common/conf_report.h"
#include "../lib/sql/dbname.h"
#include "../lib/sql/sql.h"
#include "../lib/common/log.h"
#include "../lib/common/notify.h"
#include "../lib/common/proc.h"
#include "../lib/common/tuning.h"
#include "../lib/dsig/dsig.h"
#include "../lib/jwt/jwt.h"
#include "config/config.h"
#include "http/http.h"
#include "replay/replay.h"
#include "service/service.h"
#include "xml/xml.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: accordd [--config FILE] [--listen HOST:PORT] [--db PATH]\n"
               "               [--log-level error|warn|info|debug]\n"
               "       accordd [--config FILE] [--db PATH] --replay WORKLOAD [--policy NAME]\n"
               "               [--from TIME] [--jobs N] [--csv]\n"
               "       accordd [--config FILE] [--listen HOST:PORT] [--db PATH]\n"
               "               --check-config | --print-config\n"
               "       accordd [--config FILE] [--db URL] --restore DUMP\n"
               "       accordd --help | --version\n"
               "\n"
               "Accord negotiates co-allocations (nodes on several clusters plus network\n"
               "bandwidth, all at the same time) from WS-Agreement offers over HTTP/XML.\n"
               "Without --config it serves an embedded simulated testbed of three sites on\n"
               "127.0.0.1:8080 with its database in ./accord.db.\n"
               "\n"
               "  --config FILE      an INI configuration (see accord.conf(5))\n"
               "  --listen HOST:PORT where to listen (port 0: any free port)\n"
               "  --db PATH          the SQLite database file\n"
               "  --log-level L      how much to log on standard error\n"
               "  --check-config     run every check a start runs (the adapters' own\n"
               "                     included; nothing is contacted or written), list each\n"
               "                     problem and warning on standard error, one per line,\n"
               "                     then print the effective configuration; exit 0\n"
               "                     without problems (warnings allowed), else 1\n"
               "  --print-config     print the effective configuration of --config FILE\n"
               "                     with --listen and --db, or without any of them the\n"
               "                     embedded testbed's text, and exit\n"
               "\n"
               "  --replay WORKLOAD  dry run: place an SWF trace or an accord-sim parameter\n"
               "                     file on the live calendars of the configured sites\n"
               "                     (previews only: nothing is booked, the database is not\n"
               "                     opened), print each job's placement and a summary\n"
               "  --policy NAME      the placement policy (default: [negotiation] policy)\n"
               "  --from TIME        submit times count from TIME (RFC 3339; default now)\n"
               "  --jobs N           replay at most N jobs of the workload\n"
               "  --csv              CSV instead of a table\n"
               "\n"
               "  --restore DUMP     load the database dump of a backup archive (accord.dump,\n"
               "                     pg_dump's custom format) into the configured PostgreSQL\n"
               "                     database, which must be empty, and exit\n");
}

/* What the command line asked for. */
struct args {
    const char *config, *listen, *db, *level, *jobs, *restore;
    bool check, print;
    struct acc_replay_cmd replay;
};

enum { OPT_CHECK = 256, OPT_PRINT, OPT_VERSION };

static const struct option options[] = {
    {"config", required_argument, NULL, 'c'},
    {"listen", required_argument, NULL, 'l'},
    {"db", required_argument, NULL, 'd'},
    {"log-level", required_argument, NULL, 'L'},
    {"replay", required_argument, NULL, 'r'},
    {"policy", required_argument, NULL, 'p'},
    {"from", required_argument, NULL, 'f'},
    {"jobs", required_argument, NULL, 'j'},
    {"csv", no_argument, NULL, 'C'},
    {"restore", required_argument, NULL, 'R'},
    {"check-config", no_argument, NULL, OPT_CHECK},
    {"print-config", no_argument, NULL, OPT_PRINT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* What each option's value is, for "option '--config' needs a FILE". */
static const char *value_name(int opt)
{
    switch (opt) {
    case 'c':
        return "FILE";
    case 'l':
        return "HOST:PORT";
    case 'd':
        return "PATH";
    case 'L':
        return "LEVEL";
    case 'r':
        return "WORKLOAD";
    case 'p':
        return "NAME";
    case 'f':
        return "TIME";
    case 'R':
        return "DUMP";
    default:
        return "N";
    }
}

/* "option '--config' needs a FILE" (got: what came instead, or NULL). */
static void needs_value(int opt, const char *got)
{
    for (const struct option *o = options; o->name; o++) {
        if (o->val == opt && o->has_arg)
            fprintf(stderr, "accordd: option '--%s' needs a %s%s%s%s\n", o->name, value_name(opt),
                    got ? ", not '" : "", got ? got : "", got ? "'" : "");
    }
}

/* One option with its value into a; false for a value that is another
 * option ("--config --listen": the file name is missing). */
static bool take(int opt, const char *v, struct args *a)
{
    if (v && strncmp(v, "--", 2) == 0) {
        needs_value(opt, v);
        return false;
    }
    const char **field = opt == 'c'   ? &a->config
                         : opt == 'l' ? &a->listen
                         : opt == 'd' ? &a->db
                         : opt == 'L' ? &a->level
                         : opt == 'r' ? &a->replay.workload
                         : opt == 'p' ? &a->replay.policy
                         : opt == 'f' ? &a->replay.from
                         : opt == 'R' ? &a->restore
                                      : &a->jobs;
    *field = v;
    return true;
}

/* Reads the options into a; -1 to go on, else the exit status (--help,
 * --version, a bad option). */
static int parse_args(int argc, char **argv, struct args *a)
{
    int opt;
    opterr = 0; /* the messages below name accordd, not argv[0] */
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("accordd %s\n", ACCORD_VERSION);
            return 0;
        case OPT_CHECK:
            a->check = true;
            break;
        case OPT_PRINT:
            a->print = true;
            break;
        case 'C':
            a->replay.csv = true;
            break;
        case ':':
            needs_value(optopt, NULL);
            return 2;
        case '?':
            fprintf(stderr, "accordd: unknown option '%s' (try 'accordd --help')\n",
                    argv[optind - 1]);
            return 2;
        default:
            if (!take(opt, optarg, a))
                return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "accordd: unexpected argument '%s' (try 'accordd --help')\n", argv[optind]);
        return 2;
    }
    if (a->check && a->print) {
        fprintf(stderr, "accordd: --check-config and --print-config go alone\n");
        return 2;
    }
    if (a->restore && (a->check || a->print || a->replay.workload || a->listen)) {
        fprintf(stderr, "accordd: --restore goes with --config and --db only\n");
        return 2;
    }
    return -1;
}

/* The command line's --listen and --db into cfg; -1, or 2 (said why). */
static int overrides(const struct args *a, struct acc_config *cfg)
{
    struct acc_error err;
    if ((a->listen && acc_config_set_listen(cfg, a->listen, &err)) ||
        (a->db && acc_config_set_db(cfg, a->db, &err))) {
        fprintf(stderr, "accordd: %s\n", err.msg);
        return 2;
    }
    return -1;
}

/* The configuration as a start and --check-config read it, by the same
 * code (acc_config_check: every check, the adapters' own included), with
 * the command line's overrides and (warn) the dangerous combinations in
 * r.  -1 to go on (cfg and r are the caller's to release either way), or
 * 2 for a bad override. */
static int read_config(const struct args *a, bool warn, struct acc_config *cfg,
                       struct acc_conf_report *r)
{
    acc_config_check(a->config, cfg, r);
    if (!cfg->origin)
        return -1; /* the file could not be opened: r says so */
    int st = overrides(a, cfg);
    if (st < 0 && warn)
        acc_config_warn(cfg, a->listen != NULL, r);
    return st;
}

/* --check-config: every problem and warning on stderr, the effective
 * configuration on stdout; --print-config: the effective configuration
 * (or, without --config, --listen and --db, the embedded text, comments
 * and all). */
static int config_command(const struct args *a)
{
    if (a->print && !a->config && !a->listen && !a->db) {
        fputs(acc_config_embedded_text(), stdout);
        return 0;
    }
    struct acc_config cfg;
    struct acc_conf_report r;
    int st = read_config(a, a->check, &cfg, &r);
    const char *origin = a->config ? a->config : "embedded testbed";
    if (st < 0) {
        st = acc_conf_report_failed(&r) ? 1 : 0;
        if (a->check) {
            acc_conf_report_print(&r, origin, stderr);
            if (cfg.origin)
                acc_config_print(&cfg, stdout);
        } else if (st) {
            struct acc_error err;
            acc_conf_report_first(&r, origin, true, &err);
            fprintf(stderr, "accordd: %s\n", err.msg);
        } else {
            acc_config_print(&cfg, stdout);
        }
    }
    acc_conf_report_release(&r);
    acc_config_release(&cfg);
    return st;
}

/* The replay options go together; --jobs is a count.  -1 or 2. */
static int check_replay(struct args *a)
{
    struct acc_replay_cmd *r = &a->replay;
    if (!r->workload && (r->policy || r->from || a->jobs || r->csv)) {
        fprintf(stderr, "accordd: --policy, --from, --jobs and --csv go with --replay\n");
        return 2;
    }
    if (a->jobs) {
        char *end = NULL;
        errno = 0;
        long n = strtol(a->jobs, &end, 10);
        if (errno || end == a->jobs || *end || n < 1 || n > ACC_REPLAY_MAX_JOBS) {
            fprintf(stderr, "accordd: --jobs is a number from 1 to %d\n", ACC_REPLAY_MAX_JOBS);
            return 2;
        }
        r->jobs = n;
    }
    return -1;
}

/* The configuration with the command line's overrides, read and checked
 * as --check-config reads and checks it; its problems and warnings on
 * standard error in the same lines (a replay: its problems only).  -1,
 * or the exit status (nothing to release then). */
static int load_config(const struct args *a, struct acc_config *cfg)
{
    struct acc_conf_report r;
    int st = read_config(a, !a->replay.workload, cfg, &r);
    if (st < 0) {
        acc_conf_report_print(&r, a->config ? a->config : "embedded testbed", stderr);
        if (acc_conf_report_failed(&r))
            st = 1;
    }
    acc_conf_report_release(&r);
    if (st < 0 && a->level && !acc_log_parse_level(a->level, &cfg->log_level)) {
        fprintf(stderr, "accordd: --log-level is error, warn, info or debug\n");
        st = 2;
    }
    if (st >= 0)
        acc_config_release(cfg);
    return st;
}

/* What a running accordd holds. */
struct daemon {
    struct acc_service *svc;
    struct acc_http_server *srv;
    struct acc_http_ctx ctx;
    bool dsig;
};

static acc_err start(const struct acc_config *cfg, struct daemon *d, struct acc_error *err)
{
    acc_err rc = acc_xml_init(err);
    /* xmlsec once, before any thread; the signing key before the store, so
     * that a bad [signing] changes nothing. */
    if (!rc && !(rc = acc_dsig_init(err)))
        d->dsig = true;
    if (!rc)
        rc = acc_http_signer_open(cfg, &d->ctx.signer, err);
    /* Nothing is committed whose document could not be signed. */
    struct acc_service_options so = {.precommit = acc_http_agreement_check,
                                     .precommit_arg = &d->ctx};
    if (!rc)
        rc = acc_service_open_with(cfg, &so, &d->svc, err);
    if (!rc) {
        d->ctx.svc = d->svc;
        d->ctx.limits = acc_http_limits_of(cfg);
        if (!(d->ctx.jwt = acc_jwt_cache_new()))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!rc) {
        struct acc_http_options ho = acc_http_options_of(cfg);
        rc = acc_http_start(&d->ctx, &ho, &d->srv, err);
    }
    return rc;
}

static void announce(const struct acc_config *cfg, const struct daemon *d)
{
    const char *host = cfg->listen_host;
    bool v6 = strchr(host, ':') != NULL;
    char *db = acc_db_shown(cfg->db_path); /* a URL without its password */
    acc_log_info("serving %s (%zu sites, %zu links) with database %s", cfg->origin,
                 cfg->res.n_sites, cfg->res.n_links, db ? db : "?");
    free(db);
    char who[512];
    acc_account_describe_self(who, sizeof who);
    acc_log_info("running as %s; launching %s%s%s", who, cfg->launch.enabled ? "on" : "off",
                 cfg->launch.enabled && cfg->launch.account ? ", jobs as " : "",
                 cfg->launch.enabled && cfg->launch.account ? cfg->launch.account : "");
    if (cfg->launch.enabled && geteuid() == 0 && !cfg->launch.account)
        acc_log_warn("accordd runs as root and [launch] names no account: offers it would "
                     "launch are refused%s (a job never runs as root)",
                     cfg->n_accounts ? " unless [accounts] maps their user" : "");
    const char *scheme = cfg->tls_certificate ? "https" : "http";
    printf("accordd %s listening on %s://%s%s%s:%u\n", ACCORD_VERSION, scheme, v6 ? "[" : "", host,
           v6 ? "]" : "", acc_http_port(d->srv));
    if (cfg->embedded)
        printf("try:  curl -s -X POST --data-binary @docs/examples/offer.xml "
               "-H 'Content-Type: application/xml' http://%s%s%s:%u/agreements\n",
               v6 ? "[" : "", host, v6 ? "]" : "", acc_http_port(d->srv));
    fflush(stdout);
}

/* SIGHUP's second part: the users of [auth] (its files read again),
 * [accounts] and [quota] from the configuration file as it is now
 * (config.h: acc_config_reload); requests in flight keep those they began
 * with.  A file that does not read, or fails a check, changes nothing. */
static void reload_access(struct acc_config *cfg)
{
    if (cfg->embedded) {
        acc_log_info("SIGHUP: the embedded testbed has no file to read again");
        return;
    }
    struct acc_config fresh = {0};
    struct acc_error err = {0};
    struct acc_conf_report r;
    acc_config_check(cfg->origin, &fresh, &r); /* every check of a start */
    bool failed = !fresh.origin || acc_conf_report_failed(&r);
    if (failed)
        acc_conf_report_first(&r, cfg->origin, true, &err);
    acc_conf_report_release(&r);
    if (failed) {
        acc_log_error("SIGHUP: %s; the users, accounts and quotas stay as they were", err.msg);
        acc_config_release(&fresh);
        return;
    }
    /* With [auth] quotas count per user, without it per client address:
     * what is counted now would not be found again under the other. */
    const struct acc_config *now = acc_config_live(cfg);
    bool auth_now = acc_config_auth(now);
    acc_config_unlive(cfg, now);
    if (auth_now != acc_config_auth(&fresh)) {
        acc_log_error("SIGHUP: %s %s [auth]: that takes a restart; the users, accounts and "
                      "quotas stay as they were",
                      cfg->origin, auth_now ? "no longer has" : "now has");
        acc_config_release(&fresh);
        return;
    }
    size_t users = fresh.n_users, accounts = fresh.n_accounts, quotas = fresh.n_user_quotas,
           issuers = fresh.n_issuers;
    char account[64];
    snprintf(account, sizeof account, "%s", fresh.launch.account ? fresh.launch.account : "");
    if (acc_config_reload(cfg, &fresh, &err)) {
        acc_log_error("SIGHUP: %s; the users, accounts and quotas stay as they were", err.msg);
        acc_config_release(&fresh);
        return;
    }
    acc_log_info("SIGHUP: read %s again: %zu users of [auth], %zu [accounts], %zu [quota USER] "
                 "sections, [launch] account %s, %zu [issuer] sections (the other sections "
                 "take effect at the next start)",
                 cfg->origin, users, accounts, quotas, *account ? account : "none", issuers);
}

/* Until SIGTERM or SIGINT.  SIGHUP: HTTPS reads its certificate, key and
 * client CA files again (new connections get them; a failed reload keeps
 * the old ones), then the users, accounts and quotas. */
static void wait_signals(struct acc_config *cfg, const struct daemon *d, const sigset_t *sigs)
{
    int sig = 0;
    while (sigwait(sigs, &sig) == 0 && sig == SIGHUP) {
        acc_notify_reloading();
        struct acc_error re = {0};
        if (!cfg->tls_certificate)
            acc_log_info("SIGHUP: no certificates to read again (plain HTTP)");
        else if (acc_http_reload_tls(d->srv, &re))
            acc_log_error("SIGHUP: the certificates were not reloaded, the old ones stay: %s",
                          re.msg);
        else
            acc_log_info("SIGHUP: reloaded certificate %s, key %s%s%s", cfg->tls_certificate,
                         cfg->tls_key, cfg->client_ca ? ", client CA " : "",
                         cfg->client_ca ? cfg->client_ca : "");
        reload_access(cfg);
        acc_notify_ready();
    }
    acc_log_info("signal %d: shutting down", sig);
}

static void stop(struct daemon *d)
{
    /* In order: no new connections; negotiations end (rolled back, their
     * clients answered 503 Interrupted); the answers go out; then the
     * launcher, the adapters and the store. */
    acc_http_quiesce(d->srv);
    acc_service_shutdown(d->svc);
    acc_http_stop(d->srv);
    acc_service_close(d->svc);
    acc_signer_close(d->ctx.signer);
    acc_jwt_cache_free(d->ctx.jwt);
    if (d->dsig)
        acc_dsig_cleanup();
    acc_xml_cleanup();
}

int main(int argc, char **argv)
{
    struct args a = {0};
    int st = parse_args(argc, argv, &a);
    if (st < 0)
        st = check_replay(&a);
    if (st < 0 && (a.check || a.print))
        return config_command(&a);
    struct acc_config cfg;
    if (st < 0)
        st = load_config(&a, &cfg);
    if (st >= 0)
        return st;
    acc_log_set_level(cfg.log_level);
    if (a.restore) {
        /* Nothing else is opened: the database is filled, then served by
         * the next start. */
        struct acc_error err = {0};
        st = acc_sql_restore(cfg.db_path, a.restore, &err) ? 1 : 0;
        if (st)
            fprintf(stderr, "accordd: %s\n", err.msg);
        acc_config_release(&cfg);
        return st;
    }
    if (a.replay.workload) {
        /* A dry run: the sites' adapters and previews only; no store, no
         * HTTP, nothing booked. */
        st = acc_replay_command(&cfg, &a.replay, stdout, stderr);
        acc_config_release(&cfg);
        return st;
    }
    acc_tune_process();

    /* Signals are taken by sigwait below, in this thread only. */
    sigset_t sigs;
    acc_proc_daemon_signals(&sigs);
    struct daemon d = {0};
    struct acc_error err;
    st = 1;
    if (start(&cfg, &d, &err)) {
        fprintf(stderr, "accordd: %s\n", err.msg);
    } else {
        announce(&cfg, &d);
        acc_notify_ready();
        wait_signals(&cfg, &d, &sigs);
        acc_notify_stopping();
        st = 0;
    }
    stop(&d);
    acc_config_release(&cfg);
    return st;
}
