/* SPDX-License-Identifier: Apache-2.0 */
/* hosts.c - which hosts each component of a committed agreement runs on
 * (struct acc_launch_hosts; called "hosts", not "plan", because the
 * reservation planner is server/service/plan.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/hostlist.h"
#include "../../lib/common/strutil.h"
#include "launch.h"

void acc_launch_hosts_release(struct acc_launch_hosts *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->comps && i < p->n_comps; i++) {
        struct acc_launch_comp *c = &p->comps[i];
        for (size_t k = 0; k < c->n_hosts; k++)
            free(c->hosts[k]);
        free(c->hosts);
        free(c->contact);
    }
    free(p->comps);
    free(p->directory);
    memset(p, 0, sizeof *p);
}

/* The node names an adapter reported ("n1,n2" or "n1, n2"). */
static acc_err hosts_reported(const char *names, struct acc_hostlist *out)
{
    char *copy = strdup(names);
    if (!copy)
        return ACC_ERR_NOMEM;
    acc_err rc = ACC_OK;
    char *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t && !rc; t = strtok_r(NULL, ", ", &save)) {
        void *v = realloc(out->names, (out->n + 1) * sizeof *out->names);
        char *d = strdup(t);
        if (!v || !d) {
            free(d);
            if (v)
                out->names = v;
            rc = ACC_ERR_NOMEM;
            break;
        }
        out->names = v;
        out->names[out->n++] = d;
    }
    free(copy);
    return rc;
}

/* Is name among the hosts of components [0, upto) on the same site? */
static bool taken(const struct acc_launch_hosts *p, size_t upto, const char *site, const char *name)
{
    for (size_t i = 0; i < upto; i++) {
        const struct acc_launch_comp *c = &p->comps[i];
        if (strcmp(c->comp->site, site) != 0)
            continue;
        for (size_t k = 0; k < c->n_hosts; k++) {
            if (strcmp(c->hosts[k], name) == 0)
                return true;
        }
    }
    return false;
}

static acc_err resolve(struct acc_launch_hosts *p, size_t i, const struct acc_config *cfg,
                       struct acc_error *err)
{
    struct acc_launch_comp *c = &p->comps[i];
    const struct acc_alloc_component *ac = c->comp;
    const struct acc_site_cfg *site = acc_config_site(cfg, ac->site);
    /* The candidates, in order: the names the reservation reports, or the
     * site's configured list (expanded once, with the configuration), or
     * SITE-n1, SITE-n2, ... made as needed. */
    struct acc_hostlist reported = {0};
    const char *const *names = NULL;
    size_t total;
    bool is_reported = ac->node_names && *ac->node_names;
    if (is_reported) {
        if (hosts_reported(ac->node_names, &reported)) {
            acc_hostlist_release(&reported);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        names = (const char *const *)reported.names;
        total = reported.n;
    } else if (site && site->host_names) {
        names = (const char *const *)site->host_names;
        total = site->n_host_names;
    } else {
        total = (size_t)(site ? site->nodes : ac->nodes);
    }
    c->hosts = calloc((size_t)ac->nodes, sizeof *c->hosts);
    if (!c->hosts) {
        acc_hostlist_release(&reported);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* Components on one site share its names (configured ones, or those of
     * the one reservation they share): each takes the next free ones. */
    char made[160];
    for (size_t k = 0; k < total && c->n_hosts < (size_t)ac->nodes; k++) {
        const char *name = names ? names[k] : made;
        if (!names)
            snprintf(made, sizeof made, "%s-n%zu", ac->site, k + 1);
        if (taken(p, i, ac->site, name))
            continue;
        if (!(c->hosts[c->n_hosts] = strdup(name))) {
            acc_hostlist_release(&reported);
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        c->n_hosts++;
    }
    acc_hostlist_release(&reported);
    if (c->n_hosts < (size_t)ac->nodes)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "site %s: component %s needs %lld hosts, its %s names only %zu",
                             ac->site, ac->name, (long long)ac->nodes,
                             is_reported ? "reservation" : "host list", c->n_hosts);
    const char *contact = site && site->contact ? site->contact : ac->site;
    if (!(c->contact = strdup(contact)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

acc_err acc_launch_hosts_build(const struct acc_agreement *a, const struct acc_config *cfg,
                               const char *directory, struct acc_launch_hosts *out,
                               struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    out->agreement = a;
    out->router_port = cfg->launch.router_port;
    out->comps = calloc(a->n_comps ? a->n_comps : 1, sizeof *out->comps);
    out->directory = strdup(directory ? directory : ".");
    if (!out->comps || !out->directory) {
        acc_launch_hosts_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    out->n_comps = a->n_comps;
    for (size_t i = 0; i < a->n_comps; i++) {
        out->comps[i].comp = &a->comps[i];
        out->comps[i].index = i;
        acc_err rc = resolve(out, i, cfg, err);
        if (rc) {
            acc_launch_hosts_release(out);
            return rc;
        }
    }
    return ACC_OK;
}
