/* SPDX-License-Identifier: Apache-2.0 */
/* tls_server.h - TLS for libmicrohttpd (GnuTLS) servers: accord-site and
 * accordd's HTTPS API (tls_client.h is the client side).  An acc_tls_server holds
 * the server's certificate and key and, optionally, the CA that client
 * certificates must verify against.  libmicrohttpd gets them through
 * MHD_OPTION_HTTPS_CERT_CALLBACK, so acc_tls_server_reload (SIGHUP) swaps them
 * under a lock without restarting the daemon: new connections get the new
 * certificate, open ones keep theirs.  A reload that fails (a missing file, a
 * key that does not match its certificate, an unreadable CA) changes nothing
 * and says why.
 *
 * With a client CA every handshake REQUIRES (client_optional: asks for) a
 * client certificate that
 * verifies against that CA (signature, validity dates, key purpose when the
 * certificate names one); with an admission callback the verified peer must
 * also be admitted by its subject DN or its SHA-256 fingerprint.  Anything
 * else fails the TLS handshake itself: no HTTP request is ever read from an
 * unverified or unadmitted peer.  After the handshake acc_tls_peer gives the
 * peer's identity, for per-peer limits or users.
 *
 * Use (errors and cleanup left out):
 *
 *     struct acc_tls_server_cfg cfg = {.certificate = "site.crt", .key = "site.key",
 *                                      .client_ca = "ca.crt", .admit = my_admit,
 *                                      .admit_arg = peers};
 *     struct acc_tls_server *tls;
 *     acc_tls_server_new(&cfg, &tls, &err);
 *     struct MHD_OptionItem opts[16];
 *     size_t n = acc_tls_mhd_options(tls, opts, 16 - 3);  // leaves room for others
 *     opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, 4, NULL};
 *     opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
 *     struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
 *         MHD_USE_EPOLL | acc_tls_mhd_flags(tls), port, NULL, NULL, handler, cls,
 *         MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
 *     acc_tls_server_bind(tls, d);      // at once, before anything else
 *     ...
 *     // in the access handler: struct acc_tls_peer peer; acc_tls_peer(con, &peer, &err)
 *     // on SIGHUP: acc_tls_server_reload(tls, NULL, &err) (logs nothing itself)
 *     ...
 *     MHD_stop_daemon(d);
 *     acc_tls_server_free(tls);         // after the daemon is stopped
 *
 * MHD's certificate callback carries no user pointer, so a server finds its
 * holder through a small process-wide table of bound daemons
 * (acc_tls_server_bind).  A handshake that starts in the instant between
 * MHD_start_daemon and acc_tls_server_bind waits (at most 2 s) for the bind.
 * At most ACC_TLS_MAX_SERVERS servers are bound at once in a process.
 *
 * Files are PEM.  Keys are EC or RSA, unencrypted (a daemon has nobody to
 * ask for a passphrase); tests/support/mkcerts.sh makes a test set.
 */
#ifndef ACC_TLS_SERVER_H
#define ACC_TLS_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "../common/error.h"

#define ACC_TLS_MAX_SERVERS 16
/* "SHA256:" and 32 hex pairs joined by ':' */
#define ACC_TLS_FP_LEN (7 + 32 * 3)

/* Who is at the other end of a connection, from its verified certificate. */
struct acc_tls_peer {
    char subject[512];                /* RFC 4514 DN, e.g. "CN=accord-main,O=HLRS" */
    char fingerprint[ACC_TLS_FP_LEN]; /* "SHA256:AB:CD:..." (upper-case hex) */
};

/* Decides, during the handshake, whether a peer whose certificate verified
 * against the client CA is admitted.  Called from libmicrohttpd's threads,
 * concurrently: it must be thread-safe (and quick). */
typedef bool acc_tls_admit_fn(void *arg, const struct acc_tls_peer *peer);

struct acc_tls_server_cfg {
    const char *certificate; /* the server's certificate (chain) file; required */
    const char *key;         /* its private key; required */
    const char *client_ca;   /* CA file client certificates must verify against;
                              * NULL: no client certificate is asked for */
    acc_tls_admit_fn *admit; /* NULL: every certificate of client_ca is admitted */
    void *admit_arg;
    bool client_optional; /* a client may send no certificate (accordd: bearer tokens
                           * still work); one it sends must still verify and be admitted */
};

struct acc_tls_server;

/* Loads the files of cfg (copied: the paths are remembered for reloads).
 * ACC_ERR_CONFIG naming the file and the reason when one cannot be used. */
acc_err acc_tls_server_new(const struct acc_tls_server_cfg *cfg, struct acc_tls_server **out,
                           struct acc_error *err);

/* Reads the files again (cfg NULL: the same paths; otherwise cfg's, which
 * also replaces the admission callback) and swaps them in for every new
 * handshake.  On failure the server keeps what it had, *err says why. */
acc_err acc_tls_server_reload(struct acc_tls_server *srv, const struct acc_tls_server_cfg *cfg,
                              struct acc_error *err);

/* The flags to OR into MHD_start_daemon's flags (MHD_USE_TLS). */
unsigned acc_tls_mhd_flags(const struct acc_tls_server *srv);

/* Writes the libmicrohttpd options that serve srv (the certificate callback,
 * TLS 1.2+ priorities) into opts and returns how many it wrote, at most max;
 * 0 when max is too small.  It does NOT write MHD_OPTION_END. */
size_t acc_tls_mhd_options(struct acc_tls_server *srv, struct MHD_OptionItem *opts, size_t max);

/* Ties srv to the daemon started with its options; call it right after
 * MHD_start_daemon.  ACC_ERR_TOO_MANY when ACC_TLS_MAX_SERVERS are bound. */
acc_err acc_tls_server_bind(struct acc_tls_server *srv, struct MHD_Daemon *daemon,
                            struct acc_error *err);

/* Unbinds and frees; call it after MHD_stop_daemon.  NULL does nothing. */
void acc_tls_server_free(struct acc_tls_server *srv);

/* How many handshakes srv refused (no, unverifiable or unadmitted client
 * certificate), for logs and tests. */
unsigned long acc_tls_server_refused(const struct acc_tls_server *srv);

/* The identity of the client certificate of a TLS connection, after its
 * handshake.  ACC_ERR_UNAUTHORIZED when the connection carries none (plain
 * HTTP, or a server without a client CA whose client sent none). */
acc_err acc_tls_peer(struct MHD_Connection *con, struct acc_tls_peer *out, struct acc_error *err);

/* The SHA-256 fingerprint and subject of a PEM certificate file (tools,
 * tests, configuration checks). */
acc_err acc_tls_file_identity(const char *path, struct acc_tls_peer *out, struct acc_error *err);

/* Whether s is a well-formed fingerprint "SHA256:" + 32 hex pairs joined by
 * ':' (either case); norm (ACC_TLS_FP_LEN bytes, may be NULL) gets it in
 * upper case, as acc_tls_peer gives it. */
bool acc_tls_fingerprint_ok(const char *s, char *norm);

#endif
