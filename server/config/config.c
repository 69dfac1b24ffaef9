#include "config.h"

#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/common/hostlist.h"
#include "../../lib/common/strutil.h"
#include "../../lib/common/timefmt.h"

static const char embedded_text[] =
    "# The embedded testbed: three simulated sites shaped like the VIOLA testbed,\n"
    "# a full mesh of 10 Gbit/s links, and a deterministic background load so that\n"
    "# previews have gaps.  Print it with `accordd --print-config` and edit a copy\n"
    "# to describe real sites.\n"
    "\n"
    "[server]\n"
    "listen = 127.0.0.1:8080\n"
    "allow_control = yes\n"
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
    "# Meta-jobs start here at their agreed time, with MPICH's mpiexec.hydra and\n"
    "# the fork launcher: every site's hosts (SITE-n1, SITE-n2, ...) are this\n"
    "# machine.  Off unless a configuration turns it on: it runs the offers'\n"
    "# programs as accordd's user.\n"
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

struct parse {
    struct acc_config *c;
    struct acc_error err; /* the first error */
    bool failed;
};

static int bad(struct parse *p, const char *section, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct parse *p, const char *section, const char *fmt, ...)
{
    if (!p->failed) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        acc_error_set(&p->err, ACC_ERR_CONFIG, "[%s] %s", section, msg);
        p->failed = true;
    }
    return 0;
}

static int set_str(char **dst, const char *v)
{
    char *s = strdup(v);
    if (!s)
        return 0;
    free(*dst);
    *dst = s;
    return 1;
}

static acc_err parse_hostport(const char *v, char **host, unsigned *port, struct acc_error *err)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return acc_error_set(err, ACC_ERR_CONFIG, "listen '%s' is not HOST:PORT", v);
    int64_t p;
    if (acc_parse_i64(colon + 1, 0, 65535, &p, err))
        return acc_error_set(err, ACC_ERR_CONFIG, "listen '%s': bad port", v);
    const char *h = v;
    size_t hl = (size_t)(colon - v);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') { /* [::1]:8080 */
        h++;
        hl -= 2;
    }
    char *s = acc_strndup(h, hl);
    if (!s)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    free(*host);
    *host = s;
    *port = (unsigned)p;
    return ACC_OK;
}

static bool duration_ok(const char *v, int64_t min, int64_t *out)
{
    int64_t d;
    if (acc_duration_parse(v, &d, NULL) || d < min)
        return false;
    *out = d;
    return true;
}

/* A whole number within [min, max] for *dst; 0 with the error recorded. */
static int set_uint(struct parse *p, const char *section, const char *k, const char *v, int64_t min,
                    int64_t max, unsigned *dst)
{
    int64_t n;
    struct acc_error e;
    if (acc_parse_i64(v, min, max, &n, &e))
        return bad(p, section, "%s: %s", k, e.msg);
    *dst = (unsigned)n;
    return 1;
}

