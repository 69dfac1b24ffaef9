/* SPDX-License-Identifier: Apache-2.0 */
/* offer_terms.c - the terms of an offer: a wsag:GuaranteeTerm, or a
 * wsag:ServiceDescriptionTerm with its one co: element.  What is checked
 * here is each term's meaning: one schedule and its time window, named and
 * unique components and links, ranges. */
#include "offer_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/policy/policy.h"

#define MAX_LINKS      256
#define MAX_GUARANTEES 256
#define MAX_BANDWIDTH  1000000 /* Mbit/s */

/* The term name the agreement uses for its own allocation term. */
#define RESERVED_TERM "allocation"

/* Records a term's name; refuses a name used before. */
static acc_err term_name(struct offer_interp *in, const xmlNode *n, const char *name,
                         bool component)
{
    if (strcmp(name, RESERVED_TERM) == 0)
        return offer_bad(
            in, n, "the term name '%s' is reserved for the agreement's allocation term", name);
    for (size_t i = 0; i < in->n_terms; i++) {
        struct offer_term_seen *t = &in->terms[i];
        if (strcmp(t->name, name) != 0)
            continue;
        if (component && t->component)
            return offer_bad(in, n, "duplicate component name '%s' (also on line %ld)", name,
                             t->line);
        return offer_bad(in, n, "two terms are named '%s' (also on line %ld)", name, t->line);
    }
    struct offer_term_seen *v = offer_push(in->terms, &in->n_terms, sizeof *v);
    if (!v)
        return offer_nomem(in);
    in->terms = v;
    v[in->n_terms - 1].line = xmlGetLineNo(n);
    v[in->n_terms - 1].component = component;
    v[in->n_terms - 1].name = strdup(name);
    return v[in->n_terms - 1].name ? ACC_OK : offer_nomem(in);
}

static const char *name_rule = "use 1 to 64 letters, digits, '.', '_' or '-'";

/* ------------------------------------------------------------------ terms */

static acc_err schedule(struct offer_interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;
    bool have_duration = false;

    if (in->schedule_term)
        return offer_bad(in, n, "term '%s': a second co:Schedule; term '%s' has one already", term,
                         in->schedule_term);
    in->schedule_term = term;
    for (xmlNode *c = offer_first_el(n); c && !rc; c = offer_next_el(c)) {
        if (offer_is_co(c, "EarliestStart")) {
            rc = offer_time(in, c, term, &o->earliest);
        } else if (offer_is_co(c, "Deadline")) {
            rc = offer_time(in, c, term, &o->deadline);
        } else if (offer_is_co(c, "Duration")) {
            struct acc_error e;
            char *s = NULL;
            rc = offer_text(in, c, term, false, &s);
            if (!rc && acc_duration_parse(s, &o->duration, &e))
                rc = offer_bad(in, c, "term '%s': co:Duration: %s", term, e.msg);
            else if (!rc && o->duration <= 0)
                rc = offer_bad(in, c, "term '%s': duration must be positive, not %s", term, s);
            free(s);
            have_duration = true;
        }
    }
    if (rc)
        return rc;
    if (!have_duration)
        return offer_bad(in, n, "term '%s': co:Schedule has no co:Duration", term);
    return offer_window(in, n, term);
}

