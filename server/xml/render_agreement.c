/* SPDX-License-Identifier: Apache-2.0 */
/* render_agreement.c - wsag:Agreement (the stored offer copied through the
 * writer, with the allocation term added), co:AgreementStatus and co:Job.
 * Every shape here is declared in schema/coalloc.xsd and shown in
 * docs/documents.md. */
#include "xml.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "xml_internal.h"

/* ------------------------------------------------------- copying the offer */

/* Copies elements of the stored offer through the writer.  wsag and co keep
 * their usual prefixes; any other namespace gets a prefix of its own
 * (its original one where that is free) declared on each element that
 * uses it, so that no default namespace is ever in scope. */
struct ns_prefix {
    const xmlChar *href;
    char prefix[32];
    unsigned scope; /* depth of the element that declared it; 0: not in scope */
};

struct copier {
    struct acc_xml_writer *w;
    struct ns_prefix *map;
    size_t n;
    unsigned depth; /* of the element being copied */
};

/* The prefix for namespace ns (NULL for none).  For a foreign namespace,
 * *href is set when the current element has to declare it: no ancestor
 * in the copy did. */
static const char *prefix_for(struct copier *c, const xmlNs *ns, const char **href)
{
    *href = NULL;
    if (!ns || !ns->href)
        return NULL;
    const char *h = (const char *)ns->href;
    if (strcmp(h, ACC_NS_WSAG) == 0)
        return "wsag";
    if (strcmp(h, ACC_NS_CO) == 0)
        return "co";
    if (strcmp(h, (const char *)XML_XML_NAMESPACE) == 0)
        return "xml";

    struct ns_prefix *p = NULL;
    for (size_t i = 0; i < c->n && !p; i++)
        if (xmlStrEqual(c->map[i].href, ns->href))
            p = &c->map[i];
    if (!p) {
        struct ns_prefix *v = realloc(c->map, (c->n + 1) * sizeof *v);
        if (!v) {
            c->w->failed = true;
            return NULL;
        }
        c->map = v;
        p = &v[c->n];
        p->href = ns->href;
        p->scope = 0;
        const char *want = (const char *)ns->prefix;
        bool ok = want && strlen(want) < sizeof p->prefix && strcmp(want, "wsag") != 0 &&
                  strcmp(want, "co") != 0 && strncmp(want, "xml", 3) != 0;
        for (size_t i = 0; ok && i < c->n; i++)
            if (strcmp(c->map[i].prefix, want) == 0)
                ok = false;
        if (ok)
            acc_strlcpy(p->prefix, want, sizeof p->prefix);
        else
            snprintf(p->prefix, sizeof p->prefix, "ns%zu", c->n + 1);
        c->n++;
    }
    if (!p->scope) {
        p->scope = c->depth;
        *href = h;
    }
    return p->prefix;
}

static void declare(struct acc_xml_writer *w, const char *prefix, const char *href)
{
    char name[40];
    if (w->failed || !href)
        return;
    snprintf(name, sizeof name, "xmlns:%s", prefix);
    acc_xml_w_attr(w, NULL, name, href);
}

