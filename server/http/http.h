/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the HTTP API (SPEC section 3) on lib/httpd.
 *
 * A route table {method, path pattern, handler} in the manner of GNU Taler's
 * exchange: lib/httpd does the shared work (connection and body bounds, the
 * request deadline, 404 vs 405) before a handler runs; handlers take a
 * parsed request and fill a response, and never call libmicrohttpd, so
 * tests call them directly through acc_http_dispatch.  Every error goes
 * through acc_reply_error: an XML co:Fault, or JSON when the client asks
 * for it.
 */
#ifndef ACC_HTTP_H
#define ACC_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"
#include "../../lib/common/hostname.h"
#include "../../lib/common/kv.h"
#include "../../lib/httpd/httpd.h"
#include "../../lib/model/identity.h"
#include "../service/service.h"
#include "../xml/xml.h"

struct acc_signer;
struct acc_jwt_cache;

/* What handlers share: the one server context. */
struct acc_http_ctx {
    struct acc_service *svc;
    /* The keys of the [issuer]s' tokens (lib/jwt), for every request and
     * every configuration generation; NULL: tokens of issuers are refused
     * (tests that call handlers directly). */
    struct acc_jwt_cache *jwt;
    /* Signs every wsag:Agreement the server issues (h_signing.c); NULL:
     * documents go out unsigned (tests of other things). */
    struct acc_signer *signer;
    struct acc_xml_limits limits;
    atomic_uint_least64_t status_class[6]; /* requests answered, by status / 100 */
    /* The front end serving the API (its connection counters), once
     * started; NULL before and in tests that call handlers directly. */
    struct acc_httpd *_Atomic httpd;
    /* The names the server answers to ([server] names), once started
     * (acc_http_start); not ready in tests that call handlers directly. */
    struct acc_hostnames names;
    bool names_ready;
};

#define ACC_HTTP_MAX_PARAMS ACC_HTTPD_MAX_PARAMS
/* Most query parameters [server] max_query may allow. */
#define ACC_HTTP_MAX_QUERY ACC_HTTPD_MAX_QUERY

struct acc_request {
    const char *method;
    const char *path;
    const char *params[ACC_HTTP_MAX_PARAMS]; /* {captures} of the route, in order */
    const char *body;
    size_t body_len;
    const struct acc_kv *query;
    size_t n_query;
    const char *content_type;
    const char *idempotency_key;
    const char *authorization; /* the Authorization header */
    const char *if_none_match; /* the If-None-Match header (the page's files) */
    const char *host;          /* the Host header; NULL: none (not over HTTP/1.1) */
    const char *origin;        /* the Origin header (browsers); NULL: none */
    /* The client certificate's identity (HTTPS with [auth] client_ca, when
     * the client sent one; it verified in the handshake); NULL otherwise. */
    const char *peer_subject;
    const char *peer_fingerprint;
    /* The client's IP address (lib/httpd's); NULL when unknown (tests
     * that call handlers directly).  Without [auth] quotas count by it. */
    const char *address;
    /* Who asks, when [auth] is configured (set by the router); NULL without.
     * It points into users, the configuration's generation that the router
     * took for this request (config.h: acc_config_live), given back with
     * acc_http_request_done once the request has its answer. */
    const struct acc_user *user;
    const struct acc_config *users;
    /* A user of a token of an [issuer] is not in the users' table: the
     * router makes this one for the request (user points to it), named by
     * the issuer's map lines; its name is freed by acc_http_request_done. */
    struct acc_user token_user;
    /* What the token's scopes allow, bit 1 << ACC_OP_*, when by_token. */
    bool by_token;
    unsigned token_ops;
    /* Who asks, for every authenticated user (lib/model/identity.h): a
     * token's issuer, subject, groups and the token itself; a client
     * certificate's subject DN; a static token's user alone.  Released by
     * acc_http_request_done. */
    struct acc_identity identity;
    bool json; /* the client accepts application/json rather than XML */
    /* Set by acc_http_route: 1 + the route's class, an index into
     * acc_http_route_classes (lib/httpd's request-duration histogram); 0:
     * no route (a refusal before routing, a path of none). */
    int route_class;
    char param_buf[512]; /* storage for params */
};

