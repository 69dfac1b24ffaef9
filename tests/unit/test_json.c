/* SPDX-License-Identifier: Apache-2.0 */
/* test_json.c - the JSON views: every document is valid JSON (checked by a
 * small strict parser below), strings are escaped, absent values left out. */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "strutil.h"
#include "testutil.h"

/* ------------------------------------------------- a strict JSON checker */

struct jp {
    const unsigned char *s;
    size_t i, n;
    int depth;
};

static bool value(struct jp *p);

static void ws(struct jp *p)
{
    while (p->i < p->n &&
           (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static bool lit(struct jp *p, const char *word)
{
    size_t l = strlen(word);
    if (p->n - p->i < l || memcmp(p->s + p->i, word, l) != 0)
        return false;
    p->i += l;
    return true;
}

static bool hex4(struct jp *p)
{
    for (int k = 0; k < 4; k++, p->i++)
        if (p->i >= p->n || !strchr("0123456789abcdefABCDEF", p->s[p->i]) || !p->s[p->i])
            return false;
    return true;
}

/* Strings: escapes as RFC 8259 lists them, no raw control character, and
 * well-formed UTF-8. */
static bool string(struct jp *p)
{
    if (p->i >= p->n || p->s[p->i] != '"')
        return false;
    p->i++;
    while (p->i < p->n) {
        unsigned char c = p->s[p->i];
        if (c == '"') {
            p->i++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            p->i++;
            if (p->i >= p->n)
                return false;
            c = p->s[p->i++];
            if (c == 'u') {
                if (!hex4(p))
                    return false;
            } else if (!strchr("\"\\/bfnrt", c) || !c) {
                return false;
            }
            continue;
        }
        size_t len = c < 0x80             ? 1
                     : (c & 0xe0) == 0xc0 ? 2
                     : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4
                                          : 0;
        if (!len || p->i + len > p->n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((p->s[p->i + k] & 0xc0) != 0x80)
                return false;
        p->i += len;
    }
    return false;
}

static bool digits(struct jp *p)
{
    size_t start = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
        p->i++;
    return p->i > start;
}

static bool number(struct jp *p)
{
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i < p->n && p->s[p->i] == '0')
        p->i++;
    else if (!digits(p))
        return false;
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        if (!digits(p))
            return false;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        if (!digits(p))
            return false;
    }
    return true;
}

static bool container(struct jp *p, char open, char close, bool keys)
{
    p->i++; /* open */
    (void)open;
    if (++p->depth > 64)
        return false;
    ws(p);
    if (p->i < p->n && p->s[p->i] == (unsigned char)close) {
        p->i++;
        p->depth--;
        return true;
    }
    for (;;) {
        ws(p);
        if (keys) {
            if (!string(p))
                return false;
            ws(p);
            if (p->i >= p->n || p->s[p->i] != ':')
                return false;
            p->i++;
        }
        if (!value(p))
            return false;
        ws(p);
        if (p->i >= p->n)
            return false;
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == (unsigned char)close) {
            p->i++;
            p->depth--;
            return true;
        }
        return false;
    }
}

static bool value(struct jp *p)
{
    ws(p);
    if (p->i >= p->n)
        return false;
    switch (p->s[p->i]) {
    case '{':
        return container(p, '{', '}', true);
    case '[':
        return container(p, '[', ']', false);
    case '"':
        return string(p);
    case 't':
        return lit(p, "true");
    case 'f':
        return lit(p, "false");
    case 'n':
        return lit(p, "null");
    default:
        return number(p);
    }
}

/* One JSON object, nothing after it but white space. */
static bool json_object(const char *s, size_t n)
{
    struct jp p = {(const unsigned char *)s, 0, n, 0};
    ws(&p);
    if (p.i >= n || s[p.i] != '{' || !value(&p))
        return false;
    ws(&p);
    return p.i == n;
}

static bool valid(const struct acc_buf *b)
{
    const char *s = acc_buf_str(b);
    if (getenv("ACC_TEST_DUMP"))
        printf("\n%s", s ? s : "(failed)");
    bool ok = s && json_object(s, b->len);
    if (!ok)
        fprintf(stderr, "\nnot valid JSON: %s\n", s ? s : "(buffer failed)");
    return ok;
}

static bool has(const struct acc_buf *b, const char *needle)
{
    bool ok = b->data && strstr(b->data, needle);
    if (!ok)
        fprintf(stderr, "\nmissing %s in %s\n", needle, b->data ? b->data : "");
    return ok;
}

static bool lacks(const struct acc_buf *b, const char *needle)
{
    bool ok = !b->data || !strstr(b->data, needle);
    if (!ok)
        fprintf(stderr, "\nunexpected %s in %s\n", needle, b->data);
    return ok;
}

/* ------------------------------------------------------------------ tests */

static void test_checker(void)
{
    static const char *const good[] = {"{}", " {\"a\":[1,-2.5e3,true,false,null,\"\\u00e9\\n\"]} ",
                                       "{\"a\":{\"b\":[]}}"};
    static const char *const bad[] = {"{\"a\":1,}", "{\"a\":\"\x01\"}", "{\"a\":[1 2]}",
                                      "{\"a\":01}", "{\"a\":\"\\x\"}",  "{\"a\":\"\xff\"}",
                                      "{\"a\":1}x", "{\"a\":nul}",      "[]"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CU_ASSERT(json_object(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT(!json_object(bad[i], strlen(bad[i])));
}

static void test_string_escaping(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_string(&b, "q\"b\\s/ n\n r\r t\t b\b f\f c\x01\x1f d\x7f");
    CU_ASSERT_STRING_EQUAL(b.data, "\"q\\\"b\\\\s/ n\\n r\\r t\\t b\\b f\\f c\\u0001\\u001f "
                                   "d\\u007f\"");
    acc_buf_reset(&b);
    /* UTF-8 passes; broken bytes become U+FFFD; U+2028 is escaped. */
    acc_json_string(&b, "J\xc3\xbcrgen \xe6\x9d\xb1 \xf0\x9f\x98\x80 bad\xff\xc3 "
                        "ls\xe2\x80\xa8 over\xc0\xaf");
    CU_ASSERT_STRING_EQUAL(b.data, "\"J\xc3\xbcrgen \xe6\x9d\xb1 \xf0\x9f\x98\x80 "
                                   "bad\\ufffd\\ufffd ls\\u2028 over\\ufffd\\ufffd\"");
    acc_buf_reset(&b);
    acc_json_string(&b, NULL);
    CU_ASSERT_STRING_EQUAL(b.data, "null");
    acc_buf_reset(&b);
    acc_json_string(&b, "");
    CU_ASSERT_STRING_EQUAL(b.data, "\"\"");
    acc_buf_release(&b);
}

#define SPECIAL "a&b <c> \"d\" \\e\\ \x01\n J\xc3\xbcrgen"

static void sample_agreement(struct acc_agreement *a)
{
    memset(a, 0, sizeof *a);
    acc_strlcpy(a->id, "abcdefghijklmnop", sizeof a->id);
    a->name = strdup(SPECIAL);
    a->initiator = strdup("alice");
    a->state = ACC_STATE_OBSERVED;
    a->created = 1898841000;
    a->start = 1898841600;
    a->end = a->start + 7200;
    a->earliest = 1898841000;
    a->duration = 7200;
    a->strategy = ACC_STRATEGY_ITERATIVE;
    a->launch = ACC_LAUNCH_MPICH_G2;
    a->rounds = 3;
    a->rollbacks = 1;
    a->reason = strdup("first \"reason\"\n\n second\\reason \n");
    a->n_comps = 2;
    a->comps = calloc(2, sizeof *a->comps);
    a->comps[0] = (struct acc_alloc_component){.name = strdup("trace"),
                                               .site = strdup("caesar"),
                                               .nodes = 16,
                                               .ppn = 2,
                                               .reservation = strdup("acc-1-trace"),
                                               .local_id = strdup("resv.17"),
                                               .node_names = strdup("c001, c002,c003")};
    a->comps[1] = (struct acc_alloc_component){.name = strdup("partrace"), .nodes = 8, .ppn = 1};
    a->n_links = 1;
    a->links = calloc(1, sizeof *a->links);
    a->links[0] = (struct acc_alloc_link){strdup("wan"),
                                          strdup("trace"),
                                          strdup("partrace"),
                                          strdup("caesar"),
                                          NULL,
                                          NULL,
                                          5000,
                                          NULL,
                                          NULL};
}

static void test_agreement(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    sample_agreement(&a);
    acc_json_agreement(&a, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"id\":\"abcdefghijklmnop\""));
    CU_ASSERT(has(&b, "\"name\":\"a&b <c> \\\"d\\\" \\\\e\\\\ \\u0001\\n J\xc3\xbcrgen\""));
    CU_ASSERT(has(&b, "\"state\":\"Observed\""));
    CU_ASSERT(has(&b, "\"start\":\"2030-03-04T08:00:00Z\""));
    CU_ASSERT(has(&b, "\"end\":\"2030-03-04T10:00:00Z\""));
    CU_ASSERT(has(&b, "\"earliest\":\"2030-03-04T07:50:00Z\""));
    CU_ASSERT(has(&b, "\"duration\":\"PT2H\""));
    CU_ASSERT(has(&b, "\"strategy\":\"iterative\""));
    CU_ASSERT(has(&b, "\"launch\":\"mpich-g2\""));
    CU_ASSERT(has(&b, "\"rounds\":3"));
    CU_ASSERT(has(&b, "\"reasons\":[\"first \\\"reason\\\"\",\"second\\\\reason\"]"));
    CU_ASSERT(has(&b, "\"nodeNames\":[\"c001\",\"c002\",\"c003\"]"));
    CU_ASSERT(has(&b, "\"processesPerNode\":2"));
    CU_ASSERT(has(&b, "\"bandwidth\":5000"));
    CU_ASSERT(has(&b, "\"between\":\"trace\",\"and\":\"partrace\""));
    /* Absent: no deadline, no fault, the second component's site and ids,
     * the link's far site and link name. */
    CU_ASSERT(lacks(&b, "\"deadline\""));
    CU_ASSERT(lacks(&b, "\"faultCode\""));
    CU_ASSERT(lacks(&b, "\"siteB\""));
    CU_ASSERT(lacks(&b, "\"link\""));
    CU_ASSERT(has(&b, "{\"name\":\"partrace\",\"nodes\":8,\"processesPerNode\":1,"
                      "\"nodeNames\":[]}"));
    CU_ASSERT(lacks(&b, "null"));
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_agreement_sparse(void)
{
    struct acc_agreement a;
    struct acc_buf b = ACC_BUF_INIT;
    memset(&a, 0, sizeof a);
    acc_strlcpy(a.id, "abcdefghijklmnop", sizeof a.id);
    a.state = ACC_STATE_PENDING;
    acc_json_agreement(&a, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(lacks(&b, "\"name\""));
    CU_ASSERT(lacks(&b, "\"initiator\""));
    CU_ASSERT(lacks(&b, "\"start\""));
    CU_ASSERT(lacks(&b, "\"created\""));
    CU_ASSERT(lacks(&b, "\"duration\""));
    CU_ASSERT(lacks(&b, "null"));
    CU_ASSERT(has(&b, "\"reasons\":[],\"components\":[],\"links\":[]"));
    acc_buf_release(&b);
}

static void test_state(void)
{
    struct acc_agreement a;
    sample_agreement(&a);
    struct acc_term_view terms[] = {{"trace", ACC_TERM_PROCESSING}, {"x\"y", ACC_TERM_READY}};
    struct acc_guarantee_view g[] = {{.name = "on-time", .state = "Violated"},
                                     {.name = "wan", .state = NULL}};
    struct acc_state_view v = {&a, terms, 2, g, 2, NULL};
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_state(&v, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"id\":\"abcdefghijklmnop\",\"state\":\"Observed\",\"serviceTerms\":["
                      "{\"name\":\"trace\",\"state\":\"Processing\"},"
                      "{\"name\":\"x\\\"y\",\"state\":\"Ready\"}],\"guaranteeTerms\":["
                      "{\"name\":\"on-time\",\"state\":\"Violated\"},"
                      "{\"name\":\"wan\",\"state\":\"NotDetermined\"}]}"));
    acc_buf_release(&b);

    /* A reserved link's guarantee: the link and what the wire showed; a link
     * whose adapter does not provision shows only its link. */
    struct acc_guarantee_view lg[] = {{.name = "ab",
                                       .state = "Violated",
                                       .link = "alpha-beta",
                                       .measured = true,
                                       .provisioned = true,
                                       .active = true,
                                       .activated = 1900000000,
                                       .violated_at = 1900000060,
                                       .reason = "class 1:12 \"missing\"",
                                       .bytes = 5000000000ULL,
                                       .packets = 3,
                                       .drops = 0},
                                      {.name = "bg", .state = "NotDetermined", .link = "b-g"}};
    struct acc_state_view lv = {&a, NULL, 0, lg, 2, NULL};
    acc_json_state(&lv, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"guaranteeTerms\":[{\"name\":\"ab\",\"state\":\"Violated\","
                      "\"link\":\"alpha-beta\",\"provisioned\":true,\"active\":true,"
                      "\"activated\":\"2030-03-17T17:46:40Z\","
                      "\"violatedAt\":\"2030-03-17T17:47:40Z\","
                      "\"reason\":\"class 1:12 \\\"missing\\\"\",\"bytes\":5000000000,"
                      "\"packets\":3,\"drops\":0},"
                      "{\"name\":\"bg\",\"state\":\"NotDetermined\",\"link\":\"b-g\"}]"));
    acc_buf_release(&b);

    /* A running job closes the state as "job". */
    struct acc_run r = {.style = ACC_LAUNCH_METAMPICH,
                        .state = ACC_RUN_RUNNING,
                        .started = 1900000000,
                        .exit_status = -1,
                        .command = "mpiexec.hydra 'a \"b'",
                        .output_total = -1};
    strcpy(r.agreement, "abcdefghijklmnop");
    v.run = &r;
    acc_json_state(&v, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, ",\"job\":{\"agreementId\":\"abcdefghijklmnop\",\"style\":\"metampich\","
                      "\"state\":\"running\",\"started\":\"2030-03-17T17:46:40Z\","
                      "\"command\":\"mpiexec.hydra 'a \\\"b'\"}}"));
    acc_buf_release(&b);
    acc_json_run(&r, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"agreementId\":\"abcdefghijklmnop\",\"style\":\"metampich\""));
    acc_buf_release(&b);
    acc_agreement_release(&a);
}

static void test_list(void)
{
    struct acc_agreement v[2];
    sample_agreement(&v[0]);
    sample_agreement(&v[1]);
    free(v[1].name);
    v[1].name = NULL;
    v[1].start = v[1].end = 0;
    struct acc_agreement_list l = {v, 2, 250}; /* a page of 2 of 250 */
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_list(&l, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"count\":2,\"total\":250,\"agreements\":[{\"id\":\"abcdefghijklmnop\""));
    CU_ASSERT(has(&b, "\"sites\":[\"caesar\"]"));
    CU_ASSERT(has(&b, "{\"id\":\"abcdefghijklmnop\",\"initiator\":\"alice\",\"state\":"
                      "\"Observed\",\"created\":\"2030-03-04T07:50:00Z\",\"sites\""));
    CU_ASSERT(lacks(&b, "\"components\""));
    /* What each holds per site and link: a component without a site and a
     * link inside one site count nowhere. */
    CU_ASSERT(has(&b, "\"sites\":[\"caesar\"],\"usage\":[{\"site\":\"caesar\",\"nodes\":16}]}"));
    acc_buf_release(&b);

    /* Components on one site add up, and so do link terms on one link. */
    v[0].comps[1].site = strdup("caesar");
    v[0].links[0].link = strdup("fzj_caesar");
    struct acc_alloc_link *two = realloc(v[0].links, 2 * sizeof *two);
    CU_ASSERT_FATAL(two != NULL);
    v[0].links = two;
    v[0].links[1] = (struct acc_alloc_link){
        .name = strdup("w2"), .link = strdup("fzj_caesar"), .bandwidth = 700};
    v[0].n_links = 2;
    struct acc_agreement_list one = {v, 1, 1};
    acc_json_list(&one, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"usage\":[{\"site\":\"caesar\",\"nodes\":24},"
                      "{\"link\":\"fzj_caesar\",\"bandwidth\":5700}]}"));
    acc_buf_release(&b);

    struct acc_agreement_list empty = {NULL, 0, 0};
    acc_json_list(&empty, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"count\":0,\"total\":0,\"agreements\":[]}"));
    acc_buf_release(&b);
    acc_agreement_release(&v[0]);
    acc_agreement_release(&v[1]);
}

