/* SPDX-License-Identifier: Apache-2.0 */
/* test_https.c - the real accordd binary over HTTPS: an offer posted with
 * curl --cacert, client certificates mapped to users (owners of their
 * agreements), bearer tokens unchanged, foreign certificates refused in the
 * handshake, and SIGHUP: new certificate files are served to new
 * connections while the daemon keeps serving (a failed reload keeps the old
 * ones).  The PKI comes from tests/support/mkcerts.sh in a temporary
 * directory, removed at exit; accordd is stopped even when a test fails. */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "daemon.h"
#include "testutil.h"
#include "tls_client.h"

#define BOB_TOKEN "bob-token-0123456789abcdef"

static char certs[256], live_crt[320], live_key[320], base[128];
static pid_t pid = -1;

static const char *cert(const char *name)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", certs, name);
    return p;
}

static bool copy(const char *from, const char *to)
{
    size_t len = 0;
    char *data = acc_test_slurp(from, &len);
    FILE *f = data ? fopen(to, "w") : NULL;
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(data);
    return ok;
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static void stop_daemon(void)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        pid = -1;
    }
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
    acc_buf_append(arg, data, size * n);
    return size * n;
}

struct reply {
    CURLcode rc;
    long status;
    long connects; /* new connections this request opened */
    char body[4096];
    char location[256];
    char server_subject[256];
};

static size_t header(char *data, size_t size, size_t n, void *arg)
{
    struct reply *r = arg;
    size_t len = size * n;
    if (len > 10 && strncasecmp(data, "Location: ", 10) == 0)
        snprintf(r->location, sizeof r->location, "%.*s", (int)strcspn(data + 10, "\r\n"),
                 data + 10);
    return len;
}

/* One request; client certificate NAME (NULL: none), token (NULL: none);
 * on handle h (NULL: a fresh one); tls12: at most TLS 1.2. */
static struct reply call(CURL *h, const char *method, const char *path, const char *body,
                         const char *name, const char *token, bool tls12)
{
    struct reply r = {0};
    char url[512], crt[64], key[64], auth[128];
    snprintf(url, sizeof url, "%s%s", base, path);
    snprintf(crt, sizeof crt, "%s.crt", name ? name : "");
    snprintf(key, sizeof key, "%s.key", name ? name : "");
    CURL *c = h ? h : curl_easy_init();
    struct acc_buf out;
    acc_buf_init(&out);
    struct acc_tls_client tc = {.ca = cert("ca.crt"),
                                .certificate = name ? cert(crt) : NULL,
                                .key = name ? cert(key) : NULL};
    CU_ASSERT_EQUAL(acc_tls_curl_setup(c, &tc), ACC_OK);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/xml");
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        hdr = curl_slist_append(hdr, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    curl_easy_setopt(c, CURLOPT_SSLVERSION,
                     tls12 ? (long)(CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2)
                           : (long)CURL_SSLVERSION_TLSv1_2);
    r.rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r.connects);
    struct curl_certinfo *ci = NULL;
    if (!r.rc && r.connects && !curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) && ci &&
        ci->num_of_certs > 0) {
        for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next) {
            if (strncmp(l->data, "Subject:", 8) == 0)
                snprintf(r.server_subject, sizeof r.server_subject, "%s", l->data + 8);
        }
    }
    snprintf(r.body, sizeof r.body, "%.*s", (int)out.len, out.data ? out.data : "");
    acc_buf_release(&out);
    curl_slist_free_all(hdr);
    if (!h)
        curl_easy_cleanup(c);
    return r;
}

/* daemon_offer with another initiator. */
static char *offer_for(const char *who)
{
    const char *at = strstr(daemon_offer, "tester");
    if (!at)
        return NULL;
    size_t len = strlen(daemon_offer) + strlen(who) + 1;
    char *o = malloc(len);
    if (o)
        snprintf(o, len, "%.*s%s%s", (int)(at - daemon_offer), daemon_offer, who, at + 6);
    return o;
}

