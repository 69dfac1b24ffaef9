/* SPDX-License-Identifier: Apache-2.0 */
/* test_torture.c - allocation failure, in curl's manner: the Nth allocation
 * fails, for every N, over the offer parser, the store and the engine.  Every
 * run must answer an error or a whole result (never a crash, never success
 * with missing data), and every failure path must free what it took (the
 * sanitizer build runs this program under LeakSanitizer).
 *
 * The project's own code reaches the failing allocator through the linker
 * (--wrap=malloc,calloc,realloc,free,strdup,strndup, for this program only);
 * libxml2 through xmlMemSetup and SQLite through SQLITE_CONFIG_MALLOC.  A
 * scenario is run again with N = 1, 2, ... until a run makes fewer than N
 * allocations (threads make the count vary a little from run to run).
 *
 * ACC_TORTURE_STEP=k tries every kth N only (for a quick look by hand). */
#include <libxml/parser.h>
#include <pthread.h>
#include <libxml/xmlmemory.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "fake_adapter.h"
#include "store.h"
#include "strutil.h"
#include "testutil.h"
#include "xml.h"

/* ------------------------------------------------------ failing allocator */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_bool armed;
static atomic_long counted;   /* allocations since armed */
static long fail_at;          /* the one that fails (1-based) */
static atomic_bool triggered; /* whether it was reached */

static bool fail_now(void)
{
    if (!atomic_load(&armed))
        return false;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (n != fail_at)
        return false;
    atomic_store(&triggered, true);
    return true;
}

static void arm(long n)
{
    atomic_store(&counted, 0);
    atomic_store(&triggered, false);
    fail_at = n;
    atomic_store(&armed, true);
}

