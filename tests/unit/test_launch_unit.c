/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_unit.c - the systemd-run command that starts a job in a
 * transient unit of its own (server/launch/launcher_unit.c): its name, its
 * every option, '$' kept from systemd's expansion, and each bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "launch.h"
#include "testutil.h"

static const char *const cmd[] = {
    "/bin/sh", "-c",  "limit=$1; shift", "accord-job", "1048576", "mpiexec.hydra", "-n", "1",
    "prog",    "a b", "$HOME",           NULL};

/* The words of out joined by '|', for one comparison. */
static const char *joined(const struct acc_argv *a)
{
    static char buf[2048];
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->n; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", i ? "|" : "", a->v[i]);
    return buf;
}

static void test_name(void)
{
    char name[96];
    CU_ASSERT_TRUE(acc_launch_unit_name("7lx2eapv3xano6ql", 1796556411, name, sizeof name));
    CU_ASSERT_STRING_EQUAL(name, "accord-job-7lx2eapv3xano6ql-1796556411.service");
    CU_ASSERT_FALSE(acc_launch_unit_name("", 1, name, sizeof name));
    CU_ASSERT_FALSE(acc_launch_unit_name("ABC", 1, name, sizeof name));
    CU_ASSERT_FALSE(acc_launch_unit_name("a-b", 1, name, sizeof name));
    CU_ASSERT_FALSE(acc_launch_unit_name("a/../b", 1, name, sizeof name));
    CU_ASSERT_FALSE(acc_launch_unit_name("abc", -1, name, sizeof name));
    CU_ASSERT_FALSE(acc_launch_unit_name("abc", 1, name, 20)); /* does not fit */
    CU_ASSERT_FALSE(acc_launch_unit_name(NULL, 1, name, sizeof name));
}

static void test_command(void)
{
    const char *env[] = {"PATH=/usr/lib/accord:/usr/bin:/bin", NULL,
                         "MPIEXEC_PORT_RANGE=7000:7100"};
    struct acc_launch_unit u = {.name = "accord-job-abc-42.service",
                                .description = "Accord job of agreement abc",
                                .user = "accordjob",
                                .directory = "/var/lib/accord/accord-jobs/abc",
                                .env = env,
                                .n_env = 3,
                                .stop_timeout = 10,
                                .give_directory = true};
    struct acc_argv a;
    struct acc_error err;
    ACC_ASSERT_OK(acc_launch_unit_command(&u, cmd, &a, &err));
    CU_ASSERT_STRING_EQUAL(
        joined(&a),
        "systemd-run|--unit=accord-job-abc-42.service|--description=Accord job of agreement abc|"
        "--slice=accord-jobs.slice|--collect|--quiet|"
        "--working-directory=/var/lib/accord/accord-jobs/abc|--uid=accordjob|"
        "--property=TimeoutStopSec=10|"
        "--property=ExecStartPre=+/bin/chown -- accordjob: /var/lib/accord/accord-jobs/abc|"
        "--setenv|PATH=/usr/lib/accord:/usr/bin:/bin|--setenv|MPIEXEC_PORT_RANGE=7000:7100|--|"
        "/bin/sh|-c|limit=$$1; shift|accord-job|1048576|mpiexec.hydra|-n|1|prog|a b|$$HOME");
    CU_ASSERT_PTR_NULL(a.v[a.n]);
    acc_argv_release(&a);

    /* accordd's own account: no --uid, nothing given away */
    u.user = NULL;
    u.give_directory = false;
    u.description = NULL;
    u.n_env = 0;
    ACC_ASSERT_OK(acc_launch_unit_command(&u, cmd, &a, &err));
    CU_ASSERT_PTR_NULL(strstr(joined(&a), "--uid"));
    CU_ASSERT_PTR_NULL(strstr(joined(&a), "ExecStartPre"));
    CU_ASSERT_PTR_NULL(strstr(joined(&a), "--description"));
    CU_ASSERT_PTR_NOT_NULL(strstr(joined(&a), "|--|/bin/sh|-c|"));
    acc_argv_release(&a);

    /* no grace: still a time limit (0 is none to systemd) */
    u.stop_timeout = 0;
    ACC_ASSERT_OK(acc_launch_unit_command(&u, cmd, &a, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(joined(&a), "|--property=TimeoutStopSec=1|"));
    acc_argv_release(&a);
}

static void expect_invalid(const struct acc_launch_unit *u, const char *const *c, const char *what)
{
    struct acc_argv a;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_launch_unit_command(u, c, &a, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
    CU_ASSERT_EQUAL(a.n, 0);
    CU_ASSERT_PTR_NULL(a.v);
}

static void test_bad(void)
{
    const char *env[] = {"1X=y"};
    const char *const relative[] = {"sh", "-c", "true", NULL};
    const char *const none[] = {NULL};
    struct acc_launch_unit good = {.name = "accord-job-abc-1.service",
                                   .user = "alice",
                                   .directory = "/srv/jobs/abc",
                                   .stop_timeout = 5};
    struct acc_launch_unit u = good;
    u.name = "sshd.service";
    expect_invalid(&u, cmd, "not a job unit name");
    u.name = "accord-job-abc-1.scope";
    expect_invalid(&u, cmd, "not a job unit name");
    u.name = "accord-job-a/b-1.service";
    expect_invalid(&u, cmd, "not a job unit name");
    u.name = NULL;
    expect_invalid(&u, cmd, "not a job unit name");
    u = good;
    u.user = "root";
    expect_invalid(&u, cmd, "not an account for a job");
    u.user = "al ice";
    expect_invalid(&u, cmd, "not an account for a job");
    u.user = "";
    expect_invalid(&u, cmd, "not an account for a job");
    u = good;
    u.directory = "jobs/abc";
    expect_invalid(&u, cmd, "absolute directory");
    u.directory = "/srv/my jobs/abc";
    expect_invalid(&u, cmd, "may hold no blank");
    u.directory = "/srv/%h/abc";
    expect_invalid(&u, cmd, "may hold no blank");
    static char deep[PATH_MAX + 8]; /* longer than an option may carry whole */
    memset(deep, 'd', sizeof deep - 1);
    deep[0] = '/';
    u.directory = deep;
    expect_invalid(&u, cmd, "too long");
    u = good;
    u.user = NULL;
    u.give_directory = true;
    expect_invalid(&u, cmd, "given to an account only");
    u = good;
    expect_invalid(&u, relative, "absolute path");
    expect_invalid(&u, none, "absolute path");
    expect_invalid(&u, NULL, "absolute path");
    u.env = env;
    u.n_env = 1;
    expect_invalid(&u, cmd, "not a variable for a job");
}

static const struct acc_test_case tests[] = {
    {"the unit's name", test_name},
    {"the systemd-run command", test_command},
    {"bad input", test_bad},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"launch unit", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
