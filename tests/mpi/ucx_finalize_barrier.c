/* SPDX-License-Identifier: Apache-2.0 */
/* ucx_finalize_barrier.c - LD_PRELOAD shim that keeps MPI_Finalize from hanging when Debian 12's
 * MPICH 4.0.2 (device ch4:ucx, UCX 1.13) runs with UCX_TLS=tcp.  Test fixture only; adapted from
 * the measured lab example (shared/lab/mpi/ucx_finalize_barrier.c, "Trap 2" in its README).
 *
 * Why UCX_TLS=tcp at all: between the network namespaces of tests/mpi/netns-sites.sh, UCX would
 * otherwise use shared memory and no byte would cross the emulated network.
 *
 * The problem: MPICH's UCX finalize hook calls ucp_disconnect_nb() for every endpoint, calls
 * ucp_worker_progress() only until ITS OWN disconnect requests are complete, and then waits in a
 * PMI barrier that does not progress UCX.  Over TCP a disconnect needs an answer from the peer; a
 * peer that already sits in that barrier never answers, so the rank spins for ever: 15-90 % of
 * the runs hung in the lab.  (Later MPICH releases put a PMI barrier in front of the disconnect
 * loop.)
 *
 * The fix: two extra barriers, in the simple PMI-1 wire protocol that Hydra speaks to each rank
 * over the socket $PMI_FD ("cmd=barrier_in\n", answer "cmd=barrier_out\n"):
 *   1. at the first ucp_disconnect_nb() of the process, a plain blocking barrier: nobody starts
 *      to disconnect before every rank is inside MPI_Finalize;
 *   2. in ucp_worker_progress(), as soon as every disconnect request of this process is complete,
 *      a barrier that keeps progressing the worker while it waits.  So every rank goes on
 *      answering its peers until all ranks have finished disconnecting; only then does MPICH
 *      reach its own, non-progressing barrier.  The requests are still valid at that point:
 *      MPICH releases them only after its completion loop, from which this barrier is called.
 * Both barriers are collective: they stay matched only if EVERY rank reaches them.  A rank
 * whose disconnects all complete at once (ucp_disconnect_nb() returns NULL for each) never calls
 * ucp_worker_progress() in MPICH's completion loop and would skip barrier 2, so the shim also
 * watches write() on $PMI_FD: when MPICH sends its own "cmd=barrier_in" while barrier 2 is still
 * due, barrier 2 runs first.  (Seen here: 1 to 6 pending requests per rank, never 0; the lab
 * version had no such guard and went through about 290 runs without a hang.)
 *
 * Limits: assumes ucp_disconnect_nb() is only called by MPI_Finalize (no MPI_Comm_disconnect,
 * no dynamic processes) and from one thread.  Without $PMI_FD (a singleton run without mpiexec)
 * the barriers are skipped.
 *
 * Build: gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o libucx_finalize_barrier.so \
 *            ucx_finalize_barrier.c -ldl
 * Use:   mpiexec.hydra -genv UCX_TLS tcp -genv LD_PRELOAD /abs/libucx_finalize_barrier.so ...
 * Trace: -genv ACC_UCXFB_TRACE 1  (one stderr line per barrier, with the rank)
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The few UCX types and values used, declared here so that the shim builds without the UCX
 * headers (libucx-dev); they are part of UCX's stable ABI. */
typedef void *ucs_status_ptr_t;
typedef struct ucp_ep *ucp_ep_h;
typedef struct ucp_worker *ucp_worker_h;
enum {
    FB_UCS_INPROGRESS = 1,  /* UCS_INPROGRESS */
    FB_UCS_ERR_LAST = -100, /* UCS_ERR_LAST: pointers from here up are error codes */
};

enum fb_phase {
    FB_RUNNING,       /* before MPI_Finalize's first disconnect */
    FB_DISCONNECTING, /* barrier 1 passed, disconnect requests being collected / progressed */
    FB_DONE,          /* barrier 2 passed: from here on the shim only passes calls through */
};

/* The whole state of the shim; MPI_Finalize runs on one thread. */
static struct {
    enum fb_phase phase;
    void **reqs; /* this process's pending disconnect requests (owned by MPICH) */
    size_t nreqs, cap;
    ucs_status_ptr_t (*disconnect_nb)(ucp_ep_h);
    unsigned (*worker_progress)(ucp_worker_h);
    int (*request_check_status)(void *); /* returns ucs_status_t */
    ssize_t (*write)(int, const void *, size_t);
    ucp_worker_h worker; /* the last worker progressed, for barrier 2 started from write() */
} fb;

static bool fb_tracing(void)
{
    const char *t = getenv("ACC_UCXFB_TRACE");
    return t && *t && strcmp(t, "0") != 0;
}

static void fb_log(bool always, const char *what)
{
    if (!always && !fb_tracing())
        return;
    const char *rank = getenv("PMI_RANK");
    fprintf(stderr, "[ucx_finalize_barrier rank %s] %s\n", rank ? rank : "?", what);
}

/* The real UCX function that this shim hides.  Missing means the shim was preloaded into a
 * process whose UCX is not the one it was written for: stopping loudly beats a silent hang. */
static void *fb_real(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        fprintf(stderr, "ucx_finalize_barrier: %s not found (%s)\n", name, dlerror());
        abort();
    }
    return sym;
}

