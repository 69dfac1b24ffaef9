/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay_real.c - accordd --replay with the real binary: a real
 * accordd books 4 of the 6 nodes of sites alpha and beta for an hour; then
 * a small SWF trace is replayed against the same configuration and
 * database.  The printed placements must go around that booking, and
 * nothing may be booked or written: every file beside the database
 * (accordd's database and the simulators' calendar files) is the same,
 * byte for byte, before and after. */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "testutil.h"
#include "timefmt.h"

static char dir[256], db[320], ini[320], swf[320];

static const char config[] = "[site alpha]\nadapter = sim-batch\nnodes = 6\n"
                             "[site beta]\nadapter = sim-batch\nnodes = 6\n"
                             "[network net]\nadapter = sim-network\n"
                             "[link ab]\nsites = alpha beta\ncapacity = 1000\nnetwork = net\n";

/* job, submit, wait, run, procs ...: 18 fields (-1 unknown). */
static const char trace[] = "; a small trace for accordd --replay\n"
                            "1 0 -1 600 4 -1 -1 4 600 -1 1 1 1 1 1 -1 -1 -1\n"
                            "2 10 -1 300 2 -1 -1 2 300 -1 1 1 1 1 1 -1 -1 -1\n"
                            "3 20 -1 300 2 -1 -1 2 300 -1 1 1 1 1 1 -1 -1 -1\n"
                            "4 30 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1\n"
                            "5 40 -1 100 7 -1 -1 7 100 -1 1 1 1 1 1 -1 -1 -1\n";

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fputs(text, f);
    return fclose(f) != 0;
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "%s/replay", acc_test_tmpdir());
    if (mkdir(dir, 0700) != 0)
        return 1;
    snprintf(db, sizeof db, "%s/accord.db", dir);
    snprintf(ini, sizeof ini, "%s/accord.ini", acc_test_tmpdir());
    snprintf(swf, sizeof swf, "%s/small.swf", acc_test_tmpdir());
    return write_file(ini, config) || write_file(swf, trace);
}

/* Every file of the database's directory: names and contents. */
struct snapshot {
    size_t n;
    char name[16][256];
    char *data[16];
    size_t len[16];
};

static void snap(struct snapshot *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d)) && s->n < 16) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(s->name[s->n], sizeof s->name[s->n], "%s", e->d_name);
        s->data[s->n] = acc_test_slurp(path, &s->len[s->n]);
        CU_ASSERT_PTR_NOT_NULL(s->data[s->n]);
        s->n++;
    }
    closedir(d);
}

static void snap_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->data[i]);
}

static void assert_same(struct snapshot *a, struct snapshot *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        size_t k = 0;
        while (k < b->n && strcmp(a->name[i], b->name[k]))
            k++;
        CU_ASSERT_TRUE_FATAL(k < b->n);
        CU_ASSERT_EQUAL(a->len[i], b->len[k]);
        CU_ASSERT_TRUE(a->len[i] == b->len[k] && memcmp(a->data[i], b->data[k], a->len[i]) == 0);
    }
}

/* Runs accordd with args after --config ini --db db; its standard output
 * (free it) and exit status. */
