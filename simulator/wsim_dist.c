/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_dist.c - the distributions of sizes and times named in parameter
 * files: const:V, exp:MEAN, uniform:A:B (integers when both are), set:V,V,..
 * (equally likely), dq:Q:N1:N2 (Bucur's D(q), 1 counted as a power of 2),
 * empirical:FILE (lines "value weight"). */
#include "wsim.h"
#include "wsim_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A number ending at one of the stop characters (or the string's end). */
static bool num(const char **s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(*s, &end);
    if (end == *s || errno || !isfinite(v))
        return false;
    *out = v;
    *s = end;
    return true;
}

void wsim_dist_release(struct wsim_dist_spec *d)
{
    free(d->val);
    free(d->cum);
    d->val = d->cum = NULL;
    d->n = 0;
}

static bool grow(struct wsim_dist_spec *d, size_t n)
{
    double *v = realloc(d->val, n * sizeof *v);
    if (!v)
        return false;
    d->val = v;
    double *c = realloc(d->cum, n * sizeof *c);
    if (!c)
        return false;
    d->cum = c;
    return true;
}

static bool push(struct wsim_dist_spec *d, double v, double w)
{
    if (d->n >= WSIM_MAX_EMP || !grow(d, d->n + 1))
        return false;
    d->val[d->n] = v;
    d->cum[d->n] = (d->n ? d->cum[d->n - 1] : 0) + w;
    d->n++;
    return true;
}

static bool is_pow2(long i)
{
    return i > 0 && (i & (i - 1)) == 0;
}

static bool load_empirical(struct wsim_dist_spec *d, const char *file, const char *dir, char *err,
                           size_t errlen)
{
    char path[512];
    if (file[0] == '/' || !dir)
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return wsim_errf(err, errlen, "cannot open the distribution file %s", path);
    char line[256];
    int no = 0;
    bool ok = false;
    while (fgets(line, sizeof line, f)) {
        no++;
        if (!strchr(line, '\n') && !feof(f)) {
            wsim_errf(err, errlen, "%s:%d: line longer than %zu characters", path, no,
                      sizeof line - 2);
            goto out;
        }
        const char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#' || *s == '\n' || *s == '\0')
            continue;
        double v, w = 1;
        if (!num(&s, &v)) {
            wsim_errf(err, errlen, "%s:%d: expected \"value [weight]\"", path, no);
            goto out;
        }
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s && *s != '\n' && *s != '#' && (!num(&s, &w) || w < 0)) {
            wsim_errf(err, errlen, "%s:%d: the weight must be a number >= 0", path, no);
            goto out;
        }
        if (w > 0 && !push(d, v, w)) {
            wsim_errf(err, errlen, "%s:%d: more than %d points", path, no, WSIM_MAX_EMP);
            goto out;
        }
    }
    if (d->n == 0) {
        wsim_errf(err, errlen, "%s: no values with a positive weight", path);
        goto out;
    }
    ok = true;
out:
    fclose(f);
    return ok;
}

