/* main.c - accord-site: one site's adapters served to the Accord instances
 * it admits, over the adapter protocol with mutual TLS (docs/site.md).
 *
 *   accord-site --config FILE [--listen HOST:PORT] [--db PATH]
 *   accord-site --help | --version
 *
 * SIGTERM and SIGINT stop it; SIGHUP reads the file again and takes its
 * certificates and [peer] sections (a bad file changes nothing). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../lib/common/log.h"
#include "../lib/common/notify.h"
#include "../lib/common/proc.h"
#include "site.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: accord-site --config FILE [--listen HOST:PORT] [--db PATH]\n"
               "       accord-site --help | --version\n"
               "\n"
               "accord-site hosts one site's adapters (sim-batch, slurm, tc, ...) and serves\n"
               "them to the Accord instances it admits, over the adapter protocol (XML over\n"
               "HTTPS, a client certificate required).  See docs/site.md.\n"
               "\n"
               "  --config FILE      its INI configuration ([daemon], [peer NAME], [site NAME],\n"
               "                     [network NAME], [link NAME])\n"
               "  --listen HOST:PORT where to listen (port 0: any free port)\n"
               "  --db PATH          its SQLite database file\n"
               "\n"
               "Signals: SIGTERM/SIGINT stop it; SIGHUP reloads the certificates and the\n"
               "[peer] sections from the same file.\n");
}

static acc_err load(const char *config, const char *listen, const char *db,
                    struct acc_site_config *cfg, struct acc_error *err)
{
    acc_err rc = acc_site_config_load_file(config, cfg, err);
    if (!rc && listen && (rc = acc_site_config_set_listen(cfg, listen, err)) != ACC_OK)
        acc_site_config_release(cfg);
    if (!rc && db && (rc = acc_site_config_set_db(cfg, db, err)) != ACC_OK)
        acc_site_config_release(cfg);
    return rc;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *listen = NULL, *db = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("accord-site %s (adapter protocol 1)\n", ACCORD_VERSION);
            return 0;
        } else if (strcmp(a, "--config") == 0 && has_value) {
            config = argv[++i];
        } else if (strcmp(a, "--listen") == 0 && has_value) {
            listen = argv[++i];
        } else if (strcmp(a, "--db") == 0 && has_value) {
            db = argv[++i];
        } else {
            fprintf(stderr, "accord-site: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!config) {
        fprintf(stderr, "accord-site: --config FILE is required\n");
        usage(stderr);
        return 2;
    }
    acc_log_set_program("accord-site");
    struct acc_error err;
    struct acc_site_config cfg;
    if (load(config, listen, db, &cfg, &err)) {
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
    for (;;) {
        int sig = 0;
        sigwait(&sigs, &sig);
        if (sig != SIGHUP) {
            acc_log_info("signal %d: shutting down", sig);
            acc_notify_stopping();
            break;
        }
        acc_notify_reloading();
        struct acc_site_config fresh;
        if (load(config, listen, db, &fresh, &err) || acc_site_reload(site, &fresh, &err))
            acc_log_error("SIGHUP: %s (nothing changed)", err.msg);
        acc_notify_ready();
    }
    acc_site_stop(site);
    return 0;
}
