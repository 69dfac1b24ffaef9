/* SPDX-License-Identifier: Apache-2.0 */
/* site_config.c - accord-site's configuration file (INI, read with inih):
 * [daemon], [peer NAME], and the [site NAME], [network NAME] and [link NAME]
 * sections, which resources/ reads exactly as for accordd. */
#include "site.h"

#include "site_internal.h"

#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/common/conf.h"
#include "../lib/common/conf_report.h"
#include "../lib/identity/mapfile.h"
#include "../lib/sql/dbname.h"
#include "../lib/common/log.h"
#include "../lib/common/strutil.h"
#include "../lib/common/timefmt.h"

struct parse {
    struct acc_site_config *c;
    struct acc_conf_report rep;
};

#define bad(p, ...) acc_conf_report_bad(&(p)->rep, __VA_ARGS__)

static int set_str(struct parse *p, const char *section, const char *k, char **dst, const char *v)
{
    if (!*v)
        return bad(p, section, "%s is empty", k);
    return acc_conf_set_str(dst, v);
}

static int daemon_key(struct parse *p, const char *k, const char *v)
{
    struct acc_site_config *c = p->c;
    struct acc_error e;
    int64_t n;
    if (strcmp(k, "name") == 0) {
        if (!acc_name_valid(v, 63))
            return bad(p, "daemon", "name '%s' is not a valid name (letters, digits, . _ -)", v);
        return set_str(p, "daemon", k, &c->name, v);
    }
    if (strcmp(k, "listen") == 0) {
        if (acc_conf_listen(v, &c->listen_host, &c->listen_port, &e))
            return bad(p, "daemon", "%s", e.msg);
        return 1;
    }
    if (strcmp(k, "database") == 0) {
        if (acc_conf_db_path(&c->db_path, v, &e) || site_store_check(v, &e))
            return bad(p, "daemon", "%s", e.msg);
        return 1;
    }
    if (strcmp(k, "access_log") == 0) {
        if (acc_parse_bool(v, &c->access_log, &e))
            return bad(p, "daemon", "access_log: %s", e.msg);
        return 1;
    }
    if (strcmp(k, "durable") == 0) {
        if (acc_parse_bool(v, &c->durable, &e))
            return bad(p, "daemon", "durable: %s", e.msg);
        return 1;
    }
    if (strcmp(k, "certificate") == 0)
        return set_str(p, "daemon", k, &c->certificate, v);
    if (strcmp(k, "key") == 0)
        return set_str(p, "daemon", k, &c->key, v);
    if (strcmp(k, "client_ca") == 0)
        return set_str(p, "daemon", k, &c->client_ca, v);
    if (strcmp(k, "job_user") == 0)
        return set_str(p, "daemon", k, &c->job_user, v);
    if (strcmp(k, "mapfile") == 0)
        return set_str(p, "daemon", k, &c->mapfile, v);
    if (strcmp(k, "identity") == 0) {
        if (strcmp(v, "broker") != 0 && strcmp(v, "token") != 0)
            return bad(p, "daemon",
                       "identity is broker (the peer's word for whom a request is for) or token "
                       "(the user's own token)");
        c->identity_token = strcmp(v, "token") == 0;
        return 1;
    }
    if (strcmp(k, "hydra_pmi_proxy") == 0) {
        if (v[0] != '/')
            return bad(p, "daemon", "hydra_pmi_proxy must be an absolute path");
        return set_str(p, "daemon", k, &c->hydra_pmi_proxy, v);
    }
    if (strcmp(k, "control_networks") == 0)
        return set_str(p, "daemon", k, &c->control_networks, v);
    if (strcmp(k, "log_level") == 0) {
        if (!acc_log_parse_level(v, &c->log_level))
            return bad(p, "daemon", "log_level is error, warn, info or debug");
        return 1;
    }
    const struct {
        const char *key;
        int64_t max;
        unsigned *to;
        bool seconds; /* seconds or an ISO 8601 duration, as accordd's timeouts */
    } numbers[] = {
        {"threads", 64, &c->threads, false},
        {"max_connections", 100000, &c->max_connections, false},
        {"pending_connections", 100000, &c->pending_connections, false},
        {"header_timeout", 3600, &c->header_timeout, true},
        {"timeout", 86400, &c->timeout, true},
        {"request_timeout", 86400, &c->request_timeout, true},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (strcmp(k, numbers[i].key) != 0)
            continue;
        if (numbers[i].seconds ? acc_conf_seconds(v, 1, numbers[i].max, &n, &e)
                               : acc_parse_i64(v, 1, numbers[i].max, &n, &e))
            return bad(p, "daemon", "%s: %s", k, e.msg);
        *numbers[i].to = (unsigned)n;
        return 1;
    }
    return bad(
        p, "daemon",
        "unknown key '%s' (name, listen, database, durable, certificate, key, client_ca, "
        "job_user, mapfile, identity, hydra_pmi_proxy, control_networks, threads, max_connections, "
        "pending_connections, header_timeout, timeout, request_timeout, log_level, "
        "access_log)",
        k);
}