static int server_key(struct parse *p, const char *k, const char *v)
{
    struct acc_config *c = p->c;
    int64_t n;
    bool b;
    struct acc_error e;
    if (strcmp(k, "listen") == 0) {
        if (parse_hostport(v, &c->listen_host, &c->listen_port, &e))
            return bad(p, "server", "%s", e.msg);
    } else if (strcmp(k, "max_body") == 0) {
        if (acc_parse_i64(v, 1024, 64 << 20, &n, &e))
            return bad(p, "server", "max_body: %s", e.msg);
        c->max_body = (size_t)n;
    } else if (strcmp(k, "max_depth") == 0) {
        if (acc_parse_i64(v, 8, 256, &n, &e))
            return bad(p, "server", "max_depth: %s", e.msg);
        c->max_depth = (unsigned)n;
    } else if (strcmp(k, "max_attributes") == 0) {
        if (acc_parse_i64(v, 8, 4096, &n, &e))
            return bad(p, "server", "max_attributes: %s", e.msg);
        c->max_attributes = (unsigned)n;
    } else if (strcmp(k, "max_total_attributes") == 0) {
        if (acc_parse_i64(v, 64, 1000000, &n, &e))
            return bad(p, "server", "max_total_attributes: %s", e.msg);
        c->max_total_attributes = (unsigned)n;
    } else if (strcmp(k, "connection_limit") == 0) {
        if (acc_parse_i64(v, 1, 100000, &n, &e))
            return bad(p, "server", "connection_limit: %s", e.msg);
        c->connection_limit = (unsigned)n;
    } else if (strcmp(k, "timeout") == 0) {
        if (!duration_ok(v, 1, &n))
            return bad(p, "server", "timeout: '%s' is not a positive duration such as PT60S", v);
        c->timeout = (unsigned)n;
    } else if (strcmp(k, "threads") == 0) {
        return set_uint(p, "server", k, v, 1, 64, &c->threads);
    } else if (strcmp(k, "client_connections") == 0) {
        return set_uint(p, "server", k, v, 1, 100000, &c->client_connections);
    } else if (strcmp(k, "max_query") == 0) {
        return set_uint(p, "server", k, v, 1, 256, &c->max_query);
    } else if (strcmp(k, "request_timeout") == 0) {
        if (!duration_ok(v, 1, &n))
            return bad(p, "server",
                       "request_timeout: '%s' is not a positive duration such as PT30S", v);
        c->request_timeout = (unsigned)n;
    } else if (strcmp(k, "allow_control") == 0) {
        if (acc_parse_bool(v, &b, &e))
            return bad(p, "server", "allow_control: %s", e.msg);
        c->allow_control = b;
    } else if (strcmp(k, "log_level") == 0) {
        if (!acc_log_parse_level(v, &c->log_level))
            return bad(p, "server", "log_level is error, warn, info or debug");
    } else {
        return bad(p, "server", "unknown key '%s'", k);
    }
    return 1;
}

static int database_key(struct parse *p, const char *k, const char *v)
{
    bool b;
    struct acc_error e;
    if (strcmp(k, "path") == 0) {
        if (!*v)
            return bad(p, "database", "path is empty");
        return set_str(&p->c->db_path, v);
    }
    if (strcmp(k, "durable") == 0) {
        if (acc_parse_bool(v, &b, &e))
            return bad(p, "database", "durable: %s", e.msg);
        p->c->durable = b;
        return 1;
    }
    if (strcmp(k, "wal_limit") == 0) { /* bytes, 1 MiB to 1 TiB */
        if (acc_parse_i64(v, (int64_t)1 << 20, (int64_t)1 << 40, &p->c->wal_limit, &e))
            return bad(p, "database", "wal_limit: %s", e.msg);
        return 1;
    }
    return bad(p, "database", "unknown key '%s'", k);
}

static int negotiation_key(struct parse *p, const char *k, const char *v)
{
    struct acc_config *c = p->c;
    int64_t n;
    struct acc_error e;
    if (strcmp(k, "strategy") == 0) {
        if (!acc_strategy_parse(v, &c->strategy))
            return bad(p, "negotiation", "strategy is intersect or iterative");
    } else if (strcmp(k, "max_rounds") == 0) {
        if (acc_parse_i64(v, 1, 1000, &n, &e))
            return bad(p, "negotiation", "max_rounds: %s", e.msg);
        c->max_rounds = (unsigned)n;
    } else if (strcmp(k, "horizon") == 0) {
        if (!duration_ok(v, 3600, &c->horizon))
            return bad(p, "negotiation", "horizon: '%s' is not a duration of at least PT1H", v);
    } else if (strcmp(k, "lead_time") == 0) {
        if (!duration_ok(v, 0, &c->lead_time))
            return bad(p, "negotiation", "lead_time: '%s' is not a duration such as PT5S", v);
    } else if (strcmp(k, "adapter_timeout") == 0) {
        if (!duration_ok(v, 1, &c->adapter_timeout))
            return bad(p, "negotiation", "adapter_timeout: '%s' is not a duration such as PT15S",
                       v);
    } else if (strcmp(k, "workers") == 0) {
        return set_uint(p, "negotiation", k, v, 1, 1024, &c->workers);
    } else if (strcmp(k, "queue_length") == 0) {
        return set_uint(p, "negotiation", k, v, 1, 1000000, &c->queue_length);
    } else if (strcmp(k, "max_pending") == 0) {
        return set_uint(p, "negotiation", k, v, 0, 1000000, &c->max_pending);
    } else {
        return bad(p, "negotiation", "unknown key '%s'", k);
    }
    return 1;
}