static int suite_init(void)
{
    const char *tmp = acc_test_tmpdir();
    snprintf(certs, sizeof certs, "%s/certs", tmp);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s", ACC_SOURCE_DIR, certs);
    if (system(cmd) != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    snprintf(live_crt, sizeof live_crt, "%s/live.crt", tmp);
    snprintf(live_key, sizeof live_key, "%s/live.key", tmp);
    char users[320], tokens[320], ini[320], db[320], text[2048];
    snprintf(users, sizeof users, "%s/client-certs", tmp);
    snprintf(tokens, sizeof tokens, "%s/tokens", tmp);
    snprintf(ini, sizeof ini, "%s/https.ini", tmp);
    snprintf(db, sizeof db, "%s/https.db", tmp);
    char *ops_fp = acc_test_slurp(cert("accord.fp"), NULL);
    if (!ops_fp)
        return 1;
    ops_fp[strcspn(ops_fp, "\n")] = '\0';
    snprintf(text, sizeof text,
             "# user SUBJECT-or-SHA256:FINGERPRINT [admin]\n"
             "alice CN=alice\n"
             "ops %s admin\n",
             ops_fp);
    free(ops_fp);
    bool ok = copy(cert("server.crt"), live_crt) && copy(cert("server.key"), live_key) &&
              write_file(users, text) && write_file(tokens, "bob " BOB_TOKEN "\n");
    snprintf(text, sizeof text,
             "[server]\ncertificate = %s\nkey = %s\n"
             "[auth]\ntokens = %s\nclient_ca = %s\nclient_certificates = %s\n"
             "[site alpha]\nadapter = sim-batch\nnodes = 16\n"
             "[site beta]\nadapter = sim-batch\nnodes = 16\n"
             "[network net]\nadapter = sim-network\n"
             "[link alpha_beta]\nsites = alpha beta\ncapacity = 1000\nnetwork = net\n",
             live_crt, live_key, tokens, cert("ca.crt"), users);
    ok = ok && write_file(ini, text);
    if (!ok)
        return 1;
    atexit(stop_daemon);
    pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    return pid > 0 && strncmp(base, "https://", 8) == 0 ? 0 : 1;
}

static int suite_cleanup(void)
{
    stop_daemon();
    curl_global_cleanup();
    return 0;
}

static void test_users(void)
{
    char *offer = offer_for("alice");
    CU_ASSERT_PTR_NOT_NULL_FATAL(offer);
    struct reply r = call(NULL, "POST", "/agreements", offer, "alice", NULL, false);
    free(offer);
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "alice"));
    const char *id = strrchr(r.location, '/');
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    char path[128];
    snprintf(path, sizeof path, "/agreements%s", id);
    /* alice owns it; bob (token) does not see it; ops (admin by fingerprint) does */
    CU_ASSERT_EQUAL(call(NULL, "GET", path, NULL, "alice", NULL, false).status, 200);
    CU_ASSERT_EQUAL(call(NULL, "GET", path, NULL, NULL, BOB_TOKEN, false).status, 404);
    CU_ASSERT_EQUAL(call(NULL, "GET", path, NULL, "accord", NULL, false).status, 200);
    /* bob posts as bob with his token, as before HTTPS */
    offer = offer_for("bob");
    r = call(NULL, "POST", "/agreements", offer, NULL, BOB_TOKEN, false);
    free(offer);
    CU_ASSERT_EQUAL(r.status, 201);
    /* alice may not act for bob */
    offer = offer_for("bob");
    CU_ASSERT_EQUAL(call(NULL, "POST", "/agreements", offer, "alice", NULL, false).status, 403);
    free(offer);
    /* no credentials; a verified certificate that names no user (a token
     * is still needed, and works) */
    CU_ASSERT_EQUAL(call(NULL, "GET", "/sites", NULL, NULL, NULL, false).status, 401);
    CU_ASSERT_EQUAL(call(NULL, "GET", "/sites", NULL, "intruder", NULL, false).status, 401);
    CU_ASSERT_EQUAL(call(NULL, "GET", "/sites", NULL, "intruder", BOB_TOKEN, false).status, 200);
    /* admin paths: ops yes, alice no */
    CU_ASSERT_EQUAL(call(NULL, "GET", "/metrics", NULL, "accord", NULL, false).status, 200);
    CU_ASSERT_EQUAL(call(NULL, "GET", "/metrics", NULL, "alice", NULL, false).status, 403);
}

static void test_refused(void)
{
    /* other CA, expired, tampered: the handshake fails (TLS 1.2: before the
     * server's Finished, curl 35); no HTTP status */
    const char *bad[] = {"stranger", "expired", "tampered"};
    for (size_t i = 0; i < 3; i++) {
        struct reply r = call(NULL, "GET", "/healthz", NULL, bad[i], NULL, true);
        CU_ASSERT_EQUAL(r.rc, CURLE_SSL_CONNECT_ERROR);
        CU_ASSERT_EQUAL(r.status, 0);
        r = call(NULL, "GET", "/healthz", NULL, bad[i], BOB_TOKEN, false);
        CU_ASSERT_NOT_EQUAL(r.rc, CURLE_OK);
        CU_ASSERT_EQUAL(r.status, 0);
    }
    /* plain HTTP on the HTTPS port gets no HTTP answer */
    char url[160];
    snprintf(url, sizeof url, "http://%s/healthz", base + 8);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    long status = -1;
    curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    CU_ASSERT_EQUAL(status, 0);
    curl_easy_cleanup(c);
}