struct acc_http_ctx;
struct acc_request;
struct acc_response;
typedef void (*acc_handler)(struct acc_http_ctx *ctx, const struct acc_request *rq,
                            struct acc_response *rs);

struct acc_response {
    int status;
    const char *content_type;
    struct acc_buf body;
    char location[128];
    char allow[64];
    bool replayed;
    char retry_after[24]; /* Retry-After (a 503's or 429's, from the error's hint); "": the
                           * server's default */
    bool challenge;       /* add WWW-Authenticate (401) */
    /* Its value when the refusal says why (RFC 6750: error,
     * error_description); "": Bearer realm="accord" alone. */
    char www_authenticate[400];
    /* A handler's own headers (the page's: h_ui.c); names and values
     * static, or in etag. */
    struct {
        const char *name, *value;
    } header[5];
    size_t n_header;
    char etag[24];
    bool close; /* end the connection after the answer */
    /* A handler that must wait for a negotiation sets wait (a reference,
     * released with the response) and finish: the server parks the
     * request, holding no thread, and calls finish once the job is done. */
    struct acc_nego *wait;
    acc_handler finish;
    char id[ACC_ID_LEN + 1]; /* for finish: the agreement concerned */
};

void acc_response_init(struct acc_response *rs);
void acc_response_release(struct acc_response *rs);

/* Whether a browser could have sent the request on behalf of another site
 * (origin.c): a Host that is not one of the server's names, or a request
 * that changes something from a page of another origin; false after a 403
 * that says which. */
bool acc_http_origin_ok(const struct acc_http_ctx *ctx, const struct acc_request *rq,
                        struct acc_response *rs);
/* Both checks a request passes before it is routed: acc_http_origin_ok,
 * then acc_http_authenticate. */
bool acc_http_admit(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs);
/* Gives back what acc_http_admit took for the request (its users). */
void acc_http_request_done(struct acc_http_ctx *ctx, struct acc_request *rq);
/* Who asks, when [auth] or an [issuer] is configured: a client
 * certificate that names a user, else a bearer token (rq->user): a static
 * token of [auth], or a JWT of an [issuer] (tokens.c); false after a 401
 * (with the challenge saying why), a 403 (the token names no user here)
 * or a 503 (the issuer's keys cannot be fetched now).  /healthz, /certificate and the page (/ui/)
 * are anyone's. */
bool acc_http_authenticate(struct acc_http_ctx *ctx, struct acc_request *rq,
                           struct acc_response *rs);
/* tokens.c: the user of a bearer token that looks like a JWT, when an
 * [issuer] is configured (rq->user, rq->identity, the operations its
 * scopes allow); false with the refusal set. */
bool acc_http_token_user(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs,
                         const char *token);
/* The identity of a user of [auth] (user, and a certificate's subject). */
bool acc_http_identity_of(struct acc_request *rq, struct acc_response *rs);
/* A 401 or 403 that says why, in the body and in WWW-Authenticate
 * (RFC 6750: error, scope when given, error_description). */
void acc_http_refuse(const struct acc_request *rq, struct acc_response *rs, acc_err code,
                     const char *error, const char *scope, const char *msg);
/* Frees what the token's user and the identity hold. */
void acc_http_token_release(struct acc_request *rq);
/* Routes the request (filling rq->params) and runs its handler; 404 or 405
 * when none fits, 403 for a route of admins (and, to a user of the
 * metrics role, for every route but GET /metrics), 415 for a request that
 * changes something with a body of a type that is not the route's (an XML
 * document: application/xml, text/xml or a +xml type; a route that reads
 * no body takes XML or JSON) or of no type.
 * The response may be left
 * waiting (rs->wait): then acc_http_finish completes it once the job is
 * done. */
