/* SPDX-License-Identifier: Apache-2.0 */
/* resources_open.c - the adapters of the [site] and [network] sections:
 * each kind is checked for what its section needs before it is opened
 * (a site's reserves nodes, and submits jobs with launch = sbatch; a
 * network's reserves bandwidth), and each instance again after, since an
 * instance may narrow its kind's capabilities (remote: to what its site
 * daemon serves). */
#include "resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/conf_report.h"

struct acc_resources {
    const struct acc_resources_cfg *cfg;
    struct acc_adapter **ads; /* the sites' (by index in cfg->sites), then the networks' */
    size_t n;                 /* opened so far */
};

/* The kind: the given ones (tests) first, then the compiled-in ones. */
static const struct acc_adapter_ops *kind_find(const struct acc_adapter_ops *const *kinds,
                                               const char *kind)
{
    for (size_t i = 0; kinds && kinds[i]; i++) {
        if (strcmp(kinds[i]->kind, kind) == 0)
            return kinds[i];
    }
    return acc_adapter_kind_find(kind);
}

static acc_err unknown_kind(const char *section, const char *kind, struct acc_error *err)
{
    char known[256] = "";
    for (size_t i = 0; acc_adapter_kinds[i]; i++) {
        size_t n = strlen(known);
        snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", acc_adapter_kinds[i]->kind);
    }
    return acc_error_set(err, ACC_ERR_CONFIG, "%s: unknown adapter '%s' (known: %s)", section, kind,
                         known);
}

/* The kind a section names, if it has cap (need says what for: "reserve
 * nodes"); NULL with err set otherwise. */
static const struct acc_adapter_ops *kind_for(const struct acc_resources_env *env,
                                              const char *section, const char *kind, unsigned cap,
                                              const char *need, struct acc_error *err)
{
    const struct acc_adapter_ops *ops = kind_find(env->kinds, kind);
    if (!ops) {
        unknown_kind(section, kind, err);
        return NULL;
    }
    if (!(ops->caps & cap)) {
        acc_error_set(err, ACC_ERR_CONFIG, "%s: adapter %s does not %s", section, kind, need);
        return NULL;
    }
    return ops;
}

/* Opens an instance, which must still have every one of caps: an instance
 * narrows its kind's capabilities (remote: by its section). */
static acc_err open_instance(const struct acc_adapter_ops *ops, const struct acc_adapter_env *ae,
                             unsigned caps, const char *need, struct acc_adapter **out,
                             struct acc_error *err)
{
    acc_err rc = acc_adapter_open(ops, ae, out, err);
    if (rc)
        return rc;
    for (unsigned cap = 1; cap && cap <= caps; cap <<= 1) {
        if ((caps & cap) && !acc_adapter_has(*out, cap)) {
            acc_adapter_close(*out);
            *out = NULL;
            return acc_error_set(err, ACC_ERR_CONFIG, "%s: this %s instance does not %s",
                                 ae->section, ops->kind, need);
        }
    }
    return ACC_OK;
}

acc_err acc_resources_open_site(const struct acc_resources_cfg *c, size_t i,
                                const struct acc_resources_env *env, struct acc_adapter **out,
                                struct acc_error *err)
{
    *out = NULL;
    if (i >= c->n_sites)
        return acc_error_set(err, ACC_ERR_INVALID, "no site %zu in the configuration", i);
    const struct acc_site_cfg *s = &c->sites[i];
    char section[128];
    snprintf(section, sizeof section, "[site %s]", s->name);
    const struct acc_adapter_ops *ops =
        kind_for(env, section, s->adapter, ACC_CAP_NODES, "reserve nodes", err);
    if (!ops)
        return err->code;
    if (s->sbatch && !(ops->caps & ACC_CAP_SUBMIT))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: launch = sbatch needs an adapter that submits jobs into "
                             "reservations (slurm); %s does not",
                             section, s->adapter);
    if (s->batch && !(ops->caps & ACC_CAP_PROCESS))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: launch = batch needs an adapter that starts processes through "
                             "its batch system (slurm, sge); %s does not",
                             section, s->adapter);
    struct acc_adapter_env ae = {
        .name = s->name,
        .section = section,
        .db_path = env->db_path,
        .durable = env->durable,
        .snapshot = env->snapshot,
        .settings = s->settings,
        .n_settings = s->n_settings,
        .nodes = s->nodes,
    };
    if (s->sbatch)
        return open_instance(ops, &ae, ACC_CAP_NODES | ACC_CAP_SUBMIT,
                             "reserve nodes and submit jobs", out, err);
    if (s->batch)
        return open_instance(ops, &ae, ACC_CAP_NODES | ACC_CAP_PROCESS,
                             "reserve nodes and start processes", out, err);
    return open_instance(ops, &ae, ACC_CAP_NODES, "reserve nodes", out, err);
}

