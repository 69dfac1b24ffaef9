/* SPDX-License-Identifier: Apache-2.0 */
/* config_keys.c - the keys of [server], [database], [negotiation], [auth]
 * and [launch].
 *
 * Numbers, durations and yes/no values are read from a table per section
 * ({key, kind, bounds, field}); the keys that need more (listen, log_level,
 * strategy, path, tokens, the strings and env of [launch]) have code of
 * their own. */
#include "config_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/sql/dbname.h"
#include "../../lib/common/hostname.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/sql/sql.h"

static bool duration_ok(const char *v, int64_t min, int64_t *out)
{
    int64_t d;
    if (acc_duration_parse(v, &d, NULL) || d < min)
        return false;
    *out = d;
    return true;
}

/* --------------------------------------------------------- keys by table */

enum key_kind {
    KEY_UNSIGNED,          /* a whole number within [min, max], into unsigned */
    KEY_SIZE,              /* ... into size_t */
    KEY_INT64,             /* ... into int64_t */
    KEY_DURATION,          /* a duration of at least min seconds, into int64_t */
    KEY_DURATION_UNSIGNED, /* ... into unsigned */
    KEY_BOOL,              /* yes or no, into bool */
};

struct key {
    const char *name;
    enum key_kind kind;
    int64_t min, max; /* durations in seconds */
    size_t offset;    /* of the field in struct acc_config */
    const char *what; /* durations: what the value must be, for the message */
};

#define AT(field) offsetof(struct acc_config, field)

static const struct key server_keys[] = {
    {"max_body", KEY_SIZE, 1024, 64 << 20, AT(max_body), NULL},
    {"max_depth", KEY_UNSIGNED, 8, 256, AT(max_depth), NULL},
    {"max_attributes", KEY_UNSIGNED, 8, 4096, AT(max_attributes), NULL},
    {"max_total_attributes", KEY_UNSIGNED, 64, 1000000, AT(max_total_attributes), NULL},
    {"connection_limit", KEY_UNSIGNED, 1, 100000, AT(connection_limit), NULL},
    {"threads", KEY_UNSIGNED, 1, 64, AT(threads), NULL},
    {"client_connections", KEY_UNSIGNED, 1, 100000, AT(client_connections), NULL},
    {"pending_connections", KEY_UNSIGNED, 1, 100000, AT(pending_connections), NULL},
    {"header_timeout", KEY_DURATION_UNSIGNED, 1, 3600, AT(header_timeout),
     "a positive duration such as PT5S"},
    {"max_query", KEY_UNSIGNED, 1, 256, AT(max_query), NULL},
    {"max_unsent", KEY_SIZE, 64 << 10, (int64_t)1 << 40, AT(max_unsent), NULL},
    {"client_unsent", KEY_SIZE, 64 << 10, (int64_t)1 << 40, AT(client_unsent), NULL},
    {"timeout", KEY_DURATION_UNSIGNED, 1, 86400, AT(timeout), "a positive duration such as PT60S"},
    {"request_timeout", KEY_DURATION_UNSIGNED, 1, 86400, AT(request_timeout),
     "a positive duration such as PT30S"},
    {"allow_control", KEY_BOOL, 0, 0, AT(allow_control), NULL},
    {"access_log", KEY_BOOL, 0, 0, AT(access_log), NULL},
    {"anonymous_backup", KEY_BOOL, 0, 0, AT(anonymous_backup), NULL},
    {NULL, KEY_BOOL, 0, 0, 0, NULL},
};

static const struct key database_keys[] = {
    {"durable", KEY_BOOL, 0, 0, AT(durable), NULL},
    {"wal_limit", KEY_INT64, (int64_t)1 << 20, (int64_t)1 << 40, AT(wal_limit), NULL}, /* bytes */
    {"lease", KEY_DURATION, 4, 3600, AT(lease), "a duration of PT4S to PT1H such as PT10S"},
    {"clock_warn", KEY_DURATION, 1, 3600, AT(clock_warn),
     "a duration of PT1S to PT1H such as PT2S"},
    {"clock_refuse", KEY_DURATION, 1, 86400, AT(clock_refuse),
     "a duration of PT1S to P1D such as PT30S"},
    {"max_rejected_per_user", KEY_UNSIGNED, 1, 10000000, AT(max_rejected), NULL},
    {NULL, KEY_BOOL, 0, 0, 0, NULL},
};

