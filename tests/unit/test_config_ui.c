/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_ui.c - [ui]: the OpenID Connect provider the web page signs
 * in against, and the page's Content-Security-Policy built from it
 * (server/config/config_ui.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "testutil.h"

#define SITE "[site a]\nadapter = sim-batch\nnodes = 1\n"

static const char csp_self[] = "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data: blob:; connect-src 'self'; object-src "
                               "'none'; base-uri 'none'; form-action 'none'; frame-ancestors "
                               "'none'";

/* Without [ui]: no provider, and the page connects to its own origin only. */
static void test_no_ui(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string(SITE, "t", &c, &err));
    CU_ASSERT_PTR_NULL(c.ui.oidc_issuer);
    CU_ASSERT_PTR_NULL(c.ui.oidc_client_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.ui.csp);
    CU_ASSERT_STRING_EQUAL(c.ui.csp, csp_self);
    acc_config_release(&c);
}

/* An issuer: its origin (not its path) joins connect-src, and nothing else
 * does; the scope defaults to openid; the redirect stays unset (the page
 * uses its own /ui/ URL). */
static void test_issuer(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[ui]\noidc_issuer = https://id.example.org:8443/realms/"
                                         "hpc\noidc_client_id = accord-ui\n" SITE,
                                         "t", &c, &err));
    CU_ASSERT_STRING_EQUAL(c.ui.oidc_issuer, "https://id.example.org:8443/realms/hpc");
    CU_ASSERT_STRING_EQUAL(c.ui.oidc_client_id, "accord-ui");
    CU_ASSERT_STRING_EQUAL(c.ui.oidc_scope, "openid");
    CU_ASSERT_PTR_NULL(c.ui.oidc_redirect);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.ui.csp);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(c.ui.csp, "; connect-src 'self' https://id.example.org:8443; object-src 'none'"));
    CU_ASSERT_PTR_NULL(strstr(c.ui.csp, "realms"));
    acc_config_release(&c);

    /* http on loopback (a test's provider), an IPv6 one, every key */
    ACC_ASSERT_OK(acc_config_load_string(
        "[ui]\noidc_issuer = http://[::1]:3000\noidc_client_id = c\noidc_scope = openid "
        "compute.read compute.create\noidc_redirect = https://accord.example.org/ui/\n" SITE,
        "t", &c, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.ui.csp, "connect-src 'self' http://[::1]:3000;"));
    CU_ASSERT_STRING_EQUAL(c.ui.oidc_scope, "openid compute.read compute.create");
    CU_ASSERT_STRING_EQUAL(c.ui.oidc_redirect, "https://accord.example.org/ui/");
    acc_config_release(&c);
}

/* Each bad value is refused with what is wrong, at its key. */
static void test_refused(void)
{
    static const struct {
        const char *ini, *says;
    } cases[] = {
        {"oidc_issuer = id.example.org\noidc_client_id = c\n", "is not an https:// URL"},
        {"oidc_issuer = http://id.example.org\noidc_client_id = c\n", "only on a loopback"},
        /* 127. as a name's first label is no loopback address */
        {"oidc_issuer = http://127.0.0.1.evil.example\noidc_client_id = c\n", "only on a loopback"},
        /* what would end the CSP's source list or add a directive */
        {"oidc_issuer = https://id.example.org; script-src *\noidc_client_id = c\n", "cannot have"},
        {"oidc_issuer = https://id.example.org,x\noidc_client_id = c\n", "cannot have"},
        {"oidc_issuer = https://id.example.org/?q\noidc_client_id = c\n", "cannot have"},
        {"oidc_issuer = https:///path\noidc_client_id = c\n", "names no host"},
        {"oidc_issuer = https://id.example.org\n", "needs oidc_client_id"},
        {"oidc_issuer = https://id.example.org\noidc_client_id =\n", "names no client"},
        {"oidc_issuer = https://id.example.org\noidc_client_id = c\noidc_scope = profile\n",
         "does not ask for openid"},
        {"oidc_issuer = https://id.example.org\noidc_client_id = c\noidc_scope = openidx\n",
         "does not ask for openid"},
        {"oidc_issuer = https://id.example.org\noidc_client_id = c\noidc_redirect = /ui/\n",
         "oidc_redirect: '/ui/' is not an https:// URL"},
        {"oidc_client_id = c\n", "oidc_client_id: needs oidc_issuer"},
        {"oidc_scope = openid\n", "oidc_scope: needs oidc_issuer"},
        {"oidc_secret = s\n", "unknown key 'oidc_secret'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ini[512];
        snprintf(ini, sizeof ini, "[ui]\n%s" SITE, cases[i].ini);
        struct acc_config c;
        struct acc_error err;
        acc_err rc = acc_config_load_string(ini, "t", &c, &err);
        CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
        if (rc != ACC_ERR_CONFIG) {
            acc_config_release(&c);
            continue;
        }
        if (!strstr(err.msg, cases[i].says) || !strstr(err.msg, "[ui]"))
            fprintf(stderr, "\n  case %zu: '%s' does not say '%s'\n", i, err.msg, cases[i].says);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
    }
}

/* --print-config's [ui] reads back to the same keys. */
static void test_print_round_trip(void)
{
    struct acc_config c, d;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[ui]\noidc_issuer = https://id.example.org\n"
                                         "oidc_client_id = accord-ui\n" SITE,
                                         "t", &c, &err));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    acc_config_print(&c, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[ui]\noidc_issuer = https://id.example.org\n"
                                        "oidc_client_id = accord-ui\noidc_scope = openid\n"));
    ACC_ASSERT_OK(acc_config_load_string(text, "printed", &d, &err));
    CU_ASSERT_STRING_EQUAL(d.ui.oidc_issuer, c.ui.oidc_issuer);
    CU_ASSERT_STRING_EQUAL(d.ui.oidc_client_id, c.ui.oidc_client_id);
    CU_ASSERT_STRING_EQUAL(d.ui.csp, c.ui.csp);
    acc_config_release(&d);
    acc_config_release(&c);
    free(text);
}

static const struct acc_test_case tests[] = {
    {"no [ui]: the page's own origin only", test_no_ui},
    {"an issuer: its origin in connect-src, the scope's default", test_issuer},
    {"bad values refused with the reason", test_refused},
    {"[ui] printed reads back", test_print_round_trip},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config_ui", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
