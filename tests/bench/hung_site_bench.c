/* SPDX-License-Identifier: Apache-2.0 */
/* hung_site_bench.c - issue 32, item 3: what a hung site costs the others.
 * accordd in-process on real sockets, the [negotiation] defaults but for
 * adapter_timeout (given: the default is PT15S) and durable = no.  Each
 * run starts a fresh accordd with five simulated sites: h, whose previews
 * hang (a simulator fault, longer than adapter_timeout), and a1, b1, a2, b2.
 *
 *   unloaded  `others` clients send offers for a1 and b1 (one site each,
 *             alternately), one after another, for `seconds`;
 *   hung      40 clients send offers for h, each the next once the last is
 *             answered: after a 503 it waits as the answer says (accordd's
 *             Retry-After: the seconds the message names, "in N s", else
 *             1 s), or --retry-ms if given (a client that ignores
 *             Retry-After); and meanwhile `others` clients
 *             send offers for a2 and b2 for `seconds`, counted from the
 *             moment the hung clients start (so the time before h's breaker
 *             opens is in it).
 *
 * Fresh sites for each phase, so that neither finds the other's bookings in
 * its calendar; every other run the hung phase comes first (the database
 * holds the first phase's agreements during the second).  Prints each run's agreements/s of both
 * phases side by side, their ratio, what h's clients got and when h's breaker opened, then the
 * medians.  Nothing is asserted, but a phase in which the other sites
 * agreed nothing ends it with status 1.
 *
 *   accord_hung_site_bench [--runs N] [--seconds S] [--timeout S]
 *                          [--hung N] [--others N] [--retry-ms MS]
 *
 * Run: tests/bench/hung-site-bench.sh */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/common/timefmt.h"
#include "client.h"
#include "fixture.h"
#include "http_client.h"

static struct fixture fx;
static atomic_bool stop;
static int retry_ms = -1; /* -1: as the answer says */

struct client {
    pthread_t tid;
    char doc[4096];
    bool hung;
    unsigned agreed, refused, failed;
};

static void make_offer(char *buf, size_t size, const char *site)
{
    snprintf(buf, size,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>bench</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" "
             "wsag:ServiceName=\"metajob\"><co:Schedule><co:Duration>PT1H</co:Duration>"
             "</co:Schedule></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"c0\" wsag:ServiceName=\"metajob\">"
             "<co:Component><co:Site>%s</co:Site><co:Nodes>1</co:Nodes>"
             "<co:Executable>/bin/true</co:Executable></co:Component>"
             "</wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>",
             site);
}

static void *client_main(void *arg)
{
    static const char *const hdr[] = {"Content-Type: application/xml", NULL};
    struct client *c = arg;
    char u[128];
    snprintf(u, sizeof u, "%s/agreements", fx.base);
    while (!atomic_load(&stop)) {
        struct acc_client_request rq = {
            .method = "POST", .url = u, .body = c->doc, .len = strlen(c->doc), .headers = hdr};
        struct acc_client_reply r;
        int rc = acc_client_do(&rq, &r, NULL, 0);
        if (rc == 0 && r.status == 201)
            c->agreed++;
        else if (rc == 0 && r.status == 503)
            c->refused++;
        else
            c->failed++;
        int64_t wait_ms = 0;
        if (c->hung && !(rc == 0 && r.status == 201)) {
            const char *in = r.body ? strstr(r.body, "(in ") : NULL;
            long secs = 1;
            if (in && sscanf(in, "(in %ld s)", &secs) != 1)
                secs = 1;
            wait_ms = retry_ms >= 0 ? retry_ms : 1000 * (int64_t)secs;
        }
        acc_client_reply_free(&r);
        /* in short steps: a phase ends without waiting for a long retry */
        for (int64_t t = 0; t < wait_ms && !atomic_load(&stop); t += 50)
            usleep((useconds_t)(wait_ms - t < 50 ? wait_ms - t : 50) * 1000);
    }
    return NULL;
}

/* One sample of /metrics, or -1. */
static long long metric(const char *sample)
{
    struct http_reply r;
    char u[128];
    snprintf(u, sizeof u, "%s/metrics", fx.base);
    long long v = -1;
    if (http_do("GET", u, NULL, 0, NULL, &r) == 0 && r.body) {
        const char *p = strstr(r.body, sample);
        if (p)
            sscanf(p + strlen(sample), " %lld", &v);
    }
    http_reply_free(&r);
    return v;
}

struct phase {
    double per_s;        /* the other sites' agreements per second */
    unsigned failed;     /* their offers not agreed */
    unsigned h_refused;  /* h's 503s */
    double opened_after; /* seconds from the hung clients' start to h's breaker open; -1 */
};

