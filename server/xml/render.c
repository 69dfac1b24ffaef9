/* render.c - the documents Accord writes, through libxml2's text writer.
 *
 * Each renderer writes one whole document into an xmlBuffer and appends it
 * to the caller's acc_buf only when it is complete, so a failure never
 * leaves half a document behind.  The writer escapes; strings that did not
 * come from a parsed document (adapter messages, configuration) are first
 * made into valid XML characters (see clean()).  Every shape here is
 * declared in schema/coalloc.xsd and shown in docs/documents.md.
 */
#include "xml.h"

#include <inttypes.h>
#include <libxml/xmlwriter.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "../../lib/common/utf8.h"
#include "xml_internal.h"

#define NS_XS "http://www.w3.org/2001/XMLSchema"

#define TEMPLATE_NAME "meta-job"

/* ------------------------------------------------------------ characters */

/* Whether XML 1.0 allows the character. */
static bool xml_char(uint32_t c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
           (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;
}

/* Returns s when it holds only characters XML allows; otherwise a malloc'd
 * copy (in *tmp, for the caller to free) with every offending byte or
 * character replaced by U+FFFD; NULL when out of memory. */
static const char *clean(const char *s, char **tmp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), i = 0;
    uint32_t c;

    *tmp = NULL;
    for (size_t n; i < len; i += n)
        if (!(n = acc_utf8_decode(p + i, &c)) || !xml_char(c))
            break;
    if (i == len)
        return s;
    char *d = malloc(len * 3 + 1), *q = d;
    if (!d)
        return NULL;
    for (i = 0; i < len;) {
        size_t n = acc_utf8_decode(p + i, &c);
        if (n && xml_char(c)) {
            memcpy(q, p + i, n);
            q += n;
            i += n;
        } else {
            memcpy(q, "\xef\xbf\xbd", 3);
            q += 3;
            i += n ? n : 1;
        }
    }
    *q = '\0';
    *tmp = d;
    return d;
}

/* ---------------------------------------------------------------- writer */

struct wr {
    xmlBufferPtr buf;
    xmlTextWriterPtr w;
    bool failed;
};

static void ck(struct wr *w, int rc)
{
    if (rc < 0)
        w->failed = true;
}

static void wr_open(struct wr *w)
{
    w->failed = false;
    w->buf = xmlBufferCreate();
    w->w = w->buf ? xmlNewTextWriterMemory(w->buf, 0) : NULL;
    if (!w->w) {
        w->failed = true;
        return;
    }
    ck(w, xmlTextWriterSetIndent(w->w, 1));
    ck(w, xmlTextWriterSetIndentString(w->w, BAD_CAST "  "));
    ck(w, xmlTextWriterStartDocument(w->w, "1.0", "UTF-8", NULL));
}

/* Ends the document and appends it to out. */
static acc_err wr_close(struct wr *w, struct acc_buf *out, struct acc_error *err)
{
    acc_err rc = ACC_OK;

    if (w->w) {
        if (!w->failed)
            ck(w, xmlTextWriterEndDocument(w->w));
        xmlFreeTextWriter(w->w); /* flushes into buf */
        w->w = NULL;
    }
    if (w->failed || !w->buf) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    } else {
        acc_buf_append(out, xmlBufferContent(w->buf), (size_t)xmlBufferLength(w->buf));
        if (!acc_buf_ok(out))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory while writing a document");
    }
    xmlBufferFree(w->buf);
    w->buf = NULL;
    return rc;
}

static void start(struct wr *w, const char *prefix, const char *name)
{
    if (!w->failed)
        ck(w, xmlTextWriterStartElementNS(w->w, BAD_CAST prefix, BAD_CAST name, NULL));
}

/* The document element, declaring both namespaces. */
static void start_root(struct wr *w, const char *prefix, const char *name)
{
    start(w, prefix, name);
    if (w->failed)
        return;
    ck(w, xmlTextWriterWriteAttribute(w->w, BAD_CAST "xmlns:wsag", BAD_CAST ACC_NS_WSAG));
    if (!w->failed)
        ck(w, xmlTextWriterWriteAttribute(w->w, BAD_CAST "xmlns:co", BAD_CAST ACC_NS_CO));
}

