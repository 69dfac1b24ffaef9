/* SPDX-License-Identifier: Apache-2.0 */
/* test_tc_kernel.c - the tc adapter against the real kernel (needs root).
 *
 * The test makes its own topology: namespaces acc-tct-a and acc-tct-b joined
 * by a veth pair (tcta 10.232.0.1 <-> tctb 10.232.0.2), one link "a-b"
 * between sites sa and sb whose egress devices are tcta (leaving sa) and
 * tctb (leaving sb).  Everything is removed at exit, on a fatal signal, and
 * leftovers of an earlier run are removed before it starts. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/common/proc.h"
#include "adapter.h"
#include "tc_internal.h"
#include "testutil.h"

#define NS_A "acc-tct-a"
#define NS_B "acc-tct-b"

static char db[512];

static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    struct acc_proc_result r;
    int status = -1;
    if (acc_proc_run(argv, NULL, NULL, 30000, 1 << 20, &r, NULL) == ACC_OK)
        status = r.status;
    acc_proc_result_release(&r);
    return status;
}

static void topology_down(void)
{
    sh("ip netns del " NS_A " 2>/dev/null; ip netns del " NS_B " 2>/dev/null; "
       "ip link del tcta 2>/dev/null; true");
}

static void on_signal(int sig)
{
    topology_down();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int topology_up(void)
{
    topology_down();
    atexit(topology_down);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGSEGV, SIGBUS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_signal);
    signal(SIGPIPE, SIG_IGN);
    snprintf(db, sizeof db, "%s/accord.db", acc_test_tmpdir());
    return sh("set -e; ip netns add " NS_A "; ip netns add " NS_B "; "
              "ip link add tcta type veth peer name tctb; "
              "ip link set tcta netns " NS_A "; ip link set tctb netns " NS_B "; "
              "ip -n " NS_A " addr add 10.232.0.1/24 dev tcta; "
              "ip -n " NS_A " addr add 10.232.0.3/24 dev tcta; "
              "ip -n " NS_B " addr add 10.232.0.2/24 dev tctb; "
              "ip -n " NS_A " link set tcta up; ip -n " NS_B " link set tctb up; "
              "ip -n " NS_A " link set lo up; ip -n " NS_B " link set lo up");
}

static const struct acc_link_def links[] = {{"a-b", "sa", "sb", 100}};
static const struct acc_kv settings[] = {
    {"path.a-b.sa", NS_A "/tcta"}, {"path.a-b.sb", NS_B "/tctb"}, {"audit_interval", "1s"},
    {"activation_grace", "2s"},    {"command_timeout", "5s"},
};

static struct acc_adapter *open_tc(void)
{
    struct acc_adapter_env env = {.name = "wan",
                                  .section = "network wan",
                                  .db_path = db,
                                  .settings = settings,
                                  .n_settings = sizeof settings / sizeof settings[0],
                                  .links = links,
                                  .n_links = 1};
    struct acc_adapter *ad = NULL;
    struct acc_error err = {0};
    acc_err rc = acc_adapter_open(acc_adapter_kind_find("tc"), &env, &ad, &err);
    if (rc)
        fprintf(stderr, "open: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    return ad;
}

/* The kernel's class 1:id (0: any reservation's class) on ns/dev: its
 * bytes (or -1 when absent), and how many filters lead to it. */
