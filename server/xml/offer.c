/* offer.c - from a wsag:AgreementOffer to a struct acc_offer.
 *
 * By the time interpret() runs the document is well-formed, free of DTDs
 * and valid against the schemas, so element order and types are known.
 * What remains is meaning: one schedule, named and unique components, links
 * between two different known components, ranges and the time window.
 * Every message starts with the line and names the term.
 */
#include "xml.h"

#include <inttypes.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "xml_internal.h"

#define MAX_COMPONENTS 64
#define MAX_LINKS      256
#define MAX_ARGS       256
#define MAX_GUARANTEES 256
#define MAX_STRING     4096 /* bytes of any one string */
#define MAX_NAME       64   /* components, links, sites */
#define MAX_INITIATOR  128  /* characters */
#define MAX_NODES      1000000
#define MAX_PPN        4096
#define MAX_BANDWIDTH  1000000 /* Mbit/s */

/* The term name the agreement uses for its own allocation term. */
#define RESERVED_TERM "allocation"

struct term_seen {
    char *name;
    long line;
    bool component;
};

/* A link as written; its ends are resolved once every component is known. */
struct link_ends {
    char *between, *and_;
    long line;
};

struct interp {
    struct acc_offer *o;
    struct acc_error *err;
    struct term_seen *terms;
    size_t n_terms;
    struct link_ends *ends; /* parallel to o->links */
    const char *schedule_term, *launch_term, *negotiation_term;
};

/* ----------------------------------------------------------------- helpers */

