/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_state.c - accordctl state ID: agreement, service and guarantee term states. */
#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl state ID [--json|--xml]\n"
          "\n"
          "Prints the WS-Agreement state of an agreement and the state of each of its\n"
          "service terms (components and links) and guarantee terms.  Each reserved\n"
          "link is a guarantee term of its own: NotDetermined before its start,\n"
          "Fulfilled while its bandwidth has been in place on the wire since the\n"
          "start, Violated (when and why) once it was not; with what its network\n"
          "adapter counted (bytes, packets, drops) when it installs reservations.\n",
          f);
}

/* The wire of a reserved link's guarantee, on the lines under it. */
static void link_guarantee(const json_t *t)
{
    printf("  %-16s %-24s link %s", "", "", ctl_str(t, "link", "?"));
    if (json_object_get(t, "provisioned"))
        printf(", %s, %s, %lld bytes, %lld packets, %lld drops",
               ctl_bool(t, "provisioned", false) ? "provisioned" : "not provisioned",
               ctl_bool(t, "active", false) ? "active" : "not active", ctl_int(t, "bytes", 0),
               ctl_int(t, "packets", 0), ctl_int(t, "drops", 0));
    printf("\n");
    if (json_object_get(t, "activated"))
        printf("  %-16s %-24s activated %s\n", "", "", ctl_str(t, "activated", "?"));
    if (json_object_get(t, "violatedAt"))
        printf("  %-16s %-24s violated at %s\n", "", "", ctl_str(t, "violatedAt", "?"));
    if (json_object_get(t, "reason"))
        printf("  %-16s %-24s %s\n", "", "", ctl_str(t, "reason", "?"));
}

static void terms(const json_t *list, const char *kind)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *t = json_array_get(list, i);
        printf("  %-16s %-24s %s\n", kind, ctl_str(t, "name", "?"), ctl_str(t, "state", "?"));
        if (json_object_get(t, "link"))
            link_guarantee(t);
    }
}

static void show(const struct ctl *c, const json_t *doc)
{
    (void)c;
    printf("Agreement %s: %s\n", ctl_str(doc, "id", "?"), ctl_str(doc, "state", "?"));
    terms(json_object_get(doc, "serviceTerms"), "service term");
    terms(json_object_get(doc, "guaranteeTerms"), "guarantee term");
    const json_t *job = json_object_get(doc, "job");
    if (job) {
        printf("  %-16s %-24s %s", "job", ctl_str(job, "style", "?"), ctl_str(job, "state", "?"));
        if (json_object_get(job, "exitStatus"))
            printf(" (exit status %lld)", ctl_int(job, "exitStatus", 0));
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
