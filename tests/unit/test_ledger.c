/* SPDX-License-Identifier: Apache-2.0 */
/* test_ledger.c - the booking ledger (lib/ledger) on its own: settings,
 * reserve at the asked start or later, replacing, the calendar file read
 * back, and the steps the simulated sites take under its lock.  The
 * adapters built on it are tested in test_adapters.c and test_tc.c.  With
 * ACCORD_TEST_DB_URL (test_ledger_pg) the ledgers live in PostgreSQL, shared
 * by every ledger opened on it as by several accordd instances, each
 * reading what the others changed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "testutil.h"

#define H 3600

static acc_time next_hour(int n)
{
    return (acc_now() / H + n) * H;
}

static struct acc_ledger *open_ledger(const char *name, const char *db_path,
                                      const struct acc_kv *kv, size_t n)
{
    struct acc_ledger_options o;
    struct acc_ledger *l = NULL;
    struct acc_error err = {0};
    acc_ledger_options_init(&o);
    ACC_ASSERT_OK(acc_ledger_options_apply(&o, kv, n, &err));
    ACC_ASSERT_OK(acc_ledger_open(name, db_path, &o, false, &l, &err));
    ACC_ASSERT_OK(acc_ledger_add_resource(l, "nodes", 10, &err));
    ACC_ASSERT_OK(acc_ledger_load(l, &err));
    return l;
}

/* The database a test's ledgers live in: in memory, or a fresh PostgreSQL
 * database. */
static const char *db_of(const char *name)
{
    static char url[8][512];
    static int next;
    if (!acc_test_db_is_pg())
        return ":memory:";
    char *u = url[next++ % 8];
    CU_ASSERT_FATAL(acc_test_db(name, u, sizeof url[0]));
    return u;
}

