/* SPDX-License-Identifier: Apache-2.0 */
/* offer_wsag4j.c - WSAG4J's way of writing a reservation, mapped onto
 * Accord's offer.
 *
 * WSAG4J (Fraunhofer SCAI's WS-Agreement framework) describes a job in a
 * ServiceDescriptionTerm with JSDL 1.0 and its time with the scheduling
 * extension's wsag4j:TimeConstraint.  Accord takes them as a single-site
 * reservation:
 *   jsdl:JobDefinition        one component, named by the term
 *     jsdl:CandidateHosts     its site (one jsdl:HostName; none: Accord chooses)
 *     jsdl:TotalResourceCount its nodes (jsdl:Exact, required)
 *     jsdl:IndividualCPUCount its processes per node
 *     jsdl:TotalCPUCount      the same, times the nodes
 *     jsdl-posix:Executable, jsdl-posix:Argument   its executable, arguments
 *   wsag4j:TimeConstraint     the schedule
 *     StartTime -> earliest start, EndTime -> deadline,
 *     Duration (whole minutes) -> duration; without it, EndTime - StartTime.
 * offer_vocab.c has refused every element this file does not know, and the
 * schemas have checked order and types; here is what the values mean.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "offer_internal.h"

#include "../../lib/common/strutil.h"

#define MAX_MINUTES (INT64_C(100) * 366 * 24 * 60) /* a century */

static bool is_jsdl(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_JSDL, name);
}

static bool is_posix(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_JSDL_POSIX, name);
}

static bool is_wsag4j(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_WSAG4J, name);
}

bool offer_wsag4j_is(const xmlNode *body)
{
    return is_jsdl(body, "JobDefinition") || is_wsag4j(body, "TimeConstraint");
}

/* --------------------------------------------------------------- the job */

/* The one jsdl:Exact of a JSDL count n, a whole number within [1, max]. */
static acc_err exact(struct offer_interp *in, const xmlNode *n, const char *term, int64_t max,
                     int64_t *out)
{
    const xmlNode *e = offer_first_el(n);
    if (!e)
        return offer_bad(in, n,
                         "term '%s': jsdl:%s gives no jsdl:Exact: Accord reserves an exact count",
                         term, n->name);
    if (offer_next_el(e))
        return offer_bad(in, n,
                         "term '%s': jsdl:%s gives more than one jsdl:Exact: a reservation has "
                         "one size",
                         term, n->name);
    char *s = NULL;
    acc_err rc = offer_text(in, e, term, false, &s);
    if (rc)
        return rc;
    char *end = NULL;
    double v = strtod(s, &end);
    /* The schema has checked it is an xs:double. */
    if (end == s || *end || !isfinite(v) || v != floor(v) || v < 1 || v > (double)max)
        rc =
            offer_bad(in, e, "term '%s': jsdl:%s: '%.40s' is not a whole number from 1 to %" PRId64,
                      term, n->name, s, max);
    else
        *out = (int64_t)v;
    free(s);
    return rc;
}

static acc_err hosts(struct offer_interp *in, const xmlNode *n, const char *term,
                     struct acc_component *c)
{
    const xmlNode *h = offer_first_el(n);
    if (h && offer_next_el(h))
        return offer_bad(in, n,
                         "term '%s': jsdl:CandidateHosts names more than one jsdl:HostName: a "
                         "jsdl:JobDefinition is booked on one site; name one site of GET /sites, "
                         "none to let Accord choose, or use co:Component terms to co-allocate",
                         term);
    if (!h)
        return ACC_OK;
    acc_err rc = offer_text(in, h, term, false, &c->site);
    if (!rc && !acc_name_valid(c->site, MAX_NAME))
        rc = offer_bad(in, h,
                       "term '%s': jsdl:HostName '%.80s' is not a site name: use 1 to 64 "
                       "letters, digits, '.', '_' or '-'",
                       term, c->site);
    return rc;
}

static acc_err posix(struct offer_interp *in, const xmlNode *n, const char *term,
                     struct acc_component *c)
{
    acc_err rc = ACC_OK;
    for (xmlNode *e = offer_first_el(n); e && !rc; e = offer_next_el(e)) {
        if (is_posix(e, "Executable"))
            rc = offer_executable(in, e, term, "jsdl-posix:Executable", c);
        else if (is_posix(e, "Argument"))
            rc = offer_argument(in, e, term, c);
    }
    return rc;
}

struct counts {
    int64_t nodes, per_node, total_cpus;
};

static acc_err resources(struct offer_interp *in, const xmlNode *n, const char *term,
                         struct acc_component *c, struct counts *k)
{
    acc_err rc = ACC_OK;
    for (xmlNode *e = offer_first_el(n); e && !rc; e = offer_next_el(e)) {
        if (is_jsdl(e, "CandidateHosts"))
            rc = hosts(in, e, term, c);
        else if (is_jsdl(e, "IndividualCPUCount"))
            rc = exact(in, e, term, MAX_PPN, &k->per_node);
        else if (is_jsdl(e, "TotalCPUCount"))
            rc = exact(in, e, term, (int64_t)MAX_NODES * MAX_PPN, &k->total_cpus);
        else if (is_jsdl(e, "TotalResourceCount"))
            rc = exact(in, e, term, MAX_NODES, &k->nodes);
    }
    return rc;
}

