/* SPDX-License-Identifier: Apache-2.0 */
/* test_provision.c - issue 10's service side without a kernel: the flows of
 * an agreement's link reservations (hosts of the launch plan, configured
 * addresses, names looked up), provisioning after the commit through a
 * scripted network adapter (tests/support/fake_net.c), its retry by
 * housekeeping, provisioning again after a restart, and the guarantee term
 * states of reserved links in GET /agreements/{id}/state (XML valid against
 * the schemas, and JSON). */
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fake_net.h"
#include "flows.h"
#include "json.h"
#include "launch.h"
#include "service.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"
#include "xml_internal.h"

/* alpha and beta have configured addresses (alpha's aligned with its
 * hosts, beta's with its default names); gamma's one host is looked up by
 * name.  alpha-beta and alpha-gamma run on the provisioning fake, beta-gamma
 * on the simulator (which does not provision). */
static const char ini[] = "[negotiation]\nadapter_timeout = PT30S\nworkers = 1\n"
                          "[launch]\nenabled = no\n"
                          "[site alpha]\nadapter = sim-batch\nnodes = 2\n"
                          "hosts = alpha-n[1-2]\naddresses = 10.79.1.[11-12]\n"
                          "[site beta]\nadapter = sim-batch\nnodes = 2\n"
                          "addresses = 10.79.2.11,10.79.2.12\n"
                          "[site gamma]\nadapter = sim-batch\nnodes = 1\nhosts = localhost\n"
                          "[network wan]\nadapter = fake-net\n"
                          "[network sim]\nadapter = sim-network\n"
                          "[link alpha-beta]\nsites = alpha beta\ncapacity = 200\nnetwork = wan\n"
                          "[link alpha-gamma]\nsites = alpha gamma\ncapacity = 200\nnetwork = wan\n"
                          "[link beta-gamma]\nsites = beta gamma\ncapacity = 200\nnetwork = sim\n";

/* a: alpha x2; b, c: beta; g: gamma.  Links: ab and ca share the alpha-beta
 * reservation (ca runs the other way), bc stays inside beta (nothing
 * reserved), ag is alpha-gamma, bg beta-gamma on the simulator. */
static const char offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>flows</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
    "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>alpha</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>beta</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"c\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>beta</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"g\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>gamma</co:Site><co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>100</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ca\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>c</co:Between><co:And>a</co:And><co:Bandwidth>50</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"bc\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>b</co:Between><co:And>c</co:And><co:Bandwidth>10</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ag\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>a</co:Between><co:And>g</co:And><co:Bandwidth>20</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"bg\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>b</co:Between><co:And>g</co:And><co:Bandwidth>30</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";

#define FLOW_AB "alpha=10.79.1.11,10.79.1.12 beta=10.79.2.11,10.79.2.12"
#define FLOW_AG "alpha=10.79.1.11,10.79.1.12 gamma=127.0.0.1"

static const struct acc_adapter_ops *const kinds[] = {&fake_net_ops, NULL};

struct fix {
    struct acc_config cfg;
    struct acc_service *svc;
    char db[256];
};

