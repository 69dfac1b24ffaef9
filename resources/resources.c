/* SPDX-License-Identifier: Apache-2.0 */
/* resources.c - [site NAME], [network NAME] and [link NAME]: their keys,
 * the checks across them once the file is read, the look-ups, release. */
#include "resources.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/hostlist.h"
#include "../lib/common/conf.h"
#include "../lib/common/conf_report.h"
#include "../lib/common/strutil.h"

/* One key being read: its readers follow inih's convention (1 go on, 0
 * stop) and keep the first error, as the daemons' own readers do. */
struct parse {
    struct acc_resources_cfg *c;
    struct acc_conf_first first;
};

#define bad(p, ...) acc_conf_bad(&(p)->first, __VA_ARGS__)

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

static int setting(struct acc_kv **kv, size_t *n, const char *k, const char *v)
{
    return acc_kv_add(kv, n, k, v) == ACC_OK;
}

static int hosts_key(struct parse *p, struct acc_site_cfg *s, const char *section, const char *v)
{
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
    return acc_conf_set_str(&s->hosts, v);
}

static int addresses_key(struct parse *p, struct acc_site_cfg *s, const char *section,
                         const char *v)
{
    /* Expanded and checked here; the count is checked against the hosts
     * once the whole section is read (acc_resources_cfg_check). */
    struct acc_hostlist h = {0};
    acc_err rc = acc_hostlist_expand(v, &h);
    if (rc || h.n == 0) {
        acc_hostlist_release(&h);
        return bad(p, section,
                   "addresses: '%s' is not a host list of IPv4 addresses such as "
                   "10.0.1.[11-12]",
                   v);
    }
    for (size_t i = 0; i < h.n; i++) {
        struct in_addr in;
        if (inet_pton(AF_INET, h.names[i], &in) != 1) {
            int ok = bad(p, section,
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

static int site_key(struct parse *p, const char *section, const char *name, const char *k,
                    const char *v)
{
    struct acc_site_cfg *s = entry((void **)&p->c->sites, &p->c->n_sites, sizeof *s, name);
    if (!s)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return acc_conf_set_str(&s->adapter, v);
    if (strcmp(k, "nodes") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 10000000, &s->nodes, &e))
            return bad(p, section, "nodes: %s", e.msg);
        return 1;
    }
    if (strcmp(k, "hosts") == 0)
        return hosts_key(p, s, section, v);
    if (strcmp(k, "addresses") == 0)
        return addresses_key(p, s, section, v);
    if (strcmp(k, "launch") == 0) {
        if (strcmp(v, "mpiexec") != 0 && strcmp(v, "sbatch") != 0 && strcmp(v, "batch") != 0)
            return bad(p, section, "launch is mpiexec (the default), batch or sbatch");
        s->sbatch = strcmp(v, "sbatch") == 0;
        s->batch = strcmp(v, "batch") == 0;
        return 1;
    }
    if (strcmp(k, "contact") == 0) {
        if (!*v || strchr(v, '"'))
            return bad(p, section,
                       "contact: a resource manager contact such as "
                       "host:2119/jobmanager-slurm (no quotes)");
        return acc_conf_set_str(&s->contact, v);
    }
    return setting(&s->settings, &s->n_settings, k, v);
}

static int network_key(struct parse *p, const char *name, const char *k, const char *v)
{
    struct acc_network_cfg *n = entry((void **)&p->c->networks, &p->c->n_networks, sizeof *n, name);
    if (!n)
        return 0;
    if (strcmp(k, "adapter") == 0)
        return acc_conf_set_str(&n->adapter, v);
    return setting(&n->settings, &n->n_settings, k, v);
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
        return acc_conf_set_str(&l->site_a, a) && acc_conf_set_str(&l->site_b, b);
    }
    if (strcmp(k, "network") == 0)
        return acc_conf_set_str(&l->network, v);
    if (strcmp(k, "capacity") == 0) {
        struct acc_error e;
        if (acc_parse_i64(v, 1, 100000000, &l->capacity, &e))
            return bad(p, section, "capacity (Mbit/s): %s", e.msg);
        return 1;
    }
    return bad(p, section, "unknown key '%s'", k);
}

acc_err acc_resources_cfg_key(struct acc_resources_cfg *c, const char *section, const char *k,
                              const char *v, struct acc_error *err)
{
    static const char *const kinds[] = {"site ", "network ", "link "};
    struct parse p = {.c = c};
    int i = 0;
    while (i < 3 && strncmp(section, kinds[i], strlen(kinds[i])) != 0)
        i++;
    if (i == 3)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "[%s] is not a site, network or link",
                             section);
    const char *name = section + strlen(kinds[i]);
    while (*name == ' ')
        name++;
    int ok;
    if (!acc_name_valid(name, 63))
        ok = bad(&p, section, "'%s' is not a valid name (letters, digits, . _ -)", name);
    else if (i == 0)
        ok = site_key(&p, section, name, k, v);
    else if (i == 1)
        ok = network_key(&p, name, k, v);
    else
        ok = link_key(&p, section, name, k, v);
    if (p.first.failed)
        return acc_error_copy(err, &p.first.err);
    if (!ok)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

/* ---------------------------------------------------------------- checks */

static acc_err check_site(const struct acc_site_cfg *s, const char **key, struct acc_error *err)
{
    *key = "adapter";
    if (!s->adapter)
        return acc_error_set(err, ACC_ERR_CONFIG, "[site %s] needs adapter =", s->name);
    *key = "nodes";
    if (s->nodes <= 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "[site %s] needs nodes = (its size)", s->name);
    *key = "hosts";
    /* Every node may be launched on, so each needs a name. */
    if (s->hosts && s->n_host_names < (size_t)s->nodes)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[site %s] hosts names %zu hosts for its %lld nodes", s->name,
                             s->n_host_names, (long long)s->nodes);
    /* addresses are aligned with the hosts: one each. */
    size_t hosts = s->hosts ? s->n_host_names : (size_t)s->nodes;
    *key = "addresses";
    if (s->addresses && s->n_addresses != hosts)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[site %s] addresses names %zu addresses for its %zu hosts (%s); "
                             "give one address per host, in the same order",
                             s->name, s->n_addresses, hosts,
                             s->hosts ? s->hosts : "the default NAME-n[1-nodes]");
    return ACC_OK;
}

