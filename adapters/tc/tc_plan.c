/* SPDX-License-Identifier: Apache-2.0 */
/* tc_plan.c - the pure part of the tc adapter: `tc` show text in, batch
 * text out, and the guarantee term's state.  No processes, no files, no
 * clock: everything it needs comes in as arguments. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_internal.h"

void tc_dev_state_release(struct tc_dev_state *s)
{
    free(s->classes);
    free(s->filters);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ parsing */

bool tc_parse_rate(const char *s, uint64_t *bits)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return false;
    static const struct {
        const char *unit;
        double mul;
    } units[] = {{"bit", 1},     {"Kbit", 1e3},   {"Mbit", 1e6},        {"Gbit", 1e9},
                 {"Tbit", 1e12}, {"bps", 8},      {"Kbps", 8e3},        {"Mbps", 8e6},
                 {"Gbps", 8e9},  {"Kibit", 1024}, {"Mibit", 1048576.0}, {"Gibit", 1073741824.0},
                 {"", 1}};
    size_t len = strcspn(end, " \t\n");
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strlen(units[i].unit) == len && strncmp(end, units[i].unit, len) == 0) {
            *bits = (uint64_t)(v * units[i].mul + 0.5);
            return true;
        }
    }
    return false;
}

/* The word after `word ` in line (up to a blank), or NULL. */
static const char *after(const char *line, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(line, word); p; p = strstr(p + 1, word)) {
        bool start = p == line || p[-1] == ' ' || p[-1] == '*';
        if (start && p[n] == ' ')
            return p + n + 1;
    }
    return NULL;
}

static bool parse_uint(const char *s, int base, unsigned long max, unsigned long *out)
{
    if (!s)
        return false;
    char *end = NULL;
    unsigned long v = strtoul(s, &end, base);
    if (end == s || v > max)
        return false;
    *out = v;
    return true;
}

/* "1:N" -> N, as written (decimal text). */
static bool parse_minor(const char *s, unsigned *out)
{
    unsigned long v;
    if (!s || strncmp(s, "1:", 2) != 0 || !parse_uint(s + 2, 10, 0xffff, &v))
        return false;
    *out = (unsigned)v;
    return true;
}

/* Room for one more of n items in *v (*cap of them allocated). */
static acc_err grow(void **v, size_t n, size_t *cap, size_t size, struct acc_error *err)
{
    if (n < *cap)
        return ACC_OK;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*v, c * size);
    if (!p)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    *v = p;
    *cap = c;
    return ACC_OK;
}

enum obj { OBJ_NONE, OBJ_CLASS, OBJ_FILTER };

static void parse_sent(const char *line, struct tc_class *c)
{
    /* " Sent 490 bytes 5 pkt (dropped 0, overlimits 0 requeues 0)" */
    unsigned long long b = 0, p = 0, d = 0;
    const char *s = strstr(line, "Sent ");
    if (!s)
        return;
    char *end = NULL;
    b = strtoull(s + 5, &end, 10);
    if (end && strncmp(end, " bytes ", 7) == 0)
        p = strtoull(end + 7, &end, 10);
    const char *dr = strstr(line, "(dropped ");
    if (dr)
        d = strtoull(dr + 9, NULL, 10);
    c->bytes = b;
    c->packets = p;
    c->drops = d;
}

static void parse_match(const char *line, struct tc_filter *f)
{
    /* "  match 0ae70001/ffffffff at 12" */
    unsigned long v, mask, off;
    const char *m = after(line, "match");
    if (!m || !parse_uint(m, 16, 0xffffffffUL, &v))
        return;
    const char *slash = strchr(m, '/');
    if (!slash || !parse_uint(slash + 1, 16, 0xffffffffUL, &mask) || mask != 0xffffffffUL)
        return;
    if (!parse_uint(after(line, "at"), 10, 64, &off))
        return;
    if (off == 12)
        f->src = (uint32_t)v;
    else if (off == 16)
        f->dst = (uint32_t)v;
}

