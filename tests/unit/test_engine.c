/* SPDX-License-Identifier: Apache-2.0 */
/* test_engine.c - the negotiation engine against scripted fake adapters. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "fake_adapter.h"
#include "testutil.h"

#define H  3600
#define T0 ((acc_time)1900000000) /* a fixed "now" in 2030 */

static struct acc_engine *eng;

/* What the hooks saw. */
struct record {
    pthread_mutex_t lock;
    struct acc_booking log[256]; /* every journal write, in order */
    bool durable[256];           /* whether each was asked to be on disk before returning */
    size_t n_log;
    struct acc_trace trace;
    bool stop;
    unsigned orphans;
};

static struct record rec;

static acc_err journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                       struct acc_error *err)
{
    (void)err;
    struct record *r = ctx;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < n && r->n_log < 256; i++) {
        r->durable[r->n_log] = durable;
        r->log[r->n_log++] = b[i];
    }
    pthread_mutex_unlock(&r->lock);
    return ACC_OK;
}

static void on_trace(void *ctx, const struct acc_trace_event *ev)
{
    struct record *r = ctx;
    pthread_mutex_lock(&r->lock);
    acc_trace_add(&r->trace, ev);
    pthread_mutex_unlock(&r->lock);
}

static bool on_stopped(void *ctx)
{
    return ((struct record *)ctx)->stop;
}

static void on_orphan(void *ctx, struct acc_adapter *ad, const struct acc_booking *b)
{
    (void)ctx;
    acc_adapter_cancel(ad, b->key, b->local_id, NULL);
    pthread_mutex_lock(&rec.lock);
    rec.orphans++;
    pthread_mutex_unlock(&rec.lock);
}

static int setup(void)
{
    pthread_mutex_init(&rec.lock, NULL);
    struct acc_engine_options o = {.max_threads = 32, .orphan = on_orphan};
    return acc_engine_new(&o, &eng, NULL) ? 1 : 0;
}

static int teardown(void)
{
    acc_engine_free(eng);
    acc_trace_release(&rec.trace);
    return 0;
}

/* Three sites and the frames each previews. */
struct world {
    struct acc_adapter *ad[3];
    struct fake *f[3];
    struct acc_engine_item items[3];
};

static void world_open(struct world *w, const char *const names[3])
{
    static const char *const labels[] = {"site a", "site b", "site c"};
    memset(w, 0, sizeof *w);
    for (int i = 0; i < 3; i++) {
        w->ad[i] = fake_open(names[i], ACC_RES_NODES, &w->f[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w->ad[i]);
        w->items[i].adapter = w->ad[i];
        w->items[i].res =
            (struct acc_resource){.kind = ACC_RES_NODES, .name = names[i], .amount = 4};
        w->items[i].label = labels[i];
        acc_time open[] = {T0, T0 + 100 * H};
        fake_frames(w->f[i], open, 1);
    }
    acc_trace_release(&rec.trace);
    rec.n_log = 0;
    rec.stop = false;
    rec.orphans = 0;
}

static void world_close(struct world *w)
{
    acc_engine_items_release(w->items, 3);
    for (int i = 0; i < 3; i++)
        acc_adapter_close(w->ad[i]);
}

static struct acc_engine_request request(struct world *w, enum acc_strategy s)
{
    struct acc_engine_request r = {
        .agreement = "aaaabbbbccccdddd",
        .earliest = T0,
        .deadline = T0 + 100 * H,
        .duration = 2 * H,
        .strategy = s,
        .max_rounds = 32,
        .call_timeout_us = 2000000,
        .items = w->items,
        .n_items = 3,
        .hooks = {journal, on_trace, on_stopped, &rec},
    };
    return r;
}

static size_t count_trace(enum acc_trace_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < rec.trace.n; i++)
        n += rec.trace.v[i].kind == k;
    return n;
}

static const char *const abc[3] = {"a", "b", "c"};

/* The detail of the first trace event of kind k ("" when none). */
static const char *trace_detail(enum acc_trace_kind k)
{
    for (size_t i = 0; i < rec.trace.n; i++)
        if (rec.trace.v[i].kind == k)
            return rec.trace.v[i].detail ? rec.trace.v[i].detail : "";
    return "";
}

/* True when s holds every one of the NULL-terminated words; prints s if not. */
static bool says(const char *s, const char *const *words)
{
    for (; *words; words++) {
        if (!strstr(s, *words)) {
            fprintf(stderr, "\n'%s' does not say '%s'\n", s, *words);
            return false;
        }
    }
    return true;
}