static bool has_element_child(const xmlNode *n)
{
    for (const xmlNode *c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return true;
    return false;
}

/* Starts a copy of element n with its attributes. */
static void copy_open(struct copier *c, const xmlNode *n)
{
    struct acc_xml_writer *w = c->w;
    const char *href;

    c->depth++;
    const char *p = prefix_for(c, n->ns, &href);
    acc_xml_w_start(w, p, (const char *)n->name);
    declare(w, p, href);
    for (const xmlAttr *a = n->properties; a && !w->failed; a = a->next) {
        const char *ap = prefix_for(c, a->ns, &href);
        declare(w, ap, href);
        xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
        if (!v) {
            w->failed = true;
            break;
        }
        acc_xml_w_attr(w, ap, (const char *)a->name, (const char *)v);
        xmlFree(v);
    }
}

/* Ends the copy of an element: the namespaces it declared go out of scope. */
static void copy_close(struct copier *c)
{
    acc_xml_w_end(c->w);
    for (size_t i = 0; i < c->n; i++)
        if (c->map[i].scope == c->depth)
            c->map[i].scope = 0;
    c->depth--;
}

static void copy_node(struct copier *c, const xmlNode *n);

static void copy_children(struct copier *c, const xmlNode *n)
{
    bool elements = has_element_child(n);
    for (const xmlNode *k = n->children; k && !c->w->failed; k = k->next) {
        if (k->type == XML_ELEMENT_NODE) {
            copy_node(c, k);
        } else if (k->type == XML_TEXT_NODE || k->type == XML_CDATA_SECTION_NODE) {
            /* Indentation between elements is the writer's job. */
            if (elements && xmlIsBlankNode(k))
                continue;
            acc_xml_w_text(c->w, (const char *)k->content);
        }
    }
}

static void copy_node(struct copier *c, const xmlNode *n)
{
    copy_open(c, n);
    copy_children(c, n);
    copy_close(c);
}

/* ------------------------------------------------------------- agreement */

static void allocation_term(struct acc_xml_writer *w, const struct acc_agreement *a)
{
    acc_xml_w_start(w, "wsag", "ServiceDescriptionTerm");
    acc_xml_w_attr(w, "wsag", "Name", "allocation");
    acc_xml_w_attr(w, "wsag", "ServiceName", "accord");
    acc_xml_w_start(w, "co", "Allocation");
    acc_xml_w_el(w, "co", "State", acc_state_name(a->state));
    acc_xml_w_el_time(w, "co", "Created", a->created);
    if (a->start) {
        acc_xml_w_el_time(w, "co", "Start", a->start);
        if (a->end)
            acc_xml_w_el_time(w, "co", "End", a->end);
    }
    acc_xml_w_el(w, "co", "Strategy", acc_strategy_name(a->strategy));
    acc_xml_w_el_i64(w, "co", "Rounds", a->rounds);
    acc_xml_w_el_i64(w, "co", "Rollbacks", a->rollbacks);
    if (a->version) {
        /* which version this is, of how many, and what its change was */
        acc_xml_w_el_i64(w, "co", "Version", a->version);
        acc_xml_w_el_i64(w, "co", "Versions", a->versions > a->version ? a->versions : a->version);
        acc_xml_w_el(w, "co", "Change", a->change);
    }
    acc_xml_w_el(w, "co", "FaultCode", a->fault_code);
    acc_xml_w_el_split(w, "co", "Reason", a->reason, '\n');
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        acc_xml_w_start(w, "co", "ComponentAllocation");
        acc_xml_w_attr(w, "co", "name", c->name ? c->name : "");
        acc_xml_w_el(w, "co", "Site", c->site);
        acc_xml_w_el_i64(w, "co", "Nodes", c->nodes);
        acc_xml_w_el_i64(w, "co", "ProcessesPerNode", c->ppn);
        acc_xml_w_el(w, "co", "Reservation", c->reservation);
        acc_xml_w_el(w, "co", "LocalId", c->local_id);
        acc_xml_w_el_split(w, "co", "NodeName", c->node_names, ',');
        acc_xml_w_end(w);
    }
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        acc_xml_w_start(w, "co", "LinkAllocation");
        acc_xml_w_attr(w, "co", "name", l->name ? l->name : "");
        acc_xml_w_el(w, "co", "Between", l->from ? l->from : "");
        acc_xml_w_el(w, "co", "And", l->to ? l->to : "");
        acc_xml_w_el(w, "co", "SiteA", l->site_a);
        acc_xml_w_el(w, "co", "SiteB", l->site_b);
        acc_xml_w_el(w, "co", "Link", l->link);
        acc_xml_w_start(w, "co", "Bandwidth");
        acc_xml_w_attr(w, NULL, "unit", "Mbit/s");
        char s[24];
        snprintf(s, sizeof s, "%" PRId64, l->bandwidth);
        acc_xml_w_text(w, s);
        acc_xml_w_end(w);
        acc_xml_w_el(w, "co", "Reservation", l->reservation);
        acc_xml_w_el(w, "co", "LocalId", l->local_id);
        acc_xml_w_end(w);
    }
    acc_xml_w_end(w); /* co:Allocation */
    acc_xml_w_end(w); /* wsag:ServiceDescriptionTerm */
}

void acc_xml_responder(struct acc_xml_writer *w)
{
    acc_xml_w_el(w, "wsag", "AgreementResponder", "accord");
}

