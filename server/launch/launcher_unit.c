/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_unit.c - a job in a transient systemd service of its own.
 *
 * Under systemd a job started as accordd's child would live in accordd's
 * service: its cgroup, its sandbox (read-only file system, no devices, no
 * user namespaces, a system call filter) and its fate when accordd stops.
 * So there each job is handed to the service manager with systemd-run: it
 * then runs in accord-job-ID-N.service under accord-jobs.slice, as its
 * account, with systemd's defaults rather than accordd's restrictions, and
 * its own limits.  systemd-run talks to PID 1 over its private socket,
 * which only root may use: without a D-Bus daemon or polkit (neither is
 * there on a minimal server), that is what accordd needs (docs/launch.md,
 * "Jobs in units of their own"). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/common/notify.h"
#include "../../lib/common/proc.h"
#include "../../lib/common/strutil.h"
#include "launcher_int.h"

/* How long systemd-run and systemctl may take (PID 1 answers in
 * milliseconds unless it is very busy). */
#define UNIT_TIMEOUT_MS 30000

bool acc_launch_unit_name(const char *id, long long n, char *out, size_t size)
{
    if (!id || !*id || strlen(id) > 32 || n < 0)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    int w = snprintf(out, size, "accord-job-%s-%lld.service", id, n);
    return w > 0 && (size_t)w < size;
}

/* A variable systemd-run may pass: NAME=value, NAME a shell-like name. */
static bool env_ok(const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return false;
    for (const char *p = v; p < eq; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
              (p > v && *p >= '0' && *p <= '9')))
            return false;
    return true;
}

/* s with every '$' written "$$"; NULL when out of memory. */
static char *dollars_doubled(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '$' ? 2 : 1;
    char *out = malloc(n + 1), *q = out;
    for (const char *p = s; out && *p; p++) {
        if (*p == '$')
            *q++ = '$';
        *q++ = *p;
    }
    if (out)
        *q = '\0';
    return out;
}

acc_err acc_launch_unit_command(const struct acc_launch_unit *u, const char *const *cmd,
                                struct acc_argv *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    size_t len = u->name ? strlen(u->name) : 0;
    if (len < 20 || strncmp(u->name, "accord-job-", 11) != 0 ||
        strcmp(u->name + len - 8, ".service") != 0 || strpbrk(u->name, "/ \t\n"))
        return acc_error_set(err, ACC_ERR_INVALID, "not a job unit name: %.80s",
                             u->name ? u->name : "(none)");
    if (!cmd || !cmd[0] || cmd[0][0] != '/')
        return acc_error_set(err, ACC_ERR_INVALID, "a job unit needs a command by absolute path");
    if (!u->directory || u->directory[0] != '/')
        return acc_error_set(err, ACC_ERR_INVALID, "a job unit needs an absolute directory");
    if (u->user && (!*u->user || strpbrk(u->user, " \t\n\"'\\%$:") || strcmp(u->user, "root") == 0))
        return acc_error_set(err, ACC_ERR_INVALID, "not an account for a job: %.64s", u->user);
    /* the directory goes into a command line systemd parses (ExecStartPre):
     * no quoting, specifiers or variables in it */
    if (strpbrk(u->directory, " \t\n\"'\\%$;"))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "a job unit's directory may hold no blank, quote, '\\', '%%', '$' "
                             "or ';': %.80s",
                             u->directory);
    if (u->give_directory && !u->user)
        return acc_error_set(err, ACC_ERR_INVALID, "a job directory is given to an account only");
    /* each option below fits opt whole: a cut one could name another
     * directory (a prefix of this one) to a root chown */
    if (strlen(u->directory) >= PATH_MAX || (u->user && strlen(u->user) > 64) ||
        (u->description && strlen(u->description) > 256) || len > 256)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "a job unit's name, description, account or directory is too long");
    char opt[PATH_MAX + 512];
    bool ok = acc_argv_push(out, "systemd-run");
    snprintf(opt, sizeof opt, "--unit=%s", u->name);
    ok = ok && acc_argv_push(out, opt);
    if (u->description) {
        snprintf(opt, sizeof opt, "--description=%s", u->description);
        ok = ok && acc_argv_push(out, opt);
    }
    ok = ok && acc_argv_push(out, "--slice=" ACC_LAUNCH_UNIT_SLICE) &&
         acc_argv_push(out, "--collect") && acc_argv_push(out, "--quiet");
    snprintf(opt, sizeof opt, "--working-directory=%s", u->directory);
    ok = ok && acc_argv_push(out, opt);
    if (u->user) {
        snprintf(opt, sizeof opt, "--uid=%s", u->user);
        ok = ok && acc_argv_push(out, opt);
    }
    /* systemd stops the whole unit: SIGTERM to every process of its cgroup,
     * SIGKILL to what is left after the grace period */
    /* (0 would be no time limit at all to systemd) */
    snprintf(opt, sizeof opt, "--property=TimeoutStopSec=%u",
             u->stop_timeout ? u->stop_timeout : 1);
    ok = ok && acc_argv_push(out, opt);
    if (u->give_directory) {
        /* '+': with full privileges, before the switch to the account */
        snprintf(opt, sizeof opt, "--property=ExecStartPre=+/bin/chown -- %s: %s", u->user,
                 u->directory);
        ok = ok && acc_argv_push(out, opt);
    }
    for (size_t i = 0; ok && i < u->n_env; i++) {
        if (!u->env[i])
            continue;
        if (!env_ok(u->env[i])) {
            acc_argv_release(out);
            return acc_error_set(err, ACC_ERR_INVALID, "not a variable for a job: %.64s",
                                 u->env[i]);
        }
        ok = acc_argv_push(out, "--setenv") && acc_argv_push(out, u->env[i]);
    }
    ok = ok && acc_argv_push(out, "--");
    for (size_t i = 0; ok && cmd[i]; i++) {
        char *word = dollars_doubled(cmd[i]);
        ok = word && acc_argv_push(out, word);
        free(word);
    }
    if (!ok) {
        acc_argv_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    return ACC_OK;
}