static const struct key negotiation_keys[] = {
    {"max_rounds", KEY_UNSIGNED, 1, 1000, AT(max_rounds), NULL},
    {"policy_candidates", KEY_UNSIGNED, 1, 32, AT(policy_candidates), NULL},
    {"horizon", KEY_DURATION, 3600, 3660 * 86400, AT(horizon), "a duration of at least PT1H"},
    {"lead_time", KEY_DURATION, 0, 366 * 86400, AT(lead_time), "a duration such as PT5S"},
    {"adapter_timeout", KEY_DURATION, 1, 86400, AT(adapter_timeout), "a duration such as PT15S"},
    {"workers", KEY_UNSIGNED, 1, 1024, AT(workers), NULL},
    {"adapter_max_calls", KEY_UNSIGNED, 0, 1024, AT(adapter_max_calls), NULL},
    {"breaker_failures", KEY_UNSIGNED, 0, 1000, AT(breaker_failures), NULL},
    {"breaker_cooldown", KEY_DURATION, 1, 86400, AT(breaker_cooldown),
     "a positive duration such as PT30S"},
    {"queue_length", KEY_UNSIGNED, 1, 1000000, AT(queue_length), NULL},
    {"max_pending", KEY_UNSIGNED, 0, 1000000, AT(max_pending), NULL},
    {"max_hold", KEY_DURATION, 1, 86400, AT(max_hold), "a duration such as PT10M"},
    {"quote_options", KEY_UNSIGNED, 1, 16, AT(quote_options), NULL},
    {"max_quotes", KEY_UNSIGNED, 1, 1000000, AT(max_quotes), NULL},
    {NULL, KEY_BOOL, 0, 0, 0, NULL},
};

/* Sets key k of the section from its table (ended by a NULL name). */
static int table_key(struct cfg_parse *p, const char *section, const struct key *keys,
                     const char *k, const char *v)
{
    while (keys->name && strcmp(keys->name, k) != 0)
        keys++;
    if (!keys->name)
        return cfg_bad(p, section, "unknown key '%s'", k);
    char *field = (char *)p->c + keys->offset;
    struct acc_error e;
    int64_t n = 0;
    bool b;
    switch (keys->kind) {
    case KEY_BOOL:
        if (acc_parse_bool(v, &b, &e))
            return cfg_bad(p, section, "%s: %s", k, e.msg);
        *(bool *)field = b;
        return 1;
    case KEY_DURATION:
    case KEY_DURATION_UNSIGNED:
        if (!duration_ok(v, keys->min, &n))
            return cfg_bad(p, section, "%s: '%s' is not %s", k, v, keys->what);
        if (n > keys->max) {
            char most[ACC_DURATION_STRLEN];
            acc_duration_format(keys->max, most);
            return cfg_bad(p, section, "%s: '%s' is longer than %s, the most allowed", k, v, most);
        }
        break;
    case KEY_UNSIGNED:
    case KEY_SIZE:
    case KEY_INT64:
        if (acc_parse_i64(v, keys->min, keys->max, &n, &e))
            return cfg_bad(p, section, "%s: %s", k, e.msg);
        break;
    }
    if (keys->kind == KEY_SIZE)
        *(size_t *)field = (size_t)n;
    else if (keys->kind == KEY_INT64 || keys->kind == KEY_DURATION)
        *(int64_t *)field = n;
    else
        *(unsigned *)field = (unsigned)n;
    return 1;
}

void cfg_keys_print(const struct acc_config *c, const char *section, FILE *out)
{
    const struct key *keys = strcmp(section, "server") == 0     ? server_keys
                             : strcmp(section, "database") == 0 ? database_keys
                                                                : negotiation_keys;
    for (; keys->name; keys++) {
        const char *field = (const char *)c + keys->offset;
        switch (keys->kind) {
        case KEY_BOOL:
            fprintf(out, "%s = %s\n", keys->name, *(const bool *)field ? "yes" : "no");
            break;
        case KEY_DURATION:
        case KEY_DURATION_UNSIGNED:
            acc_conf_print_duration(out, keys->name,
                                    keys->kind == KEY_DURATION
                                        ? *(const int64_t *)field
                                        : (int64_t) * (const unsigned *)field);
            break;
        case KEY_UNSIGNED:
            fprintf(out, "%s = %u\n", keys->name, *(const unsigned *)field);
            break;
        case KEY_SIZE:
            fprintf(out, "%s = %zu\n", keys->name, *(const size_t *)field);
            break;
        case KEY_INT64:
            fprintf(out, "%s = %lld\n", keys->name, (long long)*(const int64_t *)field);
            break;
        }
    }
}

/* A value the key refuses: yes/no keys "maybe", durations "soon", numbers
 * one more than their most (an unbounded one: one less than its least). */
