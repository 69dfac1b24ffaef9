/* SPDX-License-Identifier: Apache-2.0 */
/* modify_plan.c - what a change of a committed agreement books (part of the
 * service; modify.c runs it): the names and amounts checked against the
 * agreement, one engine item per reservation of the current version with
 * its new amount, the change in words, and the new version made from it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/strutil.h"
#include "internal.h"
/* The item with reservation key `key`, made when new. */
static acc_err item_for(struct svc_mod_plan *p, const char *key, enum acc_resource_kind kind,
                        const char *name, struct acc_adapter *ad, size_t *out,
                        struct acc_error *err)
{
    for (size_t k = 0; k < p->n; k++) {
        if (strcmp(p->items[k].booking.key, key) == 0) {
            *out = k;
            return ACC_OK;
        }
    }
    if (p->n == sizeof p->items / sizeof p->items[0])
        return acc_error_set(err, ACC_ERR_INVALID, "the agreement has too many reservations");
    if (!ad)
        return acc_error_set(err, ACC_ERR_INTERNAL, "no adapter for %s", name);
    struct acc_engine_item *it = &p->items[p->n];
    memset(it, 0, sizeof *it);
    acc_strlcpy(it->booking.key, key, sizeof it->booking.key); /* the old key, until booked */
    acc_strlcpy(p->old_keys[p->n], key, sizeof p->old_keys[p->n]);
    it->replaces = p->old_keys[p->n];
    snprintf(p->labels[p->n], sizeof p->labels[p->n], "%s %s",
             kind == ACC_RES_NODES ? "site" : "link", name);
    it->adapter = ad;
    it->res = (struct acc_resource){.kind = kind, .name = name};
    it->label = p->labels[p->n];
    *out = p->n++;
    return ACC_OK;
}

int64_t svc_mod_new_nodes(const struct acc_modification *m, const struct acc_alloc_component *c)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (strcmp(m->nodes[i].name, c->name) == 0)
            return m->nodes[i].value;
    return c->nodes;
}

int64_t svc_mod_new_bandwidth(const struct acc_modification *m, const struct acc_alloc_link *l)
{
    for (size_t i = 0; i < m->n_bandwidth; i++)
        if (strcmp(m->bandwidth[i].name, l->name) == 0)
            return m->bandwidth[i].value;
    return l->bandwidth;
}

/* Checks the names and amounts of m against a. */
static acc_err check_names(const struct acc_agreement *a, const struct acc_modification *m,
                           struct acc_error *err)
{
    for (size_t i = 0; i < m->n_nodes; i++) {
        size_t k = 0;
        while (k < a->n_comps && strcmp(a->comps[k].name, m->nodes[i].name) != 0)
            k++;
        if (k == a->n_comps)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %s has no component '%.63s'",
                                 a->id, m->nodes[i].name);
        if (m->nodes[i].value < 1)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "component %s: at least 1 node (asked: %" PRId64
                                 "); terminate the agreement to give every node back",
                                 a->comps[k].name, m->nodes[i].value);
    }
    for (size_t i = 0; i < m->n_bandwidth; i++) {
        size_t k = 0;
        while (k < a->n_links && strcmp(a->links[k].name, m->bandwidth[i].name) != 0)
            k++;
        if (k == a->n_links)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "agreement %s has no link '%.63s'", a->id,
                                 m->bandwidth[i].name);
        if (m->bandwidth[i].value < 1)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "link %s: at least 1 Mbit/s (asked: %" PRId64 ")",
                                 a->links[k].name, m->bandwidth[i].value);
        if (!a->links[k].reservation)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "link %s joins two components on one site and has no "
                                 "bandwidth reservation to change",
                                 a->links[k].name);
    }
    return ACC_OK;
}

/* An item per node reservation, with the components' new nodes. */
static acc_err plan_nodes(struct acc_service *svc, const struct acc_agreement *a,
                          const struct acc_modification *m, struct svc_mod_plan *p,
                          struct acc_error *err)
{
    acc_err rc;
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        p->item_of_comp[i] = SIZE_MAX;
        if (!c->reservation)
            continue;
        size_t k;
        if ((rc = item_for(p, c->reservation, ACC_RES_NODES, c->site,
                           svc_site_adapter(svc, c->site), &k, err)))
            return rc;
        p->items[k].res.amount += svc_mod_new_nodes(m, c);
        p->item_of_comp[i] = k;
        const struct acc_site_cfg *s = acc_config_site(svc->cfg, c->site);
        if (!s)
            return acc_error_set(err, ACC_ERR_UNKNOWN_SITE, "site %s is no longer configured",
                                 c->site);
        if (p->items[k].res.amount > s->nodes)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "site %s has %" PRId64 " nodes, fewer than the %" PRId64
                                 " the changed components need",
                                 s->name, s->nodes, p->items[k].res.amount);
    }
    return ACC_OK;
}