static struct acc_site_peer_cfg *peer_entry(struct acc_site_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_peers; i++) {
        if (strcmp(c->peers[i].name, name) == 0)
            return &c->peers[i];
    }
    if (c->n_peers >= 1024)
        return NULL;
    struct acc_site_peer_cfg *v = realloc(c->peers, (c->n_peers + 1) * sizeof *v);
    if (!v)
        return NULL;
    c->peers = v;
    struct acc_site_peer_cfg *e = &v[c->n_peers];
    *e = (struct acc_site_peer_cfg){
        .max_nodes = 8,
        .max_bandwidth = 1000,
        .max_duration = 43200,
        .max_advance = 2592000,
        .max_reservations = 256,
        .connections = 16,
    };
    e->name = strdup(name);
    if (!e->name)
        return NULL;
    c->n_peers++;
    return e;
}

static bool fingerprint_ok(const char *v)
{
    /* SHA256: then 32 bytes as XX joined by ':' */
    if (strncmp(v, "SHA256:", 7) != 0 || strlen(v) != 7 + 32 * 3 - 1)
        return false;
    for (size_t i = 7; v[i]; i++) {
        bool colon = (i - 7) % 3 == 2;
        if (colon ? v[i] != ':' : !strchr("0123456789ABCDEF", v[i]))
            return false;
    }
    return true;
}

static int peer_key(struct parse *p, const char *section, const char *name, const char *k,
                    const char *v)
{
    if (!acc_name_valid(name, 63))
        return bad(p, section, "'%s' is not a valid name (letters, digits, . _ -)", name);
    struct acc_site_peer_cfg *e = peer_entry(p->c, name);
    if (!e)
        return p->c->n_peers >= 1024 ? bad(p, section, "more than 1024 peers") : 0;
    struct acc_error err;
    if (strcmp(k, "subject") == 0)
        return set_str(p, section, k, &e->subject, v);
    if (strcmp(k, "fingerprint") == 0) {
        if (!fingerprint_ok(v))
            return bad(p, section,
                       "fingerprint is SHA256: and 32 upper-case hex bytes joined by ':' "
                       "(openssl x509 -noout -fingerprint -sha256)");
        return set_str(p, section, k, &e->fingerprint, v);
    }
    static const struct {
        const char *key;
        bool seconds;
        int64_t max;
        size_t off;
    } limits[] = {
        {"max_nodes", false, 10000000, offsetof(struct acc_site_peer_cfg, max_nodes)},
        {"max_bandwidth", false, 100000000, offsetof(struct acc_site_peer_cfg, max_bandwidth)},
        {"max_duration", true, 10LL * 366 * 86400,
         offsetof(struct acc_site_peer_cfg, max_duration)},
        {"max_advance", true, 10LL * 366 * 86400, offsetof(struct acc_site_peer_cfg, max_advance)},
        {"max_reservations", false, 1000000, offsetof(struct acc_site_peer_cfg, max_reservations)},
    };
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        if (strcmp(k, limits[i].key) != 0)
            continue;
        int64_t *dst = (int64_t *)((char *)e + limits[i].off);
        acc_err rc = limits[i].seconds ? acc_conf_seconds(v, 1, limits[i].max, dst, &err)
                                       : acc_parse_i64(v, 1, limits[i].max, dst, &err);
        if (rc)
            return bad(p, section, "%s: %s", k, err.msg);
        return 1;
    }
    if (strcmp(k, "admin") == 0) {
        if (acc_parse_bool(v, &e->admin, &err))
            return bad(p, section, "admin: %s", err.msg);
        return 1;
    }
    if (strcmp(k, "metrics_only") == 0) {
        if (acc_parse_bool(v, &e->metrics_only, &err))
            return bad(p, section, "metrics_only: %s", err.msg);
        return 1;
    }
    if (strcmp(k, "connections") == 0) {
        int64_t n;
        if (acc_parse_i64(v, 1, 100000, &n, &err))
            return bad(p, section, "connections: %s", err.msg);
        e->connections = (unsigned)n;
        return 1;
    }
    return bad(p, section,
               "unknown key '%s' (subject, fingerprint, max_nodes, max_bandwidth, max_duration, "
               "max_advance, max_reservations, connections, admin, metrics_only)",
               k);
}

