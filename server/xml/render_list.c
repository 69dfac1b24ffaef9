/* SPDX-License-Identifier: Apache-2.0 */
/* render_list.c - co:AgreementList and co:NegotiationTrace.  Both shapes
 * are declared in schema/coalloc.xsd and shown in docs/documents.md. */
#include "xml.h"

#include "../../lib/common/strutil.h"
#include "xml_internal.h"

/* ------------------------------------------------------------------ list */

acc_err acc_xml_list(const struct acc_agreement_list *l, struct acc_buf *out, struct acc_error *err)
{
    struct acc_xml_writer w;

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "AgreementList");
    acc_xml_w_attr_i64(&w, "co", "count", (int64_t)l->n);
    acc_xml_w_attr_i64(&w, "co", "total", (int64_t)l->total);
    for (size_t i = 0; i < l->n; i++) {
        const struct acc_agreement *a = &l->v[i];
        acc_xml_w_start(&w, "co", "AgreementRef");
        acc_xml_w_attr(&w, "co", "id", a->id);
        acc_xml_w_el(&w, "co", "Name", a->name);
        acc_xml_w_el(&w, "co", "Initiator", a->initiator ? a->initiator : "anonymous");
        acc_xml_w_el(&w, "co", "State", acc_state_name(a->state));
        acc_xml_w_el_time(&w, "co", "Created", a->created);
        if (a->start)
            acc_xml_w_el_time(&w, "co", "Start", a->start);
        if (a->end)
            acc_xml_w_el_time(&w, "co", "End", a->end);
        for (size_t j = 0; j < a->n_comps; j++) {
            const char *site = a->comps[j].site;
            bool seen = !site;
            for (size_t k = 0; k < j && !seen; k++)
                seen = acc_streq(a->comps[k].site, site);
            if (!seen)
                acc_xml_w_el(&w, "co", "Site", site);
        }
        acc_xml_w_end(&w);
    }
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}

/* ----------------------------------------------------------------- trace */

acc_err acc_xml_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out,
                      struct acc_error *err)
{
    struct acc_xml_writer w;

    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "NegotiationTrace");
    acc_xml_w_attr(&w, "co", "agreementId", a->id);
    acc_xml_w_attr_i64(&w, "co", "rounds", a->rounds);
    acc_xml_w_attr_i64(&w, "co", "rollbacks", a->rollbacks);
    acc_xml_w_attr(&w, "co", "strategy", acc_strategy_name(a->strategy));
    for (size_t i = 0; t && i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        acc_xml_w_start(&w, "co", "Event");
        acc_xml_w_attr_i64(&w, "co", "seq", e->seq);
        acc_xml_w_attr_i64(&w, "co", "round", e->round);
        acc_xml_w_attr(&w, "co", "kind", acc_trace_kind_name(e->kind));
        acc_xml_w_attr(&w, "co", "status", acc_err_symbol(e->status));
        acc_xml_w_el(&w, "co", "Target", e->target);
        acc_xml_w_el(&w, "co", "Adapter", e->adapter);
        if (e->amount > 0)
            acc_xml_w_el_i64(&w, "co", "Amount", e->amount);
        if (e->t_from)
            acc_xml_w_el_time(&w, "co", "From", e->t_from);
        if (e->t_until)
            acc_xml_w_el_time(&w, "co", "Until", e->t_until);
        if (e->t_result)
            acc_xml_w_el_time(&w, "co", "Result", e->t_result);
        acc_xml_w_el_i64(&w, "co", "ElapsedMicros", e->elapsed_us);
        acc_xml_w_el(&w, "co", "Detail", e->detail);
        acc_xml_w_end(&w);
    }
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}