/* The offer's Context, with Accord as the responder when it named none. */
static void copy_context(struct copier *c, const xmlNode *ctx)
{
    bool has_responder = false;
    for (const xmlNode *k = ctx->children; k; k = k->next)
        if (acc_xml_is(k, ACC_NS_WSAG, "AgreementResponder"))
            has_responder = true;

    copy_open(c, ctx);
    for (const xmlNode *k = ctx->children; k && !c->w->failed; k = k->next) {
        if (k->type != XML_ELEMENT_NODE)
            continue;
        if (!has_responder && !acc_xml_is(k, ACC_NS_WSAG, "AgreementInitiator")) {
            acc_xml_responder(c->w);
            has_responder = true;
        }
        copy_node(c, k);
    }
    if (!has_responder)
        acc_xml_responder(c->w);
    copy_close(c);
}

/* The offer's Terms, with the allocation term added to its wsag:All. */
static void copy_terms(struct copier *c, const xmlNode *terms, const struct acc_agreement *a)
{
    bool added = false;

    copy_open(c, terms);
    for (const xmlNode *k = terms->children; k && !c->w->failed; k = k->next) {
        if (k->type != XML_ELEMENT_NODE)
            continue;
        if (!added && acc_xml_is(k, ACC_NS_WSAG, "All")) {
            copy_open(c, k);
            copy_children(c, k);
            allocation_term(c->w, a);
            copy_close(c);
            added = true;
        } else {
            copy_node(c, k);
        }
    }
    copy_close(c);
}

acc_err acc_xml_agreement(const struct acc_agreement *a, struct acc_buf *out, struct acc_error *err)
{
    /* The stored offer was accepted under the server's limits, which may
     * be larger than the defaults. */
    static const struct acc_xml_limits stored = {SIZE_MAX, 256, UINT_MAX, UINT_MAX, UINT_MAX};
    xmlDocPtr doc = NULL;
    const xmlNode *root = NULL;
    struct acc_xml_writer w;
    acc_err rc;

    if (a->offer_xml) {
        size_t len = a->offer_len ? a->offer_len : strlen(a->offer_xml);
        rc = acc_xml_read(a->offer_xml, len, &stored, &doc, err);
        if (rc) {
            acc_error_prefix(err, "the stored offer of agreement %s", a->id);
            return rc;
        }
        root = xmlDocGetRootElement(doc);
        if (!acc_xml_is(root, ACC_NS_WSAG, "AgreementOffer")) {
            xmlFreeDoc(doc);
            return acc_error_set(err, ACC_ERR_INTERNAL,
                                 "the stored offer of agreement %s is not a wsag:AgreementOffer",
                                 a->id);
        }
    }

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "wsag", "Agreement");
    acc_xml_w_attr(&w, "wsag", "AgreementId", a->id);
    if (root) {
        struct copier c = {.w = &w};
        for (const xmlNode *k = root->children; k && !w.failed; k = k->next) {
            if (acc_xml_is(k, ACC_NS_WSAG, "Context"))
                copy_context(&c, k);
            else if (acc_xml_is(k, ACC_NS_WSAG, "Terms"))
                copy_terms(&c, k, a);
            else if (k->type == XML_ELEMENT_NODE)
                copy_node(&c, k);
        }
        free(c.map);
    } else {
        acc_xml_w_el(&w, "wsag", "Name", a->name);
        acc_xml_w_start(&w, "wsag", "Context");
        acc_xml_w_el(&w, "wsag", "AgreementInitiator", a->initiator ? a->initiator : "anonymous");
        acc_xml_responder(&w);
        acc_xml_w_el(&w, "wsag", "ServiceProvider", "AgreementResponder");
        acc_xml_w_end(&w);
        acc_xml_w_start(&w, "wsag", "Terms");
        acc_xml_w_start(&w, "wsag", "All");
        allocation_term(&w, a);
        acc_xml_w_end(&w);
        acc_xml_w_end(&w);
    }
    acc_xml_w_end(&w);
    xmlFreeDoc(doc);
    return acc_xml_w_close(&w, out, err);
}

/* ----------------------------------------------------------------- state */

static const char *guarantee_state(const char *s)
{
    if (s && (strcmp(s, "Fulfilled") == 0 || strcmp(s, "Violated") == 0))
        return s;
    return "NotDetermined";
}

