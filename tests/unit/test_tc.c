/* SPDX-License-Identifier: Apache-2.0 */
/* test_tc.c - the tc network adapter without the kernel: its calendar, the
 * batch text of a change set, the parser of real `tc` output
 * (tests/data/tc, captured from iproute2 6.1), the guarantee terms and its
 * settings.  The kernel itself: tests/integration/test_tc_kernel.c. */
#include <stdlib.h>

#include "adapter.h"
#include "calendar.h"
#include "tc_internal.h"
#include "testutil.h"

#define H 3600

/* ----------------------------------------------------------------- calendar */

static void test_calendar_sweep(void)
{
    struct acc_calendar c;
    acc_calendar_init(&c, 100);
    /* touching: [0,10) 60 and [10,20) 60 never overlap */
    ACC_ASSERT_OK(acc_calendar_add(&c, 0, 10, 60));
    ACC_ASSERT_OK(acc_calendar_add(&c, 10, 20, 60));
    CU_ASSERT_EQUAL(acc_calendar_peak(&c, 0, 20), 60);
    CU_ASSERT_TRUE(acc_calendar_fits(&c, 0, 20, 40));
    CU_ASSERT_FALSE(acc_calendar_fits(&c, 0, 20, 41));
    /* nested: [30,60) 50 holds [40,50) 30 */
    ACC_ASSERT_OK(acc_calendar_add(&c, 30, 60, 50));
    ACC_ASSERT_OK(acc_calendar_add(&c, 40, 50, 30));
    CU_ASSERT_EQUAL(acc_calendar_peak(&c, 30, 40), 50);
    CU_ASSERT_EQUAL(acc_calendar_peak(&c, 30, 60), 80);
    CU_ASSERT_EQUAL(acc_calendar_peak(&c, 50, 60), 50);
    CU_ASSERT_FALSE(acc_calendar_fits(&c, 45, 46, 21));
    CU_ASSERT_TRUE(acc_calendar_fits(&c, 50, 60, 50));
    /* equal start, equal bandwidth: each counts */
    for (int i = 0; i < 3; i++)
        ACC_ASSERT_OK(acc_calendar_add(&c, 100, 200, 30));
    CU_ASSERT_EQUAL(acc_calendar_peak(&c, 100, 200), 90);
    CU_ASSERT_EQUAL(acc_calendar_add(&c, 100, 200, 30), ACC_ERR_BUSY);
    /* bulk load of the same bookings sweeps to the same peaks */
    struct acc_cal_booking b[] = {{0, 10, 60},    {10, 20, 60},   {30, 60, 50},  {40, 50, 30},
                                  {100, 200, 30}, {100, 200, 30}, {100, 200, 30}};
    struct acc_calendar l;
    acc_calendar_init(&l, 100);
    ACC_ASSERT_OK(acc_calendar_load(&l, b, sizeof b / sizeof b[0]));
    CU_ASSERT_EQUAL(acc_calendar_peak(&l, 100, 200), 90);
    CU_ASSERT_EQUAL(acc_calendar_peak(&l, 0, 20), 60);
    CU_ASSERT_EQUAL(acc_calendar_peak(&l, 30, 60), 80);
    acc_calendar_release(&l);
    acc_calendar_release(&c);
}

/* An adapter over links alpha-beta (100) with paths in namespaces that do
 * not exist: the kernel is never changed by these tests. */
static const struct acc_link_def links[] = {{"alpha-beta", "alpha", "beta", 100}};

static acc_err open_tc(const struct acc_kv *kv, size_t n, struct acc_adapter **ad,
                       struct acc_error *err)
{
    struct acc_adapter_env env = {.name = "wan",
                                  .section = "network wan",
                                  .db_path = ":memory:",
                                  .settings = kv,
                                  .n_settings = n,
                                  .links = links,
                                  .n_links = 1};
    return acc_adapter_open(acc_adapter_kind_find("tc"), &env, ad, err);
}

static const struct acc_kv good[] = {
    {"path.alpha-beta.alpha", "acc-tcu-none1/up0 acc-tcu-none2/to-beta"},
    {"path.alpha-beta.beta", "acc-tcu-none3/up0"},
    {"command_timeout", "2s"},
};