static void test_options(void)
{
    struct acc_ledger_options o;
    struct acc_error err = {0};
    acc_ledger_options_init(&o);
    CU_ASSERT_TRUE(o.later);
    CU_ASSERT_EQUAL(o.max_later, 30 * 86400);
    CU_ASSERT_PTR_NULL(o.calendar);
    CU_ASSERT_TRUE(acc_ledger_takes("calendar") && acc_ledger_takes("on_conflict") &&
                   acc_ledger_takes("max_later"));
    CU_ASSERT_FALSE(acc_ledger_takes("load"));
    ACC_ASSERT_OK(acc_ledger_option(&o, "on_conflict", "refuse", &err));
    CU_ASSERT_FALSE(o.later);
    ACC_ASSERT_OK(acc_ledger_option(&o, "max_later", "PT2H", &err));
    CU_ASSERT_EQUAL(o.max_later, 2 * H);
    CU_ASSERT_EQUAL(acc_ledger_option(&o, "on_conflict", "maybe", &err), ACC_ERR_CONFIG);
    CU_ASSERT_NOT_EQUAL(acc_ledger_option(&o, "max_later", "soon", &err), ACC_OK);
    /* apply leaves other keys alone and names a wrong one */
    const struct acc_kv kv[] = {{"load", "yes"}, {"max_later", "-PT1H"}};
    CU_ASSERT_EQUAL(acc_ledger_options_apply(&o, kv, 1, &err), ACC_OK);
    CU_ASSERT_EQUAL(acc_ledger_options_apply(&o, kv, 2, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "setting 'max_later'"));
    /* a ledger needs a file, or a database to put it beside */
    struct acc_ledger *l = NULL;
    acc_ledger_options_init(&o);
    CU_ASSERT_EQUAL(acc_ledger_open("x", NULL, &o, false, &l, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(l);
    acc_ledger_free(NULL);
}

static void test_reserve(void)
{
    struct acc_ledger *l = open_ledger("site", db_of("reserve"), NULL, 0);
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(acc_ledger_add_resource(l, "empty", 0, &err), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(acc_ledger_name(l), "site");
    CU_ASSERT_EQUAL(acc_ledger_n_resources(l), 1);
    CU_ASSERT_STRING_EQUAL(acc_ledger_resource_name(l, 0), "nodes");
    acc_time start = next_hour(2);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 6};
    struct acc_reservation r, again;
    ACC_ASSERT_OK(acc_ledger_reserve(l, "k1", NULL, &res, start, H, &r, &err));
    CU_ASSERT_EQUAL(r.start, start);
    CU_ASSERT_EQUAL(r.end, start + H);
    CU_ASSERT_EQUAL(r.amount, 6);
    CU_ASSERT_EQUAL(strncmp(r.local_id, "site-", 5), 0);
    /* the same key again: the same booking */
    ACC_ASSERT_OK(acc_ledger_reserve(l, "k1", NULL, &res, start + H, H, &again, &err));
    CU_ASSERT_EQUAL(again.start, start);
    CU_ASSERT_STRING_EQUAL(again.local_id, r.local_id);
    /* taken: booked later, right after */
    ACC_ASSERT_OK(acc_ledger_reserve(l, "k2", NULL, &res, start, H, &r, &err));
    CU_ASSERT_EQUAL(r.start, start + H);
    ACC_ASSERT_OK(acc_ledger_query(l, "k2", &again, &err));
    CU_ASSERT_EQUAL(again.start, start + H);
    struct acc_ledger_booking b;
    CU_ASSERT_TRUE(acc_ledger_get(l, "k2", &b));
    CU_ASSERT_EQUAL(b.res, 0);
    CU_ASSERT_EQUAL(b.amount, 6);
    CU_ASSERT_PTR_NULL(b.owner);
    /* what is wrong is said */
    CU_ASSERT_EQUAL(acc_ledger_reserve(l, "k3", NULL, &res, acc_now() - H, H, &r, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in the past"));
    struct acc_resource other = {.kind = ACC_RES_NODES, .name = "gpus", .amount = 1};
    CU_ASSERT_EQUAL(acc_ledger_reserve(l, "k3", NULL, &other, start, H, &r, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site has no resource 'gpus'"));
    /* cancel, and the key is gone */
    ACC_ASSERT_OK(acc_ledger_cancel(l, "k2", &err));
    CU_ASSERT_EQUAL(acc_ledger_query(l, "k2", &r, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_FALSE(acc_ledger_get(l, "k2", &b));
    ACC_ASSERT_OK(acc_ledger_cancel(l, "k2", &err)); /* again: nothing to do */
    acc_ledger_free(l);
}

static void test_refuse_and_replace(void)
{
    const struct acc_kv refuse[] = {{"on_conflict", "refuse"}};
    struct acc_ledger *l = open_ledger("net", db_of("refuse"), refuse, 1);
    struct acc_error err = {0};
    acc_time start = next_hour(2);
    struct acc_resource six = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 6},
                        eight = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 8};
    struct acc_reservation r;
    ACC_ASSERT_OK(acc_ledger_reserve(l, "old", NULL, &six, start, H, &r, &err));
    CU_ASSERT_EQUAL(acc_ledger_reserve(l, "new", NULL, &eight, start, H, &r, &err), ACC_ERR_BUSY);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "8 of nodes not free"));
    /* with the old booking counted as free, 8 fit from the start */
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_ledger_preview(l, NULL, &eight, start, start + 2 * H, H, &f, &err));
    CU_ASSERT_TRUE(f.n == 1 && f.v[0].start == start + H);
    acc_frames_reset(&f);
    ACC_ASSERT_OK(acc_ledger_preview(l, "old", &eight, start, start + 2 * H, H, &f, &err));
    CU_ASSERT_TRUE(f.n == 1 && f.v[0].start == start);
    acc_frames_release(&f);
    ACC_ASSERT_OK(acc_ledger_reserve(l, "new", "old", &eight, start, H, &r, &err));
    CU_ASSERT_EQUAL(r.start, start);
    /* both exist until one is cancelled: the calendar holds 14 of 10 */
    acc_ledger_lock(l);
    CU_ASSERT_EQUAL(acc_ledger_count_locked(l), 2);
    CU_ASSERT_EQUAL(acc_calendar_peak(acc_ledger_calendar_locked(l, 0), start, start + H), 14);
    acc_ledger_unlock(l);
    /* and so when read back from a shared store (a query and a preview
     * read the stored bookings again): neither is dropped */
    ACC_ASSERT_OK(acc_ledger_query(l, "new", &r, &err));
    ACC_ASSERT_OK(acc_ledger_query(l, "old", &r, &err));
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_ledger_preview(l, NULL, &six, start, start + 2 * H, H, &f, &err));
    CU_ASSERT_TRUE(f.n == 1 && f.v[0].start == start + H);
    acc_frames_release(&f);
    acc_ledger_lock(l);
    CU_ASSERT_EQUAL(acc_ledger_count_locked(l), 2);
    CU_ASSERT_EQUAL(acc_calendar_peak(acc_ledger_calendar_locked(l, 0), start, start + H), 14);
    acc_ledger_unlock(l);
    ACC_ASSERT_OK(acc_ledger_cancel(l, "old", &err));
    acc_ledger_lock(l);
    CU_ASSERT_EQUAL(acc_calendar_peak(acc_ledger_calendar_locked(l, 0), start, start + H), 8);
    acc_ledger_unlock(l);
    acc_ledger_free(l);
}

static void count_one(const char *key, const struct acc_ledger_booking *b, void *ctx)
{
    (void)key;
    if (strcmp(b->owner, "background") == 0)
        (*(int *)ctx)++;
}

static void test_file_and_locked_steps(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ledger.calendar", acc_test_tmpdir());
    remove(path);
    const struct acc_kv file[] = {{"calendar", path}};
    struct acc_ledger *l = open_ledger("site", NULL, file, 1);
    struct acc_error err = {0};
    acc_time start = next_hour(3);
    struct acc_resource res = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 4};
    struct acc_reservation r;
    ACC_ASSERT_OK(acc_ledger_reserve(l, "kept", NULL, &res, start, H, &r, &err));
    ACC_ASSERT_OK(acc_ledger_written(l, "kept", &err));
    /* a day's bookings and its mark, in one write, as the background load */
    const char *keys[] = {"bg1", "bg2"};
    struct acc_sql_ticket *w = NULL;
    acc_ledger_lock(l);
    ACC_ASSERT_OK(
        acc_ledger_book_locked(l, "bg1", 0, start + 2 * H, start + 3 * H, 2, "background"));
    ACC_ASSERT_OK(
        acc_ledger_book_locked(l, "bg2", 0, start + 2 * H, start + 3 * H, 2, "background"));
    CU_ASSERT_EQUAL(acc_ledger_book_locked(l, "bg3", 0, start, start + H, 7, "background"),
                    ACC_ERR_BUSY);
    ACC_ASSERT_OK(acc_ledger_persist_locked(l, keys, 2, 42, &w, &err));
    acc_ledger_unlock(l);
    ACC_ASSERT_OK(acc_ledger_wait(l, w, &err));
    bool marked = false;
    ACC_ASSERT_OK(acc_ledger_day_marked(l, 42, &marked, &err));
    CU_ASSERT_TRUE(marked);
    ACC_ASSERT_OK(acc_ledger_day_marked(l, 43, &marked, &err));
    CU_ASSERT_FALSE(marked);
    acc_ledger_free(l);

    /* read back: every booking, with its owner */
    l = open_ledger("site", NULL, file, 1);
    struct acc_ledger_booking b;
    CU_ASSERT_TRUE(acc_ledger_get(l, "kept", &b));
    CU_ASSERT_EQUAL(b.start, start);
    CU_ASSERT_EQUAL(b.amount, 4);
    int background = 0;
    acc_ledger_lock(l);
    acc_ledger_each_locked(l, count_one, &background);
    CU_ASSERT_EQUAL(acc_calendar_peak(acc_ledger_calendar_locked(l, 0), start, start + 4 * H), 4);
    acc_ledger_unlock(l);
    CU_ASSERT_EQUAL(background, 2);
    ACC_ASSERT_OK(acc_ledger_day_marked(l, 42, &marked, &err));
    CU_ASSERT_TRUE(marked);
    acc_ledger_free(l);

    /* a resource no longer there: its bookings are not loaded */
    struct acc_ledger_options o;
    acc_ledger_options_init(&o);
    o.calendar = path;
    ACC_ASSERT_OK(acc_ledger_open("site", NULL, &o, false, &l, &err));
    ACC_ASSERT_OK(acc_ledger_add_resource(l, "links", 10, &err));
    ACC_ASSERT_OK(acc_ledger_load(l, &err));
    CU_ASSERT_FALSE(acc_ledger_get(l, "kept", &b));
    acc_ledger_free(l);
    remove(path);
}

/* What ledger l's calendar holds over [start, start + H) once a preview
 * has brought it up to date (on PostgreSQL it reads what changed). */
static int64_t synced_peak(struct acc_ledger *l, acc_time start)
{
    struct acc_resource one = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 1};
    struct acc_error err = {0};
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_ledger_preview(l, NULL, &one, start, start + H, H, &f, &err));
    acc_frames_release(&f);
    acc_ledger_lock(l);
    int64_t peak = acc_calendar_peak(acc_ledger_calendar_locked(l, 0), start, start + H);
    acc_ledger_unlock(l);
    return peak;
}

