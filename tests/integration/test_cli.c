/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c - the real accordctl binary against a real accordd (in-process,
 * on a free port): every command on one agreement's life and its --json
 * output read back.  The other parts are programs of their own:
 * test_cli_width (tables cut to the terminal), test_cli_errors (exit codes
 * of the error paths, tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_run.h"
#include "http_client.h"
#include "testutil.h"

static char id[64];

static void test_help_and_version(void)
{
    struct run r = ctl(NULL, NULL, "--version", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "accordctl " ACCORD_VERSION));
    run_free(&r);
    r = ctl(NULL, NULL, "--help", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    static const char *const cmds[] = {"submit",    "list",  "show",    "state", "trace",
                                       "terminate", "sites", "preview", "modify"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, cmds[i]));
        struct run h = ctl(NULL, NULL, cmds[i], "--help", NULL);
        CU_ASSERT_EQUAL(h.status, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: accordctl %s", cmds[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(h.out, want));
        run_free(&h);
    }
    run_free(&r);
}

static void test_submit(void)
{
    struct run r = ctl(NULL, NULL, "submit", ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "State       Observed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "COMPONENT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "caesar"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "trace-partrace"));
    run_free(&r);

    r = ctl(NULL, NULL, "submit", "--json", ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *a = json_of(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(jstr(a, "state", ""), "Observed");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(a, "components")), 3);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(a, "links")), 2);
    snprintf(id, sizeof id, "%s", jstr(a, "id", ""));
    CU_ASSERT_EQUAL(strlen(id), 16);
    json_decref(a);
    run_free(&r);

    /* Idempotency through the CLI: one agreement, twice the same id. */
    char *ids[2];
    for (int i = 0; i < 2; i++) {
        r = ctl(NULL, NULL, "submit", "--pending", "--idempotency-key", "cli-42", "--json",
                ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
        CU_ASSERT_TRUE(r.status == 0);
        a = json_of(&r);
        ids[i] = strdup(jstr(a, "id", "?"));
        json_decref(a);
        run_free(&r);
    }
    CU_ASSERT_STRING_EQUAL(ids[0], ids[1]);
    free(ids[0]);
    free(ids[1]);
}

static void test_list(void)
{
    setenv("COLUMNS", "80", 1); /* an 80-column terminal */
    struct run r = ctl(NULL, NULL, "list", NULL);
    unsetenv("COLUMNS");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, id));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "STATE"));
    CU_ASSERT_TRUE(lines_fit(r.out, 80));
    run_free(&r);

    r = ctl(NULL, NULL, "list", "--state", "Observed", "--site", "caesar", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *l = json_of(&r);
    CU_ASSERT_TRUE(jint(l, "count", 0) >= 2);
    const json_t *all = json_object_get(l, "agreements");
    for (size_t i = 0; i < json_array_size(all); i++)
        CU_ASSERT_STRING_EQUAL(jstr(json_array_get(all, i), "state", ""), "Observed");
    json_decref(l);
    run_free(&r);

    r = ctl(NULL, NULL, "list", "--initiator", "nobody", "--json", NULL);
    l = json_of(&r);
    CU_ASSERT_EQUAL(jint(l, "count", -1), 0);
    json_decref(l);
    run_free(&r);
}

static void test_show_state_trace(void)
{
    struct run r = ctl(NULL, NULL, "show", id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, id));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fzj-xd1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Window"));
    run_free(&r);

    r = ctl(NULL, NULL, "show", id, "--xml", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "<wsag:Agreement"));
    char *st = xml_get(r.out, "//co:Allocation/co:State");
    CU_ASSERT_STRING_EQUAL(st ? st : "", "Observed");
    free(st);
    run_free(&r);

    r = ctl(NULL, NULL, "state", id, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *s = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jstr(s, "state", ""), "Observed");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(s, "serviceTerms")), 5);
    json_decref(s);
    run_free(&r);
    r = ctl(NULL, NULL, "state", id, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "service term"));
    run_free(&r);

    r = ctl(NULL, NULL, "trace", id, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *t = json_of(&r);
    const json_t *ev = json_object_get(t, "events");
    CU_ASSERT_TRUE(json_array_size(ev) >= 6);
    CU_ASSERT_STRING_EQUAL(jstr(json_array_get(ev, json_array_size(ev) - 1), "kind", ""), "agree");
    json_decref(t);
    run_free(&r);
    r = ctl(NULL, NULL, "trace", id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "preview"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "common start"));
    CU_ASSERT_TRUE(lines_fit(r.out, 120)); /* details go on their own line when long */
    run_free(&r);
}

