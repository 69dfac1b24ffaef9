/* testutil.h - shared by the test programs. */
#ifndef ACC_TESTUTIL_H
#define ACC_TESTUTIL_H

#include <CUnit/CUnit.h>
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

#endif
