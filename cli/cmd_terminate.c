/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_terminate.c - accordctl terminate ID: cancel every reservation. */
#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl terminate ID [--json|--xml]\n"
          "\n"
          "Terminates an agreement: every reservation is cancelled at its site and link,\n"
          "and the agreement becomes Terminated.  When a site cannot be reached the\n"
          "agreement stays terminating and accordd keeps retrying (exit code 5).\n",
          f);
}

static void show(const struct ctl *c, const json_t *doc)
{
    (void)c;
    printf("Agreement %s: %s\n", ctl_str(doc, "id", "?"), ctl_str(doc, "state", "?"));
}

static int run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "terminate", "agreement ID", help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/agreements/%s/terminate", id);
    return ctl_run(c, "POST", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_terminate = {"terminate", "cancel an agreement", run, help};
