/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm.c - the slurm adapter against recorded Slurm outputs (fake
 * sinfo/squeue/scontrol/scancel/sbatch), its node-list expansion and its
 * availability arithmetic: reservations; test_slurm_jobs.c: jobs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "avail.h"
#include "hostlist.h"
#include "http_client.h" /* read_file */
#include "slurm_fake.h"
#include "testutil.h"

#define H 3600

static int setup(void)
{
    snprintf(conf, sizeof conf, "%s/slurm.conf", acc_test_tmpdir());
    FILE *f = fopen(conf, "w");
    if (!f)
        return 1;
    fputs("# not read by the fakes\n", f);
    fclose(f);
    return 0;
}

/* ----------------------------------------------------------- node lists */

static void test_hostlist(void)
{
    struct acc_hostlist h = {0};
    ACC_ASSERT_OK(acc_hostlist_expand("sitea-n[01-03,05],siteb-n07", &h));
    CU_ASSERT_EQUAL_FATAL(h.n, 5);
    CU_ASSERT_STRING_EQUAL(h.names[0], "sitea-n01");
    CU_ASSERT_STRING_EQUAL(h.names[2], "sitea-n03");
    CU_ASSERT_STRING_EQUAL(h.names[3], "sitea-n05");
    CU_ASSERT_STRING_EQUAL(h.names[4], "siteb-n07");
    acc_hostlist_release(&h);
    ACC_ASSERT_OK(acc_hostlist_expand("rack[1-2]-node[8-10]", &h));
    CU_ASSERT_EQUAL_FATAL(h.n, 6);
    CU_ASSERT_STRING_EQUAL(h.names[0], "rack1-node8");
    CU_ASSERT_STRING_EQUAL(h.names[5], "rack2-node10");
    acc_hostlist_release(&h);
    ACC_ASSERT_OK(acc_hostlist_expand("(null)", &h));
    CU_ASSERT_EQUAL(h.n, 0);
    ACC_ASSERT_OK(acc_hostlist_expand("n[098-101]", &h));
    CU_ASSERT_EQUAL_FATAL(h.n, 4);
    CU_ASSERT_STRING_EQUAL(h.names[0], "n098");
    CU_ASSERT_STRING_EQUAL(h.names[3], "n101");
    acc_hostlist_release(&h);
    static const char *const bad[] = {"n[1-", "n[3-1]", "n[a-b]", "n]1[", "n[1-9999999]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(acc_hostlist_expand(bad[i], &h), ACC_ERR_INVALID);
        acc_hostlist_release(&h);
    }
}

/* ---------------------------------------------------- availability math */

static void test_avail(void)
{
    struct avail a;
    avail_init(&a);
    const acc_time t0 = 1000000;
    char name[16];
    for (int i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "n%d", i);
        ACC_ASSERT_OK(avail_add_node(&a, name, i != 8)); /* n8 drained */
    }
    /* A job on n1-n3 until t0+1h (busy until its end + 1 s, as the adapter
     * feeds it), a reservation on n4-n5 over [t0+2h, t0+3h). */
    for (int i = 1; i <= 3; i++) {
        snprintf(name, sizeof name, "n%d", i);
        ACC_ASSERT_OK(avail_add_busy(&a, name, t0, t0 + H + 1));
    }
    ACC_ASSERT_OK(avail_add_busy(&a, "n4", t0 + 2 * H, t0 + 3 * H));
    ACC_ASSERT_OK(avail_add_busy(&a, "n5", t0 + 2 * H, t0 + 3 * H));
    ACC_ASSERT_OK(avail_add_busy(&a, "elsewhere", t0, t0 + H)); /* another partition */
    CU_ASSERT_EQUAL(avail_usable(&a), 7);

    struct acc_frames f;
    acc_frames_init(&f);
    /* 4 nodes for an hour: n4-n7 are free now; only 2 (n6, n7) during the
     * reservation, but n1-n3 are back by then. */
    ACC_ASSERT_OK(avail_frames(&a, 4, t0, t0 + 10 * H, H, &f));
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t0);
    CU_ASSERT_EQUAL(f.v[0].end, t0 + 10 * H);
    acc_frames_reset(&f);
    /* 5 nodes: not until the job ends (+1 s), and a start during
     * [t0+1h+1, t0+3h) must end before the reservation or start after it. */
    ACC_ASSERT_OK(avail_frames(&a, 5, t0, t0 + 10 * H, H, &f));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t0 + H + 1);
    CU_ASSERT_EQUAL(f.v[0].end, t0 + 10 * H); /* 5 of n1-n3, n6, n7 stay free */
    acc_frames_reset(&f); /* 6 nodes for an hour: needs n4 or n5 too, and an hour from t0+1h+1 runs
                           * into the reservation: only after it. */
    ACC_ASSERT_OK(avail_frames(&a, 6, t0, t0 + 10 * H, H, &f));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t0 + 3 * H);
    acc_frames_reset(&f);
    /* For half an hour it fits between the job and the reservation. */
    ACC_ASSERT_OK(avail_frames(&a, 6, t0, t0 + 10 * H, H / 2, &f));
    CU_ASSERT_EQUAL_FATAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].start, t0 + H + 1);
    CU_ASSERT_EQUAL(f.v[0].end, t0 + 2 * H);
    CU_ASSERT_EQUAL(f.v[1].start, t0 + 3 * H);
    acc_frames_reset(&f);
    /* 8 nodes: n8 is drained, never. */
    ACC_ASSERT_OK(avail_frames(&a, 8, t0, t0 + 10 * H, H, &f));
    CU_ASSERT_EQUAL(f.n, 0);
    /* A window shorter than the duration. */
    ACC_ASSERT_OK(avail_frames(&a, 1, t0, t0 + H - 1, H, &f));
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    avail_release(&a);
}

