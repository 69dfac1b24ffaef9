/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_manual.c - Hydra's manual launcher in accordd without
 * processes: the HYDRA_LAUNCH lines as MPICH 4.0.2 printed them, every
 * malformed form, the proxy-id to host mapping, and the [launch] keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "testutil.h"

/* What mpiexec.hydra -launcher manual -localhost 127.0.0.1 -hosts
 * hostA:2,hostB:1 -n 2 X : -n 1 Y printed here (with its trailing blanks). */
static const char measured[] =
    "HYDRA_LAUNCH: /usr/bin/hydra_pmi_proxy --control-port 127.0.0.1:39663 --rmk user "
    "--launcher manual --demux poll --pgid 0 --retries 10 --usize -2 --pmi-port 0 "
    "--gpus-per-proc -2 --proxy-id 0 \n"
    "HYDRA_LAUNCH: /usr/bin/hydra_pmi_proxy --control-port 127.0.0.1:39663 --rmk user "
    "--launcher manual --demux poll --pgid 0 --retries 10 --usize -2 --pmi-port 0 "
    "--gpus-per-proc -2 --proxy-id 1 \n"
    "HYDRA_LAUNCH_END\n";

static void test_measured(void)
{
    struct acc_manual_launch m;
    struct acc_error err;
    ACC_ASSERT_OK(acc_manual_parse(measured, strlen(measured), 2, &m, &err));
    CU_ASSERT_TRUE(m.complete);
    CU_ASSERT_EQUAL_FATAL(m.n, 2);
    CU_ASSERT_EQUAL(m.proxies[0].id, 0);
    CU_ASSERT_EQUAL(m.proxies[1].id, 1);
    CU_ASSERT_EQUAL_FATAL(m.proxies[1].argc, 21);
    CU_ASSERT_STRING_EQUAL(m.proxies[1].argv[0], "/usr/bin/hydra_pmi_proxy");
    CU_ASSERT_STRING_EQUAL(m.proxies[1].argv[1], "--control-port");
    CU_ASSERT_STRING_EQUAL(m.proxies[1].argv[2], "127.0.0.1:39663");
    CU_ASSERT_STRING_EQUAL(m.proxies[1].argv[14], "-2");
    CU_ASSERT_STRING_EQUAL(m.proxies[1].argv[20], "1");
    CU_ASSERT_PTR_NULL(m.proxies[1].argv[21]);
    acc_manual_release(&m);
}

static void test_partial(void)
{
    struct acc_manual_launch m;
    struct acc_error err;
    /* before the end: what came so far, not complete */
    size_t first = strchr(measured, '\n') - measured + 1;
    ACC_ASSERT_OK(acc_manual_parse(measured, first, 2, &m, &err));
    CU_ASSERT_FALSE(m.complete);
    CU_ASSERT_EQUAL(m.n, 1);
    acc_manual_release(&m);
    /* a line not ended yet is left for the next read */
    ACC_ASSERT_OK(acc_manual_parse(measured, first + 20, 2, &m, &err));
    CU_ASSERT_EQUAL(m.n, 1);
    acc_manual_release(&m);
    /* the end marker without its newline is not the end yet */
    ACC_ASSERT_OK(acc_manual_parse(measured, strlen(measured) - 1, 2, &m, &err));
    CU_ASSERT_FALSE(m.complete);
    CU_ASSERT_EQUAL(m.n, 2);
    acc_manual_release(&m);
    /* nothing at all */
    ACC_ASSERT_OK(acc_manual_parse("", 0, 2, &m, &err));
    CU_ASSERT_FALSE(m.complete);
    CU_ASSERT_EQUAL(m.n, 0);
    acc_manual_release(&m);
}

