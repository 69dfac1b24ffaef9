/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_experiment.c - experiment files: "key = value" lines ('#' starts a
 * comment), the keys of wsim_params plus
 *   curves = KEY: V1 | V2 | ...     one curve per value (default: policy)
 *   x      = KEY: V1 | V2 | ...     or KEY: FROM..TO/STEP (numbers)
 *   metric = NAME                   what the plot shows (default mean_resp)
 *   plot_x = NAME                   a metric as the plot's x (util_gross)
 *   title  = TEXT
 * A point's parameters are the defaults, then every base line in order, then
 * the curve's value, then the x value. */
#include "wsim.h"
#include "wsim_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE  (1 << 20)
#define MAX_LINE  4096
#define MAX_LINES 10000

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

void wsim_experiment_free(struct wsim_experiment *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nkv; i++) {
        free(e->kv[i].key);
        free(e->kv[i].value);
    }
    free(e->kv);
    for (size_t i = 0; i < e->ncurves; i++)
        free(e->curves[i]);
    for (size_t i = 0; i < e->nxs; i++)
        free(e->xs[i]);
    free(e->curves);
    free(e->xs);
    free(e->curve_key);
    free(e->x_key);
    free(e->metric);
    free(e->plot_x);
    free(e->title);
    free(e->dir);
    memset(e, 0, sizeof *e);
}

static bool add_value(char ***v, size_t *n, const char *s)
{
    if (*n >= WSIM_MAX_LIST)
        return false;
    char **g = realloc(*v, (*n + 1) * sizeof *g);
    if (!g)
        return false;
    *v = g;
    g[*n] = strdup(s);
    if (!g[*n])
        return false;
    (*n)++;
    return true;
}

/* "KEY: V1 | V2" or "KEY: A..B/S" into key and values. */
static bool axis(char *text, char **key, char ***vals, size_t *n, char *err, size_t len)
{
    char *colon = strchr(text, ':');
    if (!colon)
        return wsim_errf(err, len, "expected KEY: V1 | V2 | ...");
    *colon = '\0';
    free(*key);
    *key = strdup(trim(text));
    if (!*key)
        return wsim_errf(err, len, "out of memory");
    char *rest = trim(colon + 1);
    char *dots = strstr(rest, "..");
    char *slash = strchr(rest, '/');
    if (dots && slash && !strchr(rest, '|')) {
        char *end;
        *dots = '\0'; /* "200..": strtod would take "200." */
        *slash = '\0';
        errno = 0;
        double a = strtod(rest, &end);
        bool ok = end != rest && *end == '\0';
        double b = strtod(dots + 2, &end);
        ok = ok && end != dots + 2 && *end == '\0';
        double st = strtod(slash + 1, &end);
        ok = ok && *end == '\0' && !errno && st > 0 && b >= a;
        if (!ok)
            return wsim_errf(err, len, "a range is FROM..TO/STEP with STEP > 0");
        long count = lround(floor((b - a) / st + 1e-9)) + 1;
        if (count > WSIM_MAX_LIST)
            return wsim_errf(err, len, "at most %d values", WSIM_MAX_LIST);
        for (long i = 0; i < count; i++) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.10g", a + (double)i * st);
            if (!add_value(vals, n, buf))
                return wsim_errf(err, len, "out of memory");
        }
        return true;
    }
    char *s = rest;
    for (;;) {
        char *bar = strchr(s, '|');
        if (bar)
            *bar = '\0';
        char *v = trim(s);
        if (!*v)
            return wsim_errf(err, len, "an empty value");
        if (!add_value(vals, n, v))
            return wsim_errf(err, len, "at most %d values", WSIM_MAX_LIST);
        if (!bar)
            break;
        s = bar + 1;
    }
    return true;
}

/* A base line: checked now, with its line number, on a scratch set, and
 * kept. */
static bool add_base(struct wsim_experiment *e, const char *key, const char *val, const char *name,
                     int no, char *err, size_t errlen)
{
    char msg[WSIM_ERR_LEN];
    struct wsim_params p;
    wsim_params_init(&p);
    bool good = wsim_params_set(&p, key, val, e->dir, msg, sizeof msg);
    wsim_params_release(&p);
    if (!good)
        return wsim_errf(err, errlen, "%s:%d: %s", name, no, msg);
    struct wsim_kv *kv = realloc(e->kv, (e->nkv + 1) * sizeof *kv);
    if (!kv)
        return wsim_errf(err, errlen, "%s: out of memory", name);
    e->kv = kv;
    kv[e->nkv] = (struct wsim_kv){strdup(key), strdup(val), no};
    if (!kv[e->nkv].key || !kv[e->nkv].value) {
        free(kv[e->nkv].key);
        free(kv[e->nkv].value);
        return wsim_errf(err, errlen, "%s: out of memory", name);
    }
    e->nkv++;
    return true;
}

/* One "key = value" line (line number no): an axis, what the plot shows,
 * or a base line. */
