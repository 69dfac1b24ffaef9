/* SPDX-License-Identifier: Apache-2.0 */
/* site_ops.c - the adapter operations on behalf of one admitted peer.
 *
 * The site never trusts a peer's word beyond its limits: every preview and
 * reserve is checked against them here (largest amount, longest duration,
 * furthest start, open reservations) before an adapter sees it.  A
 * reservation is journalled as an intent before the adapter is called and
 * as reserved after, so a crash in between leaves a row that start-up
 * cancels at the adapter by key.  Keys are the peer's: the same key again
 * answers the stored reservation, another peer's key is not found.
 *
 * One wait for the disk per reserve: the intent is written lazily and the
 * "reserved" row durably, which carries the intent with it (site_store.c);
 * the answer goes out only after that.  A power loss between the two may
 * lose the intent while the adapter holds the booking, before the peer
 * heard of it; the peer cancels what it did not hear back about by key, and
 * a cancel of a key the journal does not know reaches every adapter, so
 * that booking goes too.  A crash of the daemon alone loses nothing.
 *
 * The adapters are opened by resources/, with the checks accordd makes;
 * what they serve (a site's nodes, each link's bandwidth) is listed here. */
#include "site_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/hash.h"
#include "../lib/common/log.h"
#include "../lib/common/strutil.h"
#include "site_jobs.h"

/* How often the journal is pruned of old rows, at most (seconds). */
#define SITE_PRUNE_EVERY 60

