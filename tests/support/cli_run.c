/* SPDX-License-Identifier: Apache-2.0 */
/* cli_run.c - accordctl run for test_cli's parts (see cli_run.h). */
#include "cli_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "http_client.h"
#include "testutil.h"

extern char **environ;

struct fixture fx;

void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

struct run ctl(const char *server, const char *token, ...)
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

json_t *json_of(const struct run *r)
{
    json_error_t err;
    json_t *v = json_loads(r->out, JSON_DECODE_ANY, &err);
    if (!v)
        fprintf(stderr, "\n  not JSON (%s): %.300s\n", err.text, r->out);
    return v;
}

/* A string member of an object, or dflt. */
const char *jstr(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* An integer member of an object, or dflt. */
long long jint(const json_t *o, const char *key, long long dflt)
{
    const json_t *m = json_object_get(o, key);
    return json_is_integer(m) ? json_integer_value(m) : dflt;
}

bool lines_fit(const char *text, size_t width)
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

int cli_setup(void)
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

int cli_teardown(void)
{
    fixture_stop(&fx);
    return 0;
}
