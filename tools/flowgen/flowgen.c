/* SPDX-License-Identifier: Apache-2.0 */
/* accord-flowgen: a small TCP traffic generator for the namespace testbed
 * (tools/netbed.sh): the real and background flows of the tc adapter's tests
 * and of the VIOLA benchmark.  No iperf3 dependency.
 *
 *   accord-flowgen serve PORT [--bind ADDR] [--max-conns N]
 *   accord-flowgen send HOST PORT [--streams N] [--seconds T] [--bind ADDR]
 *   accord-flowgen --help | --version
 *
 * serve counts the bytes of every connection; when a sender closes its side it
 * answers "BYTES n\n" (what it received on that connection) and closes.
 * send opens N connections, writes as fast as TCP lets it for T seconds, closes
 * its side and waits for the answers.  It prints one line
 *   RESULT mbit_s=M bytes=B seconds=S streams=N
 * where B is the sum of the bytes the RECEIVER counted and S the time from the
 * first byte sent to the last answer (so data still queued at the deadline is
 * counted together with the time it took to drain): M = B * 8 / S / 1e6 is the
 * goodput measured at the receiver.  SIGINT/SIGTERM end a sender early (it
 * still collects the answers and prints its line) and end a server cleanly.
 * Bounds: 1..64 streams, 0.1..3600 s, at most --max-conns (default 64, up to
 * 1024) connections served at once; more are closed at once.  Exit 0 on
 * success, 1 on a failure (named on stderr), 2 on a usage error. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS        64
#define MAX_CONNS_LIMIT    1024
#define BUF_SIZE           (256 * 1024)
#define CONNECT_TIMEOUT_MS 5000
#define ANSWER_TIMEOUT_MS  15000

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* The usage on f; 2, the status of a usage error. */
static int usage(FILE *f)
{
    fprintf(f, "usage: accord-flowgen serve PORT [--bind ADDR] [--max-conns N]\n"
               "       accord-flowgen send HOST PORT [--streams N] [--seconds T] "
               "[--bind ADDR]\n"
               "       accord-flowgen --help | --version\n"
               "\n"
               "serve counts the bytes of each connection and answers them when the\n"
               "sender closes; send writes over N connections for T seconds and prints\n"
               "RESULT mbit_s=M bytes=B seconds=S streams=N, B counted by the receiver.\n"
               "\n"
               "  --bind ADDR      the IPv4 address to listen on (serve; default 0.0.0.0)\n"
               "                   or to send from (send)\n"
               "  --max-conns N    connections served at once (1..1024, default 64)\n"
               "  --streams N      connections to send over (1..64, default 1)\n"
               "  --seconds T      how long to send (0.1..3600, default 10)\n");
    return 2;
}

/* The next option of a subcommand (argv[0] is its name), as getopt_long
 * returns it; an unknown option, a missing value or a value that is
 * another option ("--bind --streams") is named and gives '?'. */
static int next_option(int argc, char **argv, const struct option *opts)
{
    opterr = 0; /* the messages below name accord-flowgen, not argv[0] */
    int opt = getopt_long(argc, argv, ":h", opts, NULL);
    if (opt == ':' || (opt > 0 && opt != '?' && optarg && strncmp(optarg, "--", 2) == 0)) {
        fprintf(stderr, "accord-flowgen: option '%s' needs a value\n",
                opt == ':' ? argv[optind - 1] : argv[optind - 2]);
        return '?';
    }
    if (opt == '?')
        fprintf(stderr, "accord-flowgen: unknown option '%s'\n", argv[optind - 1]);
    return opt;
}

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("accord-flowgen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0.1 && v <= 3600.0))
        return false;
    *out = v;
    return true;
}