static long long class_bytes(const char *ns, const char *dev, unsigned id, size_t *n_filters)
{
    struct tc_dev_state s;
    long long bytes = -1;
    if (tc_kernel_read(ns, dev, 5000, &s, NULL))
        return -2;
    for (size_t i = 0; i < s.n_classes; i++) {
        unsigned c = s.classes[i].id;
        if (c == id || (id == 0 && c >= TC_ID_MIN && c <= TC_ID_MAX))
            bytes = (long long)s.classes[i].bytes;
    }
    if (n_filters) {
        *n_filters = 0;
        for (size_t i = 0; i < s.n_filters; i++)
            *n_filters += s.filters[i].pref == id && s.filters[i].flow == id;
    }
    tc_dev_state_release(&s);
    return bytes;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Polls until class 1:id on both devices is present (want) or absent,
 * within ms; returns how long it took, or -1. */
static long wait_class(unsigned id, bool want, long ms)
{
    for (long t = 0; t <= ms; t += 50) {
        bool a = class_bytes(NS_A, "tcta", id, NULL) >= 0;
        bool b = class_bytes(NS_B, "tctb", id, NULL) >= 0;
        if (a == want && b == want)
            return t;
        sleep_ms(50);
    }
    return -1;
}

/* Polls r1's status until active is want_active and its state want (or
 * any, -1), within ms: the audit changes the kernel first and records what
 * it did after.  The last status read is in st. */
static bool status_soon(struct acc_adapter *ad, bool want_active, int want, long ms,
                        struct acc_provision_status *st)
{
    struct acc_error err = {0};
    for (long t = 0;; t += 50) {
        memset(st, 0, sizeof *st);
        acc_err rc = acc_adapter_provision_status(ad, "r1", st, &err);
        bool ok = rc == ACC_OK && st->active == want_active && (want < 0 || (int)st->state == want);
        if (ok)
            return true;
        if (t >= ms) {
            fprintf(stderr, "r1 after %ld ms: %s\n", ms,
                    rc                          ? err.msg
                    : st->active != want_active ? "active is not as wanted"
                                                : "its state is not as wanted");
            return false;
        }
        sleep_ms(50);
    }
}

static void sleep_until(acc_time t)
{
    while (acc_now() < t)
        sleep_ms(20);
}

static const char *addr_a[] = {"10.232.0.1"}, *addr_b[] = {"10.232.0.2"};
static const struct acc_flow flow = {"sa", "sb", addr_a, 1, addr_b, 1};

static void book(struct acc_adapter *ad, const char *key, acc_time start, int64_t dur,
                 bool provision)
{
    struct acc_resource res = {.kind = ACC_RES_BANDWIDTH, .name = "a-b", .amount = 20};
    struct acc_reservation r;
    struct acc_error err = {0};
    ACC_ASSERT_OK(acc_adapter_reserve(ad, key, &res, start, dur, &r, &err));
    CU_ASSERT_EQUAL(r.start, start);
    acc_reservation_release(&r);
    if (provision)
        ACC_ASSERT_OK(acc_adapter_provision(ad, key, NULL, &flow, &err));
}

/* traffic between the two namespaces is carried by the class */
static void check_traffic(struct acc_adapter *ad)
{
    struct acc_error err = {0};
    struct acc_provision_status st;
    CU_ASSERT_EQUAL(sh("ip netns exec " NS_A " ping -f -c 200 -q 10.232.0.2 >/dev/null"), 0);
    sleep_ms(1300); /* an audit reads the counters */
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r1", &st, &err));
    CU_ASSERT(st.packets >= 400); /* 200 requests on tcta, 200 replies on tctb */
    CU_ASSERT(st.bytes >= 400 * 84);
    /* but not traffic of other addresses: a ping from another address of A */
    long long mine = class_bytes(NS_A, "tcta", 10, NULL);
    long long be = class_bytes(NS_A, "tcta", TC_ID_BE, NULL);
    CU_ASSERT(mine >= 200 * 98);
    CU_ASSERT_EQUAL(sh("ip netns exec " NS_A " ping -f -c 50 -q -I 10.232.0.3 10.232.0.2 "
                       ">/dev/null"),
                    0);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 10, NULL), mine);
    CU_ASSERT(class_bytes(NS_A, "tcta", TC_ID_BE, NULL) >= be + 50 * 98);
}

/* deleted by hand: back within the audit interval, and Violated */
static void check_deleted_by_hand(struct acc_adapter *ad)
{
    struct acc_provision_status st;
    size_t nf = 0;
    CU_ASSERT_EQUAL(sh("tc -n " NS_A " filter del dev tcta parent 1: prio 10 && "
                       "tc -n " NS_A " class del dev tcta classid 1:10"),
                    0);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 10, NULL), -1);
    acc_time deleted = acc_now();
    CU_ASSERT(wait_class(10, true, 1500) >= 0);
    class_bytes(NS_A, "tcta", 10, &nf);
    CU_ASSERT_EQUAL(nf, 1);
    CU_ASSERT(status_soon(ad, true, ACC_GUARANTEE_VIOLATED, 2000, &st));
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_VIOLATED);
    CU_ASSERT(st.violated_at >= deleted && st.violated_at <= deleted + 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.why, "class 1:10 missing on " NS_A "/tcta"));
    CU_ASSERT_PTR_NOT_NULL(strstr(st.why, "reinstalled"));
}

/* close and reopen within the window: the class stays, unflapped (the
 * adapter reopened is returned) */
