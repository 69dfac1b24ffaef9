/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - accord-site: one site's adapters served to the Accord instances
 * it admits, over the adapter protocol with mutual TLS (docs/site.md).
 *
 *   accord-site --config FILE [--listen HOST:PORT] [--db PATH]
 *   accord-site --config FILE --check-config | --print-config
 *   accord-site --help | --version
 *
 * SIGTERM and SIGINT stop it; SIGHUP reads the file again and takes its
 * certificates and [peer] sections (a bad file changes nothing). */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../lib/common/conf_report.h"
#include "../lib/common/log.h"
#include "../lib/common/notify.h"
#include "../lib/common/proc.h"
#include "site.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: accord-site --config FILE [--listen HOST:PORT] [--db PATH]\n"
               "       accord-site --config FILE --check-config | --print-config\n"
               "       accord-site --help | --version\n"
               "\n"
               "accord-site hosts one site's adapters (sim-batch, slurm, tc, ...) and serves\n"
               "them to the Accord instances it admits, over the adapter protocol (XML over\n"
               "HTTPS, a client certificate required).  See accord-site(8).\n"
               "\n"
               "  --config FILE      its INI configuration ([daemon], [peer NAME], [site NAME],\n"
               "                     [network NAME], [link NAME])\n"
               "  --listen HOST:PORT where to listen (port 0: any free port)\n"
               "  --db PATH          its SQLite database file\n"
               "  --check-config     list every problem of the file, one per line on standard\n"
               "                     error, then print the effective configuration; exit 0\n"
               "                     without problems, else 1\n"
               "  --print-config     print the effective configuration and exit\n"
               "\n"
               "Signals: SIGTERM/SIGINT stop it; SIGHUP reloads the certificates, the\n"
               "[peer] sections and the mapfile from the same file.\n");
}

/* What the command line asked for. */
struct args {
    const char *config, *listen, *db;
    bool check, print;
};

enum { OPT_CHECK = 256, OPT_PRINT, OPT_VERSION };

static const struct option options[] = {
    {"config", required_argument, NULL, 'c'},       {"listen", required_argument, NULL, 'l'},
    {"db", required_argument, NULL, 'd'},           {"check-config", no_argument, NULL, OPT_CHECK},
    {"print-config", no_argument, NULL, OPT_PRINT}, {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},    {NULL, 0, NULL, 0},
};

static void needs_value(int opt, const char *got)
{
    const char *name = opt == 'c' ? "config" : opt == 'l' ? "listen" : "db";
    const char *what = opt == 'c' ? "FILE" : opt == 'l' ? "HOST:PORT" : "PATH";
    fprintf(stderr, "accord-site: option '--%s' needs a %s%s%s%s\n", name, what,
            got ? ", not '" : "", got ? got : "", got ? "'" : "");
}

/* -1 to go on, else the exit status (--help, --version, a bad option). */
static int parse_args(int argc, char **argv, struct args *a)
{
    int opt;
    opterr = 0; /* the messages below name accord-site, not argv[0] */
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("accord-site %s (adapter protocol 1)\n", ACCORD_VERSION);
            return 0;
        case OPT_CHECK:
            a->check = true;
            break;
        case OPT_PRINT:
            a->print = true;
            break;
        case ':':
            needs_value(optopt, NULL);
            return 2;
        case '?':
            fprintf(stderr, "accord-site: unknown option '%s' (try 'accord-site --help')\n",
                    argv[optind - 1]);
            return 2;
        default:
            if (strncmp(optarg, "--", 2) == 0) {
                needs_value(opt, optarg);
                return 2;
            }
            *(opt == 'c' ? &a->config : opt == 'l' ? &a->listen : &a->db) = optarg;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "accord-site: unexpected argument '%s' (try 'accord-site --help')\n",
                argv[optind]);
        return 2;
    }
    if (!a->config) {
        fprintf(stderr, "accord-site: --config FILE is required\n");
        usage(stderr);
        return 2;
    }
    if (a->check && a->print) {
        fprintf(stderr, "accord-site: --check-config and --print-config go alone\n");
        return 2;
    }
    return -1;
}