static bool parse_line(struct wsim_experiment *e, char *key, char *val, const char *name, int no,
                       char *err, size_t errlen)
{
    char msg[WSIM_ERR_LEN];
    if (!strcmp(key, "curves") || !strcmp(key, "x")) {
        bool c = !strcmp(key, "curves");
        if ((c ? e->ncurves : e->nxs) > 0)
            return wsim_errf(err, errlen, "%s:%d: %s given twice", name, no, key);
        if (!axis(val, c ? &e->curve_key : &e->x_key, c ? &e->curves : &e->xs,
                  c ? &e->ncurves : &e->nxs, msg, sizeof msg))
            return wsim_errf(err, errlen, "%s:%d: %s: %s", name, no, key, msg);
        return true;
    }
    if (!strcmp(key, "metric") || !strcmp(key, "title") || !strcmp(key, "plot_x")) {
        char **dst = !strcmp(key, "metric")   ? &e->metric
                     : !strcmp(key, "plot_x") ? &e->plot_x
                                              : &e->title;
        if (strcmp(key, "title") && wsim_metric_index(val) < 0)
            return wsim_errf(err, errlen, "%s:%d: unknown metric \"%s\"", name, no, val);
        free(*dst);
        *dst = strdup(val);
        if (!*dst)
            return wsim_errf(err, errlen, "%s: out of memory", name);
        return true;
    }
    return add_base(e, key, val, name, no, err, errlen);
}

/* The defaults of what the file left out; then every point must make a
 * valid set: found now, not after hours. */
static bool finish(struct wsim_experiment *e, const char *name, char *err, size_t errlen)
{
    char msg[WSIM_ERR_LEN];
    if ((!e->ncurves && !add_value(&e->curves, &e->ncurves, "")) ||
        (!e->nxs && !add_value(&e->xs, &e->nxs, "")) ||
        (!e->metric && !(e->metric = strdup("mean_resp"))))
        return wsim_errf(err, errlen, "%s: out of memory", name);
    for (size_t c = 0; c < e->ncurves; c++) {
        for (size_t x = 0; x < e->nxs; x++) {
            struct wsim_params p;
            if (!wsim_experiment_params(e, c, x, &p, msg, sizeof msg))
                return wsim_errf(err, errlen, "%s: %s", name, msg);
            wsim_params_release(&p);
        }
    }
    return true;
}

bool wsim_experiment_parse(struct wsim_experiment *e, const char *text, const char *dir,
                           const char *name, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    bool ok = false;
    int no = 0;
    e->dir = strdup(dir ? dir : ".");
    char *copy = strdup(text);
    if (!e->dir || !copy) {
        wsim_errf(err, errlen, "%s: out of memory", name);
        goto out;
    }
    for (char *line = copy; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        no++;
        if (no > MAX_LINES || strlen(line) > MAX_LINE) {
            wsim_errf(err, errlen, "%s:%d: more than %d lines or a line over %d characters", name,
                      no, MAX_LINES, MAX_LINE);
            goto out;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        line = nl ? nl + 1 : NULL;
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            wsim_errf(err, errlen, "%s:%d: expected key = value", name, no);
            goto out;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        if (!*key || !*val) {
            wsim_errf(err, errlen, "%s:%d: expected key = value", name, no);
            goto out;
        }
        if (!parse_line(e, key, val, name, no, err, errlen))
            goto out;
    }
    ok = finish(e, name, err, errlen);
out:
    free(copy);
    if (!ok)
        wsim_experiment_free(e);
    return ok;
}

bool wsim_experiment_load(struct wsim_experiment *e, const char *path, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    FILE *f = fopen(path, "r");
    if (!f)
        return wsim_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
    fclose(f);
    if (!buf)
        return wsim_errf(err, errlen, "%s: out of memory", path);
    if (n > MAX_FILE) {
        free(buf);
        return wsim_errf(err, errlen, "%s: larger than %d bytes", path, MAX_FILE);
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        free(buf);
        return wsim_errf(err, errlen, "%s: a NUL byte in the file", path);
    }
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    bool ok = wsim_experiment_parse(e, buf, dir, path, err, errlen);
    free(buf);
    return ok;
}

bool wsim_experiment_params(const struct wsim_experiment *e, size_t curve, size_t x,
                            struct wsim_params *p, char *err, size_t errlen)
{
    char msg[WSIM_ERR_LEN];
    wsim_params_init(p);
    for (size_t i = 0; i < e->nkv; i++) {
        if (!wsim_params_set(p, e->kv[i].key, e->kv[i].value, e->dir, msg, sizeof msg)) {
            if (e->kv[i].line > 0)
                wsim_errf(err, errlen, "line %d: %s", e->kv[i].line, msg);
            else /* an override from the command line */
                wsim_errf(err, errlen, "%s=%s: %s", e->kv[i].key, e->kv[i].value, msg);
            goto bad;
        }
    }
    if (e->curve_key &&
        !wsim_params_set(p, e->curve_key, e->curves[curve], e->dir, msg, sizeof msg)) {
        wsim_errf(err, errlen, "curves %s = %s: %s", e->curve_key, e->curves[curve], msg);
        goto bad;
    }
    if (e->x_key && !wsim_params_set(p, e->x_key, e->xs[x], e->dir, msg, sizeof msg)) {
        wsim_errf(err, errlen, "x %s = %s: %s", e->x_key, e->xs[x], msg);
        goto bad;
    }
    if (!wsim_params_check(p, msg, sizeof msg)) {
        wsim_errf(err, errlen, "curve %zu, x %zu: %s", curve + 1, x + 1, msg);
        goto bad;
    }
    return true;
bad:
    wsim_params_release(p);
    return false;
}
