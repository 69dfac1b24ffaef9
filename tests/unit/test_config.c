/* test_config.c - the INI configuration and the embedded testbed. */
#include <stdio.h>

#include "config.h"
#include "testutil.h"

static void test_embedded(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_embedded(&c, &err));
    CU_ASSERT_TRUE(c.embedded);
    CU_ASSERT_EQUAL(c.n_sites, 3);
    CU_ASSERT_EQUAL(acc_config_site(&c, "fzj-xd1")->nodes, 64);
    CU_ASSERT_EQUAL(acc_config_site(&c, "caesar")->nodes, 128);
    CU_ASSERT_EQUAL(acc_config_site(&c, "fh-brs")->nodes, 32);
    CU_ASSERT_EQUAL(c.n_links, 3); /* a full mesh */
    const struct acc_link_cfg *l = acc_config_link_between(&c, "fh-brs", "fzj-xd1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->capacity, 10000);
    CU_ASSERT_STRING_EQUAL(c.listen_host, "127.0.0.1");
    CU_ASSERT_EQUAL(c.listen_port, 8080);
    CU_ASSERT_STRING_EQUAL(c.db_path, "accord.db");
    CU_ASSERT_EQUAL(c.strategy, ACC_STRATEGY_INTERSECT);
    CU_ASSERT_EQUAL(c.policy.id, ACC_POLICY_EARLIEST);
    CU_ASSERT_EQUAL(c.policy_candidates, 4);
    acc_config_release(&c);
}

static void test_file_and_overrides(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/a.ini", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("; a comment\n[server]\nlisten = [::1]:9000\nmax_body = 4096\n"
          "max_attributes = 100\nmax_total_attributes = 5000\n"
          "[negotiation]\nstrategy = iterative\nhorizon = P30D\npolicy = worst-fit-distinct\n"
          "policy_candidates = 2\n"
          "[site a]\nadapter = sim-batch\nnodes = 8\nload = yes\nseed = 7\n",
          f);
    fclose(f);
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_file(path, &c, &err));
    CU_ASSERT_STRING_EQUAL(c.listen_host, "::1");
    CU_ASSERT_EQUAL(c.listen_port, 9000);
    CU_ASSERT_EQUAL(c.max_body, 4096);
    CU_ASSERT_EQUAL(c.max_attributes, 100);
    CU_ASSERT_EQUAL(c.max_total_attributes, 5000);
    CU_ASSERT_EQUAL(c.strategy, ACC_STRATEGY_ITERATIVE);
    CU_ASSERT_EQUAL(c.horizon, 30 * 86400);
    CU_ASSERT_EQUAL(c.policy.id, ACC_POLICY_WF_NOREP);
    CU_ASSERT_EQUAL(c.policy_candidates, 2);
    CU_ASSERT_EQUAL(c.sites[0].n_settings, 2); /* load and seed go to the adapter */
    ACC_ASSERT_OK(acc_config_set_listen(&c, "0.0.0.0:0", &err));
    CU_ASSERT_EQUAL(c.listen_port, 0);
    ACC_ASSERT_OK(acc_config_set_db(&c, "/tmp/x.db", &err));
    CU_ASSERT_STRING_EQUAL(c.db_path, "/tmp/x.db");
    CU_ASSERT_EQUAL(acc_config_set_listen(&c, "nonsense", &err), ACC_ERR_CONFIG);
    acc_config_release(&c);
}