static bool parse_addr(const char *s, uint16_t port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    return inet_pton(AF_INET, s, &sa->sin_addr) == 1;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- serve ---- */

struct conn {
    int fd;
    uint64_t bytes;
};

static void conn_answer_close(struct conn *c)
{
    char line[48];
    int n = snprintf(line, sizeof(line), "BYTES %llu\n", (unsigned long long)c->bytes);
    /* The socket's send buffer is empty (the sender only sent): this fits at once. */
    if (n > 0 && send(c->fd, line, (size_t)n, MSG_NOSIGNAL) != n)
        fprintf(stderr, "accord-flowgen: could not answer a sender: %s\n", strerror(errno));
    close(c->fd);
    c->fd = -1;
}

/* One server: its options, the listening socket and the connections. */
struct server {
    long port, max_conns;
    const char *bind_addr;
    struct sockaddr_in sa;
    struct pollfd *pfd;
    struct conn *conns;
    char *buf;
    int lfd;
    uint64_t total, served, refused;
};

/* Reads PORT [--bind ADDR] [--max-conns N]; -1 when read, else the exit
 * code. */
static const struct option serve_options[] = {
    {"bind", required_argument, NULL, 'b'},
    {"max-conns", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* serve's arguments (argv[0] is "serve"); -1 to go on, else the status. */
static int serve_args(int argc, char **argv, struct server *sv)
{
    const char *port;
    int opt;
    optind = 1;
    while ((opt = next_option(argc, argv, serve_options)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return 0;
        } else if (opt == 'b') {
            sv->bind_addr = optarg;
        } else if (opt == 'm') {
            if (!parse_long(optarg, 1, MAX_CONNS_LIMIT, &sv->max_conns))
                return fail("--max-conns: expected 1 to %d, got '%s'", MAX_CONNS_LIMIT, optarg);
        } else {
            return usage(stderr);
        }
    }
    /* getopt_long moved the operands after the options: PORT alone. */
    if (argc - optind != 1)
        return usage(stderr);
    port = argv[optind];
    if (!parse_long(port, 1, 65535, &sv->port))
        return fail("PORT: expected 1 to 65535, got '%s'", port);
    if (!parse_addr(sv->bind_addr, (uint16_t)sv->port, &sv->sa))
        return fail("--bind: not an IPv4 address: '%s'", sv->bind_addr);
    return -1;
}

static bool serve_listen(struct server *sv)
{
    int one = 1;
    sv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return sv->lfd >= 0 && setsockopt(sv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
           bind(sv->lfd, (struct sockaddr *)&sv->sa, sizeof(sv->sa)) == 0 &&
           listen(sv->lfd, 128) == 0 && set_nonblock(sv->lfd) == 0;
}

/* Takes every waiting connection into a free slot; without one it is
 * closed at once (bounded: the sender sees a reset). */
static void serve_accept(struct server *sv)
{
    int cfd;
    while ((cfd = accept(sv->lfd, NULL, NULL)) >= 0) {
        if (set_nonblock(cfd) != 0 || fcntl(cfd, F_SETFD, FD_CLOEXEC) != 0) {
            close(cfd);
            continue;
        }
        long slot = -1;
        for (long i = 0; i < sv->max_conns && slot < 0; i++)
            if (sv->conns[i].fd < 0)
                slot = i;
        if (slot < 0) {
            close(cfd); /* bounded: the sender sees a reset */
            sv->refused++;
            continue;
        }
        sv->conns[slot] = (struct conn){.fd = cfd, .bytes = 0};
        sv->served++;
    }
}

/* Counts what each connection sent; a sender that closed its side gets
 * its answer. */
static void serve_read(struct server *sv)
{
    for (long i = 0; i < sv->max_conns; i++) {
        struct conn *c = &sv->conns[i];
        if (c->fd < 0)
            continue;
        for (int rounds = 0; rounds < 16; rounds++) {
            ssize_t r = recv(c->fd, sv->buf, BUF_SIZE, 0);
            if (r > 0) {
                c->bytes += (uint64_t)r;
                sv->total += (uint64_t)r;
                continue;
            }
            if (r == 0)
                conn_answer_close(c);
            else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                close(c->fd); /* reset by the sender: nothing to answer */
                c->fd = -1;
            }
            break;
        }
    }
}

static int serve(int argc, char **argv)
{
    struct server sv = {.max_conns = 64, .bind_addr = "0.0.0.0", .lfd = -1};
    int rc = serve_args(argc, argv, &sv);
    if (rc >= 0)
        return rc;
    rc = 1;
    sv.pfd = calloc((size_t)sv.max_conns + 1, sizeof(*sv.pfd));
    sv.conns = calloc((size_t)sv.max_conns, sizeof(*sv.conns));
    sv.buf = malloc(BUF_SIZE);
    if (sv.pfd == NULL || sv.conns == NULL || sv.buf == NULL) {
        fail("out of memory");
        goto out;
    }
    for (long i = 0; i < sv.max_conns; i++)
        sv.conns[i].fd = -1;
    if (!serve_listen(&sv)) {
        fail("cannot listen on %s:%ld: %s", sv.bind_addr, sv.port, strerror(errno));
        goto out;
    }
    printf("LISTENING %s:%ld\n", sv.bind_addr, sv.port);
    fflush(stdout);

    while (!stop_requested) {
        nfds_t n = 0;
        sv.pfd[n++] = (struct pollfd){.fd = sv.lfd, .events = POLLIN};
        for (long i = 0; i < sv.max_conns; i++)
            if (sv.conns[i].fd >= 0)
                sv.pfd[n++] = (struct pollfd){.fd = sv.conns[i].fd, .events = POLLIN};
        int pr = poll(sv.pfd, n, 200);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            fail("poll: %s", strerror(errno));
            goto out;
        }
        if (sv.pfd[0].revents & POLLIN)
            serve_accept(&sv);
        serve_read(&sv);
    }
    printf("SERVED connections=%llu refused=%llu bytes=%llu\n", (unsigned long long)sv.served,
           (unsigned long long)sv.refused, (unsigned long long)sv.total);
    rc = 0;
out:
    if (sv.conns != NULL)
        for (long i = 0; i < sv.max_conns; i++)
            if (sv.conns[i].fd >= 0)
                close(sv.conns[i].fd);
    if (sv.lfd >= 0)
        close(sv.lfd);
    free(sv.pfd);
    free(sv.conns);
    free(sv.buf);
    return rc;
}

/* ---- send ---- */

struct stream {
    int fd;
    bool closed_wr, answered;
    char ans[48];
    size_t ans_len;
    uint64_t received; /* counted by the receiver */
};

static int connect_one(const struct sockaddr_in *dst, const struct sockaddr_in *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (src != NULL && bind(fd, (const struct sockaddr *)src, sizeof(*src)) != 0)
        goto bad;
    if (set_nonblock(fd) != 0)
        goto bad;
    if (connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) != 0) {
        if (errno != EINPROGRESS)
            goto bad;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t len = sizeof(err);
        if (poll(&p, 1, CONNECT_TIMEOUT_MS) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            errno = err != 0 ? err : ETIMEDOUT;
            goto bad;
        }
    }
    return fd;
bad:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

/* Reads the answer "BYTES n\n" of one stream; true once it is complete. */
static bool read_answer(struct stream *s)
{
    for (;;) {
        if (s->ans_len + 1 >= sizeof(s->ans))
            return true; /* too long: taken as garbled below */
        ssize_t r = recv(s->fd, s->ans + s->ans_len, sizeof(s->ans) - 1 - s->ans_len, 0);
        if (r > 0) {
            s->ans_len += (size_t)r;
            s->ans[s->ans_len] = '\0';
            if (memchr(s->ans, '\n', s->ans_len) != NULL)
                return true;
            continue;
        }
        if (r == 0)
            return true;
        return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
}

/* One sender: its options and its streams. */
struct sender {
    long port, streams;
    double seconds;
    const char *host, *bind_addr;
    struct sockaddr_in dst, src;
    struct stream st[MAX_STREAMS];
    struct pollfd pfd[MAX_STREAMS];
    char *buf;
    long opened;
};

/* Reads HOST PORT [--streams N] [--seconds T] [--bind ADDR]; -1 when read,
 * else the exit code. */
static const struct option send_options[] = {
    {"streams", required_argument, NULL, 'n'},
    {"seconds", required_argument, NULL, 't'},
    {"bind", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* send's arguments (argv[0] is "send"); -1 to go on, else the status. */
static int send_args(int argc, char **argv, struct sender *sd)
{
    int opt;
    optind = 1;
    while ((opt = next_option(argc, argv, send_options)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return 0;
        } else if (opt == 'n') {
            if (!parse_long(optarg, 1, MAX_STREAMS, &sd->streams))
                return fail("--streams: expected 1 to %d, got '%s'", MAX_STREAMS, optarg);
        } else if (opt == 't') {
            if (!parse_seconds(optarg, &sd->seconds))
                return fail("--seconds: expected 0.1 to 3600, got '%s'", optarg);
        } else if (opt == 'b') {
            sd->bind_addr = optarg;
        } else {
            return usage(stderr);
        }
    }
    /* getopt_long moved the operands after the options: HOST PORT. */
    if (argc - optind != 2)
        return usage(stderr);
    sd->host = argv[optind];
    if (!parse_long(argv[optind + 1], 1, 65535, &sd->port))
        return fail("PORT: expected 1 to 65535, got '%s'", argv[optind + 1]);
    if (!parse_addr(sd->host, (uint16_t)sd->port, &sd->dst))
        return fail("HOST: not an IPv4 address: '%s'", sd->host);
    if (sd->bind_addr != NULL && !parse_addr(sd->bind_addr, 0, &sd->src))
        return fail("--bind: not an IPv4 address: '%s'", sd->bind_addr);
    return -1;
}

/* Phase 1: write until the deadline (or a signal).  0, or 1 on a failure
 * (named). */
static int send_phase(struct sender *sd, double deadline)
{
    while (!stop_requested && now_s() < deadline) {
        for (long i = 0; i < sd->streams; i++)
            sd->pfd[i] = (struct pollfd){.fd = sd->st[i].fd, .events = POLLOUT};
        int ms = (int)((deadline - now_s()) * 1000.0) + 1;
        int pr = poll(sd->pfd, (nfds_t)sd->streams, ms < 200 ? ms : 200);
        if (pr < 0 && errno != EINTR)
            return fail("poll: %s", strerror(errno));
        for (long i = 0; pr > 0 && i < sd->streams; i++) {
            if (sd->pfd[i].revents & (POLLERR | POLLHUP))
                return fail("stream %ld to %s:%ld was closed by the receiver", i, sd->host,
                            sd->port);
            if (sd->pfd[i].revents & POLLOUT) {
                ssize_t w = send(sd->st[i].fd, sd->buf, BUF_SIZE, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    return fail("stream %ld: send: %s", i, strerror(errno));
            }
        }
    }
    return 0;
}

/* Phase 2: close our side; the receiver answers once it has read
 * everything.  *t_last is the time of the last answer.  0, or 1 on a
 * failure (named). */
static int answer_phase(struct sender *sd, double *t_last)
{
    for (long i = 0; i < sd->streams; i++) {
        shutdown(sd->st[i].fd, SHUT_WR);
        sd->st[i].closed_wr = true;
    }
    *t_last = now_s();
    double answer_deadline = *t_last + ANSWER_TIMEOUT_MS / 1000.0;
    long answered = 0;
    while (answered < sd->streams) {
        double left = answer_deadline - now_s();
        if (left <= 0)
            return fail("no answer from the receiver within %d s", ANSWER_TIMEOUT_MS / 1000);
        nfds_t n = 0;
        long idx[MAX_STREAMS];
        for (long i = 0; i < sd->streams; i++)
            if (!sd->st[i].answered) {
                idx[n] = i;
                sd->pfd[n++] = (struct pollfd){.fd = sd->st[i].fd, .events = POLLIN};
            }
        int pr = poll(sd->pfd, n, (int)(left * 1000.0) + 1);
        if (pr < 0 && errno != EINTR)
            return fail("poll: %s", strerror(errno));
        for (nfds_t k = 0; pr > 0 && k < n; k++) {
            struct stream *s = &sd->st[idx[k]];
            if (!(sd->pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) || !read_answer(s))
                continue;
            unsigned long long v = 0;
            if (sscanf(s->ans, "BYTES %llu", &v) != 1)
                return fail("stream %ld: garbled answer from the receiver", idx[k]);
            s->received = v;
            s->answered = true;
            answered++;
            *t_last = now_s();
        }
    }
    return 0;
}

static int send_cmd(int argc, char **argv)
{
    struct sender sd = {.streams = 1, .seconds = 10.0};
    int rc = send_args(argc, argv, &sd);
    if (rc >= 0)
        return rc;
    rc = 1;
    sd.buf = calloc(1, BUF_SIZE);
    if (sd.buf == NULL) {
        fail("out of memory");
        goto out;
    }
    for (long i = 0; i < sd.streams; i++) {
        sd.st[i] =
            (struct stream){.fd = connect_one(&sd.dst, sd.bind_addr != NULL ? &sd.src : NULL)};
        if (sd.st[i].fd < 0) {
            fail("cannot connect to %s:%ld: %s", sd.host, sd.port, strerror(errno));
            goto out;
        }
        sd.opened = i + 1;
    }
    double t0 = now_s(), t_last = t0;
    if (send_phase(&sd, t0 + sd.seconds) || answer_phase(&sd, &t_last))
        goto out;
    uint64_t bytes = 0;
    for (long i = 0; i < sd.streams; i++)
        bytes += sd.st[i].received;
    double secs = t_last - t0;
    printf("RESULT mbit_s=%.2f bytes=%llu seconds=%.3f streams=%ld%s\n",
           secs > 0 ? (double)bytes * 8.0 / secs / 1e6 : 0.0, (unsigned long long)bytes, secs,
           sd.streams, stop_requested ? " interrupted=1" : "");
    rc = 0;
out:
    for (long i = 0; i < sd.opened; i++)
        close(sd.st[i].fd);
    free(sd.buf);
    return rc;
}

int main(int argc, char **argv)
{
    install_signals();
    if (argc >= 2 && strcmp(argv[1], "serve") == 0)
        return serve(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "send") == 0)
        return send_cmd(argc - 1, argv + 1);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("accord-flowgen %s\n", ACCORD_VERSION);
        return 0;
    }
    if (argc >= 2 && argv[1][0] == '-')
        fprintf(stderr, "accord-flowgen: unknown option '%s'\n", argv[1]);
    return usage(stderr);
}