static int handler(void *user, const char *section, const char *k, const char *v)
{
    struct parse *p = user;
    acc_conf_report_key(&p->rep, section, k);
    if (!*section)
        return acc_conf_report_bad(&p->rep, section, "'%s' comes before any [section]", k);
    if (strcmp(section, "daemon") == 0)
        return daemon_key(p, k, v);
    if (strncmp(section, "peer ", 5) == 0) {
        const char *name = section + 5;
        while (*name == ' ')
            name++;
        return peer_key(p, section, name, k, v);
    }
    if (strncmp(section, "issuer ", 7) == 0) {
        const char *name = section + 7;
        while (*name == ' ')
            name++;
        return site_issuer_key(&p->rep, p->c, section, name, k, v);
    }
    struct acc_error e;
    acc_err rc = acc_resources_cfg_key(&p->c->res, section, k, v, &e);
    if (rc == ACC_ERR_NOT_FOUND)
        return acc_conf_report_section_bad(&p->rep, section,
                                           "unknown section (daemon, peer NAME, issuer NAME, site "
                                           "NAME, network NAME or link NAME)");
    return acc_conf_report_take(&p->rep, rc, &e);
}

static void defaults(struct acc_site_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen_port = 8443;
    c->durable = true;
    c->threads = 4;
    /* Connections cost a socket each (epoll), and anyone who reaches the
     * port can open some before its certificate is checked: room for many
     * more than the admitted peers need, so that the bound per address
     * rather than the total is what hostile ones hit. */
    c->max_connections = 2048;
    c->pending_connections = 16; /* an accordd's burst of handshakes: its pool */
    c->header_timeout = 5;
    c->timeout = 60;
    /* A peer's request (a protocol document of at most a few hundred KiB)
     * arrives in far less; a body trickled in to hold a connection does
     * not. */
    c->request_timeout = 30;
    c->log_level = ACC_LOG_INFO;
    c->access_log = true;
}