static void test_adapter_equal_start(void)
{
    struct acc_adapter *ad = NULL;
    struct acc_error err = {0};
    ACC_ASSERT_OK(open_tc(good, 3, &ad, &err));
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_PROVISION | ACC_CAP_BANDWIDTH));
    acc_time start = (acc_now() / H + 2) * H;
    struct acc_resource res = {.kind = ACC_RES_BANDWIDTH, .name = "alpha-beta", .amount = 30};
    struct acc_reservation r;
    char key[32];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "k%d", i);
        ACC_ASSERT_OK(acc_adapter_reserve(ad, key, &res, start, H, &r, &err));
        CU_ASSERT_EQUAL(r.start, start); /* each fits as asked */
        acc_reservation_release(&r);
    }
    /* 90 of 100 taken from start on: 30 more is free only after the hour */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &res, start, start + 2 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    if (f.n)
        CU_ASSERT_EQUAL(f.v[0].start, start + H);
    acc_frames_release(&f);
    /* provision: the flow must be the link's; unknown keys are not found */
    const char *a[] = {"10.79.1.11", "10.79.1.12"}, *b[] = {"10.79.2.11"};
    struct acc_flow flow = {"alpha", "beta", a, 2, b, 1};
    ACC_ASSERT_OK(acc_adapter_provision(ad, "k0", NULL, &flow, &err));
    ACC_ASSERT_OK(acc_adapter_provision(ad, "k0", NULL, &flow, &err)); /* idempotent */
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "nope", NULL, &flow, &err), ACC_ERR_NOT_FOUND);
    struct acc_flow wrong = {"alpha", "gamma", a, 2, b, 1};
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "k1", NULL, &wrong, &err), ACC_ERR_INVALID);
    const char *bad[] = {"10.79.2.300"};
    struct acc_flow badflow = {"beta", "alpha", bad, 1, a, 2};
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "k1", NULL, &badflow, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "10.79.2.300"));
    struct acc_provision_status st;
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "k0", &st, &err));
    CU_ASSERT_TRUE(st.provisioned);
    CU_ASSERT_FALSE(st.active);
    CU_ASSERT_EQUAL(st.state, ACC_GUARANTEE_NOT_DETERMINED);
    CU_ASSERT_EQUAL(st.start, start);
    ACC_ASSERT_OK(acc_adapter_provision_status(ad, "k1", &st, &err));
    CU_ASSERT_FALSE(st.provisioned);
    CU_ASSERT_EQUAL(acc_adapter_provision_status(ad, "zz", &st, &err), ACC_ERR_NOT_FOUND);
    /* cancel forgets both the booking and the provision */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "k0", NULL, &err));
    CU_ASSERT_EQUAL(acc_adapter_provision_status(ad, "k0", &st, &err), ACC_ERR_NOT_FOUND);
    acc_adapter_close(ad);

    /* a version 1 table (sim-network) does not provision */
    struct acc_adapter_env env = {.name = "simnet",
                                  .section = "network simnet",
                                  .db_path = ":memory:",
                                  .links = links,
                                  .n_links = 1};
    ACC_ASSERT_OK(acc_adapter_open(acc_adapter_kind_find("sim-network"), &env, &ad, &err));
    CU_ASSERT_FALSE(acc_adapter_has(ad, ACC_CAP_PROVISION));
    CU_ASSERT_EQUAL(acc_adapter_provision(ad, "k0", NULL, &flow, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_EQUAL(acc_adapter_provision_status(ad, "k0", &st, &err), ACC_ERR_UNSUPPORTED);
    acc_adapter_close(ad);
}

/* ----------------------------------------------------------------- settings */

static void bad_setting(const char *key, const char *value, const char *words)
{
    struct acc_kv kv[4] = {good[0], good[1], good[2], {key, value}};
    size_t n = 4;
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(kv[i].key, key) == 0) { /* replaces, or removes with NULL */
            kv[i].value = value;
            n = 3;
            if (!value) {
                kv[i] = kv[2];
                n = 2;
            }
        }
    }
    struct acc_adapter *ad = NULL;
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(open_tc(kv, n, &ad, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(ad);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\n  %s=%s: '%s' lacks '%s'\n", key, value ? value : "(none)", err.msg,
                words);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
}

