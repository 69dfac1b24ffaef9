/* SPDX-License-Identifier: Apache-2.0 */
/* render_sites.c - co:Sites and co:Site, co:Preview, co:Templates and the
 * wsag:Template, and co:Fault.  Every shape here is declared in
 * schema/coalloc.xsd and shown in docs/documents.md. */
#include "xml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/strutil.h"
#include "xml_internal.h"

#define NS_XS "http://www.w3.org/2001/XMLSchema"

#define TEMPLATE_NAME "meta-job"

/* ----------------------------------------------------------------- sites */

/* The remote adapters' round trip and endpoint, as attributes. */
static void site_remote_attrs(struct acc_xml_writer *w, const struct acc_site_info *s)
{
    if (s->rtt_us > 0)
        acc_xml_w_attr_i64(w, "co", "rttUs", s->rtt_us);
    if (s->endpoint && s->endpoint[0])
        acc_xml_w_attr(w, "co", "endpoint", s->endpoint);
}

static void site_body(struct acc_xml_writer *w, const struct acc_site_info *s)
{
    acc_xml_w_el(w, "co", "Health", s->health);
    acc_xml_w_el_i64(w, "co", "Calls", (int64_t)s->calls);
    acc_xml_w_el_i64(w, "co", "Failures", (int64_t)s->failures);
}

static void link_info(struct acc_xml_writer *w, const struct acc_link_info *l)
{
    acc_xml_w_start(w, "co", "Link");
    acc_xml_w_attr(w, "co", "name", l->name ? l->name : "");
    acc_xml_w_attr(w, "co", "siteA", l->site_a ? l->site_a : "");
    acc_xml_w_attr(w, "co", "siteB", l->site_b ? l->site_b : "");
    acc_xml_w_attr(w, "co", "network", l->network ? l->network : "");
    acc_xml_w_attr_i64(w, "co", "capacity", l->capacity);
    acc_xml_w_attr(w, "co", "up", l->up ? "true" : "false");
    acc_xml_w_end(w);
}

static void site_open(struct acc_xml_writer *w, const struct acc_site_info *s, bool root)
{
    if (root)
        acc_xml_w_start_root(w, "co", "Site");
    else
        acc_xml_w_start(w, "co", "Site");
    acc_xml_w_attr(w, "co", "name", s->name ? s->name : "");
    acc_xml_w_attr(w, "co", "adapter", s->adapter ? s->adapter : "");
    acc_xml_w_attr_i64(w, "co", "nodes", s->nodes);
    acc_xml_w_attr(w, "co", "up", s->up ? "true" : "false");
    site_remote_attrs(w, s);
    site_body(w, s);
}

acc_err acc_xml_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out,
                      struct acc_error *err)
{
    struct acc_xml_writer w;

    if (only_site) {
        const struct acc_site_info *s = NULL;
        for (size_t i = 0; i < v->n_sites && !s; i++)
            if (acc_streq(v->sites[i].name, only_site))
                s = &v->sites[i];
        if (!s)
            return acc_error_set(err, ACC_ERR_NOT_FOUND, "no site named '%.64s'", only_site);
        acc_xml_w_open(&w);
        site_open(&w, s, true);
        for (size_t i = 0; i < v->n_links; i++)
            if (acc_streq(v->links[i].site_a, only_site) ||
                acc_streq(v->links[i].site_b, only_site))
                link_info(&w, &v->links[i]);
        acc_xml_w_end(&w);
        return acc_xml_w_close(&w, out, err);
    }

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "Sites");
    for (size_t i = 0; i < v->n_sites; i++) {
        site_open(&w, &v->sites[i], false);
        acc_xml_w_end(&w);
    }
    for (size_t i = 0; i < v->n_networks; i++) {
        const struct acc_site_info *n = &v->networks[i];
        acc_xml_w_start(&w, "co", "Network");
        acc_xml_w_attr(&w, "co", "name", n->name ? n->name : "");
        acc_xml_w_attr(&w, "co", "adapter", n->adapter ? n->adapter : "");
        acc_xml_w_attr(&w, "co", "up", n->up ? "true" : "false");
        site_remote_attrs(&w, n);
        site_body(&w, n);
        acc_xml_w_end(&w);
    }
    for (size_t i = 0; i < v->n_links; i++)
        link_info(&w, &v->links[i]);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

/* --------------------------------------------------------------- preview */

