/* SPDX-License-Identifier: Apache-2.0 */
/* proto_write.c - the writers of every protocol document.  They write what
 * they are given; values that XML cannot carry are replaced (see
 * acc_proto_w_esc), so a document is always well-formed. */
#include <inttypes.h>
#include <string.h>

#include "../common/utf8.h"
#include "proto_internal.h"

/* ---------------------------------------------------------- primitives */

const char *acc_proto_kind_name(enum acc_resource_kind k)
{
    return k == ACC_RES_BANDWIDTH ? "bandwidth" : "nodes";
}

void acc_proto_w_root(struct acc_buf *b, const char *name)
{
    acc_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s xmlns=\"%s\"", name,
                   ACC_PROTO_NS);
}

void acc_proto_w_esc(struct acc_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t cp;
        size_t n = acc_utf8_decode(p, &cp);
        if (n == 0) { /* invalid UTF-8 */
            acc_buf_putc(b, '?');
            p++;
            continue;
        }
        switch (cp) {
        case '&':
            acc_buf_puts(b, "&amp;");
            break;
        case '<':
            acc_buf_puts(b, "&lt;");
            break;
        case '>':
            acc_buf_puts(b, "&gt;");
            break;
        case '"':
            acc_buf_puts(b, "&quot;");
            break;
        case '\t':
            acc_buf_puts(b, "&#9;");
            break;
        case '\n':
            acc_buf_puts(b, "&#10;");
            break;
        case '\r':
            acc_buf_puts(b, "&#13;");
            break;
        default:
            if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF)
                acc_buf_putc(b, '?'); /* XML 1.0 has no such character */
            else
                acc_buf_append(b, p, n);
        }
        p += n;
    }
}

void acc_proto_w_attr(struct acc_buf *b, const char *name, const char *value)
{
    if (!value)
        return;
    acc_buf_printf(b, " %s=\"", name);
    acc_proto_w_esc(b, value);
    acc_buf_putc(b, '"');
}

void acc_proto_w_attr_i64(struct acc_buf *b, const char *name, int64_t v)
{
    acc_buf_printf(b, " %s=\"%" PRId64 "\"", name, v);
}

void acc_proto_w_attr_time(struct acc_buf *b, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    acc_buf_printf(b, " %s=\"%s\"", name, s);
}

void acc_proto_w_el(struct acc_buf *b, const char *name, const char *text)
{
    if (!text)
        return;
    acc_buf_printf(b, "<%s>", name);
    acc_proto_w_esc(b, text);
    acc_buf_printf(b, "</%s>", name);
}

void acc_proto_w_el_time(struct acc_buf *b, const char *name, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    acc_buf_printf(b, "<%s>%s</%s>", name, s, name);
}

void acc_proto_w_el_duration(struct acc_buf *b, const char *name, int64_t secs)
{
    char s[ACC_DURATION_STRLEN];
    acc_duration_format(secs, s);
    acc_buf_printf(b, "<%s>%s</%s>", name, s, name);
}

void acc_proto_w_el_u64(struct acc_buf *b, const char *name, uint64_t v)
{
    acc_buf_printf(b, "<%s>%" PRIu64 "</%s>", name, v, name);
}

static void w_resource(struct acc_buf *b, enum acc_resource_kind kind, const char *name,
                       const char *amount_attr, int64_t amount)
{
    acc_buf_puts(b, "<Resource");
    acc_proto_w_attr(b, "kind", acc_proto_kind_name(kind));
    acc_proto_w_attr(b, "name", name ? name : "");
    acc_proto_w_attr_i64(b, amount_attr, amount);
    acc_buf_puts(b, "/>");
}

static void w_replacing(struct acc_buf *b, const char *old_key)
{
    if (!old_key || !old_key[0])
        return;
    acc_buf_puts(b, "<Replacing");
    acc_proto_w_attr(b, "key", old_key);
    acc_buf_puts(b, "/>");
}

/* ------------------------------------------------------------ documents */

void acc_proto_write_preview(const struct acc_proto_preview *p, struct acc_buf *out)
{
    acc_proto_w_root(out, "Preview");
    acc_buf_puts(out, ">");
    w_resource(out, p->kind, p->resource, "amount", p->amount);
    acc_proto_w_el_time(out, "From", p->from);
    acc_proto_w_el_time(out, "Until", p->until);
    acc_proto_w_el_duration(out, "Duration", p->duration);
    w_replacing(out, p->old_key);
    acc_proto_w_identity(out, &p->identity);
    acc_buf_puts(out, "</Preview>\n");
}