acc_err tc_parse_show(const char *text, struct tc_dev_state *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    enum obj cur = OBJ_NONE;
    size_t cap_c = 0, cap_f = 0;
    char line[1024];
    for (const char *p = text; p && *p;) {
        size_t len = strcspn(p, "\n");
        size_t keep = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, p, keep);
        line[keep] = '\0';
        p += len + (p[len] == '\n');

        if (strncmp(line, "qdisc ", 6) == 0) {
            cur = OBJ_NONE;
            if (strncmp(line, "qdisc htb 1: root", 17) == 0)
                out->htb_root = true;
        } else if (strncmp(line, "class htb ", 10) == 0) {
            unsigned id;
            cur = OBJ_NONE;
            if (!parse_minor(line + 10, &id))
                continue;
            if (id == 1)
                out->root_class = true;
            if (id == TC_ID_BE)
                out->be_class = true;
            if (grow((void **)&out->classes, out->n_classes, &cap_c, sizeof *out->classes, err))
                goto fail;
            struct tc_class *c = &out->classes[out->n_classes++];
            memset(c, 0, sizeof *c);
            c->id = id;
            const char *r = after(line, "rate"), *cl = after(line, "ceil");
            if (r)
                tc_parse_rate(r, &c->rate);
            if (cl)
                tc_parse_rate(cl, &c->ceil);
            cur = OBJ_CLASS;
        } else if (strncmp(line, "class ", 6) == 0) {
            cur = OBJ_NONE; /* another kind of class: not ours */
        } else if (strncmp(line, "filter ", 7) == 0) {
            cur = OBJ_NONE;
            unsigned long pref;
            const char *fh = after(line, "fh");
            if (!fh || !strstr(line, " u32 ") ||
                !parse_uint(after(line, "pref"), 10, 0xffff, &pref))
                continue;
            size_t fhlen = strcspn(fh, " ");
            const char *dc = strstr(fh, "::");
            if (!dc || dc >= fh + fhlen || dc + 2 == fh + fhlen)
                continue; /* a hash table, not a key node */
            if (grow((void **)&out->filters, out->n_filters, &cap_f, sizeof *out->filters, err))
                goto fail;
            struct tc_filter *f = &out->filters[out->n_filters++];
            memset(f, 0, sizeof *f);
            f->pref = (unsigned)pref;
            parse_minor(after(line, "flowid"), &f->flow);
            cur = OBJ_FILTER;
        } else if (cur == OBJ_CLASS && strstr(line, " Sent ")) {
            parse_sent(line, &out->classes[out->n_classes - 1]);
        } else if (cur == OBJ_FILTER && strstr(line, "match ")) {
            parse_match(line, &out->filters[out->n_filters - 1]);
        }
    }
    return ACC_OK;
fail:
    tc_dev_state_release(out);
    return ACC_ERR_NOMEM;
}

/* ----------------------------------------------------------------- planning */

static const struct tc_class *find_class(const struct tc_dev_state *h, unsigned id)
{
    for (size_t i = 0; i < h->n_classes; i++) {
        if (h->classes[i].id == id)
            return &h->classes[i];
    }
    return NULL;
}

static bool has_pref(const struct tc_dev_state *h, unsigned pref)
{
    for (size_t i = 0; i < h->n_filters; i++) {
        if (h->filters[i].pref == pref)
            return true;
    }
    return false;
}

/* The kernel's filters at pref w->id are exactly w's pairs, to 1:id. */
static bool filters_match(const struct tc_dev_state *h, const struct tc_want *w)
{
    size_t n = 0;
    for (size_t i = 0; i < h->n_filters; i++) {
        const struct tc_filter *f = &h->filters[i];
        if (f->pref != w->id)
            continue;
        n++;
        bool found = false;
        for (size_t k = 0; k < w->n_pairs && !found; k++)
            found = f->flow == w->id && f->src == w->src[k] && f->dst == w->dst[k];
        if (!found)
            return false;
    }
    return n == w->n_pairs;
}

static void ip_text(uint32_t host, char *out)
{
    struct in_addr a = {htonl(host)};
    if (!inet_ntop(AF_INET, &a, out, INET_ADDRSTRLEN))
        snprintf(out, INET_ADDRSTRLEN, "0.0.0.0");
}

void tc_plan_remove(const char *dev, unsigned id, struct acc_buf *out)
{
    acc_buf_printf(out, "filter del dev %s parent 1: prio %u\n", dev, id);
    acc_buf_printf(out, "class del dev %s classid 1:%u\n", dev, id);
}

static bool wanted(const struct tc_want *want, size_t n, unsigned id)
{
    for (size_t i = 0; i < n; i++) {
        if (want[i].id == id)
            return true;
    }
    return false;
}

