/* SPDX-License-Identifier: Apache-2.0 */
/* tls_server.c - the server side: a reloadable certificate holder served to
 * libmicrohttpd through MHD_OPTION_HTTPS_CERT_CALLBACK, and client
 * certificates required, verified and admitted during the handshake.
 *
 * Each load makes a "generation" (certificate chain, key, client CA trust
 * list, admission callback).  A reload builds a whole new generation first
 * and swaps the pointer under the lock; the old one is retired, not freed:
 * GnuTLS keeps pointers to the chain and key it was handed for as long as a
 * session lives, and nothing tells us when the sessions of a generation are
 * gone.  Retired generations (a few KB each) are freed with the server.
 *
 * The certificate callback gets only the GnuTLS session; libmicrohttpd puts
 * its connection in the session's pointer, the connection names its daemon
 * (a worker of the thread pool, which shares the master's listening socket)
 * and a process-wide table maps the listening sockets of bound daemons to
 * servers. */
#include "tls_server.h"

#include <gnutls/abstract.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../common/sync.h"
#include "tls_int.h"

#define MAX_CHAIN    8
#define BIND_WAIT_US 2000000
/* TLS 1.2 and 1.3 only, GnuTLS's normal ciphers without the ones that need
 * a MAC of their own: in NORMAL those are the CBC suites with SHA-1 (TLS 1.2's
 * MAC-then-encrypt, the padding oracles), so TLS 1.2 keeps only AEAD suites
 * (AES-GCM, ChaCha20-Poly1305, AES-CCM) and TLS 1.3's, all AEAD, stay as they
 * are.  The server's order wins: a client that lists a weaker suite first
 * gets the strongest both have. */
#define PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-MAC-ALL:+AEAD:%SERVER_PRECEDENCE"

struct generation {
    gnutls_pcert_st pcert[MAX_CHAIN];
    unsigned n_pcert;
    gnutls_privkey_t key;
    gnutls_x509_trust_list_t ca; /* NULL: no client certificates asked for */
    acc_tls_admit_fn *admit;
    void *admit_arg;
    bool optional;
    struct generation *retired; /* the next older retired generation */
};

struct acc_tls_server {
    pthread_mutex_t lock;
    struct generation *cur;
    struct generation *retired;
    char *certificate, *key, *client_ca; /* the paths, for reloads */
    atomic_ulong refused;
};

/* The daemons bound to servers (acc_tls_server_bind). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_once_t once;
    unsigned long seq; /* bindings so far */
    struct {
        int fd; /* the daemon's listening socket */
        unsigned long seq;
        struct acc_tls_server *srv;
    } slot[ACC_TLS_MAX_SERVERS];
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static void reg_init(void)
{
    acc_cond_init_monotonic(&reg.cond);
}

static void generation_free(struct generation *g)
{
    if (!g)
        return;
    for (unsigned i = 0; i < g->n_pcert; i++)
        gnutls_pcert_deinit(&g->pcert[i]);
    if (g->key)
        gnutls_privkey_deinit(g->key);
    if (g->ca)
        gnutls_x509_trust_list_deinit(g->ca, 1);
    free(g);
}

/* GnuTLS's own check that key and certificate belong together (and both
 * parse), with a throw-away credentials structure. */
static acc_err check_pair(const char *crt, const char *key, struct acc_error *err)
{
    gnutls_certificate_credentials_t cred = NULL;
    acc_err rc = ACC_OK;
    int g = gnutls_certificate_allocate_credentials(&cred);
    if (g < 0)
        return acc_error_set(err, ACC_ERR_NOMEM, "TLS credentials: %s", gnutls_strerror(g));
    g = gnutls_certificate_set_x509_key_file2(cred, crt, key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (g < 0)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "certificate %s with key %s: %s", crt, key,
                           gnutls_strerror(g));
    gnutls_certificate_free_credentials(cred);
    return rc;
}