static void end(struct wr *w)
{
    if (!w->failed)
        ck(w, xmlTextWriterEndElement(w->w));
}

/* An attribute; prefix NULL for an unqualified one. */
static void attr(struct wr *w, const char *prefix, const char *name, const char *value)
{
    char *tmp;
    if (w->failed || !value)
        return;
    const char *v = clean(value, &tmp);
    if (!v) {
        w->failed = true;
        return;
    }
    if (prefix)
        ck(w,
           xmlTextWriterWriteAttributeNS(w->w, BAD_CAST prefix, BAD_CAST name, NULL, BAD_CAST v));
    else
        ck(w, xmlTextWriterWriteAttribute(w->w, BAD_CAST name, BAD_CAST v));
    free(tmp);
}

static void attr_i64(struct wr *w, const char *prefix, const char *name, int64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    attr(w, prefix, name, s);
}

static void attr_time(struct wr *w, const char *prefix, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    attr(w, prefix, name, s);
}

static void text(struct wr *w, const char *s)
{
    char *tmp;
    if (w->failed || !s)
        return;
    const char *v = clean(s, &tmp);
    if (!v)
        w->failed = true;
    else
        ck(w, xmlTextWriterWriteString(w->w, BAD_CAST v));
    free(tmp);
}

/* <prefix:name>s</prefix:name>, nothing when s is NULL. */
static void el(struct wr *w, const char *prefix, const char *name, const char *s)
{
    if (!s)
        return;
    start(w, prefix, name);
    text(w, s);
    end(w);
}

static void el_i64(struct wr *w, const char *prefix, const char *name, int64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    el(w, prefix, name, s);
}

static void el_time(struct wr *w, const char *prefix, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    el(w, prefix, name, s);
}

/* One element per non-empty line of s (or per comma-separated item). */
static void el_split(struct wr *w, const char *prefix, const char *name, const char *s, char sep)
{
    while (s && *s && !w->failed) {
        const char *e = strchr(s, sep);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *item = acc_strndup(s, n);
        if (!item) {
            w->failed = true;
            return;
        }
        acc_strtrim(item);
        if (*item)
            el(w, prefix, name, item);
        free(item);
        s = e ? e + 1 : NULL;
    }
}

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
    struct wr *w;
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

static void declare(struct wr *w, const char *prefix, const char *href)
{
    char name[40];
    if (w->failed || !href)
        return;
    snprintf(name, sizeof name, "xmlns:%s", prefix);
    ck(w, xmlTextWriterWriteAttribute(w->w, BAD_CAST name, BAD_CAST href));
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
    struct wr *w = c->w;
    const char *href;

    c->depth++;
    const char *p = prefix_for(c, n->ns, &href);
    start(w, p, (const char *)n->name);
    declare(w, p, href);
    for (const xmlAttr *a = n->properties; a && !w->failed; a = a->next) {
        const char *ap = prefix_for(c, a->ns, &href);
        declare(w, ap, href);
        xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
        if (!v) {
            w->failed = true;
            break;
        }
        attr(w, ap, (const char *)a->name, (const char *)v);
        xmlFree(v);
    }
}