static void test_other_lines(void)
{
    /* warnings before, CRLF, blanks, out of order, anything after the end */
    const char text[] = "[mpiexec@x] WARNING: something\r\n"
                        "HYDRA_LAUNCH:  /p/hydra_pmi_proxy   --proxy-id 1\r\n"
                        "HYDRA_LAUNCHX: not ours --proxy-id 0\n"
                        "HYDRA_LAUNCH: /p/hydra_pmi_proxy\t--proxy-id 0\n"
                        "HYDRA_LAUNCH_END\r\n"
                        "HYDRA_LAUNCH: /p/hydra_pmi_proxy --proxy-id 0\n";
    struct acc_manual_launch m;
    struct acc_error err;
    ACC_ASSERT_OK(acc_manual_parse(text, strlen(text), 2, &m, &err));
    CU_ASSERT_TRUE(m.complete);
    CU_ASSERT_EQUAL_FATAL(m.n, 2);
    CU_ASSERT_EQUAL(m.proxies[0].id, 1);
    CU_ASSERT_EQUAL(m.proxies[1].id, 0);
    CU_ASSERT_STRING_EQUAL(m.proxies[0].argv[0], "/p/hydra_pmi_proxy");
    CU_ASSERT_EQUAL(m.proxies[0].argc, 3);
    acc_manual_release(&m);
}

static void expect_bad(const char *text, size_t n_hosts, const char *why)
{
    struct acc_manual_launch m;
    struct acc_error err;
    err.msg[0] = '\0';
    CU_ASSERT_EQUAL(acc_manual_parse(text, strlen(text), n_hosts, &m, &err), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(m.n, 0);
    CU_ASSERT_PTR_NULL(m.proxies);
    if (!strstr(err.msg, why)) {
        fprintf(stderr, "\nexpected '%s' in '%s'\n", why, err.msg);
        CU_FAIL("message does not say why");
    }
    acc_manual_release(&m);
}

static void test_bad(void)
{
    expect_bad("HYDRA_LAUNCH: /p/hydra_pmi_proxy --rmk user\n", 2, "names no --proxy-id");
    expect_bad("HYDRA_LAUNCH: --proxy-id 0\n", 2, "names no proxy to start");
    expect_bad("HYDRA_LAUNCH: \n", 2, "names no proxy to start");
    expect_bad("HYDRA_LAUNCH: p --proxy-id\n", 2, "names no --proxy-id");
    expect_bad("HYDRA_LAUNCH: p --proxy-id 2\n", 2, "not one of the 2 hosts");
    expect_bad("HYDRA_LAUNCH: p --proxy-id -1\n", 2, "not one of");
    expect_bad("HYDRA_LAUNCH: p --proxy-id x\n", 2, "not one of");
    expect_bad("HYDRA_LAUNCH: p --proxy-id 0 --proxy-id 1\n", 2, "not one of");
    expect_bad("HYDRA_LAUNCH: p --proxy-id 1\nHYDRA_LAUNCH: p --proxy-id 1\n", 2,
               "repeats --proxy-id 1");
    expect_bad("HYDRA_LAUNCH: p --proxy-id 0\nHYDRA_LAUNCH: p --proxy-id 1\n", 1,
               "more HYDRA_LAUNCH lines than the 1 hosts");
    expect_bad("HYDRA_LAUNCH: p --proxy-id 0\nHYDRA_LAUNCH_END\n", 2,
               "printed 1 HYDRA_LAUNCH lines for 2 hosts");
    expect_bad("HYDRA_LAUNCH_END\n", 1, "printed 0 HYDRA_LAUNCH lines for 1 hosts");
    expect_bad("", 0, "a manual launch of 0 hosts");
    /* too many words, too long a line */
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "HYDRA_LAUNCH: p --proxy-id 0");
    for (int i = 0; i < ACC_MANUAL_MAX_WORDS; i++)
        acc_buf_puts(&b, " w");
    acc_buf_puts(&b, "\n");
    expect_bad(acc_buf_str(&b), 1, "more than 64 words");
    acc_buf_release(&b);
    acc_buf_puts(&b, "HYDRA_LAUNCH: p --proxy-id 0 ");
    for (int i = 0; i < ACC_MANUAL_LINE_MAX; i++)
        acc_buf_putc(&b, 'x');
    acc_buf_puts(&b, "\n");
    expect_bad(acc_buf_str(&b), 1, "longer than 4096 bytes");
    acc_buf_release(&b);
}

