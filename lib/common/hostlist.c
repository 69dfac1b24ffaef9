/* SPDX-License-Identifier: Apache-2.0 */
#include "hostlist.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGE 100000 /* names one range may make */
#define MAX_NAMES 100000 /* names one list may make (ranges under ranges multiply) */
/* A host number: larger ones are garbage, and the expansion loop must never
 * count up to LONG_MAX. */
#define MAX_NUMBER 999999999

static acc_err push(struct acc_hostlist *h, const char *name, size_t len)
{
    if (h->n >= MAX_NAMES)
        return ACC_ERR_INVALID;
    /* The array doubles when n reaches a power of two (from 16), so a long
     * list costs O(n) copying, not O(n^2). */
    size_t n = h->n;
    if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
        char **v = realloc(h->names, (n ? 2 * n : 16) * sizeof *v);
        if (!v)
            return ACC_ERR_NOMEM;
        h->names = v;
    }
    char *s = malloc(len + 1);
    if (!s)
        return ACC_ERR_NOMEM;
    memcpy(s, name, len);
    s[len] = '\0';
    h->names[h->n++] = s;
    return ACC_OK;
}

/* Expands one item (no top-level comma): prefix[ranges]rest, where rest may
 * hold further brackets; each expansion is appended with `head` in front. */
static acc_err item(const char *head, const char *s, size_t len, struct acc_hostlist *out)
{
    const char *open = memchr(s, '[', len);
    if (!open) {
        char buf[512];
        if (strlen(head) + len >= sizeof buf)
            return ACC_ERR_INVALID;
        snprintf(buf, sizeof buf, "%s%.*s", head, (int)len, s);
        return push(out, buf, strlen(buf));
    }
    const char *close = memchr(open, ']', len - (size_t)(open - s));
    if (!close)
        return ACC_ERR_INVALID;
    const char *rest = close + 1;
    size_t rest_len = len - (size_t)(rest - s);
    /* Each range of the list, "01-03" or "05". */
    for (const char *r = open + 1; r < close;) {
        const char *comma = memchr(r, ',', (size_t)(close - r));
        const char *end = comma ? comma : close;
        const char *dash = memchr(r, '-', (size_t)(end - r));
        char *stop;
        long lo = strtol(r, &stop, 10);
        if (stop == r || (dash ? stop != dash : stop != end) || lo < 0 || lo > MAX_NUMBER)
            return ACC_ERR_INVALID;
        long hi = lo;
        if (dash) {
            hi = strtol(dash + 1, &stop, 10);
            if (stop != end || hi < lo || hi > MAX_NUMBER || hi - lo >= MAX_RANGE)
                return ACC_ERR_INVALID;
        }
        int width = (int)((dash ? dash : end) - r); /* zero padding as written */
        for (long v = lo; v <= hi; v++) {
            char head2[512];
            if (snprintf(head2, sizeof head2, "%s%.*s%0*ld", head, (int)(open - s), s, width, v) >=
                (int)sizeof head2)
                return ACC_ERR_INVALID;
            acc_err rc = item(head2, rest, rest_len, out);
            if (rc)
                return rc;
        }
        r = comma ? comma + 1 : close;
    }
    return ACC_OK;
}

acc_err acc_hostlist_expand(const char *expr, struct acc_hostlist *out)
{
    if (!expr || !*expr || strcmp(expr, "(null)") == 0 || strcmp(expr, "None") == 0)
        return ACC_OK;
    const char *p = expr;
    while (*p) {
        /* The next item ends at a comma outside brackets. */
        const char *q = p;
        int depth = 0;
        while (*q && (depth > 0 || *q != ',')) {
            depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
            if (depth < 0)
                return ACC_ERR_INVALID;
            q++;
        }
        if (depth != 0)
            return ACC_ERR_INVALID;
        if (q > p) {
            acc_err rc = item("", p, (size_t)(q - p), out);
            if (rc)
                return rc;
        }
        p = *q ? q + 1 : q;
    }
    return ACC_OK;
}

void acc_hostlist_release(struct acc_hostlist *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->names[i]);
    free(h->names);
    h->names = NULL;
    h->n = 0;
}
