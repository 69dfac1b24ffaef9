/* SPDX-License-Identifier: Apache-2.0 */
/* test_adapters.c - the conformance suite: the same behaviour asked of every
 * adapter kind that can run here, through the public wrappers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "adapter.h"
#include "testutil.h"

#define H 3600

/* accordd's database path: the simulators keep their calendar files beside it. */
static char db[256];

struct kind {
    const char *kind;
    const char *name; /* the adapter's: its calendar is DB.sim-NAME */
    struct acc_adapter *(*open)(void);
    struct acc_resource res; /* what to ask of it: 4 of 16 */
};

/* snapshot: an instance that only looks, at a copy of the calendar file. */
static struct acc_adapter *open_copy(const char *kind, const char *name, bool snapshot)
{
    static const struct acc_link_def links[] = {{"l1", "a", "b", 16}};
    struct acc_kv settings[] = {{"load", "no"}};
    struct acc_adapter_env env = {
        .name = name,
        .section = name,
        .db_path = db,
        .settings = settings,
        .n_settings = 1,
        .nodes = 16,
        .links = links,
        .n_links = 1,
        .snapshot = snapshot,
    };
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find(kind), &env, &ad, &err))
        fprintf(stderr, "open %s: %s\n", kind, err.msg);
    return ad;
}

static struct acc_adapter *open_kind(const char *kind, const char *name)
{
    return open_copy(kind, name, false);
}

static struct acc_adapter *open_batch(void)
{
    return open_kind("sim-batch", "site16");
}

static struct acc_adapter *open_network(void)
{
    return open_kind("sim-network", "net16");
}

static const struct kind kinds[] = {
    {"sim-batch", "site16", open_batch, {.kind = ACC_RES_NODES, .name = "site16", .amount = 4}},
    {"sim-network", "net16", open_network, {.kind = ACC_RES_BANDWIDTH, .name = "l1", .amount = 4}},
};

static int setup(void)
{
    snprintf(db, sizeof db, "%s/adapters.db", acc_test_tmpdir());
    return 0;
}

static void each_kind(void (*fn)(const struct kind *k, struct acc_adapter *ad))
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct acc_adapter *ad = kinds[i].open();
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        fn(&kinds[i], ad);
        acc_adapter_close(ad);
    }
}

static acc_time future(void)
{
    return (acc_now() / H + 24 * 30) * H; /* a month ahead, on the hour */
}

static void reserve_query_cancel(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_reservation r;
    struct acc_error err;
    acc_time t = future();
    char key[64];
    snprintf(key, sizeof key, "conf-%s-1", k->kind);
    ACC_ASSERT_OK(acc_adapter_reserve(ad, key, &k->res, t, 2 * H, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.end, t + 2 * H);
    CU_ASSERT_EQUAL(r.amount, 4);
    CU_ASSERT_NOT_EQUAL(r.local_id[0], '\0');
    acc_reservation_release(&r);
    /* The same key again is the same reservation, not a second one. */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, key, &k->res, t, 2 * H, &r, &err));
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_query(ad, key, NULL, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.amount, 4);
    acc_reservation_release(&r);
    /* Previews see it: 13 units are not free during it. */
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_resource big = k->res;
    big.amount = 13;
    ACC_ASSERT_OK(acc_adapter_preview(ad, &big, t - 4 * H, t + 6 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.v[0].end, t);
    CU_ASSERT_EQUAL(f.v[1].start, t + 2 * H);
    acc_frames_release(&f);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, key, NULL, &err));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, key, NULL, &err)); /* idempotent */
    CU_ASSERT_EQUAL(acc_adapter_query(ad, key, NULL, &r, &err), ACC_ERR_NOT_FOUND);
}

static void full_is_busy_or_later(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_reservation r;
    struct acc_error err;
    acc_time t = future() + 10 * H;
    struct acc_resource all = k->res;
    all.amount = 16;
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "fill", &all, t, H, &r, &err));
    acc_reservation_release(&r);
    /* Asked for a taken time: placed later (the default), never overlapping. */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "second", &k->res, t, H, &r, &err));
    CU_ASSERT_TRUE(r.start >= t + H);
    acc_reservation_release(&r);
    struct acc_resource over = k->res;
    over.amount = 17;
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &over, t, t + 10 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "too-big", &over, t, H, &r, &err), ACC_ERR_BUSY);
    acc_adapter_cancel(ad, "fill", NULL, NULL);
    acc_adapter_cancel(ad, "second", NULL, NULL);
}

