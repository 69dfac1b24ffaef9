/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c - the INI configuration and the embedded testbed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/conf.h"
#include "../../lib/common/conf_report.h"
#include "config.h"
#include "testutil.h"

static void test_embedded(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_embedded(&c, &err));
    CU_ASSERT_TRUE(c.embedded);
    CU_ASSERT_EQUAL(c.res.n_sites, 3);
    CU_ASSERT_EQUAL(acc_config_site(&c, "fzj-xd1")->nodes, 64);
    CU_ASSERT_EQUAL(acc_config_site(&c, "caesar")->nodes, 128);
    CU_ASSERT_EQUAL(acc_config_site(&c, "fh-brs")->nodes, 32);
    CU_ASSERT_EQUAL(c.res.n_links, 3); /* a full mesh */
    const struct acc_link_cfg *l = acc_config_link_between(&c, "fh-brs", "fzj-xd1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->capacity, 10000);
    CU_ASSERT_STRING_EQUAL(c.listen_host, "127.0.0.1");
    CU_ASSERT_EQUAL(c.listen_port, 8080);
    CU_ASSERT_STRING_EQUAL(c.db_path, "accord.db");
    CU_ASSERT_EQUAL(c.strategy, ACC_STRATEGY_INTERSECT);
    CU_ASSERT_EQUAL(c.policy.id, ACC_POLICY_EARLIEST);
    CU_ASSERT_EQUAL(c.policy_candidates, 4);
    CU_ASSERT_EQUAL(c.adapter_max_calls, 0); /* half the workers */
    CU_ASSERT_EQUAL(c.breaker_failures, 5);
    CU_ASSERT_EQUAL(c.breaker_cooldown, 30);
    acc_config_release(&c);
}

/* Each adapter's bulkhead and circuit breaker, as given. */
static void test_breaker_keys(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[negotiation]\nadapter_max_calls = 3\n"
                                         "breaker_failures = 0\nbreaker_cooldown = PT2M\n"
                                         "[site a]\nadapter=sim-batch\nnodes=1\n",
                                         "t.ini", &c, &err));
    CU_ASSERT_EQUAL(c.adapter_max_calls, 3);
    CU_ASSERT_EQUAL(c.breaker_failures, 0);
    CU_ASSERT_EQUAL(c.breaker_cooldown, 120);
    acc_config_release(&c);
}

static void test_file_and_overrides(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/a.ini", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("; a comment\n[server]\nlisten = [::1]:9000\nmax_body = 4096\n"
          "names = accord.example.org [::1] 10.0.0.5\nclient_unsent = 1048576\n"
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
    CU_ASSERT_STRING_EQUAL(c.server_names, "accord.example.org [::1] 10.0.0.5");
    CU_ASSERT_EQUAL(c.client_unsent, 1048576);
    CU_ASSERT_EQUAL(c.max_unsent, (size_t)64 << 20);
    CU_ASSERT_EQUAL(c.strategy, ACC_STRATEGY_ITERATIVE);
    CU_ASSERT_EQUAL(c.horizon, 30 * 86400);
    CU_ASSERT_EQUAL(c.policy.id, ACC_POLICY_WF_NOREP);
    CU_ASSERT_EQUAL(c.policy_candidates, 2);
    CU_ASSERT_EQUAL(c.res.sites[0].n_settings, 2); /* load and seed go to the adapter */
    ACC_ASSERT_OK(acc_config_set_listen(&c, "0.0.0.0:0", &err));
    CU_ASSERT_EQUAL(c.listen_port, 0);
    ACC_ASSERT_OK(acc_config_set_db(&c, "/tmp/x.db", &err));
    CU_ASSERT_STRING_EQUAL(c.db_path, "/tmp/x.db");
    CU_ASSERT_EQUAL(acc_config_set_listen(&c, "nonsense", &err), ACC_ERR_CONFIG);
    acc_config_release(&c);
}

