/* SPDX-License-Identifier: Apache-2.0 */
/* error.h - Accord's one error type.
 *
 * Every module returns an acc_err; ACC_OK is zero.  One table (error.c) maps
 * each code to its stable symbolic fault code, its HTTP status and a default
 * text.  Library error codes (SQLite, libxml2, libcurl, libmicrohttpd) are
 * translated at the module boundary and never travel further.
 */
#ifndef ACC_ERROR_H
#define ACC_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef enum acc_err {
    ACC_OK = 0,
    ACC_ERR_NOMEM,             /* out of memory */
    ACC_ERR_INVALID,           /* bad argument or bad input value */
    ACC_ERR_MALFORMED,         /* document is not well-formed */
    ACC_ERR_SCHEMA,            /* document violates the schema */
    ACC_ERR_DTD,               /* document carries a DTD or entity declarations */
    ACC_ERR_TOO_LARGE,         /* body or document over its size limit */
    ACC_ERR_TOO_DEEP,          /* document nests deeper than allowed */
    ACC_ERR_UNKNOWN_SITE,      /* offer names a site that is not configured */
    ACC_ERR_NO_LINK,           /* offer needs a link that is not configured */
    ACC_ERR_CAPACITY,          /* more nodes or bandwidth than a resource has */
    ACC_ERR_NOT_FOUND,         /* unknown id or path */
    ACC_ERR_METHOD,            /* method not allowed on this path */
    ACC_ERR_UNSUPPORTED_MEDIA, /* body of a type we do not take */
    ACC_ERR_UNAUTHORIZED,      /* no or bad credentials */
    ACC_ERR_FORBIDDEN,         /* not the owner */
    ACC_ERR_STATE,             /* operation not allowed in the current state */
    ACC_ERR_NO_SLOT,           /* no common slot before the deadline */
    ACC_ERR_BUSY,              /* adapter: the resource is no longer free (retryable) */
    ACC_ERR_ADAPTER,           /* adapter answered with an error */
    ACC_ERR_UNAVAILABLE,       /* adapter unreachable or down */
    ACC_ERR_TIMEOUT,           /* adapter did not answer in time */
    ACC_ERR_CANCELLED,         /* the operation was stopped (terminate, shutdown) */
    ACC_ERR_INTERRUPTED,       /* a negotiation was cut short by a restart */
    ACC_ERR_UNSUPPORTED,       /* the adapter or server does not do this */
    ACC_ERR_STORAGE,           /* the database failed */
    ACC_ERR_CONFIG,            /* configuration error */
    ACC_ERR_IO,                /* operating system I/O error */
    ACC_ERR_INTERNAL,          /* a bug */
    ACC_ERR_OVERLOADED,        /* the negotiation queue is full: retry later */
    ACC_ERR_KEY_REUSED,        /* an idempotency key sent again with another offer */
    ACC_ERR_TOO_MANY,          /* a client over its connection limit */
    ACC_ERR_REQUEST_TIMEOUT,   /* the request took longer than allowed to arrive */
    ACC_ERR_HEADERS,           /* too many header fields or query parameters */
    ACC_ERR_BAD_REQUEST,       /* a request (not an offer) is malformed */
    ACC_ERR_TOO_MANY_ATTRS,    /* an element or a document carries too many attributes */
    ACC_ERR_PEER_LIMIT,        /* a site daemon: the peer is over the limits the site gives it */
    ACC_ERR_QUOTA,             /* accordd: the user is over a quota ([quota]) */
    ACC_ERR_STORAGE_AWAY,      /* the database server cannot be reached now (retry) */
    ACC_ERR__COUNT
} acc_err;

/* Details of one failure: the code and a human message that names the
 * problem (element and line, site, adapter).  Several lines may be joined
 * with '\n'; renderers show each line as a detail. */
#define ACC_ERROR_MSG_MAX 1024

struct acc_error {
    acc_err code;
    char msg[ACC_ERROR_MSG_MAX];
    /* Seconds after which a retry may succeed (HTTP Retry-After), when the
     * failure knows; 0: no advice.  acc_error_set clears it. */
    int64_t retry_after;
};

/* Stable symbolic name of a code, as used in faults ("NoCommonSlot"). */
const char *acc_err_symbol(acc_err code);

/* The code of a symbolic name (acc_err_symbol's inverse), or ACC_ERR__COUNT
 * when no code has that name (a fault from a newer peer). */
acc_err acc_err_from_symbol(const char *symbol);

/* The HTTP status a code maps to (400, 404, 409, 503, ...). */
int acc_err_http_status(acc_err code);

/* A short default text for a code. */
const char *acc_err_text(acc_err code);

/* Records code and message in *err (err may be NULL) and returns code, so a
 * failure is one line: return acc_error_set(err, ACC_ERR_INVALID, "..."). */
acc_err acc_error_set(struct acc_error *err, acc_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

acc_err acc_error_vset(struct acc_error *err, acc_err code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Appends "\n" + text to the message of an error that is already set. */
void acc_error_append(struct acc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the message with "what: ", keeping the code. */
void acc_error_prefix(struct acc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void acc_error_clear(struct acc_error *err);

/* Copies src into dst (dst may be NULL) and returns src->code. */
acc_err acc_error_copy(struct acc_error *dst, const struct acc_error *src);

#endif
