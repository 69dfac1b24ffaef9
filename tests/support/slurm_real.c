/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_real.c - the Slurm testbed's clusters for test_slurm_real's parts
 * (see slurm_real.h). */
#include "slurm_real.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

char dir[256];
char conf_a[300], conf_b[300];
struct fixture fx;

static const char *conf_of(const char *site)
{
    return strcmp(site, "sitea") == 0 ? conf_a : conf_b;
}

char *slurm(const char *site, int *status, const char *cmd, ...)
{
    const char *argv[32] = {cmd};
    int n = 1;
    va_list ap;
    va_start(ap, cmd);
    const char *a;
    while (n < 31 && (a = va_arg(ap, const char *)))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char env_conf[400];
    snprintf(env_conf, sizeof env_conf, "SLURM_CONF=%s", conf_of(site));
    const char *env[] = {env_conf, "TZ=UTC", "SLURM_TIME_FORMAT=%s", NULL};
    struct acc_proc_result r;
    struct acc_error err;
    acc_err rc = acc_proc_run(argv, env, NULL, 30000, 1 << 20, &r, &err);
    if (status)
        *status = rc ? -1 : r.status;
    size_t len = r.out_len + r.err_len + 2;
    char *all = malloc(len);
    snprintf(all, len, "%s%s", r.out, r.err);
    acc_proc_result_release(&r);
    return all;
}

void reset(void)
{
    static const char *const sites[] = {"sitea", "siteb"};
    for (int i = 0; i < 2; i++) {
        free(slurm(sites[i], NULL, "scancel", "--user=root", NULL));
        char *res = slurm(sites[i], NULL, "scontrol", "show", "reservation", "-o", NULL);
        for (char *p = res; (p = strstr(p, "ReservationName="));) {
            p += 16;
            char name[128];
            size_t k = strcspn(p, " \n");
            snprintf(name, sizeof name, "ReservationName=%.*s", (int)k, p);
            free(slurm(sites[i], NULL, "scontrol", "delete", name, NULL));
        }
        free(res);
    }
    /* Jobs take a moment to leave their nodes. */
    for (int i = 0; i < 100; i++) {
        char *a = slurm("sitea", NULL, "squeue", "-h", NULL);
        char *b = slurm("siteb", NULL, "squeue", "-h", NULL);
        bool empty = !*a && !*b;
        free(a);
        free(b);
        if (empty)
            break;
        usleep(100000);
    }
}
