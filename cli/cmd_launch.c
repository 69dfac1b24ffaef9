/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_launch.c - accordctl launch ID: the meta-job of an agreement, its
 * launch descriptions and its output. */
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl launch ID [--metampich | --rsl | --output] [--json|--xml]\n"
          "\n"
          "Shows the meta-job that accordd starts at the agreement's start: its launch\n"
          "style, state (waiting, running, exited, stopped, terminated, failed, missed,\n"
          "lost, described), start and end, exit status, the reason in words, and the\n"
          "mpiexec command it ran.\n"
          "\n"
          "  --metampich  print the MetaMPICH meta-configuration instead\n"
          "  --rsl        print the MPICH-G2 multi-request RSL instead\n"
          "  --output     print what the job wrote (standard output and error, as\n"
          "               much as the server keeps) instead\n",
          f);
}

static void row(const char *label, const char *value)
{
    if (value && *value)
        printf("  %-12s %s\n", label, value);
}

static void show(const struct ctl *c, const json_t *doc)
{
    (void)c;
    printf("Job of agreement %s: %s\n", ctl_str(doc, "agreementId", "?"),
           ctl_str(doc, "state", "?"));
    row("style", ctl_str(doc, "style", NULL));
    row("started", ctl_str(doc, "started", NULL));
    row("ended", ctl_str(doc, "ended", NULL));
    if (json_object_get(doc, "exitStatus"))
        printf("  %-12s %lld\n", "exit status", ctl_int(doc, "exitStatus", 0));
    if (json_object_get(doc, "signal"))
        printf("  %-12s %lld\n", "signal", ctl_int(doc, "signal", 0));
    row("reason", ctl_str(doc, "reason", NULL));
    row("directory", ctl_str(doc, "directory", NULL));
    row("command", ctl_str(doc, "command", NULL));
    if (json_object_get(doc, "outputBytes"))
        printf("  %-12s %lld bytes (accordctl launch %s --output)\n", "output",
               ctl_int(doc, "outputBytes", 0), ctl_str(doc, "agreementId", "ID"));
}

/* A plain-text file of the launch, written as it comes. */
static int text(struct ctl *c, const char *path)
{
    struct acc_client_reply r;
    int rc = ctl_request(c, "GET", path, NULL, 0, NULL, &r);
    if (rc != CTL_OK) {
        acc_client_reply_free(&r);
        return rc;
    }
    if (r.status == 200) {
        fwrite(r.body, 1, r.len, stdout);
        if (r.len && r.body[r.len - 1] != '\n')
            putchar('\n');
    } else {
        rc = ctl_fault(&r);
    }
    acc_client_reply_free(&r);
    return rc;
}

static int run(struct ctl *c, int argc, char **argv)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"metampich", no_argument, NULL, 'm'},
        {"rsl", no_argument, NULL, 'r'},
        {"output", no_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    const char *file = NULL;
    int opt, files = 0;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        if (opt == 'm' || opt == 'r' || opt == 'o') {
            file = opt == 'm' ? "metampich" : opt == 'r' ? "rsl" : "output";
            files++;
        }
    }
    if (optind != argc - 1 || files > 1) {
        fprintf(stderr, "accordctl launch: give one agreement ID and at most one of "
                        "--metampich, --rsl, --output\n");
        help(stderr);
        return CTL_USAGE;
    }
    char path[600];
    ctl_path(path, sizeof path, "/agreements/%s/launch", argv[optind]);
    if (file) {
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "/%s", file);
        return text(c, path);
    }
    return ctl_run(c, "GET", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_launch = {"launch", "the meta-job: state, descriptions, output",
                                           run, help};
