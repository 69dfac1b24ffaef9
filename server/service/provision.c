/* SPDX-License-Identifier: Apache-2.0 */
/* provision.c - handing the endpoints of committed agreements' link
 * reservations to the network adapters that install them on the wire
 * (ACC_CAP_PROVISION), retrying what failed, and what became of them for
 * the agreement's state (part of the service).
 *
 * NSI's model: the engine reserves; after the commit the service provisions
 * (hands over the flow: the addresses of the hosts of the link's two
 * components); the adapter activates the data plane by itself at the
 * reservation's start and removes it at the end or on cancel.  A failed
 * provisioning is logged and retried by housekeeping until it succeeds or
 * the reservation ends; at start-up every Observed agreement whose end is
 * still ahead is provisioned again (provision is idempotent). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "../launch/launch.h"
#include "flows.h"
#include "internal.h"

/* Does the network adapter of this link provision? */
static bool link_provisions(void *ctx, const struct acc_link_cfg *l)
{
    struct acc_adapter *ad = svc_network_adapter(ctx, l->network);
    return ad && acc_adapter_has(ad, ACC_CAP_PROVISION);
}

static bool any_to_provision(struct acc_service *svc, const struct acc_agreement *a)
{
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        if (!l->reservation || !*l->reservation || !l->link)
            continue;
        for (size_t k = 0; k < svc->cfg->res.n_links; k++) {
            if (strcmp(svc->cfg->res.links[k].name, l->link) == 0 &&
                link_provisions(svc, &svc->cfg->res.links[k]))
                return true;
        }
    }
    return false;
}

acc_err svc_provision(struct acc_service *svc, const struct acc_agreement *a, struct acc_error *err)
{
    if (!any_to_provision(svc, a))
        return ACC_OK;
    struct acc_launch_hosts hosts;
    acc_err rc = acc_launch_hosts_build(a, svc->cfg, NULL, &hosts, err);
    if (rc)
        return rc;
    struct acc_link_flows flows;
    rc = acc_flows_build(a, &hosts, svc->cfg, link_provisions, svc, &flows, err);
    acc_launch_hosts_release(&hosts);
    if (rc)
        return rc;
    /* Every reservation is tried; the first failure is reported. */
    acc_err first = ACC_OK;
    for (size_t i = 0; i < flows.n; i++) {
        const struct acc_link_flow *f = &flows.v[i];
        struct acc_adapter *ad = svc_network_adapter(svc, f->link->network);
        struct acc_error e;
        rc = acc_adapter_provision(ad, f->key, f->local_id, &f->flow, &e);
        if (rc && !first) {
            first = rc;
            acc_error_set(err, rc, "link %s, reservation %s: %s", f->link->name, f->key, e.msg);
        } else if (!rc) {
            acc_log_debug("agreement %s: link %s provisioned (%zu x %zu hosts)", a->id,
                          f->link->name, f->flow.n_a, f->flow.n_b);
        }
    }
    acc_flows_release(&flows);
    return first;
}

/* ------------------------------------------------------ the retry list */

/* Puts id on the list (once).  Out of memory is logged: the next start
 * provisions it again. */
static void retry_add(struct acc_service *svc, const char *id)
{
    struct svc_provision_retry *r = &svc->provision;
    pthread_mutex_lock(&r->lock);
    bool found = false;
    for (size_t i = 0; i < r->n && !found; i++)
        found = strcmp(r->v[i].id, id) == 0;
    if (!found) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 8;
            void *p = realloc(r->v, cap * sizeof *r->v);
            if (!p) {
                pthread_mutex_unlock(&r->lock);
                acc_log_error("agreement %s: out of memory; its links are provisioned again at "
                              "the next start",
                              id);
                return;
            }
            r->v = p;
            r->cap = cap;
        }
        memset(&r->v[r->n], 0, sizeof r->v[r->n]);
        acc_strlcpy(r->v[r->n].id, id, sizeof r->v[r->n].id);
        r->n++;
    }
    pthread_mutex_unlock(&r->lock);
}

void svc_provision_committed(struct acc_service *svc, const struct acc_agreement *a)
{
    struct acc_error err;
    if (svc_provision(svc, a, &err) == ACC_OK)
        return;
    acc_log_warn("agreement %s: provisioning its links failed: %s; retried until it succeeds or "
                 "the reservation ends",
                 a->id, err.msg);
    retry_add(svc, a->id);
}

acc_err svc_provision_recover(struct acc_service *svc, struct acc_error *err)
{
    char(*ids)[ACC_ID_LEN + 1] = NULL;
    size_t n = 0;
    acc_err rc =
        acc_store_agreement_ids(svc->store, ACC_STATE_BIT(ACC_STATE_OBSERVED), &ids, &n, err);
    if (rc)
        return rc;
    acc_time now = acc_now();
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) {
        struct acc_agreement a;
        if (acc_store_agreement_get(svc->store, ids[i], false, &a, NULL))
            continue;
        if (a.end > now && any_to_provision(svc, &a)) {
            retry_add(svc, a.id);
            queued++;
        }
        acc_agreement_release(&a);
    }
    free(ids);
    if (queued)
        acc_log_info("recovery: %zu agreement(s) with links to provision again", queued);
    return ACC_OK;
}

