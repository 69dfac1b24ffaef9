/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_real_netns.c - a meta-job across emulated sites: each
 * component in a network namespace of its own (tests/mpi/netns-sites.sh),
 * reached by Hydra through the ssh stand-in tests/mpi/nsssh, MPI traffic
 * over veth.  Root.  Part of test_launch_real (its suite "launch across
 * emulated sites"). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch_real.h"
#include "testutil.h"

/* Three sites in network namespaces of their own (tests/mpi/netns-sites.sh),
 * reached by Hydra through the ssh stand-in tests/mpi/nsssh. */
static char netns_dir[256];

static const char netns_launch_fmt[] = "launcher = ssh\n"
                                       "launcher_exec = %s/nsssh\n"
                                       "localhost = 10.78.0.1\n"
                                       "env = UCX_TLS=tcp\n"
                                       "env = LD_PRELOAD=%s\n";

static const char netns_sites[] = "[site sitea]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = sitea-n[1-4]\n"
                                  "[site siteb]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = siteb-n[1-4]\n"
                                  "[site sitec]\n"
                                  "adapter = sim-batch\n"
                                  "nodes = 4\n"
                                  "hosts = sitec-n[1-4]\n";

static int netns_script(const char *verb)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/mpi/netns-sites.sh %s %s%s", ACC_SOURCE_DIR, verb,
             netns_dir, strcmp(verb, "up") == 0 ? " sitea siteb sitec" : "");
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int lr_netns_setup(void)
{
    snprintf(netns_dir, sizeof netns_dir, "%s/netns", acc_test_tmpdir());
    snprintf(db, sizeof db, "%s/netns.db", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/netns.ini", acc_test_tmpdir());
    mkdir(netns_dir, 0755);
    if (netns_script("up") != 0) {
        fprintf(stderr, "cannot make the emulated sites (root and iproute2 are needed)\n");
        return 1;
    }
    /* The jobs run unprivileged (as nobody under root): nsssh, the UCX
     * shim and an ip that may enter the namespaces (setuid root, for the
     * job's group only; nsssh drops back to the job's account before the
     * command) are copied where they can reach them, in the test's
     * temporary directory, removed at exit. */
    static const char *const progs[] = {ACC_SOURCE_DIR "/tests/mpi/nsssh", UCX_SHIM, NULL};
    const char *bin = acc_test_job_bin(ACC_SOURCE_DIR "/tests/mpi", progs);
    bool copied = acc_test_job_account() != NULL;
    const char *shim_name = strrchr(UCX_SHIM, '/') + 1;
    char launch[1024], map[300], ip[300], cmd[1400], shim[300];
    snprintf(shim, sizeof shim, "%s/%s", bin, shim_name);
    snprintf(launch, sizeof launch, netns_launch_fmt, bin, copied ? shim : UCX_SHIM);
    snprintf(map, sizeof map, "%s/ns-map", netns_dir);
    setenv("NSSSH_MAP", map, 1); /* accordd -> mpiexec -> nsssh */
    if (copied) {
        snprintf(ip, sizeof ip, "%s/ip-netns", bin);
        snprintf(cmd, sizeof cmd,
                 "cp /usr/sbin/ip '%s' && chown root:\"$(id -g %s)\" '%s' && chmod 4750 '%s'", ip,
                 acc_test_job_account(), ip, ip);
        if (system(cmd) != 0) {
            fprintf(stderr, "cannot make the job's ip for the namespaces\n");
            return 1;
        }
        setenv("NSSSH_IP", ip, 1);
    }
    if (!lr_write_config(launch, netns_sites))
        return 1;
    accordd = lr_start();
    return accordd > 0 ? 0 : 1;
}

int lr_netns_cleanup(void)
{
    lr_stop(SIGTERM);
    return netns_script("down") == 0 ? 0 : 1;
}

static long long veth_bytes(const char *site)
{
    long long total = 0;
    static const char *const dir[] = {"rx", "tx"};
    for (int i = 0; i < 2; i++) {
        char path[160];
        snprintf(path, sizeof path, "/sys/class/net/acv-%s/statistics/%s_bytes", site, dir[i]);
        FILE *f = fopen(path, "r");
        long long v = 0;
        if (f) {
            if (fscanf(f, "%lld", &v) != 1)
                v = 0;
            fclose(f);
        }
        total += v;
    }
    return total;
}

static void test_across_namespaces(void)
{
    static const char *const sites[] = {"sitea", "siteb", "sitec"};
    long long before[3];
    for (int i = 0; i < 3; i++)
        before[i] = veth_bytes(sites[i]);
    const struct comp c[] = {
        {"flow", "sitea", 2, 1}, {"particles", "siteb", 1, 2}, {"viz", "sitec", 1, 1}};
    char *o = lr_offer("mpich-g2", 3, "PT1M", c, 3, "<co:Argument>across sites</co:Argument>");
    char *id = lr_submit(o);
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_TRUE_FATAL(lr_wait_agreement(id, "Complete", 60));
    lr_assert_exited_ok(id);
    long st;
    char *out = lr_get(id, "/launch/output", &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "RING OK ranks=5 components=flow:2,particles:2,viz:1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[across sites]"));
    /* Each component's ranks ran in its site's namespace, none in ours. */
    char mine[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", mine, sizeof mine - 1);
    mine[n > 0 ? n : 0] = '\0';
    char ns[3][64] = {"", "", ""};
    for (const char *line = out; (line = strstr(line, "rank ")); line++) {
        char comp[64], host[64], netns[64];
        if (sscanf(line, "rank %*d/%*d component %63s host %63s netns %63s", comp, host, netns) !=
            3)
            continue;
        for (int i = 0; i < 3; i++) {
            if (strcmp(comp, c[i].name) != 0)
                continue;
            CU_ASSERT_EQUAL(strncmp(host, sites[i], 5), 0);
            if (!ns[i][0])
                snprintf(ns[i], sizeof ns[i], "%s", netns);
            CU_ASSERT_STRING_EQUAL(ns[i], netns); /* one namespace per component */
        }
    }
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_TRUE(ns[i][0] != '\0');
        CU_ASSERT_STRING_NOT_EQUAL(ns[i], mine);
        for (int k = i + 1; k < 3; k++)
            CU_ASSERT_STRING_NOT_EQUAL(ns[i], ns[k]);
        /* MPI traffic really crossed each site's link */
        CU_ASSERT_TRUE(veth_bytes(sites[i]) - before[i] > 10000);
    }
    free(out);
    free(id);
}

const struct acc_test_case netns_tests[] = {
    {"components in network namespaces talk MPI over veth (ssh stand-in)", test_across_namespaces},
    {NULL, NULL},
};
