/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_route.c - route tables {method, path pattern, ...}: which entry fits
 * a request, and 404 or 405 (with the path's methods) when none does. */
#include "httpd.h"

#include <stdio.h>
#include <string.h>

/* Matches path against pattern; captures go into buf (NUL-separated) and
 * params.  Captures must be non-empty segments that param_ok accepts. */
static bool match(const char *pattern, const char *path, bool (*param_ok)(const char *), char *buf,
                  size_t size, const char **params)
{
    size_t np = 0, used = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return false;
        p++;
        s++;
        const char *pe = strchr(p, '/'), *se = strchr(s, '/');
        size_t pl = pe ? (size_t)(pe - p) : strlen(p);
        size_t sl = se ? (size_t)(se - s) : strlen(s);
        if (pl == 2 && p[0] == '{' && p[1] == '}') {
            if (sl == 0 || np == ACC_HTTPD_MAX_PARAMS || used + sl + 1 > size)
                return false;
            memcpy(buf + used, s, sl);
            buf[used + sl] = '\0';
            if (param_ok && !param_ok(buf + used))
                return false;
            params[np++] = buf + used;
            used += sl + 1;
        } else if (pl != sl || strncmp(p, s, pl) != 0) {
            return false;
        }
        p += pl;
        s += sl;
    }
    /* A trailing slash is the same resource. */
    if (*s == '/' && s[1] == '\0')
        s++;
    return *p == '\0' && *s == '\0';
}

/* Adds method to the Allow list unless it is there. */
static void allow_add(char *allow, size_t size, const char *method)
{
    size_t len = strlen(allow);
    if (!strstr(allow, method) && len + 10 < size)
        snprintf(allow + len, size - len, "%s%s", len ? ", " : "", method);
}

const void *acc_httpd_match(const struct acc_httpd_table *t, const char *method, const char *path,
                            char *buf, size_t size, struct acc_httpd_match *m,
                            struct acc_error *err)
{
    /* HEAD is GET without the body (libmicrohttpd leaves the body out). */
    const char *want = strcmp(method, "HEAD") == 0 ? "GET" : method;
    bool path_known = false;
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < t->n; i++) {
        const struct acc_httpd_route *r = (const void *)((const char *)t->routes + i * t->size);
        const char *params[ACC_HTTPD_MAX_PARAMS] = {0};
        if (!match(r->pattern, path, t->param_ok, buf, size, params))
            continue;
        path_known = true;
        if (strcmp(r->method, want) != 0) {
            allow_add(m->allow, sizeof m->allow, r->method);
            continue;
        }
        memcpy(m->params, params, sizeof params);
        m->allow[0] = '\0';
        return r;
    }
    if (path_known)
        acc_error_set(err, ACC_ERR_METHOD, "%.16s is not allowed on %.64s (allowed: %s)", method,
                      path, m->allow);
    else
        acc_error_set(err, ACC_ERR_NOT_FOUND, "no resource %.100s", path);
    return NULL;
}