static int add_setting(struct acc_kv **kv, size_t *n, const char *k, const char *v)
{
    void *p = realloc(*kv, (*n + 1) * sizeof **kv);
    if (!p)
        return 0;
    *kv = p;
    char *ks = strdup(k), *vs = strdup(v);
    if (!ks || !vs) {
        free(ks);
        free(vs);
        return 0;
    }
    (*kv)[*n].key = ks;
    (*kv)[*n].value = vs;
    (*n)++;
    return 1;
}

/* The entry of the named section, created on first sight. */
static void *entry(void **arr, size_t *n, size_t size, const char *name)
{
    for (size_t i = 0; i < *n; i++) {
        char **first = (char **)((char *)*arr + i * size); /* every entry starts with name */
        if (strcmp(*first, name) == 0)
            return first;
    }
    void *p = realloc(*arr, (*n + 1) * size);
    if (!p)
        return NULL;
    *arr = p;
    void *e = (char *)p + *n * size;
    memset(e, 0, size);
    *(char **)e = strdup(name);
    if (!*(char **)e)
        return NULL;
    (*n)++;
    return e;
}

static int site_key(struct parse *p, const char *section, const char *name, const char *k,
                    const char *v)
{
    struct acc_site_cfg *s = entry((void **)&p->c->sites, &p->c->n_sites, sizeof *s, name);
    if (!s)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return set_str(&s->adapter, v);
    if (strcmp(k, "nodes") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 10000000, &s->nodes, &e))
            return bad(p, section, "nodes: %s", e.msg);
        return 1;
    }
    if (strcmp(k, "hosts") == 0) {
        /* Expanded once, here, for every launch. */
        struct acc_hostlist h = {0};
        acc_err rc = acc_hostlist_expand(v, &h);
        if (rc || h.n == 0) {
            acc_hostlist_release(&h);
            return bad(p, section, "hosts: '%s' is not a host list such as c-n[001-064]", v);
        }
        struct acc_hostlist old = {s->host_names, s->n_host_names};
        acc_hostlist_release(&old);
        s->host_names = h.names;
        s->n_host_names = h.n;
        return set_str(&s->hosts, v);
    }
    if (strcmp(k, "launch") == 0) {
        if (strcmp(v, "mpiexec") != 0 && strcmp(v, "sbatch") != 0)
            return bad(p, section, "launch is mpiexec (the default) or sbatch");
        s->sbatch = strcmp(v, "sbatch") == 0;
        return 1;
    }
    if (strcmp(k, "contact") == 0) {
        if (!*v || strchr(v, '"'))
            return bad(p, section,
                       "contact: a resource manager contact such as "
                       "host:2119/jobmanager-slurm (no quotes)");
        return set_str(&s->contact, v);
    }
    return add_setting(&s->settings, &s->n_settings, k, v);
}

static int network_key(struct parse *p, const char *name, const char *k, const char *v)
{
    struct acc_network_cfg *n = entry((void **)&p->c->networks, &p->c->n_networks, sizeof *n, name);
    if (!n)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return set_str(&n->adapter, v);
    return add_setting(&n->settings, &n->n_settings, k, v);
}

static int link_key(struct parse *p, const char *section, const char *name, const char *k,
                    const char *v)
{
    struct acc_link_cfg *l = entry((void **)&p->c->links, &p->c->n_links, sizeof *l, name);
    if (!l)
        return 0;
    if (strcmp(k, "sites") == 0) {
        char a[128], b[128], extra[2];
        if (sscanf(v, "%127s %127s %1s", a, b, extra) != 2)
            return bad(p, section, "sites must name two sites: sites = A B");
        return set_str(&l->site_a, a) && set_str(&l->site_b, b);
    }
    if (strcmp(k, "network") == 0)
        return set_str(&l->network, v);
    if (strcmp(k, "capacity") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 100000000, &l->capacity, &e))
            return bad(p, section, "capacity (Mbit/s): %s", e.msg);
        return 1;
    }
    return bad(p, section, "unknown key '%s'", k);
}

