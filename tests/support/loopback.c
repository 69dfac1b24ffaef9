/* SPDX-License-Identifier: Apache-2.0 */
/* loopback.c - see loopback.h. */
#include "loopback.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "timefmt.h"

int acc_test_connect_from(const char *from, unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &a.sin_addr);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        connect(fd, (struct sockaddr *)&to, sizeof to)) {
        close(fd);
        return -1;
    }
    return fd;
}

bool acc_test_closed_within(int fd, int ms)
{
    if (fd < 0)
        return true;
    int64_t end = acc_mono_us() + (int64_t)ms * 1000;
    for (;;) {
        int left = (int)((end - acc_mono_us()) / 1000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left < 0 || poll(&p, 1, left) <= 0)
            return false;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return true;
    }
}