static acc_err load(const struct acc_tls_server *srv, struct generation **out,
                    struct acc_error *err)
{
    gnutls_datum_t crt = {NULL, 0}, key = {NULL, 0};
    acc_err rc = ACC_OK;
    struct generation *g = calloc(1, sizeof *g);
    if (!g)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory loading TLS files");
    rc = check_pair(srv->certificate, srv->key, err);
    if (rc)
        goto out;
    int e = gnutls_load_file(srv->certificate, &crt);
    if (e < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: %s", srv->certificate, gnutls_strerror(e));
        goto out;
    }
    g->n_pcert = MAX_CHAIN;
    e = gnutls_pcert_list_import_x509_raw(g->pcert, &g->n_pcert, &crt, GNUTLS_X509_FMT_PEM, 0);
    if (e < 0) {
        g->n_pcert = 0;
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: %s (at most %d certificates)",
                           srv->certificate, gnutls_strerror(e), MAX_CHAIN);
        goto out;
    }
    e = gnutls_load_file(srv->key, &key);
    if (e >= 0)
        e = gnutls_privkey_init(&g->key);
    if (e >= 0)
        e = gnutls_privkey_import_x509_raw(g->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (e < 0) {
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: %s", srv->key, gnutls_strerror(e));
        goto out;
    }
    if (srv->client_ca) {
        e = gnutls_x509_trust_list_init(&g->ca, 0);
        if (e >= 0)
            e = gnutls_x509_trust_list_add_trust_file(g->ca, srv->client_ca, NULL,
                                                      GNUTLS_X509_FMT_PEM, 0, 0);
        if (e <= 0) {
            rc = acc_error_set(err, ACC_ERR_CONFIG, "client CA %s: %s", srv->client_ca,
                               e < 0 ? gnutls_strerror(e) : "no certificate in it");
            goto out;
        }
    }
out:
    gnutls_free(crt.data);
    if (key.data) {
        gnutls_memset(key.data, 0, key.size);
        gnutls_free(key.data);
    }
    if (rc) {
        generation_free(g);
        g = NULL;
    }
    *out = g;
    return rc;
}

static acc_err set_paths(struct acc_tls_server *srv, const struct acc_tls_server_cfg *cfg,
                         struct acc_error *err)
{
    if (!cfg->certificate || !cfg->certificate[0] || !cfg->key || !cfg->key[0])
        return acc_error_set(err, ACC_ERR_CONFIG, "TLS needs a certificate and a key file");
    srv->certificate = strdup(cfg->certificate);
    srv->key = strdup(cfg->key);
    srv->client_ca = cfg->client_ca && cfg->client_ca[0] ? strdup(cfg->client_ca) : NULL;
    if (!srv->certificate || !srv->key || (cfg->client_ca && cfg->client_ca[0] && !srv->client_ca))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

static void free_paths(struct acc_tls_server *srv)
{
    free(srv->certificate);
    free(srv->key);
    free(srv->client_ca);
    srv->certificate = srv->key = srv->client_ca = NULL;
}

acc_err acc_tls_server_new(const struct acc_tls_server_cfg *cfg, struct acc_tls_server **out,
                           struct acc_error *err)
{
    *out = NULL;
    struct acc_tls_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&srv->lock, NULL);
    acc_err rc = set_paths(srv, cfg, err);
    if (!rc)
        rc = load(srv, &srv->cur, err);
    if (rc) {
        acc_tls_server_free(srv);
        return rc;
    }
    srv->cur->admit = cfg->admit;
    srv->cur->admit_arg = cfg->admit_arg;
    srv->cur->optional = cfg->client_optional;
    *out = srv;
    return ACC_OK;
}