/* The curl command line, as docs/api.md shows it. */
static void test_curl_cli(void)
{
    char cmd[1024], out[320];
    snprintf(out, sizeof out, "%s/curl.out", acc_test_tmpdir());
    snprintf(cmd, sizeof cmd,
             "curl -s -o %s -w '%%{http_code}' --cacert %s -H 'Authorization: Bearer %s' "
             "%s/sites > %s.code",
             out, cert("ca.crt"), BOB_TOKEN, base, out);
    CU_ASSERT_EQUAL(system(cmd), 0);
    char code_file[340];
    snprintf(code_file, sizeof code_file, "%s.code", out);
    char *code = acc_test_slurp(code_file, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(code);
    CU_ASSERT_STRING_EQUAL(code, "200");
    free(code);
    /* without --cacert, curl does not trust the server */
    snprintf(cmd, sizeof cmd, "curl -s -o /dev/null %s/healthz", base);
    int st = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 60);
}

/* accordctl --cacert --cert --key, and the same from the environment. */
static void test_accordctl(void)
{
    char cmd[1536];
    snprintf(cmd, sizeof cmd,
             "%s --server %s --cacert %s --cert %s --key %s --json sites > /dev/null",
             ACCORDCTL_PATH, base, cert("ca.crt"), cert("alice.crt"), cert("alice.key"));
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "ACCORD_URL=%s ACCORD_CACERT=%s ACCORD_TOKEN=%s %s --json sites > /dev/null", base,
             cert("ca.crt"), BOB_TOKEN, ACCORDCTL_PATH);
    CU_ASSERT_EQUAL(system(cmd), 0);
    /* a certificate that names no user and no token: 7, not allowed */
    snprintf(cmd, sizeof cmd,
             "%s --server %s --cacert %s --cert %s --key %s sites > /dev/null 2>&1", ACCORDCTL_PATH,
             base, cert("ca.crt"), cert("intruder.crt"), cert("intruder.key"));
    int st = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    /* without the CA: the server is not trusted, no answer (6) */
    snprintf(cmd, sizeof cmd, "%s --server %s --token %s sites > /dev/null 2>&1", ACCORDCTL_PATH,
             base, BOB_TOKEN);
    st = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 6);
}

/* A new connection's server certificate subject, waiting (5 s at most) for
 * it to contain want. */
static bool serves(const char *want)
{
    for (int i = 0; i < 50; i++) {
        struct reply r = call(NULL, "GET", "/healthz", NULL, NULL, NULL, false);
        if (r.status == 200 && strstr(r.server_subject, want))
            return true;
        usleep(100000);
    }
    return false;
}

static void test_sighup(void)
{
    CURL *kept = curl_easy_init();
    struct reply r = call(kept, "GET", "/sites", NULL, "alice", NULL, false);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.server_subject, "CN = accordd"));
    CU_ASSERT_PTR_NULL(strstr(r.server_subject, "renewed"));

    CU_ASSERT_FATAL(copy(cert("server2.crt"), live_crt) && copy(cert("server2.key"), live_key));
    CU_ASSERT_EQUAL(kill(pid, SIGHUP), 0);
    CU_ASSERT_TRUE(serves("CN = accordd-renewed"));
    /* the connection opened before the reload still serves, without a new
     * handshake */
    r = call(kept, "GET", "/sites", NULL, "alice", NULL, false);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(r.connects, 0);
    curl_easy_cleanup(kept);

    /* a key that does not match: the reload fails, the renewed pair stays */
    CU_ASSERT_FATAL(copy(cert("server.key"), live_key));
    CU_ASSERT_EQUAL(kill(pid, SIGHUP), 0);
    usleep(300000);
    CU_ASSERT_EQUAL(waitpid(pid, NULL, WNOHANG), 0); /* still running */
    CU_ASSERT_TRUE(serves("CN = accordd-renewed"));
    r = call(NULL, "GET", "/sites", NULL, "alice", NULL, false);
    CU_ASSERT_EQUAL(r.status, 200);

    /* back to the first pair */
    CU_ASSERT_FATAL(copy(cert("server.crt"), live_crt));
    CU_ASSERT_EQUAL(kill(pid, SIGHUP), 0);
    usleep(200000);
    bool back = false;
    for (int i = 0; i < 50 && !back; i++, usleep(100000)) {
        r = call(NULL, "GET", "/healthz", NULL, NULL, NULL, false);
        back = r.status == 200 && strstr(r.server_subject, "CN = accordd") &&
               !strstr(r.server_subject, "renewed");
    }
    CU_ASSERT_TRUE(back);
}

static const struct acc_test_case tests[] = {
    {"client certificates are users, tokens still work", test_users},
    {"foreign, expired, tampered certificates fail the handshake", test_refused},
    {"curl --cacert", test_curl_cli},
    {"accordctl --cacert --cert --key", test_accordctl},
    {"SIGHUP serves new certificate files to new connections", test_sighup},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"https", suite_init, suite_cleanup, tests},
    {NULL, NULL, NULL, NULL},
};
