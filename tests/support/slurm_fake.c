/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_fake.c - the fake Slurm of test_slurm's parts (see slurm_fake.h). */
#include "slurm_fake.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http_client.h" /* read_file */
#include "testutil.h"

char scenario[256];
char conf[256];

void scene(const char *name)
{
    snprintf(scenario, sizeof scenario, "%s/%s", acc_test_tmpdir(), name);
    mkdir(scenario, 0755);
    setenv("FAKE_SLURM", scenario, 1);
}

void put(const char *file, const char *fmt, ...)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scenario, file);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

char *calls(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/calls", scenario);
    char *c = read_file(path, NULL);
    return c ? c : strdup("");
}

struct acc_adapter *open_slurm(const char *timeout)
{
    struct acc_kv settings[] = {
        {"slurm_conf", conf},
        {"bin_dir", ACC_SOURCE_DIR "/tests/slurm/fake"},
        {"timeout", timeout ? timeout : "PT10S"},
    };
    struct acc_adapter_env env = {.name = "sitea",
                                  .section = "[site sitea]",
                                  .settings = settings,
                                  .n_settings = 3,
                                  .nodes = 8};
    struct acc_adapter *ad = NULL;
    struct acc_error err;
    if (acc_adapter_open(acc_adapter_kind_find("slurm"), &env, &ad, &err))
        fprintf(stderr, "open: %s\n", err.msg);
    return ad;
}
