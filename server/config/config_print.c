/* SPDX-License-Identifier: Apache-2.0 */
/* config_print.c - the effective configuration as INI text (`accordd
 * --check-config` and `--print-config --config FILE`): every key with the
 * value accordd uses, defaults included, in a form that reads back to the
 * same configuration.  Keys that are not set and have no default (the
 * HTTPS files, [signing], [auth], the optional [launch] strings) are left
 * out, as a file without them would be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/sql/dbname.h"
#include "../../lib/common/log.h"
#include "../../lib/sql/sql.h"
#include "config_internal.h"

static void print_server(const struct acc_config *c, FILE *out)
{
    bool v6 = strchr(c->listen_host, ':') != NULL;
    fprintf(out, "[server]\nlisten = %s%s%s:%u\n", v6 ? "[" : "", c->listen_host, v6 ? "]" : "",
            c->listen_port);
    cfg_keys_print(c, "server", out);
    fprintf(out, "log_level = %s\n", acc_log_level_name(c->log_level));
    acc_conf_print_str(out, "names", c->server_names);
    acc_conf_print_str(out, "certificate", c->tls_certificate);
    acc_conf_print_str(out, "key", c->tls_key);

    /* a URL without its password (nor its secret parameters) */
    char *shown = acc_db_shown(c->db_path);
    fprintf(out, "\n[database]\n%s = %s\n", acc_sql_is_url(c->db_path) ? "url" : "path",
            shown ? shown : "?");
    free(shown);
    cfg_keys_print(c, "database", out);
    if (c->retain)
        acc_conf_print_duration(out, "retain", c->retain);
    else
        fputs("retain = forever\n", out);
    if (c->sign_key || c->sign_cert) {
        fputs("\n[signing]\n", out);
        acc_conf_print_str(out, "key", c->sign_key);
        acc_conf_print_str(out, "certificate", c->sign_cert);
    }
}

static void print_negotiation(const struct acc_config *c, FILE *out)
{
    fprintf(out, "\n[negotiation]\nstrategy = %s\n", acc_strategy_name(c->strategy));
    if (c->policy.id == ACC_POLICY_FCM && c->policy.max_clusters)
        fprintf(out, "policy = fcm-%zu\n", c->policy.max_clusters);
    else
        fprintf(out, "policy = %s\n", acc_policy_name(c->policy.id));
    cfg_keys_print(c, "negotiation", out);

    const struct acc_policy_opts *o = &c->policy_options;
    fputs("\n[policy]\n", out);
    for (size_t i = 0; i < c->n_latencies; i++)
        fprintf(out, "latency = %s %s %.15g\n", c->latencies[i].a, c->latencies[i].b,
                c->latencies[i].value);
    fprintf(out, "max_clusters = %zu\nca_average = %s\ntiebreak = %s\nseed = %llu\n",
            o->max_clusters, o->ca_avg == ACC_CA_AVG_IDLE ? "idle" : "all",
            o->tiebreak == ACC_TIE_RANDOM ? "random" : "lowest",
            (unsigned long long)c->policy_seed);
}

static void print_launch(const struct acc_launch_cfg *l, FILE *out)
{
    fprintf(out, "\n[launch]\nenabled = %s\n", l->enabled ? "yes" : "no");
    acc_conf_print_str(out, "mpiexec", l->mpiexec);
    acc_conf_print_str(out, "launcher", l->launcher);
    acc_conf_print_str(out, "launcher_exec", l->launcher_exec);
    acc_conf_print_str(out, "localhost", l->localhost);
    if (l->control_port_min)
        fprintf(out, "control_ports = %u:%u\n", l->control_port_min, l->control_port_max);
    acc_conf_print_duration(out, "proxy_timeout", l->proxy_timeout);
    acc_conf_print_str(out, "directory", l->directory);
    acc_conf_print_str(out, "path", l->path);
    acc_conf_print_str(out, "account", l->account);
    for (size_t i = 0; i < l->n_env; i++)
        fprintf(out, "env = %s=%s\n", l->env[i].key, l->env[i].value);
    fprintf(out, "output_limit = %zu\n", l->output_limit);
    acc_conf_print_duration(out, "grace", l->grace);
    fprintf(out, "router_port = %u\n", l->router_port);
}

void acc_config_print(const struct acc_config *c, FILE *out)
{
    fputs("# accordd's effective configuration: every key with the value it uses.\n\n", out);
    print_server(c, out);
    print_negotiation(c, out);
    cfg_quota_print(c, out);
    if (c->tokens_file || c->client_ca || c->client_certificates_file) {
        fputs("\n[auth]\n", out);
        acc_conf_print_str(out, "tokens", c->tokens_file);
        acc_conf_print_str(out, "client_ca", c->client_ca);
        acc_conf_print_str(out, "client_certificates", c->client_certificates_file);
    }
    cfg_issuer_print(c, out);
    print_launch(&c->launch, out);
    cfg_accounts_print(c, out);
    cfg_ui_print(c, out);
    acc_resources_cfg_print(&c->res, out);
}
