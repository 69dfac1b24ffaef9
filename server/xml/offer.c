/* SPDX-License-Identifier: Apache-2.0 */
/* offer.c - from a wsag:AgreementOffer to a struct acc_offer.
 *
 * By the time interpret() runs the document is well-formed, free of DTDs
 * and valid against the schemas, so element order and types are known.
 * What remains is meaning: one schedule, named and unique components, links
 * between two different known components, ranges and the time window.
 * Every message starts with the line and names the term.  Here: the
 * document, its context and its list of terms, and the links' ends;
 * offer_internal.h says where the rest is.
 */
#include "xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offer_internal.h"

#include "../../lib/common/utf8.h"
#include "../../lib/policy/policy.h"

#define MAX_INITIATOR 128     /* characters */
#define MAX_LINK_MBIT 1000000 /* the largest bandwidth an offer may ask for */

/* Printable: 1 to max characters of UTF-8, none acc_utf8_unprintable(); else
 * ACC_ERR_INVALID saying which (n: the element, what: its name). */
static acc_err printable(struct offer_interp *in, const xmlNode *n, const char *what, const char *s,
                         size_t max)
{
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; chars++) {
        uint32_t c;
        size_t len = acc_utf8_decode(p, &c);
        const char *why = len ? acc_utf8_unprintable(c) : "not UTF-8";
        if (why)
            return offer_bad(in, n,
                             "%s holds U+%04X at character %zu, %s; it must be 1 to %zu "
                             "printable characters",
                             what, len ? c : *p, chars + 1, why, max);
        p += len;
    }
    if (chars < 1 || chars > max)
        return offer_bad(in, n, "%s must be 1 to %zu printable characters", what, max);
    return ACC_OK;
}

/* A flexible or total request goes with components that all name their
 * site (the policy places one request), and no component takes the name of
 * one of its generated parts (NAME.1, NAME.2, ...). */
static acc_err requests(struct offer_interp *in, const xmlNode *terms_el)
{
    const struct acc_offer *o = in->o;
    const struct acc_component *req = NULL;
    for (size_t i = 0; i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if (c->kind == ACC_COMP_SIZED)
            continue;
        if (req)
            return offer_bad(in, terms_el,
                             "terms '%s' and '%s' are both flexible or total requests; an offer "
                             "has at most one",
                             req->name, c->name);
        req = c;
    }
    for (size_t i = 0; req && i < o->n_components; i++) {
        const struct acc_component *c = &o->components[i];
        if (c->kind != ACC_COMP_SIZED)
            continue;
        if (!c->site)
            return offer_bad(in, terms_el,
                             "component '%s' names no co:Site, but term '%s' is a %s request: "
                             "with one, every co:Component names its site",
                             c->name, req->name,
                             req->kind == ACC_COMP_FLEXIBLE ? "co:Flexible" : "co:Total");
        size_t len = strlen(req->name);
        if (req->kind == ACC_COMP_FLEXIBLE && strncmp(c->name, req->name, len) == 0 &&
            c->name[len] == '.' && c->name[len + 1] &&
            strspn(c->name + len + 1, "0123456789") == strlen(c->name + len + 1))
            return offer_bad(in, terms_el,
                             "component '%s' has the name of a part of the flexible request "
                             "'%s' (its parts are %s.1, %s.2, ...)",
                             c->name, req->name, req->name, req->name);
    }
    return ACC_OK;
}

static acc_err terms(struct offer_interp *in, const xmlNode *terms_el)
{
    const xmlNode *all = offer_first_el(terms_el);
    acc_err rc = ACC_OK;

    if (!offer_is_wsag(all, "All"))
        return offer_bad(in, terms_el, "wsag:Terms must hold one wsag:All");
    for (xmlNode *t = offer_first_el(all); t && !rc; t = offer_next_el(t)) {
        if (offer_is_wsag(t, "ServiceDescriptionTerm"))
            rc = offer_service_term(in, t);
        else if (offer_is_wsag(t, "GuaranteeTerm"))
            rc = offer_guarantee_term(in, t);
        else if (offer_is_wsag(t, "ExactlyOne") || offer_is_wsag(t, "OneOrMore") ||
                 offer_is_wsag(t, "All"))
            rc = offer_bad(
                in, t, "wsag:%s is not supported: put every term directly into the one wsag:All",
                t->name);
        else
            rc = offer_bad(in, t, "wsag:%s is not supported: use wsag:ServiceDescriptionTerm",
                           t->name);
    }
    if (rc)
        return rc;
    if (!in->schedule_term)
        return offer_bad(in, terms_el,
                         "the offer has no co:Schedule term (it needs one, with at least "
                         "a co:Duration; or a wsag4j:TimeConstraint)");
    if (in->o->n_components == 0)
        return offer_bad(in, terms_el,
                         "the offer has no co:Component term (nor a co:Flexible or co:Total "
                         "request, nor a jsdl:JobDefinition)");
    return requests(in, terms_el);
}

