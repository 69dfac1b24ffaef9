/* SPDX-License-Identifier: Apache-2.0 */
/* accord-metatrace - a MetaTrace-like coupled MPI application for the VIOLA
 * experiment (tests/bench/viola-bench.sh, docs/adapters/tc-testbed.md).
 *
 * In VIOLA, MetaTrace coupled TRACE (ground-water flow) and PARTRACE (particle
 * tracking) on two or three clusters: every time step computes, then sends the
 * flow field across the WAN.  This program does the same with a busy loop and a
 * fixed volume: two or three components, the MPMD segments of one mpiexec
 * (MPI_APPNUM 0, 1, 2; one per site).  Each step:
 *   1. compute: every rank busy-loops for --compute-ms;
 *   2. a barrier (not timed: it aligns the ranks, as MetaTrace's step did);
 *   3. exchange: component 0 sends --mb megabytes (10^6 bytes) to EACH other
 *      component, split evenly over its ranks; the rank with index j in
 *      component 0 sends to the rank with index j mod n of the receiving one.
 *      The step's communication time is the longest exchange of any rank.
 * Rank 0 prints one line per step and a summary:
 *   STEP 3 comm_s=0.2213
 *   METATRACE components=2 ranks=2 steps=8 warmup=1 mb=4 compute_ms=500
 *     comm_median_s=0.2201 comm_min_s=0.2150 comm_max_s=0.2390 spread=0.109
 *     comm_share=0.306 run_s=5.83
 * (one line) where spread = (max - min) / median and comm_share = the time of
 * the measured steps spent communicating / their whole time.  The first
 * --warmup steps (default 1: UCX connects its endpoints lazily) are printed
 * but not counted.
 *
 * Options: --steps=N (1..10000, default 10), --compute-ms=N (0..600000,
 * default 500), --mb=X (0.001..1000, default 4), --warmup=N (0..steps-1,
 * default 1).  A bad option: a message from rank 0 and exit status 2.
 *
 * Built with mpicc.mpich beside accordd (like accord-ring).  Across network
 * namespaces run it with UCX_TLS=tcp and the MPI_Finalize shim, see
 * tests/mpi/README.md. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMPONENTS 8
#define TAG_DATA       7

struct opts {
    long steps, compute_ms, warmup;
    double mb;
};

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o, char *why, size_t size)
{
    *o = (struct opts){.steps = 10, .compute_ms = 500, .warmup = 1, .mb = 4.0};
    int warmup_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--steps=", 8) == 0) {
            if (parse_long(a + 8, 1, 10000, &o->steps) != 0)
                goto bad;
        } else if (strncmp(a, "--compute-ms=", 13) == 0) {
            if (parse_long(a + 13, 0, 600000, &o->compute_ms) != 0)
                goto bad;
        } else if (strncmp(a, "--warmup=", 9) == 0) {
            if (parse_long(a + 9, 0, 10000, &o->warmup) != 0)
                goto bad;
            warmup_set = 1;
        } else if (strncmp(a, "--mb=", 5) == 0) {
            char *end = NULL;
            errno = 0;
            o->mb = strtod(a + 5, &end);
            if (errno != 0 || end == a + 5 || *end != '\0' || !(o->mb >= 0.001 && o->mb <= 1000))
                goto bad;
        } else
            goto bad;
        continue;
    bad:
        snprintf(why, size,
                 "bad option '%s' (--steps=1..10000 --compute-ms=0..600000 "
                 "--mb=0.001..1000 --warmup=0..steps-1)",
                 a);
        return -1;
    }
    if (!warmup_set && o->warmup >= o->steps)
        o->warmup = 0;
    if (o->warmup >= o->steps) {
        snprintf(why, size, "--warmup=%ld must be less than --steps=%ld", o->warmup, o->steps);
        return -1;
    }
    return 0;
}

static void busy(double seconds)
{
    double end = MPI_Wtime() + seconds;
    volatile double x = 1.0;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Where the ranks stand: each one's component (its MPMD segment,
 * MPI_APPNUM) and its index there. */
