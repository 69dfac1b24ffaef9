/* cmd_list.c - accordctl list: one line per agreement. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl list [--state S] [--initiator U] [--site S] [--from T] [--until T]\n"
          "                      [--limit N] [--json|--xml]\n"
          "\n"
          "Lists agreements, newest first, one per line (times in UTC).  --from and --until\n"
          "(RFC 3339) keep the agreements whose reserved time overlaps them.  Names and\n"
          "sites are cut (marked +) only where the table is wider than the terminal, or\n"
          "than $COLUMNS when standard output is not a terminal (unset: never cut).\n",
          f);
}

static const char *short_state(const char *s)
{
    if (strcmp(s, "PendingAndTerminating") == 0 || strcmp(s, "ObservedAndTerminating") == 0)
        return "Terminating";
    return s;
}

/* The sites of an agreement, comma-separated, into out ('+' ends a list
 * that did not fit). */
static void join_sites(const json_t *a, char *out, size_t size)
{
    const json_t *s = json_object_get(a, "sites");
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < json_array_size(s); k++) {
        int n = snprintf(out + used, size - used, "%s%s", k ? "," : "", ctl_str_at(s, k, "?"));
        if (n < 0 || (size_t)n >= size - used) {
            memcpy(out + size - 2, "+", 2);
            return;
        }
        used += (size_t)n;
    }
    if (!used)
        memcpy(out, "-", 2);
}

static void show(const struct ctl *c, const json_t *doc)
{
    const json_t *list = json_object_get(doc, "agreements");
    size_t n = json_array_size(list);
    char sites[1024];
    int name_max = 4, sites_max = 5; /* NAME, SITES */
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(list, i);
        int w = ctl_columns(ctl_str(a, "name", "-"));
        name_max = w > name_max ? w : name_max;
        join_sites(a, sites, sizeof sites);
        w = ctl_columns(sites);
        sites_max = w > sites_max ? w : sites_max;
    }
    /* Fixed columns and one space between columns; the name and the sites
     * are cut only when they do not fit in what the terminal has left,
     * keeping its last column free.  Without a terminal (and COLUMNS) the
     * width is unknown and nothing is cut. */
    enum { FIXED = 16 + 11 + 11 + 11 + 5 };
    int name_w = name_max, sites_w = INT_MAX;
    int rest = (int)c->width - 1 - FIXED;
    if (c->width && name_max + sites_max > rest) {
        if (rest < 10) /* a narrower terminal wraps the lines: 4 characters and '+' each */
            rest = 10;
        /* Each gets what it needs when the other leaves it room, else half. */
        int room = rest - sites_max > rest / 2 ? rest - sites_max : rest / 2;
        name_w = name_max < room ? name_max : room;
        sites_w = rest - name_w;
    }
    printf("%-16s %-*s %-11s %-11s %-11s %s\n", "ID", name_w, "NAME", "STATE", "START (UTC)", "END",
           "SITES");
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(list, i);
        char start[12], end[12];
        ctl_short_time(ctl_str(a, "start", NULL), start);
        ctl_short_time(ctl_str(a, "end", NULL), end);
        join_sites(a, sites, sizeof sites);
        ctl_cell(ctl_str(a, "id", "?"), 16, true);
        printf(" ");
        ctl_cell(ctl_str(a, "name", "-"), name_w, true);
        printf(" ");
        ctl_cell(short_state(ctl_str(a, "state", "?")), 11, true);
        printf(" %-11s %-11s ", start, end);
        ctl_cell(sites, sites_w, false);
        printf("\n");
    }
    if (n == 0)
        printf("(no agreements)\n");
}

static int run(struct ctl *c, int argc, char **argv)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"state", required_argument, NULL, 's'},
        {"initiator", required_argument, NULL, 'i'},
        {"site", required_argument, NULL, 'x'},
        {"from", required_argument, NULL, 'f'},
        {"until", required_argument, NULL, 'u'},
        {"limit", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0},
    };
    static const char *const names[] = {"state", "initiator", "site", "from", "until", "limit"};
    static const char letters[] = "sixful";
    char query[2048] = "";
    size_t used = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        const char *k = strchr(letters, opt);
        if (!k || !opt)
            continue;
        char esc[512];
        ctl_url_escape(optarg, esc, sizeof esc);
        used += (size_t)snprintf(query + used, sizeof query - used, "%c%s=%s", used ? '&' : '?',
                                 names[k - letters], esc);
        if (used >= sizeof query) {
            fprintf(stderr, "accordctl list: the filters are too long\n");
            return CTL_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "accordctl list: unexpected argument '%s'\n", argv[optind]);
        return CTL_USAGE;
    }
    char path[2100];
    snprintf(path, sizeof path, "/agreements%s", query);
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_list = {"list", "list agreements", run, help};
