/* test_cli.c - the real accordctl binary against a real accordd (in-process,
 * on a free port): every command, its --json output read back, and the exit
 * codes of the error paths. */
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "fixture.h"
#include "http_client.h"
#include "testutil.h"
#include "timefmt.h"

extern char **environ;

static struct fixture fx;

struct run {
    int status;
    char *out, *err;
};

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

/* Runs accordctl with the arguments given (NULL-terminated), against the
 * fixture unless an argument names another --server. */
static struct run ctl(const char *server, const char *token, ...)
{
    const char *argv[64] = {"accordctl"};
    int n = 1;
    if (server) {
        argv[n++] = "--server";
        argv[n++] = server;
    }
    if (token) {
        argv[n++] = "--token";
        argv[n++] = token;
    }
    va_list ap;
    va_start(ap, token);
    const char *a;
    while (n < 63 && (a = va_arg(ap, const char *)))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;

    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s/ctl.out", acc_test_tmpdir());
    snprintf(err_path, sizeof err_path, "%s/ctl.err", acc_test_tmpdir());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    struct run r = {-1, NULL, NULL};
    if (posix_spawn(&pid, ACCORDCTL_PATH, &fa, NULL, (char *const *)argv, environ) == 0) {
        int st;
        waitpid(pid, &st, 0);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    posix_spawn_file_actions_destroy(&fa);
    r.out = read_file(out_path, NULL);
    r.err = read_file(err_path, NULL);
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

static json_t *json_of(const struct run *r)
{
    json_error_t err;
    json_t *v = json_loads(r->out, JSON_DECODE_ANY, &err);
    if (!v)
        fprintf(stderr, "\n  not JSON (%s): %.300s\n", err.text, r->out);
    return v;
}

/* A string member of an object, or dflt. */
static const char *jstr(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* An integer member of an object, or dflt. */
static long long jint(const json_t *o, const char *key, long long dflt)
{
    const json_t *m = json_object_get(o, key);
    return json_is_integer(m) ? json_integer_value(m) : dflt;
}

/* Whether every line of text takes at most width columns (one per
 * character: UTF-8 continuation bytes take none). */
static bool lines_fit(const char *text, size_t width)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), cols = 0;
        for (size_t i = 0; i < len; i++)
            cols += ((unsigned char)p[i] & 0xc0) != 0x80;
        if (cols > width) {
            fprintf(stderr, "\n  line of %zu columns: %.*s\n", cols, (int)len, p);
            return false;
        }
        p = nl ? nl + 1 : p + len;
    }
    return true;
}

static int setup(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/cli.db", acc_test_tmpdir());
    if (fixture_start(&fx, NULL, db))
        return 1;
    setenv("ACCORD_URL", fx.base, 1); /* as a user would set it */
    unsetenv("ACCORD_TOKEN");
    unsetenv("COLUMNS"); /* accordctl's output is a file: no width unless a test sets one */
    return 0;
}

static int teardown(void)
{
    fixture_stop(&fx);
    return 0;
}

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

