/* SPDX-License-Identifier: Apache-2.0 */
/* test_sign_keys.c - the signing key pair: the self-made pair is made once
 * and reused, and refused once others can read it; a configured key others
 * can read draws a warning; a bad [signing] is a clear start-up error, of
 * accordd itself too, that changes nothing.  (The signed documents:
 * test_sign.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsig.h"
#include "fixture.h"
#include "http_client.h"
#include "sign_util.h"
#include "testutil.h"

static void test_embedded_pair_made_once_and_reused(void)
{
    char *db = tmp_path("reuse.db"), *key = tmp_path("accord-signing.key");
    struct fixture fx;
    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    struct stat k1, k2;
    CU_ASSERT_EQUAL_FATAL(stat(key, &k1), 0);
    CU_ASSERT_EQUAL(k1.st_mode & 0777, 0600);
    char *pem1 = strdup(acc_signer_cert_pem(fx.ctx.signer, NULL));
    fixture_stop(&fx);

    CU_ASSERT_EQUAL_FATAL(fixture_start_signed(&fx, NULL, db), 0);
    CU_ASSERT_EQUAL_FATAL(stat(key, &k2), 0);
    CU_ASSERT_EQUAL(k1.st_ino, k2.st_ino);
    CU_ASSERT_EQUAL(k1.st_mtim.tv_sec, k2.st_mtim.tv_sec);
    CU_ASSERT_EQUAL(k1.st_mtim.tv_nsec, k2.st_mtim.tv_nsec);
    CU_ASSERT_STRING_EQUAL(acc_signer_cert_pem(fx.ctx.signer, NULL), pem1);
    free(pem1);
    fixture_stop(&fx);

    /* Half a pair is not silently replaced. */
    CU_ASSERT_EQUAL(unlink(tmp_path("accord-signing.crt")), 0);
    CU_ASSERT_NOT_EQUAL(fixture_start_signed(&fx, NULL, db), 0);
    CU_ASSERT_EQUAL(stat(key, &k2), 0);
    CU_ASSERT_EQUAL(k1.st_ino, k2.st_ino);
}

/* The signer of a configuration text, or its error. */
static acc_err signer_of(const char *ini, struct acc_error *err)
{
    struct acc_config cfg;
    acc_err rc = acc_config_load_string(ini, "test", &cfg, err);
    if (rc)
        return rc;
    struct acc_signer *s = NULL;
    rc = acc_http_signer_open(&cfg, &s, err);
    acc_signer_close(s);
    acc_config_release(&cfg);
    return rc;
}

/* The self-made pair's signer for database db, or its error. */
static acc_err self_made_signer(const char *db, struct acc_error *err)
{
    struct acc_config cfg;
    acc_err rc = acc_config_load_string(sites, "test", &cfg, err);
    if (!rc)
        rc = acc_config_set_db(&cfg, db, err);
    struct acc_signer *s = NULL;
    if (!rc)
        rc = acc_http_signer_open(&cfg, &s, err);
    acc_signer_close(s);
    acc_config_release(&cfg);
    return rc;
}

static void test_bad_signing_configuration(void)
{
    char ini[4096];
    struct acc_error e;
    bool created;
    char *key = tmp_path("cfg.key"), *crt = tmp_path("cfg.crt");
    char *okey = tmp_path("cfg2.key"), *ocrt = tmp_path("cfg2.crt");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, crt, "cfg", &created, NULL));
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(okey, ocrt, "cfg2", &created, NULL));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    ACC_ASSERT_OK(signer_of(ini, &e));

    snprintf(ini, sizeof ini, "[signing]\nkey = /nonexistent/k.pem\ncertificate = %s\n%s", crt,
             sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "/nonexistent/k.pem"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "No such file"));

    /* A certificate where the key should be. */
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", crt, crt, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "not a PEM private key"));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", okey, crt, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "is not the key of certificate"));

    snprintf(ini, sizeof ini, "[signing]\nkey = %s\n%s", key, sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "needs both key and certificate"));

    snprintf(ini, sizeof ini, "[signing]\npassword = x\n%s", sites);
    struct acc_config cfg;
    CU_ASSERT_EQUAL(acc_config_load_string(ini, "test", &cfg, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unknown key 'password'"));

    /* An unreadable key (root reads every mode: a directory instead). */
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", acc_test_tmpdir(), crt,
             sites);
    CU_ASSERT_EQUAL(signer_of(ini, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "signing key"));

    /* A PostgreSQL URL given over the file (accordd --db URL): no pair is
     * made beside it (there is no directory), and it says what is missing. */
    CU_ASSERT_EQUAL(self_made_signer("postgresql:///accord?host=/tmp", &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "needs [signing] key and certificate"));
}

