/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_http.c - libFuzzer harness for the HTTP layer: routing, path
 * parameters, query parameters, headers and bodies, against a real service
 * (the embedded testbed on a temporary database, opened once).
 *
 * The input is a request in a small text form, so that seeds and the
 * dictionary stay readable:
 *
 *   METHOD SP PATH [ "?" QUERY ] LF
 *   (NAME ":" SP VALUE LF)*       Content-Type, Accept, Idempotency-Key,
 *                                 Authorization; others are ignored
 *   LF
 *   BODY                          the rest
 *
 * The query is split on '&' and '=' and %XX is decoded, as libmicrohttpd
 * does before the router sees it.  Every request must be answered with a
 * status between 200 and 599 and, for errors, a body. */
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "id.h"
#include "log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_QUERY ACC_HTTP_MAX_QUERY

static struct acc_config cfg;
static struct acc_service *svc;
static struct acc_http_ctx ctx;
static char dir[] = "/tmp/accord-fuzz-http-XXXXXX";
static char db[sizeof dir + 16];

static void cleanup(void)
{
    acc_service_close(svc);
    acc_xml_cleanup();
    acc_config_release(&cfg);
    /* the database, its -wal and -shm, and the simulated sites' calendars
     * beside it: everything in the directory */
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[sizeof dir + 300];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    struct acc_error err = {0};
    if (!mkdtemp(dir))
        abort();
    snprintf(db, sizeof db, "%s/accord.db", dir);
    if (acc_config_embedded(&cfg, &err) || acc_config_set_db(&cfg, db, &err))
        goto fail;
    /* Speed, and nothing that would stall the search: no fsync, no jobs
     * started, and no fault injection (a hanging simulator only times out). */
    cfg.durable = false;
    cfg.launch.enabled = false;
    cfg.allow_control = false;
    cfg.log_level = ACC_LOG_ERROR;
    acc_log_set_level(ACC_LOG_ERROR);
    if (acc_xml_init(&err) || acc_service_open(&cfg, &svc, &err))
        goto fail;
    ctx.svc = svc;
    ctx.limits = acc_http_limits_of(&cfg);
    /* OpenSSL registers its own clean-up at exit when first used; use it
     * now, so that ours (registered after) runs first: the negotiation
     * workers must end before OpenSSL frees their per-thread state. */
    char id[ACC_ID_LEN + 1];
    if (acc_id_new(id, &err))
        goto fail;
    atexit(cleanup);
    return 0;
fail:
    fprintf(stderr, "fuzz_http: %s\n", err.msg);
    abort();
}

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes %XX and '+' in place (libmicrohttpd's unescaping). */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '%' && hex(r[1]) >= 0 && hex(r[2]) >= 0) {
            *w++ = (char)(hex(r[1]) * 16 + hex(r[2]));
            r += 2;
        } else {
            *w++ = *r == '+' ? ' ' : *r;
        }
    }
    *w = '\0';
}

/* Cuts the next line off *p (NULL when there is none). */
static char *next_line(char **p, char *end)
{
    if (*p >= end)
        return NULL;
    char *line = *p;
    char *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl)
        nl = end;
    *nl = '\0';
    *p = nl + 1;
    return line;
}

static void check_reply(const struct acc_response *rs)
{
    if (rs->status < 200 || rs->status > 599)
        abort();
    if (rs->status >= 400 && rs->body.len == 0)
        abort(); /* every error says what went wrong */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return 0;
    /* One copy, NUL-terminated, cut into the parts in place. */
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *p = copy, *end = copy + size;
    char *first = next_line(&p, end);
    char *sp = first ? strchr(first, ' ') : NULL;
    if (!sp) {
        free(copy);
        return 0;
    }
    *sp = '\0';
    char *method = first, *path = sp + 1;

    struct acc_kv query[MAX_QUERY];
    size_t n_query = 0;
    char *qs = strchr(path, '?');
    if (qs) {
        *qs++ = '\0';
        for (char *part = qs; part && n_query < MAX_QUERY;) {
            char *amp = strchr(part, '&');
            if (amp)
                *amp++ = '\0';
            char *eq = strchr(part, '=');
            if (eq)
                *eq++ = '\0';
            unescape(part);
            if (eq)
                unescape(eq);
            query[n_query].key = part;
            query[n_query].value = eq ? eq : "";
            n_query++;
            part = amp;
        }
    }
    unescape(path);

    struct acc_request rq = {.method = method, .path = path, .query = query, .n_query = n_query};
    for (char *h; (h = next_line(&p, end)) && *h;) {
        char *colon = strchr(h, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        if (strcasecmp(h, "Content-Type") == 0)
            rq.content_type = v;
        else if (strcasecmp(h, "Idempotency-Key") == 0)
            rq.idempotency_key = v;
        else if (strcasecmp(h, "Authorization") == 0)
            rq.authorization = v;
        else if (strcasecmp(h, "Accept") == 0)
            rq.json = strstr(v, "application/json") != NULL;
    }
    if (p < end) {
        rq.body = p;
        rq.body_len = (size_t)(end - p);
    } else {
        rq.body = "";
    }

    struct acc_response rs;
    acc_response_init(&rs);
    acc_http_dispatch(&ctx, &rq, &rs);
    check_reply(&rs);
    acc_response_release(&rs);
    free(copy);
    return 0;
}
