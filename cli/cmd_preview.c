/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_preview.c - accordctl preview SITE: when N nodes are free. */
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl preview SITE --nodes N --duration PT2H [--from T] [--until T]\n"
          "                          [--json|--xml]\n"
          "\n"
          "Prints the time frames in which SITE has N nodes free for at least the\n"
          "duration (ISO 8601), between --from (default now) and --until (default the\n"
          "preview horizon), as its adapter sees them now.  Times are RFC 3339 UTC.\n",
          f);
}

static void show(const struct ctl *c, const json_t *doc)
{
    (void)c;
    printf("%s: %lld nodes for %s, %s .. %s\n", ctl_str(doc, "site", "?"), ctl_int(doc, "nodes", 0),
           ctl_str(doc, "duration", "?"), ctl_str(doc, "from", "?"), ctl_str(doc, "until", "?"));
    const json_t *frames = json_object_get(doc, "frames");
    if (json_array_size(frames) == 0) {
        printf("no free frame\n");
        return;
    }
    printf("%-22s%s\n", "FREE FROM", "UNTIL");
    for (size_t i = 0; i < json_array_size(frames); i++) {
        const json_t *f = json_array_get(frames, i);
        printf("%-22s%s\n", ctl_str(f, "start", "?"), ctl_str(f, "end", "?"));
    }
    if (ctl_bool(doc, "truncated", false))
        printf("(more frames follow: narrow the window to see them)\n");
}

static int run(struct ctl *c, int argc, char **argv)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"nodes", required_argument, NULL, 'n'},
        {"duration", required_argument, NULL, 'd'},
        {"from", required_argument, NULL, 'f'},
        {"until", required_argument, NULL, 'u'},
        {NULL, 0, NULL, 0},
    };
    const char *nodes = NULL, *duration = NULL, *from = NULL, *until = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        if (opt == 'n')
            nodes = optarg;
        else if (opt == 'd')
            duration = optarg;
        else if (opt == 'f')
            from = optarg;
        else if (opt == 'u')
            until = optarg;
    }
    if (optind != argc - 1 || !nodes || !duration) {
        fprintf(stderr, "accordctl preview: give a SITE, --nodes and --duration\n");
        help(stderr);
        return CTL_USAGE;
    }
    char path[2048], esc[4][512];
    ctl_url_escape(argv[optind], esc[0], sizeof esc[0]);
    ctl_url_escape(nodes, esc[1], sizeof esc[1]);
    ctl_url_escape(duration, esc[2], sizeof esc[2]);
    int n = snprintf(path, sizeof path, "/sites/%s/preview?nodes=%s&duration=%s", esc[0], esc[1],
                     esc[2]);
    if (from) {
        ctl_url_escape(from, esc[3], sizeof esc[3]);
        n += snprintf(path + n, sizeof path - (size_t)n, "&from=%s", esc[3]);
    }
    if (until) {
        ctl_url_escape(until, esc[3], sizeof esc[3]);
        snprintf(path + n, sizeof path - (size_t)n, "&until=%s", esc[3]);
    }
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_preview = {"preview", "free frames of a site", run, help};