void acc_proto_write_frames(const struct acc_frames *f, struct acc_buf *out)
{
    size_t n = f->n > ACC_PROTO_MAX_FRAMES ? ACC_PROTO_MAX_FRAMES : f->n;
    bool truncated = f->truncated || n < f->n;

    acc_proto_w_root(out, "Frames");
    acc_proto_w_attr(out, "truncated", truncated ? "true" : "false");
    acc_buf_puts(out, ">");
    for (size_t i = 0; i < n; i++) {
        acc_buf_puts(out, "<Frame");
        acc_proto_w_attr_time(out, "start", f->v[i].start);
        acc_proto_w_attr_time(out, "end", f->v[i].end);
        acc_buf_puts(out, "/>");
    }
    acc_buf_puts(out, "</Frames>\n");
}

void acc_proto_write_reserve(const struct acc_proto_reserve *r, struct acc_buf *out)
{
    acc_proto_w_root(out, "Reserve");
    acc_buf_puts(out, ">");
    w_resource(out, r->kind, r->resource, "amount", r->amount);
    acc_proto_w_el_time(out, "Start", r->start);
    acc_proto_w_el_duration(out, "Duration", r->duration);
    w_replacing(out, r->old_key);
    acc_proto_w_identity(out, &r->identity);
    acc_buf_puts(out, "</Reserve>\n");
}

void acc_proto_write_reservation(const char *key, enum acc_resource_kind kind, const char *resource,
                                 const struct acc_reservation *r, struct acc_buf *out)
{
    acc_proto_w_root(out, "Reservation");
    acc_proto_w_attr(out, "key", key ? key : "");
    acc_proto_w_attr(out, "localId", r->local_id);
    acc_proto_w_attr(out, "state", "Observed");
    acc_buf_puts(out, ">");
    w_resource(out, kind, resource, "amount", r->amount);
    acc_proto_w_el_time(out, "Start", r->start);
    acc_proto_w_el_time(out, "End", r->end);
    if (r->nodes && r->nodes[0])
        acc_proto_w_el(out, "Nodes", r->nodes);
    acc_buf_puts(out, "</Reservation>\n");
}

static void w_side(struct acc_buf *b, const char *name, const char *site, const char *const *addrs,
                   size_t n)
{
    acc_buf_printf(b, "<%s", name);
    acc_proto_w_attr(b, "site", site ? site : "");
    acc_buf_puts(b, ">");
    for (size_t i = 0; i < n; i++)
        acc_proto_w_el(b, "Address", addrs[i] ? addrs[i] : "");
    acc_buf_printf(b, "</%s>", name);
}

void acc_proto_write_flow(const struct acc_flow *f, struct acc_buf *out)
{
    acc_proto_w_root(out, "Flow");
    acc_buf_puts(out, ">");
    w_side(out, "SideA", f->site_a, f->addrs_a, f->n_a);
    w_side(out, "SideB", f->site_b, f->addrs_b, f->n_b);
    acc_buf_puts(out, "</Flow>\n");
}

static const char *guarantee_name(enum acc_guarantee g)
{
    switch (g) {
    case ACC_GUARANTEE_FULFILLED:
        return "Fulfilled";
    case ACC_GUARANTEE_VIOLATED:
        return "Violated";
    case ACC_GUARANTEE_NOT_DETERMINED:
        break;
    }
    return "NotDetermined";
}

void acc_proto_write_provision_status(const struct acc_provision_status *s, struct acc_buf *out)
{
    acc_proto_w_root(out, "ProvisionStatus");
    acc_proto_w_attr(out, "provisioned", s->provisioned ? "true" : "false");
    acc_proto_w_attr(out, "active", s->active ? "true" : "false");
    acc_proto_w_attr(out, "state", guarantee_name(s->state));
    acc_buf_puts(out, ">");
    acc_proto_w_el_time(out, "Start", s->start);
    acc_proto_w_el_time(out, "End", s->end);
    if (s->activated)
        acc_proto_w_el_time(out, "Activated", s->activated);
    if (s->violated_at)
        acc_proto_w_el_time(out, "ViolatedAt", s->violated_at);
    if (s->why[0])
        acc_proto_w_el(out, "Why", s->why);
    acc_proto_w_el_u64(out, "Bytes", s->bytes);
    acc_proto_w_el_u64(out, "Packets", s->packets);
    acc_proto_w_el_u64(out, "Drops", s->drops);
    acc_buf_puts(out, "</ProvisionStatus>\n");
}