static bool key_ok(const char *key)
{
    size_t n = 0;
    for (; key[n]; n++) {
        char c = key[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-'))
            return false;
    }
    return n >= 1 && n <= 95;
}

static pthread_mutex_t *key_lock(struct acc_site *s, const char *key)
{
    return &s->key_locks[acc_fnv1a64(key) % SITE_KEY_LOCKS];
}

/* ---------------------------------------------------------------- adapters */

acc_err site_open_resources(struct acc_site *s, struct acc_error *err)
{
    const struct acc_resources_cfg *c = &s->cfg.res;
    struct acc_resources_env env = {.db_path = s->cfg.db_path, .durable = s->cfg.durable};
    acc_err rc = acc_resources_open(c, &env, &s->adapters, err);
    if (rc)
        return rc;
    s->res = calloc(c->n_sites + c->n_links + 1, sizeof *s->res);
    if (!s->res)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    /* The sites' nodes, then each network's links in the order of the file. */
    for (size_t i = 0; i < c->n_sites; i++)
        s->res[s->n_res++] = (struct site_resource){
            c->sites[i].name, ACC_RES_NODES, c->sites[i].nodes, acc_resources_at(s->adapters, i)};
    for (size_t i = 0; i < c->n_networks; i++) {
        struct acc_adapter *ad = acc_resources_at(s->adapters, c->n_sites + i);
        for (size_t k = 0; k < c->n_links; k++) {
            const struct acc_link_cfg *l = &c->links[k];
            if (strcmp(l->network, c->networks[i].name) == 0)
                s->res[s->n_res++] =
                    (struct site_resource){l->name, ACC_RES_BANDWIDTH, l->capacity, ad};
        }
    }
    return ACC_OK;
}

void site_close_resources(struct acc_site *s)
{
    acc_resources_interrupt(s->adapters);
    acc_resources_close(s->adapters);
    free(s->res);
    s->adapters = NULL;
    s->res = NULL;
    s->n_res = 0;
}

static const struct site_resource *resource(struct acc_site *s, enum acc_resource_kind kind,
                                            const char *name, struct acc_error *err)
{
    for (size_t i = 0; i < s->n_res; i++) {
        if (s->res[i].kind == kind && strcmp(s->res[i].name, name) == 0)
            return &s->res[i];
    }
    char known[512] = "";
    for (size_t i = 0; i < s->n_res; i++) {
        if (s->res[i].kind != kind)
            continue;
        size_t l = strlen(known);
        snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", s->res[i].name);
    }
    acc_error_set(err, ACC_ERR_NOT_FOUND, "site %s has no %s resource '%.128s' (it has: %s)",
                  s->cfg.name, acc_resource_kind_name(kind), name, *known ? known : "none");
    return NULL;
}

/* ------------------------------------------------------------------ limits */

static acc_err check_limits(const struct acc_site *s, const struct site_peer *peer,
                            const struct site_ask *a, acc_time start, acc_time now,
                            struct acc_error *err)
{
    int64_t max = a->kind == ACC_RES_NODES ? peer->max_nodes : peer->max_bandwidth;
    if (a->amount > max)
        return acc_error_set(
            err, ACC_ERR_PEER_LIMIT, "site %s: %lld %s is over peer %s's limit (%s = %lld)",
            s->cfg.name, (long long)a->amount, a->kind == ACC_RES_NODES ? "nodes" : "Mbit/s",
            peer->name, a->kind == ACC_RES_NODES ? "max_nodes" : "max_bandwidth", (long long)max);
    if (a->duration > peer->max_duration)
        return acc_error_set(err, ACC_ERR_PEER_LIMIT,
                             "site %s: a duration of %lld s is over peer %s's limit "
                             "(max_duration = %lld s)",
                             s->cfg.name, (long long)a->duration, peer->name,
                             (long long)peer->max_duration);
    if (start > now + peer->max_advance)
        return acc_error_set(err, ACC_ERR_PEER_LIMIT,
                             "site %s: a start %lld s from now is beyond peer %s's limit "
                             "(max_advance = %lld s)",
                             s->cfg.name, (long long)(start - now), peer->name,
                             (long long)peer->max_advance);
    return ACC_OK;
}

static bool ask_valid(const struct site_ask *a, struct acc_error *err)
{
    if (!a->resource || !*a->resource)
        return !acc_error_set(err, ACC_ERR_BAD_REQUEST, "the resource is empty");
    if (a->amount <= 0 || a->duration <= 0)
        return !acc_error_set(err, ACC_ERR_BAD_REQUEST, "amount and duration must be positive");
    return true;
}

/* --------------------------------------------------------------- previews */

acc_err site_op_preview(struct acc_site *s, const struct site_peer *peer, const struct site_ask *a,
                        struct acc_frames *out, struct acc_error *err)
{
    if (!ask_valid(a, err))
        return err->code;
    if (a->until <= a->from)
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "the preview's until is not after from");
    const struct site_resource *r = resource(s, a->kind, a->resource, err);
    if (!r)
        return err->code;
    acc_time now = acc_now();
    acc_err rc = check_limits(s, peer, a, a->from, now, err);
    if (rc)
        return rc;
    /* Frames are where a reservation may lie: none may start beyond the
     * furthest start this peer is given. */
    acc_time until = a->until;
    if (until > now + peer->max_advance + a->duration)
        until = now + peer->max_advance + a->duration;
    /* An identity the mapfile does not map is refused here already, so
     * that the broker learns it before anything is booked anywhere. */
    char account[64];
    if ((rc = site_map_identity(s, a->identity, account, sizeof account, err)))
        return rc;
    struct acc_resource res = {.kind = a->kind,
                               .name = r->name,
                               .amount = a->amount,
                               .account = account[0] ? account : NULL};
    /* Another peer's key counts for nothing: only the peer's own
     * reservation may be counted as free. */
    const char *old = NULL;
    struct site_booking b = {0};
    if (a->old_key && *a->old_key && key_ok(a->old_key) &&
        site_store_get(s->store, a->old_key, &b, NULL) == ACC_OK &&
        strcmp(b.peer, peer->name) == 0 && b.state == SITE_RESERVED)
        old = a->old_key;
    site_booking_release(&b);
    return acc_adapter_preview_replacing(r->ad, old, &res, a->from, until, a->duration, out, err);
}

/* ------------------------------------------------------------ reservations */

static bool same_ask(const struct site_booking *b, const struct site_ask *a)
{
    return b->kind == a->kind && strcmp(b->resource, a->resource) == 0 && b->amount == a->amount &&
           b->start == a->start && b->end == a->start + a->duration &&
           acc_streq(b->old_key, a->old_key);
}

static void maybe_prune(struct acc_site *s, acc_time now)
{
    int64_t last = atomic_load(&s->pruned);
    if (now - last < SITE_PRUNE_EVERY || !atomic_compare_exchange_strong(&s->pruned, &last, now))
        return;
    struct acc_error e;
    if (site_store_prune(s->store, now, &e))
        acc_log_warn("site %s: %s", s->cfg.name, e.msg);
}

