/* json_quote.c - the quote (POST /negotiations, GET and DELETE
 * /negotiations/{id}) as JSON: the same fields as co:Quote, camelCase
 * (docs/documents.md). */
#include <inttypes.h>

#include "../../lib/common/timefmt.h"
#include "json.h"

static void str(struct acc_buf *out, bool *comma, const char *k, const char *v)
{
    if (!v)
        return;
    acc_buf_printf(out, "%s", *comma ? "," : "");
    acc_json_string(out, k);
    acc_buf_putc(out, ':');
    acc_json_string(out, v);
    *comma = true;
}

static void i64(struct acc_buf *out, bool *comma, const char *k, int64_t v)
{
    acc_buf_printf(out, "%s", *comma ? "," : "");
    acc_json_string(out, k);
    acc_buf_printf(out, ":%" PRId64, v);
    *comma = true;
}

static void tm(struct acc_buf *out, bool *comma, const char *k, acc_time t)
{
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    str(out, comma, k, s);
}

static void option(struct acc_buf *out, const struct acc_quote *q, size_t i)
{
    const struct acc_quote_option *o = &q->options[i];
    bool c = false;
    acc_buf_putc(out, '{');
    i64(out, &c, "option", (int64_t)i);
    tm(out, &c, "start", o->start);
    tm(out, &c, "end", o->end);
    /* The option's own placement, but the held one shows its reservations. */
    bool held = (int)i == q->held_option && q->state == ACC_QUOTE_HELD;
    bool own = o->n_comps && !held;
    const struct acc_alloc_component *comps = own ? o->comps : q->comps;
    size_t n_comps = own ? o->n_comps : q->n_comps, n_links = own ? o->n_links : q->n_links;
    const struct acc_alloc_link *links = own ? o->links : q->links;
    acc_buf_puts(out, ",\"components\":[");
    for (size_t k = 0; k < n_comps; k++) {
        const struct acc_alloc_component *x = &comps[k];
        bool cc = false;
        acc_buf_printf(out, "%s{", k ? "," : "");
        str(out, &cc, "name", x->name);
        str(out, &cc, "site", x->site);
        i64(out, &cc, "nodes", x->nodes);
        if (held)
            str(out, &cc, "reservation", x->reservation);
        acc_buf_putc(out, '}');
    }
    acc_buf_puts(out, "],\"links\":[");
    for (size_t k = 0; k < n_links; k++) {
        const struct acc_alloc_link *l = &links[k];
        bool cc = false;
        acc_buf_printf(out, "%s{", k ? "," : "");
        str(out, &cc, "name", l->name);
        str(out, &cc, "from", l->site_a);
        str(out, &cc, "to", l->site_b);
        str(out, &cc, "via", l->link);
        i64(out, &cc, "bandwidth", l->bandwidth);
        acc_buf_putc(out, '}');
    }
    acc_buf_putc(out, ']');
    str(out, &c, "why", o->why);
    acc_buf_putc(out, '}');
}

void acc_json_quote(const struct acc_quote *q, struct acc_buf *out)
{
    bool c = false;
    acc_buf_putc(out, '{');
    str(out, &c, "id", q->id);
    str(out, &c, "state", acc_quote_state_name(q->state));
    str(out, &c, "initiator", q->initiator);
    tm(out, &c, "created", q->created);
    if (q->hold_until && (q->state == ACC_QUOTE_HELD || q->state == ACC_QUOTE_ADVISORY))
        tm(out, &c, q->state == ACC_QUOTE_HELD ? "heldUntil" : "openUntil", q->hold_until);
    if (q->held_option >= 0)
        i64(out, &c, "heldOption", q->held_option);
    if (q->agreement[0])
        str(out, &c, "agreement", q->agreement);
    str(out, &c, "reason", q->reason);
    acc_buf_puts(out, ",\"counterOffers\":[");
    for (size_t i = 0; i < q->n_options; i++) {
        if (i)
            acc_buf_putc(out, ',');
        option(out, q, i);
    }
    acc_buf_puts(out, "]}\n");
}
