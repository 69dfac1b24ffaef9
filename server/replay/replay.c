/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c - the core of accordd --replay (replay.h): jobs placed in submit
 * order on live free frames plus an in-memory overlay of the replay's own
 * placements.  Pure: the live frames come from the caller's provider, and
 * nothing is booked anywhere.
 *
 * n nodes of a site are free at t when live_free(t) >= n + overlay(t).
 * With previews only, for each overlay level L met in the window the
 * provider's frames for n + L nodes give the instants where n + L are free;
 * those inside the overlay's segments at level L are the instants where n
 * are free for the replay.  The live frames of (site, amount) are fetched
 * once for the whole window and kept: the live calendars do not change
 * during a replay, so a replay costs at most one provider call per site
 * and node count (plus the continuations of truncated answers). */
#include "replay.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/calendar/calendar.h"
#include "../../lib/common/hash.h"

struct live_cache {
    struct acc_frames *by_amount; /* [nodes + 1]; index 0 unused */
    bool *have;
};

struct run {
    const struct acc_replay_setup *s;
    struct acc_calendar cal[ACC_REPLAY_MAX_SITES]; /* the overlay */
    struct live_cache lc[ACC_REPLAY_MAX_SITES];
    struct acc_replay_stats *st;
    struct acc_error *err;
};

/* The live frames of amount nodes at site c over the whole window. */
static acc_err live_frames(struct run *r, size_t c, int64_t amount, const struct acc_frames **out)
{
    const struct acc_replay_setup *s = r->s;
    struct live_cache *lc = &r->lc[c];
    *out = &lc->by_amount[amount];
    if (lc->have[amount])
        return ACC_OK;
    struct acc_frames *f = &lc->by_amount[amount];
    struct acc_frames part;
    acc_frames_init(&part);
    acc_time from = s->from;
    acc_err rc = ACC_OK;
    while (from < s->until) {
        if (r->st->previews >= ACC_REPLAY_MAX_PREVIEWS) {
            rc = acc_error_set(r->err, ACC_ERR_CAPACITY,
                               "replay: more than %d previews; replay fewer jobs (--jobs) or "
                               "lower [negotiation] horizon",
                               ACC_REPLAY_MAX_PREVIEWS);
            break;
        }
        r->st->previews++;
        acc_frames_reset(&part);
        if ((rc = s->live(s->ctx, c, amount, from, s->until, &part, r->err)))
            break;
        acc_time last = from;
        for (size_t i = 0; i < part.n && !rc; i++) {
            acc_time a = part.v[i].start > from ? part.v[i].start : from;
            acc_time b = part.v[i].end < s->until ? part.v[i].end : s->until;
            if (b <= a || a < last)
                continue; /* outside the window, or not sorted: ignored */
            last = b;
            if (f->n && f->v[f->n - 1].end == a) {
                f->v[f->n - 1].end = b; /* a continuation joins its predecessor */
                continue;
            }
            if (r->st->frames >= ACC_REPLAY_MAX_FRAMES)
                rc =
                    acc_error_set(r->err, ACC_ERR_CAPACITY,
                                  "replay: more than %d live frames; replay fewer jobs (--jobs) or "
                                  "lower [negotiation] horizon",
                                  ACC_REPLAY_MAX_FRAMES);
            else if (acc_frames_push(f, a, b))
                rc = acc_error_set(r->err, ACC_ERR_NOMEM, "out of memory");
            else
                r->st->frames++;
        }
        if (rc || !part.truncated || !part.n || last <= from)
            break;
        from = last; /* nothing is known after the last frame: ask from there */
    }
    acc_frames_release(&part);
    if (!rc)
        lc->have[amount] = true;
    return rc;
}