static int open_fix(struct fix *f, const char *name, bool fresh)
{
    struct acc_error err;
    snprintf(f->db, sizeof f->db, "%s/%s.db", acc_test_tmpdir(), name);
    if (fresh)
        fake_net_reset();
    struct acc_service_options opt = {.kinds = kinds};
    if (acc_config_load_string(ini, name, &f->cfg, &err) ||
        acc_config_set_db(&f->cfg, f->db, &err) ||
        acc_service_open_with(&f->cfg, &opt, &f->svc, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void close_fix(struct fix *f)
{
    acc_service_close(f->svc);
    acc_config_release(&f->cfg);
}

/* Submits the offer and waits for its negotiation; the agreement's id. */
static acc_err agree(struct acc_service *svc, char *id)
{
    struct acc_offer o;
    struct acc_error err;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    acc_err prc = acc_xml_parse_offer(offer, strlen(offer), &lim, &o, &err);
    if (prc)
        fprintf(stderr, "offer: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(prc, ACC_OK);
    struct acc_submit s = {&o, offer, strlen(offer), NULL, false, NULL, NULL};
    struct acc_submission sub;
    acc_err rc = acc_service_submit(svc, &s, &sub, &err);
    acc_offer_release(&o);
    if (rc)
        return rc;
    acc_nego_wait(sub.job);
    rc = acc_nego_result(sub.job, &err);
    if (rc)
        fprintf(stderr, "negotiation: %s\n", err.msg);
    acc_nego_release(sub.job);
    strcpy(id, sub.id);
    return rc;
}

/* The reservation keys of the agreement's links ab and ag. */
static void link_keys(struct acc_service *svc, const char *id, char *ab, char *ag)
{
    struct acc_agreement a;
    struct acc_error err;
    ACC_ASSERT_OK(acc_service_get(svc, id, false, &a, &err));
    for (size_t i = 0; i < a.n_links; i++) {
        if (strcmp(a.links[i].name, "ab") == 0)
            strcpy(ab, a.links[i].reservation);
        if (strcmp(a.links[i].name, "ag") == 0)
            strcpy(ag, a.links[i].reservation);
        if (strcmp(a.links[i].name, "bc") == 0)
            CU_ASSERT_PTR_NULL(a.links[i].reservation);
    }
    acc_agreement_release(&a);
}

/* Waits up to `seconds` for key's provision count to reach n. */
static bool wait_provisions(struct fake_net *n, const char *key, unsigned want, int seconds)
{
    for (int i = 0; i < seconds * 20; i++) {
        if (fake_net_provisions(n, key) >= want)
            return true;
        usleep(50000);
    }
    return false;
}

/* ------------------------------------------------------------- flows */

static bool only_alpha_beta(void *ctx, const struct acc_link_cfg *l)
{
    (void)ctx;
    return strcmp(l->name, "alpha-beta") == 0;
}

/* The pure part: flows from an allocation and its launch plan. */
static void test_flows(void)
{
    struct acc_config cfg;
    struct acc_error err;
    ACC_ASSERT_OK(acc_config_load_string(ini, "flows", &cfg, &err));
    struct acc_alloc_component comps[] = {
        {.name = "a", .site = "alpha", .nodes = 2, .ppn = 1},
        {.name = "b", .site = "beta", .nodes = 1, .ppn = 1},
        {.name = "c", .site = "beta", .nodes = 1, .ppn = 1},
        {.name = "g", .site = "gamma", .nodes = 1, .ppn = 1},
    };
    struct acc_alloc_link links[] = {
        {.name = "ab", .from = "a", .to = "b", .link = "alpha-beta", .reservation = "k1"},
        {.name = "ca", .from = "c", .to = "a", .link = "alpha-beta", .reservation = "k1"},
        {.name = "bc", .from = "b", .to = "c"},
        {.name = "ag", .from = "a", .to = "g", .link = "alpha-gamma", .reservation = "k2"},
    };
    struct acc_agreement a = {.comps = comps, .n_comps = 4, .links = links, .n_links = 4};
    struct acc_launch_hosts plan;
    ACC_ASSERT_OK(acc_launch_hosts_build(&a, &cfg, NULL, &plan, &err));
    struct acc_link_flows fl;
    ACC_ASSERT_OK(acc_flows_build(&a, &plan, &cfg, NULL, NULL, &fl, &err));
    CU_ASSERT_EQUAL_FATAL(fl.n, 2); /* one per reservation */
    const struct acc_flow *f1 = &fl.v[0].flow, *f2 = &fl.v[1].flow;
    CU_ASSERT_STRING_EQUAL(fl.v[0].key, "k1");
    CU_ASSERT_STRING_EQUAL(f1->site_a, "alpha");
    CU_ASSERT_STRING_EQUAL(f1->site_b, "beta");
    CU_ASSERT_EQUAL_FATAL(f1->n_a, 2); /* a's two hosts, once though two links use them */
    CU_ASSERT_STRING_EQUAL(f1->addrs_a[0], "10.79.1.11");
    CU_ASSERT_STRING_EQUAL(f1->addrs_a[1], "10.79.1.12");
    CU_ASSERT_EQUAL_FATAL(f1->n_b, 2); /* b on beta-n1, c on beta-n2 */
    CU_ASSERT_STRING_EQUAL(f1->addrs_b[0], "10.79.2.11");
    CU_ASSERT_STRING_EQUAL(f1->addrs_b[1], "10.79.2.12");
    CU_ASSERT_STRING_EQUAL(fl.v[1].key, "k2");
    CU_ASSERT_STRING_EQUAL(f2->site_b, "gamma");
    CU_ASSERT_EQUAL_FATAL(f2->n_b, 1);
    CU_ASSERT_STRING_EQUAL(f2->addrs_b[0], "127.0.0.1"); /* looked up: localhost */
    acc_flows_release(&fl);
    acc_launch_hosts_release(&plan);

    /* A filter leaves links out (their hosts are not even looked up). */
    CU_ASSERT_STRING_EQUAL(cfg.res.sites[2].host_names[0], "localhost");
    cfg.res.sites[2].host_names[0][0] = 'X'; /* "Xocalhost": does not resolve */
    ACC_ASSERT_OK(acc_launch_hosts_build(&a, &cfg, NULL, &plan, &err));
    ACC_ASSERT_OK(acc_flows_build(&a, &plan, &cfg, only_alpha_beta, NULL, &fl, &err));
    CU_ASSERT_EQUAL_FATAL(fl.n, 1);
    CU_ASSERT_STRING_EQUAL(fl.v[0].key, "k1");
    acc_flows_release(&fl);

    /* A host that cannot be resolved is an error naming it; nothing is left. */
    CU_ASSERT_EQUAL(acc_flows_build(&a, &plan, &cfg, NULL, NULL, &fl, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "site gamma: host Xocalhost"));
    CU_ASSERT_EQUAL(fl.n, 0);
    CU_ASSERT_PTR_NULL(fl.v);

    /* An allocation that names a link the configuration lacks. */
    links[3].link = "alpha-delta";
    CU_ASSERT_EQUAL(acc_flows_build(&a, &plan, &cfg, NULL, NULL, &fl, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "alpha-delta"));
    acc_launch_hosts_release(&plan);
    acc_config_release(&cfg);
}

/* ------------------------------------------------------------ service */

/* After the commit every link reservation on the provisioning network is
 * provisioned once with exactly its components' addresses; the link on the
 * simulator and the link inside one site are not. */
static void test_provision_after_commit(void)
{
    struct fix f;
    CU_ASSERT_EQUAL_FATAL(open_fix(&f, "commit", true), 0);
    char id[ACC_ID_LEN + 1], ab[ACC_KEY_MAX] = "", ag[ACC_KEY_MAX] = "", buf[512];
    ACC_ASSERT_OK(agree(f.svc, id));
    link_keys(f.svc, id, ab, ag);
    struct fake_net *n = fake_net_get("wan");
    CU_ASSERT_EQUAL(fake_net_held(n), 2);
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), 2); /* once per reservation, no more */
    CU_ASSERT_EQUAL(fake_net_provisions(n, ab), 1);
    CU_ASSERT_EQUAL(fake_net_provisions(n, ag), 1);
    CU_ASSERT_TRUE(fake_net_flow(n, ab, buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, FLOW_AB);
    CU_ASSERT_TRUE(fake_net_flow(n, ag, buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, FLOW_AG);
    /* Nothing waits for a retry. */
    sleep(6);
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), 2);
    close_fix(&f);
}

/* A provisioning that fails is retried by housekeeping until it works. */
static void test_provision_retried(void)
{
    struct fix f;
    CU_ASSERT_EQUAL_FATAL(open_fix(&f, "retry", true), 0);
    struct fake_net *n = fake_net_get("wan");
    fake_net_fail_next(n, 3); /* the commit's two calls and the first retry */
    char id[ACC_ID_LEN + 1], ab[ACC_KEY_MAX] = "", ag[ACC_KEY_MAX] = "", buf[512];
    ACC_ASSERT_OK(agree(f.svc, id)); /* the agreement stands */
    link_keys(f.svc, id, ab, ag);
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), 2);
    CU_ASSERT_FALSE(fake_net_flow(n, ab, buf, sizeof buf));
    /* Housekeeping (every 5 s): one retry fails, the next succeeds. */
    CU_ASSERT_TRUE(wait_provisions(n, ag, 3, 14));
    CU_ASSERT_TRUE(fake_net_flow(n, ab, buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, FLOW_AB);
    CU_ASSERT_TRUE(fake_net_flow(n, ag, buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, FLOW_AG);
    unsigned total = fake_net_provisions(n, NULL);
    sleep(6); /* and then it stops */
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), total);

    /* A terminated agreement is no longer retried. */
    fake_net_fail_next(n, 2);
    ACC_ASSERT_OK(agree(f.svc, id));
    struct acc_agreement a;
    struct acc_nego *wait = NULL;
    struct acc_error err;
    unsigned before = fake_net_provisions(n, NULL);
    CU_ASSERT_EQUAL(before, total + 2);
    ACC_ASSERT_OK(acc_service_terminate(f.svc, id, &a, &wait, &err));
    CU_ASSERT_PTR_NULL(wait);
    acc_agreement_release(&a);
    sleep(6);
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), before);
    close_fix(&f);
}

