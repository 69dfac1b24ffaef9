/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_trace.c - accordctl trace ID: the negotiation, round by round. */
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl trace ID [--json|--xml]\n"
          "\n"
          "Prints how the agreement was negotiated: each round's previews and what each\n"
          "adapter answered, the proposed common start, every reservation, verify, cancel\n"
          "and rollback, and how it ended.\n",
          f);
}

static void show(const struct ctl *c, const json_t *doc)
{
    printf("Agreement %s: %s, %lld round(s), %lld rollback(s)\n", ctl_str(doc, "id", "?"),
           ctl_str(doc, "strategy", "?"), ctl_int(doc, "rounds", 0), ctl_int(doc, "rollbacks", 0));
    const json_t *ev = json_object_get(doc, "events");
    /* The detail follows on the line when it fits, else on its own line:
     * it is what a reader of a trace wants, so it is never cut.  Without a
     * terminal (and COLUMNS) lines are kept to 80 columns where they can. */
    enum { FIXED = 4 + 9 + 22 + 8 + 1 };
    unsigned width = c->width ? c->width : 80;
    printf("%-4s%-9s%-22s%8s %s\n", "RND", "KIND", "TARGET", "MS", "WHAT HAPPENED");
    for (size_t i = 0; i < json_array_size(ev); i++) {
        const json_t *e = json_array_get(ev, i);
        printf("%-4lld", ctl_int(e, "round", 0));
        ctl_cell(ctl_str(e, "kind", "?"), 8, true);
        printf(" ");
        ctl_cell(ctl_str(e, "target", ""), 21, true);
        printf(" %8.1f", (double)ctl_int(e, "elapsedMicros", 0) / 1000.0);
        /* A failure says so first. */
        const char *status = ctl_str(e, "status", "Ok"), *detail = ctl_str(e, "detail", "");
        char what[1024];
        snprintf(what, sizeof what, "%s%s%s", strcmp(status, "Ok") ? status : "",
                 strcmp(status, "Ok") ? ": " : "", detail);
        if (FIXED + strlen(what) < width)
            printf(" %s\n", what);
        else
            printf("\n%8s%s\n", "", what);
    }
}

static int run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "trace", "agreement ID", help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/agreements/%s/negotiation", id);
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_trace = {"trace", "the negotiation, round by round", run, help};