acc_err offer_window(struct offer_interp *in, const xmlNode *n, const char *term)
{
    const struct acc_offer *o = in->o;
    if (o->earliest && o->duration > ACC_TIME_MAX - o->earliest) {
        char a[ACC_TIME_STRLEN], d[ACC_DURATION_STRLEN];
        acc_time_format(o->earliest, a);
        acc_duration_format(o->duration, d);
        return offer_bad(in, n, "term '%s': %s from %s would end after 9999-12-31T23:59:59Z", term,
                         d, a);
    }
    if (o->earliest && o->deadline) {
        char a[ACC_TIME_STRLEN], b[ACC_TIME_STRLEN], d[ACC_DURATION_STRLEN], w[ACC_DURATION_STRLEN];
        acc_time_format(o->earliest, a);
        acc_time_format(o->deadline, b);
        if (o->deadline < o->earliest)
            return offer_bad(in, n, "term '%s': the deadline %s is before the earliest start %s",
                             term, b, a);
        if (o->deadline == o->earliest)
            return offer_bad(in, n,
                             "term '%s': the deadline %s equals the earliest start: the window is "
                             "empty",
                             term, b);
        if (o->deadline - o->earliest < o->duration) {
            acc_duration_format(o->duration, d);
            acc_duration_format(o->deadline - o->earliest, w);
            return offer_bad(in, n,
                             "term '%s': the duration %s is longer than the window %s to %s (%s)",
                             term, d, a, b, w);
        }
    }
    return ACC_OK;
}

/* The bounds of a flexible request make sense together and allow a split. */
static acc_err flexible_bounds(struct offer_interp *in, const xmlNode *n, const char *term,
                               const struct acc_component *c)
{
    if (c->min_nodes > c->nodes)
        return offer_bad(in, n,
                         "term '%s': co:MinNodes %" PRId64 " is more than co:TotalNodes %" PRId64,
                         term, c->min_nodes, c->nodes);
    if (c->max_nodes && c->min_nodes > c->max_nodes)
        return offer_bad(in, n,
                         "term '%s': co:MinNodes %" PRId64 " is more than co:MaxNodes %" PRId64,
                         term, c->min_nodes, c->max_nodes);
    int64_t parts = c->max_parts ? (int64_t)c->max_parts : ACC_POLICY_MAX_PARTS;
    if (c->max_nodes && c->max_nodes * parts < c->nodes)
        return offer_bad(in, n,
                         "term '%s': %" PRId64 " parts of at most %" PRId64
                         " nodes cannot hold co:TotalNodes %" PRId64,
                         term, parts, c->max_nodes, c->nodes);
    return ACC_OK;
}

/* co:Component (SIZED), co:Flexible and co:Total: the same fields, the
 * schema says which each has. */
acc_err offer_executable(struct offer_interp *in, const xmlNode *e, const char *term,
                         const char *what, struct acc_component *c)
{
    struct acc_error why;
    acc_err rc = offer_text(in, e, term, false, &c->executable);
    if (!rc && acc_executable_check(c->executable, &why))
        rc = offer_bad(in, e, "term '%s': %s %s", term, what, why.msg);
    return rc;
}

acc_err offer_argument(struct offer_interp *in, const xmlNode *e, const char *term,
                       struct acc_component *c)
{
    if (c->n_args == MAX_ARGS)
        return offer_bad(in, e, "term '%s': more than %d arguments", term, MAX_ARGS);
    char **args = offer_push(c->args, &c->n_args, sizeof *args);
    if (!args)
        return offer_nomem(in);
    c->args = args;
    /* Arguments are passed as written, blanks included. */
    return offer_text(in, e, term, true, &args[c->n_args - 1]);
}

static acc_err comp_term(struct offer_interp *in, const xmlNode *n, const char *term,
                         enum acc_comp_kind kind)
{
    struct acc_offer *o = in->o;
    acc_err rc;
    /* A flexible request's parts are named TERM.1 .. TERM.64. */
    size_t name_max = kind == ACC_COMP_FLEXIBLE ? MAX_NAME - 3 : MAX_NAME;

    if (!acc_name_valid(term, name_max))
        return offer_bad(in, n,
                         "component name '%.80s' is not valid: use 1 to %zu letters, "
                         "digits, '.', '_' or '-'",
                         term, name_max);
    if (o->n_components == MAX_COMPONENTS)
        return offer_bad(in, n, "term '%s': more than %d components", term, MAX_COMPONENTS);
    struct acc_component *v = offer_push(o->components, &o->n_components, sizeof *v);
    if (!v)
        return offer_nomem(in);
    o->components = v;
    struct acc_component *c = &v[o->n_components - 1];
    c->ppn = 1;
    c->kind = kind;
    if (!(c->name = strdup(term)))
        return offer_nomem(in);

