/* SPDX-License-Identifier: Apache-2.0 */
/* test_mapfile.c - lib/identity's mapfile: the first matching line wins,
 * each kind matches what it says (token issuer+subject, group, DN, user),
 * exact words and quoted strings against regexes, every bad line refused
 * with its line number, root and unknown accounts refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/identity/mapfile.h"
#include "testutil.h"

static struct acc_mapfile *parse(const char *text, bool check)
{
    struct acc_mapfile *m = NULL;
    struct acc_error e = {0};
    if (acc_mapfile_parse(text, strlen(text), "test.map", check, &m, &e) != ACC_OK)
        fprintf(stderr, "parse: %s\n", e.msg);
    return m;
}

/* The error text of parsing text (check: accounts looked up); "" if it parsed. */
static const char *refusal(const char *text, bool check, struct acc_error *e)
{
    struct acc_mapfile *m = NULL;
    memset(e, 0, sizeof *e);
    acc_err rc = acc_mapfile_parse(text, strlen(text), "test.map", check, &m, e);
    acc_mapfile_free(m);
    if (rc == ACC_OK)
        return "";
    CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
    return e->msg;
}

static const char *map(const struct acc_mapfile *m, struct acc_identity *id, size_t *line)
{
    return acc_mapfile_map(m, id, line);
}

static void test_kinds_and_order(void)
{
    /* a comment may end a line; anything else after the account is refused */
    struct acc_mapfile *c = parse("user eve eve   # after the account\n", false);
    CU_ASSERT_PTR_NOT_NULL(c);
    acc_mapfile_free(c);
    CU_ASSERT_PTR_NULL(parse("user eve eve extra\n", false));
    const char *text = "# the site's users\n"
                       "\n"
                       "token /^https:\\/\\/idp\\.example\\.org\\/,alice$/ alice01\n"
                       "group \"/cms/production\" cmsprod # CMS production\n"
                       "dn \"/C=DE/O=Grid/CN=Carol Example\" carol\n"
                       "user bob hpc-bob\n"
                       "user /^b/ b-anyone\n";
    struct acc_mapfile *m = parse(text, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(acc_mapfile_rules(m), 5);
    size_t line = 0;

    struct acc_identity alice = {
        .user = "alice", .issuer = "https://idp.example.org/", .subject = "alice"};
    CU_ASSERT_STRING_EQUAL(map(m, &alice, &line), "alice01");
    CU_ASSERT_EQUAL(line, 3);
    /* the same subject from another issuer is someone else */
    struct acc_identity other = {
        .user = "x", .issuer = "https://evil.example/", .subject = "alice"};
    CU_ASSERT_PTR_NULL(map(m, &other, NULL));

    /* a group, wherever it is in the list */
    char *groups[] = {"/atlas", "/cms/production"};
    struct acc_identity g = {
        .user = "x", .issuer = "https://other/", .subject = "s", .groups = groups, .n_groups = 2};
    CU_ASSERT_STRING_EQUAL(map(m, &g, &line), "cmsprod");
    CU_ASSERT_EQUAL(line, 4);
    char *near[] = {"/cms/production/sub"};
    g.groups = near;
    g.n_groups = 1;
    CU_ASSERT_PTR_NULL(map(m, &g, NULL)); /* a quoted pattern matches whole */

    /* a certificate's DN (no issuer); a token's subject never matches dn */
    struct acc_identity carol = {.user = "carol", .subject = "/C=DE/O=Grid/CN=Carol Example"};
    CU_ASSERT_STRING_EQUAL(map(m, &carol, &line), "carol");
    CU_ASSERT_EQUAL(line, 5);
    carol.issuer = "https://idp.example.org/";
    CU_ASSERT_PTR_NULL(map(m, &carol, NULL));

    /* the first matching line wins: bob's own before the regex */
    struct acc_identity bob = {.user = "bob"};
    CU_ASSERT_STRING_EQUAL(map(m, &bob, &line), "hpc-bob");
    CU_ASSERT_EQUAL(line, 6);
    struct acc_identity bea = {.user = "bea"};
    CU_ASSERT_STRING_EQUAL(map(m, &bea, &line), "b-anyone");
    CU_ASSERT_EQUAL(line, 7);
    struct acc_identity zed = {.user = "zed"};
    CU_ASSERT_PTR_NULL(map(m, &zed, NULL));
    CU_ASSERT_PTR_NULL(map(m, NULL, NULL));
    acc_mapfile_free(m);
}

static void test_bad_lines(void)
{
    struct acc_error e;
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user a b\nusr alice alice\n", false, &e),
                                  "test.map:2: unknown kind 'usr'"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(refusal("\n\nuser\n", false, &e), "test.map:3: user: no pattern"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user alice\n", false, &e), "test.map:1: no account"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user /alice alice\n", false, &e),
                                  "test.map:1: the pattern has no closing /"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("# x\ngroup \"/cms alice\n", false, &e),
                                  "test.map:2: the pattern has no closing \""));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(refusal("user /a(/ alice\n", false, &e), "test.map:1: bad regular expression"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user alice alice extra\n", false, &e),
                                  "test.map:1: more than KIND PATTERN ACCOUNT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user alice al:ice\n", false, &e),
                                  "test.map:1: 'al:ice' is not an account"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(refusal("user \"\" alice\n", false, &e), "test.map:1: the pattern is empty"));
    CU_ASSERT_PTR_NOT_NULL(strstr(refusal("user \"a\"b alice\n", false, &e), "no space after"));
    /* root never, even unchecked */
    CU_ASSERT_PTR_NOT_NULL(
        strstr(refusal("user ok nobody\nuser alice root\n", false, &e), "test.map:2: root"));
    CU_ASSERT_STRING_EQUAL(refusal("", false, &e), "");
    CU_ASSERT_STRING_EQUAL(refusal("# only a comment\n   \n", false, &e), "");
}

