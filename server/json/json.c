/* json.c - a small JSON writer for the views in json.h.
 *
 * No library: the shapes are fixed and flat, so a writer that tracks only
 * "is a comma due" suffices.  Strings are escaped here and nowhere else:
 * quotes, backslashes and every control character (\u00XX when it has no
 * short form); bytes that are not UTF-8 become U+FFFD, so the output is
 * always valid UTF-8 JSON.  Absent values (NULL strings, zero times) are
 * left out; arrays are always present, if empty.
 */
#include "json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/common/utf8.h"

/* ------------------------------------------------------------- strings */

/* Length of the valid multi-byte UTF-8 character at s, 0 if invalid or one
 * JSON should not carry raw. */
static size_t utf8_len(const unsigned char *s)
{
    uint32_t c;
    size_t n = acc_utf8_decode(s, &c);
    /* U+2028 and U+2029 are valid JSON but end lines in JavaScript. */
    if (n < 2 || c == 0x2028 || c == 0x2029)
        return 0;
    return n;
}

void acc_json_string(struct acc_buf *out, const char *s)
{
    if (!s) {
        acc_buf_puts(out, "null");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    acc_buf_putc(out, '"');
    while (*p) {
        /* Copy the longest run that needs no escaping in one go. */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            acc_buf_append(out, run, (size_t)(p - run));
        if (!*p)
            break;
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            acc_buf_putc(out, '\\');
            acc_buf_putc(out, (char)c);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\b':
                acc_buf_puts(out, "\\b");
                break;
            case '\f':
                acc_buf_puts(out, "\\f");
                break;
            case '\n':
                acc_buf_puts(out, "\\n");
                break;
            case '\r':
                acc_buf_puts(out, "\\r");
                break;
            case '\t':
                acc_buf_puts(out, "\\t");
                break;
            default:
                acc_buf_printf(out, "\\u%04x", c);
            }
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n) {
                acc_buf_append(out, p, n);
                p += n;
            } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
                acc_buf_printf(out, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
                p += 3;
            } else {
                acc_buf_puts(out, "\\ufffd");
                p++;
            }
        }
    }
    acc_buf_putc(out, '"');
}

/* -------------------------------------------------------------- writer */

/* Where the next member or element goes: whether a comma is due. */
struct jw {
    struct acc_buf *out;
    bool comma;
};

static void sep(struct jw *j)
{
    if (j->comma)
        acc_buf_putc(j->out, ',');
    j->comma = true;
}

static void key(struct jw *j, const char *k)
{
    sep(j);
    acc_json_string(j->out, k);
    acc_buf_putc(j->out, ':');
}

static void open_obj(struct jw *j)
{
    acc_buf_putc(j->out, '{');
    j->comma = false;
}

static void close_obj(struct jw *j)
{
    acc_buf_putc(j->out, '}');
    j->comma = true;
}

static void open_arr(struct jw *j, const char *k)
{
    key(j, k);
    acc_buf_putc(j->out, '[');
    j->comma = false;
}

static void close_arr(struct jw *j)
{
    acc_buf_putc(j->out, ']');
    j->comma = true;
}

/* An object as the value of member k. */
static void open_member_obj(struct jw *j, const char *k)
{
    key(j, k);
    open_obj(j);
}

/* An object as an array element. */
static void elem_obj(struct jw *j)
{
    sep(j);
    open_obj(j);
}

static void m_str(struct jw *j, const char *k, const char *v)
{
    if (!v)
        return;
    key(j, k);
    acc_json_string(j->out, v);
}

static void m_i64(struct jw *j, const char *k, int64_t v)
{
    key(j, k);
    acc_buf_printf(j->out, "%" PRId64, v);
}

static void m_bool(struct jw *j, const char *k, bool v)
{
    key(j, k);
    acc_buf_puts(j->out, v ? "true" : "false");
}

/* A time, left out when 0 (not set). */
static void m_time(struct jw *j, const char *k, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    if (!t)
        return;
    acc_time_format(t, s);
    m_str(j, k, s);
}

static void m_duration(struct jw *j, const char *k, int64_t secs)
{
    char s[ACC_DURATION_STRLEN];
    acc_duration_format(secs, s);
    m_str(j, k, s);
}

static void e_str(struct jw *j, const char *v)
{
    sep(j);
    acc_json_string(j->out, v);
}

