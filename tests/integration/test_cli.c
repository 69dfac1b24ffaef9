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

#include "fixture.h"
#include "http_client.h"
#include "jsonv.h"
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

static struct jv *json_of(const struct run *r)
{
    char err[128];
    struct jv *v = jv_parse(r->out, err, sizeof err);
    if (!v)
        fprintf(stderr, "\n  not JSON (%s): %.300s\n", err, r->out);
    return v;
}

static bool lines_fit(const char *text, size_t width)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > width) {
            fprintf(stderr, "\n  line of %zu columns: %.*s\n", len, (int)len, p);
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
    static const char *const cmds[] = {"submit", "list",      "show",  "state",
                                       "trace",  "terminate", "sites", "preview"};
    for (size_t i = 0; i < 8; i++) {
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
    struct jv *a = json_of(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(jv_str(a, "state", ""), "Observed");
    CU_ASSERT_EQUAL(jv_len(jv_get(a, "components")), 3);
    CU_ASSERT_EQUAL(jv_len(jv_get(a, "links")), 2);
    snprintf(id, sizeof id, "%s", jv_str(a, "id", ""));
    CU_ASSERT_EQUAL(strlen(id), 16);
    jv_free(a);
    run_free(&r);

    /* Idempotency through the CLI: one agreement, twice the same id. */
    char *ids[2];
    for (int i = 0; i < 2; i++) {
        r = ctl(NULL, NULL, "submit", "--pending", "--idempotency-key", "cli-42", "--json",
                ACC_SOURCE_DIR "/docs/examples/offer.xml", NULL);
        CU_ASSERT_TRUE(r.status == 0);
        a = json_of(&r);
        ids[i] = strdup(jv_str(a, "id", "?"));
        jv_free(a);
        run_free(&r);
    }
    CU_ASSERT_STRING_EQUAL(ids[0], ids[1]);
    free(ids[0]);
    free(ids[1]);
}

static void test_list(void)
{
    struct run r = ctl(NULL, NULL, "list", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, id));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "STATE"));
    CU_ASSERT_TRUE(lines_fit(r.out, 80));
    run_free(&r);

    r = ctl(NULL, NULL, "list", "--state", "Observed", "--site", "caesar", "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    struct jv *l = json_of(&r);
    CU_ASSERT_TRUE(jv_int(l, "count", 0) >= 2);
    const struct jv *all = jv_get(l, "agreements");
    for (size_t i = 0; i < jv_len(all); i++)
        CU_ASSERT_STRING_EQUAL(jv_str(jv_at(all, i), "state", ""), "Observed");
    jv_free(l);
    run_free(&r);

    r = ctl(NULL, NULL, "list", "--initiator", "nobody", "--json", NULL);
    l = json_of(&r);
    CU_ASSERT_EQUAL(jv_int(l, "count", -1), 0);
    jv_free(l);
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
    struct jv *s = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jv_str(s, "state", ""), "Observed");
    CU_ASSERT_EQUAL(jv_len(jv_get(s, "serviceTerms")), 5);
    jv_free(s);
    run_free(&r);
    r = ctl(NULL, NULL, "state", id, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "service term"));
    run_free(&r);

    r = ctl(NULL, NULL, "trace", id, "--json", NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    struct jv *t = json_of(&r);
    const struct jv *ev = jv_get(t, "events");
    CU_ASSERT_TRUE(jv_len(ev) >= 6);
    CU_ASSERT_STRING_EQUAL(jv_str(jv_at(ev, jv_len(ev) - 1), "kind", ""), "agree");
    jv_free(t);
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
    struct jv *s = json_of(&r);
    CU_ASSERT_EQUAL(jv_len(jv_get(s, "sites")), 3);
    CU_ASSERT_EQUAL(jv_len(jv_get(s, "links")), 3);
    jv_free(s);
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
    CU_ASSERT_EQUAL(jv_int(s, "nodes", 0), 16);
    CU_ASSERT_TRUE(jv_len(jv_get(s, "frames")) >= 1);
    jv_free(s);
    run_free(&r);
    r = ctl(NULL, NULL, "preview", "caesar", "--nodes", "16", "--duration", "PT2H", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "FREE FROM"));
    run_free(&r);
    r = ctl(NULL, NULL, "preview", "atlantis", "--nodes", "1", "--duration", "PT1H", NULL);
    CU_ASSERT_EQUAL(r.status, 3);
    run_free(&r);
}

static void test_terminate(void)
{
    struct run r = ctl(NULL, NULL, "terminate", id, NULL);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Terminated"));
    run_free(&r);
    r = ctl(NULL, NULL, "state", id, "--json", NULL);
    struct jv *s = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jv_str(s, "state", ""), "Terminated");
    jv_free(s);
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
    struct jv *fault = json_of(&r);
    CU_ASSERT_STRING_EQUAL(jv_str(fault, "code", ""), "NoCommonSlot");
    jv_free(fault);
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
    {"show, state, trace (tables, --json, --xml)", test_show_state_trace},
    {"sites and preview", test_sites_and_preview},
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