static acc_err bad(struct interp *in, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static acc_err bad(struct interp *in, const xmlNode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_error_vset(in->err, ACC_ERR_INVALID, fmt, ap);
    va_end(ap);
    if (n)
        acc_error_prefix(in->err, "line %ld", xmlGetLineNo(n));
    return ACC_ERR_INVALID;
}

static acc_err nomem(struct interp *in)
{
    return acc_error_set(in->err, ACC_ERR_NOMEM, "out of memory");
}

static xmlNode *first_el(const xmlNode *n)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static xmlNode *next_el(const xmlNode *n)
{
    for (xmlNode *c = n->next; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static bool is_co(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_CO, name);
}

static bool is_wsag(const xmlNode *n, const char *name)
{
    return acc_xml_is(n, ACC_NS_WSAG, name);
}

/* The text content of n, trimmed unless keep_blanks, as a malloc'd string
 * of at most MAX_STRING bytes. */
static acc_err text_of(struct interp *in, const xmlNode *n, const char *term, bool keep_blanks,
                       char **out)
{
    xmlChar *x = xmlNodeGetContent(n);
    if (!x)
        return nomem(in);
    char *s = strdup((const char *)x);
    xmlFree(x);
    if (!s)
        return nomem(in);
    if (!keep_blanks)
        acc_strtrim(s);
    if (strlen(s) > MAX_STRING) {
        free(s);
        if (term)
            return bad(in, n, "term '%s': %s is longer than %d bytes", term, n->name, MAX_STRING);
        return bad(in, n, "%s is longer than %d bytes", n->name, MAX_STRING);
    }
    *out = s;
    return ACC_OK;
}

/* Like text_of(), but an empty text counts as absent. */
static acc_err optional_text(struct interp *in, const xmlNode *n, char **out)
{
    acc_err rc = text_of(in, n, NULL, false, out);
    if (!rc && !**out) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* An attribute as a malloc'd string; ns NULL for an unqualified one.
 * *out stays NULL when the attribute is absent. */
static acc_err attr_of(struct interp *in, const xmlNode *n, const char *ns, const char *name,
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
        return nomem(in);
    if (strlen(s) > MAX_STRING) {
        free(s);
        return bad(in, n, "the attribute %s is longer than %d bytes", name, MAX_STRING);
    }
    *out = s;
    return ACC_OK;
}

static acc_err number_of(struct interp *in, const xmlNode *n, const char *term, int64_t min,
                         int64_t max, int64_t *out)
{
    struct acc_error e;
    char *s = NULL;
    acc_err rc = text_of(in, n, term, false, &s);
    if (rc)
        return rc;
    if (acc_parse_i64(s, min, max, out, &e))
        rc = bad(in, n, "term '%s': co:%s: %s", term, n->name, e.msg);
    free(s);
    return rc;
}

static acc_err time_of(struct interp *in, const xmlNode *n, const char *term, acc_time *out)
{
    struct acc_error e;
    char *s = NULL;
    acc_err rc = text_of(in, n, term, false, &s);
    if (rc)
        return rc;
    if (acc_time_parse(s, out, &e)) {
        rc = term ? bad(in, n, "term '%s': co:%s: %s", term, n->name, e.msg)
                  : bad(in, n, "wsag:%s: %s", n->name, e.msg);
    }
    free(s);
    return rc;
}

/* Grows *v (of *n elements of size sz) by one zeroed element. */
static void *push(void *v, size_t *n, size_t sz)
{
    char *p = realloc(v, (*n + 1) * sz);
    if (!p)
        return NULL;
    memset(p + *n * sz, 0, sz);
    (*n)++;
    return p;
}

/* Printable: no control characters; 1 to max characters of UTF-8. */
static bool printable(const char *s, size_t max)
{
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return false;
        if ((*p & 0xc0) != 0x80)
            chars++;
    }
    return chars >= 1 && chars <= max;
}

/* Records a term's name; refuses a name used before. */
static acc_err term_name(struct interp *in, const xmlNode *n, const char *name, bool component)
{
    if (strcmp(name, RESERVED_TERM) == 0)
        return bad(in, n, "the term name '%s' is reserved for the agreement's allocation term",
                   name);
    for (size_t i = 0; i < in->n_terms; i++) {
        struct term_seen *t = &in->terms[i];
        if (strcmp(t->name, name) != 0)
            continue;
        if (component && t->component)
            return bad(in, n, "duplicate component name '%s' (also on line %ld)", name, t->line);
        return bad(in, n, "two terms are named '%s' (also on line %ld)", name, t->line);
    }
    struct term_seen *v = push(in->terms, &in->n_terms, sizeof *v);
    if (!v)
        return nomem(in);
    in->terms = v;
    v[in->n_terms - 1].line = xmlGetLineNo(n);
    v[in->n_terms - 1].component = component;
    v[in->n_terms - 1].name = strdup(name);
    return v[in->n_terms - 1].name ? ACC_OK : nomem(in);
}

static const char *name_rule = "use 1 to 64 letters, digits, '.', '_' or '-'";

/* ------------------------------------------------------------------ terms */

static acc_err schedule(struct interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;
    bool have_duration = false;

    if (in->schedule_term)
        return bad(in, n, "term '%s': a second co:Schedule; term '%s' has one already", term,
                   in->schedule_term);
    in->schedule_term = term;
    for (xmlNode *c = first_el(n); c && !rc; c = next_el(c)) {
        if (is_co(c, "EarliestStart")) {
            rc = time_of(in, c, term, &o->earliest);
        } else if (is_co(c, "Deadline")) {
            rc = time_of(in, c, term, &o->deadline);
        } else if (is_co(c, "Duration")) {
            struct acc_error e;
            char *s = NULL;
            rc = text_of(in, c, term, false, &s);
            if (!rc && acc_duration_parse(s, &o->duration, &e))
                rc = bad(in, c, "term '%s': co:Duration: %s", term, e.msg);
            else if (!rc && o->duration <= 0)
                rc = bad(in, c, "term '%s': duration must be positive, not %s", term, s);
            free(s);
            have_duration = true;
        }
    }
    if (rc)
        return rc;
    if (!have_duration)
        return bad(in, n, "term '%s': co:Schedule has no co:Duration", term);
    if (o->earliest && o->duration > ACC_TIME_MAX - o->earliest) {
        char a[ACC_TIME_STRLEN], d[ACC_DURATION_STRLEN];
        acc_time_format(o->earliest, a);
        acc_duration_format(o->duration, d);
        return bad(in, n, "term '%s': %s from %s would end after 9999-12-31T23:59:59Z", term, d, a);
    }
    if (o->earliest && o->deadline) {
        char a[ACC_TIME_STRLEN], b[ACC_TIME_STRLEN], d[ACC_DURATION_STRLEN], w[ACC_DURATION_STRLEN];
        acc_time_format(o->earliest, a);
        acc_time_format(o->deadline, b);
        if (o->deadline < o->earliest)
            return bad(in, n, "term '%s': the deadline %s is before the earliest start %s", term, b,
                       a);
        if (o->deadline == o->earliest)
            return bad(in, n,
                       "term '%s': the deadline %s equals the earliest start: the window is "
                       "empty",
                       term, b);
        if (o->deadline - o->earliest < o->duration) {
            acc_duration_format(o->duration, d);
            acc_duration_format(o->deadline - o->earliest, w);
            return bad(in, n, "term '%s': the duration %s is longer than the window %s to %s (%s)",
                       term, d, a, b, w);
        }
    }
    return ACC_OK;
}

static acc_err component(struct interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    acc_err rc;

    if (!acc_name_valid(term, MAX_NAME))
        return bad(in, n, "component name '%.80s' is not valid: %s", term, name_rule);
    if (o->n_components == MAX_COMPONENTS)
        return bad(in, n, "term '%s': more than %d components", term, MAX_COMPONENTS);
    struct acc_component *v = push(o->components, &o->n_components, sizeof *v);
    if (!v)
        return nomem(in);
    o->components = v;
    struct acc_component *c = &v[o->n_components - 1];
    c->ppn = 1;
    if (!(c->name = strdup(term)))
        return nomem(in);

    rc = ACC_OK;
    for (xmlNode *e = first_el(n); e && !rc; e = next_el(e)) {
        if (is_co(e, "Site")) {
            rc = text_of(in, e, term, false, &c->site);
            if (!rc && !acc_name_valid(c->site, MAX_NAME))
                rc = bad(in, e, "term '%s': site name '%.80s' is not valid: %s", term, c->site,
                         name_rule);
        } else if (is_co(e, "Nodes")) {
            rc = number_of(in, e, term, 1, MAX_NODES, &c->nodes);
        } else if (is_co(e, "ProcessesPerNode")) {
            rc = number_of(in, e, term, 1, MAX_PPN, &c->ppn);
        } else if (is_co(e, "Executable")) {
            struct acc_error why;
            rc = text_of(in, e, term, false, &c->executable);
            if (!rc && acc_executable_check(c->executable, &why))
                rc = bad(in, e, "term '%s': co:Executable %s", term, why.msg);
        } else if (is_co(e, "Argument")) {
            if (c->n_args == MAX_ARGS)
                return bad(in, e, "term '%s': more than %d arguments", term, MAX_ARGS);
            char **args = push(c->args, &c->n_args, sizeof *args);
            if (!args)
                return nomem(in);
            c->args = args;
            /* Arguments are passed as written, blanks included. */
            rc = text_of(in, e, term, true, &args[c->n_args - 1]);
        }
    }
    if (!rc && c->nodes < 1)
        rc = bad(in, n, "term '%s': co:Component has no co:Nodes", term);
    return rc;
}

static acc_err link(struct interp *in, const xmlNode *n, const char *term)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;

    if (!acc_name_valid(term, MAX_NAME))
        return bad(in, n, "link name '%.80s' is not valid: %s", term, name_rule);
    if (o->n_links == MAX_LINKS)
        return bad(in, n, "term '%s': more than %d links", term, MAX_LINKS);
    size_t n_ends = o->n_links;
    struct link_ends *ends = push(in->ends, &n_ends, sizeof *ends);
    if (!ends)
        return nomem(in);
    in->ends = ends;
    struct acc_link_req *v = push(o->links, &o->n_links, sizeof *v);
    if (!v)
        return nomem(in);
    o->links = v;
    struct acc_link_req *l = &v[o->n_links - 1];
    struct link_ends *le = &ends[o->n_links - 1];
    le->line = xmlGetLineNo(n);
    if (!(l->name = strdup(term)))
        return nomem(in);

    for (xmlNode *e = first_el(n); e && !rc; e = next_el(e)) {
        if (is_co(e, "Between")) {
            rc = text_of(in, e, term, false, &le->between);
        } else if (is_co(e, "And")) {
            rc = text_of(in, e, term, false, &le->and_);
        } else if (is_co(e, "Bandwidth")) {
            char *unit = NULL;
            rc = attr_of(in, e, NULL, "unit", &unit);
            if (rc)
                break;
            bool giga = unit && strcmp(unit, "Gbit/s") == 0;
            if (unit && !giga && strcmp(unit, "Mbit/s") != 0)
                rc = bad(in, e, "term '%s': unknown bandwidth unit '%.40s'", term, unit);
            else if (!giga)
                rc = number_of(in, e, term, 1, MAX_BANDWIDTH, &l->bandwidth);
            else if (!(rc = number_of(in, e, term, 1, INT64_MAX / 1000, &l->bandwidth)) &&
                     l->bandwidth > MAX_BANDWIDTH / 1000)
                rc =
                    bad(in, e, "term '%s': co:Bandwidth: %" PRId64 " Gbit/s is more than %d Mbit/s",
                        term, l->bandwidth, MAX_BANDWIDTH);
            if (!rc && giga)
                l->bandwidth *= 1000;
            free(unit);
        }
    }
    if (!rc && (!le->between || !le->and_ || l->bandwidth < 1))
        rc = bad(in, n, "term '%s': co:Link needs co:Between, co:And and co:Bandwidth", term);
    return rc;
}

static acc_err launch(struct interp *in, const xmlNode *n, const char *term)
{
    char *style = NULL;

    if (in->launch_term)
        return bad(in, n, "term '%s': a second co:Launch; term '%s' has one already", term,
                   in->launch_term);
    in->launch_term = term;
    acc_err rc = attr_of(in, n, NULL, "style", &style);
    if (!rc && (!style || !acc_launch_parse(style, &in->o->launch)))
        rc = bad(in, n, "term '%s': unknown launch style '%.40s'", term, style ? style : "");
    free(style);
    return rc;
}

static acc_err negotiation(struct interp *in, const xmlNode *n, const char *term)
{
    if (in->negotiation_term)
        return bad(in, n, "term '%s': a second co:Negotiation; term '%s' has one already", term,
                   in->negotiation_term);
    in->negotiation_term = term;
    for (xmlNode *e = first_el(n); e; e = next_el(e)) {
        if (!is_co(e, "Strategy"))
            continue;
        char *s = NULL;
        acc_err rc = text_of(in, e, term, false, &s);
        if (!rc && !acc_strategy_parse(s, &in->o->strategy))
            rc = bad(in, e, "term '%s': unknown strategy '%.40s'", term, s);
        free(s);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

/* One wsag:ServiceDescriptionTerm: its wsag:Name and the one co: term. */
static acc_err service_term(struct interp *in, const xmlNode *n)
{
    static const struct {
        const char *name;
        acc_err (*fn)(struct interp *in, const xmlNode *n, const char *term);
    } kinds[] = {
        {"Schedule", schedule}, {"Component", component},     {"Link", link},
        {"Launch", launch},     {"Negotiation", negotiation},
    };
    char *name = NULL;
    acc_err rc = attr_of(in, n, ACC_NS_WSAG, "Name", &name);
    if (rc)
        return rc;
    if (!name)
        return bad(in, n, "a wsag:ServiceDescriptionTerm has no wsag:Name");

    xmlNode *body = first_el(n);
    if (!body || !body->ns || strcmp((const char *)body->ns->href, ACC_NS_CO) != 0 ||
        next_el(body)) {
        rc = bad(in, n, "term '%s': a wsag:ServiceDescriptionTerm holds exactly one co: element",
                 name);
        goto out;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp((const char *)body->name, kinds[i].name) != 0)
            continue;
        rc = term_name(in, n, name, kinds[i].fn == component);
        if (!rc)
            /* The recorded copy outlives this function: messages refer to it. */
            rc = kinds[i].fn(in, body, in->terms[in->n_terms - 1].name);
        goto out;
    }
    rc = bad(in, body, "term '%s': co:%s does not belong in an offer", name, body->name);
out:
    free(name);
    return rc;
}

static acc_err guarantee_term(struct interp *in, const xmlNode *n)
{
    struct acc_offer *o = in->o;
    char *name = NULL;
    acc_err rc = attr_of(in, n, ACC_NS_WSAG, "Name", &name);
    if (rc)
        return rc;
    if (!name)
        return bad(in, n, "a wsag:GuaranteeTerm has no wsag:Name");
    if (o->n_guarantees == MAX_GUARANTEES) {
        rc = bad(in, n, "term '%s': more than %d guarantee terms", name, MAX_GUARANTEES);
        goto out;
    }
    rc = term_name(in, n, name, false);
    if (rc)
        goto out;
    char **v = push(o->guarantees, &o->n_guarantees, sizeof *v);
    if (!v) {
        rc = nomem(in);
        goto out;
    }
    o->guarantees = v;
    v[o->n_guarantees - 1] = name;
    name = NULL;
out:
    free(name);
    return rc;
}

static acc_err terms(struct interp *in, const xmlNode *terms_el)
{
    const xmlNode *all = first_el(terms_el);
    acc_err rc = ACC_OK;

    if (!is_wsag(all, "All"))
        return bad(in, terms_el, "wsag:Terms must hold one wsag:All");
    for (xmlNode *t = first_el(all); t && !rc; t = next_el(t)) {
        if (is_wsag(t, "ServiceDescriptionTerm"))
            rc = service_term(in, t);
        else if (is_wsag(t, "GuaranteeTerm"))
            rc = guarantee_term(in, t);
        else if (is_wsag(t, "ExactlyOne") || is_wsag(t, "OneOrMore") || is_wsag(t, "All"))
            rc = bad(in, t,
                     "wsag:%s is not supported: put every term directly into the one wsag:All",
                     t->name);
        else
            rc = bad(in, t, "wsag:%s is not supported: use wsag:ServiceDescriptionTerm", t->name);
    }
    if (rc)
        return rc;
    if (!in->schedule_term)
        return bad(in, terms_el,
                   "the offer has no co:Schedule term (it needs one, with at least "
                   "a co:Duration)");
    if (in->o->n_components == 0)
        return bad(in, terms_el, "the offer has no co:Component term");
    return ACC_OK;
}

/* Turns the links' component names into indices. */
static acc_err resolve_links(struct interp *in)
{
    struct acc_offer *o = in->o;

    for (size_t i = 0; i < o->n_links; i++) {
        struct acc_link_req *l = &o->links[i];
        struct link_ends *le = &in->ends[i];
        const char *ends[2] = {le->between, le->and_};
        size_t idx[2];
        for (int k = 0; k < 2; k++) {
            size_t j = 0;
            while (j < o->n_components && strcmp(o->components[j].name, ends[k]) != 0)
                j++;
            if (j == o->n_components) {
                acc_error_set(in->err, ACC_ERR_INVALID,
                              "line %ld: link '%s': there is no component named '%.80s'", le->line,
                              l->name, ends[k]);
                return ACC_ERR_INVALID;
            }
            idx[k] = j;
        }
        if (idx[0] == idx[1])
            return acc_error_set(in->err, ACC_ERR_INVALID,
                                 "line %ld: link '%s' joins component '%s' to itself", le->line,
                                 l->name, ends[0]);
        l->a = idx[0];
        l->b = idx[1];
        for (size_t j = 0; j < i; j++) {
            const struct acc_link_req *p = &o->links[j];
            if ((p->a == l->a && p->b == l->b) || (p->a == l->b && p->b == l->a))
                return acc_error_set(in->err, ACC_ERR_INVALID,
                                     "line %ld: links '%s' and '%s' both join '%s' and '%s'",
                                     le->line, p->name, l->name, o->components[l->a].name,
                                     o->components[l->b].name);
        }
    }
    return ACC_OK;
}

static acc_err context(struct interp *in, const xmlNode *ctx)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;

    for (xmlNode *c = first_el(ctx); c && !rc; c = next_el(c)) {
        if (is_wsag(c, "AgreementInitiator")) {
            rc = text_of(in, c, NULL, false, &o->initiator);
            if (!rc && !printable(o->initiator, MAX_INITIATOR))
                rc = bad(in, c, "wsag:AgreementInitiator must be 1 to %d printable characters",
                         MAX_INITIATOR);
        } else if (is_wsag(c, "ServiceProvider")) {
            char *s = NULL;
            rc = text_of(in, c, NULL, false, &s);
            if (!rc && strcmp(s, "AgreementResponder") != 0)
                rc = bad(in, c,
                         "wsag:ServiceProvider must be AgreementResponder: Accord provides the "
                         "service");
            free(s);
        } else if (is_wsag(c, "ExpirationTime")) {
            rc = time_of(in, c, NULL, &o->expiration);
        } else if (is_wsag(c, "TemplateName")) {
            rc = optional_text(in, c, &o->template_name);
        }
    }
    if (!rc && !o->initiator && !(o->initiator = strdup("anonymous")))
        rc = nomem(in);
    return rc;
}

static acc_err interpret(const xmlNode *root, struct interp *in)
{
    acc_err rc = ACC_OK;
    const xmlNode *terms_el = NULL;

    for (xmlNode *c = first_el(root); c && !rc; c = next_el(c)) {
        if (is_wsag(c, "Name"))
            rc = optional_text(in, c, &in->o->name);
        else if (is_wsag(c, "Context"))
            rc = context(in, c);
        else if (is_wsag(c, "Terms"))
            terms_el = c;
    }
    if (rc)
        return rc;
    if (!terms_el)
        return bad(in, root, "the offer has no wsag:Terms");
    rc = terms(in, terms_el);
    if (!rc)
        rc = resolve_links(in);
    return rc;
}

/* ------------------------------------------------------------------ entry */

static void root_name(const xmlNode *n, char *out, size_t size)
{
    const char *ns = n->ns ? (const char *)n->ns->href : NULL;
    if (ns && strcmp(ns, ACC_NS_WSAG) == 0)
        snprintf(out, size, "wsag:%.64s", n->name);
    else if (ns && strcmp(ns, ACC_NS_CO) == 0)
        snprintf(out, size, "co:%.64s", n->name);
    else if (ns)
        snprintf(out, size, "{%.128s}%.64s", ns, n->name);
    else
        snprintf(out, size, "%.64s", n->name);
}

acc_err acc_xml_parse_offer(const char *data, size_t len, const struct acc_xml_limits *lim,
                            struct acc_offer *out, struct acc_error *err)
{
    static const struct acc_xml_limits defaults = ACC_XML_LIMITS_DEFAULT;
    struct interp in = {.o = out, .err = err};
    xmlDocPtr doc = NULL;
    acc_err rc;

    /* A limit left at 0 takes its default rather than refusing everything. */
    struct acc_xml_limits l = defaults;
    if (lim && lim->max_bytes)
        l.max_bytes = lim->max_bytes;
    if (lim && lim->max_depth)
        l.max_depth = lim->max_depth;
    if (lim && lim->max_elements)
        l.max_elements = lim->max_elements;
    if (lim && lim->max_attributes)
        l.max_attributes = lim->max_attributes;
    if (lim && lim->max_total_attributes)
        l.max_total_attributes = lim->max_total_attributes;

    memset(out, 0, sizeof *out);
    if (!data)
        return acc_error_set(err, ACC_ERR_MALFORMED, "line 1: the document is empty");
    rc = acc_xml_read(data, len, &l, &doc, err);
    if (rc)
        return rc;

    xmlNode *root = xmlDocGetRootElement(doc);
    if (!is_wsag(root, "AgreementOffer")) {
        char name[256];
        root_name(root, name, sizeof name);
        rc = acc_error_set(err, ACC_ERR_SCHEMA,
                           "line %ld: the document is %s; an offer is wsag:AgreementOffer in "
                           "namespace %s",
                           xmlGetLineNo(root), name, ACC_NS_WSAG);
        goto out;
    }
    rc = acc_xml_validate(doc, err);
    if (rc)
        goto out;
    rc = interpret(root, &in);
out:
    for (size_t i = 0; i < in.n_terms; i++)
        free(in.terms[i].name);
    free(in.terms);
    for (size_t i = 0; in.ends && i < out->n_links; i++) {
        free(in.ends[i].between);
        free(in.ends[i].and_);
    }
    free(in.ends);
    if (rc)
        acc_offer_release(out);
    xmlFreeDoc(doc);
    return rc;
}
