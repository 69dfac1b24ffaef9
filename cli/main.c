/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - accordctl: Accord from the command line.
 *
 *   accordctl [--server URL] [--token T] COMMAND [ARGS] [--json|--xml]
 *
 * A table of commands, one file each (as git and scontrol do). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"

extern const struct ctl_command ctl_cmd_admin; /* cmd_admin.c */
static const struct ctl_command *const commands[] = {
    &ctl_cmd_submit,    &ctl_cmd_list,  &ctl_cmd_show,    &ctl_cmd_state,   &ctl_cmd_trace,
    &ctl_cmd_terminate, &ctl_cmd_sites, &ctl_cmd_preview, &ctl_cmd_launch,  &ctl_cmd_verify,
    &ctl_cmd_modify,    &ctl_cmd_quote, &ctl_cmd_commit,  &ctl_cmd_release, &ctl_cmd_admin,
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fputs("usage: accordctl [--server URL] [--token TOKEN] [--timeout S]\n"
          "                 [--cacert FILE] [--cert FILE --key FILE] COMMAND [ARGS]\n"
          "       accordctl COMMAND --help | --help | --version\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fputs("\n"
          "Every command takes --server URL (default $ACCORD_URL, else\n"
          "http://127.0.0.1:8080), --token TOKEN (default $ACCORD_TOKEN), for HTTPS\n"
          "--cacert FILE (the CA the server's certificate must verify against; default\n"
          "$ACCORD_CACERT, else the system's) and --cert FILE --key FILE (a client\n"
          "certificate; $ACCORD_CERT, $ACCORD_KEY), and the read\n"
          "commands --json or --xml to print the server's document for scripts.\n"
          "Exit codes: 0 ok, 1 refused as wrong, 2 usage, 3 not found, 4 rejected (no\n"
          "common slot), 5 server or adapter failure, 6 no answer from the server,\n"
          "7 not allowed, 75 try again later (429 or 503).  See accordctl(1).\n",
          f);
}

/* The columns tables may take: the terminal's, else $COLUMNS, else 80 on a
 * terminal that does not say and 0 (unknown: tables are not cut) when
 * standard output is not a terminal. */
static unsigned terminal_width(void)
{
    struct winsize ws;
    bool tty = isatty(STDOUT_FILENO);
    if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        errno = 0;
        long n = strtol(env, &end, 10);
        if (!errno && !*end && n > 0 && n <= 100000)
            return (unsigned)n;
        fprintf(stderr, "accordctl: ignoring COLUMNS=%s (not a number of columns)\n", env);
    }
    return tty ? 80 : 0;
}

/* An environment variable, or NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int main(int argc, char **argv)
{
    struct ctl c = {
        .server = getenv("ACCORD_URL") && *getenv("ACCORD_URL") ? getenv("ACCORD_URL")
                                                                : "http://127.0.0.1:8080",
        .token = getenv("ACCORD_TOKEN") && *getenv("ACCORD_TOKEN") ? getenv("ACCORD_TOKEN") : NULL,
        .cacert = env("ACCORD_CACERT"),
        .cert = env("ACCORD_CERT"),
        .key = env("ACCORD_KEY"),
        .timeout = 600,
        .width = terminal_width(),
    };
    /* Options before the command ("+": stop at the command). */
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (opt == 'V') {
            printf("accordctl %s\n", ACCORD_VERSION);
            return CTL_OK;
        }
        int rc = ctl_common_option(&c, opt, optarg, usage);
        if (rc >= 0)
            return rc;
    }
    if (optind >= argc) {
        usage(stderr);
        return CTL_USAGE;
    }
    const char *name = argv[optind];
    const struct ctl_command *cmd = NULL;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(commands[i]->name, name) == 0)
            cmd = commands[i];
    }
    if (!cmd) {
        fprintf(stderr, "accordctl: unknown command '%s'\n\n", name);
        usage(stderr);
        return CTL_USAGE;
    }
    if (acc_client_init() != 0) {
        fprintf(stderr, "accordctl: cannot initialise libcurl\n");
        return CTL_NETWORK;
    }
    /* The command parses the rest, its name standing as argv[0].  optind 0
     * makes glibc's getopt start afresh (1 would keep the "+" of above). */
    int cargc = argc - optind;
    char **cargv = argv + optind;
    optind = 0;
    int rc = cmd->run(&c, cargc, cargv);
    if (c.json && c.xml && rc == CTL_OK)
        fprintf(stderr, "accordctl: --json and --xml: the XML was printed\n");
    acc_client_cleanup();
    return rc;
}