/* At start-up every Observed agreement still ahead is provisioned again;
 * a terminated one is not. */
static void test_provision_at_restart(void)
{
    struct fix f;
    CU_ASSERT_EQUAL_FATAL(open_fix(&f, "restart", true), 0);
    char id[ACC_ID_LEN + 1], gone[ACC_ID_LEN + 1];
    char ab[ACC_KEY_MAX] = "", ag[ACC_KEY_MAX] = "", ab2[ACC_KEY_MAX] = "", ag2[ACC_KEY_MAX] = "";
    ACC_ASSERT_OK(agree(f.svc, id));
    ACC_ASSERT_OK(agree(f.svc, gone));
    link_keys(f.svc, id, ab, ag);
    link_keys(f.svc, gone, ab2, ag2);
    struct acc_agreement a;
    struct acc_nego *wait = NULL;
    struct acc_error err;
    ACC_ASSERT_OK(acc_service_terminate(f.svc, gone, &a, &wait, &err));
    acc_agreement_release(&a);
    close_fix(&f);
    struct fake_net *n = fake_net_get("wan");
    CU_ASSERT_EQUAL(fake_net_provisions(n, ab), 1);
    CU_ASSERT_EQUAL(fake_net_held(n), 2); /* the terminated one's went */

    CU_ASSERT_EQUAL_FATAL(open_fix(&f, "restart", false), 0);
    CU_ASSERT_TRUE(wait_provisions(n, ab, 2, 5));
    CU_ASSERT_TRUE(wait_provisions(n, ag, 2, 5));
    char buf[512];
    CU_ASSERT_TRUE(fake_net_flow(n, ab, buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, FLOW_AB);
    usleep(300000);
    /* 2 at each commit, 2 now: none for the terminated one */
    CU_ASSERT_EQUAL(fake_net_provisions(n, NULL), 6);
    close_fix(&f);
}

/* ------------------------------------------------------------- state */

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *k = n ? n->children : NULL; k; k = k->next) {
        if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, name) == 0)
            return k;
    }
    return NULL;
}

