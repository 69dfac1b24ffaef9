/* SPDX-License-Identifier: Apache-2.0 */
/* test_service.c - the service without HTTP: the negotiation queue (its
 * bound, its completions, terminate of a waiting job, shutdown with jobs
 * waiting and running), idempotent submissions, and the check before a
 * commit (a refused one releases what was booked). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "service.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

static const char ini[] = "[server]\n"
                          "allow_control = yes\n"
                          "[negotiation]\n"
                          "adapter_timeout = PT30S\n"
                          "workers = 1\n"
                          "queue_length = 3\n"
                          "max_pending = 3\n"
                          "[site a]\nadapter = sim-batch\nnodes = 64\n";

static const char doc[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>svc</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
    "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
    "</wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name=\"x\" "
    "wsag:ServiceName=\"metajob\"><co:Component><co:Site>a</co:Site><co:Nodes>1</co:Nodes>"
    "</co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
    "</wsag:AgreementOffer>";

struct svc_fixture {
    struct acc_config cfg;
    struct acc_service *svc;
};

static int open_svc_with(struct svc_fixture *f, const char *name,
                         const struct acc_service_options *opt)
{
    struct acc_error err;
    char db[512];
    if (!acc_test_db(name, db, sizeof db))
        return -1;
    if (acc_config_load_string(ini, name, &f->cfg, &err) || acc_config_set_db(&f->cfg, db, &err) ||
        acc_service_open_with(&f->cfg, opt, &f->svc, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int open_svc(struct svc_fixture *f, const char *name)
{
    return open_svc_with(f, name, NULL);
}

static void close_svc(struct svc_fixture *f)
{
    acc_service_close(f->svc);
    acc_config_release(&f->cfg);
}

static acc_err submit(struct acc_service *svc, const char *key, bool pending,
                      struct acc_submission *out, struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
    struct acc_submit s = {&o, doc, strlen(doc), key, pending, NULL, NULL};
    rc = acc_service_submit(svc, &s, out, err);
    /* A job took the offer (what is left is empty); a refusal leaves it. */
    if (rc == ACC_OK)
        CU_ASSERT_EQUAL(o.n_components, 0);
    acc_offer_release(&o);
    return rc;
}

static void hang(struct acc_service *svc, const char *seconds)
{
    struct acc_kv args[] = {{"call", "reserve"}, {"action", "hang"}, {"seconds", seconds}};
    struct acc_buf reply = ACC_BUF_INIT;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_service_control(svc, "a", "fault", args, 3, &reply, &err), ACC_OK);
    acc_buf_release(&reply);
}

struct counter {
    atomic_int calls;
};

static void count_call(void *arg)
{
    atomic_fetch_add(&((struct counter *)arg)->calls, 1);
}

/* The queue holds at most queue_length jobs (running included); beyond,
 * nothing is stored and the answer is Overloaded.  Waiters are called once. */
static void test_queue_bound_and_completion(void)
{
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc(&f, "bound"), 0);
    hang(f.svc, "2"); /* the first job holds the only worker for 2 s */
    struct acc_submission s[4];
    struct acc_error err;
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(submit(f.svc, NULL, true, &s[i], &err), ACC_OK);
    CU_ASSERT_EQUAL(submit(f.svc, NULL, true, &s[3], &err), ACC_ERR_OVERLOADED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "queue_length"));
    CU_ASSERT_PTR_NULL(s[3].job);

    struct counter c = {0};
    struct acc_nego_waiter w = {count_call, &c, NULL};
    CU_ASSERT_TRUE(acc_nego_when_done(s[2].job, &w));
    for (int i = 0; i < 3; i++) {
        acc_nego_wait(s[i].job);
        CU_ASSERT_EQUAL(acc_nego_result(s[i].job, &err), ACC_OK);
    }
    CU_ASSERT_EQUAL(atomic_load(&c.calls), 1);
    /* Once done, a waiter is not registered: the caller goes on at once. */
    CU_ASSERT_FALSE(acc_nego_when_done(s[2].job, &w));
    for (int i = 0; i < 3; i++)
        acc_nego_release(s[i].job);
    /* The queue has room again. */
    struct acc_submission more;
    CU_ASSERT_EQUAL(submit(f.svc, NULL, false, &more, &err), ACC_OK);
    acc_nego_wait(more.job);
    CU_ASSERT_EQUAL(acc_nego_result(more.job, &err), ACC_OK);
    acc_nego_release(more.job);
    close_svc(&f);
}