static void test_host_map(void)
{
    char *ha[] = {"alpha-n1", "alpha-n2"}, *hb[] = {"beta-n7"};
    struct acc_launch_comp comps[] = {{.hosts = ha, .n_hosts = 2}, {.hosts = hb, .n_hosts = 1}};
    struct acc_launch_hosts p = {.comps = comps, .n_comps = 2};
    size_t c;
    const char *h;
    CU_ASSERT_TRUE(acc_manual_host(&p, 0, &c, &h));
    CU_ASSERT_EQUAL(c, 0);
    CU_ASSERT_STRING_EQUAL(h, "alpha-n1");
    CU_ASSERT_TRUE(acc_manual_host(&p, 1, &c, &h));
    CU_ASSERT_EQUAL(c, 0);
    CU_ASSERT_STRING_EQUAL(h, "alpha-n2");
    CU_ASSERT_TRUE(acc_manual_host(&p, 2, &c, &h));
    CU_ASSERT_EQUAL(c, 1);
    CU_ASSERT_STRING_EQUAL(h, "beta-n7");
    CU_ASSERT_FALSE(acc_manual_host(&p, 3, &c, &h));
}

#define SITE "[site alpha]\nadapter = sim-batch\nnodes = 4\n"

static void test_config(void)
{
    struct acc_config cfg;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[launch]\nlauncher = manual\ncontrol_address = "
                                         "10.79.0.1\ncontrol_ports = 50000:50100\n"
                                         "proxy_timeout = PT45S\n" SITE,
                                         "t", &cfg, &err) == ACC_OK
                      ? ACC_OK
                      : (fprintf(stderr, "\n%s\n", err.msg), ACC_ERR_CONFIG));
    CU_ASSERT_TRUE(acc_launch_cfg_manual(&cfg.launch));
    CU_ASSERT_STRING_EQUAL(cfg.launch.localhost, "10.79.0.1");
    CU_ASSERT_EQUAL(cfg.launch.control_port_min, 50000);
    CU_ASSERT_EQUAL(cfg.launch.control_port_max, 50100);
    CU_ASSERT_EQUAL(cfg.launch.proxy_timeout, 45);
    acc_config_release(&cfg);
    /* defaults; the old key localhost; plain seconds */
    ACC_ASSERT_OK(acc_config_load_string("[launch]\nlocalhost = 10.0.0.1\nproxy_timeout = 5\n" SITE,
                                         "t", &cfg, &err));
    CU_ASSERT_FALSE(acc_launch_cfg_manual(&cfg.launch));
    CU_ASSERT_STRING_EQUAL(cfg.launch.localhost, "10.0.0.1");
    CU_ASSERT_EQUAL(cfg.launch.control_port_min, 0);
    CU_ASSERT_EQUAL(cfg.launch.proxy_timeout, 5);
    acc_config_release(&cfg);
    ACC_ASSERT_OK(acc_config_load_string("[launch]\n" SITE, "t", &cfg, &err));
    CU_ASSERT_EQUAL(cfg.launch.proxy_timeout, 30);
    acc_config_release(&cfg);
    static const char *const bad[] = {
        "control_ports = 50000",       "control_ports = 50100:50000", "control_ports = 80:90",
        "control_ports = 50000:70000", "control_ports = a:b",         "control_ports = :5",
        "proxy_timeout = 0",           "proxy_timeout = 3601",        "proxy_timeout = soon",
        "proxy_timeout = -PT5S",       "control_address = ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char ini[256];
        snprintf(ini, sizeof ini, "[launch]\n%s\n" SITE, bad[i]);
        err.msg[0] = '\0';
        CU_ASSERT_NOT_EQUAL(acc_config_load_string(ini, "t", &cfg, &err), ACC_OK);
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(bad[i], " "), bad[i]);
        if (!strstr(err.msg, key)) {
            fprintf(stderr, "\n%s: '%s'\n", bad[i], err.msg);
            CU_FAIL("message does not name the key");
        }
    }
}

static const struct acc_test_case tests[] = {
    {"the lines MPICH 4.0.2 printed", test_measured},
    {"lines so far", test_partial},
    {"other lines, CRLF, blanks, order", test_other_lines},
    {"malformed lines", test_bad},
    {"proxy id to host", test_host_map},
    {"[launch] manual keys", test_config},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"manual launch", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
