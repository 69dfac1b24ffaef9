/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml_views.c - the service's other documents: the sites view, a
 * preview, the templates, a fault, and renderers appending to a buffer.
 * Part of test_xml (its suite "xml_views"). */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "xml.h"
#include "xml_check.h"
#include "xml_internal.h"

static const struct acc_site_info sites[] = {
    {"fzj-xd1", "sim-batch", 64, true, "ok", 10, 0, 0, NULL},
    {"caesar", "sim-batch", 128, true, "ok", 12, 1, 0, NULL},
    {"fh-brs", "slurm", 32, false, "scontrol: <timeout> & retry", 3, 3, 1500,
     "https://10.79.3.11:8443"},
};
static const struct acc_site_info networks[] = {
    {"viola", "sim-network", 0, true, NULL, 5, 0, 0, NULL}};
static const struct acc_link_info links[] = {
    {"caesar~fzj-xd1", "caesar", "fzj-xd1", "viola", "sim-network", 10000, true},
    {"caesar~fh-brs", "caesar", "fh-brs", "viola", "sim-network", 10000, true},
    {"fh-brs~fzj-xd1", "fh-brs", "fzj-xd1", "viola", "sim-network", 8000, false},
};
static const struct acc_sites_view testbed = {sites, 3, networks, 1, links, 3};