/* The links over network n (complete ones only), or NULL out of memory. */
static struct acc_link_def *network_links(const struct acc_resources_cfg *c,
                                          const struct acc_network_cfg *n, size_t *nl)
{
    struct acc_link_def *links = calloc(c->n_links ? c->n_links : 1, sizeof *links);
    for (size_t k = 0; links && k < c->n_links; k++) {
        const struct acc_link_cfg *l = &c->links[k];
        if (l->network && l->site_a && l->site_b && strcmp(l->network, n->name) == 0)
            links[(*nl)++] = (struct acc_link_def){l->name, l->site_a, l->site_b, l->capacity};
    }
    return links;
}

/* The adapter of network i of c, open, with the links over it. */
static acc_err open_network(const struct acc_resources_cfg *c, size_t i,
                            const struct acc_resources_env *env, struct acc_adapter **out,
                            struct acc_error *err)
{
    *out = NULL;
    const struct acc_network_cfg *n = &c->networks[i];
    char section[128];
    snprintf(section, sizeof section, "[network %s]", n->name);
    const struct acc_adapter_ops *ops =
        kind_for(env, section, n->adapter, ACC_CAP_BANDWIDTH, "reserve bandwidth", err);
    if (!ops)
        return err->code;
    size_t nl = 0;
    struct acc_link_def *links = network_links(c, n, &nl);
    if (!links)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct acc_adapter_env ae = {
        .name = n->name,
        .section = section,
        .db_path = env->db_path,
        .durable = env->durable,
        .snapshot = env->snapshot,
        .settings = n->settings,
        .n_settings = n->n_settings,
        .links = links,
        .n_links = nl,
    };
    acc_err rc = open_instance(ops, &ae, ACC_CAP_BANDWIDTH, "reserve bandwidth", out, err);
    free(links);
    return rc;
}

acc_err acc_resources_open(const struct acc_resources_cfg *c, const struct acc_resources_env *env,
                           struct acc_resources **out, struct acc_error *err)
{
    *out = NULL;
    struct acc_resources *r = calloc(1, sizeof *r);
    if (!r || !(r->ads = calloc(c->n_sites + c->n_networks + 1, sizeof *r->ads))) {
        free(r);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    r->cfg = c;
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < c->n_sites; i++) {
        rc = acc_resources_open_site(c, i, env, &r->ads[i], err);
        r->n += !rc;
    }
    for (size_t i = 0; !rc && i < c->n_networks; i++) {
        rc = open_network(c, i, env, &r->ads[c->n_sites + i], err);
        r->n += !rc;
    }
    if (rc) {
        acc_resources_close(r);
        return rc;
    }
    *out = r;
    return ACC_OK;
}

/* ---------------------------------------------------------------- checks */

/* A problem of an adapter's section into r: at the line of the setting at
 * fault, or, for a setting that is missing or the section as a whole, of
 * its adapter = line. */
static void report(struct acc_conf_report *r, const char *section, const char *key,
                   const struct acc_error *e)
{
    int line = key ? acc_conf_report_line(r, section, key) : 0;
    if (line <= 0)
        line = acc_conf_report_line(r, section, "adapter");
    acc_conf_report_after_at(r, line, key ? key : "adapter", e);
}

