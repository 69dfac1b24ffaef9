/* SPDX-License-Identifier: Apache-2.0 */
/* render_wsag4j.c - the wsag:Template for a reservation in WSAG4J's
 * vocabulary (GET /templates/wsag4j-reservation): a JSDL job on one site
 * and a wsag4j:TimeConstraint, with the CreationConstraints that say what
 * Accord maps (offer_wsag4j.c, docs/documents.md).  Valid against
 * ws-agreement.xsd, jsdl.xsd and wsag4j-scheduling.xsd. */
#include "xml.h"

#include <inttypes.h>
#include <stdio.h>

#include "xml_internal.h"

#define NS_XS     "http://www.w3.org/2001/XMLSchema"
#define TERM_PATH "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm/"
#define JOB_PATH  TERM_PATH "jsdl:JobDefinition/jsdl:JobDescription/"

static void term(struct acc_xml_writer *w, const char *name)
{
    acc_xml_w_start(w, "wsag", "ServiceDescriptionTerm");
    acc_xml_w_attr(w, "wsag", "Name", name);
    acc_xml_w_attr(w, "wsag", "ServiceName", "reservation");
}

static void exact(struct acc_xml_writer *w, const char *count, int64_t v)
{
    acc_xml_w_start(w, "jsdl", count);
    acc_xml_w_el_i64(w, "jsdl", "Exact", v);
    acc_xml_w_end(w);
}

static void job(struct acc_xml_writer *w, const struct acc_site_info *site)
{
    term(w, "job");
    acc_xml_w_start(w, "jsdl", "JobDefinition");
    acc_xml_w_start(w, "jsdl", "JobDescription");
    acc_xml_w_start(w, "jsdl", "Application");
    acc_xml_w_start(w, "jsdl-posix", "POSIXApplication");
    acc_xml_w_el(w, "jsdl-posix", "Executable", "/opt/app/bin/solver");
    acc_xml_w_end(w);
    acc_xml_w_end(w); /* jsdl:Application */
    acc_xml_w_start(w, "jsdl", "Resources");
    if (site) {
        acc_xml_w_start(w, "jsdl", "CandidateHosts");
        acc_xml_w_el(w, "jsdl", "HostName", site->name);
        acc_xml_w_end(w);
    }
    exact(w, "IndividualCPUCount", 1);
    exact(w, "TotalResourceCount", site && site->nodes > 0 && site->nodes < 4 ? site->nodes : 4);
    acc_xml_w_end(w); /* jsdl:Resources */
    acc_xml_w_end(w); /* jsdl:JobDescription */
    acc_xml_w_end(w); /* jsdl:JobDefinition */
    acc_xml_w_end(w); /* wsag:ServiceDescriptionTerm */
}

static void item(struct acc_xml_writer *w, const char *name, const char *location, const char *base,
                 const char *facet, const char *value)
{
    acc_xml_w_start(w, "wsag", "Item");
    acc_xml_w_attr(w, "wsag", "Name", name);
    acc_xml_w_el(w, "wsag", "Location", location);
    acc_xml_w_start(w, "wsag", "ItemConstraint");
    acc_xml_w_start(w, "xs", "restriction");
    acc_xml_w_attr(w, NULL, "base", base);
    if (facet) {
        acc_xml_w_start(w, "xs", facet);
        acc_xml_w_attr(w, NULL, "value", value);
        acc_xml_w_end(w);
    }
}

static void item_end(struct acc_xml_writer *w)
{
    acc_xml_w_end(w); /* xs:restriction */
    acc_xml_w_end(w); /* wsag:ItemConstraint */
    acc_xml_w_end(w); /* wsag:Item */
}

