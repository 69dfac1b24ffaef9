/* SPDX-License-Identifier: Apache-2.0 */
/* wal_bench.c - the size of accordd's write-ahead log under sustained load
 * (issue 9's benchmark: WAL <= 64 MB throughout 100,000 agreements).  Prints,
 * does not judge; tests/integration/test_wal.c is the test.
 *
 * Starts the real accordd (the default wal_limit, 64 MiB, unless a second
 * argument gives one), posts N offers from 16 clients while 2 more read
 * agreements back, samples the -wal file every 2 ms, and prints the largest
 * size seen and the database's size.
 *
 * Usage: accord_wal_bench [agreements, default 100000] [wal_limit bytes] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "daemon.h"
#include "wal_load.h"

#define POSTERS 16
#define READERS 2

static int OFFERS = 100000;

static char base[64];
static char dir[64], db[256], wal[280], ini[256];

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        char *end;
        long n = strtol(argv[1], &end, 10);
        if (*end || n <= 0 || n > 100000000) {
            fprintf(stderr, "usage: accord_wal_bench [agreements] [wal_limit bytes]\n");
            return 2;
        }
        OFFERS = (int)n;
    }
    char limit[64] = "";
    if (argc > 2)
        snprintf(limit, sizeof limit, "wal_limit = %s\n", argv[2]);
    snprintf(dir, sizeof dir, "/tmp/accord-walbench-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    snprintf(db, sizeof db, "%s/wal.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(ini, sizeof ini, "%s/wal.ini", dir);
    FILE *f = fopen(ini, "w");
    if (!f)
        return 2;
    fprintf(f, wal_load_config, limit);
    fclose(f);
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    if (pid <= 0) {
        fprintf(stderr, "accordd did not start\n");
        return 1;
    }
    struct wal_load w = {
        .base = base, .wal = wal, .posters = POSTERS, .readers = READERS, .offers = OFFERS};
    wal_load_run(&w);
    printf("%d agreements (%d failed) in %.1f s, %.0f/s; largest -wal %.1f MB (limit %s); "
           "database %.1f MB\n",
           w.created, w.failed, w.seconds, w.created / w.seconds, (double)w.wal_max / 1e6,
           argc > 2 ? argv[2] : "default 64 MiB", (double)file_size(db) / 1e6);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
