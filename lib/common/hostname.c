/* SPDX-License-Identifier: Apache-2.0 */
/* hostname.c - the names a server answers to (hostname.h). */
#include "hostname.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char separators[] = ", \t";

/* A name's characters: those of host names and of addresses, brackets
 * around an IPv6 address. */
static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || n > ACC_HOSTNAME_MAX)
        return false;
    size_t i = 0, end = n;
    if (s[0] == '[') {
        if (n < 3 || s[n - 1] != ']')
            return false;
        i = 1, end = n - 1;
    }
    for (; i < end; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':'))
            return false;
    }
    return true;
}

bool acc_hostnames_ok(const char *list, struct acc_error *err)
{
    size_t count = 0;
    bool star = false;
    for (const char *p = list + strspn(list, separators); *p; p += strspn(p, separators)) {
        size_t n = strcspn(p, separators);
        if (n == 1 && *p == '*') {
            star = true;
        } else if (!name_ok(p, n)) {
            acc_error_set(err, ACC_ERR_CONFIG,
                          "'%.*s' is not a host name or address (letters, digits, '.', '-', "
                          "'_', ':', an IPv6 address in brackets; at most %d characters)",
                          (int)(n < 80 ? n : 80), p, ACC_HOSTNAME_MAX);
            return false;
        }
        p += n;
        if (++count > ACC_HOSTNAMES_MAX) {
            acc_error_set(err, ACC_ERR_CONFIG, "more than %d names", ACC_HOSTNAMES_MAX);
            return false;
        }
    }
    if (count == 0) {
        acc_error_set(err, ACC_ERR_CONFIG, "no name given (\"*\" answers to any)");
        return false;
    }
    if (star && count > 1) {
        acc_error_set(err, ACC_ERR_CONFIG, "\"*\" (any name) goes alone");
        return false;
    }
    return true;
}

/* One name into h, lower case, without brackets or a final dot. */
static acc_err add(struct acc_hostnames *h, const char *s, size_t n, struct acc_error *err)
{
    if (n && s[0] == '[' && s[n - 1] == ']')
        s++, n -= 2;
    if (n > 1 && s[n - 1] == '.')
        n--;
    if (n == 0 || n > ACC_HOSTNAME_MAX || acc_hostnames_has(h, s, n))
        return ACC_OK;
    char **v = realloc(h->v, (h->n + 1) * sizeof *v);
    char *copy = malloc(n + 1);
    if (v)
        h->v = v;
    if (!v || !copy) {
        free(copy);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        copy[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
    copy[n] = '\0';
    h->v[h->n++] = copy;
    return ACC_OK;
}

static bool wildcard(const char *host)
{
    return !host || !*host || strcmp(host, "*") == 0 || strcmp(host, "0.0.0.0") == 0 ||
           strcmp(host, "::") == 0;
}

/* The host's own name and its interfaces' addresses. */
static acc_err add_own(struct acc_hostnames *h, struct acc_error *err)
{
    char name[ACC_HOSTNAME_MAX + 1];
    acc_err rc = ACC_OK;
    if (gethostname(name, sizeof name) == 0) {
        name[sizeof name - 1] = '\0';
        rc = add(h, name, strlen(name), err);
    }
    struct ifaddrs *all = NULL;
    if (rc || getifaddrs(&all) != 0)
        return rc;
    for (const struct ifaddrs *i = all; i && !rc; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        char text[INET6_ADDRSTRLEN];
        const void *a = NULL;
        if (sa && sa->sa_family == AF_INET)
            a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        else if (sa && sa->sa_family == AF_INET6)
            a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        if (a && inet_ntop(sa->sa_family, a, text, sizeof text))
            rc = add(h, text, strlen(text), err);
    }
    freeifaddrs(all);
    return rc;
}

acc_err acc_hostnames_init(struct acc_hostnames *out, const char *list, const char *listen_host,
                           struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = ACC_OK;
    if (list) {
        if (!acc_hostnames_ok(list, err))
            return ACC_ERR_CONFIG;
        for (const char *p = list + strspn(list, separators); *p && !rc;
             p += strspn(p, separators)) {
            size_t n = strcspn(p, separators);
            if (n == 1 && *p == '*')
                out->any = true;
            else
                rc = add(out, p, n, err);
            p += n;
        }
    } else {
        out->loopback = true;
        rc = wildcard(listen_host) ? add_own(out, err)
                                   : add(out, listen_host, strlen(listen_host), err);
    }
    if (rc)
        acc_hostnames_release(out);
    return rc;
}

void acc_hostnames_release(struct acc_hostnames *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i]);
    free(h->v);
    memset(h, 0, sizeof *h);
}

static bool loopback_name(const char *s, size_t n)
{
    if (n == 9 && strncasecmp(s, "localhost", 9) == 0)
        return true;
    char a[INET6_ADDRSTRLEN];
    if (n >= sizeof a)
        return false;
    memcpy(a, s, n);
    a[n] = '\0';
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, a, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, a, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool acc_hostnames_has(const struct acc_hostnames *h, const char *host, size_t len)
{
    if (h->any)
        return true;
    if (len > 1 && host[len - 1] == '.')
        len--;
    if (h->loopback && loopback_name(host, len))
        return true;
    for (size_t i = 0; i < h->n; i++)
        if (strlen(h->v[i]) == len && strncasecmp(h->v[i], host, len) == 0)
            return true;
    return false;
}

void acc_hostnames_say(const struct acc_hostnames *h, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    if (h->any) {
        snprintf(out, size, "*");
        return;
    }
    if (h->loopback)
        o += (size_t)snprintf(out, size, "loopback");
    for (size_t i = 0; i < h->n && o < size; i++)
        o += (size_t)snprintf(out + o, size - o, "%s%s", o ? ", " : "", h->v[i]);
}

bool acc_hostport_split(const char *s, size_t len, const char **host, size_t *host_len,
                        unsigned *port)
{
    const char *end = s + len, *colon = NULL;
    *port = 0;
    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close || close == s + 1)
            return false;
        *host = s + 1;
        *host_len = (size_t)(close - s - 1);
        if (close + 1 == end)
            return true;
        if (close[1] != ':')
            return false;
        colon = close + 1;
    } else {
        const char *first = memchr(s, ':', len);
        colon = first && !memchr(first + 1, ':', (size_t)(end - first - 1)) ? first : NULL;
        *host = s;
        *host_len = colon ? (size_t)(colon - s) : len; /* several colons: an address */
        if (*host_len == 0)
            return false;
        if (!colon)
            return true;
    }
    unsigned long p = 0;
    const char *d = colon + 1;
    if (d == end)
        return false;
    for (; d < end; d++) {
        if (*d < '0' || *d > '9' || (p = p * 10 + (unsigned long)(*d - '0')) > 65535)
            return false;
    }
    *port = (unsigned)p;
    return p > 0;
}