static bool text_is(xmlNode *n, const char *want)
{
    if (!n)
        return false;
    xmlChar *t = xmlNodeGetContent(n);
    bool ok = t && strcmp((const char *)t, want) == 0;
    if (!ok)
        fprintf(stderr, "\n  %s is '%s', not '%s'\n", n->name, t ? (char *)t : "", want);
    xmlFree(t);
    return ok;
}

/* The GuaranteeTermState of term `name` in a status document. */
static xmlNode *guarantee(xmlDoc *d, const char *name)
{
    for (xmlNode *k = xmlDocGetRootElement(d)->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE || strcmp((const char *)k->name, "GuaranteeTermState"))
            continue;
        xmlChar *t = xmlGetNsProp(k, BAD_CAST "termName", BAD_CAST ACC_NS_WSAG);
        bool hit = t && strcmp((const char *)t, name) == 0;
        xmlFree(t);
        if (hit)
            return k;
    }
    return NULL;
}

/* The state document of an agreement whose measured links are Violated:
 * each measured guarantee with its link, times and counters; the one on
 * the simulator NotDetermined, without counters. */
static void state_xml_violated(struct acc_service_state *s, const struct acc_provision_status *st)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error err;
    ACC_ASSERT_OK(acc_xml_state(&s->view, &b, &err));
    CU_ASSERT_EQUAL(acc_xml_validate_mem(acc_buf_str(&b), b.len, &err), ACC_OK);
    xmlDoc *d = xmlReadMemory(acc_buf_str(&b), (int)b.len, NULL, NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NULL(guarantee(d, "bc"));
    const char *measured[] = {"ab", "ca", "ag"};
    for (size_t i = 0; i < 3; i++) {
        xmlNode *g = guarantee(d, measured[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT(text_is(child(g, "State"), "Violated"));
        xmlNode *lg = child(g, "LinkGuarantee");
        CU_ASSERT(text_is(child(lg, "Link"), i < 2 ? "alpha-beta" : "alpha-gamma"));
        CU_ASSERT(text_is(child(lg, "Provisioned"), "true"));
        CU_ASSERT(text_is(child(lg, "Active"), "true"));
        CU_ASSERT(text_is(child(lg, "Activated"), "2030-03-17T17:46:40Z"));
        CU_ASSERT(text_is(child(lg, "ViolatedAt"), "2030-03-17T17:47:40Z"));
        CU_ASSERT(text_is(child(lg, "Reason"), st->why));
        CU_ASSERT(text_is(child(lg, "Bytes"), "123456789012"));
        CU_ASSERT(text_is(child(lg, "Packets"), "4242"));
        CU_ASSERT(text_is(child(lg, "Drops"), "7"));
    }
    /* On the simulator: NotDetermined, the link, no counters. */
    xmlNode *bg = guarantee(d, "bg");
    CU_ASSERT_PTR_NOT_NULL_FATAL(bg);
    CU_ASSERT(text_is(child(bg, "State"), "NotDetermined"));
    CU_ASSERT(text_is(child(child(bg, "LinkGuarantee"), "Link"), "beta-gamma"));
    CU_ASSERT_PTR_NULL(child(child(bg, "LinkGuarantee"), "Bytes"));
    CU_ASSERT_PTR_NULL(child(child(bg, "LinkGuarantee"), "Active"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
}

/* The same state as JSON. */
static void state_json_violated(struct acc_service_state *s, const struct acc_provision_status *st)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_state(&s->view, &b);
    json_error_t je;
    json_t *j = json_loadb(acc_buf_str(&b), b.len, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_t *gts = json_object_get(j, "guaranteeTerms");
    CU_ASSERT_EQUAL(json_array_size(gts), 4);
    int seen = 0;
    for (size_t i = 0; i < json_array_size(gts); i++) {
        json_t *g = json_array_get(gts, i);
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name && strcmp(name, "ab") == 0) {
            seen++;
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "state")), "Violated");
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "link")), "alpha-beta");
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "violatedAt")),
                                   "2030-03-17T17:47:40Z");
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "reason")), st->why);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(g, "bytes")), 123456789012LL);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(g, "drops")), 7);
            CU_ASSERT_TRUE(json_is_true(json_object_get(g, "active")));
        } else if (name && strcmp(name, "bg") == 0) {
            seen++;
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "state")), "NotDetermined");
            CU_ASSERT_PTR_NULL(json_object_get(g, "bytes"));
        }
    }
    CU_ASSERT_EQUAL(seen, 2);
    json_decref(j);
    acc_buf_release(&b);
}