/* The first frame of f that ends after t. */
static size_t first_after(const struct acc_frames *f, acc_time t)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->v[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The earliest s >= t at which n nodes of site c are free for the replay
 * during [s, s + d), ending by the window's end; -1 when there is none.
 * Steps through the overlay's levels from t on; within each, the live
 * frames of n + level nodes say where n are free for the replay. */
static acc_err site_earliest(struct run *r, size_t c, int64_t n, acc_time t, int64_t d,
                             acc_time *out)
{
    const struct acc_calendar *cal = &r->cal[c];
    acc_time until = r->s->until;
    struct acc_cal_walk walk;
    int64_t level = acc_calendar_walk_start(&walk, cal, t), next_level = 0;
    acc_time next = 0;
    bool more = acc_calendar_walk_next(&walk, &next, &next_level);
    acc_time a = t, run_s = -1, run_e = -1;
    *out = -1;
    while (a < until) {
        acc_time b = more && next < until ? next : until;
        if (n + level <= acc_calendar_capacity(cal)) {
            const struct acc_frames *f;
            acc_err rc = live_frames(r, c, n + level, &f);
            if (rc)
                return rc;
            for (size_t i = first_after(f, a); i < f->n && f->v[i].start < b; i++) {
                acc_time x = f->v[i].start > a ? f->v[i].start : a;
                acc_time y = f->v[i].end < b ? f->v[i].end : b;
                if (run_s >= 0 && x == run_e) {
                    run_e = y;
                } else {
                    run_s = x;
                    run_e = y;
                }
                if (run_e - run_s >= d) {
                    *out = run_s;
                    return ACC_OK;
                }
            }
        }
        if (b >= until || !more)
            break;
        a = b;
        level = next_level;
        more = acc_calendar_walk_next(&walk, &next, &next_level);
    }
    return ACC_OK;
}

/* The earliest common start >= t of a placement: each site's earliest in
 * turn until all agree (cannot miss a common slot). */
static acc_err common_start(struct run *r, const int64_t *per, acc_time t, int64_t d, acc_time *out)
{
    for (bool again = true; again;) {
        again = false;
        for (size_t c = 0; c < r->s->n_sites; c++) {
            if (!per[c])
                continue;
            acc_time e;
            acc_err rc = site_earliest(r, c, per[c], t, d, &e);
            if (rc)
                return rc;
            if (e < 0) {
                *out = -1;
                return ACC_OK;
            }
            if (e > t) {
                t = e;
                again = true;
            }
        }
    }
    *out = t;
    return ACC_OK;
}

/* Free nodes of site c at t for the replay: the most nodes whose live
 * frames hold t, less the overlay there. */
static acc_err free_at(struct run *r, size_t c, acc_time t, int64_t *out)
{
    int64_t lo = 0, hi = r->s->sites[c].nodes;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        const struct acc_frames *f;
        acc_err rc = live_frames(r, c, mid, &f);
        if (rc)
            return rc;
        size_t i = first_after(f, t);
        if (i < f->n && f->v[i].start <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t used = acc_calendar_peak(&r->cal[c], t, t + 1);
    *out = lo > used ? lo - used : 0;
    return ACC_OK;
}

static acc_err check_setup(const struct acc_replay_setup *s, const struct acc_replay_job *jobs,
                           size_t n, struct acc_error *err)
{
    if (!s->live || !s->sites || s->n_sites < 1 || s->n_sites > ACC_REPLAY_MAX_SITES)
        return acc_error_set(err, ACC_ERR_INVALID, "replay: 1 to %d sites and a provider",
                             ACC_REPLAY_MAX_SITES);
    if (s->candidates < 1 || s->candidates > ACC_REPLAY_MAX_CANDS)
        return acc_error_set(err, ACC_ERR_INVALID, "replay: 1 to %d candidates per job",
                             ACC_REPLAY_MAX_CANDS);
    if (s->until <= s->from)
        return acc_error_set(err, ACC_ERR_INVALID, "replay: the window ends before it starts");
    for (size_t c = 0; c < s->n_sites; c++) {
        if (s->sites[c].nodes < 1 || s->sites[c].nodes > 10000000)
            return acc_error_set(err, ACC_ERR_INVALID, "replay: site %s: 1 to 10000000 nodes",
                                 s->sites[c].name);
    }
    if (n > ACC_REPLAY_MAX_JOBS)
        return acc_error_set(err, ACC_ERR_CAPACITY, "replay: %zu jobs, at most %d (--jobs)", n,
                             ACC_REPLAY_MAX_JOBS);
    for (size_t i = 0; i < n; i++) {
        const struct acc_replay_job *j = &jobs[i];
        int64_t sum = 0;
        if (j->n_comp < 1 || j->n_comp > ACC_REPLAY_MAX_PARTS || (j->flexible && j->n_comp != 1))
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "replay: job %zu: 1 to %d components (one when flexible)", i + 1,
                                 ACC_REPLAY_MAX_PARTS);
        for (size_t k = 0; k < j->n_comp; k++) {
            if (j->comp[k] < 1)
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "replay: job %zu: a component of %" PRId64 " nodes", i + 1,
                                     j->comp[k]);
            sum += j->comp[k];
        }
        if (sum != j->total || j->duration < 1)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "replay: job %zu: total %" PRId64 " is not the sum of its "
                                 "components, or its duration is under 1 s",
                                 i + 1, j->total);
        if (i && j->submit < jobs[i - 1].submit)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "replay: job %zu is submitted before job %zu", i + 1, i);
    }
    return ACC_OK;
}