static struct acc_adapter *reopen_in_window(struct acc_adapter *ad, acc_time start)
{
    struct acc_error err = {0};
    struct acc_provision_status st;
    CU_ASSERT_EQUAL(sh("ip netns exec " NS_A " ping -f -c 50 -q 10.232.0.2 >/dev/null"), 0);
    long long before = class_bytes(NS_A, "tcta", 10, NULL);
    CU_ASSERT(before > 0);
    acc_adapter_close(ad);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 10, NULL), before);
    ad = open_tc();
    sleep_ms(1200);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 10, NULL), before); /* same class, same bytes */
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r1", &st, &err));
    CU_ASSERT_TRUE(st.active);
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_VIOLATED); /* stays */
    CU_ASSERT(st.activated >= start && st.activated <= start + 1);
    return ad;
}

static void test_window(void)
{
    CU_ASSERT_EQUAL_FATAL(topology_up(), 0);
    struct acc_adapter *ad = open_tc();
    struct acc_error err = {0};
    struct acc_provision_status st;
    /* the root tree came at open; no leaf class */
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 1, NULL) >= 0, true);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", TC_ID_BE, NULL) >= 0, true);

    acc_time start = acc_now() + 3, end = start + 10;
    book(ad, "r1", start, end - start, true);
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r1", &st, &err));
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_NOT_DETERMINED);
    CU_ASSERT_FALSE(st.active);
    /* before the start: nothing */
    sleep_until(start - 1);
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 10, NULL), -1);
    CU_ASSERT_EQUAL(class_bytes(NS_B, "tctb", 10, NULL), -1);
    /* at the start, within a second, with its filter on each device */
    sleep_until(start);
    long took = wait_class(10, true, 1000);
    CU_ASSERT(took >= 0);
    size_t nf = 0;
    class_bytes(NS_A, "tcta", 10, &nf);
    CU_ASSERT_EQUAL(nf, 1);
    class_bytes(NS_B, "tctb", 10, &nf);
    CU_ASSERT_EQUAL(nf, 1);
    CU_ASSERT(status_soon(ad, true, ACC_GUARANTEE_FULFILLED, 2000, &st));
    CU_ASSERT_TRUE(st.active);
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_FULFILLED);
    CU_ASSERT(st.activated >= start && st.activated <= start + 1);

    check_traffic(ad);

    check_deleted_by_hand(ad);

    ad = reopen_in_window(ad, start);

    /* after the end: gone, and the last counters kept */
    sleep_until(end);
    CU_ASSERT(wait_class(10, false, 1000) >= 0);
    CU_ASSERT(status_soon(ad, false, -1, 2000, &st));
    CU_ASSERT_FALSE(st.active);
    CU_ASSERT(st.packets >= 400);
    acc_adapter_close(ad);
}

static void test_cancel_and_stale(void)
{
    struct acc_adapter *ad = open_tc();
    struct acc_error err = {0};
    struct acc_provision_status st;
    /* cancel removes the class at once */
    acc_time start = acc_now() + 2;
    book(ad, "r2", start, 30, true);
    sleep_until(start);
    CU_ASSERT(wait_class(0, true, 1000) >= 0);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "r2", NULL, &err));
    CU_ASSERT_EQUAL(class_bytes(NS_A, "tcta", 0, NULL), -1);
    CU_ASSERT_EQUAL(class_bytes(NS_B, "tctb", 0, NULL), -1);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "r2", NULL, &err)); /* idempotent */

    /* never provisioned: Violated from its start */
    start = acc_now() + 1;
    book(ad, "r4", start, 30, false);
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r4", &st, &err));
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_NOT_DETERMINED);
    sleep_until(start);
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r4", &st, &err));
    CU_ASSERT_FALSE(st.provisioned);
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_STRING_EQUAL(st.why, "no endpoints were handed over");
    CU_ASSERT_EQUAL(wait_class(0, false, 0), 0); /* and nothing in the kernel */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "r4", NULL, &err));

    /* ended while closed: removed at reopen */
    start = acc_now() + 2;
    book(ad, "r3", start, 3, true);
    sleep_until(start);
    CU_ASSERT(wait_class(0, true, 1000) >= 0);
    acc_adapter_close(ad);
    sleep_until(start + 4);
    CU_ASSERT(class_bytes(NS_A, "tcta", 0, NULL) >= 0); /* nobody removed it */
    ad = open_tc();
    CU_ASSERT_EQUAL(wait_class(0, false, 0), 0); /* gone when open returns */
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "r3", &st, &err));
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_FULFILLED);
    CU_ASSERT_FALSE(st.active);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"window: start, traffic, hand deletion, reopen, end", test_window},
    {"cancel, never provisioned, stale at reopen", test_cancel_and_stale},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"tc kernel", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
