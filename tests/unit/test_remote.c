/* SPDX-License-Identifier: Apache-2.0 */
/* test_remote.c - the remote adapter against a site daemon on loopback with
 * mutual TLS (tests/support/fake_site.c serving a sim-batch calendar over
 * the adapter protocol): round trips, idempotent reserve by key, kept-alive
 * connections, time limits, unreachable sites, the site's faults, bounded
 * retries of idempotent calls only, interrupt, settings and TLS checks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "adapter.h"
#include "fake_site.h"
#include "testutil.h"

#define H 3600

static char certs[512], db[512], url[64];
static struct acc_adapter *backing; /* the site's own calendar */
static struct fake_site *site;

static const char *cert(const char *file)
{
    static char paths[8][600];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 600, "%s/%s", certs, file);
    return p;
}

static int setup(void)
{
    snprintf(certs, sizeof certs, "%s/certs", acc_test_tmpdir());
    snprintf(db, sizeof db, "%s/site.db", acc_test_tmpdir());
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "sh %s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR,
             certs);
    if (system(cmd) != 0)
        return 1;
    struct acc_kv settings[] = {{"load", "no"}};
    struct acc_adapter_env env = {.name = "site16",
                                  .section = "[site site16]",
                                  .db_path = db,
                                  .settings = settings,
                                  .n_settings = 1,
                                  .nodes = 16};
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find("sim-batch"), &env, &backing, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    struct fake_site_cfg cfg = {.name = "alpha",
                                .ad = backing,
                                .certificate = cert("site-alpha.crt"),
                                .key = cert("site-alpha.key"),
                                .client_ca = cert("ca.crt")};
    site = fake_site_start(&cfg);
    if (!site)
        return 1;
    snprintf(url, sizeof url, "https://127.0.0.1:%u", (unsigned)fake_site_port(site));
    return 0;
}

static int teardown(void)
{
    fake_site_stop(site);
    acc_adapter_close(backing);
    return 0;
}

/* A remote adapter for site alpha with extra settings (NULL-terminated
 * key/value pairs); NULL and err set when open failed. */
static struct acc_adapter *open_remote_with(const char *where, bool network,
                                            const char *const *extra, struct acc_error *err)
{
    struct acc_kv kv[24];
    size_t n = 0;
    if (where)
        kv[n++] = (struct acc_kv){"url", where};
    kv[n++] = (struct acc_kv){"ca", cert("ca.crt")};
    kv[n++] = (struct acc_kv){"certificate", cert("accord.crt")};
    kv[n++] = (struct acc_kv){"key", cert("accord.key")};
    kv[n++] = (struct acc_kv){"remote_name", "site16"};
    kv[n++] = (struct acc_kv){"timeout", "2"};
    kv[n++] = (struct acc_kv){"connect_timeout", "1"};
    for (size_t i = 0; extra && extra[i]; i += 2)
        kv[n++] = (struct acc_kv){extra[i], extra[i + 1]};
    static const struct acc_link_def links[] = {{"a-b", "a", "b", 1000}};
    struct acc_adapter_env env = {.name = network ? "wan" : "alpha",
                                  .section = network ? "[network wan]" : "[site alpha]",
                                  .db_path = db,
                                  .settings = kv,
                                  .n_settings = n,
                                  .nodes = 16,
                                  .links = network ? links : NULL,
                                  .n_links = network ? 1 : 0};
    struct acc_adapter *ad = NULL;
    if (acc_adapter_open(acc_adapter_kind_find("remote"), &env, &ad, err))
        return NULL;
    return ad;
}

static struct acc_adapter *open_remote(const char *const *extra)
{
    struct acc_error err = {0};
    struct acc_adapter *ad = open_remote_with(url, false, extra, &err);
    if (!ad)
        fprintf(stderr, "open remote: %s\n", err.msg);
    return ad;
}

