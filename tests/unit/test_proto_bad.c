/* SPDX-License-Identifier: Apache-2.0 */
/* test_proto_bad.c - what the protocol readers refuse: bad values, the
 * wrong shape, DTDs and entities, oversize and over-deep documents, too
 * many attributes, unknown elements, the wrong namespace; and many
 * threads reading at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_internal.h"
#include "strutil.h"
#include "testutil.h"

#define NS                 "xmlns=\"" ACC_PROTO_NS "\""
#define RES                "<Resource kind=\"nodes\" name=\"alpha\" amount=\"2\"/>"
#define PREVIEW(res, rest) "<Preview " NS ">" res rest "</Preview>"
#define PV_REST                                                                            \
    "<From>2026-11-22T08:00:00Z</From><Until>2026-11-23T08:00:00Z</Until><Duration>PT1H</" \
    "Duration>"
#define RESERVE(res, rest)  "<Reserve " NS ">" res rest "</Reserve>"
#define RV_REST             "<Start>2026-11-22T08:00:00Z</Start><Duration>PT1H</Duration>"
#define RSV(attrs, body)    "<Reservation " NS " " attrs ">" body "</Reservation>"
#define RSV_ATTRS           "key=\"k\" localId=\"1\" state=\"Observed\""
#define RSV_BODY            RES "<Start>2026-11-22T08:00:00Z</Start><End>2026-11-22T09:00:00Z</End>"
#define JOB(attrs, body)    "<Job " NS " " attrs ">" body "</Job>"
#define JOB_ATTRS           "key=\"k\" nodes=\"1\" ppn=\"1\""
#define PS(attrs, body)     "<ProvisionStatus " NS " " attrs ">" body "</ProvisionStatus>"
#define PS_ATTRS            "provisioned=\"true\" active=\"true\" state=\"Fulfilled\""
#define PS_BODY             "<Start>2026-11-22T08:00:00Z</Start><End>2026-11-22T09:00:00Z</End>"
#define PS_COUNTS           "<Bytes>1</Bytes><Packets>1</Packets><Drops>0</Drops>"
#define HEALTH(attrs, body) "<Health " NS " " attrs ">" body "</Health>"
#define H_ATTRS             "up=\"true\" version=\"1\" site=\"alpha\""

enum doc {
    D_PREVIEW,
    D_FRAMES,
    D_RESERVE,
    D_RESERVATION,
    D_FLOW,
    D_PROVISION_STATUS,
    D_JOB,
    D_JOB_REF,
    D_JOB_STATUS,
    D_HEALTH,
};

/* Reads body as doc; releases what a success gave. */
static acc_err read_doc(enum doc d, const char *body, size_t len, struct acc_error *e)
{
    acc_err rc = ACC_ERR_INTERNAL;
    switch (d) {
    case D_PREVIEW: {
        struct acc_proto_preview p;
        rc = acc_proto_read_preview(body, len, &p, e);
        break;
    }
    case D_FRAMES: {
        struct acc_frames f;
        rc = acc_proto_read_frames(body, len, &f, e);
        if (!rc)
            acc_frames_release(&f);
        break;
    }
    case D_RESERVE: {
        struct acc_proto_reserve r;
        rc = acc_proto_read_reserve(body, len, &r, e);
        break;
    }
    case D_RESERVATION: {
        struct acc_reservation r;
        rc = acc_proto_read_reservation(body, len, &r, e);
        if (!rc)
            acc_reservation_release(&r);
        break;
    }
    case D_FLOW: {
        struct acc_proto_flow f;
        rc = acc_proto_read_flow(body, len, &f, e);
        if (!rc)
            acc_proto_flow_release(&f);
        break;
    }
    case D_PROVISION_STATUS: {
        struct acc_provision_status s;
        rc = acc_proto_read_provision_status(body, len, &s, e);
        break;
    }
    case D_JOB: {
        struct acc_proto_job j;
        rc = acc_proto_read_job(body, len, &j, e);
        if (!rc)
            acc_proto_job_release(&j);
        break;
    }
    case D_JOB_REF: {
        char id[ACC_KEY_MAX];
        rc = acc_proto_read_job_ref(body, len, id, sizeof id, e);
        break;
    }
    case D_JOB_STATUS: {
        struct acc_job_status s;
        rc = acc_proto_read_job_status(body, len, &s, e);
        break;
    }
    case D_HEALTH: {
        struct acc_proto_health *h = malloc(sizeof *h);
        CU_ASSERT_PTR_NOT_NULL_FATAL(h);
        rc = acc_proto_read_health(body, len, h, e);
        free(h);
        break;
    }
    }
    return rc;
}

