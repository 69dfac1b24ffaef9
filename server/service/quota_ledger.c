/* SPDX-License-Identifier: Apache-2.0 */
/* quota_ledger.c - a user's open agreements, counted race-free against
 * [quota] max_agreements (part of the service; see internal.h).
 *
 * Per user a set of ids that may be open: every agreement admitted in this
 * process (taken before its row is written, so that concurrent submissions
 * see each other whether or not the store has committed the rows yet:
 * a synchronous negotiation's row is written without waiting) and every
 * one the store shows open.  While the set is below the limit a submission
 * is admitted without a read.  At the limit the set is made again under
 * the user's lock: the store's open agreements (Pending, terminating, or
 * Observed until their end) and, of the ids it does not show, those the
 * store does not have yet (written but not committed); the ones that ended
 * drop out.  A union by id: nothing is counted twice, and an agreement
 * being written is never missed.
 *
 * A submission with an Idempotency-Key is stored first (the store finds a
 * repeated key) and admitted after: until then it is a candidate, which no
 * count includes.
 *
 * Without [auth] every request is the one user's, and one client could
 * take all its places: each client address then has a set of its own
 * too (the store's open agreements from that address), bounded by
 * max_agreements_per_address, and an agreement takes a place in both.
 *
 * Addresses come and go (a client of IPv6 has many): an address's set is
 * only a cache of what the store says, so it is dropped once nobody uses
 * it and none of its ids could be missing from the store (admitted longer
 * than LOST_US ago: written, or never will be), and made again from the
 * store when the address comes back.  So the sets kept are those of the
 * addresses that admitted an agreement in the last two minutes, not of
 * every address ever seen. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/timefmt.h"
#include "internal.h"

/* An id the store does not have this long after its admission was never
 * written (its write failed): it no longer counts. */
#define LOST_US (120 * (int64_t)1000000)

struct entry {
    char id[ACC_ID_LEN + 1];
    int64_t since; /* admitted (monotonic us) */
};

struct ledger_user {
    char *name;   /* "": everyone (no [auth]) */
    bool address; /* name is a client address (without [auth]), not a user */
    pthread_mutex_t lock;
    struct entry *ids; /* may be open */
    size_t n, cap;
    struct entry *cand; /* stored, not admitted yet */
    size_t n_cand, cap_cand;
    bool loaded;   /* ids holds every open agreement the store had */
    unsigned refs; /* callers holding it (user_of to user_put), under the ledger's lock */
    struct ledger_user *next;
};

void svc_ledger_init(struct svc_ledger *l)
{
    pthread_mutex_init(&l->lock, NULL);
    l->users = NULL;
}

static void user_free(struct ledger_user *u)
{
    pthread_mutex_destroy(&u->lock);
    free(u->name);
    free(u->ids);
    free(u->cand);
    free(u);
}

void svc_ledger_release(struct svc_ledger *l)
{
    while (l->users) {
        struct ledger_user *u = l->users;
        l->users = u->next;
        user_free(u);
    }
    pthread_mutex_destroy(&l->lock);
}

/* Under the ledger's lock: whether an address's set may be dropped (see
 * the top of the file).  Its own lock is not needed: with no reference
 * nobody changes it. */
static bool droppable(const struct ledger_user *u, int64_t now)
{
    if (!u->address || u->refs || u->n_cand)
        return false;
    for (size_t i = 0; i < u->n; i++)
        if (u->ids[i].since && now - u->ids[i].since < LOST_US)
            return false;
    return true;
}

/* Under the ledger's lock: drops the address sets nobody needs. */
static void sweep(struct svc_ledger *l)
{
    int64_t now = acc_mono_us();
    for (struct ledger_user **p = &l->users; *p;) {
        struct ledger_user *u = *p;
        if (droppable(u, now)) {
            *p = u->next;
            user_free(u);
        } else {
            p = &u->next;
        }
    }
}

/* The user's (or with address, the client address's) entry, made when
 * new, held until user_put; NULL when out of memory. */
static struct ledger_user *user_of(struct svc_ledger *l, const char *name, bool address)
{
    if (!name)
        name = "";
    pthread_mutex_lock(&l->lock);
    struct ledger_user *u = l->users;
    while (u && (u->address != address || strcmp(u->name, name) != 0))
        u = u->next;
    if (!u && address)
        sweep(l);
    if (!u && (u = calloc(1, sizeof *u))) {
        u->address = address;
        if ((u->name = strdup(name))) {
            pthread_mutex_init(&u->lock, NULL);
            u->next = l->users;
            l->users = u;
        } else {
            free(u);
            u = NULL;
        }
    }
    if (u)
        u->refs++;
    pthread_mutex_unlock(&l->lock);
    return u;
}

