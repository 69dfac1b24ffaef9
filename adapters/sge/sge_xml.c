/* SPDX-License-Identifier: Apache-2.0 */
/* sge_xml.c - reading Grid Engine's -xml outputs (qrstat, qstat -f -r)
 * through lib/xmlguard: bounded in size, depth, elements and attributes, no
 * DTD or entity, no network.  Elements are found by name; what a reader
 * does not use is left alone, what it uses must be well formed or the read
 * fails naming it. */
#include "sge_internal.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/strutil.h"
#include "../../lib/xmlguard/xmlguard.h"

#define FOREVER ((acc_time)1 << 40) /* a job without h_rt */

static const struct acc_xmlguard_limits limits = {
    SGE_XML_MAX, /* bytes */
    16,          /* depth: qstat -f -r nests 5 deep */
    400000,      /* elements */
    8,           /* attributes on one element */
    200000,      /* attributes in all */
};

struct first_error {
    char text[200];
    int line;
};

static void on_error(void *arg, xmlErrorPtr e)
{
    struct first_error *f = arg;
    if (!e || e->level == XML_ERR_WARNING || f->text[0])
        return;
    snprintf(f->text, sizeof f->text, "%s", e->message ? e->message : "not well-formed");
    acc_strtrim(f->text);
    f->line = e->line;
}

/* Parses xml and checks its document element. */
static acc_err parse(const char *xml, size_t len, const char *root, xmlDocPtr *doc,
                     struct acc_error *err)
{
    struct first_error first = {.line = 0};
    xmlDocPtr d = NULL;
    *doc = NULL;
    acc_err rc = acc_xmlguard_read(xml ? xml : "", xml ? len : 0, &limits, NULL, XML_PARSE_NOERROR,
                                   on_error, &first, &d, err);
    if (rc)
        return rc;
    if (!d)
        return acc_error_set(err, ACC_ERR_MALFORMED, "not XML: line %d: %s", first.line,
                             first.text[0] ? first.text : "not well-formed");
    xmlNodePtr top = xmlDocGetRootElement(d);
    if (strcmp((const char *)top->name, root) != 0) {
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "the document element is <%.40s>, not <%s>",
                           (const char *)top->name, root);
        xmlFreeDoc(d);
        return rc;
    }
    *doc = d;
    return ACC_OK;
}

static bool is(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNodePtr child(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (is(c, name))
            return c;
    }
    return NULL;
}

/* The text of n's child `name` (trimmed), malloc'd; NULL when absent. */
static char *text_of(xmlNodePtr n, const char *name)
{
    xmlNodePtr c = child(n, name);
    if (!c)
        return NULL;
    xmlChar *t = xmlNodeGetContent(c);
    char *s = acc_strdup(t ? (const char *)t : "");
    xmlFree(t);
    if (s)
        acc_strtrim(s);
    return s;
}

static char *attr_of(xmlNodePtr n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    char *s = v ? acc_strdup((const char *)v) : NULL;
    xmlFree(v);
    return s;
}

bool sge_parse_time(const char *s, acc_time *out)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (!s || strlen(s) != 19 ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return false;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
        h < 0 || mi < 0 || sec < 0)
        return false;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    *out = (acc_time)timegm(&tm);
    return true;
}

/* The host of a queue instance "queue@host". */
static const char *host_of(const char *qi)
{
    const char *at = qi ? strchr(qi, '@') : NULL;
    return at && at[1] && at != qi ? at + 1 : NULL;
}

/* ------------------------------------------------------------------ qrstat */

