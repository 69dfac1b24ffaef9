/* SPDX-License-Identifier: Apache-2.0 */
/* test_tls.c - lib/tls with a real libmicrohttpd server in this process and
 * libcurl clients: admitted client certificates are served; no certificate,
 * one of another CA, an expired, a tampered or an unadmitted one fails the
 * TLS handshake itself (the HTTP handler never runs); a reload serves the
 * new certificate to new connections; the peer's identity; the cipher suites
 * (GnuTLS clients of chosen priorities: no CBC suite with TLS 1.2, the
 * server's order wins).  The PKI is made by tests/support/mkcerts.sh in the
 * test's temporary directory. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "testutil.h"
#include "tls_client.h"
#include "tls_server.h"

static char certs[256];
static atomic_int handled; /* requests the HTTP handler saw */

struct server {
    struct acc_tls_server *tls;
    struct MHD_Daemon *d;
    unsigned port;
};

static const char *cert(const char *name)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", certs, name);
    return p;
}

static char *fp_of(const char *name) /* the fingerprint mkcerts.sh wrote */
{
    char file[64];
    snprintf(file, sizeof file, "%s.fp", name);
    char *s = acc_test_slurp(cert(file), NULL);
    if (s)
        s[strcspn(s, "\n")] = '\0';
    return s;
}

static char alice_fp[ACC_TLS_FP_LEN];

/* Admits CN=accord-main by subject and alice by fingerprint. */
static bool admit(void *arg, const struct acc_tls_peer *peer)
{
    (void)arg;
    return strcmp(peer->subject, "CN=accord-main") == 0 || strcmp(peer->fingerprint, alice_fp) == 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload;
    static int first;
    if (!*con_cls) { /* headers only; answer once the request is whole (keep-alive) */
        *con_cls = &first;
        atomic_fetch_add(&handled, 1);
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    struct acc_tls_peer peer;
    struct acc_error err = {0};
    char body[ACC_ERROR_MSG_MAX + 64];
    if (acc_tls_peer(con, &peer, &err) == ACC_OK)
        snprintf(body, sizeof body, "%s|%s", peer.subject, peer.fingerprint);
    else
        snprintf(body, sizeof body, "anonymous: %s", err.msg);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ok = MHD_queue_response(con, 200, r);
    MHD_destroy_response(r);
    return ok;
}

enum mode { NO_CLIENT_CA, REQUIRED, OPTIONAL };

static void server_start_mode(struct server *s, const char *crt, const char *key, enum mode m)
{
    memset(s, 0, sizeof *s);
    struct acc_tls_server_cfg cfg = {.certificate = cert(crt),
                                     .key = cert(key),
                                     .client_ca = m != NO_CLIENT_CA ? cert("ca.crt") : NULL,
                                     .admit = m == REQUIRED ? admit : NULL,
                                     .client_optional = m == OPTIONAL};
    struct acc_error err = {0};
    CU_ASSERT_EQUAL_FATAL(acc_tls_server_new(&cfg, &s->tls, &err), ACC_OK);
    struct MHD_OptionItem opts[8];
    size_t n = acc_tls_mhd_options(s->tls, opts, 6);
    CU_ASSERT_FATAL(n > 0);
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, 2, NULL};
    opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                                acc_tls_mhd_flags(s->tls),
                            0, NULL, NULL, handler, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->d);
    CU_ASSERT_EQUAL_FATAL(acc_tls_server_bind(s->tls, s->d, &err), ACC_OK);
    s->port = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

static void server_start(struct server *s, const char *crt, const char *key, bool client_ca)
{
    server_start_mode(s, crt, key, client_ca ? REQUIRED : NO_CLIENT_CA);
}

static void server_stop(struct server *s)
{
    MHD_stop_daemon(s->d);
    acc_tls_server_free(s->tls);
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
    acc_buf_append(arg, data, size * n);
    return size * n;
}

struct result {
    CURLcode rc;
    long status;
    char body[ACC_ERROR_MSG_MAX + 64];
    char server_subject[256]; /* of the certificate the server presented */
};