/* Ends the copy of an element: the namespaces it declared go out of scope. */
static void copy_close(struct copier *c)
{
    end(c->w);
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
            text(c->w, (const char *)k->content);
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

static void allocation_term(struct wr *w, const struct acc_agreement *a)
{
    start(w, "wsag", "ServiceDescriptionTerm");
    attr(w, "wsag", "Name", "allocation");
    attr(w, "wsag", "ServiceName", "accord");
    start(w, "co", "Allocation");
    el(w, "co", "State", acc_state_name(a->state));
    el_time(w, "co", "Created", a->created);
    if (a->start) {
        el_time(w, "co", "Start", a->start);
        if (a->end)
            el_time(w, "co", "End", a->end);
    }
    el(w, "co", "Strategy", acc_strategy_name(a->strategy));
    el_i64(w, "co", "Rounds", a->rounds);
    el_i64(w, "co", "Rollbacks", a->rollbacks);
    el(w, "co", "FaultCode", a->fault_code);
    el_split(w, "co", "Reason", a->reason, '\n');
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        start(w, "co", "ComponentAllocation");
        attr(w, "co", "name", c->name ? c->name : "");
        el(w, "co", "Site", c->site);
        el_i64(w, "co", "Nodes", c->nodes);
        el_i64(w, "co", "ProcessesPerNode", c->ppn);
        el(w, "co", "Reservation", c->reservation);
        el(w, "co", "LocalId", c->local_id);
        el_split(w, "co", "NodeName", c->node_names, ',');
        end(w);
    }
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        start(w, "co", "LinkAllocation");
        attr(w, "co", "name", l->name ? l->name : "");
        el(w, "co", "Between", l->from ? l->from : "");
        el(w, "co", "And", l->to ? l->to : "");
        el(w, "co", "SiteA", l->site_a);
        el(w, "co", "SiteB", l->site_b);
        el(w, "co", "Link", l->link);
        start(w, "co", "Bandwidth");
        attr(w, NULL, "unit", "Mbit/s");
        char s[24];
        snprintf(s, sizeof s, "%" PRId64, l->bandwidth);
        text(w, s);
        end(w);
        el(w, "co", "Reservation", l->reservation);
        el(w, "co", "LocalId", l->local_id);
        end(w);
    }
    end(w); /* co:Allocation */
    end(w); /* wsag:ServiceDescriptionTerm */
}

static void responder(struct wr *w)
{
    el(w, "wsag", "AgreementResponder", "accord");
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
            responder(c->w);
            has_responder = true;
        }
        copy_node(c, k);
    }
    if (!has_responder)
        responder(c->w);
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
    struct wr w;
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

    wr_open(&w);
    start_root(&w, "wsag", "Agreement");
    attr(&w, "wsag", "AgreementId", a->id);
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
        el(&w, "wsag", "Name", a->name);
        start(&w, "wsag", "Context");
        el(&w, "wsag", "AgreementInitiator", a->initiator ? a->initiator : "anonymous");
        responder(&w);
        el(&w, "wsag", "ServiceProvider", "AgreementResponder");
        end(&w);
        start(&w, "wsag", "Terms");
        start(&w, "wsag", "All");
        allocation_term(&w, a);
        end(&w);
        end(&w);
    }
    end(&w);
    xmlFreeDoc(doc);
    return wr_close(&w, out, err);
}

/* ----------------------------------------------------------------- state */

static const char *guarantee_state(const char *s)
{
    if (s && (strcmp(s, "Fulfilled") == 0 || strcmp(s, "Violated") == 0))
        return s;
    return "NotDetermined";
}

/* co:Job: what became of the meta-job. */
static void job(struct wr *w, const struct acc_run *r, bool root)
{
    if (root)
        start_root(w, "co", "Job");
    else
        start(w, "co", "Job");
    attr(w, "co", "agreementId", r->agreement);
    el(w, "co", "Style", acc_launch_name(r->style));
    el(w, "co", "State", acc_run_state_name(r->state));
    if (r->started)
        el_time(w, "co", "Started", r->started);
    if (r->ended)
        el_time(w, "co", "Ended", r->ended);
    if (r->exit_status >= 0)
        el_i64(w, "co", "ExitStatus", r->exit_status);
    if (r->signal)
        el_i64(w, "co", "Signal", r->signal);
    el(w, "co", "Reason", r->reason);
    el(w, "co", "Directory", r->directory);
    el(w, "co", "Command", r->command);
    if (r->output_total >= 0)
        el_i64(w, "co", "OutputBytes", r->output_total);
    end(w);
}