/* co:LinkGuarantee: what the network adapter saw of a reserved link on
 * the wire (inside its wsag:GuaranteeTermState). */
static void link_guarantee(struct acc_xml_writer *w, const struct acc_guarantee_view *g)
{
    acc_xml_w_start(w, "co", "LinkGuarantee");
    acc_xml_w_el(w, "co", "Link", g->link);
    if (g->measured) {
        acc_xml_w_el(w, "co", "Provisioned", g->provisioned ? "true" : "false");
        acc_xml_w_el(w, "co", "Active", g->active ? "true" : "false");
        if (g->activated)
            acc_xml_w_el_time(w, "co", "Activated", g->activated);
        if (g->violated_at)
            acc_xml_w_el_time(w, "co", "ViolatedAt", g->violated_at);
    }
    if (g->reason)
        acc_xml_w_el(w, "co", "Reason", g->reason);
    if (g->measured) {
        acc_xml_w_el_u64(w, "co", "Bytes", g->bytes);
        acc_xml_w_el_u64(w, "co", "Packets", g->packets);
        acc_xml_w_el_u64(w, "co", "Drops", g->drops);
    }
    acc_xml_w_end(w);
}

/* co:Job: what became of the meta-job. */
static void job(struct acc_xml_writer *w, const struct acc_run *r, bool root)
{
    if (root)
        acc_xml_w_start_root(w, "co", "Job");
    else
        acc_xml_w_start(w, "co", "Job");
    acc_xml_w_attr(w, "co", "agreementId", r->agreement);
    acc_xml_w_el(w, "co", "Style", acc_launch_name(r->style));
    acc_xml_w_el(w, "co", "State", acc_run_state_name(r->state));
    if (r->started)
        acc_xml_w_el_time(w, "co", "Started", r->started);
    if (r->ended)
        acc_xml_w_el_time(w, "co", "Ended", r->ended);
    if (r->exit_status >= 0)
        acc_xml_w_el_i64(w, "co", "ExitStatus", r->exit_status);
    if (r->signal)
        acc_xml_w_el_i64(w, "co", "Signal", r->signal);
    acc_xml_w_el(w, "co", "Reason", r->reason);
    acc_xml_w_el(w, "co", "Directory", r->directory);
    acc_xml_w_el(w, "co", "Command", r->command);
    if (r->output_total >= 0)
        acc_xml_w_el_i64(w, "co", "OutputBytes", r->output_total);
    acc_xml_w_end(w);
}

acc_err acc_xml_state(const struct acc_state_view *v, struct acc_buf *out, struct acc_error *err)
{
    struct acc_xml_writer w;

    if (!v->agreement)
        return acc_error_set(err, ACC_ERR_INVALID, "no agreement to show the state of");
    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "AgreementStatus");
    acc_xml_w_attr(&w, "co", "agreementId", v->agreement->id);
    acc_xml_w_start(&w, "wsag", "AgreementState");
    acc_xml_w_el(&w, "wsag", "State", acc_state_name(v->agreement->state));
    acc_xml_w_end(&w);
    for (size_t i = 0; i < v->n_terms; i++) {
        acc_xml_w_start(&w, "wsag", "ServiceTermState");
        acc_xml_w_attr(&w, "wsag", "termName", v->terms[i].name ? v->terms[i].name : "");
        acc_xml_w_el(&w, "wsag", "State", acc_term_state_name(v->terms[i].state));
        acc_xml_w_end(&w);
    }
    for (size_t i = 0; i < v->n_guarantees; i++) {
        acc_xml_w_start(&w, "wsag", "GuaranteeTermState");
        acc_xml_w_attr(&w, "wsag", "termName", v->guarantees[i].name ? v->guarantees[i].name : "");
        acc_xml_w_el(&w, "wsag", "State", guarantee_state(v->guarantees[i].state));
        if (v->guarantees[i].link)
            link_guarantee(&w, &v->guarantees[i]);
        acc_xml_w_end(&w);
    }
    if (v->run)
        job(&w, v->run, false);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

acc_err acc_xml_run(const struct acc_run *r, struct acc_buf *out, struct acc_error *err)
{
    struct acc_xml_writer w;
    acc_xml_w_open(&w);
    job(&w, r, true);
    return acc_xml_w_close(&w, out, err);
}