/* One GET with a client certificate NAME (NULL: none), verifying the server
 * against ca; on handle h (NULL: a new one); tls12: at most TLS 1.2. */
static struct result get_v(CURL *h, unsigned port, const char *ca, const char *name, bool tls12)
{
    struct result res = {0};
    char url[64], crt[64], key[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/", port);
    snprintf(crt, sizeof crt, "%s.crt", name ? name : "");
    snprintf(key, sizeof key, "%s.key", name ? name : "");
    CURL *c = h ? h : curl_easy_init();
    struct acc_buf body;
    acc_buf_init(&body);
    struct acc_tls_client tc = {
        .ca = cert(ca), .certificate = name ? cert(crt) : NULL, .key = name ? cert(key) : NULL};
    CU_ASSERT_EQUAL(acc_tls_curl_setup(c, &tc), ACC_OK);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    if (tls12)
        curl_easy_setopt(c, CURLOPT_SSLVERSION,
                         (long)(CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2));
    res.rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
    struct curl_certinfo *ci = NULL;
    if (!res.rc && !curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) && ci && ci->num_of_certs > 0) {
        for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next) {
            if (strncmp(l->data, "Subject:", 8) == 0)
                snprintf(res.server_subject, sizeof res.server_subject, "%s", l->data + 8);
        }
    }
    snprintf(res.body, sizeof res.body, "%.*s", (int)body.len, body.data ? body.data : "");
    acc_buf_release(&body);
    if (!h)
        curl_easy_cleanup(c);
    return res;
}

static struct result get(CURL *h, unsigned port, const char *ca, const char *name)
{
    return get_v(h, port, ca, name, false);
}

/* A refusal in the handshake.  With TLS 1.2 the server checks the client's
 * certificate before its own Finished: curl fails in the handshake (35).
 * With TLS 1.3 the client's side of the handshake ends first, so curl meets
 * the server's alert (56, usually) or the closed connection (52, 55: always
 * for no certificate at all, which GnuTLS refuses without an alert; under
 * load now and then for the others) when it sends its request.  Either way
 * there is no HTTP answer and the handler never runs. */
static void assert_refused(const struct server *s, const char *name)
{
    int before = atomic_load(&handled);
    unsigned long refused = acc_tls_server_refused(s->tls);
    struct result r = get_v(NULL, s->port, "ca.crt", name, true);
    CU_ASSERT_EQUAL(r.rc, CURLE_SSL_CONNECT_ERROR);
    CU_ASSERT_EQUAL(r.status, 0);
    r = get(NULL, s->port, "ca.crt", name);
    CU_ASSERT_TRUE(r.rc == CURLE_RECV_ERROR || r.rc == CURLE_GOT_NOTHING ||
                   r.rc == CURLE_SEND_ERROR || r.rc == CURLE_SSL_CONNECT_ERROR);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(atomic_load(&handled), before);
    /* A client without a certificate is refused by GnuTLS itself (the
     * handshake requires one): the verify function never runs. */
    if (name)
        CU_ASSERT_EQUAL(acc_tls_server_refused(s->tls), refused + 2);
}

static int suite_init(void)
{
    snprintf(certs, sizeof certs, "%s/certs", acc_test_tmpdir());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0)
        return 1;
    char *fp = fp_of("alice");
    if (!fp || !acc_tls_fingerprint_ok(fp, alice_fp)) {
        free(fp);
        return 1;
    }
    free(fp);
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : 1;
}

static int suite_cleanup(void)
{
    curl_global_cleanup();
    return 0;
}

static void test_admitted(void)
{
    struct server s;
    server_start(&s, "site-alpha.crt", "site-alpha.key", true);
    struct result r = get(NULL, s.port, "ca.crt", "accord");
    CU_ASSERT_EQUAL(r.rc, CURLE_OK);
    CU_ASSERT_EQUAL(r.status, 200);
    char *fp = fp_of("accord");
    char want[512];
    snprintf(want, sizeof want, "CN=accord-main|%s", fp ? fp : "?");
    CU_ASSERT_STRING_EQUAL(r.body, want);
    free(fp);
    /* alice is admitted by her fingerprint */
    r = get(NULL, s.port, "ca.crt", "alice");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "CN=alice|"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, alice_fp));
    CU_ASSERT_EQUAL(acc_tls_server_refused(s.tls), 0);
    server_stop(&s);
}