static const char *bad_value(const struct key *k, char *buf, size_t size)
{
    if (k->kind == KEY_BOOL)
        return "maybe";
    if (k->kind == KEY_DURATION || k->kind == KEY_DURATION_UNSIGNED)
        return "soon";
    if (k->max < INT64_MAX)
        snprintf(buf, size, "%lld", (long long)k->max + 1);
    else
        snprintf(buf, size, "%lld", (long long)k->min - 1);
    return buf;
}

void cfg_table_keys_each(void (*fn)(const char *section, const char *key, const char *bad,
                                    void *ctx),
                         void *ctx)
{
    static const struct {
        const char *section;
        const struct key *keys;
    } tables[] = {
        {"server", server_keys}, {"database", database_keys}, {"negotiation", negotiation_keys}};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (const struct key *k = tables[t].keys; k->name; k++) {
            char buf[32];
            fn(tables[t].section, k->name, bad_value(k, buf, sizeof buf), ctx);
        }
    }
}

/* ------------------------------------ [server], [database], [negotiation] */

int cfg_server_key(struct cfg_parse *p, const char *k, const char *v)
{
    struct acc_config *c = p->c;
    struct acc_error e;
    if (strcmp(k, "listen") == 0) {
        if (acc_conf_listen(v, &c->listen_host, &c->listen_port, &e))
            return cfg_bad(p, "server", "%s", e.msg);
        return 1;
    }
    if (strcmp(k, "certificate") == 0 || strcmp(k, "key") == 0)
        return cfg_tls_server_key(p, k, v);
    if (strcmp(k, "names") == 0) {
        if (!acc_hostnames_ok(v, &e))
            return cfg_bad(p, "server", "names: %s", e.msg);
        free(c->server_names);
        return acc_conf_set_str(&c->server_names, v);
    }
    if (strcmp(k, "log_level") == 0) {
        if (!acc_log_parse_level(v, &c->log_level))
            return cfg_bad(p, "server", "log_level is error, warn, info or debug");
        return 1;
    }
    return table_key(p, "server", server_keys, k, v);
}

/* SQLite gives each connection an in-memory database of its own, and
 * accordd opens several (the writer, the readers): the readers would see
 * none of the writes. */
const char cfg_no_memory[] = "the database cannot be ':memory:' (accordd's connections, the "
                             "writer and the readers, would each have an empty database of "
                             "its own): give a file";

int cfg_database_key(struct cfg_parse *p, const char *k, const char *v)
{
    if (strcmp(k, "path") == 0) {
        if (!*v)
            return cfg_bad(p, "database", "path is empty");
        if (acc_sql_is_url(v))
            return cfg_bad(p, "database", "path is a file; a PostgreSQL database is a url");
        if (acc_db_is_conninfo(v))
            return cfg_bad(p, "database",
                           "path is a file, not libpq's key=value settings; a PostgreSQL "
                           "database is a url (postgresql://...)");
        if (strcmp(v, ":memory:") == 0)
            return cfg_bad(p, "database", "%s", cfg_no_memory);
        return acc_conf_set_str(&p->c->db_path, v);
    }
    /* PostgreSQL, shared by every accordd that names it (libpq's URL:
     * several hosts, target_session_attrs=read-write, sslmode...) */
    if (strcmp(k, "url") == 0) {
        /* a database that several accordd share: a server's */
        if (!acc_sql_is_url(v) || !acc_sql_location_can(v, ACC_SQL_CAP_SERVER_LOCKS)) {
            /* shown without a password it may hold (key=value settings) */
            char *shown = acc_db_shown(v);
            int r = cfg_bad(p, "database", "url is a PostgreSQL URL (postgresql://...), not %s'%s'",
                            acc_db_is_conninfo(v) ? "libpq's key=value settings " : "",
                            shown ? shown : "?");
            free(shown);
            return r;
        }
        return acc_conf_set_str(&p->c->db_path, v);
    }
    if (strcmp(k, "retain") == 0) {
        if (strcmp(v, "forever") == 0) {
            p->c->retain = 0;
            return 1;
        }
        if (!duration_ok(v, 86400, &p->c->retain) || p->c->retain > (int64_t)100 * 366 * 86400)
            return cfg_bad(p, "database",
                           "retain must be 'forever' or a duration of at least P1D (such as "
                           "P400D), not '%s'",
                           v);
        return 1;
    }
    return table_key(p, "database", database_keys, k, v);
}

