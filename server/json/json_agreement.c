/* SPDX-License-Identifier: Apache-2.0 */
/* json_agreement.c - the agreement (GET /agreements/{id}, the reply to a
 * modification), the list of agreements and the negotiation trace (GET
 * /agreements/{id}/trace) as JSON (docs/documents.md). */
#include "json.h"

#include <string.h>

#include "json_writer.h"

void acc_json_agreement(const struct acc_agreement *a, struct acc_buf *out)
{
    struct jw j = {.out = out};

    jw_open_obj(&j);
    jw_str(&j, "id", a->id);
    jw_str(&j, "name", a->name);
    jw_str(&j, "initiator", a->initiator);
    jw_str(&j, "state", acc_state_name(a->state));
    jw_time(&j, "created", a->created);
    jw_time(&j, "start", a->start);
    jw_time(&j, "end", a->end);
    jw_time(&j, "earliest", a->earliest);
    jw_time(&j, "deadline", a->deadline);
    if (a->duration > 0)
        jw_duration(&j, "duration", a->duration);
    jw_str(&j, "strategy", acc_strategy_name(a->strategy));
    jw_str(&j, "launch", acc_launch_name(a->launch));
    jw_i64(&j, "rounds", a->rounds);
    jw_i64(&j, "rollbacks", a->rollbacks);
    if (a->version) {
        jw_i64(&j, "version", a->version);
        jw_i64(&j, "versions", a->versions > a->version ? a->versions : a->version);
        jw_str(&j, "change", a->change);
    }
    jw_str(&j, "faultCode", a->fault_code);
    jw_open_arr(&j, "reasons");
    jw_split(&j, a->reason, '\n');
    jw_close_arr(&j);

    jw_open_arr(&j, "components");
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        jw_elem_obj(&j);
        jw_str(&j, "name", c->name);
        jw_str(&j, "site", c->site);
        jw_i64(&j, "nodes", c->nodes);
        jw_i64(&j, "processesPerNode", c->ppn);
        jw_str(&j, "reservation", c->reservation);
        jw_str(&j, "localId", c->local_id);
        jw_open_arr(&j, "nodeNames");
        jw_split(&j, c->node_names, ',');
        jw_close_arr(&j);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);

    jw_open_arr(&j, "links");
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        jw_elem_obj(&j);
        jw_str(&j, "name", l->name);
        jw_str(&j, "between", l->from);
        jw_str(&j, "and", l->to);
        jw_str(&j, "siteA", l->site_a);
        jw_str(&j, "siteB", l->site_b);
        jw_str(&j, "link", l->link);
        jw_i64(&j, "bandwidth", l->bandwidth);
        jw_str(&j, "reservation", l->reservation);
        jw_str(&j, "localId", l->local_id);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}

/* What a listed agreement holds of each site (nodes) and each configured
 * link (Mbit/s), summed over its components and link terms: the web page's
 * timeline draws it. */
static void list_usage(struct jw *j, const struct acc_agreement *a)
{
    jw_open_arr(j, "usage");
    for (size_t k = 0; k < a->n_comps; k++) {
        const char *site = a->comps[k].site;
        bool seen = !site;
        for (size_t m = 0; m < k && !seen; m++)
            seen = a->comps[m].site && strcmp(a->comps[m].site, site) == 0;
        if (seen)
            continue;
        int64_t nodes = 0;
        for (size_t m = k; m < a->n_comps; m++)
            if (a->comps[m].site && strcmp(a->comps[m].site, site) == 0)
                nodes += a->comps[m].nodes;
        jw_elem_obj(j);
        jw_str(j, "site", site);
        jw_i64(j, "nodes", nodes);
        jw_close_obj(j);
    }
    for (size_t k = 0; k < a->n_links; k++) {
        const char *link = a->links[k].link;
        bool seen = !link;
        for (size_t m = 0; m < k && !seen; m++)
            seen = a->links[m].link && strcmp(a->links[m].link, link) == 0;
        if (seen)
            continue;
        int64_t bw = 0;
        for (size_t m = k; m < a->n_links; m++)
            if (a->links[m].link && strcmp(a->links[m].link, link) == 0)
                bw += a->links[m].bandwidth;
        jw_elem_obj(j);
        jw_str(j, "link", link);
        jw_i64(j, "bandwidth", bw);
        jw_close_obj(j);
    }
    jw_close_arr(j);
}

void acc_json_list(const struct acc_agreement_list *l, struct acc_buf *out)
{
    struct jw j = {.out = out};

    jw_open_obj(&j);
    jw_i64(&j, "count", (int64_t)l->n);
    jw_i64(&j, "total", (int64_t)l->total);
    jw_open_arr(&j, "agreements");
    for (size_t i = 0; i < l->n; i++) {
        const struct acc_agreement *a = &l->v[i];
        jw_elem_obj(&j);
        jw_str(&j, "id", a->id);
        jw_str(&j, "name", a->name);
        jw_str(&j, "initiator", a->initiator);
        jw_str(&j, "state", acc_state_name(a->state));
        jw_time(&j, "created", a->created);
        jw_time(&j, "start", a->start);
        jw_time(&j, "end", a->end);
        jw_open_arr(&j, "sites");
        for (size_t k = 0; k < a->n_comps; k++) {
            const char *site = a->comps[k].site;
            bool seen = !site;
            for (size_t m = 0; m < k && !seen; m++)
                seen = a->comps[m].site && strcmp(a->comps[m].site, site) == 0;
            if (!seen)
                jw_elem_str(&j, site);
        }
        jw_close_arr(&j);
        list_usage(&j, a);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}

void acc_json_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out)
{
    struct jw j = {.out = out};

    jw_open_obj(&j);
    jw_str(&j, "id", a->id);
    jw_str(&j, "strategy", acc_strategy_name(a->strategy));
    jw_i64(&j, "rounds", a->rounds);
    jw_i64(&j, "rollbacks", a->rollbacks);
    jw_open_arr(&j, "events");
    for (size_t i = 0; t && i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        jw_elem_obj(&j);
        jw_i64(&j, "seq", e->seq);
        jw_i64(&j, "round", e->round);
        jw_str(&j, "kind", acc_trace_kind_name(e->kind));
        jw_str(&j, "status", acc_err_symbol(e->status));
        jw_str(&j, "target", e->target);
        jw_str(&j, "adapter", e->adapter);
        if (e->amount > 0)
            jw_i64(&j, "amount", e->amount);
        jw_time(&j, "from", e->t_from);
        jw_time(&j, "until", e->t_until);
        jw_time(&j, "result", e->t_result);
        jw_i64(&j, "elapsedMicros", e->elapsed_us);
        jw_str(&j, "detail", e->detail);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}
