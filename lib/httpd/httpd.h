/* SPDX-License-Identifier: Apache-2.0 */
/* httpd.h - the one HTTP front end of accordd and accord-site, over
 * libmicrohttpd.
 *
 * The layer does the work every request shares, in this order, before any
 * of the daemon's code sees it:
 *
 *   connection  the total connection limit, at which the connection idle
 *               the longest (kept alive, waiting for its next request) is
 *               closed to make room, a new one refused only when none is
 *               idle; per client address at most
 *               pending_connections that have not yet sent a whole request
 *               head (TLS handshake and headers): one beyond is closed as it
 *               is accepted, before a byte is read; each must finish its head
 *               within header_timeout of being accepted (a deadline, however
 *               slowly the bytes come), and a kept-alive one its next head
 *               within timeout of its last answer, or it is closed; per
 *               client address at most client_connections in all (the
 *               request on one beyond is 429, closed)
 *   headers     %00 in the target (400); at most max_query query parameters
 *               (431); Content-Length headers that disagree (400, closed);
 *               a declared body over the cap (413 before a byte is read,
 *               closed)
 *   auth        the daemon's hook: who asks, from the head alone (a
 *               refusal is the daemon's own answer, sent once the body is
 *               read and dropped); a principal it names is held to its own
 *               bound on open connections, counted once per connection as
 *               its first head is whole (429 at once, closed)
 *   body        read whole by request_timeout from the head, or the
 *               connection is closed then (a deadline, however slowly the
 *               bytes come); a body over max_body is read to its end and
 *               dropped, then 413 (closed), so that a client still sending
 *               over TLS reads the answer; a chunked one far over it (see
 *               drain_max) is cut off; one still arriving at the request
 *               deadline is cut off, one whole but late is 408 (closed)
 *   media       a body of a type not in body_types is 415
 *   handle      the daemon's hook answers, or later: the request is parked
 *               (suspended, holding no thread) until acc_httpd_resume, then
 *               the finish hook answers
 *   answer      held until the client has read it (one per connection at a
 *               time: libmicrohttpd reads no next request before); the bytes
 *               held for all clients, and for each client address, are
 *               bounded (max_unsent, client_unsent): an answer that would
 *               pass a bound while others are held is 503 instead, and a
 *               client that already holds its share (or any, while all
 *               clients' fill max_unsent) is 503 before its answer is made
 *
 * Every fault the layer makes is rendered by the daemon's fault hook (a
 * co:Fault, JSON or the protocol's <Fault>).  Routing is the daemon's, with
 * acc_httpd_match below over its own table: hooks and handlers never see
 * libmicrohttpd, so tests call them directly.  HTTPS is lib/tls's
 * (tls_server.h): reloadable certificates, client certificates checked in
 * the handshake; the layer gives each request the client certificate's
 * identity, read once per connection. */
#ifndef ACC_HTTPD_H
#define ACC_HTTPD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/error.h"
#include "../common/kv.h"

struct acc_tls_peer;
struct acc_tls_server_cfg;

/* Most captures of a route pattern. */
#define ACC_HTTPD_MAX_PARAMS 3
/* Most query parameters any request may carry (max_query may allow fewer). */
#define ACC_HTTPD_MAX_QUERY 256
/* libmicrohttpd's memory per connection (request line, headers, query):
 * room for ACC_HTTPD_MAX_QUERY parameters, so that the count is answered by
 * a fault rather than a dropped connection. */
#define ACC_HTTPD_CONNECTION_MEMORY (64 * 1024)
/* Every answer carries X-Content-Type-Options: nosniff and, unless the
 * daemon sets a Content-Security-Policy of its own (a web page's files),
 * this one, under which a browser that opens an answer runs nothing, loads
 * nothing and treats it as a sandboxed origin of its own.  An HTTPS answer
 * also carries this Strict-Transport-Security. */
#define ACC_HTTPD_CSP_NONE "default-src 'none'; frame-ancestors 'none'; sandbox"
#define ACC_HTTPD_HSTS     "max-age=31536000"
/* Headers a reply may add to the ones the layer sets. */
#define ACC_HTTPD_MAX_HEADERS 6
/* Route classes a daemon may name (acc_httpd_options.route_classes),
 * "other" not included. */
#define ACC_HTTPD_MAX_CLASSES 15

/* ------------------------------------------------------------------ routes */

/* The start of every entry of a daemon's route table; the rest of the
 * entry (its handler, who may call it) is the daemon's own type. */
struct acc_httpd_route {
    const char *method;
    const char *pattern; /* "/agreements/{}/state": "{}" captures one segment */
};

/* A route table in qsort's manner: n entries of size bytes each, each
 * starting with a struct acc_httpd_route. */
struct acc_httpd_table {
    const void *routes;
    size_t n, size;
    /* Whether a segment may be captured (NULL: any non-empty one); a path
     * whose capture it refuses fits no route of that pattern. */
    bool (*param_ok)(const char *segment);
};