struct bad {
    enum doc doc;
    const char *body;
    acc_err code;
    const char *says; /* in the message */
};

static const struct bad bad[] = {
    /* the good ones these are made from */
    {D_PREVIEW, PREVIEW(RES, PV_REST), ACC_OK, NULL},
    {D_RESERVE, RESERVE(RES, RV_REST), ACC_OK, NULL},
    {D_RESERVATION, RSV(RSV_ATTRS, RSV_BODY), ACC_OK, NULL},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>x</Executable>"), ACC_OK, NULL},
    {D_PROVISION_STATUS, PS(PS_ATTRS, PS_BODY PS_COUNTS), ACC_OK, NULL},
    {D_HEALTH, HEALTH(H_ATTRS, "<Capabilities/>"), ACC_OK, NULL},
    /* values */
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" name=\"alpha\" amount=\"0\"/>", PV_REST),
     ACC_ERR_INVALID, "Resource: amount: '0'"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" name=\"alpha\" amount=\"-3\"/>", PV_REST),
     ACC_ERR_INVALID, "amount"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" name=\"alpha\" amount=\" 3\"/>", PV_REST),
     ACC_ERR_INVALID, "amount"},
    {D_PREVIEW,
     PREVIEW("<Resource kind=\"nodes\" name=\"alpha\" amount=\"99999999999999999999\"/>", PV_REST),
     ACC_ERR_INVALID, "amount"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"cpus\" name=\"alpha\" amount=\"1\"/>", PV_REST),
     ACC_ERR_INVALID, "kind 'cpus'"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" name=\"a/b\" amount=\"1\"/>", PV_REST),
     ACC_ERR_INVALID, "name: 'a/b'"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" name=\"\" amount=\"1\"/>", PV_REST),
     ACC_ERR_INVALID, "name"},
    {D_PREVIEW, PREVIEW("<Resource kind=\"nodes\" amount=\"1\"/>", PV_REST), ACC_ERR_BAD_REQUEST,
     "attribute name is missing"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>2026-11-22T08:00:00Z</From><Until>2026-11-22T08:00:00Z</Until>"
                  "<Duration>PT1H</Duration>"),
     ACC_ERR_INVALID, "Until must be after From"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>yesterday</From><Until>2026-11-22T08:00:00Z</Until>"
                  "<Duration>PT1H</Duration>"),
     ACC_ERR_INVALID, "From"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>1960-01-01T00:00:00Z</From><Until>2026-11-22T08:00:00Z</Until>"
                  "<Duration>PT1H</Duration>"),
     ACC_ERR_INVALID, "From"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>2026-11-22T08:00:00Z</From><Until>2026-11-23T08:00:00Z</Until>"
                  "<Duration>PT0S</Duration>"),
     ACC_ERR_INVALID, "Duration"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>2026-11-22T08:00:00Z</From><Until>2026-11-23T08:00:00Z</Until>"
                  "<Duration>-PT1H</Duration>"),
     ACC_ERR_INVALID, "Duration"},
    {D_PREVIEW,
     PREVIEW(RES, "<From>2026-11-22T08:00:00Z</From><Until>2026-11-23T08:00:00Z</Until>"
                  "<Duration>P1M</Duration>"),
     ACC_ERR_INVALID, "Duration"},
    {D_PREVIEW, PREVIEW(RES, PV_REST "<Replacing key=\"a/../b\"/>"), ACC_ERR_INVALID,
     "Replacing: key"},
    {D_PREVIEW, PREVIEW(RES, PV_REST "<Replacing key=\"..\"/>"), ACC_ERR_INVALID, "key"},
    {D_RESERVE, RESERVE(RES, "<Start>9999-12-31T00:00:00Z</Start><Duration>P2D</Duration>"),
     ACC_ERR_INVALID, "after 9999-12-31"},
    {D_RESERVATION, RSV("key=\"k\" localId=\"1\" state=\"Terminated\"", RSV_BODY), ACC_ERR_INVALID,
     "state 'Terminated'"},
    {D_RESERVATION, RSV("key=\"k\" localId=\"a b\" state=\"Observed\"", RSV_BODY), ACC_ERR_INVALID,
     "localId"},
    {D_RESERVATION, RSV("key=\"k k\" localId=\"1\" state=\"Observed\"", RSV_BODY), ACC_ERR_INVALID,
     "key"},
    {D_RESERVATION, RSV(RSV_ATTRS, RSV_BODY "<Nodes>a,,b</Nodes>"), ACC_ERR_INVALID, "Nodes"},
    {D_RESERVATION, RSV(RSV_ATTRS, RSV_BODY "<Nodes>a,b,</Nodes>"), ACC_ERR_INVALID, "Nodes"},
    {D_RESERVATION, RSV(RSV_ATTRS, RSV_BODY "<Nodes>a;rm -rf</Nodes>"), ACC_ERR_INVALID, "Nodes"},
    {D_RESERVATION,
     RSV(RSV_ATTRS, RES "<Start>2026-11-22T09:00:00Z</Start><End>2026-11-22T08:00:00Z</End>"),
     ACC_ERR_INVALID, "End must be after Start"},
    {D_FRAMES,
     "<Frames " NS "><Frame start=\"2026-11-22T09:00:00Z\" end=\"2026-11-22T08:00:00Z\"/>"
     "</Frames>",
     ACC_ERR_INVALID, "end must be after start"},
    {D_FRAMES,
     "<Frames " NS "><Frame start=\"2026-11-22T08:00:00Z\" end=\"2026-11-22T10:00:00Z\"/>"
     "<Frame start=\"2026-11-22T09:00:00Z\" end=\"2026-11-22T11:00:00Z\"/></Frames>",
     ACC_ERR_INVALID, "overlap"},
    {D_FRAMES, "<Frames " NS " truncated=\"maybe\"/>", ACC_ERR_INVALID, "truncated"},
    {D_FLOW,
     "<Flow " NS "><SideA site=\"a\"><Address>10.0.0.256</Address></SideA>"
     "<SideB site=\"b\"/></Flow>",
     ACC_ERR_INVALID, "IPv4"},
    {D_FLOW,
     "<Flow " NS "><SideA site=\"a\"><Address>::1</Address></SideA><SideB site=\"b\"/></Flow>",
     ACC_ERR_INVALID, "IPv4"},
    {D_FLOW, "<Flow " NS "><SideA site=\"a\"/></Flow>", ACC_ERR_BAD_REQUEST, "SideB is missing"},
    {D_FLOW, "<Flow " NS "><SideA site=\"a\"/><SideA site=\"a\"/><SideB site=\"b\"/></Flow>",
     ACC_ERR_BAD_REQUEST, "twice"},
    {D_PROVISION_STATUS,
     PS("provisioned=\"true\" active=\"true\" state=\"Fine\"", PS_BODY PS_COUNTS), ACC_ERR_INVALID,
     "state 'Fine'"},
    {D_PROVISION_STATUS,
     PS(PS_ATTRS,
        PS_BODY "<Bytes>18446744073709551616</Bytes><Packets>1</Packets><Drops>0</Drops>"),
     ACC_ERR_INVALID, "Bytes"},
    {D_PROVISION_STATUS, PS(PS_ATTRS, PS_BODY "<Bytes>1</Bytes><Packets>1</Packets>"),
     ACC_ERR_BAD_REQUEST, "Drops is missing"},
    {D_JOB, JOB(JOB_ATTRS, ""), ACC_ERR_BAD_REQUEST, "Executable is missing"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable></Executable>"), ACC_ERR_INVALID, "must not be empty"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>a</Executable><Executable>b</Executable>"),
     ACC_ERR_BAD_REQUEST, "twice"},
    {D_JOB, JOB("key=\"k\" nodes=\"-1\" ppn=\"1\"", "<Executable>x</Executable>"), ACC_ERR_INVALID,
     "nodes"},
    {D_JOB, JOB("key=\"k\" nodes=\"1\" ppn=\"1\" host=\"a b\"", "<Executable>x</Executable>"),
     ACC_ERR_INVALID, "host"},
    {D_JOB, JOB("nodes=\"1\" ppn=\"1\"", "<Executable>x</Executable>"), ACC_ERR_BAD_REQUEST,
     "attribute key is missing"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>x</Executable><Environment>1X=y</Environment>"),
     ACC_ERR_INVALID, "NAME=value"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>x</Executable><Environment>NOVALUE</Environment>"),
     ACC_ERR_INVALID, "NAME=value"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>x</Executable><End>soon</End>"), ACC_ERR_INVALID, "End"},
    {D_JOB_REF, "<JobRef " NS " id=\"a/b\"/>", ACC_ERR_INVALID, "id 'a/b'"},
    {D_JOB_REF, "<JobRef " NS "/>", ACC_ERR_BAD_REQUEST, "attribute id is missing"},
    {D_JOB_STATUS, "<JobStatus " NS " done=\"yes\" exitStatus=\"0\" signal=\"0\" state=\"X\"/>",
     ACC_ERR_INVALID, "done"},
    {D_JOB_STATUS, "<JobStatus " NS " done=\"true\" exitStatus=\"256\" signal=\"0\" state=\"X\"/>",
     ACC_ERR_INVALID, "exitStatus"},
    {D_JOB_STATUS, "<JobStatus " NS " done=\"true\" exitStatus=\"0\" signal=\"0\" state=\"\"/>",
     ACC_ERR_INVALID, "state"},
    {D_JOB_STATUS,
     "<JobStatus " NS " done=\"true\" exitStatus=\"0\" signal=\"0\" "
     "state=\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"/>",
     ACC_ERR_INVALID, "state"},
    {D_HEALTH, HEALTH("up=\"true\" version=\"0\" site=\"alpha\"", "<Capabilities/>"),
     ACC_ERR_INVALID, "version"},
    {D_HEALTH, HEALTH(H_ATTRS, ""), ACC_ERR_BAD_REQUEST, "Capabilities is missing"},
    {D_HEALTH, HEALTH(H_ATTRS, "<Capabilities>NODES!</Capabilities>"), ACC_ERR_INVALID,
     "capability"},
    {D_HEALTH, HEALTH(H_ATTRS, "<Capabilities/><Resource kind=\"nodes\" name=\"a\" amount=\"1\"/>"),
     ACC_ERR_BAD_REQUEST, "unknown attribute amount"},
    /* shape: unknown elements and attributes, namespaces, roots, text */
    {D_PREVIEW, PREVIEW(RES, PV_REST "<Priority>9</Priority>"), ACC_ERR_BAD_REQUEST,
     "unknown element Priority"},
    {D_PREVIEW, PREVIEW(RES, PV_REST "<x:Extra xmlns:x=\"urn:x\"/>"), ACC_ERR_BAD_REQUEST,
     "not in the namespace"},
    {D_PREVIEW, "<Preview " NS " version=\"2\">" RES PV_REST "</Preview>", ACC_ERR_BAD_REQUEST,
     "unknown attribute version"},
    {D_PREVIEW,
     "<Preview " NS " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
     "xsi:type=\"x\">" RES PV_REST "</Preview>",
     ACC_ERR_BAD_REQUEST, "unknown attribute xsi:type"},
    {D_PREVIEW, "<Preview xmlns=\"urn:accord:site:2\">" RES PV_REST "</Preview>",
     ACC_ERR_BAD_REQUEST, "namespace"},
    {D_PREVIEW, "<Preview>" RES PV_REST "</Preview>", ACC_ERR_BAD_REQUEST, "namespace"},
    {D_PREVIEW, RESERVE(RES, RV_REST), ACC_ERR_BAD_REQUEST, "expected a Preview document"},
    {D_PREVIEW, PREVIEW(RES, PV_REST "hello"), ACC_ERR_BAD_REQUEST, "text is not allowed"},
    {D_PREVIEW, PREVIEW(RES RES, PV_REST), ACC_ERR_BAD_REQUEST, "twice"},
    {D_PREVIEW, PREVIEW("", PV_REST), ACC_ERR_BAD_REQUEST, "Resource is missing"},
    {D_PREVIEW,
     PREVIEW(RES, "<From><b>2026-11-22T08:00:00Z</b></From><Until>2026-11-23T08:00:00Z</Until>"
                  "<Duration>PT1H</Duration>"),
     ACC_ERR_BAD_REQUEST, "holds text"},
    {D_FRAMES, "<Frames " NS "><Gap/></Frames>", ACC_ERR_BAD_REQUEST, "unknown element Gap"},
    /* well-formedness, DTDs and entities */
    {D_PREVIEW, "<Preview " NS ">" RES, ACC_ERR_MALFORMED, "line"},
    {D_PREVIEW, "not xml at all", ACC_ERR_MALFORMED, "line"},
    {D_PREVIEW, "", ACC_ERR_MALFORMED, "empty"},
    {D_PREVIEW, "<!DOCTYPE Preview [<!ELEMENT Preview ANY>]>" PREVIEW(RES, PV_REST), ACC_ERR_DTD,
     "DOCTYPE"},
    {D_JOB,
     "<!DOCTYPE Job [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>" JOB(
         JOB_ATTRS, "<Executable>&e;</Executable>"),
     ACC_ERR_DTD, "DOCTYPE"},
    {D_JOB, JOB(JOB_ATTRS, "<Executable>&e;</Executable>"), ACC_ERR_DTD, "entity reference"},
    {D_HEALTH,
     "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 "
     "\"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
     "<Health " NS " " H_ATTRS "><Detail>&lol2;</Detail><Capabilities/></Health>",
     ACC_ERR_DTD, "DOCTYPE"},
    /* predefined and character references are plain text */
    {D_JOB, JOB(JOB_ATTRS, "<Executable>a&amp;b&#65;</Executable>"), ACC_OK, NULL},
};