/* The bandwidth of a link given by the application's communication, from
 * the nodes of the components on its two sides. */
static acc_err size_link(struct offer_interp *in, struct acc_link_req *l, long line)
{
    const struct acc_component *a = &in->o->components[l->a], *b = &in->o->components[l->b];
    struct acc_error e;
    if (l->sizing == ACC_LINK_PER_PROCESSOR)
        l->computed = acc_bw_pair(a->nodes, b->nodes, l->ppbw);
    else
        l->computed = acc_bw_from_step(l->step_bytes, l->step_seconds);
    if (acc_bw_mbit(l->computed, MAX_LINK_MBIT, &l->bandwidth, &e))
        return acc_error_set(in->err, ACC_ERR_INVALID, "line %ld: link '%s': %s", line, l->name,
                             e.msg);
    return ACC_OK;
}

/* Turns the links' component names into indices. */
static acc_err resolve_links(struct offer_interp *in)
{
    struct acc_offer *o = in->o;

    for (size_t i = 0; i < o->n_links; i++) {
        struct acc_link_req *l = &o->links[i];
        struct offer_link_ends *le = &in->ends[i];
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
            if (o->components[j].kind != ACC_COMP_SIZED)
                return acc_error_set(in->err, ACC_ERR_INVALID,
                                     "line %ld: link '%s': '%.80s' is a flexible or total "
                                     "request, whose parts Accord chooses; a link joins two "
                                     "co:Component terms",
                                     le->line, l->name, ends[k]);
            idx[k] = j;
        }
        if (idx[0] == idx[1])
            return acc_error_set(in->err, ACC_ERR_INVALID,
                                 "line %ld: link '%s' joins component '%s' to itself", le->line,
                                 l->name, ends[0]);
        l->a = idx[0];
        l->b = idx[1];
        if (l->sizing != ACC_LINK_GIVEN) {
            acc_err rc = size_link(in, l, le->line);
            if (rc)
                return rc;
        }
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

static acc_err context(struct offer_interp *in, const xmlNode *ctx)
{
    struct acc_offer *o = in->o;
    acc_err rc = ACC_OK;

    for (xmlNode *c = offer_first_el(ctx); c && !rc; c = offer_next_el(c)) {
        if (offer_is_wsag(c, "AgreementInitiator")) {
            rc = offer_text(in, c, NULL, false, &o->initiator);
            if (!rc)
                rc = printable(in, c, "wsag:AgreementInitiator", o->initiator, MAX_INITIATOR);
        } else if (offer_is_wsag(c, "ServiceProvider")) {
            char *s = NULL;
            rc = offer_text(in, c, NULL, false, &s);
            if (!rc && strcmp(s, "AgreementResponder") != 0)
                rc = offer_bad(
                    in, c,
                    "wsag:ServiceProvider must be AgreementResponder: Accord provides the "
                    "service");
            free(s);
        } else if (offer_is_wsag(c, "ExpirationTime")) {
            rc = offer_time(in, c, NULL, &o->expiration);
        } else if (offer_is_wsag(c, "TemplateName")) {
            rc = offer_optional_text(in, c, &o->template_name);
        }
    }
    if (!rc && !o->initiator && !(o->initiator = strdup("anonymous")))
        rc = offer_nomem(in);
    return rc;
}

static acc_err interpret(const xmlNode *root, struct offer_interp *in)
{
    acc_err rc = ACC_OK;
    const xmlNode *terms_el = NULL;

    for (xmlNode *c = offer_first_el(root); c && !rc; c = offer_next_el(c)) {
        if (offer_is_wsag(c, "Name"))
            rc = offer_optional_text(in, c, &in->o->name);
        else if (offer_is_wsag(c, "Context"))
            rc = context(in, c);
        else if (offer_is_wsag(c, "Terms"))
            terms_el = c;
    }
    if (rc)
        return rc;
    if (!terms_el)
        return offer_bad(in, root, "the offer has no wsag:Terms");
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
    struct offer_interp in = {.o = out, .err = err};
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
    if (!offer_is_wsag(root, "AgreementOffer")) {
        char name[256];
        root_name(root, name, sizeof name);
        rc = acc_error_set(err, ACC_ERR_SCHEMA,
                           "line %ld: the document is %s; an offer is wsag:AgreementOffer in "
                           "namespace %s",
                           xmlGetLineNo(root), name, ACC_NS_WSAG);
        goto out;
    }
    /* A term in a vocabulary Accord does not accept gets a fault naming
     * it, before the schemas could answer with libxml2's wildcard message. */
    rc = offer_vocab_check(root, err);
    if (rc)
        goto out;
    rc = acc_xml_validate(doc, err);
    if (rc)
        goto out;
    /* Before anything is booked: what the agreement's signature would
     * refuse (its copy of the offer is signed). */
    rc = offer_namespaces(root, err);
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