/* An item per bandwidth reservation, with the links' new bandwidths. */
static acc_err plan_links(struct acc_service *svc, const struct acc_agreement *a,
                          const struct acc_modification *m, struct svc_mod_plan *p,
                          struct acc_error *err)
{
    acc_err rc;
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        p->item_of_link[i] = SIZE_MAX;
        if (!l->reservation)
            continue;
        const struct acc_link_cfg *lc = acc_config_link_between(svc->cfg, l->site_a, l->site_b);
        if (!lc)
            return acc_error_set(err, ACC_ERR_NO_LINK, "no network link joins %s and %s any more",
                                 l->site_a, l->site_b);
        size_t k;
        if ((rc = item_for(p, l->reservation, ACC_RES_BANDWIDTH, lc->name,
                           svc_network_adapter(svc, lc->network), &k, err)))
            return rc;
        p->items[k].res.amount += svc_mod_new_bandwidth(m, l);
        p->item_of_link[i] = k;
        if (p->items[k].res.amount > lc->capacity)
            return acc_error_set(err, ACC_ERR_CAPACITY,
                                 "network link %s has %" PRId64 " Mbit/s, less than the %" PRId64
                                 " the changed links need",
                                 lc->name, lc->capacity, p->items[k].res.amount);
    }
    return ACC_OK;
}

/* Checks the names and amounts of m against a and builds the items. */
acc_err svc_mod_make_plan(struct acc_service *svc, const struct acc_agreement *a,
                          const struct acc_modification *m, struct svc_mod_plan *p,
                          struct acc_error *err)
{
    acc_err rc = check_names(a, m, err);
    if (rc)
        return rc;
    p->item_of_comp = malloc((a->n_comps ? a->n_comps : 1) * sizeof *p->item_of_comp);
    p->item_of_link = malloc((a->n_links ? a->n_links : 1) * sizeof *p->item_of_link);
    if (!p->item_of_comp || !p->item_of_link)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if ((rc = plan_nodes(svc, a, m, p, err)) || (rc = plan_links(svc, a, m, p, err)))
        return rc;
    /* whom the new bookings are for: as the agreement's first ones (a
     * site daemon maps it to its account again) */
    bool someone = a->identity.user || a->identity.subject;
    if (!acc_config_account_of(svc->cfg, a->initiator, &a->identity, p->account, sizeof p->account))
        p->account[0] = '\0';
    for (size_t k = 0; k < p->n; k++) {
        p->items[k].booking.key[0] = '\0'; /* the engine names the new ones */
        p->items[k].res.identity = someone ? &a->identity : NULL;
        if (p->items[k].res.kind == ACC_RES_NODES && p->account[0])
            p->items[k].res.account = p->account;
    }
    return ACC_OK;
}

/* What m changes, in words (the version's `change`). */
char *svc_mod_describe(const struct acc_agreement *a, const struct acc_modification *m,
                       acc_time start, acc_time end)
{
    struct acc_buf b = ACC_BUF_INIT;
    char t[40];
    if (start != a->start) {
        acc_time_format(start, t);
        acc_buf_printf(&b, "start %s; ", t);
    }
    if (end != a->end) {
        acc_time_format(end, t);
        acc_buf_printf(&b, "end %s; ", t);
    }
    for (size_t i = 0; i < m->n_nodes; i++)
        acc_buf_printf(&b, "nodes %s=%" PRId64 "; ", m->nodes[i].name, m->nodes[i].value);
    for (size_t i = 0; i < m->n_bandwidth; i++)
        acc_buf_printf(&b, "bandwidth %s=%" PRId64 "; ", m->bandwidth[i].name,
                       m->bandwidth[i].value);
    if (!acc_buf_ok(&b) || b.len < 2) {
        acc_buf_release(&b);
        return NULL;
    }
    b.data[b.len - 2] = '\0';
    return b.data;
}

/* Fills a (the current version) with the new one. */
acc_err svc_mod_apply(struct acc_agreement *a, const struct acc_modification *m,
                      const struct svc_mod_plan *p, acc_time start, acc_time end)
{
    a->start = start;
    a->end = end;
    for (size_t i = 0; i < a->n_comps; i++) {
        struct acc_alloc_component *c = &a->comps[i];
        c->nodes = svc_mod_new_nodes(m, c);
        if (p->item_of_comp[i] == SIZE_MAX)
            continue;
        const struct acc_engine_item *it = &p->items[p->item_of_comp[i]];
        free(c->reservation);
        free(c->local_id);
        free(c->node_names);
        c->reservation = acc_strdup(it->booking.key);
        c->local_id = acc_strdup(it->booking.local_id);
        c->node_names = it->nodes ? acc_strdup(it->nodes) : NULL;
        if (!c->reservation || !c->local_id || (it->nodes && !c->node_names))
            return ACC_ERR_NOMEM;
    }
    for (size_t i = 0; i < a->n_links; i++) {
        struct acc_alloc_link *l = &a->links[i];
        l->bandwidth = svc_mod_new_bandwidth(m, l);
        if (p->item_of_link[i] == SIZE_MAX)
            continue;
        const struct acc_engine_item *it = &p->items[p->item_of_link[i]];
        free(l->reservation);
        free(l->local_id);
        l->reservation = acc_strdup(it->booking.key);
        l->local_id = acc_strdup(it->booking.local_id);
        if (!l->reservation || !l->local_id)
            return ACC_ERR_NOMEM;
    }
    return ACC_OK;
}
