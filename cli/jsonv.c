#include "jsonv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct parser {
    const char *p;
    char *err;
    size_t err_size;
    bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    if (ps->err && ps->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err, ps->err_size, fmt, ap);
        va_end(ap);
    }
}

static void skip_ws(struct parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static struct jv *value(struct parser *ps, int depth);

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static void put_utf8(char **o, unsigned cp)
{
    char *d = *o;
    if (cp < 0x80) {
        *d++ = (char)cp;
    } else if (cp < 0x800) {
        *d++ = (char)(0xc0 | (cp >> 6));
        *d++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xe0 | (cp >> 12));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *d++ = (char)(0xf0 | (cp >> 18));
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
    }
    *o = d;
}

/* A string literal at ps->p (after the opening quote). */
static char *string(struct parser *ps)
{
    const char *s = ps->p;
    size_t max = 0;
    while (s[max] && s[max] != '"') {
        if (s[max] == '\\' && s[max + 1])
            max++;
        max++;
    }
    char *out = malloc(max + 1), *o = out;
    if (!out) {
        fail(ps, "out of memory");
        return NULL;
    }
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c == '\0' || c < 0x20) {
            fail(ps, "unterminated string or raw control character");
            free(out);
            return NULL;
        }
        if (c != '\\') {
            *o++ = (char)c;
            ps->p++;
            continue;
        }
        char e = ps->p[1];
        ps->p += 2;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            *o++ = e;
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u': {
            int cp = hex4(ps->p);
            if (cp < 0) {
                fail(ps, "bad \\u escape");
                free(out);
                return NULL;
            }
            ps->p += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && ps->p[0] == '\\' && ps->p[1] == 'u') {
                int lo = hex4(ps->p + 2);
                if (lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    ps->p += 6;
                }
            }
            put_utf8(&o, (unsigned)cp);
            break;
        }
        default:
            fail(ps, "bad escape \\%c", e);
            free(out);
            return NULL;
        }
    }
    *o = '\0';
    return out;
}

static struct jv *node(enum jv_type t)
{
    struct jv *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

static bool append(struct jv *v, struct jv *item, char *key)
{
    struct jv **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items)
        return false;
    v->items = items;
    if (v->type == JV_OBJECT) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys)
            return false;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return true;
}

static struct jv *container(struct parser *ps, int depth, bool object)
{
    struct jv *v = node(object ? JV_OBJECT : JV_ARRAY);
    if (!v) {
        fail(ps, "out of memory");
        return NULL;
    }
    char close = object ? '}' : ']';
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            if (*ps->p != '"') {
                fail(ps, "expected a member name");
                break;
            }
            ps->p++;
            if (!(key = string(ps)))
                break;
            skip_ws(ps);
            if (*ps->p != ':') {
                fail(ps, "expected ':'");
                free(key);
                break;
            }
            ps->p++;
        }
        struct jv *item = value(ps, depth + 1);
        if (!item || !append(v, item, key)) {
            if (item)
                fail(ps, "out of memory");
            jv_free(item);
            free(key);
            break;
        }
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return v;
        }
        fail(ps, "expected ',' or '%c'", close);
        break;
    }
    jv_free(v);
    return NULL;
}

static struct jv *value(struct parser *ps, int depth)
{
    if (depth > MAX_DEPTH) {
        fail(ps, "nested too deeply");
        return NULL;
    }
    skip_ws(ps);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ps->p++;
        return container(ps, depth, c == '{');
    }
    if (c == '"') {
        ps->p++;
        char *s = string(ps);
        struct jv *v = s ? node(JV_STRING) : NULL;
        if (v)
            v->str = s;
        else
            free(s);
        return v;
    }
    static const struct {
        const char *word;
        enum jv_type t;
        bool b;
    } words[] = {{"true", JV_BOOL, true}, {"false", JV_BOOL, false}, {"null", JV_NULL, false}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if (strncmp(ps->p, words[i].word, n) == 0) {
            ps->p += n;
            struct jv *v = node(words[i].t);
            if (v)
                v->b = words[i].b;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        double d = strtod(ps->p, &end);
        if (end == ps->p || !isfinite(d)) {
            fail(ps, "bad number");
            return NULL;
        }
        ps->p = end;
        struct jv *v = node(JV_NUMBER);
        if (v)
            v->num = d;
        return v;
    }
    fail(ps, "unexpected character '%c'", c ? c : '?');
    return NULL;
}

struct jv *jv_parse(const char *text, char *err, size_t err_size)
{
    struct parser ps = {text, err, err_size, false};
    struct jv *v = value(&ps, 0);
    if (v) {
        skip_ws(&ps);
        if (*ps.p) {
            fail(&ps, "trailing characters");
            jv_free(v);
            v = NULL;
        }
    }
    if (!v && !ps.failed)
        fail(&ps, "out of memory");
    return v;
}

void jv_free(struct jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jv_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
    if (!v || v->type != JV_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->keys[i], key) == 0)
            return v->items[i];
    }
    return NULL;
}

const struct jv *jv_at(const struct jv *v, size_t i)
{
    if (!v || v->type != JV_ARRAY || i >= v->n)
        return NULL;
    return v->items[i];
}

size_t jv_len(const struct jv *v)
{
    return v && (v->type == JV_ARRAY || v->type == JV_OBJECT) ? v->n : 0;
}

const char *jv_str(const struct jv *v, const char *key, const char *dflt)
{
    const struct jv *m = jv_get(v, key);
    return m && m->type == JV_STRING ? m->str : dflt;
}

int64_t jv_int(const struct jv *v, const char *key, int64_t dflt)
{
    const struct jv *m = jv_get(v, key);
    return m && m->type == JV_NUMBER ? (int64_t)m->num : dflt;
}

bool jv_bool(const struct jv *v, const char *key, bool dflt)
{
    const struct jv *m = jv_get(v, key);
    return m && m->type == JV_BOOL ? m->b : dflt;
}
