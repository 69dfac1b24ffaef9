/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_width.c - accordctl's tables and the terminal: nothing cut
 * without one, names and sites cut between characters (marked '+') to fit
 * a narrow one, columns kept aligned, a COLUMNS that is not a number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_run.h"
#include "http_client.h"
#include "testutil.h"

/* Whether text is valid UTF-8 (no character cut in two). */
static bool valid_utf8(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        int more = *p < 0x80             ? 0
                   : (*p & 0xe0) == 0xc0 ? 1
                   : (*p & 0xf0) == 0xe0 ? 2
                   : (*p & 0xf8) == 0xf0 ? 3
                                         : -1;
        if (more < 0)
            return false;
        p++;
        for (int i = 0; i < more; i++, p++) {
            if ((*p & 0xc0) != 0x80)
                return false;
        }
    }
    return true;
}

/* Characters (not bytes) from line to at. */
static int chars_between(const char *line, const char *at)
{
    int n = 0;
    for (const char *p = line; p < at; p++)
        n += ((unsigned char)*p & 0xc0) != 0x80;
    return n;
}

/* The start of the line of out that holds what, or NULL. */
static const char *line_with(const char *out, const char *what)
{
    const char *at = strstr(out, what);
    if (!at)
        return NULL;
    while (at > out && at[-1] != '\n')
        at--;
    return at;
}

/* An offer with a long name, not all ASCII, on three sites. */
static const char name[] = "Grüße-über-alle-Standorte-hinweg-und-zurück";

/* Submits the offer of the long name; its id in long_id. */
static void submit_long_name(char long_id[32])
{
    char *doc = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    char *p = strstr(doc, "metatrace-run</wsag:Name>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char path[256];
    snprintf(path, sizeof path, "%s/long-name.xml", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%.*s%s%s", (int)(p - doc), doc, name, p + strlen("metatrace-run"));
    fclose(f);
    free(doc);
    struct run r = ctl(NULL, NULL, "submit", "--json", path, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    json_t *a = json_of(&r);
    snprintf(long_id, 32, "%s", jstr(a, "id", "?"));
    json_decref(a);
    run_free(&r);
}

/* The table uncut: without a terminal, and on a wide one. */
static void check_uncut(const char *long_id)
{
    struct run r;
    /* Not a terminal and no COLUMNS: nothing is cut. */
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    const char *line = line_with(r.out, long_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, name));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "caesar,") ? line : strstr(line, ",caesar"));
    CU_ASSERT_PTR_NULL(strchr(line, '+'));
    run_free(&r);

    /* A wide terminal: the same, and the table fits it. */
    setenv("COLUMNS", "200", 1);
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    line = line_with(r.out, long_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, name));
    CU_ASSERT_PTR_NULL(strchr(line, '+'));
    CU_ASSERT_TRUE(lines_fit(r.out, 200));
    run_free(&r);
}

/* The table cut to fit: 80 and 60 columns. */
static void check_cut(const char *long_id)
{
    struct run r;
    const char *line;
    /* 80 columns: name and sites are cut, marked with '+', to fit (the
     * times with their year take 32 of them). */
    setenv("COLUMNS", "80", 1);
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    line = line_with(r.out, long_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NULL(strstr(line, name));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "Grüße-üb+"));
    CU_ASSERT_TRUE(lines_fit(r.out, 80));
    run_free(&r);

    /* 60 columns: the name is cut between characters, never inside one,
     * and the columns after it stay aligned with the header's. */
    setenv("COLUMNS", "60", 1);
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_TRUE(valid_utf8(r.out));
    line = line_with(r.out, long_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "Grüß+"));
    const char *state = strstr(line, "Observed");
    CU_ASSERT_PTR_NOT_NULL_FATAL(state);
    CU_ASSERT_EQUAL(chars_between(line, state), chars_between(r.out, strstr(r.out, "STATE")));
    run_free(&r);
}

static void test_list_width(void)
{
    char long_id[32];
    submit_long_name(long_id);
    check_uncut(long_id);
    check_cut(long_id);

    /* COLUMNS that is not a number: said, and not used. */
    setenv("COLUMNS", "wide", 1);
    struct run r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "ignoring COLUMNS=wide"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, name));
    run_free(&r);
    unsetenv("COLUMNS");

    r = ctl(NULL, NULL, "terminate", long_id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
}

static const struct acc_test_case tests[] = {
    {"list cuts names and sites only when the terminal is too narrow", test_list_width},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"cli_width", cli_setup, cli_teardown, tests},
    {NULL, NULL, NULL, NULL},
};
