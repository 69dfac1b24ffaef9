/* SPDX-License-Identifier: Apache-2.0 */
/* offer_read.c - one value out of an offer's tree, within the limits: a
 * text, an attribute, a number, a time.  Every message starts with the line
 * and names the term. */
#include "offer_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"

#define MAX_STRING 4096 /* bytes of any one string */

acc_err offer_bad(struct offer_interp *in, const xmlNode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_error_vset(in->err, ACC_ERR_INVALID, fmt, ap);
    va_end(ap);
    if (n)
        acc_error_prefix(in->err, "line %ld", xmlGetLineNo(n));
    return ACC_ERR_INVALID;
}

acc_err offer_nomem(struct offer_interp *in)
{
    return acc_error_set(in->err, ACC_ERR_NOMEM, "out of memory");
}

acc_err offer_text(struct offer_interp *in, const xmlNode *n, const char *term, bool keep_blanks,
                   char **out)
{
    xmlChar *x = xmlNodeGetContent(n);
    if (!x)
        return offer_nomem(in);
    char *s = strdup((const char *)x);
    xmlFree(x);
    if (!s)
        return offer_nomem(in);
    if (!keep_blanks)
        acc_strtrim(s);
    if (strlen(s) > MAX_STRING) {
        free(s);
        if (term)
            return offer_bad(in, n, "term '%s': %s is longer than %d bytes", term, n->name,
                             MAX_STRING);
        return offer_bad(in, n, "%s is longer than %d bytes", n->name, MAX_STRING);
    }
    *out = s;
    return ACC_OK;
}

acc_err offer_optional_text(struct offer_interp *in, const xmlNode *n, char **out)
{
    acc_err rc = offer_text(in, n, NULL, false, out);
    if (!rc && !**out) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

acc_err offer_attr(struct offer_interp *in, const xmlNode *n, const char *ns, const char *name,
                   char **out)
{
    xmlChar *x =
        ns ? xmlGetNsProp(n, BAD_CAST name, BAD_CAST ns) : xmlGetNoNsProp(n, BAD_CAST name);
    *out = NULL;
    if (!x)
        return ACC_OK;
    char *s = strdup((const char *)x);
    xmlFree(x);
    if (!s)
        return offer_nomem(in);
    if (strlen(s) > MAX_STRING) {
        free(s);
        return offer_bad(in, n, "the attribute %s is longer than %d bytes", name, MAX_STRING);
    }
    *out = s;
    return ACC_OK;
}

acc_err offer_number(struct offer_interp *in, const xmlNode *n, const char *term, int64_t min,
                     int64_t max, int64_t *out)
{
    struct acc_error e;
    char *s = NULL;
    acc_err rc = offer_text(in, n, term, false, &s);
    if (rc)
        return rc;
    if (acc_parse_i64(s, min, max, out, &e))
        rc = offer_bad(in, n, "term '%s': co:%s: %s", term, n->name, e.msg);
    free(s);
    return rc;
}

acc_err offer_decimal(struct offer_interp *in, const xmlNode *n, const char *term, double max,
                      double *out)
{
    char *s = NULL;
    acc_err rc = offer_text(in, n, term, false, &s);
    if (rc)
        return rc;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    /* The schema has checked it is an xs:decimal > 0; this bounds it. */
    if (errno || end == s || *end || !isfinite(v) || !(v > 0) || v > max)
        rc = offer_bad(in, n, "term '%s': co:%s: '%.40s' is not a number in (0, %g]", term, n->name,
                       s, max);
    else
        *out = v;
    free(s);
    return rc;
}

acc_err offer_time(struct offer_interp *in, const xmlNode *n, const char *term, acc_time *out)
{
    struct acc_error e;
    char *s = NULL;
    acc_err rc = offer_text(in, n, term, false, &s);
    if (rc)
        return rc;
    if (acc_time_parse(s, out, &e)) {
        rc = term ? offer_bad(in, n, "term '%s': co:%s: %s", term, n->name, e.msg)
                  : offer_bad(in, n, "wsag:%s: %s", n->name, e.msg);
    }
    free(s);
    return rc;
}

void *offer_push(void *v, size_t *n, size_t sz)
{
    char *p = realloc(v, (*n + 1) * sz);
    if (!p)
        return NULL;
    memset(p + *n * sz, 0, sz);
    (*n)++;
    return p;
}