/* The non-empty pieces of s between separators, trimmed, as strings. */
static void e_split(struct jw *j, const char *s, char separator)
{
    while (s && *s) {
        const char *e = strchr(s, separator);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        size_t a = 0;
        while (a < n && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
            a++;
        while (n > a && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
            n--;
        if (n > a) {
            char piece[1024];
            if (n - a < sizeof piece) {
                memcpy(piece, s + a, n - a);
                piece[n - a] = '\0';
                e_str(j, piece);
            } else {
                /* Longer than any reason Accord writes: keep it whole. */
                struct acc_buf tmp = ACC_BUF_INIT;
                acc_buf_append(&tmp, s + a, n - a);
                const char *str = acc_buf_str(&tmp);
                if (str)
                    e_str(j, str);
                else
                    j->out->failed = true;
                acc_buf_release(&tmp);
            }
        }
        s = e ? e + 1 : NULL;
    }
}

static void end_doc(struct jw *j)
{
    acc_buf_putc(j->out, '\n');
}

/* ----------------------------------------------------------- documents */

void acc_json_agreement(const struct acc_agreement *a, struct acc_buf *out)
{
    struct jw j = {.out = out};

    open_obj(&j);
    m_str(&j, "id", a->id);
    m_str(&j, "name", a->name);
    m_str(&j, "initiator", a->initiator);
    m_str(&j, "state", acc_state_name(a->state));
    m_time(&j, "created", a->created);
    m_time(&j, "start", a->start);
    m_time(&j, "end", a->end);
    m_time(&j, "earliest", a->earliest);
    m_time(&j, "deadline", a->deadline);
    if (a->duration > 0)
        m_duration(&j, "duration", a->duration);
    m_str(&j, "strategy", acc_strategy_name(a->strategy));
    m_str(&j, "launch", acc_launch_name(a->launch));
    m_i64(&j, "rounds", a->rounds);
    m_i64(&j, "rollbacks", a->rollbacks);
    if (a->version) {
        m_i64(&j, "version", a->version);
        m_i64(&j, "versions", a->versions > a->version ? a->versions : a->version);
        m_str(&j, "change", a->change);
    }
    m_str(&j, "faultCode", a->fault_code);
    open_arr(&j, "reasons");
    e_split(&j, a->reason, '\n');
    close_arr(&j);

    open_arr(&j, "components");
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        elem_obj(&j);
        m_str(&j, "name", c->name);
        m_str(&j, "site", c->site);
        m_i64(&j, "nodes", c->nodes);
        m_i64(&j, "processesPerNode", c->ppn);
        m_str(&j, "reservation", c->reservation);
        m_str(&j, "localId", c->local_id);
        open_arr(&j, "nodeNames");
        e_split(&j, c->node_names, ',');
        close_arr(&j);
        close_obj(&j);
    }
    close_arr(&j);

    open_arr(&j, "links");
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        elem_obj(&j);
        m_str(&j, "name", l->name);
        m_str(&j, "between", l->from);
        m_str(&j, "and", l->to);
        m_str(&j, "siteA", l->site_a);
        m_str(&j, "siteB", l->site_b);
        m_str(&j, "link", l->link);
        m_i64(&j, "bandwidth", l->bandwidth);
        m_str(&j, "reservation", l->reservation);
        m_str(&j, "localId", l->local_id);
        close_obj(&j);
    }
    close_arr(&j);
    close_obj(&j);
    end_doc(&j);
}

static const char *guarantee_state(const char *s)
{
    if (s && (strcmp(s, "Fulfilled") == 0 || strcmp(s, "Violated") == 0))
        return s;
    return "NotDetermined";
}

/* What the network adapter saw of a reserved link on the wire. */
static void link_guarantee(struct jw *j, const struct acc_guarantee_view *g)
{
    m_str(j, "link", g->link);
    if (g->measured) {
        m_bool(j, "provisioned", g->provisioned);
        m_bool(j, "active", g->active);
        if (g->activated)
            m_time(j, "activated", g->activated);
        if (g->violated_at)
            m_time(j, "violatedAt", g->violated_at);
    }
    if (g->reason)
        m_str(j, "reason", g->reason);
    if (g->measured) {
        m_i64(j, "bytes", (int64_t)g->bytes);
        m_i64(j, "packets", (int64_t)g->packets);
        m_i64(j, "drops", (int64_t)g->drops);
    }
}