static acc_err check_link(const struct acc_resources_cfg *c, const struct acc_link_cfg *l,
                          bool foreign_sites, const char **key, struct acc_error *err)
{
    *key = "sites";
    if (!l->site_a)
        return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] needs sites = A B", l->name);
    if (!foreign_sites && (!acc_resources_site(c, l->site_a) || !acc_resources_site(c, l->site_b)))
        return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] joins an unknown site (%s, %s)",
                             l->name, l->site_a, l->site_b);
    if (strcmp(l->site_a, l->site_b) == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] joins %s with itself", l->name,
                             l->site_a);
    *key = "capacity";
    if (l->capacity <= 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "[link %s] needs capacity = (Mbit/s)", l->name);
    *key = "network";
    bool found = false;
    for (size_t k = 0; l->network && k < c->n_networks; k++)
        found |= strcmp(c->networks[k].name, l->network) == 0;
    if (!found)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[link %s] needs network = the name of a [network] section", l->name);
    *key = "sites";
    if (acc_resources_link_between(c, l->site_a, l->site_b) != l)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "[link %s] joins %s and %s, which another link already joins", l->name,
                             l->site_a, l->site_b);
    return ACC_OK;
}

/* The checks; with r, every problem is recorded there and the checks go
 * on, else the first is returned. */
static acc_err checks(const struct acc_resources_cfg *c, bool foreign_sites,
                      struct acc_conf_report *r, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    const char *key = NULL;
    for (size_t i = 0; i < c->n_sites; i++) {
        if ((rc = check_site(&c->sites[i], &key, err)) && !r)
            return rc;
        if (rc)
            acc_conf_report_after_err(r, key, err);
    }
    for (size_t i = 0; i < c->n_networks; i++) {
        const struct acc_network_cfg *n = &c->networks[i];
        rc = ACC_OK;
        key = n->adapter ? NULL : "adapter";
        if (!n->adapter)
            rc = acc_error_set(err, ACC_ERR_CONFIG, "[network %s] needs adapter =", n->name);
        else if (acc_resources_site(c, n->name))
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "[network %s] has the name of a site; names must differ", n->name);
        if (rc && !r)
            return rc;
        if (rc)
            acc_conf_report_after_err(r, key, err);
    }
    for (size_t i = 0; i < c->n_links; i++) {
        if ((rc = check_link(c, &c->links[i], foreign_sites, &key, err)) && !r)
            return rc;
        if (rc)
            acc_conf_report_after_err(r, key, err);
    }
    return r && acc_conf_report_failed(r) ? ACC_ERR_CONFIG : ACC_OK;
}

