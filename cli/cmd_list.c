/* cmd_list.c - accordctl list: one line per agreement. */
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl list [--state S] [--initiator U] [--site S] [--from T] [--until T]\n"
          "                      [--limit N] [--json|--xml]\n"
          "\n"
          "Lists agreements, newest first, one per line (times in UTC).  --from and --until\n"
          "(RFC 3339) keep the agreements whose reserved time overlaps them.\n",
          f);
}

static const char *short_state(const char *s)
{
    if (strcmp(s, "PendingAndTerminating") == 0 || strcmp(s, "ObservedAndTerminating") == 0)
        return "Terminating";
    return s;
}

static void show(const struct ctl *c, const struct jv *doc)
{
    const struct jv *list = jv_get(
        doc, "agreements"); /* Fixed columns and one space between columns; the name and the sites
                             * share what the terminal has left, keeping the last column free. */
    int fixed = 16 + 11 + 11 + 11 + 5;
    int rest = (int)c->width - 1 - fixed;
    if (rest < 20)
        rest = 20;
    int name_w = rest / 2 < 24 ? rest / 2 : 24;
    int sites_w = rest - name_w;
    printf("%-16s %-*s %-11s %-11s %-11s %s\n", "ID", name_w, "NAME", "STATE", "START (UTC)", "END",
           "SITES");
    for (size_t i = 0; i < jv_len(list); i++) {
        const struct jv *a = jv_at(list, i);
        char start[12], end[12], sites[256] = "";
        ctl_short_time(jv_str(a, "start", NULL), start);
        ctl_short_time(jv_str(a, "end", NULL), end);
        const struct jv *s = jv_get(a, "sites");
        size_t used = 0;
        for (size_t k = 0; k < jv_len(s) && used + 2 < sizeof sites; k++) {
            const struct jv *x = jv_at(s, k);
            used += (size_t)snprintf(sites + used, sizeof sites - used, "%s%s", k ? "," : "",
                                     x && x->type == JV_STRING ? x->str : "?");
        }
        ctl_cell(jv_str(a, "id", "?"), 16, true);
        printf(" ");
        ctl_cell(jv_str(a, "name", "-"), name_w, true);
        printf(" ");
        ctl_cell(short_state(jv_str(a, "state", "?")), 11, true);
        printf(" %-11s %-11s ", start, end);
        ctl_cell(used ? sites : "-", sites_w, false);
        printf("\n");
    }
    if (jv_len(list) == 0)
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