#define ACC_HTTPD_TABLE(t, ok)                            \
    {                                                     \
        (t), sizeof(t) / sizeof(t)[0], sizeof(t)[0], (ok) \
    }

struct acc_httpd_match {
    const char *params[ACC_HTTPD_MAX_PARAMS]; /* the captures, in order */
    char allow[64];                           /* 405: the path's methods, "GET, DELETE" */
};

/* The entry of t that fits method and path; the captures are copied into
 * buf (NUL-separated) and pointed to by m->params.  HEAD is GET; a trailing
 * slash names the same resource.  NULL when none fits: err is NotFound, or
 * MethodNotAllowed when the path has other methods (m->allow lists them,
 * for the Allow header). */
const void *acc_httpd_match(const struct acc_httpd_table *t, const char *method, const char *path,
                            char *buf, size_t size, struct acc_httpd_match *m,
                            struct acc_error *err);

/* --------------------------------------------------------------- exchanges */

/* A request as the hooks see it: its head for auth (body "", body_len 0),
 * whole for handle and finish. */
struct acc_httpd_request {
    const char *method;
    const char *path; /* decoded, without the query */
    const char *body; /* "" without one */
    size_t body_len;
    const struct acc_kv *query;
    size_t n_query;
    /* The client certificate, verified in the handshake; NULL: none. */
    const struct acc_tls_peer *peer;
    /* The client's IP address as text ("192.0.2.7", "2001:db8::7"); NULL
     * when unknown. */
    const char *address;
};

/* A header of the request (the first of that name), or NULL. */
const char *acc_httpd_header(const struct acc_httpd_request *rq, const char *name);
/* The front end serving the request (for its figures: acc_httpd_metrics). */
struct acc_httpd *acc_httpd_of(const struct acc_httpd_request *rq);

struct acc_httpd_reply {
    int status;
    const char *content_type; /* NULL: no body type */
    struct acc_buf body;
    char allow[64]; /* the Allow header (405): acc_httpd_match's */
    /* The daemon's own headers (Location ...); the strings must outlive the
     * hook: static ones, or in the request's state. */
    struct {
        const char *name, *value;
    } header[ACC_HTTPD_MAX_HEADERS];
    size_t n_header;
    bool close; /* end the connection after the answer */
    /* Set by handle: the answer comes later.  The daemon has arranged for
     * acc_httpd_resume(state) once it can be made; finish then makes it. */
    bool later;
};

/* Adds a header to the reply (dropped beyond ACC_HTTPD_MAX_HEADERS). */
void acc_httpd_reply_header(struct acc_httpd_reply *rs, const char *name, const char *value);

/* Who asks, as the auth hook names it: a principal held to its own bound on
 * open connections, counted by name (so that a reload that changes the
 * bounds neither forgets nor doubles the connections already open). */
struct acc_httpd_who {
    char name[64];        /* "": nobody to count */
    unsigned connections; /* the most it may hold open */
};

/* A daemon's hooks.  app is the daemon's, given to acc_httpd_start; state is
 * the request's own state_size bytes, zeroed at its start and handed to
 * release at its end.  Every hook runs on one of the layer's threads. */
struct acc_httpd_ops {
    size_t state_size;
    /* The request's head is in and within the layer's bounds: who asks.
     * False refuses it, with the answer in rs (sent once the body, if any,
     * has been read and dropped).  NULL: anyone may ask. */
    bool (*auth)(void *app, const struct acc_httpd_request *rq, void *state,
                 struct acc_httpd_who *who, struct acc_httpd_reply *rs);
    /* The answer, or rs->later. */
    void (*handle)(void *app, const struct acc_httpd_request *rq, void *state,
                   struct acc_httpd_reply *rs);
    /* After acc_httpd_resume: the answer (NULL when handle never defers). */
    void (*finish)(void *app, const struct acc_httpd_request *rq, void *state,
                   struct acc_httpd_reply *rs);
    /* A fault the layer answers: rs->status is set; fills the body and its
     * type.  rq has no body yet when the fault comes before it. */
    void (*fault)(void *app, const struct acc_httpd_request *rq, const struct acc_error *err,
                  struct acc_httpd_reply *rs);
    /* The request is over (answered, or its connection gone); may be NULL. */
    void (*release)(void *app, void *state);
};

/* Wakes a parked request (any thread, once): its finish hook runs next. */
void acc_httpd_resume(void *state);

/* Who the request is from, for the access log (the auth hook names the
 * user it found; at most 63 bytes are kept).  Never a credential. */
void acc_httpd_set_user(void *state, const char *name);

/* Which of the daemon's route classes (acc_httpd_options.route_classes,
 * by index) the request is, for the request-duration histogram; an index
 * past the list is ignored.  A request never classed (a fault of the layer,
 * a refusal before routing, a path of no route) counts as "other". */
void acc_httpd_set_route_class(void *state, unsigned index);

/* ------------------------------------------------------------------ server */