static void constraints(struct acc_xml_writer *w, const struct acc_sites_view *v)
{
    int64_t max_nodes = 0;
    char s[24];
    for (size_t i = 0; i < v->n_sites; i++)
        if (v->sites[i].nodes > max_nodes)
            max_nodes = v->sites[i].nodes;

    acc_xml_w_start(w, "wsag", "CreationConstraints");
    item(w, "HostName", JOB_PATH "jsdl:Resources/jsdl:CandidateHosts/jsdl:HostName", "xs:string",
         NULL, NULL);
    for (size_t i = 0; i < v->n_sites; i++) {
        if (!v->sites[i].name)
            continue;
        acc_xml_w_start(w, "xs", "enumeration");
        acc_xml_w_attr(w, NULL, "value", v->sites[i].name);
        acc_xml_w_end(w);
    }
    item_end(w);
    snprintf(s, sizeof s, "%" PRId64, max_nodes > 0 ? max_nodes : 1000000);
    item(w, "TotalResourceCount", JOB_PATH "jsdl:Resources/jsdl:TotalResourceCount/jsdl:Exact",
         "xs:double", "maxInclusive", s);
    item_end(w);
    item(w, "Duration", TERM_PATH "wsag4j:TimeConstraint/wsag4j:Duration", "xs:int", "minInclusive",
         "1");
    item_end(w);
    acc_xml_w_el(w, "wsag", "Constraint",
                 "One jsdl:JobDefinition: one component on one site, named by its term.  "
                 "jsdl:TotalResourceCount/jsdl:Exact (a whole number) is the number of nodes; "
                 "jsdl:IndividualCPUCount, or jsdl:TotalCPUCount divided evenly over the nodes, "
                 "the processes per node; one jsdl:HostName the site (none: Accord chooses); "
                 "jsdl-posix:Executable and jsdl-posix:Argument what the job runs.");
    acc_xml_w_el(w, "wsag", "Constraint",
                 "One wsag4j:TimeConstraint: StartTime is the earliest start, EndTime the "
                 "deadline, Duration the length in whole minutes; without Duration the "
                 "reservation lasts from StartTime to EndTime.");
    acc_xml_w_el(w, "wsag", "Constraint",
                 "Any other element in a wsag:ServiceDescriptionTerm is refused with a "
                 "SchemaViolation fault that names it; co: terms may be mixed in.");
    acc_xml_w_end(w);
}

acc_err acc_xml_template_wsag4j(const struct acc_sites_view *v, struct acc_buf *out,
                                struct acc_error *err)
{
    struct acc_xml_writer w;

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "wsag", "Template");
    acc_xml_w_attr(&w, NULL, "xmlns:xs", NS_XS);
    acc_xml_w_attr(&w, NULL, "xmlns:jsdl", ACC_NS_JSDL);
    acc_xml_w_attr(&w, NULL, "xmlns:jsdl-posix", ACC_NS_JSDL_POSIX);
    acc_xml_w_attr(&w, NULL, "xmlns:wsag4j", ACC_NS_WSAG4J);
    acc_xml_w_attr(&w, "wsag", "TemplateId", ACC_TEMPLATE_WSAG4J);
    acc_xml_w_el(&w, "wsag", "Name", ACC_TEMPLATE_WSAG4J);
    acc_xml_w_start(&w, "wsag", "Context");
    acc_xml_responder(&w);
    acc_xml_w_el(&w, "wsag", "ServiceProvider", "AgreementResponder");
    acc_xml_w_el(&w, "wsag", "TemplateId", ACC_TEMPLATE_WSAG4J);
    acc_xml_w_el(&w, "wsag", "TemplateName", ACC_TEMPLATE_WSAG4J);
    acc_xml_w_end(&w);

    acc_xml_w_start(&w, "wsag", "Terms");
    acc_xml_w_start(&w, "wsag", "All");
    job(&w, v->n_sites > 0 ? &v->sites[0] : NULL);
    term(&w, "time");
    acc_xml_w_start(&w, "wsag4j", "TimeConstraint");
    acc_xml_w_el(&w, "wsag4j", "Duration", "60");
    acc_xml_w_end(&w);
    acc_xml_w_end(&w); /* wsag:ServiceDescriptionTerm */
    acc_xml_w_end(&w); /* wsag:All */
    acc_xml_w_end(&w); /* wsag:Terms */

    constraints(&w, v);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}
