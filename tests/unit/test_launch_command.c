/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_command.c - the hosts each component of an agreement gets
 * (hosts.c), the mpiexec.hydra command that starts it (hydra.c), and the
 * [launch] settings; a suite of test_launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "testutil.h"

/* -------------------------------------------------------- hosts (hosts.c) */

static const char plan_ini[] = "[launch]\n"
                               "router_port = 40000\n"
                               "[site alpha]\n"
                               "adapter = sim-batch\n"
                               "nodes = 4\n"
                               "hosts = a[01-03],a-extra\n"
                               "contact = alpha.example.org:2119/jobmanager-slurm\n"
                               "[site beta]\n"
                               "adapter = sim-batch\n"
                               "nodes = 3\n";

static void plan_agreement(struct acc_agreement *a, struct acc_alloc_component *c)
{
    memset(a, 0, sizeof *a);
    strcpy(a->id, "abcdefghijklmnop");
    a->comps = c;
    a->n_comps = 3;
    memset(c, 0, 3 * sizeof *c);
    c[0] = (struct acc_alloc_component){.name = "one", .site = "alpha", .nodes = 2, .ppn = 1};
    c[1] = (struct acc_alloc_component){.name = "two", .site = "alpha", .nodes = 2, .ppn = 3};
    c[2] = (struct acc_alloc_component){.name = "three", .site = "beta", .nodes = 3, .ppn = 1};
}

static void test_plan_hosts(void)
{
    struct acc_config cfg;
    ACC_ASSERT_OK(acc_config_load_string(plan_ini, "test", &cfg, NULL));
    struct acc_agreement a;
    struct acc_alloc_component c[3];
    plan_agreement(&a, c);
    struct acc_launch_hosts p;
    ACC_ASSERT_OK(acc_launch_hosts_build(&a, &cfg, "/jobs/x", &p, NULL));
    CU_ASSERT_EQUAL(p.n_comps, 3);
    CU_ASSERT_EQUAL(p.router_port, 40000);
    CU_ASSERT_STRING_EQUAL(p.directory, "/jobs/x");
    /* Components on one site take the next free names of its list. */
    CU_ASSERT_STRING_EQUAL(p.comps[0].hosts[0], "a01");
    CU_ASSERT_STRING_EQUAL(p.comps[0].hosts[1], "a02");
    CU_ASSERT_STRING_EQUAL(p.comps[1].hosts[0], "a03");
    CU_ASSERT_STRING_EQUAL(p.comps[1].hosts[1], "a-extra");
    CU_ASSERT_STRING_EQUAL(p.comps[0].contact, "alpha.example.org:2119/jobmanager-slurm");
    /* Without a list: SITE-n1..; the contact is the site's name. */
    CU_ASSERT_EQUAL(p.comps[2].n_hosts, 3);
    CU_ASSERT_STRING_EQUAL(p.comps[2].hosts[2], "beta-n3");
    CU_ASSERT_STRING_EQUAL(p.comps[2].contact, "beta");
    acc_launch_hosts_release(&p);

    /* Names the reservation reports win, as they are (Slurm's nodes). */
    c[2].node_names = "node7, node9,node12";
    ACC_ASSERT_OK(acc_launch_hosts_build(&a, &cfg, NULL, &p, NULL));
    CU_ASSERT_STRING_EQUAL(p.comps[2].hosts[0], "node7");
    CU_ASSERT_STRING_EQUAL(p.comps[2].hosts[1], "node9");
    CU_ASSERT_STRING_EQUAL(p.comps[2].hosts[2], "node12");
    acc_launch_hosts_release(&p);

    /* Two components on one site share its one reservation's names. */
    c[0].node_names = c[1].node_names = "r1,r2,r3,r4";
    ACC_ASSERT_OK(acc_launch_hosts_build(&a, &cfg, NULL, &p, NULL));
    CU_ASSERT_STRING_EQUAL(p.comps[0].hosts[1], "r2");
    CU_ASSERT_STRING_EQUAL(p.comps[1].hosts[0], "r3");
    CU_ASSERT_STRING_EQUAL(p.comps[1].hosts[1], "r4");
    acc_launch_hosts_release(&p);
    c[0].node_names = c[1].node_names = NULL;

    /* Too few names: refused, with the site and component named. */
    c[2].node_names = "node7";
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_launch_hosts_build(&a, &cfg, NULL, &p, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site beta: component three needs 3 hosts"));
    c[2].node_names = NULL;
    c[1].nodes = 3; /* alpha's list has 4 names; 2 + 3 do not fit */
    CU_ASSERT_EQUAL(acc_launch_hosts_build(&a, &cfg, NULL, &p, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "host list names only 2"));
    acc_config_release(&cfg);
}

/* ----------------------------------------------------- command (hydra.c) */

static char *argv_line(const struct acc_argv *v)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_launch_quote_argv(v, &b);
    return acc_buf_detach(&b, NULL);
}