/* Terminate of a job still waiting for a worker ends it at once. */
static void test_terminate_waiting_job(void)
{
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc(&f, "terminate"), 0);
    hang(f.svc, "3");
    struct acc_submission first, second;
    struct acc_error err;
    CU_ASSERT_EQUAL(submit(f.svc, NULL, true, &first, &err), ACC_OK);
    CU_ASSERT_EQUAL(submit(f.svc, NULL, true, &second, &err), ACC_OK);
    usleep(100000); /* the first is in its hanging reserve */
    int64_t t0 = acc_mono_us();
    struct acc_agreement a;
    struct acc_nego *wait = NULL;
    CU_ASSERT_EQUAL(acc_service_terminate(f.svc, second.id, &a, &wait, &err), ACC_OK);
    acc_agreement_release(&a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(wait);
    acc_nego_wait(wait);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 1000000); /* not behind the hanging one */
    CU_ASSERT_EQUAL(acc_nego_result(wait, &err), ACC_ERR_CANCELLED);
    acc_nego_release(wait);
    CU_ASSERT_EQUAL(acc_service_get(f.svc, second.id, false, &a, &err), ACC_OK);
    CU_ASSERT_EQUAL(a.state, ACC_STATE_TERMINATED);
    acc_agreement_release(&a);
    acc_nego_wait(first.job);
    CU_ASSERT_EQUAL(acc_nego_result(first.job, &err), ACC_OK);
    acc_nego_release(first.job);
    acc_nego_release(second.job);
    close_svc(&f);
}

/* Shutdown: the running job rolls back, the waiting ones end without
 * negotiating; all are Interrupted and told so; nothing is Observed. */
static void test_shutdown_interrupts(void)
{
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc(&f, "shutdown"), 0);
    hang(f.svc, "60");
    struct acc_submission s[3];
    struct acc_error err;
    struct counter c = {0};
    struct acc_nego_waiter w[3];
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(submit(f.svc, NULL, i > 0, &s[i], &err), ACC_OK);
        w[i] = (struct acc_nego_waiter){count_call, &c, NULL};
        CU_ASSERT_TRUE(acc_nego_when_done(s[i].job, &w[i]));
    }
    usleep(100000);
    int64_t t0 = acc_mono_us();
    acc_service_shutdown(f.svc);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 2000000);
    CU_ASSERT_EQUAL(atomic_load(&c.calls), 3);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_TRUE(acc_nego_is_done(s[i].job));
        CU_ASSERT_EQUAL(acc_nego_result(s[i].job, &err), ACC_ERR_INTERRUPTED);
        struct acc_agreement a;
        CU_ASSERT_EQUAL(acc_service_get(f.svc, s[i].id, false, &a, &err), ACC_OK);
        CU_ASSERT_EQUAL(a.state, ACC_STATE_REJECTED);
        CU_ASSERT_STRING_EQUAL(a.fault_code ? a.fault_code : "", "Interrupted");
        acc_agreement_release(&a);
        acc_nego_release(s[i].job);
    }
    /* After the signal nothing new is taken. */
    struct acc_submission late;
    CU_ASSERT_EQUAL(submit(f.svc, NULL, false, &late, &err), ACC_ERR_INTERRUPTED);
    close_svc(&f);
}

/* The same key: the running job is shared, the same agreement answered;
 * another offer under the key is refused. */
