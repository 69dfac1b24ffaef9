/* format.c - options and printing shared by the commands. */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

int ctl_common_option(struct ctl *c, int opt, const char *arg, void (*help)(FILE *))
{
    char *end;
    switch (opt) {
    case 'S':
        c->server = arg;
        return -2;
    case 'T':
        c->token = arg;
        return -2;
    case 'J':
        c->json = true;
        return -2;
    case 'X':
        c->xml = true;
        return -2;
    case 'W':
        c->timeout = strtol(arg, &end, 10);
        if (*end || c->timeout < 1 || c->timeout > 86400) {
            fprintf(stderr, "accordctl: --timeout takes seconds, 1 to 86400\n");
            return CTL_USAGE;
        }
        return -2;
    case 'h':
        help(stdout);
        return CTL_OK;
    case '?':
    case ':':
        help(stderr);
        return CTL_USAGE;
    default:
        return -1;
    }
}

int ctl_one_argument(struct ctl *c, int argc, char **argv, const char *cmd, const char *what,
                     void (*help)(FILE *), const char **arg)
{
    static const struct option opts[] = {CTL_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = ctl_common_option(c, opt, optarg, help);
        if (rc >= 0)
            return rc;
    }
    if (!what && optind != argc) {
        fprintf(stderr, "accordctl %s: unexpected argument '%s'\n", cmd, argv[optind]);
        return CTL_USAGE;
    }
    if (what && optind != argc - 1) {
        fprintf(stderr, "accordctl %s: give one %s\n", cmd, what);
        help(stderr);
        return CTL_USAGE;
    }
    *arg = what ? argv[optind] : NULL;
    return -2;
}

void ctl_path(char *out, size_t size, const char *fmt, const char *segment)
{
    char esc[512];
    ctl_url_escape(segment, esc, sizeof esc);
    snprintf(out, size, fmt, esc);
}

void ctl_short_time(const char *t, char *out)
{
    /* YYYY-MM-DDTHH:MM:SSZ */
    if (!t || strlen(t) < 16) {
        memcpy(out, "-", 2);
        return;
    }
    memcpy(out, t + 5, 5);
    out[5] = ' ';
    memcpy(out + 6, t + 11, 5);
    out[11] = '\0';
}

void ctl_cell(const char *s, int width, bool pad)
{
    if (!s)
        s = "-";
    int n = (int)strlen(s);
    if (n > width && width > 1)
        printf("%.*s+", width - 1, s);
    else
        printf("%-*s", pad ? width : 0, s);
}

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void ctl_print_agreement(const struct ctl *c, const struct jv *a)
{
    (void)c;
    const char *name = jv_str(a, "name", NULL);
    printf("Agreement   %s%s%s%s\n", jv_str(a, "id", "?"), name ? "  (" : "", name ? name : "",
           name ? ")" : "");
    printf("Initiator   %s\n", jv_str(a, "initiator", "-"));
    printf("State       %s\n", jv_str(a, "state", "?"));
    const char *start = jv_str(a, "start", NULL);
    if (start) {
        printf("Start       %s\n", start);
        printf("End         %s  (%s)\n", jv_str(a, "end", "-"), jv_str(a, "duration", "-"));
    } else {
        printf("Duration    %s\n", jv_str(a, "duration", "-"));
    }
    printf("Window      %s .. %s\n", jv_str(a, "earliest", "-"), jv_str(a, "deadline", "-"));
    int64_t rounds = jv_int(a, "rounds", 0), rollbacks = jv_int(a, "rollbacks", 0);
    printf("Negotiated  %s, %lld %s, %lld %s\n", jv_str(a, "strategy", "-"), (long long)rounds,
           plural(rounds, "round", "rounds"), (long long)rollbacks,
           plural(rollbacks, "rollback", "rollbacks"));
    printf("Launch      %s\n", jv_str(a, "launch", "none"));
    const char *fault = jv_str(a, "faultCode", NULL);
    const struct jv *reasons = jv_get(a, "reasons");
    if (fault || jv_len(reasons)) {
        printf("Reason      %s\n", fault ? fault : "");
        for (size_t i = 0; i < jv_len(reasons); i++) {
            const struct jv *r = jv_at(reasons, i);
            if (r && r->type == JV_STRING)
                printf("            %s\n", r->str);
        }
    }
    const struct jv *comps = jv_get(a, "components");
    if (jv_len(comps)) {
        printf("\n%-14s %-10s %6s %4s  %s\n", "COMPONENT", "SITE", "NODES", "PPN",
               "RESERVATION (LOCAL ID)");
        for (size_t i = 0; i < jv_len(comps); i++) {
            const struct jv *x = jv_at(comps, i);
            printf("%-14s %-10s %6lld %4lld  %s", jv_str(x, "name", "?"), jv_str(x, "site", "-"),
                   (long long)jv_int(x, "nodes", 0), (long long)jv_int(x, "processesPerNode", 1),
                   jv_str(x, "reservation", "-"));
            const char *lid = jv_str(x, "localId", NULL);
            printf(lid ? " (%s)\n" : "\n", lid);
            const struct jv *nodes = jv_get(x, "nodeNames");
            if (jv_len(nodes)) {
                printf("%-14s nodes:", "");
                for (size_t k = 0; k < jv_len(nodes); k++) {
                    const struct jv *nn = jv_at(nodes, k);
                    printf(" %s", nn && nn->type == JV_STRING ? nn->str : "?");
                }
                printf("\n");
            }
        }
    }
    const struct jv *links = jv_get(a, "links");
    if (jv_len(links)) {
        printf("\n%-16s %-24s %8s  %s\n", "LINK", "SITES", "MBIT/S", "RESERVATION (LOCAL ID)");
        for (size_t i = 0; i < jv_len(links); i++) {
            const struct jv *x = jv_at(links, i);
            char sites[64];
            snprintf(sites, sizeof sites, "%s-%s", jv_str(x, "siteA", "?"),
                     jv_str(x, "siteB", "?"));
            printf("%-16s %-24s %8lld  %s", jv_str(x, "name", "?"), sites,
                   (long long)jv_int(x, "bandwidth", 0),
                   jv_str(x, "link", NULL) ? jv_str(x, "reservation", "-") : "(within one site)");
            const char *lid = jv_str(x, "localId", NULL);
            printf(lid ? " (%s)\n" : "\n", lid);
        }
    }
}
