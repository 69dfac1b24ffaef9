/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml_agreement.c - an agreement rendered from its offer (foreign
 * content kept, special characters escaped), its state, the list and the
 * trace; each document validated against the schemas.  Part of test_xml
 * (its suite "xml_agreement"). */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>

#include "strutil.h"
#include "testutil.h"
#include "xml.h"
#include "xml_check.h"
#include "xml_internal.h"

#define SPECIAL "a&b <c> \"d\" 'e' J\xc3\xbcrgen \xe6\x9d\xb1\xe4\xba\xac"

/* An allocated agreement; strings are the caller's to free with
 * acc_agreement_release(). */
static void sample_agreement(struct acc_agreement *a, const char *offer_file)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, "abcdefghijklmnop", sizeof a->id);
    a->name = strdup("metatrace-run");
    a->initiator = strdup("alice");
    a->state = ACC_STATE_OBSERVED;
    a->created = 1898841000;
    a->start = 1898841600;
    a->end = a->start + 7200;
    a->duration = 7200;
    a->strategy = ACC_STRATEGY_INTERSECT;
    a->launch = ACC_LAUNCH_METAMPICH;
    a->rounds = 2;
    a->rollbacks = 1;
    if (offer_file) {
        a->offer_xml = acc_test_slurp(offer_file, &a->offer_len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->offer_xml);
    }
    a->n_comps = 2;
    a->comps = calloc(2, sizeof *a->comps);
    a->comps[0] =
        (struct acc_alloc_component){.name = strdup("trace"),
                                     .site = strdup("caesar"),
                                     .nodes = 16,
                                     .ppn = 2,
                                     .reservation = strdup("acc-abcdefghijklmnop-1-trace"),
                                     .local_id = strdup("resv.17"),
                                     .node_names = strdup("c001, c002,c003")};
    a->comps[1] =
        (struct acc_alloc_component){.name = strdup("partrace"),
                                     .site = strdup("fzj-xd1"),
                                     .nodes = 8,
                                     .ppn = 1,
                                     .reservation = strdup("acc-abcdefghijklmnop-1-partrace"),
                                     .local_id = strdup("4711")};
    a->n_links = 1;
    a->links = calloc(1, sizeof *a->links);
    a->links[0] = (struct acc_alloc_link){strdup("trace-partrace"),
                                          strdup("trace"),
                                          strdup("partrace"),
                                          strdup("caesar"),
                                          strdup("fzj-xd1"),
                                          strdup("caesar~fzj-xd1"),
                                          5000,
                                          strdup("acc-abcdefghijklmnop-1-wan"),
                                          strdup("argon-9")};
}

