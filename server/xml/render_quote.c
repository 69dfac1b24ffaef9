/* SPDX-License-Identifier: Apache-2.0 */
/* render_quote.c - the quote document (co:Quote): the answer to
 * POST /negotiations and GET /negotiations/{id} (docs/documents.md). */
#include "xml.h"
#include "xml_internal.h"

static void option(struct acc_xml_writer *w, const struct acc_quote *q, size_t i)
{
    const struct acc_quote_option *o = &q->options[i];
    acc_xml_w_start(w, "co", "CounterOffer");
    acc_xml_w_attr_i64(w, "co", "option", (int64_t)i);
    acc_xml_w_el_time(w, "co", "Start", o->start);
    acc_xml_w_el_time(w, "co", "End", o->end);
    /* The option's own placement, but the held one shows its reservations. */
    bool held = (int)i == q->held_option && q->state == ACC_QUOTE_HELD;
    bool own = o->n_comps && !held;
    const struct acc_alloc_component *comps = own ? o->comps : q->comps;
    size_t n_comps = own ? o->n_comps : q->n_comps, n_links = own ? o->n_links : q->n_links;
    const struct acc_alloc_link *links = own ? o->links : q->links;
    for (size_t k = 0; k < n_comps; k++) {
        const struct acc_alloc_component *c = &comps[k];
        acc_xml_w_start(w, "co", "Component");
        acc_xml_w_attr(w, "co", "name", c->name);
        acc_xml_w_el(w, "co", "Site", c->site);
        acc_xml_w_el_i64(w, "co", "Nodes", c->nodes);
        if (held)
            acc_xml_w_el(w, "co", "Reservation", c->reservation);
        acc_xml_w_end(w);
    }
    for (size_t k = 0; k < n_links; k++) {
        const struct acc_alloc_link *l = &links[k];
        acc_xml_w_start(w, "co", "Link");
        acc_xml_w_attr(w, "co", "name", l->name);
        acc_xml_w_el(w, "co", "From", l->site_a);
        acc_xml_w_el(w, "co", "To", l->site_b);
        acc_xml_w_el(w, "co", "Via", l->link);
        acc_xml_w_el_i64(w, "co", "Bandwidth", l->bandwidth);
        acc_xml_w_end(w);
    }
    acc_xml_w_el(w, "co", "Why", o->why);
    acc_xml_w_end(w);
}

acc_err acc_xml_quote(const struct acc_quote *q, struct acc_buf *out, struct acc_error *err)
{
    struct acc_xml_writer w;
    acc_xml_w_open(&w);
    acc_xml_w_start_root(&w, "co", "Quote");
    acc_xml_w_attr(&w, "co", "id", q->id);
    acc_xml_w_el(&w, "co", "State", acc_quote_state_name(q->state));
    acc_xml_w_el(&w, "co", "Initiator", q->initiator);
    acc_xml_w_el_time(&w, "co", "Created", q->created);
    if (q->hold_until && (q->state == ACC_QUOTE_HELD || q->state == ACC_QUOTE_ADVISORY))
        acc_xml_w_el_time(&w, "co", q->state == ACC_QUOTE_HELD ? "HeldUntil" : "OpenUntil",
                          q->hold_until);
    if (q->held_option >= 0)
        acc_xml_w_el_i64(&w, "co", "HeldOption", q->held_option);
    if (q->agreement[0])
        acc_xml_w_el(&w, "co", "Agreement", q->agreement);
    if (q->reason)
        acc_xml_w_el(&w, "co", "Reason", q->reason);
    for (size_t i = 0; i < q->n_options; i++)
        option(&w, q, i);
    acc_xml_w_end(&w);
    return acc_xml_w_close(&w, out, err);
}