/* --check-config (every problem on stderr, the effective configuration on
 * stdout) and --print-config. */
static int config_command(const struct args *a)
{
    struct acc_site_config cfg;
    struct acc_conf_report r;
    int st = acc_site_config_check(a->config, &cfg, &r) ? 1 : 0;
    if (a->check) {
        acc_conf_report_print(&r, a->config, stderr);
        if (cfg.origin)
            acc_site_config_print(&cfg, stdout);
    } else if (st) {
        struct acc_error err;
        acc_conf_report_first(&r, a->config, true, &err);
        fprintf(stderr, "accord-site: %s\n", err.msg);
    } else {
        acc_site_config_print(&cfg, stdout);
    }
    acc_conf_report_release(&r);
    acc_site_config_release(&cfg);
    return st;
}

/* The configuration as --check-config reads and checks it (the same
 * code: the adapters' own checks included), with the command line's
 * overrides.  problems: where to print every problem as --check-config
 * does (err's text is then empty); NULL: the first is in err. */
static acc_err load(const char *config, const char *listen, const char *db, FILE *problems,
                    struct acc_site_config *cfg, struct acc_error *err)
{
    struct acc_conf_report r;
    acc_err rc = acc_site_config_check(config, cfg, &r);
    if (rc && problems)
        acc_conf_report_print(&r, config, problems);
    if (rc) {
        acc_conf_report_first(&r, config, true, err);
        if (problems)
            err->msg[0] = '\0'; /* said */
    }
    acc_conf_report_release(&r);
    if (!rc && listen)
        rc = acc_site_config_set_listen(cfg, listen, err);
    if (!rc && db)
        rc = acc_site_config_set_db(cfg, db, err);
    if (rc)
        acc_site_config_release(cfg);
    return rc;
}

int main(int argc, char **argv)
{
    struct args a = {0};
    int st = parse_args(argc, argv, &a);
    if (st >= 0)
        return st;
    if (a.check || a.print)
        return config_command(&a);
    const char *config = a.config, *listen = a.listen, *db = a.db;
    acc_log_set_program("accord-site");
    struct acc_error err;
    struct acc_site_config cfg;
    if (load(config, listen, db, stderr, &cfg, &err)) {
        if (err.msg[0])
            fprintf(stderr, "accord-site: %s\n", err.msg);
        return 1;
    }
    acc_log_set_level(cfg.log_level);

    /* Signals are taken by sigwait below, in this thread only. */
    sigset_t sigs;
    acc_proc_daemon_signals(&sigs);

    struct acc_site *site = NULL;
    if (acc_site_start(&cfg, &site, &err)) {
        fprintf(stderr, "accord-site: %s\n", err.msg);
        return 1;
    }
    printf("accord-site %s listening on port %u\n", ACCORD_VERSION, acc_site_port(site));
    fflush(stdout);
    acc_notify_ready();
    /* The keep-alive of systemd's watchdog (WatchdogSec=) comes from here,
     * between signals: accord-site has no periodic thread of its own, so it
     * shows that the process still runs and takes signals, not that every
     * request is answered. */
    int64_t watchdog = acc_notify_watchdog_interval_us();
    struct timespec every = {watchdog > 0 ? watchdog / 1000000 : 3600,
                             watchdog > 0 ? (watchdog % 1000000) * 1000 : 0};
    acc_notify_watchdog();
    for (;;) {
        int sig = sigtimedwait(&sigs, NULL, &every);
        acc_notify_watchdog();
        if (sig < 0)
            continue; /* the time passed (or EINTR) */
        if (sig != SIGHUP) {
            acc_log_info("signal %d: shutting down", sig);
            acc_notify_stopping();
            break;
        }
        acc_notify_reloading();
        struct acc_site_config fresh;
        if (load(config, listen, db, NULL, &fresh, &err) || acc_site_reload(site, &fresh, &err))
            acc_log_error("SIGHUP: %s (nothing changed)", err.msg);
        acc_notify_ready();
    }
    acc_site_stop(site);
    return 0;
}