    rc = ACC_OK;
    for (xmlNode *e = offer_first_el(n); e && !rc; e = offer_next_el(e)) {
        if (offer_is_co(e, "Site")) {
            rc = offer_text(in, e, term, false, &c->site);
            if (!rc && !acc_name_valid(c->site, MAX_NAME))
                rc = offer_bad(in, e, "term '%s': site name '%.80s' is not valid: %s", term,
                               c->site, name_rule);
        } else if (offer_is_co(e, "Nodes") || offer_is_co(e, "TotalNodes")) {
            rc = offer_number(in, e, term, 1, MAX_NODES, &c->nodes);
        } else if (offer_is_co(e, "MinNodes")) {
            rc = offer_number(in, e, term, 1, MAX_NODES, &c->min_nodes);
        } else if (offer_is_co(e, "MaxNodes")) {
            rc = offer_number(in, e, term, 1, MAX_NODES, &c->max_nodes);
        } else if (offer_is_co(e, "MaxComponents")) {
            int64_t k = 0;
            rc = offer_number(in, e, term, 1, ACC_POLICY_MAX_PARTS, &k);
            c->max_parts = (size_t)k;
        } else if (offer_is_co(e, "PerProcessorBandwidth")) {
            rc = offer_decimal(in, e, term, MAX_BANDWIDTH, &c->ppbw);
        } else if (offer_is_co(e, "ProcessesPerNode")) {
            rc = offer_number(in, e, term, 1, MAX_PPN, &c->ppn);
        } else if (offer_is_co(e, "Executable")) {
            rc = offer_executable(in, e, term, "co:Executable", c);
        } else if (offer_is_co(e, "Argument")) {
            rc = offer_argument(in, e, term, c);
        }
    }
    if (!rc && c->nodes < 1)
        rc = offer_bad(in, n, "term '%s': co:%s has no co:%s", term, n->name,
                       kind == ACC_COMP_SIZED ? "Nodes" : "TotalNodes");
    if (!rc && kind == ACC_COMP_FLEXIBLE)
        rc = flexible_bounds(in, n, term, c);
    return rc;
}

static acc_err component(struct offer_interp *in, const xmlNode *n, const char *term)
{
    return comp_term(in, n, term, ACC_COMP_SIZED);
}

static acc_err flexible(struct offer_interp *in, const xmlNode *n, const char *term)
{
    return comp_term(in, n, term, ACC_COMP_FLEXIBLE);
}

static acc_err total(struct offer_interp *in, const xmlNode *n, const char *term)
{
    return comp_term(in, n, term, ACC_COMP_TOTAL);
}

