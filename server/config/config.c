/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - loading the configuration: defaults, the INI text read with
 * inih and each section handed to its reader, the fixed defaults and the
 * checks after reading; the embedded testbed; command-line overrides;
 * release.  config_internal.h says which file reads what. */
#include "../../lib/identity/mapfile.h"
#include "config.h"

#include "config_internal.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/sql/dbname.h"
#include "../../lib/sql/sql.h"

static const char embedded_text[] =
    "# The embedded testbed: three simulated sites shaped like the VIOLA testbed,\n"
    "# a full mesh of 10 Gbit/s links, and a deterministic background load so that\n"
    "# previews have gaps.  Print it with `accordd --print-config` and edit a copy\n"
    "# to describe real sites.\n"
    "\n"
    "[server]\n"
    "listen = 127.0.0.1:8080\n"
    "\n"
    "[database]\n"
    "path = accord.db\n"
    "durable = yes\n"
    "\n"
    "[negotiation]\n"
    "strategy = intersect\n"
    "max_rounds = 32\n"
    "horizon = P14D\n"
    "lead_time = PT5S\n"
    "adapter_timeout = PT15S\n"
    "\n"
    "# What one user may take (without [auth] every request is one user's):\n"
    "# the nodes, bandwidth and duration of one agreement, how far ahead it\n"
    "# may start, and how many agreements and quotes may be open at once.\n"
    "# These are the defaults; [quota USER] gives a user of [auth] their own.\n"
    "[quota]\n"
    "max_nodes = 192\n"
    "max_bandwidth = 20000\n"
    "max_duration = P7D\n"
    "max_advance = P1826D\n"
    "max_agreements = 256\n"
    "max_quotes = 20\n"
    "\n"
    "# Meta-jobs start here at their agreed time, with MPICH's mpiexec.hydra and\n"
    "# the fork launcher: every site's hosts (SITE-n1, SITE-n2, ...) are this\n"
    "# machine.  Off unless a configuration turns it on.  Jobs run as accordd's\n"
    "# own user; an accordd started as root starts none until `account = NAME`\n"
    "# here (or [accounts], with [auth]) says whom they run as: never root.\n"
    "# The simulated sites' fault controls (POST /adapters/NAME/control/OP)\n"
    "# are off; [server] allow_control = yes turns them on for tests.\n"
    "[launch]\n"
    "enabled = yes\n"
    "\n"
    "[site fzj-xd1]\n"
    "adapter = sim-batch\n"
    "nodes = 64\n"
    "load = yes\n"
    "\n"
    "[site caesar]\n"
    "adapter = sim-batch\n"
    "nodes = 128\n"
    "load = yes\n"
    "\n"
    "[site fh-brs]\n"
    "adapter = sim-batch\n"
    "nodes = 32\n"
    "load = yes\n"
    "\n"
    "[network wan]\n"
    "adapter = sim-network\n"
    "load = yes\n"
    "\n"
    "[link fzj-xd1_caesar]\n"
    "sites = fzj-xd1 caesar\n"
    "capacity = 10000\n"
    "network = wan\n"
    "\n"
    "[link fzj-xd1_fh-brs]\n"
    "sites = fzj-xd1 fh-brs\n"
    "capacity = 10000\n"
    "network = wan\n"
    "\n"
    "[link caesar_fh-brs]\n"
    "sites = caesar fh-brs\n"
    "capacity = 10000\n"
    "network = wan\n";

const char *acc_config_embedded_text(void)
{
    return embedded_text;
}

/* ------------------------------------------------------------------ parse */

static int read_key(struct cfg_parse *p, const char *section, const char *k, const char *v)
{
    if (strcmp(section, "auth") == 0)
        return cfg_auth_key(p, k, v);
    if (strcmp(section, "server") == 0)
        return cfg_server_key(p, k, v);
    if (strcmp(section, "database") == 0)
        return cfg_database_key(p, k, v);
    if (strcmp(section, "signing") == 0)
        return cfg_signing_key(p, k, v);
    if (strcmp(section, "negotiation") == 0)
        return cfg_negotiation_key(p, k, v);
    if (strcmp(section, "launch") == 0)
        return cfg_launch_key(p, k, v);
    if (strcmp(section, "policy") == 0)
        return cfg_policy_key(p, k, v);
    if (strcmp(section, "accounts") == 0)
        return cfg_accounts_key(p, k, v);
    if (strcmp(section, "ui") == 0)
        return cfg_ui_key(p, k, v);
    if (strcmp(section, "quota") == 0)
        return cfg_quota_key(p, NULL, k, v);
    if (strncmp(section, "quota ", 6) == 0)
        return cfg_quota_key(p, section + 6, k, v);
    if (strncmp(section, "issuer ", 7) == 0)
        return cfg_issuer_key(p, section + 7, k, v);
    struct acc_error e;
    acc_err rc = acc_resources_cfg_key(&p->c->res, section, k, v, &e);
    if (rc != ACC_ERR_NOT_FOUND)
        return acc_conf_report_take(&p->rep, rc, &e);
    return acc_conf_report_section_bad(
        &p->rep, section,
        "unknown section (server, database, signing, negotiation, policy, quota, quota USER, "
        "launch, accounts, auth, issuer NAME, ui, site NAME, network NAME or link NAME)");
}

