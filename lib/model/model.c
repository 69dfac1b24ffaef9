/* SPDX-License-Identifier: Apache-2.0 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"

static const char *const state_names[ACC_STATE__COUNT] = {
    [ACC_STATE_PENDING] = "Pending",
    [ACC_STATE_OBSERVED] = "Observed",
    [ACC_STATE_REJECTED] = "Rejected",
    [ACC_STATE_COMPLETE] = "Complete",
    [ACC_STATE_TERMINATED] = "Terminated",
    [ACC_STATE_PENDING_AND_TERMINATING] = "PendingAndTerminating",
    [ACC_STATE_OBSERVED_AND_TERMINATING] = "ObservedAndTerminating",
};

const char *acc_state_name(enum acc_state s)
{
    return (unsigned)s < ACC_STATE__COUNT ? state_names[s] : "Unknown";
}

bool acc_state_parse(const char *s, enum acc_state *out)
{
    for (int i = 0; i < ACC_STATE__COUNT; i++) {
        if (strcmp(s, state_names[i]) == 0) {
            *out = (enum acc_state)i;
            return true;
        }
    }
    return false;
}

bool acc_state_is_final(enum acc_state s)
{
    return s == ACC_STATE_REJECTED || s == ACC_STATE_COMPLETE || s == ACC_STATE_TERMINATED;
}

const char *acc_term_state_name(enum acc_term_state s)
{
    static const char *const names[] = {"NotReady", "Ready", "Processing", "Completed"};
    return (unsigned)s < 4 ? names[s] : "NotReady";
}

static const char *const strategy_names[] = {"default", "intersect", "iterative"};

const char *acc_strategy_name(enum acc_strategy s)
{
    return (unsigned)s < 3 ? strategy_names[s] : "default";
}

bool acc_strategy_parse(const char *s, enum acc_strategy *out)
{
    for (int i = 1; i < 3; i++) {
        if (strcmp(s, strategy_names[i]) == 0) {
            *out = (enum acc_strategy)i;
            return true;
        }
    }
    return false;
}

static const char *const launch_names[] = {"none", "metampich", "mpich-g2"};

const char *acc_launch_name(enum acc_launch l)
{
    return (unsigned)l < 3 ? launch_names[l] : "none";
}

bool acc_launch_parse(const char *s, enum acc_launch *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, launch_names[i]) == 0) {
            *out = (enum acc_launch)i;
            return true;
        }
    }
    return false;
}

acc_err acc_executable_check(const char *exe, struct acc_error *err)
{
    const char *hint = "give an absolute path or a plain program name";
    if (!*exe)
        return acc_error_set(err, ACC_ERR_INVALID, "is empty; %s", hint);
    for (const unsigned char *p = (const unsigned char *)exe; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return acc_error_set(err, ACC_ERR_INVALID, "holds a control character; %s", hint);
    }
    if (exe[0] == '/')
        return ACC_OK;
    if (strchr(exe, '/'))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "'%.200s' is neither an absolute path nor a plain program name (a "
                             "relative path depends on where the job starts)",
                             exe);
    if (exe[0] == '-')
        return acc_error_set(err, ACC_ERR_INVALID,
                             "'%.200s' would be read by mpiexec as an option; %s", exe, hint);
    if (strcmp(exe, ":") == 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "':' is mpiexec's separator between components; %s", hint);
    if (strpbrk(exe, " \t"))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "'%.200s' holds a blank, which only an absolute path may; %s", exe,
                             hint);
    return ACC_OK;
}

void acc_frames_init(struct acc_frames *f)
{
    memset(f, 0, sizeof *f);
}

void acc_frames_release(struct acc_frames *f)
{
    free(f->v);
    acc_frames_init(f);
}

void acc_frames_reset(struct acc_frames *f)
{
    f->n = 0;
    f->truncated = false;
}

acc_err acc_frames_push(struct acc_frames *f, acc_time start, acc_time end)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct acc_frame *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return ACC_ERR_NOMEM;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n].start = start;
    f->v[f->n].end = end;
    f->n++;
    return ACC_OK;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void acc_offer_release(struct acc_offer *o)
{
    if (!o)
        return;
    free(o->name);
    free(o->initiator);
    free(o->template_name);
    free(o->policy);
    for (size_t i = 0; i < o->n_components; i++) {
        struct acc_component *c = &o->components[i];
        free(c->name);
        free(c->site);
        free(c->executable);
        free_strv(c->args, c->n_args);
    }
    free(o->components);
    for (size_t i = 0; i < o->n_links; i++)
        free(o->links[i].name);
    free(o->links);
    free_strv(o->guarantees, o->n_guarantees);
    acc_identity_release(&o->identity);
    memset(o, 0, sizeof *o);
}

void acc_agreement_release(struct acc_agreement *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->initiator);
    free(a->offer_xml);
    free(a->fault_code);
    free(a->reason);
    free(a->change);
    free(a->terms);
    free(a->guarantees);
    free(a->signature);
    free(a->client);
    acc_identity_release(&a->identity);
    for (size_t i = 0; i < a->n_comps; i++) {
        struct acc_alloc_component *c = &a->comps[i];
        free(c->name);
        free(c->site);
        free(c->reservation);
        free(c->local_id);
        free(c->node_names);
        free(c->executable);
        free_strv(c->args, c->n_args);
    }
    free(a->comps);
    for (size_t i = 0; i < a->n_links; i++) {
        struct acc_alloc_link *l = &a->links[i];
        free(l->name);
        free(l->from);
        free(l->to);
        free(l->site_a);
        free(l->site_b);
        free(l->link);
        free(l->reservation);
        free(l->local_id);
    }
    free(a->links);
    if (a->run) {
        acc_run_release(a->run);
        free(a->run);
    }
    memset(a, 0, sizeof *a);
}

void acc_agreement_list_release(struct acc_agreement_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        acc_agreement_release(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

const char *acc_resource_kind_name(enum acc_resource_kind k)
{
    return k == ACC_RES_BANDWIDTH ? "bandwidth" : "nodes";
}

static const char *const booking_names[ACC_BOOKING__COUNT] = {
    [ACC_BOOKING_INTENT] = "intent",       [ACC_BOOKING_RESERVED] = "reserved",
    [ACC_BOOKING_FAILED] = "failed",       [ACC_BOOKING_UNKNOWN] = "unknown",
    [ACC_BOOKING_CANCELLED] = "cancelled", [ACC_BOOKING_CANCEL_FAILED] = "cancel-failed",
    [ACC_BOOKING_COMMITTED] = "committed", [ACC_BOOKING_HELD] = "held",
};

const char *acc_booking_state_name(enum acc_booking_state s)
{
    return (unsigned)s < ACC_BOOKING__COUNT ? booking_names[s] : "unknown";
}

bool acc_booking_state_parse(const char *s, enum acc_booking_state *out)
{
    for (int i = 0; i < ACC_BOOKING__COUNT; i++) {
        if (strcmp(s, booking_names[i]) == 0) {
            *out = (enum acc_booking_state)i;
            return true;
        }
    }
    return false;
}

bool acc_booking_state_is_open(enum acc_booking_state s)
{
    return s == ACC_BOOKING_INTENT || s == ACC_BOOKING_RESERVED || s == ACC_BOOKING_UNKNOWN ||
           s == ACC_BOOKING_CANCEL_FAILED;
}

static const char *const trace_names[ACC_TRACE__COUNT] = {
    [ACC_TRACE_PLAN] = "plan",         [ACC_TRACE_PREVIEW] = "preview",
    [ACC_TRACE_PROPOSE] = "propose",   [ACC_TRACE_RESERVE] = "reserve",
    [ACC_TRACE_VERIFY] = "verify",     [ACC_TRACE_CANCEL] = "cancel",
    [ACC_TRACE_ROLLBACK] = "rollback", [ACC_TRACE_AGREE] = "agree",
    [ACC_TRACE_REJECT] = "reject",     [ACC_TRACE_FAIL] = "fail",
};

const char *acc_trace_kind_name(enum acc_trace_kind k)
{
    return (unsigned)k < ACC_TRACE__COUNT ? trace_names[k] : "unknown";
}

bool acc_trace_kind_parse(const char *s, enum acc_trace_kind *out)
{
    for (int i = 0; i < ACC_TRACE__COUNT; i++) {
        if (strcmp(s, trace_names[i]) == 0) {
            *out = (enum acc_trace_kind)i;
            return true;
        }
    }
    return false;
}

void acc_trace_init(struct acc_trace *t)
{
    memset(t, 0, sizeof *t);
}

void acc_trace_release(struct acc_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].target);
        free(t->v[i].adapter);
        free(t->v[i].detail);
    }
    free(t->v);
    acc_trace_init(t);
}

acc_err acc_trace_add(struct acc_trace *t, const struct acc_trace_event *ev)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct acc_trace_event *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return ACC_ERR_NOMEM;
        t->v = v;
        t->cap = cap;
    }
    struct acc_trace_event *e = &t->v[t->n];
    *e = *ev;
    e->seq = (unsigned)t->n + 1;
    e->target = acc_strdup(ev->target);
    e->adapter = acc_strdup(ev->adapter);
    e->detail = acc_strdup(ev->detail);
    if ((ev->target && !e->target) || (ev->adapter && !e->adapter) || (ev->detail && !e->detail)) {
        free(e->target);
        free(e->adapter);
        free(e->detail);
        return ACC_ERR_NOMEM;
    }
    t->n++;
    return ACC_OK;
}

static const char *const run_names[ACC_RUN__COUNT] = {
    [ACC_RUN_WAITING] = "waiting",       [ACC_RUN_RUNNING] = "running",
    [ACC_RUN_EXITED] = "exited",         [ACC_RUN_STOPPED] = "stopped",
    [ACC_RUN_TERMINATED] = "terminated", [ACC_RUN_FAILED] = "failed",
    [ACC_RUN_MISSED] = "missed",         [ACC_RUN_LOST] = "lost",
    [ACC_RUN_DESCRIBED] = "described",
};

const char *acc_run_state_name(enum acc_run_state s)
{
    return (unsigned)s < ACC_RUN__COUNT ? run_names[s] : "unknown";
}

bool acc_run_state_parse(const char *s, enum acc_run_state *out)
{
    for (unsigned i = 0; s && i < ACC_RUN__COUNT; i++) {
        if (strcmp(s, run_names[i]) == 0) {
            *out = (enum acc_run_state)i;
            return true;
        }
    }
    return false;
}

bool acc_run_state_is_final(enum acc_run_state s)
{
    return s != ACC_RUN_WAITING && s != ACC_RUN_RUNNING;
}

void acc_run_release(struct acc_run *r)
{
    if (!r)
        return;
    free(r->directory);
    free(r->command);
    free(r->batch);
    free(r->reason);
    free(r->output);
    free(r->metampich);
    free(r->rsl);
    memset(r, 0, sizeof *r);
}

static const char *const quote_names[ACC_QUOTE__COUNT] = {
    [ACC_QUOTE_ADVISORY] = "Advisory",   [ACC_QUOTE_HELD] = "Held",
    [ACC_QUOTE_COMMITTED] = "Committed", [ACC_QUOTE_EXPIRED] = "Expired",
    [ACC_QUOTE_RELEASED] = "Released",   [ACC_QUOTE_REJECTED] = "Rejected",
};

const char *acc_quote_state_name(enum acc_quote_state s)
{
    return (unsigned)s < ACC_QUOTE__COUNT ? quote_names[s] : "Unknown";
}

bool acc_quote_state_parse(const char *s, enum acc_quote_state *out)
{
    for (int i = 0; i < ACC_QUOTE__COUNT; i++) {
        if (strcmp(s, quote_names[i]) == 0) {
            *out = (enum acc_quote_state)i;
            return true;
        }
    }
    return false;
}

void acc_quote_release(struct acc_quote *q)
{
    struct acc_agreement a = {0};
    a.comps = q->comps;
    a.n_comps = q->n_comps;
    a.links = q->links;
    a.n_links = q->n_links;
    a.offer_xml = q->offer_xml;
    a.reason = q->reason;
    a.initiator = q->initiator;
    a.client = q->client;
    acc_agreement_release(&a);
    for (size_t i = 0; i < q->n_options; i++) {
        struct acc_agreement oa = {0};
        oa.comps = q->options[i].comps;
        oa.n_comps = q->options[i].n_comps;
        oa.links = q->options[i].links;
        oa.n_links = q->options[i].n_links;
        acc_agreement_release(&oa);
        free(q->options[i].why);
    }
    free(q->options);
    memset(q, 0, sizeof *q);
    q->held_option = -1;
}
