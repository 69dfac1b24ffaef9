/* SPDX-License-Identifier: Apache-2.0 */
/* notify.c - systemd's notification protocol: one datagram per message. */
#include "notify.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "log.h"

/* The address of $NOTIFY_SOCKET in *sa and its length in *len. */
static acc_err notify_address(const char *name, struct sockaddr_un *sa, socklen_t *len,
                              struct acc_error *err)
{
    size_t n = strlen(name);
    if ((name[0] != '/' && name[0] != '@') || n < 2)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "NOTIFY_SOCKET '%s' is neither a path nor an abstract name", name);
    if (n > sizeof sa->sun_path - (name[0] == '/')) /* a path needs its NUL */
        return acc_error_set(err, ACC_ERR_INVALID, "NOTIFY_SOCKET is longer than %zu bytes",
                             sizeof sa->sun_path - 1);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, name, n);
    if (name[0] == '@')
        sa->sun_path[0] = '\0'; /* abstract: the name is the bytes after the NUL */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'));
    return ACC_OK;
}

acc_err acc_notify(const char *state, struct acc_error *err)
{
    const char *name = getenv("NOTIFY_SOCKET");
    if (!name || !*name)
        return ACC_OK;
    struct sockaddr_un sa;
    socklen_t len = 0;
    acc_err rc = notify_address(name, &sa, &len, err);
    if (rc)
        return rc;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return acc_error_set(err, ACC_ERR_IO, "notify: socket: %s", strerror(errno));
    size_t n = strlen(state);
    ssize_t sent = sendto(fd, state, n, MSG_NOSIGNAL, (const struct sockaddr *)&sa, len);
    if (sent < 0 || (size_t)sent != n)
        rc = acc_error_set(err, ACC_ERR_IO, "notify: sending to %s: %s", name,
                           sent < 0 ? strerror(errno) : "short datagram");
    close(fd);
    return rc;
}

static void notify_or_warn(const char *state)
{
    struct acc_error err;
    if (acc_notify(state, &err))
        acc_log_warn("%s", err.msg);
}

void acc_notify_ready(void)
{
    notify_or_warn("READY=1");
}

void acc_notify_reloading(void)
{
    /* systemd (253 and later) wants the time the reload began, so that it
     * knows this message from an older one. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char msg[64];
    snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
             (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
    notify_or_warn(msg);
}

void acc_notify_stopping(void)
{
    notify_or_warn("STOPPING=1");
}

int64_t acc_notify_watchdog_interval_us(void)
{
    const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    if (!usec || !*usec)
        return 0;
    /* a watchdog meant for another process (our parent's, inherited) */
    if (pid && *pid && strtol(pid, NULL, 10) != (long)getpid())
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(usec, &end, 10);
    if (errno || *end || v <= 0)
        return 0;
    return v / 2; /* sd_watchdog_enabled(3): send it at half the time */
}

void acc_notify_watchdog(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int64_t last_us;
    int64_t every = acc_notify_watchdog_interval_us();
    if (every <= 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    pthread_mutex_lock(&lock);
    /* at most twice in each half interval: a call that comes just before
     * the next is due must not push the one after to well past it */
    bool due = last_us == 0 || now - last_us >= every / 2;
    if (due)
        last_us = now;
    pthread_mutex_unlock(&lock);
    if (due)
        notify_or_warn("WATCHDOG=1");
}

void acc_notify_extend_timeout(uint64_t usec)
{
    char msg[64];
    snprintf(msg, sizeof msg, "EXTEND_TIMEOUT_USEC=%" PRIu64, usec);
    notify_or_warn(msg);
}

bool acc_notify_under_systemd(void)
{
    const char *id = getenv("INVOCATION_ID"), *sock = getenv("NOTIFY_SOCKET");
    struct stat st;
    /* sd_booted(3): this directory exists only when systemd is PID 1 */
    return ((id && *id) || (sock && *sock)) && lstat("/run/systemd/system", &st) == 0 &&
           S_ISDIR(st.st_mode);
}