static void test_idempotent_submissions(void)
{
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc(&f, "idem"), 0);
    hang(f.svc, "1");
    struct acc_submission a, b;
    struct acc_error err;
    CU_ASSERT_EQUAL(submit(f.svc, "k1", false, &a, &err), ACC_OK);
    CU_ASSERT_EQUAL(submit(f.svc, "k1", false, &b, &err), ACC_OK);
    CU_ASSERT_TRUE(b.replayed);
    CU_ASSERT_STRING_EQUAL(a.id, b.id);
    CU_ASSERT_PTR_EQUAL(a.job, b.job); /* waits on the first one's job: no polling */
    acc_nego_wait(b.job);
    CU_ASSERT_EQUAL(acc_nego_result(b.job, &err), ACC_OK);
    acc_nego_release(a.job);
    acc_nego_release(b.job);
    /* Done: a replay is answered from the store. */
    CU_ASSERT_EQUAL(submit(f.svc, "k1", false, &b, &err), ACC_OK);
    CU_ASSERT_TRUE(acc_nego_is_done(b.job));
    CU_ASSERT_EQUAL(acc_nego_result(b.job, &err), ACC_OK);
    acc_nego_release(b.job);
    close_svc(&f);
}

/* A check before commits that fails when told to, and notes what it saw. */
struct precommit {
    atomic_bool fail;
    atomic_int calls;
    bool complete; /* the last agreement shown was Observed, booked, with its offer */
};

static acc_err check_commit(void *arg, struct acc_agreement *a, struct acc_error *err)
{
    struct precommit *p = arg;
    atomic_fetch_add(&p->calls, 1);
    p->complete = a->state == ACC_STATE_OBSERVED && a->start > 0 && a->end > a->start &&
                  a->n_comps == 1 && a->comps[0].reservation && a->offer_xml &&
                  a->offer_len == strlen(doc) && memcmp(a->offer_xml, doc, a->offer_len) == 0;
    if (atomic_load(&p->fail))
        return acc_error_set(err, ACC_ERR_INVALID, "the check says no");
    return ACC_OK;
}

/* Whether `nodes` of site a's 64 are free for an hour from its earliest
 * start (now + lead_time, 5 s). */
static bool free_now(struct acc_service *svc, int64_t nodes)
{
    struct acc_frames fr;
    acc_frames_init(&fr);
    acc_time from, until;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_service_preview(svc, "a", nodes, 3600, 0, 0, &fr, &from, &until, &err),
                    ACC_OK);
    bool ok = fr.n > 0 && fr.v[0].start <= acc_now() + 60;
    acc_frames_release(&fr);
    return ok;
}

/* A negotiation whose check fails commits nothing: its reservations are
 * released and it is Rejected with the check's error. */
