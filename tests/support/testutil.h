/* SPDX-License-Identifier: Apache-2.0 */
/* testutil.h - shared by the test programs. */
#ifndef ACC_TESTUTIL_H
#define ACC_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct acc_test_case {
    const char *name;
    void (*fn)(void);
};

struct acc_test_suite {
    const char *name;
    int (*init)(void);
    int (*cleanup)(void);
    const struct acc_test_case *tests;
};

/* Each test program defines this, ending with an entry whose name is NULL. */
extern const struct acc_test_suite acc_test_suites[];

#define ACC_ASSERT_OK(expr) CU_ASSERT_EQUAL_FATAL((expr), ACC_OK)

/* A whole file, NUL-terminated (len, if given, without the NUL); NULL when
 * it cannot be read.  free() it. */
char *acc_test_slurp(const char *path, size_t *len);

/* A fresh temporary directory for one test program; removed at exit. */
const char *acc_test_tmpdir(void);

/* The account a test's launched jobs run as: NULL when the tests run
 * unprivileged (the jobs run as the test's own user), else "nobody" (a job
 * never runs as root; acc_test_tmpdir is then opened for it to enter). */
const char *acc_test_job_account(void);

/* A directory the job account may run programs from, holding copies of
 * the given programs (NULL-terminated paths) when the tests run as root
 * (the build tree may be closed to others); else dir itself. */
const char *acc_test_job_bin(const char *dir, const char *const *programs);

/* Where a test keeps a database named name: with ACCORD_TEST_DB_URL set (a
 * PostgreSQL URL, tests/pg), a fresh database of that server made for this
 * program (t_NAME_PID, dropped first if there); else the file NAME.db in
 * acc_test_tmpdir().  Into out; false when it cannot be made. */
bool acc_test_db(const char *name, char *out, size_t size);
/* Whether the tests run against PostgreSQL (ACCORD_TEST_DB_URL is set). */
bool acc_test_db_is_pg(void);
/* A signing key pair (RSA, self-signed), made once per program in
 * acc_test_tmpdir() with openssl: a service on PostgreSQL needs [signing],
 * there being no directory beside a URL for accordd to make its own pair
 * in.  false when it cannot be made. */
bool acc_test_signing_pair(const char **key, const char **cert);
/* The [signing] section of that pair when the tests run against
 * PostgreSQL, else "" (accordd makes its pair beside the file); NULL when
 * the pair cannot be made. */
const char *acc_test_db_signing(void);

#endif