/* Runs systemd-run or systemctl; ACC_OK when it exited with 0, *out its
 * output then (free()). */
static acc_err run_systemd(const char *const *argv, char **out, struct acc_error *err)
{
    struct acc_proc_result res;
    acc_err rc = acc_proc_run(argv, NULL, NULL, UNIT_TIMEOUT_MS, 4096, &res, err);
    if (rc)
        return rc;
    if (res.status != 0) {
        rc = acc_error_set(err, ACC_ERR_IO, "%s failed (exit status %d): %s", argv[0], res.status,
                           acc_proc_said(&res));
    } else if (out) {
        *out = res.out;
        res.out = NULL;
    }
    acc_proc_result_release(&res);
    return rc;
}

acc_err acc_launcher_unit_start(const struct acc_launch_unit *u, const char *const *cmd, pid_t *pid,
                                struct acc_error *err)
{
    struct acc_argv argv;
    acc_err rc = acc_launch_unit_command(u, cmd, &argv, err);
    if (rc)
        return rc;
    rc = run_systemd((const char *const *)argv.v, NULL, err);
    acc_argv_release(&argv);
    if (rc)
        return rc;
    /* Its main process: the wrapper, whose process group is the job's. 0
     * when it already ended (and the unit is gone with --collect). */
    const char *show[] = {"systemctl", "show", "--property=MainPID", "--value", u->name, NULL};
    char *text = NULL;
    *pid = 0;
    if (run_systemd(show, &text, err) == ACC_OK) {
        long v = strtol(text, NULL, 10);
        *pid = v > 0 && v <= INT_MAX ? (pid_t)v : 0;
    } else {
        acc_log_warn("job unit %s: its main process is unknown: %s", u->name, err->msg);
    }
    free(text);
    return ACC_OK;
}

acc_err acc_launcher_unit_kill(const char *unit, const char *signal, struct acc_error *err)
{
    char sig[32];
    snprintf(sig, sizeof sig, "--signal=%s", signal);
    const char *argv[] = {"systemctl", "kill", sig, "--", unit, NULL};
    return run_systemd(argv, NULL, err);
}

bool acc_launcher_unit_active(const char *unit)
{
    const char *argv[] = {"systemctl", "show", "--property=ActiveState", "--value", "--",
                          unit,        NULL};
    char *state = NULL;
    struct acc_error err;
    if (run_systemd(argv, &state, &err)) {
        /* systemd did not answer: the job is taken to run on, asked again */
        acc_log_warn("job unit %s: %s", unit, err.msg);
        return true;
    }
    state[strcspn(state, "\n")] = '\0';
    /* inactive, failed, or unknown (collected): gone */
    bool active = strcmp(state, "active") == 0 || strcmp(state, "activating") == 0 ||
                  strcmp(state, "deactivating") == 0 || strcmp(state, "reloading") == 0;
    free(state);
    return active;
}

bool acc_launcher_unit_find(const char *id, char *out, size_t size)
{
    char pattern[96];
    snprintf(pattern, sizeof pattern, "accord-job-%s-*.service", id);
    const char *argv[] = {"systemctl",  "list-units", "--all", "--plain", "--no-legend",
                          "--no-pager", "--",         pattern, NULL};
    char *text = NULL;
    struct acc_error err;
    if (run_systemd(argv, &text, &err))
        return false;
    /* "accord-job-ID-N.service loaded active running DESCRIPTION": the first */
    size_t len = strcspn(text, " \t\n");
    bool found = len > 0 && len < size;
    if (found) {
        memcpy(out, text, len);
        out[len] = '\0';
    }
    free(text);
    return found;
}