void tc_plan(const char *dev, int64_t capacity, int64_t quantum, const struct tc_want *want,
             size_t n_want, const struct tc_dev_state *have, struct acc_buf *out, enum tc_fix *fix,
             size_t *removed)
{
    *removed = 0;
    /* The root tree; an htb root 1: is kept whatever it holds. */
    bool fresh = !have->htb_root;
    if (fresh)
        acc_buf_printf(out, "qdisc replace dev %s root handle 1: htb default %u\n", dev, TC_ID_BE);
    if (fresh || !have->root_class)
        acc_buf_printf(out,
                       "class add dev %s parent 1: classid 1:1 htb rate %" PRId64
                       "mbit ceil %" PRId64 "mbit quantum %" PRId64 "\n",
                       dev, capacity, capacity, quantum);
    if (fresh || !have->be_class)
        acc_buf_printf(out,
                       "class add dev %s parent 1:1 classid 1:%u htb rate 1mbit ceil %" PRId64
                       "mbit prio 1 quantum %" PRId64 "\n",
                       dev, TC_ID_BE, capacity, quantum);
    static const struct tc_dev_state none = {0};
    const struct tc_dev_state *h = fresh ? &none : have;

    /* Stale: filters first (a class in use cannot go), then classes. */
    for (size_t i = 0; i < h->n_filters; i++) {
        unsigned p = h->filters[i].pref;
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = h->filters[k].pref != p;
        if (first && p >= TC_ID_MIN && p <= TC_ID_MAX && !wanted(want, n_want, p))
            acc_buf_printf(out, "filter del dev %s parent 1: prio %u\n", dev, p);
    }
    for (size_t i = 0; i < h->n_classes; i++) {
        unsigned id = h->classes[i].id;
        if (id >= TC_ID_MIN && id <= TC_ID_MAX && !wanted(want, n_want, id)) {
            acc_buf_printf(out, "class del dev %s classid 1:%u\n", dev, id);
            (*removed)++;
        }
    }

    for (size_t i = 0; i < n_want; i++) {
        const struct tc_want *w = &want[i];
        const struct tc_class *c = find_class(h, w->id);
        uint64_t rate = (uint64_t)w->rate * 1000000u, ceil = (uint64_t)w->ceil * 1000000u;
        bool ok_filters = filters_match(h, w);
        fix[i] = !c ? TC_FIX_ADDED : TC_FIX_NONE;
        if (!c)
            acc_buf_printf(out,
                           "class add dev %s parent 1:1 classid 1:%u htb rate %" PRId64
                           "mbit ceil %" PRId64 "mbit prio 0 quantum %" PRId64 "\n",
                           dev, w->id, w->rate, w->ceil, quantum);
        else if (c->rate != rate || c->ceil != ceil) {
            acc_buf_printf(out,
                           "class change dev %s parent 1:1 classid 1:%u htb rate %" PRId64
                           "mbit ceil %" PRId64 "mbit prio 0 quantum %" PRId64 "\n",
                           dev, w->id, w->rate, w->ceil, quantum);
            fix[i] = TC_FIX_REPAIRED;
        }
        if (ok_filters)
            continue;
        if (c && fix[i] == TC_FIX_NONE)
            fix[i] = TC_FIX_REPAIRED;
        if (has_pref(h, w->id))
            acc_buf_printf(out, "filter del dev %s parent 1: prio %u\n", dev, w->id);
        for (size_t k = 0; k < w->n_pairs; k++) {
            char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
            ip_text(w->src[k], s);
            ip_text(w->dst[k], d);
            acc_buf_printf(out,
                           "filter add dev %s parent 1: protocol ip prio %u u32 match ip src "
                           "%s/32 match ip dst %s/32 flowid 1:%u\n",
                           dev, w->id, s, d, w->id);
        }
    }
}

/* ---------------------------------------------------------------- guarantee */

enum acc_guarantee tc_guarantee(const struct tc_term *t, acc_time now, int64_t grace,
                                acc_time *new_at, char *why, size_t why_len)
{
    char when[ACC_TIME_STRLEN];
    *new_at = 0;
    if (t->violated_at)
        return ACC_GUARANTEE_VIOLATED;
    if (now < t->start)
        return ACC_GUARANTEE_NOT_DETERMINED;
    if (!t->provisioned) {
        *new_at = t->start;
        snprintf(why, why_len, "no endpoints were handed over");
        return ACC_GUARANTEE_VIOLATED;
    }
    acc_time due = t->start + grace;
    if (t->activated && t->activated <= due)
        return ACC_GUARANTEE_FULFILLED;
    if (t->activated) {
        acc_time_format(t->activated, when);
        *new_at = due;
        snprintf(why, why_len, "not in place until %s", when);
        return ACC_GUARANTEE_VIOLATED;
    }
    if (now <= due && now < t->end)
        return ACC_GUARANTEE_NOT_DETERMINED; /* still within the grace */
    acc_time_format(due, when);
    *new_at = due;
    snprintf(why, why_len, "not in place at %s", when);
    return ACC_GUARANTEE_VIOLATED;
}