/* Before the start: NotDetermined, nothing violated, counters zero. */
static void state_before_start(struct acc_service *svc, const char *id)
{
    struct acc_provision_status before = {0};
    fake_net_set_status(fake_net_get("wan"), &before);
    struct acc_service_state s;
    struct acc_error err;
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_service_state(svc, id, &s, &err));
    ACC_ASSERT_OK(acc_xml_state(&s.view, &b, &err));
    CU_ASSERT_EQUAL(acc_xml_validate_mem(acc_buf_str(&b), b.len, &err), ACC_OK);
    xmlDoc *d = xmlReadMemory(acc_buf_str(&b), (int)b.len, NULL, NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *ab = guarantee(d, "ab");
    CU_ASSERT(text_is(child(ab, "State"), "NotDetermined"));
    CU_ASSERT(text_is(child(child(ab, "LinkGuarantee"), "Active"), "false"));
    CU_ASSERT_PTR_NULL(child(child(ab, "LinkGuarantee"), "ViolatedAt"));
    CU_ASSERT_PTR_NULL(child(child(ab, "LinkGuarantee"), "Reason"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_service_state_release(&s);
}

static void test_state(void)
{
    struct fix f;
    CU_ASSERT_EQUAL_FATAL(open_fix(&f, "state", true), 0);
    char id[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(agree(f.svc, id));
    struct acc_provision_status st = {.active = true,
                                      .activated = 1900000000,
                                      .state = ACC_GUARANTEE_VIOLATED,
                                      .violated_at = 1900000060,
                                      .bytes = 123456789012ULL,
                                      .packets = 4242,
                                      .drops = 7};
    strcpy(st.why, "class 1:12 missing on acc-wan/to-beta; reinstalled");
    fake_net_set_status(fake_net_get("wan"), &st);

    struct acc_service_state s;
    struct acc_error err;
    ACC_ASSERT_OK(acc_service_state(f.svc, id, &s, &err));
    CU_ASSERT_EQUAL(s.n_guarantees, 4); /* ab, ca, ag, bg: bc reserved nothing */
    state_xml_violated(&s, &st);
    state_json_violated(&s, &st);
    acc_service_state_release(&s);
    state_before_start(f.svc, id);
    close_fix(&f);
}

static const struct acc_test_case tests[] = {
    {"flows of link reservations", test_flows},
    {"provisioned once per link after commit", test_provision_after_commit},
    {"failed provisioning retried by housekeeping", test_provision_retried},
    {"provisioned again at restart", test_provision_at_restart},
    {"link guarantee states in XML and JSON", test_state},
    {NULL, NULL},
};

static int setup(void)
{
    struct acc_error err;
    return acc_xml_init(&err) ? 1 : 0;
}

static int teardown(void)
{
    acc_xml_cleanup();
    return 0;
}

const struct acc_test_suite acc_test_suites[] = {
    {"provision", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
