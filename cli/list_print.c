/* SPDX-License-Identifier: Apache-2.0 */
/* list_print.c - how accordctl list prints agreements: the table, fitted to
 * the terminal, or the fields of --format (squeue's -o, each letter with
 * squeue's meaning). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* The letters of --format: the member of the list's JSON each shows, its
 * header, and how it is shown.  Each means what it means to squeue (man
 * squeue: %i job id, %j name, %t compact state, %T state, %u user, %V
 * submission time, %S start, %e end, %N the nodes, here the sites), so that
 * a format written for one reads the same in the other. */
enum kind { TEXT, STATE, FULL_STATE, TIME, SITES };

static const struct letter {
    char letter;
    const char *member;
    const char *header;
    enum kind kind;
} letters[] = {
    {'i', "id", "ID", TEXT},
    {'j', "name", "NAME", TEXT},
    {'t', "state", "STATE", STATE},
    {'T', "state", "STATE", FULL_STATE},
    {'u', "initiator", "INITIATOR", TEXT},
    {'V', "created", "CREATED", TIME},
    {'S', "start", "START", TIME},
    {'e', "end", "END", TIME},
    {'N', "sites", "SITES", SITES},
};

#define N_LETTERS (sizeof letters / sizeof letters[0])

/* The letters of accordctl before they followed squeue, each of which
 * squeue reads as something else: refused with the letter to use now. */
static const struct {
    char old, now;
    const char *squeue; /* what squeue shows for the old letter */
} renamed[] = {
    {'n', 'j', "the nodes asked for"}, {'s', 't', "the node selection plugin's data"},
    {'c', 'V', "the CPUs per node"},   {'E', 'e', "the dependencies"},
    {'L', 'N', "the time left"},
};

/* A piece of the format: text as it is (letter NULL), or a field. */
struct piece {
    const struct letter *letter;
    const char *text; /* into the spec */
    size_t len;
    int width; /* 0: as wide as the value */
    bool right;
};

struct ctl_list_format {
    size_t n;
    struct piece v[];
};

static const char *short_state(const char *s)
{
    if (strcmp(s, "PendingAndTerminating") == 0 || strcmp(s, "ObservedAndTerminating") == 0)
        return "Terminating";
    return s;
}

/* The sites of an agreement, comma-separated, into out ('+' ends a list
 * that did not fit). */
static void join_sites(const json_t *a, char *out, size_t size)
{
    const json_t *s = json_object_get(a, "sites");
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < json_array_size(s); k++) {
        int n = snprintf(out + used, size - used, "%s%s", k ? "," : "", ctl_str_at(s, k, "?"));
        if (n < 0 || (size_t)n >= size - used) {
            memcpy(out + size - 2, "+", 2);
            return;
        }
        used += (size_t)n;
    }
    if (!used)
        memcpy(out, "-", 2);
}

/* The letter's value for agreement a ("-" for none), in buf or a's. */
static const char *value(const struct letter *l, const json_t *a, char *buf, size_t size)
{
    switch (l->kind) {
    case STATE:
        return short_state(ctl_str(a, l->member, "?"));
    case TIME:
        ctl_short_time(ctl_str(a, l->member, NULL), buf);
        return buf;
    case SITES:
        join_sites(a, buf, size);
        return buf;
    default:
        return ctl_str(a, l->member, "-");
    }
}

int ctl_list_format_parse(const char *spec, struct ctl_list_format **out)
{
    *out = NULL;
    size_t n = strlen(spec) + 1; /* at most a piece a character */
    struct ctl_list_format *f = calloc(1, sizeof *f + n * sizeof f->v[0]);
    if (!f) {
        fprintf(stderr, "accordctl list: out of memory\n");
        return CTL_USAGE;
    }
    for (const char *p = spec; *p;) {
        struct piece *x = &f->v[f->n++];
        if (*p != '%' || p[1] == '%') {
            x->text = p;
            x->len = *p == '%' ? 1 : strcspn(p, "%");
            p += *p == '%' ? 2 : x->len;
            continue;
        }
        const char *at = p++;
        x->right = *p == '.';
        p += x->right;
        char *end;
        errno = 0;
        long w = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : 0;
        if (w > 0)
            p = end;
        for (size_t k = 0; k < N_LETTERS && *p; k++)
            x->letter = letters[k].letter == *p ? &letters[k] : x->letter;
        for (size_t k = 0; !x->letter && k < sizeof renamed / sizeof renamed[0]; k++) {
            if (renamed[k].old != *p)
                continue;
            fprintf(stderr,
                    "accordctl list: --format: %%%c is squeue's %s, not a field here; the "
                    "letters are squeue's: use %%%c\n",
                    *p, renamed[k].squeue, renamed[k].now);
            free(f);
            return CTL_USAGE;
        }
        if (errno || w > 999 || !x->letter) {
            fprintf(stderr,
                    "accordctl list: --format: '%.*s' is not a field: %%[.][WIDTH]LETTER, WIDTH "
                    "up to 999, LETTER one of i j t T u V S e N (or %%%% for a %%)\n",
                    (int)(p - at + (*p != '\0')), at);
            free(f);
            return CTL_USAGE;
        }
        x->width = (int)w;
        p++;
    }
    *out = f;
    return CTL_OK;
}