/* dlsym gives an object pointer; copying its bytes into a function pointer is the conversion
 * POSIX guarantees, without the cast that ISO C leaves undefined. */
#define FB_RESOLVE(fp, name)                  \
    do {                                      \
        if (!(fp)) {                          \
            void *sym_ = fb_real(name);       \
            memcpy(&(fp), &sym_, sizeof(fp)); \
        }                                     \
    } while (0)

/* The PMI socket Hydra gave this rank, or -1. */
static int fb_pmi_fd(void)
{
    const char *s = getenv("PMI_FD");
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long fd = strtol(s, &end, 10);
    if (errno || *end || fd < 0 || fd > INT_MAX)
        return -1;
    return (int)fd;
}

/* Through the real write(): this file's write() would see our own barrier_in. */
static int fb_write_all(int fd, const char *msg)
{
    FB_RESOLVE(fb.write, "write");
    size_t off = 0, len = strlen(msg);
    while (off < len) {
        ssize_t n = fb.write(fd, msg + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* One byte at a time on purpose: bytes after the newline would belong to MPICH's next PMI answer,
 * and MPICH reads them itself. */
static int fb_read_line(int fd, char *buf, size_t size)
{
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(fd, buf + got, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        if (buf[got++] == '\n')
            break;
    }
    buf[got] = '\0';
    return 0;
}

/* A PMI-1 barrier over $PMI_FD.  With a worker, UCX is progressed until the answer arrives. */
static void fb_pmi_barrier(ucp_worker_h worker)
{
    char line[256];
    int fd = fb_pmi_fd();
    if (fd < 0)
        return;
    if (fb_write_all(fd, "cmd=barrier_in\n") != 0) {
        fb_log(true, "cannot write barrier_in to PMI_FD");
        return;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (worker) {
        int r = poll(&p, 1, 0);
        if (r > 0 || (r < 0 && errno != EINTR))
            break;
        fb.worker_progress(worker);
    }
    if (fb_read_line(fd, line, sizeof line) != 0 || strncmp(line, "cmd=barrier_out", 15) != 0)
        fb_log(true, "unexpected answer to barrier_in on PMI_FD");
}

/* Barrier 2, once per process; `why` is for the trace. */
static void fb_barrier2(ucp_worker_h worker, const char *why)
{
    fb.phase = FB_DONE;
    if (fb_tracing()) {
        char msg[128];
        snprintf(msg, sizeof msg, "barrier 2 (%s, %zu disconnect requests): in", why, fb.nreqs);
        fb_log(false, msg);
    }
    fb_pmi_barrier(worker);
    fb_log(false, "barrier 2: out");
    free(fb.reqs);
    fb.reqs = NULL;
    fb.nreqs = fb.cap = 0;
}

static void fb_remember(void *req)
{
    if (fb.nreqs == fb.cap) {
        size_t cap = fb.cap ? 2 * fb.cap : 64;
        void **reqs = realloc(fb.reqs, cap * sizeof *reqs);
        if (!reqs) {
            /* Forgetting a request could send this rank into barrier 2 too early and bring the
             * hang back; say so instead. */
            fb_log(true, "out of memory");
            abort();
        }
        fb.reqs = reqs;
        fb.cap = cap;
    }
    fb.reqs[fb.nreqs++] = req;
}

static bool fb_all_complete(void)
{
    for (size_t i = 0; i < fb.nreqs; i++)
        if (fb.request_check_status(fb.reqs[i]) == FB_UCS_INPROGRESS)
            return false;
    return true;
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    FB_RESOLVE(fb.disconnect_nb, "ucp_disconnect_nb");
    if (fb.phase == FB_RUNNING) {
        fb.phase = FB_DISCONNECTING;
        fb_log(false, "barrier 1 (before the first disconnect): in");
        fb_pmi_barrier(NULL);
        fb_log(false, "barrier 1: out");
    }
    ucs_status_ptr_t r = fb.disconnect_nb(ep);
    /* NULL: completed at once; values from UCS_ERR_LAST up: an error code; else a request. */
    if (fb.phase == FB_DISCONNECTING && r && (uintptr_t)r < (uintptr_t)(intptr_t)FB_UCS_ERR_LAST)
        fb_remember(r);
    return r;
}

unsigned ucp_worker_progress(ucp_worker_h worker)
{
    FB_RESOLVE(fb.worker_progress, "ucp_worker_progress");
    unsigned n = fb.worker_progress(worker);
    fb.worker = worker;
    if (fb.phase != FB_DISCONNECTING)
        return n;
    FB_RESOLVE(fb.request_check_status, "ucp_request_check_status");
    if (fb_all_complete())
        fb_barrier2(worker, "all complete");
    return n;
}

/* Only to catch MPICH entering its own post-disconnect barrier before barrier 2 (see the top). */
ssize_t write(int fd, const void *buf, size_t count)
{
    static const char barrier_in[] = "cmd=barrier_in";
    FB_RESOLVE(fb.write, "write");
    if (fb.phase == FB_DISCONNECTING && count >= sizeof barrier_in - 1 && fd == fb_pmi_fd() &&
        memcmp(buf, barrier_in, sizeof barrier_in - 1) == 0)
        fb_barrier2(fb.worker, "MPICH's own barrier came first");
    return fb.write(fd, buf, count);
}
