/* SPDX-License-Identifier: Apache-2.0 */
/* test_resources.c - the resource module (resources/): the sections read
 * key by key, the adapters opened from them and found by name, and the
 * refusals, which accordd (the service) and accord-site (the daemon) now
 * make alike, with the same message, because both open through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/log.h"
#include "../../resources/resources.h"
#include "../../site/site.h"
#include "config.h"
#include "service.h"
#include "testutil.h"

static acc_err keys(struct acc_resources_cfg *c, const char *const (*kv)[3], size_t n,
                    struct acc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        acc_err rc = acc_resources_cfg_key(c, kv[i][0], kv[i][1], kv[i][2], err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

static void test_sections_and_adapters(void)
{
    static const char *const kv[][3] = {
        {"site a", "adapter", "sim-batch"},        {"site a", "nodes", "8"},
        {"site b", "adapter", "sim-batch"},        {"site b", "nodes", "4"},
        {"network wan", "adapter", "sim-network"}, {"link a-b", "sites", "a b"},
        {"link a-b", "capacity", "1000"},          {"link a-b", "network", "wan"},
    };
    struct acc_resources_cfg c = {0};
    struct acc_error err;
    ACC_ASSERT_OK(keys(&c, kv, sizeof kv / sizeof kv[0], &err));
    ACC_ASSERT_OK(acc_resources_cfg_check(&c, false, &err));
    CU_ASSERT_EQUAL(c.n_sites, 2);
    CU_ASSERT_EQUAL(acc_resources_site(&c, "b")->nodes, 4);
    CU_ASSERT_PTR_EQUAL(acc_resources_link_between(&c, "b", "a"), &c.links[0]);
    CU_ASSERT_PTR_NULL(acc_resources_site(&c, "wan"));

    struct acc_resources_env env = {.db_path = ":memory:"};
    struct acc_resources *r = NULL;
    ACC_ASSERT_OK(acc_resources_open(&c, &env, &r, &err));
    CU_ASSERT_EQUAL_FATAL(acc_resources_count(r), 3);
    /* The sites' adapters in the order of the sections, then the networks'. */
    CU_ASSERT_STRING_EQUAL(acc_adapter_name(acc_resources_at(r, 0)), "a");
    CU_ASSERT_STRING_EQUAL(acc_adapter_name(acc_resources_at(r, 1)), "b");
    CU_ASSERT_STRING_EQUAL(acc_adapter_name(acc_resources_at(r, 2)), "wan");
    CU_ASSERT_PTR_NULL(acc_resources_at(r, 3));
    CU_ASSERT_PTR_EQUAL(acc_resources_site_adapter(r, "b"), acc_resources_at(r, 1));
    CU_ASSERT_PTR_EQUAL(acc_resources_network_adapter(r, "wan"), acc_resources_at(r, 2));
    CU_ASSERT_PTR_EQUAL(acc_resources_adapter_named(r, "wan"), acc_resources_at(r, 2));
    CU_ASSERT_PTR_EQUAL(acc_resources_adapter_named(r, "a"), acc_resources_at(r, 0));
    CU_ASSERT_PTR_NULL(acc_resources_site_adapter(r, "wan"));
    CU_ASSERT_PTR_NULL(acc_resources_network_adapter(r, "a"));
    CU_ASSERT_PTR_NULL(acc_resources_adapter_named(r, "c"));
    CU_ASSERT_TRUE(acc_adapter_has(acc_resources_at(r, 2), ACC_CAP_BANDWIDTH));
    acc_resources_interrupt(r);
    acc_resources_close(r);
    acc_resources_close(NULL);
    acc_resources_interrupt(NULL);

    /* One site alone, as accordd --replay opens them. */
    struct acc_adapter *ad = NULL;
    ACC_ASSERT_OK(acc_resources_open_site(&c, 1, &env, &ad, &err));
    CU_ASSERT_STRING_EQUAL(acc_adapter_name(ad), "b");
    acc_adapter_close(ad);
    CU_ASSERT_EQUAL(acc_resources_open_site(&c, 2, &env, &ad, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(ad);
    acc_resources_cfg_release(&c);
    CU_ASSERT_EQUAL(c.n_sites, 0);
}

static void test_bad_keys(void)
{
    struct acc_resources_cfg c = {0};
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_resources_cfg_key(&c, "peer x", "subject", "CN=x", &err),
                    ACC_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(c.n_sites + c.n_networks + c.n_links, 0);
    CU_ASSERT_EQUAL(acc_resources_cfg_key(&c, "site a/b", "nodes", "1", &err), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "[site a/b] 'a/b' is not a valid name (letters, digits, . _ -)");
    CU_ASSERT_EQUAL(acc_resources_cfg_key(&c, "link l", "colour", "red", &err), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg, "[link l] unknown key 'colour'");
    CU_ASSERT_EQUAL(acc_resources_cfg_key(&c, "site a", "nodes", "0", &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[site a] nodes: "));
    /* The section was seen, and is incomplete. */
    CU_ASSERT_EQUAL(acc_resources_cfg_check(&c, true, &err), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg, "[site a] needs adapter =");
    acc_resources_cfg_release(&c);
    /* A link between sites served elsewhere: only a site daemon takes it. */
    static const char *const kv[][3] = {
        {"network wan", "adapter", "sim-network"},
        {"link x-y", "sites", "x y"},
        {"link x-y", "capacity", "10"},
        {"link x-y", "network", "wan"},
    };
    ACC_ASSERT_OK(keys(&c, kv, sizeof kv / sizeof kv[0], &err));
    ACC_ASSERT_OK(acc_resources_cfg_check(&c, true, &err));
    CU_ASSERT_EQUAL(acc_resources_cfg_check(&c, false, &err), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg, "[link x-y] joins an unknown site (x, y)");
    acc_resources_cfg_release(&c);
}

/* ---------------------------------------- the same refusal from both daemons */

/* What accordd says when it opens its service on these sections. */
static acc_err accordd_open(const char *sections, const char *name,
                            const struct acc_adapter_ops *const *kinds, struct acc_error *err)
{
    struct acc_config cfg;
    acc_err rc = acc_config_load_string(sections, name, &cfg, err);
    if (rc)
        return rc;
    char db[512];
    snprintf(db, sizeof db, "%s/%s.db", acc_test_tmpdir(), name);
    struct acc_service_options opt = {.kinds = kinds};
    struct acc_service *svc = NULL;
    if (!(rc = acc_config_set_db(&cfg, db, err)))
        rc = acc_service_open_with(&cfg, &opt, &svc, err);
    acc_service_close(svc);
    acc_config_release(&cfg);
    return rc;
}

static char certs[512];

static int suite_init(void)
{
    acc_log_set_level(ACC_LOG_ERROR);
    snprintf(certs, sizeof certs, "%s/certs", acc_test_tmpdir());
    char cmd[700];
    snprintf(cmd, sizeof cmd, "%s/tests/support/mkcerts.sh %s >/dev/null", ACC_SOURCE_DIR, certs);
    return system(cmd) != 0;
}

/* What accord-site says when it starts on them. */
static acc_err site_open(const char *sections, const char *name, struct acc_error *err)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[daemon]\nname = %s\nlisten = 127.0.0.1:0\ndatabase = %s/site-%s.db\n"
             "durable = no\ncertificate = %s/site-alpha.crt\nkey = %s/site-alpha.key\n"
             "client_ca = %s/ca.crt\n[peer accord-main]\nsubject = CN=accord-main\n%s",
             name, acc_test_tmpdir(), name, certs, certs, certs, sections);
    struct acc_site_config cfg;
    acc_err rc = acc_site_config_load_string(text, name, &cfg, err);
    if (rc)
        return rc;
    struct acc_site *s = NULL;
    rc = acc_site_start(&cfg, &s, err);
    acc_site_stop(s);
    return rc;
}

static void refused_alike(const char *sections, const char *name, const char *msg)
{
    struct acc_error a, s;
    CU_ASSERT_EQUAL(accordd_open(sections, name, NULL, &a), ACC_ERR_CONFIG);
    CU_ASSERT_EQUAL(site_open(sections, name, &s), ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(a.msg, s.msg);
    if (strncmp(a.msg, msg, strlen(msg)) != 0)
        fprintf(stderr, "\n%s: '%s' does not start with '%s'\n", name, a.msg, msg);
    CU_ASSERT_EQUAL(strncmp(a.msg, msg, strlen(msg)), 0);
}

static void test_refused_alike(void)
{
    /* Before, accord-site took a [site] with launch = sbatch on a kind that
     * submits no jobs, and said the others in words of its own. */
    refused_alike("[site a]\nadapter = sim-network\nnodes = 4\n", "net-as-site",
                  "[site a]: adapter sim-network does not reserve nodes");
    refused_alike("[site a]\nadapter = sim-batch\nnodes = 4\n[network wan]\nadapter = sim-batch\n",
                  "batch-as-net", "[network wan]: adapter sim-batch does not reserve bandwidth");
    refused_alike("[site a]\nadapter = no-such-kind\nnodes = 4\n", "unknown-kind",
                  "[site a]: unknown adapter 'no-such-kind' (known: sim-batch, sim-network, ");
    refused_alike("[site a]\nadapter = sim-batch\nnodes = 4\nlaunch = sbatch\n", "sbatch",
                  "[site a]: launch = sbatch needs an adapter that submits jobs into "
                  "reservations (slurm); sim-batch does not");
    refused_alike("[site a]\nadapter = sim-batch\nnodes = 4\nlaunch = batch\n", "batch",
                  "[site a]: launch = batch needs an adapter that starts processes through "
                  "its batch system (slurm, sge); sim-batch does not");
    /* And what both still take. */
    struct acc_error err;
    const char *ok = "[site a]\nadapter = sim-batch\nnodes = 4\n";
    ACC_ASSERT_OK(accordd_open(ok, "ok", NULL, &err));
    ACC_ASSERT_OK(site_open(ok, "ok", &err));
}

/* An instance that serves less than its kind says (as a remote adapter
 * serves what its site daemon serves) is refused after it opened. */
static unsigned no_caps(void *state)
{
    (void)state;
    return 0;
}

static void test_instance_narrowed(void)
{
    static struct acc_adapter_ops narrowed;
    narrowed = *acc_adapter_kind_find("sim-batch");
    narrowed.kind = "narrowed";
    narrowed.instance_caps = no_caps;
    const struct acc_adapter_ops *const kinds[] = {&narrowed, NULL};
    struct acc_config cfg;
    struct acc_error err, direct;
    ACC_ASSERT_OK(acc_config_load_string("[site a]\nadapter = narrowed\nnodes = 4\n", "narrowed",
                                         &cfg, &err));
    struct acc_resources_env env = {.db_path = ":memory:", .kinds = kinds};
    struct acc_resources *r = NULL;
    CU_ASSERT_EQUAL(acc_resources_open(&cfg.res, &env, &r, &direct), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_STRING_EQUAL(direct.msg, "[site a]: this narrowed instance does not reserve nodes");
    acc_config_release(&cfg);
    CU_ASSERT_EQUAL(
        accordd_open("[site a]\nadapter = narrowed\nnodes = 4\n", "narrowed", kinds, &err),
        ACC_ERR_CONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg, direct.msg);
}

static const struct acc_test_case cases[] = {
    {"sections, adapters, look-ups", test_sections_and_adapters},
    {"bad keys and foreign sites", test_bad_keys},
    {"accordd and accord-site refuse alike", test_refused_alike},
    {"an instance narrower than its kind", test_instance_narrowed},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"resources", suite_init, NULL, cases},
    {NULL, NULL, NULL, NULL},
};
