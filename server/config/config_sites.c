/* config_sites.c - [site NAME], [network NAME] and [link NAME]: their keys,
 * the checks across them once the file is read, and the look-ups. */
#include "config_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/hostlist.h"
#include "../../lib/common/strutil.h"

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

int cfg_site_key(struct cfg_parse *p, const char *section, const char *name, const char *k,
                 const char *v)
{
    struct acc_site_cfg *s = entry((void **)&p->c->sites, &p->c->n_sites, sizeof *s, name);
    if (!s)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return cfg_set_str(&s->adapter, v);
    if (strcmp(k, "nodes") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 10000000, &s->nodes, &e))
            return cfg_bad(p, section, "nodes: %s", e.msg);
        return 1;
    }
    if (strcmp(k, "hosts") == 0) {
        /* Expanded once, here, for every launch. */
        struct acc_hostlist h = {0};
        acc_err rc = acc_hostlist_expand(v, &h);
        if (rc || h.n == 0) {
            acc_hostlist_release(&h);
            return cfg_bad(p, section, "hosts: '%s' is not a host list such as c-n[001-064]", v);
        }
        struct acc_hostlist old = {s->host_names, s->n_host_names};
        acc_hostlist_release(&old);
        s->host_names = h.names;
        s->n_host_names = h.n;
        return cfg_set_str(&s->hosts, v);
    }
    if (strcmp(k, "addresses") == 0) {
        /* Expanded and checked here; the count is checked against the hosts
         * once the whole section is read (cfg_check). */
        struct acc_hostlist h = {0};
        acc_err rc = acc_hostlist_expand(v, &h);
        if (rc || h.n == 0) {
            acc_hostlist_release(&h);
            return cfg_bad(p, section,
                           "addresses: '%s' is not a host list of IPv4 addresses such as "
                           "10.0.1.[11-12]",
                           v);
        }
        for (size_t i = 0; i < h.n; i++) {
            struct in_addr in;
            if (inet_pton(AF_INET, h.names[i], &in) != 1) {
                int ok = cfg_bad(p, section,
                                 "addresses: '%.64s' (address %zu of '%s') is not an IPv4 "
                                 "address such as 10.0.1.11",
                                 h.names[i], i + 1, v);
                acc_hostlist_release(&h);
                return ok;
            }
        }
        struct acc_hostlist old = {s->addresses, s->n_addresses};
        acc_hostlist_release(&old);
        s->addresses = h.names;
        s->n_addresses = h.n;
        return 1;
    }
    if (strcmp(k, "launch") == 0) {
        if (strcmp(v, "mpiexec") != 0 && strcmp(v, "sbatch") != 0)
            return cfg_bad(p, section, "launch is mpiexec (the default) or sbatch");
        s->sbatch = strcmp(v, "sbatch") == 0;
        return 1;
    }
    if (strcmp(k, "contact") == 0) {
        if (!*v || strchr(v, '"'))
            return cfg_bad(p, section,
                           "contact: a resource manager contact such as "
                           "host:2119/jobmanager-slurm (no quotes)");
        return cfg_set_str(&s->contact, v);
    }
    return cfg_add_setting(&s->settings, &s->n_settings, k, v);
}

int cfg_network_key(struct cfg_parse *p, const char *name, const char *k, const char *v)
{
    struct acc_network_cfg *n = entry((void **)&p->c->networks, &p->c->n_networks, sizeof *n, name);
    if (!n)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return cfg_set_str(&n->adapter, v);
    return cfg_add_setting(&n->settings, &n->n_settings, k, v);
}

int cfg_link_key(struct cfg_parse *p, const char *section, const char *name, const char *k,
                 const char *v)
{
    struct acc_link_cfg *l = entry((void **)&p->c->links, &p->c->n_links, sizeof *l, name);
    if (!l)
        return 0;
    if (strcmp(k, "sites") == 0) {
        char a[128], b[128], extra[2];
        if (sscanf(v, "%127s %127s %1s", a, b, extra) != 2)
            return cfg_bad(p, section, "sites must name two sites: sites = A B");
        return cfg_set_str(&l->site_a, a) && cfg_set_str(&l->site_b, b);
    }
    if (strcmp(k, "network") == 0)
        return cfg_set_str(&l->network, v);
    if (strcmp(k, "capacity") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 100000000, &l->capacity, &e))
            return cfg_bad(p, section, "capacity (Mbit/s): %s", e.msg);
        return 1;
    }
    return cfg_bad(p, section, "unknown key '%s'", k);
}

int cfg_resource_key(struct cfg_parse *p, const char *section, const char *k, const char *v,
                     bool *matched)
{
    static const char *const kinds[] = {"site ", "network ", "link "};
    *matched = false;
    for (int i = 0; i < 3; i++) {
        size_t kl = strlen(kinds[i]);
        if (strncmp(section, kinds[i], kl) != 0)
            continue;
        *matched = true;
        const char *name = section + kl;
        while (*name == ' ')
            name++;
        if (!acc_name_valid(name, 63))
            return cfg_bad(p, section, "'%s' is not a valid name (letters, digits, . _ -)", name);
        if (i == 0)
            return cfg_site_key(p, section, name, k, v);
        if (i == 1)
            return cfg_network_key(p, name, k, v);
        return cfg_link_key(p, section, name, k, v);
    }
    return 0;
}

/* ---------------------------------------------------------------- checks */

acc_err cfg_check(const struct acc_config *c, struct acc_error *err)
{
    if (c->n_sites == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "no [site NAME] section: nothing to allocate");
    return acc_config_resource_check(c, false, err);
}

acc_err acc_config_resource_check(const struct acc_config *c, bool foreign_sites,
                                  struct acc_error *err)
{
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
        /* addresses are aligned with the hosts: one each. */
        size_t hosts = s->hosts ? s->n_host_names : (size_t)s->nodes;
        if (s->addresses && s->n_addresses != hosts)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[site %s] addresses names %zu addresses for its %zu hosts (%s); "
                                 "give one address per host, in the same order",
                                 s->name, s->n_addresses, hosts,
                                 s->hosts ? s->hosts : "the default NAME-n[1-nodes]");
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
        if (!foreign_sites && (!acc_config_site(c, l->site_a) || !acc_config_site(c, l->site_b)))
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

const struct acc_site_cfg *acc_config_site(const struct acc_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        if (strcmp(c->sites[i].name, name) == 0)
            return &c->sites[i];
    }
    return NULL;
}

const char *acc_config_host_address(const struct acc_site_cfg *s, const char *host)
{
    if (!s || !s->addresses)
        return NULL;
    if (s->hosts) {
        for (size_t i = 0; i < s->n_host_names && i < s->n_addresses; i++) {
            if (strcmp(s->host_names[i], host) == 0)
                return s->addresses[i];
        }
        return NULL;
    }
    /* The default names: NAME-n1 ... NAME-nNODES. */
    size_t len = strlen(s->name);
    if (strncmp(host, s->name, len) != 0 || strncmp(host + len, "-n", 2) != 0)
        return NULL;
    const char *num = host + len + 2;
    size_t k = 0, digits = 0;
    for (; num[digits] >= '0' && num[digits] <= '9' && digits < 10; digits++)
        k = k * 10 + (size_t)(num[digits] - '0');
    if (digits == 0 || num[digits] || num[0] == '0' || k > s->n_addresses)
        return NULL;
    return s->addresses[k - 1];
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