/* Reads "user token [admin]" lines ('#' starts a comment). */
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
        no++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char name[128], token[512], role[16], extra[2];
        int n = sscanf(line, "%127s %511s %15s %1s", name, token, role, extra);
        if (n <= 0)
            continue;
        if (n < 2 || n > 3 || (n == 3 && strcmp(role, "admin") != 0)) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "tokens file %s line %u: expected 'user token [admin]'", path, no);
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
        u->name = strdup(name);
        u->token = strdup(token);
        u->admin = n == 3;
        if (!u->name || !u->token) {
            free(u->name);
            free(u->token);
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        c->n_users++;
    }
    fclose(f);
    if (!rc && c->n_users == 0)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "tokens file %s names no user", path);
    return rc;
}

static int auth_key(struct parse *p, const char *k, const char *v)
{
    if (strcmp(k, "tokens") != 0)
        return bad(p, "auth", "unknown key '%s'", k);
    struct acc_error e;
    if (p->c->n_users)
        return bad(p, "auth", "tokens is given twice");
    if (read_tokens(p->c, v, &e))
        return bad(p, "auth", "%s", e.msg);
    return 1;
}

static int launch_key(struct parse *p, const char *k, const char *v)
{
    struct acc_launch_cfg *l = &p->c->launch;
    int64_t n;
    bool b;
    struct acc_error e;
    char **str = NULL;
    if (strcmp(k, "enabled") == 0) {
        if (acc_parse_bool(v, &b, &e))
            return bad(p, "launch", "enabled: %s", e.msg);
        l->enabled = b;
    } else if (strcmp(k, "mpiexec") == 0) {
        str = &l->mpiexec;
    } else if (strcmp(k, "launcher") == 0) {
        if (!acc_name_valid(v, 31))
            return bad(p, "launch", "launcher: Hydra's launcher name, such as fork or ssh");
        str = &l->launcher;
    } else if (strcmp(k, "launcher_exec") == 0) {
        str = &l->launcher_exec;
    } else if (strcmp(k, "localhost") == 0) {
        str = &l->localhost;
    } else if (strcmp(k, "directory") == 0) {
        str = &l->directory;
    } else if (strcmp(k, "path") == 0) {
        str = &l->path;
    } else if (strcmp(k, "env") == 0) {
        const char *eq = strchr(v, '=');
        char name[128];
        if (!eq || eq == v || (size_t)(eq - v) >= sizeof name)
            return bad(p, "launch", "env: NAME=VALUE, got '%s'", v);
        memcpy(name, v, (size_t)(eq - v));
        name[eq - v] = '\0';
        for (const char *c = name; *c; c++) {
            if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                  (c > name && *c >= '0' && *c <= '9')))
                return bad(p, "launch", "env: '%s' is not a variable name", name);
        }
        return add_setting(&l->env, &l->n_env, name, eq + 1);
    } else if (strcmp(k, "output_limit") == 0) {
        if (acc_parse_i64(v, 0, 64 << 20, &n, &e))
            return bad(p, "launch", "output_limit (bytes): %s", e.msg);
        l->output_limit = (size_t)n;
    } else if (strcmp(k, "grace") == 0) {
        if (!duration_ok(v, 0, &l->grace))
            return bad(p, "launch", "grace: '%s' is not a duration such as PT10S", v);
    } else if (strcmp(k, "router_port") == 0) {
        if (acc_parse_i64(v, 1024, 60000, &n, &e))
            return bad(p, "launch", "router_port: %s", e.msg);
        l->router_port = (unsigned)n;
    } else {
        return bad(p, "launch", "unknown key '%s'", k);
    }
    if (str) {
        if (!*v)
            return bad(p, "launch", "%s is empty", k);
        return set_str(str, v);
    }
    return 1;
}

static int handler(void *user, const char *section, const char *k, const char *v)
{
    struct parse *p = user;
    if (p->failed)
        return 1; /* report only the first error */
    if (strcmp(section, "auth") == 0)
        return auth_key(p, k, v);
    if (strcmp(section, "server") == 0)
        return server_key(p, k, v);
    if (strcmp(section, "database") == 0)
        return database_key(p, k, v);
    if (strcmp(section, "negotiation") == 0)
        return negotiation_key(p, k, v);
    if (strcmp(section, "launch") == 0)
        return launch_key(p, k, v);
    static const char *const kinds[] = {"site ", "network ", "link "};
    for (int i = 0; i < 3; i++) {
        size_t kl = strlen(kinds[i]);
        if (strncmp(section, kinds[i], kl) != 0)
            continue;
        const char *name = section + kl;
        while (*name == ' ')
            name++;
        if (!acc_name_valid(name, 63))
            return bad(p, section, "'%s' is not a valid name (letters, digits, . _ -)", name);
        if (i == 0)
            return site_key(p, section, name, k, v);
        if (i == 1)
            return network_key(p, name, k, v);
        return link_key(p, section, name, k, v);
    }
    return bad(p, section,
               "unknown section (server, database, negotiation, launch, auth, site NAME, "
               "network NAME or link NAME)");
}

