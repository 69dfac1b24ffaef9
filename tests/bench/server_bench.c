/* SPDX-License-Identifier: Apache-2.0 */
/* server_bench.c - the real accordd under load, as a client sees it:
 * agreements per second from 16 keep-alive HTTP clients while the database
 * fills to N agreements, accordd's CPU per agreement, its resident memory
 * and database bytes per agreement then, GET /agreements/{id} (XML and
 * JSON) and /healthz per second from 16 clients, one GET's median latency
 * each way, and how soon a new client is served while 1,000 idle and 500
 * slow connections are open.  Prints figures, then the same as "figure NAME
 * VALUE" lines for tests/bench/compare.sh; not a test.  The accordd run is
 * the one built beside it, or $ACCORD_BENCH_ACCORDD (compare.sh measures two
 * builds with one client).  Run: tests/bench/server-bench.sh [N] */
#include <arpa/inet.h>
#include <dirent.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "timefmt.h"

static char base[128];
static pid_t pid;

static const char config[] = "[server]\n"
                             "[database]\n"
                             "durable = yes\n"
                             /* one user fills the database: no bound on their open agreements */
                             "[quota]\nmax_agreements = unlimited\n"
                             "[site a]\nadapter = sim-batch\nnodes = 1000000\n"
                             "[site b]\nadapter = sim-batch\nnodes = 1000000\n";

static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>bench</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>bench</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
    "<co:Schedule><co:Duration>PT15M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"x\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>a</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"y\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>b</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

enum { CLIENTS = 16 };

struct sink {
    char loc[128];
};

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

static size_t header(char *p, size_t size, size_t n, void *ud)
{
    struct sink *s = ud;
    size_t len = size * n;
    if (len > 10 && strncasecmp(p, "Location: ", 10) == 0) {
        size_t k = len - 10;
        while (k && (p[10 + k - 1] == '\r' || p[10 + k - 1] == '\n'))
            k--;
        if (k >= sizeof s->loc)
            k = sizeof s->loc - 1;
        memcpy(s->loc, p + 10, k);
        s->loc[k] = '\0';
    }
    return len;
}

/* ------------------------------------------------------------- filling */

struct filler {
    pthread_t tid;
    atomic_long *left;
    long ok, other;
    char (*ids)[32];
    atomic_long *n_ids;
};

static void *fill_main(void *arg)
{
    struct filler *f = arg;
    CURL *h = curl_easy_init();
    char url[192];
    snprintf(url, sizeof url, "%s/agreements", base);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/xml");
    struct sink s;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, offer);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    while (atomic_fetch_sub(f->left, 1) > 0) {
        long status = 0;
        s.loc[0] = '\0';
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (status == 201) {
            f->ok++;
            long k = atomic_fetch_add(f->n_ids, 1);
            const char *slash = strrchr(s.loc, '/');
            snprintf(f->ids[k], sizeof f->ids[k], "%s", slash ? slash + 1 : "");
        } else {
            f->other++;
        }
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

static long rss_kib(void)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    }
    if (f)
        fclose(f);
    return kib;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* ----------------------------------------------------------------- gets */

/* What a GET asks for: an agreement as XML or JSON, or /healthz. */
enum get_kind { GET_XML, GET_JSON, GET_HEALTH };
static const char *const get_names[] = {"GET /agreements/{id} XML", "GET /agreements/{id} JSON",
                                        "GET /healthz"};

struct getter {
    pthread_t tid;
    atomic_bool *stop;
    char (*ids)[32];
    long n_ids, ok, other;
    unsigned seed;
    enum get_kind kind;
};

static CURL *get_handle(enum get_kind kind, struct curl_slist **hdr)
{
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    *hdr = curl_slist_append(NULL, kind == GET_JSON ? "Accept: application/json"
                                                    : "Accept: application/xml");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
    return h;
}

/* One GET of kind; true on 200. */
static bool get_one(CURL *h, enum get_kind kind, const char *id)
{
    char url[256];
    if (kind == GET_HEALTH)
        snprintf(url, sizeof url, "%s/healthz", base);
    else
        snprintf(url, sizeof url, "%s/agreements/%s", base, id);
    curl_easy_setopt(h, CURLOPT_URL, url);
    long status = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    return status == 200;
}