struct layout {
    int rank, size, ncomp, my_app, my_index;
    int *app, *members[MAX_COMPONENTS], n_of[MAX_COMPONENTS];
};

/* The components of the run; 2 (said by rank 0) unless there are 2 to
 * MAX_COMPONENTS of them, each with ranks. */
static int find_components(struct layout *l)
{
    int *appnum_attr = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum_attr, &flag);
    if (flag && appnum_attr != NULL)
        l->my_app = *appnum_attr;
    int *app = l->app = calloc((size_t)l->size, sizeof(*l->app));
    if (app == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(&l->my_app, 1, MPI_INT, app, 1, MPI_INT, MPI_COMM_WORLD);
    int ncomp = 0;
    for (int r = 0; r < l->size; r++) {
        if (app[r] < 0 || app[r] >= MAX_COMPONENTS) {
            ncomp = -1;
            break;
        }
        if (app[r] + 1 > ncomp)
            ncomp = app[r] + 1;
    }
    l->ncomp = ncomp;
    if (ncomp < 2) {
        if (l->rank == 0)
            fprintf(stderr,
                    "accord-metatrace: needs 2 to %d components (MPMD segments, "
                    "e.g. mpiexec -n 1 prog : -n 1 prog); got %d\n",
                    MAX_COMPONENTS, ncomp);
        return 2;
    }
    for (int c = 0; c < ncomp; c++) {
        l->members[c] = calloc((size_t)l->size, sizeof(int));
        if (l->members[c] == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < l->size; r++) {
        if (r == l->rank)
            l->my_index = l->n_of[app[r]];
        l->members[app[r]][l->n_of[app[r]]++] = r;
    }
    for (int c = 0; c < ncomp; c++)
        if (l->n_of[c] == 0) {
            if (l->rank == 0)
                fprintf(stderr, "accord-metatrace: component %d has no ranks\n", c);
            return 2;
        }
    return 0;
}

/* Who sends what to whom: component 0's rank j sends share(j) bytes to rank
 * (j mod n_c) of every other component c; share(0) takes the remainder. */
struct traffic {
    long long share, first_extra, my_send, my_recv;
    int nreq_max;
};

static void plan_traffic(const struct layout *l, double mb, struct traffic *t)
{
    long long total = (long long)(mb * 1e6);
    int n0 = l->n_of[0];
    t->share = total / n0;
    t->first_extra = total % n0;
    t->my_send = l->my_app == 0 ? t->share + (l->my_index == 0 ? t->first_extra : 0) : 0;
    t->my_recv = 0;
    t->nreq_max = 0;
    if (l->my_app == 0)
        t->nreq_max = l->ncomp - 1;
    else
        for (int j = 0; j < n0; j++)
            if (j % l->n_of[l->my_app] == l->my_index) {
                t->my_recv += t->share + (j == 0 ? t->first_extra : 0);
                t->nreq_max++;
            }
}

/* One step's exchange as planned; the time this rank took. */
static double exchange(const struct layout *l, const struct traffic *t, char *sendbuf,
                       char *recvbuf, MPI_Request *req, MPI_Status *stat)
{
    double t0 = MPI_Wtime();
    int nreq = 0;
    if (l->my_app == 0) {
        for (int c = 1; c < l->ncomp; c++)
            MPI_Isend(sendbuf, (int)t->my_send, MPI_BYTE, l->members[c][l->my_index % l->n_of[c]],
                      TAG_DATA, MPI_COMM_WORLD, &req[nreq++]);
    } else {
        long long off = 0;
        for (int j = 0; j < l->n_of[0]; j++)
            if (j % l->n_of[l->my_app] == l->my_index) {
                long long len = t->share + (j == 0 ? t->first_extra : 0);
                MPI_Irecv(recvbuf + off, (int)len, MPI_BYTE, l->members[0][j], TAG_DATA,
                          MPI_COMM_WORLD, &req[nreq++]);
                off += len;
            }
    }
    MPI_Waitall(nreq, req, stat);
    return MPI_Wtime() - t0;
}

/* Rank 0's summary line over the steps after the warm-up (comm: each step's
 * longest exchange; run: their whole time). */
static void report(const struct opts *o, const struct layout *l, const double *comm, double run)
{
    long n = o->steps - o->warmup;
    double sum = 0, *sorted = malloc((size_t)n * sizeof(double));
    if (sorted == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < n; i++) {
        sorted[i] = comm[o->warmup + i];
        sum += sorted[i];
    }
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    printf("METATRACE components=%d ranks=%d steps=%ld warmup=%ld mb=%g compute_ms=%ld "
           "comm_median_s=%.4f comm_min_s=%.4f comm_max_s=%.4f spread=%.3f "
           "comm_share=%.3f run_s=%.2f\n",
           l->ncomp, l->size, o->steps, o->warmup, o->mb, o->compute_ms, med, sorted[0],
           sorted[n - 1], med > 0 ? (sorted[n - 1] - sorted[0]) / med : 0.0,
           run > 0 ? sum / run : 0.0, run);
    fflush(stdout);
    free(sorted);
}

int main(int argc, char **argv)
{
    struct opts o;
    char why[256] = "";
    int rc = 0;
    struct layout l = {0};
    struct traffic t;
    char *sendbuf = NULL, *recvbuf = NULL;
    MPI_Request *req = NULL;
    MPI_Status *stat = NULL; /* not MPI_STATUSES_IGNORE: gcc 12 warns on it */
    double *comm = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &l.size);
    if (parse_opts(argc, argv, &o, why, sizeof(why)) != 0) {
        if (l.rank == 0)
            fprintf(stderr, "accord-metatrace: %s\n", why);
        rc = 2;
        goto out;
    }
    if ((rc = find_components(&l)) != 0)
        goto out;

    plan_traffic(&l, o.mb, &t);
    int nreq_max = t.nreq_max;
    sendbuf = calloc(1, (size_t)(t.my_send > 0 ? t.my_send : 1));
    recvbuf = calloc(1, (size_t)(t.my_recv > 0 ? t.my_recv : 1));
    req = calloc((size_t)(nreq_max > 0 ? nreq_max : 1), sizeof(*req));
    stat = calloc((size_t)(nreq_max > 0 ? nreq_max : 1), sizeof(*stat));
    comm = calloc((size_t)o.steps, sizeof(*comm));
    if (sendbuf == NULL || recvbuf == NULL || req == NULL || stat == NULL || comm == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(sendbuf, 0x5a, (size_t)(t.my_send > 0 ? t.my_send : 1));

    if (l.rank == 0) {
        printf("METATRACE-START components=%d ranks=%d steps=%ld warmup=%ld mb=%g "
               "compute_ms=%ld\n",
               l.ncomp, l.size, o.steps, o.warmup, o.mb, o.compute_ms);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double run_start = 0, run_end = 0;
    for (long s = 0; s < o.steps; s++) {
        if (s == o.warmup)
            run_start = MPI_Wtime();
        busy((double)o.compute_ms / 1000.0);
        MPI_Barrier(MPI_COMM_WORLD);
        double mine = exchange(&l, &t, sendbuf, recvbuf, req, stat), longest = 0;
        MPI_Reduce(&mine, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (l.rank == 0) {
            comm[s] = longest;
            printf("STEP %ld comm_s=%.4f%s\n", s, longest, s < o.warmup ? " warmup" : "");
            fflush(stdout);
        }
    }
    run_end = MPI_Wtime();

    if (l.rank == 0)
        report(&o, &l, comm, run_end - run_start);
out:
    for (int c = 0; c < MAX_COMPONENTS; c++)
        free(l.members[c]);
    free(l.app);
    free(sendbuf);
    free(recvbuf);
    free(req);
    free(stat);
    free(comm);
    MPI_Finalize();
    return rc;
}