/* [signing] key, certificate: files, read when accordd starts. */
int cfg_signing_key(struct cfg_parse *p, const char *k, const char *v)
{
    char **field = strcmp(k, "key") == 0           ? &p->c->sign_key
                   : strcmp(k, "certificate") == 0 ? &p->c->sign_cert
                                                   : NULL;
    if (!field)
        return cfg_bad(p, "signing", "unknown key '%s' (key, certificate)", k);
    if (!*v)
        return cfg_bad(p, "signing", "%s is empty", k);
    return acc_conf_set_str(field, v);
}

int cfg_negotiation_key(struct cfg_parse *p, const char *k, const char *v)
{
    if (strcmp(k, "strategy") == 0) {
        if (!acc_strategy_parse(v, &p->c->strategy))
            return cfg_bad(p, "negotiation", "strategy is intersect or iterative");
        return 1;
    }
    if (strcmp(k, "policy") == 0) {
        /* Whether accordd can run it is checked once [policy] is read. */
        struct acc_policy_opts po;
        acc_policy_opts_init(&po, ACC_POLICY_EARLIEST);
        if (!acc_policy_parse(v, &po))
            return cfg_bad(p, "negotiation",
                           "policy '%s' is unknown (accordd runs earliest, worst-fit, "
                           "worst-fit-distinct, single, fcm, fcm-K, ca, mig and initial)",
                           v);
        p->c->policy = po;
        return 1;
    }
    if (strcmp(k, "max_quotes_per_user") == 0) /* the older name of [quota] max_quotes */
        return cfg_quota_key(p, NULL, "max_quotes", v);
    return table_key(p, "negotiation", negotiation_keys, k, v);
}

/* ---------------------------------------------------------------- [auth] */

#define MAX_TOKEN_LINES 100000

/* Reads "user token [admin|metrics]" lines ('#' starts a comment). */
static acc_err read_tokens(struct acc_config *c, const char *path, struct acc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return acc_error_set(err, ACC_ERR_CONFIG, "tokens file %s: cannot open it", path);
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 077))
        acc_log_warn("tokens file %s can be read by others than its owner (chmod 600 it)", path);
    char line[1024];
    unsigned no = 0;
    acc_err rc = ACC_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        /* A tokens file is a few lines; /dev/zero or a log named by mistake
         * must not keep accordd reading for ever. */
        if (++no > MAX_TOKEN_LINES) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "tokens file %s: more than %d lines; is it the right file?", path,
                               MAX_TOKEN_LINES);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char name[128], token[512], role[16], extra[2];
        int n = sscanf(line, "%127s %511s %15s %1s", name, token, role, extra);
        if (n <= 0)
            continue;
        if (n < 2 || n > 3 ||
            (n == 3 && strcmp(role, "admin") != 0 && strcmp(role, "metrics") != 0)) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "tokens file %s line %u: expected 'user token [admin|metrics]'",
                               path, no);
            break;
        }
        if (strlen(token) < 16) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "tokens file %s line %u: tokens must be at least 16 characters",
                               path, no);
            break;
        }
        void *v = realloc(c->users, (c->n_users + 1) * sizeof *c->users);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        c->users = v;
        struct acc_user *u = &c->users[c->n_users];
        memset(u, 0, sizeof *u);
        u->name = strdup(name);
        u->token = strdup(token);
        u->admin = n == 3 && strcmp(role, "admin") == 0;
        u->metrics = n == 3 && strcmp(role, "metrics") == 0;
        if (!u->name || !u->token) {
            free(u->name);
            free(u->token);
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        c->n_users++;
    }
    fclose(f);
    if (!rc && c->n_users == c->n_cert_users)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "tokens file %s names no user", path);
    return rc;
}

int cfg_auth_key(struct cfg_parse *p, const char *k, const char *v)
{
    if (strcmp(k, "client_ca") == 0 || strcmp(k, "client_certificates") == 0)
        return cfg_auth_cert_key(p, k, v);
    if (strcmp(k, "tokens") != 0)
        return cfg_bad(p, "auth", "unknown key '%s' (tokens, client_ca, client_certificates)", k);
    struct acc_error e;
    if (p->c->n_users > p->c->n_cert_users)
        return cfg_bad(p, "auth", "tokens is given twice");
    if (read_tokens(p->c, v, &e))
        return cfg_bad(p, "auth", "%s", e.msg);
    return acc_conf_set_str(&p->c->tokens_file, v);
}

/* -------------------------------------------------------------- [launch] */

bool acc_launch_cfg_manual(const struct acc_launch_cfg *l)
{
    return l->launcher && strcmp(l->launcher, "manual") == 0;
}