static int run_accordd(const char *const *args, char **out)
{
    int fd[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[16] = {"accordd", "--config", ini, "--db", db};
        size_t n = 5;
        for (size_t i = 0; args[i] && n < 15; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        execv(ACCORDD_PATH, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 16, used = 0;
    char *buf = calloc(1, cap);
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        if (poll(&p, 1, 30000) <= 0)
            break;
        ssize_t r = read(fd[0], buf + used, cap - used - 1);
        if (r <= 0)
            break;
        used += (size_t)r;
    }
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The CSV line of job i: its start (-1: not placed) and placement. */
static acc_time job_line(const char *out, int job, char *placement, size_t len)
{
    char head[16];
    snprintf(head, sizeof head, "\n%d,", job);
    const char *l = strstr(out, head);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    /* job,submit,nodes,duration_s,placement,start,... */
    const char *f = l + 1;
    for (int k = 0; k < 4; k++)
        f = strchr(f, ',') + 1;
    const char *e = strchr(f, ',');
    snprintf(placement, len, "%.*s", (int)(e - f), f);
    char start[ACC_TIME_STRLEN + 1] = "";
    snprintf(start, sizeof start, "%.20s", e + 1);
    acc_time t;
    struct acc_error err;
    return start[0] != ',' && acc_time_parse(start, &t, &err) == ACC_OK ? t : -1;
}

static void test_replay_goes_around_bookings(void)
{
    char base[128];
    pid_t pid = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    long st = 0;
    char *reply = daemon_call(base, "POST", "/agreements", daemon_offer, &st);
    const char *s = reply ? strstr(reply, "<co:Start>") : NULL;
    char from[ACC_TIME_STRLEN] = "";
    if (s)
        snprintf(from, sizeof from, "%.20s", s + strlen("<co:Start>"));
    acc_time S = 0;
    struct acc_error err;
    CU_ASSERT_EQUAL(st, 201);
    CU_ASSERT_EQUAL(acc_time_parse(from, &S, &err), ACC_OK);
    free(reply);
    /* Beside the serving accordd, which holds its database and calendars:
     * the replay only reads them (a copy), and sees the booking. */
    char *out = NULL;
    const char *args[] = {"--replay", swf, "--from", from, "--csv", NULL};
    char pl[128];
    CU_ASSERT_EQUAL(run_accordd(args, &out), 0);
    bool listed = strstr(out, "\n1,") != NULL;
    CU_ASSERT_TRUE(listed);
    if (listed) /* job_line stops the test when it is not: accordd still runs */
        CU_ASSERT_EQUAL(job_line(out, 1, pl, sizeof pl), S + 3600);
    free(out);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT_FATAL(S != 0);

    struct snapshot before, after;
    snap(&before);
    CU_ASSERT_TRUE(before.n >= 3); /* the database and the calendars of alpha, beta, net */

    CU_ASSERT_EQUAL(run_accordd(args, &out), 0);
    /* 4 nodes: 2 are free on each site until the booking ends. */
    CU_ASSERT_EQUAL(job_line(out, 1, pl, sizeof pl), S + 3600);
    CU_ASSERT_STRING_EQUAL(pl, "alpha:4");
    /* 2 nodes fit beside the booking at once: alpha, then beta. */
    CU_ASSERT_EQUAL(job_line(out, 2, pl, sizeof pl), S + 10);
    CU_ASSERT_STRING_EQUAL(pl, "alpha:2");
    CU_ASSERT_EQUAL(job_line(out, 3, pl, sizeof pl), S + 20);
    CU_ASSERT_STRING_EQUAL(pl, "beta:2");
    /* 1 node: both sites are full (4 booked + 2 replayed) until job 2 ends. */
    CU_ASSERT_EQUAL(job_line(out, 4, pl, sizeof pl), S + 310);
    CU_ASSERT_STRING_EQUAL(pl, "alpha:1");
    /* 7 nodes on one site: no site has them. */
    CU_ASSERT_EQUAL(job_line(out, 5, pl, sizeof pl), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(pl, "not placed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "#placed,4\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "#coalloc_share,0.0000\n"));
    free(out);

    /* The text form, and another policy, from now. */
    const char *text[] = {"--replay", swf, "--policy", "worst-fit", NULL};
    CU_ASSERT_EQUAL(run_accordd(text, &out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy worst-fit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "summary: 5 jobs, 4 placed, 1 not placed"));
    free(out);

    /* Bad input: a clear error, status 2, nothing printed. */
    const char *bad[][6] = {{"--replay", "/nonexistent.swf", NULL},
                            {"--replay", swf, "--policy", "nosuch", NULL},
                            {"--replay", swf, "--jobs", "0", NULL},
                            {"--replay", swf, "--from", "yesterday", NULL},
                            {"--replay", ini, NULL}, /* not an SWF trace nor a parameter file */
                            {"--csv", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(run_accordd(bad[i], &out), 2);
        CU_ASSERT_EQUAL(out[0], '\0');
        free(out);
    }

    snap(&after);
    assert_same(&before, &after);
    snap_free(&before);
    snap_free(&after);
}

static const struct acc_test_case tests[] = {
    {"replay goes around live bookings and writes nothing", test_replay_goes_around_bookings},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"replay_real", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
