/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_swf.c - traces in the Standard Workload Format of the Parallel
 * Workloads Archive: ';' starts a header or comment line; every other
 * non-blank line has 18 numeric fields, -1 for unknown.  Lines are bounded
 * (WSIM_SWF_MAX_LINE); every error names the line. */
#include "wsim.h"
#include "wsim_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SWF_FIELDS   18
#define SWF_MAX_JOBS 50000000

/* Splits a data line into its 18 numbers; false with a message. */
static bool fields(char *s, double *v, char *msg, size_t len)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (!*s)
            break;
        if (n == SWF_FIELDS)
            return wsim_errf(msg, len, "more than %d fields", SWF_FIELDS);
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !isfinite(x) ||
            (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n'))
            return wsim_errf(msg, len, "field %d is not a number", n + 1);
        if (x < 0 && x != -1)
            return wsim_errf(msg, len, "field %d is negative (%g) but not -1 (unknown)", n + 1, x);
        v[n++] = x;
        s = end;
    }
    if (n != SWF_FIELDS)
        return wsim_errf(msg, len, "%d fields, the format has %d", n, SWF_FIELDS);
    return true;
}

/* The jobs read so far. */
struct trace {
    struct wsim_swf_job *v;
    size_t cap, count, skipped;
};

/* A line as read: false with a message when it is longer than the limit
 * (or holds a NUL); *data NULL for comments and blank lines. */
static bool check_line(FILE *f, char *line, size_t size, char **data, char *msg, size_t len)
{
    size_t n = strlen(line);
    if (n == size - 1 && line[n - 1] != '\n' && !feof(f))
        return wsim_errf(msg, len, "line longer than %d characters", WSIM_SWF_MAX_LINE);
    if (strlen(line) != n)
        return wsim_errf(msg, len, "a NUL byte");
    char *s = line;
    while (*s == ' ' || *s == '\t')
        s++;
    *data = *s == ';' || *s == '\n' || *s == '\r' || *s == '\0' ? NULL : s;
    return true;
}

/* The job of a data line's fields, appended; one with an unknown submit
 * time, run time or size is counted and skipped.  False with a message. */
static bool add_job(struct trace *t, const double *x, char *msg, size_t len)
{
    struct wsim_swf_job j = {
        .id = (long)x[0],
        .submit = x[1],
        .wait = x[2],
        .run = x[3],
        .procs = (long)x[4],
        .req_procs = (long)x[7],
        .req_time = x[8],
        .status = (int)x[10],
    };
    long procs = j.procs > 0 ? j.procs : j.req_procs;
    if (j.submit < 0 || j.run < 0 || procs <= 0) {
        t->skipped++;
        return true;
    }
    j.procs = procs;
    if (t->count == t->cap) {
        if (t->cap >= SWF_MAX_JOBS)
            return wsim_errf(msg, len, "more than %d jobs", SWF_MAX_JOBS);
        size_t nc = t->cap ? t->cap * 2 : 1024;
        struct wsim_swf_job *g = realloc(t->v, nc * sizeof *g);
        if (!g)
            return wsim_errf(msg, len, "out of memory");
        t->v = g;
        t->cap = nc;
    }
    if (t->count && j.submit < t->v[t->count - 1].submit)
        return wsim_errf(msg, len, "submit time %.0f before the previous job's %.0f", j.submit,
                         t->v[t->count - 1].submit);
    t->v[t->count++] = j;
    return true;
}

bool wsim_swf_parse(FILE *f, const char *name, struct wsim_swf_job **out, size_t *n,
                    size_t *skipped, char *err, size_t errlen)
{
    char line[WSIM_SWF_MAX_LINE + 2], msg[1024]; /* holds two %.0f of any double */
    struct trace t = {0};
    long no = 0;
    bool ok = false;
    while (fgets(line, sizeof line, f)) {
        no++;
        char *data = NULL;
        double x[SWF_FIELDS];
        if (!check_line(f, line, sizeof line, &data, msg, sizeof msg) ||
            (data && !(fields(data, x, msg, sizeof msg) && add_job(&t, x, msg, sizeof msg)))) {
            wsim_errf(err, errlen, "%s:%ld: %s", name, no, msg);
            goto out;
        }
    }
    if (ferror(f)) {
        wsim_errf(err, errlen, "%s: read error", name);
        goto out;
    }
    if (!t.count) {
        wsim_errf(err, errlen, "%s: no job with a known submit time, run time and size", name);
        goto out;
    }
    ok = true;
out:
    if (!ok) {
        free(t.v);
        return false;
    }
    *out = t.v;
    *n = t.count;
    *skipped = t.skipped;
    return true;
}
