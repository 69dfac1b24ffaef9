/* cmd_state.c - accordctl state ID: agreement, service and guarantee term states. */
#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl state ID [--json|--xml]\n"
          "\n"
          "Prints the WS-Agreement state of an agreement and the state of each of its\n"
          "service terms (components and links) and guarantee terms.\n",
          f);
}

static void terms(const struct jv *list, const char *kind)
{
    for (size_t i = 0; i < jv_len(list); i++) {
        const struct jv *t = jv_at(list, i);
        printf("  %-16s %-24s %s\n", kind, jv_str(t, "name", "?"), jv_str(t, "state", "?"));
    }
}

static void show(const struct ctl *c, const struct jv *doc)
{
    (void)c;
    printf("Agreement %s: %s\n", jv_str(doc, "id", "?"), jv_str(doc, "state", "?"));
    terms(jv_get(doc, "serviceTerms"), "service term");
    terms(jv_get(doc, "guaranteeTerms"), "guarantee term");
    const struct jv *job = jv_get(doc, "job");
    if (job) {
        printf("  %-16s %-24s %s", "job", jv_str(job, "style", "?"), jv_str(job, "state", "?"));
        if (jv_get(job, "exitStatus"))
            printf(" (exit status %lld)", (long long)jv_int(job, "exitStatus", 0));
        printf("\n");
    }
}

static int run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "state", "agreement ID", help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/agreements/%s/state", id);
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_state = {"state", "agreement and term states", run, help};
