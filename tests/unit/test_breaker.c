/* SPDX-License-Identifier: Apache-2.0 */
/* test_breaker.c - each adapter's bulkhead and circuit breaker
 * (server/engine/breaker.c) on a clock of the test's own: closed, open
 * after failures in a row, the cool-down, one probe (half-open) whose
 * answer closes or opens it again, the bound of calls in flight; then the
 * same through the engine with a fake adapter whose previews fail. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fake_adapter.h"
#include "testutil.h"

#define S 1000000 /* microseconds */

static struct acc_breaker *make(unsigned max_calls, unsigned failures, int64_t cooldown_us)
{
    struct acc_breaker_cfg cfg = {max_calls, failures, cooldown_us};
    struct acc_breaker *b = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_breaker_new(&cfg, &b, &err), ACC_OK);
    return b;
}

/* One call at now: admitted (and answered rc at once) or refused. */
static acc_err call(struct acc_breaker *b, const char *name, int64_t now, acc_err rc, bool *probe)
{
    struct acc_error err;
    bool p = false;
    acc_err r = acc_breaker_admit(b, name, true, now, &p, &err);
    if (probe)
        *probe = p;
    if (r)
        return r;
    acc_breaker_release(b, name);
    acc_breaker_outcome(b, name, rc, p, now);
    return ACC_OK;
}

static enum acc_breaker_state state(struct acc_breaker *b, const char *name, int64_t now)
{
    struct acc_engine_guard_state g;
    acc_breaker_get(b, name, now, &g);
    return g.state;
}

static void test_opens_after_failures_in_a_row(void)
{
    struct acc_breaker *b = make(0, 3, 10 * S);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int64_t t = 100 * S;
    /* two time-outs, then an answer (even an error) starts the count again */
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_ERR_TIMEOUT, NULL), ACC_OK);
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_ERR_UNAVAILABLE, NULL), ACC_OK);
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_ERR_ADAPTER, NULL), ACC_OK);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_CLOSED);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(call(b, "x", t, ACC_ERR_TIMEOUT, NULL), ACC_OK);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_OPEN);
    /* open: refused at once, naming the adapter and when it is tried again */
    struct acc_error err;
    bool probe;
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, t + 4 * S, &probe, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adapter x"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "circuit breaker is open"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(in 6 s)"));
    CU_ASSERT_EQUAL(err.retry_after, 6);
    /* another adapter is not touched */
    CU_ASSERT_EQUAL(call(b, "y", t, ACC_OK, NULL), ACC_OK);
    CU_ASSERT_EQUAL(state(b, "y", t), ACC_BREAKER_CLOSED);
    struct acc_engine_guard_state g;
    CU_ASSERT_TRUE(acc_breaker_get(b, "x", t + 4 * S, &g));
    CU_ASSERT_EQUAL(g.refused_open, 1);
    CU_ASSERT_EQUAL(g.refused_busy, 0);
    CU_ASSERT_EQUAL(g.opened, 1);
    CU_ASSERT_EQUAL(g.retry_in_s, 6);
    /* a check (no call made) is refused alike, and counted */
    CU_ASSERT_EQUAL(acc_breaker_check(b, "x", t + 4 * S, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(err.retry_after, 6);
    CU_ASSERT_EQUAL(acc_breaker_check(b, "y", t, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_breaker_check(b, "never", t, &err), ACC_OK);
    acc_breaker_get(b, "x", t, &g);
    CU_ASSERT_EQUAL(g.refused_open, 2);
    CU_ASSERT_EQUAL(acc_breaker_check(b, "x", t + 10 * S, &err), ACC_OK); /* a probe may go */
    CU_ASSERT_FALSE(acc_breaker_get(b, "never", t, &g));
    CU_ASSERT_EQUAL(g.state, ACC_BREAKER_CLOSED);
    acc_breaker_free(b);
}

static void test_probe_closes_or_opens_again(void)
{
    struct acc_breaker *b = make(0, 1, 10 * S);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int64_t t = 5 * S;
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_ERR_TIMEOUT, NULL), ACC_OK);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_OPEN);
    CU_ASSERT_EQUAL(call(b, "x", t + 9 * S, ACC_OK, NULL), ACC_ERR_UNAVAILABLE);
    /* the cool-down is over: one probe goes, the others wait for it */
    struct acc_error err;
    bool probe = false, other = true;
    t += 10 * S;
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, t, &probe, &err), ACC_OK);
    CU_ASSERT_TRUE(probe);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_HALF_OPEN);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", false, t, &other, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_FALSE(other);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "probe"));
    /* the probe times out: open again for a whole cool-down */
    acc_breaker_release(b, "x");
    acc_breaker_outcome(b, "x", ACC_ERR_TIMEOUT, true, t);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_OPEN);
    CU_ASSERT_EQUAL(call(b, "x", t + 9 * S, ACC_OK, NULL), ACC_ERR_UNAVAILABLE);
    /* the next probe answers: closed, and calls go through again */
    t += 10 * S;
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_OK, &probe), ACC_OK);
    CU_ASSERT_TRUE(probe);
    CU_ASSERT_EQUAL(state(b, "x", t), ACC_BREAKER_CLOSED);
    CU_ASSERT_EQUAL(call(b, "x", t, ACC_OK, &probe), ACC_OK);
    CU_ASSERT_FALSE(probe);
    struct acc_engine_guard_state g;
    acc_breaker_get(b, "x", t, &g);
    CU_ASSERT_EQUAL(g.opened, 2);
    CU_ASSERT_EQUAL(g.failures, 0);
    acc_breaker_free(b);
}