/* The candidates of job i: on the free counts at t, else on capacities. */
static acc_err candidates(struct run *r, size_t i, const struct acc_replay_job *j, acc_time t,
                          struct acc_placement *cand, size_t *n, struct acc_replay_placement *o)
{
    const struct acc_replay_setup *s = r->s;
    int64_t idle[ACC_REPLAY_MAX_SITES], size[ACC_REPLAY_MAX_SITES];
    for (size_t c = 0; c < s->n_sites; c++) {
        size[c] = s->sites[c].nodes;
        acc_err rc = free_at(r, c, t, &idle[c]);
        if (rc)
            return rc;
    }
    struct acc_policy_request req = {
        .n_components = j->n_comp, .sizes = j->comp, .total = j->total};
    req.type = j->n_comp > 1 ? ACC_REQ_NONFIXED : j->flexible ? ACC_REQ_FLEXIBLE : ACC_REQ_TOTAL;
    struct acc_policy_opts o_pol = s->policy;
    if (!acc_policy_accepts(o_pol.id, req.type)) {
        acc_policy_opts_init(&o_pol, ACC_POLICY_EARLIEST);
        o_pol.tiebreak = s->policy.tiebreak;
        o->fell_back = true;
    }
    uint64_t rng = s->seed ^ ((uint64_t)(i + 1) * ACC_GOLDEN64);
    o_pol.rng = &rng;
    size_t max = o_pol.id == ACC_POLICY_EARLIEST ? ACC_REPLAY_MAX_CANDS : s->candidates;
    struct acc_policy_system sys = {.n_clusters = s->n_sites, .idle = idle, .size = size};
    acc_err rc = acc_policy_candidates(&sys, &req, &o_pol, cand, max, n, r->err);
    if (!rc && !*n) {
        o->on_capacity = true;
        sys.idle = size;
        rng = s->seed ^ ((uint64_t)(i + 1) * ACC_GOLDEN64);
        rc = acc_policy_candidates(&sys, &req, &o_pol, cand, max, n, r->err);
    }
    if (rc)
        acc_error_prefix(r->err, "replay: job %zu", i + 1);
    return rc;
}

static acc_err place(struct run *r, size_t i, const struct acc_replay_job *j,
                     struct acc_replay_placement *o)
{
    const struct acc_replay_setup *s = r->s;
    struct acc_placement cand[ACC_REPLAY_MAX_CANDS];
    size_t n = 0;
    acc_time t = j->submit > s->from ? j->submit : s->from;
    if (t >= s->until) {
        snprintf(o->why, sizeof o->why, "submitted after the window's end");
        return ACC_OK;
    }
    acc_err rc = candidates(r, i, j, t, cand, &n, o);
    if (rc)
        return rc;
    if (!n) {
        snprintf(o->why, sizeof o->why, "fits no placement on the configured sites");
        return ACC_OK;
    }
    bool earliest = o->fell_back || s->policy.id == ACC_POLICY_EARLIEST;
    acc_time best = -1;
    size_t best_k = 0;
    int64_t best_per[ACC_REPLAY_MAX_SITES] = {0};
    for (size_t k = 0; k < n; k++) {
        int64_t per[ACC_POLICY_MAX_CLUSTERS] = {0};
        acc_placement_per_cluster(&cand[k], s->n_sites, per);
        acc_time st;
        if ((rc = common_start(r, per, t, j->duration, &st)))
            return rc;
        if (st >= 0 && (best < 0 || st < best)) {
            best = st;
            best_k = k;
            memcpy(best_per, per, sizeof best_per);
        }
        if (best >= 0 && !earliest)
            break;
    }
    if (best < 0) {
        snprintf(o->why, sizeof o->why, "no common slot before the window's end");
        return ACC_OK;
    }
    for (size_t c = 0; c < s->n_sites; c++) {
        if (best_per[c] &&
            acc_calendar_add(&r->cal[c], best, best + j->duration, best_per[c]) != ACC_OK)
            return acc_error_set(r->err, ACC_ERR_INTERNAL,
                                 "replay: job %zu: the overlay refused its own slot", i + 1);
        o->n_sites += best_per[c] > 0;
    }
    const struct acc_placement *p = &cand[best_k];
    o->placed = true;
    o->start = best;
    o->end = best + j->duration;
    o->candidate = best_k + 1;
    o->n = p->n;
    for (size_t k = 0; k < p->n; k++) {
        o->site[k] = p->cluster[k];
        o->size[k] = p->size[k];
    }
    return ACC_OK;
}

acc_err acc_replay_run(const struct acc_replay_setup *setup, const struct acc_replay_job *jobs,
                       size_t n_jobs, struct acc_replay_placement *out,
                       struct acc_replay_stats *stats, struct acc_error *err)
{
    acc_err rc = check_setup(setup, jobs, n_jobs, err);
    if (rc)
        return rc;
    struct run r = {.s = setup, .st = stats, .err = err};
    memset(stats, 0, sizeof *stats);
    for (size_t c = 0; c < setup->n_sites; c++) {
        acc_calendar_init(&r.cal[c], setup->sites[c].nodes);
        size_t m = (size_t)setup->sites[c].nodes + 1;
        r.lc[c].by_amount = calloc(m, sizeof *r.lc[c].by_amount);
        r.lc[c].have = calloc(m, sizeof *r.lc[c].have);
        if (!r.lc[c].by_amount || !r.lc[c].have) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    for (size_t i = 0; i < n_jobs; i++) {
        memset(&out[i], 0, sizeof out[i]);
        if ((rc = place(&r, i, &jobs[i], &out[i])))
            goto out;
    }
out:
    for (size_t c = 0; c < setup->n_sites; c++) {
        acc_calendar_release(&r.cal[c]);
        for (int64_t a = 0; r.lc[c].by_amount && a <= setup->sites[c].nodes; a++)
            acc_frames_release(&r.lc[c].by_amount[a]);
        free(r.lc[c].by_amount);
        free(r.lc[c].have);
    }
    return rc;
}
