/* SPDX-License-Identifier: Apache-2.0 */
/* test_handlers.c - the HTTP handlers called directly, without a socket:
 * every request under tests/data/http/ is routed through acc_http_dispatch
 * against the embedded testbed, and its status and fault code compared
 * with the file's "# expect: STATUS [CODE]" line. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "http.h"
#include "http_client.h"
#include "json.h"
#include "service.h"
#include "testutil.h"
#include "xml.h"

static struct acc_config cfg;
static struct acc_service *svc;
static struct acc_http_ctx ctx;

static int setup(void)
{
    struct acc_error err;
    char db[256];
    snprintf(db, sizeof db, "%s/handlers.db", acc_test_tmpdir());
    if (acc_xml_init(&err) || acc_config_embedded(&cfg, &err) ||
        acc_config_set_db(&cfg, db, &err) || acc_service_open(&cfg, &svc, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 1;
    }
    ctx.svc = svc;
    ctx.limits = (struct acc_xml_limits)ACC_XML_LIMITS_DEFAULT;
    return 0;
}

static int teardown(void)
{
    acc_service_close(svc);
    acc_config_release(&cfg);
    acc_xml_cleanup();
    return 0;
}

/* One request file: "# expect:" line, request line, headers, blank line, body. */
struct http_case {
    long status;
    char code[64];
    char method[16];
    char path[1024];
    struct acc_kv query[16];
    size_t n_query;
    char qbuf[1024];
    char content_type[128], accept[128], key[256];
    bool has_key;
    const char *body;
    size_t body_len;
};

static char *line(char **p)
{
    char *s = *p, *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

static int parse_case(char *text, struct http_case *c)
{
    memset(c, 0, sizeof *c);
    char *p = text;
    char *l = line(&p);
    if (sscanf(l, "# expect: %ld %63s", &c->status, c->code) < 1)
        return -1;
    l = line(&p);
    char target[1024];
    if (sscanf(l, "%15s %1023s", c->method, target) != 2)
        return -1;
    char *q = strchr(target, '?');
    if (q) {
        *q++ = '\0';
        snprintf(c->qbuf, sizeof c->qbuf, "%s", q);
        for (char *kv = c->qbuf; kv && *kv && c->n_query < 16;) {
            char *amp = strchr(kv, '&');
            if (amp)
                *amp = '\0';
            char *eq = strchr(kv, '=');
            if (eq)
                *eq = '\0';
            c->query[c->n_query++] = (struct acc_kv){kv, eq ? eq + 1 : ""};
            kv = amp ? amp + 1 : NULL;
        }
    }
    snprintf(c->path, sizeof c->path, "%s", target);
    while (*p && *p != '\n') {
        l = line(&p);
        char *colon = strchr(l, ':');
        if (!colon)
            return -1;
        *colon = '\0';
        const char *v = colon + 1 + (colon[1] == ' ');
        if (strcasecmp(l, "Content-Type") == 0)
            snprintf(c->content_type, sizeof c->content_type, "%s", v);
        else if (strcasecmp(l, "Accept") == 0)
            snprintf(c->accept, sizeof c->accept, "%s", v);
        else if (strcasecmp(l, "Idempotency-Key") == 0)
            c->has_key = snprintf(c->key, sizeof c->key, "%s", v) >= 0;
    }
    if (*p == '\n')
        p++;
    c->body = p;
    c->body_len = strlen(p);
    return 0;
}

static void run_case(const char *name, struct http_case *c)
{
    struct acc_request rq = {
        .method = c->method,
        .path = c->path,
        .body = c->body,
        .body_len = c->body_len,
        .query = c->query,
        .n_query = c->n_query,
        .content_type = c->content_type[0] ? c->content_type : NULL,
        .idempotency_key = c->has_key ? c->key : NULL,
        .json = acc_http_wants_json(c->accept[0] ? c->accept : NULL),
    };
    struct acc_response rs;
    acc_response_init(&rs);
    acc_http_dispatch(&ctx, &rq, &rs);
    char *code = NULL;
    if (c->code[0]) {
        const char *body = rs.body.data ? rs.body.data : "";
        if (rq.json) {
            const char *k = strstr(body, "\"code\":\"");
            if (k) {
                k += 8;
                code = strndup(k, strcspn(k, "\""));
            }
        } else {
            code = xml_get(body, "/co:Fault/@co:code");
        }
    }
    if (rs.status != c->status || (c->code[0] && (!code || strcmp(code, c->code) != 0)))
        fprintf(stderr, "\n  %s: got %d %s, want %ld %s\n", name, rs.status, code ? code : "-",
                c->status, c->code);
    CU_ASSERT_EQUAL(rs.status, c->status);
    if (c->code[0])
        CU_ASSERT_STRING_EQUAL(code ? code : "", c->code);
    free(code);
    acc_response_release(&rs);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void test_cases(void)
{
    const char *dir = ACC_TEST_DATA "/http";
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, by_name);
    CU_ASSERT_TRUE_FATAL(n > 0);
    int ran = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        size_t len = strlen(nm);
        if (len > 5 && strcmp(nm + len - 5, ".http") == 0) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, nm);
            char *text = read_file(path, NULL);
            struct http_case c;
            CU_ASSERT_PTR_NOT_NULL(text);
            if (text && parse_case(text, &c) == 0) {
                run_case(nm, &c);
                ran++;
            } else {
                fprintf(stderr, "\n  %s: not a request file\n", nm);
                CU_FAIL("bad request file");
            }
            free(text);
        }
        free(ents[i]);
    }
    free(ents);
    CU_ASSERT_TRUE(ran >= 20);
}

/* Accept as media ranges with q values (it was matched as a substring:
 * application/json;q=0 gave JSON). */
static void test_accept(void)
{
    static const struct {
        const char *accept;
        bool json;
    } cases[] = {
        {NULL, false},
        {"", false},
        {"application/json", true},
        {"application/json;q=0", false},
        {"application/json ; q=0.000", false},
        {"application/json;q=0, */*", false},
        {"application/json, */*", true},
        {"*/*", false},
        {"application/*", false},
        {"application/*;q=0.9, application/xml;q=0.1", true},
        {"application/xml;q=0.5, application/json", true},
        {"application/json;q=0.4, application/xml;q=0.9", false},
        {"text/xml;q=0.5, application/json;q=0.6", true},
        {"application/soap+xml, application/json", false},
        {"application/json, application/xml", true},
        {"application/xml, application/json", false},
        {"APPLICATION/JSON", true},
        {"application/jsonx", false},
        {"application/json;q=2", false},    /* not a q value: ignored */
        {"application/json;q=0.5x", false}, /* the same */
        {"application/json;charset=utf-8;q=0.7, */*;q=0.2", true},
        {"text/html, application/json;q=0.8, */*;q=0.1", true},
        {",,, application/json ,", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = acc_http_wants_json(cases[i].accept);
        if (got != cases[i].json)
            fprintf(stderr, "\n  Accept: %s: %s\n", cases[i].accept ? cases[i].accept : "(none)",
                    got ? "JSON" : "XML");
        CU_ASSERT_EQUAL(got, cases[i].json);
    }
}

static const struct acc_test_case tests[] = {
    {"request files", test_cases},
    {"Accept", test_accept},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"handlers", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