static void test_agreement_from_offer(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, ACC_TEST_EXAMPLES "/offer.xml");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));

    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_WSAG, "Agreement"));
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "AgreementId", "abcdefghijklmnop"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), "metatrace-run"));
    /* Accord became the responder, right after the initiator. */
    xmlNode *init = find(root, ACC_NS_WSAG, "AgreementInitiator");
    CU_ASSERT(content_is(init, "alice"));
    xmlNode *next = init ? xmlNextElementSibling(init) : NULL;
    CU_ASSERT(acc_xml_is(next, ACC_NS_WSAG, "AgreementResponder"));
    CU_ASSERT(content_is(next, "accord"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "TemplateName"), "meta-job"));

    /* Every term of the offer, in order, then the allocation. */
    static const char *const names[] = {"schedule",       "trace",     "partrace", "viz",
                                        "trace-partrace", "trace-viz", "launch",   "allocation"};
    xmlNode *all = find(root, ACC_NS_WSAG, "All");
    size_t i = 0;
    for (xmlNode *t = all ? xmlFirstElementChild(all) : NULL; t; t = xmlNextElementSibling(t)) {
        CU_ASSERT_FATAL(i < 8);
        CU_ASSERT(prop_is(t, ACC_NS_WSAG, "Name", names[i]));
        i++;
    }
    CU_ASSERT_EQUAL(i, 8);
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "Argument"), "--steps=500"));
    xmlNode *launch = find(root, ACC_NS_CO, "Launch");
    CU_ASSERT_PTR_NOT_NULL(launch);
    if (launch) {
        xmlChar *style = xmlGetNoNsProp(launch, BAD_CAST "style");
        CU_ASSERT(style && strcmp((const char *)style, "metampich") == 0);
        xmlFree(style);
    }

    xmlNode *alloc = find(root, ACC_NS_CO, "Allocation");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alloc);
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "State"), "Observed"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Start"), "2030-03-04T08:00:00Z"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "End"), "2030-03-04T10:00:00Z"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Strategy"), "intersect"));
    CU_ASSERT(content_is(find(alloc->children, ACC_NS_CO, "Rollbacks"), "1"));
    xmlNode *ca = find(alloc->children, ACC_NS_CO, "ComponentAllocation");
    CU_ASSERT(prop_is(ca, ACC_NS_CO, "name", "trace"));
    CU_ASSERT(content_is(find(ca ? ca->children : NULL, ACC_NS_CO, "LocalId"), "resv.17"));
    int node_names = 0;
    for (xmlNode *k = ca ? xmlFirstElementChild(ca) : NULL; k; k = xmlNextElementSibling(k))
        node_names += acc_xml_is(k, ACC_NS_CO, "NodeName");
    CU_ASSERT_EQUAL(node_names, 3);
    xmlNode *la = find(alloc->children, ACC_NS_CO, "LinkAllocation");
    CU_ASSERT(content_is(find(la ? la->children : NULL, ACC_NS_CO, "Link"), "caesar~fzj-xd1"));
    CU_ASSERT(content_is(find(la ? la->children : NULL, ACC_NS_CO, "Bandwidth"), "5000"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

/* Foreign namespaces, other prefixes and a default namespace in the stored
 * offer come out declared and valid, with their content intact. */
static void test_agreement_keeps_foreign_content(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, OFFERS "good-other-prefixes.xml");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), "  other & prefixes  "));
    xmlNode *addr = find(root, "http://www.w3.org/2005/08/addressing", "Address");
    CU_ASSERT(content_is(addr, "urn:user:carol"));
    xmlNode *rp = find(root, "http://www.w3.org/2005/08/addressing", "ReferenceParameters");
    CU_ASSERT(prop_is(rp, "http://www.w3.org/2005/08/addressing", "IsReferenceParameter", "true"));
    CU_ASSERT(content_is(find(root, "urn:example:co", "co"), "not ours"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "Argument"), "--label=<a&b>"));
    CU_ASSERT(
        content_is(find(root, ACC_NS_WSAG, "ServiceLevelObjective"), "starts within the window"));
    /* The offer's own AgreementId does not survive; ours does. */
    CU_ASSERT(prop_is(root, ACC_NS_WSAG, "AgreementId", "abcdefghijklmnop"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

/* Without a stored offer; special characters survive in names and reasons,
 * and characters XML cannot carry are replaced rather than breaking it. */
static void test_agreement_special_characters(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a, NULL);
    free(a.name);
    a.name = strdup(SPECIAL);
    free(a.comps[0].name);
    a.comps[0].name = strdup(SPECIAL);
    a.state = ACC_STATE_REJECTED;
    a.start = a.end = 0;
    a.fault_code = strdup("NoCommonSlot");
    a.reason = strdup(SPECIAL "\n\nsite caesar: bad\x01"
                              "byte\xff here\n");
    ACC_ASSERT_OK(acc_xml_agreement(&a, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "Name"), SPECIAL));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "AgreementInitiator"), "alice"));
    CU_ASSERT(prop_is(find(root, ACC_NS_CO, "ComponentAllocation"), ACC_NS_CO, "name", SPECIAL));
    xmlNode *r1 = find(root, ACC_NS_CO, "Reason");
    CU_ASSERT(content_is(r1, SPECIAL));
    xmlNode *r2 = r1 ? xmlNextElementSibling(r1) : NULL;
    CU_ASSERT(content_is(r2, "site caesar: bad\xef\xbf\xbd"
                             "byte\xef\xbf\xbd here"));
    CU_ASSERT_PTR_NULL(find(root, ACC_NS_CO, "Start"));
    CU_ASSERT(content_is(find(root, ACC_NS_CO, "FaultCode"), "NoCommonSlot"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_agreement_bad_stored_offer(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    struct acc_error e = {0};
    sample_agreement(&a, NULL);
    a.offer_xml = strdup("<not-closed>");
    a.offer_len = strlen(a.offer_xml);
    CU_ASSERT_EQUAL(acc_xml_agreement(&a, &b, &e), ACC_ERR_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "abcdefghijklmnop"));
    CU_ASSERT_EQUAL(b.len, 0);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_state(void)
{
    struct acc_agreement a;
    sample_agreement(&a, NULL);
    struct acc_term_view terms[] = {{"trace", ACC_TERM_READY}, {SPECIAL, ACC_TERM_PROCESSING}};
    struct acc_guarantee_view g[] = {{.name = "on-time", .state = "Fulfilled"},
                                     {.name = "wan", .state = "bogus"}};
    struct acc_state_view v = {&a, terms, 2, g, 2, NULL};
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_state(&v, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(acc_xml_is(root, ACC_NS_CO, "AgreementStatus"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "agreementId", "abcdefghijklmnop"));
    CU_ASSERT(content_is(find(root, ACC_NS_WSAG, "State"), "Observed"));
    xmlNode *st = find(root, ACC_NS_WSAG, "ServiceTermState");
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT(prop_is(st, ACC_NS_WSAG, "termName", "trace"));
    CU_ASSERT(content_is(find(st->children, ACC_NS_WSAG, "State"), "Ready"));
    xmlNode *st2 = xmlNextElementSibling(st);
    CU_ASSERT(prop_is(st2, ACC_NS_WSAG, "termName", SPECIAL));
    xmlNode *gt = find(root, ACC_NS_WSAG, "GuaranteeTermState");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gt);
    CU_ASSERT(content_is(find(gt->children, ACC_NS_WSAG, "State"), "Fulfilled"));
    gt = xmlNextElementSibling(gt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gt);
    CU_ASSERT(content_is(find(gt->children, ACC_NS_WSAG, "State"), "NotDetermined"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_state_view none = {&a, NULL, 0, NULL, 0, NULL};
    ACC_ASSERT_OK(acc_xml_state(&none, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);

    /* With a job that ended: co:Job closes the status, and stands alone. */
    struct acc_run r = {.style = ACC_LAUNCH_MPICH_G2,
                        .state = ACC_RUN_EXITED,
                        .started = 1900000000,
                        .ended = 1900000060,
                        .exit_status = 3,
                        .reason = "the job exited with status 3",
                        .command = "mpiexec.hydra -n 2 'a <b>'",
                        .output_total = 120};
    strcpy(r.agreement, "abcdefghijklmnop");
    struct acc_state_view with_job = {&a, terms, 2, NULL, 0, &r};
    ACC_ASSERT_OK(acc_xml_state(&with_job, &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *job = find(xmlDocGetRootElement(d), ACC_NS_CO, "Job");
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "State"), "exited"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "ExitStatus"), "3"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "Style"), "mpich-g2"));
    CU_ASSERT(content_is(find(job->children, ACC_NS_CO, "Command"), "mpiexec.hydra -n 2 'a <b>'"));
    CU_ASSERT_PTR_NULL(find(job->children, ACC_NS_CO, "Signal"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    ACC_ASSERT_OK(acc_xml_run(&r, &b, NULL));
    CU_ASSERT(valid(&b));
    d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT(acc_xml_is(xmlDocGetRootElement(d), ACC_NS_CO, "Job"));
    CU_ASSERT(content_is(find(xmlDocGetRootElement(d)->children, ACC_NS_CO, "OutputBytes"), "120"));
    xmlFreeDoc(d);
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_list(void)
{
    struct acc_agreement v[2];
    sample_agreement(&v[0], NULL);
    sample_agreement(&v[1], NULL);
    free(v[1].name);
    v[1].name = NULL;
    v[1].start = v[1].end = 0;
    v[1].state = ACC_STATE_PENDING;
    free(v[1].comps[1].site);
    v[1].comps[1].site = strdup("caesar");     /* the same site twice: listed once */
    struct acc_agreement_list l = {v, 2, 250}; /* a page of 2 of 250 */
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_list(&l, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "count", "2"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "total", "250"));
    xmlNode *r1 = find(root, ACC_NS_CO, "AgreementRef");
    xmlNode *r2 = r1 ? xmlNextElementSibling(r1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
    CU_ASSERT(content_is(find(r1->children, ACC_NS_CO, "Start"), "2030-03-04T08:00:00Z"));
    CU_ASSERT_PTR_NULL(find(r2->children, ACC_NS_CO, "Start"));
    CU_ASSERT_PTR_NULL(find(r2->children, ACC_NS_CO, "Name"));
    int sites = 0;
    for (xmlNode *k = xmlFirstElementChild(r2); k; k = xmlNextElementSibling(k))
        sites += acc_xml_is(k, ACC_NS_CO, "Site");
    CU_ASSERT_EQUAL(sites, 1);
    xmlFreeDoc(d);
    acc_buf_release(&b);

    struct acc_agreement_list empty = {NULL, 0, 0};
    ACC_ASSERT_OK(acc_xml_list(&empty, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
    acc_agreement_release(&v[0]);
    acc_agreement_release(&v[1]);
}

static void test_trace(void)
{
    struct acc_agreement a;
    sample_agreement(&a, NULL);
    struct acc_trace t;
    acc_trace_init(&t);
    struct acc_trace_event ev = {.round = 1,
                                 .kind = ACC_TRACE_PREVIEW,
                                 .target = "site caesar",
                                 .adapter = "caesar",
                                 .amount = 16,
                                 .t_from = 1898841000,
                                 .t_until = 1898841000 + 86400,
                                 .t_result = 1898841600,
                                 .status = ACC_OK,
                                 .elapsed_us = 1234,
                                 .detail = "3 frames <ok> & \"fine\""};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev));
    struct acc_trace_event ev2 = {.round = 1, .kind = ACC_TRACE_ROLLBACK, .status = ACC_ERR_BUSY};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev2));
    struct acc_buf b = ACC_BUF_INIT;
    ACC_ASSERT_OK(acc_xml_trace(&a, &t, &b, NULL));
    CU_ASSERT(valid(&b));
    xmlDocPtr d = read_doc(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xmlNode *root = xmlDocGetRootElement(d);
    CU_ASSERT(prop_is(root, ACC_NS_CO, "rounds", "2"));
    CU_ASSERT(prop_is(root, ACC_NS_CO, "strategy", "intersect"));
    xmlNode *e1 = find(root, ACC_NS_CO, "Event");
    xmlNode *e2 = e1 ? xmlNextElementSibling(e1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
    CU_ASSERT(prop_is(e1, ACC_NS_CO, "kind", acc_trace_kind_name(ACC_TRACE_PREVIEW)));
    CU_ASSERT(prop_is(e1, ACC_NS_CO, "status", "Ok"));
    CU_ASSERT(content_is(find(e1->children, ACC_NS_CO, "Result"), "2030-03-04T08:00:00Z"));
    CU_ASSERT(content_is(find(e1->children, ACC_NS_CO, "Detail"), "3 frames <ok> & \"fine\""));
    CU_ASSERT(prop_is(e2, ACC_NS_CO, "status", "ResourceBusy"));
    CU_ASSERT_PTR_NULL(find(e2->children, ACC_NS_CO, "Amount"));
    CU_ASSERT_PTR_NULL(find(e2->children, ACC_NS_CO, "From"));
    CU_ASSERT_PTR_NOT_NULL(find(e2->children, ACC_NS_CO, "ElapsedMicros"));
    xmlFreeDoc(d);
    acc_buf_release(&b);

    ACC_ASSERT_OK(acc_xml_trace(&a, NULL, &b, NULL));
    CU_ASSERT(valid(&b));
    acc_buf_release(&b);
    acc_trace_release(&t);
    acc_agreement_release(&a);
}

const struct acc_test_case acc_xml_agreement_tests[] = {
    {"agreement_from_offer", test_agreement_from_offer},
    {"agreement_keeps_foreign_content", test_agreement_keeps_foreign_content},
    {"agreement_special_characters", test_agreement_special_characters},
    {"agreement_bad_stored_offer", test_agreement_bad_stored_offer},
    {"state", test_state},
    {"list", test_list},
    {"trace", test_trace},
    {NULL, NULL},
};