struct acc_httpd_options {
    const char *host;
    unsigned port; /* 0: any free port */
    unsigned threads;
    unsigned connection_limit;
    unsigned client_connections; /* per client address; 0: no bound */
    /* Per client address: connections still in their TLS handshake or
     * their first request's headers; 0: no bound. */
    unsigned pending_connections;
    /* Seconds a new connection has to send its whole first request head
     * (handshake included); 0: no deadline but the idle timeout. */
    unsigned header_timeout;
    unsigned timeout;         /* seconds a connection may idle, and a kept-alive one
                               * has for its next request head */
    unsigned request_timeout; /* seconds for a whole request to arrive; 0: none */
    /* Bytes of answers held until their clients read them: in all, and per
     * client address (with client_connections only); 0: no bound.  An
     * answer that would pass one while others are held is refused (503);
     * one alone always goes, however large. */
    size_t max_unsent, client_unsent;
    unsigned max_query; /* query parameters; 0: no bound but ACC_HTTPD_MAX_QUERY */
    size_t max_body;
    /* A body declared up to drain_max (over max_body) is read and dropped
     * before its 413; one declared larger is refused before a byte is read.
     * A chunked body (no length declared) is read and dropped up to
     * drain_max, or without one up to max_body + 1 MiB, and cut off (the
     * connection closed) past it.  0: max_body. */
    size_t drain_max;
    /* The Content-Types (prefixes, any case) a body may have; NULL: any. */
    const char *const *body_types;
    const struct acc_tls_server_cfg *tls; /* HTTPS; NULL: plain HTTP */
    /* libmicrohttpd's own messages at debug level rather than warn even
     * while the daemon starts (once it serves they always are: they are
     * about single connections). */
    bool quiet;
    /* Answers counted by status / 100 (6 counters); NULL: not counted. */
    atomic_uint_least64_t *status_class;
    /* One info line per request as it ends (the access log):
     *   access: ADDRESS USER "METHOD PATH" STATUS MS ms
     * the path without its query, USER the auth hook's (or "-"), STATUS
     * "-" when the connection ended before an answer. */
    bool access_log;
    /* The daemon's route classes (NULL-terminated, at most
     * ACC_HTTPD_MAX_CLASSES; NULL: none): each answered request's duration,
     * as the access log measures it, is counted in the histogram
     * accord_http_request_duration_seconds{route} of its class
     * (acc_httpd_set_route_class), or of "other".  The names must outlive
     * the server (static ones). */
    const char *const *route_classes;
};

struct acc_httpd;

acc_err acc_httpd_start(const struct acc_httpd_options *opt, const struct acc_httpd_ops *ops,
                        void *app, struct acc_httpd **out, struct acc_error *err);
/* What the connection bounds did since the start. */
struct acc_httpd_stats {
    uint64_t refused;        /* closed at accept: over pending_connections */
    uint64_t expired;        /* closed without a whole request head by its deadline */
    uint64_t evicted;        /* idle ones closed to make room at connection_limit */
    uint64_t full;           /* closed at accept: connection_limit, none idle */
    uint64_t cut;            /* closed with a body still arriving at request_timeout */
    uint64_t unsent_refused; /* answers refused (503): max_unsent, client_unsent */
    unsigned waiting;        /* connections open now that wait for a request head */
    unsigned receiving;      /* connections open now that wait for the rest of a body */
    unsigned open;           /* connections open now */
    size_t unsent;           /* answer bytes held now, not yet read by their clients */
};

void acc_httpd_stats(struct acc_httpd *d, struct acc_httpd_stats *out);
/* Answers sent since the start with status code (100 to 599; 0 otherwise). */
uint64_t acc_httpd_answers(struct acc_httpd *d, unsigned code);
/* The front end's figures in Prometheus' text format, appended to out:
 * accord_http_requests_total{code} (each code answered at least once), the
 * histogram accord_http_request_duration_seconds{route} (every class, and
 * "other") and the connection bounds' counters (acc_httpd_stats). */
void acc_httpd_metrics(struct acc_httpd *d, struct acc_buf *out);

/* The port actually bound (useful with port 0). */
unsigned acc_httpd_port(const struct acc_httpd *d);
/* HTTPS: reads the certificate files again (cfg NULL: the same ones; else
 * cfg's, which also replaces the admission callback).  New connections get
 * them, open ones keep theirs; on failure the old ones stay and *err says
 * why.  ACC_ERR_INVALID on a plain HTTP server. */
acc_err acc_httpd_reload_tls(struct acc_httpd *d, const struct acc_tls_server_cfg *cfg,
                             struct acc_error *err);
/* Shutdown, first step: accept no new connections (each is closed at once,
 * before a byte is read; the listening socket closes with acc_httpd_stop). */
void acc_httpd_quiesce(struct acc_httpd *d);
/* Waits (at most a second) for parked requests to be answered, then stops.
 * NULL does nothing. */
void acc_httpd_stop(struct acc_httpd *d);

#endif
