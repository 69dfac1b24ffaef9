/* SPDX-License-Identifier: Apache-2.0 */
/* json_quote.c - the quote (POST /negotiations, GET and DELETE
 * /negotiations/{id}) as JSON: the same fields as co:Quote, camelCase
 * (docs/documents.md). */
#include "json.h"

#include "json_writer.h"

static void option(struct jw *j, const struct acc_quote *q, size_t i)
{
    const struct acc_quote_option *o = &q->options[i];
    jw_elem_obj(j);
    jw_i64(j, "option", (int64_t)i);
    jw_time_always(j, "start", o->start);
    jw_time_always(j, "end", o->end);
    /* The option's own placement, but the held one shows its reservations. */
    bool held = (int)i == q->held_option && q->state == ACC_QUOTE_HELD;
    bool own = o->n_comps && !held;
    const struct acc_alloc_component *comps = own ? o->comps : q->comps;
    size_t n_comps = own ? o->n_comps : q->n_comps, n_links = own ? o->n_links : q->n_links;
    const struct acc_alloc_link *links = own ? o->links : q->links;
    jw_open_arr(j, "components");
    for (size_t k = 0; k < n_comps; k++) {
        const struct acc_alloc_component *x = &comps[k];
        jw_elem_obj(j);
        jw_str(j, "name", x->name);
        jw_str(j, "site", x->site);
        jw_i64(j, "nodes", x->nodes);
        if (held)
            jw_str(j, "reservation", x->reservation);
        jw_close_obj(j);
    }
    jw_close_arr(j);
    jw_open_arr(j, "links");
    for (size_t k = 0; k < n_links; k++) {
        const struct acc_alloc_link *l = &links[k];
        jw_elem_obj(j);
        jw_str(j, "name", l->name);
        jw_str(j, "from", l->site_a);
        jw_str(j, "to", l->site_b);
        jw_str(j, "via", l->link);
        jw_i64(j, "bandwidth", l->bandwidth);
        jw_close_obj(j);
    }
    jw_close_arr(j);
    jw_str(j, "why", o->why);
    jw_close_obj(j);
}

void acc_json_quote(const struct acc_quote *q, struct acc_buf *out)
{
    struct jw j = {.out = out};
    jw_open_obj(&j);
    jw_str(&j, "id", q->id);
    jw_str(&j, "state", acc_quote_state_name(q->state));
    jw_str(&j, "initiator", q->initiator);
    jw_time_always(&j, "created", q->created);
    if (q->hold_until && (q->state == ACC_QUOTE_HELD || q->state == ACC_QUOTE_ADVISORY))
        jw_time_always(&j, q->state == ACC_QUOTE_HELD ? "heldUntil" : "openUntil", q->hold_until);
    if (q->held_option >= 0)
        jw_i64(&j, "heldOption", q->held_option);
    if (q->agreement[0])
        jw_str(&j, "agreement", q->agreement);
    jw_str(&j, "reason", q->reason);
    jw_open_arr(&j, "counterOffers");
    for (size_t i = 0; i < q->n_options; i++)
        option(&j, q, i);
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}
