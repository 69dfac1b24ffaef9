/* SPDX-License-Identifier: Apache-2.0 */
/* test_db_lock.c - one database, one daemon: the real accordd started a
 * second time on the database of a running one refuses to start, naming the
 * database and the first one's pid, and touches nothing of it (no recovery
 * that would release the first one's bookings); so does one on another
 * database whose simulated site keeps its calendar in a file the first one
 * holds, and one on a hard link of the database (another name of the same
 * file, with a lock file of its own beside it), naming the name the first
 * one has it by.  The lock goes with its holder, stopped or killed.
 *
 * Defect: two accordd on one database both ran; 2 of 8 offers for 100 of
 * caesar's 128 nodes in the same hour were both agreed, and the calendar
 * kept "peak 200, capacity 128" across a restart. */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"
#include "testutil.h"

static char db[256], db2[256], ini[256], ini_cal[256], base[64];

static const char config[] = "[server]\n"
                             "allow_control = yes\n"
                             "[site alpha]\n"
                             "adapter = sim-batch\n"
                             "nodes = 16\n"
                             "[site beta]\n"
                             "adapter = sim-batch\n"
                             "nodes = 16\n"
                             "[network net]\n"
                             "adapter = sim-network\n"
                             "[link alpha_beta]\n"
                             "sites = alpha beta\n"
                             "capacity = 1000\n"
                             "network = net\n";

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fputs(text, f);
    return fclose(f) ? 1 : 0;
}

static int setup(void)
{
    const char *tmp = acc_test_tmpdir();
    snprintf(db, sizeof db, "%s/one.db", tmp);
    snprintf(db2, sizeof db2, "%s/other.db", tmp);
    snprintf(ini, sizeof ini, "%s/one.ini", tmp);
    snprintf(ini_cal, sizeof ini_cal, "%s/calendar.ini", tmp);
    /* Another accordd whose site alpha keeps its calendar in the file the
     * first one's alpha uses (DB.sim-alpha). */
    char cal[600];
    snprintf(cal, sizeof cal,
             "[site alpha]\nadapter = sim-batch\nnodes = 16\ncalendar = %s.sim-alpha\n", db);
    return write_file(ini, config) || write_file(ini_cal, cal);
}

/* Runs accordd, which must not start: its exit status (-1 when it was
 * still running after 20 s, and was killed) and what it wrote into out. */
static int run_refused(const char *config_path, const char *db_path, char *out, size_t size)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl(ACCORDD_PATH, "accordd", "--config", config_path, "--db", db_path, "--listen",
              "127.0.0.1:0", "--log-level", "error", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t used = 0;
    out[0] = '\0';
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t n = read(fd[0], out + used, size - used - 1);
        if (n <= 0)
            break;
        used += (size_t)n;
        out[used] = '\0';
        if (used + 1 >= size)
            break;
    }
    close(fd[0]);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 2000 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++)
        usleep(10000);
    if (done != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *call(const char *method, const char *path, const char *body, long *status)
{
    return daemon_call(base, method, path, body, status);
}

/* Whether site alpha of the running accordd holds a booking of id. */
static bool alpha_holds(const char *id)
{
    long st;
    char *b = call("POST", "/adapters/alpha/control/bookings", "", &st);
    bool held = st == 200 && b && strstr(b, id);
    free(b);
    return held;
}

static void stop(pid_t pid, int sig)
{
    kill(pid, sig);
    int status;
    waitpid(pid, &status, 0);
}

static void test_second_accordd_refused(void)
{
    pid_t first = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(first > 0);
    long st;
    char *reply = call("POST", "/agreements", daemon_offer, &st);
    CU_ASSERT_EQUAL(st, 201);
    char *id = reply ? xml_get(reply, "/wsag:Agreement/@wsag:AgreementId") : NULL;
    free(reply);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE(alpha_holds(id));

    /* The same database: refused, the database and the holder named. */
    char out[2048], want[PATH_MAX + 700];
    CU_ASSERT_EQUAL(run_refused(ini, db, out, sizeof out), 1);
    snprintf(want, sizeof want,
             "database %s is in use by another program (pid %ld, lock file %s.lock)", db,
             (long)first, db);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    if (!strstr(out, want))
        fprintf(stderr, "\n  the second accordd said: %s\n", out);
    CU_ASSERT_PTR_NULL(strstr(out, "listening on"));

    /* Another database, but a calendar file the first one holds. */
    CU_ASSERT_EQUAL(run_refused(ini_cal, db2, out, sizeof out), 1);
    snprintf(want, sizeof want, "calendar %s.sim-alpha is in use by another program (pid %ld,", db,
             (long)first);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    if (!strstr(out, want))
        fprintf(stderr, "\n  the other accordd said: %s\n", out);

    /* A hard link of the database: refused before SQLite makes a
     * write-ahead log of its own beside the link. */
    char hard[300], side[320], real[PATH_MAX];
    snprintf(hard, sizeof hard, "%s-hard", db);
    unlink(hard);
    CU_ASSERT_EQUAL_FATAL(link(db, hard), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(db, real));
    CU_ASSERT_EQUAL(run_refused(ini, hard, out, sizeof out), 1);
    snprintf(want, sizeof want,
             "database %s is in use by another program (pid %ld, which has the same file open as "
             "%s)",
             hard, (long)first, real);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    if (!strstr(out, want))
        fprintf(stderr, "\n  the accordd on a hard link said: %s\n", out);
    snprintf(side, sizeof side, "%s-wal", hard);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
    unlink(hard);

    /* The first one serves on, its agreement and bookings untouched (the
     * second never got as far as a recovery). */
    char path[128];
    snprintf(path, sizeof path, "/agreements/%s", id);
    char *doc = call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(st, 200);
    char *state = doc ? xml_get(doc, "//co:Allocation/co:State") : NULL;
    CU_ASSERT_STRING_EQUAL(state ? state : "", "Observed");
    free(state);
    free(doc);
    CU_ASSERT_TRUE(alpha_holds(id));

    /* Stopped, it lets go: the next one starts and finds everything. */
    stop(first, SIGTERM);
    pid_t next = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(next > 0);
    CU_ASSERT_TRUE(alpha_holds(id));
    /* Killed, too: the kernel drops the lock with the process. */
    stop(next, SIGKILL);
    next = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(next > 0);
    doc = call("GET", path, NULL, &st);
    CU_ASSERT_EQUAL(st, 200);
    free(doc);
    stop(next, SIGTERM);
    free(id);
}

static const struct acc_test_case tests[] = {
    {"a second accordd on one database or calendar refuses to start", test_second_accordd_refused},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"db_lock", setup, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