void acc_http_route(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs);
/* The route classes, NULL-terminated: agreements, negotiations, sites,
 * templates, admin (adapter controls, backup), ui, metrics, health
 * (/healthz, /certificate). */
extern const char *const acc_http_route_classes[];
void acc_http_finish(struct acc_http_ctx *ctx, const struct acc_request *rq,
                     struct acc_response *rs);
/* All three, blocking while the job runs (for tests and fuzzing). */
void acc_http_dispatch(struct acc_http_ctx *ctx, struct acc_request *rq, struct acc_response *rs);

/* The shared replies. */
void acc_reply_error(const struct acc_request *rq, struct acc_response *rs, acc_err code,
                     const char *msg, const char *agreement_id);
void acc_reply_err(const struct acc_request *rq, struct acc_response *rs,
                   const struct acc_error *err, const char *agreement_id);
/* A query parameter that does not parse: 400 InvalidRequest with err's
 * message (whatever code the parser gave). */
void acc_reply_query_err(const struct acc_request *rq, struct acc_response *rs,
                         const struct acc_error *err);
/* A document the handler rendered into rs->body. */
void acc_reply_doc(const struct acc_request *rq, struct acc_response *rs, int status);
void acc_reply_text(struct acc_response *rs, int status, const char *content_type);

/* Whether the requester may see and act on an agreement of this initiator:
 * always without [auth], otherwise its owner or an admin.  When not, the
 * reply is set to 404, as for an unknown id, so that ids and owners cannot
 * be probed. */
bool acc_http_owner_ok(const struct acc_request *rq, struct acc_response *rs, const char *initiator,
                       const char *id);

/* Whether the requester may act in the name of initiator (an offer's, a
 * list filter's): the same user or an admin; 403 otherwise. */
bool acc_http_acts_for(const struct acc_request *rq, struct acc_response *rs,
                       const char *initiator);
/* The offer's identity from the request's (acc_http_acts_for passed):
 * the requester's own when the offer is in its name, only the initiator's
 * name when an administrator acts for another; false (an answer in rs)
 * when memory runs out. */
struct acc_offer;
bool acc_http_offer_identity(const struct acc_request *rq, struct acc_response *rs,
                             struct acc_offer *offer);

/* A query parameter, or NULL. */
const char *acc_query(const struct acc_request *rq, const char *key);

/* The handlers, one file per resource. */
void acc_h_agreement_create(struct acc_http_ctx *, const struct acc_request *,
                            struct acc_response *);
