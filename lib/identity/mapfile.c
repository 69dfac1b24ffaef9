/* SPDX-License-Identifier: Apache-2.0 */
/* mapfile.c - reading a mapfile and mapping identities (mapfile.h). */
#include "mapfile.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/account.h"

enum kind { K_TOKEN, K_GROUP, K_DN, K_USER };

static const char *const kind_names[] = {"token", "group", "dn", "user"};

struct rule {
    enum kind kind;
    bool regex;
    char *exact; /* the pattern when it is not a regex */
    regex_t re;
    char *account;
    size_t line;
};

struct acc_mapfile {
    struct rule *v;
    size_t n;
};

void acc_mapfile_free(struct acc_mapfile *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].regex)
            regfree(&m->v[i].re);
        free(m->v[i].exact);
        free(m->v[i].account);
    }
    free(m->v);
    free(m);
}

size_t acc_mapfile_rules(const struct acc_mapfile *m)
{
    return m ? m->n : 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && is_space(*p))
        p++;
    return p;
}

/* A Unix account name as useradd takes it. */
static bool account_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= ACC_ACCOUNT_NAME_MAX || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* The pattern at *pp (a word, "quoted" or /regex/) into r; *pp moves past it. */
static acc_err read_pattern(const char **pp, const char *end, struct rule *r, const char *name,
                            struct acc_error *err)
{
    const char *p = *pp;
    char open = *p;
    char *text = malloc((size_t)(end - p) + 1);
    size_t n = 0;
    if (!text)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (open == '/' || open == '"') {
        p++;
        while (p < end && *p != open) {
            /* "\/" in a regex and "\"" in a string are the delimiter; any
             * other escape stays as it is (the regex's own) */
            if (*p == '\\' && p + 1 < end && (p[1] == open || (open == '"' && p[1] == '\\')))
                p++;
            text[n++] = *p++;
        }
        if (p == end) {
            free(text);
            return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: the pattern has no closing %c", name,
                                 r->line, open);
        }
        p++;
    } else {
        while (p < end && !is_space(*p))
            text[n++] = *p++;
    }
    text[n] = '\0';
    if (n == 0) {
        free(text);
        return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: the pattern is empty", name, r->line);
    }
    *pp = p;
    if (open != '/') {
        r->exact = text;
        return ACC_OK;
    }
    int e = regcomp(&r->re, text, REG_EXTENDED | REG_NOSUB);
    if (e) {
        char why[128];
        regerror(e, &r->re, why, sizeof why);
        acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: bad regular expression /%.200s/: %s", name,
                      r->line, text, why);
        free(text);
        return ACC_ERR_CONFIG;
    }
    free(text);
    r->regex = true;
    return ACC_OK;
}

/* One line [p, end) into r (r->line set); *empty: a blank or comment line. */
static acc_err read_rule(const char *p, const char *end, const char *name, bool check_accounts,
                         struct rule *r, bool *empty, struct acc_error *err)
{
    p = skip_space(p, end);
    *empty = p == end || *p == '#';
    if (*empty)
        return ACC_OK;
    const char *k = p;
    while (p < end && !is_space(*p))
        p++;
    size_t kn = (size_t)(p - k), i;
    for (i = 0; i < sizeof kind_names / sizeof *kind_names; i++) {
        if (kn == strlen(kind_names[i]) && strncmp(k, kind_names[i], kn) == 0)
            break;
    }
    if (i == sizeof kind_names / sizeof *kind_names)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s:%zu: unknown kind '%.*s' (token, group, dn or user)", name,
                             r->line, (int)(kn > 40 ? 40 : kn), k);
    r->kind = (enum kind)i;
    p = skip_space(p, end);
    if (p == end)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: %s: no pattern and no account", name,
                             r->line, kind_names[i]);
    acc_err rc = read_pattern(&p, end, r, name, err);
    if (rc)
        return rc;
    if (p < end && !is_space(*p))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: no space after the pattern", name,
                             r->line);
    p = skip_space(p, end);
    const char *a = p;
    while (p < end && !is_space(*p))
        p++;
    size_t an = (size_t)(p - a);
    if (an == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: no account after the pattern", name,
                             r->line);
    const char *rest = skip_space(p, end);
    if (rest != end && *rest != '#') /* a comment may end the line */
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s:%zu: more than KIND PATTERN ACCOUNT (quote a pattern that "
                             "holds spaces)",
                             name, r->line);
    if (!account_name_ok(a, an))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s:%zu: '%.*s' is not an account name", name,
                             r->line, (int)(an > 64 ? 64 : an), a);
    if (!(r->account = strndup(a, an)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (strcmp(r->account, "root") == 0)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s:%zu: root: jobs are never booked for or run as root", name,
                             r->line);
    struct acc_account acct;
    if (check_accounts && acc_account_lookup(r->account, &acct, err)) {
        acc_error_prefix(err, "%s:%zu", name, r->line);
        return ACC_ERR_CONFIG;
    }
    return ACC_OK;
}