/* An adapter's answer that says nothing was booked. */
static bool refused(acc_err rc)
{
    return rc == ACC_ERR_BUSY || rc == ACC_ERR_CAPACITY || rc == ACC_ERR_INVALID ||
           rc == ACC_ERR_BAD_REQUEST || rc == ACC_ERR_NOT_FOUND || rc == ACC_ERR_UNSUPPORTED ||
           rc == ACC_ERR_NO_SLOT;
}

/* A new reservation: the key has no row (the caller holds its lock). */
static acc_err reserve_new(struct acc_site *s, const struct site_peer *peer, const char *key,
                           const struct site_ask *a, struct site_booking *out,
                           struct acc_error *err)
{
    const struct site_resource *r = resource(s, a->kind, a->resource, err);
    if (!r)
        return err->code;
    acc_time now = acc_now();
    acc_err rc = check_limits(s, peer, a, a->start, now, err);
    if (rc)
        return rc;
    char account[64];
    if ((rc = site_map_identity(s, a->identity, account, sizeof account, err)))
        return rc;
    int64_t open = 0;
    bool room = false;
    rc =
        site_store_open_fewer(s->store, peer->name, now, peer->max_reservations, &room, &open, err);
    if (rc)
        return rc;
    if (!room)
        return acc_error_set(err, ACC_ERR_PEER_LIMIT,
                             "site %s: peer %s holds %lld open reservations, its limit "
                             "(max_reservations = %lld)",
                             s->cfg.name, peer->name, (long long)open,
                             (long long)peer->max_reservations);
    struct site_booking b = {.kind = a->kind, .amount = a->amount, .start = a->start};
    acc_strlcpy(b.key, key, sizeof b.key);
    acc_strlcpy(b.peer, peer->name, sizeof b.peer);
    acc_strlcpy(b.resource, r->name, sizeof b.resource);
    acc_strlcpy(b.old_key, a->old_key ? a->old_key : "", sizeof b.old_key);
    acc_strlcpy(b.account, account, sizeof b.account);
    b.end = a->start + a->duration;
    /* Only the peer's own reservation may be replaced. */
    const char *old = NULL;
    struct site_booking ob = {0};
    if (*b.old_key && key_ok(b.old_key) &&
        site_store_get(s->store, b.old_key, &ob, NULL) == ACC_OK &&
        strcmp(ob.peer, peer->name) == 0 && ob.state == SITE_RESERVED)
        old = b.old_key;
    site_booking_release(&ob);
    if ((rc = site_store_intent(s->store, &b, now, err)) != ACC_OK)
        return rc;
    struct acc_resource res = {.kind = a->kind,
                               .name = r->name,
                               .amount = a->amount,
                               .account = b.account[0] ? b.account : NULL};
    rc = acc_adapter_reserve_replacing(r->ad, key, old, &res, a->start, a->duration, &b.res, err);
    if (rc) {
        /* A refusal booked nothing: the row goes.  Otherwise (a time-out or
         * an error may have booked) the key is cancelled at the adapter
         * before the row goes; if that fails too the intent stays for
         * recovery. */
        struct acc_error ce;
        if (refused(rc) || acc_adapter_cancel(r->ad, key, NULL, &ce) == ACC_OK)
            site_store_delete(s->store, key, true, NULL);
        else
            acc_log_warn("site %s: reservation %s: %s (the intent stays for recovery)", s->cfg.name,
                         key, ce.msg);
        return rc;
    }
    if ((rc = site_store_reserved(s->store, key, &b.res, acc_now(), err)) != ACC_OK) {
        struct acc_error ce;
        if (acc_adapter_cancel(r->ad, key, b.res.local_id, &ce) == ACC_OK)
            site_store_delete(s->store, key, false, NULL);
        acc_reservation_release(&b.res);
        return rc;
    }
    b.state = SITE_RESERVED;
    b.created = b.updated = now;
    *out = b;
    return ACC_OK;
}