/* Nodes and processes per node from the counts given. */
static acc_err sizes(struct offer_interp *in, const xmlNode *n, const char *term,
                     struct acc_component *c, const struct counts *k)
{
    if (!k->nodes)
        return offer_bad(in, n,
                         "term '%s': jsdl:JobDefinition has no jsdl:Resources/"
                         "jsdl:TotalResourceCount: Accord needs the number of nodes to reserve "
                         "(jsdl:TotalResourceCount with one jsdl:Exact)",
                         term);
    c->nodes = k->nodes;
    c->ppn = k->per_node ? k->per_node : 1;
    if (!k->total_cpus)
        return ACC_OK;
    if (k->total_cpus % k->nodes)
        return offer_bad(in, n,
                         "term '%s': jsdl:TotalCPUCount %" PRId64
                         " does not divide evenly over jsdl:TotalResourceCount %" PRId64
                         " nodes: Accord runs the same number of processes on every node",
                         term, k->total_cpus, k->nodes);
    int64_t ppn = k->total_cpus / k->nodes;
    if (k->per_node && ppn != k->per_node)
        return offer_bad(in, n,
                         "term '%s': jsdl:TotalCPUCount %" PRId64
                         " is not jsdl:IndividualCPUCount %" PRId64
                         " times jsdl:TotalResourceCount %" PRId64,
                         term, k->total_cpus, k->per_node, k->nodes);
    if (ppn > MAX_PPN)
        return offer_bad(in, n,
                         "term '%s': jsdl:TotalCPUCount %" PRId64 " over %" PRId64
                         " nodes is more than %d processes per node",
                         term, k->total_cpus, k->nodes, MAX_PPN);
    c->ppn = ppn;
    return ACC_OK;
}

static acc_err job(struct offer_interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    struct counts k = {0, 0, 0};
    acc_err rc = ACC_OK;

    if (in->job_term)
        return offer_bad(in, n,
                         "term '%s': a second jsdl:JobDefinition; term '%s' has one already: "
                         "WSAG4J's vocabulary books one site, co:Component terms co-allocate",
                         term, in->job_term);
    in->job_term = term;
    if (!acc_name_valid(term, MAX_NAME))
        return offer_bad(in, n,
                         "component name '%.80s' is not valid: use 1 to %d letters, digits, '.', "
                         "'_' or '-'",
                         term, MAX_NAME);
    if (o->n_components == MAX_COMPONENTS)
        return offer_bad(in, n, "term '%s': more than %d components", term, MAX_COMPONENTS);
    struct acc_component *v = offer_push(o->components, &o->n_components, sizeof *v);
    if (!v)
        return offer_nomem(in);
    o->components = v;
    struct acc_component *c = &v[o->n_components - 1];
    c->kind = ACC_COMP_SIZED;
    c->ppn = 1;
    if (!(c->name = strdup(term)))
        return offer_nomem(in);

    const xmlNode *desc = offer_first_el(n); /* jsdl:JobDescription */
    for (xmlNode *e = offer_first_el(desc); e && !rc; e = offer_next_el(e)) {
        if (is_jsdl(e, "Application")) {
            for (xmlNode *a = offer_first_el(e); a && !rc; a = offer_next_el(a))
                if (is_posix(a, "POSIXApplication"))
                    rc = posix(in, a, term, c);
        } else if (is_jsdl(e, "Resources")) {
            rc = resources(in, e, term, c, &k);
        }
    }
    return rc ? rc : sizes(in, n, term, c, &k);
}

/* ------------------------------------------------------------- the time */

static acc_err wsag4j_time(struct offer_interp *in, const xmlNode *e, const char *term,
                           acc_time *out)
{
    struct acc_error why;
    char *s = NULL;
    acc_err rc = offer_text(in, e, term, false, &s);
    if (!rc && acc_time_parse(s, out, &why))
        rc = offer_bad(in, e, "term '%s': wsag4j:%s: %s", term, e->name, why.msg);
    free(s);
    return rc;
}

static acc_err time_constraint(struct offer_interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    int64_t minutes = 0;
    acc_err rc = ACC_OK;

    if (in->schedule_term)
        return offer_bad(in, n,
                         "term '%s': a second schedule (wsag4j:TimeConstraint); term '%s' has "
                         "one already",
                         term, in->schedule_term);
    in->schedule_term = term;
    for (xmlNode *e = offer_first_el(n); e && !rc; e = offer_next_el(e)) {
        if (is_wsag4j(e, "StartTime")) {
            rc = wsag4j_time(in, e, term, &o->earliest);
        } else if (is_wsag4j(e, "EndTime")) {
            rc = wsag4j_time(in, e, term, &o->deadline);
        } else if (is_wsag4j(e, "Duration")) {
            struct acc_error why;
            char *s = NULL;
            rc = offer_text(in, e, term, false, &s);
            if (!rc && acc_parse_i64(s, 1, MAX_MINUTES, &minutes, &why))
                rc = offer_bad(in, e, "term '%s': wsag4j:Duration (whole minutes): %s", term,
                               why.msg);
            free(s);
        }
    }
    if (rc)
        return rc;
    if (minutes) {
        o->duration = minutes * 60;
    } else if (o->earliest && o->deadline) {
        if (o->deadline <= o->earliest)
            return offer_window(in, n, term); /* says what is wrong with the window */
        o->duration = o->deadline - o->earliest;
    } else {
        return offer_bad(in, n,
                         "term '%s': wsag4j:TimeConstraint gives no wsag4j:Duration, nor both "
                         "wsag4j:StartTime and wsag4j:EndTime: Accord needs to know how long the "
                         "reservation lasts",
                         term);
    }
    return offer_window(in, n, term);
}

acc_err offer_wsag4j_term(struct offer_interp *in, const xmlNode *body, const char *term)
{
    return is_jsdl(body, "JobDefinition") ? job(in, body, term) : time_constraint(in, body, term);
}