/* A counter of the adapter's "stats" control. */
static long long stat_of(struct acc_adapter *ad, const char *name)
{
    struct acc_buf b = ACC_BUF_INIT;
    long long v = -1;
    if (acc_adapter_control(ad, "stats", NULL, 0, &b, NULL) == ACC_OK) {
        const char *p = strstr(acc_buf_str(&b), name);
        if (p)
            v = strtoll(p + strlen(name) + 1, NULL, 10);
    }
    acc_buf_release(&b);
    return v;
}

static acc_time future(void)
{
    return (acc_now() / H + 48) * H;
}

static const struct acc_resource four = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 4};

/* The remote adapter sends whom a call is for; the user's token only with
 * forward_token = the site's audience, and only when the token's "aud"
 * names it ("yes" names none: refused). */
static void test_identity_sent(void)
{
    /* {"aud":["https://accord.example","https://alpha.example"]} and
     * {"aud":"https://accord.example"} (not verified by the broker: the
     * site does that) */
    static const char both[] = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOlsiaHR0cHM6Ly9hY2NvcmQuZXhhbXBsZSIsIm"
                               "h0dHBzOi8vYWxwaGEuZXhhbXBsZSJdfQ.c2ln";
    static const char accord_only[] =
        "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2FjY29yZC5leGFtcGxlIn0.c2ln";
    static const struct {
        const char *setting, *token;
        bool sent;
    } cases[] = {
        {"no", both, false},
        {"https://alpha.example", both, true},
        {"https://alpha.example", accord_only, false},
        {"https://alpha.example", "not-a-jwt", false},
        {"https://beta.example", both, false},
    };
    char user[64], token[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct acc_identity alice = {.user = "alice", .token = (char *)cases[i].token};
        struct acc_resource res = four;
        res.identity = &alice;
        const char *extra[] = {"forward_token", cases[i].setting, NULL};
        struct acc_adapter *ad = open_remote(extra);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        struct acc_frames f;
        acc_frames_init(&f);
        struct acc_error err;
        ACC_ASSERT_OK(acc_adapter_preview(ad, &res, future(), future() + 10 * H, H, &f, &err));
        acc_frames_release(&f);
        fake_site_last_identity(site, user, sizeof user, token, sizeof token);
        CU_ASSERT_STRING_EQUAL(user, "alice");
        CU_ASSERT_STRING_EQUAL(token, cases[i].sent ? cases[i].token : "");
        acc_adapter_close(ad);
    }
    const char *yes[] = {"forward_token", "yes", NULL};
    struct acc_error why = {0};
    CU_ASSERT_PTR_NULL(open_remote_with(url, false, yes, &why));
    CU_ASSERT_EQUAL(why.code, ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "name the site's audience"));
    /* never over plain http, even where insecure_http allows the url */
    const char *in_clear[] = {"forward_token", "https://alpha.example", "insecure_http", "yes",
                              NULL};
    memset(&why, 0, sizeof why);
    CU_ASSERT_PTR_NULL(open_remote_with("http://127.0.0.1:1", false, in_clear, &why));
    CU_ASSERT_EQUAL(why.code, ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "never sent over http://"));
    /* no one named: no identity sent */
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_preview(ad, &four, future(), future() + 10 * H, H, &f, &err));
    acc_frames_release(&f);
    fake_site_last_identity(site, user, sizeof user, token, sizeof token);
    CU_ASSERT_STRING_EQUAL(user, "");
    acc_adapter_close(ad);
}