acc_err acc_xml_state(const struct acc_state_view *v, struct acc_buf *out, struct acc_error *err)
{
    struct wr w;

    if (!v->agreement)
        return acc_error_set(err, ACC_ERR_INVALID, "no agreement to show the state of");
    wr_open(&w);
    start_root(&w, "co", "AgreementStatus");
    attr(&w, "co", "agreementId", v->agreement->id);
    start(&w, "wsag", "AgreementState");
    el(&w, "wsag", "State", acc_state_name(v->agreement->state));
    end(&w);
    for (size_t i = 0; i < v->n_terms; i++) {
        start(&w, "wsag", "ServiceTermState");
        attr(&w, "wsag", "termName", v->terms[i].name ? v->terms[i].name : "");
        el(&w, "wsag", "State", acc_term_state_name(v->terms[i].state));
        end(&w);
    }
    for (size_t i = 0; i < v->n_guarantees; i++) {
        start(&w, "wsag", "GuaranteeTermState");
        attr(&w, "wsag", "termName", v->guarantees[i].name ? v->guarantees[i].name : "");
        el(&w, "wsag", "State", guarantee_state(v->guarantees[i].state));
        end(&w);
    }
    if (v->run)
        job(&w, v->run, false);
    end(&w);
    return wr_close(&w, out, err);
}

acc_err acc_xml_run(const struct acc_run *r, struct acc_buf *out, struct acc_error *err)
{
    struct wr w;
    wr_open(&w);
    job(&w, r, true);
    return wr_close(&w, out, err);
}

/* ------------------------------------------------------------------ list */

acc_err acc_xml_list(const struct acc_agreement_list *l, struct acc_buf *out, struct acc_error *err)
{
    struct wr w;

    wr_open(&w);
    start_root(&w, "co", "AgreementList");
    attr_i64(&w, "co", "count", (int64_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        const struct acc_agreement *a = &l->v[i];
        start(&w, "co", "AgreementRef");
        attr(&w, "co", "id", a->id);
        el(&w, "co", "Name", a->name);
        el(&w, "co", "Initiator", a->initiator ? a->initiator : "anonymous");
        el(&w, "co", "State", acc_state_name(a->state));
        el_time(&w, "co", "Created", a->created);
        if (a->start)
            el_time(&w, "co", "Start", a->start);
        if (a->end)
            el_time(&w, "co", "End", a->end);
        for (size_t j = 0; j < a->n_comps; j++) {
            const char *site = a->comps[j].site;
            bool seen = !site;
            for (size_t k = 0; k < j && !seen; k++)
                seen = acc_streq(a->comps[k].site, site);
            if (!seen)
                el(&w, "co", "Site", site);
        }
        end(&w);
    }
    end(&w);
    return wr_close(&w, out, err);
}

/* ----------------------------------------------------------------- trace */

acc_err acc_xml_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out,
                      struct acc_error *err)
{
    struct wr w;

    wr_open(&w);
    start_root(&w, "co", "NegotiationTrace");
    attr(&w, "co", "agreementId", a->id);
    attr_i64(&w, "co", "rounds", a->rounds);
    attr_i64(&w, "co", "rollbacks", a->rollbacks);
    attr(&w, "co", "strategy", acc_strategy_name(a->strategy));
    for (size_t i = 0; t && i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        start(&w, "co", "Event");
        attr_i64(&w, "co", "seq", e->seq);
        attr_i64(&w, "co", "round", e->round);
        attr(&w, "co", "kind", acc_trace_kind_name(e->kind));
        attr(&w, "co", "status", acc_err_symbol(e->status));
        el(&w, "co", "Target", e->target);
        el(&w, "co", "Adapter", e->adapter);
        if (e->amount > 0)
            el_i64(&w, "co", "Amount", e->amount);
        if (e->t_from)
            el_time(&w, "co", "From", e->t_from);
        if (e->t_until)
            el_time(&w, "co", "Until", e->t_until);
        if (e->t_result)
            el_time(&w, "co", "Result", e->t_result);
        el_i64(&w, "co", "ElapsedMicros", e->elapsed_us);
        el(&w, "co", "Detail", e->detail);
        end(&w);
    }
    end(&w);
    return wr_close(&w, out, err);
}

/* ----------------------------------------------------------------- sites */

static void site_body(struct wr *w, const struct acc_site_info *s)
{
    el(w, "co", "Health", s->health);
    el_i64(w, "co", "Calls", (int64_t)s->calls);
    el_i64(w, "co", "Failures", (int64_t)s->failures);
}