/* What the command tests share: accordd's configuration, the agreement of
 * plan_agreement with a program for every component, and its hosts. */
struct command_case {
    struct acc_config cfg;
    struct acc_agreement a;
    struct acc_alloc_component c[3];
    char *args[3];
    struct acc_launch_hosts p;
};

/* MetaMPICH style with the defaults of [launch]: one MPMD segment per
 * component, every host in one -hosts list, arguments quoted. */
static void command_metampich(struct command_case *k)
{
    ACC_ASSERT_OK(acc_config_load_string(plan_ini, "test", &k->cfg, NULL));
    plan_agreement(&k->a, k->c);
    k->args[0] = "--steps=5";
    k->args[1] = "two words";
    k->args[2] = "it's";
    for (int i = 0; i < 3; i++)
        k->c[i].executable = "/opt/bin/prog";
    k->c[1].args = k->args;
    k->c[1].n_args = 3;
    ACC_ASSERT_OK(acc_launch_hosts_build(&k->a, &k->cfg, "/jobs/x", &k->p, NULL));

    struct acc_argv v;
    ACC_ASSERT_OK(acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_METAMPICH, "/jobs/x/m.conf",
                                     &v, NULL));
    CU_ASSERT_PTR_NULL(v.v[v.n]);
    char *line = argv_line(&v);
    CU_ASSERT_STRING_EQUAL(
        line,
        "mpiexec.hydra -launcher fork -genv ACCORD_AGREEMENT abcdefghijklmnop "
        "-genv ACCORD_LAUNCH_DESCRIPTION /jobs/x/m.conf -genv METAMPICH_CONFIG /jobs/x/m.conf "
        "-hosts a01:1,a02:1,a03:3,a-extra:3,beta-n1:1,beta-n2:1,beta-n3:1 "
        "-n 2 -env ACCORD_COMPONENT one -env METAMPICH_METAHOST one /opt/bin/prog : "
        "-n 6 -env ACCORD_COMPONENT two -env METAMPICH_METAHOST two /opt/bin/prog "
        "--steps=5 'two words' 'it'\\''s' : "
        "-n 3 -env ACCORD_COMPONENT three -env METAMPICH_METAHOST three /opt/bin/prog");
    free(line);
    /* The argument vector itself carries the words unquoted. */
    bool found = false;
    for (size_t i = 0; i < v.n; i++)
        found |= strcmp(v.v[i], "two words") == 0;
    CU_ASSERT_TRUE(found);
    acc_argv_release(&v);
}

/* MPICH-G2 style, with the launcher options and environment of [launch]. */
static void command_mpich_g2(struct command_case *k)
{
    acc_config_release(&k->cfg);
    ACC_ASSERT_OK(acc_config_load_string("[launch]\n"
                                         "mpiexec = /usr/bin/mpiexec.hydra\n"
                                         "launcher = ssh\n"
                                         "launcher_exec = /opt/nsssh\n"
                                         "localhost = 10.0.0.1\n"
                                         "env = UCX_TLS=tcp\n"
                                         "env = EMPTY=\n"
                                         "[site alpha]\nadapter = sim-batch\nnodes = 4\n"
                                         "[site beta]\nadapter = sim-batch\nnodes = 3\n",
                                         "test", &k->cfg, NULL));
    k->c[1].n_args = 0;
    acc_launch_hosts_release(&k->p);
    ACC_ASSERT_OK(acc_launch_hosts_build(&k->a, &k->cfg, "/jobs/x", &k->p, NULL));
    struct acc_argv v;
    ACC_ASSERT_OK(acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_MPICH_G2, NULL, &v, NULL));
    char *line = argv_line(&v);
    CU_ASSERT_STRING_EQUAL(
        line, "/usr/bin/mpiexec.hydra -launcher ssh -launcher-exec /opt/nsssh "
              "-localhost 10.0.0.1 -genv UCX_TLS tcp -genv EMPTY '' "
              "-genv ACCORD_AGREEMENT abcdefghijklmnop "
              "-hosts alpha-n1:1,alpha-n2:1,alpha-n3:3,alpha-n4:3,beta-n1:1,beta-n2:1,beta-n3:1 "
              "-n 2 -env ACCORD_COMPONENT one -env GLOBUS_DUROC_SUBJOB_INDEX 0 /opt/bin/prog : "
              "-n 6 -env ACCORD_COMPONENT two -env GLOBUS_DUROC_SUBJOB_INDEX 1 /opt/bin/prog : "
              "-n 3 -env ACCORD_COMPONENT three -env GLOBUS_DUROC_SUBJOB_INDEX 2 /opt/bin/prog");
    free(line);
    acc_argv_release(&v);
}