/* ---------------------------------------------------------------- checks */

static acc_err check(struct acc_config *c, struct acc_error *err)
{
    if (c->n_sites == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "no [site NAME] section: nothing to allocate");
    for (size_t i = 0; i < c->n_sites; i++) {
        const struct acc_site_cfg *s = &c->sites[i];
        if (!s->adapter)
            return acc_error_set(err, ACC_ERR_CONFIG, "[site %s] needs adapter =", s->name);
        if (s->nodes <= 0)
            return acc_error_set(err, ACC_ERR_CONFIG, "[site %s] needs nodes = (its size)",
                                 s->name);
        /* Every node may be launched on, so each needs a name. */
        if (s->hosts && s->n_host_names < (size_t)s->nodes)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[site %s] hosts names %zu hosts for its %lld nodes", s->name,
                                 s->n_host_names, (long long)s->nodes);
    }
    for (size_t i = 0; i < c->n_networks; i++) {
        if (!c->networks[i].adapter)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[network %s] needs adapter =", c->networks[i].name);
        if (acc_config_site(c, c->networks[i].name))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[network %s] has the name of a site; names must differ",
                                 c->networks[i].name);
    }
    for (size_t i = 0; i < c->n_links; i++) {
        const struct acc_link_cfg *l = &c->links[i];
        if (!l->site_a)
            return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] needs sites = A B", l->name);
        if (!acc_config_site(c, l->site_a) || !acc_config_site(c, l->site_b))
            return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] joins an unknown site (%s, %s)",
                                 l->name, l->site_a, l->site_b);
        if (strcmp(l->site_a, l->site_b) == 0)
            return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] joins %s with itself", l->name,
                                 l->site_a);
        if (l->capacity <= 0)
            return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] needs capacity = (Mbit/s)",
                                 l->name);
        bool found = false;
        for (size_t k = 0; l->network && k < c->n_networks; k++)
            found |= strcmp(c->networks[k].name, l->network) == 0;
        if (!found)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[link %s] needs network = the name of a [network] section",
                                 l->name);
        if (acc_config_link_between(c, l->site_a, l->site_b) != l)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[link %s] joins %s and %s, which another link already joins",
                                 l->name, l->site_a, l->site_b);
    }
    return ACC_OK;
}

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
    c->timeout = 60;
    c->request_timeout = 30;
    c->max_query = 32;
    c->log_level = ACC_LOG_INFO;
    c->durable = true;
    c->wal_limit = (int64_t)64 << 20;
    c->strategy = ACC_STRATEGY_INTERSECT;
    c->max_rounds = 32;
    c->horizon = 14 * 86400;
    c->lead_time = 5;
    c->adapter_timeout = 15;
    c->workers = 32;
    c->queue_length = 1024;
    c->max_pending = 256;
    c->launch.enabled = false; /* it runs what offers name: an operator's choice */
    c->launch.output_limit = 1024 * 1024;
    c->launch.grace = 10;
    c->launch.router_port = 33000;
}

static acc_err finish(struct acc_config *c, struct parse *p, int line, const char *origin,
                      struct acc_error *err)
{
    acc_err rc = ACC_OK;
    if (line < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot read it", origin);
    } else if (line > 0 || p->failed) {
        if (p->failed)
            rc = acc_error_set(err, ACC_ERR_CONFIG, "%s line %d: %s", origin, line, p->err.msg);
        else
            rc = acc_error_set(err, ACC_ERR_CONFIG, "%s line %d: not a valid INI line", origin,
                               line);
    }
    if (!rc &&
        ((!c->listen_host && !(c->listen_host = strdup("127.0.0.1"))) ||
         (!c->db_path && !(c->db_path = strdup("accord.db"))) || !(c->origin = strdup(origin)) ||
         (!c->launch.mpiexec && !(c->launch.mpiexec = strdup("mpiexec.hydra"))) ||
         (!c->launch.launcher && !(c->launch.launcher = strdup("fork")))))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = check(c, err);
    if (rc)
        acc_config_release(c);
    return rc;
}