static void link_info(struct wr *w, const struct acc_link_info *l)
{
    start(w, "co", "Link");
    attr(w, "co", "name", l->name ? l->name : "");
    attr(w, "co", "siteA", l->site_a ? l->site_a : "");
    attr(w, "co", "siteB", l->site_b ? l->site_b : "");
    attr(w, "co", "network", l->network ? l->network : "");
    attr_i64(w, "co", "capacity", l->capacity);
    attr(w, "co", "up", l->up ? "true" : "false");
    end(w);
}

static void site_open(struct wr *w, const struct acc_site_info *s, bool root)
{
    if (root)
        start_root(w, "co", "Site");
    else
        start(w, "co", "Site");
    attr(w, "co", "name", s->name ? s->name : "");
    attr(w, "co", "adapter", s->adapter ? s->adapter : "");
    attr_i64(w, "co", "nodes", s->nodes);
    attr(w, "co", "up", s->up ? "true" : "false");
    site_body(w, s);
}

acc_err acc_xml_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out,
                      struct acc_error *err)
{
    struct wr w;

    if (only_site) {
        const struct acc_site_info *s = NULL;
        for (size_t i = 0; i < v->n_sites && !s; i++)
            if (acc_streq(v->sites[i].name, only_site))
                s = &v->sites[i];
        if (!s)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "no site named '%.64s'", only_site);
        wr_open(&w);
        site_open(&w, s, true);
        for (size_t i = 0; i < v->n_links; i++)
            if (acc_streq(v->links[i].site_a, only_site) ||
                acc_streq(v->links[i].site_b, only_site))
                link_info(&w, &v->links[i]);
        end(&w);
        return wr_close(&w, out, err);
    }

    wr_open(&w);
    start_root(&w, "co", "Sites");
    for (size_t i = 0; i < v->n_sites; i++) {
        site_open(&w, &v->sites[i], false);
        end(&w);
    }
    for (size_t i = 0; i < v->n_networks; i++) {
        const struct acc_site_info *n = &v->networks[i];
        start(&w, "co", "Network");
        attr(&w, "co", "name", n->name ? n->name : "");
        attr(&w, "co", "adapter", n->adapter ? n->adapter : "");
        attr(&w, "co", "up", n->up ? "true" : "false");
        site_body(&w, n);
        end(&w);
    }
    for (size_t i = 0; i < v->n_links; i++)
        link_info(&w, &v->links[i]);
    end(&w);
    return wr_close(&w, out, err);
}

/* --------------------------------------------------------------- preview */

acc_err acc_xml_preview(const struct acc_preview_view *v, struct acc_buf *out,
                        struct acc_error *err)
{
    char d[ACC_DURATION_STRLEN];
    struct wr w;

    wr_open(&w);
    start_root(&w, "co", "Preview");
    attr(&w, "co", "site", v->site ? v->site : "");
    attr_i64(&w, "co", "nodes", v->nodes);
    acc_duration_format(v->duration, d);
    attr(&w, "co", "duration", d);
    attr_time(&w, "co", "from", v->from);
    attr_time(&w, "co", "until", v->until);
    attr(&w, "co", "truncated", v->frames && v->frames->truncated ? "true" : "false");
    for (size_t i = 0; v->frames && i < v->frames->n; i++) {
        start(&w, "co", "Frame");
        attr_time(&w, "co", "start", v->frames->v[i].start);
        attr_time(&w, "co", "end", v->frames->v[i].end);
        end(&w);
    }
    end(&w);
    return wr_close(&w, out, err);
}

/* ------------------------------------------------------------- templates */

acc_err acc_xml_templates(const struct acc_sites_view *v, struct acc_buf *out,
                          struct acc_error *err)
{
    struct wr w;

    (void)v;
    wr_open(&w);
    start_root(&w, "co", "Templates");
    start(&w, "co", "TemplateRef");
    attr(&w, "co", "name", TEMPLATE_NAME);
    end(&w);
    end(&w);
    return wr_close(&w, out, err);
}