static void test_trace(void)
{
    struct acc_agreement a;
    sample_agreement(&a);
    struct acc_trace t;
    acc_trace_init(&t);
    struct acc_trace_event ev = {.round = 1,
                                 .kind = ACC_TRACE_RESERVE,
                                 .target = "site caesar",
                                 .adapter = "caesar",
                                 .amount = 16,
                                 .t_from = 1898841600,
                                 .t_until = 1898841600 + 7200,
                                 .status = ACC_ERR_TIMEOUT,
                                 .elapsed_us = 2000123,
                                 .detail = "no answer\tin 2 s"};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev));
    struct acc_trace_event ev2 = {.round = 2, .kind = ACC_TRACE_AGREE};
    ACC_ASSERT_OK(acc_trace_add(&t, &ev2));
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_trace(&a, &t, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"strategy\":\"iterative\",\"rounds\":3,\"rollbacks\":1"));
    CU_ASSERT(has(&b, "\"status\":\"AdapterTimeout\""));
    CU_ASSERT(has(&b, "\"amount\":16"));
    CU_ASSERT(has(&b, "\"detail\":\"no answer\\tin 2 s\""));
    CU_ASSERT(lacks(&b, "\"result\""));
    CU_ASSERT(has(&b, "{\"seq\":2,\"round\":2,\"kind\":\"agree\",\"status\":\"Ok\","
                      "\"elapsedMicros\":0}"));
    acc_buf_release(&b);
    acc_json_trace(&a, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"events\":[]"));
    acc_buf_release(&b);
    acc_trace_release(&t);
    acc_agreement_release(&a);
}