static void test_sites(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    ACC_ASSERT_OK(acc_xml_sites(&testbed, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Sites"));
    int n_sites = 0, n_links = 0, n_networks = 0;
    for (xmlNode *k = xmlFirstElementChild(root); k; k = xmlNextElementSibling(k)) {
        n_sites += acc_xml_is(k, ACC_NS_CO, "Site");
        n_links += acc_xml_is(k, ACC_NS_CO, "Link");
        n_networks += acc_xml_is(k, ACC_NS_CO, "Network");
    }
    CU_ASSERT_EQUAL(n_sites, 3);
    CU_ASSERT_EQUAL(n_networks, 1);
    CU_ASSERT_EQUAL(n_links, 3);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_sites(&testbed, "fh-brs", &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Site"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "up", "false"));
    CU_ASSERT(content_is(find(root->children, ACC_NS_CO, "Health"), "scontrol: <timeout> & retry"));
    /* a remote site: its health call's round trip and its daemon's URL */
    CU_ASSERT(prop_is(root, ACC_NS_CO, "rttUs", "1500"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "endpoint", "https://10.79.3.11:8443"));
    n_links = 0;
    for (xmlNode *k = xmlFirstElementChild(root); k; k = xmlNextElementSibling(k))
        n_links += acc_xml_is(k, ACC_NS_CO, "Link");
    CU_ASSERT_EQUAL(n_links, 2);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    CU_ASSERT_EQUAL(acc_xml_sites(&testbed, "nowhere", &b, &e), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "nowhere"));
    CU_ASSERT_EQUAL(b.len, 0);

    struct acc_sites_view empty = {0};
    ACC_ASSERT_OK(acc_xml_sites(&empty, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
}

static void test_preview(void)
{
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_frames_push(&f, 1898841600, 1898841600 + 3600));
    ACC_ASSERT_OK(acc_frames_push(&f, 1898841600 + 7200, 1898841600 + 86400));
    f.truncated = true;
    struct acc_preview_view v = {"caesar", 16, 5400, 1898841600, 1898841600 + 86400, &f};
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_preview(&v, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "duration", "PT1H30M"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "truncated", "true"));
    xmlNode *fr = find(root, ACC_NS_CO, "Frame");
    CU_ASSERT(prop_is(fr, ACC_NS_CO, "end", "2030-03-04T09:00:00Z"));
    CU_ASSERT(fr && xmlNextElementSibling(fr) && !xmlNextElementSibling(xmlNextElementSibling(fr)));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_preview_view none = {"caesar", 16, 5400, 1898841600, 1898841600 + 86400, NULL};
    ACC_ASSERT_OK(acc_xml_preview(&none, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:truncated=\"false\""));
    acc_buf_release(&b);
    acc_frames_release(&f);
}

static void test_templates(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    ACC_ASSERT_OK(acc_xml_templates(&testbed, &b, NULL));
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "co:name=\"meta-job\""));
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_template("meta-job", &testbed, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_WSAG, "Template"));
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "TemplateId", "meta-job"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "TemplateName"), "meta-job"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Schedule"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Component"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Link"));
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_CO, "Launch"));
    /* The site item lists the configured sites; the nodes item the largest. */
    int enums = 0;
    bool max128 = false;
    for (xmlNode *it = find(root, ACC_NS_WSAG, "Item"); it; it = xmlNextElementSibling(it)) {
        if (!acc_xml_is(it, ACC_NS_WSAG, "Item"))
            continue;
        xmlChar *name = xmlGetNsProp(it, BAD_CAST "Name", BAD_CAST ACC_NS_WSAG);
        xmlNode *facet = find(it->children, "http://www.w3.org/2001/XMLSchema", "restriction");
        for (xmlNode *f = facet ? xmlFirstElementChild(facet) : NULL; f;
             f = xmlNextElementSibling(f)) {
            xmlChar *value = xmlGetNoNsProp(f, BAD_CAST "value");
            if (name && strcmp((const char *)name, "Site") == 0)
                enums++;
            if (name && strcmp((const char *)name, "Nodes") == 0 && value)
                max128 = strcmp((const char *)value, "128") == 0;
            xmlFree(value);
        }
        xmlFree(name);
    }
    CU_ASSERT_EQUAL(enums, 3);
    CU_ASSERT(max128);
    CU_ASSERT_PTR_NOT_NULL(find(root, ACC_NS_WSAG, "Constraint"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_sites_view empty = {0};
    ACC_ASSERT_OK(acc_xml_template("meta-job", &empty, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);

    CU_ASSERT_EQUAL(acc_xml_template("other", &testbed, &b, &e), ACC_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "other"));
    CU_ASSERT_EQUAL(b.len, 0);
}

static void test_fault(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_xml_fault(ACC_ERR_NO_SLOT,
                  "no common slot before 2030-03-06T18:00:00Z\nsite caesar: "
                  "busy <all week> & more\n\nlink caesar~fzj-xd1: full",
                  "abcdefghijklmnop", &b);
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "Fault"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "code", "NoCommonSlot"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "status", "409"));
    CU_ASSERT(
        content_is(find(root, ACC_NS_CO, "Message"), "no common slot before 2030-03-06T18:00:00Z"));
    xmlNode *d1 = find(root, ACC_NS_CO, "Detail");
    CU_ASSERT(content_is(d1, "site caesar: busy <all week> & more"));
    CU_ASSERT(content_is(d1 ? xmlNextElementSibling(d1) : NULL, "link caesar~fzj-xd1: full"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "AgreementId"), "abcdefghijklmnop"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    /* A schema error message, as the service passes it on. */
    struct acc_offer o;
    struct acc_error e = {0};
    CU_ASSERT_EQUAL(parse_case("schema-nodes-zero.xml", &o, &e), ACC_ERR_SCHEMA);
    acc_xml_fault(e.code, e.msg, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NULL(strstr(b.data, "AgreementId"));
    acc_buf_release(&b);

    /* An empty first line: the code's text is the message. */
    acc_xml_fault(ACC_ERR_ADAPTER, "\nsite caesar: refused", NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<co:Detail>site caesar: refused</co:Detail>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "<co:Message>an adapter failed</co:Message>"));
    acc_buf_release(&b);

    acc_xml_fault(ACC_ERR_INTERNAL, NULL, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, acc_err_text(ACC_ERR_INTERNAL)));
    acc_buf_release(&b);
}

/* A renderer appends: two documents in one buffer stay separate. */
static void test_renderers_append(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "prefix|");
    ACC_ASSERT_OK(acc_xml_templates(&testbed, &b, NULL));
    CU_ASSERT_EQUAL(strncmp(b.data, "prefix|<?xml", 12), 0);
    acc_buf_release(&b);
}

const struct acc_test_case acc_xml_views_tests[] = {
    {"sites", test_sites},
    {"preview", test_preview},
    {"templates", test_templates},
    {"fault", test_fault},
    {"renderers_append", test_renderers_append},
    {NULL, NULL},
};