/* Clients on sites x and y (and, if hung, 40 on h) for `seconds`. */
static void phase(const char *x, const char *y, unsigned others, unsigned hung, double seconds,
                  struct phase *out)
{
    unsigned n = others + hung;
    struct client *c = calloc(n, sizeof *c);
    if (!c) {
        out->per_s = -1;
        return;
    }
    atomic_store(&stop, false);
    int64_t t0 = acc_mono_us();
    for (unsigned i = 0; i < n; i++) {
        c[i].hung = i >= others;
        make_offer(c[i].doc, sizeof c[i].doc, c[i].hung ? "h" : i % 2 ? y : x);
        pthread_create(&c[i].tid, NULL, client_main, &c[i]);
    }
    out->opened_after = -1;
    /* /metrics is asked in both phases alike (it counts the agreements in
     * the database: not free) */
    while (acc_mono_us() - t0 < (int64_t)(seconds * 1e6)) {
        usleep(250000);
        long long opened = metric("accord_adapter_breaker_opened_total{site=\"h\"}");
        if (hung && out->opened_after < 0 && opened > 0)
            out->opened_after = (double)(acc_mono_us() - t0) / 1e6;
    }
    atomic_store(&stop, true);
    unsigned agreed = 0;
    out->failed = out->h_refused = 0;
    for (unsigned i = 0; i < n; i++) {
        pthread_join(c[i].tid, NULL);
        if (c[i].hung) {
            out->h_refused += c[i].refused;
        } else {
            agreed += c[i].agreed;
            out->failed += c[i].refused + c[i].failed;
        }
    }
    out->per_s = agreed / seconds;
    free(c);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int runs = 3;
    double seconds = 20;
    int timeout = 15;
    unsigned hung = 40, others = 8;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--timeout") == 0)
            timeout = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--hung") == 0)
            hung = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--others") == 0)
            others = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--retry-ms") == 0)
            retry_ms = atoi(argv[i + 1]);
    }
    if (argc % 2 == 0 || runs < 1 || runs > 99 || seconds <= 0 || timeout < 1 || others < 1) {
        fprintf(stderr,
                "usage: %s [--runs N] [--seconds S] [--timeout S] [--hung N] [--others N] "
                "[--retry-ms MS]\n",
                argv[0]);
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char dir[] = "/tmp/accord-hung-XXXXXX";
    if (!mkdtemp(dir) || acc_client_init() != 0)
        return 1;
    acc_log_set_level(ACC_LOG_ERROR);
    setvbuf(stdout, NULL, _IOLBF, 0);
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[server]\nallow_control = yes\naccess_log = no\nclient_connections = 1024\n"
             "pending_connections = 1024\n[database]\ndurable = no\n"
             "[negotiation]\nadapter_timeout = PT%dS\n[quota]\nmax_agreements = 10000000\n"
             "[site h]\nadapter = sim-batch\nnodes = 1000\n"
             "[site a1]\nadapter = sim-batch\nnodes = 1000000\n"
             "[site b1]\nadapter = sim-batch\nnodes = 1000000\n"
             "[site a2]\nadapter = sim-batch\nnodes = 1000000\n"
             "[site b2]\nadapter = sim-batch\nnodes = 1000000\n",
             timeout);
    char retry[64] = "as Retry-After says";
    if (retry_ms >= 0)
        snprintf(retry, sizeof retry, "%d ms after a 503", retry_ms);
    printf("hung-site bench: %d run(s); %u clients on the other sites, %u on hung site h "
           "(retrying %s); %.0f s per phase; adapter_timeout PT%dS; other [negotiation] keys "
           "at their defaults\n",
           runs, others, hung, retry, seconds, timeout);
    printf("%-4s %12s %12s %7s %10s %10s %12s\n", "run", "unloaded/s", "hung/s", "ratio",
           "others_bad", "h_503s", "h_open_at_s");
    double *un = calloc((size_t)runs, sizeof *un), *lo = calloc((size_t)runs, sizeof *lo),
           *ra = calloc((size_t)runs, sizeof *ra);
    int rc = !un || !lo || !ra;
    for (int r = 0; !rc && r < runs; r++) {
        char db[512];
        snprintf(db, sizeof db, "%s/run%d.db", dir, r);
        if (fixture_start(&fx, ini, db) != 0) {
            rc = 1;
            break;
        }
        struct phase p1, p2;
        /* every other run the hung phase comes first: neither phase always
         * finds the other's agreements in the database */
        if (r % 2 == 0)
            phase("a1", "b1", others, 0, seconds, &p1);
        /* every preview of h hangs past adapter_timeout */
        char u[256];
        snprintf(u, sizeof u,
                 "%s/adapters/h/control/fault?call=preview&action=hang&seconds=%d&count=1000000",
                 fx.base, 4 * timeout);
        struct http_reply hr;
        if (http_do("POST", u, "", 0, NULL, &hr) != 0 || hr.status != 200)
            rc = 1;
        http_reply_free(&hr);
        phase("a2", "b2", others, hung, seconds, &p2);
        if (r % 2 == 1) {
            snprintf(u, sizeof u, "%s/adapters/h/control/clear", fx.base);
            if (http_do("POST", u, "", 0, NULL, &hr) != 0 || hr.status != 200)
                rc = 1;
            http_reply_free(&hr);
            phase("a1", "b1", others, 0, seconds, &p1);
        }
        un[r] = p1.per_s;
        lo[r] = p2.per_s;
        ra[r] = p1.per_s > 0 ? p2.per_s / p1.per_s : 0;
        printf("%-4d %12.1f %12.1f %7.3f %10u %10u %12.1f\n", r + 1, p1.per_s, p2.per_s, ra[r],
               p1.failed + p2.failed, p2.h_refused, p2.opened_after);
        fixture_stop(&fx);
        if (p1.per_s <= 0 || p2.per_s <= 0) { /* the smoke run's check */
            fprintf(stderr, "run %d: the other sites agreed nothing\n", r + 1);
            rc = 1;
        }
    }
    if (!rc)
        printf("%-4s %12.1f %12.1f %7.3f\n", "med", median(un, runs), median(lo, runs),
               median(ra, runs));
    free(un);
    free(lo);
    free(ra);
    acc_client_cleanup();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? rc : 1;
}