/* Gives back user_of's entry (NULL does nothing); an address's empty set
 * goes at once. */
static void user_put(struct svc_ledger *l, struct ledger_user *u)
{
    if (!u)
        return;
    pthread_mutex_lock(&l->lock);
    if (--u->refs == 0 && u->address && u->n == 0 && u->n_cand == 0) {
        for (struct ledger_user **p = &l->users; *p; p = &(*p)->next) {
            if (*p == u) {
                *p = u->next;
                user_free(u);
                break;
            }
        }
    }
    pthread_mutex_unlock(&l->lock);
}

static ptrdiff_t find(const struct entry *v, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].id, id) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

/* Appends an id (the callers know it is not there yet). */
static bool add(struct entry **v, size_t *n, size_t *cap, const char *id, int64_t since)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        void *p = realloc(*v, c * sizeof **v);
        if (!p)
            return false;
        *v = p;
        *cap = c;
    }
    memcpy((*v)[*n].id, id, ACC_ID_LEN + 1);
    (*v)[(*n)++].since = since;
    return true;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->id, ((const struct entry *)b)->id);
}

/* Sorts by id and drops repeats (an agreement listed in two states while
 * it changed between the queries). */
static void sort_unique(struct entry *v, size_t *n)
{
    if (*n < 2)
        return;
    qsort(v, *n, sizeof *v, by_id);
    size_t k = 1;
    for (size_t i = 1; i < *n; i++) {
        if (strcmp(v[i].id, v[k - 1].id) != 0)
            v[k++] = v[i];
    }
    *n = k;
}

static void drop(struct entry *v, size_t *n, const char *id)
{
    ptrdiff_t i = find(v, *n, id);
    if (i >= 0)
        v[i] = v[--*n];
}

/* Whether an agreement the store shows is open. */
static bool is_open(const struct acc_agreement *a, acc_time now)
{
    if (acc_state_is_final(a->state))
        return false;
    return a->state != ACC_STATE_OBSERVED || a->end == 0 || a->end > now;
}

/* The store's open agreements of the user into *out (at most `most` per
 * state: enough to see the limit reached); candidates left out. */