bool wsim_dist_parse(struct wsim_dist_spec *d, const char *text, const char *dir, char *err,
                     size_t errlen)
{
    struct wsim_dist_spec n = {0};
    const char *colon = strchr(text, ':');
    if (!colon)
        return wsim_errf(err, errlen, "distribution \"%s\": expected kind:parameters", text);
    size_t klen = (size_t)(colon - text);
    const char *s = colon + 1;
    if (klen == 5 && !strncmp(text, "const", 5)) {
        n.kind = WSIM_DIST_CONST;
        if (!num(&s, &n.a) || *s || n.a < 0)
            return wsim_errf(err, errlen, "const:V needs a number >= 0");
    } else if (klen == 3 && !strncmp(text, "exp", 3)) {
        n.kind = WSIM_DIST_EXP;
        if (!num(&s, &n.a) || *s || n.a <= 0)
            return wsim_errf(err, errlen, "exp:MEAN needs a mean > 0");
    } else if (klen == 7 && !strncmp(text, "uniform", 7)) {
        n.kind = WSIM_DIST_UNIFORM;
        if (!num(&s, &n.a) || *s++ != ':' || !num(&s, &n.b) || *s || n.b < n.a || n.a < 0)
            return wsim_errf(err, errlen, "uniform:A:B needs 0 <= A <= B");
    } else if (klen == 2 && !strncmp(text, "dq", 2)) {
        n.kind = WSIM_DIST_DQ;
        if (!num(&s, &n.q) || *s++ != ':' || !num(&s, &n.a) || *s++ != ':' || !num(&s, &n.b) ||
            *s || n.q <= 0 || n.a < 1 || n.b < n.a || n.b > 100000 || n.a != floor(n.a) ||
            n.b != floor(n.b))
            return wsim_errf(err, errlen, "dq:Q:N1:N2 needs Q > 0 and integers 1 <= N1 <= N2");
        for (long i = (long)n.a; i <= (long)n.b; i++) {
            double w = pow(n.q, (double)i) * (is_pow2(i) ? 3.0 : 1.0);
            if (!push(&n, (double)i, w)) {
                wsim_dist_release(&n);
                return wsim_errf(err, errlen, "dq: at most %d sizes", WSIM_MAX_EMP);
            }
        }
    } else if (klen == 3 && !strncmp(text, "set", 3)) {
        n.kind = WSIM_DIST_SET;
        for (;;) {
            double v;
            if (!num(&s, &v) || v < 0 || !push(&n, v, 1)) {
                wsim_dist_release(&n);
                return wsim_errf(err, errlen, "set:V,V,... needs numbers >= 0 (at most %d)",
                                 WSIM_MAX_EMP);
            }
            if (*s == '\0')
                break;
            if (*s++ != ',') {
                wsim_dist_release(&n);
                return wsim_errf(err, errlen, "set: values are separated by commas");
            }
        }
    } else if (klen == 9 && !strncmp(text, "empirical", 9)) {
        n.kind = WSIM_DIST_EMP;
        if (!load_empirical(&n, s, dir, err, errlen)) {
            wsim_dist_release(&n);
            return false;
        }
    } else {
        return wsim_errf(err, errlen,
                         "unknown distribution \"%.*s\" (const, exp, uniform, set, dq, empirical)",
                         (int)klen, text);
    }
    wsim_dist_release(d);
    *d = n;
    return true;
}

double wsim_dist_draw(const struct wsim_dist_spec *d, struct wsim_rng *r)
{
    switch (d->kind) {
    case WSIM_DIST_CONST:
        return d->a;
    case WSIM_DIST_EXP:
        return wsim_rng_exp(r, d->a);
    case WSIM_DIST_UNIFORM:
        if (d->a == floor(d->a) && d->b == floor(d->b))
            return (double)wsim_rng_int(r, (int64_t)d->a, (int64_t)d->b);
        return d->a + (d->b - d->a) * wsim_rng_uniform(r);
    case WSIM_DIST_SET:
    case WSIM_DIST_DQ:
    case WSIM_DIST_EMP:
        return d->val[wsim_rng_pick(r, d->cum, d->n)];
    }
    return 0;
}

double wsim_dist_mean(const struct wsim_dist_spec *d)
{
    switch (d->kind) {
    case WSIM_DIST_CONST:
    case WSIM_DIST_EXP:
        return d->a;
    case WSIM_DIST_UNIFORM:
        return (d->a + d->b) / 2;
    case WSIM_DIST_SET:
    case WSIM_DIST_DQ:
    case WSIM_DIST_EMP: {
        double m = 0, prev = 0;
        for (size_t i = 0; i < d->n; i++) {
            m += d->val[i] * (d->cum[i] - prev);
            prev = d->cum[i];
        }
        return m / d->cum[d->n - 1];
    }
    }
    return 0;
}
