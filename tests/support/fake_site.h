/* SPDX-License-Identifier: Apache-2.0 */
/* fake_site.h - a small site daemon for the remote adapter's tests and
 * benchmark: libmicrohttpd with mutual TLS (lib/tls) on 127.0.0.1, serving
 * one in-process adapter over the adapter protocol (lib/proto), with knobs
 * that make it hang, drop connections or answer faults.  It is not
 * accord-site (no journal, no peers' limits): it is the other end of the
 * wire, as small as the protocol allows. */
#ifndef ACC_FAKE_SITE_H
#define ACC_FAKE_SITE_H

#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"

struct fake_site_cfg {
    const char *name;        /* the site's name in faults and health */
    struct acc_adapter *ad;  /* what it serves (borrowed; thread-safe or serialised) */
    const char *certificate; /* server certificate and key (PEM) */
    const char *key;
    const char *client_ca; /* client certificates must verify against it; NULL: none asked */
    unsigned threads;      /* 0: one thread per connection */
};

enum fake_site_mode {
    FAKE_SITE_NORMAL,
    FAKE_SITE_HANG,  /* requests wait (up to 30 s, or until NORMAL again) and get no answer */
    FAKE_SITE_DROP,  /* the next `count` requests are closed unanswered */
    FAKE_SITE_FAULT, /* every request gets `fault` as a <Fault> */
};

/* What it has seen: requests by operation. */
enum fake_site_op {
    FAKE_OP_HEALTH,
    FAKE_OP_PREVIEW,
    FAKE_OP_RESERVE,
    FAKE_OP_QUERY,
    FAKE_OP_CANCEL,
    FAKE_OP_SUBMIT,
    FAKE_OP_JOB_STATUS,
    FAKE_OP_JOB_CANCEL,
    FAKE_OP_OTHER,
    FAKE_OP__COUNT
};

struct fake_site;

/* Starts it on 127.0.0.1, port chosen by the kernel; NULL on failure
 * (printed). */
struct fake_site *fake_site_start(const struct fake_site_cfg *cfg);
void fake_site_stop(struct fake_site *fs);
uint16_t fake_site_port(const struct fake_site *fs);
/* The user and token of the identity the last preview or reserve named
 * ("": none). */
void fake_site_last_identity(struct fake_site *fs, char *user, size_t user_len, char *token,
                             size_t token_len);

void fake_site_set_mode(struct fake_site *fs, enum fake_site_mode mode, unsigned count,
                        acc_err fault);
/* Requests of op received (also those dropped or hung); connections accepted. */
unsigned fake_site_count(const struct fake_site *fs, enum fake_site_op op);
unsigned fake_site_connections(const struct fake_site *fs);

#endif
