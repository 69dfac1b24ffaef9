/* SPDX-License-Identifier: Apache-2.0 */
/* cunit_main.c - the one main() of the CUnit test programs: runs every suite
 * the program lists in acc_test_suites[] and fails when any test failed. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    for (const struct acc_test_suite *s = acc_test_suites; s->name; s++) {
        CU_pSuite suite = CU_add_suite(s->name, s->init, s->cleanup);
        if (!suite)
            return 2;
        for (const struct acc_test_case *t = s->tests; t->name; t++) {
            /* An argument selects tests by name, for running one at a time. */
            if (argc > 1 && !strstr(t->name, argv[1]) && !strstr(s->name, argv[1]))
                continue;
            if (!CU_add_test(suite, t->name, t->fn))
                return 2;
        }
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    /* A suite whose set-up failed ran none of its tests: that fails too. */
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
                      CU_get_number_of_suites_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (run == 0) {
        fprintf(stderr, "no test ran\n");
        return 1;
    }
    return failed ? 1 : 0;
}
