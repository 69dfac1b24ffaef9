/* wsim_swf.c - traces in the Standard Workload Format of the Parallel
 * Workloads Archive: ';' starts a header or comment line; every other
 * non-blank line has 18 numeric fields, -1 for unknown.  Lines are bounded
 * (WSIM_SWF_MAX_LINE); every error names the line. */
#include "wsim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SWF_FIELDS   18
#define SWF_MAX_JOBS 50000000

static bool fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return false;
}

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
            return fail(msg, len, "more than %d fields", SWF_FIELDS);
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !isfinite(x) ||
            (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n'))
            return fail(msg, len, "field %d is not a number", n + 1);
        if (x < 0 && x != -1)
            return fail(msg, len, "field %d is negative (%g) but not -1 (unknown)", n + 1, x);
        v[n++] = x;
        s = end;
    }
    if (n != SWF_FIELDS)
        return fail(msg, len, "%d fields, the format has %d", n, SWF_FIELDS);
    return true;
}

bool wsim_swf_parse(FILE *f, const char *name, struct wsim_swf_job **out, size_t *n,
                    size_t *skipped, char *err, size_t errlen)
{
    char line[WSIM_SWF_MAX_LINE + 2], msg[128];
    struct wsim_swf_job *v = NULL;
    size_t cap = 0, count = 0, skip = 0;
    long no = 0;
    bool ok = false;
    while (fgets(line, sizeof line, f)) {
        no++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
            fail(err, errlen, "%s:%ld: line longer than %d characters", name, no,
                 WSIM_SWF_MAX_LINE);
            goto out;
        }
        if (strlen(line) != len) {
            fail(err, errlen, "%s:%ld: a NUL byte", name, no);
            goto out;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == ';' || *s == '\n' || *s == '\r' || *s == '\0')
            continue;
        double x[SWF_FIELDS];
        if (!fields(s, x, msg, sizeof msg)) {
            fail(err, errlen, "%s:%ld: %s", name, no, msg);
            goto out;
        }
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
            skip++;
            continue;
        }
        j.procs = procs;
        if (count == cap) {
            if (cap >= SWF_MAX_JOBS) {
                fail(err, errlen, "%s:%ld: more than %d jobs", name, no, SWF_MAX_JOBS);
                goto out;
            }
            size_t nc = cap ? cap * 2 : 1024;
            struct wsim_swf_job *g = realloc(v, nc * sizeof *g);
            if (!g) {
                fail(err, errlen, "%s:%ld: out of memory", name, no);
                goto out;
            }
            v = g;
            cap = nc;
        }
        if (count && j.submit < v[count - 1].submit) {
            fail(err, errlen, "%s:%ld: submit time %.0f before the previous job's %.0f", name, no,
                 j.submit, v[count - 1].submit);
            goto out;
        }
        v[count++] = j;
    }
    if (ferror(f)) {
        fail(err, errlen, "%s: read error", name);
        goto out;
    }
    if (!count) {
        fail(err, errlen, "%s: no job with a known submit time, run time and size", name);
        goto out;
    }
    ok = true;
out:
    if (!ok) {
        free(v);
        return false;
    }
    *out = v;
    *n = count;
    *skipped = skip;
    return true;
}
