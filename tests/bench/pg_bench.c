/* SPDX-License-Identifier: Apache-2.0 */
/* pg_bench.c - the client of tests/bench/pg-bench.sh: OFFERS offers from
 * CLIENTS keep-alive HTTP clients spread evenly over one or more accordd
 * (client c talks to instance c mod n, as a balancer would spread them).
 * Each offer asks for nodes at two of the four sites s1..s4 and a link
 * between them, the pairs in turn, so that offers compete for some
 * resources and not for others.  Prints agreements/s and the median and
 * p90 of one POST's latency as the client sees it.  With --pg CONNINFO (a
 * session on another database of the cluster) it also samples
 * pg_stat_activity for the backends of database DB every 10 ms while the
 * load runs and says, per agreement, how long PostgreSQL's backends spent
 * waiting for a heavyweight lock (the advisory locks), for an LWLock, for
 * I/O (WAL writes and fsyncs), running, and idle inside a transaction
 * (waiting for accordd: a round trip), and the median time of its own
 * sampling query (a round trip to PostgreSQL under the load).  Not a test:
 * prints figures. */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timefmt.h"

enum { MAX_INSTANCES = 16, MAX_CLIENTS = 256, SAMPLE_US = 10000, MAX_SAMPLES = 100000 };

/* The sites' pairs, in turn; the link of pair (a, b) is sa_sb. */
static const char *const pairs[][2] = {{"s1", "s2"}, {"s1", "s3"}, {"s1", "s4"},
                                       {"s2", "s3"}, {"s2", "s4"}, {"s3", "s4"}};