static void unknown_and_past(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_reservation r;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "never", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "never", NULL, &err));
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "past", &k->res, acc_now() - 7200, H, &r, &err),
                    ACC_ERR_INVALID);
    struct acc_resource wrong = k->res;
    wrong.name = "nonexistent";
    struct acc_frames f;
    acc_frames_init(&f);
    CU_ASSERT_EQUAL(acc_adapter_preview(ad, &wrong, future(), future() + H, H, &f, &err),
                    ACC_ERR_INVALID);
    acc_frames_release(&f);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_TRUE(h.up);
}

static void survives_reopen(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_reservation r;
    struct acc_error err;
    acc_time t = future() + 20 * H;
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "durable", &k->res, t, H, &r, &err));
    acc_reservation_release(&r);
    /* The negotiation verifies every reservation before it commits the
     * agreement; once verified, the booking is in the file. */
    ACC_ASSERT_OK(acc_adapter_query(ad, "durable", NULL, &r, &err));
    acc_reservation_release(&r);
    /* A second instance on the same calendar is refused while the first
     * has it, in the same process too: each would book the same capacity.
     * One that only looks, at a copy of the file, reads the booking. */
    struct acc_adapter *twice = k->open();
    CU_ASSERT_PTR_NULL(twice);
    acc_adapter_close(twice);
    struct acc_adapter *again = open_copy(k->kind, k->name, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    ACC_ASSERT_OK(acc_adapter_query(again, "durable", NULL, &r, &err));
    CU_ASSERT_EQUAL(r.start, t);
    acc_reservation_release(&r);
    acc_adapter_close(again);
    acc_adapter_cancel(ad, "durable", NULL, NULL);
}

static void faults(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_reservation r;
    struct acc_error err;
    struct acc_buf reply = ACC_BUF_INIT;
    acc_time t = future() + 30 * H;
    /* A simulator answers at once (its calls run on the negotiation's
     * thread, with no time limit) unless a fault is armed. */
    CU_ASSERT_TRUE(acc_adapter_prompt(ad));
    struct acc_kv late[] = {{"call", "reserve"}, {"action", "late"}, {"seconds", "600"}};
    ACC_ASSERT_OK(acc_adapter_control(ad, "fault", late, 3, &reply, &err));
    CU_ASSERT_FALSE(acc_adapter_prompt(ad));
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "late", &k->res, t, H, &r, &err));
    CU_ASSERT_EQUAL(r.start, t + 600);
    acc_reservation_release(&r);
    struct acc_kv fail[] = {{"call", "reserve"}, {"action", "fail"}};
    ACC_ASSERT_OK(acc_adapter_control(ad, "fault", fail, 2, &reply, &err));
    CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "fails", &k->res, t, H, &r, &err), ACC_ERR_ADAPTER);
    /* Faults are used up: the next call is normal. */
    CU_ASSERT_TRUE(acc_adapter_prompt(ad));
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "fine", &k->res, t, H, &r, &err));
    acc_reservation_release(&r);
    struct acc_kv compete[] = {{"call", "reserve"}, {"action", "compete"}};
    ACC_ASSERT_OK(acc_adapter_control(ad, "fault", compete, 2, &reply, &err));
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "beaten", &k->res, t + 5 * H, H, &r, &err));
    CU_ASSERT_TRUE(r.start > t + 5 * H); /* the other user was first */
    acc_reservation_release(&r);
    struct acc_kv bad[] = {{"call", "reserve"}, {"action", "explode"}};
    CU_ASSERT_EQUAL(acc_adapter_control(ad, "fault", bad, 2, &reply, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_adapter_control(ad, "dance", NULL, 0, &reply, &err), ACC_ERR_UNSUPPORTED);
    acc_buf_release(&reply);
    acc_adapter_cancel(ad, "late", NULL, NULL);
    acc_adapter_cancel(ad, "fine", NULL, NULL);
    acc_adapter_cancel(ad, "beaten", NULL, NULL);
    acc_adapter_cancel(ad, "other-beaten", NULL, NULL);
}