acc_err acc_tls_server_reload(struct acc_tls_server *srv, const struct acc_tls_server_cfg *cfg,
                              struct acc_error *err)
{
    struct acc_tls_server paths = {0};
    struct generation *g = NULL;
    acc_err rc = ACC_OK;
    pthread_mutex_lock(&srv->lock);
    const struct acc_tls_server_cfg same = {srv->certificate,    srv->key,
                                            srv->client_ca,      srv->cur->admit,
                                            srv->cur->admit_arg, srv->cur->optional};
    if (!cfg)
        cfg = &same;
    rc = set_paths(&paths, cfg, err);
    if (!rc)
        rc = load(&paths, &g, err);
    if (rc) {
        free_paths(&paths);
        pthread_mutex_unlock(&srv->lock);
        return rc;
    }
    g->admit = cfg->admit;
    g->admit_arg = cfg->admit_arg;
    g->optional = cfg->client_optional;
    free_paths(srv);
    srv->certificate = paths.certificate;
    srv->key = paths.key;
    srv->client_ca = paths.client_ca;
    srv->cur->retired = srv->retired;
    srv->retired = srv->cur;
    srv->cur = g;
    pthread_mutex_unlock(&srv->lock);
    return ACC_OK;
}

static struct generation *current(struct acc_tls_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    struct generation *g = srv->cur;
    pthread_mutex_unlock(&srv->lock);
    return g;
}

/* The listening socket of a daemon: a connection's daemon is the worker of
 * a thread pool, which shares its master's socket. */
static int listen_fd(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    return di ? di->listen_fd : -1;
}

/* The server of a session's daemon; waits for a bind that is on its way.
 * The newest binding of a socket wins (a stopped daemon's socket number may
 * be reused before its server is freed). */
static struct acc_tls_server *server_of(gnutls_session_t s)
{
    struct MHD_Connection *con = gnutls_session_get_ptr(s);
    const union MHD_ConnectionInfo *ci =
        con ? MHD_get_connection_info(con, MHD_CONNECTION_INFO_DAEMON) : NULL;
    int fd = ci && ci->daemon ? listen_fd(ci->daemon) : -1;
    if (fd < 0)
        return NULL;
    pthread_once(&reg.once, reg_init);
    struct acc_tls_server *srv = NULL;
    struct timespec until = acc_mono_deadline(BIND_WAIT_US);
    pthread_mutex_lock(&reg.lock);
    for (;;) {
        unsigned long newest = 0;
        for (size_t i = 0; i < ACC_TLS_MAX_SERVERS; i++) {
            if (reg.slot[i].srv && reg.slot[i].fd == fd && reg.slot[i].seq > newest) {
                srv = reg.slot[i].srv;
                newest = reg.slot[i].seq;
            }
        }
        if (srv || pthread_cond_timedwait(&reg.cond, &reg.lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&reg.lock);
    return srv;
}

static void client_address(gnutls_session_t s, char *buf, size_t len)
{
    struct MHD_Connection *con = gnutls_session_get_ptr(s);
    const union MHD_ConnectionInfo *ci =
        con ? MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
    snprintf(buf, len, "?");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    socklen_t sl =
        sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(buf, len, "?");
}

/* During the handshake, after the client's Certificate and CertificateVerify:
 * a non-zero answer fails the handshake. */
static int verify_client(gnutls_session_t s)
{
    struct acc_tls_server *srv = server_of(s);
    if (!srv)
        return GNUTLS_E_CERTIFICATE_ERROR;
    struct generation *g = current(srv);
    unsigned n = 0;
    if (g->optional && (!gnutls_certificate_get_peers(s, &n) || n == 0))
        return 0;
    struct acc_tls_peer peer;
    struct acc_error why = {0};
    acc_err rc = acc_tls_verify_client(s, g->ca, &peer, &why);
    if (!rc && g->admit && !g->admit(g->admit_arg, &peer))
        rc = acc_error_set(&why, ACC_ERR_FORBIDDEN, "%s (%s) is not admitted", peer.subject,
                           peer.fingerprint);
    if (rc) {
        char addr[64];
        client_address(s, addr, sizeof addr);
        atomic_fetch_add(&srv->refused, 1);
        acc_log_info("tls: handshake from %s refused: %s", addr, why.msg);
        /* libmicrohttpd closes a failed handshake without a word: tell the
         * client why (best effort, the socket is not blocking). */
        gnutls_alert_send(s, GNUTLS_AL_FATAL,
                          rc == ACC_ERR_FORBIDDEN ? GNUTLS_A_ACCESS_DENIED
                                                  : GNUTLS_A_BAD_CERTIFICATE);
        return GNUTLS_E_CERTIFICATE_ERROR;
    }
    return 0;
}

/* MHD_OPTION_HTTPS_CERT_CALLBACK: the certificate of the current generation;
 * with a client CA, a client certificate is required and verified. */
static int retrieve(gnutls_session_t s, const gnutls_datum_t *req_ca_dn, int n_req,
                    const gnutls_pk_algorithm_t *pk_algos, int n_algos, gnutls_pcert_st **pcert,
                    unsigned int *n_pcert, gnutls_privkey_t *key)
{
    (void)req_ca_dn;
    (void)n_req;
    (void)pk_algos;
    (void)n_algos;
    struct acc_tls_server *srv = server_of(s);
    if (!srv)
        return -1;
    struct generation *g = current(srv);
    if (g->ca) {
        gnutls_certificate_server_set_request(s, g->optional ? GNUTLS_CERT_REQUEST
                                                             : GNUTLS_CERT_REQUIRE);
        gnutls_session_set_verify_function(s, verify_client);
    }
    *pcert = g->pcert;
    *n_pcert = g->n_pcert;
    *key = g->key;
    return 0;
}

unsigned acc_tls_mhd_flags(const struct acc_tls_server *srv)
{
    (void)srv;
    return MHD_USE_TLS;
}

size_t acc_tls_mhd_options(struct acc_tls_server *srv, struct MHD_OptionItem *opts, size_t max)
{
    (void)srv;
    if (max < 2)
        return 0;
    gnutls_certificate_retrieve_function2 *fn = retrieve;
    opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)fn};
    opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)PRIORITIES};
    return 2;
}