static void test_refused_in_handshake(void)
{
    struct server s;
    server_start(&s, "site-alpha.crt", "site-alpha.key", true);
    assert_refused(&s, NULL);       /* no certificate */
    assert_refused(&s, "stranger"); /* CN=accord-main of another CA */
    assert_refused(&s, "expired");  /* CN=accord-main, expired */
    assert_refused(&s, "tampered"); /* accord.crt with a broken signature */
    assert_refused(&s, "intruder"); /* same CA, not admitted */
    /* the server still serves its admitted peer */
    CU_ASSERT_EQUAL(get(NULL, s.port, "ca.crt", "accord").status, 200);
    server_stop(&s);
}

static void test_client_verifies_server(void)
{
    struct server s;
    server_start(&s, "site-alpha.crt", "site-alpha.key", true);
    int before = atomic_load(&handled);
    /* a client that trusts only the other CA refuses the server */
    struct result r = get(NULL, s.port, "other-ca.crt", "accord");
    CU_ASSERT_EQUAL(r.rc, CURLE_PEER_FAILED_VERIFICATION);
    CU_ASSERT_EQUAL(atomic_load(&handled), before);
    /* a missing CA file is a configuration error before any connection */
    CURL *c = curl_easy_init();
    struct acc_tls_client tc = {.ca = cert("no-such.crt")};
    CU_ASSERT_EQUAL(acc_tls_curl_setup(c, &tc), ACC_ERR_CONFIG);
    curl_easy_cleanup(c);
    server_stop(&s);
}

static void test_reload(void)
{
    struct server s;
    server_start(&s, "server.crt", "server.key", true);
    CURL *kept = curl_easy_init();
    struct result r = get(kept, s.port, "ca.crt", "accord");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.server_subject, "CN = accordd"));
    CU_ASSERT_PTR_NULL(strstr(r.server_subject, "renewed"));

    /* a certificate with another's key: refused, the old pair stays */
    struct acc_tls_server_cfg bad = {.certificate = cert("server2.crt"),
                                     .key = cert("server.key"),
                                     .client_ca = cert("ca.crt"),
                                     .admit = admit};
    struct acc_error err = {0};
    CU_ASSERT_EQUAL(acc_tls_server_reload(s.tls, &bad, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "server2.crt"));
    bad.key = cert("missing.key");
    CU_ASSERT_EQUAL(acc_tls_server_reload(s.tls, &bad, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.key"));
    r = get(NULL, s.port, "ca.crt", "accord");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NULL(strstr(r.server_subject, "renewed"));

    struct acc_tls_server_cfg good = bad;
    good.key = cert("server2.key");
    CU_ASSERT_EQUAL(acc_tls_server_reload(s.tls, &good, &err), ACC_OK);
    r = get(NULL, s.port, "ca.crt", "accord");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.server_subject, "CN = accordd-renewed"));
    /* the kept-alive connection of before still works */
    long reused = -1;
    r = get(kept, s.port, "ca.crt", "accord");
    CU_ASSERT_EQUAL(r.status, 200);
    curl_easy_getinfo(kept, CURLINFO_NUM_CONNECTS, &reused);
    CU_ASSERT_EQUAL(reused, 0); /* no new connection was opened */
    curl_easy_cleanup(kept);
    /* reload with the same paths (as on SIGHUP) */
    CU_ASSERT_EQUAL(acc_tls_server_reload(s.tls, NULL, &err), ACC_OK);
    r = get(NULL, s.port, "ca.crt", "accord");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.server_subject, "CN = accordd-renewed"));
    /* still refuses what it refused */
    assert_refused(&s, "intruder");
    server_stop(&s);
}

