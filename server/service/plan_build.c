/* SPDX-License-Identifier: Apache-2.0 */
/* plan_build.c - the engine items of one assignment of sites (part of the
 * planner; plan.h, plan_internal.h): components on one site share one node
 * reservation, links between the same two sites share one bandwidth
 * reservation, a link inside one site needs none. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

void acc_plan_release(struct acc_plan *p)
{
    if (!p)
        return;
    acc_engine_items_release(p->items, p->n_items);
    for (size_t i = 0; i < p->n_items; i++)
        free(p->labels[i]);
    free(p->labels);
    free(p->items);
    free(p->site_of);
    free(p->item_of_comp);
    free(p->item_of_link);
    free(p->link_of);
    free(p->comps);
    free(p->links);
    for (size_t i = 0; i < p->n_gen_names; i++)
        free(p->gen_names[i]);
    free(p->gen_names);
    free(p->account);
    memset(p, 0, sizeof *p);
}

static acc_err build_alloc(const struct acc_offer *o, struct acc_plan *p, struct acc_error *err)
{
    size_t nc = o->n_components, nl = o->n_links, max_items = nc + nl;
    p->site_of = calloc(nc, sizeof *p->site_of);
    p->item_of_comp = calloc(nc, sizeof *p->item_of_comp);
    p->item_of_link = calloc(nl ? nl : 1, sizeof *p->item_of_link);
    p->link_of = calloc(nl ? nl : 1, sizeof *p->link_of);
    p->items = calloc(max_items, sizeof *p->items);
    p->labels = calloc(max_items, sizeof *p->labels);
    p->comps = calloc(nc, sizeof *p->comps);
    p->links = calloc(nl ? nl : 1, sizeof *p->links);
    if (!p->site_of || !p->item_of_comp || !p->item_of_link || !p->link_of || !p->items ||
        !p->labels || !p->comps || !p->links)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    memcpy(p->comps, o->components, nc * sizeof *p->comps);
    p->n_comps = nc;
    if (nl)
        memcpy(p->links, o->links, nl * sizeof *p->links);
    p->n_links = nl;
    return ACC_OK;
}

static size_t find_item(const struct acc_plan *p, enum acc_resource_kind kind, const char *name)
{
    size_t k;
    for (k = 0; k < p->n_items; k++) {
        if (p->items[k].res.kind == kind && strcmp(p->items[k].res.name, name) == 0)
            break;
    }
    return k;
}

/* A new item for resource `name`, labelled "site NAME" or "link NAME". */
static acc_err add_item(struct acc_plan *p, enum acc_resource_kind kind, const char *name,
                        const char *what, struct acc_adapter *adapter, struct acc_error *err)
{
    struct acc_engine_item *it = &p->items[p->n_items];
    char label[128];
    snprintf(label, sizeof label, "%s %s", what, name);
    p->labels[p->n_items] = strdup(label);
    it->adapter = adapter;
    it->res = (struct acc_resource){.kind = kind, .name = name};
    it->label = p->labels[p->n_items];
    p->n_items++;
    if (!it->label)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

static acc_err build_nodes(const struct acc_plan_env *env, const struct acc_offer *o,
                           const char *const *sites, struct acc_plan *p, struct acc_error *err)
{
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_site_cfg *s = acc_config_site(env->cfg, sites[i]);
        p->site_of[i] = s->name;
        size_t k = find_item(p, ACC_RES_NODES, s->name);
        acc_err rc = ACC_OK;
        if (k == p->n_items && (rc = add_item(p, ACC_RES_NODES, s->name, "site",
                                              env->site_adapter(env->ctx, s->name), err)))
            return rc;
        p->items[k].res.amount += o->components[i].nodes;
        p->item_of_comp[i] = k;
        if (p->items[k].res.amount > s->nodes)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "site %s has %" PRId64 " nodes, fewer than its components need",
                                 s->name, s->nodes);
    }
    return ACC_OK;
}

static acc_err build_links(const struct acc_plan_env *env, const struct acc_offer *o,
                           struct acc_plan *p, struct acc_error *err)
{
    for (size_t i = 0; i < o->n_links; i++) {
        const struct acc_link_req *l = &o->links[i];
        const char *sa = p->site_of[l->a], *sb = p->site_of[l->b];
        p->item_of_link[i] = ACC_PLAN_NO_ITEM;
        if (strcmp(sa, sb) == 0)
            continue; /* within one site: no network reservation */
        const struct acc_link_cfg *lc = acc_config_link_between(env->cfg, sa, sb);
        if (!lc)
            return acc_error_set(err, ACC_ERR_NO_LINK, "no network link joins %s and %s (link %s)",
                                 sa, sb, l->name);
        p->link_of[i] = lc;
        size_t k = find_item(p, ACC_RES_BANDWIDTH, lc->name);
        acc_err rc = ACC_OK;
        if (k == p->n_items && (rc = add_item(p, ACC_RES_BANDWIDTH, lc->name, "link",
                                              env->network_adapter(env->ctx, lc->network), err)))
            return rc;
        p->items[k].res.amount += l->bandwidth;
        p->item_of_link[i] = k;
        if (p->items[k].res.amount > lc->capacity)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "network link %s has %" PRId64
                                 " Mbit/s, less than the offer's links through it need",
                                 lc->name, lc->capacity);
    }
    return ACC_OK;
}

acc_err plan_build(const struct acc_plan_env *env, const struct acc_offer *o,
                   const char *const *sites, struct acc_plan *p, struct acc_error *err)
{
    memset(p, 0, sizeof *p);
    acc_err rc = build_alloc(o, p, err);
    if (!rc)
        rc = build_nodes(env, o, sites, p, err);
    if (!rc)
        rc = build_links(env, o, p, err);
    /* Whom every reservation is for: a site daemon maps it to an account
     * of its own (the offer outlives the plan and its negotiation). */
    bool someone = o->identity.user || o->identity.subject;
    char account[ACC_ACCOUNT_NAME_MAX];
    if (!rc &&
        acc_config_account_of(env->cfg, o->initiator, &o->identity, account, sizeof account) &&
        !(p->account = strdup(account)))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t k = 0; !rc && k < p->n_items; k++) {
        p->items[k].res.identity = someone ? &o->identity : NULL;
        if (p->items[k].res.kind == ACC_RES_NODES)
            p->items[k].res.account = p->account;
        if (!p->items[k].adapter)
            rc = acc_error_set(err, ACC_ERR_INTERNAL, "no adapter for %s", p->items[k].label);
    }
    if (rc)
        acc_plan_release(p);
    return rc;
}