static void test_precommit_refuses_negotiation(void)
{
    struct precommit p = {.fail = true};
    struct acc_service_options opt = {.precommit = check_commit, .precommit_arg = &p};
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc_with(&f, "precommit", &opt), 0);
    struct acc_submission s;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(submit(f.svc, NULL, false, &s, &err), ACC_OK);
    acc_nego_wait(s.job);
    CU_ASSERT_EQUAL(acc_nego_result(s.job, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nothing was committed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the check says no"));
    acc_nego_release(s.job);
    CU_ASSERT_EQUAL(atomic_load(&p.calls), 1);
    CU_ASSERT_TRUE(p.complete);
    struct acc_agreement a;
    CU_ASSERT_EQUAL_FATAL(acc_service_get(f.svc, s.id, false, &a, &err), ACC_OK);
    CU_ASSERT_EQUAL(a.state, ACC_STATE_REJECTED);
    CU_ASSERT_STRING_EQUAL(a.fault_code ? a.fault_code : "", "InvalidOffer");
    CU_ASSERT_PTR_NOT_NULL(a.reason ? strstr(a.reason, "the check says no") : NULL);
    CU_ASSERT_TRUE(a.n_comps == 0 || !a.comps[0].reservation);
    acc_agreement_release(&a);
    CU_ASSERT_TRUE(free_now(f.svc, 64));
    /* The trace ends saying so. */
    struct acc_trace t;
    CU_ASSERT_EQUAL_FATAL(acc_service_trace(f.svc, s.id, &a, &t, &err), ACC_OK);
    CU_ASSERT_TRUE(t.n > 0 && t.v[t.n - 1].kind == ACC_TRACE_FAIL);
    CU_ASSERT_PTR_NOT_NULL(t.n && t.v[t.n - 1].detail ? strstr(t.v[t.n - 1].detail, "says no")
                                                      : NULL);
    acc_trace_release(&t);
    acc_agreement_release(&a);

    /* Passed, the same offer is agreed. */
    atomic_store(&p.fail, false);
    CU_ASSERT_EQUAL_FATAL(submit(f.svc, NULL, false, &s, &err), ACC_OK);
    acc_nego_wait(s.job);
    CU_ASSERT_EQUAL(acc_nego_result(s.job, &err), ACC_OK);
    acc_nego_release(s.job);
    CU_ASSERT_FALSE(free_now(f.svc, 64));
    close_svc(&f);
}

/* A modification whose check fails changes nothing: the new reservations
 * are released, the current version stays. */
static void test_precommit_refuses_modification(void)
{
    struct precommit p = {.fail = false};
    struct acc_service_options opt = {.precommit = check_commit, .precommit_arg = &p};
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc_with(&f, "premodify", &opt), 0);
    struct acc_submission s;
    struct acc_error err;
    CU_ASSERT_EQUAL_FATAL(submit(f.svc, NULL, false, &s, &err), ACC_OK);
    acc_nego_wait(s.job);
    CU_ASSERT_EQUAL_FATAL(acc_nego_result(s.job, &err), ACC_OK);
    acc_nego_release(s.job);
    CU_ASSERT_TRUE(free_now(f.svc, 63));

    atomic_store(&p.fail, true);
    struct acc_modification m = {.n_nodes = 1};
    snprintf(m.nodes[0].name, sizeof m.nodes[0].name, "x");
    m.nodes[0].value = 2;
    struct acc_agreement a;
    CU_ASSERT_EQUAL(acc_service_modify(f.svc, s.id, &m, &a, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the check says no"));
    CU_ASSERT_EQUAL(atomic_load(&p.calls), 2);
    CU_ASSERT_EQUAL_FATAL(acc_service_get(f.svc, s.id, false, &a, &err), ACC_OK);
    CU_ASSERT_EQUAL(a.state, ACC_STATE_OBSERVED);
    CU_ASSERT_EQUAL(a.version, 1);
    CU_ASSERT_EQUAL(a.n_comps, 1);
    CU_ASSERT_EQUAL(a.n_comps ? a.comps[0].nodes : 0, 1);
    acc_agreement_release(&a);
    /* The two nodes booked for the change were given back. */
    CU_ASSERT_TRUE(free_now(f.svc, 63));
    close_svc(&f);
}

/* A backup of a database that no driver of this build copies or dumps is
 * refused (no file to copy, nor a directory beside one), without the URL's
 * password.  (PostgreSQL's is dumped: tests/pg/test_pg_backup.sh.) */
static void test_backup_of_url_refused(void)
{
    struct svc_fixture f;
    CU_ASSERT_EQUAL_FATAL(open_svc(&f, "backup_url"), 0);
    char *file = f.cfg.db_path;
    char url[] = "mysql://accord:s3cret@db/accord";
    f.cfg.db_path = url;
    struct acc_buf out = ACC_BUF_INIT;
    struct acc_error err;
    int64_t n = -1;
    CU_ASSERT_EQUAL(acc_service_backup(f.svc, &out, &n, &err), ACC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot be copied by this build"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
    CU_ASSERT_EQUAL(out.len, 0);
    acc_buf_release(&out);
    f.cfg.db_path = file;
    close_svc(&f);
}

static int setup(void)
{
    struct acc_error err;
    return acc_xml_init(&err) ? 1 : 0;
}

static int teardown(void)
{
    acc_xml_cleanup();
    return 0;
}

static const struct acc_test_case tests[] = {
    {"queue bound and completions", test_queue_bound_and_completion},
    {"terminate a waiting job", test_terminate_waiting_job},
    {"shutdown interrupts", test_shutdown_interrupts},
    {"idempotent submissions", test_idempotent_submissions},
    {"a negotiation whose check fails commits nothing", test_precommit_refuses_negotiation},
    {"a modification whose check fails changes nothing", test_precommit_refuses_modification},
    {"a backup of a database no driver copies is refused", test_backup_of_url_refused},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"service", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