static void test_bad_documents(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct acc_error e = {0};
        acc_err rc = read_doc(bad[i].doc, bad[i].body, strlen(bad[i].body), &e);
        bool ok = rc == bad[i].code && (!bad[i].says || strstr(e.msg, bad[i].says));
        if (!ok)
            fprintf(stderr, "case %zu: %s\n  wanted %s '%s', got %s '%s'\n", i, bad[i].body,
                    acc_err_symbol(bad[i].code), bad[i].says ? bad[i].says : "", acc_err_symbol(rc),
                    e.msg);
        CU_ASSERT(ok);
    }
}

/* A failed read leaves *out as it was (the scalar documents). */
static void test_failure_changes_nothing(void)
{
    static const char body[] = PREVIEW(RES, PV_REST "<Priority/>");
    struct acc_proto_preview p, before;
    struct acc_error e;
    memset(&p, 0x5a, sizeof p);
    before = p;
    CU_ASSERT_EQUAL(acc_proto_read_preview(body, strlen(body), &p, &e), ACC_ERR_BAD_REQUEST);
    CU_ASSERT_EQUAL(memcmp(&p, &before, sizeof p), 0);

    struct acc_job_status s, s0;
    static const char js[] = "<JobStatus " NS " done=\"true\" exitStatus=\"0\" signal=\"0\"/>";
    memset(&s, 0x33, sizeof s);
    s0 = s;
    CU_ASSERT_EQUAL(acc_proto_read_job_status(js, strlen(js), &s, &e), ACC_ERR_BAD_REQUEST);
    CU_ASSERT_EQUAL(memcmp(&s, &s0, sizeof s), 0);

    /* the owning ones are left empty */
    struct acc_proto_job j;
    static const char jb[] = JOB(JOB_ATTRS, "<Executable>x</Executable><Argument>a</Argument>"
                                            "<Environment>A=b</Environment><Bogus/>");
    CU_ASSERT_EQUAL(acc_proto_read_job(jb, strlen(jb), &j, &e), ACC_ERR_BAD_REQUEST);
    CU_ASSERT_PTR_NULL(j.key);
    CU_ASSERT_PTR_NULL(j.args);
    CU_ASSERT_EQUAL(j.job.n_args, 0);
    acc_proto_job_release(&j); /* harmless */
}