static void job(struct jw *j, const struct acc_run *r)
{
    m_str(j, "agreementId", r->agreement);
    m_str(j, "style", acc_launch_name(r->style));
    m_str(j, "state", acc_run_state_name(r->state));
    if (r->started)
        m_time(j, "started", r->started);
    if (r->ended)
        m_time(j, "ended", r->ended);
    if (r->exit_status >= 0)
        m_i64(j, "exitStatus", r->exit_status);
    if (r->signal)
        m_i64(j, "signal", r->signal);
    if (r->reason)
        m_str(j, "reason", r->reason);
    if (r->directory)
        m_str(j, "directory", r->directory);
    if (r->command)
        m_str(j, "command", r->command);
    if (r->output_total >= 0)
        m_i64(j, "outputBytes", r->output_total);
}

void acc_json_run(const struct acc_run *r, struct acc_buf *out)
{
    struct jw j = {.out = out};
    open_obj(&j);
    job(&j, r);
    close_obj(&j);
    end_doc(&j);
}

void acc_json_state(const struct acc_state_view *v, struct acc_buf *out)
{
    struct jw j = {.out = out};

    open_obj(&j);
    if (v->agreement) {
        m_str(&j, "id", v->agreement->id);
        m_str(&j, "state", acc_state_name(v->agreement->state));
    }
    open_arr(&j, "serviceTerms");
    for (size_t i = 0; i < v->n_terms; i++) {
        elem_obj(&j);
        m_str(&j, "name", v->terms[i].name);
        m_str(&j, "state", acc_term_state_name(v->terms[i].state));
        close_obj(&j);
    }
    close_arr(&j);
    open_arr(&j, "guaranteeTerms");
    for (size_t i = 0; i < v->n_guarantees; i++) {
        elem_obj(&j);
        m_str(&j, "name", v->guarantees[i].name);
        m_str(&j, "state", guarantee_state(v->guarantees[i].state));
        if (v->guarantees[i].link)
            link_guarantee(&j, &v->guarantees[i]);
        close_obj(&j);
    }
    close_arr(&j);
    if (v->run) {
        open_member_obj(&j, "job");
        job(&j, v->run);
        close_obj(&j);
    }
    close_obj(&j);
    end_doc(&j);
}

void acc_json_list(const struct acc_agreement_list *l, struct acc_buf *out)
{
    struct jw j = {.out = out};

    open_obj(&j);
    m_i64(&j, "count", (int64_t)l->n);
    open_arr(&j, "agreements");
    for (size_t i = 0; i < l->n; i++) {
        const struct acc_agreement *a = &l->v[i];
        elem_obj(&j);
        m_str(&j, "id", a->id);
        m_str(&j, "name", a->name);
        m_str(&j, "initiator", a->initiator);
        m_str(&j, "state", acc_state_name(a->state));
        m_time(&j, "created", a->created);
        m_time(&j, "start", a->start);
        m_time(&j, "end", a->end);
        open_arr(&j, "sites");
        for (size_t k = 0; k < a->n_comps; k++) {
            const char *site = a->comps[k].site;
            bool seen = !site;
            for (size_t m = 0; m < k && !seen; m++)
                seen = a->comps[m].site && strcmp(a->comps[m].site, site) == 0;
            if (!seen)
                e_str(&j, site);
        }
        close_arr(&j);
        close_obj(&j);
    }
    close_arr(&j);
    close_obj(&j);
    end_doc(&j);
}

void acc_json_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out)
{
    struct jw j = {.out = out};

    open_obj(&j);
    m_str(&j, "id", a->id);
    m_str(&j, "strategy", acc_strategy_name(a->strategy));
    m_i64(&j, "rounds", a->rounds);
    m_i64(&j, "rollbacks", a->rollbacks);
    open_arr(&j, "events");
    for (size_t i = 0; t && i < t->n; i++) {
        const struct acc_trace_event *e = &t->v[i];
        elem_obj(&j);
        m_i64(&j, "seq", e->seq);
        m_i64(&j, "round", e->round);
        m_str(&j, "kind", acc_trace_kind_name(e->kind));
        m_str(&j, "status", acc_err_symbol(e->status));
        m_str(&j, "target", e->target);
        m_str(&j, "adapter", e->adapter);
        if (e->amount > 0)
            m_i64(&j, "amount", e->amount);
        m_time(&j, "from", e->t_from);
        m_time(&j, "until", e->t_until);
        m_time(&j, "result", e->t_result);
        m_i64(&j, "elapsedMicros", e->elapsed_us);
        m_str(&j, "detail", e->detail);
        close_obj(&j);
    }
    close_arr(&j);
    close_obj(&j);
    end_doc(&j);
}

