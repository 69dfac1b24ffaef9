/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_quote.c - accordctl quote OFFER.xml [--hold D] [--option N],
 * accordctl commit QUOTE, accordctl release QUOTE: counter-offers before
 * committing (POST /negotiations), a held quote made an agreement
 * (POST /agreements?quote=), a hold given back (DELETE /negotiations/{id}). */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl quote OFFER.xml [--hold DURATION] [--option N] [--json|--xml]\n"
          "\n"
          "Asks for counter-offers to a WS-Agreement offer (a file, or - for standard\n"
          "input) without committing anything: the earliest common slot and later ones,\n"
          "each with its sites and why it starts no earlier.  With --hold (an ISO 8601\n"
          "duration such as PT2M, at most [negotiation] max_hold) the first option, or\n"
          "option N, is booked at every site and held until then: `accordctl commit\n"
          "QUOTE` makes it an agreement, `accordctl release QUOTE` gives it back.\n",
          f);
}

static void show(const struct ctl *c, const json_t *doc)
{
    (void)c;
    printf("Quote %s: %s", ctl_str(doc, "id", "?"), ctl_str(doc, "state", "?"));
    const char *until = ctl_str(doc, "heldUntil", NULL);
    if (until)
        printf(" (option %lld held until %s)", ctl_int(doc, "heldOption", -1), until);
    if (ctl_str(doc, "agreement", NULL))
        printf(" -> agreement %s", ctl_str(doc, "agreement", ""));
    printf("\n");
    if (ctl_str(doc, "reason", NULL))
        printf("  %s\n", ctl_str(doc, "reason", ""));
    const json_t *opts = json_object_get(doc, "counterOffers");
    for (size_t i = 0; json_is_array(opts) && i < json_array_size(opts); i++) {
        const json_t *o = json_array_get(opts, i);
        char s[CTL_TIME_LEN], e[CTL_TIME_LEN];
        ctl_short_time(ctl_str(o, "start", NULL), s);
        ctl_short_time(ctl_str(o, "end", NULL), e);
        printf("  option %lld  %s - %s UTC ", ctl_int(o, "option", 0), s, e);
        const json_t *comps = json_object_get(o, "components");
        for (size_t k = 0; json_is_array(comps) && k < json_array_size(comps); k++) {
            const json_t *x = json_array_get(comps, k);
            printf(" %s:%s/%lld", ctl_str(x, "name", "?"), ctl_str(x, "site", "?"),
                   ctl_int(x, "nodes", 0));
            if (ctl_str(x, "reservation", NULL))
                printf("[%s]", ctl_str(x, "reservation", ""));
        }
        printf("\n    %s\n", ctl_str(o, "why", ""));
    }
}

static int run(struct ctl *c, int argc, char **argv)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"hold", required_argument, NULL, 'H'},
        {"option", required_argument, NULL, 'O'},
        {NULL, 0, NULL, 0},
    };
    const char *hold = NULL, *option = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        if (opt == 'H')
            hold = optarg;
        else if (opt == 'O')
            option = optarg;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "accordctl quote: give one offer file (or - for standard input)\n");
        return CTL_USAGE;
    }
    if (option && !hold) {
        fprintf(stderr, "accordctl quote: --option names the option to hold: give --hold too\n");
        return CTL_USAGE;
    }
    char path[400], h[128] = "", o[128] = "";
    if (hold)
        ctl_url_escape(hold, h, sizeof h);
    if (option)
        ctl_url_escape(option, o, sizeof o);
    snprintf(path, sizeof path, "/negotiations%s%s%s%s", hold ? "?hold=" : "", h,
             option ? "&option=" : "", o);
    size_t len = 0;
    char *doc = ctl_read_file(argv[optind], &len);
    if (!doc) {
        fprintf(stderr, "accordctl quote: cannot read %s\n", argv[optind]);
        return CTL_USAGE;
    }
    const char *headers[] = {"Content-Type: application/xml", NULL};
    int rc = ctl_run(c, "POST", path, doc, len, headers, show);
    free(doc);
    return rc;
}

const struct ctl_command ctl_cmd_quote = {"quote", "counter-offers, optionally held", run, help};

/* ---------------------------------------------------------------- commit */

static void commit_help(FILE *f)
{
    fputs("usage: accordctl commit QUOTE [--json|--xml]\n"
          "\n"
          "Makes a held quote an agreement (POST /agreements?quote=QUOTE): exactly the\n"
          "held reservations are committed, with no new negotiation, and the agreement\n"
          "is printed as by `accordctl submit`.  A quote that is no longer held\n"
          "(expired, released, committed) exits with 4.\n",
          f);
}

static void show_agreement(const struct ctl *c, const json_t *doc)
{
    ctl_print_agreement(c, doc);
}

static int commit_run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "commit", "quote ID", commit_help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/agreements?quote=%s", id);
    return ctl_run(c, "POST", path, NULL, 0, NULL, show_agreement);
}

const struct ctl_command ctl_cmd_commit = {"commit", "make a held quote an agreement", commit_run,
                                           commit_help};

/* --------------------------------------------------------------- release */

static void release_help(FILE *f)
{
    fputs("usage: accordctl release QUOTE [--json|--xml]\n"
          "\n"
          "Gives a held quote back (DELETE /negotiations/QUOTE): every held reservation\n"
          "is released and the quote says Released.\n",
          f);
}

static int release_run(struct ctl *c, int argc, char **argv)
{
    const char *id;
    int rc = ctl_one_argument(c, argc, argv, "release", "quote ID", release_help, &id);
    if (rc != -2)
        return rc;
    char path[600];
    ctl_path(path, sizeof path, "/negotiations/%s", id);
    return ctl_run(c, "DELETE", path, NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_release = {"release", "give a held quote back", release_run,
                                            release_help};