static void test_round_trips(void)
{
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    CU_ASSERT_TRUE(h.up);
    CU_ASSERT_TRUE(h.rtt_us > 0);
    CU_ASSERT_STRING_EQUAL(h.endpoint, url);
    CU_ASSERT_PTR_NOT_NULL(strstr(h.detail, "alpha"));

    acc_time t = future();
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_adapter_preview(ad, &four, t, t + 24 * H, 2 * H, &f, NULL));
    CU_ASSERT_EQUAL_FATAL(f.n, 1);
    CU_ASSERT_EQUAL(f.v[0].start, t);
    CU_ASSERT_EQUAL(f.v[0].end, t + 24 * H);

    struct acc_reservation r, q, again;
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rt-1", &four, t, 2 * H, &r, NULL));
    CU_ASSERT_EQUAL(r.start, t);
    CU_ASSERT_EQUAL(r.end, t + 2 * H);
    CU_ASSERT_EQUAL(r.amount, 4);
    CU_ASSERT_TRUE(r.local_id[0] != '\0');
    ACC_ASSERT_OK(acc_adapter_query(ad, "rt-1", NULL, &q, NULL));
    CU_ASSERT_STRING_EQUAL(q.local_id, r.local_id);
    CU_ASSERT_EQUAL(q.start, t);
    /* the booking is at the site, under the key accordd chose */
    struct acc_reservation at_site;
    ACC_ASSERT_OK(acc_adapter_query(backing, "rt-1", NULL, &at_site, NULL));
    CU_ASSERT_EQUAL(at_site.amount, 4);
    acc_reservation_release(&at_site);

    /* the preview sees it: 13 nodes do not fit over [t, t+2h) */
    struct acc_resource thirteen = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 13};
    ACC_ASSERT_OK(acc_adapter_preview(ad, &thirteen, t, t + 24 * H, 2 * H, &f, NULL));
    CU_ASSERT_TRUE(f.n >= 1 && f.v[0].start >= t + 2 * H);

    /* the same key again: the same reservation, not a second one */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rt-1", &four, t, 2 * H, &again, NULL));
    CU_ASSERT_STRING_EQUAL(again.local_id, r.local_id);
    struct acc_resource twelve = {.kind = ACC_RES_NODES, .name = "alpha", .amount = 12};
    struct acc_reservation rest;
    /* 4 + 12 = 16 fit only when rt-1 was booked once */
    ACC_ASSERT_OK(acc_adapter_reserve(ad, "rt-2", &twelve, t, 2 * H, &rest, NULL));
    CU_ASSERT_EQUAL(rest.start, t);

    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rt-1", NULL, NULL));
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "rt-2", r.local_id, NULL));
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "rt-1", NULL, &q, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha"));
    CU_ASSERT_EQUAL(acc_adapter_query(backing, "rt-2", NULL, &q, NULL), ACC_ERR_NOT_FOUND);
    /* cancel by key of something never booked: success */
    ACC_ASSERT_OK(acc_adapter_cancel(ad, "never-booked", NULL, NULL));
    /* a key that cannot travel in a path never leaves */
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "a/b", NULL, &err), ACC_ERR_INVALID);

    acc_reservation_release(&r);
    acc_reservation_release(&q);
    acc_reservation_release(&again);
    acc_reservation_release(&rest);
    acc_frames_release(&f);
    acc_adapter_close(ad);
}

static void test_kept_alive(void)
{
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    unsigned conns0 = fake_site_connections(site);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h));
    int64_t first = h.rtt_us;
    CU_ASSERT_EQUAL(stat_of(ad, "connects"), 1);
    int64_t sum = 0;
    for (int i = 0; i < 20; i++) {
        ACC_ASSERT_OK(acc_adapter_health(ad, &h));
        sum += h.rtt_us;
    }
    /* 21 calls, one connection, one TLS handshake */
    CU_ASSERT_EQUAL(stat_of(ad, "connects"), 1);
    CU_ASSERT_EQUAL(stat_of(ad, "attempts"), 21);
    CU_ASSERT_EQUAL(fake_site_connections(site) - conns0, 1);
    printf("\n    first call (TCP + TLS handshake) %lld us, then %lld us on average\n",
           (long long)first, (long long)(sum / 20));
    acc_adapter_close(ad);
}