/* Two ledgers on one PostgreSQL database, as two accordd: the second sees
 * the first's booking, cancel and replacement (both bookings counted until
 * the old one is cancelled, even beyond the capacity) by reading only what
 * changed, and decides on them; after many bookings a sync still reads only
 * the rows written since the last one, and none a ledger wrote itself.  On
 * SQLite a calendar is nobody else's: nothing is read back. */
#define MANY 200

static void test_changes_seen_by_another(void)
{
    const struct acc_kv refuse[] = {{"on_conflict", "refuse"}};
    const char *db = db_of("changes");
    struct acc_ledger *a = open_ledger("site", db, refuse, 1);
    struct acc_error err = {0};
    struct acc_reservation r;
    acc_time start = next_hour(2);
    struct acc_resource four = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 4},
                        six = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 6},
                        eight = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 8},
                        three = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 3};
    if (!acc_test_db_is_pg()) {
        ACC_ASSERT_OK(acc_ledger_reserve(a, "a1", NULL, &four, start, H, &r, &err));
        CU_ASSERT_EQUAL(synced_peak(a, start), 4);
        CU_ASSERT_EQUAL(acc_ledger_rows_read(a), 0);
        acc_ledger_free(a);
        return;
    }
    struct acc_ledger *b = open_ledger("site", db, refuse, 1);
    /* c has one more resource, and is opened before b2 is booked */
    struct acc_ledger *c = NULL;
    struct acc_ledger_options o;
    acc_ledger_options_init(&o);
    ACC_ASSERT_OK(acc_ledger_open("site", db, &o, false, &c, &err));
    ACC_ASSERT_OK(acc_ledger_add_resource(c, "nodes", 10, &err));
    ACC_ASSERT_OK(acc_ledger_add_resource(c, "gpus", 4, &err));
    ACC_ASSERT_OK(acc_ledger_load(c, &err));
    CU_ASSERT_EQUAL(synced_peak(b, start), 0);
    ACC_ASSERT_OK(acc_ledger_reserve(a, "a1", NULL, &four, start, H, &r, &err));
    CU_ASSERT_EQUAL(synced_peak(b, start), 4);
    struct acc_ledger_booking got;
    CU_ASSERT_TRUE(acc_ledger_get(b, "a1", &got) && got.amount == 4 && got.start == start);
    ACC_ASSERT_OK(acc_ledger_cancel(a, "a1", &err));
    CU_ASSERT_EQUAL(synced_peak(b, start), 0);
    CU_ASSERT_FALSE(acc_ledger_get(b, "a1", &got));
    CU_ASSERT_EQUAL(acc_ledger_query(b, "a1", &r, &err), ACC_ERR_NOT_FOUND);
    /* replaced: both count on b too until the old one goes */
    ACC_ASSERT_OK(acc_ledger_reserve(a, "old", NULL, &six, start, H, &r, &err));
    ACC_ASSERT_OK(acc_ledger_reserve(a, "new", "old", &eight, start, H, &r, &err));
    CU_ASSERT_EQUAL(synced_peak(b, start), 14);
    CU_ASSERT_EQUAL(acc_ledger_reserve(b, "b1", NULL, &three, start, H, &r, &err), ACC_ERR_BUSY);
    ACC_ASSERT_OK(acc_ledger_cancel(a, "old", &err));
    CU_ASSERT_EQUAL(synced_peak(b, start), 8);
    CU_ASSERT_EQUAL(acc_ledger_reserve(b, "b1", NULL, &three, start, H, &r, &err), ACC_ERR_BUSY);
    /* a's query reads the key itself: the booking as stored */
    ACC_ASSERT_OK(acc_ledger_query(b, "new", &r, &err));
    CU_ASSERT_EQUAL(r.amount, 8);

    /* many bookings: b reads them once, then only what is new */
    struct acc_resource one = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 1};
    char key[32];
    for (int i = 0; i < MANY; i++) {
        snprintf(key, sizeof key, "many-%d", i);
        ACC_ASSERT_OK(acc_ledger_reserve(a, key, NULL, &one, start + (i + 1) * H, H, &r, &err));
    }
    uint64_t before = acc_ledger_rows_read(b);
    CU_ASSERT_EQUAL(synced_peak(b, start + H), 1);
    CU_ASSERT_EQUAL(acc_ledger_rows_read(b) - before, MANY);
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "more-%d", i);
        acc_time at = start + (MANY + 1 + i) * H;
        ACC_ASSERT_OK(acc_ledger_reserve(a, key, NULL, &one, at, H, &r, &err));
        before = acc_ledger_rows_read(b);
        CU_ASSERT_EQUAL(synced_peak(b, at), 1);
        CU_ASSERT_EQUAL(acc_ledger_rows_read(b) - before, 1); /* the one new row */
    }
    /* b's own booking is not read back by b; a reads it, once */
    before = acc_ledger_rows_read(b);
    ACC_ASSERT_OK(acc_ledger_reserve(b, "b2", NULL, &one, start + 2 * H, H, &r, &err));
    CU_ASSERT_EQUAL(synced_peak(b, start + 2 * H), 2);
    CU_ASSERT_EQUAL(acc_ledger_rows_read(b) - before, 0);
    before = acc_ledger_rows_read(a);
    CU_ASSERT_EQUAL(synced_peak(a, start + 2 * H), 2);
    CU_ASSERT_EQUAL(synced_peak(a, start + 2 * H), 2);
    CU_ASSERT_EQUAL(acc_ledger_rows_read(a) - before, 1);
    /* a key stays on its resource: b, not having seen it, is told so */
    struct acc_resource gpu = {.kind = ACC_RES_NODES, .name = "gpus", .amount = 1};
    CU_ASSERT_EQUAL(acc_ledger_reserve(c, "b2", NULL, &gpu, start, H, &r, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "booking b2 is stored for another resource"));
    CU_ASSERT_FALSE(acc_ledger_get(c, "b2", &got) && got.res == 1);
    acc_ledger_free(c);
    acc_ledger_free(a);
    acc_ledger_free(b);
}