acc_err acc_mapfile_parse(const char *text, size_t len, const char *name, bool check_accounts,
                          struct acc_mapfile **out, struct acc_error *err)
{
    *out = NULL;
    if (len > ACC_MAPFILE_MAX_BYTES)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: larger than %d bytes", name,
                             ACC_MAPFILE_MAX_BYTES);
    if (memchr(text, '\0', len))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: holds a NUL byte: not a text file", name);
    struct acc_mapfile *m = calloc(1, sizeof *m);
    if (!m)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    const char *p = text, *end = text + len;
    size_t line = 0, cap = 0;
    acc_err rc = ACC_OK;
    while (!rc && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (++line > ACC_MAPFILE_MAX_LINES) {
            rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: more than %d lines", name,
                               ACC_MAPFILE_MAX_LINES);
            break;
        }
        if (m->n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct rule *v = realloc(m->v, ncap * sizeof *v);
            if (!v) {
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
                break;
            }
            m->v = v;
            cap = ncap;
        }
        struct rule *r = &m->v[m->n];
        memset(r, 0, sizeof *r);
        r->line = line;
        bool empty;
        rc = read_rule(p, le, name, check_accounts, r, &empty, err);
        if (rc || empty) {
            if (r->regex)
                regfree(&r->re);
            free(r->exact);
            free(r->account);
        } else {
            m->n++;
        }
        p = nl ? nl + 1 : end;
    }
    if (rc) {
        acc_mapfile_free(m);
        return rc;
    }
    *out = m;
    return ACC_OK;
}

acc_err acc_mapfile_load(const char *path, bool check_accounts, struct acc_mapfile **out,
                         struct acc_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "re");
    if (!f)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(ACC_MAPFILE_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, ACC_MAPFILE_MAX_BYTES + 1, f);
    bool bad = ferror(f);
    fclose(f);
    acc_err rc = bad ? acc_error_set(err, ACC_ERR_CONFIG, "%s: cannot read", path)
                     : acc_mapfile_parse(buf, n, path, check_accounts, out, err);
    free(buf);
    return rc;
}

static bool matches(const struct rule *r, const char *s)
{
    if (!s)
        return false;
    return r->regex ? regexec(&r->re, s, 0, NULL, 0) == 0 : strcmp(r->exact, s) == 0;
}

static bool rule_matches(const struct rule *r, const struct acc_identity *id)
{
    switch (r->kind) {
    case K_TOKEN: {
        if (!id->issuer || !id->subject)
            return false;
        size_t n = strlen(id->issuer) + strlen(id->subject) + 2;
        char *s = malloc(n);
        if (!s)
            return false; /* out of memory maps nothing: refused, never wrongly mapped */
        snprintf(s, n, "%s,%s", id->issuer, id->subject);
        bool m = matches(r, s);
        free(s);
        return m;
    }
    case K_GROUP:
        for (size_t i = 0; i < id->n_groups; i++) {
            if (matches(r, id->groups[i]))
                return true;
        }
        return false;
    case K_DN:
        return !id->issuer && matches(r, id->subject);
    case K_USER:
        return matches(r, id->user);
    }
    return false;
}

const char *acc_mapfile_map(const struct acc_mapfile *m, const struct acc_identity *id,
                            size_t *line)
{
    if (!m || !id)
        return NULL;
    for (size_t i = 0; i < m->n; i++) {
        if (rule_matches(&m->v[i], id)) {
            if (line)
                *line = m->v[i].line;
            return m->v[i].account;
        }
    }
    return NULL;
}

void acc_identity_describe(const struct acc_identity *id, char *buf, size_t len)
{
    if (!id || (!id->user && !id->subject))
        snprintf(buf, len, "anonymous");
    else if (id->issuer && id->subject)
        snprintf(buf, len, "%.300s sub %.300s", id->issuer, id->subject);
    else if (id->subject)
        snprintf(buf, len, "DN %.500s", id->subject);
    else
        snprintf(buf, len, "user %.200s", id->user);
}
