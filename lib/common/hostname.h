/* SPDX-License-Identifier: Apache-2.0 */
/* hostname.h - the names a server answers to, and the host and port of a
 * Host header or an Origin.
 *
 * A browser sends a page's requests with a Host header that names the host
 * in the address bar.  A page of another site that makes its own name
 * resolve to 127.0.0.1 (DNS rebinding) reaches a loopback server under
 * that other name: a server that answers only to its own names is out of
 * its reach.  The names are written "a.example.org, 10.0.0.5" ("*": any);
 * by default a server answers to loopback (localhost, 127.0.0.0/8, ::1)
 * and its listen address, or, when it listens on every address, to the
 * host's own name and the addresses of its interfaces as they were at the
 * start. */
#ifndef ACC_HOSTNAME_H
#define ACC_HOSTNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Longest name kept (a DNS name is at most 253 characters). */
#define ACC_HOSTNAME_MAX 255
/* Most names a list may hold. */
#define ACC_HOSTNAMES_MAX 64

struct acc_hostnames {
    char **v; /* lower case, without brackets or a final dot */
    size_t n;
    bool any;      /* "*" */
    bool loopback; /* every loopback address and localhost */
};

/* Whether list is a valid list of names: 1 to ACC_HOSTNAMES_MAX, separated
 * by commas or blanks, each a host name or an address (IPv6 with or
 * without brackets), or "*" alone; err says why not. */
bool acc_hostnames_ok(const char *list, struct acc_error *err);

/* The names of list (NULL: the default for a server listening on
 * listen_host, as above) into out, which acc_hostnames_release frees. */
acc_err acc_hostnames_init(struct acc_hostnames *out, const char *list, const char *listen_host,
                           struct acc_error *err);
void acc_hostnames_release(struct acc_hostnames *h);

/* Whether host (len bytes, as acc_hostport_split gives it) is one of them. */
bool acc_hostnames_has(const struct acc_hostnames *h, const char *host, size_t len);

/* The names, "a, b, c" (at most size bytes; "*" for any; "loopback" for the
 * loopback ones), for messages. */
void acc_hostnames_say(const struct acc_hostnames *h, char *out, size_t size);

/* Splits "host", "host:port", "[v6]" or "[v6]:port" into the host (a
 * pointer into s and its length, without brackets) and the port (0 when
 * none is written).  False when it is none of these. */
bool acc_hostport_split(const char *s, size_t len, const char **host, size_t *host_len,
                        unsigned *port);

#endif
