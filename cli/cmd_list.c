/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_list.c - accordctl list: every agreement, a page of the server at a
 * time, or one window of them (--limit, --offset). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl list [--state S] [--initiator U] [--site S] [--from T] [--until T]\n"
          "                      [--limit N] [--offset K] [--noheader] [-o FORMAT]\n"
          "                      [--json|--xml]\n"
          "\n"
          "Lists agreements, newest first, one per line; times are UTC (YYYY-MM-DD HH:MM).\n"
          "Every agreement that matches is shown, asked from the server a page at a time;\n"
          "--limit N and --offset K show one window: at most N, after skipping the K\n"
          "newest, and say on stderr which (\"showing 101-200 of 1234\").\n"
          "--from and --until (RFC 3339) keep the agreements whose reserved time overlaps\n"
          "them.  Names and sites are cut (marked +) only where the table is wider than\n"
          "the terminal, or than $COLUMNS when standard output is not a terminal (unset:\n"
          "never cut).\n"
          "\n"
          "--noheader leaves out the header line.  -o, --format FORMAT prints the fields\n"
          "FORMAT names, as squeue -o does: %[.][WIDTH]LETTER, '.' to right-justify, a\n"
          "value longer than WIDTH cut (marked +), other text as it is, %% a %.  Each\n"
          "letter means what it means to squeue:\n"
          "  %i id      %j name       %t state (Terminating for both terminating states)\n"
          "  %T state   %u initiator  %V created   %S start   %e end   %N sites\n"
          "e.g. -o '%16i %.8t %S'.  --json prints one document with every agreement shown;\n"
          "--xml prints the server's document for the window (without --limit, its page).\n",
          f);
}

/* The window asked for: from offset on, limit agreements (-1: all). */
struct window {
    long long offset, limit;
};

/* Most agreements one request asks for (the server's bound). */
enum { PAGE_MAX = 1000 };

/* Adds the agreements of a page to list, each id once (an agreement created
 * while we page shifts the later pages by one), at most want in all.
 * Returns how many it added. */
static size_t add_page(json_t *list, json_t *seen, const json_t *page, size_t want)
{
    size_t added = 0;
    for (size_t i = 0; i < json_array_size(page) && json_array_size(list) < want; i++) {
        json_t *a = json_array_get(page, i);
        const char *id = ctl_str(a, "id", "");
        if (json_object_get(seen, id))
            continue;
        json_object_set_new(seen, id, json_true());
        json_array_append(list, a);
        added++;
    }
    return added;
}

/* One page, from offset on: its document into *doc.  Returns CTL_OK, or the
 * exit code after the fault was told (passed through for --json). */
static int page(const struct ctl *c, const char *query, long long offset, long long limit,
                json_t **doc)
{
    char path[2300], lim[32] = "";
    if (limit > 0)
        snprintf(lim, sizeof lim, "&limit=%lld", limit < PAGE_MAX ? limit : (long long)PAGE_MAX);
    snprintf(path, sizeof path, "/agreements%s%coffset=%lld%s", query, query[0] ? '&' : '?', offset,
             lim);
    struct acc_client_reply r;
    int rc = ctl_request(c, "GET", path, NULL, 0, NULL, &r);
    *doc = NULL;
    if (rc == CTL_OK && r.status >= 300)
        rc = c->json ? ctl_pass_through(&r) : ctl_fault(&r);
    else if (rc == CTL_OK && !(*doc = ctl_parse(&r)))
        rc = CTL_SERVER;
    acc_client_reply_free(&r);
    return rc;
}

/* Every agreement of the window into *out (an array), and how many match
 * in all into *total (-1: the server does not say).  A page at a time, the
 * server's size unless the window is smaller, until the window or the total
 * is reached or a page brings nothing new. */
static int fetch(const struct ctl *c, const char *query, const struct window *w, json_t **out,
                 long long *total)
{
    size_t want = w->limit < 0 ? SIZE_MAX : (size_t)w->limit;
    json_t *list = json_array(), *seen = json_object();
    long long at = w->offset;
    int rc = list && seen ? CTL_OK : CTL_SERVER;
    *total = -1;
    while (rc == CTL_OK) {
        json_t *doc;
        long long left = w->limit < 0 ? 0 : (long long)(want - json_array_size(list));
        if ((rc = page(c, query, at, left, &doc)) != CTL_OK)
            break;
        const json_t *got = json_object_get(doc, "agreements");
        *total = ctl_int(doc, "total", -1);
        size_t added = add_page(list, seen, got, want);
        at += (long long)json_array_size(got);
        json_decref(doc);
        if (!added || json_array_size(list) >= want || (*total >= 0 && at >= *total))
            break;
    }
    json_decref(seen);
    if (rc != CTL_OK) {
        json_decref(list);
        list = NULL;
    }
    *out = list;
    return rc;
}