static int handler(void *user, const char *section, const char *k, const char *v)
{
    struct cfg_parse *p = user;
    acc_conf_report_key(&p->rep, section, k);
    if (!*section)
        return acc_conf_report_bad(&p->rep, section, "'%s' comes before any [section]", k);
    size_t before = p->rep.n_problems;
    int ok = read_key(p, section, k, v);
    /* A key of accordd's own sections that a reader took but the key list
     * misses: refused, so that the list stays whole (config_keylist.c). */
    bool own = strncmp(section, "site ", 5) != 0 && strncmp(section, "network ", 8) != 0 &&
               strncmp(section, "link ", 5) != 0 && strcmp(section, "accounts") != 0;
    if (ok && own && p->rep.n_problems == before && !cfg_key_listed(section, k))
        return cfg_bad(p, section, "unknown key '%s'", k);
    return ok;
}

/* ---------------------------------------------------------------- load */

static void defaults(struct acc_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen_port = 8080;
    c->max_body = 1024 * 1024;
    c->max_depth = 32;
    c->max_attributes = 64;
    c->max_total_attributes = 20000;
    c->threads = 4;
    c->connection_limit = 4096;
    c->client_connections = 64;
    c->pending_connections = 32;
    c->header_timeout = 5;
    c->timeout = 60;
    c->request_timeout = 30;
    c->max_unsent = (size_t)64 << 20;
    c->client_unsent = (size_t)8 << 20;
    c->max_query = 32;
    c->log_level = ACC_LOG_INFO;
    c->access_log = true;
    c->durable = true;
    c->wal_limit = (int64_t)64 << 20;
    c->lease = 10;
    c->clock_warn = 2;
    c->clock_refuse = 30;
    c->max_rejected = 1000;
    c->strategy = ACC_STRATEGY_INTERSECT;
    acc_policy_opts_init(&c->policy, ACC_POLICY_EARLIEST);
    c->policy_candidates = 4;
    acc_policy_opts_init(&c->policy_options, ACC_POLICY_EARLIEST);
    c->max_rounds = 32;
    c->horizon = 14 * 86400;
    c->lead_time = 5;
    c->adapter_timeout = 15;
    c->workers = 32;
    c->adapter_max_calls = 0; /* half the workers */
    c->breaker_failures = 5;
    c->breaker_cooldown = 30;
    c->queue_length = 1024;
    c->max_pending = 256;
    c->max_hold = 600;
    c->quote_options = 3;
    c->max_quotes = 1000;
    cfg_quota_defaults(&c->quota);
    c->launch.enabled = false; /* it runs what offers name: an operator's choice */
    c->launch.output_limit = 1024 * 1024;
    c->launch.grace = 10;
    c->launch.router_port = 33000;
    c->launch.proxy_timeout = 30;
}

/* Every site, network and link complete, and they fit together. */
static void cfg_check(const struct acc_config *c, struct acc_conf_report *r)
{
    if (c->res.n_sites == 0)
        acc_conf_report_after(r, NULL, NULL, "no [site NAME] section: nothing to allocate");
    acc_resources_cfg_check_all(&c->res, false, r);
}

/* Reads the file or text of p->rep into c, then the fixed defaults and the
 * checks across sections: every problem is recorded in p->rep. */
static void read_all(struct acc_config *c, struct cfg_parse *p, const char *origin)
{
    int line = ini_parse_stream(acc_conf_report_read, &p->rep, handler, p);
    acc_conf_report_parsed(&p->rep, line);
    if ((!c->listen_host && !(c->listen_host = strdup("127.0.0.1"))) ||
        (!c->db_path && !(c->db_path = strdup("accord.db"))) || !(c->origin = strdup(origin)) ||
        (!c->launch.mpiexec && !(c->launch.mpiexec = strdup("mpiexec.hydra"))) ||
        (!c->launch.launcher && !(c->launch.launcher = strdup("fork"))))
        p->rep.nomem = true;
    cfg_check(c, &p->rep);
    /* Several instances sign as one: the pair is the operator's, the same
     * on each (there is no directory beside a URL to make one in). */
    if (c->db_path && !acc_sql_location_can(c->db_path, ACC_SQL_CAP_FILE) &&
        strcmp(c->db_path, ":memory:") != 0 && (!c->sign_key || !c->sign_cert))
        acc_conf_report_after(&p->rep, "database", "url",
                              "a PostgreSQL database needs [signing] key and certificate "
                              "(the same pair on every accordd sharing it)");
    if (c->clock_refuse < c->clock_warn)
        acc_conf_report_after(&p->rep, "database", "clock_refuse",
                              "clock_refuse (%lld s) is less than clock_warn (%lld s): a clock "
                              "is warned of before it is refused",
                              (long long)c->clock_refuse, (long long)c->clock_warn);
    cfg_auth_check(c, &p->rep);
    cfg_policy_finish(c, &p->rep);
    cfg_issuer_finish(c, &p->rep);
    cfg_quota_finish(c, &p->rep);
    cfg_accounts_finish(c, &p->rep);
    cfg_ui_finish(c, &p->rep);
}