acc_err acc_config_load_string(const char *text, const char *origin, struct acc_config *out,
                               struct acc_error *err)
{
    defaults(out);
    struct parse p = {.c = out};
    int line = ini_parse_string(text, handler, &p);
    return finish(out, &p, line, origin, err);
}

acc_err acc_config_load_file(const char *path, struct acc_config *out, struct acc_error *err)
{
    defaults(out);
    FILE *f = fopen(path, "r");
    if (!f)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot open it", path);
    struct parse p = {.c = out};
    int line = ini_parse_file(f, handler, &p);
    fclose(f);
    return finish(out, &p, line, path, err);
}

acc_err acc_config_embedded(struct acc_config *out, struct acc_error *err)
{
    acc_err rc = acc_config_load_string(embedded_text, "embedded testbed", out, err);
    if (!rc)
        out->embedded = true;
    return rc;
}

acc_err acc_config_set_listen(struct acc_config *c, const char *hostport, struct acc_error *err)
{
    return parse_hostport(hostport, &c->listen_host, &c->listen_port, err);
}

acc_err acc_config_set_db(struct acc_config *c, const char *path, struct acc_error *err)
{
    if (!path || !*path)
        return acc_error_set(err, ACC_ERR_CONFIG, "the database path is empty");
    if (!set_str(&c->db_path, path))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

static void free_settings(struct acc_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

void acc_config_release(struct acc_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_sites; i++) {
        free(c->sites[i].name);
        free(c->sites[i].adapter);
        free(c->sites[i].hosts);
        struct acc_hostlist h = {c->sites[i].host_names, c->sites[i].n_host_names};
        acc_hostlist_release(&h);
        free(c->sites[i].contact);
        free_settings(c->sites[i].settings, c->sites[i].n_settings);
    }
    free(c->sites);
    for (size_t i = 0; i < c->n_networks; i++) {
        free(c->networks[i].name);
        free(c->networks[i].adapter);
        free_settings(c->networks[i].settings, c->networks[i].n_settings);
    }
    free(c->networks);
    for (size_t i = 0; i < c->n_links; i++) {
        free(c->links[i].name);
        free(c->links[i].site_a);
        free(c->links[i].site_b);
        free(c->links[i].network);
    }
    free(c->links);
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].name);
        free(c->users[i].token);
    }
    free(c->users);
    free(c->launch.mpiexec);
    free(c->launch.launcher);
    free(c->launch.launcher_exec);
    free(c->launch.localhost);
    free(c->launch.directory);
    free(c->launch.path);
    free_settings(c->launch.env, c->launch.n_env);
    free(c->listen_host);
    free(c->db_path);
    free(c->origin);
    memset(c, 0, sizeof *c);
}

const struct acc_user *acc_config_user_by_token(const struct acc_config *c, const char *token)
{
    const struct acc_user *found = NULL;
    size_t len = strlen(token);
    /* Every token is compared in full, so timing says nothing about which
     * or how much matched. */
    for (size_t i = 0; i < c->n_users; i++) {
        const char *t = c->users[i].token;
        size_t tl = strlen(t);
        unsigned char diff = (unsigned char)(tl != len);
        for (size_t k = 0; k < tl; k++)
            diff |= (unsigned char)(t[k] ^ (k < len ? token[k] : 0));
        if (!diff)
            found = &c->users[i];
    }
    return found;
}

const struct acc_site_cfg *acc_config_site(const struct acc_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        if (strcmp(c->sites[i].name, name) == 0)
            return &c->sites[i];
    }
    return NULL;
}

const struct acc_link_cfg *acc_config_link_between(const struct acc_config *c, const char *a,
                                                   const char *b)
{
    for (size_t i = 0; i < c->n_links; i++) {
        const struct acc_link_cfg *l = &c->links[i];
        if ((strcmp(l->site_a, a) == 0 && strcmp(l->site_b, b) == 0) ||
            (strcmp(l->site_a, b) == 0 && strcmp(l->site_b, a) == 0))
            return l;
    }
    return NULL;
}
