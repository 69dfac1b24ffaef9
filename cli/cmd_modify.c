/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_modify.c - accordctl modify ID: change a committed agreement (a new
 * version, negotiated while the current one stays booked). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define MOD_MAX      16 /* as the server takes: ACC_MODIFY_MAX */
#define NAME_MAX_LEN 63
#define TIME_MAX_LEN 64

/* The document: at most 2 times and 32 names escaped (6 bytes a character
 * at worst) with their elements fit in this. */
struct doc {
    char data[32768];
    size_t len;
    bool full;
};

static void put(struct doc *d, const char *s, size_t n)
{
    if (d->full || n >= sizeof d->data - d->len) {
        d->full = true;
        return;
    }
    memcpy(d->data + d->len, s, n);
    d->len += n;
    d->data[d->len] = '\0';
}

static void puts_(struct doc *d, const char *s)
{
    put(d, s, strlen(s));
}

static void help(FILE *f)
{
    fputs("usage: accordctl modify ID [--end T] [--start T] [--bandwidth LINK=MBIT]...\n"
          "                        [--nodes COMP=N]... [--json|--xml]\n"
          "\n"
          "Changes an Observed agreement: the new version is negotiated while the current\n"
          "one stays booked; on success the old reservations are released and the new\n"
          "version is printed, otherwise nothing changes and the reason is printed (exit\n"
          "code 4 when there is no room, 1 for a wrong change, 3 for an unknown id,\n"
          "component or link).\n"
          "\n"
          "  --end T               the new end (RFC 3339, e.g. 2030-01-01T12:00:00Z)\n"
          "  --start T             the new start; alone it moves the whole reservation\n"
          "  --bandwidth LINK=MBIT the new bandwidth of a link (up to 16)\n"
          "  --nodes COMP=N        the new node count of a component (up to 16)\n",
          f);
}

/* Appends s escaped for XML text or an attribute value. */
static void xml_text(struct doc *d, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            puts_(d, "&amp;");
            break;
        case '<':
            puts_(d, "&lt;");
            break;
        case '>':
            puts_(d, "&gt;");
            break;
        case '"':
            puts_(d, "&quot;");
            break;
        default:
            put(d, s, 1);
        }
    }
}

/* "NAME=N" with a name of 1 to 63 characters and N a positive integer. */
static bool pair_ok(const char *arg, const char *opt, char *name, long long *value)
{
    const char *eq = strrchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    if (!eq || n == 0 || n > NAME_MAX_LEN) {
        fprintf(stderr,
                "accordctl modify: --%s takes NAME=NUMBER (a name of 1 to %d characters), "
                "not '%s'\n",
                opt, NAME_MAX_LEN, arg);
        return false;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end || v < 1) {
        fprintf(stderr, "accordctl modify: --%s %.*s: '%s' is not a positive whole number\n", opt,
                (int)n, arg, eq + 1);
        return false;
    }
    memcpy(name, arg, n);
    name[n] = '\0';
    *value = v;
    return true;
}

static void show(const struct ctl *c, const json_t *doc)
{
    printf("Version %lld of agreement %s: %s\n", ctl_int(doc, "version", 0),
           ctl_str(doc, "id", "?"), ctl_str(doc, "change", "-"));
    ctl_print_agreement(c, doc);
}

/* What the command line asks to change. */
struct change {
    const char *start, *end;
    const char *nodes[MOD_MAX], *bandwidth[MOD_MAX];
    size_t n_nodes, n_bandwidth;
};