static void test_accounts_checked(void)
{
    struct acc_error e;
    /* nobody exists on Debian; the made-up name does not */
    CU_ASSERT_STRING_EQUAL(refusal("user alice nobody\n", true, &e), "");
    CU_ASSERT_PTR_NOT_NULL(strstr(
        refusal("user alice nobody\nuser bob acc-no-such-account-x\n", true, &e), "test.map:2"));
    CU_ASSERT_STRING_EQUAL(refusal("user bob acc-no-such-account-x\n", false, &e), "");
}

static void test_load(void)
{
    char path[] = "/tmp/test_mapfile.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    const char *text = "user alice nobody\n";
    CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct acc_mapfile *m = NULL;
    struct acc_error e = {0};
    acc_err rc = acc_mapfile_load(path, true, &m, &e);
    unlink(path);
    ACC_ASSERT_OK(rc);
    struct acc_identity alice = {.user = "alice"};
    CU_ASSERT_STRING_EQUAL(acc_mapfile_map(m, &alice, NULL), "nobody");
    acc_mapfile_free(m);
    CU_ASSERT_EQUAL(acc_mapfile_load("/nonexistent/accord.map", true, &m, &e), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "/nonexistent/accord.map: cannot open"));
    CU_ASSERT_PTR_NULL(m);
}

static void test_describe(void)
{
    char buf[256];
    struct acc_identity t = {.user = "alice", .issuer = "https://issuer/", .subject = "alice"};
    acc_identity_describe(&t, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "https://issuer/ sub alice");
    struct acc_identity c = {.user = "carol", .subject = "CN=carol"};
    acc_identity_describe(&c, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "DN CN=carol");
    struct acc_identity u = {.user = "bob"};
    acc_identity_describe(&u, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "user bob");
    acc_identity_describe(NULL, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "anonymous");
}

static const struct acc_test_case tests[] = {
    {"kinds_and_order", test_kinds_and_order},
    {"bad_lines", test_bad_lines},
    {"accounts_checked", test_accounts_checked},
    {"load", test_load},
    {"describe", test_describe},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"mapfile", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