acc_err site_op_reserve(struct acc_site *s, const struct site_peer *peer, const char *key,
                        const struct site_ask *a, struct site_booking *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!key_ok(key))
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "'%.96s' is not a reservation key", key);
    if (!ask_valid(a, err))
        return err->code;
    maybe_prune(s, acc_now());
    pthread_mutex_t *lock = key_lock(s, key);
    pthread_mutex_lock(lock);
    struct site_booking b = {0};
    acc_err rc = site_store_get(s->store, key, &b, err);
    if (rc == ACC_ERR_NOT_FOUND) {
        rc = reserve_new(s, peer, key, a, out, err);
        goto out;
    }
    if (rc)
        goto out;
    if (strcmp(b.peer, peer->name) != 0) {
        rc = acc_error_set(err, ACC_ERR_KEY_REUSED, "site %s: key %s is in use", s->cfg.name, key);
    } else if (b.state == SITE_CANCELLED) {
        rc = acc_error_set(err, ACC_ERR_STATE,
                           "site %s: reservation %s was cancelled; a cancelled key is not "
                           "booked again",
                           s->cfg.name, key);
    } else if (!same_ask(&b, a)) {
        rc = acc_error_set(err, ACC_ERR_KEY_REUSED,
                           "site %s: key %s already names a reservation of other terms",
                           s->cfg.name, key);
    } else if (b.state == SITE_RESERVED) {
        *out = b;
        memset(&b, 0, sizeof b);
    } else {
        /* An intent left by a crash that recovery could not cancel yet:
         * cancel it now and book afresh. */
        const struct site_resource *r = resource(s, b.kind, b.resource, err);
        if (!r) {
            rc = err->code;
        } else if ((rc = acc_adapter_cancel(r->ad, key, NULL, err)) == ACC_OK &&
                   (rc = site_store_delete(s->store, key, false, err)) == ACC_OK) {
            rc = reserve_new(s, peer, key, a, out, err);
        }
    }
out:
    pthread_mutex_unlock(lock);
    site_booking_release(&b);
    return rc;
}

/* The peer's booking of key in state reserved (others': not found). */
static acc_err own_reserved(struct acc_site *s, const struct site_peer *peer, const char *key,
                            struct site_booking *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!key_ok(key))
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "'%.96s' is not a reservation key", key);
    acc_err rc = site_store_get(s->store, key, out, err);
    if (rc == ACC_OK && (strcmp(out->peer, peer->name) != 0 || out->state != SITE_RESERVED)) {
        site_booking_release(out);
        rc = acc_error_set(err, ACC_ERR_NOT_FOUND, "site %s: no reservation %s", s->cfg.name, key);
    } else if (rc == ACC_ERR_NOT_FOUND) {
        acc_error_set(err, ACC_ERR_NOT_FOUND, "site %s: no reservation %s", s->cfg.name, key);
    }
    return rc;
}

acc_err site_op_booking(struct acc_site *s, const struct site_peer *peer, const char *key,
                        struct site_booking *out, struct acc_error *err)
{
    return own_reserved(s, peer, key, out, err);
}

acc_err site_op_query(struct acc_site *s, const struct site_peer *peer, const char *key,
                      struct site_booking *out, struct acc_error *err)
{
    acc_err rc = own_reserved(s, peer, key, out, err);
    if (rc)
        return rc;
    const struct site_resource *r = resource(s, out->kind, out->resource, err);
    struct acc_reservation now = {0};
    if (!r || (rc = acc_adapter_query(r->ad, key, out->res.local_id, &now, err)) != ACC_OK) {
        rc = r ? rc : err->code;
        site_booking_release(out);
        return rc;
    }
    acc_reservation_release(&out->res);
    out->res = now;
    return ACC_OK;
}

/* Cancels key at every adapter (cancel is idempotent: an unknown key is
 * success); the first failure is answered, after all were tried. */
static acc_err cancel_everywhere(struct acc_site *s, const char *key, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    for (size_t i = 0; i < acc_resources_count(s->adapters); i++) {
        struct acc_error e;
        acc_err r = acc_adapter_cancel(acc_resources_at(s->adapters, i), key, NULL, &e);
        if (r && !rc) {
            rc = r;
            if (err)
                *err = e;
        }
    }
    return rc;
}