acc_err acc_resources_cfg_check(const struct acc_resources_cfg *c, bool foreign_sites,
                                struct acc_error *err)
{
    return checks(c, foreign_sites, NULL, err);
}

acc_err acc_resources_cfg_check_all(const struct acc_resources_cfg *c, bool foreign_sites,
                                    struct acc_conf_report *r)
{
    struct acc_error err;
    return checks(c, foreign_sites, r, &err);
}

/* --------------------------------------------------------------- look-ups */

const struct acc_site_cfg *acc_resources_site(const struct acc_resources_cfg *c, const char *name)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        if (strcmp(c->sites[i].name, name) == 0)
            return &c->sites[i];
    }
    return NULL;
}

const char *acc_resources_host_address(const struct acc_site_cfg *s, const char *host)
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

const struct acc_link_cfg *acc_resources_link_between(const struct acc_resources_cfg *c,
                                                      const char *a, const char *b)
{
    for (size_t i = 0; i < c->n_links; i++) {
        const struct acc_link_cfg *l = &c->links[i];
        if (!l->site_a || !l->site_b)
            continue; /* a link without sites = (a problem --check-config reports) */
        if ((strcmp(l->site_a, a) == 0 && strcmp(l->site_b, b) == 0) ||
            (strcmp(l->site_a, b) == 0 && strcmp(l->site_b, a) == 0))
            return l;
    }
    return NULL;
}

/* ------------------------------------------------------------------ print */

static void print_settings(const struct acc_kv *kv, size_t n, FILE *out)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s = %s\n", kv[i].key, kv[i].value);
}

void acc_resources_cfg_print(const struct acc_resources_cfg *c, FILE *out)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        const struct acc_site_cfg *s = &c->sites[i];
        fprintf(out, "\n[site %s]\n", s->name);
        if (s->adapter)
            fprintf(out, "adapter = %s\n", s->adapter);
        if (s->nodes > 0)
            fprintf(out, "nodes = %lld\n", (long long)s->nodes);
        if (s->hosts)
            fprintf(out, "hosts = %s\n", s->hosts);
        for (size_t k = 0; k < s->n_addresses; k++) /* a host list of single addresses */
            fprintf(out, "%s%s%s", k ? "," : "addresses = ", s->addresses[k],
                    k + 1 == s->n_addresses ? "\n" : "");
        if (s->contact)
            fprintf(out, "contact = %s\n", s->contact);
        fprintf(out, "launch = %s\n", s->sbatch ? "sbatch" : s->batch ? "batch" : "mpiexec");
        print_settings(s->settings, s->n_settings, out);
    }
    for (size_t i = 0; i < c->n_networks; i++) {
        const struct acc_network_cfg *n = &c->networks[i];
        fprintf(out, "\n[network %s]\n", n->name);
        if (n->adapter)
            fprintf(out, "adapter = %s\n", n->adapter);
        print_settings(n->settings, n->n_settings, out);
    }
    for (size_t i = 0; i < c->n_links; i++) {
        const struct acc_link_cfg *l = &c->links[i];
        fprintf(out, "\n[link %s]\n", l->name);
        if (l->site_a)
            fprintf(out, "sites = %s %s\n", l->site_a, l->site_b);
        if (l->capacity > 0)
            fprintf(out, "capacity = %lld\n", (long long)l->capacity);
        if (l->network)
            fprintf(out, "network = %s\n", l->network);
    }
}

/* ---------------------------------------------------------------- release */

void acc_resources_cfg_release(struct acc_resources_cfg *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_sites; i++) {
        struct acc_site_cfg *s = &c->sites[i];
        free(s->name);
        free(s->adapter);
        free(s->hosts);
        struct acc_hostlist h = {s->host_names, s->n_host_names};
        acc_hostlist_release(&h);
        struct acc_hostlist ad = {s->addresses, s->n_addresses};
        acc_hostlist_release(&ad);
        free(s->contact);
        acc_kv_free(s->settings, s->n_settings);
    }
    free(c->sites);
    for (size_t i = 0; i < c->n_networks; i++) {
        free(c->networks[i].name);
        free(c->networks[i].adapter);
        acc_kv_free(c->networks[i].settings, c->networks[i].n_settings);
    }
    free(c->networks);
    for (size_t i = 0; i < c->n_links; i++) {
        free(c->links[i].name);
        free(c->links[i].site_a);
        free(c->links[i].site_b);
        free(c->links[i].network);
    }
    free(c->links);
    memset(c, 0, sizeof *c);
}