static void test_sites_and_preview(void)
{
    struct run r = ctl(NULL, NULL, "sites", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    json_t *s = json_of(&r);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(s, "sites")), 3);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(s, "links")), 3);
    json_decref(s);
    run_free(&r);
    r = ctl(NULL, NULL, "sites", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "caesar"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fzj-xd1_caesar"));
    CU_ASSERT_TRUE(lines_fit(r.out, 80));
    run_free(&r);

    r = ctl(NULL, NULL, "preview", "caesar", "--nodes", "16", "--duration", "PT2H", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    s = json_of(&r);
    CU_ASSERT_EQUAL(jint(s, "nodes", 0), 16);
    CU_ASSERT_TRUE(json_array_size(json_object_get(s, "frames")) >= 1);
    json_decref(s);
    run_free(&r);
    r = ctl(NULL, NULL, "preview", "caesar", "--nodes", "16", "--duration", "PT2H", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "FREE FROM"));
    run_free(&r);
    r = ctl(NULL, NULL, "preview", "atlantis", "--nodes", "1", "--duration", "PT1H", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    run_free(&r);
}

static void test_modify(void)
{
    struct run r = ctl(NULL, NULL, "show", id, "--json", NULL);
    json_t *a = json_of(&r);
    acc_time end = 0;
    CU_ASSERT_EQUAL_FATAL(acc_time_parse(jstr(a, "end", ""), &end, NULL), ACC_OK);
    json_decref(a);
    run_free(&r);
    char t[40];
    /* Shortened by half an hour: within what it holds (counted as free),
     * whatever the testbed booked after it. */
    acc_time_format(end - 1800, t);
    r = ctl(NULL, NULL, "modify", id, "--end", t, NULL);
    if (r.status != 0)
        fprintf(stderr, "modify: %s\n", r.err);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Version 2 of agreement"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, t));
    run_free(&r);
    r = ctl(NULL, NULL, "show", id, "--json", NULL);
    a = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jstr(a, "end", ""), t);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(a, "version")), 2);
    json_decref(a);
    run_free(&r);
    /* Usage errors (2) never reach the server; an unknown component is 3,
     * a bandwidth beyond every link 1, and the agreement stays at 2. */
    const char *const usage[][4] = {
        {"modify", id, NULL, NULL},           {"modify", id, "--nodes", "a"},
        {"modify", id, "--nodes", "=3"},      {"modify", id, "--nodes", "a=0"},
        {"modify", id, "--bandwidth", "l=x"}, {"modify", "--end", t, NULL},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        r = ctl(NULL, NULL, usage[i][0], usage[i][1], usage[i][2], usage[i][3], NULL);
        CU_ASSERT_EQUAL(r.status, 2);
        run_free(&r);
    }
    r = ctl(NULL, NULL, "modify", id, "--nodes", "no-such<&>=2", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no-such<&>"));
    run_free(&r);
    r = ctl(NULL, NULL, "modify", id, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 2);
    run_free(&r);
    r = ctl(NULL, NULL, "show", id, "--json", NULL);
    a = json_of(&r);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(a, "version")), 2);
    json_decref(a);
    run_free(&r);
}

static void test_terminate(void)
{
    struct run r = ctl(NULL, NULL, "terminate", id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Terminated"));
    run_free(&r);
    r = ctl(NULL, NULL, "state", id, "--json", NULL);
    json_t *s = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jstr(s, "state", ""), "Terminated");
    json_decref(s);
    run_free(&r);
}

static const struct acc_test_case tests[] = {
    {"--help, --version, help per command", test_help_and_version},
    {"submit, --json, --idempotency-key", test_submit},
    {"list fits 80 columns; filters; --json", test_list},
    {"show, state, trace (tables, --json, --xml)", test_show_state_trace},
    {"sites and preview", test_sites_and_preview},
    {"modify: a new end, usage errors, an unknown component", test_modify},
    {"terminate", test_terminate},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"cli", cli_setup, cli_teardown, tests},
    {NULL, NULL, NULL, NULL},
};