/* -------------------------------------------------------------- adapter */

static const char sinfo_out[] = "sitea-n01|alloc\nsitea-n02|alloc\nsitea-n03|alloc\n"
                                "sitea-n04|idle\nsitea-n05|idle\nsitea-n06|idle\n"
                                "sitea-n07|idle*\nsitea-n08|drain\n";

static void test_preview(void)
{
    scene("preview");
    acc_time now = acc_now();
    put("sinfo.out", "%s", sinfo_out);
    put("squeue.out", "17|%lld|%lld|sitea-n[01-03]\n", (long long)now - 60, (long long)now + 1700);
    put("scontrol-show.out",
        "ReservationName=other StartTime=%lld EndTime=%lld Duration=01:00:00 Nodes=sitea-n[04-05] "
        "NodeCnt=2 CoreCnt=2 Features=(null) PartitionName=batch Flags= TRES=cpu=2 Users=root "
        "State=INACTIVE\n",
        (long long)now + 3600, (long long)now + 7200);
    struct acc_adapter *ad = open_slurm(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_error err;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 3};
    /* 3 of the usable n01-n06 (n07 does not answer, n08 is drained). */
    ACC_ASSERT_OK(acc_adapter_preview(ad, &res, now, now + 6 * H, 1800, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, now);
    acc_frames_reset(&f);
    res.amount = 4; /* needs a node of the job: after its end + 1 s */
    ACC_ASSERT_OK(acc_adapter_preview(ad, &res, now, now + 6 * H, 1800, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, now + 1701);
    acc_frames_reset(&f);
    res.amount = 5; /* and one of "other"'s: before it or after it */
    ACC_ASSERT_OK(acc_adapter_preview(ad, &res, now, now + 6 * H, 1800, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].start, now + 1701);
    CU_ASSERT_EQUAL(f.v[0].end, now + 3600);
    CU_ASSERT_EQUAL(f.v[1].start, now + 7200);
    acc_frames_release(&f);
    /* Reads asked for epoch seconds, with the site's configuration. */
    char path[512];
    snprintf(path, sizeof path, "%s/env", scenario);
    char *env = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL(env && strstr(env, "SLURM_TIME_FORMAT=%s"));
    CU_ASSERT_PTR_NOT_NULL(env && strstr(env, conf));
    CU_ASSERT_PTR_NOT_NULL(env && strstr(env, "TZ=UTC"));
    free(env);
    char *c = calls();
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "sinfo -h -N -o %N|%t"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "squeue -h -t R,S,CG -o %i|%S|%e|%N"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "scontrol show reservation -o"));
    free(c);
    /* No reservations at all is not an error. */
    unlink(strcat(strcpy(path, scenario), "/scontrol-show.out"));
    put("scontrol-show.out", "No reservations in the system\n");
    put("scontrol-show.rc", "1\n");
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &res, now, now + 6 * H, 1800, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
    acc_adapter_close(ad);
}

