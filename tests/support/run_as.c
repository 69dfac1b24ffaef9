/* SPDX-License-Identifier: Apache-2.0 */
/* run_as.c - throwaway accounts and processes run as them (run_as.h). */
#define _GNU_SOURCE
#include "run_as.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_ACCOUNTS 8

static char accounts[MAX_ACCOUNTS][33];
static bool registered;

static void remove_all(void)
{
    for (int i = 0; i < MAX_ACCOUNTS; i++)
        acc_test_account_remove(accounts[i]);
}

void acc_test_account_remove(const char *name)
{
    if (!name || !*name)
        return;
    char cmd[128], copy[33];
    snprintf(copy, sizeof copy, "%.32s", name); /* name may be a slot below */
    snprintf(cmd, sizeof cmd, "userdel %s >/dev/null 2>&1", copy);
    if (system(cmd) == -1)
        fprintf(stderr, "userdel %s could not run\n", copy);
    for (int i = 0; i < MAX_ACCOUNTS; i++) {
        if (strcmp(accounts[i], copy) == 0)
            accounts[i][0] = '\0';
    }
}

bool acc_test_account_add(const char *name, uid_t *uid, gid_t *gid)
{
    int slot = -1;
    for (int i = 0; i < MAX_ACCOUNTS && slot < 0; i++)
        slot = accounts[i][0] ? -1 : i;
    if (slot < 0 || strlen(name) >= sizeof accounts[0])
        return false;
    if (!registered && atexit(remove_all) == 0)
        registered = true;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "useradd -M -d /nonexistent -s /usr/sbin/nologin %s", name);
    if (system(cmd) != 0) {
        fprintf(stderr, "useradd %s failed\n", name);
        return false;
    }
    snprintf(accounts[slot], sizeof accounts[slot], "%s", name);
    struct passwd *pw = getpwnam(name);
    if (!pw)
        return false;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return true;
}

pid_t acc_test_run_as(uid_t uid, gid_t gid, const char *const *prefix,
                      const struct acc_command *cmd, const char *out)
{
    /* prefix words, then setpriv (the ids), env -i (the whole environment),
     * then the command */
    size_t n = 0, cap = 16 + cmd->argc + cmd->n_env;
    for (size_t i = 0; prefix && prefix[i]; i++)
        cap++;
    char **argv = calloc(cap, sizeof *argv);
    char ru[32], rg[32];
    if (!argv)
        return -1;
    snprintf(ru, sizeof ru, "--reuid=%ld", (long)uid);
    snprintf(rg, sizeof rg, "--regid=%ld", (long)gid);
    for (size_t i = 0; prefix && prefix[i]; i++)
        argv[n++] = (char *)prefix[i];
    argv[n++] = "/usr/bin/setpriv";
    argv[n++] = ru;
    argv[n++] = rg;
    argv[n++] = "--clear-groups";
    argv[n++] = "/usr/bin/env";
    argv[n++] = "-i";
    for (size_t i = 0; i < cmd->n_env; i++)
        argv[n++] = cmd->env[i];
    for (size_t i = 0; i < cmd->argc; i++)
        argv[n++] = cmd->argv[i];
    argv[n] = NULL;
    pid_t p = fork();
    if (p == 0) {
        setpgid(0, 0);
        int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir("/") != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    free(argv);
    return p;
}

pid_t acc_test_find_process(uid_t uid, const char *comm, int ms)
{
    for (int waited = 0; waited <= ms; waited += 100) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        pid_t found = 0;
        while (d && !found && (e = readdir(d))) {
            char path[300], name[64] = "", line[256];
            if (e->d_name[0] < '1' || e->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            if (!fgets(name, sizeof name, f))
                name[0] = '\0';
            fclose(f);
            name[strcspn(name, "\n")] = '\0';
            if (strcmp(name, comm) != 0)
                continue;
            snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
            if (!(f = fopen(path, "r")))
                continue;
            long u = -1;
            while (fgets(line, sizeof line, f)) {
                if (sscanf(line, "Uid: %ld", &u) == 1)
                    break;
            }
            fclose(f);
            if (u == (long)uid)
                found = (pid_t)atol(e->d_name);
        }
        if (d)
            closedir(d);
        if (found)
            return found;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