/* Several ledgers on one database (on PostgreSQL: as several accordd
 * instances, each with its own connection and its own calendars in
 * memory; on SQLite one ledger, the file having one writer), threads of
 * each booking 3 of the 10 nodes for the same hour at once: 3 bookings
 * succeed, never 4, and the calendar read back holds 9. */
#define RACERS 16

struct racer {
    struct acc_ledger *l;
    int i;
};

static atomic_int won, lost, failed;

static void *race(void *arg)
{
    struct racer *x = arg;
    struct acc_resource three = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 3};
    struct acc_reservation r;
    struct acc_error err = {0};
    char key[32];
    snprintf(key, sizeof key, "race-%d", x->i);
    acc_err rc = acc_ledger_reserve(x->l, key, NULL, &three, next_hour(3), H, &r, &err);
    if (!rc)
        rc = acc_ledger_query(x->l, key, &r, &err);
    atomic_fetch_add(rc == ACC_OK ? &won : rc == ACC_ERR_BUSY ? &lost : &failed, 1);
    if (rc && rc != ACC_ERR_BUSY)
        fprintf(stderr, "racer %d: %s\n", x->i, err.msg);
    return NULL;
}

static void test_no_double_booking(void)
{
    const struct acc_kv refuse[] = {{"on_conflict", "refuse"}};
    char db[512];
    CU_ASSERT_FATAL(acc_test_db("race", db, sizeof db));
    int n_ledgers = acc_test_db_is_pg() ? 4 : 1;
    struct acc_ledger *l[4];
    for (int i = 0; i < n_ledgers; i++)
        l[i] = open_ledger("site", db, refuse, 1);
    pthread_t t[RACERS];
    struct racer x[RACERS];
    atomic_store(&won, 0);
    atomic_store(&lost, 0);
    atomic_store(&failed, 0);
    for (int i = 0; i < RACERS; i++) {
        x[i] = (struct racer){l[i % n_ledgers], i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, race, &x[i]), 0);
    }
    for (int i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&won), 3);
    CU_ASSERT_EQUAL(atomic_load(&lost), RACERS - 3);
    CU_ASSERT_EQUAL(atomic_load(&failed), 0);
    for (int i = 0; i < n_ledgers; i++)
        acc_ledger_free(l[i]);
    /* read back by a ledger that booked nothing: 9 of 10 taken */
    struct acc_ledger *check = open_ledger("site", db, refuse, 1);
    struct acc_error err = {0};
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_resource two = {.kind = ACC_RES_NODES, .name = "nodes", .amount = 2};
    acc_time start = next_hour(3);
    ACC_ASSERT_OK(acc_ledger_preview(check, NULL, &two, start, start + H, H, &f, &err));
    CU_ASSERT_EQUAL(f.n, 0); /* 2 more do not fit: 9 are taken */
    acc_ledger_lock(check);
    CU_ASSERT_EQUAL(acc_calendar_peak(acc_ledger_calendar_locked(check, 0), start, start + H), 9);
    acc_ledger_unlock(check);
    acc_frames_release(&f);
    acc_ledger_free(check);
}

static const struct acc_test_case tests[] = {
    {"settings", test_options},
    {"reserve, later, query, cancel", test_reserve},
    {"refuse, and a booking replaced", test_refuse_and_replace},
    {"the calendar file and the locked steps", test_file_and_locked_steps},
    {"another ledger on the database sees what changed, and only that",
     test_changes_seen_by_another},
    {"ledgers sharing a database book no more than there is", test_no_double_booking},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"ledger", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