/* The old one counts as free for the grown one alone, until cancelled. */
static void replace_grown(const struct kind *k, struct acc_adapter *ad, acc_time t,
                          struct acc_resource old)
{
    struct acc_reservation r;
    struct acc_error err;
    struct acc_resource other = k->res, grown = k->res;
    other.amount = 9; /* 16 - 2 - 9 = 5 free */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "old", &old, t, 2 * H, &r, &err));
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "other", &other, t, 4 * H, &r, &err));
    acc_reservation_release(&r);
    grown.amount = 7; /* 2 -> 7: needs the 5 free plus the old 2 */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &grown, t, t + 3 * H, 3 * H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0); /* without the old one counted: no room */
    ACC_ASSERT_OK(acc_adapter_preview_replacing(ad, "old", &grown, t, t + 3 * H, 3 * H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t);
    /* The old booking is still counted for everyone else after the preview. */
    struct acc_resource six = k->res;
    six.amount = 6;
    ACC_ASSERT_OK(acc_adapter_preview(ad, &six, t, t + 2 * H, 2 * H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0);
    acc_frames_release(&f);
    CU_ASSERT_EQUAL(acc_adapter_reserve_replacing(ad, "new", "new", &grown, t, 3 * H, &r, &err),
                    ACC_ERR_INVALID);
    ACC_ASSERT_OK(acc_adapter_reserve_replacing(ad, "new", "old", &grown, t, 3 * H, &r, &err));
    CU_ASSERT_EQUAL(r.start, t); /* not placed later because of the old booking */
    CU_ASSERT_EQUAL(r.amount, 7);
    acc_reservation_release(&r);
    /* Both exist; nobody else gets a node while they do. */
    ACC_ASSERT_OK(acc_adapter_query(ad, "old", NULL, &r, &err));
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_query(ad, "new", NULL, &r, &err));
    acc_reservation_release(&r);
    struct acc_resource one = k->res;
    one.amount = 1;
    ACC_ASSERT_OK(acc_adapter_preview(ad, &one, t, t + 3 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0);
    /* The change is committed: the old one goes, the new one holds. */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "old", NULL, &err));
    ACC_ASSERT_OK(acc_adapter_preview(ad, &one, t, t + 3 * H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &one, t + 3 * H, t + 5 * H, H, &f, &err));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t + 3 * H);
    acc_frames_release(&f);
}

/* More than the old and the free together: refused, nothing left. */
static void replace_too_much(const struct kind *k, struct acc_adapter *ad, acc_time t,
                             struct acc_resource old)
{
    struct acc_reservation r;
    struct acc_error err;
    struct acc_resource too = k->res;
    too.amount = 8;
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "old2", &old, t + 10 * H, H, &r, &err));
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "wall", &k->res, t + 10 * H, H, &r, &err));
    acc_reservation_release(&r);
    struct acc_resource fill = k->res;
    fill.amount = 7; /* 2 + 4 + 7 = 13: 3 free, old2 gives 2: 5 < 8 */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "fill", &fill, t + 10 * H, H, &r, &err));
    acc_reservation_release(&r);
    acc_err rc = acc_adapter_reserve_replacing(ad, "new2", "old2", &too, t + 10 * H, H, &r, &err);
    CU_ASSERT_TRUE(rc == ACC_ERR_BUSY || (rc == ACC_OK && r.start > t + 10 * H));
    if (rc == ACC_OK)
        acc_reservation_release(&r);
    acc_adapter_cancel(ad, "new2", NULL, NULL);
    ACC_ASSERT_OK(acc_adapter_query(ad, "old2", NULL, &r, &err)); /* untouched */
    CU_ASSERT_EQUAL(r.amount, 2);
    acc_reservation_release(&r);
}

/* A reopen loads both bookings of an uncommitted change as they were (an
 * instance that only looks, at a copy of the file: the open one holds it). */
static void replace_reopened(const struct kind *k, struct acc_adapter *ad, acc_time t,
                             struct acc_resource old)
{
    struct acc_reservation r;
    struct acc_error err;
    ACC_ASSERT_OK(
        acc_adapter_reserve_replacing(ad, "new3", "old2", &old, t + 10 * H, 2 * H, &r, &err));
    CU_ASSERT_EQUAL(r.start, t + 10 * H);
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_query(ad, "new3", NULL, &r, &err));
    acc_reservation_release(&r);
    struct acc_adapter *again = open_copy(k->kind, k->name, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    ACC_ASSERT_OK(acc_adapter_query(again, "old2", NULL, &r, &err));
    acc_reservation_release(&r);
    ACC_ASSERT_OK(acc_adapter_query(again, "new3", NULL, &r, &err));
    acc_reservation_release(&r);
    acc_adapter_close(again);
}

/* A changed reservation beside the one it replaces: the old one's amount
 * counts as free over the overlap, both exist until one is cancelled, and
 * another user still finds only what neither holds. */