static void test_timeout(void)
{
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_health h;
    ACC_ASSERT_OK(acc_adapter_health(ad, &h)); /* connected */
    fake_site_set_mode(site, FAKE_SITE_HANG, 0, ACC_OK);
    struct acc_frames f;
    acc_frames_init(&f);
    struct acc_error err = {0};
    acc_time t = future();
    int64_t t0 = acc_mono_us();
    acc_err rc = acc_adapter_preview(ad, &four, t, t + 24 * H, H, &f, &err);
    int64_t took = acc_mono_us() - t0;
    fake_site_set_mode(site, FAKE_SITE_NORMAL, 0, ACC_OK);
    CU_ASSERT_EQUAL(rc, ACC_ERR_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha (https://127.0.0.1:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "timed out after 2 s"));
    /* the time limit holds for the whole call, retries included */
    CU_ASSERT_TRUE(took >= 1900000 && took < 2600000);
    printf("\n    timed out after %lld ms: %s\n", (long long)(took / 1000), err.msg);
    /* and it answers again */
    ACC_ASSERT_OK(acc_adapter_preview(ad, &four, t, t + 24 * H, H, &f, NULL));
    CU_ASSERT_EQUAL(f.n, 1);
    acc_frames_release(&f);
    acc_adapter_close(ad);
}

/* A port on loopback where nothing listens. */
static unsigned closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    unsigned port = 0;
    if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(s, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static void test_unreachable(void)
{
    char where[64];
    snprintf(where, sizeof where, "https://127.0.0.1:%u", closed_port());
    struct acc_error err = {0};
    struct acc_adapter *ad = open_remote_with(where, false, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad); /* a site that is down does not stop accordd */
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "k-1", NULL, &err), ACC_ERR_UNAVAILABLE);
    int64_t took = acc_mono_us() - t0;
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha (https://127.0.0.1:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unreachable"));
    /* idempotent: tried 1 + retries (2) times, with short backoff */
    CU_ASSERT_EQUAL(stat_of(ad, "attempts"), 3);
    CU_ASSERT_EQUAL(stat_of(ad, "retries"), 2);
    CU_ASSERT_TRUE(took < 1000000);
    struct acc_health h;
    acc_adapter_health(ad, &h);
    CU_ASSERT_FALSE(h.up);
    CU_ASSERT_EQUAL(h.rtt_us, 0);
    CU_ASSERT_STRING_EQUAL(h.endpoint, where);
    CU_ASSERT_PTR_NOT_NULL(strstr(h.detail, "unreachable"));
    printf("\n    %s (%lld ms)\n", err.msg, (long long)(took / 1000));
    acc_adapter_close(ad);
}

static void test_site_fault(void)
{
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_reservation r;
    struct acc_error err = {0};
    acc_time t = future();
    static const acc_err codes[] = {ACC_ERR_BUSY, ACC_ERR_PEER_LIMIT, ACC_ERR_UNAVAILABLE};
    for (size_t i = 0; i < 3; i++) {
        unsigned before = fake_site_count(site, FAKE_OP_RESERVE);
        fake_site_set_mode(site, FAKE_SITE_FAULT, 0, codes[i]);
        CU_ASSERT_EQUAL(acc_adapter_reserve(ad, "f-1", &four, t, H, &r, &err), codes[i]);
        fake_site_set_mode(site, FAKE_SITE_NORMAL, 0, ACC_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site alpha (https://127.0.0.1:"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused: site alpha says no"));
        /* an answer is an answer: not tried again */
        CU_ASSERT_EQUAL(fake_site_count(site, FAKE_OP_RESERVE) - before, 1);
    }
    CU_ASSERT_EQUAL(stat_of(ad, "retries"), 0);
    acc_adapter_close(ad);
}

static void test_retries(void)
{
    /* a fresh adapter: its first connection is new, so only its own retries
     * send a request again */
    struct acc_adapter *ad = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    struct acc_reservation r;
    struct acc_error err = {0};
    unsigned q0 = fake_site_count(site, FAKE_OP_QUERY);
    fake_site_set_mode(site, FAKE_SITE_DROP, 2, ACC_OK);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "nothing-here", NULL, &r, &err), ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(fake_site_count(site, FAKE_OP_QUERY) - q0, 3);
    CU_ASSERT_EQUAL(stat_of(ad, "retries"), 2);

    /* more drops than retries: unreachable after 1 + 2 tries.  The first
     * goes over the kept-alive connection, and when that dies unanswered
     * libcurl itself sends the request once more on a fresh one (it does so
     * for any request on a reused connection that got no byte back): the
     * site sees at most retries + 2 requests of an idempotent call. */
    q0 = fake_site_count(site, FAKE_OP_QUERY);
    long long a0 = stat_of(ad, "attempts");
    fake_site_set_mode(site, FAKE_SITE_DROP, 10, ACC_OK);
    CU_ASSERT_EQUAL(acc_adapter_query(ad, "nothing-here", NULL, &r, &err), ACC_ERR_UNAVAILABLE);
    fake_site_set_mode(site, FAKE_SITE_NORMAL, 0, ACC_OK);
    CU_ASSERT_EQUAL(stat_of(ad, "attempts") - a0, 3);
    unsigned seen = fake_site_count(site, FAKE_OP_QUERY) - q0;
    CU_ASSERT_TRUE(seen >= 3 && seen <= 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unreachable"));

    /* submit is never sent twice: not by the adapter, not by libcurl */
    const char *args[] = {"-n", "1"};
    struct acc_job job = {.key = "job-key",
                          .local_id = "L1",
                          .nodes = 1,
                          .ppn = 1,
                          .executable = "/bin/true",
                          .args = args,
                          .n_args = 2,
                          .end = future() + H};
    char id[96];
    ACC_ASSERT_OK(acc_adapter_submit(ad, &job, id, sizeof id, NULL));
    CU_ASSERT_TRUE(strncmp(id, "job-", 4) == 0);
    struct acc_job_status st;
    ACC_ASSERT_OK(acc_adapter_job_status(ad, id, &st, NULL));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, 0);
    ACC_ASSERT_OK(acc_adapter_job_cancel(ad, id, NULL));
    long long retries = stat_of(ad, "retries");
    unsigned s0 = fake_site_count(site, FAKE_OP_SUBMIT);
    fake_site_set_mode(site, FAKE_SITE_DROP, 1, ACC_OK);
    CU_ASSERT_EQUAL(acc_adapter_submit(ad, &job, id, sizeof id, &err), ACC_ERR_UNAVAILABLE);
    fake_site_set_mode(site, FAKE_SITE_NORMAL, 0, ACC_OK);
    CU_ASSERT_EQUAL(fake_site_count(site, FAKE_OP_SUBMIT) - s0, 1);
    CU_ASSERT_EQUAL(stat_of(ad, "retries"), retries);
    acc_adapter_close(ad);
}

struct hung {
    struct acc_adapter *ad;
    acc_err rc;
    int64_t took;
};

static void *hung_call(void *arg)
{
    struct hung *h = arg;
    struct acc_reservation r;
    struct acc_error err = {0};
    int64_t t0 = acc_mono_us();
    h->rc = acc_adapter_query(h->ad, "hung-1", NULL, &r, &err);
    h->took = acc_mono_us() - t0;
    return NULL;
}

static void test_interrupt(void)
{
    static const char *const slow[] = {"timeout", "20", NULL};
    struct hung h = {.ad = open_remote(slow)};
    CU_ASSERT_PTR_NOT_NULL_FATAL(h.ad);
    fake_site_set_mode(site, FAKE_SITE_HANG, 0, ACC_OK);
    pthread_t th;
    pthread_create(&th, NULL, hung_call, &h);
    usleep(300000);
    int64_t t0 = acc_mono_us();
    acc_adapter_interrupt(h.ad);
    pthread_join(th, NULL);
    int64_t after = acc_mono_us() - t0;
    fake_site_set_mode(site, FAKE_SITE_NORMAL, 0, ACC_OK);
    CU_ASSERT_EQUAL(h.rc, ACC_ERR_CANCELLED);
    CU_ASSERT_TRUE(after < 1500000);
    printf("\n    interrupted call returned %lld ms after the interrupt\n",
           (long long)(after / 1000));
    /* later calls fail at once */
    struct acc_health hl;
    CU_ASSERT_NOT_EQUAL(acc_adapter_health(h.ad, &hl), ACC_OK);
    acc_adapter_close(h.ad);
}

static void test_settings_and_caps(void)
{
    struct acc_error err = {0};
    CU_ASSERT_PTR_NULL(open_remote_with(NULL, false, NULL, &err));
    CU_ASSERT_EQUAL(err.code, ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs url"));
    CU_ASSERT_PTR_NULL(open_remote_with("http://127.0.0.1:1", false, NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must be https"));
    static const char *const unknown[] = {"colour", "blue", NULL};
    CU_ASSERT_PTR_NULL(open_remote_with(url, false, unknown, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown setting 'colour'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[site alpha]"));
    static const char *const bad_ca[] = {"ca", "/nonexistent/ca.crt", NULL};
    CU_ASSERT_PTR_NULL(open_remote_with(url, false, bad_ca, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/ca.crt"));
    static const char *const many[] = {"connections", "1000", NULL};
    CU_ASSERT_PTR_NULL(open_remote_with(url, false, many, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "connections"));

    struct acc_adapter *s = open_remote(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_TRUE(acc_adapter_has(s, ACC_CAP_NODES | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES |
                                          ACC_CAP_REPLACE | ACC_CAP_THREADSAFE));
    CU_ASSERT_FALSE(acc_adapter_has(s, ACC_CAP_BANDWIDTH));
    CU_ASSERT_FALSE(acc_adapter_has(s, ACC_CAP_PROVISION));
    acc_adapter_close(s);
    struct acc_adapter *n = open_remote_with(url, true, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_TRUE(acc_adapter_has(n, ACC_CAP_BANDWIDTH | ACC_CAP_PROVISION | ACC_CAP_REPLACE));
    CU_ASSERT_FALSE(acc_adapter_has(n, ACC_CAP_NODES));
    CU_ASSERT_FALSE(acc_adapter_has(n, ACC_CAP_SUBMIT));
    acc_adapter_close(n);
}

static void test_tls(void)
{
    struct acc_error err = {0};
    struct acc_health h;
    /* the site's certificate does not verify against this CA */
    const char *kv[] = {"ca", cert("other-ca.crt"), NULL};
    struct acc_adapter *ad = open_remote_with(url, false, kv, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "t-1", NULL, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "TLS"));
    CU_ASSERT_EQUAL(stat_of(ad, "attempts"), 1); /* not asked again */
    acc_adapter_health(ad, &h);
    CU_ASSERT_FALSE(h.up);
    acc_adapter_close(ad);
    /* a client certificate the site's CA did not sign: refused in the handshake */
    const char *stranger[] = {"certificate", cert("stranger.crt"), "key", cert("stranger.key"),
                              NULL};
    unsigned q0 = fake_site_count(site, FAKE_OP_OTHER) + fake_site_count(site, FAKE_OP_CANCEL);
    ad = open_remote_with(url, false, stranger, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
    CU_ASSERT_EQUAL(acc_adapter_cancel(ad, "t-1", NULL, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "TLS handshake failed"));
    /* no request got through */
    CU_ASSERT_EQUAL(fake_site_count(site, FAKE_OP_OTHER) + fake_site_count(site, FAKE_OP_CANCEL),
                    q0);
    printf("\n    %s\n", err.msg);
    acc_adapter_close(ad);
}

static const struct acc_test_case tests[] = {
    {"identity sent, the token only when forwarded", test_identity_sent},
    {"preview, reserve, query, cancel; the same key is one reservation", test_round_trips},
    {"calls share a kept-alive connection (one TLS handshake)", test_kept_alive},
    {"a site that does not answer times out, naming it", test_timeout},
    {"an unreachable site: UNAVAILABLE after bounded retries", test_unreachable},
    {"the site's fault passes through with its code", test_site_fault},
    {"idempotent calls are retried, submit never", test_retries},
    {"interrupt makes a hung call return", test_interrupt},
    {"settings are checked; capabilities per section", test_settings_and_caps},
    {"TLS: the site's CA, the client certificate", test_tls},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"remote", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
