/* SPDX-License-Identifier: Apache-2.0 */
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
    case CTL_OPT_CACERT:
        c->cacert = arg;
        return -2;
    case CTL_OPT_CERT:
        c->cert = arg;
        return -2;
    case CTL_OPT_KEY:
        c->key = arg;
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
    /* YYYY-MM-DDTHH:MM:SSZ, as accordd writes times */
    if (!t || strlen(t) < 16 || t[10] != 'T') {
        memcpy(out, "-", 2);
        return;
    }
    memcpy(out, t, 16);
    out[10] = ' ';
    out[16] = '\0';
}

const char *ctl_str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

long long ctl_int(const json_t *o, const char *key, long long dflt)
{
    const json_t *m = json_object_get(o, key);
    if (json_is_integer(m))
        return json_integer_value(m);
    /* A number written with a fraction or exponent: its integer part. */
    double d = json_is_real(m) ? json_real_value(m) : 0.0;
    return json_is_real(m) && d > -9.2e18 && d < 9.2e18 ? (long long)d : dflt;
}

bool ctl_bool(const json_t *o, const char *key, bool dflt)
{
    const json_t *m = json_object_get(o, key);
    return json_is_boolean(m) ? json_is_true(m) : dflt;
}

const char *ctl_str_at(const json_t *a, size_t i, const char *dflt)
{
    const char *s = json_string_value(json_array_get(a, i));
    return s ? s : dflt;
}

/* A byte that continues a UTF-8 character. */
static bool continuation(char ch)
{
    return ((unsigned char)ch & 0xc0) == 0x80;
}

int ctl_columns(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += !continuation(*s);
    return n;
}

void ctl_cell(const char *s, int width, bool pad)
{
    if (!s)
        s = "-";
    int n = ctl_columns(s);
    if (n > width && width > 1) {
        const char *end = s;
        for (int k = 0; k < width - 1; k++) {
            end++;
            while (continuation(*end))
                end++;
        }
        printf("%.*s+", (int)(end - s), s);
    } else {
        printf("%s%*s", s, pad && width > n ? width - n : 0, "");
    }
}

static const char *plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void ctl_print_agreement(const struct ctl *c, const json_t *a)
{
    (void)c;
    const char *name = ctl_str(a, "name", NULL);
    printf("Agreement   %s%s%s%s\n", ctl_str(a, "id", "?"), name ? "  (" : "", name ? name : "",
           name ? ")" : "");
    printf("Initiator   %s\n", ctl_str(a, "initiator", "-"));
    printf("State       %s\n", ctl_str(a, "state", "?"));
    const char *start = ctl_str(a, "start", NULL);
    if (start) {
        printf("Start       %s\n", start);
        printf("End         %s  (%s)\n", ctl_str(a, "end", "-"), ctl_str(a, "duration", "-"));
    } else {
        printf("Duration    %s\n", ctl_str(a, "duration", "-"));
    }
    printf("Window      %s .. %s\n", ctl_str(a, "earliest", "-"), ctl_str(a, "deadline", "-"));
    long long rounds = ctl_int(a, "rounds", 0), rollbacks = ctl_int(a, "rollbacks", 0);
    printf("Negotiated  %s, %lld %s, %lld %s\n", ctl_str(a, "strategy", "-"), rounds,
           plural(rounds, "round", "rounds"), rollbacks,
           plural(rollbacks, "rollback", "rollbacks"));
    printf("Launch      %s\n", ctl_str(a, "launch", "none"));
    const char *fault = ctl_str(a, "faultCode", NULL);
    const json_t *reasons = json_object_get(a, "reasons");
    if (fault || json_array_size(reasons)) {
        printf("Reason      %s\n", fault ? fault : "");
        for (size_t i = 0; i < json_array_size(reasons); i++) {
            const char *r = ctl_str_at(reasons, i, NULL);
            if (r)
                printf("            %s\n", r);
        }
    }
    const json_t *comps = json_object_get(a, "components");
    if (json_array_size(comps)) {
        printf("\n%-14s %-10s %6s %4s  %s\n", "COMPONENT", "SITE", "NODES", "PPN",
               "RESERVATION (LOCAL ID)");
        for (size_t i = 0; i < json_array_size(comps); i++) {
            const json_t *x = json_array_get(comps, i);
            printf("%-14s %-10s %6lld %4lld  %s", ctl_str(x, "name", "?"), ctl_str(x, "site", "-"),
                   ctl_int(x, "nodes", 0), ctl_int(x, "processesPerNode", 1),
                   ctl_str(x, "reservation", "-"));
            const char *lid = ctl_str(x, "localId", NULL);
            printf(lid ? " (%s)\n" : "\n", lid);
            const json_t *nodes = json_object_get(x, "nodeNames");
            if (json_array_size(nodes)) {
                printf("%-14s nodes:", "");
                for (size_t k = 0; k < json_array_size(nodes); k++)
                    printf(" %s", ctl_str_at(nodes, k, "?"));
                printf("\n");
            }
        }
    }
    const json_t *links = json_object_get(a, "links");
    if (json_array_size(links)) {
        printf("\n%-16s %-24s %8s  %s\n", "LINK", "SITES", "MBIT/S", "RESERVATION (LOCAL ID)");
        for (size_t i = 0; i < json_array_size(links); i++) {
            const json_t *x = json_array_get(links, i);
            char sites[64];
            snprintf(sites, sizeof sites, "%s-%s", ctl_str(x, "siteA", "?"),
                     ctl_str(x, "siteB", "?"));
            printf("%-16s %-24s %8lld  %s", ctl_str(x, "name", "?"), sites,
                   ctl_int(x, "bandwidth", 0),
                   ctl_str(x, "link", NULL) ? ctl_str(x, "reservation", "-") : "(within one site)");
            const char *lid = ctl_str(x, "localId", NULL);
            printf(lid ? " (%s)\n" : "\n", lid);
        }
    }
}