static const struct acc_site_info sites[] = {
    {"fzj-xd1", "sim-batch", 64, true, "ok", 10, 0, 0, NULL},
    {"caesar", "sim-batch", 128, false, "unreachable: \"connect\" failed", 12, 5, 1500,
     "https://10.79.3.11:8443"},
};
static const struct acc_site_info networks[] = {
    {"viola", "sim-network", 0, true, NULL, 5, 0, 0, NULL}};
static const struct acc_link_info links[] = {
    {"caesar~fzj-xd1", "caesar", "fzj-xd1", "viola", "sim-network", 10000, true},
};
static const struct acc_sites_view testbed = {sites, 2, networks, 1, links, 1};

static void test_sites(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_sites(&testbed, NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"name\":\"caesar\",\"adapter\":\"sim-batch\",\"nodes\":128,\"up\":false,"
                      "\"health\":\"unreachable: \\\"connect\\\" failed\",\"calls\":12,"
                      "\"failures\":5,\"rttUs\":1500,\"endpoint\":\"https://10.79.3.11:8443\"}"));
    CU_ASSERT(has(&b, "\"networks\":[{\"name\":\"viola\",\"adapter\":\"sim-network\",\"up\":true,"
                      "\"calls\":5,\"failures\":0,\"rttUs\":0}]"));
    CU_ASSERT(has(&b, "\"links\":[{\"name\":\"caesar~fzj-xd1\",\"siteA\":\"caesar\",\"siteB\":"
                      "\"fzj-xd1\",\"network\":\"viola\",\"adapter\":\"sim-network\","
                      "\"capacity\":10000,\"up\":true}]"));
    acc_buf_release(&b);

    acc_json_sites(&testbed, "fzj-xd1", &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"name\":\"fzj-xd1\",\"adapter\":\"sim-batch\",\"nodes\":64"));
    /* an in-process adapter: no round trip measured, no endpoint */
    CU_ASSERT(has(&b, "\"failures\":0,\"rttUs\":0,\"links\""));
    CU_ASSERT(lacks(&b, "\"endpoint\""));
    CU_ASSERT(has(&b, "\"links\":[{\"name\":\"caesar~fzj-xd1\""));
    CU_ASSERT(lacks(&b, "\"sites\""));
    acc_buf_release(&b);

    acc_json_sites(&testbed, "nowhere", &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"code\":\"NotFound\""));
    acc_buf_release(&b);
}