acc_err acc_tls_server_bind(struct acc_tls_server *srv, struct MHD_Daemon *daemon,
                            struct acc_error *err)
{
    pthread_once(&reg.once, reg_init);
    int fd = listen_fd(daemon);
    if (fd < 0)
        return acc_error_set(err, ACC_ERR_INVALID, "the daemon has no listening socket");
    acc_err rc = ACC_ERR_TOO_MANY;
    pthread_mutex_lock(&reg.lock);
    for (size_t i = 0; i < ACC_TLS_MAX_SERVERS && rc; i++) {
        if (!reg.slot[i].srv) {
            reg.slot[i].fd = fd;
            reg.slot[i].seq = ++reg.seq;
            reg.slot[i].srv = srv;
            rc = ACC_OK;
        }
    }
    pthread_cond_broadcast(&reg.cond);
    pthread_mutex_unlock(&reg.lock);
    if (rc)
        return acc_error_set(err, rc, "more than %d TLS servers in one process",
                             ACC_TLS_MAX_SERVERS);
    return ACC_OK;
}

void acc_tls_server_free(struct acc_tls_server *srv)
{
    if (!srv)
        return;
    pthread_mutex_lock(&reg.lock);
    for (size_t i = 0; i < ACC_TLS_MAX_SERVERS; i++) {
        if (reg.slot[i].srv == srv)
            reg.slot[i].srv = NULL;
    }
    pthread_mutex_unlock(&reg.lock);
    generation_free(srv->cur);
    for (struct generation *g = srv->retired, *next; g; g = next) {
        next = g->retired;
        generation_free(g);
    }
    free_paths(srv);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

unsigned long acc_tls_server_refused(const struct acc_tls_server *srv)
{
    return atomic_load(&((struct acc_tls_server *)srv)->refused);
}
