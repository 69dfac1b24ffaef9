/* SPDX-License-Identifier: Apache-2.0 */
/* describe.c - the two launch descriptions of a job's hosts as text: the MetaMPICH
 * meta-configuration and the MPICH-G2 multi-request RSL (docs/launch.md).
 *
 * Component names and sites are validated identifiers and hosts come from
 * acc_launch_hosts_build, so they are written bare; everything a user typed (the
 * agreement's name, executables, arguments) goes through a quoting function
 * of the format, and the agreement's name only ever into a comment that it
 * cannot end early.
 *
 * A component without an executable gets no executable line in either
 * format: MPICH-G2 would need one to start the subjob, but the description
 * is still a faithful record of the agreement and refusing it here would
 * also lose the MetaMPICH one; the launcher decides whether it can start.
 */
#include "launch.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "../../lib/common/strutil.h"

/* --------------------------------------------------------------- helpers */

/* The agreement's name in a one-line comment, inside the parentheses the
 * caller writes around it: control characters (a newline would end a '#'
 * comment and start a configuration line) become spaces, and for RSL a '*'
 * next to a parenthesis (the name's or the caller's) gets a space between
 * them, so that "*)" in the name ("* )") cannot close the comment early, nor
 * "(*" open one inside it. */
static void put_comment_text(struct acc_buf *out, const char *s, bool rsl)
{
    char prev = '(';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        if (rsl && c == '*' && prev == '(')
            acc_buf_putc(out, ' ');
        acc_buf_putc(out, (char)c);
        if (rsl && c == '*' && (s[1] == ')' || s[1] == '\0'))
            acc_buf_putc(out, ' ');
        prev = (char)c;
    }
}

static int64_t procs_of(const struct acc_alloc_component *c)
{
    return c->nodes * c->ppn; /* both bounded by the offer's limits */
}

/* False for hosts acc_launch_hosts_build never makes: a component missing,
 * or (when the format needs them) its hosts. */
static bool hosts_usable(const struct acc_launch_hosts *p, bool need_hosts)
{
    if (!p || !p->agreement || (p->n_comps && !p->comps))
        return false;
    for (size_t i = 0; i < p->n_comps; i++) {
        const struct acc_launch_comp *lc = &p->comps[i];
        if (!lc->comp || !lc->comp->name)
            return false;
        if (need_hosts && (lc->n_hosts == 0 || !lc->hosts || !lc->hosts[0]))
            return false;
    }
    return true;
}

static const char *arg_of(const struct acc_alloc_component *c, size_t i)
{
    return c->args && c->args[i] ? c->args[i] : "";
}

/* ------------------------------------------------------------- MetaMPICH */

static void mm_quote(struct acc_buf *out, const char *s)
{
    acc_buf_putc(out, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '\\':
            acc_buf_puts(out, "\\\\");
            break;
        case '"':
            acc_buf_puts(out, "\\\"");
            break;
        case '\n':
            acc_buf_puts(out, "\\n");
            break;
        case '\t':
            acc_buf_puts(out, "\\t");
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                acc_buf_printf(out, "\\x%02X", c);
            else
                acc_buf_putc(out, (char)c);
        }
    }
    acc_buf_putc(out, '"');
}

static bool names_pair(const struct acc_alloc_link *l, const char *a, const char *b)
{
    if (!l->from || !l->to)
        return false;
    return (strcmp(l->from, a) == 0 && strcmp(l->to, b) == 0) ||
           (strcmp(l->from, b) == 0 && strcmp(l->to, a) == 0);
}

/* " bandwidth=N reservation=ID" for the links of the agreement that join
 * components a and b: several links between one pair add up, and the first
 * of them with a local id names the reservation. */
static void mm_link_attrs(struct acc_buf *out, const struct acc_agreement *ag, const char *a,
                          const char *b)
{
    bool joined = false;
    int64_t bandwidth = 0;
    const char *local_id = NULL;
    for (size_t k = 0; k < ag->n_links; k++) {
        const struct acc_alloc_link *l = &ag->links[k];
        if (!names_pair(l, a, b))
            continue;
        joined = true;
        bandwidth += l->bandwidth;
        if (!local_id && l->local_id && *l->local_id)
            local_id = l->local_id;
    }
    if (!joined)
        return;
    acc_buf_printf(out, " bandwidth=%" PRId64, bandwidth);
    if (!local_id)
        return;
    /* The adapter chose the id: bare when it is a plain name, as ids are. */
    acc_buf_puts(out, " reservation=");
    if (acc_name_valid(local_id, ACC_LOCAL_ID_MAX))
        acc_buf_puts(out, local_id);
    else
        mm_quote(out, local_id);
}