void acc_h_agreement_list(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_agreement_get(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_agreement_state(struct acc_http_ctx *, const struct acc_request *,
                           struct acc_response *);
void acc_h_agreement_trace(struct acc_http_ctx *, const struct acc_request *,
                           struct acc_response *);
void acc_h_agreement_terminate(struct acc_http_ctx *, const struct acc_request *,
                               struct acc_response *);
void acc_h_agreement_modify(struct acc_http_ctx *, const struct acc_request *,
                            struct acc_response *);
/* ?version=N (N >= 1) into *version (0 without it); false after a 400. */
bool acc_http_version_param(const struct acc_request *rq, struct acc_response *rs,
                            unsigned *version);
void acc_h_agreement_launch(struct acc_http_ctx *, const struct acc_request *,
                            struct acc_response *);
void acc_h_agreement_launch_file(struct acc_http_ctx *, const struct acc_request *,
                                 struct acc_response *);
void acc_h_quote_create(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_quote_get(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_quote_release(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_sites(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_site(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_site_preview(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_adapter_control(struct acc_http_ctx *, const struct acc_request *,
                           struct acc_response *);
void acc_h_templates(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_template(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_certificate(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_healthz(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_metrics(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
void acc_h_admin_backup(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);
/* The web page (h_ui.c): GET /ui/ and /ui/{file}, anyone's (it holds no
 * data; every call it makes carries the user's credentials). */
void acc_h_ui(struct acc_http_ctx *, const struct acc_request *, struct acc_response *);

/* The one place an agreement document is made (h_signing.c): the XML
 * renderer's wsag:Agreement, signed with ctx->signer when there is one:
 * with the signature kept in a->signature when it is still that of the
 * document; a new one of the current version is kept with the agreement
 * (acc_service_keep_signature). */
acc_err acc_http_agreement_xml(struct acc_http_ctx *ctx, const struct acc_agreement *a,
                               struct acc_buf *out, struct acc_error *err);
/* Whether that document can be made and signed for a (the service's check
 * before a commit, acc_service_options.precommit; arg is the
 * struct acc_http_ctx): rendered as it will be read back and signed, the
 * signature set in a->signature, to be stored with the commit.
 * Without a signer it checks nothing: the renderer alone fails on nothing
 * an offer can hold (its strings are made valid XML; the offer it copies
 * was read under the same rules when it came). */
acc_err acc_http_agreement_check(void *arg, struct acc_agreement *a, struct acc_error *err);

/* The signer of a configuration: [signing] key and certificate, or without
 * them a self-signed pair beside the database (accord-signing.key, 0600,
 * and accord-signing.crt), made at the first start and reused.  A missing
 * or unreadable configured file, or only one of the two configured, is
 * ACC_ERR_CONFIG.  acc_dsig_init() must have been called. */
acc_err acc_http_signer_open(const struct acc_config *cfg, struct acc_signer **out,
                             struct acc_error *err);

/* Whether an Accept header asks for JSON rather than XML (server.c): its
 * media ranges with their q values (RFC 9110 12.5.1), each type taking
 * the q of the most specific range that covers it (by name:
 * application/json; application/xml, text/xml or a +xml type; then by its
 * top-level type; then any type).  JSON when its q is higher, or equal
 * (not 0) and named more specifically or earlier; XML otherwise, also
 * without an Accept or when neither is acceptable. */
bool acc_http_wants_json(const char *accept);

/* ------------------------------------------------------------ the server */

/* accordd on lib/httpd (server.c): its routes, authentication and faults. */

struct acc_http_server;

struct acc_http_options {
    const char *host;
    unsigned port; /* 0: any free port */
    unsigned threads;
    unsigned connection_limit;
    unsigned client_connections;  /* per client address */
    unsigned pending_connections; /* per address, before a whole request head */
    unsigned header_timeout;      /* seconds for a new connection's first head */
    unsigned timeout;             /* seconds idle */
    unsigned request_timeout;     /* seconds for a whole request to arrive */
    unsigned max_query;           /* query parameters */
    size_t max_body;
    size_t max_unsent, client_unsent; /* answer bytes held until read */
    const char *names;                /* [server] names; NULL: the default */
    bool access_log;                  /* a line per request at info level */
    const char *certificate;          /* HTTPS: certificate and key files; NULL: plain HTTP */
    const char *key;
    const char *client_ca; /* client certificates asked for (optional), verified against it */
};

/* The offer limits of a configuration's [server] section. */
struct acc_xml_limits acc_http_limits_of(const struct acc_config *cfg);
/* The options of a configuration's [server] section. */
struct acc_http_options acc_http_options_of(const struct acc_config *cfg);

acc_err acc_http_start(struct acc_http_ctx *ctx, const struct acc_http_options *opt,
                       struct acc_http_server **out, struct acc_error *err);
/* HTTPS: reads the certificate, key and client CA files again; new
 * connections get them, open ones keep theirs.  On failure the server keeps
 * the old ones and *err says why.  ACC_ERR_INVALID on a plain HTTP server. */
acc_err acc_http_reload_tls(struct acc_http_server *srv, struct acc_error *err);
/* The port actually bound (useful with port 0). */
unsigned acc_http_port(const struct acc_http_server *srv);
/* Shutdown, first step: accept no new connections (each is closed at once,
 * before a byte is read; the listening socket closes with acc_http_stop). */
void acc_http_quiesce(struct acc_http_server *srv);
/* Answers the requests that were parked (after acc_service_shutdown ended
 * their jobs; waits at most a second for them), then stops. */
void acc_http_stop(struct acc_http_server *srv);

#endif