/* One attempt for entry i's agreement: true when it leaves the list. */
static bool retry_one(struct acc_service *svc, const char *id, char *last, size_t last_len)
{
    struct acc_agreement a;
    struct acc_error err;
    acc_err rc = acc_store_agreement_get(svc->store, id, false, &a, &err);
    if (rc == ACC_ERR_NOT_FOUND)
        return true;
    if (rc) {
        acc_log_error("provisioning agreement %s: %s", id, err.msg);
        return false;
    }
    bool done = a.state != ACC_STATE_OBSERVED || a.end <= acc_now();
    if (!done) {
        rc = svc_provision(svc, &a, &err);
        done = rc == ACC_OK;
        if (done) {
            acc_log_info("agreement %s: its links are provisioned", id);
        } else if (strcmp(last, err.msg) != 0) {
            acc_log_warn("agreement %s: provisioning its links failed again: %s", id, err.msg);
            acc_strlcpy(last, err.msg, last_len);
        }
    }
    acc_agreement_release(&a);
    return done;
}

void svc_provision_retry(struct acc_service *svc)
{
    struct svc_provision_retry *r = &svc->provision;
    /* Work on a copy: attempts call adapters and must not hold the lock. */
    pthread_mutex_lock(&r->lock);
    size_t n = r->n;
    struct svc_provision_entry *todo = n ? malloc(n * sizeof *todo) : NULL;
    if (todo)
        memcpy(todo, r->v, n * sizeof *todo);
    pthread_mutex_unlock(&r->lock);
    if (!todo)
        return;
    for (size_t i = 0; i < n && !atomic_load(&svc->stopping); i++) {
        bool done = retry_one(svc, todo[i].id, todo[i].last, sizeof todo[i].last);
        pthread_mutex_lock(&r->lock);
        for (size_t k = 0; k < r->n; k++) {
            if (strcmp(r->v[k].id, todo[i].id) != 0)
                continue;
            if (done)
                r->v[k] = r->v[--r->n];
            else
                memcpy(r->v[k].last, todo[i].last, sizeof r->v[k].last);
            break;
        }
        pthread_mutex_unlock(&r->lock);
    }
    free(todo);
}

size_t svc_provision_waiting(struct acc_service *svc)
{
    pthread_mutex_lock(&svc->provision.lock);
    size_t n = svc->provision.n;
    pthread_mutex_unlock(&svc->provision.lock);
    return n;
}

void svc_provision_init(struct svc_provision_retry *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
}

void svc_provision_release(struct svc_provision_retry *r)
{
    free(r->v);
    pthread_mutex_destroy(&r->lock);
    memset(r, 0, sizeof *r);
}

/* --------------------------------------------------- guarantee states */

static const char *guarantee_name(enum acc_guarantee g)
{
    switch (g) {
    case ACC_GUARANTEE_FULFILLED:
        return "Fulfilled";
    case ACC_GUARANTEE_VIOLATED:
        return "Violated";
    default:
        return "NotDetermined";
    }
}

void svc_link_guarantee(struct acc_service *svc, const struct acc_alloc_link *l,
                        struct acc_guarantee_view *out, char *reason, size_t reason_len)
{
    *out = (struct acc_guarantee_view){.name = l->name, .state = "NotDetermined", .link = l->link};
    const struct acc_link_cfg *lc = NULL;
    for (size_t k = 0; l->link && k < svc->cfg->res.n_links && !lc; k++) {
        if (strcmp(svc->cfg->res.links[k].name, l->link) == 0)
            lc = &svc->cfg->res.links[k];
    }
    if (!lc || !l->reservation || !link_provisions(svc, lc))
        return; /* nothing on the wire to observe */
    struct acc_provision_status st;
    struct acc_error err;
    acc_err rc = acc_adapter_provision_status(svc_network_adapter(svc, lc->network), l->reservation,
                                              &st, &err);
    if (rc) {
        acc_strlcpy(reason, err.msg, reason_len);
        out->reason = reason;
        return;
    }
    out->measured = true;
    out->state = guarantee_name(st.state);
    out->provisioned = st.provisioned;
    out->active = st.active;
    out->activated = st.activated;
    out->violated_at = st.state == ACC_GUARANTEE_VIOLATED ? st.violated_at : 0;
    if (st.state == ACC_GUARANTEE_VIOLATED && st.why[0]) {
        acc_strlcpy(reason, st.why, reason_len);
        out->reason = reason;
    }
    out->bytes = st.bytes;
    out->packets = st.packets;
    out->drops = st.drops;
}
