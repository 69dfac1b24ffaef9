/* SPDX-License-Identifier: Apache-2.0 */
/* test_notify.c - systemd's notification protocol (lib/common/notify): the
 * datagrams a service manager would read, on a socket of the test's own,
 * named by a path and by an abstract name. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "notify.h"
#include "testutil.h"

/* A datagram socket bound to name (a path, or '@' and an abstract name),
 * its receive bounded to 2 s so that a missing message fails, not hangs. */
static int listen_on(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    CU_ASSERT_FATAL(n < sizeof sa.sun_path);
    memcpy(sa.sun_path, name, n);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CU_ASSERT_FATAL(fd >= 0);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&sa, len), 0);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* The next datagram as a string; "" when none came. */
static const char *next_message(int fd)
{
    static char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* True when nothing is waiting on fd. */
static bool nothing_waiting(int fd)
{
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT) < 0;
}

/* The three moments in order, through the socket named by name. */
static void check_moments(const char *name)
{
    int fd = listen_on(name);
    setenv("NOTIFY_SOCKET", name, 1);
    acc_notify_ready();
    CU_ASSERT_STRING_EQUAL(next_message(fd), "READY=1");
    acc_notify_reloading();
    const char *m = next_message(fd);
    CU_ASSERT_EQUAL(strncmp(m, "RELOADING=1\nMONOTONIC_USEC=", 27), 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long now = (unsigned long long)ts.tv_sec * 1000000u + ts.tv_nsec / 1000u;
    unsigned long long then = strtoull(m + 27, NULL, 10);
    CU_ASSERT_TRUE(then > 0 && then <= now && now - then < 2000000);
    acc_notify_ready();
    CU_ASSERT_STRING_EQUAL(next_message(fd), "READY=1");
    acc_notify_stopping();
    CU_ASSERT_STRING_EQUAL(next_message(fd), "STOPPING=1");
    CU_ASSERT_TRUE(nothing_waiting(fd));
    unsetenv("NOTIFY_SOCKET");
    close(fd);
}

static void test_path(void)
{
    char dir[] = "/tmp/acc-notify-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[96];
    snprintf(path, sizeof path, "%s/notify", dir);
    check_moments(path);
    unlink(path);
    rmdir(dir);
}

static void test_abstract(void)
{
    char name[64];
    snprintf(name, sizeof name, "@acc-test-notify-%ld", (long)getpid());
    check_moments(name);
}

/* Without NOTIFY_SOCKET nothing is sent and nothing fails. */
static void test_no_socket(void)
{
    struct acc_error err;
    unsetenv("NOTIFY_SOCKET");
    ACC_ASSERT_OK(acc_notify("READY=1", &err));
    setenv("NOTIFY_SOCKET", "", 1);
    ACC_ASSERT_OK(acc_notify("READY=1", &err));
    unsetenv("NOTIFY_SOCKET");
}

/* Addresses it cannot use are refused with a message that says why; a
 * socket nobody listens on is an I/O error. */
static void test_bad_address(void)
{
    struct acc_error err;
    setenv("NOTIFY_SOCKET", "relative/notify", 1);
    CU_ASSERT_EQUAL(acc_notify("READY=1", &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "relative/notify"));
    setenv("NOTIFY_SOCKET", "@", 1);
    CU_ASSERT_EQUAL(acc_notify("READY=1", &err), ACC_ERR_INVALID);
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[0] = '/';
    longname[sizeof longname - 1] = '\0';
    setenv("NOTIFY_SOCKET", longname, 1);
    CU_ASSERT_EQUAL(acc_notify("READY=1", &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer"));
    setenv("NOTIFY_SOCKET", "/nonexistent/acc-notify", 1);
    CU_ASSERT_EQUAL(acc_notify("READY=1", &err), ACC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/acc-notify"));
    acc_notify_ready(); /* logged as a warning; the caller goes on */
    unsetenv("NOTIFY_SOCKET");
}

/* The watchdog's interval: half of $WATCHDOG_USEC, only for this process,
 * 0 for anything else. */
static void test_watchdog_interval(void)
{
    unsetenv("WATCHDOG_PID");
    unsetenv("WATCHDOG_USEC");
    CU_ASSERT_EQUAL(acc_notify_watchdog_interval_us(), 0);
    setenv("WATCHDOG_USEC", "60000000", 1);
    CU_ASSERT_EQUAL(acc_notify_watchdog_interval_us(), 30000000);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    CU_ASSERT_EQUAL(acc_notify_watchdog_interval_us(), 30000000);
    snprintf(pid, sizeof pid, "%ld", (long)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1); /* our parent's, inherited */
    CU_ASSERT_EQUAL(acc_notify_watchdog_interval_us(), 0);
    unsetenv("WATCHDOG_PID");
    const char *bad[] = {"", "0", "-5", "60s", "x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("WATCHDOG_USEC", bad[i], 1);
        CU_ASSERT_EQUAL(acc_notify_watchdog_interval_us(), 0);
    }
    unsetenv("WATCHDOG_USEC");
}

/* WATCHDOG=1 at most once per interval, however often it is called; none
 * without a watchdog; EXTEND_TIMEOUT_USEC with the time asked for. */
static void test_watchdog_and_extend(void)
{
    char name[64];
    snprintf(name, sizeof name, "@acc-notify-wd-%ld", (long)getpid());
    int fd = listen_on(name);
    setenv("NOTIFY_SOCKET", name, 1);
    unsetenv("WATCHDOG_USEC");
    acc_notify_watchdog();
    CU_ASSERT_TRUE(nothing_waiting(fd));
    setenv("WATCHDOG_USEC", "2000000", 1); /* every second, at most every 500 ms */
    acc_notify_watchdog();
    CU_ASSERT_STRING_EQUAL(next_message(fd), "WATCHDOG=1");
    acc_notify_watchdog();
    acc_notify_watchdog();
    CU_ASSERT_TRUE(nothing_waiting(fd));
    struct timespec ts = {0, 550 * 1000000};
    nanosleep(&ts, NULL);
    acc_notify_watchdog();
    CU_ASSERT_STRING_EQUAL(next_message(fd), "WATCHDOG=1");
    acc_notify_extend_timeout(300000000u);
    CU_ASSERT_STRING_EQUAL(next_message(fd), "EXTEND_TIMEOUT_USEC=300000000");
    unsetenv("WATCHDOG_USEC");
    unsetenv("NOTIFY_SOCKET");
    close(fd);
}

/* Under systemd only with its variables and /run/systemd/system. */
static void test_under_systemd(void)
{
    struct stat st;
    bool booted = lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
    unsetenv("INVOCATION_ID");
    unsetenv("NOTIFY_SOCKET");
    CU_ASSERT_FALSE(acc_notify_under_systemd());
    setenv("INVOCATION_ID", "", 1);
    CU_ASSERT_FALSE(acc_notify_under_systemd());
    setenv("INVOCATION_ID", "0123456789abcdef0123456789abcdef", 1);
    CU_ASSERT_EQUAL(acc_notify_under_systemd(), booted);
    unsetenv("INVOCATION_ID");
    setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
    CU_ASSERT_EQUAL(acc_notify_under_systemd(), booted);
    unsetenv("NOTIFY_SOCKET");
}

static const struct acc_test_case tests[] = {
    {"a socket named by a path", test_path},
    {"an abstract socket", test_abstract},
    {"no socket", test_no_socket},
    {"bad addresses", test_bad_address},
    {"the watchdog's interval", test_watchdog_interval},
    {"watchdog keep-alives and extended timeouts", test_watchdog_and_extend},
    {"under systemd", test_under_systemd},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"notify", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