static void test_preview(void)
{
    struct acc_frames f;
    acc_frames_init(&f);
    ACC_ASSERT_OK(acc_frames_push(&f, 1898841600, 1898841600 + 3600));
    struct acc_preview_view v = {"caesar", 16, 5400, 1898841600, 1898841600 + 86400, &f};
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_preview(&v, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"site\":\"caesar\",\"nodes\":16,\"duration\":\"PT1H30M\",\"from\":"
                      "\"2030-03-04T08:00:00Z\",\"until\":\"2030-03-05T08:00:00Z\","
                      "\"truncated\":false,\"frames\":[{\"start\":\"2030-03-04T08:00:00Z\","
                      "\"end\":\"2030-03-04T09:00:00Z\"}]}"));
    acc_buf_release(&b);
    v.frames = NULL;
    acc_json_preview(&v, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"frames\":[]"));
    acc_buf_release(&b);
    acc_frames_release(&f);
}

static void test_fault(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_json_fault(ACC_ERR_SCHEMA, "line 3: Element 'co:Nodes': '0' is \"bad\"\nline 9: more", NULL,
                   &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "{\"code\":\"SchemaViolation\",\"status\":400,\"message\":\"line 3: "
                      "Element 'co:Nodes': '0' is \\\"bad\\\"\",\"details\":[\"line 9: more\"]}"));
    CU_ASSERT(lacks(&b, "agreementId"));
    acc_buf_release(&b);

    acc_json_fault(ACC_ERR_ADAPTER, "\nsite caesar: refused", NULL, &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"message\":\"an adapter failed\",\"details\":[\"site caesar: refused\"]"));
    acc_buf_release(&b);

    acc_json_fault(ACC_ERR_NO_SLOT, NULL, "abcdefghijklmnop", &b);
    CU_ASSERT(valid(&b));
    CU_ASSERT(has(&b, "\"status\":409"));
    CU_ASSERT(has(&b, "\"message\":\"no common time slot within the window\""));
    CU_ASSERT(has(&b, "\"details\":[],\"agreementId\":\"abcdefghijklmnop\"}"));
    acc_buf_release(&b);
}

static const struct acc_test_case tests[] = {
    {"checker", test_checker},
    {"string_escaping", test_string_escaping},
    {"agreement", test_agreement},
    {"agreement_sparse", test_agreement_sparse},
    {"state", test_state},
    {"list", test_list},
    {"trace", test_trace},
    {"sites", test_sites},
    {"preview", test_preview},
    {"fault", test_fault},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"json", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