/* Calls admitted before it opened answer late: only the probe decides. */
static void test_late_answers_do_not_decide(void)
{
    struct acc_breaker *b = make(0, 1, 10 * S);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    struct acc_error err;
    bool p1, p2;
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p1, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p2, &err), ACC_OK);
    acc_breaker_outcome(b, "x", ACC_ERR_TIMEOUT, p1, S);
    CU_ASSERT_EQUAL(state(b, "x", S), ACC_BREAKER_OPEN);
    acc_breaker_outcome(b, "x", ACC_OK, p2, 2 * S);
    CU_ASSERT_EQUAL(state(b, "x", 2 * S), ACC_BREAKER_OPEN);
    acc_breaker_release(b, "x");
    acc_breaker_release(b, "x");
    acc_breaker_free(b);
}

static void test_bulkhead_bound(void)
{
    struct acc_breaker *b = make(2, 0, 0); /* no breaker: the bound alone */
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    struct acc_error err;
    bool p;
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adapter x"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "2 calls to it are in flight"));
    CU_ASSERT_EQUAL(err.retry_after, 1);
    /* calls that hold no slot (prompt adapters), and other adapters, go */
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", false, 0, &p, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "y", true, 0, &p, &err), ACC_OK);
    struct acc_engine_guard_state g;
    acc_breaker_get(b, "x", 0, &g);
    CU_ASSERT_EQUAL(g.in_flight, 2);
    CU_ASSERT_EQUAL(g.refused_busy, 1);
    /* the slot is held until the adapter returns, not until an outcome */
    acc_breaker_outcome(b, "x", ACC_ERR_TIMEOUT, false, 0);
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_ERR_UNAVAILABLE);
    acc_breaker_release(b, "x");
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_OK);
    /* failures never open it when failures is 0 */
    for (int i = 0; i < 10; i++)
        acc_breaker_outcome(b, "x", ACC_ERR_TIMEOUT, false, 0);
    CU_ASSERT_EQUAL(state(b, "x", 0), ACC_BREAKER_CLOSED);
    acc_breaker_free(b);
}

/* An open breaker with its bulkhead full at the end of the cool-down: busy,
 * and the breaker waits for a slot to probe. */
static void test_probe_waits_for_a_slot(void)
{
    struct acc_breaker *b = make(1, 1, S);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    struct acc_error err;
    bool p;
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 0, &p, &err), ACC_OK);
    acc_breaker_outcome(b, "x", ACC_ERR_TIMEOUT, p, 0); /* abandoned; its worker still runs */
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 2 * S, &p, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in flight"));
    CU_ASSERT_EQUAL(state(b, "x", 2 * S), ACC_BREAKER_OPEN);
    acc_breaker_release(b, "x"); /* the hung call returned */
    CU_ASSERT_EQUAL(acc_breaker_admit(b, "x", true, 2 * S, &p, &err), ACC_OK);
    CU_ASSERT_TRUE(p);
    acc_breaker_release(b, "x");
    acc_breaker_outcome(b, "x", ACC_OK, p, 2 * S);
    CU_ASSERT_EQUAL(state(b, "x", 2 * S), ACC_BREAKER_CLOSED);
    acc_breaker_free(b);
}