static void test_bad_settings(void)
{
    bad_setting("colour", "blue", "unknown setting 'colour'");
    bad_setting("load", "true", "unknown setting 'load'");
    bad_setting("path.alpha-beta.beta", NULL, "no path.alpha-beta.beta");
    bad_setting("path.alpha-beta.beta", "up0", "is not NETNS/DEV");
    bad_setting("path.alpha-beta.beta", "acc-x/", "is not NETNS/DEV");
    bad_setting("path.alpha-beta.beta", "bad$ns/up0", "is not NETNS/DEV");
    bad_setting("path.alpha-beta.beta", "acc-x/averyverylongdevicename", "is not NETNS/DEV");
    bad_setting("path.alpha-beta.gamma", "acc-x/up0", "gamma is not a site of link alpha-beta");
    bad_setting("path.beta-gamma.beta", "acc-x/up0", "no such link");
    bad_setting("quantum", "10", "from 1000 to 200000");
    bad_setting("quantum", "12x", "from 1000 to 200000");
    bad_setting("audit_interval", "0s", "out of range");
    bad_setting("audit_interval", "soon", "not a duration");
    bad_setting("command_timeout", "10h", "out of range");
    bad_setting("ceil", "sky", "neither rate nor link");
    bad_setting("activation_grace", "-1s", "not a duration");
    /* and good ones open */
    struct acc_kv kv[] = {good[0],
                          good[1],
                          good[2],
                          {"ceil", "link"},
                          {"quantum", "1514"},
                          {"audit_interval", "500ms"},
                          {"activation_grace", "PT3S"}};
    struct acc_adapter *ad = NULL;
    struct acc_error err = {0};
    ACC_ASSERT_OK(open_tc(kv, sizeof kv / sizeof kv[0], &ad, &err));
    acc_adapter_close(ad);
}

/* -------------------------------------------------------------- parse, plan */