static void mm_metahost(struct acc_buf *out, const struct acc_launch_comp *lc, unsigned port)
{
    const struct acc_alloc_component *c = lc->comp;
    acc_buf_printf(out, "METAHOST %s {\n", c->name);
    acc_buf_printf(out, "    site=%s;\n", c->site ? c->site : "");
    acc_buf_puts(out, "    nodes=");
    for (size_t h = 0; h < lc->n_hosts; h++) {
        if (h)
            acc_buf_putc(out, ',');
        acc_buf_puts(out, lc->hosts[h] ? lc->hosts[h] : "");
    }
    acc_buf_puts(out, ";\n");
    acc_buf_printf(out, "    nprocs=%" PRId64 ";\n", procs_of(c));
    acc_buf_printf(out, "    ppn=%" PRId64 ";\n", c->ppn);
    if (c->executable) {
        acc_buf_puts(out, "    executable=");
        mm_quote(out, c->executable);
        acc_buf_puts(out, ";\n");
    }
    if (c->n_args) {
        acc_buf_puts(out, "    args=");
        for (size_t k = 0; k < c->n_args; k++) {
            if (k)
                acc_buf_putc(out, ' ');
            mm_quote(out, arg_of(c, k));
        }
        acc_buf_puts(out, ";\n");
    }
    acc_buf_printf(out, "    router=%s;\n", lc->hosts[0]);
    acc_buf_printf(out, "    port=%u;\n", port);
    acc_buf_puts(out, "}\n");
}

/* A component without hosts (acc_launch_hosts_build never leaves one)
 * has no router to name: ACC_ERR_INVALID, and nothing appended. */
acc_err acc_launch_metampich(const struct acc_launch_hosts *p, struct acc_buf *out)
{
    if (!hosts_usable(p, true))
        return ACC_ERR_INVALID;
    const struct acc_agreement *ag = p->agreement;
    char start[ACC_TIME_STRLEN], end[ACC_TIME_STRLEN];
    acc_time_format(ag->start, start);
    acc_time_format(ag->end, end);

    acc_buf_printf(out, "# MetaMPICH meta-configuration for agreement %s", ag->id);
    if (ag->name) {
        acc_buf_puts(out, " (");
        put_comment_text(out, ag->name, false);
        acc_buf_putc(out, ')');
    }
    acc_buf_printf(out, "\n# reserved %s to %s\n", start, end);
    acc_buf_printf(out, "NUMHOSTS %zu\n", p->n_comps);
    for (size_t i = 0; i < p->n_comps; i++)
        mm_metahost(out, &p->comps[i], p->router_port + (unsigned)i);

    acc_buf_puts(out, "CONNECTIONS\n");
    for (size_t i = 0; i < p->n_comps; i++) {
        for (size_t j = i + 1; j < p->n_comps; j++) {
            const struct acc_launch_comp *a = &p->comps[i], *b = &p->comps[j];
            acc_buf_printf(out, "%s %s tcp %s:%u %s:%u", a->comp->name, b->comp->name, a->hosts[0],
                           p->router_port + (unsigned)i, b->hosts[0], p->router_port + (unsigned)j);
            mm_link_attrs(out, ag, a->comp->name, b->comp->name);
            acc_buf_puts(out, ";\n");
        }
    }
    return acc_buf_ok(out) ? ACC_OK : ACC_ERR_NOMEM;
}

/* --------------------------------------------------------------- MPICH-G2 */

/* RSL literals take everything verbatim, newlines too; only the quote
 * itself is doubled. */
static void rsl_quote(struct acc_buf *out, const char *s)
{
    acc_buf_putc(out, '"');
    for (; *s; s++) {
        if (*s == '"')
            acc_buf_putc(out, '"');
        acc_buf_putc(out, *s);
    }
    acc_buf_putc(out, '"');
}

static void rsl_subjob(struct acc_buf *out, const struct acc_launch_hosts *p, size_t i)
{
    const struct acc_launch_comp *lc = &p->comps[i];
    const struct acc_alloc_component *c = lc->comp;
    /* Without a contact the site's name is the best guess at one. */
    const char *contact = lc->contact ? lc->contact : c->site ? c->site : "";

    acc_buf_puts(out, "( &(resourceManagerContact=");
    rsl_quote(out, contact);
    acc_buf_puts(out, ")\n");
    acc_buf_printf(out, "   (count=%" PRId64 ")\n", procs_of(c));
    acc_buf_puts(out, "   (jobtype=mpi)\n");
    acc_buf_printf(out, "   (label=\"subjob %zu\")\n", i);
    acc_buf_printf(out, "   (environment=(GLOBUS_DUROC_SUBJOB_INDEX %zu))\n", i);
    if (p->directory) {
        acc_buf_puts(out, "   (directory=");
        rsl_quote(out, p->directory);
        acc_buf_puts(out, ")\n");
    }
    if (c->executable) {
        acc_buf_puts(out, "   (executable=");
        rsl_quote(out, c->executable);
        acc_buf_puts(out, ")\n");
    }
    if (c->n_args) {
        acc_buf_puts(out, "   (arguments=");
        for (size_t k = 0; k < c->n_args; k++) {
            if (k)
                acc_buf_putc(out, ' ');
            rsl_quote(out, arg_of(c, k));
        }
        acc_buf_puts(out, ")\n");
    }
    acc_buf_puts(out, ")\n");
}

acc_err acc_launch_rsl(const struct acc_launch_hosts *p, struct acc_buf *out)
{
    if (!hosts_usable(p, false))
        return ACC_ERR_INVALID;
    const struct acc_agreement *ag = p->agreement;
    acc_buf_printf(out, "(* MPICH-G2 multi-request for agreement %s", ag->id);
    if (ag->name) {
        acc_buf_puts(out, " (");
        put_comment_text(out, ag->name, true);
        acc_buf_putc(out, ')');
    }
    acc_buf_puts(out, " *)\n+\n");
    for (size_t i = 0; i < p->n_comps; i++)
        rsl_subjob(out, p, i);
    return acc_buf_ok(out) ? ACC_OK : ACC_ERR_NOMEM;
}