void ctl_list_format_free(struct ctl_list_format *f)
{
    free(f);
}

/* s in width columns (none: as it is), cut with '+' when longer. */
static void field(const char *s, int width, bool right)
{
    int n = ctl_columns(s);
    if (width && right && n < width)
        printf("%*s", width - n, "");
    if (width)
        ctl_cell(s, width, !right);
    else
        fputs(s, stdout);
}

static void format_line(const struct ctl_list_format *f, const json_t *a)
{
    char buf[1024];
    for (size_t i = 0; i < f->n; i++) {
        const struct piece *x = &f->v[i];
        if (!x->letter)
            fwrite(x->text, 1, x->len, stdout);
        else
            field(a ? value(x->letter, a, buf, sizeof buf) : x->letter->header, x->width, x->right);
    }
    putchar('\n');
}

/* The table: fixed columns, and the name and the sites cut only when they
 * do not fit in what the terminal has left, keeping its last column free.
 * Without a terminal (and COLUMNS) the width is unknown and nothing is
 * cut. */
static void table(const struct ctl *c, const json_t *list, bool header)
{
    size_t n = json_array_size(list);
    char sites[1024];
    int name_max = 4, sites_max = 5, state_w = 5; /* NAME, SITES, STATE */
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(list, i);
        int w = ctl_columns(short_state(ctl_str(a, "state", "?")));
        state_w = w > state_w ? w : state_w;
        w = ctl_columns(ctl_str(a, "name", "-"));
        name_max = w > name_max ? w : name_max;
        join_sites(a, sites, sizeof sites);
        w = ctl_columns(sites);
        sites_max = w > sites_max ? w : sites_max;
    }
    /* The state takes what the longest one present needs (the times take
     * 16 columns each). */
    enum { T = CTL_TIME_LEN - 1, FIXED = 16 + T + T + 5 };
    int name_w = name_max, sites_w = INT_MAX;
    int rest = (int)c->width - 1 - FIXED - state_w;
    if (c->width && name_max + sites_max > rest) {
        if (rest < 10) /* a narrower terminal wraps the lines: 4 characters and '+' each */
            rest = 10;
        /* Each gets what it needs when the other leaves it room, else half. */
        int room = rest - sites_max > rest / 2 ? rest - sites_max : rest / 2;
        name_w = name_max < room ? name_max : room;
        sites_w = rest - name_w;
    }
    if (header)
        printf("%-16s %-*s %-*s %-*s %-*s %s\n", "ID", name_w, "NAME", state_w, "STATE", T,
               "START (UTC)", T, "END", "SITES");
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(list, i);
        char start[CTL_TIME_LEN], end[CTL_TIME_LEN];
        ctl_short_time(ctl_str(a, "start", NULL), start);
        ctl_short_time(ctl_str(a, "end", NULL), end);
        join_sites(a, sites, sizeof sites);
        ctl_cell(ctl_str(a, "id", "?"), 16, true);
        printf(" ");
        ctl_cell(ctl_str(a, "name", "-"), name_w, true);
        printf(" ");
        ctl_cell(short_state(ctl_str(a, "state", "?")), state_w, true);
        printf(" %-*s %-*s ", T, start, T, end);
        ctl_cell(sites, sites_w, false);
        printf("\n");
    }
    if (n == 0 && header)
        printf("(no agreements)\n");
}

void ctl_list_print(const struct ctl *c, const json_t *list, const struct ctl_list_format *f,
                    bool header)
{
    if (!f) {
        table(c, list, header);
        return;
    }
    if (header)
        format_line(f, NULL);
    for (size_t i = 0; i < json_array_size(list); i++)
        format_line(f, json_array_get(list, i));
}