static void replacing(const struct kind *k, struct acc_adapter *ad)
{
    struct acc_error err;
    struct acc_frames f;
    acc_time t = future() + 40 * H;
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_REPLACE));
    struct acc_resource old = k->res;
    old.amount = 2;
    replace_grown(k, ad, t, old);
    replace_too_much(k, ad, t, old);
    replace_reopened(k, ad, t, old);
    const char *keys[] = {"new", "other", "old2", "wall", "fill", "new3"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ACC_ASSERT_OK(acc_adapter_cancel(ad, keys[i], NULL, &err));
    /* Everything given back: the whole resource is free again. */
    struct acc_resource all = k->res;
    all.amount = 16;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &all, t, t + 12 * H, 12 * H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
}

static void test_replacing(void)
{
    each_kind(replacing);
}

static void test_reserve_query_cancel(void)
{
    each_kind(reserve_query_cancel);
}

static void test_full(void)
{
    each_kind(full_is_busy_or_later);
}

static void test_unknown(void)
{
    each_kind(unknown_and_past);
}

static void test_reopen(void)
{
    each_kind(survives_reopen);
}

static void test_faults(void)
{
    each_kind(faults);
}

static void test_bad_settings(void)
{
    struct acc_kv settings[] = {{"colour", "blue"}};
    struct acc_adapter_env env = {.name = "x",
                                  .section = "[site x]",
                                  .db_path = db,
                                  .settings = settings,
                                  .n_settings = 1,
                                  .nodes = 4};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_adapter_open(acc_adapter_kind_find("sim-batch"), &env, &ad, &err),
                    ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "colour"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[site x]"));
    CU_ASSERT_PTR_NULL(acc_adapter_kind_find("teleporter"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The adapter's bookings, one sorted line each. */
static char *bookings_of(struct acc_adapter *ad)
{
    struct acc_buf b = ACC_BUF_INIT;
    if (acc_adapter_control(ad, "bookings", NULL, 0, &b, NULL))
        return NULL;
    size_t n = 0;
    char **lines = NULL;
    for (char *p = b.data; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        lines = realloc(lines, (n + 1) * sizeof *lines);
        lines[n++] = p;
        p = nl ? nl + 1 : NULL;
    }
    if (n)
        qsort(lines, n, sizeof *lines, cmp_str);
    struct acc_buf joined = ACC_BUF_INIT;
    acc_buf_puts(&joined, "");
    for (size_t k = 0; k < n; k++)
        acc_buf_printf(&joined, "%s\n", lines[k]);
    free(lines);
    acc_buf_release(&b);
    return acc_buf_detach(&joined, NULL);
}

static void test_background_load_is_deterministic(void)
{
    /* Two fresh databases, same seed: the same bookings. */
    char *lists[2];
    for (int i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/load%d.db", acc_test_tmpdir(), i);
        struct acc_kv settings[] = {{"load", "yes"}, {"seed", "42"}, {"load_days", "3"}};
        struct acc_adapter_env env = {.name = "loaded",
                                      .section = "loaded",
                                      .db_path = path,
                                      .settings = settings,
                                      .n_settings = 3,
                                      .nodes = 64};
        struct acc_adapter *ad;
        ACC_ASSERT_OK(acc_adapter_open(acc_adapter_kind_find("sim-batch"), &env, &ad, NULL));
        /* Order of the listing follows the hash table: sorted lines. */
        lists[i] = bookings_of(ad);
        size_t n = 0;
        for (const char *p = lists[i]; p && (p = strchr(p, '\n')); p++)
            n++;
        CU_ASSERT_TRUE(n >= 6);
        acc_adapter_close(ad);
    }
    CU_ASSERT_STRING_EQUAL(lists[0] ? lists[0] : "", lists[1] ? lists[1] : "?");
    free(lists[0]);
    free(lists[1]);
}

/* Defect 7: a booking's write went to the database after the calendar lock
 * was released, so a cancel of the same key could be written first: gone in
 * memory, back after a restart.  Threads book and cancel the same few keys
 * at once; what a reopened instance reads from disk must be what memory
 * said. */
#define RACE_THREADS 8
#define RACE_KEYS    3
#define RACE_OPS     1500
#define RACE_ROUNDS  4

struct racer {
    struct acc_adapter *ad;
    unsigned seed;
    acc_time t;
};

static void *race_worker(void *arg)
{
    struct racer *r = arg;
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "racer", .amount = 1};
    struct acc_error err;
    for (int i = 0; i < RACE_OPS; i++) {
        char key[32];
        snprintf(key, sizeof key, "race-%u", (unsigned)rand_r(&r->seed) % RACE_KEYS);
        struct acc_reservation out;
        if (rand_r(&r->seed) & 1) {
            if (acc_adapter_reserve(r->ad, key, &res, r->t, H, &out, &err) == ACC_OK)
                acc_reservation_release(&out);
        } else {
            acc_adapter_cancel(r->ad, key, NULL, &err);
        }
    }
    return NULL;
}

static void test_write_order(void)
{
    unsigned mismatches = 0;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        struct acc_adapter *ad = open_kind("sim-batch", "racer");
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        pthread_t th[RACE_THREADS];
        struct racer r[RACE_THREADS];
        for (int i = 0; i < RACE_THREADS; i++) {
            r[i] = (struct racer){ad, (unsigned)(round * 100 + i + 1), future() + 50 * H};
            pthread_create(&th[i], NULL, race_worker, &r[i]);
        }
        for (int i = 0; i < RACE_THREADS; i++)
            pthread_join(th[i], NULL);
        char *memory = bookings_of(ad);
        acc_adapter_close(ad);
        ad = open_kind("sim-batch", "racer");
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        char *disk = bookings_of(ad);
        CU_ASSERT_PTR_NOT_NULL_FATAL(memory);
        CU_ASSERT_PTR_NOT_NULL_FATAL(disk);
        if (strcmp(memory, disk) != 0) {
            fprintf(stderr, "round %d: memory had\n%sdisk has\n%s", round, memory, disk);
            mismatches++;
        }
        free(memory);
        free(disk);
        /* Start the next round empty. */
        for (int k = 0; k < RACE_KEYS; k++) {
            char key[32];
            snprintf(key, sizeof key, "race-%d", k);
            acc_adapter_cancel(ad, key, NULL, NULL);
        }
        acc_adapter_close(ad);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
}

struct canceller {
    struct acc_adapter *ad;
    const char *key;
};

static void *cancel_soon(void *arg)
{
    struct canceller *c = arg;
    usleep(200000); /* while the reserve's write is on its way */
    acc_adapter_cancel(c->ad, c->key, NULL, NULL);
    return NULL;
}

/* The same deterministically: the reserve's write is slow (fault
 * slow_write), and a cancel of the same key comes meanwhile.  The cancel
 * is the later change in memory, so it must be the later write too. */
static void test_write_order_slow(void)
{
    struct acc_adapter *ad = open_kind("sim-batch", "racer");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_buf reply = ACC_BUF_INIT;
    struct acc_error err;
    struct acc_kv slow[] = {{"call", "reserve"}, {"action", "slow_write"}, {"seconds", "1"}};
    ACC_ASSERT_OK(acc_adapter_control(ad, "fault", slow, 3, &reply, &err));
    acc_buf_release(&reply);
    struct canceller c = {ad, "slow-1"};
    pthread_t th;
    pthread_create(&th, NULL, cancel_soon, &c);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "racer", .amount = 1};
    struct acc_reservation out;
    acc_err rc = acc_adapter_reserve(ad, "slow-1", &res, future() + 60 * H, H, &out, &err);
    if (rc == ACC_OK)
        acc_reservation_release(&out);
    pthread_join(th, NULL);
    char *memory = bookings_of(ad);
    acc_adapter_close(ad);
    ad = open_kind("sim-batch", "racer");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    char *disk = bookings_of(ad);
    CU_ASSERT_PTR_NOT_NULL(memory);
    CU_ASSERT_PTR_NOT_NULL(disk);
    CU_ASSERT_PTR_NULL(memory ? strstr(memory, "slow-1") : "");
    CU_ASSERT_STRING_EQUAL(disk ? disk : "?", memory ? memory : "");
    free(memory);
    free(disk);
    acc_adapter_cancel(ad, "slow-1", NULL, NULL);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"reserve, query, cancel", test_reserve_query_cancel},
    {"a full resource is refused or booked later", test_full},
    {"unknown keys, past starts, unknown resources", test_unknown},
    {"bookings survive a reopen", test_reopen},
    {"fault injection", test_faults},
    {"a changed reservation counts the one it replaces as free", test_replacing},
    {"unknown settings are named", test_bad_settings},
    {"background load is deterministic", test_background_load_is_deterministic},
    {"concurrent bookings and cancels: disk equals memory", test_write_order},
    {"a cancel during a slow booking write is written last", test_write_order_slow},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"adapters", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