int cfg_launch_key(struct cfg_parse *p, const char *k, const char *v)
{
    struct acc_launch_cfg *l = &p->c->launch;
    int64_t n;
    bool b;
    struct acc_error e;
    char **str = NULL;
    if (strcmp(k, "enabled") == 0) {
        if (acc_parse_bool(v, &b, &e))
            return cfg_bad(p, "launch", "enabled: %s", e.msg);
        l->enabled = b;
    } else if (strcmp(k, "mpiexec") == 0) {
        str = &l->mpiexec;
    } else if (strcmp(k, "launcher") == 0) {
        if (!acc_name_valid(v, 31))
            return cfg_bad(p, "launch", "launcher: Hydra's launcher name, such as fork or ssh");
        str = &l->launcher;
    } else if (strcmp(k, "launcher_exec") == 0) {
        str = &l->launcher_exec;
    } else if (strcmp(k, "localhost") == 0 || strcmp(k, "control_address") == 0) {
        str = &l->localhost;
    } else if (strcmp(k, "control_ports") == 0) {
        int64_t lo = 0, hi = 0;
        const char *colon = strchr(v, ':');
        char first[16];
        if (!colon || (size_t)(colon - v) >= sizeof first)
            return cfg_bad(p, "launch", "control_ports: LOW:HIGH, such as 50000:50100");
        memcpy(first, v, (size_t)(colon - v));
        first[colon - v] = '\0';
        if (acc_parse_i64(first, 1024, 65535, &lo, &e) ||
            acc_parse_i64(colon + 1, 1024, 65535, &hi, &e) || hi < lo)
            return cfg_bad(p, "launch", "control_ports: LOW:HIGH within 1024..65535, got '%s'", v);
        l->control_port_min = (unsigned)lo;
        l->control_port_max = (unsigned)hi;
    } else if (strcmp(k, "proxy_timeout") == 0) {
        if ((acc_parse_i64(v, 1, 3600, &n, &e) && !duration_ok(v, 1, &n)) || n > 3600)
            return cfg_bad(p, "launch", "proxy_timeout: '%s' is not 1..3600 seconds (30 or PT30S)",
                           v);
        l->proxy_timeout = n;
    } else if (strcmp(k, "directory") == 0) {
        str = &l->directory;
    } else if (strcmp(k, "account") == 0) {
        str = &l->account;
    } else if (strcmp(k, "path") == 0) {
        str = &l->path;
    } else if (strcmp(k, "env") == 0) {
        const char *eq = strchr(v, '=');
        char name[128];
        if (!eq || eq == v || (size_t)(eq - v) >= sizeof name)
            return cfg_bad(p, "launch", "env: NAME=VALUE, got '%s'", v);
        memcpy(name, v, (size_t)(eq - v));
        name[eq - v] = '\0';
        for (const char *c = name; *c; c++) {
            if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                  (c > name && *c >= '0' && *c <= '9')))
                return cfg_bad(p, "launch", "env: '%s' is not a variable name", name);
        }
        return acc_kv_add(&l->env, &l->n_env, name, eq + 1) == ACC_OK;
    } else if (strcmp(k, "output_limit") == 0) {
        if (acc_parse_i64(v, 0, 64 << 20, &n, &e))
            return cfg_bad(p, "launch", "output_limit (bytes): %s", e.msg);
        l->output_limit = (size_t)n;
    } else if (strcmp(k, "grace") == 0) {
        if (!duration_ok(v, 0, &l->grace))
            return cfg_bad(p, "launch", "grace: '%s' is not a duration such as PT10S", v);
    } else if (strcmp(k, "router_port") == 0) {
        if (acc_parse_i64(v, 1024, 60000, &n, &e))
            return cfg_bad(p, "launch", "router_port: %s", e.msg);
        l->router_port = (unsigned)n;
    } else {
        return cfg_bad(p, "launch", "unknown key '%s'", k);
    }
    if (str) {
        if (!*v)
            return cfg_bad(p, "launch", "%s is empty", k);
        return acc_conf_set_str(str, v);
    }
    return 1;
}

const struct acc_user *acc_config_user_by_token(const struct acc_config *c, const char *token)
{
    const struct acc_user *found = NULL;
    size_t len = strlen(token);
    /* Every token is compared in full, so timing says nothing about which
     * or how much matched. */
    for (size_t i = 0; i < c->n_users; i++) {
        const char *t = c->users[i].token;
        if (!t)
            continue; /* a client certificate user */
        size_t tl = strlen(t);
        unsigned char diff = (unsigned char)(tl != len);
        for (size_t k = 0; k < tl; k++)
            diff |= (unsigned char)(t[k] ^ (k < len ? token[k] : 0));
        if (!diff)
            found = &c->users[i];
    }
    return found;
}