/* The kind of section (NULL: reported), and the adapter's own check of env. */
static void check_one(const struct acc_resources_env *env, const char *section, const char *kind,
                      unsigned cap, const char *need, const struct acc_adapter_env *ae, bool sbatch,
                      bool batch, struct acc_conf_report *r)
{
    struct acc_error e;
    const char *bracketed = ae->section;
    const struct acc_adapter_ops *ops = kind_for(env, bracketed, kind, cap, need, &e);
    if (!ops) {
        report(r, section, "adapter", &e);
        return;
    }
    if (sbatch && !(ops->caps & ACC_CAP_SUBMIT)) {
        acc_error_set(&e, ACC_ERR_CONFIG,
                      "%s: launch = sbatch needs an adapter that submits jobs into "
                      "reservations (slurm); %s does not",
                      bracketed, kind);
        report(r, section, "launch", &e);
        return;
    }
    if (batch && !(ops->caps & ACC_CAP_PROCESS)) {
        acc_error_set(&e, ACC_ERR_CONFIG,
                      "%s: launch = batch needs an adapter that starts processes through its "
                      "batch system (slurm, sge); %s does not",
                      bracketed, kind);
        report(r, section, "launch", &e);
        return;
    }
    const char *key = NULL;
    if (!acc_adapter_check(ops, ae, &key, &e))
        return;
    /* "[site a] adapter remote: [site a]: url: ..." (an adapter that names
     * its section itself): the section once */
    char twice[160];
    snprintf(twice, sizeof twice, ": %s: ", bracketed);
    char *again = strstr(e.msg, twice);
    if (again)
        memmove(again + 2, again + strlen(twice), strlen(again + strlen(twice)) + 1);
    report(r, section, key, &e);
}

acc_err acc_resources_check_adapters(const struct acc_resources_cfg *c,
                                     const struct acc_resources_env *env, struct acc_conf_report *r)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        const struct acc_site_cfg *s = &c->sites[i];
        if (!s->adapter)
            continue; /* reported by acc_resources_cfg_check_all */
        char section[128], bracketed[130];
        snprintf(section, sizeof section, "site %s", s->name);
        snprintf(bracketed, sizeof bracketed, "[%s]", section);
        struct acc_adapter_env ae = {.name = s->name,
                                     .section = bracketed,
                                     .db_path = env->db_path,
                                     .durable = env->durable,
                                     .snapshot = true,
                                     .settings = s->settings,
                                     .n_settings = s->n_settings,
                                     .nodes = s->nodes};
        check_one(env, section, s->adapter, ACC_CAP_NODES, "reserve nodes", &ae, s->sbatch,
                  s->batch, r);
    }
    for (size_t i = 0; i < c->n_networks; i++) {
        const struct acc_network_cfg *n = &c->networks[i];
        if (!n->adapter)
            continue;
        char section[128], bracketed[130];
        snprintf(section, sizeof section, "network %s", n->name);
        snprintf(bracketed, sizeof bracketed, "[%s]", section);
        size_t nl = 0;
        struct acc_link_def *links = network_links(c, n, &nl);
        if (!links) {
            r->nomem = true;
            continue;
        }
        struct acc_adapter_env ae = {.name = n->name,
                                     .section = bracketed,
                                     .db_path = env->db_path,
                                     .durable = env->durable,
                                     .snapshot = true,
                                     .settings = n->settings,
                                     .n_settings = n->n_settings,
                                     .links = links,
                                     .n_links = nl};
        check_one(env, section, n->adapter, ACC_CAP_BANDWIDTH, "reserve bandwidth", &ae, false,
                  false, r);
        free(links);
    }
    return acc_conf_report_failed(r) ? ACC_ERR_CONFIG : ACC_OK;
}

void acc_resources_interrupt(struct acc_resources *r)
{
    for (size_t i = 0; r && i < r->n; i++)
        acc_adapter_interrupt(r->ads[i]);
}

void acc_resources_close(struct acc_resources *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        acc_adapter_close(r->ads[i]);
    free(r->ads);
    free(r);
}

struct acc_adapter *acc_resources_site_adapter(const struct acc_resources *r, const char *site)
{
    for (size_t i = 0; i < r->cfg->n_sites; i++) {
        if (strcmp(r->cfg->sites[i].name, site) == 0)
            return r->ads[i];
    }
    return NULL;
}

struct acc_adapter *acc_resources_network_adapter(const struct acc_resources *r,
                                                  const char *network)
{
    for (size_t i = 0; i < r->cfg->n_networks; i++) {
        if (strcmp(r->cfg->networks[i].name, network) == 0)
            return r->ads[r->cfg->n_sites + i];
    }
    return NULL;
}

struct acc_adapter *acc_resources_adapter_named(const struct acc_resources *r, const char *name)
{
    struct acc_adapter *ad = acc_resources_site_adapter(r, name);
    return ad ? ad : acc_resources_network_adapter(r, name);
}

size_t acc_resources_count(const struct acc_resources *r)
{
    return r->n;
}

struct acc_adapter *acc_resources_at(const struct acc_resources *r, size_t i)
{
    return i < r->n ? r->ads[i] : NULL;
}