static acc_err link(struct offer_interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;

    if (!acc_name_valid(term, MAX_NAME))
        return offer_bad(in, n, "link name '%.80s' is not valid: %s", term, name_rule);
    if (o->n_links == MAX_LINKS)
        return offer_bad(in, n, "term '%s': more than %d links", term, MAX_LINKS);
    size_t n_ends = o->n_links;
    struct offer_link_ends *ends = offer_push(in->ends, &n_ends, sizeof *ends);
    if (!ends)
        return offer_nomem(in);
    in->ends = ends;
    struct acc_link_req *v = offer_push(o->links, &o->n_links, sizeof *v);
    if (!v)
        return offer_nomem(in);
    o->links = v;
    struct acc_link_req *l = &v[o->n_links - 1];
    struct offer_link_ends *le = &ends[o->n_links - 1];
    le->line = xmlGetLineNo(n);
    if (!(l->name = strdup(term)))
        return offer_nomem(in);
    int given = 0;

    for (xmlNode *e = offer_first_el(n); e && !rc; e = offer_next_el(e)) {
        if (offer_is_co(e, "Between")) {
            rc = offer_text(in, e, term, false, &le->between);
        } else if (offer_is_co(e, "And")) {
            rc = offer_text(in, e, term, false, &le->and_);
        } else if (offer_is_co(e, "Bandwidth")) {
            char *unit = NULL;
            rc = offer_attr(in, e, NULL, "unit", &unit);
            if (rc)
                break;
            bool giga = unit && strcmp(unit, "Gbit/s") == 0;
            if (unit && !giga && strcmp(unit, "Mbit/s") != 0)
                rc = offer_bad(in, e, "term '%s': unknown bandwidth unit '%.40s'", term, unit);
            else if (!giga)
                rc = offer_number(in, e, term, 1, MAX_BANDWIDTH, &l->bandwidth);
            else if (!(rc = offer_number(in, e, term, 1, INT64_MAX / 1000, &l->bandwidth)) &&
                     l->bandwidth > MAX_BANDWIDTH / 1000)
                rc = offer_bad(in, e,
                               "term '%s': co:Bandwidth: %" PRId64 " Gbit/s is more than %d Mbit/s",
                               term, l->bandwidth, MAX_BANDWIDTH);
            if (!rc && giga)
                l->bandwidth *= 1000;
            free(unit);
            given++;
        } else if (offer_is_co(e, "PerProcessorBandwidth")) {
            l->sizing = ACC_LINK_PER_PROCESSOR;
            rc = offer_decimal(in, e, term, MAX_BANDWIDTH, &l->ppbw);
            given++;
        } else if (offer_is_co(e, "BytesPerStep")) {
            l->sizing = ACC_LINK_PER_STEP;
            rc = offer_decimal(in, e, term, 1e15, &l->step_bytes);
            given++;
        } else if (offer_is_co(e, "StepSeconds")) {
            rc = offer_decimal(in, e, term, 1e9, &l->step_seconds);
        }
    }
    if (!rc && given > 1)
        rc = offer_bad(in, n,
                       "term '%s': co:Link gives its bandwidth twice; give one of co:Bandwidth, "
                       "co:PerProcessorBandwidth, or co:BytesPerStep with co:StepSeconds",
                       term);
    if (!rc && l->sizing == ACC_LINK_PER_STEP && !(l->step_seconds > 0))
        rc = offer_bad(in, n, "term '%s': co:BytesPerStep needs co:StepSeconds", term);
    if (!rc && l->sizing != ACC_LINK_PER_STEP && l->step_seconds > 0)
        rc = offer_bad(in, n, "term '%s': co:StepSeconds needs co:BytesPerStep", term);
    if (!rc && (!le->between || !le->and_ || given == 0))
        rc = offer_bad(in, n,
                       "term '%s': co:Link needs co:Between, co:And and co:Bandwidth (or the "
                       "application's co:PerProcessorBandwidth, or co:BytesPerStep with "
                       "co:StepSeconds)",
                       term);
    return rc;
}

static acc_err launch(struct offer_interp *in, const xmlNode *n, const char *term)
{
    char *style = NULL;

    if (in->launch_term)
        return offer_bad(in, n, "term '%s': a second co:Launch; term '%s' has one already", term,
                         in->launch_term);
    in->launch_term = term;
    acc_err rc = offer_attr(in, n, NULL, "style", &style);
    if (!rc && (!style || !acc_launch_parse(style, &in->o->launch)))
        rc = offer_bad(in, n, "term '%s': unknown launch style '%.40s'", term, style ? style : "");
    free(style);
    return rc;
}