static void *get_main(void *arg)
{
    struct getter *g = arg;
    struct curl_slist *hdr;
    CURL *h = get_handle(g->kind, &hdr);
    while (!atomic_load(g->stop)) {
        long k = (long)(rand_r(&g->seed) % (unsigned)g->n_ids);
        if (get_one(h, g->kind, g->ids[k]))
            g->ok++;
        else
            g->other++;
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    return NULL;
}

/* ------------------------------------------------ idle and slow clients */

static int connect_from(const char *from, unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &a.sin_addr);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
        connect(fd, (struct sockaddr *)&to, sizeof to)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void bench_crowd(void)
{
    enum { IDLE = 1000, SLOW = 500, TRIES = 50 };
    static int fds[IDLE + SLOW];
    unsigned port = (unsigned)atoi(strrchr(base, ':') + 1);
    int open_ok = 0;
    const char head[] =
        "POST /agreements HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/xml\r\n"
        "Content-Length: 100000\r\n\r\n<";
    for (int i = 0; i < IDLE + SLOW; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.2.%d.%d", i / 50, 2 + i % 50);
        fds[i] = connect_from(from, port);
        if (fds[i] >= 0 && i >= IDLE)
            send(fds[i], head, sizeof head - 1, MSG_NOSIGNAL);
        open_ok += fds[i] >= 0;
    }
    usleep(500000);
    int64_t us[TRIES];
    int served = 0;
    char url[192];
    snprintf(url, sizeof url, "%s/healthz", base);
    for (int t = 0; t < TRIES; t++) {
        /* The slow ones keep sending a byte now and then. */
        for (int i = IDLE; i < IDLE + SLOW; i += 10)
            if (fds[i] >= 0)
                send(fds[i], "x", 1, MSG_NOSIGNAL);
        CURL *h = curl_easy_init(); /* a new connection each time */
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
        int64_t t0 = acc_mono_us();
        long status = 0;
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        us[t] = acc_mono_us() - t0;
        served += status == 200;
        curl_easy_cleanup(h);
        usleep(20000);
    }
    qsort(us, TRIES, sizeof us[0], cmp_i64);
    printf("new client while %d idle and slow connections are open: %d/%d served, median %.1f ms, "
           "max %.1f ms (target: within 100 ms)\n",
           open_ok, served, TRIES, (double)us[TRIES / 2] / 1000.0, (double)us[TRIES - 1] / 1000.0);
    for (int i = 0; i < IDLE + SLOW; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The figures compare.sh reads, printed last as "figure NAME VALUE". */
struct figures {
    double post_s, cpu_ms, switches, rss_mb, db_kb, get_s[3], one_ms[3];
};

/* Context switches of accordd's threads so far (voluntary and not). */
static long switches(void)
{
    char path[32];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    long n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char file[320], line[256];
        if (e->d_name[0] == '.')
            continue;
        snprintf(file, sizeof file, "%s/%.256s/status", path, e->d_name);
        FILE *f = fopen(file, "r");
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, "ctxt_switches:"))
                n += strtol(strchr(line, ':') + 1, NULL, 10);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* accordd's CPU time so far (user + system), in milliseconds. */
static double cpu_ms(void)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    double ms = 0;
    if (fgets(line, sizeof line, f)) {
        /* after "pid (comm) ": state is field 3; utime and stime are 14 and 15 */
        const char *p = strrchr(line, ')');
        unsigned long ut = 0, st = 0;
        if (p &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            ms = (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
    }
    fclose(f);
    return ms;
}

/* n offers from CLIENTS clients at once; the ids agreed in ids, their
 * number returned. */
static long bench_fill(long n, char (*ids)[32], const char *db, const char *wal, struct figures *fg)
{
    atomic_long left = n, n_ids = 0;
    struct filler fl[CLIENTS];
    double cpu0 = cpu_ms();
    long sw0 = switches();
    int64_t t0 = acc_mono_us();
    for (int i = 0; i < CLIENTS; i++) {
        fl[i] = (struct filler){.left = &left, .ids = ids, .n_ids = &n_ids};
        pthread_create(&fl[i].tid, NULL, fill_main, &fl[i]);
    }
    long ok = 0, other = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(fl[i].tid, NULL);
        ok += fl[i].ok;
        other += fl[i].other;
    }
    double secs = (double)(acc_mono_us() - t0) / 1e6;
    fg->post_s = (double)ok / secs;
    fg->cpu_ms = ok ? (cpu_ms() - cpu0) / (double)ok : 0;
    fg->switches = ok ? (double)(switches() - sw0) / (double)ok : 0;
    fg->rss_mb = (double)rss_kib() / 1024.0;
    fg->db_kb = ok ? (double)file_size(db) / 1024.0 / (double)ok : 0;
    printf("filling, %d HTTP clients, keep-alive, synchronous=FULL: %.0f agreements/s "
           "(%ld agreed, %ld other in %.1f s; target >= 2000/s); accordd's CPU %.2f ms per "
           "agreement, %.1f context switches per agreement\n",
           CLIENTS, fg->post_s, ok, other, secs, fg->cpu_ms, fg->switches);
    printf("accordd with %ld agreements stored: RSS %.1f MB (target <= 50 MB); database %.1f MB, "
           "WAL %.1f MB (the database file: %.2f KB per agreement; target <= 2 KB)\n",
           ok, fg->rss_mb, (double)file_size(db) / 1e6, (double)file_size(wal) / 1e6, fg->db_kb);
    return atomic_load(&n_ids);
}

/* GETs of kind from CLIENTS clients for seconds; returns the rate. */
static double bench_get(enum get_kind kind, char (*ids)[32], long n_ids, int seconds)
{
    atomic_bool stop = false;
    struct getter g[CLIENTS];
    int64_t t0 = acc_mono_us();
    for (int i = 0; i < CLIENTS; i++) {
        g[i] = (struct getter){
            .stop = &stop, .ids = ids, .n_ids = n_ids, .seed = (unsigned)i + 1, .kind = kind};
        pthread_create(&g[i].tid, NULL, get_main, &g[i]);
    }
    sleep((unsigned)seconds);
    atomic_store(&stop, true);
    long ok = 0, other = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(g[i].tid, NULL);
        ok += g[i].ok;
        other += g[i].other;
    }
    double secs = (double)(acc_mono_us() - t0) / 1e6;
    printf("%s, %d clients, keep-alive: %.0f/s (%ld ok, %ld other); RSS then %.1f MB\n",
           get_names[kind], CLIENTS, (double)ok / secs, ok, other, (double)rss_kib() / 1024.0);
    return (double)ok / secs;
}

/* The median of one GET of kind at a time (one client, keep-alive). */
static double bench_one(enum get_kind kind, char (*ids)[32], long n_ids)
{
    enum { TRIES = 501 };
    static int64_t us[TRIES];
    struct curl_slist *hdr;
    CURL *h = get_handle(kind, &hdr);
    get_one(h, kind, ids[0]); /* connect */
    unsigned seed = 7;
    int ok = 0;
    for (int t = 0; t < TRIES; t++) {
        int64_t t0 = acc_mono_us();
        ok += get_one(h, kind, ids[rand_r(&seed) % (unsigned)n_ids]);
        us[t] = acc_mono_us() - t0;
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    qsort(us, TRIES, sizeof us[0], cmp_i64);
    printf("one %s at a time: median %.3f ms, p99 %.3f ms (%d/%d ok)\n", get_names[kind],
           (double)us[TRIES / 2] / 1000.0, (double)us[TRIES * 99 / 100] / 1000.0, ok, TRIES);
    return (double)us[TRIES / 2] / 1000.0;
}

static void print_figures(const struct figures *fg)
{
    printf("figure post_per_s %.0f\n", fg->post_s);
    printf("figure post_vs_healthz %.4f\n",
           fg->get_s[GET_HEALTH] > 0 ? fg->post_s / fg->get_s[GET_HEALTH] : 0);
    printf("figure cpu_ms_per_agreement %.3f\n", fg->cpu_ms);
    printf("figure switches_per_agreement %.1f\n", fg->switches);
    printf("figure rss_mb %.1f\n", fg->rss_mb);
    printf("figure db_kb_per_agreement %.2f\n", fg->db_kb);
    static const char *const key[] = {"xml", "json", "healthz"};
    for (int k = 0; k < 3; k++)
        printf("figure get_%s_per_s %.0f\n", key[k], fg->get_s[k]);
    for (int k = 0; k < 3; k++)
        printf("figure one_get_%s_ms %.3f\n", key[k], fg->one_ms[k]);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int get_seconds = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 1 || get_seconds < 1) {
        fprintf(stderr, "usage: accord_server_bench [agreements] [seconds of each GET run]\n");
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char dir[] = "/tmp/accord-server-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char ini[256], db[256], wal[280];
    snprintf(ini, sizeof ini, "%s/bench.ini", dir);
    snprintf(db, sizeof db, "%s/bench.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", db);
    FILE *f = fopen(ini, "w");
    if (!f)
        return 1;
    fputs(config, f);
    fclose(f);
    curl_global_init(CURL_GLOBAL_ALL);
    const char *accordd = getenv("ACCORD_BENCH_ACCORDD");
    pid = daemon_start(accordd && *accordd ? accordd : ACCORDD_PATH, ini, db, base, sizeof base);
    if (pid <= 0) {
        fprintf(stderr, "server_bench: accordd did not start\n");
        return 1;
    }

    struct figures fg = {0};
    char(*ids)[32] = calloc((size_t)n, sizeof *ids);
    long n_ids = bench_fill(n, ids, db, wal, &fg);
    for (int k = 0; k < 3 && n_ids > 0; k++)
        fg.get_s[k] = bench_get((enum get_kind)k, ids, n_ids, get_seconds);
    for (int k = 0; k < 3 && n_ids > 0; k++)
        fg.one_ms[k] = bench_one((enum get_kind)k, ids, n_ids);
    bench_crowd();

    int64_t t0 = acc_mono_us();
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    printf("SIGTERM to exit: %.0f ms\n", (double)(acc_mono_us() - t0) / 1000.0);
    print_figures(&fg);
    free(ids);
    curl_global_cleanup();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    /* a run where nothing was agreed or served measured nothing */
    return n_ids > 0 && fg.get_s[GET_XML] > 0 && fg.get_s[GET_JSON] > 0 ? 0 : 1;
}