acc_err site_op_cancel(struct acc_site *s, const struct site_peer *peer, const char *key,
                       struct acc_error *err)
{
    if (!key_ok(key))
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "'%.96s' is not a reservation key", key);
    pthread_mutex_t *lock = key_lock(s, key);
    pthread_mutex_lock(lock);
    struct site_booking b = {0};
    acc_time now = acc_now();
    acc_err rc = site_store_get(s->store, key, &b, err);
    if (rc == ACC_ERR_NOT_FOUND) {
        /* Nothing was journalled: the tombstone keeps a late reserve of this
         * key from booking, and every adapter forgets the key, in case a
         * power loss took a lazy intent whose booking the adapter kept. */
        rc = site_store_tombstone(s->store, peer->name, key, now, err);
        if (!rc)
            rc = cancel_everywhere(s, key, err);
        goto out;
    }
    if (rc || strcmp(b.peer, peer->name) != 0 || b.state == SITE_CANCELLED)
        goto out; /* another peer's key looks unknown: nothing is done */
    const struct site_resource *r = resource(s, b.kind, b.resource, err);
    if (!r) {
        rc = err->code;
        goto out;
    }
    rc = acc_adapter_cancel(r->ad, key, *b.res.local_id ? b.res.local_id : NULL, err);
    if (!rc)
        rc = site_store_set_state(s->store, key, SITE_CANCELLED, now, err);
    /* The proxies started inside it go with it (only the owner's cancel
     * gets here). */
    if (!rc && s->jobs)
        acc_site_jobs_cancel_key(s->jobs, key);
out:
    pthread_mutex_unlock(lock);
    site_booking_release(&b);
    return rc;
}

acc_err site_op_provision(struct acc_site *s, const struct site_peer *peer, const char *key,
                          const struct acc_flow *flow, struct acc_error *err)
{
    struct site_booking b;
    acc_err rc = own_reserved(s, peer, key, &b, err);
    if (rc)
        return rc;
    const struct site_resource *r = resource(s, b.kind, b.resource, err);
    rc = r ? acc_adapter_provision(r->ad, key, b.res.local_id, flow, err) : err->code;
    site_booking_release(&b);
    return rc;
}

acc_err site_op_provision_status(struct acc_site *s, const struct site_peer *peer, const char *key,
                                 struct acc_provision_status *out, struct acc_error *err)
{
    struct site_booking b;
    acc_err rc = own_reserved(s, peer, key, &b, err);
    if (rc)
        return rc;
    const struct site_resource *r = resource(s, b.kind, b.resource, err);
    rc = r ? acc_adapter_provision_status(r->ad, key, out, err) : err->code;
    site_booking_release(&b);
    return rc;
}

void site_op_health(struct acc_site *s, bool *up, char *detail, size_t detail_len, unsigned *caps)
{
    *up = true;
    *caps = ACC_CAP_THREADSAFE;
    acc_strlcpy(detail, "ok", detail_len);
    static const unsigned served[] = {ACC_CAP_NODES, ACC_CAP_BANDWIDTH, ACC_CAP_NODE_NAMES,
                                      ACC_CAP_PROVISION, ACC_CAP_REPLACE};
    for (size_t i = 0; i < acc_resources_count(s->adapters); i++) {
        struct acc_adapter *ad = acc_resources_at(s->adapters, i);
        for (size_t k = 0; k < sizeof served / sizeof *served; k++) {
            if (acc_adapter_has(ad, served[k]))
                *caps |= served[k];
        }
        struct acc_health h = {0};
        if (acc_adapter_health(ad, &h) || !h.up) {
            if (*up)
                snprintf(detail, detail_len, "%s: %s", acc_adapter_name(ad),
                         *h.detail ? h.detail : "down");
            *up = false;
        }
    }
    if (s->jobs)
        *caps |= ACC_CAP_SUBMIT;
}

/* --------------------------------------------------------------- recovery */

acc_err site_recover(struct acc_site *s, struct acc_error *err)
{
    struct site_booking *v = NULL;
    size_t n = 0;
    acc_err rc = site_store_intents(s->store, &v, &n, err);
    if (rc)
        return rc;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        struct acc_error e;
        const struct site_resource *r = resource(s, v[i].kind, v[i].resource, &e);
        if (r && acc_adapter_cancel(r->ad, v[i].key, NULL, &e) == ACC_OK &&
            site_store_set_state(s->store, v[i].key, SITE_CANCELLED, acc_now(), &e) == ACC_OK) {
            acc_log_info("site %s: recovery: reservation %s of peer %s cancelled by key",
                         s->cfg.name, v[i].key, v[i].peer);
        } else {
            left++;
            acc_log_warn("site %s: recovery: reservation %s: %s (it stays an intent)", s->cfg.name,
                         v[i].key, e.msg);
        }
        site_booking_release(&v[i]);
    }
    free(v);
    if (n)
        acc_log_info("site %s: recovery: %zu intent(s), %zu left", s->cfg.name, n, left);
    return ACC_OK;
}