#define TWO_SITES "[site a]\nadapter=sim-batch\nnodes=4\n[site b]\nadapter=sim-batch\nnodes=4\n"

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
        /* Policies accordd does not run, and CA without its latencies. */
        {"[negotiation]\npolicy = a1\n[site a]\nadapter=sim-batch\nnodes=1\n", "central switch"},
        {"[negotiation]\npolicy = la\n[site a]\nadapter=sim-batch\nnodes=1\n", "home site"},
        {"[negotiation]\npolicy = ca\n[site a]\nadapter=sim-batch\nnodes=1\n", "latency"},
        {"[policy]\nlatency = a b fast\n" TWO_SITES, "not a number"},
        {"[policy]\nlatency = a b -1\n" TWO_SITES, "not a number"},
        {"[policy]\nlatency = a b\n" TWO_SITES, "SITE SITE VALUE"},
        {"[policy]\nlatency = a z 1\n" TWO_SITES, "'z', which is not a site"},
        {"[policy]\nlatency = a a 1\n" TWO_SITES, "none given between a and b"},
        {"[policy]\nlatency = a b 1\nlatency = b a 2\n" TWO_SITES, "given twice"},
        {"[policy]\nca_average = median\n" TWO_SITES, "ca_average"},
        {"[policy]\ntiebreak = coin\n" TWO_SITES, "tiebreak"},
        {"[policy]\nmax_clusters = 65\n" TWO_SITES, "max_clusters"},
        {"[policy]\nk = 2\n" TWO_SITES, "unknown key 'k'"},
        {"[negotiation]\npolicy = nearest\n[site a]\nadapter=sim-batch\nnodes=1\n", "policy"},
        {"[negotiation]\npolicy_candidates = 0\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "policy_candidates"},
        {"[negotiation]\nhorizon = PT5M\n[site a]\nadapter=sim-batch\nnodes=1\n", "PT1H"},
        {"[wrong]\nkey = 1\n", "unknown section"},
        /* the names the server answers to */
        {"[server]\nnames = accord.example.org/x\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "'accord.example.org/x' is not a host name"},
        {"[server]\nnames = *, a.example\n[site a]\nadapter=sim-batch\nnodes=1\n", "goes alone"},
        {"[server]\nnames = ,\n[site a]\nadapter=sim-batch\nnodes=1\n", "no name given"},
        {"[server]\nmax_unsent = 1000\n[site a]\nadapter=sim-batch\nnodes=1\n", "max_unsent"},
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
        /* each adapter's bulkhead and circuit breaker */
        {"[negotiation]\nadapter_max_calls = 2000\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "adapter_max_calls"},
        {"[negotiation]\nbreaker_failures = -1\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "breaker_failures"},
        {"[negotiation]\nbreaker_cooldown = PT0S\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "breaker_cooldown: 'PT0S' is not a positive duration"},
        {"[negotiation]\nbreaker_cooldown = P2D\n[site a]\nadapter=sim-batch\nnodes=1\n",
         "breaker_cooldown: 'P2D' is longer than P1D"},
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

/* A PostgreSQL database given as libpq's key=value settings, in the file or
 * by --db, is refused saying why, and never with its password; neither does
 * the printed configuration show a URL's. */
static void test_database_password_hidden(void)
{
    static const char kv[] = "host=/tmp port=5 dbname=x user=u password=s3cret";
    static const char *const ini[] = {
        "[database]\nurl = host=/tmp port=5 dbname=x user=u password=s3cret\n",
        "[database]\npath = host=/tmp port=5 dbname=x user=u password=s3cret\n",
    };
    struct acc_config c;
    struct acc_error err;
    for (size_t i = 0; i < sizeof ini / sizeof ini[0]; i++) {
        CU_ASSERT_EQUAL(acc_config_load_string(ini[i], "t.ini", &c, &err), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "key=value settings"));
        CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a PostgreSQL database is a url"));
    ACC_ASSERT_OK(
        acc_config_load_string("[site a]\nadapter=sim-batch\nnodes=1\n", "t.ini", &c, &err));
    CU_ASSERT_EQUAL(acc_config_set_db(&c, kv, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'host=/tmp port=5 dbname=x user=u' is libpq's"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "s3cret"));
    CU_ASSERT_STRING_EQUAL(c.db_path, "accord.db");
    ACC_ASSERT_OK(acc_config_set_db(
        &c, "postgresql://accord:s3cret@db/accord?password=s3cret&sslmode=require", &err));
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    acc_config_print(&c, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "url = postgresql://accord@db/accord?sslmode=require\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "s3cret"));
    free(text);
    acc_config_release(&c);
}

static void test_policy_section(void)
{
    struct acc_config c;
    struct acc_error err;
    struct acc_policy_opts o;
    ACC_ASSERT_OK(acc_config_load_string("[negotiation]\npolicy = fcm-2\n"
                                         "[policy]\nlatency = a b 5\nlatency = a c 1\n"
                                         "latency = c b 2.5\nlatency = c c 0.25\n"
                                         "max_clusters = 3\nca_average = idle\n"
                                         "tiebreak = random\nseed = 42\n" TWO_SITES
                                         "[site c]\nadapter=sim-batch\nnodes=4\n",
                                         "t.ini", &c, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.latency);
    /* Row-major in the sites' order a, b, c; symmetric; a and b default 0. */
    CU_ASSERT_DOUBLE_EQUAL(c.latency[0 * 3 + 1], 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency[1 * 3 + 0], 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency[1 * 3 + 2], 2.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency[2 * 3 + 0], 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency[2 * 3 + 2], 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency[0], 0, 1e-12);
    CU_ASSERT_EQUAL(c.policy_seed, 42);
    /* The configured fcm-2 keeps its k; other names take max_clusters. */
    ACC_ASSERT_OK(acc_config_policy(&c, NULL, &o, &err));
    CU_ASSERT_EQUAL(o.id, ACC_POLICY_FCM);
    CU_ASSERT_EQUAL(o.max_clusters, 2);
    CU_ASSERT_EQUAL(o.tiebreak, ACC_TIE_RANDOM);
    CU_ASSERT_FALSE(o.local_first);
    ACC_ASSERT_OK(acc_config_policy(&c, "ca", &o, &err));
    CU_ASSERT_EQUAL(o.id, ACC_POLICY_CA);
    CU_ASSERT_EQUAL(o.max_clusters, 3);
    CU_ASSERT_EQUAL(o.ca_avg, ACC_CA_AVG_IDLE);
    ACC_ASSERT_OK(acc_config_policy(&c, "mig", &o, &err));
    ACC_ASSERT_OK(acc_config_policy(&c, "initial", &o, &err));
    CU_ASSERT_EQUAL(acc_config_policy(&c, "b3", &o, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "star network"));
    CU_ASSERT_EQUAL(acc_config_policy(&c, "migration", &o, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "home site"));
    CU_ASSERT_EQUAL(acc_config_policy(&c, "closest", &o, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown"));
    acc_config_release(&c);

    /* Without latencies: no matrix, and ca is refused with the reason. */
    ACC_ASSERT_OK(acc_config_load_string(TWO_SITES, "t.ini", &c, &err));
    CU_ASSERT_PTR_NULL(c.latency);
    CU_ASSERT_EQUAL(acc_config_policy(&c, "ca", &o, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[policy] latency"));
    acc_config_release(&c);
}

static void test_tokens(void)
{
    static const struct {
        const char *file, *says; /* says NULL: accepted */
    } cases[] = {
        {"alice 0123456789abcdef\nroot fedcba9876543210 admin # the admin\n"
         "prom 0123456789abcdefprom metrics\n",
         NULL},
        {"alice short\n", "at least 16"},
        {"alice 0123456789abcdef boss\n", "user token [admin|metrics]"},
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
            CU_ASSERT_EQUAL(c.n_users, 3);
            const struct acc_user *u = acc_config_user_by_token(&c, "fedcba9876543210");
            CU_ASSERT_TRUE(u && strcmp(u->name, "root") == 0 && u->admin && !u->metrics);
            u = acc_config_user_by_token(&c, "0123456789abcdef");
            CU_ASSERT_TRUE(u && !u->admin && !u->metrics);
            u = acc_config_user_by_token(&c, "0123456789abcdefprom");
            CU_ASSERT_TRUE(u && strcmp(u->name, "prom") == 0 && u->metrics && !u->admin);
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

/* [server] certificate/key and [auth] client_ca/client_certificates (issue
 * 11): the users a client certificates file names, and what is refused. */
static void test_client_certificates(void)
{
#define FP                                                                                        \
    "SHA256:60:9b:F5:0F:EF:E8:70:40:4E:AA:68:08:54:FF:B1:36:06:DF:A5:ED:5D:5C:50:D7:E8:8B:A4:8F:" \
    "41:B9:C5:BF"
    static const struct {
        const char *server, *auth, *file, *says; /* says NULL: accepted */
    } cases[] = {
        {"certificate = s.crt\nkey = s.key\n", "client_ca = ca.crt\n",
         "alice CN=alice, O=Example Org\nops " FP " admin # the operators\n\n", NULL},
        {"certificate = s.crt\n", "", NULL, "go together"},
        {"key = s.key\n", "", NULL, "go together"},
        {"", "client_ca = ca.crt\n", NULL, "needs HTTPS"},
        {"certificate = s.crt\nkey = s.key\n", "", "alice CN=alice\n", "needs client_ca"},
        {"certificate = s.crt\nkey = s.key\n", "client_ca = ca.crt\n", "alice\n",
         "line 1: expected"},
        {"certificate = s.crt\nkey = s.key\n", "client_ca = ca.crt\n",
         "alice CN=alice\nbob SHA256:AB:CD\n", "line 2: 'SHA256:AB:CD' is not a SHA-256"},
        {"certificate = s.crt\nkey = s.key\n", "client_ca = ca.crt\n", "alice alice\n",
         "not a subject"},
        {"certificate = s.crt\nkey = s.key\n", "client_ca = ca.crt\n", "# nobody\n",
         "names no user"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], ini[1024] = "";
        snprintf(path, sizeof path, "%s/certusers%zu", acc_test_tmpdir(), i);
        if (cases[i].file) {
            FILE *f = fopen(path, "w");
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            fputs(cases[i].file, f);
            fclose(f);
        }
        snprintf(ini, sizeof ini,
                 "[server]\n%s[auth]\n%s%s%s%s[site a]\nadapter=sim-batch\nnodes=1\n",
                 cases[i].server, cases[i].auth, cases[i].file ? "client_certificates = " : "",
                 cases[i].file ? path : "", cases[i].file ? "\n" : "");
        struct acc_config c;
        struct acc_error err;
        acc_err rc = acc_config_load_string(ini, "t.ini", &c, &err);
        if (!cases[i].says) {
            CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
            CU_ASSERT_STRING_EQUAL(c.tls_certificate, "s.crt");
            CU_ASSERT_STRING_EQUAL(c.client_ca, "ca.crt");
            CU_ASSERT_EQUAL(c.n_users, 2);
            const struct acc_user *u = acc_config_user_by_cert(&c, "CN=alice, O=Example Org", NULL);
            CU_ASSERT_TRUE(u && strcmp(u->name, "alice") == 0 && !u->admin);
            /* the fingerprint in upper case, as lib/tls gives it */
            u = acc_config_user_by_cert(
                &c, "CN=whoever",
                "SHA256:60:9B:F5:0F:EF:E8:70:40:4E:AA:68:08:54:FF:B1:36:06:DF:A5:ED:5D:5C:50:D7:"
                "E8:8B:A4:8F:41:B9:C5:BF");
            CU_ASSERT_TRUE(u && strcmp(u->name, "ops") == 0 && u->admin);
            CU_ASSERT_PTR_NULL(acc_config_user_by_cert(&c, "CN=alice", NULL));
            /* certificate users have no token */
            CU_ASSERT_PTR_NULL(acc_config_user_by_token(&c, ""));
            acc_config_release(&c);
        } else {
            CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
            if (!strstr(err.msg, cases[i].says))
                fprintf(stderr, "case %zu: %s\n", i, err.msg);
        }
    }
#undef FP
}

/* Whom jobs run as: [accounts] for users of [auth], [launch] account for
 * the rest, accordd's own user unless that is root; never root. */
static void test_launch_accounts(void)
{
    char path[256], ini[768];
    snprintf(path, sizeof path, "%s/tokens-accounts", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("alice 0123456789abcdef\nbob fedcba9876543210\n", f);
    fclose(f);
    bool root = geteuid() == 0;
    struct acc_config c;
    struct acc_error err;
    struct acc_account a;
    bool other = false;
    /* as root both accounts are others; unprivileged, only our own may be
     * named, so the mapping names ourselves */
    struct acc_account me;
    ACC_ASSERT_OK(acc_account_self(&me, &err));
    const char *mapped = root ? "nobody" : me.name, *rest = root ? "daemon" : me.name;
    snprintf(ini, sizeof ini,
             "[auth]\ntokens = %s\n[accounts]\nalice = %s\n[launch]\nenabled = yes\n"
             "account = %s\n[site a]\nadapter=sim-batch\nnodes=1\n",
             path, mapped, rest);
    ACC_ASSERT_OK(acc_config_load_string(ini, "t.ini", &c, &err));
    ACC_ASSERT_OK(acc_config_launch_account(&c, "alice", NULL, &a, &other, &err));
    CU_ASSERT_STRING_EQUAL(a.name, mapped);
    CU_ASSERT_EQUAL(other, root);
    ACC_ASSERT_OK(acc_config_launch_account(&c, "bob", NULL, &a, &other, &err));
    CU_ASSERT_STRING_EQUAL(a.name, rest);
    acc_config_release(&c);

    /* [accounts] mapfile: after the users' own lines, by the identity
     * (a token's issuer and subject here), else by the user's name */
    char map[256];
    snprintf(map, sizeof map, "%s/accounts.map", acc_test_tmpdir());
    f = fopen(map, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "token /^https:\\/\\/idp\\/,b-42$/ %s\nuser alice %s\n", mapped, rest);
    fclose(f);
    snprintf(ini, sizeof ini,
             "[auth]\ntokens = %s\n[accounts]\nmapfile = %s\n[launch]\nenabled = yes\n"
             "account = %s\n[site a]\nadapter=sim-batch\nnodes=1\n",
             path, map, rest);
    ACC_ASSERT_OK(acc_config_load_string(ini, "t.ini", &c, &err));
    struct acc_identity tok = {.user = "bob", .issuer = "https://idp/", .subject = "b-42"};
    ACC_ASSERT_OK(acc_config_launch_account(&c, "bob", &tok, &a, &other, &err));
    CU_ASSERT_STRING_EQUAL(a.name, mapped);
    char acct[64];
    CU_ASSERT_TRUE(acc_config_account_of(&c, "bob", &tok, acct, sizeof acct));
    CU_ASSERT_STRING_EQUAL(acct, mapped);
    /* bob without his token's identity: not mapped, [launch] account */
    CU_ASSERT_FALSE(acc_config_account_of(&c, "bob", NULL, acct, sizeof acct));
    ACC_ASSERT_OK(acc_config_launch_account(&c, "bob", NULL, &a, &other, &err));
    CU_ASSERT_STRING_EQUAL(a.name, rest);
    CU_ASSERT_TRUE(acc_config_account_of(&c, "alice", NULL, acct, sizeof acct));
    CU_ASSERT_STRING_EQUAL(acct, rest);
    acc_config_release(&c);
    /* a mapfile that maps to root is a configuration error naming its line */
    f = fopen(map, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# x\nuser alice root\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(acc_config_load_string(ini, "t.ini", &c, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "accounts.map:2: root"));
    unlink(map);

    /* no account: accordd's own user, unless it is root */
    snprintf(ini, sizeof ini, "[launch]\nenabled = yes\n[site a]\nadapter=sim-batch\nnodes=1\n");
    ACC_ASSERT_OK(acc_config_load_string(ini, "t.ini", &c, &err));
    acc_err rc = acc_config_launch_account(&c, "alice", NULL, &a, &other, &err);
    if (root) {
        CU_ASSERT_EQUAL(rc, ACC_ERR_FORBIDDEN);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "never runs as root"));
    } else {
        CU_ASSERT_EQUAL(rc, ACC_OK);
        CU_ASSERT_FALSE(other);
        CU_ASSERT_EQUAL(a.uid, geteuid());
    }
    acc_config_release(&c);

    /* root refused; [accounts] without [auth] refused; an unknown user refused */
    static const struct {
        const char *ini, *says;
    } bad[] = {
        {"[launch]\naccount = root\n", "never started as root"},
        {"[accounts]\nalice = nobody\n", "needs [auth]"},
        {"[launch]\naccount = no-such-account-here\n", "no such user"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(ini, sizeof ini, "%s[site a]\nadapter=sim-batch\nnodes=1\n", bad[i].ini);
        CU_ASSERT_EQUAL(acc_config_load_string(ini, "t.ini", &c, &err), ACC_ERR_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
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

/* addresses: an IPv4 host list aligned with the hosts (issue 10). */
static void test_addresses(void)
{
    struct acc_config c;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[site alpha]\nadapter=sim-batch\nnodes=2\n"
                                         "addresses = 10.79.1.[11-12]\nhosts = alpha-n[1-2]\n"
                                         "[site beta]\nadapter=sim-batch\nnodes=2\n"
                                         "addresses = 10.79.2.11,10.79.2.12\n"
                                         "[site gamma]\nadapter=sim-batch\nnodes=1\n",
                                         "t.ini", &c, &err));
    const struct acc_site_cfg *a = acc_config_site(&c, "alpha");
    CU_ASSERT_EQUAL(a->n_addresses, 2);
    CU_ASSERT_EQUAL(a->n_settings, 0); /* not an adapter setting */
    CU_ASSERT_STRING_EQUAL(acc_config_host_address(a, "alpha-n1"), "10.79.1.11");
    CU_ASSERT_STRING_EQUAL(acc_config_host_address(a, "alpha-n2"), "10.79.1.12");
    CU_ASSERT_PTR_NULL(acc_config_host_address(a, "alpha-n3"));
    /* Without hosts the default names NAME-n1.. are aligned. */
    const struct acc_site_cfg *b = acc_config_site(&c, "beta");
    CU_ASSERT_STRING_EQUAL(acc_config_host_address(b, "beta-n2"), "10.79.2.12");
    CU_ASSERT_PTR_NULL(acc_config_host_address(b, "beta-n3"));
    CU_ASSERT_PTR_NULL(acc_config_host_address(b, "beta-n02"));
    CU_ASSERT_PTR_NULL(acc_config_host_address(b, "beta-n"));
    CU_ASSERT_PTR_NULL(acc_config_host_address(b, "alpha-n1"));
    CU_ASSERT_PTR_NULL(acc_config_host_address(acc_config_site(&c, "gamma"), "gamma-n1"));
    acc_config_release(&c);

    static const struct {
        const char *ini, *says;
    } bad[] = {
        {"[site a]\nadapter=sim-batch\nnodes=2\naddresses = 10.0.0.[1-3]\n",
         "3 addresses for its 2 hosts"},
        {"[site a]\nadapter=sim-batch\nnodes=2\nhosts = h[1-3]\naddresses = 10.0.0.1\n",
         "1 addresses for its 3 hosts (h[1-3])"},
        {"[site a]\nadapter=sim-batch\nnodes=1\naddresses = a-n1\n",
         "'a-n1' (address 1 of 'a-n1') is not an IPv4 address"},
        {"[site a]\nadapter=sim-batch\nnodes=2\naddresses = 10.0.0.1,10.0.0.300\n",
         "'10.0.0.300' (address 2"},
        {"[site a]\nadapter=sim-batch\nnodes=1\naddresses = 10.0.0.[1-\n",
         "is not a host list of IPv4 addresses"},
        {"[site a]\nadapter=sim-batch\nnodes=1\naddresses =\n", "addresses"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(acc_config_load_string(bad[i].ini, "t.ini", &c, &err), ACC_ERR_CONFIG);
        if (!strstr(err.msg, bad[i].says))
            fprintf(stderr, "\n  case %zu: '%s' does not say '%s'\n", i, err.msg, bad[i].says);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
    }
}

/* --check-config (lib/common/conf_report.h): every problem with the line
 * of its file, whatever the file's lines look like: CRLF, a byte order
 * mark, comments, a continued value, a line longer than inih's buffer. */
static void test_check_lines(void)
{
    char path[256], longv[400];
    memset(longv, 'x', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    snprintf(path, sizeof path, "%s/check-lines.conf", acc_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f,
            "\xEF\xBB\xBF# a comment\r\n" /* 1 */
            "[server]\r\n"                /* 2 */
            "max_body = 12\r\n"           /* 3: problem */
            "; another comment\n"         /* 4 */
            "\n"                          /* 5 */
            "[launch]\n"                  /* 6 */
            "directory = %s\n"            /* 7: 400 bytes, more than inih's line */
            "[site a]\n"                  /* 8 */
            "adapter = sim-batch\n"       /* 9 */
            "nodes = 4\n"                 /* 10 */
            "  8\n"                       /* 11: continues nodes: "8", fine */
            "not ini\n"                   /* 12: problem */
            "[database]\n"                /* 13 */
            "durable = perhaps",          /* 14: problem, no newline at the end */
            longv);
    fclose(f);
    struct acc_config c;
    struct acc_conf_report r;
    CU_ASSERT_EQUAL(acc_config_check(path, &c, &r), ACC_ERR_CONFIG);
    /* The long line is refused whole: inih would read on in it as if it
     * were lines of its own, and take the value cut short. */
    static const int want[] = {3, 7, 12, 14};
    static const char *const keys[] = {"max_body", NULL, NULL, "durable"};
    CU_ASSERT_EQUAL_FATAL(r.n_problems, 4);
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(r.problems[i].line, want[i]);
        if (keys[i]) {
            CU_ASSERT_STRING_EQUAL(r.problems[i].key, keys[i]);
        } else {
            CU_ASSERT_PTR_NULL(r.problems[i].key);
        }
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(r.problems[1].msg, "longer than"));
    CU_ASSERT_FALSE(r.nomem);
    acc_conf_report_release(&r);
    acc_config_release(&c);

    /* A normal load reports the first, as before. */
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_config_load_file(path, &c, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 3: [server] max_body"));
}

/* The effective configuration reads back to itself, and keeps what the
 * file said. */
static void test_print_round_trip(void)
{
    struct acc_config c, again;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string("[negotiation]\npolicy = fcm-2\nlead_time = PT0S\n"
                                         "[launch]\nenv = A=1\nenv = B=\ncontrol_ports = "
                                         "2000:2010\n[site a]\nadapter = sim-batch\nnodes = 2\n"
                                         "addresses = 10.0.0.[1-2]\nload = yes\n",
                                         "t.ini", &c, &err));
    char *one = NULL, *two = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *f = open_memstream(&one, &n1);
    acc_config_print(&c, f);
    fclose(f);
    ACC_ASSERT_OK(acc_config_load_string(one, "printed", &again, &err));
    f = open_memstream(&two, &n2);
    acc_config_print(&again, f);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(one, two);
    CU_ASSERT_PTR_NOT_NULL(strstr(one, "policy = fcm-2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(one, "addresses = 10.0.0.1,10.0.0.2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(one, "env = B=\n"));
    CU_ASSERT_EQUAL(again.policy.max_clusters, 2);
    CU_ASSERT_EQUAL(again.launch.n_env, 2);
    free(one);
    free(two);
    acc_config_release(&c);
    acc_config_release(&again);
}

/* [database] clock_warn and clock_refuse: defaults, values, what is refused. */
static void test_clock_bounds(void)
{
    static const struct {
        const char *keys, *says; /* says NULL: accepted */
    } cases[] = {
        {"", NULL},
        {"clock_warn = PT1S\nclock_refuse = PT5S\n", NULL},
        {"clock_warn = PT0S\n", "clock_warn: 'PT0S' is not a duration of PT1S to PT1H"},
        {"clock_refuse = soon\n", "clock_refuse: 'soon' is not a duration"},
        {"clock_warn = PT10S\nclock_refuse = PT5S\n", "clock_refuse (5 s) is less than clock_warn"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ini[256];
        snprintf(ini, sizeof ini, "[database]\n%s[site a]\nadapter=sim-batch\nnodes=1\n",
                 cases[i].keys);
        struct acc_config c;
        struct acc_error err;
        acc_err rc = acc_config_load_string(ini, "t.ini", &c, &err);
        if (cases[i].says) {
            CU_ASSERT_EQUAL(rc, ACC_ERR_CONFIG);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
            continue;
        }
        CU_ASSERT_EQUAL_FATAL(rc, ACC_OK);
        CU_ASSERT_EQUAL(c.clock_warn, i ? 1 : 2);
        CU_ASSERT_EQUAL(c.clock_refuse, i ? 5 : 30);
        acc_config_release(&c);
    }
}

/* Seconds as a number or an ISO 8601 duration (accord-site's durations). */
static void test_seconds(void)
{
    static const struct {
        const char *v;
        int64_t want; /* -1: refused */
    } cases[] = {
        {"90", 90}, {"PT90S", 90}, {"P1D", 86400}, {"PT1H30M", 5400}, {"soon", -1},
        {"0", -1},  {"P2D", -1},   {"PT0S", -1},   {"12s", -1},       {"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t got = -1;
        struct acc_error err;
        acc_err rc = acc_conf_seconds(cases[i].v, 1, 86400, &got, &err);
        CU_ASSERT_EQUAL(rc == ACC_OK ? got : -1, cases[i].want);
    }
}

static const struct acc_test_case tests[] = {
    {"addresses aligned with hosts", test_addresses},
    {"--check-config: every problem at its line", test_check_lines},
    {"the effective configuration reads back to itself", test_print_round_trip},
    {"seconds or ISO 8601 durations", test_seconds},
    {"[database] clock bounds", test_clock_bounds},
    {"tokens file that never ends", test_tokens_endless},
    {"tokens file", test_tokens},
    {"launch accounts: [accounts], [launch] account, never root", test_launch_accounts},
    {"client certificates file", test_client_certificates},
    {"embedded testbed", test_embedded},
    {"[negotiation]: the bulkhead and the circuit breaker", test_breaker_keys},
    {"file and overrides", test_file_and_overrides},
    {"errors name the problem", test_errors_name_the_problem},
    {"a database's password is never shown", test_database_password_hidden},
    {"[policy]: latencies, options, which policies accordd runs", test_policy_section},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