/* A normal load: the first problem into err, and nothing kept. */
static acc_err load(FILE *f, const char *text, const char *origin, struct acc_config *out,
                    struct acc_error *err)
{
    defaults(out);
    struct cfg_parse p = {.c = out};
    acc_conf_report_init(&p.rep, f, text);
    read_all(out, &p, origin);
    acc_err rc = acc_conf_report_first(&p.rep, origin, false, err);
    acc_conf_report_release(&p.rep);
    if (rc)
        acc_config_release(out);
    return rc;
}

acc_err acc_config_load_string(const char *text, const char *origin, struct acc_config *out,
                               struct acc_error *err)
{
    return load(NULL, text, origin, out, err);
}

acc_err acc_config_load_file(const char *path, struct acc_config *out, struct acc_error *err)
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

acc_err acc_config_embedded(struct acc_config *out, struct acc_error *err)
{
    acc_err rc = acc_config_load_string(embedded_text, "embedded testbed", out, err);
    if (!rc)
        out->embedded = true;
    return rc;
}

acc_err acc_config_check(const char *path, struct acc_config *out, struct acc_conf_report *r)
{
    defaults(out);
    FILE *f = path ? fopen(path, "r") : NULL;
    struct cfg_parse p = {.c = out};
    acc_conf_report_init(&p.rep, f, path ? NULL : embedded_text);
    if (path && !f) {
        acc_conf_report_after(&p.rep, NULL, NULL, "cannot open it: %s", strerror(errno));
    } else {
        read_all(out, &p, path ? path : "embedded testbed");
        cfg_auth_files(out, &p.rep);
        struct acc_resources_env env = {.db_path = out->db_path, .durable = out->durable};
        acc_resources_check_adapters(&out->res, &env, &p.rep);
        out->embedded = !path;
    }
    if (f)
        fclose(f);
    p.rep.file = NULL;
    p.rep.text = NULL;
    *r = p.rep;
    return acc_conf_report_failed(r) ? ACC_ERR_CONFIG : ACC_OK;
}

acc_err acc_config_set_listen(struct acc_config *c, const char *hostport, struct acc_error *err)
{
    return acc_conf_listen(hostport, &c->listen_host, &c->listen_port, err);
}

acc_err acc_config_set_db(struct acc_config *c, const char *path, struct acc_error *err)
{
    if (path && strcmp(path, ":memory:") == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s", cfg_no_memory);
    return acc_conf_db_path(&c->db_path, path, err);
}

void acc_config_release(struct acc_config *c)
{
    if (!c)
        return;
    cfg_live_release(c);
    acc_resources_cfg_release(&c->res);
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].name);
        free(c->users[i].token);
        free(c->users[i].subject);
        free(c->users[i].fingerprint);
    }
    free(c->users);
    free(c->tokens_file);
    free(c->client_certificates_file);
    cfg_policy_release(c);
    cfg_quota_release(c);
    cfg_issuer_release(c);
    free(c->launch.mpiexec);
    free(c->launch.launcher);
    free(c->launch.launcher_exec);
    free(c->launch.localhost);
    free(c->launch.directory);
    free(c->launch.path);
    acc_kv_free(c->launch.env, c->launch.n_env);
    free(c->launch.account);
    acc_kv_free(c->accounts, c->n_accounts);
    cfg_ui_release(c);
    free(c->accounts_mapfile);
    acc_mapfile_free(c->accounts_map);
    free(c->listen_host);
    free(c->server_names);
    free(c->db_path);
    free(c->sign_key);
    free(c->sign_cert);
    free(c->tls_certificate);
    free(c->tls_key);
    free(c->client_ca);
    free(c->origin);
    memset(c, 0, sizeof *c);
}

const struct acc_site_cfg *acc_config_site(const struct acc_config *c, const char *name)
{
    return acc_resources_site(&c->res, name);
}

const char *acc_config_host_address(const struct acc_site_cfg *s, const char *host)
{
    return acc_resources_host_address(s, host);
}

const struct acc_link_cfg *acc_config_link_between(const struct acc_config *c, const char *a,
                                                   const char *b)
{
    return acc_resources_link_between(&c->res, a, b);
}