static void template_term(struct wr *w, const char *name)
{
    start(w, "wsag", "ServiceDescriptionTerm");
    attr(w, "wsag", "Name", name);
    attr(w, "wsag", "ServiceName", "metajob");
}

static void sample_component(struct wr *w, const char *name, const struct acc_site_info *site)
{
    char exe[96];
    template_term(w, name);
    start(w, "co", "Component");
    if (site)
        el(w, "co", "Site", site->name);
    el_i64(w, "co", "Nodes", site && site->nodes > 0 && site->nodes < 4 ? site->nodes : 4);
    el_i64(w, "co", "ProcessesPerNode", 1);
    snprintf(exe, sizeof exe, "/opt/app/bin/%s", name);
    el(w, "co", "Executable", exe);
    if (!site)
        el(w, "co", "Argument", "--input=run.cfg");
    end(w);
    end(w);
}

/* A wsag:Item whose ItemConstraint is an xs:restriction. */
static void item_open(struct wr *w, const char *name, const char *location, const char *base)
{
    start(w, "wsag", "Item");
    attr(w, "wsag", "Name", name);
    el(w, "wsag", "Location", location);
    start(w, "wsag", "ItemConstraint");
    start(w, "xs", "restriction");
    attr(w, NULL, "base", base);
}

static void item_close(struct wr *w)
{
    end(w); /* xs:restriction */
    end(w); /* wsag:ItemConstraint */
    end(w); /* wsag:Item */
}

static void facet(struct wr *w, const char *facet_name, const char *value)
{
    start(w, "xs", facet_name);
    attr(w, NULL, "value", value);
    end(w);
}

static void facet_i64(struct wr *w, const char *facet_name, int64_t value)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, value);
    facet(w, facet_name, s);
}

#define TERM_PATH "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"

static void creation_constraints(struct wr *w, const struct acc_sites_view *v)
{
    int64_t max_nodes = 0, max_bw = 0;
    for (size_t i = 0; i < v->n_sites; i++)
        if (v->sites[i].nodes > max_nodes)
            max_nodes = v->sites[i].nodes;
    for (size_t i = 0; i < v->n_links; i++)
        if (v->links[i].capacity > max_bw)
            max_bw = v->links[i].capacity;

    start(w, "wsag", "CreationConstraints");

    item_open(w, "Site", TERM_PATH "co:Component/co:Site", "xs:token");
    for (size_t i = 0; i < v->n_sites; i++)
        if (v->sites[i].name)
            facet(w, "enumeration", v->sites[i].name);
    item_close(w);

    item_open(w, "Nodes", TERM_PATH "co:Component/co:Nodes", "xs:positiveInteger");
    facet_i64(w, "maxInclusive", max_nodes > 0 ? max_nodes : 1000000);
    item_close(w);

    item_open(w, "ProcessesPerNode", TERM_PATH "co:Component/co:ProcessesPerNode",
              "xs:positiveInteger");
    facet_i64(w, "maxInclusive", 4096);
    item_close(w);

    item_open(w, "Bandwidth", TERM_PATH "co:Link/co:Bandwidth", "xs:positiveInteger");
    facet_i64(w, "maxInclusive", max_bw > 0 ? max_bw : 1000000);
    item_close(w);

    item_open(w, "Duration", TERM_PATH "co:Schedule/co:Duration", "xs:duration");
    facet(w, "minExclusive", "PT0S");
    item_close(w);

    item_open(w, "LaunchStyle", TERM_PATH "co:Launch/@style", "xs:string");
    facet(w, "enumeration", "metampich");
    facet(w, "enumeration", "mpich-g2");
    facet(w, "enumeration", "none");
    item_close(w);

    item_open(w, "Strategy", TERM_PATH "co:Negotiation/co:Strategy", "xs:string");
    facet(w, "enumeration", "intersect");
    facet(w, "enumeration", "iterative");
    item_close(w);

    el(w, "wsag", "Constraint",
       "Exactly one co:Schedule.  When both co:EarliestStart and co:Deadline are given, the "
       "deadline is after the earliest start and the window between them is at least "
       "co:Duration long.");
    el(w, "wsag", "Constraint",
       "At least one co:Component; the wsag:Name of its term names it (1 to 64 letters, digits, "
       "'.', '_' or '-', unique).  A co:Link joins two different components by those names, "
       "and no two links join the same pair.  Bandwidth is in Mbit/s unless unit=\"Gbit/s\".");
    el(w, "wsag", "Constraint",
       "A component with a co:Site asks for no more nodes than that site has.");
    end(w);
}