static void resv_line(const char *file, const char *key, acc_time start, int minutes, int cnt,
                      const char *nodes)
{
    put(file,
        "ReservationName=%s StartTime=%lld EndTime=%lld Duration=00:%02d:00 Nodes=%s NodeCnt=%d "
        "CoreCnt=%d Features=(null) PartitionName=batch Flags= TRES=cpu=%d Users=root "
        "State=INACTIVE BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)\n",
        key, (long long)start, (long long)(start + minutes * 60), minutes, nodes, cnt, cnt, cnt);
}

static void test_reserve_and_query(void)
{
    scene("reserve");
    acc_time t = acc_now() + 600;
    put("scontrol-create.out", "Reservation created: acc-k1\n");
    resv_line("scontrol-show-acc-k1.out", "acc-k1", t, 30, 3, "sitea-n[01-03]");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_reservation r;
    struct acc_error err;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 3};
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "acc-k1", &res, t, 1790, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.end, t + 1800); /* whole minutes */
    CU_ASSERT_EQUAL(r.amount, 3);
    CU_ASSERT_STRING_EQUAL(r.local_id, "acc-k1");
    CU_ASSERT_STRING_EQUAL(r.nodes ? r.nodes : "", "sitea-n01,sitea-n02,sitea-n03");
    acc_reservation_release(&r);
    char *c = calls();
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    char want[256];
    strftime(want, sizeof want,
             "scontrol create reservation ReservationName=acc-k1 StartTime=%Y-%m-%dT%H:%M:%S "
             "Duration=30 NodeCnt=3 Users=root",
             &tm);
    CU_ASSERT_PTR_NOT_NULL(strstr(c, want));
    free(c);
    ACC_ASSERT_OK(acc_adapter_query(ad, "acc-k1", "acc-k1", &r, &err));
    CU_ASSERT_EQUAL(r.amount, 3);
    acc_reservation_release(&r);
    put("scontrol-show-gone.err", "Reservation gone not found\n");
    put("scontrol-show-gone.rc", "1\n");
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "gone", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    acc_adapter_close(ad);
}

static void test_silent_shrink_is_refused(void)
{
    scene("shrink");
    acc_time t = acc_now() + 600;
    /* Asked for 7, Slurm made one of 1 and said yes. */
    put("scontrol-create.out", "Reservation created: acc-k2\n");
    resv_line("scontrol-show-acc-k2.out", "acc-k2", t, 2, 1, "sitea-n08");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_reservation r;
    struct acc_error err;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 7};
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-k2", &res, t, 120, &r, &err), ACC_ERR_BUSY);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "granted 1 of 7"));
    char *c = calls();
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "scontrol delete ReservationName=acc-k2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "scancel --reservation=acc-k2"));
    free(c);
    acc_adapter_close(ad);
}

static void test_error_texts(void)
{
    static const struct {
        const char *err;
        acc_err code;
    } cases[] = {
        {"Error creating the reservation: Requested nodes are busy\n", ACC_ERR_BUSY},
        {"Error creating the reservation: Requested reservation overlaps with another "
         "reservation\n",
         ACC_ERR_BUSY},
        {"Error creating the reservation: Invalid time specified\n", ACC_ERR_INVALID},
        {"Error creating the reservation: Invalid user id\n", ACC_ERR_ADAPTER},
        {"slurm_load_partitions: Unable to contact slurm controller (connect failure)\n",
         ACC_ERR_UNAVAILABLE},
        {"something Slurm never said before\n", ACC_ERR_ADAPTER},
    };
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 2};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "errors%zu", i);
        scene(name);
        put("scontrol-create.err", "%s", cases[i].err);
        put("scontrol-create.rc", "1\n");
        struct acc_adapter *ad = open_slurm(NULL);
        struct acc_reservation r;
        struct acc_error err;
        CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "acc-e", &res, acc_now() + 600, 60, &r, &err),
                        cases[i].code);
        /* Slurm's own words reach the message, with the site. */
        char first[64];
        snprintf(first, sizeof first, "%.40s",
                 strchr(cases[i].err, ':') && cases[i].code != ACC_ERR_ADAPTER
                     ? strchr(cases[i].err, ':') + 2
                     : cases[i].err);
        first[strcspn(first, "\n")] = '\0';
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, first));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site sitea"));
        acc_adapter_close(ad);
    }
    /* The same key again: the reservation it already has. */
    scene("duplicate");
    put("scontrol-create.err", "Error creating the reservation: Duplicate reservation name\n");
    put("scontrol-create.rc", "1\n");
    acc_time t = acc_now() + 600;
    resv_line("scontrol-show-acc-d.out", "acc-d", t, 1, 2, "sitea-n[01-02]");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_reservation r;
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "acc-d", &res, t, 60, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    acc_reservation_release(&r);
    acc_adapter_close(ad);
}