static void test_list_width(void)
{
    /* An offer with a long name, not all ASCII, on three sites. */
    static const char name[] = "Grüße-über-alle-Standorte-hinweg-und-zurück";
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
    char long_id[32];
    snprintf(long_id, sizeof long_id, "%s", jstr(a, "id", "?"));
    json_decref(a);
    run_free(&r);

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

    /* 80 columns: name and sites are cut, marked with '+', to fit. */
    setenv("COLUMNS", "80", 1);
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    line = line_with(r.out, long_id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NULL(strstr(line, name));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "Grüße-über-+"));
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

    /* COLUMNS that is not a number: said, and not used. */
    setenv("COLUMNS", "wide", 1);
    r = ctl(NULL, NULL, "list", "--limit", "5", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "ignoring COLUMNS=wide"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, name));
    run_free(&r);
    unsetenv("COLUMNS");

    r = ctl(NULL, NULL, "terminate", long_id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
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

static void test_exit_codes(void)
{
    struct run r = ctl(NULL, NULL, "show", "aaaaaaaaaaaaaaaa", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl: NotFound:"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "HTTP/")); /* never a raw HTTP dump */
    run_free(&r);

    r = ctl("http://127.0.0.1:1", NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "127.0.0.1:1"));
    run_free(&r);

    static const char *const usage[][3] = {
        {NULL, NULL, NULL},        {"frobnicate", NULL, NULL},  {"show", NULL, NULL},
        {"list", "--bogus", NULL}, {"preview", "caesar", NULL}, {"submit", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        r = ctl(NULL, NULL, usage[i][0], usage[i][1], usage[i][2], NULL);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "usage") ? r.err : strstr(r.err, "give"));
        run_free(&r);
    }

    /* A document that is not an offer: refused, exit 1, the server's words. */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.xml", acc_test_tmpdir());
    FILE *f = fopen(bad, "w");
    fputs("<wsag:AgreementOffer", f);
    fclose(f);
    r = ctl(NULL, NULL, "submit", bad, NULL);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "MalformedDocument"));
    run_free(&r);

    /* An adapter down: 503, exit 5, everything rolled back. */
    struct http_reply h;
    char u[256];
    snprintf(u, sizeof u, "%s/adapters/caesar/control/fault?call=reserve&action=unavailable",
             fx.base);
    CU_ASSERT_EQUAL(http_do("POST", u, "", 0, NULL, &h), 0);
    http_reply_free(&h);
    r = ctl(NULL, NULL, "submit", ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_EQUAL(r.status, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "AdapterUnavailable"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl trace")); /* the kept agreement */
    run_free(&r);
}

static void test_rejected(void)
{
    /* fh-brs full for the whole window: no common slot. */
    acc_time t0 = (acc_now() / 900 + 4 * 96) * 900;
    char start[ACC_TIME_STRLEN], end[ACC_TIME_STRLEN], u[512];
    acc_time_format(t0, start);
    acc_time_format(t0 + 2 * 3600, end);
    for (acc_time t = t0; t < t0 + 2 * 3600; t += 900) {
        char s1[ACC_TIME_STRLEN], s2[ACC_TIME_STRLEN];
        acc_time_format(t, s1);
        acc_time_format(t + 900, s2);
        struct http_reply h;
        snprintf(u, sizeof u, "%s/adapters/fh-brs/control/peak?from=%s&until=%s", fx.base, s1, s2);
        http_do("POST", u, "", 0, NULL, &h);
        long long used = 0, cap = 0;
        char name[64];
        sscanf(h.body, "%63s peak %lld capacity %lld", name, &used, &cap);
        http_reply_free(&h);
        snprintf(u, sizeof u, "%s/adapters/fh-brs/control/book?start=%s&end=%s&amount=%lld",
                 fx.base, s1, s2, cap - used);
        if (cap > used) {
            http_do("POST", u, "", 0, NULL, &h);
            http_reply_free(&h);
        }
    }
    char *doc = read_file(ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    char sched[256], *p = strstr(doc, "<co:Duration>PT2H</co:Duration>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    snprintf(sched, sizeof sched,
             "<co:EarliestStart>%s</co:EarliestStart><co:Deadline>%s</co:Deadline>"
             "<co:Duration>PT1H</co:Duration>",
             start, end);
    char path[256];
    snprintf(path, sizeof path, "%s/window.xml", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s%s%s", (int)(p - doc), doc, sched,
            p + strlen("<co:Duration>PT2H</co:Duration>"));
    fclose(f);
    free(doc);
    struct run r = ctl(NULL, NULL, "submit", path, NULL);
    CU_ASSERT_EQUAL(r.status, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "accordctl: NoCommonSlot:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "site fh-brs")); /* why, per adapter */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "site caesar"));
    run_free(&r);
    /* --json gives the fault document to scripts, with the same exit code. */
    r = ctl(NULL, NULL, "submit", path, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 4);
    json_t *fault = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jstr(fault, "code", ""), "NoCommonSlot");
    json_decref(fault);
    run_free(&r);
}

static void test_tokens(void)
{
    char tokens[256], ini[512], db[256];
    snprintf(tokens, sizeof tokens, "%s/cli-tokens", acc_test_tmpdir());
    FILE *f = fopen(tokens, "w");
    fputs("carol carol-token-0123456789\n", f);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(ini, sizeof ini, "[auth]\ntokens = %s\n[site a]\nadapter = sim-batch\nnodes = 4\n",
             tokens);
    snprintf(db, sizeof db, "%s/cli-auth.db", acc_test_tmpdir());
    struct fixture au;
    CU_ASSERT_EQUAL_FATAL(fixture_start(&au, ini, db), 0);
    struct run r = ctl(au.base, NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 7);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "Unauthorized"));
    run_free(&r);
    r = ctl(au.base, "carol-token-0123456789", "list", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
    setenv("ACCORD_TOKEN", "carol-token-0123456789", 1);
    r = ctl(au.base, NULL, "sites", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    run_free(&r);
    unsetenv("ACCORD_TOKEN");
    fixture_stop(&au);
}

static const struct acc_test_case tests[] = {
    {"--help, --version, help per command", test_help_and_version},
    {"submit, --json, --idempotency-key", test_submit},
    {"list fits 80 columns; filters; --json", test_list},
    {"list cuts names and sites only when the terminal is too narrow", test_list_width},
    {"show, state, trace (tables, --json, --xml)", test_show_state_trace},
    {"sites and preview", test_sites_and_preview},
    {"modify: a new end, usage errors, an unknown component", test_modify},
    {"terminate", test_terminate},
    {"exit codes: not found, server down, usage, bad offer, adapter down", test_exit_codes},
    {"a rejected offer says why and exits 4", test_rejected},
    {"tokens: --token and ACCORD_TOKEN", test_tokens},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"cli", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
