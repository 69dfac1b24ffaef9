/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_sites.c - accordctl sites: sites, networks, links and their adapters. */
#include <limits.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl sites [--json|--xml]\n"
          "\n"
          "Lists the sites (clusters) with their size and batch adapter, the networks\n"
          "with their adapter, and the links between sites with their capacity; each\n"
          "adapter with its health and how many calls it has served and failed.  A\n"
          "remote site (a site daemon reached over HTTPS) shows the round trip of its\n"
          "health call (RTT, a column shown when remote sites are listed) and its\n"
          "daemon's address before its health; in-process adapters show RTT as -.\n",
          f);
}

/* The health call's round trip ("0.8ms"), or "-" when none was measured. */
static void rtt_cell(const json_t *s)
{
    long long us = ctl_int(s, "rttUs", 0);
    char cell[32];
    if (us <= 0)
        snprintf(cell, sizeof cell, "-");
    else if (us < 100000)
        snprintf(cell, sizeof cell, "%.1fms", (double)us / 1000.0);
    else
        snprintf(cell, sizeof cell, "%lldms", us / 1000);
    printf("%10s  ", cell);
}

/* Whether any adapter of the list is a remote one (measured or located). */
static bool any_remote(const json_t *list)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *s = json_array_get(list, i);
        if (ctl_int(s, "rttUs", 0) > 0 || ctl_str(s, "endpoint", "")[0])
            return true;
    }
    return false;
}

static void adapters(const struct ctl *c, const json_t *list, const char *title, bool nodes)
{
    /* The RTT column only when a remote site daemon is listed (in-process
     * adapters have no round trip), so the table keeps its 80 columns. */
    bool rtt = any_remote(list);
    /* The health, last, takes what the terminal has left; without a
     * terminal (and COLUMNS) it is not cut. */
    int health_w = c->width ? (int)c->width - (14 + 13 + 7 + 6 + 8 + 8 + (rtt ? 12 : 0)) : INT_MAX;
    if (health_w < 12)
        health_w = 12;
    printf("%-14s%-13s%7s %-5s%8s%8s", title, "ADAPTER", nodes ? "NODES" : "", "UP", "CALLS",
           "FAILED");
    if (rtt)
        printf("%10s", "RTT");
    printf("  %s\n", "HEALTH");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *s = json_array_get(list, i);
        ctl_cell(ctl_str(s, "name", "?"), 13, true);
        printf(" ");
        ctl_cell(ctl_str(s, "adapter", "?"), 12, true);
        if (nodes)
            printf(" %6lld", ctl_int(s, "nodes", 0));
        else
            printf(" %6s", "");
        printf(" %-5s%8lld%8lld", ctl_bool(s, "up", false) ? "yes" : "NO", ctl_int(s, "calls", 0),
               ctl_int(s, "failures", 0));
        if (rtt)
            rtt_cell(s);
        else
            printf("  ");
        /* a remote site: where its daemon is, then what it said */
        const char *endpoint = ctl_str(s, "endpoint", "");
        char health[512];
        snprintf(health, sizeof health, "%s%s%s", endpoint, endpoint[0] ? " " : "",
                 ctl_str(s, "health", ""));
        ctl_cell(health, health_w, false);
        printf("\n");
    }
}

static void show(const struct ctl *c, const json_t *doc)
{
    adapters(c, json_object_get(doc, "sites"), "SITE", true);
    const json_t *nets = json_object_get(doc, "networks");
    if (json_array_size(nets)) {
        printf("\n");
        adapters(c, nets, "NETWORK", false);
    }
    const json_t *links = json_object_get(doc, "links");
    if (json_array_size(links)) {
        printf("\n%-20s %-26s %12s  %-10s %s\n", "LINK", "SITES", "MBIT/S", "NETWORK", "UP");
        for (size_t i = 0; i < json_array_size(links); i++) {
            const json_t *l = json_array_get(links, i);
            char sites[80];
            snprintf(sites, sizeof sites, "%s - %s", ctl_str(l, "siteA", "?"),
                     ctl_str(l, "siteB", "?"));
            ctl_cell(ctl_str(l, "name", "?"), 20, true);
            printf(" ");
            ctl_cell(sites, 26, true);
            printf(" %12lld  ", ctl_int(l, "capacity", 0));
            ctl_cell(ctl_str(l, "network", "?"), 10, true);
            printf(" %s\n", ctl_bool(l, "up", false) ? "yes" : "NO");
        }
    }
}

static int run(struct ctl *c, int argc, char **argv)
{
    const char *none;
    int rc = ctl_one_argument(c, argc, argv, "sites", NULL, help, &none);
    if (rc != -2)
        return rc;
    return ctl_run(c, "GET", "/sites", NULL, 0, NULL, show);
}

const struct ctl_command ctl_cmd_sites = {"sites", "sites, links and adapters", run, help};