acc_err acc_xml_template(const char *name, const struct acc_sites_view *v, struct acc_buf *out,
                         struct acc_error *err)
{
    struct wr w;

    if (!name || strcmp(name, TEMPLATE_NAME) != 0)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no template named '%.64s'", name ? name : "");
    const struct acc_site_info *first = v->n_sites > 0 ? &v->sites[0] : NULL;
    const struct acc_site_info *second = v->n_sites > 1 ? &v->sites[1] : NULL;
    int64_t bw = 1000;
    for (size_t i = 0; i < v->n_links; i++)
        if (v->links[i].capacity > 0 && v->links[i].capacity < bw)
            bw = v->links[i].capacity;

    wr_open(&w);
    start_root(&w, "wsag", "Template");
    attr(&w, NULL, "xmlns:xs", NS_XS);
    attr(&w, "wsag", "TemplateId", TEMPLATE_NAME);
    el(&w, "wsag", "Name", TEMPLATE_NAME);
    start(&w, "wsag", "Context");
    responder(&w);
    el(&w, "wsag", "ServiceProvider", "AgreementResponder");
    el(&w, "wsag", "TemplateId", TEMPLATE_NAME);
    el(&w, "wsag", "TemplateName", TEMPLATE_NAME);
    end(&w);

    start(&w, "wsag", "Terms");
    start(&w, "wsag", "All");
    template_term(&w, "schedule");
    start(&w, "co", "Schedule");
    el(&w, "co", "Duration", "PT1H");
    end(&w);
    end(&w);
    sample_component(&w, "solver", first);
    sample_component(&w, "viz", second);
    template_term(&w, "solver-viz");
    start(&w, "co", "Link");
    el(&w, "co", "Between", "solver");
    el(&w, "co", "And", "viz");
    start(&w, "co", "Bandwidth");
    attr(&w, NULL, "unit", "Mbit/s");
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, bw);
    text(&w, s);
    end(&w);
    end(&w);
    end(&w);
    template_term(&w, "launch");
    start(&w, "co", "Launch");
    attr(&w, NULL, "style", "metampich");
    end(&w);
    end(&w);
    end(&w); /* wsag:All */
    end(&w); /* wsag:Terms */

    creation_constraints(&w, v);
    end(&w);
    return wr_close(&w, out, err);
}

/* ----------------------------------------------------------------- fault */

void acc_xml_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out)
{
    struct wr w;
    char status[16];

    if (!msg || !*msg)
        msg = acc_err_text(code);
    snprintf(status, sizeof status, "%d", acc_err_http_status(code));

    wr_open(&w);
    start_root(&w, "co", "Fault");
    attr(&w, "co", "code", acc_err_symbol(code));
    attr(&w, "co", "status", status);
    const char *nl = strchr(msg, '\n');
    char *first = acc_strndup(msg, nl ? (size_t)(nl - msg) : strlen(msg));
    if (!first)
        w.failed = true;
    el(&w, "co", "Message", first && *first ? first : acc_err_text(code));
    free(first);
    if (nl)
        el_split(&w, "co", "Detail", nl + 1, '\n');
    el(&w, "co", "AgreementId", agreement_id);
    end(&w);
    if (wr_close(&w, out, NULL) == ACC_OK)
        return;

    /* The writer failed (memory): a fixed document still says what happened. */
    acc_buf_printf(out,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<co:Fault xmlns:co=\"" ACC_NS_CO "\" co:code=\"%s\" co:status=\"%s\">"
                   "<co:Message>%s</co:Message></co:Fault>\n",
                   acc_err_symbol(code), status, acc_err_text(code));
}