static acc_err list_open(struct acc_service *svc, const struct ledger_user *u, unsigned most,
                         struct entry **out, size_t *n, size_t *cap, struct acc_error *err)
{
    static const enum acc_state open[] = {ACC_STATE_PENDING, ACC_STATE_PENDING_AND_TERMINATING,
                                          ACC_STATE_OBSERVED, ACC_STATE_OBSERVED_AND_TERMINATING};
    acc_time now = acc_now();
    for (size_t s = 0; s < sizeof open / sizeof open[0]; s++) {
        struct acc_list_filter f = {.state = acc_state_name(open[s]),
                                    .initiator = !u->address && u->name[0] ? u->name : NULL,
                                    .client = u->address ? u->name : NULL,
                                    .from = open[s] == ACC_STATE_OBSERVED ? now : 0,
                                    .limit = most};
        struct acc_agreement_list l;
        acc_err rc = acc_store_agreement_list(svc->store, &f, &l, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < l.n && !rc; i++) {
            if (find(u->cand, u->n_cand, l.v[i].id) < 0 && !add(out, n, cap, l.v[i].id, 0))
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        }
        acc_agreement_list_release(&l);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

/* Whether an admitted agreement the store does not show open may still be:
 * it is not written yet, or the store cannot say. */
static bool maybe_open(struct acc_service *svc, const struct entry *e, acc_time now)
{
    struct acc_agreement a;
    struct acc_error err;
    acc_err rc = acc_store_agreement_get(svc->store, e->id, false, &a, &err);
    if (rc == ACC_ERR_NOT_FOUND)
        return acc_mono_us() - e->since < LOST_US;
    if (rc)
        return true;
    bool open = is_open(&a, now);
    acc_agreement_release(&a);
    return open;
}

/* The set made again from the store (see the top of the file): the open
 * agreements it lists, and those of the set it does not list that may
 * still be open. */
static acc_err reload(struct acc_service *svc, struct ledger_user *u, int64_t limit,
                      struct acc_error *err)
{
    struct entry *ids = NULL;
    size_t n = 0, cap = 0;
    unsigned most = limit < 100000 ? (unsigned)limit + 1 : 100001;
    acc_err rc = list_open(svc, u, most, &ids, &n, &cap, err);
    sort_unique(ids, &n);
    size_t listed = n;
    acc_time now = acc_now();
    for (size_t i = 0; !rc && i < u->n; i++) {
        struct entry *k = listed ? bsearch(&u->ids[i], ids, listed, sizeof *ids, by_id) : NULL;
        if (k)
            k->since = u->ids[i].since;
        else if (maybe_open(svc, &u->ids[i], now) &&
                 !add(&ids, &n, &cap, u->ids[i].id, u->ids[i].since))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (rc) {
        free(ids);
        return rc;
    }
    free(u->ids);
    u->ids = ids;
    u->n = n;
    u->cap = cap;
    u->loaded = true;
    return ACC_OK;
}

/* Takes a place for id in u's set (ACC_ERR_QUOTA, no message, with *open
 * set when it is at the limit). */
static acc_err admit_in(struct acc_service *svc, struct ledger_user *u, int64_t limit,
                        const char *id, size_t *open, struct acc_error *err)
{
    pthread_mutex_lock(&u->lock);
    /* The set never holds the id being admitted: it is new, or a candidate. */
    acc_err rc = ACC_OK;
    if (!u->loaded || (int64_t)u->n >= limit)
        rc = reload(svc, u, limit, err);
    *open = u->n;
    if (!rc && (int64_t)u->n >= limit)
        rc = ACC_ERR_QUOTA;
    else if (!rc && !add(&u->ids, &u->n, &u->cap, id, acc_mono_us()))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    else if (!rc)
        drop(u->cand, &u->n_cand, id);
    pthread_mutex_unlock(&u->lock);
    return rc;
}

static void forget_in(struct ledger_user *u, const char *id)
{
    pthread_mutex_lock(&u->lock);
    drop(u->ids, &u->n, id);
    drop(u->cand, &u->n_cand, id);
    pthread_mutex_unlock(&u->lock);
}

/* The client address's share, when it is bounded (without [auth]). */
static bool per_address(const struct svc_quota_who *w)
{
    return w->address && w->q.agreements_per_address != ACC_QUOTA_UNLIMITED;
}

acc_err svc_ledger_admit(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                         struct acc_error *err)
{
    int64_t limit = w->q.agreements;
    struct ledger_user *u = NULL, *a = NULL;
    acc_err rc = ACC_OK;
    if ((limit != ACC_QUOTA_UNLIMITED && !(u = user_of(&svc->ledger, w->user, false))) ||
        (per_address(w) && !(a = user_of(&svc->ledger, w->address, true)))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    size_t open = 0;
    rc = u ? admit_in(svc, u, limit, id, &open, err) : ACC_OK;
    if (rc == ACC_ERR_QUOTA)
        rc = acc_error_set(err, ACC_ERR_QUOTA,
                           "%s%s has %zu open agreements, the most allowed ([%s] "
                           "max_agreements = %" PRId64 "); terminate one or wait for one to end",
                           w->user ? "" : "everyone (without [auth] one user) ",
                           w->user ? w->user : "", open, w->section, limit);
    if (rc || !a)
        goto out;
    /* Without [auth] one address may take its share of the one user's. */
    int64_t share = w->q.agreements_per_address;
    if (!(rc = admit_in(svc, a, share, id, &open, err)))
        goto out;
    if (u)
        forget_in(u, id);
    if (rc == ACC_ERR_QUOTA)
        rc = acc_error_set(err, ACC_ERR_QUOTA,
                           "address %s has %zu open agreements, the most one client address "
                           "may have without [auth] ([%s] max_agreements_per_address = %" PRId64
                           "); terminate one or wait for one to end",
                           w->address, open, w->section, share);
out:
    user_put(&svc->ledger, a);
    user_put(&svc->ledger, u);
    return rc;
}

void svc_ledger_forget(struct acc_service *svc, const struct svc_quota_who *w, const char *id)
{
    /* Whatever the limits are now: they may have been reloaded (SIGHUP)
     * since the id was counted under others. */
    struct ledger_user *u;
    if ((u = user_of(&svc->ledger, w->user, false))) {
        forget_in(u, id);
        user_put(&svc->ledger, u);
    }
    if (w->address && (u = user_of(&svc->ledger, w->address, true))) {
        forget_in(u, id);
        user_put(&svc->ledger, u);
    }
}

static bool candidate_in(struct ledger_user *u, const char *id)
{
    pthread_mutex_lock(&u->lock);
    bool ok = add(&u->cand, &u->n_cand, &u->cap_cand, id, 0);
    pthread_mutex_unlock(&u->lock);
    return ok;
}

acc_err svc_ledger_candidate(struct acc_service *svc, const struct svc_quota_who *w, const char *id,
                             struct acc_error *err)
{
    struct ledger_user *u;
    bool ok = true;
    if (w->q.agreements != ACC_QUOTA_UNLIMITED) {
        ok = (u = user_of(&svc->ledger, w->user, false)) && candidate_in(u, id);
        user_put(&svc->ledger, u);
    }
    if (ok && per_address(w)) {
        ok = (u = user_of(&svc->ledger, w->address, true)) && candidate_in(u, id);
        user_put(&svc->ledger, u);
    }
    return ok ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}