static acc_err negotiation(struct offer_interp *in, const xmlNode *n, const char *term)
{
    if (in->negotiation_term)
        return offer_bad(in, n, "term '%s': a second co:Negotiation; term '%s' has one already",
                         term, in->negotiation_term);
    in->negotiation_term = term;
    for (xmlNode *e = offer_first_el(n); e; e = offer_next_el(e)) {
        if (offer_is_co(e, "Policy")) {
            char *p = NULL;
            struct acc_policy_opts po;
            acc_policy_opts_init(&po, ACC_POLICY_EARLIEST);
            acc_err rc = offer_text(in, e, term, false, &p);
            if (!rc && !acc_policy_parse(p, &po))
                rc = offer_bad(in, e,
                               "term '%s': unknown placement policy '%.40s' (policies: earliest, "
                               "worst-fit, worst-fit-distinct, fcm, fcm-K, ca, single, la, mig, "
                               "migration, initial, a1, b1, b2, b3, b4)",
                               term, p);
            if (rc) {
                free(p);
                return rc;
            }
            free(in->o->policy);
            in->o->policy = p;
            continue;
        }
        if (!offer_is_co(e, "Strategy"))
            continue;
        char *s = NULL;
        acc_err rc = offer_text(in, e, term, false, &s);
        if (!rc && !acc_strategy_parse(s, &in->o->strategy))
            rc = offer_bad(in, e, "term '%s': unknown strategy '%.40s'", term, s);
        free(s);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

/* One wsag:ServiceDescriptionTerm: its wsag:Name and the one co: term. */
acc_err offer_service_term(struct offer_interp *in, const xmlNode *n)
{
    static const struct {
        const char *name;
        acc_err (*fn)(struct offer_interp *in, const xmlNode *n, const char *term);
    } kinds[] = {
        {"Schedule", schedule},
        {"Component", component},
        {"Flexible", flexible},
        {"Total", total},
        {"Link", link},
        {"Launch", launch},
        {"Negotiation", negotiation},
    };
    char *name = NULL;
    acc_err rc = offer_attr(in, n, ACC_NS_WSAG, "Name", &name);
    if (rc)
        return rc;
    if (!name)
        return offer_bad(in, n, "a wsag:ServiceDescriptionTerm has no wsag:Name");

    xmlNode *body = offer_first_el(n);
    if (body && !offer_next_el(body) && offer_wsag4j_is(body)) {
        rc = term_name(in, n, name, acc_xml_is(body, ACC_NS_JSDL, "JobDefinition"));
        if (!rc)
            rc = offer_wsag4j_term(in, body, in->terms[in->n_terms - 1].name);
        goto out;
    }
    if (!body || !body->ns || strcmp((const char *)body->ns->href, ACC_NS_CO) != 0 ||
        offer_next_el(body)) {
        rc = offer_bad(
            in, n, "term '%s': a wsag:ServiceDescriptionTerm holds exactly one co: element", name);
        goto out;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp((const char *)body->name, kinds[i].name) != 0)
            continue;
        rc = term_name(in, n, name,
                       kinds[i].fn == component || kinds[i].fn == flexible || kinds[i].fn == total);
        if (!rc)
            /* The recorded copy outlives this function: messages refer to it. */
            rc = kinds[i].fn(in, body, in->terms[in->n_terms - 1].name);
        goto out;
    }
    rc = offer_bad(in, body, "term '%s': co:%s does not belong in an offer", name, body->name);
out:
    free(name);
    return rc;
}

acc_err offer_guarantee_term(struct offer_interp *in, const xmlNode *n)
{
    struct acc_offer *o = in->o;
    char *name = NULL;
    acc_err rc = offer_attr(in, n, ACC_NS_WSAG, "Name", &name);
    if (rc)
        return rc;
    if (!name)
        return offer_bad(in, n, "a wsag:GuaranteeTerm has no wsag:Name");
    if (o->n_guarantees == MAX_GUARANTEES) {
        rc = offer_bad(in, n, "term '%s': more than %d guarantee terms", name, MAX_GUARANTEES);
        goto out;
    }
    rc = term_name(in, n, name, false);
    if (rc)
        goto out;
    char **v = offer_push(o->guarantees, &o->n_guarantees, sizeof *v);
    if (!v) {
        rc = offer_nomem(in);
        goto out;
    }
    o->guarantees = v;
    v[o->n_guarantees - 1] = name;
    name = NULL;
out:
    free(name);
    return rc;
}