static void test_agree_at_once(void)
{
    struct world w;
    world_open(&w, abc);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.start, T0);
    CU_ASSERT_EQUAL(res.end, T0 + 2 * H);
    CU_ASSERT_EQUAL(res.rounds, 1);
    CU_ASSERT_EQUAL(res.rollbacks, 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 1);
        CU_ASSERT_EQUAL(w.items[i].booking.state, ACC_BOOKING_RESERVED);
        CU_ASSERT_TRUE(fake_has(w.f[i], w.items[i].booking.key, NULL));
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_QUERY), 1); /* verified */
    }
    /* Every intent was journaled before any outcome. */
    CU_ASSERT_EQUAL(rec.n_log, 6);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(rec.log[i].state, ACC_BOOKING_INTENT);
        CU_ASSERT_TRUE(rec.durable[i]); /* on disk before any reservation is asked for */
        CU_ASSERT_EQUAL(rec.log[3 + i].state, ACC_BOOKING_RESERVED);
    }
    CU_ASSERT_EQUAL(count_trace(ACC_TRACE_PREVIEW), 3);
    CU_ASSERT_EQUAL(count_trace(ACC_TRACE_AGREE), 1);
    world_close(&w);
}

/* Staircase frames: a [0,2h) [3h,5h) [6h,...); b [1h,3.5h) [4.5h,6.5h) [7h,...).
 * Two hours fit in both only from 7h. */
static void staircase(struct world *w)
{
    acc_time a[] = {T0, T0 + 2 * H, T0 + 3 * H, T0 + 5 * H, T0 + 6 * H, T0 + 100 * H};
    acc_time b[] = {T0 + H,          T0 + 7 * H / 2, T0 + 9 * H / 2,
                    T0 + 13 * H / 2, T0 + 7 * H,     T0 + 100 * H};
    fake_frames(w->f[0], a, 3);
    fake_frames(w->f[1], b, 3);
}

static void test_iterate_to_latest_start(void)
{
    struct world w;
    world_open(&w, abc);
    staircase(&w);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_ITERATIVE);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.start, T0 + 7 * H);
    /* 0 -> 1h -> 3h -> 4.5h -> 6h -> 7h -> agreed: six preview rounds. */
    CU_ASSERT_EQUAL(res.rounds, 6);
    CU_ASSERT_EQUAL(fake_calls(w.f[2], FAKE_PREVIEW), 6);
    CU_ASSERT_EQUAL(fake_calls(w.f[0], FAKE_RESERVE), 1);
    world_close(&w);
}

static void test_intersect_jumps(void)
{
    struct world w;
    world_open(&w, abc);
    staircase(&w);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.start, T0 + 7 * H);
    CU_ASSERT_EQUAL(res.rounds, 1);
    world_close(&w);
}

static void test_verify_mismatch_rollback_retry(void)
{
    struct world w;
    world_open(&w, abc);
    /* b's resource manager places the first reservation an hour late. */
    fake_script(w.f[1], FAKE_LATER, H);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.start, T0 + H); /* retried from the latest effective start */
    CU_ASSERT_EQUAL(res.rollbacks, 1);
    CU_ASSERT_EQUAL(res.rounds, 2);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_RESERVE), 2);
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_CANCEL), 1); /* the first round undone */
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 1);
        acc_time at;
        CU_ASSERT_TRUE(fake_has(w.f[i], w.items[i].booking.key, &at));
        CU_ASSERT_EQUAL(at, T0 + H);
    }
    CU_ASSERT_EQUAL(count_trace(ACC_TRACE_ROLLBACK), 1);
    CU_ASSERT_EQUAL(count_trace(ACC_TRACE_CANCEL), 3);
    CU_ASSERT(says(trace_detail(ACC_TRACE_ROLLBACK),
                   (const char *const[]){"site b", "starts 2030-03-17T18:46:40Z",
                                         "not at the common start 2030-03-17T17:46:40Z", NULL}));
    world_close(&w);
}

static void test_verify_catches_shrink(void)
{
    struct world w;
    world_open(&w, abc);
    /* c says yes but books one node less: only the read-back shows it. */
    fake_script(w.f[2], FAKE_SHRINK, 1);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.rollbacks, 1);
    CU_ASSERT_EQUAL(res.start, T0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 1);
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_QUERY), 2);
    }
    /* The rollback says what differed: the nodes, not the start. */
    const char *why = trace_detail(ACC_TRACE_ROLLBACK);
    CU_ASSERT(says(why, (const char *const[]){"site c", "3 nodes", "4 asked", NULL}));
    CU_ASSERT_PTR_NULL(strstr(why, "common start"));
    world_close(&w);
}