/* Whether the failure was reached; counting stops. */
static bool disarm(void)
{
    atomic_store(&armed, false);
    return atomic_load(&triggered);
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

void __wrap_free(void *p)
{
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = __wrap_malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* SQLite wants the size of an allocation back: it is kept in front. */
#define HDR 16

static void *sq_malloc(int n)
{
    char *p = __wrap_malloc((size_t)n + HDR);
    if (!p)
        return NULL;
    *(size_t *)p = (size_t)n;
    return p + HDR;
}

static void sq_free(void *p)
{
    if (p)
        __real_free((char *)p - HDR);
}

static void *sq_realloc(void *p, int n)
{
    if (!p)
        return sq_malloc(n);
    char *q = __wrap_realloc((char *)p - HDR, (size_t)n + HDR);
    if (!q)
        return NULL;
    *(size_t *)q = (size_t)n;
    return q + HDR;
}

static int sq_size(void *p)
{
    return p ? (int)*(size_t *)((char *)p - HDR) : 0;
}

static int sq_roundup(int n)
{
    return (n + 7) & ~7;
}

static int sq_init(void *ctx)
{
    (void)ctx;
    return SQLITE_OK;
}

static void sq_shutdown(void *ctx)
{
    (void)ctx;
}

/* libxml2's allocations go through the failing allocator only with
 * ACC_TORTURE_LIBXML2=1: Debian 12's libxml2 2.9.14 dereferences NULL inside
 * xmlSchemaValidateDoc when one of its own allocations fails (libxml2 made
 * itself safe against that in 2.11), which no caller can handle. */
static bool xml_may_fail;

static void *xml_malloc(size_t n)
{
    if (xml_may_fail)
        return __wrap_malloc(n);
    return __real_malloc(n);
}

static void *xml_realloc(void *p, size_t n)
{
    if (xml_may_fail)
        return __wrap_realloc(p, n);
    return __real_realloc(p, n);
}

static char *xml_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xml_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ------------------------------------------------------------- the driver */

enum outcome { ANSWERED_ERROR, WHOLE };

/* Runs the code under test with its nth allocation failing; *hit says whether
 * it was reached.  The scenario asserts what it must. */
typedef enum outcome (*scenario_fn)(long n, bool *hit);

static void torture(const char *what, scenario_fn scenario)
{
    long step = 1;
    const char *s = getenv("ACC_TORTURE_STEP");
    if (s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '\0' && v > 0)
            step = v;
    }
    long errors = 0, whole = 0, n;
    for (n = 1; n < 1000000; n += step) {
        bool hit = false;
        enum outcome o = scenario(n, &hit);
        if (!hit) {
            CU_ASSERT_EQUAL(o, WHOLE); /* nothing failed: it must succeed */
            break;
        }
        if (o == WHOLE)
            whole++;
        else
            errors++;
    }
    printf("\n  %s: allocations 1..%ld failed in turn (step %ld): %ld errors, %ld whole "
           "results ",
           what, n - 1, step, errors, whole);
    CU_ASSERT(errors > 0);
}

/* ---------------------------------------------------------- offer parser */

static char *offer_doc;
static size_t offer_len;
static struct acc_offer offer_ref;

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_offer(const struct acc_offer *a, const struct acc_offer *b)
{
    if (!str_eq(a->name, b->name) || !str_eq(a->initiator, b->initiator) ||
        a->n_components != b->n_components || a->n_links != b->n_links)
        return false;
    for (size_t i = 0; i < a->n_components; i++) {
        const struct acc_component *x = &a->components[i], *y = &b->components[i];
        if (!str_eq(x->name, y->name) || !str_eq(x->site, y->site) || x->nodes != y->nodes ||
            !str_eq(x->executable, y->executable) || x->n_args != y->n_args)
            return false;
        for (size_t k = 0; k < x->n_args; k++)
            if (!str_eq(x->args[k], y->args[k]))
                return false;
    }
    for (size_t i = 0; i < a->n_links; i++)
        if (!str_eq(a->links[i].name, b->links[i].name) ||
            a->links[i].bandwidth != b->links[i].bandwidth)
            return false;
    return true;
}

static enum outcome offer_scenario(long n, bool *hit)
{
    static const struct acc_offer zero;
    struct acc_offer o;
    struct acc_error err = {0};
    memset(&o, 0, sizeof o);
    arm(n);
    acc_err rc = acc_xml_parse_offer(offer_doc, offer_len, NULL, &o, &err);
    *hit = disarm();
    if (rc != ACC_OK) {
        CU_ASSERT(memcmp(&o, &zero, sizeof o) == 0); /* nothing left behind */
        CU_ASSERT(err.msg[0] != '\0');
        return ANSWERED_ERROR;
    }
    CU_ASSERT(same_offer(&o, &offer_ref));
    acc_offer_release(&o);
    return WHOLE;
}

static void test_offer(void)
{
    torture("offer parser", offer_scenario);
}

/* ------------------------------------------------------------------ store */

static char template_db[512]; /* a migrated database, copied for each run */

static void fill(struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, "tttttttttttttttt", sizeof a->id);
    a->name = strdup("run");
    a->initiator = strdup("alice");
    a->state = ACC_STATE_PENDING;
    a->created = a->updated = 1000;
    a->earliest = 2000;
    a->deadline = 90000;
    a->duration = 3600;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->offer_xml = strdup("<offer/>");
    a->offer_len = 8;
    a->terms = strdup("a");
    a->comps = calloc(1, sizeof *a->comps);
    a->n_comps = 1; /* the create ignores it; the settle writes it */
    a->comps[0] = (struct acc_alloc_component){.name = strdup("a"),
                                               .site = strdup("site1"),
                                               .nodes = 4,
                                               .ppn = 2,
                                               .reservation = strdup("key1"),
                                               .local_id = strdup("L1"),
                                               .node_names = strdup("n1,n2")};
}

static bool copy_file(const char *from, const char *to)
{
    size_t len;
    char *data = acc_test_slurp(from, &len);
    FILE *f = data ? fopen(to, "wb") : NULL;
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    free(data);
    return ok;
}

static void remove_db(const char *path)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, ext[i]);
        unlink(p);
    }
}

static bool is_settled(const struct acc_agreement *b)
{
    return b->state == ACC_STATE_OBSERVED && b->start == 5000 && b->end == 8600 &&
           b->n_comps == 1 && str_eq(b->comps[0].node_names, "n1,n2") &&
           str_eq(b->comps[0].reservation, "key1") && str_eq(b->offer_xml, "<offer/>");
}

static enum outcome store_scenario(long n, bool *hit)
{
    char path[600];
    snprintf(path, sizeof path, "%s/run.db", acc_test_tmpdir());
    remove_db(path);
    CU_ASSERT_FATAL(copy_file(template_db, path));
    struct acc_agreement a, b;
    fill(&a);
    memset(&b, 0, sizeof b);
    struct acc_trace t;
    acc_trace_init(&t);
    struct acc_trace_event ev = {.round = 1, .kind = ACC_TRACE_AGREE, .target = "site site1"};
    CU_ASSERT_FATAL(acc_trace_add(&t, &ev) == ACC_OK);
    struct acc_error err = {0};
    struct acc_store_options opt = {.path = path, .durable = false, .readers = 2};
    struct acc_store *st = NULL;
    bool created = false, settled = false, read = false;

