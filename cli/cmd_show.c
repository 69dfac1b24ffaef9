/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_show.c - accordctl show ID: one agreement, readable. */
#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl show ID [--json|--xml]\n"
          "\n"
          "Shows an agreement: state, common start and end, the window it was negotiated\n"
          "in, and per component and link where it runs and under which reservation.\n"
          "--xml prints the wsag:Agreement document itself.\n",
          f);
}

static void show(const struct ctl *c, const json_t *doc)
{
    ctl_print_agreement(c, doc);
}

static int run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "show", "agreement ID", help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/agreements/%s", id);
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_show = {"show", "show one agreement", run, help};