acc_err acc_xml_preview(const struct acc_preview_view *v, struct acc_buf *out,
                        struct acc_error *err)
{
    char d[ACC_DURATION_STRLEN];
    struct acc_xml_writer w;

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "Preview");
    acc_xml_w_attr(&w, "co", "site", v->site ? v->site : "");
    acc_xml_w_attr_i64(&w, "co", "nodes", v->nodes);
    acc_duration_format(v->duration, d);
    acc_xml_w_attr(&w, "co", "duration", d);
    acc_xml_w_attr_time(&w, "co", "from", v->from);
    acc_xml_w_attr_time(&w, "co", "until", v->until);
    acc_xml_w_attr(&w, "co", "truncated", v->frames && v->frames->truncated ? "true" : "false");
    for (size_t i = 0; v->frames && i < v->frames->n; i++) {
        acc_xml_w_start(&w, "co", "Frame");
        acc_xml_w_attr_time(&w, "co", "start", v->frames->v[i].start);
        acc_xml_w_attr_time(&w, "co", "end", v->frames->v[i].end);
        acc_xml_w_end(&w);
    }
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

/* ------------------------------------------------------------- templates */

acc_err acc_xml_templates(const struct acc_sites_view *v, struct acc_buf *out,
                          struct acc_error *err)
{
    struct acc_xml_writer w;

    (void)v;
    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "Templates");
    acc_xml_w_start(&w, "co", "TemplateRef");
    acc_xml_w_attr(&w, "co", "name", TEMPLATE_NAME);
    acc_xml_w_end(&w);
    acc_xml_w_start(&w, "co", "TemplateRef");
    acc_xml_w_attr(&w, "co", "name", ACC_TEMPLATE_WSAG4J);
    acc_xml_w_end(&w);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

static void template_term(struct acc_xml_writer *w, const char *name)
{
    acc_xml_w_start(w, "wsag", "ServiceDescriptionTerm");
    acc_xml_w_attr(w, "wsag", "Name", name);
    acc_xml_w_attr(w, "wsag", "ServiceName", "metajob");
}

static void sample_component(struct acc_xml_writer *w, const char *name,
                             const struct acc_site_info *site)
{
    char exe[96];
    template_term(w, name);
    acc_xml_w_start(w, "co", "Component");
    if (site)
        acc_xml_w_el(w, "co", "Site", site->name);
    acc_xml_w_el_i64(w, "co", "Nodes",
                     site && site->nodes > 0 && site->nodes < 4 ? site->nodes : 4);
    acc_xml_w_el_i64(w, "co", "ProcessesPerNode", 1);
    snprintf(exe, sizeof exe, "/opt/app/bin/%s", name);
    acc_xml_w_el(w, "co", "Executable", exe);
    if (!site)
        acc_xml_w_el(w, "co", "Argument", "--input=run.cfg");
    acc_xml_w_end(w);
    acc_xml_w_end(w);
}

/* A wsag:Item whose ItemConstraint is an xs:restriction. */
static void item_open(struct acc_xml_writer *w, const char *name, const char *location,
                      const char *base)
{
    acc_xml_w_start(w, "wsag", "Item");
    acc_xml_w_attr(w, "wsag", "Name", name);
    acc_xml_w_el(w, "wsag", "Location", location);
    acc_xml_w_start(w, "wsag", "ItemConstraint");
    acc_xml_w_start(w, "xs", "restriction");
    acc_xml_w_attr(w, NULL, "base", base);
}

static void item_close(struct acc_xml_writer *w)
{
    acc_xml_w_end(w); /* xs:restriction */
    acc_xml_w_end(w); /* wsag:ItemConstraint */
    acc_xml_w_end(w); /* wsag:Item */
}

static void facet(struct acc_xml_writer *w, const char *facet_name, const char *value)
{
    acc_xml_w_start(w, "xs", facet_name);
    acc_xml_w_attr(w, NULL, "value", value);
    acc_xml_w_end(w);
}

static void facet_i64(struct acc_xml_writer *w, const char *facet_name, int64_t value)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, value);
    facet(w, facet_name, s);
}

#define TERM_PATH "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"

static void creation_constraints(struct acc_xml_writer *w, const struct acc_sites_view *v)
{
    int64_t max_nodes = 0, max_bw = 0;
    for (size_t i = 0; i < v->n_sites; i++)
        if (v->sites[i].nodes > max_nodes)
            max_nodes = v->sites[i].nodes;
    for (size_t i = 0; i < v->n_links; i++)
        if (v->links[i].capacity > max_bw)
            max_bw = v->links[i].capacity;

    acc_xml_w_start(w, "wsag", "CreationConstraints");

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

    acc_xml_w_el(
        w, "wsag", "Constraint",
        "Exactly one co:Schedule.  When both co:EarliestStart and co:Deadline are given, the "
        "deadline is after the earliest start and the window between them is at least "
        "co:Duration long.");
    acc_xml_w_el(
        w, "wsag", "Constraint",
        "At least one co:Component; the wsag:Name of its term names it (1 to 64 letters, digits, "
        "'.', '_' or '-', unique).  A co:Link joins two different components by those names, "
        "and no two links join the same pair.  Bandwidth is in Mbit/s unless unit=\"Gbit/s\".");
    acc_xml_w_el(w, "wsag", "Constraint",
                 "A component with a co:Site asks for no more nodes than that site has.");
    acc_xml_w_end(w);
}