static void site_members(struct jw *j, const struct acc_site_info *s, bool nodes)
{
    m_str(j, "name", s->name);
    m_str(j, "adapter", s->adapter);
    if (nodes)
        m_i64(j, "nodes", s->nodes);
    m_bool(j, "up", s->up);
    m_str(j, "health", s->health);
    m_i64(j, "calls", (int64_t)s->calls);
    m_i64(j, "failures", (int64_t)s->failures);
    m_i64(j, "rttUs", s->rtt_us);
    m_str(j, "endpoint", s->endpoint && s->endpoint[0] ? s->endpoint : NULL);
}

static void link_obj(struct jw *j, const struct acc_link_info *l)
{
    elem_obj(j);
    m_str(j, "name", l->name);
    m_str(j, "siteA", l->site_a);
    m_str(j, "siteB", l->site_b);
    m_str(j, "network", l->network);
    m_str(j, "adapter", l->adapter);
    m_i64(j, "capacity", l->capacity);
    m_bool(j, "up", l->up);
    close_obj(j);
}

void acc_json_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out)
{
    struct jw j = {.out = out};

    if (only_site) {
        const struct acc_site_info *s = NULL;
        for (size_t i = 0; i < v->n_sites && !s; i++)
            if (v->sites[i].name && strcmp(v->sites[i].name, only_site) == 0)
                s = &v->sites[i];
        if (!s) {
            /* The caller checks existence first; still answer with JSON. */
            acc_json_fault(ACC_ERR_NOT_FOUND, "no such site", NULL, out);
            return;
        }
        open_obj(&j);
        site_members(&j, s, true);
        open_arr(&j, "links");
        for (size_t i = 0; i < v->n_links; i++) {
            const struct acc_link_info *l = &v->links[i];
            if ((l->site_a && strcmp(l->site_a, only_site) == 0) ||
                (l->site_b && strcmp(l->site_b, only_site) == 0))
                link_obj(&j, l);
        }
        close_arr(&j);
        close_obj(&j);
        end_doc(&j);
        return;
    }

    open_obj(&j);
    open_arr(&j, "sites");
    for (size_t i = 0; i < v->n_sites; i++) {
        elem_obj(&j);
        site_members(&j, &v->sites[i], true);
        close_obj(&j);
    }
    close_arr(&j);
    open_arr(&j, "networks");
    for (size_t i = 0; i < v->n_networks; i++) {
        elem_obj(&j);
        site_members(&j, &v->networks[i], false);
        close_obj(&j);
    }
    close_arr(&j);
    open_arr(&j, "links");
    for (size_t i = 0; i < v->n_links; i++)
        link_obj(&j, &v->links[i]);
    close_arr(&j);
    close_obj(&j);
    end_doc(&j);
}

void acc_json_preview(const struct acc_preview_view *v, struct acc_buf *out)
{
    struct jw j = {.out = out};

    open_obj(&j);
    m_str(&j, "site", v->site);
    m_i64(&j, "nodes", v->nodes);
    m_duration(&j, "duration", v->duration);
    m_time(&j, "from", v->from);
    m_time(&j, "until", v->until);
    m_bool(&j, "truncated", v->frames && v->frames->truncated);
    open_arr(&j, "frames");
    for (size_t i = 0; v->frames && i < v->frames->n; i++) {
        elem_obj(&j);
        m_time(&j, "start", v->frames->v[i].start);
        m_time(&j, "end", v->frames->v[i].end);
        close_obj(&j);
    }
    close_arr(&j);
    close_obj(&j);
    end_doc(&j);
}

void acc_json_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out)
{
    struct jw j = {.out = out};

    if (!msg || !*msg)
        msg = acc_err_text(code);
    const char *nl = strchr(msg, '\n');

    open_obj(&j);
    m_str(&j, "code", acc_err_symbol(code));
    m_i64(&j, "status", acc_err_http_status(code));
    key(&j, "message");
    /* The first line only: the others are the details. */
    if (nl == msg) {
        acc_json_string(out, acc_err_text(code));
    } else if (nl) {
        struct acc_buf first = ACC_BUF_INIT;
        acc_buf_append(&first, msg, (size_t)(nl - msg));
        const char *s = acc_buf_str(&first);
        acc_json_string(out, s ? s : "");
        acc_buf_release(&first);
    } else {
        acc_json_string(out, msg);
    }
    open_arr(&j, "details");
    if (nl)
        e_split(&j, nl + 1, '\n');
    close_arr(&j);
    m_str(&j, "agreementId", agreement_id);
    close_obj(&j);
    end_doc(&j);
}