static void offer_text(long i, char *out, size_t size)
{
    const char *a = pairs[i % 6][0], *b = pairs[i % 6][1];
    int nodes = 1 + (int)(i % 4);
    snprintf(out, size,
             "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/"
             "ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>o%ld</wsag:Name>"
             "<wsag:Context><wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
             "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
             "<wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"s\" "
             "wsag:ServiceName=\"m\"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>"
             "</wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name=\"a\" "
             "wsag:ServiceName=\"m\"><co:Component><co:Site>%s</co:Site><co:Nodes>%d</co:Nodes>"
             "</co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm "
             "wsag:Name=\"b\" wsag:ServiceName=\"m\"><co:Component><co:Site>%s</co:Site>"
             "<co:Nodes>%d</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
             "<wsag:ServiceDescriptionTerm wsag:Name=\"l\" wsag:ServiceName=\"m\"><co:Link>"
             "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>1000</co:Bandwidth>"
             "</co:Link></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms>"
             "</wsag:AgreementOffer>",
             i, a, nodes, b, nodes);
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

struct load {
    atomic_long next;
    long offers;
    int64_t *us; /* each POST's latency, by offer */
    long *status;
};

struct client {
    pthread_t tid;
    struct load *load;
    const char *base;
    long ok, other;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    char url[256], body[2048];
    snprintf(url, sizeof url, "%s/agreements", c->base);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/xml");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    long i;
    while ((i = atomic_fetch_add(&c->load->next, 1)) < c->load->offers) {
        offer_text(i, body, sizeof body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        long status = 0;
        int64_t t0 = acc_mono_us();
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        c->load->us[i] = acc_mono_us() - t0;
        c->load->status[i] = status;
        if (status == 201)
            c->ok++;
        else
            c->other++;
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

/* ------------------------------------------------------------- sampling */

/* What the database's backends were doing, summed over the samples. */
enum { W_LOCK, W_LWLOCK, W_IO, W_RUNNING, W_IDLE_TX, W_N };
static const char *const wait_names[W_N] = {"lock_wait", "lwlock_wait", "io_wait", "pg_running",
                                            "idle_in_transaction"};

struct sampler {
    pthread_t tid;
    const char *conninfo, *db;
    atomic_bool stop;
    long samples, with_lock, sum[W_N];
    int64_t us[MAX_SAMPLES]; /* each sample's round trip */
    bool ok;
};

static const char sample_sql[] =
    "SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'),"
    " count(*) FILTER (WHERE wait_event_type = 'LWLock'),"
    " count(*) FILTER (WHERE wait_event_type = 'IO'),"
    " count(*) FILTER (WHERE state = 'active' AND wait_event_type IS NULL),"
    " count(*) FILTER (WHERE state LIKE 'idle in transaction%')"
    " FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'";

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    PGconn *pg = PQconnectdb(s->conninfo);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "pg_bench: sampler: %s", PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    const char *params[1] = {s->db};
    s->ok = true;
    /* (the first 1,000 s of a run: a fair sample of the rest) */
    while (!atomic_load(&s->stop) && s->samples < MAX_SAMPLES) {
        int64_t t0 = acc_mono_us();
        PGresult *r = PQexecParams(pg, sample_sql, 1, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
            s->us[s->samples++] = acc_mono_us() - t0;
            for (int k = 0; k < W_N; k++)
                s->sum[k] += atol(PQgetvalue(r, 0, k));
            s->with_lock += atol(PQgetvalue(r, 0, W_LOCK)) > 0;
        } else {
            s->ok = false;
        }
        PQclear(r);
        usleep(SAMPLE_US);
    }
    PQfinish(pg);
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The answered POSTs' latencies, sorted, into us; their number returned. */
static long answered(const struct load *l, int64_t *us)
{
    long n = 0;
    for (long i = 0; i < l->offers; i++)
        if (l->status[i] > 0)
            us[n++] = l->us[i];
    qsort(us, (size_t)n, sizeof *us, cmp_i64);
    return n;
}

static void print_waits(struct sampler *s, long ok, double secs)
{
    if (!s->ok || s->samples == 0) {
        fprintf(stderr, "pg_bench: pg_stat_activity could not be sampled\n");
        return;
    }
    /* Little's law: backends in a state on average, times the run's time,
     * is the time spent in that state; divided by the agreements. */
    for (int k = 0; k < W_N; k++)
        printf("figure %s_ms_per_agreement %.3f\n", wait_names[k],
               ok ? (double)s->sum[k] / (double)s->samples * secs * 1000.0 / (double)ok : 0);
    printf("figure lock_wait_sample_fraction %.3f\n", (double)s->with_lock / (double)s->samples);
    printf("figure activity_samples %ld\n", s->samples);
    /* one query's round trip under the load: a statement's least cost */
    qsort((void *)s->us, (size_t)s->samples, sizeof s->us[0], cmp_i64);
    printf("figure round_trip_ms %.3f\n", (double)s->us[s->samples / 2] / 1000.0);
}

static int usage(void)
{
    fprintf(stderr, "usage: accord_pg_bench OFFERS CLIENTS [--pg CONNINFO DB] URL...\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return usage();
    long offers = atol(argv[1]);
    int clients = atoi(argv[2]), a = 3;
    static struct sampler s;
    if (strcmp(argv[a], "--pg") == 0) {
        if (argc < a + 4)
            return usage();
        s.conninfo = argv[a + 1];
        s.db = argv[a + 2];
        a += 3;
    }
    int n = argc - a;
    if (offers < 1 || clients < 1 || clients > MAX_CLIENTS || n < 1 || n > MAX_INSTANCES)
        return usage();
    struct load l = {.offers = offers};
    l.us = calloc((size_t)offers, sizeof *l.us);
    l.status = calloc((size_t)offers, sizeof *l.status);
    int64_t *sorted = calloc((size_t)offers, sizeof *sorted);
    static struct client c[MAX_CLIENTS];
    if (!l.us || !l.status || !sorted)
        return 1;
    curl_global_init(CURL_GLOBAL_ALL);
    if (s.conninfo)
        pthread_create(&s.tid, NULL, sampler_main, &s);
    int64_t t0 = acc_mono_us();
    for (int i = 0; i < clients; i++) {
        c[i] = (struct client){.load = &l, .base = argv[a + i % n]};
        pthread_create(&c[i].tid, NULL, client_main, &c[i]);
    }
    long ok = 0, other = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(c[i].tid, NULL);
        ok += c[i].ok;
        other += c[i].other;
    }
    double secs = (double)(acc_mono_us() - t0) / 1e6;
    if (s.conninfo) {
        atomic_store(&s.stop, true);
        pthread_join(s.tid, NULL);
    }
    long m = answered(&l, sorted);
    double med = m ? (double)sorted[m / 2] / 1000.0 : 0, p90 = m ? sorted[m * 9 / 10] / 1000.0 : 0;
    printf("pg_bench: %ld offers, %d clients over %d instance(s): %.0f agreements/s (%ld agreed, "
           "%ld other in %.2f s); one POST: median %.2f ms, p90 %.2f ms\n",
           offers, clients, n, (double)ok / secs, ok, other, secs, med, p90);
    printf("figure agreements_per_s %.1f\nfigure agreed %ld\nfigure seconds %.3f\n",
           (double)ok / secs, ok, secs);
    printf("figure latency_median_ms %.3f\nfigure latency_p90_ms %.3f\n", med, p90);
    if (s.conninfo)
        print_waits(&s, ok, secs);
    curl_global_cleanup();
    free(l.us);
    free(l.status);
    free(sorted);
    return ok > 0 ? 0 : 1;
}