/* The key accordd made for itself, later opened to its group or others:
 * refused, saying the mode and the fix, by the real accordd too; closed
 * again, taken. */
static void test_self_made_key_opened_is_refused(void)
{
    char *dir = tmp_path("opened");
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    char db[512], key[512];
    snprintf(db, sizeof db, "%s/o.db", dir);
    snprintf(key, sizeof key, "%s/accord-signing.key", dir);
    struct acc_error e;
    ACC_ASSERT_OK(self_made_signer(db, &e)); /* made */
    static const mode_t modes[] = {0644, 0640, 0604, 0660};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(chmod(key, modes[i]), 0);
        char want[16];
        snprintf(want, sizeof want, "mode %04o", (unsigned)modes[i]);
        CU_ASSERT_EQUAL(self_made_signer(db, &e), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "chmod 600"));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, key));
    }
    char *ini = tmp_path("opened.ini");
    write_file(ini, sites, strlen(sites));
    /* (timeout: an accordd that took the key would serve until killed) */
    struct run r =
        RUN("timeout", "20", ACCORDD_PATH, "--config", ini, "--db", db, "--listen", "127.0.0.1:0");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mode 0660"));
    free(r.out);
    CU_ASSERT_EQUAL_FATAL(chmod(key, 0600), 0);
    ACC_ASSERT_OK(self_made_signer(db, &e));
    CU_ASSERT_EQUAL_FATAL(chmod(key, 0400), 0); /* read-only for its owner is fine */
    ACC_ASSERT_OK(self_made_signer(db, &e));
}

/* A configured key others can read draws a warning that says so (it is the
 * operator's file: not refused). */
static void test_configured_key_opened_warns(void)
{
    bool created;
    char *key = tmp_path("w.key"), *crt = tmp_path("w.crt"), *log = tmp_path("w.log");
    ACC_ASSERT_OK(acc_dsig_keypair_ensure(key, crt, "w", &created, NULL));
    char ini[4096];
    snprintf(ini, sizeof ini, "[signing]\nkey = %s\ncertificate = %s\n%s", key, crt, sites);
    for (int opened = 0; opened < 2; opened++) {
        CU_ASSERT_EQUAL_FATAL(chmod(key, opened ? 0644 : 0600), 0);
        fflush(stderr);
        int saved = dup(2), fd = open_log(log);
        CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        close(fd);
        struct acc_error e;
        acc_err rc = signer_of(ini, &e);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        ACC_ASSERT_OK(rc);
        size_t n;
        char *text = read_file(log, &n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        if (opened) {
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "warn"));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "mode 0644"));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "chmod 600"));
        } else {
            CU_ASSERT_PTR_NULL(strstr(text, "signing key"));
        }
        free(text);
    }
}

static const struct acc_test_case tests[] = {
    {"the embedded pair is made once and reused", test_embedded_pair_made_once_and_reused},
    {"bad [signing] configuration", test_bad_signing_configuration},
    {"a self-made key opened to others is refused", test_self_made_key_opened_is_refused},
    {"a configured key opened to others draws a warning", test_configured_key_opened_warns},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"sign keys", sign_init, sign_fini, tests},
    {NULL, NULL, NULL, NULL},
};