static void test_verify_names_a_short_end(void)
{
    struct world w;
    world_open(&w, abc);
    fake_script(w.f[0], FAKE_LONGER, -60); /* a minute short */
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.rollbacks, 1);
    const char *why = trace_detail(ACC_TRACE_ROLLBACK);
    CU_ASSERT(says(why, (const char *const[]){"site a", "ends 2030-03-17T19:45:40Z",
                                              "2030-03-17T19:46:40Z asked", NULL}));
    CU_ASSERT_PTR_NULL(strstr(why, "common start"));
    world_close(&w);
}

static void test_longer_reservation_is_fine(void)
{
    struct world w;
    world_open(&w, abc);
    fake_script(w.f[1], FAKE_LONGER, 59); /* rounded up to the minute */
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.rollbacks, 0);
    CU_ASSERT_EQUAL(res.end, T0 + 2 * H);
    world_close(&w);
}

static void test_busy_retries(void)
{
    struct world w;
    world_open(&w, abc);
    fake_script(w.f[0], FAKE_BUSY, 0);
    fake_script(w.f[0], FAKE_BUSY, 0);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.rollbacks, 2);
    CU_ASSERT_EQUAL(fake_calls(w.f[1], FAKE_CANCEL), 2);
    CU_ASSERT_EQUAL(fake_live(w.f[1]), 1);
    world_close(&w);
}

static void test_no_slot(void)
{
    struct world w;
    world_open(&w, abc);
    acc_time short_frame[] = {T0, T0 + H};
    fake_frames(w.f[1], short_frame, 1);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_NO_SLOT);
    CU_ASSERT_EQUAL(res.err.code, ACC_ERR_NO_SLOT);
    CU_ASSERT_PTR_NOT_NULL(strstr(res.err.msg, "site b (b): 4 nodes are not free"));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_RESERVE), 0);
    CU_ASSERT_EQUAL(rec.n_log, 0);
    CU_ASSERT_EQUAL(count_trace(ACC_TRACE_REJECT), 1);

    /* Iterative gives up the same way. */
    r.strategy = ACC_STRATEGY_ITERATIVE;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_NO_SLOT);

    /* A window shorter than the duration: no adapter is even asked. */
    unsigned before = fake_calls(w.f[0], FAKE_PREVIEW);
    r.deadline = T0 + H;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_NO_SLOT);
    CU_ASSERT_EQUAL(fake_calls(w.f[0], FAKE_PREVIEW), before);
    world_close(&w);
}

static void test_reserve_failure_third_cancels_first_two(void)
{
    struct world w;
    world_open(&w, abc);
    fake_script(w.f[2], FAKE_FAIL, 0);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_FAILED);
    CU_ASSERT_EQUAL(res.err.code, ACC_ERR_ADAPTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(res.err.msg, "site c"));
    CU_ASSERT_EQUAL(fake_calls(w.f[0], FAKE_CANCEL), 1);
    CU_ASSERT_EQUAL(fake_calls(w.f[1], FAKE_CANCEL), 1);
    CU_ASSERT_EQUAL(fake_calls(w.f[2], FAKE_CANCEL), 0); /* it booked nothing */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 0);
    CU_ASSERT_EQUAL(w.items[0].booking.state, ACC_BOOKING_CANCELLED);
    CU_ASSERT_EQUAL(w.items[1].booking.state, ACC_BOOKING_CANCELLED);
    CU_ASSERT_EQUAL(w.items[2].booking.state, ACC_BOOKING_FAILED);
    /* The journal's last word on each is the same. */
    CU_ASSERT_TRUE_FATAL(rec.n_log >= 3);
    CU_ASSERT_EQUAL(rec.log[rec.n_log - 3].state, ACC_BOOKING_CANCELLED);
    CU_ASSERT_EQUAL(rec.log[rec.n_log - 2].state, ACC_BOOKING_CANCELLED);
    CU_ASSERT_EQUAL(rec.log[rec.n_log - 1].state, ACC_BOOKING_FAILED);
    world_close(&w);
}

static void test_unavailable_is_503(void)
{
    struct world w;
    world_open(&w, abc);
    fake_preview_error(w.f[1], ACC_ERR_UNAVAILABLE);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_FAILED);
    CU_ASSERT_EQUAL(res.err.code, ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(acc_err_http_status(res.err.code), 503);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_RESERVE), 0);
    world_close(&w);
}

/* A site that refuses the user (no account for them there) is a refusal the
 * user sees as that site's (403 naming it), not the server's fault (502);
 * anything else an adapter says stays the adapter's failure. */