/* "showing 101-200 of 1234" on stderr, for a window asked for. */
static void footer(const struct window *w, size_t n, long long total)
{
    char of[64] = " (the server does not report a total)";
    if (total >= 0)
        snprintf(of, sizeof of, " of %lld", total);
    if (n)
        fprintf(stderr, "showing %lld-%lld%s\n", w->offset + 1, w->offset + (long long)n, of);
    else
        fprintf(stderr, "showing none%s (offset %lld)\n", of, w->offset);
}

/* --json: one document, as the server's but with every agreement shown. */
static int print_json(json_t *list, long long total)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "count", json_integer((json_int_t)json_array_size(list)));
    if (total >= 0)
        json_object_set_new(doc, "total", json_integer(total));
    json_object_set(doc, "agreements", list);
    int rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 ? CTL_OK : CTL_SERVER;
    putchar('\n');
    json_decref(doc);
    return rc;
}

/* A whole number from lo to hi for option name, else a message. */
static bool number(const char *name, const char *arg, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(arg, &end, 10);
    if (errno || end == arg || *end || *out < lo || *out > hi) {
        fprintf(stderr, "accordctl list: --%s takes a whole number from %lld to %lld\n", name, lo,
                hi);
        return false;
    }
    return true;
}

/* What the command line asks beyond the filters. */
struct args {
    struct window w;
    bool asked; /* --limit or --offset */
    bool header;
    const char *format;
};

/* Adds a filter to the query string; false when it is too long. */
static bool add_filter(char *query, size_t size, size_t *used, const char *name, const char *v)
{
    char esc[512];
    ctl_url_escape(v, esc, sizeof esc);
    int n = snprintf(query + *used, size - *used, "%c%s=%s", *used ? '&' : '?', name, esc);
    if (n < 0 || (size_t)n >= size - *used) {
        fprintf(stderr, "accordctl list: the filters are too long\n");
        return false;
    }
    *used += (size_t)n;
    return true;
}

enum { OPT_OFFSET = 0x200, OPT_NOHEADER };

/* Parses the command line: the filters into query, the rest into *a.
 * Returns -2 to go on, or an exit code. */
static int parse(struct ctl *c, int argc, char **argv, char *query, size_t size, struct args *a)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"state", required_argument, NULL, 's'},
        {"initiator", required_argument, NULL, 'i'},
        {"site", required_argument, NULL, 'x'},
        {"from", required_argument, NULL, 'f'},
        {"until", required_argument, NULL, 'u'},
        {"limit", required_argument, NULL, 'l'},
        {"offset", required_argument, NULL, OPT_OFFSET},
        {"noheader", no_argument, NULL, OPT_NOHEADER},
        {"format", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    static const char *const names[] = {"state", "initiator", "site", "from", "until"};
    static const char filters[] = "sixfu";
    size_t used = 0;
    int opt;
    *a = (struct args){.w = {0, -1}, .header = true};
    while ((opt = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        const char *k = opt > 0 && opt < 0x100 ? strchr(filters, opt) : NULL;
        if (k && !add_filter(query, size, &used, names[k - filters], optarg))
            return CTL_USAGE;
        if ((opt == 'l' && !number("limit", optarg, 1, 1000000000, &a->w.limit)) ||
            (opt == OPT_OFFSET && !number("offset", optarg, 0, 1000000000, &a->w.offset)))
            return CTL_USAGE;
        a->asked |= opt == 'l' || opt == OPT_OFFSET;
        a->header &= opt != OPT_NOHEADER;
        a->format = opt == 'o' ? optarg : a->format;
    }
    if (optind != argc) {
        fprintf(stderr, "accordctl list: unexpected argument '%s'\n", argv[optind]);
        return CTL_USAGE;
    }
    return -2;
}

/* --xml: the server's document for the window as it came. */
static int run_xml(const struct ctl *c, const char *query, const struct window *w)
{
    char path[2300], lim[32] = "";
    if (w->limit > 0)
        snprintf(lim, sizeof lim, "&limit=%lld", w->limit);
    snprintf(path, sizeof path, "/agreements%s%coffset=%lld%s", query, query[0] ? '&' : '?',
             w->offset, lim);
    return ctl_run(c, "GET", path, NULL, 0, NULL, NULL);
}

static int run(struct ctl *c, int argc, char **argv)
{
    char query[2048] = "";
    struct args a;
    int rc = parse(c, argc, argv, query, sizeof query, &a);
    if (rc != -2)
        return rc;
    struct ctl_list_format *f = NULL;
    if (a.format && (rc = ctl_list_format_parse(a.format, &f)) != CTL_OK)
        return rc;
    if (c->xml) {
        ctl_list_format_free(f);
        return run_xml(c, query, &a.w);
    }
    json_t *list;
    long long total;
    rc = fetch(c, query, &a.w, &list, &total);
    if (rc == CTL_OK) {
        if (c->json)
            rc = print_json(list, total);
        else
            ctl_list_print(c, list, f, a.header);
        if (a.asked)
            footer(&a.w, json_array_size(list), total);
    }
    json_decref(list);
    ctl_list_format_free(f);
    return rc;
}

const struct ctl_command ctl_cmd_list = {"list", "list agreements", run, help};
