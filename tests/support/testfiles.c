/* SPDX-License-Identifier: Apache-2.0 */
#define _XOPEN_SOURCE 700 /* nftw */
/* testfiles.c - the files of a test program (testutil.h): its temporary
 * directory, whole files read, the job account's directory.  Apart from
 * cunit_main.c, so that a program of its own main (a benchmark) that uses
 * the fixture's helpers links without the CUnit suites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "testutil.h"
#include <ftw.h>
#include <unistd.h>

static char tmpdir[64];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tmpdir(void)
{
    if (tmpdir[0] && !getenv("ACCORD_KEEP_TMP"))
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *acc_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct acc_buf b = ACC_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        acc_buf_append(&b, chunk, n);
    fclose(f);
    return acc_buf_detach(&b, len);
}

const char *acc_test_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/accord-test-XXXXXX");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(rm_tmpdir);
    }
    return tmpdir;
}

const char *acc_test_job_account(void)
{
    if (geteuid() != 0)
        return NULL;
    chmod(acc_test_tmpdir(), 0711);
    return "nobody";
}

const char *acc_test_job_bin(const char *dir, const char *const *programs)
{
    static char bin[600];
    if (geteuid() != 0)
        return dir;
    snprintf(bin, sizeof bin, "%s/job-bin", acc_test_tmpdir());
    chmod(acc_test_tmpdir(), 0711);
    mkdir(bin, 0755);
    for (size_t i = 0; programs[i]; i++) {
        const char *base = strrchr(programs[i], '/');
        base = base ? base + 1 : programs[i];
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cp -f '%s' '%s/%s' && chmod 0755 '%s/%s'", programs[i], bin,
                 base, bin, base);
        if (system(cmd) != 0)
            fprintf(stderr, "acc_test_job_bin: cannot copy %s\n", programs[i]);
    }
    return bin;
}