/* What mpiexec cannot take is refused, naming the component. */
static void command_refusals(struct command_case *k)
{
    struct acc_argv v;
    struct acc_error err;
    struct acc_alloc_component *c = k->c;
    char *colon[] = {":"};
    c[2].args = colon;
    c[2].n_args = 1;
    CU_ASSERT_EQUAL(acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_METAMPICH, NULL, &v, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "component three"));
    c[2].n_args = 0;
    c[0].executable = NULL;
    CU_ASSERT_EQUAL(acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_METAMPICH, NULL, &v, &err),
                    ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "component one names no executable"));
    /* An executable mpiexec would read as its own option or as the end of
     * a segment: the plan is refused, nothing is built. */
    static const struct {
        const char *exe, *why;
    } words[] = {
        {"-genv", "option"},  {":", "separator"}, {"bin/prog", "absolute path"},
        {"my prog", "blank"}, {"", "empty"},      {"/opt/a\nb", "control character"},
    };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        c[0].executable = (char *)words[i].exe;
        memset(&v, 0xa5, sizeof v);
        CU_ASSERT_EQUAL(
            acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_METAMPICH, NULL, &v, &err),
            ACC_ERR_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "component one"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words[i].why));
        CU_ASSERT_EQUAL(v.n, 0);
        CU_ASSERT_PTR_NULL(v.v);
    }
    c[0].executable = (char *)"prog";
    ACC_ASSERT_OK(acc_launch_command(&k->p, &k->cfg.launch, ACC_LAUNCH_METAMPICH, NULL, &v, &err));
    acc_argv_release(&v);
}

static void test_command(void)
{
    struct command_case k;
    memset(&k, 0, sizeof k);
    command_metampich(&k);
    command_mpich_g2(&k);
    command_refusals(&k);
    acc_launch_hosts_release(&k.p);
    acc_config_release(&k.cfg);
}

static void test_config_launch(void)
{
    static const char *const bad[] = {
        "[launch]\nenv = NOEQUALS\n",     "[launch]\nenv = 1BAD=x\n",
        "[launch]\ngrace = soon\n",       "[launch]\noutput_limit = -1\n",
        "[launch]\nrouter_port = 80\n",   "[launch]\nlauncher = a b\n",
        "[launch]\nmpiexec =\n",          "[launch]\nbogus = 1\n",
        "[site alpha]\nhosts = a[3-1]\n", "[site alpha]\ncontact = \"x\"\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char ini[256];
        snprintf(ini, sizeof ini, "%s[site alpha]\nadapter = sim-batch\nnodes = 4\n", bad[i]);
        struct acc_config cfg;
        struct acc_error err;
        CU_ASSERT_EQUAL(acc_config_load_string(ini, "t", &cfg, &err), ACC_ERR_CONFIG);
    }
    struct acc_config cfg;
    ACC_ASSERT_OK(
        acc_config_load_string("[site alpha]\nadapter = sim-batch\nnodes = 4\n", "t", &cfg, NULL));
    CU_ASSERT_FALSE(cfg.launch.enabled); /* on only where the operator says so */
    CU_ASSERT_STRING_EQUAL(cfg.launch.mpiexec, "mpiexec.hydra");
    CU_ASSERT_STRING_EQUAL(cfg.launch.launcher, "fork");
    CU_ASSERT_EQUAL(cfg.launch.grace, 10);
    CU_ASSERT_EQUAL(cfg.launch.output_limit, 1024 * 1024);
    CU_ASSERT_PTR_NULL(cfg.launch.directory);
    acc_config_release(&cfg);
    /* The embedded testbed launches on this machine. */
    ACC_ASSERT_OK(acc_config_embedded(&cfg, NULL));
    CU_ASSERT_TRUE(cfg.launch.enabled);
    acc_config_release(&cfg);
    /* A host list must name every node of its site. */
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_config_load_string("[site a]\nadapter = sim-batch\nnodes = 4\n"
                                           "hosts = a[1-3]\n",
                                           "t", &cfg, &err),
                    ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[site a] hosts names 3 hosts for its 4 nodes"));
    CU_ASSERT_EQUAL(acc_config_load_string("[site a]\nadapter = sim-batch\nnodes = 4\n"
                                           "launch = srun\n",
                                           "t", &cfg, &err),
                    ACC_ERR_CONFIG);
}

const struct acc_test_case acc_launch_command_tests[] = {
    {"hosts of the components", test_plan_hosts},
    {"the mpiexec.hydra command", test_command},
    {"[launch] settings", test_config_launch},
    {NULL, NULL},
};