/* A document of n copies of item inside open ... close. */
static char *repeat(const char *open, const char *item, size_t n, const char *close, size_t *len)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, open);
    for (size_t i = 0; i < n; i++)
        acc_buf_puts(&b, item);
    acc_buf_puts(&b, close);
    return acc_buf_detach(&b, len);
}

static void test_limits(void)
{
    struct acc_error e;
    size_t len;
    char *s;

    /* 64 arguments are fine, 65 are not */
    s = repeat("<Job " NS " " JOB_ATTRS "><Executable>x</Executable>", "<Argument>a</Argument>",
               ACC_PROTO_MAX_ARGS, "</Job>", &len);
    CU_ASSERT_EQUAL(read_doc(D_JOB, s, len, &e), ACC_OK);
    free(s);
    s = repeat("<Job " NS " " JOB_ATTRS "><Executable>x</Executable>", "<Argument>a</Argument>",
               ACC_PROTO_MAX_ARGS + 1, "</Job>", &len);
    CU_ASSERT_EQUAL(read_doc(D_JOB, s, len, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 64 arguments"));
    free(s);
    /* an argument of 512 bytes is fine, 513 are not */
    char arg[ACC_PROTO_MAX_ARG_LEN + 2];
    memset(arg, 'a', sizeof arg);
    arg[ACC_PROTO_MAX_ARG_LEN] = '\0';
    char open[1024];
    snprintf(open, sizeof open, "<Job " NS " " JOB_ATTRS "><Executable>x</Executable><Argument>%s",
             arg);
    s = repeat(open, "", 0, "</Argument></Job>", &len);
    CU_ASSERT_EQUAL(read_doc(D_JOB, s, len, &e), ACC_OK);
    free(s);
    s = repeat(open, "b", 1, "</Argument></Job>", &len);
    CU_ASSERT_EQUAL(read_doc(D_JOB, s, len, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "longer than 512"));
    free(s);
    /* 65 environment entries */
    s = repeat("<Job " NS " " JOB_ATTRS "><Executable>x</Executable>",
               "<Environment>A=1</Environment>", ACC_PROTO_MAX_ENV + 1, "</Job>", &len);
    CU_ASSERT_EQUAL(read_doc(D_JOB, s, len, &e), ACC_ERR_INVALID);
    free(s);
    /* 257 addresses on a side */
    s = repeat("<Flow " NS "><SideA site=\"a\">", "<Address>10.0.0.1</Address>",
               ACC_PROTO_MAX_ADDRS + 1, "</SideA><SideB site=\"b\"/></Flow>", &len);
    CU_ASSERT_EQUAL(read_doc(D_FLOW, s, len, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 256 addresses"));
    free(s);
    /* 513 frames */
    s = repeat("<Frames " NS ">",
               "<Frame start=\"2026-11-22T08:00:00Z\" end=\"2026-11-22T08:00:01Z\"/>", 1,
               "</Frames>", &len);
    CU_ASSERT_EQUAL(read_doc(D_FRAMES, s, len, &e), ACC_OK);
    free(s);
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "<Frames " NS ">");
    for (int i = 0; i <= ACC_PROTO_MAX_FRAMES; i++) {
        char st[ACC_TIME_STRLEN], en[ACC_TIME_STRLEN];
        acc_time_format(1795334400 + 10 * i, st);
        acc_time_format(1795334400 + 10 * i + 5, en);
        acc_buf_printf(&b, "<Frame start=\"%s\" end=\"%s\"/>", st, en);
    }
    acc_buf_puts(&b, "</Frames>");
    CU_ASSERT_EQUAL(read_doc(D_FRAMES, b.data, b.len, &e), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "more than 512 frames"));
    acc_buf_release(&b);
    /* 17 resources in a health */
    s = repeat("<Health " NS " " H_ATTRS "><Capabilities/>",
               "<Resource kind=\"nodes\" name=\"a\" capacity=\"1\"/>", ACC_PROTO_MAX_RESOURCES + 1,
               "</Health>", &len);
    CU_ASSERT_EQUAL(read_doc(D_HEALTH, s, len, &e), ACC_ERR_INVALID);
    free(s);
}

static void test_size_depth_attributes(void)
{
    struct acc_error e;
    size_t len;
    char *s;

    /* one byte over the body limit, however well-formed */
    s = repeat("<Frames " NS ">", " ", ACC_PROTO_BODY_MAX, "</Frames>", &len);
    CU_ASSERT(len > ACC_PROTO_BODY_MAX);
    CU_ASSERT_EQUAL(read_doc(D_FRAMES, s, len, &e), ACC_ERR_TOO_LARGE);
    CU_ASSERT_EQUAL(acc_proto_read_fault(s, len, &e), ACC_ERR_ADAPTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "protocol error"));
    free(s);
    /* deep nesting */
    s = repeat("<Preview " NS ">", "<Resource>", 40, "", &len);
    CU_ASSERT_EQUAL(read_doc(D_PREVIEW, s, len, &e), ACC_ERR_TOO_DEEP);
    free(s);
    /* many elements (each empty, within the size) */
    s = repeat("<Frames " NS ">", "<a/>", 3000, "</Frames>", &len);
    CU_ASSERT_EQUAL(read_doc(D_FRAMES, s, len, &e), ACC_ERR_TOO_LARGE);
    free(s);
    /* an attribute bomb on one element, and spread over many */
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "<Preview " NS);
    for (int i = 0; i < 5000; i++)
        acc_buf_printf(&b, " a%d=\"\"", i);
    acc_buf_puts(&b, "/>");
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(read_doc(D_PREVIEW, b.data, b.len, &e), ACC_ERR_TOO_MANY_ATTRS);
    CU_ASSERT(acc_mono_us() - t0 < 1000000);
    acc_buf_reset(&b);
    acc_buf_puts(&b, "<Frames " NS ">");
    for (int i = 0; i < 1100; i++)
        acc_buf_puts(&b, "<F a=\"\" b=\"\" c=\"\" d=\"\"/>");
    acc_buf_puts(&b, "</Frames>");
    CU_ASSERT_EQUAL(read_doc(D_FRAMES, b.data, b.len, &e), ACC_ERR_TOO_MANY_ATTRS);
    acc_buf_release(&b);
    /* a NUL byte inside */
    static const char nul[] = "<JobRef " NS " id=\"a\0b\"/>";
    CU_ASSERT_EQUAL(read_doc(D_JOB_REF, nul, sizeof nul - 1, &e), ACC_ERR_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "NUL"));
    /* NULL with a length */
    CU_ASSERT_EQUAL(read_doc(D_JOB_REF, NULL, 5, &e), ACC_ERR_BAD_REQUEST);
    /* a declared encoding is ignored: read as UTF-8 */
    static const char utf7[] = "<?xml version=\"1.0\" encoding=\"UTF-7\"?>"
                               "<JobRef " NS " id=\"+ADw-x\"/>";
    CU_ASSERT_EQUAL(read_doc(D_JOB_REF, utf7, strlen(utf7), &e), ACC_ERR_INVALID);
}

/* ---------------------------------------------------------------- threads */

#define THREADS 4

static void *reader_thread(void *arg)
{
    int *failures = arg;
    for (int n = 0; n < 300; n++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            struct acc_error e = {0};
            if (read_doc(bad[i].doc, bad[i].body, strlen(bad[i].body), &e) != bad[i].code)
                (*failures)++;
        }
        if (n % 50 == 0) {
            struct acc_buf b = ACC_BUF_INIT;
            struct acc_error e;
            acc_proto_write_job_ref("x", &b);
            if (acc_proto_validate(b.data, b.len, &e) != ACC_OK)
                (*failures)++;
            acc_buf_release(&b);
        }
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    int failures[THREADS] = {0};
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, reader_thread, &failures[i]) == 0);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(failures[i], 0);
    }
}

const struct acc_test_case acc_proto_bad_tests[] = {
    {"bad_documents", test_bad_documents},
    {"failure_changes_nothing", test_failure_changes_nothing},
    {"limits", test_limits},
    {"size_depth_attributes", test_size_depth_attributes},
    {"threads", test_threads},
    {NULL, NULL},
};