void sge_ars_release(struct sge_ars *a)
{
    for (size_t i = 0; i < a->n; i++) {
        for (size_t j = 0; j < a->v[i].n_grants; j++)
            free(a->v[i].grants[j].host);
        free(a->v[i].grants);
        free(a->v[i].name);
    }
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static acc_err read_grants(xmlNodePtr list, struct sge_ar *ar, struct acc_error *err)
{
    for (xmlNodePtr g = list->children; g; g = g->next) {
        if (!is(g, "granted_slots"))
            continue;
        char *qi = attr_of(g, "queue_instance"), *sl = attr_of(g, "slots");
        const char *host = host_of(qi);
        int64_t slots = 0;
        acc_err rc = ACC_OK;
        if (!host)
            rc = acc_error_set(err, ACC_ERR_MALFORMED,
                               "advance reservation %lld: granted_slots queue_instance '%.80s' "
                               "names no host",
                               (long long)ar->id, qi ? qi : "");
        else if (!sl || acc_parse_i64(sl, 1, 1000000, &slots, NULL))
            rc = acc_error_set(err, ACC_ERR_MALFORMED,
                               "advance reservation %lld: bad slots '%.40s' on %.80s",
                               (long long)ar->id, sl ? sl : "", qi);
        if (!rc) {
            struct sge_grant *v = realloc(ar->grants, (ar->n_grants + 1) * sizeof *v);
            char *h = v ? acc_strdup(host) : NULL;
            if (v)
                ar->grants = v;
            if (!h)
                rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            else
                ar->grants[ar->n_grants++] = (struct sge_grant){h, slots};
        }
        free(qi);
        free(sl);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

static acc_err read_ar(xmlNodePtr n, struct sge_ar *ar, struct acc_error *err)
{
    char *id = text_of(n, "id"), *st = text_of(n, "state");
    char *start = text_of(n, "start_time"), *end = text_of(n, "end_time");
    acc_err rc = ACC_OK;
    ar->name = text_of(n, "name");
    if (!id || acc_parse_i64(id, 1, INT64_MAX / 2, &ar->id, NULL))
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "ar_summary with a bad id '%.40s'",
                           id ? id : "(none)");
    else if (!sge_parse_time(start, &ar->start))
        rc = acc_error_set(err, ACC_ERR_MALFORMED,
                           "advance reservation %lld: bad start_time '%.40s'", (long long)ar->id,
                           start ? start : "(none)");
    else if (!sge_parse_time(end, &ar->end) || ar->end < ar->start)
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "advance reservation %lld: bad end_time '%.40s'",
                           (long long)ar->id, end ? end : "(none)");
    if (!rc)
        acc_strlcpy(ar->state, st ? st : "", sizeof ar->state);
    xmlNodePtr list = rc ? NULL : child(n, "granted_slots_list");
    if (list)
        rc = read_grants(list, ar, err);
    free(id);
    free(st);
    free(start);
    free(end);
    return rc;
}

acc_err sge_read_ars(const char *xml, size_t len, struct sge_ars *out, struct acc_error *err)
{
    xmlDocPtr doc;
    out->v = NULL;
    out->n = 0;
    acc_err rc = parse(xml, len, "qrstat", &doc, err);
    if (rc)
        return rc;
    for (xmlNodePtr n = xmlDocGetRootElement(doc)->children; n && !rc; n = n->next) {
        if (!is(n, "ar_summary"))
            continue; /* ar_unknown: not there */
        struct sge_ar *v = realloc(out->v, (out->n + 1) * sizeof *v);
        if (!v) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        out->v = v;
        memset(&out->v[out->n], 0, sizeof *v);
        rc = read_ar(n, &out->v[out->n++], err);
    }
    xmlFreeDoc(doc);
    if (rc)
        sge_ars_release(out);
    return rc;
}

/* ------------------------------------------------------------------- qstat */

/* h_rt as qstat shows it: seconds, or h:m:s. */
static bool parse_rt(const char *v, int64_t *out)
{
    int64_t parts[3] = {0, 0, 0};
    size_t n = 0;
    for (const char *p = v; n < 3;) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 0 || digits > 9)
            return false;
        char buf[16];
        memcpy(buf, p, digits);
        buf[digits] = '\0';
        parts[n++] = strtoll(buf, NULL, 10);
        p += digits;
        if (*p == '\0')
            break;
        if (*p++ != ':')
            return false;
        if (n == 3)
            return false;
    }
    *out = n == 1   ? parts[0]
           : n == 2 ? parts[0] * 60 + parts[1]
                    : parts[0] * 3600 + parts[1] * 60 + parts[2];
    return true;
}

static acc_err read_job(xmlNodePtr j, const char *qi, const char *host, acc_time now,
                        struct avail *a, struct acc_error *err)
{
    char *id = text_of(j, "JB_job_number"), *st = text_of(j, "JAT_start_time"), *rt = NULL;
    for (xmlNodePtr h = j->children; h && !rt; h = h->next) {
        char *name = is(h, "hard_request") ? attr_of(h, "name") : NULL;
        if (name && strcmp(name, "h_rt") == 0) {
            xmlChar *t = xmlNodeGetContent(h);
            rt = acc_strdup(t ? (const char *)t : "");
            xmlFree(t);
        }
        free(name);
    }
    acc_time start = now, end = FOREVER;
    int64_t secs = 0;
    acc_err rc = ACC_OK;
    if (st && !sge_parse_time(st, &start))
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "job %.20s on %.80s: bad JAT_start_time '%.40s'",
                           id ? id : "?", qi, st);
    else if (rt && !parse_rt(rt, &secs))
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "job %.20s on %.80s: bad h_rt '%.40s'",
                           id ? id : "?", qi, rt);
    if (!rc) {
        if (rt)
            end = start + secs;
        if (end < now)
            end = now; /* past its limit, still there */
        /* busy until one second after its end, as the Slurm adapter reads it */
        rc = avail_add_busy(a, host, start, end + 1);
        if (rc)
            acc_error_set(err, rc, "out of memory");
    }
    free(id);
    free(st);
    free(rt);
    return rc;
}

static acc_err read_queue(xmlNodePtr q, int64_t slots, acc_time now, struct avail *a,
                          struct acc_error *err)
{
    char *qi = text_of(q, "name"), *total = text_of(q, "slots_total"), *st = text_of(q, "state");
    const char *host = host_of(qi);
    int64_t n = 0;
    acc_err rc = ACC_OK;
    if (!host)
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "Queue-List with a bad name '%.80s'",
                           qi ? qi : "(none)");
    else if (!total || acc_parse_i64(total, 0, 1000000, &n, NULL))
        rc = acc_error_set(err, ACC_ERR_MALFORMED, "queue instance %.80s: bad slots_total '%.40s'",
                           qi, total ? total : "(none)");
    /* Any state letter (alarm, unknown, disabled, suspended, error...)
     * keeps the scheduler off the instance: not planned with. */
    if (!rc && avail_add_node(a, host, (!st || !*st) && n >= slots))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (xmlNodePtr j = rc ? NULL : q->children; j && !rc; j = j->next) {
        if (is(j, "job_list"))
            rc = read_job(j, qi, host, now, a, err);
    }
    free(qi);
    free(total);
    free(st);
    return rc;
}

acc_err sge_read_queues(const char *xml, size_t len, int64_t slots, acc_time now, struct avail *a,
                        struct acc_error *err)
{
    xmlDocPtr doc;
    acc_err rc = parse(xml, len, "job_info", &doc, err);
    if (rc)
        return rc;
    xmlNodePtr qinfo = child(xmlDocGetRootElement(doc), "queue_info");
    for (xmlNodePtr q = qinfo ? qinfo->children : NULL; q && !rc; q = q->next) {
        if (is(q, "Queue-List"))
            rc = read_queue(q, slots, now, a, err);
    }
    xmlFreeDoc(doc);
    return rc;
}