static void test_cancel(void)
{
    scene("cancel");
    /* In use while its job completes, then deleted. */
    put("scontrol-delete.1.err", "delete_reservation ReservationName=acc-c: Requested reservation "
                                 "is in use\n");
    put("scontrol-delete.1.rc", "1\n");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-c", "acc-c", &err));
    char *c = calls();
    const char *first = strstr(c, "scancel --reservation=acc-c");
    const char *del = strstr(c, "scontrol delete ReservationName=acc-c");
    CU_ASSERT_TRUE(first && del && first < del);                       /* its jobs go first */
    CU_ASSERT_PTR_NOT_NULL(del && strstr(del + 1, "scontrol delete")); /* and again */
    free(c);
    /* Unknown: cancel is idempotent. */
    scene("cancel-unknown");
    put("scontrol-delete.err", "delete_reservation ReservationName=acc-x: Requested reservation "
                               "is invalid\n");
    put("scontrol-delete.rc", "1\n");
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "acc-x", NULL, &err));
    /* Controller down: an error that says so. */
    scene("cancel-down");
    put("scontrol-delete.err", "Unable to contact slurm controller (connect failure)\n");
    put("scontrol-delete.rc", "1\n");
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "acc-y", NULL, &err), ACC_ERR_UNAVAILABLE);
    acc_adapter_close(ad);
}

static void test_timeout(void)
{
    scene("timeout");
    put("sinfo.sleep", "5\n");
    struct acc_adapter *ad = open_slurm("PT1S");
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_error err;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "sitea", .amount = 1};
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(acc_adapter_preview(ad, &res, acc_now(), acc_now() + H, 60, &f, &err),
                    ACC_ERR_TIMEOUT);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 3000000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sinfo did not answer"));
    acc_frames_release(&f);
    acc_adapter_close(ad);
}

static void test_health_and_settings(void)
{
    scene("health");
    put("scontrol-ping.out", "Slurmctld(primary) at vm is UP\n");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_TRUE(h.up);
    put("scontrol-ping.out", "Slurmctld(primary) at vm is DOWN\n");
    put("scontrol-ping.rc", "1\n");
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_FALSE(h.up);
    CU_ASSERT_PTR_NOT_NULL(strstr(h.detail, "DOWN"));
    acc_adapter_close(ad);

    struct acc_kv bad[] = {{"flavour", "vanilla"}};
    struct acc_adapter_env env = {
        .name = "s", .section = "[site s]", .settings = bad, .n_settings = 1, .nodes = 1};
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &env, &ad, &err),
                    ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "flavour"));
    struct acc_kv missing[] = {{"slurm_conf", "/nonexistent/slurm.conf"}};
    env.settings = missing;
    CU_ASSERT_EQUAL(acc_adapter_open(acc_adapter_kind_find("slurm"), &env, &ad, &err),
                    ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/slurm.conf"));
}

static const struct acc_test_case tests[] = {
    {"node lists", test_hostlist},
    {"availability arithmetic", test_avail},
    {"preview from sinfo, squeue and reservations", test_preview},
    {"reserve, read back, query", test_reserve_and_query},
    {"a silently shrunk reservation is deleted and refused", test_silent_shrink_is_refused},
    {"error texts", test_error_texts},
    {"cancel: jobs first, in use, unknown, controller down", test_cancel},
    {"every command has a time limit", test_timeout},
    {"health and settings", test_health_and_settings},
    {NULL, NULL},
};

/* test_slurm_jobs.c: jobs submitted into a reservation. */
extern const struct acc_test_case acc_slurm_jobs_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"slurm", setup, NULL, tests},
    {"slurm_jobs", setup, NULL, acc_slurm_jobs_tests},
    {NULL, NULL, NULL, NULL},
};