static void test_site_refusal_is_403(void)
{
    struct world w;
    world_open(&w, abc);
    fake_preview_error(w.f[2], ACC_ERR_FORBIDDEN);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_FAILED);
    CU_ASSERT_EQUAL(res.err.code, ACC_ERR_FORBIDDEN);
    CU_ASSERT_EQUAL(acc_err_http_status(res.err.code), 403);
    CU_ASSERT_PTR_NOT_NULL(strstr(res.err.msg, "site c"));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_calls(w.f[i], FAKE_RESERVE), 0);
    world_close(&w);
}

static void test_hang_times_out_and_orphan_is_cancelled(void)
{
    struct world w;
    world_open(&w, abc);
    fake_script(w.f[2], FAKE_HANG, 600); /* answers after 600 ms */
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    r.call_timeout_us = 150000;
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_FAILED);
    CU_ASSERT_EQUAL(res.err.code, ACC_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(fake_live(w.f[0]), 0);
    CU_ASSERT_EQUAL(fake_live(w.f[1]), 0);
    /* The late answer is handed to the orphan hook, which cancels it. */
    for (int i = 0; i < 100 && (fake_live(w.f[2]) || !rec.orphans); i++)
        usleep(20000);
    CU_ASSERT_EQUAL(rec.orphans, 1);
    CU_ASSERT_EQUAL(fake_live(w.f[2]), 0);
    world_close(&w);
}

static void test_stop_rolls_back(void)
{
    struct world w;
    world_open(&w, abc);
    rec.stop = true;
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_STOPPED);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 0);
    world_close(&w);
}

static void test_round_limit(void)
{
    struct world w;
    world_open(&w, abc);
    for (int i = 0; i < 10; i++)
        fake_script(w.f[0], FAKE_BUSY, 0);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    r.max_rounds = 4;
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_NO_SLOT);
    CU_ASSERT_EQUAL(res.rounds, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(res.err.msg, "4 rounds"));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fake_live(w.f[i]), 0);
    world_close(&w);
}

static void test_common_start_arithmetic(void)
{
    struct acc_frame a[] = {{0, 10}, {20, 40}};
    struct acc_frame b[] = {{5, 25}, {30, 100}};
    struct acc_frames p[2] = {{a, 2, 2, false}, {b, 2, 2, false}};
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 2, 0, 5), 5);
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 2, 0, 6), 30); /* [20,25) too short */
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 2, 0, 10), 30);
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 2, 0, 11), -1);
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 2, 31, 9), 31);
    CU_ASSERT_EQUAL(acc_engine_common_start(p, 1, 0, 10), 0);
    struct acc_frames none = {NULL, 0, 0, false};
    CU_ASSERT_EQUAL(acc_engine_common_start(&none, 1, 0, 1), -1);
}

static void test_touching_frames_merge(void)
{
    /* An adapter that reports touching frames: the wrapper merges them, so a
     * duration spanning the seam still fits. */
    struct world w;
    world_open(&w, abc);
    acc_time seam[] = {T0, T0 + H, T0 + H, T0 + 3 * H};
    for (int i = 0; i < 3; i++)
        fake_frames(w.f[i], seam, 2);
    struct acc_engine_request r = request(&w, ACC_STRATEGY_INTERSECT);
    struct acc_engine_result res;
    ACC_ASSERT_OK(acc_engine_negotiate(eng, &r, &res));
    CU_ASSERT_EQUAL(res.outcome, ACC_ENGINE_AGREED);
    CU_ASSERT_EQUAL(res.start, T0);
    world_close(&w);
}

static const struct acc_test_case tests[] = {
    {"agree at once", test_agree_at_once},
    {"iterative: iterate to the latest start", test_iterate_to_latest_start},
    {"intersect: jump to the common frame", test_intersect_jumps},
    {"verify mismatch -> rollback -> retry", test_verify_mismatch_rollback_retry},
    {"verify catches a shrunk reservation", test_verify_catches_shrink},
    {"verify names a reservation that ends short", test_verify_names_a_short_end},
    {"busy resource -> rollback -> retry", test_busy_retries},
    {"a reservation that ends later than asked is accepted", test_longer_reservation_is_fine},
    {"no slot -> rejected with reasons", test_no_slot},
    {"reserve failure at the third adapter cancels the first two",
     test_reserve_failure_third_cancels_first_two},
    {"adapter down -> 503, nothing booked", test_unavailable_is_503},
    {"a site's refusal of the user -> 403, nothing booked", test_site_refusal_is_403},
    {"hung adapter times out; its late booking is cancelled",
     test_hang_times_out_and_orphan_is_cancelled},
    {"stop rolls back", test_stop_rolls_back},
    {"round limit", test_round_limit},
    {"common start arithmetic", test_common_start_arithmetic},
    {"touching frames merge", test_touching_frames_merge},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"engine", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
