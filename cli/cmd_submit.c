/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_submit.c - accordctl submit OFFER.xml: negotiate an offer. */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl submit OFFER.xml [--pending] [--idempotency-key K] [--json|--xml]\n"
          "\n"
          "Sends a WS-Agreement offer (a file, or - for standard input) and prints the\n"
          "agreement: its id, state, common start and end, and per component the site,\n"
          "nodes and reservation.  A rejected offer prints why, per site and link, and\n"
          "exits with 4.\n"
          "\n"
          "  --pending              answer at once (state Pending); negotiate in the background\n"
          "  --idempotency-key K    a repeated key returns the first result, never books twice\n",
          f);
}

char *ctl_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= (64u << 20))
            break;
        char *p = realloc(buf, cap * 2);
        if (!p) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = p;
        cap *= 2;
    }
    bool bad = ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static void show(const struct ctl *c, const json_t *doc)
{
    ctl_print_agreement(c, doc);
}

static int run(struct ctl *c, int argc, char **argv)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"pending", no_argument, NULL, 'P'},
        {"idempotency-key", required_argument, NULL, 'K'},
        {NULL, 0, NULL, 0},
    };
    bool pending = false;
    const char *key = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        if (opt == 'P')
            pending = true;
        else if (opt == 'K')
            key = optarg;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "accordctl submit: give one offer file (or - for standard input)\n");
        return CTL_USAGE;
    }
    size_t len = 0;
    char *doc = ctl_read_file(argv[optind], &len);
    if (!doc) {
        fprintf(stderr, "accordctl submit: cannot read %s\n", argv[optind]);
        return CTL_USAGE;
    }
    char idem[300];
    const char *headers[3] = {"Content-Type: application/xml", NULL, NULL};
    if (key) {
        snprintf(idem, sizeof idem, "Idempotency-Key: %s", key);
        headers[1] = idem;
    }
    int rc = ctl_run(c, "POST", pending ? "/agreements?mode=pending" : "/agreements", doc, len,
                     headers, show);
    free(doc);
    return rc;
}

const struct ctl_command ctl_cmd_submit = {"submit", "negotiate an offer", run, help};