/* Reads the options into *ch; -1 when they are read, else the exit code. */
static int parse(struct ctl *c, int argc, char **argv, struct change *ch)
{
    static const struct option opts[] = {
        CTL_COMMON_OPTIONS,
        {"end", required_argument, NULL, 'E'},
        {"start", required_argument, NULL, 'B'},
        {"bandwidth", required_argument, NULL, 'L'},
        {"nodes", required_argument, NULL, 'N'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
        if (rc == -2)
            continue;
        switch (opt) {
        case 'E':
            ch->end = optarg;
            break;
        case 'B':
            ch->start = optarg;
            break;
        case 'N':
        case 'L': {
            const char **list = opt == 'N' ? ch->nodes : ch->bandwidth;
            size_t *n = opt == 'N' ? &ch->n_nodes : &ch->n_bandwidth;
            if (*n == MOD_MAX) {
                fprintf(stderr, "accordctl modify: at most %d --%s\n", MOD_MAX,
                        opt == 'N' ? "nodes" : "bandwidth");
                return CTL_USAGE;
            }
            list[(*n)++] = optarg;
            break;
        }
        default:
            help(stderr);
            return CTL_USAGE;
        }
    }
    return -1;
}

/* The usage errors the options alone show; CTL_OK without any. */
static int check(int argc, const struct change *ch)
{
    if (optind != argc - 1) {
        fprintf(stderr, "accordctl modify: give one agreement ID\n");
        return CTL_USAGE;
    }
    if (!ch->start && !ch->end && !ch->n_nodes && !ch->n_bandwidth) {
        fprintf(stderr, "accordctl modify: nothing to change: give --end, --start, --nodes or "
                        "--bandwidth\n");
        return CTL_USAGE;
    }
    if ((ch->start && strlen(ch->start) > TIME_MAX_LEN) ||
        (ch->end && strlen(ch->end) > TIME_MAX_LEN)) {
        fprintf(stderr,
                "accordctl modify: a time is at most %d characters (e.g. "
                "2030-01-01T12:00:00Z)\n",
                TIME_MAX_LEN);
        return CTL_USAGE;
    }
    return CTL_OK;
}

/* The co:Modification document of the change. */
static int write_doc(struct doc *d, const struct change *ch)
{
    puts_(d, "<co:Modification xmlns:co=\"urn:accord:coalloc:1\">");
    if (ch->start) {
        puts_(d, "<co:Start>");
        xml_text(d, ch->start);
        puts_(d, "</co:Start>");
    }
    if (ch->end) {
        puts_(d, "<co:End>");
        xml_text(d, ch->end);
        puts_(d, "</co:End>");
    }
    int rc = CTL_OK;
    for (size_t i = 0; i < ch->n_nodes + ch->n_bandwidth && !rc; i++) {
        bool isnodes = i < ch->n_nodes;
        char name[NAME_MAX_LEN + 1], num[48];
        long long v = 0;
        if (!pair_ok(isnodes ? ch->nodes[i] : ch->bandwidth[i - ch->n_nodes],
                     isnodes ? "nodes" : "bandwidth", name, &v)) {
            rc = CTL_USAGE;
            break;
        }
        puts_(d, isnodes ? "<co:Nodes component=\"" : "<co:Bandwidth link=\"");
        xml_text(d, name);
        snprintf(num, sizeof num, "\">%lld</co:%s>", v, isnodes ? "Nodes" : "Bandwidth");
        puts_(d, num);
    }
    puts_(d, "</co:Modification>");
    if (!rc && d->full) {
        fprintf(stderr, "accordctl modify: the change is too long\n");
        rc = CTL_USAGE;
    }
    return rc;
}

static int run(struct ctl *c, int argc, char **argv)
{
    struct change ch = {0};
    int rc = parse(c, argc, argv, &ch);
    if (rc >= 0)
        return rc;
    if ((rc = check(argc, &ch)))
        return rc;
    struct doc *d = calloc(1, sizeof *d);
    if (!d) {
        fprintf(stderr, "accordctl modify: out of memory\n");
        return CTL_ERROR;
    }
    rc = write_doc(d, &ch);
    if (!rc) {
        char path[600];
        ctl_path(path, sizeof path, "/agreements/%s/modify", argv[optind]);
        const char *headers[] = {"Content-Type: application/xml", NULL};
        rc = ctl_run(c, "POST", path, d->data, d->len, headers, show);
    }
    free(d);
    return rc;
}

const struct ctl_command ctl_cmd_modify = {"modify", "change a committed agreement", run, help};