/* The checks after reading, every problem into r; the fixed defaults. */
static void check(struct acc_site_config *c, struct acc_conf_report *r)
{
    if (!c->name)
        acc_conf_report_after(r, "daemon", "name", "needs name = (the site's name)");
    if (!c->certificate || !c->key)
        acc_conf_report_after(r, "daemon", c->certificate ? "key" : "certificate",
                              "needs certificate = and key = (the daemon's server "
                              "certificate and its key, PEM files)");
    if (!c->client_ca)
        acc_conf_report_after(r, "daemon", "client_ca",
                              "needs client_ca = (the CA of the admitted Accord "
                              "instances' certificates)");
    if (c->res.n_sites == 0 && c->res.n_networks == 0)
        acc_conf_report_after(r, NULL, NULL,
                              "no [site NAME] or [network NAME] section: nothing to serve");
    for (size_t i = 0; i < c->n_peers; i++) {
        const struct acc_site_peer_cfg *pe = &c->peers[i];
        char section[80];
        snprintf(section, sizeof section, "peer %s", pe->name);
        if (!pe->subject && !pe->fingerprint)
            acc_conf_report_after(r, section, "subject",
                                  "needs subject = (its certificate's subject, such as "
                                  "CN=accord-main) or fingerprint = SHA256:...");
    }
    acc_resources_cfg_check_all(&c->res, true, r);
    if (c->mapfile) {
        /* every line and every account it names, as the start reads it */
        struct acc_mapfile *m = NULL;
        struct acc_error e;
        if (acc_mapfile_load(c->mapfile, true, &m, &e))
            acc_conf_report_after(r, "daemon", "mapfile", "%s", e.msg);
        acc_mapfile_free(m);
    } else if (c->identity_token) {
        acc_conf_report_after(r, "daemon", "identity",
                              "token needs mapfile = (the accounts the users map to)");
    }
    site_issuer_check(c, r);
    if ((!c->listen_host && !(c->listen_host = strdup("127.0.0.1"))) ||
        (!c->db_path && !(c->db_path = strdup("accord-site.db"))) ||
        (!c->job_user && !(c->job_user = strdup("nobody"))) ||
        (!c->hydra_pmi_proxy && !(c->hydra_pmi_proxy = strdup("/usr/bin/hydra_pmi_proxy"))))
        r->nomem = true;
}

/* Reads the file or text of p->rep into c with every problem in p->rep. */
static void read_all(struct acc_site_config *c, struct parse *p, const char *origin)
{
    int line = ini_parse_stream(acc_conf_report_read, &p->rep, handler, p);
    acc_conf_report_parsed(&p->rep, line);
    if (!(c->origin = strdup(origin)))
        p->rep.nomem = true;
    check(c, &p->rep);
}

static acc_err load(FILE *f, const char *text, const char *origin, struct acc_site_config *out,
                    struct acc_error *err)
{
    defaults(out);
    struct parse p = {.c = out};
    acc_conf_report_init(&p.rep, f, text);
    read_all(out, &p, origin);
    acc_err rc = acc_conf_report_first(&p.rep, origin, true, err);
    acc_conf_report_release(&p.rep);
    if (rc)
        acc_site_config_release(out);
    else if (out->n_peers == 0)
        acc_log_warn("%s: no [peer NAME] section: every peer will be refused", origin);
    return rc;
}

acc_err acc_site_config_load_string(const char *text, const char *origin,
                                    struct acc_site_config *out, struct acc_error *err)
{
    return load(NULL, text, origin, out, err);
}

acc_err acc_site_config_load_file(const char *path, struct acc_site_config *out,
                                  struct acc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        defaults(out);
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot open it", path);
    }
    acc_err rc = load(f, NULL, path, out, err);
    fclose(f);
    return rc;
}

acc_err acc_site_config_check(const char *path, struct acc_site_config *out,
                              struct acc_conf_report *r)
{
    defaults(out);
    FILE *f = fopen(path, "r");
    struct parse p = {.c = out};
    acc_conf_report_init(&p.rep, f, NULL);
    if (!f) {
        acc_conf_report_after(&p.rep, NULL, NULL, "cannot open it: %s", strerror(errno));
    } else {
        read_all(out, &p, path);
        /* Read when accord-site starts: a missing file is found now. */
        const struct {
            const char *key, *path;
        } files[] = {
            {"certificate", out->certificate}, {"key", out->key}, {"client_ca", out->client_ca}};
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            if (files[i].path && access(files[i].path, R_OK) != 0)
                acc_conf_report_after(&p.rep, "daemon", files[i].key, "%s: cannot read %s: %s",
                                      files[i].key, files[i].path, strerror(errno));
        }
        /* What opening the adapters would refuse, without opening them. */
        struct acc_resources_env env = {.db_path = out->db_path, .durable = out->durable};
        acc_resources_check_adapters(&out->res, &env, &p.rep);
        fclose(f);
    }
    p.rep.file = NULL;
    *r = p.rep;
    return acc_conf_report_failed(r) ? ACC_ERR_CONFIG : ACC_OK;
}