static void test_parse_real_output(void)
{
    char *text = acc_test_slurp(ACC_TEST_DATA "/tc/show-batch.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    struct tc_dev_state s;
    struct acc_error err = {0};
    ACC_ASSERT_OK(tc_parse_show(text, &s, &err));
    CU_ASSERT_TRUE(s.htb_root && s.root_class && s.be_class);
    CU_ASSERT_EQUAL(s.n_classes, 4);
    const struct tc_class *c10 = NULL, *c12 = NULL;
    for (size_t i = 0; i < s.n_classes; i++) {
        if (s.classes[i].id == 10)
            c10 = &s.classes[i];
        if (s.classes[i].id == 12)
            c12 = &s.classes[i];
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(c10);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c12);
    CU_ASSERT_EQUAL(c10->bytes, 490);
    CU_ASSERT_EQUAL(c10->packets, 5);
    CU_ASSERT_EQUAL(c10->drops, 0);
    CU_ASSERT_EQUAL(c10->rate, 50000000);
    CU_ASSERT_EQUAL(c12->ceil, 30000000);
    CU_ASSERT_EQUAL(s.n_filters, 3); /* key nodes only, not the hash tables */
    CU_ASSERT_EQUAL(s.filters[0].pref, 10);
    CU_ASSERT_EQUAL(s.filters[0].flow, 10);
    CU_ASSERT_EQUAL(s.filters[0].src, 0x0ae70001);
    CU_ASSERT_EQUAL(s.filters[0].dst, 0x0ae70002);
    CU_ASSERT_EQUAL(s.filters[1].src, 0x0ae70003);
    CU_ASSERT_EQUAL(s.filters[2].pref, 12);
    CU_ASSERT_EQUAL(s.filters[2].dst, 0x0ae70007);
    tc_dev_state_release(&s);
    free(text);

    /* an untouched device: no htb root */
    text = acc_test_slurp(ACC_TEST_DATA "/tc/qdisc-noqueue.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    ACC_ASSERT_OK(tc_parse_show(text, &s, &err));
    CU_ASSERT_FALSE(s.htb_root);
    CU_ASSERT_EQUAL(s.n_classes, 0);
    tc_dev_state_release(&s);
    free(text);

    uint64_t bits = 0;
    CU_ASSERT_TRUE(tc_parse_rate("200Mbit", &bits) && bits == 200000000);
    CU_ASSERT_TRUE(tc_parse_rate("1600b", &bits) == false || bits == 1600);
    CU_ASSERT_TRUE(tc_parse_rate("15Kbit", &bits) && bits == 15000);
    CU_ASSERT_TRUE(tc_parse_rate("2Gbit", &bits) && bits == 2000000000);
    CU_ASSERT_FALSE(tc_parse_rate("fast", &bits));
}

static const uint32_t src2[] = {0x0a4f010b, 0x0a4f010c}, dst2[] = {0x0a4f020b, 0x0a4f020b};

static void test_plan_fresh_device(void)
{
    struct tc_dev_state none = {0};
    struct tc_want w = {10, 50, 50, src2, dst2, 2};
    enum tc_fix fix = TC_FIX_NONE;
    size_t removed = 1;
    struct acc_buf b;
    acc_buf_init(&b);
    tc_plan("up0", 200, 15140, &w, 1, &none, &b, &fix, &removed);
    const char *want =
        "qdisc replace dev up0 root handle 1: htb default 9999\n"
        "class add dev up0 parent 1: classid 1:1 htb rate 200mbit ceil 200mbit quantum 15140\n"
        "class add dev up0 parent 1:1 classid 1:9999 htb rate 1mbit ceil 200mbit prio 1 "
        "quantum 15140\n"
        "class add dev up0 parent 1:1 classid 1:10 htb rate 50mbit ceil 50mbit prio 0 "
        "quantum 15140\n"
        "filter add dev up0 parent 1: protocol ip prio 10 u32 match ip src 10.79.1.11/32 "
        "match ip dst 10.79.2.11/32 flowid 1:10\n"
        "filter add dev up0 parent 1: protocol ip prio 10 u32 match ip src 10.79.1.12/32 "
        "match ip dst 10.79.2.11/32 flowid 1:10\n";
    CU_ASSERT_STRING_EQUAL(acc_buf_str(&b), want);
    CU_ASSERT_EQUAL(fix, TC_FIX_ADDED);
    CU_ASSERT_EQUAL(removed, 0);
    acc_buf_release(&b);
}

static void test_plan_against_kernel(void)
{
    char *text = acc_test_slurp(ACC_TEST_DATA "/tc/show-batch.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    struct tc_dev_state s;
    ACC_ASSERT_OK(tc_parse_show(text, &s, NULL));
    free(text);
    /* the captured 1:10 (10.231.0.1 and .3 to .2, 50/50) is what is wanted:
     * nothing to do for it; 1:12 is stale: its filters, then it, go */
    const uint32_t src[] = {0x0ae70001, 0x0ae70003}, dst[] = {0x0ae70002, 0x0ae70002};
    struct tc_want w = {10, 50, 50, src, dst, 2};
    enum tc_fix fix = TC_FIX_ADDED;
    size_t removed = 0;
    struct acc_buf b;
    acc_buf_init(&b);
    tc_plan("tcxa", 200, 15140, &w, 1, &s, &b, &fix, &removed);
    CU_ASSERT_STRING_EQUAL(acc_buf_str(&b), "filter del dev tcxa parent 1: prio 12\n"
                                            "class del dev tcxa classid 1:12\n");
    CU_ASSERT_EQUAL(fix, TC_FIX_NONE);
    CU_ASSERT_EQUAL(removed, 1);
    /* one filter fewer than wanted (deleted by hand): remade, class kept */
    acc_buf_reset(&b);
    const uint32_t src3[] = {0x0ae70001, 0x0ae70003, 0x0ae70004},
                   dst3[] = {0x0ae70002, 0x0ae70002, 0x0ae70002};
    struct tc_want w3[] = {{10, 50, 50, src3, dst3, 3}, {12, 30, 30, src, dst, 1}};
    enum tc_fix fix3[2];
    tc_plan("tcxa", 200, 15140, w3, 2, &s, &b, fix3, &removed);
    CU_ASSERT_EQUAL(fix3[0], TC_FIX_REPAIRED);
    CU_ASSERT_EQUAL(fix3[1], TC_FIX_REPAIRED); /* 1:12 matches .1 -> .7, not .1 -> .2 */
    CU_ASSERT_EQUAL(removed, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(acc_buf_str(&b), "filter del dev tcxa parent 1: prio 10\n"
                                                   "filter add dev tcxa parent 1: protocol ip "
                                                   "prio 10 u32 match ip src 10.231.0.1/32"));
    CU_ASSERT_PTR_NULL(strstr(acc_buf_str(&b), "class add"));
    CU_ASSERT_PTR_NULL(strstr(acc_buf_str(&b), "qdisc"));
    /* ceil = link: a changed ceil is a class change */
    acc_buf_reset(&b);
    struct tc_want wl = {10, 50, 200, src, dst, 2};
    struct tc_want keep12 = {
        12, 30, 30, (const uint32_t[]){0x0ae70001}, (const uint32_t[]){0x0ae70007}, 1};
    struct tc_want wl2[] = {wl, keep12};
    tc_plan("tcxa", 200, 15140, wl2, 2, &s, &b, fix3, &removed);
    CU_ASSERT_STRING_EQUAL(acc_buf_str(&b),
                           "class change dev tcxa parent 1:1 classid 1:10 htb rate 50mbit ceil "
                           "200mbit prio 0 quantum 15140\n");
    CU_ASSERT_EQUAL(fix3[1], TC_FIX_NONE);
    /* removal of one reservation */
    acc_buf_reset(&b);
    tc_plan_remove("tcxa", 12, &b);
    CU_ASSERT_STRING_EQUAL(acc_buf_str(&b), "filter del dev tcxa parent 1: prio 12\n"
                                            "class del dev tcxa classid 1:12\n");
    acc_buf_release(&b);
    tc_dev_state_release(&s);
}

/* ---------------------------------------------------------------- guarantee */

static void test_guarantee(void)
{
    acc_time at;
    char why[256];
    struct tc_term t = {true, 1000, 2000, 0, 0};
    CU_ASSERT_EQUAL(tc_guarantee(&t, 999, 2, &at, why, sizeof why), ACC_GUARANTEE_NOT_DETERMINED);
    CU_ASSERT_EQUAL(at, 0);
    /* within the grace, not yet in place: not determined yet */
    CU_ASSERT_EQUAL(tc_guarantee(&t, 1001, 2, &at, why, sizeof why), ACC_GUARANTEE_NOT_DETERMINED);
    /* not in place by start + grace */
    CU_ASSERT_EQUAL(tc_guarantee(&t, 1003, 2, &at, why, sizeof why), ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_EQUAL(at, 1002);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in place at"));
    /* in place at the start, or within the grace */
    t.activated = 1000;
    CU_ASSERT_EQUAL(tc_guarantee(&t, 1500, 2, &at, why, sizeof why), ACC_GUARANTEE_FULFILLED);
    t.activated = 1002;
    CU_ASSERT_EQUAL(tc_guarantee(&t, 2500, 2, &at, why, sizeof why), ACC_GUARANTEE_FULFILLED);
    CU_ASSERT_EQUAL(at, 0);
    /* activated late */
    t.activated = 1010;
    CU_ASSERT_EQUAL(tc_guarantee(&t, 1500, 2, &at, why, sizeof why), ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_EQUAL(at, 1002);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in place until"));
    /* missing at an audit: recorded, and stays */
    t.activated = 1000;
    t.violated_at = 1200;
    CU_ASSERT_EQUAL(tc_guarantee(&t, 1500, 2, &at, why, sizeof why), ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_EQUAL(at, 0);
    CU_ASSERT_EQUAL(tc_guarantee(&t, 3000, 2, &at, why, sizeof why), ACC_GUARANTEE_VIOLATED);
    /* never provisioned */
    struct tc_term n = {false, 1000, 2000, 0, 0};
    CU_ASSERT_EQUAL(tc_guarantee(&n, 900, 2, &at, why, sizeof why), ACC_GUARANTEE_NOT_DETERMINED);
    CU_ASSERT_EQUAL(tc_guarantee(&n, 1000, 2, &at, why, sizeof why), ACC_GUARANTEE_VIOLATED);
    CU_ASSERT_STRING_EQUAL(why, "no endpoints were handed over");
    CU_ASSERT_EQUAL(at, 1000);
}

static const struct acc_test_case tests[] = {
    {"calendar: touching, nested, equal starts", test_calendar_sweep},
    {"adapter: equal starts each count; provision", test_adapter_equal_start},
    {"bad settings", test_bad_settings},
    {"parse real tc output", test_parse_real_output},
    {"plan: a fresh device", test_plan_fresh_device},
    {"plan: against the kernel's state", test_plan_against_kernel},
    {"guarantee terms", test_guarantee},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"tc", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