    arm(n);
    acc_err rc = acc_store_open(&opt, &st, &err);
    if (rc) {
        CU_ASSERT_PTR_NULL(st);
        goto out;
    }
    rc = acc_store_agreement_create(st, &a, "alice\nk1", 0, NULL, NULL, &err);
    if (rc)
        goto out;
    created = true;
    a.state = ACC_STATE_OBSERVED;
    a.start = 5000;
    a.end = 8600;
    rc = acc_store_agreement_settle(st, &a, ACC_STATE_BIT(ACC_STATE_PENDING), &t, NULL, 0, &err);
    if (rc)
        goto out;
    settled = true;
    rc = acc_store_agreement_get(st, a.id, true, &b, &err);
    if (rc)
        goto out;
    read = true;
    if (!is_settled(&b)) /* read back whole, or an error */
        fprintf(stderr,
                "store: with allocation %ld failing, the agreement read back is "
                "partial (state %d, %zu components, node names %s, offer %s)\n",
                n, (int)b.state, b.n_comps, b.n_comps ? b.comps[0].node_names : "-",
                b.offer_xml ? b.offer_xml : "(none)");
    CU_ASSERT(is_settled(&b));
out:
    acc_store_close(st);
    *hit = disarm();
    if (rc)
        CU_ASSERT(err.msg[0] != '\0');

    /* What was answered as done is on disk (read without failures). */
    struct acc_agreement c;
    memset(&c, 0, sizeof c);
    st = NULL;
    CU_ASSERT_FATAL(acc_store_open(&opt, &st, &err) == ACC_OK);
    acc_err got = acc_store_agreement_get(st, a.id, true, &c, &err);
    if (created)
        CU_ASSERT_EQUAL(got, ACC_OK);
    if (settled && !got)
        CU_ASSERT(is_settled(&c));
    acc_agreement_release(&c);
    acc_store_close(st);
    remove_db(path);

    acc_trace_release(&t);
    acc_agreement_release(&a);
    acc_agreement_release(&b);
    return read ? WHOLE : ANSWERED_ERROR;
}

static void test_store(void)
{
    snprintf(template_db, sizeof template_db, "%s/template.db", acc_test_tmpdir());
    struct acc_store_options opt = {.path = template_db, .durable = false, .readers = 2};
    struct acc_store *st = NULL;
    ACC_ASSERT_OK(acc_store_open(&opt, &st, NULL));
    acc_store_close(st);
    torture("store", store_scenario);
}

/* ----------------------------------------------------------------- engine */

#define H  3600
#define T0 ((acc_time)1900000000)

/* The journal as the hooks saw it (fixed storage: the hooks allocate nothing). */
struct journal {
    pthread_mutex_t lock;
    struct acc_booking log[64];
    size_t n;
};

static struct journal journal_seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static acc_err journal(void *ctx, const struct acc_booking *b, size_t n, bool durable,
                       struct acc_error *err)
{
    (void)durable;
    (void)err;
    struct journal *j = ctx;
    pthread_mutex_lock(&j->lock);
    for (size_t i = 0; i < n && j->n < 64; i++)
        j->log[j->n++] = b[i];
    pthread_mutex_unlock(&j->lock);
    return ACC_OK;
}

/* Reservations of a resource whose last journal entry leaves them open. */
static size_t journal_open(const char *resource)
{
    size_t open = 0;
    for (size_t i = 0; i < journal_seen.n; i++) {
        const struct acc_booking *b = &journal_seen.log[i];
        bool later = false;
        for (size_t k = i + 1; k < journal_seen.n; k++)
            later |= strcmp(journal_seen.log[k].key, b->key) == 0;
        if (!later && strcmp(b->resource, resource) == 0 && b->state != ACC_BOOKING_CANCELLED)
            open++;
    }
    return open;
}

static void on_orphan(void *ctx, struct acc_adapter *ad, const struct acc_booking *b)
{
    (void)ctx;
    acc_adapter_cancel(ad, b->key, b->local_id, NULL);
}