void acc_site_config_print(const struct acc_site_config *c, FILE *out)
{
    bool v6 = c->listen_host && strchr(c->listen_host, ':');
    fputs("# accord-site's effective configuration: every key with the value it uses.\n\n"
          "[daemon]\n",
          out);
    acc_conf_print_str(out, "name", c->name);
    if (c->listen_host)
        fprintf(out, "listen = %s%s%s:%u\n", v6 ? "[" : "", c->listen_host, v6 ? "]" : "",
                c->listen_port);
    if (c->db_path) {
        char *db = acc_db_shown(c->db_path); /* a URL without its password */
        acc_conf_print_str(out, "database", db ? db : "?");
        free(db);
    }
    fprintf(out, "durable = %s\n", c->durable ? "yes" : "no");
    acc_conf_print_str(out, "certificate", c->certificate);
    acc_conf_print_str(out, "key", c->key);
    acc_conf_print_str(out, "client_ca", c->client_ca);
    acc_conf_print_str(out, "job_user", c->job_user);
    acc_conf_print_str(out, "mapfile", c->mapfile);
    fprintf(out, "identity = %s\n", c->identity_token ? "token" : "broker");
    acc_conf_print_str(out, "hydra_pmi_proxy", c->hydra_pmi_proxy);
    acc_conf_print_str(out, "control_networks", c->control_networks);
    fprintf(out, "threads = %u\nmax_connections = %u\npending_connections = %u\n", c->threads,
            c->max_connections, c->pending_connections);
    acc_conf_print_duration(out, "header_timeout", c->header_timeout);
    acc_conf_print_duration(out, "timeout", c->timeout);
    acc_conf_print_duration(out, "request_timeout", c->request_timeout);
    fprintf(out, "log_level = %s\naccess_log = %s\n", acc_log_level_name(c->log_level),
            c->access_log ? "yes" : "no");
    for (size_t i = 0; i < c->n_peers; i++) {
        const struct acc_site_peer_cfg *pe = &c->peers[i];
        fprintf(out, "\n[peer %s]\n", pe->name);
        acc_conf_print_str(out, "subject", pe->subject);
        acc_conf_print_str(out, "fingerprint", pe->fingerprint);
        fprintf(out, "max_nodes = %lld\nmax_bandwidth = %lld\n", (long long)pe->max_nodes,
                (long long)pe->max_bandwidth);
        acc_conf_print_duration(out, "max_duration", pe->max_duration);
        acc_conf_print_duration(out, "max_advance", pe->max_advance);
        fprintf(out, "max_reservations = %lld\nconnections = %u\nadmin = %s\nmetrics_only = %s\n",
                (long long)pe->max_reservations, pe->connections, pe->admin ? "yes" : "no",
                pe->metrics_only ? "yes" : "no");
    }
    site_issuer_print(c, out);
    acc_resources_cfg_print(&c->res, out);
}

acc_err acc_site_config_set_listen(struct acc_site_config *c, const char *hostport,
                                   struct acc_error *err)
{
    return acc_conf_listen(hostport, &c->listen_host, &c->listen_port, err);
}

acc_err acc_site_config_set_db(struct acc_site_config *c, const char *path, struct acc_error *err)
{
    acc_err rc = site_store_check(path, err);
    return rc ? rc : acc_conf_db_path(&c->db_path, path, err);
}

void acc_site_config_release(struct acc_site_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_peers; i++) {
        free(c->peers[i].name);
        free(c->peers[i].subject);
        free(c->peers[i].fingerprint);
    }
    free(c->peers);
    site_issuers_free(c->issuers, c->n_issuers);
    acc_resources_cfg_release(&c->res);
    free(c->origin);
    free(c->name);
    free(c->listen_host);
    free(c->db_path);
    free(c->certificate);
    free(c->key);
    free(c->client_ca);
    free(c->job_user);
    free(c->mapfile);
    free(c->hydra_pmi_proxy);
    free(c->control_networks);
    memset(c, 0, sizeof *c);
}
