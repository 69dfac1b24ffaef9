/* SPDX-License-Identifier: Apache-2.0 */
/* client.h - one HTTP exchange with accordd (libcurl).
 *
 * The client side of the API, kept apart as curl keeps lib/ from src/:
 * accordctl sends every request through it, and so do the tests
 * (tests/support/http_client.c), so the libcurl code exists once.  It knows
 * nothing of Accord's documents: a method, a URL, headers and a body go
 * out, a status, a body and the headers Accord's clients look at come back. */
#ifndef ACC_CLIENT_H
#define ACC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

/* A reply larger than this is not from accordd: the exchange fails. */
#define ACC_CLIENT_MAX_REPLY (64u << 20)
/* Room for acc_client_do's reason. */
#define ACC_CLIENT_ERROR_SIZE 256

struct acc_client_request {
    const char *method;         /* "GET", "POST", ...; "HEAD" reads no body */
    const char *url;            /* the whole URL, http or https */
    const char *body;           /* len bytes sent when not NULL, else no body */
    size_t len;                 /* of body */
    const char *const *headers; /* "Name: value" lines, NULL-terminated, or NULL */
    long timeout;               /* seconds for the whole exchange; 0: 60 */
    /* HTTPS (lib/tls): the CA the server must verify against (NULL: the
     * system's), a client certificate and its key (NULL: none). */
    const char *cacert;
    const char *cert;
    const char *key;
};

struct acc_client_reply {
    long status;
    char *body; /* NUL-terminated (the body itself may hold NULs: see len) */
    size_t len;
    char location[256];     /* Location, or "" */
    char content_type[128]; /* Content-Type, or "" */
    bool replayed;          /* Idempotent-Replayed: true */
};

/* Once per program, before any thread starts (libcurl's global state);
 * returns -1 when libcurl cannot start.  A program that skips it gets the
 * same from its first exchange, which is not safe with threads. */
int acc_client_init(void);
void acc_client_cleanup(void);

/* One exchange.  Returns 0 when the server answered (with any status), and
 * -1 when it did not (no connection, timeout, a reply over
 * ACC_CLIENT_MAX_REPLY, out of memory) with the reason in err (err_size
 * bytes; err may be NULL).  *out is set either way: free it with
 * acc_client_reply_free. */
int acc_client_do(const struct acc_client_request *rq, struct acc_client_reply *out, char *err,
                  size_t err_size);
void acc_client_reply_free(struct acc_client_reply *r);

#endif