void acc_proto_write_job(const struct acc_job *j, struct acc_buf *out)
{
    acc_proto_w_root(out, "Job");
    acc_proto_w_attr(out, "key", j->key ? j->key : "");
    acc_proto_w_attr(out, "localId", j->local_id);
    acc_proto_w_attr(out, "host", j->host);
    acc_proto_w_attr_i64(out, "nodes", j->nodes);
    acc_proto_w_attr_i64(out, "ppn", j->ppn);
    acc_buf_puts(out, ">");
    acc_proto_w_el(out, "Executable", j->executable ? j->executable : "");
    for (size_t i = 0; i < j->n_args; i++)
        acc_proto_w_el(out, "Argument", j->args[i] ? j->args[i] : "");
    acc_proto_w_el(out, "Directory", j->directory);
    acc_proto_w_el(out, "Output", j->output);
    for (size_t i = 0; j->env && j->env[i]; i++)
        acc_proto_w_el(out, "Environment", j->env[i]);
    if (j->end)
        acc_proto_w_el_time(out, "End", j->end);
    acc_proto_w_identity(out, j->identity);
    acc_buf_puts(out, "</Job>\n");
}

void acc_proto_write_job_ref(const char *id, struct acc_buf *out)
{
    acc_proto_w_root(out, "JobRef");
    acc_proto_w_attr(out, "id", id ? id : "");
    acc_buf_puts(out, "/>\n");
}

/* The values a JobStatus can carry: a resource manager's word is printable
 * ASCII without blanks (blanks and other bytes become '_'; none: UNKNOWN),
 * an exit status outside 0..255 is unknown (-1), a signal outside 1..128
 * none (0). */
void acc_proto_write_job_status(const struct acc_job_status *s, struct acc_buf *out)
{
    char state[sizeof s->state];
    size_t n = 0;
    for (; n + 1 < sizeof state && s->state[n]; n++) {
        unsigned char c = (unsigned char)s->state[n];
        state[n] = c > 0x20 && c < 0x7f ? (char)c : '_';
    }
    state[n] = '\0';

    acc_proto_w_root(out, "JobStatus");
    acc_proto_w_attr(out, "done", s->done ? "true" : "false");
    acc_proto_w_attr_i64(out, "exitStatus",
                         s->exit_status >= 0 && s->exit_status <= 255 ? s->exit_status : -1);
    acc_proto_w_attr_i64(out, "signal", s->signal > 0 && s->signal <= 128 ? s->signal : 0);
    acc_proto_w_attr(out, "state", n ? state : "UNKNOWN");
    acc_buf_puts(out, "/>\n");
}

static const struct {
    unsigned cap;
    const char *word;
} caps[] = {
    {ACC_CAP_NODES, "nodes"},           {ACC_CAP_BANDWIDTH, "bandwidth"},
    {ACC_CAP_SUBMIT, "submit"},         {ACC_CAP_NODE_NAMES, "node-names"},
    {ACC_CAP_THREADSAFE, "threadsafe"}, {ACC_CAP_FAULTS, "faults"},
    {ACC_CAP_PROVISION, "provision"},   {ACC_CAP_REPLACE, "replace"},
};

unsigned acc_proto_cap_of(const char *word, size_t len)
{
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (strlen(caps[i].word) == len && strncmp(caps[i].word, word, len) == 0)
            return caps[i].cap;
    return 0;
}

void acc_proto_write_health(const struct acc_proto_health *h, struct acc_buf *out)
{
    size_t n = h->n_resources > ACC_PROTO_MAX_RESOURCES ? ACC_PROTO_MAX_RESOURCES : h->n_resources;

    acc_proto_w_root(out, "Health");
    acc_proto_w_attr(out, "up", h->up ? "true" : "false");
    acc_proto_w_attr_i64(out, "version", h->version);
    acc_proto_w_attr(out, "site", h->site);
    acc_buf_puts(out, ">");
    if (h->detail[0])
        acc_proto_w_el(out, "Detail", h->detail);
    acc_buf_puts(out, "<Capabilities>");
    const char *sep = "";
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (h->caps & caps[i].cap) {
            acc_buf_printf(out, "%s%s", sep, caps[i].word);
            sep = " ";
        }
    acc_buf_puts(out, "</Capabilities>");
    for (size_t i = 0; i < n; i++)
        w_resource(out, h->resources[i].kind, h->resources[i].name, "capacity",
                   h->resources[i].capacity);
    acc_buf_puts(out, "</Health>\n");
}

void acc_proto_write_fault(acc_err code, const char *site, const char *msg, struct acc_buf *out)
{
    acc_proto_w_root(out, "Fault");
    acc_proto_w_attr(out, "code", acc_err_symbol(code));
    acc_proto_w_attr(out, "site", site && site[0] ? site : NULL);
    acc_buf_puts(out, ">");
    acc_proto_w_esc(out, msg ? msg : acc_err_text(code));
    acc_buf_puts(out, "</Fault>\n");
}
