/* SPDX-License-Identifier: Apache-2.0 */
/* sign_util.c - what the parts of test_sign share (sign_util.h). */
#include "sign_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsig.h"
#include "http_client.h"
#include "testutil.h"
#include "xml_internal.h"

extern char **environ;

const char sites[] = "[site alpha]\nadapter = sim-batch\nnodes = 16\n"
                     "[site beta]\nadapter = sim-batch\nnodes = 16\n"
                     "[network net]\nadapter = sim-network\n"
                     "[link alpha_beta]\nsites = alpha beta\ncapacity = 1000\n"
                     "network = net\n";

/* Runs argv (NULL-terminated) with its output in a file, and waits. */
struct run run_v(const char *const *argv)
{
    struct run r = {-1, NULL};
    char path[256];
    snprintf(path, sizeof path, "%s/run.out", acc_test_tmpdir());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int st;
    if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        r.status = WEXITSTATUS(st);
    posix_spawn_file_actions_destroy(&fa);
    size_t n;
    r.out = read_file(path, &n);
    if (!r.out)
        r.out = strdup("");
    return r;
}

void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
    fclose(f);
}

int open_log(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
}

char *tmp_path(const char *name)
{
    static char p[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(p[i], sizeof p[i], "%s/%s", acc_test_tmpdir(), name);
    return p[i];
}

int sign_init(void)
{
    struct acc_error e;
    if (acc_dsig_init(&e)) {
        fprintf(stderr, "init: %s\n", e.msg);
        return 1;
    }
    return 0;
}

int sign_fini(void)
{
    acc_dsig_cleanup();
    acc_xml_cleanup();
    return 0;
}