/* Through the engine: previews that fail as unreachable open the breaker;
 * the next preview is refused without calling the adapter. */
static void test_engine_refuses_while_open(void)
{
    struct acc_engine_options eo = {.breaker_failures = 2, .breaker_cooldown_us = 60 * S};
    struct acc_engine *e = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_engine_new(&eo, &e, &err));
    struct fake *f;
    struct acc_adapter *ad = fake_open("hung", ACC_RES_NODES, &f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    fake_preview_error(f, ACC_ERR_UNAVAILABLE);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "hung", .amount = 1};
    struct acc_frames fr;
    acc_frames_init(&fr);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(acc_engine_preview(e, ad, &res, 0, 3600, 60, S, &fr, &err),
                        ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(fake_calls(f, FAKE_PREVIEW), 2);
    CU_ASSERT_EQUAL(acc_engine_preview(e, ad, &res, 0, 3600, 60, S, &fr, &err),
                    ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(fake_calls(f, FAKE_PREVIEW), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "circuit breaker is open"));
    CU_ASSERT_TRUE(err.retry_after > 50 && err.retry_after <= 60);
    struct acc_engine_guard_state g;
    acc_engine_guard(e, "hung", &g);
    CU_ASSERT_EQUAL(g.state, ACC_BREAKER_OPEN);
    CU_ASSERT_EQUAL(g.refused_open, 1);
    acc_frames_release(&fr);
    CU_ASSERT_TRUE(acc_engine_free(e));
    acc_adapter_close(ad);
}

/* A negotiation whose items share an adapter holds one slot of its
 * bulkhead: with a bound of 1, three items of one adapter are previewed. */
static void test_one_slot_per_batch(void)
{
    struct acc_engine_options eo = {.max_calls_per_adapter = 1, .breaker_failures = 5};
    struct acc_engine *e = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_engine_new(&eo, &e, &err));
    struct fake *f;
    struct acc_adapter *ad = fake_open("net", ACC_RES_BANDWIDTH, &f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    const acc_time frames[] = {0, 7200};
    fake_frames(f, frames, 1);
    struct acc_engine_item items[3];
    memset(items, 0, sizeof items);
    static const char *const names[] = {"l1", "l2", "l3"};
    for (int i = 0; i < 3; i++)
        items[i] = (struct acc_engine_item){
            .adapter = ad,
            .res = {.kind = ACC_RES_BANDWIDTH, .name = names[i], .amount = 10},
            .label = names[i]};
    struct acc_engine_request rq = {.agreement = "slot",
                                    .earliest = 0,
                                    .deadline = 7200,
                                    .duration = 60,
                                    .strategy = ACC_STRATEGY_INTERSECT,
                                    .max_rounds = 1,
                                    .call_timeout_us = 5 * S,
                                    .items = items,
                                    .n_items = 3};
    struct acc_frames out[3];
    for (int i = 0; i < 3; i++)
        acc_frames_init(&out[i]);
    CU_ASSERT_EQUAL(acc_engine_preview_items(e, &rq, out, &err), ACC_OK);
    CU_ASSERT_EQUAL(fake_calls(f, FAKE_PREVIEW), 3);
    struct acc_engine_guard_state g;
    acc_engine_guard(e, "net", &g);
    CU_ASSERT_EQUAL(g.refused_busy, 0);
    CU_ASSERT_EQUAL(g.in_flight, 0); /* the slot is free again */
    for (int i = 0; i < 3; i++)
        acc_frames_release(&out[i]);
    CU_ASSERT_TRUE(acc_engine_free(e));
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"one slot per negotiation and adapter", test_one_slot_per_batch},
    {"opens after failures in a row", test_opens_after_failures_in_a_row},
    {"the probe closes it or opens it again", test_probe_closes_or_opens_again},
    {"late answers do not decide", test_late_answers_do_not_decide},
    {"the bulkhead's bound", test_bulkhead_bound},
    {"the probe waits for a slot", test_probe_waits_for_a_slot},
    {"the engine refuses while open", test_engine_refuses_while_open},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"breaker", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