static enum outcome engine_scenario(long n, bool *hit)
{
    static const char *const names[3] = {"a", "b", "c"};
    static const char *const labels[3] = {"site a", "site b", "site c"};
    struct acc_adapter *ad[3] = {0};
    struct fake *f[3] = {0};
    struct acc_engine_item items[3];
    memset(items, 0, sizeof items);
    for (int i = 0; i < 3; i++) {
        ad[i] = fake_open(names[i], ACC_RES_NODES, &f[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad[i]);
        acc_time open[] = {T0 + i * H, T0 + 100 * H};
        fake_frames(f[i], open, 1);
        items[i] =
            (struct acc_engine_item){.adapter = ad[i],
                                     .res = {.kind = ACC_RES_NODES, .name = names[i], .amount = 4},
                                     .label = labels[i]};
    }
    fake_script(f[1], FAKE_LATER, H); /* one rollback and a second round */
    journal_seen.n = 0;
    struct acc_engine_request r = {
        .agreement = "aaaabbbbccccdddd",
        .earliest = T0,
        .deadline = T0 + 100 * H,
        .duration = 2 * H,
        .strategy = ACC_STRATEGY_INTERSECT,
        .max_rounds = 32,
        .call_timeout_us = 5000000,
        .items = items,
        .n_items = 3,
        .hooks = {.journal = journal, .ctx = &journal_seen},
    };
    struct acc_engine_result res;
    memset(&res, 0, sizeof res);
    struct acc_engine *eng = NULL;
    struct acc_engine_options eo = {.max_threads = 8, .orphan = on_orphan};
    enum outcome o = ANSWERED_ERROR;

    arm(n);
    acc_err rc = acc_engine_new(&eo, &eng, NULL);
    if (!rc)
        rc = acc_engine_negotiate(eng, &r, &res);
    acc_engine_free(eng); /* waits for every adapter call */
    *hit = disarm();

    if (!rc && res.outcome == ACC_ENGINE_AGREED) {
        /* Whole: every item booked at the common start, and held. */
        if (fake_live(f[0]) + fake_live(f[1]) + fake_live(f[2]) != 3)
            fprintf(stderr,
                    "engine: with allocation %ld failing, agreed at %lld but %zu %zu %zu held\n", n,
                    (long long)(res.start - T0), fake_live(f[0]), fake_live(f[1]), fake_live(f[2]));
        CU_ASSERT_EQUAL(res.start, T0 + 3 * H);
        for (int i = 0; i < 3; i++) {
            acc_time start = 0;
            CU_ASSERT(fake_has(f[i], items[i].booking.key, &start));
            CU_ASSERT_EQUAL(start, T0 + 3 * H);
            CU_ASSERT_EQUAL(fake_live(f[i]), 1);
        }
        o = WHOLE;
    } else {
        /* An error: said, and nothing left booked that the journal does not
         * show open (recovery and housekeeping cancel those). */
        if (!rc)
            CU_ASSERT(res.err.msg[0] != '\0');
        for (int i = 0; i < 3; i++)
            CU_ASSERT(fake_live(f[i]) <= journal_open(names[i]));
    }
    acc_engine_items_release(items, 3);
    for (int i = 0; i < 3; i++)
        acc_adapter_close(ad[i]);
    return o;
}

static void test_engine(void)
{
    torture("engine", engine_scenario);
}

/* ------------------------------------------------------------------ setup */

static int setup(void)
{
    /* Before anything of libxml2 or SQLite allocates. */
    const char *x = getenv("ACC_TORTURE_LIBXML2");
    xml_may_fail = x && strcmp(x, "1") == 0;
    if (xmlMemSetup(__wrap_free, xml_malloc, xml_realloc, xml_strdup) != 0)
        return 1;
    static const sqlite3_mem_methods mem = {sq_malloc,  sq_free, sq_realloc,  sq_size,
                                            sq_roundup, sq_init, sq_shutdown, NULL};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &mem) != SQLITE_OK)
        return 1;
    struct acc_error err = {0};
    if (acc_xml_init(&err) != ACC_OK)
        return 1;
    offer_doc = acc_test_slurp(ACC_TEST_EXAMPLES "/offer-launch.xml", &offer_len);
    if (!offer_doc || acc_xml_parse_offer(offer_doc, offer_len, NULL, &offer_ref, &err) != ACC_OK)
        return 1;
    return 0;
}

static int teardown(void)
{
    acc_offer_release(&offer_ref);
    free(offer_doc);
    acc_xml_cleanup();
    return 0;
}

static const struct acc_test_case tests[] = {
    {"offer parser", test_offer},
    {"store", test_store},
    {"engine", test_engine},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"torture", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
