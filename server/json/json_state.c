/* SPDX-License-Identifier: Apache-2.0 */
/* json_state.c - the agreement's state (GET /agreements/{id}/state: the
 * terms, each reserved link's guarantee, the job) and the job alone (GET
 * /agreements/{id}/launch) as JSON (docs/documents.md). */
#include "json.h"

#include <string.h>

#include "json_writer.h"

static const char *guarantee_state(const char *s)
{
    if (s && (strcmp(s, "Fulfilled") == 0 || strcmp(s, "Violated") == 0))
        return s;
    return "NotDetermined";
}

/* What the network adapter saw of a reserved link on the wire. */
static void link_guarantee(struct jw *j, const struct acc_guarantee_view *g)
{
    jw_str(j, "link", g->link);
    if (g->measured) {
        jw_bool(j, "provisioned", g->provisioned);
        jw_bool(j, "active", g->active);
        if (g->activated)
            jw_time(j, "activated", g->activated);
        if (g->violated_at)
            jw_time(j, "violatedAt", g->violated_at);
    }
    if (g->reason)
        jw_str(j, "reason", g->reason);
    if (g->measured) {
        jw_i64(j, "bytes", (int64_t)g->bytes);
        jw_i64(j, "packets", (int64_t)g->packets);
        jw_i64(j, "drops", (int64_t)g->drops);
    }
}

static void job(struct jw *j, const struct acc_run *r)
{
    jw_str(j, "agreementId", r->agreement);
    jw_str(j, "style", acc_launch_name(r->style));
    jw_str(j, "state", acc_run_state_name(r->state));
    if (r->started)
        jw_time(j, "started", r->started);
    if (r->ended)
        jw_time(j, "ended", r->ended);
    if (r->exit_status >= 0)
        jw_i64(j, "exitStatus", r->exit_status);
    if (r->signal)
        jw_i64(j, "signal", r->signal);
    if (r->reason)
        jw_str(j, "reason", r->reason);
    if (r->directory)
        jw_str(j, "directory", r->directory);
    if (r->command)
        jw_str(j, "command", r->command);
    if (r->output_total >= 0)
        jw_i64(j, "outputBytes", r->output_total);
}

void acc_json_run(const struct acc_run *r, struct acc_buf *out)
{
    struct jw j = {.out = out};
    jw_open_obj(&j);
    job(&j, r);
    jw_close_obj(&j);
    jw_end_doc(&j);
}

void acc_json_state(const struct acc_state_view *v, struct acc_buf *out)
{
    struct jw j = {.out = out};

    jw_open_obj(&j);
    if (v->agreement) {
        jw_str(&j, "id", v->agreement->id);
        jw_str(&j, "state", acc_state_name(v->agreement->state));
    }
    jw_open_arr(&j, "serviceTerms");
    for (size_t i = 0; i < v->n_terms; i++) {
        jw_elem_obj(&j);
        jw_str(&j, "name", v->terms[i].name);
        jw_str(&j, "state", acc_term_state_name(v->terms[i].state));
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_open_arr(&j, "guaranteeTerms");
    for (size_t i = 0; i < v->n_guarantees; i++) {
        jw_elem_obj(&j);
        jw_str(&j, "name", v->guarantees[i].name);
        jw_str(&j, "state", guarantee_state(v->guarantees[i].state));
        if (v->guarantees[i].link)
            link_guarantee(&j, &v->guarantees[i]);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    if (v->run) {
        jw_member_obj(&j, "job");
        job(&j, v->run);
        jw_close_obj(&j);
    }
    jw_close_obj(&j);
    jw_end_doc(&j);
}