static void test_no_client_ca(void)
{
    struct server s;
    server_start(&s, "server.crt", "server.key", false);
    struct result r = get(NULL, s.port, "ca.crt", NULL);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "anonymous"));
    server_stop(&s);
}

/* accordd's way: a client certificate is optional, one that is sent must
 * verify; without an admission callback every verified one is served. */
static void test_optional(void)
{
    struct server s;
    server_start_mode(&s, "server.crt", "server.key", OPTIONAL);
    struct result r = get(NULL, s.port, "ca.crt", NULL);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "anonymous"));
    r = get(NULL, s.port, "ca.crt", "intruder");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "CN=intruder|"));
    int before = atomic_load(&handled);
    r = get_v(NULL, s.port, "ca.crt", "stranger", true);
    CU_ASSERT_EQUAL(r.rc, CURLE_SSL_CONNECT_ERROR);
    r = get_v(NULL, s.port, "ca.crt", "expired", true);
    CU_ASSERT_EQUAL(r.rc, CURLE_SSL_CONNECT_ERROR);
    CU_ASSERT_EQUAL(atomic_load(&handled), before);
    CU_ASSERT_EQUAL(acc_tls_server_refused(s.tls), 2);
    server_stop(&s);
}

static void test_bad_files(void)
{
    struct acc_tls_server *t = NULL;
    struct acc_error err = {0};
    struct acc_tls_server_cfg cfg = {.certificate = cert("server.crt"), .key = NULL};
    CU_ASSERT_EQUAL(acc_tls_server_new(&cfg, &t, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(t);
    cfg.key = cert("server.key");
    cfg.client_ca = cert("server.key"); /* not a certificate */
    CU_ASSERT_EQUAL(acc_tls_server_new(&cfg, &t, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "client CA"));
    CU_ASSERT_PTR_NULL(t);
    acc_tls_server_free(NULL);
}

static void test_identity(void)
{
    struct acc_tls_peer p;
    struct acc_error err = {0};
    ACC_ASSERT_OK(acc_tls_file_identity(cert("intruder.crt"), &p, &err));
    CU_ASSERT_STRING_EQUAL(p.subject, "CN=intruder");
    char *fp = fp_of("intruder");
    CU_ASSERT_STRING_EQUAL(p.fingerprint, fp ? fp : "?");
    free(fp);
    CU_ASSERT_EQUAL(acc_tls_file_identity(cert("nothing.crt"), &p, &err), ACC_ERR_CONFIG);

    char norm[ACC_TLS_FP_LEN];
    char lower[ACC_TLS_FP_LEN];
    snprintf(lower, sizeof lower, "sha256:%s", alice_fp + 7);
    for (char *c = lower; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    CU_ASSERT_TRUE(acc_tls_fingerprint_ok(lower, norm));
    CU_ASSERT_STRING_EQUAL(norm, alice_fp);
    CU_ASSERT_FALSE(acc_tls_fingerprint_ok("SHA256:AB:CD", NULL));
    CU_ASSERT_FALSE(acc_tls_fingerprint_ok("SHA1:AB", NULL));
    lower[10] = 'g';
    CU_ASSERT_FALSE(acc_tls_fingerprint_ok(lower, NULL));
}

/* A TLS handshake with the server on port by a GnuTLS client of the given
 * priorities (the certificate is not checked: only the suite counts);
 * GnuTLS's code, and into suite the name of the suite agreed on. */
static int handshake(unsigned port, const char *priorities, char *suite, size_t size)
{
    snprintf(suite, size, "%s", "");
    gnutls_certificate_credentials_t cred = NULL;
    gnutls_session_t s = NULL;
    int rc = gnutls_certificate_allocate_credentials(&cred);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rc < 0 || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        rc = GNUTLS_E_PUSH_ERROR;
        goto out;
    }
    if ((rc = gnutls_init(&s, GNUTLS_CLIENT)) < 0 ||
        (rc = gnutls_priority_set_direct(s, priorities, NULL)) < 0 ||
        (rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred)) < 0)
        goto out;
    gnutls_transport_set_int(s, fd);
    gnutls_handshake_set_timeout(s, 10000);
    do
        rc = gnutls_handshake(s);
    while (rc < 0 && !gnutls_error_is_fatal(rc));
    if (rc >= 0) {
        snprintf(suite, size, "%s %s", gnutls_protocol_get_name(gnutls_protocol_get_version(s)),
                 gnutls_cipher_get_name(gnutls_cipher_get(s)));
        gnutls_bye(s, GNUTLS_SHUT_WR);
    }
out:
    if (s)
        gnutls_deinit(s);
    if (fd >= 0)
        close(fd);
    gnutls_certificate_free_credentials(cred);
    return rc;
}

#define TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:-MAC-ALL"

/* The suites every TLS server of Accord takes: with TLS 1.2 AEAD only (not
 * the CBC ones with SHA-1 that GnuTLS's NORMAL has), TLS 1.3's all; among
 * those a client offers, the server's first choice. */
static void test_cipher_suites(void)
{
    struct server s;
    server_start(&s, "server.crt", "server.key", false);
    char suite[96];
    /* CBC with SHA-1 alone: no suite in common, the handshake fails. */
    CU_ASSERT_TRUE(
        handshake(s.port, TLS12 ":+AES-128-CBC:+AES-256-CBC:+SHA1", suite, sizeof suite) < 0);
    CU_ASSERT_TRUE(handshake(s.port, TLS12 ":+AES-128-CBC:+SHA1", suite, sizeof suite) < 0);
    /* AES-GCM and ChaCha20-Poly1305 are served... */
    CU_ASSERT_EQUAL(handshake(s.port, TLS12 ":+AES-128-GCM:+AEAD", suite, sizeof suite), 0);
    CU_ASSERT_STRING_EQUAL(suite, "TLS1.2 AES-128-GCM");
    CU_ASSERT_EQUAL(handshake(s.port, TLS12 ":+CHACHA20-POLY1305:+AEAD", suite, sizeof suite), 0);
    CU_ASSERT_STRING_EQUAL(suite, "TLS1.2 CHACHA20-POLY1305");
    /* ... in the server's order, whatever the client's (it prefers
     * AES-128-GCM; the server, AES-256-GCM), with CBC offered too. */
    CU_ASSERT_EQUAL(handshake(s.port,
                              TLS12 ":+AES-128-GCM:+CHACHA20-POLY1305:+AES-256-GCM:+AES-128-CBC:"
                                    "+AEAD:+SHA1",
                              suite, sizeof suite),
                    0);
    CU_ASSERT_STRING_EQUAL(suite, "TLS1.2 AES-256-GCM");
    /* TLS 1.3's suites as before, the CCM one too. */
    CU_ASSERT_EQUAL(handshake(s.port, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-CCM",
                              suite, sizeof suite),
                    0);
    CU_ASSERT_STRING_EQUAL(suite, "TLS1.3 AES-128-CCM");
    CU_ASSERT_EQUAL(handshake(s.port,
                              "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305:"
                              "+AES-256-GCM",
                              suite, sizeof suite),
                    0);
    CU_ASSERT_STRING_EQUAL(suite, "TLS1.3 AES-256-GCM");
    /* and the clients of the project (libcurl) still connect */
    CU_ASSERT_EQUAL(get_v(NULL, s.port, "ca.crt", NULL, true).status, 200);
    CU_ASSERT_EQUAL(get(NULL, s.port, "ca.crt", NULL).status, 200);
    server_stop(&s);
}

static const struct acc_test_case tests[] = {
    {"admitted", test_admitted},
    {"refused_in_handshake", test_refused_in_handshake},
    {"client_verifies_server", test_client_verifies_server},
    {"reload", test_reload},
    {"no_client_ca", test_no_client_ca},
    {"optional", test_optional},
    {"bad_files", test_bad_files},
    {"identity", test_identity},
    {"cipher_suites", test_cipher_suites},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"tls", suite_init, suite_cleanup, tests},
    {NULL, NULL, NULL, NULL},
};