static void test_errors_name_the_problem(void)
{
    static const struct {
        const char *ini, *says;
    } cases[] = {
        {"[server]\nlisten = 1.2.3.4\n[site a]\nadapter=sim-batch\nnodes=1\n", "HOST:PORT"},
        {"[server]\nbogus = 1\n[site a]\nadapter=sim-batch\nnodes=1\n", "line 2"},
        {"[site a]\nadapter=sim-batch\n", "needs nodes"},
        {"[site a]\nnodes=4\n", "needs adapter"},
        {"[site a b]\nadapter=sim-batch\nnodes=1\n", "not a valid name"},
        {"[network n]\nadapter=sim-network\n", "no [site NAME]"},
        {"[site a]\nadapter=sim-batch\nnodes=1\n[link x]\nsites = a b\ncapacity=1\n"
         "network=n\n",
         "unknown site"},
        {"[site a]\nadapter=sim-batch\nnodes=1\n[site b]\nadapter=sim-batch\nnodes=1\n"
         "[link x]\nsites = a b\ncapacity=1\n",
         "network ="},
        {"[site a]\nadapter=sim-batch\nnodes=1\n[site b]\nadapter=sim-batch\nnodes=1\n"
         "[network n]\nadapter=sim-network\n[link x]\nsites = a b\ncapacity=1\nnetwork=n\n"
         "[link y]\nsites = b a\ncapacity=1\nnetwork=n\n",
         "already joins"},
        {"[negotiation]\nstrategy = fastest\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "intersect or iterative"},
        /* FCM places flexible requests, which offers cannot make yet. */
        {"[negotiation]\npolicy = fcm\n[site a]\nadapter=sim-batch\nnodes=1\n", "worst-fit"},
        {"[negotiation]\npolicy = nearest\n[site a]\nadapter=sim-batch\nnodes=1\n", "policy"},
        {"[negotiation]\npolicy_candidates = 0\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "policy_candidates"},
        {"[negotiation]\nhorizon = PT5M\n[site a]\nadapter=sim-batch\nnodes=1\n", "PT1H"},
        {"[wrong]\nkey = 1\n", "unknown section"},
        {"[server]\nmax_attributes = 100000\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "max_attributes"},
        {"[server]\nmax_total_attributes = many\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "max_total_attributes"},
        {"[site a]\nadapter=sim-batch\nnodes=-1\n", "nodes"},
        /* Durations had no upper bound and wrapped when stored. */
        {"[server]\ntimeout = P100D\n[site a]\nadapter=sim-batch\nnodes=1\n", "longer than P1D"},
        {"[server]\nrequest_timeout = P100D\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "longer than"},
        {"[negotiation]\nadapter_timeout = P1000D\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "longer than"},
        {"[negotiation]\nworkers = 0\n[site a]\nadapter=sim-batch\nnodes=1\n", "workers"},
        {"[negotiation]\nqueue_length = lots\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "queue_length"},
        {"[server]\nmax_query = 1000\n[site a]\nadapter=sim-batch\nnodes=1\n", "max_query"},
        {"this is not ini\n", "line 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct acc_config c;
        struct acc_error err;
        CU_ASSERT_EQUAL(acc_config_load_string(cases[i].ini, "t.ini", &c, &err), ACC_ERR_CONFIG);
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\n  case %zu: '%s' does not say '%s'\n", i, err.msg, cases[i].says);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
    }
    struct acc_config c;
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_config_load_file("/nonexistent/accord.ini", &c, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/accord.ini"));
}

static void test_tokens(void)
{
    static const struct {
        const char *file, *says; /* says NULL: accepted */
    } cases[] = {
        {"alice 0123456789abcdef\nroot fedcba9876543210 admin # the admin\n", NULL},
        {"alice short\n", "at least 16"},
        {"alice 0123456789abcdef boss\n", "user token [admin]"},
        {"# nobody\n", "names no user"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], ini[512];
        snprintf(path, sizeof path, "%s/tokens%zu", acc_test_tmpdir(), i);
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(cases[i].file, f);
        fclose(f);
        snprintf(ini, sizeof ini, "[auth]\ntokens = %s\n[site a]\nadapter=sim-batch\nnodes=1\n",
                 path);
        struct acc_config c;
        struct acc_error err;
        acc_err rc = acc_config_load_string(ini, "t.ini", &c, &err);
        if (!cases[i].says) {
            CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
            CU_ASSERT_EQUAL(c.n_users, 2);
            const struct acc_user *u = acc_config_user_by_token(&c, "fedcba9876543210");
            CU_ASSERT_TRUE(u && strcmp(u->name, "root") == 0 && u->admin);
            u = acc_config_user_by_token(&c, "0123456789abcdef");
            CU_ASSERT_TRUE(u && !u->admin);
            CU_ASSERT_PTR_NULL(acc_config_user_by_token(&c, "0123456789abcde"));
            CU_ASSERT_PTR_NULL(acc_config_user_by_token(&c, "0123456789abcdefX"));
            CU_ASSERT_PTR_NULL(acc_config_user_by_token(&c, ""));
            acc_config_release(&c);
        } else {
            CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        }
    }
}

/* A tokens file that never ends (a device, a log named by mistake) was read
 * for ever. */
static void test_tokens_endless(void)
{
    struct acc_config c;
    struct acc_error err;
    acc_err rc = acc_config_load_string(
        "[auth]\ntokens = /dev/zero\n[site a]\nadapter=sim-batch\nnodes=1\n", "t.ini", &c, &err);
    CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than"));
}

static const struct acc_test_case tests[] = {
    {"tokens file that never ends", test_tokens_endless},
    {"tokens file", test_tokens},
    {"embedded testbed", test_embedded},
    {"file and overrides", test_file_and_overrides},
    {"errors name the problem", test_errors_name_the_problem},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