acc_err acc_xml_template(const char *name, const struct acc_sites_view *v, struct acc_buf *out,
                         struct acc_error *err)
{
    struct acc_xml_writer w;

    if (name && strcmp(name, ACC_TEMPLATE_WSAG4J) == 0)
        return acc_xml_template_wsag4j(v, out, err);
    if (!name || strcmp(name, TEMPLATE_NAME) != 0)
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no template named '%.64s'", name ? name : "");
    const struct acc_site_info *first = v->n_sites > 0 ? &v->sites[0] : NULL;
    const struct acc_site_info *second = v->n_sites > 1 ? &v->sites[1] : NULL;
    int64_t bw = 1000;
    for (size_t i = 0; i < v->n_links; i++)
        if (v->links[i].capacity > 0 && v->links[i].capacity < bw)
            bw = v->links[i].capacity;

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "wsag", "Template");
    acc_xml_w_attr(&w, NULL, "xmlns:xs", NS_XS);
    acc_xml_w_attr(&w, "wsag", "TemplateId", TEMPLATE_NAME);
    acc_xml_w_el(&w, "wsag", "Name", TEMPLATE_NAME);
    acc_xml_w_start(&w, "wsag", "Context");
    acc_xml_responder(&w);
    acc_xml_w_el(&w, "wsag", "ServiceProvider", "AgreementResponder");
    acc_xml_w_el(&w, "wsag", "TemplateId", TEMPLATE_NAME);
    acc_xml_w_el(&w, "wsag", "TemplateName", TEMPLATE_NAME);
    acc_xml_w_end(&w);

    acc_xml_w_start(&w, "wsag", "Terms");
    acc_xml_w_start(&w, "wsag", "All");
    template_term(&w, "schedule");
    acc_xml_w_start(&w, "co", "Schedule");
    acc_xml_w_el(&w, "co", "Duration", "PT1H");
    acc_xml_w_end(&w);
    acc_xml_w_end(&w);
    sample_component(&w, "solver", first);
    sample_component(&w, "viz", second);
    template_term(&w, "solver-viz");
    acc_xml_w_start(&w, "co", "Link");
    acc_xml_w_el(&w, "co", "Between", "solver");
    acc_xml_w_el(&w, "co", "And", "viz");
    acc_xml_w_start(&w, "co", "Bandwidth");
    acc_xml_w_attr(&w, NULL, "unit", "Mbit/s");
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, bw);
    acc_xml_w_text(&w, s);
    acc_xml_w_end(&w);
    acc_xml_w_end(&w);
    acc_xml_w_end(&w);
    template_term(&w, "launch");
    acc_xml_w_start(&w, "co", "Launch");
    acc_xml_w_attr(&w, NULL, "style", "metampich");
    acc_xml_w_end(&w);
    acc_xml_w_end(&w);
    acc_xml_w_end(&w); /* wsag:All */
    acc_xml_w_end(&w); /* wsag:Terms */

    creation_constraints(&w, v);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

/* ----------------------------------------------------------------- fault */

void acc_xml_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out)
{
    struct acc_xml_writer w;
    char status[16];

    if (!msg || !*msg)
        msg = acc_err_text(code);
    snprintf(status, sizeof status, "%d", acc_err_http_status(code));

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "Fault");
    acc_xml_w_attr(&w, "co", "code", acc_err_symbol(code));
    acc_xml_w_attr(&w, "co", "status", status);
    const char *nl = strchr(msg, '\n');
    char *first = acc_strndup(msg, nl ? (size_t)(nl - msg) : strlen(msg));
    if (!first)
        w.failed = true;
    acc_xml_w_el(&w, "co", "Message", first && *first ? first : acc_err_text(code));
    free(first);
    if (nl)
        acc_xml_w_el_split(&w, "co", "Detail", nl + 1, '\n');
    acc_xml_w_el(&w, "co", "AgreementId", agreement_id);
    acc_xml_w_end(&w);
    if (acc_xml_w_close(&w, out, NULL) == ACC_OK)
        return;

    /* The writer failed (memory): a fixed document still says what happened. */
    acc_buf_printf(out,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<co:Fault xmlns:co=\"" ACC_NS_CO "\" co:code=\"%s\" co:status=\"%s\">"
                   "<co:Message>%s</co:Message></co:Fault>\n",
                   acc_err_symbol(code), status, acc_err_text(code));
}
